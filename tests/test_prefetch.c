/* Check suite for traces/prefetch: a source read ahead on a second thread gives
 * what the source gives, in order (events, their strings, then the end or the
 * error with its message), across batch boundaries and batches cut short by long
 * strings; it stops cleanly when closed before the end; and input.h uses it for a
 * native trace in a regular file with the same events as without. */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "support/check_main.h"
#include "support/event_check.h"
#include "support/seed.h"
#include "traces/input.h"
#include "traces/prefetch.h"

/* A made-up source: event i (1-based) has id i, size 3*i, and a tag that lives in
 * one reused buffer (valid only until the next pull, as the readers' strings are)
 * with a length drawn from the seed, now and then longer than a batch's text; it
 * ends (SIM_END) or fails (SIM_ETRACE at line fail_at) after n events. */
typedef struct gen_source {
    uint64_t n, i, fail_at, rng;
    char tag[200000];
} gen_source;

static size_t tag_len(uint64_t i, uint64_t *rng)
{
    uint64_t r = test_rand(rng);
    if (i % 5000 == 17)
        return 70000 + (size_t)(r % 100000); /* longer than a batch's 64 KiB of text */
    return (size_t)(r % 40);
}

static sim_status gen_next(void *ctx, sim_event *ev, sim_error *err)
{
    gen_source *g = ctx;
    if (g->fail_at && g->i + 1 == g->fail_at)
        return sim_error_set(err, SIM_ETRACE, "gen.jsonl", g->fail_at, 0, "free of id %llu that is not allocated",
                             (unsigned long long)g->fail_at);
    if (g->i == g->n)
        return SIM_END;
    g->i++;
    memset(ev, 0, sizeof *ev);
    ev->op = (g->i % 3 == 0) ? SIM_OP_MARK : SIM_OP_ALLOC;
    ev->id = g->i;
    ev->size = 3 * g->i;
    ev->t = ev->ready_t = 10 * g->i;
    ev->line = g->i + 1;
    ev->index = g->i;
    size_t n = tag_len(g->i, &g->rng);
    memset(g->tag, 'a' + (int)(g->i % 26), n);
    g->tag[n] = '\0';
    if (ev->op == SIM_OP_MARK)
        ev->name = g->tag;
    else
        ev->tag = g->tag;
    ev->proc = (g->i % 7 == 0) ? "p7" : NULL;
    return SIM_OK;
}

/* Pull everything through a prefetch and compare with a second, direct copy of the
 * same source: every field, every string, then the same final status and message. */
static void check_same(uint64_t n, uint64_t fail_at, uint64_t seed)
{
    gen_source *a = calloc(1, sizeof *a), *b = calloc(1, sizeof *b);
    ck_assert_ptr_nonnull(a);
    ck_assert_ptr_nonnull(b);
    a->n = b->n = n;
    a->fail_at = b->fail_at = fail_at;
    a->rng = b->rng = seed;
    sim_event_source inner = {gen_next, a, "gen.jsonl", NULL, NULL};
    prefetch *p;
    sim_error err, err_direct;
    ck_assert_int_eq(prefetch_new(inner, &p, &err), SIM_OK);
    sim_event_source s = prefetch_source(p);
    ck_assert_str_eq(s.path, "gen.jsonl");
    sim_event ev, want;
    sim_status st, st_direct;
    uint64_t got = 0;
    for (;;) {
        st = s.next(s.ctx, &ev, &err);
        st_direct = gen_next(b, &want, &err_direct);
        ck_assert_int_eq(st, st_direct);
        if (st != SIM_OK)
            break;
        got++;
        event_check_same(&ev, &want);
    }
    ck_assert_uint_eq(got, fail_at ? fail_at - 1 : n);
    if (st != SIM_END) {
        ck_assert_str_eq(err.msg, err_direct.msg);
        ck_assert_uint_eq(err.line, err_direct.line);
    }
    /* asked again after the end, the same answer */
    sim_error again;
    ck_assert_int_eq(s.next(s.ctx, &ev, &again), st);
    if (st != SIM_END)
        ck_assert_str_eq(again.msg, err.msg);
    prefetch_free(p);
    free(a);
    free(b);
}

