/* Check suite for TensorFlow memory profiles read through their sampled timeline
 * (traces/import_tfprof_timeline.h): the profiles of three Keras models recorded with
 * TensorFlow 2.21 on the CPU (tests/data/import/tf, made by its make.py), a pruned copy,
 * a hand-made timeline with gaps, and bad input through the CLI.
 *
 * The expected numbers were read from the files independently of gpusim, with Python's
 * gzip and json modules:
 *
 *   (k, p), = json.load(gzip.open(f))["memoryProfilePerAllocator"].items()
 *   t = p["sampledTimelineSnapshots"]; use = heap + stack of a point; sz = allocationBytes
 *   consistent = points whose in-use is the previous one's ± their own sz
 *   pre = DEALLOCATIONs whose address first appears deallocated
 *   before0 = use(t[0]) - sz(t[0]) (t[0] is an ALLOCATION in all four)
 *   peak = peakStats heap + stack
 *
 * which printed (points, ALLOCATION, DEALLOCATION, consistent, pre (count, bytes),
 * before0, peak = max use over the timeline, last use, memoryProfileSnapshots):
 *   mlp_fit           886 447 439  885  4   3328   51968  129280  54016 13
 *   conv_fit          910 459 451  909  4  16640  118272  934400 120320 12
 *   transformer_fit  1000 839 161  251  7 167424  330496 1192192 332800 58  (sampled by XProf)
 *   mlp_fit.pruned    100  90  10   17  3   1024   53760  129280  59648  0  (cut by make.py)
 * Every allocator is "bfc_cpu_allocator_for_gpu", memoryCapacity 68719476736. */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "sim/engine.h"
#include "sim/units.h"
#include "strategies/ideal.h"
#include "support/check_main.h"
#include "support/import_data.h"
#include "support/slurp.h"
#include "traces/input.h"

static char g_path[1024];

static const char *data(const char *name)
{
    return import_data_path(g_path, sizeof g_path, "tf", name);
}

static trace_input *open_text(const char *text)
{
    input_options o = {.device = -1};
    trace_input *in = NULL;
    sim_error err;
    sim_error_clear(&err);
    sim_status st = input_open_mem("hand.json", text, strlen(text), NULL, &o, &in, &err);
    ck_assert_msg(st == SIM_OK, "hand.json: %s", err.msg);
    return in;
}

/* The live bytes after every event (the sum of the sizes allocated minus those freed)
 * must be the recorded in-use wherever a point is recorded; returns the points. */
static uint64_t expect_in_use_at_every_point(const trace_input *in)
{
    const input_recorded *rec = input_get_recorded(in);
    ck_assert(rec->has_allocated);
    uint64_t n = input_event_count(in), live = 0, points = 0;
    uint64_t *size = calloc(n + 1, sizeof *size); /* by id: ids are 1..n */
    ck_assert_ptr_nonnull(size);
    for (uint64_t i = 0; i < n; i++) {
        const sim_event *e = input_event_at(in, i);
        ck_assert_uint_le(e->id, n);
        if (e->op == SIM_OP_ALLOC) {
            size[e->id] = e->size;
            live += e->size;
        } else if (e->op == SIM_OP_FREE) {
            live -= size[e->id];
        }
        if (rec->has_point[i]) {
            EXPECT_MSG(live == rec->allocated[i], "event %llu: live %llu, recorded %llu", (unsigned long long)i,
                       (unsigned long long)live, (unsigned long long)rec->allocated[i]);
            points++;
        }
    }
    free(size);
    return points;
}

static uint64_t ideal_peak(trace_input *in)
{
    device_info dev = {.name = "test", .capacity_bytes = 1024 * GiB};
    engine_config cfg = {.device = dev, .ops = ideal_strategy()};
    sim_event_source src = input_source(in);
    sim_run *run = NULL;
    sim_error err;
    sim_error_clear(&err);
    sim_status st = engine_run(&cfg, &src, 1, &run, &err);
    ck_assert_msg(st == SIM_OK, "replay: %s", err.msg);
    uint64_t peak = run->total.peak_requested_bytes;
    sim_run_free(run);
    return peak;
}

