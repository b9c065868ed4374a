/* Check suite for PyTorch snapshots with private memory pools (CUDA graphs, MemPool;
 * traces/import_snapshot_pools.h, traces/pool_id.h): the id of a segment_pool_id
 * tuple, the pool segments kept in the start state, the pool_begin / pool_end scopes
 * around each run of allocations into a pool, a segment given back in the trace put
 * back with its pool, the replay under torch against the recording, and bad tuples.
 *
 * tests/data/import/snapshot_pools.json (2.6's layout: the pool of an allocation is
 * its segment's) and snapshot_pools_28.json (the same recording in 2.8's layout: each
 * entry names its pool_id) come from make_synthetic.py, whose comments work out the
 * recording: P (20 MiB, default pool, a live 8 MiB block X), H (2 MiB, small,
 * stream S, the CUDA graph pool (1, 0), a live 512 B block Y), G (20 MiB, the pool
 * (0, 1) graph_pool_handle made, allocated by the trace); the allocations a (4 MiB)
 * and b (2 MiB) in G, b freed, e (1000 B) in H on stream S, c (6 MiB) in P, d (2 MiB)
 * in G. */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "answers/against.h"
#include "sim/engine.h"
#include "strategies/registry.h"
#include "support/check_main.h"
#include "support/import_data.h"
#include "support/seed.h"
#include "support/slurp.h"
#include "traces/input.h"
#include "traces/pool_id.h"

#define MIB ((uint64_t)1 << 20)
#define GIB ((uint64_t)1 << 30)
#define POOL_P 0x7F7000000000ull
#define POOL_G 0x7F7001400000ull
#define POOL_H 0x7F7002800000ull
#define GRAPH_POOL (((uint64_t)1 << 52) + 1) /* (1, 0) */

static char g_path[1024];

static const char *data(const char *name)
{
    return import_data_path(g_path, sizeof g_path, "", name);
}

GPUSIM_TCASE("pool ids", 30, NULL, NULL);

START_TEST(a_pool_tuple_should_map_to_one_id_and_back)
{
    /* (0, n): graph_pool_handle() and MemPool(), pool n; (n, 0): a CUDA graph's own
     * pool, 2^52 + n; (0, 0) the default pool */
    static const struct {
        uint64_t a, b, id;
    } T[] = {
        {0, 0, 0},
        {0, 1, 1},
        {0, 7, 7},
        {1, 0, GRAPH_POOL},
        {5, 0, ((uint64_t)1 << 52) + 5},
        {0, ((uint64_t)1 << 52) - 1, ((uint64_t)1 << 52) - 1},
    };
    for (size_t i = 0; i < sizeof T / sizeof T[0]; i++) {
        uint64_t id = 99, a = 99, b = 99;
        ck_assert_msg(pool_id_from_tuple(T[i].a, T[i].b, &id), "case %zu", i);
        ck_assert_uint_eq(id, T[i].id);
        pool_id_to_tuple(id, &a, &b);
        ck_assert_msg(a == T[i].a && b == T[i].b, "case %zu: back to (%llu, %llu)", i, (unsigned long long)a,
                      (unsigned long long)b);
    }
    /* what PyTorch never makes has no id: both halves set, or a half from 2^52 */
    uint64_t id = 0;
    ck_assert(!pool_id_from_tuple(1, 2, &id));
    ck_assert(!pool_id_from_tuple((uint64_t)1 << 52, 0, &id));
    ck_assert(!pool_id_from_tuple(0, (uint64_t)1 << 52, &id));
    /* a pool born in a native trace is written as graph_pool_handle would make it */
    uint64_t a = 9, b = 9;
    pool_id_to_tuple(3, &a, &b);
    ck_assert(a == 0 && b == 3);
}
END_TEST

GPUSIM_TCASE("import", 60, NULL, NULL);

