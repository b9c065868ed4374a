/* Differential tests: seeded random traces, written as a JSON document,
 * as JSON Lines and as gtrace, must give byte-identical JSON results under every
 * strategy (the container must not matter), and replaying twice must give the
 * same bytes (determinism). The traces mix every op, deferred frees, tags, marks,
 * two processes, id reuse and OOMs (a small device), with --on-oom stop and skip. */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "reports/result.h"
#include "sim/buf.h"
#include "sim/engine.h"
#include "strategies/registry.h"
#include "support/check_main.h"
#include "support/seed.h"
#include "support/slurp.h"
#include "traces/trace.h"

static void write_random(const char *path, trace_container c, uint64_t seed, uint64_t n)
{
    trace_header h = {0};
    snprintf(h.name, sizeof h.name, "random %llu", (unsigned long long)seed);
    h.meta_json = (char *)"{\"seed\":1}";
    trace_writer *w = NULL;
    sim_error err;
    ck_assert_int_eq(trace_writer_open(path, c, &h, &w, &err), SIM_OK);
    uint64_t s = seed, t = 0, next_id = 1, live[2][256], n_live[2] = {0, 0};
    static const char *const procs[2] = {NULL, "other"};
    char name[32];
    for (uint64_t i = 0; i < n; i++) {
        unsigned p = test_rand(&s) % 4 == 0;
        t += test_rand(&s) % 50;
        sim_event ev = {.t = t, .ready_t = t, .proc = procs[p]};
        unsigned r = (unsigned)(test_rand(&s) % 100);
        if (r < 2) {
            ev.op = SIM_OP_MARK;
            snprintf(name, sizeof name, "step %llu", (unsigned long long)i);
            ev.name = name;
        } else if (r < 3) {
            ev.op = SIM_OP_EMPTY_CACHE;
        } else if (n_live[p] && (r < 50 || n_live[p] == 256)) {
            uint64_t k = test_rand(&s) % n_live[p];
            ev.op = SIM_OP_FREE;
            ev.id = live[p][k];
            live[p][k] = live[p][--n_live[p]];
            if (test_rand(&s) % 5 == 0)
                ev.ready_t = t + test_rand(&s) % 200;
        } else {
            ev.op = SIM_OP_ALLOC;
            ev.id = test_rand(&s) % 3 == 0 && next_id > 1000 ? next_id - 1000 + test_rand(&s) % 3 : next_id; /* reuse */
            /* never a live id: reuse only ids that are not live now */
            for (int q = 0; q < 2; q++)
                for (uint64_t k = 0; k < n_live[q]; k++)
                    if (live[q][k] == ev.id)
                        ev.id = next_id;
            next_id++;
            ev.size = test_rand(&s) % 4 == 0 ? test_rand(&s) % 1024 : (test_rand(&s) % (64u << 20)) + 1;
            ev.stream = (uint32_t)(test_rand(&s) % 2);
            ev.tag = test_rand(&s) % 2 ? "activation" : NULL;
            live[p][n_live[p]++] = ev.id;
        }
        ck_assert_int_eq(trace_writer_event(w, &ev, &err), SIM_OK);
    }
    ck_assert_int_eq(trace_writer_close(w, true, &err), SIM_OK);
}

/* What `gpusim convert` does: read one container, write another. */
static void convert(const char *from, const char *to, trace_container c)
{
    trace_reader *r = NULL;
    trace_writer *w = NULL;
    sim_error err;
    ck_assert_int_eq(trace_open(from, &r, &err), SIM_OK);
    ck_assert_int_eq(trace_writer_open(to, c, trace_get_header(r), &w, &err), SIM_OK);
    sim_event_source src = trace_source(r);
    sim_event ev;
    sim_status st;
    while ((st = src.next(src.ctx, &ev, &err)) == SIM_OK)
        ck_assert_int_eq(trace_writer_event(w, &ev, &err), SIM_OK);
    ck_assert_int_eq(st, SIM_END);
    ck_assert_int_eq(trace_writer_close(w, true, &err), SIM_OK);
    trace_close(r);
}