START_TEST(a_prefetched_source_should_give_every_event_and_string_in_order)
{
    uint64_t seed = test_seed("a_prefetched_source_should_give_every_event_and_string_in_order");
    /* less than a batch, exactly some batches (the end falls on a boundary), and more */
    check_same(10, 0, seed);
    check_same(2 * PREFETCH_BATCH, 0, seed);
    check_same(7 * PREFETCH_BATCH + 123, 0, seed);
    check_same(0, 0, seed);
}
END_TEST

START_TEST(an_error_should_come_after_the_events_before_it_with_its_message)
{
    uint64_t seed = test_seed("an_error_should_come_after_the_events_before_it_with_its_message");
    check_same(100000, 1, seed);                       /* at the first event */
    check_same(100000, PREFETCH_BATCH + 1, seed);      /* first of a batch */
    check_same(100000, 5 * PREFETCH_BATCH - 7, seed);  /* in the middle of one, ring full */
}
END_TEST

START_TEST(closing_before_the_end_should_stop_the_reading_thread)
{
    gen_source *g = calloc(1, sizeof *g);
    ck_assert_ptr_nonnull(g);
    g->n = UINT64_MAX; /* never ends: only prefetch_free stops it */
    g->rng = 1;
    sim_event_source inner = {gen_next, g, "gen.jsonl", NULL, NULL};
    prefetch *p;
    sim_error err;
    ck_assert_int_eq(prefetch_new(inner, &p, &err), SIM_OK);
    sim_event_source s = prefetch_source(p);
    sim_event ev;
    for (int i = 0; i < 10; i++)
        ck_assert_int_eq(s.next(s.ctx, &ev, &err), SIM_OK);
    ck_assert_uint_eq(ev.id, 10);
    prefetch_free(p);
    /* the ring holds PREFETCH_SLOTS batches and one event waiting for space: the
     * thread read no further than that */
    ck_assert_uint_le(g->i, (uint64_t)(PREFETCH_SLOTS + 1) * PREFETCH_BATCH + 1);
    free(g);
    prefetch_free(NULL);
}
END_TEST

START_TEST(an_input_read_ahead_should_give_the_same_events_as_one_read_directly)
{
    char path[] = "/tmp/gpusim-prefetch-XXXXXX";
    int fd = mkstemp(path);
    ck_assert_int_ge(fd, 0);
    FILE *f = fdopen(fd, "w");
    ck_assert_ptr_nonnull(f);
    fprintf(f, "{\"format\":\"gpusim-trace\",\"version\":1}\n");
    uint64_t n = 3 * PREFETCH_BATCH + 5;
    for (uint64_t i = 1; i <= n; i++)
        fprintf(f, "{\"op\":\"alloc\",\"id\":%llu,\"size\":%llu,\"t\":%llu,\"tag\":\"t%llu\"}\n", (unsigned long long)i,
                (unsigned long long)(i * 512), (unsigned long long)i, (unsigned long long)i);
    fprintf(f, "{\"op\":\"free\",\"id\":1,\"t\":0}\n"); /* goes back in time: an error at line n + 2 */
    ck_assert_int_eq(fclose(f), 0);
    trace_input *in[2];
    sim_event_source src[2];
    for (int k = 0; k < 2; k++) {
        input_options o = {.device = -1, .prefetch = k == 1};
        sim_error err;
        ck_assert_int_eq(input_open(path, "auto", &o, &in[k], &err), SIM_OK);
        src[k] = input_source(in[k]);
    }
    if (sysconf(_SC_NPROCESSORS_ONLN) > 1)
        ck_assert(src[0].next != src[1].next); /* the second reads ahead (where a second CPU can) */
    sim_status st[2];
    sim_error err[2];
    sim_event ev[2];
    uint64_t count = 0;
    do {
        for (int k = 0; k < 2; k++)
            st[k] = src[k].next(src[k].ctx, &ev[k], &err[k]);
        ck_assert_int_eq(st[0], st[1]);
        if (st[0] == SIM_OK) {
            count++;
            event_check_same(&ev[1], &ev[0]);
        }
    } while (st[0] == SIM_OK);
    ck_assert_uint_eq(count, n);
    ck_assert_int_eq(st[0], SIM_ETRACE);
    ck_assert_str_eq(err[0].msg, err[1].msg);
    ck_assert_uint_eq(err[1].line, n + 2);
    input_close(in[0]);
    input_close(in[1]);
    unlink(path);
}
END_TEST