START_TEST(private_pool_segments_should_stay_in_the_start_state_with_their_pool)
{
    trace_input *in = import_open_ok(data("snapshot_pools.json"), NULL, -1);
    const sim_seed *sd = input_seed(in);
    ck_assert_ptr_nonnull(sd);
    /* G came with the trace's segment_alloc: at the start P (default) and H (pool (1, 0)) */
    ck_assert_uint_eq(sd->n_segs, 2);
    const sim_seed_segment *p = &sd->segs[0], *h = &sd->segs[1];
    ck_assert(p->addr == POOL_P && p->size_bytes == 20 * MIB && p->pool_id == 0 && !p->small_pool);
    ck_assert(h->addr == POOL_H && h->size_bytes == 2 * MIB && h->pool_id == GRAPH_POOL && h->small_pool &&
              h->stream == 1);
    /* H: Y (512 B, live to the end), the rest free (e came later) */
    ck_assert_uint_eq(h->n_blocks, 2);
    const sim_seed_block *hb = &sd->blocks[h->first_block];
    ck_assert(hb[0].size_bytes == 512 && hb[0].state == SIM_SEED_USED);
    ck_assert(hb[1].offset == 512 && hb[1].size_bytes == 2 * MIB - 512 && hb[1].state == SIM_SEED_FREE);
    ck_assert(import_has_warning(in, "4 allocations went to 2 private memory pools (CUDA graphs, MemPool; 4 by the pool of "
                              "the segment they lie in, their entries naming none): 3 pool_begin/pool_end scopes"));
    input_close(in);
}
END_TEST

/* The events after the two start allocations (X, Y), with the scopes around the
 * three runs: [a b] in pool 1 on stream 0, [e] in the graph's pool on stream S (1),
 * c in the default pool, [d] in pool 1. */
static void expect_scoped_events(trace_input *in)
{
    static const struct {
        sim_op op;
        uint64_t pool, size;
        uint32_t stream, flags;
    } W[] = {
        {SIM_OP_POOL_BEGIN, 1, 0, 0, SIM_POOL_CAPTURE},
        {SIM_OP_ALLOC, 0, 4 * MIB, 0, 0},
        {SIM_OP_ALLOC, 0, 2 * MIB, 0, 0},
        {SIM_OP_POOL_END, 1, 0, 0, 0},
        {SIM_OP_FREE, 0, 0, 0, 0},
        {SIM_OP_POOL_BEGIN, GRAPH_POOL, 0, 1, SIM_POOL_CAPTURE},
        {SIM_OP_ALLOC, 0, 1000, 1, 0},
        {SIM_OP_POOL_END, GRAPH_POOL, 0, 0, 0},
        {SIM_OP_ALLOC, 0, 6 * MIB, 0, 0},
        {SIM_OP_POOL_BEGIN, 1, 0, 0, SIM_POOL_CAPTURE},
        {SIM_OP_ALLOC, 0, 2 * MIB, 0, 0},
        {SIM_OP_POOL_END, 1, 0, 0, 0},
    };
    const size_t n = sizeof W / sizeof W[0];
    ck_assert_uint_eq(input_seed_events(in), 2);
    ck_assert_uint_eq(input_event_count(in), 2 + n);
    for (size_t i = 0; i < n; i++) {
        const sim_event *e = input_event_at(in, 2 + i);
        ck_assert_msg(e->op == W[i].op, "event %zu: op %s, expected %s", 2 + i, sim_op_name(e->op),
                      sim_op_name(W[i].op));
        if (W[i].op == SIM_OP_ALLOC)
            ck_assert_msg(e->size == W[i].size && e->stream == W[i].stream, "event %zu: %llu B on stream %u", 2 + i,
                          (unsigned long long)e->size, e->stream);
        if (W[i].op == SIM_OP_POOL_BEGIN)
            ck_assert_msg(e->pool == W[i].pool && e->stream == W[i].stream && e->pool_flags == W[i].flags,
                          "event %zu: pool %llu stream %u flags %u", 2 + i, (unsigned long long)e->pool, e->stream,
                          e->pool_flags);
        if (W[i].op == SIM_OP_POOL_END)
            ck_assert_uint_eq(e->pool, W[i].pool);
    }
    /* a scope takes its alloc's time: begin at a's, end at b's */
    ck_assert_uint_eq(input_event_at(in, 2)->t, input_event_at(in, 3)->t);
    ck_assert_uint_eq(input_event_at(in, 5)->t, input_event_at(in, 4)->t);
    /* the recorded reserved: 22 MiB before a's segment came (at the first scope's
     * begin), 42 MiB after */
    const input_recorded *rec = input_get_recorded(in);
    ck_assert_uint_eq(rec->reserved[2], 22 * MIB);
    ck_assert_uint_eq(rec->reserved[3], 42 * MIB);
    ck_assert_uint_eq(rec->reserved[5], 42 * MIB);
    /* each alloc's recorded pool beside its segment and offset */
    ck_assert_ptr_nonnull(rec->placement_pool);
    ck_assert_uint_eq(rec->placement_pool[3], 1);
    ck_assert_uint_eq(rec->placement_pool[8], GRAPH_POOL);
    ck_assert_uint_eq(rec->placement_pool[10], 0);
    ck_assert_uint_eq(rec->placement_pool[12], 1);
}

