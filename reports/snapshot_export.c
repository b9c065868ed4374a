/* A replay written as a PyTorch memory snapshot (snapshot_export.h). The layout and
 * the spellings (keys, "active_allocated", "large", the trace actions) are those of
 * the snapshots PyTorch's CUDACachingAllocator writes and MemoryViz.js reads
 * (pytorch/pytorch torch/utils/viz/MemoryViz.js: annotate_snapshot, MemoryView,
 * process_alloc_data). The viewer rebuilds any earlier state by undoing the trace
 * from the end state, so the two must agree exactly: every block live in `segments`
 * is one the trace allocated without freeing (or one live at the start), a block
 * is never inside a segment the trace released, and an address is not allocated
 * again before its previous block's free completed. Where the model and the
 * trace's notion of "completed" differ (PyTorch polls a deferred free's event
 * later; a synchronizing empty_cache completes it early) the export completes the
 * trace's free early rather than break that. */
#include "snapshot_export.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sim/grow.h"
#include "snapshot_export_types.h"
#include "traces/pool_id.h"

const char *snapshot_export_unsupported(const strategy_ops *ops, char *buf, size_t n)
{
    if (ops->locate != NULL)
        return NULL;
    if (ops->family == STRATEGY_FAMILY_BOUND) /* raw locates; the bound without is ideal, the lower one */
        snprintf(buf, n, "%s is a lower bound that places nothing at stable addresses, so it has no blocks to show",
                 ops->name);
    else
        snprintf(buf, n, "this strategy cannot say where it placed an allocation (no locate op), so it has no "
                         "blocks to show");
    return buf;
}

void sx_fail(snapshot_export *x, sim_status st, const char *why)
{
    if (x->st == SIM_OK) {
        x->st = st;
        x->why = why;
    }
}

/* ---------------------------------------------------------------- records */

static uint32_t rec_new(snapshot_export *x, uint64_t addr, uint64_t size, uint32_t stream, uint64_t id, uint64_t event,
                        uint32_t tag)
{
    uint32_t r;
    if (x->n_free > 0) {
        r = x->free_recs[--x->n_free];
    } else {
        if (!SIM_GROW(x->recs, x->n_recs + 1, x->cap_recs)) {
            sx_fail(x, SIM_ENOMEM, "out of memory");
            return X_NONE;
        }
        r = x->n_recs++;
    }
    x->recs[r] = (xrec){.addr = addr, .size = size, .id = id, .event = event, .tag = tag, .stream = stream,
                        .live = true, .in_window = x->writing, .owner = r, .members = 1, .head = r, .nxt = r,
                        .prv = r, .sh = STRATEGY_HANDLE_NONE};
    return r;
}

static void rec_release(snapshot_export *x, uint32_t r)
{
    x->recs[r].live = false;
    if (!SIM_GROW(x->free_recs, x->n_free + 1, x->cap_free)) {
        sx_fail(x, SIM_ENOMEM, "out of memory");
        return;
    }
    x->free_recs[x->n_free++] = r;
}

static void pending_add(snapshot_export *x, uint32_t r)
{
    if (!SIM_GROW(x->pending, x->n_pending + 1, x->cap_pending)) {
        sx_fail(x, SIM_ENOMEM, "out of memory");
        return;
    }
    x->pending[x->n_pending++] = r;
    x->recs[r].pend = x->n_pending;
}

static void pending_remove(snapshot_export *x, uint32_t r)
{
    uint32_t i = x->recs[r].pend - 1, last = x->pending[--x->n_pending];
    x->pending[i] = last;
    x->recs[last].pend = i + 1;
    x->recs[r].pend = 0;
}

/* The first of n records (stride bytes apart from base, sorted by the uint64_t at
 * their start) whose key is at least key (the segments). */
