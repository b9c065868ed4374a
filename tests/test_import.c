/* Check suites for traces/input.h and the importers: the full real recordings (not
 * shipped; run with GPUSIM_REALTRACES=DIR holding them, else those cases skip), the
 * excerpts and synthetic files in tests/data/import (always); the command line, the
 * real snapshots' exact replays and bad input per format are test_import_cli.c's.
 * tests/data/import/LICENSES.md names the recordings.
 *
 * The expected numbers were derived independently of gpusim, with Python's json
 * and gzip modules (no gpusim code involved):
 *
 *   python3 -c 'import gzip,json,sys,itertools
 *   d=json.load(gzip.open(sys.argv[1]) if sys.argv[1].endswith(".gz") else open(sys.argv[1]))
 *   m=sorted([(e["ts"],e["args"].get("Ev Idx",0),i,e["args"]) for i,e in enumerate(d["traceEvents"])
 *             if e.get("name")=="[memory]" and e["args"]["Device Type"]==1])
 *   a=[x[3] for x in m]; run=list(itertools.accumulate(x["Bytes"] for x in a))
 *   print(len(a), sum(x["Bytes"]>0 for x in a), sum(x["Bytes"]<0 for x in a), max(run), run[-1])
 *   if "Total Allocated" in a[0]:
 *     s=a[0]["Total Allocated"]-a[0]["Bytes"]
 *     print(s, all(x["Total Allocated"]-s==r for x,r in zip(a,run)), all(x["Bytes"]%512==0 for x in a))' FILE
 *
 * which printed (events, allocs, frees, peak of the running sum, final running sum):
 *   hta_v100_rank1...json.gz     26770 13385 13385 2532893696 0           4096614400 True True
 *   hta_excerpt.pt.trace.json.gz  1200   737   463 1085218816 1085218816  4096614400 True True
 *   kineto_resnet50_nw0...json.gz 8220  4110  4110 2791636480 0
 *   kineto_resnet50_nw4...json.gz 8280  4140  4140 2791505408 0
 *   kineto_nw0_excerpt...json      600   386   214 2791636480 2595737088
 * A second script paired frees by "Addr" (HTA: every free matches a live alloc of
 * the same size) or LIFO per size (2021 files: every free finds one): no file has a
 * free without an earlier allocation, so none gets start-of-trace allocations.
 * The synthetic snapshot and TF profile come from tests/data/import/make_synthetic.py;
 * their expected events are worked out by hand in the comments of the tests below. */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "sim/engine.h"
#include "sim/units.h"
#include "strategies/ideal.h"
#include "strategies/registry.h"
#include "support/check_main.h"
#include "support/import_data.h"
#include "support/seed.h"
#include "support/skip.h"
#include "support/slurp.h"
#include "traces/input.h"

static char g_path[1024];

static const char *data(const char *name)
{
    return import_data_path(g_path, sizeof g_path, "", name);
}

static const char *real(const char *name)
{
    return import_real_path(g_path, sizeof g_path, "test_import", name);
}

static sim_status open_status(const char *path, const char *from, int64_t ordinal, sim_error *err)
{
    input_options o = {.device = ordinal};
    trace_input *in = NULL;
    sim_error_clear(err);
    sim_status st = input_open(path, from, &o, &in, err);
    input_close(in);
    return st;
}

typedef struct counts {
    uint64_t events, allocs, frees, marks, deferred;
} counts;

static counts count(const trace_input *in)
{
    counts c = {0};
    for (uint64_t i = 0; i < input_event_count(in); i++) {
        const sim_event *e = input_event_at(in, i);
        c.events++;
        c.allocs += e->op == SIM_OP_ALLOC;
        c.frees += e->op == SIM_OP_FREE;
        c.marks += e->op == SIM_OP_MARK;
        c.deferred += e->op == SIM_OP_FREE && e->ready_t > e->t;
    }
    return c;
}

/* Replay under `ideal` (allocated == requested) with one timeline row per event. */
static sim_run *replay_ideal(trace_input *in)
{
    device_info dev = {.name = "test", .capacity_bytes = 1024 * GiB};
    engine_config cfg = {.device = dev, .ops = ideal_strategy(), .timeline_rows = input_event_count(in) + 1};
    sim_event_source src = input_source(in);
    sim_run *run = NULL;
    sim_error err;
    sim_error_clear(&err);
    sim_status st = engine_run(&cfg, &src, 1, &run, &err);
    ck_assert_msg(st == SIM_OK, "replay: %s", err.msg);
    return run;
}