START_TEST(each_run_of_allocations_into_a_pool_should_be_one_scope)
{
    trace_input *in = import_open_ok(data("snapshot_pools.json"), NULL, -1);
    expect_scoped_events(in);
    input_close(in);
}
END_TEST

START_TEST(entries_that_name_their_pool_should_give_the_same_events_without_inferring)
{
    trace_input *in = import_open_ok(data("snapshot_pools_28.json"), NULL, -1);
    expect_scoped_events(in);
    ck_assert(import_has_warning(in, "4 allocations went to 2 private memory pools (CUDA graphs, MemPool; as their entries' "
                              "pool_id say)"));
    input_close(in);
}
END_TEST

/* A segment of pool (0, 2) given back during the trace (its segment_free names the
 * pool, 2.8's layout) existed at the start: the rebuild puts it back in that pool, and
 * the allocation made in it before, whose entry names no pool, goes to pool 2 by its
 * segment. Without the entry's pool the segment would come back in the default pool. */
static const char GIVEN_BACK[] =
    "{\"segments\": [], \"device_traces\": [["
    "{\"action\": \"alloc\", \"addr\": 4194304, \"size\": 1048576, \"stream\": 0, \"time_us\": 1},"
    "{\"action\": \"free_requested\", \"addr\": 4194304, \"size\": 1048576, \"stream\": 0, \"time_us\": 2},"
    "{\"action\": \"free_completed\", \"addr\": 4194304, \"size\": 1048576, \"stream\": 0, \"time_us\": 2},"
    "{\"action\": \"segment_free\", \"addr\": 4194304, \"size\": 20971520, \"stream\": 0, \"time_us\": 3%s}]]}";

START_TEST(a_pool_segment_given_back_in_the_trace_should_come_back_in_its_pool)
{
    char text[1024];
    for (int named = 0; named < 2; named++) {
        snprintf(text, sizeof text, GIVEN_BACK, named ? ", \"pool_id\": [0, 2]" : "");
        trace_input *in = NULL;
        sim_error err;
        ck_assert_int_eq(import_open_mem("back.json", text, strlen(text), NULL, -1, &in, &err), SIM_OK);
        const sim_seed *sd = input_seed(in);
        ck_assert_ptr_nonnull(sd);
        ck_assert_uint_eq(sd->n_segs, 1);
        ck_assert_uint_eq(sd->segs[0].pool_id, named ? 2 : 0);
        /* begin, alloc, end, free when the pool is known; alloc, free otherwise */
        ck_assert_uint_eq(input_event_count(in), named ? 4 : 2);
        if (named) {
            ck_assert(input_event_at(in, 0)->op == SIM_OP_POOL_BEGIN && input_event_at(in, 0)->pool == 2);
            ck_assert(input_event_at(in, 2)->op == SIM_OP_POOL_END);
        }
        input_close(in);
    }
}
END_TEST

/* Entries naming their pools (2.8): a run into pool 1 over streams 0 and 5 is one
 * scope of every stream (use_mem_pool's); pool 2 between two allocations of pool 1
 * splits them into two runs; a default-pool allocation ends a run. */
static const char INTERLEAVED[] =
    "{\"segments\": [], \"device_traces\": [["
    "{\"action\": \"alloc\", \"addr\": 4096, \"size\": 512, \"stream\": 0, \"pool_id\": [0, 1]},"
    "{\"action\": \"alloc\", \"addr\": 8192, \"size\": 512, \"stream\": 5, \"pool_id\": [0, 1]},"
    "{\"action\": \"alloc\", \"addr\": 12288, \"size\": 512, \"stream\": 5, \"pool_id\": [0, 2]},"
    "{\"action\": \"alloc\", \"addr\": 16384, \"size\": 512, \"stream\": 5, \"pool_id\": [0, 1]},"
    "{\"action\": \"alloc\", \"addr\": 20480, \"size\": 512, \"stream\": 5, \"pool_id\": [0, 0]},"
    "{\"action\": \"alloc\", \"addr\": 24576, \"size\": 512, \"stream\": 5, \"pool_id\": [0, 1]}]]}";

