/* Deliberate breaches of the `torch` strategy's state (corrupt_torch.h), made from
 * the test side through its private types, as the async tests do. */
#include "corrupt_torch.h"

#include "sim/units.h"
#include "strategies/torch_freeset.h"
#include "strategies/torch_segments.h"
#include "strategies/torch_types.h"

static uint32_t find_block(const strategy *s, strategy_block_state st, uint64_t min_size)
{
    for (uint32_t h = 0; h < s->blocks.n_used_hw; h++)
        if (slots_valid(&s->blocks, h) && B(s, h)->state == st && B(s, h)->size >= min_size)
            return h;
    return T_NONE;
}

bool corrupt_torch(strategy *s, torch_corruption kind)
{
    uint32_t h;
    switch (kind) {
    case TORCH_CORRUPT_TILE_GAP:
        if ((h = find_block(s, BLOCK_USED, 1024)) == T_NONE)
            return false;
        B(s, h)->size -= T_MIN_BLOCK;
        return true;
    case TORCH_CORRUPT_UNMERGED_FREE: {
        if ((h = find_block(s, BLOCK_FREE, 2 * T_MIN_BLOCK)) == T_NONE)
            return false;
        uint32_t n = blk_take(s);
        if (n == T_NONE)
            return false;
        torch_pool_erase(s, h);
        tblock *b = B(s, h);
        uint64_t half = units_round_down(b->size / 2, T_MIN_BLOCK);
        blk_init(s, n, b->addr + half, b->size - half, b->seg, BLOCK_FREE);
        blk_splice(s, n, h, B(s, h)->next);
        B(s, h)->size = half;
        torch_pool_insert(s, h);
        torch_pool_insert(s, n);
        return true;
    }
    case TORCH_CORRUPT_FREE_NOT_IN_SET:
        if ((h = find_block(s, BLOCK_FREE, 0)) == T_NONE)
            return false;
        torch_fs_tree_erase(&s->blocks, &FS(s, B(s, h)->pool)->root[torch_fs_bin(B(s, h)->size)], false, h);
        return true;
    case TORCH_CORRUPT_USED_IN_SET:
        if ((h = find_block(s, BLOCK_USED, 0)) == T_NONE)
            return false;
        torch_fs_tree_insert(&s->blocks, &FS(s, B(s, h)->pool)->root[torch_fs_bin(B(s, h)->size)], false, h);
        return true;
    case TORCH_CORRUPT_WRONG_POOL:
        if (s->seg_first == T_NONE)
            return false;
        SEG(s, s->seg_first)->pool ^= 1;
        return true;
    case TORCH_CORRUPT_ALLOCATED_COUNTER:
        s->st.allocated_bytes[ST_LARGE].current += 512; /* and so the aggregate's */
        return true;
    case TORCH_CORRUPT_RESERVED_COUNTER:
        s->st.reserved_bytes[ST_LARGE].current += 512; /* and so the aggregate's */
        return true;
    case TORCH_CORRUPT_ACTIVE_COUNTER:
        s->st.active_bytes[ST_LARGE].current += 512; /* and so the aggregate's */
        return true;
    case TORCH_CORRUPT_REQUESTED_COUNTER:
        s->st.requested_bytes[ST_LARGE].current += 1; /* and so the aggregate's */
        return true;
    case TORCH_CORRUPT_INACTIVE_SPLIT:
        s->st.inactive_split_bytes[ST_LARGE].current += 512; /* and so the aggregate's */
        return true;
    case TORCH_CORRUPT_PEAK:
        s->st.allocated_bytes[ST_ALL].peak = stat_of(s->st.allocated_bytes, ST_ALL).current - 1;
        return true;
    case TORCH_CORRUPT_FREE_BYTES:
        (*FS(s, POOL_LARGE)).bytes += 512;
        return true;
    case TORCH_CORRUPT_SET_ORDER: {
        /* the second free block of a pool moves next to the first, in its bin,
         * then its key drops below the first's */
        for (unsigned p = 0; p < N_POOLS; p++) {
            if (!torch_fs_collect(FS(s, p), &s->scratch) || s->scratch.len < 2)
                continue;
            uint32_t h0 = s->scratch.h[0], h1 = s->scratch.h[1];
            tblock *lo = B(s, h0), *hi = B(s, h1);
            torch_fs_tree_erase(&s->blocks, &FS(s, p)->root[torch_fs_bin(hi->size)], false, h1);
            hi->stream = lo->stream;
            hi->size = lo->size;
            hi->addr = lo->addr + 1;
            torch_fs_tree_insert(&s->blocks, &FS(s, p)->root[torch_fs_bin(lo->size)], false, h1);
            hi->addr = lo->addr - 1;
            return true;
        }
        return false;
    }
    case TORCH_CORRUPT_WRONG_BIN: {
        if ((h = find_block(s, BLOCK_FREE, 0)) == T_NONE)
            return false;
        uint32_t *roots = (*FS(s, B(s, h)->pool)).root;
        uint32_t bin = torch_fs_bin(B(s, h)->size);
        torch_fs_tree_erase(&s->blocks, &roots[bin], false, h);
        torch_fs_tree_insert(&s->blocks, &roots[bin ^ 1], false, h);
        return true;
    }
    case TORCH_CORRUPT_BIN_BITMAP:
    case TORCH_CORRUPT_BIN_SUMMARY:
    case TORCH_CORRUPT_STREAM_COUNT:
    case TORCH_CORRUPT_STREAM_MISSING: {
        if ((h = find_block(s, BLOCK_FREE, 0)) == T_NONE)
            return false;
        tfree *f = FS(s, B(s, h)->pool);
        tstream *e = torch_fs_stream_entry(f, B(s, h)->stream);
        if (e == NULL)
            return false;
        uint32_t bin = torch_fs_bin(B(s, h)->size);
        if (kind == TORCH_CORRUPT_BIN_BITMAP)
            e->bits[bin / 64] ^= (uint64_t)1 << (bin % 64);
        else if (kind == TORCH_CORRUPT_BIN_SUMMARY)
            e->summary ^= (uint64_t)1 << 63; /* past the last word */
        else if (kind == TORCH_CORRUPT_STREAM_COUNT)
            e->n++;
        else
            torch_fs_stream_drop(f, e);
        return true;
    }
    case TORCH_CORRUPT_STREAM_ORDER:
        for (unsigned p = 0; p < N_POOLS; p++) {
            tfree *f = FS(s, p);
            if (f->n_ent < 2)
                continue;
            tstream t = f->ent[0];
            f->ent[0] = f->ent[1];
            f->ent[1] = t;
            return true;
        }
        return false;
    case TORCH_CORRUPT_TREAP_PRIORITY:
        if ((h = find_block(s, BLOCK_FREE, 0)) == T_NONE)
            return false;
        B(s, h)->pri ^= 1;
        return true;
    case TORCH_CORRUPT_DEFER_LINK:
        if (s->q_tail == T_NONE || s->q_tail == s->q_head)
            return false;
        DF(s, s->q_tail)->q_prev = T_NONE;
        return true;
    case TORCH_CORRUPT_DEFER_WAIT:
        if (s->q_head == T_NONE)
            return false;
        DF(s, s->q_head)->wait = s->n_waits + 3;
        return true;
    case TORCH_CORRUPT_HANDLE:
        if ((h = find_block(s, BLOCK_USED, 0)) == T_NONE)
            return false;
        AL(s, B(s, h)->alloc)->block = T_NONE;
        return true;
    case TORCH_CORRUPT_COUNT:
        break;
    }
    return false;
}