/* The input's events, allocations and frees must be these; returns all its counts. */
static counts expect_counts(const trace_input *in, uint64_t events, uint64_t allocs, uint64_t frees)
{
    counts c = count(in);
    ck_assert_uint_eq(c.events, events);
    ck_assert_uint_eq(c.allocs, allocs);
    ck_assert_uint_eq(c.frees, frees);
    return c;
}

/* Replayed under `ideal`, the requested bytes must peak at peak and end at final. */
static void expect_ideal_peaks(trace_input *in, uint64_t peak, uint64_t final)
{
    sim_run *run = replay_ideal(in);
    ck_assert_uint_eq(run->total.peak_requested_bytes, peak);
    ck_assert_uint_eq(run->total.final_requested_bytes, final);
    sim_run_free(run);
}

/* The HTA check: the bytes held before recording began (Total Allocated at the
 * first event minus its own Bytes: 4096614400) are one allocation at the start
 * (event 1), and replayed allocated then equals "Total Allocated" after every
 * recorded event. Valid with `ideal` because every size is a multiple of 512
 * (checked here), so PyTorch's rounding leaves it unchanged. */
static void check_allocated_curve(trace_input *in, uint64_t n_expected)
{
    const input_recorded *rec = input_get_recorded(in);
    ck_assert_ptr_nonnull(rec);
    ck_assert(rec->has_allocated);
    ck_assert(rec->allocated_offset_known);
    ck_assert_uint_eq(rec->allocated_offset, 0);
    ck_assert_uint_eq(rec->live_before_bytes, 4096614400u);
    ck_assert_uint_eq(input_event_at(in, 0)->size, 4096614400u);
    ck_assert_str_eq(input_event_at(in, 0)->tag, "live before the recording");
    ck_assert(rec->reserved_start_unknown); /* 12.78 GB cached before the first event */
    ck_assert(import_has_warning(in, "recorded mid-run: 3.82 GiB (4096614400 B)"));
    ck_assert_uint_eq(rec->n, n_expected);
    for (uint64_t i = 0; i < rec->n; i++) {
        const sim_event *e = input_event_at(in, i);
        if (e->op == SIM_OP_ALLOC)
            ck_assert_msg(e->size % 512 == 0, "event %llu: size %llu is not a multiple of 512",
                          (unsigned long long)i + 1, (unsigned long long)e->size);
        ck_assert_uint_eq(e->ready_t, e->t); /* no deferred frees: one timeline row per event */
    }
    sim_run *run = replay_ideal(in);
    ck_assert_uint_eq(run->tl.n, rec->n);
    ck_assert(!rec->has_point[0]);
    for (uint64_t i = 1; i < rec->n; i++) {
        ck_assert(rec->has_point[i]);
        ck_assert_msg(run->tl.rows[i].allocated + rec->allocated_offset == rec->allocated[i],
                      "event %llu: replayed %llu + %llu != recorded %llu", (unsigned long long)i + 1,
                      (unsigned long long)run->tl.rows[i].allocated, (unsigned long long)rec->allocated_offset,
                      (unsigned long long)rec->allocated[i]);
        ck_assert_uint_eq(rec->reserved[i], 12782141440u);
    }
    sim_run_free(run);
}

/* ---------------------------------------------------------------- real recordings */

GPUSIM_TCASE("real recordings", 300, NULL, NULL);

START_TEST(hta_trace_should_pair_every_free_by_address)
{
    const char *p = real("hta_v100_rank1_df_index_resolver.pt.trace.json.gz");
    if (p == NULL)
        return;
    trace_input *in = import_open_ok(p, NULL, -1);
    ck_assert_str_eq(input_format_name(input_get_format(in)), "kineto");
    /* 1 + : the allocation live before the recording, then the recorded ones */
    expect_counts(in, 1 + 26770, 1 + 13385, 13385);
    ck_assert_uint_eq(input_warning_count(in), 1); /* only "recorded mid-run": no inferred pairing */
    ck_assert_str_eq(input_header(in)->device_name, "Tesla V100-SXM2-32GB");
    ck_assert_uint_eq(input_header(in)->device_capacity, 34089730048u);
    /* 4096614400 live before + the window's peak running sum 2532893696 (the 6.17 GiB
     * the job really peaked at); the window frees what it allocates */
    expect_ideal_peaks(in, 6629508096u, 4096614400u);
    input_close(in);
}
END_TEST