uint32_t sx_lower_u64(const void *base, size_t stride, uint32_t n, uint64_t key)
{
    uint32_t lo = 0, hi = n;
    while (lo < hi) {
        uint32_t mid = lo + (hi - lo) / 2;
        uint64_t k;
        memcpy(&k, (const unsigned char *)base + (size_t)mid * stride, sizeof k);
        if (k < key)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

/* ---------------------------------------------------------------- entries */

/* n dict entries with integer values, keys[i]: vals[i]. */
void sx_write_u64s(pickle_writer *w, const char *const *keys, const uint64_t *vals, size_t n)
{
    for (size_t i = 0; i < n; i++)
        pickle_write_key_u64(w, keys[i], vals[i]);
}

/* "frames": what the viewer shows for a block: for record r one frame of ours,
 * {filename: the trace's file, line: the alloc's event, name: its tag, else its id};
 * none for X_NONE (PyTorch writes [] when it recorded no stack). */
void sx_write_frames(snapshot_export *x, uint32_t r)
{
    pickle_writer *w = &x->pw;
    pickle_write_str(w, "frames");
    pickle_write_list(w);
    if (r != X_NONE) {
        const xrec *c = &x->recs[r];
        char name[64];
        if (c->event == 0)
            snprintf(name, sizeof name, "live at the start (id %llu)", (unsigned long long)c->id);
        else
            snprintf(name, sizeof name, "alloc of id %llu", (unsigned long long)c->id);
        pickle_write_dict(w);
        pickle_write_key_str(w, "filename", x->trace);
        pickle_write_key_u64(w, "line", c->event);
        pickle_write_key_str(w, "name", c->tag ? strtab_get(x->tags, c->tag) : name);
        pickle_write_end(w);
    }
    pickle_write_end(w);
}

void sx_write_pool(pickle_writer *w, const char *key, uint64_t pool)
{
    uint64_t a = 0, b = 0;
    pool_id_to_tuple(pool, &a, &b);
    pickle_write_str(w, key); /* a list, as the export writes every tuple */
    pickle_write_list(w);
    pickle_write_u64(w, a);
    pickle_write_u64(w, b);
    pickle_write_end(w);
}

/* A trace entry; r: the record whose frames it carries (and whose pool), X_NONE
 * for none (segments: pool is theirs). */
static void entry_pooled(snapshot_export *x, const char *action, uint64_t addr, uint64_t size, uint32_t stream,
                         uint64_t us, uint32_t r, uint64_t pool)
{
    if (!x->writing)
        return;
    pickle_writer *w = &x->pw;
    pickle_write_dict(w);
    static const char *const keys[] = {"addr", "size", "stream", "time_us"};
    const uint64_t vals[] = {addr, size, stream, us};
    pickle_write_key_str(w, "action", action);
    sx_write_u64s(w, keys, vals, 4);
    if (pool != 0)
        sx_write_pool(w, "pool_id", pool);
    if (r != X_NONE)
        sx_write_frames(x, r);
    pickle_write_end(w);
}

static void entry_of(snapshot_export *x, const char *action, uint64_t addr, uint64_t size, uint32_t stream, uint64_t us,
                     uint32_t r)
{
    entry_pooled(x, action, addr, size, stream, us, r, r != X_NONE ? x->recs[r].pool : 0);
}

void sx_entry(snapshot_export *x, const char *action, uint64_t addr, uint64_t size, uint32_t stream, uint64_t us,
              uint64_t pool)
{
    entry_pooled(x, action, addr, size, stream, us, X_NONE, pool);
}

static void complete(snapshot_export *x, uint32_t r, uint64_t us)
{
    const xrec *c = &x->recs[r];
    if (!c->omitted)
        entry_of(x, "free_completed", c->addr, c->size, c->stream, us, r);
    pending_remove(x, r);
}

/* Complete early the pending frees of blocks inside [addr, addr + size). */
void sx_complete_inside(snapshot_export *x, uint64_t addr, uint64_t size, uint64_t us)
{
    for (uint32_t i = 0; i < x->n_pending;) {
        uint32_t r = x->pending[i];
        if (x->recs[r].addr >= addr && x->recs[r].addr - addr < size) {
            complete(x, r, us);
            x->recs[r].done = true;
        } else {
            i++;
        }
    }
}

/* ---------------------------------------------------------------- open */

sim_status snapshot_export_open(const snapshot_export_config *cfg, snapshot_export **out, sim_error *err)
{
    *out = NULL;
    char why_text[256];
    const char *why = snapshot_export_unsupported(cfg->ops, why_text, sizeof why_text);
    if (why != NULL)
        return sim_error_set(err, SIM_EUSAGE, NULL, 0, 0, "--export-snapshot: %s", why);
    if (strcmp(cfg->path, "-") == 0)
        return sim_error_set(err, SIM_EUSAGE, NULL, 0, 0,
                             "--export-snapshot: the snapshot is a binary pickle; give it a file name, not -");
    snapshot_export *x = calloc(1, sizeof *x);
    strtab *tags = strtab_new();
    if (x == NULL || tags == NULL || !idmap_init(&x->ids) || !idmap_init(&x->blocks)) {
        if (x != NULL) {
            idmap_release(&x->ids);
            idmap_release(&x->blocks);
        }
        strtab_free(tags);
        free(x);
        return sim_error_set(err, SIM_ENOMEM, NULL, 0, 0, "out of memory");
    }
    x->tags = tags;
    x->ops = cfg->ops;
    x->is_torch = cfg->ops->family == STRATEGY_FAMILY_TORCH;
    x->is_planned = cfg->ops->family == STRATEGY_FAMILY_PLANNED;
    x->from_ns = cfg->from_ns;
    x->to_ns = cfg->to_ns;
    x->min_size = cfg->min_size;
    sim_status st = sim_outfile_open(&x->out, cfg->path, err);
    if (st != SIM_OK) {
        idmap_release(&x->ids);
        idmap_release(&x->blocks);
        strtab_free(x->tags);
        free(x);
        return st;
    }
    /* the start state: its segments, and its live blocks with the ids that free them */
    const sim_seed *sd = cfg->seed;
    for (uint32_t i = 0; sd != NULL && i < sd->n_segs; i++) {
        const sim_seed_segment *g = &sd->segs[i];
        sx_seg_builder sb = {.x = x, .out = &x->segs};
        for (uint32_t k = 0; k < g->n_blocks; k++) {
            const sim_seed_block *b = &sd->blocks[g->first_block + k];
            strategy_block sbk = {.addr = g->addr + b->offset, .size_bytes = b->size_bytes, .region = i,
                                  .region_addr = g->addr, .stream = g->stream,
                                  .state = b->state == SIM_SEED_USED ? BLOCK_USED
                                           : b->state == SIM_SEED_FREE ? BLOCK_FREE : BLOCK_UNMAPPED,
                                  .pool = g->small_pool ? "small" : "large", .pool_id = g->pool_id};
            sx_seg_visit(&sb, &sbk);
            if (b->state != SIM_SEED_USED || b->size_bytes == 0)
                continue;
            uint32_t r = rec_new(x, sbk.addr, b->requested_bytes, g->stream, b->id, 0, 0);
            if (r != X_NONE)
                x->recs[r].pool = g->pool_id;
            bool found = false;
            idmap_entry *e = r == X_NONE ? NULL : idmap_find_or_insert(&x->ids, b->id, &found);
            if (e == NULL)
                sx_fail(x, SIM_ENOMEM, "out of memory");
            else
                e->handle = r;
        }
    }
    sx_segs_sort(&x->segs);
    /* { "device_traces": [[ ... entries as the replay runs ... */
    pickle_write_init(&x->pw, x->out.fp);
    pickle_write_dict(&x->pw);
    pickle_write_str(&x->pw, "device_traces");
    pickle_write_list(&x->pw);
    pickle_write_list(&x->pw);
    if (x->st != SIM_OK) {
        snapshot_export_discard(x);
        return sim_error_set(err, SIM_ENOMEM, NULL, 0, 0, "out of memory");
    }
    *out = x;
    return SIM_OK;
}

/* ---------------------------------------------------------------- events */

/* ---------------------------------------------------------------- shared blocks */

/* The owner rec of the live planned block at addr, X_NONE for none. */
static uint32_t block_owner(const snapshot_export *x, uint64_t addr)
{
    const idmap_entry *b = x->is_planned ? idmap_find(&x->blocks, addr) : NULL;
    return b != NULL ? b->handle : X_NONE;
}

/* The owner's block now has `size` bytes: when that differs from what its entries
 * said, the old block is freed and one of the new size allocated at its address
 * (a snapshot has no resize), so the allocated bytes follow the replay's. */
static void block_resize(snapshot_export *x, uint32_t o, uint64_t size, uint64_t us)
{
    xrec *c = &x->recs[o];
    if (size == c->size)
        return;
    if (!c->omitted) {
        entry_of(x, "free_requested", c->addr, c->size, c->stream, us, o);
        entry_of(x, "free_completed", c->addr, c->size, c->stream, us, o);
    }
    c->size = size;
    if (!c->omitted)
        entry_of(x, "alloc", c->addr, c->size, c->stream, us, o);
}

/* A planned alloc placed in the live block of owner o (a buffer sharing another's
 * memory, design.md §3): it joins the block, which grows to the block's new size. */
static void block_join(snapshot_export *x, idmap_entry *e, uint32_t o, const sim_event *ev, const engine_tick *t,
                       const strategy_block *at, uint64_t us)
{
    uint32_t j = rec_new(x, at->addr, ev->size, ev->stream, ev->id, ev->index, 0);
    if (j == X_NONE)
        return;
    xrec *c = &x->recs[j], *w = &x->recs[o];
    c->joined = true;
    c->omitted = true; /* no entries of its own: its owner writes the block's */
    c->owner = o;
    c->sh = t->handle;
    uint32_t h = w->head; /* into the ring after the head */
    c->nxt = x->recs[h].nxt;
    c->prv = h;
    x->recs[c->nxt].prv = j;
    x->recs[h].nxt = j;
    w->members++;
    e->handle = j;
    e->flags &= ~XF_ZERO;
    block_resize(x, o, at->size_bytes, us);
}

/* A member r of a shared block is freed: returns the owner whose block is now dead
 * (the caller writes its free), X_NONE while other members still hold it (the block
 * takes the replay's new size). */
static uint32_t block_leave(snapshot_export *x, const strategy *s, uint32_t r, uint64_t us)
{
    uint32_t o = x->recs[r].owner;
    xrec *w = &x->recs[o];
    if (--w->members == 0) {
        idmap_entry *b = idmap_find(&x->blocks, w->addr);
        if (b != NULL)
            idmap_remove(&x->blocks, b);
        if (r != o)
            rec_release(x, r);
        return o;
    }
    xrec *c = &x->recs[r];
    x->recs[c->prv].nxt = c->nxt;
    x->recs[c->nxt].prv = c->prv;
    if (w->head == r)
        w->head = c->nxt;
    if (r != o) /* else the owner's rec stays: the block's entries carry its frames */
        rec_release(x, r);
    strategy_block b;
    if (x->ops->locate(s, x->recs[w->head].sh, &b) && b.addr == w->addr)
        block_resize(x, o, b.size_bytes, us);
    else
        sx_fail(x, SIM_EINTERNAL, "a shared block's live member has no block at the block's address");
    return X_NONE;
}

/* at: the block the strategy placed it in (locate), NULL for none */
static void on_alloc(snapshot_export *x, const engine_tick *t, const strategy_block *at, uint64_t us)
{
    const sim_event *ev = t->ev;
    bool found = false;
    idmap_entry *e = idmap_find_or_insert(&x->ids, ev->id, &found);
    if (e == NULL) {
        sx_fail(x, SIM_ENOMEM, "out of memory");
        return;
    }
    e->handle = X_NONE;
    e->flags = (e->flags & IDMAP_USED) | XF_ZERO;
    if (ev->size == 0)
        return;
    if (at == NULL)
        return; /* no block (nothing held): like a zero-byte allocation */
    uint32_t o = block_owner(x, at->addr);
    if (o != X_NONE) {
        block_join(x, e, o, ev, t, at, us);
        return;
    }
    if (x->n_pending > 0)
        sx_complete_inside(x, at->addr, at->size_bytes ? at->size_bytes : 1, us);
    uint32_t tag = ev->tag && ev->tag[0] ? strtab_intern(x->tags, ev->tag) : 0;
    if (ev->tag && ev->tag[0] && tag == 0) {
        sx_fail(x, SIM_ENOMEM, "out of memory");
        return;
    }
    uint32_t r = rec_new(x, at->addr, ev->size, ev->stream, ev->id, ev->index, tag);
    if (r == X_NONE)
        return;
    e->handle = r;
    e->flags &= ~XF_ZERO;
    x->recs[r].pool = at->pool_id;
    x->recs[r].omitted = ev->size < x->min_size;
    x->recs[r].sh = t->handle;
    if (x->is_planned) {
        idmap_entry *b = idmap_insert(&x->blocks, at->addr);
        if (b == NULL) {
            sx_fail(x, SIM_ENOMEM, "out of memory");
            return;
        }
        b->handle = r;
    }
    if (!x->recs[r].omitted)
        entry_of(x, "alloc", at->addr, ev->size, ev->stream, us, r);
}

/* Returns the freed block's address, X_NO_ADDR when the free names none (or a shared
 * block's member whose block stays). */
static uint64_t on_free(snapshot_export *x, const engine_tick *t, const strategy *s, uint64_t us)
{
    const sim_event *ev = t->ev;
    idmap_entry *e = idmap_find(&x->ids, ev->id);
    if (e == NULL)
        return X_NO_ADDR; /* live from before the trace, at no address the export knows */
    uint32_t r = (e->flags & XF_ZERO) ? X_NONE : e->handle;
    idmap_remove(&x->ids, e);
    if (r == X_NONE)
        return X_NO_ADDR;
    if (x->is_planned && (r = block_leave(x, s, r, us)) == X_NONE)
        return X_NO_ADDR;
    const xrec *c = &x->recs[r];
    uint64_t addr = c->addr;
    if (!c->omitted)
        entry_of(x, "free_requested", c->addr, c->size, c->stream, us, r);
    if (ev->ready_t <= ev->t || t->freed == STRATEGY_HANDLE_NONE) {
        if (!c->omitted)
            entry_of(x, "free_completed", c->addr, c->size, c->stream, us, r);
        rec_release(x, r);
        return addr;
    }
    if (!SIM_GROW(x->by_handle, (uint64_t)t->freed + 1, x->cap_handles)) {
        sx_fail(x, SIM_ENOMEM, "out of memory");
        return X_NO_ADDR;
    }
    x->by_handle[t->freed] = r + 1;
    pending_add(x, r);
    return addr;
}

/* torch: PyTorch records a deferred free's free_completed when it polls the free's
 * events, at the start of its next malloc of a non-zero size (process_events), not
 * at ready_t; a synchronize (empty_cache) completes every pending free (all). */
static void torch_poll(snapshot_export *x, bool all, uint64_t us)
{
    for (uint32_t i = 0; i < x->n_due; i++) {
        uint32_t r = x->due[i];
        if (!x->recs[r].done)
            complete(x, r, us);
        rec_release(x, r);
    }
    x->n_due = 0;
    while (all && x->n_pending > 0) {
        uint32_t r = x->pending[0];
        complete(x, r, us);
        x->recs[r].done = true; /* its due tick writes nothing */
    }
}

/* Returns the address of the block whose memory came back, X_NO_ADDR for none. */
static uint64_t on_due(snapshot_export *x, const engine_tick *t, uint64_t us)
{
    if (t->freed == STRATEGY_HANDLE_NONE || t->freed >= x->cap_handles || x->by_handle[t->freed] == 0)
        return X_NO_ADDR;
    uint32_t r = x->by_handle[t->freed] - 1;
    x->by_handle[t->freed] = 0;
    if (x->is_torch && !x->recs[r].done) {
        /* the block stays pending until the next poll (torch_poll) */
        if (!SIM_GROW(x->due, x->n_due + 1, x->cap_due)) {
            sx_fail(x, SIM_ENOMEM, "out of memory");
            return X_NO_ADDR;
        }
        x->due[x->n_due++] = r;
        return X_NO_ADDR;
    }
    bool done = x->recs[r].done; /* then the address may hold another block by now */
    if (!done)
        complete(x, r, us);
    rec_release(x, r);
    return done ? X_NO_ADDR : x->recs[r].addr;
}

/* Whether the tick took exactly one region from the device and gave nothing back
 * (taken), or gave exactly one back and took nothing, where the export may follow
 * that without a walk (sx_segs_add_region, sx_segs_drop_region): *bytes its size. */
static bool one_region(const snapshot_export *x, const engine_tick *t, bool taken, uint64_t *bytes)
{
    if (x->expandable || x->last_reserved == UINT64_MAX)
        return false;
    uint64_t allocs = t->proc.num_device_allocs - x->last_dev_allocs;
    uint64_t frees = t->proc.num_device_frees - x->last_dev_frees;
    uint64_t now = t->proc.reserved_bytes, before = x->last_reserved;
    if (taken ? allocs != 1 || frees != 0 || now <= before : allocs != 0 || frees != 1 || now >= before)
        return false;
    *bytes = taken ? now - before : before - now;
    return true;
}

static void start(snapshot_export *x, const engine_tick *t, const strategy *s)
{
    const char *path = t->run->sources[t->source].path, *slash = strrchr(path, '/');
    snprintf(x->trace, sizeof x->trace, "%s", slash ? slash + 1 : path);
    strategy_stat_value v;
    x->expandable = x->is_torch && strategy_option_find(x->ops, s, "expandable_segments", &v) &&
                    v.kind == STRATEGY_STAT_TEXT && strcmp(v.text, "True") == 0;
    x->last_reserved = UINT64_MAX; /* walk after the first event: the start state is x->segs */
    x->started = true;
}

/* The end of the window (or of the replay): the allocations left out of the
 * trace that were made in the window and are live now get their entries (as
 * made now), then the trace ends and the state is written as `segments`. */
static void close_window(snapshot_export *x, const strategy *s)
{
    uint64_t us = x->last_us;
    x->writing = true; /* a record made in the window was made while writing */
    for (uint32_t r = 0; r < x->n_recs; r++) {
        const xrec *c = &x->recs[r];
        if (!c->live || !c->omitted || !c->in_window || c->done || c->joined)
            continue;
        entry_of(x, "alloc", c->addr, c->size, c->stream, us, r);
        if (c->pend)
            entry_of(x, "free_requested", c->addr, c->size, c->stream, us, r);
    }
    pickle_writer *w = &x->pw;
    pickle_write_end(w); /* device 0's trace */
    pickle_write_end(w); /* device_traces */
    sx_index_live(x); /* the blocks' frames name their records */
    sx_write_segments(x, s);
    x->closed = true;
    x->writing = false;
}

void snapshot_export_observe(void *ctx, const engine_tick *t)
{
    snapshot_export *x = ctx;
    if (t->run->n_procs > x->procs)
        x->procs = t->run->n_procs;
    if (x->st != SIM_OK || x->procs > 1)
        return;
    const strategy *s = t->run->procs[t->process].s;
    if (!x->started)
        start(x, t, s);
    if (x->closed)
        return;
    x->writing = t->t >= x->from_ns;
    uint64_t us = t->t / 1000;
    x->last_us = us;
    bool held_changed = t->proc.reserved_bytes != x->last_reserved ||
                        t->proc.num_device_allocs != x->last_dev_allocs ||
                        t->proc.num_device_frees != x->last_dev_frees;
    const sim_event *ev = t->ev;
    uint64_t bytes = 0;
    if (x->is_torch && ev != NULL && ((ev->op == SIM_OP_ALLOC && ev->size > 0) || ev->op == SIM_OP_EMPTY_CACHE))
        torch_poll(x, ev->op == SIM_OP_EMPTY_CACHE, us);
    if (ev != NULL && ev->op == SIM_OP_ALLOC) {
        bool done = t->outcome == ENGINE_DONE;
        strategy_block b;
        bool located = done && ev->size > 0 && x->ops->locate(s, t->handle, &b);
        if (held_changed && !(located && one_region(x, t, true, &bytes) && sx_segs_add_region(x, &b, bytes, us)))
            sx_segments_update(x, s, us);
        if (done) {
            on_alloc(x, t, located ? &b : NULL, us);
        } else if (x->writing && (t->outcome == ENGINE_OOM_DROPPED || t->outcome == ENGINE_OOM_ENDED)) {
            uint64_t cap = device_get_info(t->run->dev).capacity_bytes;
            pickle_writer *w = &x->pw;
            pickle_write_dict(w);
            static const char *const keys[] = {"size", "device_free", "stream", "time_us"};
            const uint64_t vals[] = {ev->size, cap > t->device_bytes ? cap - t->device_bytes : 0, ev->stream, us};
            pickle_write_key_str(w, "action", "oom");
            sx_write_u64s(w, keys, vals, 4);
            pickle_write_end(w);
        }
    } else {
        uint64_t at = X_NO_ADDR;
        if (ev == NULL)
            at = on_due(x, t, us);
        else if (ev->op == SIM_OP_FREE && t->outcome == ENGINE_DONE)
            at = on_free(x, t, s, us);
        if (held_changed &&
            !(at != X_NO_ADDR && one_region(x, t, false, &bytes) && sx_segs_drop_region(x, at, bytes, us)))
            sx_segments_update(x, s, us);
    }
    x->last_reserved = t->proc.reserved_bytes;
    x->last_dev_allocs = t->proc.num_device_allocs;
    x->last_dev_frees = t->proc.num_device_frees;
    /* the first tick after the window is its last: the state the observer sees
     * is after the tick's event, so the trace holds that event too */
    if (t->t > x->to_ns)
        close_window(x, s);
    if (!pickle_write_ok(&x->pw))
        sx_fail(x, SIM_EIO, pickle_write_error(&x->pw));
}

static void release(snapshot_export *x)
{
    idmap_release(&x->ids);
    idmap_release(&x->blocks);
    free(x->recs);
    free(x->free_recs);
    free(x->by_handle);
    free(x->pending);
    free(x->due);
    free(x->segs.v);
    free(x->next_segs.v);
    free(x->by_addr);
    strtab_free(x->tags);
    free(x);
}

sim_status snapshot_export_finish(snapshot_export *x, const sim_run *run, sim_error *err)
{
    if (x->procs > 1 || run->n_procs > 1) {
        uint32_t n = run->n_procs > x->procs ? run->n_procs : x->procs;
        snapshot_export_discard(x);
        return sim_error_set(err, SIM_EUSAGE, NULL, 0, 0,
                             "--export-snapshot: the replay has %u processes, and a PyTorch snapshot holds one "
                             "program's allocator; export one process (one trace, without \"proc\" names)", n);
    }
    const strategy *s = run->n_procs == 1 ? run->procs[0].s : NULL;
    if (x->trace[0] == '\0' && run->n_sources > 0) { /* no event: the start state only */
        const char *slash = strrchr(run->sources[0].path, '/');
        snprintf(x->trace, sizeof x->trace, "%s", slash ? slash + 1 : run->sources[0].path);
    }
    pickle_writer *w = &x->pw;
    if (!x->closed)
        close_window(x, s);
    sx_write_settings(x, s);
    pickle_write_end(w);
    pickle_write_finish(w);
    if (x->st == SIM_OK && !pickle_write_ok(w))
        sx_fail(x, SIM_EIO, pickle_write_error(w));
    if (x->st != SIM_OK) {
        sim_status st = x->st;
        const char *why = x->why;
        char path[sizeof x->out.path];
        snprintf(path, sizeof path, "%s", x->out.path);
        snapshot_export_discard(x);
        return sim_error_set(err, st, path, 0, 0, "--export-snapshot: %s", why);
    }
    sim_status st = sim_outfile_close(&x->out, true, err);
    release(x);
    return st;
}

void snapshot_export_discard(snapshot_export *x)
{
    if (x == NULL)
        return;
    sim_outfile_close(&x->out, false, NULL);
    release(x);
}