static const struct profile {
    const char *file;
    uint64_t points, peak, last, events; /* events: 0 when gaps make it the importer's choice */
    const char *warning;
} PROFILES[] = {
    /* 886 points + 4 blocks freed before being allocated + 1 block for the rest of the
     * 51968 B live before the first point (51968 - 3328 = 48640 > 0) = 891 */
    {"mlp_fit.memory_profile.json.gz", 886, 129280, 54016, 891, "without a gap"},
    /* 910 + 4 + 1 (118272 - 16640 > 0) = 915 */
    {"conv_fit.memory_profile.json.gz", 910, 934400, 120320, 915, "without a gap"},
    {"transformer_fit.memory_profile.json.gz", 1000, 1192192, 332800, 0, "are lost"},
    {"mlp_fit.pruned.memory_profile.json.gz", 100, 129280, 59648, 0, "are lost"},
};

START_TEST(recorded_keras_profiles_should_import_every_point_with_the_profiles_peak)
{
    for (size_t k = 0; k < sizeof PROFILES / sizeof PROFILES[0]; k++) {
        const struct profile *p = &PROFILES[k];
        trace_input *in = import_open_ok(data(p->file), NULL, -1);
        ck_assert_str_eq(input_format_name(input_get_format(in)), "tf-profile");
        ck_assert_str_eq(input_header(in)->device_name, "bfc_cpu_allocator_for_gpu");
        ck_assert_uint_eq(input_header(in)->device_capacity, 68719476736u);
        if (p->events)
            ck_assert_uint_eq(input_event_count(in), p->events);
        ck_assert_msg(import_has_warning(in, p->warning), "%s: no warning \"%s\"", p->file, p->warning);
        const input_recorded *rec = input_get_recorded(in);
        ck_assert(rec->has_peak_allocated);
        ck_assert_uint_eq(rec->peak_allocated, p->peak);
        ck_assert_uint_eq(ideal_peak(in), p->peak); /* the replay peaks where TensorFlow did */
        ck_assert_uint_eq(rec->allocated[input_event_count(in) - 1], p->last);
        input_close(in);
    }
}
END_TEST

START_TEST(the_timeline_fallback_should_reproduce_the_sampled_in_use_at_every_point)
{
    for (size_t k = 0; k < sizeof PROFILES / sizeof PROFILES[0]; k++) {
        trace_input *in = import_open_ok(data(PROFILES[k].file), NULL, -1);
        ck_assert_uint_eq(expect_in_use_at_every_point(in), PROFILES[k].points);
        input_close(in);
    }
}
END_TEST

/* A timeline with gaps, in-use after each point in brackets (ps → ns, rebased to 1 ns):
 *   1 ns ALLOCATION   A 100 [1100]  before it 1000: C (freed at 3 ns without being
 *                                   allocated) 200 + 800 more, allocations at the start
 *   2 ns ALLOCATION   B  50 [1400]  before it 1350, the replay holds 1100: a gap of +250
 *   3 ns DEALLOCATION C 200 [1200]  before it 1400: exact
 *   4 ns DEALLOCATION B  50 [ 600]  before it 650, the replay holds 1200: the synthetic
 *                                   250 and 800 go (1200 - 1050 = 150), +500 comes back
 *   5 ns DEALLOCATION A 100 [ 500]  exact
 *   6 ns ALLOCATION at address 0 [700]: only its in-use: +200 */
static const char HAND[] =
    "{\"memoryProfilePerAllocator\": {\"GPU_0_bfc\": {\"memoryProfileSnapshots\": [],"
    " \"profileSummary\": {\"peakStats\": {\"heapAllocatedBytes\": \"1400\", \"stackReservedBytes\": \"0\"}},"
    " \"sampledTimelineSnapshots\": ["
    "{\"timeOffsetPs\": \"1000\", \"aggregationStats\": {\"heapAllocatedBytes\": \"1100\"}, \"activityMetadata\":"
    " {\"memoryActivity\": \"ALLOCATION\", \"allocationBytes\": \"100\", \"address\": \"4096\", \"tfOpName\": \"a\"}},"
    "{\"timeOffsetPs\": \"2000\", \"aggregationStats\": {\"heapAllocatedBytes\": \"1400\"}, \"activityMetadata\":"
    " {\"memoryActivity\": \"ALLOCATION\", \"allocationBytes\": \"50\", \"address\": \"8192\"}},"
    "{\"timeOffsetPs\": \"3000\", \"aggregationStats\": {\"heapAllocatedBytes\": \"1200\"}, \"activityMetadata\":"
    " {\"memoryActivity\": \"DEALLOCATION\", \"allocationBytes\": \"200\", \"address\": \"12288\"}},"
    "{\"timeOffsetPs\": \"4000\", \"aggregationStats\": {\"heapAllocatedBytes\": \"600\"}, \"activityMetadata\":"
    " {\"memoryActivity\": \"DEALLOCATION\", \"allocationBytes\": \"50\", \"address\": \"8192\"}},"
    "{\"timeOffsetPs\": \"5000\", \"aggregationStats\": {\"heapAllocatedBytes\": \"500\"}, \"activityMetadata\":"
    " {\"memoryActivity\": \"DEALLOCATION\", \"allocationBytes\": \"100\", \"address\": \"4096\"}},"
    "{\"timeOffsetPs\": \"6000\", \"aggregationStats\": {\"heapAllocatedBytes\": \"600\","
    " \"stackReservedBytes\": \"100\"}, \"activityMetadata\":"
    " {\"memoryActivity\": \"ALLOCATION\", \"allocationBytes\": \"64\", \"address\": \"0\"}}]}}}";

