/* Check suite for sweep/: the spec (expansion of traces, devices, option sets,
 * job numbering and lookup, errors before any work), the scheduler (every job
 * handed out once, a worker kept on its trace), a job's result line, and the shards
 * (the partition, the index from a job array's environment, the file names). */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "support/check_main.h"
#include "sweep/run.h"
#include "sweep/shard.h"
#include "sweep/spec.h"

/* The fixture's directory: one per process (Check forks each test). */
static void test_dir(char *out, size_t cap)
{
    snprintf(out, cap, "/tmp/gpusim_test_sweep_%ld", (long)getpid());
}

static void write_file(const char *name, const char *text)
{
    char dir[256];
    test_dir(dir, sizeof dir);
    char p[512];
    snprintf(p, sizeof p, "%s/%s", dir, name);
    FILE *f = fopen(p, "w");
    ck_assert_ptr_nonnull(f);
    fputs(text, f);
    fclose(f);
}

static const char *TRACE = "{\"format\":\"gpusim-trace\",\"version\":1,\"name\":\"t\"}\n"
                           "{\"op\":\"alloc\",\"id\":1,\"size\":1048576}\n"
                           "{\"op\":\"alloc\",\"id\":2,\"size\":3000000}\n"
                           "{\"op\":\"free\",\"id\":1}\n{\"op\":\"free\",\"id\":2}\n";

static void setup(void)
{
    char dir[256], p[512];
    test_dir(dir, sizeof dir);
    ck_assert_int_eq(mkdir(dir, 0755), 0);
    snprintf(p, sizeof p, "%s/jobs", dir);
    ck_assert_int_eq(mkdir(p, 0755), 0);
    write_file("jobs/b.jsonl", TRACE);
    write_file("jobs/a.jsonl", TRACE);
    write_file("jobs/notes.txt", "not a trace");
    write_file("c.jsonl", TRACE);
}

static void teardown(void)
{
    char dir[256], cmd[600];
    test_dir(dir, sizeof dir);
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    ck_assert_int_eq(system(cmd), 0);
}

static sim_status load(const char *text, unsigned flags, sweep_spec **s, sim_error *err)
{
    write_file("spec.json", text);
    char dir[256], p[512];
    test_dir(dir, sizeof dir);
    snprintf(p, sizeof p, "%s/spec.json", dir);
    sim_error_clear(err);
    return sweep_spec_load(p, flags, s, err);
}

/* load() that must succeed: the spec, SIM_OK asserted (with the error's text on failure). */
static sweep_spec *load_ok(const char *text, unsigned flags)
{
    sweep_spec *s = NULL;
    sim_error err;
    sim_status st = load(text, flags, &s, &err);
    ck_assert_msg(st == SIM_OK, "spec load failed: %s", err.msg);
    return s;
}

GPUSIM_TCASE("spec", 0, setup, teardown);

START_TEST(spec_should_expand_directories_and_globs_sorted_without_duplicates)
{
    sweep_spec *s = load_ok("{\"traces\": [\"c.jsonl\", \"jobs\", \"jobs/*.jsonl\"], \"devices\": [\"A100-40GB\"],"
                            " \"strategies\": [\"ideal\"]}",
                            SWEEP_LOAD_CHECK_TRACES | SWEEP_LOAD_CHECK_OPTIONS);
    ck_assert_uint_eq(s->n_traces, 3);
    ck_assert_str_eq(s->traces[0].display, "c.jsonl");
    ck_assert_str_eq(s->traces[1].display, "jobs/a.jsonl");
    ck_assert_str_eq(s->traces[2].display, "jobs/b.jsonl");
    sweep_spec_free(s);
}
END_TEST

