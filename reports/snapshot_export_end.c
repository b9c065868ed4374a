/* The export's end state (`segments`) and `allocator_settings`
 * (snapshot_export_types.h). */
#include <stdlib.h>
#include <string.h>

#include "snapshot_export_types.h"

static bool pending_at(const snapshot_export *x, uint64_t addr)
{
    for (uint32_t i = 0; i < x->n_pending; i++)
        if (x->recs[x->pending[i]].addr == addr)
            return true;
    return false;
}

/* A block's state as the trace tells it: pending only while its free has not completed. */
static const char *block_state(const snapshot_export *x, const strategy_block *b)
{
    if (b->state == BLOCK_USED)
        return "active_allocated";
    return b->state == BLOCK_PENDING && pending_at(x, b->addr) ? "active_pending_free" : "inactive";
}

static int by_addr_cmp(const void *a, const void *b)
{
    uint64_t x = ((const xlive *)a)->addr, y = ((const xlive *)b)->addr;
    return x < y ? -1 : x > y;
}

/* x->by_addr: the records still live (or pending, not completed early) by address. */
void sx_index_live(snapshot_export *x)
{
    uint8_t *dead = calloc(x->n_recs ? x->n_recs : 1, 1);
    x->by_addr = malloc((x->n_recs ? x->n_recs : 1) * sizeof *x->by_addr);
    if (dead == NULL || x->by_addr == NULL) {
        free(dead);
        sx_fail(x, SIM_ENOMEM, "out of memory");
        return;
    }
    for (uint32_t i = 0; i < x->n_free; i++)
        dead[x->free_recs[i]] = 1;
    for (uint32_t r = 0; r < x->n_recs; r++)
        if (!dead[r] && !(x->recs[r].pend && x->recs[r].done) && !x->recs[r].joined)
            x->by_addr[x->n_by_addr++] = (xlive){x->recs[r].addr, r};
    free(dead);
    qsort(x->by_addr, x->n_by_addr, sizeof *x->by_addr, by_addr_cmp);
}

