/* Check suite for the two readings of traces/import_pickle.h: the lean one (each
 * container made into its DOM when it is complete, unread keys left out, call
 * stacks never kept) must give exactly the exact one's DOM less the unread
 * members, or the exact one's message, on real snapshots, on pickles made to
 * defeat it, and on seeded random pickles; and it must hold far less. */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "support/check_main.h"
#include "support/import_data.h"
#include "support/seed.h"
#include "support/slurp.h"
#include "traces/import_pickle.h"

static const char *const UNREAD[] = {"frames", "compile_context", "user_metadata", NULL};

typedef struct outcome {
    sim_status st;
    bool restarted;
    char msg[512];
} outcome;

/* Both readings of b (each leaving the unread keys out): same status, same message,
 * same DOM. */
static outcome both_agree(const char *name, const unsigned char *b, size_t len)
{
    pickle_doc *ld = NULL, *xd = NULL;
    const json_value *lr = NULL, *xr = NULL;
    sim_error le, xe;
    memset(&le, 0, sizeof le);
    memset(&xe, 0, sizeof xe);
    const pickle_options lean = {.unread_keys = UNREAD}, exact = {.unread_keys = UNREAD, .exact = true};
    outcome o = {.st = pickle_parse(name, b, len, &lean, &ld, &lr, &le)};
    sim_status xs = pickle_parse(name, b, len, &exact, &xd, &xr, &xe);
    EXPECT_MSG(o.st == xs, "%s: lean status %d, exact %d (%s / %s)", name, o.st, xs, le.msg, xe.msg);
    if (o.st != SIM_OK) {
        EXPECT_MSG(strcmp(le.msg, xe.msg) == 0, "%s: lean says '%s', exact '%s'", name, le.msg, xe.msg);
        snprintf(o.msg, sizeof o.msg, "%s", le.msg);
    } else {
        EXPECT_MSG(json_equal(lr, xr), "%s: the lean DOM differs from the exact one", name);
        o.restarted = pickle_doc_restarted(ld);
        EXPECT(!pickle_doc_restarted(xd));
    }
    pickle_free(ld);
    pickle_free(xd);
    return o;
}

START_TEST(every_recorded_snapshot_should_read_lean_to_the_exact_dom_without_starting_again)
{
    static const char *const FILES[] = {"snapshot_small.pickle", "snapshot_small_p2.pickle",
                                        "torch_snapshot_cs336_from_empty.pickle",
                                        "torch_snapshot_cs336_midrun_inference.pickle"};
    for (size_t i = 0; i < sizeof FILES / sizeof FILES[0]; i++) {
        char path[1024];
        size_t len = 0;
        char *b = test_slurp(import_data_path(path, sizeof path, "", FILES[i]), &len);
        outcome o = both_agree(FILES[i], (const unsigned char *)b, len);
        ck_assert_msg(o.st == SIM_OK, "%s: %s", FILES[i], o.msg);
        ck_assert_msg(!o.restarted, "%s: the lean reading gave up", FILES[i]);
        free(b);
    }
}
END_TEST

/* ---------------------------------------------------------------- writing pickles */

typedef struct pbuf {
    unsigned char *b;
    size_t n, cap;
    uint32_t memo; /* MEMOIZEs so far */
} pbuf;

static void put(pbuf *p, const void *s, size_t n)
{
    if (p->n + n > p->cap) {
        p->cap = (p->n + n) * 2 + 64;
        p->b = realloc(p->b, p->cap);
        ck_assert_ptr_nonnull(p->b);
    }
    memcpy(p->b + p->n, s, n);
    p->n += n;
}

static void op(pbuf *p, unsigned char c)
{
    put(p, &c, 1);
}

static uint32_t memoize(pbuf *p)
{
    op(p, 0x94);
    return p->memo++;
}

static void str(pbuf *p, const char *s)
{
    size_t n = strlen(s);
    op(p, 0x8c); /* SHORT_BINUNICODE */
    op(p, (unsigned char)n);
    put(p, s, n);
}

static void get(pbuf *p, uint32_t idx)
{
    op(p, 'j'); /* LONG_BINGET */
    put(p,
        (const unsigned char[]){(unsigned char)idx, (unsigned char)(idx >> 8), (unsigned char)(idx >> 16),
                                (unsigned char)(idx >> 24)},
        4);
}