START_TEST(spec_should_expand_option_lists_and_restrict_sets_to_their_strategies)
{
    sweep_spec *s = load_ok("{\"traces\": \"jobs\", \"devices\": [\"1GiB\", {\"name\": \"x\", \"capacity\": \"2GiB\"}],"
                            " \"strategies\": [\"ideal\", \"growth\"],"
                            " \"options\": [{}, {\"mem-fraction\": [0.5, 0.9], \"bfc-gc\": [\"on\", \"off\"],"
                            " \"strategies\": [\"growth\"]}]}",
                            SWEEP_LOAD_CHECK_OPTIONS);
    ck_assert_uint_eq(s->n_devices, 2);
    ck_assert_str_eq(s->devices[0].name, "1GiB");
    ck_assert_uint_eq(s->devices[1].info.capacity_bytes, 2ull << 30);
    ck_assert_uint_eq(s->n_optsets, 5);
    ck_assert_str_eq(s->optsets[0].name, "default");
    ck_assert_str_eq(s->optsets[1].name, "mem-fraction=0.5,bfc-gc=on");
    ck_assert_str_eq(s->optsets[4].name, "mem-fraction=0.9,bfc-gc=off");
    ck_assert_str_eq(s->optsets[1].kv[0].key, "mem_fraction");
    /* per device: ideal×default, growth×5 */
    ck_assert_uint_eq(s->n_combos, 2 * 6);
    ck_assert_uint_eq(sweep_spec_jobs(s), 2 * 12);
    sweep_spec_free(s);
}
END_TEST

START_TEST(option_keys_should_be_the_strategies_own_in_either_spelling)
{
    /* --bfc-gc and bfc_gc name one option; a set applies when one of its
     * strategies takes every key (torch takes memory_fraction, greedy does not) */
    sweep_spec *s = load_ok("{\"traces\": \"jobs\", \"devices\": [\"4GiB\"], \"strategies\": [\"greedy\", \"torch\"],"
                            " \"options\": [{\"bfc-gc\": \"off\"}, {\"bfc_gc\": \"on\"}, {\"memory-fraction\": 0.5},"
                            " {\"bfc-fragmentation-fraction\": 0.2, \"alloc_conf\": \"expandable_segments:True\"}]}",
                            SWEEP_LOAD_CHECK_OPTIONS);
    ck_assert_uint_eq(s->n_optsets, 4);
    ck_assert_str_eq(s->optsets[0].kv[0].key, "bfc_gc");
    ck_assert_str_eq(s->optsets[1].kv[0].key, "bfc_gc");
    ck_assert_str_eq(s->optsets[2].kv[0].key, "memory_fraction");
    ck_assert_str_eq(s->optsets[3].kv[0].key, "bfc_fragmentation_fraction");
    ck_assert_str_eq(s->optsets[3].kv[1].key, "alloc_conf");
    sweep_spec_free(s);
}
END_TEST

START_TEST(jobs_should_be_numbered_trace_major_and_found_by_their_names)
{
    sweep_spec *s = load_ok("{\"traces\": [\"jobs\"], \"devices\": [\"A100-40GB\", \"4GiB\"],"
                            " \"strategies\": [\"ideal\", \"raw\"]}",
                            0);
    for (uint64_t i = 0; i < sweep_spec_jobs(s); i++) {
        sweep_job j = sweep_spec_job(s, i);
        ck_assert_uint_eq(j.trace, i / 4);
        ck_assert_uint_eq(sweep_spec_find(s, s->traces[j.trace].display, s->devices[j.c.device].name, false,
                                          s->strategies[j.c.strategy]->name, s->optsets[j.c.optset].name),
                          i);
    }
    ck_assert_uint_eq(sweep_spec_find(s, "jobs/zzz.jsonl", "4GiB", false, "raw", "default"), UINT64_MAX);
    ck_assert_uint_eq(sweep_spec_find(s, "jobs/a.jsonl", "4GiB", false, "growth", "default"), UINT64_MAX);
    sweep_spec_free(s);
}
END_TEST