START_TEST(hta_replayed_allocated_should_follow_total_allocated_at_every_event)
{
    const char *p = real("hta_v100_rank1_df_index_resolver.pt.trace.json.gz");
    if (p == NULL)
        return;
    trace_input *in = import_open_ok(p, NULL, -1);
    check_allocated_curve(in, 1 + 26770);
    ck_assert_uint_eq(input_get_recorded(in)->peak_allocated, 6629508096u);
    input_close(in);
}
END_TEST

START_TEST(kineto_2021_traces_should_pair_lifo_per_size_with_a_warning)
{
    static const struct {
        const char *file;
        uint64_t events, allocs, peak;
    } T[] = {
        {"kineto_resnet50_nw0_worker0.1623143089861.pt.trace.json.gz", 8220, 4110, 2791636480u},
        {"kineto_resnet50_nw4_worker0.1623212756351.pt.trace.json.gz", 8280, 4140, 2791505408u},
    };
    for (size_t k = 0; k < 2; k++) {
        const char *p = real(T[k].file);
        if (p == NULL)
            continue;
        trace_input *in = import_open_ok(p, NULL, -1);
        expect_counts(in, T[k].events, T[k].allocs, T[k].allocs);
        ck_assert(import_has_warning(in, "pairing inferred"));
        ck_assert(!import_has_warning(in, "live at the start"));
        ck_assert_ptr_null(input_get_recorded(in)->allocated); /* no "Total Allocated" in 2021 */
        expect_ideal_peaks(in, T[k].peak, 0);
        input_close(in);
    }
}
END_TEST

/* ---------------------------------------------------------------- excerpts */

GPUSIM_TCASE("excerpts and synthetic files", 0, NULL, NULL);

START_TEST(hta_excerpt_should_inflate_sort_and_match_its_curve)
{
    trace_input *in = import_open_ok(data("hta_excerpt.pt.trace.json.gz"), NULL, -1);
    /* 1 + : the allocation live before the recording, then the recorded ones */
    counts c = expect_counts(in, 1 + 1200, 1 + 737, 463);
    /* times are rebased and non-decreasing although the file is not in time order */
    ck_assert_uint_eq(input_event_at(in, 0)->t, 0);
    for (uint64_t i = 1; i < c.events; i++)
        ck_assert_uint_ge(input_event_at(in, i)->t, input_event_at(in, i - 1)->t);
    check_allocated_curve(in, 1201);
    /* 4096614400 live before + the window's peak running sum 1085218816 */
    expect_ideal_peaks(in, 5181833216u, 5181833216u);
    input_close(in);
}
END_TEST

START_TEST(kineto_excerpt_without_addr_should_pair_lifo_per_size)
{
    trace_input *in = import_open_ok(data("kineto_nw0_excerpt.pt.trace.json"), NULL, -1);
    expect_counts(in, 600, 386, 214);
    ck_assert(import_has_warning(in, "pairing inferred"));
    expect_ideal_peaks(in, 2791636480u, 2595737088u);
    input_close(in);
}
END_TEST

START_TEST(device_option_should_select_a_device_or_say_which_exist)
{
    sim_error err;
    trace_input *in = import_open_ok(data("kineto_nw0_excerpt.pt.trace.json"), "kineto", 0);
    ck_assert_uint_eq(count(in).events, 600);
    input_close(in);
    ck_assert_int_eq(open_status(data("kineto_nw0_excerpt.pt.trace.json"), NULL, 3, &err), SIM_EUSAGE);
    ck_assert_ptr_nonnull(strstr(err.msg, "0 (600 events)"));
    ck_assert_int_eq(open_status(data("hta_excerpt.pt.trace.json.gz"), NULL, 0, &err), SIM_EUSAGE);
    ck_assert_int_eq(open_status(data("snapshot_small.json"), NULL, 5, &err), SIM_EUSAGE);
    ck_assert_int_eq(open_status(data("tf_profile_small.json"), NULL, 7, &err), SIM_EUSAGE);
    ck_assert_ptr_nonnull(strstr(err.msg, "GPU_0_bfc"));
}
END_TEST