START_TEST(a_timeline_with_gaps_should_fill_each_gap_with_the_in_use_difference_and_say_what_is_lost)
{
    trace_input *in = open_text(HAND);
    static const struct {
        sim_op op;
        uint64_t id, size, t;
        const char *tag;
    } W[] = {
        {SIM_OP_ALLOC, 1, 200, 0, "live before the profile"}, /* C */
        {SIM_OP_ALLOC, 2, 800, 0, "live before the profile"}, /* 1000 - 200 */
        {SIM_OP_ALLOC, 3, 100, 0, "a"},                       /* A at 1 ns, rebased to 0 */
        {SIM_OP_ALLOC, 4, 250, 1, "sampled gap"},             /* 1350 - 1100 */
        {SIM_OP_ALLOC, 5, 50, 1, NULL},                       /* B */
        {SIM_OP_FREE, 1, 0, 2, NULL},                         /* C */
        {SIM_OP_FREE, 4, 0, 3, NULL},                         /* the latest synthetic first: 1200 - 250 = 950 */
        {SIM_OP_FREE, 2, 0, 3, NULL},                         /* 950 - 800 = 150 */
        {SIM_OP_ALLOC, 6, 500, 3, "sampled gap"},             /* 650 - 150 */
        {SIM_OP_FREE, 5, 0, 3, NULL},                         /* B: 650 - 50 = 600 */
        {SIM_OP_FREE, 3, 0, 4, NULL},                         /* A: 600 - 100 = 500 */
        {SIM_OP_ALLOC, 7, 200, 5, "sampled gap"},             /* 700 - 500 */
    };
    ck_assert_uint_eq(input_event_count(in), sizeof W / sizeof W[0]);
    for (uint64_t i = 0; i < sizeof W / sizeof W[0]; i++) {
        const sim_event *e = input_event_at(in, i);
        ck_assert_msg(e->op == W[i].op && e->id == W[i].id && e->t == W[i].t, "event %llu", (unsigned long long)i);
        if (e->op == SIM_OP_ALLOC)
            ck_assert_uint_eq(e->size, W[i].size);
        if (W[i].tag != NULL)
            ck_assert_str_eq(e->tag, W[i].tag);
    }
    ck_assert_uint_eq(expect_in_use_at_every_point(in), 6);
    ck_assert_uint_eq(input_get_recorded(in)->peak_allocated, 1400);
    ck_assert_uint_eq(ideal_peak(in), 1400);
    /* 6 points, 5 with a replayable activity; gaps before the 2nd, 4th and 6th points:
     * 1 + 3 + 1 = 5 synthetic events */
    ck_assert(import_has_warning(in, "pruned to 0 allocations live at the peak: replayed the 6 points"));
    ck_assert(import_has_warning(in, "5 exact; in 3 gaps between samples 5 synthetic allocations and frees"));
    ck_assert(import_has_warning(in, "inside each gap of the sampled timeline the individual allocation sizes, their "
                              "order and their addresses are lost"));
    ck_assert(import_has_warning(in, "1 timeline points had an activity that could not be replayed"));
    input_close(in);
}
END_TEST

GPUSIM_TCASE("bad input", 120, NULL, NULL);

/* `gpusim replay FILE` on text written to a temporary file: its exit status; its
 * stderr in *errtext (free it). */