START_TEST(bad_specs_should_be_errors_that_name_the_problem)
{
    static const struct {
        const char *text;
        sim_status st;
        const char *msg;
    } CASES[] = {
        {"{\"traces\": [\"jobs\"]", SIM_EUSAGE, "not valid JSON"},
        {"[1]", SIM_EUSAGE, "a sweep spec is a JSON object"},
        {"{\"traces\": [\"jobs\"], \"devices\": [\"A100-40GB\"], \"strategies\": [\"nope\"]}", SIM_EUSAGE,
         "unknown strategy 'nope'"},
        {"{\"traces\": [\"gone.jsonl\"], \"devices\": [\"A100-40GB\"], \"strategies\": [\"ideal\"]}", SIM_EIO,
         "gone.jsonl"},
        {"{\"traces\": [\"jobs\"], \"devices\": [\"V1000\"], \"strategies\": [\"ideal\"]}", SIM_EUSAGE,
         "unknown GPU 'V1000'"},
        {"{\"traces\": [\"jobs\"], \"devices\": [\"A100-40GB\", \"A100-40GB\"], \"strategies\": [\"ideal\"]}",
         SIM_EUSAGE, "listed twice"},
        {"{\"traces\": [\"jobs\"], \"devices\": [\"A100-40GB\"], \"strategies\": [\"limit\"], \"options\": "
         "{\"limit\": \"-3\"}}",
         SIM_EUSAGE, "option set 'limit=-3' under strategy 'limit'"},
        {"{\"traces\": [\"jobs\"], \"devices\": [\"A100-40GB\"], \"strategies\": [\"ideal\"], \"options\": "
         "[{\"name\": \"x\", \"strategies\": [\"growth\"]}]}",
         SIM_EUSAGE, "which \"strategies\" does not list"},
        {"{\"traces\": [], \"devices\": [\"A100-40GB\"], \"strategies\": [\"ideal\"]}", SIM_EUSAGE,
         "names no trace"},
        /* conflicting device keys, refused as --gpu with --capacity is */
        {"{\"traces\": [\"jobs\"], \"devices\": [{\"gpu\": \"T4\", \"capacity\": \"24GiB\"}], \"strategies\": "
         "[\"ideal\"]}",
         SIM_EUSAGE, "\"gpu\" and \"capacity\" conflict"},
        {"{\"traces\": [\"jobs\"], \"devices\": [{\"gpu\": \"T4\", \"compute_capability\": \"8.0\"}], "
         "\"strategies\": [\"ideal\"]}",
         SIM_EUSAGE, "\"gpu\" and \"compute_capability\" conflict"},
        /* a key no strategy has (there is no reserve-percent anywhere) */
        {"{\"traces\": [\"jobs\"], \"devices\": [\"A100-40GB\"], \"strategies\": [\"torch\"], \"options\": "
         "{\"reserve-percent\": \"5\"}}",
         SIM_EUSAGE, "unknown option 'reserve-percent' (expected name, strategies, mem-fraction"},
        /* torch's option in a set whose strategies are BFC ones only: a spec error,
         * as --memory-fraction with --strategy=greedy is a usage error */
        {"{\"traces\": [\"jobs\"], \"devices\": [\"A100-40GB\"], \"strategies\": [\"greedy\", \"growth\"], "
         "\"options\": {\"memory-fraction\": 0.3}}",
         SIM_EUSAGE, "'memory-fraction' is an option of torch, async, not of the spec's strategies greedy, growth"},
        {"{\"traces\": [\"jobs\"], \"devices\": [\"A100-40GB\"], \"strategies\": [\"torch\", \"raw\"], "
         "\"options\": [{\"bfc_gc\": \"off\", \"strategies\": [\"torch\"]}]}",
         SIM_EUSAGE, "'bfc_gc' is an option of greedy, growth, limit, not of the set's strategies torch"},
    };
    for (size_t i = 0; i < sizeof CASES / sizeof CASES[0]; i++) {
        sweep_spec *s = NULL;
        sim_error err;
        sim_status st = load(CASES[i].text, SWEEP_LOAD_CHECK_TRACES | SWEEP_LOAD_CHECK_OPTIONS, &s, &err);
        ck_assert_msg(st == CASES[i].st, "case %zu: status %d, want %d (%s)", i, st, CASES[i].st, err.msg);
        ck_assert_msg(strstr(err.msg, CASES[i].msg) != NULL, "case %zu: '%s' lacks '%s'", i, err.msg, CASES[i].msg);
        ck_assert_ptr_null(s);
    }
}
END_TEST

