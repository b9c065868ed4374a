/* Check suite for --from=xla (traces/import_xla.h): the buffer assignments of five
 * real JAX programs compiled by XLA:CPU (tests/data/import/xla, made by its make.py),
 * replayed under --strategy=planned --planner=xla --alignment=64 against XLA's own
 * assignment read from the same dump (--against-recorded: the heap's size, every
 * buffer's offset); then bad and cut and mutated dumps.
 *
 * The expected numbers were read from the dumps independently of gpusim, with the
 * HloProto classes TensorFlow ships (tensorflow.compiler.xla.service.hlo_pb2):
 *
 *   p = hlo_pb2.HloProto(); p.ParseFromString(open(n + ".hlo.pb", "rb").read())
 *   ba = p.buffer_assignment; t = ba.heap_simulator_traces[0]
 *   asg = {x.logical_buffer_id: (a.index, x.offset, x.size) for a in ba.buffer_allocations for x in a.assigned}
 *   ids = [e.buffer_id for e in t.events if e.kind != 1]          # ALLOC and SHARE_WITH
 *   print(n, len(t.events), len(ids), sum(e.kind == 2 for e in t.events),
 *         max(asg[i][1] + asg[i][2] for i in ids), ba.buffer_allocations[asg[ids[0]][0]].size)
 *
 * which printed (events, buffers, SHARE_WITH, heap = max(offset + size), temp allocation):
 *   mlp_train          10  5 2  262144  262144
 *   transformer_block  78 39 1 8654848 8654848
 *   scan_loop          18  9 4   32836   32936   (XLA put 100 B of while-loop tuples after the heap)
 *   remat              20 10 3  655360  655360
 *   sharded            16  8 2  786432  786456   (24 B of all-reduce tuple after the heap)
 *
 * The planner reproduces every heap size and, with each SHARE_WITH imported as an
 * alloc whose "share" names the shared buffer (trace v1, design.md §2) and colocated
 * as XLA's GlobalDecreasingSizeBestFitHeap does (plan_xla.h rule 7), all 71 buffers'
 * offsets. Before shares were carried, 51 matched: the 20 others are the shared
 * buffers and those they displace, so a planner or importer that drops them fails. */
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
#include "support/seed.h"
#include "support/slurp.h"
#include "traces/input.h"

static char g_path[1024];

static const char *data(const char *name)
{
    return import_data_path(g_path, sizeof g_path, "xla", name);
}

static const struct program {
    const char *file;
    uint64_t events, buffers, shares, heap, allocation, matched;
} PROGRAMS[] = {
    {"mlp_train.hlo.pb", 10, 5, 2, 262144, 262144, 5},
    {"transformer_block.hlo.pb", 78, 39, 1, 8654848, 8654848, 39},
    {"scan_loop.hlo.pb", 18, 9, 4, 32836, 32936, 9},
    {"remat.hlo.pb", 20, 10, 3, 655360, 655360, 10},
    {"sharded.hlo.pb", 16, 8, 2, 786432, 786456, 8},
};

#define N_PROGRAMS (sizeof PROGRAMS / sizeof PROGRAMS[0])

/* The number after key in text (key includes the quotes and colon). */
static uint64_t number_after(const char *text, const char *key)
{
    const char *at = strstr(text, key);
    ck_assert_msg(at != NULL, "'%s' not in\n%s", key, text);
    return strtoull(at + strlen(key), NULL, 10);
}

/* `gpusim replay DUMP --against-recorded --format=json --strategy=planned --planner=xla
 * --alignment=64`: its JSON (the caller frees it). */
static char *against_xla(const char *file)
{
    const char *bin = getenv("GPUSIM_BINARY");
    ck_assert_ptr_nonnull(bin);
    char out[] = "/tmp/gpusim_test_import_xla_XXXXXX";
    int fd = mkstemp(out);
    ck_assert_int_ge(fd, 0);
    close(fd);
    char cmd[4096];
    snprintf(cmd, sizeof cmd,
             "'%s' replay '%s' --against-recorded --format=json --strategy=planned --planner=xla --alignment=64 "
             "--paranoid --output='%s' 2>/dev/null",
             bin, data(file), out);
    int st = system(cmd);
    ck_assert(WIFEXITED(st) && WEXITSTATUS(st) == 0);
    size_t n;
    char *text = test_slurp(out, &n);
    unlink(out);
    return text;
}