static void bint(pbuf *p, uint32_t v)
{
    op(p, 'J');
    put(p,
        (const unsigned char[]){(unsigned char)v, (unsigned char)(v >> 8), (unsigned char)(v >> 16),
                                (unsigned char)(v >> 24)},
        4);
}

/* ---------------------------------------------------------------- pickles made to defeat the lean reading */

typedef struct crafted {
    const char *name;
    const char *bytes;
    size_t len;
    bool ok, restarts;
} crafted;

#define CR(name, s, ok, restarts)                                                                                      \
    {                                                                                                                  \
        name, s, sizeof s - 1, ok, restarts                                                                            \
    }

START_TEST(pickles_made_to_defeat_the_lean_reading_should_read_as_the_exact_one_reads_them)
{
    static const crafted C[] = {
        /* {"frames": L, "x": L}: L, made as a call stack, is kept under "x" */
        CR("ghost_kept",
           "\x80\x04}\x94(\x8c\x06"
           "frames]\x94K\x01"
           "a\x8c\x01xh\x01u.",
           true, true),
        /* L = []; D = {"a": L}; then L.append(1): a container changed after it was stored */
        CR("changed_after",
           "\x80\x04]\x94}\x94\x8c\x01"
           "ah\x00sh\x00K\x01"
           "a\x87.",
           true, true),
        /* a list that contains itself, under "frames": a cycle the exact reading refuses */
        CR("cycle_in_frames",
           "\x80\x04}\x94\x8c\x06"
           "frames]\x94h\x01"
           "as.",
           false, false),
        /* a dict key that is None inside a call stack */
        CR("none_key_in_frames",
           "\x80\x04}\x94\x8c\x06"
           "frames}\x94NK\x01ss.",
           false, false),
        /* {"frames": [...]} under "frames": dropped, read exactly as without */
        CR("frames_in_frames",
           "\x80\x04}\x94\x8c\x06"
           "frames}\x94\x8c\x06"
           "frames]\x94ss.",
           true, false),
        /* a tuple made of a call stack, kept */
        CR("tuple_of_ghost",
           "\x80\x04}\x94\x8c\x06"
           "frames]\x94s\x8c\x01th\x01\x85s.",
           true, true),
        /* [{}, "frames", []]: the list looks like a call stack, but is a list's item */
        CR("frames_as_item",
           "\x80\x04]\x94(}\x94\x8c\x06"
           "frames]\x94"
           "e.",
           true, true),
    };
    for (size_t i = 0; i < sizeof C / sizeof C[0]; i++) {
        outcome o = both_agree(C[i].name, (const unsigned char *)C[i].bytes, C[i].len);
        ck_assert_msg((o.st == SIM_OK) == C[i].ok, "%s: status %d (%s)", C[i].name, o.st, o.msg);
        if (C[i].ok)
            ck_assert_msg(o.restarted == C[i].restarts, "%s: restarted %d", C[i].name, o.restarted);
    }
}
END_TEST

/* 101 lists inside each other under "frames": the exact reading refuses nesting
 * deeper than 100 wherever it is, and so does the lean one, though it keeps none of it. */
START_TEST(nesting_too_deep_inside_an_unread_value_should_be_refused_as_the_exact_reading_refuses_it)
{
    for (int levels = 99; levels <= 101; levels++) {
        pbuf p = {0};
        put(&p, "\x80\x04}", 3);
        memoize(&p);
        str(&p, "frames");
        for (int i = 0; i < levels; i++) {
            op(&p, ']');
            memoize(&p);
        }
        for (int i = 1; i < levels; i++)
            op(&p, 'a');
        put(&p, "s.", 2);
        outcome o = both_agree("deep", p.b, p.n);
        /* the dict is depth 0, the outermost list depth 1, the innermost depth `levels` */
        if (levels <= 100)
            ck_assert_msg(o.st == SIM_OK, "%d levels: %s", levels, o.msg);
        else
            ck_assert_msg(o.st == SIM_ETRACE && strstr(o.msg, "nesting deeper than 100"), "%d: %s", levels, o.msg);
        free(p.b);
    }
}
END_TEST

/* ---------------------------------------------------------------- seeded random pickles */

typedef struct gen {
    pbuf p;
    uint64_t rng;
    uint32_t *done; /* memo indices of complete values */
    size_t n_done, cap_done;
    uint32_t *open; /* memo indices of containers still being made */
    size_t n_open, cap_open;
} gen;

static uint64_t pick(gen *g, uint64_t n)
{
    return test_rand(&g->rng) % n;
}

