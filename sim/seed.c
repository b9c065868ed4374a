/* Checks and totals over a starting state. */
#include "seed.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

sim_status sim_seed_check(const sim_seed *seed, const char *file, sim_error *err)
{
    uint64_t prev_end = 0;
    for (uint32_t i = 0; i < seed->n_planned; i++)
        if (seed->planned[i].bytes == 0 || seed->planned[i].addr + seed->planned[i].bytes < seed->planned[i].addr)
            return sim_error_set(err, SIM_ETRACE, file, 0, 0, "start state: planned segment %u at 0x%" PRIx64
                                 " has size %" PRIu64, i, seed->planned[i].addr, seed->planned[i].bytes);
    for (uint32_t i = 0; i < seed->n_segs; i++) {
        const sim_seed_segment *g = &seed->segs[i];
        if (g->size_bytes == 0 || g->addr + g->size_bytes < g->addr)
            return sim_error_set(err, SIM_ETRACE, file, 0, 0, "start state: segment %u at 0x%" PRIx64
                                 " has size %" PRIu64, i, g->addr, g->size_bytes);
        if (i > 0 && g->addr < prev_end)
            return sim_error_set(err, SIM_ETRACE, file, 0, 0, "start state: segment %u at 0x%" PRIx64
                                 " overlaps the one before (which ends at 0x%" PRIx64 ")", i, g->addr, prev_end);
        prev_end = g->addr + g->size_bytes;
        if (g->first_block > seed->n_blocks || g->n_blocks > seed->n_blocks - g->first_block || g->n_blocks == 0)
            return sim_error_set(err, SIM_ETRACE, file, 0, 0, "start state: segment %u names blocks outside the "
                                 "list", i);
        uint64_t at = 0;
        for (uint32_t k = 0; k < g->n_blocks; k++) {
            const sim_seed_block *b = &seed->blocks[g->first_block + k];
            if (b->offset != at || b->size_bytes == 0 || b->size_bytes > g->size_bytes - at)
                return sim_error_set(err, SIM_ETRACE, file, 0, 0, "start state: block %u of segment %u (0x%" PRIx64
                                     ", offset %" PRIu64 ", %" PRIu64 " B) does not tile the segment at offset %"
                                     PRIu64, k, i, g->addr, b->offset, b->size_bytes, at);
            if (b->state == SIM_SEED_USED ? b->requested_bytes > b->size_bytes
                                          : (b->requested_bytes != 0 || b->id != 0))
                return sim_error_set(err, SIM_ETRACE, file, 0, 0, "start state: block %u of segment %u (0x%" PRIx64
                                     ") has requested %" PRIu64 " B of %" PRIu64 " B in state %d", k, i,
                                     g->addr + b->offset, b->requested_bytes, b->size_bytes, (int)b->state);
            at += b->size_bytes;
        }
        if (at != g->size_bytes)
            return sim_error_set(err, SIM_ETRACE, file, 0, 0, "start state: the blocks of segment %u (0x%" PRIx64
                                 ") cover %" PRIu64 " of its %" PRIu64 " B", i, g->addr, at, g->size_bytes);
    }
    return SIM_OK;
}

uint64_t sim_seed_reserved(const sim_seed *seed)
{
    uint64_t n = 0;
    for (uint32_t i = 0; i < seed->n_segs; i++)
        n += seed->segs[i].size_bytes;
    return n;
}

uint64_t sim_seed_allocated(const sim_seed *seed)
{
    uint64_t n = 0;
    for (uint32_t i = 0; i < seed->n_blocks; i++)
        if (seed->blocks[i].state == SIM_SEED_USED)
            n += seed->blocks[i].size_bytes;
    return n;
}

uint32_t sim_seed_used_count(const sim_seed *seed)
{
    uint32_t n = 0;
    for (uint32_t i = 0; i < seed->n_blocks; i++)
        n += seed->blocks[i].state == SIM_SEED_USED;
    return n;
}

sim_seed *sim_seed_dup(const sim_seed *seed)
{
    size_t segs = (size_t)seed->n_segs * sizeof *seed->segs, blocks = (size_t)seed->n_blocks * sizeof *seed->blocks;
    size_t planned = (size_t)seed->n_planned * sizeof *seed->planned;
    /* the struct, then the segments, blocks and ranges, each aligned for 8-byte fields */
    size_t at_segs = (sizeof(sim_seed) + 7) & ~(size_t)7, at_blocks = at_segs + ((segs + 7) & ~(size_t)7),
           at_planned = at_blocks + ((blocks + 7) & ~(size_t)7);
    char *m = malloc(at_planned + planned);
    if (m == NULL)
        return NULL;
    sim_seed *c = (sim_seed *)m;
    *c = *seed;
    c->segs = (const sim_seed_segment *)(m + at_segs);
    c->blocks = (const sim_seed_block *)(m + at_blocks);
    c->planned = (const sim_range *)(m + at_planned);
    if (segs)
        memcpy(m + at_segs, seed->segs, segs);
    if (blocks)
        memcpy(m + at_blocks, seed->blocks, blocks);
    if (planned)
        memcpy(m + at_planned, seed->planned, planned);
    return c;
}