START_TEST(the_import_should_keep_the_heap_simulators_events_sizes_and_offsets)
{
    const struct program *p = &PROGRAMS[_i];
    size_t n;
    char *bytes = test_slurp(data(p->file), &n);
    trace_input *in;
    sim_error err;
    ck_assert_msg(import_open_mem("dump.hlo.pb", bytes, n, NULL, -1, &in, &err) == SIM_OK, "%s: %s", p->file, err.msg);
    ck_assert_str_eq(input_format_name(input_get_format(in)), "xla");
    ck_assert_uint_eq(input_event_count(in), p->events);
    const input_recorded *rec = input_get_recorded(in);
    ck_assert(rec->has_peak_reserved);
    ck_assert_uint_eq(rec->peak_reserved, p->heap);
    ck_assert_uint_eq(rec->placements, p->buffers);
    uint64_t allocs = 0, shares = 0;
    for (uint64_t k = 0; k < p->events; k++) {
        const sim_event *e = input_event_at(in, k);
        if (e->op == SIM_OP_ALLOC) {
            allocs++;
            if (e->has_share) { /* an earlier alloc's id, at the same offset in XLA's plan */
                shares++;
                ck_assert_ptr_nonnull(strstr(e->tag, ", shares "));
                uint64_t j = 0;
                while (j < k && !(input_event_at(in, j)->op == SIM_OP_ALLOC && input_event_at(in, j)->id == e->share))
                    j++;
                ck_assert_uint_lt(j, k);
                ck_assert_uint_eq(rec->placement_offset[j], rec->placement_offset[k]);
            }
            ck_assert_ptr_nonnull(strstr(e->tag, " (temp, buffer "));
            ck_assert_uint_eq(rec->placement_segment[k], 0);
            ck_assert_uint_le(rec->placement_offset[k] + e->size, p->heap);
        } else {
            ck_assert_int_eq(e->op, SIM_OP_FREE);
        }
        ck_assert_uint_eq(e->t, k); /* the simulator's order, one ns apart */
    }
    ck_assert_uint_eq(allocs, p->buffers);
    ck_assert_uint_eq(shares, p->shares);
    ck_assert(import_has_warning(in, "--alignment=64"));
    ck_assert_int_eq(import_has_warning(in, "of which the simulated heap is"), p->allocation != p->heap);
    input_close(in);
    free(bytes);
}
END_TEST
GPUSIM_LOOP(the_import_should_keep_the_heap_simulators_events_sizes_and_offsets, 0, 5);

START_TEST(the_xla_planner_should_reproduce_xlas_heap_size_and_offsets)
{
    const struct program *p = &PROGRAMS[_i];
    char *text = against_xla(p->file);
    ck_assert_uint_eq(number_after(text, "\"recorded_peak_bytes\": "), p->heap);
    ck_assert_uint_eq(number_after(text, "\"predicted_peak_bytes\": "), p->heap);
    ck_assert_uint_eq(number_after(text, "\"placement\": {\"compared\": "), p->buffers);
    ck_assert_uint_eq(number_after(text, "\"matched\": "), p->matched);
    free(text);
}
END_TEST
GPUSIM_LOOP(the_xla_planner_should_reproduce_xlas_heap_size_and_offsets, 0, 5);

GPUSIM_TCASE("bad input", 120, NULL, NULL);

START_TEST(every_prefix_of_a_dump_should_fail_cleanly)
{
    size_t n;
    char *bytes = test_slurp(data("mlp_train.hlo.pb"), &n);
    for (size_t len = 0; len < n; len++) {
        char *cut = malloc(len ? len : 1);
        memcpy(cut, bytes, len);
        trace_input *in;
        sim_error err;
        sim_status st = import_open_mem("dump.hlo.pb", cut, len, len % 2 ? "xla" : NULL, -1, &in, &err);
        EXPECT_MSG(st == SIM_ETRACE && in == NULL, "prefix %zu: status %d (%s)", len, st, err.msg);
        free(cut);
    }
    free(bytes);
}
END_TEST