START_TEST(runs_should_split_at_another_pool_and_span_streams_as_one_scope_of_every_stream)
{
    trace_input *in = NULL;
    sim_error err;
    ck_assert_int_eq(import_open_mem("runs.json", INTERLEAVED, strlen(INTERLEAVED), NULL, -1, &in, &err), SIM_OK);
    /* begin(1, every stream) a a end, begin(2, stream 1) a end, begin(1, 1) a end, a, begin(1, 1) a end */
    static const struct {
        sim_op op;
        uint64_t pool;
        uint32_t flags, stream;
    } W[] = {
        {SIM_OP_POOL_BEGIN, 1, SIM_POOL_ALL_STREAMS, 0},
        {SIM_OP_ALLOC, 0, 0, 0},
        {SIM_OP_ALLOC, 0, 0, 1},
        {SIM_OP_POOL_END, 1, 0, 0},
        {SIM_OP_POOL_BEGIN, 2, SIM_POOL_CAPTURE, 1},
        {SIM_OP_ALLOC, 0, 0, 1},
        {SIM_OP_POOL_END, 2, 0, 0},
        {SIM_OP_POOL_BEGIN, 1, SIM_POOL_CAPTURE, 1},
        {SIM_OP_ALLOC, 0, 0, 1},
        {SIM_OP_POOL_END, 1, 0, 0},
        {SIM_OP_ALLOC, 0, 0, 1},
        {SIM_OP_POOL_BEGIN, 1, SIM_POOL_CAPTURE, 1},
        {SIM_OP_ALLOC, 0, 0, 1},
        {SIM_OP_POOL_END, 1, 0, 0},
    };
    ck_assert_uint_eq(input_event_count(in), sizeof W / sizeof W[0]);
    for (size_t i = 0; i < sizeof W / sizeof W[0]; i++) {
        const sim_event *e = input_event_at(in, i);
        ck_assert_msg(e->op == W[i].op && e->stream == W[i].stream, "event %zu: %s on stream %u", i, sim_op_name(e->op),
                      e->stream);
        if (e->op == SIM_OP_POOL_BEGIN || e->op == SIM_OP_POOL_END)
            ck_assert_msg(e->pool == W[i].pool && e->pool_flags == W[i].flags, "event %zu: pool %llu flags %u", i,
                          (unsigned long long)e->pool, e->pool_flags);
    }
    input_close(in);
}
END_TEST

START_TEST(a_pool_tuple_pytorch_never_makes_should_fail_naming_the_record)
{
    static const struct {
        const char *text, *needle;
    } T[] = {
        {"{\"segments\": [{\"address\": 0, \"total_size\": 2097152, \"blocks\": [], \"segment_pool_id\": [1, 2]}]}",
         "segments[0]: \"segment_pool_id\" (1, 2) names no pool PyTorch makes"},
        {"{\"segments\": [{\"address\": 0, \"total_size\": 2097152, \"blocks\": [], \"segment_pool_id\": \"x\"}]}",
         "segments[0]: \"segment_pool_id\" must be a pair of integers"},
        {"{\"segments\": [{\"address\": 0, \"total_size\": 2097152, \"blocks\": [], \"segment_pool_id\": [0]}]}",
         "must be a pair of integers"},
        {"{\"device_traces\": [[{\"action\": \"alloc\", \"addr\": 0, \"size\": 512, \"pool_id\": [0, -1]}]]}",
         "device_traces[0][0]: \"pool_id\" must be a pair of integers"},
        {"{\"device_traces\": [[{\"action\": \"alloc\", \"addr\": 0, \"size\": 512, "
         "\"pool_id\": [4503599627370496, 0]}]]}",
         "\"pool_id\" (4503599627370496, 0) names no pool"},
    };
    for (size_t i = 0; i < sizeof T / sizeof T[0]; i++) {
        trace_input *in = NULL;
        sim_error err;
        sim_status st = import_open_mem("pools.json", T[i].text, strlen(T[i].text), NULL, -1, &in, &err);
        ck_assert_msg(st == SIM_ETRACE, "case %zu: status %d (%s)", i, st, err.msg);
        ck_assert_ptr_null(in);
        ck_assert_str_eq(err.file, "pools.json");
        ck_assert_msg(strstr(err.msg, T[i].needle) != NULL, "case %zu: '%s' not in '%s'", i, T[i].needle, err.msg);
    }
}
END_TEST

GPUSIM_TCASE("replay", 120, NULL, NULL);