static void remember(uint32_t **v, size_t *n, size_t *cap, uint32_t idx)
{
    if (*n == *cap) {
        *cap = *cap ? *cap * 2 : 64;
        *v = realloc(*v, *cap * sizeof **v);
        ck_assert_ptr_nonnull(*v);
    }
    (*v)[(*n)++] = idx;
}

static const char *const KEYS[] = {"frames", "a", "size", "compile_context", "??", "", "user_metadata", "b"};

static void value(gen *g, int depth);

/* key then value, a key being most often a string (the unread ones among them) */
static void member(gen *g, int depth)
{
    if (pick(g, 20) == 0)
        bint(&g->p, (uint32_t)pick(g, 3)); /* an integer key (a decimal string in the DOM) */
    else if (pick(g, 40) == 0)
        op(&g->p, 'N'); /* refused by both */
    else {
        str(&g->p, KEYS[pick(g, sizeof KEYS / sizeof KEYS[0])]);
        if (pick(g, 2))
            memoize(&g->p);
    }
    value(g, depth + 1);
}

static void container(gen *g, int depth)
{
    int kind = (int)pick(g, 3), n = (int)pick(g, 5);
    if (kind == 2) { /* a tuple: its items first */
        if (n <= 3) {
            for (int i = 0; i < n; i++)
                value(g, depth + 1);
            op(&g->p, n == 0 ? ')' : (unsigned char)(0x84 + n));
        } else {
            op(&g->p, '(');
            for (int i = 0; i < n; i++)
                value(g, depth + 1);
            op(&g->p, 't');
        }
        if (pick(g, 2))
            remember(&g->done, &g->n_done, &g->cap_done, memoize(&g->p));
        return;
    }
    op(&g->p, kind == 0 ? ']' : '}');
    uint32_t idx = memoize(&g->p);
    remember(&g->open, &g->n_open, &g->cap_open, idx);
    if (n == 1 && pick(g, 2)) {
        if (kind == 0)
            value(g, depth + 1);
        else
            member(g, depth);
        op(&g->p, kind == 0 ? 'a' : 's');
    } else if (n > 0) {
        op(&g->p, '(');
        for (int i = 0; i < n; i++) {
            if (kind == 0)
                value(g, depth + 1);
            else
                member(g, depth);
        }
        op(&g->p, kind == 0 ? 'e' : 'u');
    }
    g->n_open--;
    remember(&g->done, &g->n_done, &g->cap_done, idx);
}

static void value(gen *g, int depth)
{
    uint64_t c = pick(g, 100);
    if (depth < 6 && c < 45) {
        container(g, depth);
    } else if (c < 60 && g->n_done) {
        get(&g->p, g->done[pick(g, g->n_done)]); /* a complete value again */
    } else if (c < 61 && g->n_open) {
        get(&g->p, g->open[pick(g, g->n_open)]); /* one still being made: a cycle, mostly */
    } else if (c < 75) {
        str(&g->p, KEYS[pick(g, sizeof KEYS / sizeof KEYS[0])]);
        if (pick(g, 2))
            remember(&g->done, &g->n_done, &g->cap_done, memoize(&g->p));
    } else if (c < 90) {
        bint(&g->p, (uint32_t)pick(g, 1000000));
    } else if (c < 93) {
        op(&g->p, 'N');
    } else if (c < 96) {
        op(&g->p, 0x88);
    } else {
        put(&g->p, "G\x3f\xf8\0\0\0\0\0\0", 9); /* 1.5 */
    }
}

START_TEST(seeded_random_pickles_should_read_lean_as_they_read_exactly)
{
    uint64_t seed = test_seed("seeded_random_pickles_should_read_lean_as_they_read_exactly");
    gen g = {.rng = seed};
    int ok = 0, restarted = 0, refused = 0;
    for (int round = 0; round < 3000; round++) {
        g.p.n = 0;
        g.p.memo = 0;
        g.n_done = g.n_open = 0;
        put(&g.p, "\x80\x04", 2);
        container(&g, 0);
        op(&g.p, '.');
        char name[64];
        snprintf(name, sizeof name, "seed %llu round %d", (unsigned long long)seed, round);
        outcome o = both_agree(name, g.p.b, g.p.n);
        ok += o.st == SIM_OK && !o.restarted;
        restarted += o.st == SIM_OK && o.restarted;
        refused += o.st != SIM_OK;
    }
    printf("seed %llu: %d read lean, %d started again, %d refused by both\n", (unsigned long long)seed, ok, restarted,
           refused);
    /* every path was taken */
    ck_assert(ok > 100 && restarted > 10 && refused > 10);
    free(g.p.b);
    free(g.done);
    free(g.open);
}
END_TEST