START_TEST(scheduler_should_hand_out_every_job_once_and_keep_a_worker_on_its_trace)
{
    sweep_spec *s = load_ok("{\"traces\": [\"jobs\", \"c.jsonl\"], \"devices\": [\"A100-40GB\", \"4GiB\"],"
                            " \"strategies\": [\"ideal\", \"raw\"]}",
                            0);
    uint64_t n = sweep_spec_jobs(s);
    uint8_t *done = calloc(n, 1);
    done[5] = 1; /* already in the results */
    sweep_sched *q = sweep_sched_new(s, done);
    ck_assert_uint_eq(sweep_sched_unfinished(q), n - 1);
    uint8_t *seen = calloc(n, 1);
    /* worker A starts trace 0, worker B gets a fresh trace */
    uint64_t a = sweep_sched_next(q, SWEEP_NO_TRACE), b = sweep_sched_next(q, SWEEP_NO_TRACE);
    ck_assert_uint_eq(a / s->n_combos, 0);
    ck_assert_uint_eq(b / s->n_combos, 1);
    seen[a] = seen[b] = 1;
    uint32_t ha = 0, hb = 1;
    for (;;) {
        uint64_t j = sweep_sched_next(q, ha);
        if (j == SWEEP_NO_JOB)
            break;
        ck_assert(!seen[j] && !done[j]);
        seen[j] = 1;
        ha = (uint32_t)(j / s->n_combos);
        sweep_sched_finish(q, j, false);
        j = sweep_sched_next(q, hb);
        if (j == SWEEP_NO_JOB)
            break;
        ck_assert(!seen[j] && !done[j]);
        seen[j] = 1;
        hb = (uint32_t)(j / s->n_combos);
        sweep_sched_finish(q, j, j == 7);
    }
    sweep_sched_finish(q, a, false);
    sweep_sched_finish(q, b, false);
    for (uint64_t i = 0; i < n; i++)
        ck_assert(seen[i] || done[i]);
    ck_assert_uint_eq(sweep_sched_unfinished(q), 0);
    sweep_sched_free(q);
    free(seen);
    free(done);
    sweep_spec_free(s);
}
END_TEST

START_TEST(a_node_job_line_should_hold_the_node_its_result_and_every_gpu)
{
    /* "4MiB" is a device and a node of one GPU: two jobs, each found by its own coordinates */
    sweep_spec *s = load_ok("{\"traces\": [\"c.jsonl\"], \"devices\": [\"4MiB\"], \"node\": [\"4MiB\", \"2x8MiB\"],"
                            " \"strategies\": [\"raw\"]}",
                            SWEEP_LOAD_CHECK_OPTIONS);
    ck_assert_uint_eq(sweep_spec_jobs(s), 3);
    ck_assert(!s->devices[0].node && s->devices[1].node && s->devices[2].node);
    ck_assert_uint_eq(s->devices[2].gpus.n, 2);
    ck_assert_uint_eq(sweep_spec_find(s, "c.jsonl", "4MiB", false, "raw", "default"), 0);
    ck_assert_uint_eq(sweep_spec_find(s, "c.jsonl", "4MiB", true, "raw", "default"), 1);
    ck_assert_uint_eq(sweep_spec_find(s, "c.jsonl", "2x8MiB", false, "raw", "default"), UINT64_MAX);
    sweep_cache *c = sweep_cache_new(s, 1);
    sim_buf line;
    sim_buf_init(&line);
    uint64_t events = 0;
    ck_assert_int_eq(sweep_job_run(s, c, 2, &line, &events), 0);
    ck_assert_ptr_nonnull(strstr(line.data, "{\"job\":{\"trace\":\"c.jsonl\",\"node\":\"2x8MiB\",\"strategy\":\"raw\","
                                            "\"options\":\"default\"},\"gpusim\":"));
    /* raw packs allocations below 2 MiB and charges whole 2 MiB pages from there on
     * (docs/allocators.md §4): 1048576 + 4194304 (3000000 B in two pages) = 5242880 B on
     * GPU 0, headroom 8388608 - 5242880 = 3145728; raw takes nothing on GPU 1, never used */
    ck_assert_ptr_nonnull(strstr(line.data, "\"node\":{\"name\":\"2x8MiB\",\"gpus\":2,\"capacity_bytes\":16777216,"
                                            "\"context_bytes\":0},\"result\":{\"completed\":true,\"ooms\":0,"
                                            "\"gpus_used\":1,\"peak_device_bytes\":5242880,\"peak_gpu\":0,"
                                            "\"headroom_bytes\":3145728,\"headroom_gpu\":0,"));
    ck_assert_ptr_nonnull(strstr(line.data, "{\"gpu\":1,\"name\":\"custom\",\"capacity_bytes\":8388608,"
                                            "\"limit_bytes\":null,\"peak_used_bytes\":0,"));
    ck_assert_ptr_eq(strchr(line.data, '\n'), line.data + line.len - 1);
    /* on the one-GPU node of 4 MiB the same OOM as on the device, named by GPU and rank */
    ck_assert_int_eq(sweep_job_run(s, c, 1, &line, &events), 0);
    ck_assert_ptr_nonnull(strstr(line.data, "\"first_oom\":{\"gpu\":0,\"rank\":0,\"cause\":\"fragmentation\"}"));
    sim_buf_release(&line);
    sweep_cache_free(c);
    sweep_spec_free(s);
}
END_TEST

