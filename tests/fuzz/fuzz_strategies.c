/* Fuzz target: random valid event sequences through every registered strategy,
 * replayed by the engine with --paranoid (the strategy's full invariant checker
 * and the engine's own consistency checks after every event). Bytes decode to
 * events: allocations of varied sizes (tiny, odd, page multiples, huge) on two
 * streams (some sharing the memory of an earlier allocation: trace v1's "share"),
 * frees of live ids (some deferred with ready_t), empty_cache and marks, and
 * the pool events in the protocol the engine checks (design.md §3 "Pools": scopes
 * of four private pools per process on one stream or all, captures or not, with
 * use_on_oom and no_split, pool_end, pool_release, graph_replay), over one or two
 * processes, on a device small enough for OOMs, with
 * --on-oom=stop or skip. A broken invariant aborts with the checker's report. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz.h"
#include "sim/engine.h"
#include "sim/evbuf.h"
#include "strategies/registry.h"

typedef struct cursor {
    const uint8_t *p;
    size_t n;
} cursor;

static unsigned byte(cursor *c)
{
    if (c->n == 0)
        return 0;
    c->n--;
    return *c->p++;
}

static uint64_t size_for(cursor *c)
{
    unsigned k = byte(c);
    uint64_t v = byte(c) | (uint64_t)byte(c) << 8;
    switch (k % 6) {
    case 0: return v % 1024;                           /* tiny, 0 included */
    case 1: return v * 512 + byte(c);                  /* odd sizes up to 32 MiB */
    case 2: return (v % 64 + 1) << 20;                 /* MiB multiples */
    case 3: return (uint64_t)(v % 16 + 1) << 21;       /* 2 MiB pages */
    case 4: return (uint64_t)(v % 8 + 1) << 28;        /* huge: OOM territory */
    default: return ((uint64_t)1 << (v % 31)) + (k & 1); /* powers of two ± */
    }
}

#define MAX_LIVE 512
#define RECENT 16 /* the last allocs of a process, which an alloc may share */
#define POOLS 4   /* private pools per process, ids 1 .. POOLS */

/* A private pool of one process as the decoder has used it so far. */
typedef struct fuzz_pool {
    uint32_t uses;    /* pool_begins not released */
    uint32_t options; /* SIM_POOL_USE_ON_OOM | SIM_POOL_NO_SPLIT, from its first pool_begin */
    bool begun, routed;
} fuzz_pool;

/* A pool event for pool 1 + k of ps that the protocol allows now, chosen by the
 * bytes; false when the one chosen is not allowed (the caller drops it). */
static bool pool_event(cursor *c, unsigned op, fuzz_pool *ps, sim_event *ev)
{
    unsigned k = byte(c) % POOLS, b = byte(c);
    fuzz_pool *pl = &ps[k];
    ev->pool = k + 1;
    switch (op % 4) {
    case 0: /* pool_begin: never of a routed pool nor of one whose uses were all released */
        if (pl->routed || (pl->begun && pl->uses == 0))
            return false;
        ev->op = SIM_OP_POOL_BEGIN;
        if (!pl->begun)
            pl->options = b & (SIM_POOL_USE_ON_OOM | SIM_POOL_NO_SPLIT);
        /* a later begin repeats the first one's options or gives none */
        ev->pool_flags = (b & 1 ? SIM_POOL_ALL_STREAMS : 0u) | (b & 2 ? SIM_POOL_CAPTURE : 0u) |
                         (!pl->begun || (b & 16) ? pl->options : 0u);
        ev->stream = b & 1 ? 0 : (b >> 5) & 1;
        pl->begun = pl->routed = true;
        pl->uses++;
        return true;
    case 1:
        if (!pl->routed)
            return false;
        ev->op = SIM_OP_POOL_END;
        pl->routed = false;
        return true;
    case 2: /* pool_release: a use left, never the last one while routed */
        if (pl->uses == 0 || (pl->routed && pl->uses == 1))
            return false;
        ev->op = SIM_OP_POOL_RELEASE;
        pl->uses--;
        return true;
    default:
        if (!pl->begun)
            return false;
        ev->op = SIM_OP_GRAPH_REPLAY;
        ev->name = b & 1 ? "graph" : NULL;
        return true;
    }
}