/* Replay file under torch (the invariant checker after every event) against its recording. */
static void compare(const char *file, against_result *r)
{
    trace_input *in = import_open_ok(data(file), NULL, -1);
    engine_config cfg = {
        .device = {.name = "test", .capacity_bytes = 80 * GIB}, .ops = registry_find("torch"), .paranoid = true};
    ck_assert_ptr_nonnull(cfg.ops);
    against_options ao = {0};
    sim_error err;
    sim_error_clear(&err);
    sim_status st = against_compare(in, &cfg, &ao, r, &err);
    ck_assert_msg(st == SIM_OK, "%s: %s", file, err.msg);
    input_close(in);
}

/* Under torch, from the start state with its pools: every allocation where the
 * recording put it and in its pool (a in G, not in P's free 12 MiB), reserved 42 MiB
 * as recorded at every event, the end state block by block. */
START_TEST(a_snapshot_with_pools_should_replay_with_zero_difference_under_torch)
{
    static const char *const FILES[] = {"snapshot_pools.json", "snapshot_pools_28.json"};
    for (size_t f = 0; f < 2; f++) {
        against_result r;
        compare(FILES[f], &r);
        ck_assert(r.placement.on);
        ck_assert_uint_eq(r.placement.compared, 5);
        ck_assert(r.placement.has_pools);
        ck_assert_uint_eq(r.placement.pooled, 4); /* a, b, e, d */
        ck_assert_msg(r.placement.matched == 5, "%s: first mismatch at event %llu (pool %llu, predicted %llu)",
                      FILES[f], (unsigned long long)r.placement.first.event,
                      (unsigned long long)r.placement.first.rec_pool, (unsigned long long)r.placement.first.pred_pool);
        ck_assert_uint_eq(r.reserved.max_abs, 0);
        ck_assert_uint_eq(r.reserved.final_pred, 42 * MIB);
        ck_assert(r.end_state.on && !r.end_state.has_difference);
        ck_assert_uint_eq(r.end_state.matched, 9);
        ck_assert(r.has_allocated_end && r.allocated_end_pred == r.allocated_end_rec);
    }
}
END_TEST

/* An entry that names pool 1 for an address in the default segment P: the replay
 * routes it to pool 1, whose first segment is new, so the placement differs and
 * the mismatch names both pools. */
static const char MISROUTED[] =
    "{\"segments\": [{\"address\": 140737488355328, \"total_size\": 20971520, \"stream\": 0, "
    "\"segment_type\": \"large\", \"segment_pool_id\": [0, 0], \"blocks\": ["
    "{\"address\": 140737488355328, \"size\": 4194304, \"requested_size\": 4194304, \"state\": \"active_allocated\"},"
    "{\"address\": 140737492549632, \"size\": 16777216, \"requested_size\": 0, \"state\": \"inactive\"}]}],"
    "\"device_traces\": [[{\"action\": \"alloc\", \"addr\": 140737488355328, \"size\": 4194304, \"stream\": 0, "
    "\"time_us\": 1, \"pool_id\": [0, 1]}]]}";