START_TEST(a_job_line_should_hold_its_coordinates_and_the_result_on_one_line)
{
    sweep_spec *s = load_ok("{\"traces\": [\"c.jsonl\"], \"devices\": [\"4MiB\"], \"strategies\": [\"raw\"]}", 0);
    sweep_cache *c = sweep_cache_new(s, 1);
    sim_buf line;
    sim_buf_init(&line);
    uint64_t events = 0;
    ck_assert_int_eq(sweep_job_run(s, c, 0, &line, &events), 0);
    ck_assert_uint_eq(events, 4);
    ck_assert_ptr_nonnull(strstr(line.data, "{\"job\":{\"trace\":\"c.jsonl\",\"device\":\"4MiB\",\"strategy\":\"raw\","
                                            "\"options\":\"default\"},\"gpusim\":"));
    ck_assert_ptr_nonnull(strstr(line.data, "\"trace\":{\"path\":\"c.jsonl\",\"name\":\"t\""));
    /* 1 MiB + 3000000 B = 4048576 B live would fit in 4 MiB, but raw charges the second
     * 2 MiB pages (4 MiB): design.md §3 calls that fragmentation (the allocator's rounding) */
    ck_assert_ptr_nonnull(strstr(line.data, "\"cause\":\"fragmentation\""));
    ck_assert_ptr_eq(strchr(line.data, '\n'), line.data + line.len - 1);
    sim_buf_release(&line);
    sweep_cache_free(c);
    sweep_spec_free(s);
}
END_TEST

/* A spec of n traces of the given sizes in bytes (contents do not matter: the partition
 * only stats them) x 3 devices x 2 strategies = 6 jobs per trace. */
static sweep_spec *sized_spec(unsigned n, const uint64_t *sizes)
{
    char dir[256], p[600];
    test_dir(dir, sizeof dir);
    snprintf(p, sizeof p, "%s/sized", dir);
    mkdir(p, 0755);
    for (unsigned t = 0; t < n; t++) {
        snprintf(p, sizeof p, "%s/sized/t%03u.jsonl", dir, t);
        FILE *f = fopen(p, "w");
        ck_assert_ptr_nonnull(f);
        for (uint64_t b = 0; b < sizes[t]; b++)
            fputc('x', f);
        fclose(f);
    }
    return load_ok("{\"traces\": [\"sized\"], \"devices\": [\"1GiB\", \"2GiB\", \"3GiB\"], "
                   "\"strategies\": [\"raw\", \"ideal\"]}",
                   0);
}

/* Shard i's weight: its jobs, each weighing its trace's size. */
static uint64_t shard_weight(const sweep_spec *s, const sweep_partition *p, uint32_t i, const uint64_t *sizes)
{
    uint64_t first, end, w = 0;
    sweep_partition_range(p, i, &first, &end);
    for (uint64_t j = first; j < end; j++)
        w += sizes[j / s->n_combos];
    return w;
}