static evbuf *decode(const uint8_t *data, size_t size, bool *skip, uint64_t *capacity)
{
    cursor c = {data, size};
    unsigned flags = byte(&c);
    *skip = flags & 1;
    *capacity = (uint64_t)(1 + (flags >> 1) % 16) << 26; /* 64 MiB .. 1 GiB */
    evbuf *b = evbuf_new("fuzz", NULL);
    if (b == NULL)
        return NULL;
    uint64_t live[2][MAX_LIVE], n_live[2] = {0, 0}, next_id = 1, t = 0, line = 1;
    uint64_t recent[2][RECENT], n_recent[2] = {0, 0};
    fuzz_pool pools[2][POOLS];
    memset(pools, 0, sizeof pools);
    static const char *const procs[2] = {NULL, "second"};
    while (c.n > 0) {
        unsigned op = byte(&c);
        unsigned p = (op >> 7) & 1;
        t += byte(&c) % 4;
        sim_event ev = {.t = t, .ready_t = t, .line = ++line, .index = line - 1, .proc = procs[p]};
        switch (op % 8) {
        case 0: case 1: case 2: case 3:
            if (n_live[p] == MAX_LIVE)
                continue;
            ev.op = SIM_OP_ALLOC;
            ev.id = next_id++;
            ev.size = size_for(&c);
            ev.stream = (op >> 4) & 1;
            if ((op & 0x40) && n_recent[p] > 0) {
                ev.has_share = true;
                ev.share = recent[p][byte(&c) % (n_recent[p] < RECENT ? n_recent[p] : RECENT)];
            }
            recent[p][n_recent[p]++ % RECENT] = ev.id;
            live[p][n_live[p]++] = ev.id;
            break;
        case 4: case 5: case 6: {
            if (n_live[p] == 0)
                continue;
            unsigned k = byte(&c) % (unsigned)n_live[p];
            ev.op = SIM_OP_FREE;
            ev.id = live[p][k];
            live[p][k] = live[p][--n_live[p]];
            if (op & 0x40)
                ev.ready_t = t + byte(&c) % 8;
            break;
        }
        default:
            if ((op & 0x60) == 0x60) {
                ev.op = SIM_OP_EMPTY_CACHE;
            } else if (op & 0x20) {
                ev.op = SIM_OP_MARK;
                ev.name = "mark";
            } else if (!pool_event(&c, op >> 3, pools[p], &ev)) {
                continue;
            }
            break;
        }
        if (evbuf_push(b, &ev) != SIM_OK) {
            evbuf_free(b);
            return NULL;
        }
    }
    return b;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size > 8192)
        return 0; /* longer sequences add little and slow every run (a full check per event) */
    bool skip;
    uint64_t capacity;
    evbuf *b = decode(data, size, &skip, &capacity);
    if (b == NULL)
        return 0;
    char limit[32];
    snprintf(limit, sizeof limit, "%lluB", (unsigned long long)(capacity / 2));
    sim_kv kv[] = {{"limit", limit}};
    for (size_t i = 0; i < registry_count(); i++) {
        engine_config cfg = {
            .device = {.name = "fuzz", .capacity_bytes = capacity, .cc_major = 8},
            .ops = registry_get(i),
            .opts = kv,
            .n_opts = 1,
            .on_oom_skip = skip,
            .paranoid = true,
        };
        evbuf_cursor cur;
        sim_event_source src = evbuf_source(b, &cur);
        sim_run *run = NULL;
        sim_error err;
        sim_error_clear(&err);
        sim_status st = engine_run(&cfg, &src, 1, &run, &err);
        if (st != SIM_OK) {
            /* the sequence is valid by construction: any error is a bug */
            fprintf(stderr, "%s: %s (event %llu)\n", cfg.ops->name, err.msg, (unsigned long long)err.event);
            abort();
        }
        sim_run_free(run);
    }
    evbuf_free(b);
    return 0;
}