/* The JSON result (or the error message) of replaying text under one name; *ok says
 * which of the two it is. */
static char *replay(const char *text, size_t len, const strategy_ops *ops, bool skip, bool *ok)
{
    trace_reader *r = NULL;
    sim_error err;
    sim_error_clear(&err);
    ck_assert_int_eq(trace_open_mem("trace", text, len, &r, &err), SIM_OK);
    sim_kv kv[] = {{"limit", "1GiB"}};
    engine_config cfg = {
        .device = {.name = "small", .capacity_bytes = 2ull << 30, .cc_major = 8},
        .ops = ops,
        .opts = kv,
        .n_opts = 1,
        .on_oom_skip = skip,
        .timeline_rows = 50,
    };
    sim_event_source src = trace_source(r);
    sim_run *run = NULL;
    sim_buf b;
    sim_buf_init(&b);
    *ok = engine_run(&cfg, &src, 1, &run, &err) == SIM_OK;
    if (*ok) {
        report_json(run, &b);
        report_timeline_csv(run, &b);
        sim_run_free(run);
    } else {
        char msg[1600];
        sim_error_format(&err, msg, sizeof msg);
        sim_buf_puts(&b, msg);
    }
    trace_close(r);
    return b.data;
}

GPUSIM_TCASE("differential", 300, NULL, NULL);

START_TEST(results_should_not_depend_on_the_container)
{
    static const char *const ext[3] = {".json", ".jsonl", ".gtrace"};
    static const trace_container cont[3] = {TRACE_JSON, TRACE_JSONL, TRACE_GTRACE};
    unsigned runs = 0, succeeded = 0;
    for (uint64_t seed = 1; seed <= 4; seed++) {
        char *text[3];
        size_t len[3];
        char jsonl[128];
        snprintf(jsonl, sizeof jsonl, "/tmp/gpusim-diff-%d-%llu.src.jsonl", (int)getpid(), (unsigned long long)seed);
        write_random(jsonl, TRACE_JSONL, seed * 7919, 3000);
        for (int c = 0; c < 3; c++) {
            char path[128];
            snprintf(path, sizeof path, "/tmp/gpusim-diff-%d-%llu%s", (int)getpid(), (unsigned long long)seed,
                     ext[c]);
            convert(jsonl, path, cont[c]);
            text[c] = test_slurp(path, &len[c]);
            unlink(path);
        }
        unlink(jsonl);
        for (size_t i = 0; i < registry_count(); i++) {
            for (int skip = 0; skip < 2; skip++) {
                bool ok, ok_again, ok_other;
                char *want = replay(text[1], len[1], registry_get(i), skip, &ok);
                char *again = replay(text[1], len[1], registry_get(i), skip, &ok_again);
                runs++;
                succeeded += ok;
                if (!ok)
                    printf("seed %llu %s skip=%d: the replay failed: %s\n", (unsigned long long)seed,
                           registry_get(i)->name, skip, want);
                ck_assert_msg(ok == ok_again && strcmp(want, again) == 0, "seed %llu %s: not deterministic",
                              (unsigned long long)seed, registry_get(i)->name);
                for (int c = 0; c < 3; c += 2) {
                    char *got = replay(text[c], len[c], registry_get(i), skip, &ok_other);
                    ck_assert_msg(ok == ok_other && strcmp(want, got) == 0,
                                  "seed %llu %s skip=%d: %s differs from JSONL:\n%.400s\n--\n%.400s",
                                  (unsigned long long)seed, registry_get(i)->name, skip, ext[c], want, got);
                    free(got);
                }
                free(want);
                free(again);
            }
        }
        for (int c = 0; c < 3; c++)
            free(text[c]);
    }
    /* Identical failures would compare equal, so the comparison only means something
     * when the replays ran: every seed × strategy × on-oom must have (an OOM is data,
     * not a failure; the traces are valid and every strategy takes limit=1GiB). */
    printf("differential: %u of %u replays succeeded\n", succeeded, runs);
    ck_assert_uint_eq(runs, 4 * 2 * registry_count());
    ck_assert_uint_eq(succeeded, runs);
}
END_TEST