START_TEST(shards_should_cover_every_job_once_in_ranges_of_about_equal_weight)
{
    uint64_t seed = (uint64_t)time(NULL);
    printf("shards_should_cover_every_job_once_in_ranges_of_about_equal_weight: seed %llu\n", (unsigned long long)seed);
    uint64_t x = seed | 1;
    for (int round = 0; round < 6; round++) {
        x ^= x << 13, x ^= x >> 7, x ^= x << 17;
        unsigned n = 1 + (unsigned)(x % 12);
        uint64_t sizes[12], total = 0, largest = 0;
        for (unsigned t = 0; t < n; t++) {
            x ^= x << 13, x ^= x >> 7, x ^= x << 17;
            sizes[t] = 1 + x % 5000;
            total += sizes[t] * 6;
            largest = sizes[t] > largest ? sizes[t] : largest;
        }
        sweep_spec *s = sized_spec(n, sizes);
        for (uint32_t shards = 1; shards <= 9; shards++) {
            sweep_partition *p = NULL;
            sim_error err;
            ck_assert_int_eq(sweep_partition_new(s, shards, &p, &err), SIM_OK);
            uint64_t at = 0;
            for (uint32_t i = 0; i < shards; i++) {
                uint64_t first, end;
                sweep_partition_range(p, i, &first, &end);
                ck_assert_msg(first == at && end >= first, "seed %llu: shard %u/%u starts at %llu, not %llu",
                              (unsigned long long)seed, i, shards, (unsigned long long)first, (unsigned long long)at);
                for (uint64_t j = first; j < end; j++)
                    EXPECT_MSG(sweep_partition_shard_of(p, j) == i, "seed %llu: job %llu is not in shard %u/%u",
                               (unsigned long long)seed, (unsigned long long)j, i, shards);
                /* each cut within an eighth of the mean of its ideal place, or half a job */
                uint64_t w = shard_weight(s, p, i, sizes), mean = total / shards;
                uint64_t slack = 2 * (mean / 8 > largest / 2 ? mean / 8 : largest / 2) + 2;
                ck_assert_msg(w + slack >= mean && w <= mean + slack,
                              "seed %llu: shard %u/%u weighs %llu, the mean is %llu (slack %llu)",
                              (unsigned long long)seed, i, shards, (unsigned long long)w, (unsigned long long)mean,
                              (unsigned long long)slack);
                at = end;
            }
            ck_assert_uint_eq(at, sweep_spec_jobs(s));
            sweep_partition_free(p);
        }
        sweep_spec_free(s);
        char dir[256], cmd[600];
        test_dir(dir, sizeof dir);
        snprintf(cmd, sizeof cmd, "rm -rf '%s/sized'", dir);
        ck_assert_int_eq(system(cmd), 0);
    }
}
END_TEST

START_TEST(shards_should_cut_between_traces_when_that_keeps_them_balanced)
{
    /* 12 traces of 100 B x 6 jobs: 3, 4 or 6 shards take whole traces (4, 3 or 2 each) */
    uint64_t sizes[12];
    for (int t = 0; t < 12; t++)
        sizes[t] = 100;
    sweep_spec *s = sized_spec(12, sizes);
    const uint32_t counts[] = {3, 4, 6};
    for (int k = 0; k < 3; k++) {
        sweep_partition *p = NULL;
        sim_error err;
        ck_assert_int_eq(sweep_partition_new(s, counts[k], &p, &err), SIM_OK);
        ck_assert_uint_eq(sweep_partition_split_traces(p), 0);
        for (uint32_t i = 0; i < counts[k]; i++) {
            uint64_t first, end;
            sweep_partition_range(p, i, &first, &end);
            ck_assert_uint_eq(end - first, 72 / counts[k]);
            ck_assert_uint_eq(first % 6, 0);
        }
        sweep_partition_free(p);
    }
    /* one trace of 5 shards: 6 jobs cut inside it (1 or 2 each), the trace read by all */
    sweep_spec_free(s);
    char dir[256], cmd[600];
    test_dir(dir, sizeof dir);
    snprintf(cmd, sizeof cmd, "rm -rf '%s/sized'", dir);
    ck_assert_int_eq(system(cmd), 0);
    s = sized_spec(1, sizes);
    sweep_partition *p = NULL;
    sim_error err;
    ck_assert_int_eq(sweep_partition_new(s, 5, &p, &err), SIM_OK);
    ck_assert_uint_eq(sweep_partition_split_traces(p), 1);
    for (uint32_t i = 0; i < 5; i++)
        ck_assert_uint_ge(shard_weight(s, p, i, sizes), 100);
    sweep_partition_free(p);
    sweep_spec_free(s);
}
END_TEST