static int cli_replay(const char *text, char **errtext)
{
    const char *bin = getenv("GPUSIM_BINARY");
    ck_assert_ptr_nonnull(bin);
    char dir[] = "/tmp/gpusim_test_tf_XXXXXX";
    ck_assert_ptr_nonnull(mkdtemp(dir));
    char path[128], errpath[128], cmd[1024];
    snprintf(path, sizeof path, "%s/bad.json", dir);
    snprintf(errpath, sizeof errpath, "%s/err", dir);
    FILE *f = fopen(path, "w");
    ck_assert_ptr_nonnull(f);
    fputs(text, f);
    fclose(f);
    snprintf(cmd, sizeof cmd, "'%s' replay '%s' --strategy=ideal >/dev/null 2>'%s'", bin, path, errpath);
    int st = system(cmd);
    size_t len = 0;
    *errtext = test_slurp(errpath, &len);
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    ck_assert_int_eq(system(cmd), 0);
    return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

#define TL_HEAD "{\"memoryProfilePerAllocator\": {\"GPU_0_bfc\": {\"sampledTimelineSnapshots\": "
static const struct bad {
    const char *text, *problem;
} BAD[] = {
    {TL_HEAD "{}}}}", "sampledTimelineSnapshots: must be an array, not an object"},
    {TL_HEAD "[7]}}}", "sampledTimelineSnapshots[0]: a timeline point must be an object, not a number"},
    {TL_HEAD "[{\"timeOffsetPs\": \"1\"}]}}}", "sampledTimelineSnapshots[0]: missing \"aggregationStats\""},
    {TL_HEAD "[{\"aggregationStats\": {}}]}}}", "sampledTimelineSnapshots[0]: missing \"heapAllocatedBytes\""},
    {TL_HEAD "[{\"aggregationStats\": {\"heapAllocatedBytes\": \"-5\"}}]}}}",
     "sampledTimelineSnapshots[0]: \"heapAllocatedBytes\""},
    {TL_HEAD "[{\"timeOffsetPs\": \"x\", \"aggregationStats\": {\"heapAllocatedBytes\": \"5\"}}]}}}",
     "\"timeOffsetPs\" must be a non-negative integer"},
    {TL_HEAD "[{\"aggregationStats\": {\"heapAllocatedBytes\": \"5\"}, \"activityMetadata\": []}]}}}",
     "\"activityMetadata\" must be an object, not an array"},
    {TL_HEAD "[]}}}", "memoryProfileSnapshots: missing, and no \"sampledTimelineSnapshots\" to read instead"},
};

START_TEST(bad_timelines_should_exit_3_naming_the_file_and_the_problem)
{
    for (size_t i = 0; i < sizeof BAD / sizeof BAD[0]; i++) {
        char *err = NULL;
        int rc = cli_replay(BAD[i].text, &err);
        ck_assert_msg(rc == 3, "case %zu: exit %d (%s)", i, rc, err);
        ck_assert_msg(strstr(err, "bad.json") != NULL, "case %zu: no file name in: %s", i, err);
        ck_assert_msg(strstr(err, BAD[i].problem) != NULL, "case %zu: no \"%s\" in: %s", i, BAD[i].problem, err);
        free(err);
    }
}
END_TEST

/* Every prefix of the hand-made timeline, and every one-byte change of it to a quote, a
 * minus or a digit, either imports or fails with a message: never crashes. */
START_TEST(every_cut_or_changed_byte_of_a_timeline_should_fail_cleanly_or_import)
{
    static const char SUBST[] = "\"-9";
    size_t len = sizeof HAND - 1;
    char *buf = malloc(len + 1);
    ck_assert_ptr_nonnull(buf);
    for (size_t k = 0; k <= 3 * len; k++) {
        memcpy(buf, HAND, len + 1);
        size_t n = len;
        if (k < len)
            n = k; /* a prefix */
        else
            buf[(k - len) % len] = SUBST[(k - len) / len];
        input_options o = {.device = -1};
        trace_input *in = NULL;
        sim_error err;
        sim_error_clear(&err);
        sim_status st = input_open_mem("cut.json", buf, n, NULL, &o, &in, &err);
        EXPECT_MSG(st == SIM_OK || err.msg[0] != '\0', "case %zu: no message", k);
        input_close(in);
    }
    free(buf);
}
END_TEST
