/* The `torch` strategy's pool pairs: the default pools and the private pools of CUDA
 * graphs and MemPool (design.md §3 "Pools"), with the rules of PyTorch 2.6's
 * c10/cuda/CUDACachingAllocator.cpp (line numbers of the 2.6.0 source):
 *  - beginAllocateToPool (2086-2098) makes the pool, or adds a use to it
 *    (ensure_exists_and_incref_pool, 2209-2227), and appends (pool, filter) to
 *    captures_underway; endAllocateToPool (2101-2111) removes that entry;
 *  - get_pool (2507-2531) sends an allocation to the first entry whose filter takes
 *    its stream, to that pool's small or large BlockPool by the rounded size;
 *  - releasePool (2115-2136) drops a use; at none the pool joins graph_pools_freeable,
 *    and release_cached_blocks (2858-2902) then cudaFrees its unsplit cached
 *    segments and erases it once none is left (cudaMalloc_count 0).
 * The engine has checked the protocol (sim/engine.c do_pool) before any call here. */
#include <stdlib.h>

#include "sim/grow.h"
#include "torch_freeset.h"
#include "torch_types.h"

static tpair *pair_new(strategy *s, uint64_t id)
{
    tpair *p = calloc(1, sizeof *p);
    if (p == NULL)
        return NULL;
    for (unsigned k = 0; k < N_POOLS; k++) {
        torch_fs_init(&p->fs[k], &s->blocks);
        if (s->born != NULL)
            torch_fs_order_by_creation(&p->fs[k], &s->born);
        p->unmapped_root[k] = T_NONE;
    }
    p->id = id;
    p->live = true;
    return p;
}

static void pair_free(tpair *p)
{
    if (p == NULL)
        return;
    for (unsigned k = 0; k < N_POOLS; k++)
        torch_fs_release(&p->fs[k]);
    free(p);
}

bool torch_pools_init(strategy *s)
{
    if (!SIM_GROW(s->pairs, 1, s->cap_pairs))
        return false;
    s->pairs[0] = pair_new(s, 0);
    if (s->pairs[0] == NULL)
        return false;
    s->n_pairs = 1;
    return true;
}

void torch_pools_release(strategy *s)
{
    for (uint32_t i = 0; i < s->n_pairs; i++)
        pair_free(s->pairs[i]);
    free(s->pairs);
    free(s->routes);
    free(s->parked);
}

uint32_t torch_pool_pair_of(strategy *s, uint64_t id, bool *made)
{
    for (uint32_t i = 1; i < s->n_pairs; i++) {
        if (s->pairs[i]->live && s->pairs[i]->id == id) {
            *made = false;
            return i;
        }
    }
    *made = true;
    /* a new pair at the end (an erased pool's slot is not reused: the pairs stay in
     * the order the pools were made) */
    if (s->n_pairs >= T_MAX_PAIRS || !SIM_GROW(s->pairs, s->n_pairs + 1, s->cap_pairs)) {
        s->host_oom = true;
        return T_NONE;
    }
    s->pairs[s->n_pairs] = pair_new(s, id);
    if (s->pairs[s->n_pairs] == NULL) {
        s->host_oom = true;
        return T_NONE;
    }
    s->pairs[s->n_pairs]->uses = 1;
    return s->n_pairs++;
}

static uint32_t pair_find(const strategy *s, uint64_t id)
{
    for (uint32_t i = 1; i < s->n_pairs; i++)
        if (s->pairs[i]->live && s->pairs[i]->id == id)
            return i;
    return T_NONE;
}

void torch_pool_begin(strategy *s, const strategy_pool_scope *scope)
{
    bool made = false;
    uint32_t pr = torch_pool_pair_of(s, scope->pool, &made);
    if (pr == T_NONE)
        return;
    tpair *p = s->pairs[pr];
    if (made) {
        p->use_on_oom = scope->use_on_oom;
        p->no_split = scope->no_split;
    } else {
        p->uses++;
    }
    if (!SIM_GROW(s->routes, s->n_routes + 1, s->cap_routes)) {
        s->host_oom = true;
        return;
    }
    s->routes[s->n_routes++] = (troute){.pair = pr, .stream = scope->stream, .all_streams = scope->all_streams,
                                        .capture = scope->capture};
}

void torch_pool_end(strategy *s, uint64_t pool)
{
    for (uint32_t i = 0; i < s->n_routes; i++) {
        if (s->pairs[s->routes[i].pair]->id != pool)
            continue;
        for (uint32_t j = i + 1; j < s->n_routes; j++) /* erase, keeping begin order */
            s->routes[j - 1] = s->routes[j];
        s->n_routes--;
        return;
    }
}

void torch_pool_release(strategy *s, uint64_t pool)
{
    uint32_t pr = pair_find(s, pool);
    if (pr == T_NONE)
        return;
    tpair *p = s->pairs[pr];
    if (p->uses > 0 && --p->uses == 0)
        p->freeable = true;
}

void torch_pools_drop_empty(strategy *s)
{
    for (uint32_t i = 1; i < s->n_pairs; i++) {
        tpair *p = s->pairs[i];
        if (p->live && p->freeable && p->segments == 0) {
            p->live = false; /* graph_pools.erase */
            for (unsigned k = 0; k < N_POOLS; k++) { /* its sets are empty: give back their memory */
                torch_fs_release(&p->fs[k]);
                torch_fs_init(&p->fs[k], &s->blocks);
                if (s->born != NULL)
                    torch_fs_order_by_creation(&p->fs[k], &s->born);
            }
        }
    }
}

int torch_pools(const strategy *s, strategy_pool_visitor v, void *ctx)
{
    for (uint32_t i = 1; i < s->n_pairs; i++) {
        const tpair *p = s->pairs[i];
        if (!p->live)
            continue;
        bool routed = false;
        for (uint32_t r = 0; r < s->n_routes && !routed; r++)
            routed = s->routes[r].pair == i;
        strategy_pool_info info = {
            .pool = p->id, .reserved_bytes = p->reserved, .peak_reserved_bytes = p->peak_reserved,
            .allocated_bytes = p->allocated, .peak_allocated_bytes = p->peak_allocated,
            .segments = p->segments, .uses = p->uses, .routed = routed,
            .use_on_oom = p->use_on_oom, .no_split = p->no_split,
        };
        int rc = v(ctx, &info);
        if (rc != 0)
            return rc;
    }
    return 0;
}