/* ---------------------------------------------------------------- PyTorch snapshot */

typedef struct want {
    sim_op op;
    uint64_t id, size, t, ready_t;
    uint32_t stream;
    const char *tag;
} want;

static void check_events(trace_input *in, const want *w, size_t n)
{
    ck_assert_uint_eq(input_event_count(in), n);
    for (size_t i = 0; i < n; i++) {
        const sim_event *e = input_event_at(in, i);
        ck_assert_msg(e->op == w[i].op && e->id == w[i].id && e->t == w[i].t && e->ready_t == w[i].ready_t,
                      "event %zu: op %d id %llu t %llu ready %llu", i + 1, e->op, (unsigned long long)e->id,
                      (unsigned long long)e->t, (unsigned long long)e->ready_t);
        if (e->op == SIM_OP_ALLOC) {
            ck_assert_uint_eq(e->size, w[i].size);
            ck_assert_uint_eq(e->stream, w[i].stream);
            if (w[i].tag)
                ck_assert_str_eq(e->tag, w[i].tag);
        }
    }
}

/* make_synthetic.py, device 1, times in µs after T (→ ns after rebasing):
 * lost allocations first (the block freed at +0 without an alloc, then the block
 * live in segments at 0x7f0000000000 with requested_size 4000000); the free
 * requested at +0 completes at +5 in the very next entry: a synchronous free whose
 * clock ticked, a plain free at +0; 0x7f0000600000 is reused three times; the two
 * small blocks at 2^64 − 2 MiB and +512 (one double apart: equal as doubles) stay
 * two allocations on stream 1 (the cudaStream_t 94000000000000); a free requested
 * at +30 completes at +40; one completed without a request (+50, not deferred);
 * the oom becomes a mark; the free still pending at the end completes 1 ns after
 * the last entry (+120 µs), so that a replay ends with it pending as recorded. An
 * alloc's tag is its address, and its innermost Python frame where the entry has
 * frames (+100: train.py line 12, function step). */
static const want SNAPSHOT_EVENTS[] = {
    {SIM_OP_ALLOC, 1, 1048576, 0, 0, 0, "0x7f0000600000"},
    {SIM_OP_ALLOC, 8, 4000000, 0, 0, 0, "0x7f0000000000"},
    {SIM_OP_FREE, 1, 0, 0, 0, 0, NULL},
    {SIM_OP_ALLOC, 2, 2097152, 10000, 10000, 0, "0x7f0000400000"},
    {SIM_OP_ALLOC, 3, 100, 21000, 21000, 1, "0xffffffffffe00000"},
    {SIM_OP_ALLOC, 4, 300, 22000, 22000, 1, "0xffffffffffe00200"},
    {SIM_OP_FREE, 4, 0, 30000, 40000, 0, NULL},
    {SIM_OP_ALLOC, 5, 3000000, 31000, 31000, 0, "0x7f0000600000"},
    {SIM_OP_FREE, 5, 0, 50000, 50000, 0, NULL},
    {SIM_OP_MARK, 0, 0, 60000, 60000, 0, NULL},
    {SIM_OP_ALLOC, 6, 1000, 70000, 70000, 0, "0x7f0000600000"},
    {SIM_OP_FREE, 6, 0, 80000, 80000, 0, NULL},
    {SIM_OP_ALLOC, 7, 512, 100000, 100000, 0, "0x7f0000700000 at train.py:12 in step"},
    {SIM_OP_FREE, 7, 0, 110000, 120001, 0, NULL},
};