START_TEST(an_allocation_in_another_pool_than_recorded_should_be_a_placement_mismatch)
{
    char path[512];
    snprintf(path, sizeof path, "%s/misrouted.json", getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp");
    FILE *fp = fopen(path, "w");
    ck_assert_ptr_nonnull(fp);
    fputs(MISROUTED, fp);
    fclose(fp);
    trace_input *in = import_open_ok(path, NULL, -1);
    engine_config cfg = {.device = {.name = "test", .capacity_bytes = 80 * GIB}, .ops = registry_find("torch")};
    against_options ao = {0};
    against_result r;
    sim_error err;
    ck_assert_int_eq(against_compare(in, &cfg, &ao, &r, &err), SIM_OK);
    ck_assert(r.placement.on && r.placement.compared == 1 && r.placement.matched == 0);
    ck_assert_uint_eq(r.placement.first.rec_pool, 1);
    ck_assert_uint_eq(r.placement.first.pred_pool, 1);
    ck_assert_uint_eq(r.placement.first.rec_seg, 0);
    ck_assert_uint_eq(r.placement.first.pred_seg, 1);
    input_close(in);
    remove(path);
}
END_TEST

/* Snapshots PyTorch 2.6's own allocator wrote (validate/upstream/torch/snapshot_tool.cpp,
 * tests/data/import/make_pools_upstream.py): three decode graphs captured into one
 * shared pool (0, 1), a graph in its own pool (1, 0), a fourth capture after serving
 * steps. The full recording starts from an empty allocator; the other keeps the last
 * 60 entries, so two pool segments (22 MiB) exist at its first entry. Both replay
 * under torch with 0 B difference in reserved bytes at every event, every allocation
 * where and in the pool PyTorch put it, and the end state block by block. */
START_TEST(snapshots_pytorch_wrote_with_pools_should_replay_with_zero_difference)
{
    static const struct {
        const char *file;
        uint64_t compared, pooled, start_segments;
    } T[] = {
        {"snapshot_pools_upstream_full.json", 37, 16, 0},
        {"snapshot_pools_upstream.json", 21, 9, 5},
    };
    for (size_t i = 0; i < 2; i++) {
        trace_input *in = import_open_ok(data(T[i].file), NULL, -1);
        const sim_seed *sd = input_seed(in);
        uint32_t pool_segs = 0;
        for (uint32_t k = 0; sd != NULL && k < sd->n_segs; k++)
            pool_segs += sd->segs[k].pool_id != 0;
        ck_assert_uint_eq(sd ? sd->n_segs : 0, T[i].start_segments);
        ck_assert_uint_eq(pool_segs, T[i].start_segments ? 2 : 0);
        input_close(in);
        against_result r;
        compare(T[i].file, &r);
        ck_assert_msg(r.placement.on && r.placement.compared == T[i].compared && r.placement.matched == T[i].compared &&
                          r.placement.pooled == T[i].pooled,
                      "%s: %llu/%llu placed, %llu in pools", T[i].file, (unsigned long long)r.placement.matched,
                      (unsigned long long)r.placement.compared, (unsigned long long)r.placement.pooled);
        ck_assert_uint_eq(r.reserved.max_abs, 0);
        ck_assert_uint_eq(r.reserved.final_pred, 106 * MIB);
        ck_assert(r.end_state.on && !r.end_state.has_difference && r.end_state.matched == 17);
        ck_assert_uint_eq(r.start_pool_segments, T[i].start_segments ? 2 : 0);
        ck_assert_uint_eq(r.start_pool_reserved, T[i].start_segments ? 22 * MIB : 0);
    }
}
END_TEST

/* Snapshots with pools whose digits are changed at random (addresses, sizes, pool
 * ids, streams: the JSON stays JSON) import and replay under torch, from their
 * start state, with the invariant checker, or fail with a message: never a crash
 * (run under the sanitizers too). A fixed seed: the same mutations every run. */
START_TEST(snapshots_with_pools_changed_digit_by_digit_should_never_crash)
{
    static const char *const FILES[] = {"snapshot_pools.json", "snapshot_pools_28.json",
                                        "snapshot_pools_upstream.json"};
    uint64_t x = 0x9E3779B97F4A7C15u;
    uint32_t imported = 0, replayed = 0;
    for (size_t f = 0; f < sizeof FILES / sizeof FILES[0]; f++) {
        size_t n;
        char *orig = test_slurp(data(FILES[f]), &n);
        char *buf = malloc(n);
        ck_assert_ptr_nonnull(buf);
        for (int round = 0; round < 200; round++) {
            memcpy(buf, orig, n);
            for (int k = 0; k < 1 + round % 3; k++) {
                size_t at = (size_t)(test_rand(&x) % n);
                while (at < n && (buf[at] < '0' || buf[at] > '9'))
                    at++;
                if (at < n)
                    buf[at] = (char)('0' + test_rand(&x) % 10);
            }
            trace_input *in = NULL;
            sim_error err;
            if (import_open_mem("mutated.json", buf, n, NULL, -1, &in, &err) != SIM_OK) {
                ck_assert_ptr_null(in);
                continue;
            }
            imported++;
            engine_config cfg = {.device = {.name = "test", .capacity_bytes = 80 * GIB},
                                 .ops = registry_find("torch"),
                                 .paranoid = true};
            sim_event_source src = input_source_seeded(in);
            sim_run *run = NULL;
            if (engine_run(&cfg, &src, 1, &run, &err) == SIM_OK) {
                replayed++;
                sim_run_free(run);
            }
            input_close(in);
        }
        free(buf);
        free(orig);
    }
    /* most mutations keep a snapshot that imports, and many of them replay */
    ck_assert_uint_gt(imported, 300);
    ck_assert_uint_gt(replayed, 100);
}
END_TEST