/* The record of the live block at addr, X_NONE for none. */
static uint32_t rec_at(const snapshot_export *x, uint64_t addr)
{
    uint32_t lo = 0, hi = x->n_by_addr;
    while (lo < hi) {
        uint32_t mid = lo + (hi - lo) / 2;
        if (x->by_addr[mid].addr < addr)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo < x->n_by_addr && x->by_addr[lo].addr == addr ? x->by_addr[lo].r : X_NONE;
}

/* The end state is written in two walks: the first finds the segments (sx_seg_builder,
 * which numbers the blocks of each), the second writes each segment as its first
 * block comes and its blocks after it, so no list of blocks is kept. */
typedef struct end_writer {
    snapshot_export *x;
    xsegs *segs;
    uint32_t k;     /* the next segment to write */
    uint64_t index; /* blocks visited */
} end_writer;

static void segment_head(snapshot_export *x, const xseg *g)
{
    pickle_writer *w = &x->pw;
    pickle_write_dict(w);
    static const char *const keys[] = {"device", "address", "total_size", "allocated_size", "active_size",
                                       "requested_size", "stream"};
    const uint64_t vals[] = {0, g->addr, g->size, g->allocated, g->active, g->requested, g->stream};
    sx_write_u64s(w, keys, vals, 7);
    pickle_write_key_str(w, "segment_type", g->small ? "small" : "large");
    sx_write_pool(w, "segment_pool_id", g->pool); /* (0, 0): PyTorch's default pool */
    pickle_write_key_bool(w, "is_expandable", x->expandable);
    pickle_write_str(w, "frames");
    pickle_write_list(w);
    pickle_write_end(w);
    pickle_write_str(w, "blocks");
    pickle_write_list(w);
}

/* The sums of a segment's header: allocated, active (allocated or pending free), requested. */
static int sums_visit(void *ctx, const strategy_block *b)
{
    end_writer *e = ctx;
    uint64_t i = e->index++;
    while (e->k < e->segs->n && i >= e->segs->v[e->k].first + e->segs->v[e->k].count)
        e->k++;
    if (e->k == e->segs->n || i < e->segs->v[e->k].first)
        return 0;
    xseg *g = &e->segs->v[e->k];
    bool active = strcmp(block_state(e->x, b), "inactive") != 0;
    g->allocated += b->state == BLOCK_USED ? b->size_bytes : 0;
    g->active += active ? b->size_bytes : 0;
    g->requested += active ? b->requested_bytes : 0;
    return 0;
}

static int write_visit(void *ctx, const strategy_block *b)
{
    end_writer *e = ctx;
    snapshot_export *x = e->x;
    pickle_writer *w = &x->pw;
    uint64_t i = e->index++;
    if (e->k == e->segs->n || i < e->segs->v[e->k].first)
        return 0; /* an unmapped block between mapped ranges */
    const xseg *g = &e->segs->v[e->k];
    if (i == g->first)
        segment_head(x, g);
    const char *st = block_state(x, b);
    pickle_write_dict(w);
    static const char *const keys[] = {"address", "size", "requested_size"};
    const uint64_t vals[] = {b->addr, b->size_bytes, strcmp(st, "inactive") != 0 ? b->requested_bytes : 0};
    sx_write_u64s(w, keys, vals, 3);
    pickle_write_key_str(w, "state", st);
    sx_write_frames(x, strcmp(st, "inactive") != 0 ? rec_at(x, b->addr) : X_NONE);
    pickle_write_end(w);
    if (i + 1 == g->first + g->count) {
        pickle_write_end(w); /* blocks */
        pickle_write_end(w); /* the segment */
        e->k++;
    }
    return 0;
}

void sx_write_segments(snapshot_export *x, const strategy *s)
{
    pickle_write_str(&x->pw, "segments");
    pickle_write_list(&x->pw);
    xsegs segs = {0};
    if (s != NULL) {
        sx_seg_builder sb = {.x = x, .out = &segs};
        if (x->ops->walk(s, sx_seg_visit, &sb) < 0)
            sx_fail(x, SIM_ENOMEM, "out of memory");
        if (x->st == SIM_OK && segs.n > 0) {
            end_writer e = {.x = x, .segs = &segs};
            if (x->ops->walk(s, sums_visit, &e) < 0)
                sx_fail(x, SIM_ENOMEM, "out of memory");
            e = (end_writer){.x = x, .segs = &segs};
            if (x->st == SIM_OK && x->ops->walk(s, write_visit, &e) < 0)
                sx_fail(x, SIM_ENOMEM, "out of memory");
        }
    }
    free(segs.v);
    pickle_write_end(&x->pw);
}

/* PyTorch's allocator_settings keys: under torch the effective alloc-conf, else
 * PyTorch's defaults (the strategy is named under gpusim_strategy). */
void sx_write_settings(snapshot_export *x, const strategy *s)
{
    pickle_writer *w = &x->pw;
    strategy_stat_value conf = {0}, mss = {0}, gc = {0};
    if (x->is_torch && s != NULL) {
        strategy_option_find(x->ops, s, "alloc_conf", &conf);
        strategy_option_find(x->ops, s, "max_split_size_mb", &mss);
        strategy_option_find(x->ops, s, "garbage_collection_threshold", &gc);
    }
    int64_t max_split = -1;
    if (mss.kind == STRATEGY_STAT_TEXT && mss.text[0] >= '0' && mss.text[0] <= '9')
        max_split = (int64_t)(strtoull(mss.text, NULL, 10) << 20);
    double gct = gc.kind == STRATEGY_STAT_TEXT && gc.text[0] ? strtod(gc.text, NULL) : 0.0;
    pickle_write_str(w, "allocator_settings");
    pickle_write_dict(w);
    pickle_write_key_str(w, "PYTORCH_CUDA_ALLOC_CONF", conf.kind == STRATEGY_STAT_TEXT ? conf.text : "");
    pickle_write_key_int(w, "max_split_size", max_split);
    pickle_write_str(w, "garbage_collection_threshold");
    pickle_write_float(w, gct);
    pickle_write_key_bool(w, "expandable_segments", x->expandable);
    pickle_write_key_str(w, "gpusim_strategy", x->ops->name);
    pickle_write_end(w);
}