static void check_snapshot(trace_input *in)
{
    ck_assert_str_eq(input_format_name(input_get_format(in)), "torch-snapshot");
    check_events(in, SNAPSHOT_EVENTS, sizeof SNAPSHOT_EVENTS / sizeof SNAPSHOT_EVENTS[0]);
    ck_assert_str_eq(input_event_at(in, 9)->name,
                     "recorded oom: 10737418240 bytes requested, 1234 free on the device");
    ck_assert_str_eq(input_alloc_conf(in), "max_split_size_mb:256");
    const input_recorded *rec = input_get_recorded(in);
    /* segments hold 20 MiB + 2 MiB at the end; the trace added 2 MiB and freed 2 MiB */
    ck_assert(rec->has_reserved);
    ck_assert_uint_eq(rec->reserved_start, 23068672u);
    ck_assert_uint_eq(rec->peak_reserved, 25165824u);
    ck_assert_uint_eq(rec->reserved[4], 25165824u); /* after segment_alloc, at the alloc at +21 */
    ck_assert_uint_eq(rec->reserved[13], 23068672u);
    ck_assert(!rec->has_point[0]); /* synthetic start allocations have no recorded value */
    ck_assert_uint_eq(rec->ooms, 1);
    ck_assert(import_has_warning(in, "2 blocks were live before the trace began"));
    ck_assert(import_has_warning(in, "still pending"));
    /* "snapshot" and "annotate" are known actions, skipped without a warning */
    ck_assert(!import_has_warning(in, "actions gpusim does not replay"));
    /* the segment_free of 0x7f0001000000 lies inside the 20 MiB segment at
     * 0x7f0000000000 of the end: undoing it does not fit, so no start state */
    ck_assert(import_has_warning(in, "cannot be rebuilt"));
    ck_assert_ptr_null(input_seed(in));
    /* what stays live: 2097152 + 100 + 4000000 */
    sim_run *run = replay_ideal(in);
    ck_assert_uint_eq(run->total.final_requested_bytes, 6097252u);
    ck_assert(run->total.completed);
    sim_run_free(run);
}

/* make_synthetic.py's snapshot_midrun.json, device 1 (MiB = 2^20; A, B, C as there). */
#define MIB ((uint64_t)1 << 20)
#define MID_A 0x7F2000000000ull
#define MID_B 0x7F2001400000ull

START_TEST(a_snapshot_recorded_mid_run_should_rebuild_its_state_at_the_first_entry)
{
    trace_input *in = import_open_ok(data("snapshot_midrun.json"), NULL, -1);
    ck_assert(import_has_warning(in, "the snapshot holds 2 devices: 0 (3 entries, 1 blocks), 1 (11 entries, 10 blocks)"));
    const sim_seed *sd = input_seed(in);
    ck_assert_ptr_nonnull(sd);
    /* C was made by the trace's segment_alloc: at the start only A and B */
    ck_assert_uint_eq(sd->n_segs, 2);
    const sim_seed_segment *a = &sd->segs[0], *b = &sd->segs[1];
    ck_assert_uint_eq(a->addr, MID_A);
    ck_assert_uint_eq(a->size_bytes, 20 * MIB);
    ck_assert(!a->small_pool && !a->expandable && a->stream == 0 && a->pool_id == 0);
    ck_assert_uint_eq(b->addr, MID_B);
    ck_assert(b->small_pool && b->stream == 1); /* the second stream value seen, 94000000000000 */
    /* A: the lost 4000000 B block (rounded 4000256, + the 194048 B before the next
     * block that a large-pool block keeps: 4 MiB), the 2 MiB block live to the end,
     * then 14 MiB free (the 3 and 2 MiB blocks the trace allocates were free) */
    ck_assert_uint_eq(a->n_blocks, 3);
    const sim_seed_block *ab = &sd->blocks[a->first_block];
    ck_assert(ab[0].offset == 0 && ab[0].size_bytes == 4 * MIB && ab[0].requested_bytes == 4000000 &&
              ab[0].state == SIM_SEED_USED);
    ck_assert(ab[1].offset == 4 * MIB && ab[1].size_bytes == 2 * MIB && ab[1].state == SIM_SEED_USED);
    ck_assert(ab[2].offset == 6 * MIB && ab[2].size_bytes == 14 * MIB && ab[2].state == SIM_SEED_FREE &&
              ab[2].id == 0);
    /* B: 512 B live (requested 100), the rest free (the 1024 B block came later) */
    ck_assert_uint_eq(b->n_blocks, 2);
    const sim_seed_block *bb = &sd->blocks[b->first_block];
    ck_assert(bb[0].size_bytes == 512 && bb[0].requested_bytes == 100 && bb[0].state == SIM_SEED_USED);
    ck_assert(bb[1].offset == 512 && bb[1].size_bytes == 2 * MIB - 512 && bb[1].state == SIM_SEED_FREE);
    /* the three live blocks are the three allocations at the start, by id */
    ck_assert_uint_eq(input_seed_events(in), 3);
    uint64_t ids[3] = {ab[0].id, ab[1].id, bb[0].id};
    for (int i = 0; i < 3; i++) {
        bool found = false;
        for (uint64_t k = 0; k < 3; k++)
            found |= input_event_at(in, k)->op == SIM_OP_ALLOC && input_event_at(in, k)->id == ids[i];
        ck_assert_msg(found, "seed block %d (id %llu) is not an allocation at the start", i, (unsigned long long)ids[i]);
    }
    /* the lost block's free: requested at +10 µs, completed at +1000 µs */
    bool long_pending = false;
    for (uint64_t k = 3; k < input_event_count(in); k++) {
        const sim_event *e = input_event_at(in, k);
        if (e->op == SIM_OP_FREE && e->id == ab[0].id)
            long_pending = e->t == 10000 && e->ready_t == 1000000;
    }
    ck_assert(long_pending);
    const input_recorded *rec = input_get_recorded(in);
    ck_assert_uint_eq(rec->reserved_start, 22 * MIB);
    ck_assert_uint_eq(rec->peak_reserved, 52 * MIB);
    ck_assert_uint_eq(rec->ooms, 1);
    ck_assert_str_eq(input_event_at(in, rec->oom_events[0])->name,
                     "recorded oom: 214748364800 bytes requested, 1073741824 free on the device");
    /* where the real allocator put each allocation: segment (0 A, 1 B, 2 the one
     * the trace allocates) and offset */
    ck_assert_ptr_nonnull(rec->placement_segment);
    static const struct { uint32_t seg; uint64_t off; } W[] = {
        {0, 6 * MIB}, {1, 512}, {0, 9 * MIB}, {2, 0}, {0, 0},
    };
    size_t w = 0;
    for (uint64_t k = 3; k < input_event_count(in); k++) {
        if (input_event_at(in, k)->op != SIM_OP_ALLOC)
            continue;
        ck_assert_uint_lt(w, 5);
        ck_assert_msg(rec->placement_segment[k] == W[w].seg && rec->placement_offset[k] == W[w].off,
                      "alloc %zu: segment %u offset %llu", w, rec->placement_segment[k],
                      (unsigned long long)rec->placement_offset[k]);
        w++;
    }
    ck_assert_uint_eq(w, 5);
    ck_assert_uint_eq(rec->placements, 5);
    input_close(in);
}
END_TEST