/* ---------------------------------------------------------------- memory */

/* n trace entries shaped like a recording's: 8 members, the last a new 60-frame
 * list of memo GETs of 5 shared frame dicts (5 different lists, entry after entry). */
static pbuf recording(uint32_t n)
{
    pbuf p = {0};
    put(&p, "\x80\x04}", 3);
    memoize(&p);
    str(&p, "device_traces");
    memoize(&p);
    op(&p, ']');
    memoize(&p);
    op(&p, ']');
    memoize(&p);
    op(&p, '(');
    uint32_t frame[5] = {0}, key[8] = {0};
    static const char *const K[] = {"action",          "addr",          "size",  "stream", "time_us",
                                    "compile_context", "user_metadata", "frames"};
    for (uint32_t e = 0; e < n; e++) {
        op(&p, '}');
        memoize(&p);
        op(&p, '(');
        for (int k = 0; k < 8; k++) {
            if (e == 0) {
                str(&p, K[k]);
                key[k] = memoize(&p);
            } else {
                get(&p, key[k]);
            }
            if (k < 7) {
                bint(&p, e * 8 + (uint32_t)k); /* distinct integers: none is shared */
                continue;
            }
            op(&p, ']');
            memoize(&p);
            op(&p, '(');
            for (int f = 0; f < 60; f++) {
                if (e == 0 && f < 5) {
                    op(&p, '}');
                    frame[f] = memoize(&p);
                    str(&p, "name");
                    str(&p, "??");
                    op(&p, 's');
                } else {
                    get(&p, frame[((uint32_t)f + e) % 5]); /* 5 different stacks, in turn */
                }
            }
            op(&p, 'e');
        }
        op(&p, 'u');
        if (e % 1000 == 999)
            put(&p, "e(", 2);
    }
    put(&p, "ea", 2);
    put(&p, "s.", 2);
    return p;
}

START_TEST(a_recordings_call_stacks_should_cost_the_lean_reading_nothing)
{
    const uint32_t n = 20000;
    pbuf p = recording(n);
    outcome o = both_agree("recording", p.b, p.n);
    ck_assert_msg(o.st == SIM_OK && !o.restarted, "%s", o.msg);
    const pickle_options lean = {.unread_keys = UNREAD}, exact = {.unread_keys = UNREAD, .exact = true}, keep = {0};
    size_t peak[3], kept[3];
    const pickle_options *opts[3] = {&lean, &exact, &keep};
    for (int i = 0; i < 3; i++) {
        pickle_doc *d = NULL;
        const json_value *root = NULL;
        sim_error err;
        ck_assert_int_eq(pickle_parse("recording", p.b, p.n, opts[i], &d, &root, &err), SIM_OK);
        ck_assert_uint_eq(json_get(root, "device_traces")->u.items[0].len, n);
        peak[i] = pickle_doc_peak_bytes(d);
        kept[i] = pickle_doc_bytes(d);
        ck_assert_uint_le(kept[i], peak[i]);
        pickle_free(d);
    }
    printf("%u entries of %zu pickle bytes each, B/entry at the end of the reading (then kept): lean %zu (%zu), "
           "lean keeping every key %zu (%zu), exact %zu (%zu)\n",
           n, p.n / n, peak[0] / n, kept[0] / n, peak[2] / n, kept[2] / n, peak[1] / n, kept[1] / n);
    /* an entry's 5 kept members (5 x 32 B), its slot in the list (24 B), its record
     * and its call stack's (24 B each, freed with the graph) and its integers' text:
     * about 280 bytes; the exact reading holds the graph besides its DOM (the 60
     * frame references: 8 B each, and 40 B of box per container); keeping every key
     * costs three more members (32 B each: frames, compile_context, user_metadata),
     * not the 60 references' DOM (24 B each): the 5 different lists are made once each */
    ck_assert_uint_lt(peak[0] / n, 300);
    ck_assert_uint_lt(kept[0] / n, peak[0] / n - 40);
    ck_assert_uint_gt(peak[1] / n, 60 * 8 + 250);
    ck_assert_uint_lt(peak[2] / n, peak[0] / n + 3 * 32 + 40);
    free(p.b);
}
END_TEST
