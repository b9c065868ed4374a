/* Check suite for answers/graphs.h: the rewrite of a trace's CUDA graph captures
 * (pool ids: one shared pool or a pool each; order: recorded, largest first, smallest
 * first; moved as whole scopes with the work before each) and its refusals, and the
 * answer of the torch model on a small trace. Sizes are MiB; under torch a request of
 * at least 10 MiB gets a segment of exactly its size. */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "answers/graphs.h"
#include "sim/evbuf.h"
#include "sim/units.h"
#include "strategies/registry.h"
#include "support/check_main.h"

#define MIB(x) ((uint64_t)(x)*MiB)

typedef struct tb {
    evbuf *b;
    uint64_t t;
} tb;

static void push(tb *x, sim_event e)
{
    e.t = x->t;
    e.ready_t = x->t;
    e.index = evbuf_count(x->b) + 1;
    x->t += 10;
    ck_assert_int_eq(evbuf_push(x->b, &e), SIM_OK);
}

static void alloc(tb *x, uint64_t id, uint64_t mib, uint32_t stream)
{
    push(x, (sim_event){.op = SIM_OP_ALLOC, .id = id, .size = MIB(mib), .stream = stream});
}

static void dealloc(tb *x, uint64_t id)
{
    push(x, (sim_event){.op = SIM_OP_FREE, .id = id});
}

/* one capture of batch b into pool: a warm-up (eager, freed), then activations 40·b and
 * an output 10·b kept; ids from base */
static void capture(tb *x, uint64_t pool, uint64_t b, uint64_t base)
{
    alloc(x, base, 5 * b, 1); /* warm-up */
    dealloc(x, base);
    push(x, (sim_event){.op = SIM_OP_POOL_BEGIN, .pool = pool, .stream = 1, .pool_flags = SIM_POOL_CAPTURE});
    alloc(x, base + 1, 40 * b, 1);
    alloc(x, base + 2, 10 * b, 1);
    dealloc(x, base + 1);
    push(x, (sim_event){.op = SIM_OP_POOL_END, .pool = pool});
}

/* weights, then captures of 4, 2, 1 into pools p4, p2, p1, a replay, the releases */
static evbuf *three(uint64_t p4, uint64_t p2, uint64_t p1)
{
    tb x = {evbuf_new("three.jsonl", "three"), 0};
    alloc(&x, 1, 100, 0);
    capture(&x, p4, 4, 10);
    capture(&x, p2, 2, 20);
    capture(&x, p1, 1, 30);
    push(&x, (sim_event){.op = SIM_OP_GRAPH_REPLAY, .pool = p4, .name = "b=4"});
    push(&x, (sim_event){.op = SIM_OP_POOL_RELEASE, .pool = p4});
    push(&x, (sim_event){.op = SIM_OP_POOL_RELEASE, .pool = p2});
    push(&x, (sim_event){.op = SIM_OP_POOL_RELEASE, .pool = p1});
    return x.b;
}

/* the rewritten trace as text: one letter per event (a alloc, f free, B begin, E end,
 * R release, G replay), a begin, end, release or replay followed by its pool, an alloc
 * by its size in MiB */
static void shape(const evbuf *b, char *out, size_t cap)
{
    evbuf_cursor cur;
    sim_event_source s = evbuf_source(b, &cur);
    sim_event e;
    sim_error err;
    size_t n = 0;
    uint64_t last_t = 0;
    out[0] = '\0';
    while (s.next(s.ctx, &e, &err) == SIM_OK) {
        ck_assert_uint_ge(e.t, last_t); /* the times stay in order */
        last_t = e.t;
        switch (e.op) {
        case SIM_OP_ALLOC: n += (size_t)snprintf(out + n, cap - n, "a%llu ", (unsigned long long)(e.size / MiB)); break;
        case SIM_OP_FREE: n += (size_t)snprintf(out + n, cap - n, "f "); break;
        case SIM_OP_POOL_BEGIN: n += (size_t)snprintf(out + n, cap - n, "B%llu ", (unsigned long long)e.pool); break;
        case SIM_OP_POOL_END: n += (size_t)snprintf(out + n, cap - n, "E%llu ", (unsigned long long)e.pool); break;
        case SIM_OP_POOL_RELEASE: n += (size_t)snprintf(out + n, cap - n, "R%llu ", (unsigned long long)e.pool); break;
        case SIM_OP_GRAPH_REPLAY: n += (size_t)snprintf(out + n, cap - n, "G%llu ", (unsigned long long)e.pool); break;
        case SIM_OP_EMPTY_CACHE:
        case SIM_OP_MARK: n += (size_t)snprintf(out + n, cap - n, "- "); break;
        }
        ck_assert_uint_lt(n, cap);
    }
}