START_TEST(expandable_segments_should_follow_segment_map_and_unmap)
{
    trace_input *in = import_open_ok(data("snapshot_expandable.json"), NULL, -1);
    const input_recorded *rec = input_get_recorded(in);
    /* events: alloc 15 MiB, alloc 10 MiB, free; mapped 20, 40, 40 MiB then; 20 at the end */
    ck_assert_uint_eq(input_event_count(in), 3);
    ck_assert_uint_eq(rec->reserved_start, 0);
    ck_assert_uint_eq(rec->reserved[0], 20 * MIB);
    ck_assert_uint_eq(rec->reserved[1], 40 * MIB);
    ck_assert_uint_eq(rec->reserved[2], 40 * MIB);
    ck_assert_uint_eq(rec->peak_reserved, 40 * MIB);
    ck_assert_str_eq(input_alloc_conf(in), "expandable_segments:True");
    ck_assert_ptr_null(input_seed(in)); /* from empty: nothing to start from */
    ck_assert_uint_eq(rec->placements, 0); /* inside expandable ranges: not followed */
    input_close(in);
    /* mapped before the trace: its layout cannot be rebuilt, and the replay is told */
    static const char MID[] = "{\"segments\": [{\"device\": 0, \"address\": 1073741824, \"total_size\": 20971520, "
                              "\"stream\": 0, \"is_expandable\": true, \"blocks\": [{\"address\": 1073741824, "
                              "\"size\": 20971520, \"requested_size\": 100, \"state\": \"active_allocated\"}]}], "
                              "\"device_traces\": [[{\"action\": \"alloc\", \"addr\": 2147483648, \"size\": 512, "
                              "\"stream\": 0}]]}";
    sim_error err;
    ck_assert_int_eq(import_open_mem("x.json", MID, sizeof MID - 1, NULL, -1, &in, &err), SIM_OK);
    ck_assert(import_has_warning(in, "cannot be rebuilt (expandable segments were mapped at the start"));
    ck_assert_ptr_null(input_seed(in));
    input_close(in);
}
END_TEST