START_TEST(the_shard_index_should_come_from_the_job_arrays_variable)
{
    static const char *const VARS[] = {"SLURM_ARRAY_TASK_ID", "SLURM_ARRAY_TASK_COUNT", "SLURM_ARRAY_TASK_MIN",
                                       "HQ_TASK_ID", "JOB_COMPLETION_INDEX", "AWS_BATCH_JOB_ARRAY_INDEX"};
    for (size_t i = 0; i < sizeof VARS / sizeof VARS[0]; i++)
        unsetenv(VARS[i]);
    sweep_shard sh;
    const char *from = NULL;
    sim_error err;
    ck_assert_int_eq(sweep_shard_parse("2/7", &sh, &from, &err), SIM_OK);
    ck_assert_uint_eq(sh.index, 2);
    ck_assert_uint_eq(sh.count, 7);
    ck_assert_str_eq(from, "");
    ck_assert_int_eq(sweep_shard_parse("7/7", &sh, &from, &err), SIM_EUSAGE);
    ck_assert_int_eq(sweep_shard_parse("auto/4", &sh, &from, &err), SIM_EUSAGE);
    ck_assert_ptr_nonnull(strstr(err.msg, "no job array index in the environment"));
    setenv("HQ_TASK_ID", "3", 1);
    ck_assert_int_eq(sweep_shard_parse("auto/4", &sh, &from, &err), SIM_OK);
    ck_assert_uint_eq(sh.index, 3);
    ck_assert_str_eq(from, "HQ_TASK_ID");
    ck_assert_int_eq(sweep_shard_parse("auto", &sh, &from, &err), SIM_EUSAGE); /* HyperQueue has no count */
    unsetenv("HQ_TASK_ID");
    /* Slurm's --array=1-5: task 3 is shard 2 of 5 */
    setenv("SLURM_ARRAY_TASK_ID", "3", 1);
    setenv("SLURM_ARRAY_TASK_MIN", "1", 1);
    setenv("SLURM_ARRAY_TASK_COUNT", "5", 1);
    ck_assert_int_eq(sweep_shard_parse("auto", &sh, &from, &err), SIM_OK);
    ck_assert_uint_eq(sh.index, 2);
    ck_assert_uint_eq(sh.count, 5);
    ck_assert_int_eq(sweep_shard_parse("auto/4", &sh, &from, &err), SIM_EUSAGE); /* the array has 5 */
    setenv("AWS_BATCH_JOB_ARRAY_INDEX", "0", 1);
    ck_assert_int_eq(sweep_shard_parse("auto", &sh, &from, &err), SIM_EUSAGE); /* two indices */
    for (size_t i = 0; i < sizeof VARS / sizeof VARS[0]; i++)
        unsetenv(VARS[i]);
}
END_TEST

START_TEST(a_shards_results_file_should_be_named_by_the_shard_before_the_extension)
{
    char out[256];
    sweep_shard sh = {2, 7};
    ck_assert(sweep_shard_path("fleet.jsonl", sh, out, sizeof out));
    ck_assert_str_eq(out, "fleet.shard-2-of-7.jsonl");
    ck_assert(sweep_shard_path("runs.v1/fleet.sqlite", sh, out, sizeof out));
    ck_assert_str_eq(out, "runs.v1/fleet.shard-2-of-7.sqlite");
    ck_assert(sweep_shard_path("runs.v1/results", sh, out, sizeof out));
    ck_assert_str_eq(out, "runs.v1/results.shard-2-of-7");
    ck_assert(!sweep_shard_path("fleet.jsonl", sh, out, 10));
}
END_TEST