static void rewritten(const evbuf *in, graphs_sharing sh, graphs_order order, char *out, size_t cap)
{
    evbuf *b = NULL;
    sim_error err;
    sim_error_clear(&err);
    ck_assert_msg(graphs_rewrite(in, sh, order, &b, NULL, 0, NULL, &err) == SIM_OK, "%s", err.msg);
    shape(b, out, cap);
    evbuf_free(b);
}

START_TEST(the_recorded_variant_should_give_back_the_trace_unchanged)
{
    evbuf *in = three(1, 1, 1);
    char got[1024], want[1024];
    shape(in, want, sizeof want);
    rewritten(in, GRAPHS_AS_RECORDED, GRAPHS_ORDER_RECORDED, got, sizeof got);
    ck_assert_str_eq(got, want);
    ck_assert_uint_eq(graphs_count_captures(in), 3);
    evbuf_free(in);
}
END_TEST

START_TEST(separate_pools_should_give_each_capture_its_own_id_and_each_release_its_graph)
{
    evbuf *in = three(1, 1, 1);
    char got[1024];
    rewritten(in, GRAPHS_SEPARATE, GRAPHS_ORDER_RECORDED, got, sizeof got);
    /* the first capture keeps pool 1, the others get 2 and 3; the i-th release of pool 1
     * goes to its i-th capture, the replay to the first */
    ck_assert_str_eq(got, "a100 a20 f B1 a160 a40 f E1 a10 f B2 a80 a20 f E2 a5 f B3 a40 a10 f E3 G1 R1 R2 R3 ");
    evbuf_free(in);
}
END_TEST

START_TEST(a_shared_pool_should_take_the_first_captures_id_for_every_capture_and_release)
{
    evbuf *in = three(4, 5, 6);
    char got[1024];
    rewritten(in, GRAPHS_SHARED, GRAPHS_ORDER_RECORDED, got, sizeof got);
    ck_assert_str_eq(got, "a100 a20 f B4 a160 a40 f E4 a10 f B4 a80 a20 f E4 a5 f B4 a40 a10 f E4 G4 R4 R4 R4 ");
    evbuf_free(in);
}
END_TEST

START_TEST(smallest_first_should_move_each_capture_with_the_warm_up_before_it)
{
    evbuf *in = three(1, 1, 1);
    char got[1024];
    rewritten(in, GRAPHS_AS_RECORDED, GRAPHS_ORDER_SMALLEST_FIRST, got, sizeof got);
    /* the first capture's warm-up stays where it was (nothing before a first capture is
     * known to belong to it); b=2 and b=1 move with theirs */
    ck_assert_str_eq(got, "a100 a20 f a5 f B1 a40 a10 f E1 a10 f B1 a80 a20 f E1 B1 a160 a40 f E1 G1 R1 R1 R1 ");
    rewritten(in, GRAPHS_AS_RECORDED, GRAPHS_ORDER_LARGEST_FIRST, got, sizeof got);
    char want[1024];
    shape(in, want, sizeof want);
    ck_assert_str_eq(got, want); /* recorded largest first already */
    evbuf_free(in);
}
END_TEST

START_TEST(a_static_input_made_before_a_capture_and_kept_should_move_with_its_capture)
{
    tb x = {evbuf_new("inputs.jsonl", "inputs"), 0};
    alloc(&x, 91, 12, 0); /* b=4's input, kept (torch.cuda.graph replays read it) */
    capture(&x, 1, 4, 10);
    alloc(&x, 92, 11, 0); /* b=1's input */
    capture(&x, 1, 1, 30);
    char got[1024];
    rewritten(x.b, GRAPHS_AS_RECORDED, GRAPHS_ORDER_SMALLEST_FIRST, got, sizeof got);
    /* the first capture's unit starts at its pool_begin: its input and warm-up stay first */
    ck_assert_str_eq(got, "a12 a20 f a11 a5 f B1 a40 a10 f E1 B1 a160 a40 f E1 ");
    evbuf_free(x.b);
}
END_TEST

START_TEST(an_id_allocated_by_two_captures_should_refuse_the_reorder_naming_the_event)
{
    tb x = {evbuf_new("ids.jsonl", "ids"), 0};
    capture(&x, 1, 4, 10); /* events 1-7: warm-up 10, activations 11, output 12 */
    capture(&x, 1, 2, 13); /* events 8-14 */
    alloc(&x, 10, 5, 1);   /* event 15: b=1's warm-up takes id 10 again: fine, 10 came before any unit */
    dealloc(&x, 10);
    push(&x, (sim_event){.op = SIM_OP_POOL_BEGIN, .pool = 1, .stream = 1, .pool_flags = SIM_POOL_CAPTURE});
    alloc(&x, 11, 40, 1); /* event 18: id 11 again, b=4's activations once */
    alloc(&x, 20, 10, 1);
    dealloc(&x, 11);
    push(&x, (sim_event){.op = SIM_OP_POOL_END, .pool = 1});
    evbuf *b = NULL;
    sim_error err;
    sim_error_clear(&err);
    ck_assert_int_eq(graphs_rewrite(x.b, GRAPHS_SHARED, GRAPHS_ORDER_SMALLEST_FIRST, &b, NULL, 0, NULL, &err),
                     SIM_ETRACE);
    ck_assert_ptr_null(b);
    ck_assert_msg(strstr(err.msg, "the captures cannot be reordered: id 11 is allocated again") != NULL, "%s", err.msg);
    ck_assert_uint_eq(err.event, 18);
    /* the pool ids alone can still be rewritten */
    ck_assert_int_eq(graphs_rewrite(x.b, GRAPHS_SEPARATE, GRAPHS_ORDER_RECORDED, &b, NULL, 0, NULL, &err), SIM_OK);
    evbuf_free(b);
    evbuf_free(x.b);
}
END_TEST