START_TEST(a_dump_that_is_not_what_it_claims_should_say_why)
{
    static const struct {
        const char *bytes;
        size_t len;
        const char *from, *msg;
    } T[] = {
        /* a module (name, entry computation) and no buffer assignment */
        {"\x0a\x08\x0a\x03jit\x12\x01m", 10, NULL, "no buffer_assignment in this HloProto"},
        /* a buffer assignment with one logical buffer and no heap simulator trace */
        {"\x1a\x06\x0a\x04\x08\x01\x10\x04", 8, NULL, "holds no heap simulator trace"},
        /* ... and a trace whose ALLOC names a buffer that does not exist */
        {"\x1a\x0e\x0a\x04\x08\x01\x10\x04\x22\x06\x0a\x04\x08\x00\x10\x07", 16, NULL,
         "buffer 7 is not a logical buffer"},
        /* ... or that frees a buffer never allocated */
        {"\x1a\x0e\x0a\x04\x08\x01\x10\x04\x22\x06\x0a\x04\x08\x01\x10\x01", 16, NULL,
         "FREE of buffer 1, which is not live"},
        /* a size field of the wrong wire type */
        {"\x1a\x07\x0a\x05\x08\x01\x12\x01x", 9, NULL, "wire type 2, not 0"},
        /* a group (wire type 3), which no message here has */
        {"\x1a\x03\x0a\x01\x0b", 5, "xla", "truncated or malformed protobuf"},
        /* JSON named as an XLA dump */
        {"{\"a\": 1}", 8, "xla", "--from=xla reads the binary HloProto"},
    };
    for (size_t i = 0; i < sizeof T / sizeof T[0]; i++) {
        trace_input *in;
        sim_error err;
        sim_status st = import_open_mem("dump.hlo.pb", T[i].bytes, T[i].len, T[i].from, -1, &in, &err);
        ck_assert_msg(st == SIM_ETRACE, "case %zu: status %d (%s)", i, st, err.msg);
        ck_assert_msg(strstr(err.msg, T[i].msg) != NULL, "case %zu: '%s' not in '%s'", i, T[i].msg, err.msg);
        ck_assert_ptr_null(in);
    }
}
END_TEST

START_TEST(device_should_pick_a_heap_trace_or_say_which_exist)
{
    size_t n;
    char *bytes = test_slurp(data("remat.hlo.pb"), &n);
    trace_input *in;
    sim_error err;
    ck_assert_int_eq(import_open_mem("dump.hlo.pb", bytes, n, NULL, 0, &in, &err), SIM_OK);
    ck_assert_uint_eq(input_event_count(in), 20);
    input_close(in);
    ck_assert_int_eq(import_open_mem("dump.hlo.pb", bytes, n, NULL, 1, &in, &err), SIM_EUSAGE);
    ck_assert_msg(strstr(err.msg, "(the dump has: 0 (20 events))") != NULL, "%s", err.msg);
    free(bytes);
}
END_TEST

/* Deterministic byte mutations of every dump: any status is fine, a crash (or a
 * sanitizer report in the sanitizer build) is not. */
START_TEST(mutated_dumps_should_never_crash)
{
    uint64_t x = 88172645463325252u; /* a fixed seed: the same mutations every run */
    for (size_t f = 0; f < N_PROGRAMS; f++) {
        size_t n;
        char *orig = test_slurp(data(PROGRAMS[f].file), &n);
        char *buf = malloc(n);
        for (int round = 0; round < 300; round++) {
            memcpy(buf, orig, n);
            for (int k = 0; k < 1 + round % 4; k++) {
                uint64_t r = test_rand(&x);
                buf[(size_t)(r % n)] = (char)(r >> 24);
            }
            trace_input *in;
            sim_error err;
            if (import_open_mem("dump.hlo.pb", buf, n, round % 2 ? "xla" : NULL, -1, &in, &err) == SIM_OK) {
                sim_run *run = NULL;
                engine_config cfg = {.device = {.name = "test", .capacity_bytes = 1024 * GiB},
                                     .ops = ideal_strategy()};
                sim_event_source src = input_source(in);
                if (engine_run(&cfg, &src, 1, &run, &err) == SIM_OK)
                    sim_run_free(run);
            } else {
                EXPECT(in == NULL);
            }
            input_close(in);
        }
        free(buf);
        free(orig);
    }
}
END_TEST