START_TEST(allocator_settings_should_accept_pytorch_alloc_conf)
{
    static const char S[] = "{\"device_traces\": [[]], \"allocator_settings\": {\"PYTORCH_ALLOC_CONF\": "
                            "\"pinned_num_register_threads:8\", \"max_split_size\": -1}}";
    trace_input *in;
    sim_error err;
    ck_assert_int_eq(import_open_mem("s.json", S, sizeof S - 1, NULL, -1, &in, &err), SIM_OK);
    ck_assert_str_eq(input_alloc_conf(in), "pinned_num_register_threads:8");
    ck_assert(input_records_settings(in));
    input_close(in);
}
END_TEST

START_TEST(snapshot_json_should_pair_by_address_with_reuse_and_deferred_frees)
{
    trace_input *in = import_open_ok(data("snapshot_small.json"), NULL, -1);
    check_snapshot(in);
    input_close(in);
}
END_TEST

START_TEST(snapshot_pickles_should_import_exactly_like_the_json)
{
    trace_input *in = import_open_ok(data("snapshot_small.pickle"), NULL, -1);
    check_snapshot(in);
    input_close(in);
    in = import_open_ok(data("snapshot_small_p2.pickle"), "torch-snapshot", -1);
    check_snapshot(in);
    input_close(in);
}
END_TEST

START_TEST(snapshot_device_0_should_hold_only_its_live_segment_block)
{
    trace_input *in = import_open_ok(data("snapshot_small.json"), NULL, 0);
    static const want W[] = {{SIM_OP_ALLOC, 1, 2000000, 0, 0, 0, "0x7f0040000000"}};
    check_events(in, W, 1);
    ck_assert(import_has_warning(in, "no trace for device 0"));
    input_close(in);
}
END_TEST

/* ---------------------------------------------------------------- TensorFlow */

/* make_synthetic.py: in time order (ps → ns, rebased to the first, 1000 ns):
 * DEALLOCATION of A0 never seen allocated (→ a start allocation of 256), ALLOCATION
 * A1 1000 (dense/MatMul), A2 4000, DEALLOCATION A1, ALLOCATION A1 500, ALLOCATION
 * A1 700 without the deallocation in between (→ a free inserted), then an address-0
 * special allocation and a RESERVATION (skipped). The GPU allocator is chosen over
 * gpu_host_bfc. Before the first event the heap held 1024 + 256 bytes; 256 of them
 * are explained by the start allocation, so the offset is 1024. */
START_TEST(tf_profile_should_replay_its_sampled_activities_and_say_so)
{
    trace_input *in = import_open_ok(data("tf_profile_small.json"), NULL, -1);
    ck_assert_str_eq(input_format_name(input_get_format(in)), "tf-profile");
    static const want W[] = {
        {SIM_OP_ALLOC, 1, 256, 0, 0, 0, NULL},
        {SIM_OP_FREE, 1, 0, 0, 0, 0, NULL},
        {SIM_OP_ALLOC, 2, 1000, 1000, 1000, 0, "dense/MatMul"},
        {SIM_OP_ALLOC, 3, 4000, 2000, 2000, 0, "dense/BiasAdd"},
        {SIM_OP_FREE, 2, 0, 3000, 3000, 0, NULL},
        {SIM_OP_ALLOC, 4, 500, 4000, 4000, 0, NULL},
        {SIM_OP_FREE, 4, 0, 5000, 5000, 0, NULL},
        {SIM_OP_ALLOC, 5, 700, 5000, 5000, 0, NULL},
    };
    check_events(in, W, sizeof W / sizeof W[0]);
    ck_assert(import_has_warning(in, "sampled, not a full trace"));
    ck_assert(import_has_warning(in, "a free was inserted"));
    ck_assert_str_eq(input_header(in)->device_name, "GPU_0_bfc");
    ck_assert_uint_eq(input_header(in)->device_capacity, 16000000000u);
    const input_recorded *rec = input_get_recorded(in);
    ck_assert_uint_eq(rec->capacity, 16000000000u);
    ck_assert(rec->has_peak_allocated);
    ck_assert_uint_eq(rec->peak_allocated, 6144);
    ck_assert(rec->allocated_offset_known);
    ck_assert_uint_eq(rec->allocated_offset, 1024);
    ck_assert_uint_eq(rec->allocated[3], 6144);
    input_close(in);
}
END_TEST