START_TEST(a_graph_output_freed_before_the_last_capture_should_refuse_the_reorder)
{
    tb x = {evbuf_new("early.jsonl", "early"), 0};
    capture(&x, 1, 4, 10);
    dealloc(&x, 12); /* b=4's output freed between the captures */
    capture(&x, 1, 2, 20);
    evbuf *b = NULL;
    sim_error err;
    sim_error_clear(&err);
    ck_assert_int_eq(graphs_rewrite(x.b, GRAPHS_SHARED, GRAPHS_ORDER_SMALLEST_FIRST, &b, NULL, 0, NULL, &err),
                     SIM_ETRACE);
    ck_assert_ptr_nonnull(strstr(err.msg, "the free of id 12"));
    evbuf_free(x.b);
}
END_TEST

START_TEST(captures_after_every_earlier_graph_was_released_should_be_the_run_the_questions_are_about)
{
    /* a server's profiling capture (pool 1), destroyed, then the real ones (pool 2): only
     * the last run is rewritten; the profiling capture stays as it is */
    tb x = {evbuf_new("released.jsonl", "released"), 0};
    capture(&x, 1, 4, 10);
    dealloc(&x, 12);
    push(&x, (sim_event){.op = SIM_OP_POOL_RELEASE, .pool = 1});
    capture(&x, 2, 2, 20);
    capture(&x, 3, 1, 30);
    ck_assert_uint_eq(graphs_count_captures(x.b), 2);
    char got[1024];
    rewritten(x.b, GRAPHS_SHARED, GRAPHS_ORDER_SMALLEST_FIRST, got, sizeof got);
    ck_assert_str_eq(got, "a20 f B1 a160 a40 f E1 f R1 a10 f a5 f B2 a40 a10 f E2 B2 a80 a20 f E2 ");
    evbuf_free(x.b);
}
END_TEST

START_TEST(the_torch_answer_should_give_the_shared_pool_and_a_pool_each_as_worked_out_by_hand)
{
    /* on 1 GiB: weights 100; b=4: act 160 and out 40 in new segments of the pool, act freed;
     * b=2's 80 + 20 and b=1's 40 + 10 cut from the cached 160 (the warm-ups are eager: the
     * default pool). Pool: 200 MiB; a pool each: 200 + 100 + 50 = 350 MiB; smallest first no
     * freed block fits the next activations: 40 + 10, then 80 (its 20 from the cached 40),
     * then 160 (its 40 from the cached 80): 290 MiB. */
    evbuf *in = three(1, 1, 1);
    const strategy_ops *ops = registry_find("torch");
    engine_config cfg = {.ops = ops};
    cfg.device.name = "1GiB";
    cfg.device.capacity_bytes = 1024 * MiB;
    graphs_answer *g = calloc(1, sizeof *g);
    sim_error err;
    sim_error_clear(&err);
    ck_assert_msg(graphs_answer_compute(&cfg, in, g, &err) == SIM_OK, "%s", err.msg);
    ck_assert(g->present);
    ck_assert_uint_eq(g->captures, 3);
    ck_assert_str_eq(g->recorded_sharing, "shared");
    ck_assert_uint_eq(g->n_pools, 1);
    ck_assert_uint_eq(g->pools[0].graphs, 3);
    ck_assert_uint_eq(g->pools[0].peak_reserved_bytes, 200 * MiB);
    ck_assert_uint_eq(g->pools[0].one_pool_each_bytes, 350 * MiB);
    ck_assert(g->variants[0].recorded);                                /* shared, as recorded */
    ck_assert_uint_eq(g->variants[2].pools_reserved_bytes, 290 * MiB); /* shared, smallest first: 50 + 80 + 160 */
    ck_assert_uint_eq(g->variants[3].pools_reserved_bytes, 350 * MiB); /* a pool each */
    ck_assert_int_ge(g->best, 0);
    ck_assert_int_eq(g->variants[g->best].sharing, GRAPHS_SHARED);
    ck_assert_int_eq(g->variants[g->best].order, GRAPHS_ORDER_LARGEST_FIRST);
    free(g);
    evbuf_free(in);
}
END_TEST
