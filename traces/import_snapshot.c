/* PyTorch memory snapshot → native events. */
#include "import_snapshot.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "import_snapshot_pools.h"
#include "import_snapshot_rebuild.h"
#include "sim/buf.h"
#include "sim/grow.h"
#include "sim/units.h"

/* live-map values: a = id, b = index of the free event in d->ev + 1 (0: no free yet), c = record index */

static bool is_active_state(const char *s)
{
    return strcmp(s, "active_allocated") == 0 || strcmp(s, "active_pending_free") == 0 ||
           strcmp(s, "active_awaiting_free") == 0;
}

/* An alloc entry's tag: its address, and where the program asked for it when the
 * entry has frames (innermost first): the innermost Python frame ("0x7f... at
 * model.py:42 in forward"; C++ frames of the allocator and the binding come first and
 * say nothing to the user). The export shows it as the block's frame. */
static void alloc_tag(const json_value *e, uint64_t addr, char *tag, size_t cap)
{
    int n = snprintf(tag, cap, "0x%" PRIx64, addr);
    const json_value *fr = json_get(e, "frames");
    for (uint32_t k = 0; fr && fr->type == JSON_ARRAY && k < fr->len; k++) {
        const json_value *f = &fr->u.items[k];
        const json_value *file = f->type == JSON_OBJECT ? json_get(f, "filename") : NULL;
        const json_value *name = f->type == JSON_OBJECT ? json_get(f, "name") : NULL;
        const json_value *line = f->type == JSON_OBJECT ? json_get(f, "line") : NULL;
        if (file == NULL || file->type != JSON_STRING || file->len < 3 ||
            strcmp(file->u.str + file->len - 3, ".py") != 0)
            continue;
        const char *base = strrchr(file->u.str, '/');
        uint64_t ln = 0;
        if (line && line->type == JSON_NUMBER && json_to_u64(line, UINT64_MAX, &ln) != JSON_INT_OK)
            ln = 0;
        snprintf(tag + n, cap - (size_t)n, " at %s:%" PRIu64 " in %s", base ? base + 1 : file->u.str, ln,
                 name && name->type == JSON_STRING ? name->u.str : "?");
        return;
    }
}

/* A stream value: cudaStream_t as int64 (or as an unsigned pointer above 2^63). */
static sim_status get_stream(imp_doc *d, const json_value *o, const imp_loc *l, uint32_t *out)
{
    int64_t s = 0;
    const json_value *v = json_get(o, "stream");
    if (v == NULL || v->type == JSON_NULL) {
        *out = 0;
        return SIM_OK;
    }
    uint64_t u = 0;
    if (v->type == JSON_NUMBER && json_to_u64(v, UINT64_MAX, &u) == JSON_INT_OK) {
        s = (int64_t)u;
    } else {
        sim_status st = imp_get_i64(d, o, "stream", false, &s, NULL, l);
        if (st != SIM_OK)
            return st;
    }
    *out = imp_stream(d, s);
    if (*out == UINT32_MAX)
        return sim_error_set(d->err, SIM_ENOMEM, d->path, 0, 0, "out of memory");
    return SIM_OK;
}

/* allocator_settings → a PYTORCH_CUDA_ALLOC_CONF string, and the rounding rules
 * the rebuild needs. Keys read: max_split_size, garbage_collection_threshold,
 * expandable_segments, roundup_power2_divisions, PYTORCH_CUDA_ALLOC_CONF /
 * PYTORCH_ALLOC_CONF; knowingly ignored (nothing the replay models):
 * pinned_num_register_threads, release_lock_on_cudamalloc,
 * pinned_use_cuda_host_register, graph_capture_record_stream_reuse; others too. */
static sim_status alloc_conf(imp_doc *d, const json_value *root, rb_settings *rs)
{
    const json_value *s = root->type == JSON_OBJECT ? json_get(root, "allocator_settings") : NULL;
    imp_loc l = {"allocator_settings", UINT64_MAX};
    if (s == NULL || s->type == JSON_NULL)
        return SIM_OK;
    if (s->type != JSON_OBJECT)
        return imp_fail(d, s, &l, "must be an object, not %s", json_type_name(s->type));
    d->has_settings = true;
    sim_buf b;
    sim_buf_init(&b);
    const json_value *v;
    if ((v = json_get(s, "max_split_size")) != NULL && v->type == JSON_NUMBER) {
        uint64_t mss = 0;
        /* -1 (or SIZE_MAX) means unlimited, the default */
        if (json_to_u64(v, UINT64_MAX, &mss) == JSON_INT_OK && mss != 0 && mss != UINT64_MAX) {
            sim_buf_printf(&b, "%smax_split_size_mb:%" PRIu64, b.len ? "," : "", mss >> 20);
            rs->max_split_size = mss;
        }
    }
    if ((v = json_get(s, "garbage_collection_threshold")) != NULL && v->type == JSON_NUMBER &&
        json_to_double(v) > 0.0)
        sim_buf_printf(&b, "%sgarbage_collection_threshold:%.*s", b.len ? "," : "", (int)v->len, v->u.num);
    if ((v = json_get(s, "expandable_segments")) != NULL && v->type == JSON_TRUE)
        sim_buf_printf(&b, "%sexpandable_segments:True", b.len ? "," : "");
    if ((v = json_get(s, "roundup_power2_divisions")) != NULL && v->type == JSON_OBJECT) {
        bool any = false;
        for (uint32_t i = 0; i < v->len; i++) {
            uint64_t x = 0;
            const json_value *m = &v->u.members[i].value;
            if (m->type == JSON_NUMBER && json_to_u64(m, UINT64_MAX, &x) == JSON_INT_OK && x != 0) {
                any = true;
                /* keys are the interval starts in MiB: "1", "2", "4", ... */
                uint64_t mib = strtoull(v->u.members[i].key, NULL, 10);
                if (mib && (mib & (mib - 1)) == 0 && mib <= ((uint64_t)1 << 15) && x <= UINT32_MAX)
                    rs->divisions[63 - __builtin_clzll(mib)] = (uint32_t)x;
            }
        }
        if (any) {
            sim_buf_printf(&b, "%sroundup_power2_divisions:[", b.len ? "," : "");
            for (uint32_t i = 0; i < v->len; i++) {
                const json_value *m = &v->u.members[i].value;
                if (m->type != JSON_NUMBER)
                    continue;
                sim_buf_printf(&b, "%s%s:%.*s", i ? "," : "", v->u.members[i].key, (int)m->len, m->u.num);
            }
            sim_buf_puts(&b, "]");
        }
    }
    if (b.len == 0) {
        /* no recognised field differs from the defaults: keep the environment string if any */
        const json_value *env = json_get(s, "PYTORCH_CUDA_ALLOC_CONF");
        if (env == NULL || env->type != JSON_STRING || !env->u.str[0])
            env = json_get(s, "PYTORCH_ALLOC_CONF"); /* the name PyTorch uses since 2.9 */
        if (env && env->type == JSON_STRING && env->u.str[0])
            sim_buf_puts(&b, env->u.str);
    }
    if (b.oom) {
        sim_buf_release(&b);
        return sim_error_set(d->err, SIM_ENOMEM, d->path, 0, 0, "out of memory");
    }
    d->alloc_conf = b.len ? b.data : NULL;
    if (b.len == 0)
        sim_buf_release(&b);
    return SIM_OK;
}

typedef struct seg_block {
    uint64_t addr, size;  /* size: requested_size, else the block's size */
    uint64_t block_size;  /* the block's own (rounded) size */
    uint32_t stream;
    bool pending;         /* active_pending_free: its free is requested, not completed */
} seg_block;

typedef struct seg_state {
    seg_block *blocks;    /* active blocks of the chosen device, at the end */
    size_t n, cap;
    uint64_t reserved;    /* sum of total_size */
    bool present;
    /* the device's final segments and all their blocks, for the rebuild */
    rb_segment *segs;
    size_t n_segs, cap_segs;
    rb_block *all;
    size_t n_all, cap_all;
} seg_state;

static int end_block_cmp(const void *a, const void *b)
{
    const input_end_block *x = a, *y = b;
    if (x->segment != y->segment)
        return x->segment < y->segment ? -1 : 1;
    return x->offset < y->offset ? -1 : (x->offset > y->offset);
}

static int addr_cmp(const void *a, const void *b)
{
    const rb_addr *x = a, *y = b;
    if (x->addr != y->addr)
        return x->addr < y->addr ? -1 : 1;
    return x->at < y->at ? -1 : (x->at > y->at);
}

static int block_cmp(const void *a, const void *b)
{
    const seg_block *x = a, *y = b;
    return x->addr < y->addr ? -1 : (x->addr > y->addr);
}

static sim_status read_segments(imp_doc *d, const json_value *segs, int64_t device, seg_state *ss,
                                uint64_t *blocks_per_dev, uint32_t n_dev_slots)
{
    imp_loc l = {"segments", 0};
    sim_status st;
    for (uint32_t i = 0; i < segs->len; i++) {
        const json_value *s = &segs->u.items[i];
        l.i = i;
        if (s->type != JSON_OBJECT)
            return imp_fail(d, s, &l, "a segment must be an object, not %s", json_type_name(s->type));
        int64_t dev = 0;
        uint64_t base = 0, total = 0;
        bool has_base = false;
        if ((st = imp_get_i64(d, s, "device", false, &dev, NULL, &l)) != SIM_OK ||
            (st = imp_get_u64(d, s, "address", false, UINT64_MAX, &base, &has_base, &l)) != SIM_OK ||
            (st = imp_get_u64(d, s, "total_size", true, SIM_MAX_SIZE, &total, NULL, &l)) != SIM_OK)
            return st;
        const json_value *blocks = json_get(s, "blocks");
        if (blocks == NULL)
            return imp_fail(d, s, &l, "missing \"blocks\"");
        if (blocks->type != JSON_ARRAY)
            return imp_fail(d, blocks, &l, "\"blocks\" must be an array, not %s", json_type_name(blocks->type));
        if (blocks_per_dev && dev >= 0 && (uint64_t)dev < n_dev_slots)
            blocks_per_dev[dev] += blocks->len;
        if (dev != device)
            continue;
        ss->reserved += total;
        uint32_t stream = 0;
        if ((st = get_stream(d, s, &l, &stream)) != SIM_OK)
            return st;
        /* segment_type "small" / "large"; is_expandable; segment_pool_id (a 2-tuple,
         * (0, 0) = the default pool; traces/pool_id.h). allocated_size, active_size, requested_size
         * and frames are derived or informational and knowingly ignored. */
        const char *type = NULL;
        if ((st = imp_get_str(d, s, "segment_type", false, &type, &l)) != SIM_OK)
            return st;
        const json_value *xp = json_get(s, "is_expandable");
        if (xp && xp->type != JSON_TRUE && xp->type != JSON_FALSE && xp->type != JSON_NULL)
            return imp_fail(d, xp, &l, "\"is_expandable\" must be a boolean, not %s", json_type_name(xp->type));
        uint64_t pool_id = 0;
        bool has_pool = false;
        if ((st = snap_pool_get(d, s, "segment_pool_id", &l, &pool_id, &has_pool)) != SIM_OK)
            return st;
        if (!SIM_GROW(ss->segs, ss->n_segs + 1, ss->cap_segs))
            return sim_error_set(d->err, SIM_ENOMEM, d->path, 0, 0, "out of memory");
        ss->segs[ss->n_segs++] = (rb_segment){
            .addr = base, .size = total, .stream = stream,
            .small_pool = type ? strcmp(type, "small") == 0 : total == ((uint64_t)2 << 20),
            .expandable = xp && xp->type == JSON_TRUE, .pool_id = pool_id, .first_block = ss->n_all,
            .n_blocks = blocks->len};
        uint64_t addr = base;
        for (uint32_t k = 0; k < blocks->len; k++) {
            const json_value *b = &blocks->u.items[k];
            if (b->type != JSON_OBJECT)
                return imp_fail(d, b, &l, "blocks[%u] must be an object, not %s", k, json_type_name(b->type));
            uint64_t size = 0, req = 0, a = addr;
            bool has_req = false;
            const char *state = NULL;
            if ((st = imp_get_u64(d, b, "size", true, SIM_MAX_SIZE, &size, NULL, &l)) != SIM_OK ||
                (st = imp_get_u64(d, b, "requested_size", false, SIM_MAX_SIZE, &req, &has_req, &l)) != SIM_OK ||
                (st = imp_get_u64(d, b, "address", false, UINT64_MAX, &a, NULL, &l)) != SIM_OK ||
                (st = imp_get_str(d, b, "state", true, &state, &l)) != SIM_OK)
                return st;
            addr = a + size;
            if (!SIM_GROW(ss->all, ss->n_all + 1, ss->cap_all))
                return sim_error_set(d->err, SIM_ENOMEM, d->path, 0, 0, "out of memory");
            ss->all[ss->n_all++] = (rb_block){a, size, has_req ? req : 0, is_active_state(state),
                                              is_active_state(state) && strcmp(state, "active_allocated") != 0};
            if (strcmp(state, "active_allocated") == 0)
                d->rec.allocated_end += size;
            if (!is_active_state(state))
                continue;
            if (!SIM_GROW(ss->blocks, ss->n + 1, ss->cap))
                return sim_error_set(d->err, SIM_ENOMEM, d->path, 0, 0, "out of memory");
            ss->blocks[ss->n++] =
                (seg_block){a, has_req && req ? req : size, size, stream, strcmp(state, "active_pending_free") == 0};
        }
    }
    return SIM_OK;
}

typedef struct live_list {
    rb_live *v;
    size_t n, cap;
} live_list;

/* A synthetic allocation live at the start (the ring buffer lost its alloc);
 * block_size is its block's size when segments tell it, else 0 (then freed_at is
 * the index of the event that frees it). */
static uint64_t pre_alloc(imp_doc *d, live_list *ll, uint64_t addr, uint64_t size, uint64_t block_size, uint32_t stream,
                          uint64_t freed_at)
{
    imp_event *p = imp_push_pre(d, size);
    if (p == NULL || !SIM_GROW(ll->v, ll->n + 1, ll->cap))
        return 0;
    p->stream = stream;
    char tag[32];
    snprintf(tag, sizeof tag, "0x%" PRIx64, addr);
    if ((p->str = imp_str(d, tag)) == 0)
        return 0;
    ll->v[ll->n++] = (rb_live){
        .addr = addr, .requested = size, .size = block_size, .id = p->id, .stream = stream, .freed_at = freed_at};
    return p->id;
}

#define MAX_DEVICES 1024u

typedef struct live_seg {
    uint64_t base, size;
    uint32_t number;
} live_seg;

/* The live recorded segment holding addr, or NULL (binary search; v sorted by base). */
static const live_seg *seg_at(const live_seg *v, size_t n, uint64_t addr)
{
    size_t lo = 0, hi = n;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (v[mid].base <= addr)
            lo = mid + 1;
        else
            hi = mid;
    }
    if (lo == 0 || addr - v[lo - 1].base >= v[lo - 1].size)
        return NULL;
    return &v[lo - 1];
}

/* The final segments' blocks in the numbering the trace's segment events lead to
 * (v: the segments live after the last entry), for the end-state comparison; none
 * when a final segment is expandable (a snapshot records its mapped ranges only). */
static bool end_blocks(imp_doc *d, const seg_state *ss, const live_seg *v, size_t n)
{
    for (size_t i = 0; i < ss->n_segs; i++)
        if (ss->segs[i].expandable)
            return true;
    d->end_blocks = malloc((ss->n_all ? ss->n_all : 1) * sizeof *d->end_blocks);
    if (d->end_blocks == NULL)
        return false;
    size_t nb = 0;
    for (size_t i = 0; i < ss->n_segs; i++) {
        const rb_segment *g = &ss->segs[i];
        const live_seg *at = seg_at(v, n, g->addr);
        uint32_t number = at && at->base == g->addr ? at->number : UINT32_MAX;
        for (size_t k = g->first_block; k < g->first_block + g->n_blocks; k++) {
            const rb_block *b = &ss->all[k];
            d->end_blocks[nb++] = (input_end_block){.segment = number,
                                                    .offset = b->addr - g->addr,
                                                    .size = b->size,
                                                    .state = b->pending_free ? INPUT_BLOCK_PENDING_FREE
                                                             : b->active     ? INPUT_BLOCK_ALLOCATED
                                                                             : INPUT_BLOCK_INACTIVE};
        }
    }
    qsort(d->end_blocks, nb, sizeof *d->end_blocks, end_block_cmp);
    d->rec.end_blocks = d->end_blocks;
    d->rec.n_end_blocks = nb;
    return true;
}

/* Follow the recorded segments forward from the start state, and note for every
 * alloc the segment (numbered as input_recorded says) and offset it landed at.
 * Allocations in expandable ranges (segment_map) stay unknown. At the end, number
 * the final segments' blocks the same way (end_blocks). */
static bool follow_placements(imp_doc *d, const rb_seg_event *sev, size_t n_sev, const seg_state *ss)
{
    size_t cap = d->seed.n_segs + n_sev + 1, n = 0;
    live_seg *v = malloc(cap * sizeof *v);
    if (v == NULL)
        return false;
    for (uint32_t i = 0; i < d->seed.n_segs; i++)
        if (!d->seed.segs[i].expandable)
            v[n++] = (live_seg){d->seed.segs[i].addr, d->seed.segs[i].size_bytes, i};
    uint32_t next = d->seed.n_segs;
    size_t j = 0;
    for (size_t k = 0; k <= d->n; k++) { /* k == d->n: the segment entries after the last event */
        for (; j < n_sev && sev[j].next_event <= k; j++) {
            if (sev[j].action == RB_SEG_ALLOC) {
                /* insert in base order: O(log n) to find, one memmove */
                size_t lo = 0, hi = n;
                while (lo < hi) {
                    size_t mid = lo + (hi - lo) / 2;
                    if (v[mid].base < sev[j].addr)
                        lo = mid + 1;
                    else
                        hi = mid;
                }
                memmove(&v[lo + 1], &v[lo], (n - lo) * sizeof *v);
                v[lo] = (live_seg){sev[j].addr, sev[j].size, next++};
                n++;
            } else if (sev[j].action == RB_SEG_FREE) {
                for (size_t q = 0; q < n; q++)
                    if (v[q].base == sev[j].addr) {
                        memmove(&v[q], &v[q + 1], (n - q - 1) * sizeof *v);
                        n--;
                        break;
                    }
            }
        }
        if (k == d->n)
            break;
        imp_event *e = &d->ev[k];
        e->place_seg = UINT32_MAX;
        if (e->op != SIM_OP_ALLOC)
            continue;
        const live_seg *g = seg_at(v, n, e->addr);
        if (g != NULL) {
            e->place_seg = g->number;
            e->place_off = e->addr - g->base;
        }
    }
    bool ok = end_blocks(d, ss, v, n);
    free(v);
    if (!ok)
        return false;
    d->has_placement = true;
    return true;
}

sim_status import_snapshot(const json_value *root, const input_options *opt, imp_doc *d)
{
    imp_loc top = {NULL, 0};
    const json_value *segs = NULL, *traces = NULL;
    if (root->type == JSON_ARRAY) {
        segs = root; /* torch.cuda.memory_snapshot(): the segments alone */
    } else if (root->type == JSON_OBJECT) {
        segs = json_get(root, "segments");
        traces = json_get(root, "device_traces");
        if (segs == NULL && traces == NULL)
            return imp_fail(d, root, &top, "neither \"segments\" nor \"device_traces\" (is this a PyTorch memory "
                                           "snapshot?)");
    } else {
        return imp_fail(d, root, &top, "a snapshot must be an object, not %s", json_type_name(root->type));
    }
    if (segs && segs->type == JSON_NULL)
        segs = NULL;
    if (segs && segs->type != JSON_ARRAY)
        return imp_fail(d, segs, &top, "\"segments\" must be an array, not %s", json_type_name(segs->type));
    if (traces && traces->type == JSON_NULL)
        traces = NULL;
    if (traces && traces->type != JSON_ARRAY)
        return imp_fail(d, traces, &top, "\"device_traces\" must be an array, not %s", json_type_name(traces->type));
    if (traces)
        for (uint32_t i = 0; i < traces->len; i++)
            if (traces->u.items[i].type != JSON_ARRAY) {
                imp_loc l = {"device_traces", i};
                return imp_fail(d, &traces->u.items[i], &l, "must be an array of trace entries, not %s",
                                json_type_name(traces->u.items[i].type));
            }
    rb_settings rs = {.max_split_size = UINT64_MAX};
    sim_status st = alloc_conf(d, root, &rs);
    if (st != SIM_OK)
        return st;
    /* the device: --device, else the one with most trace entries, else most blocks */
    seg_state ss = {0};
    live_list ll = {0};
    rb_seg_event *sev = NULL;
    rb_addr *allocs = NULL;
    size_t n_sev = 0, cap_sev = 0;
    uint64_t *blocks_per_dev = calloc(MAX_DEVICES, sizeof *blocks_per_dev);
    imp_map live;
    imp_map_init(&live);
    if (blocks_per_dev == NULL)
        return sim_error_set(d->err, SIM_ENOMEM, d->path, 0, 0, "out of memory");
    int64_t device = 0;
    if (segs && (st = read_segments(d, segs, -2, &ss, blocks_per_dev, MAX_DEVICES)) != SIM_OK)
        goto done;
    uint32_t n_traces = traces ? traces->len : 0;
    /* the devices the file holds: "0 (97 entries, 9 blocks), 1 (...)" */
    char devs[256] = "";
    uint32_t n_devs = 0;
    for (uint32_t i = 0; i < MAX_DEVICES; i++) {
        uint64_t entries = i < n_traces ? traces->u.items[i].len : 0;
        if (entries == 0 && blocks_per_dev[i] == 0)
            continue;
        size_t used = strlen(devs);
        if (used + 64 < sizeof devs)
            snprintf(devs + used, sizeof devs - used, "%s%u (%" PRIu64 " entries, %" PRIu64 " blocks)",
                     n_devs ? ", " : "", i, entries, blocks_per_dev[i]);
        n_devs++;
    }
    if (opt && opt->device >= 0) {
        device = opt->device;
        if ((uint64_t)device >= n_traces && ((uint64_t)device >= MAX_DEVICES || blocks_per_dev[device] == 0)) {
            st = sim_error_set(d->err, SIM_EUSAGE, d->path, 0, 0,
                               "--device=%" PRId64 ": the snapshot has no trace or segments for that device (it "
                               "holds: %s)", device, n_devs ? devs : "nothing");
            goto done;
        }
    } else {
        uint64_t best = 0;
        for (uint32_t i = 0; i < n_traces; i++)
            if (traces->u.items[i].len > best) {
                best = traces->u.items[i].len;
                device = i;
            }
        if (best == 0)
            for (uint32_t i = 0; i < MAX_DEVICES; i++)
                if (blocks_per_dev[i] > best) {
                    best = blocks_per_dev[i];
                    device = i;
                }
    }
    if (n_devs > 1)
        imp_warn(d, "the snapshot holds %u devices: %s; device %" PRId64 " is replayed (--device=N picks another)",
                 n_devs, devs, device);
    ss.present = segs != NULL;
    ss.reserved = 0;
    d->rec.has_allocated_end = ss.present;
    d->rec.allocated_end = 0;
    if (segs && (st = read_segments(d, segs, device, &ss, NULL, 0)) != SIM_OK)
        goto done;
    const json_value *tr = (uint64_t)device < n_traces ? &traces->u.items[device] : NULL;
    char lname[48];
    snprintf(lname, sizeof lname, "device_traces[%" PRId64 "]", device);
    imp_loc l = {lname, 0};
    uint64_t prev_t = 0, clamped = 0, unknown = 0, ooms = 0, pending_end = 0;
    int64_t resv_delta = 0, resv_max_delta = 0;
    uint64_t n_entries = tr ? tr->len : 0;
    for (uint64_t i = 0; i < n_entries; i++) {
        const json_value *e = &tr->u.items[i];
        l.i = i;
        if (e->type != JSON_OBJECT) {
            st = imp_fail(d, e, &l, "a trace entry must be an object, not %s", json_type_name(e->type));
            goto done;
        }
        const char *action = NULL;
        uint64_t t_us = 0, addr = 0, size = 0;
        bool has_t = false;
        if ((st = imp_get_str(d, e, "action", true, &action, &l)) != SIM_OK ||
            (st = imp_get_u64(d, e, "time_us", false, UINT64_MAX / 1000, &t_us, &has_t, &l)) != SIM_OK)
            goto done;
        uint64_t t = has_t ? t_us * 1000 : prev_t;
        if (t < prev_t) {
            clamped++;
            t = prev_t;
        }
        prev_t = t;
        bool is_alloc = strcmp(action, "alloc") == 0, is_req = strcmp(action, "free_requested") == 0,
             is_done = strcmp(action, "free_completed") == 0 || strcmp(action, "free") == 0;
        bool is_seg_up = strcmp(action, "segment_alloc") == 0 || strcmp(action, "segment_map") == 0,
             is_seg_down = strcmp(action, "segment_free") == 0 || strcmp(action, "segment_unmap") == 0;
        if (is_alloc || is_req || is_done || is_seg_up || is_seg_down) {
            if ((st = imp_get_u64(d, e, "addr", true, UINT64_MAX, &addr, NULL, &l)) != SIM_OK ||
                (st = imp_get_u64(d, e, "size", true, SIM_MAX_SIZE, &size, NULL, &l)) != SIM_OK)
                goto done;
        }
        uint64_t pool = 0;
        bool has_pool = false;
        if ((is_alloc || is_seg_up || is_seg_down) &&
            (st = snap_pool_get(d, e, "pool_id", &l, &pool, &has_pool)) != SIM_OK)
            goto done;
        if (is_seg_up || is_seg_down) {
            uint32_t stream = 0;
            if ((st = get_stream(d, e, &l, &stream)) != SIM_OK)
                goto done;
            if (!SIM_GROW(sev, n_sev + 1, cap_sev))
                goto nomem;
            sev[n_sev++] = (rb_seg_event){
                .action = action[8] == 'a' ? RB_SEG_ALLOC : action[8] == 'f' ? RB_SEG_FREE
                          : action[8] == 'm' ? RB_SEG_MAP : RB_SEG_UNMAP,
                .addr = addr, .size = size, .stream = stream, .entry = i, .next_event = d->n,
                .pool_id = pool, .has_pool = has_pool};
            resv_delta += is_seg_up ? (int64_t)size : -(int64_t)size;
            if (resv_delta > resv_max_delta)
                resv_max_delta = resv_delta;
            continue;
        }
        imp_event *ev = NULL;
        if (is_alloc) {
            uint32_t stream = 0;
            if ((st = get_stream(d, e, &l, &stream)) != SIM_OK)
                goto done;
            imp_map_slot *s = imp_map_find(&live, addr);
            if (s != NULL) {
                st = imp_fail(d, e, &l, "alloc at address 0x%" PRIx64 ", which is still allocated (since %s[%" PRIu64
                                        "])", addr, lname, s->c);
                goto done;
            }
            if ((ev = imp_push(d)) == NULL || (s = imp_map_insert(&live, addr)) == NULL)
                goto nomem;
            ev->op = SIM_OP_ALLOC;
            ev->id = s->a = imp_new_id(d);
            s->c = i;
            ev->size = size;
            ev->stream = stream;
            ev->addr = addr;
            ev->pool = pool;
            ev->pool_flags = has_pool ? IMP_POOL_RECORDED : 0;
            char tag[160];
            alloc_tag(e, addr, tag, sizeof tag);
            if ((ev->str = imp_str(d, tag)) == 0)
                goto nomem;
        } else if (is_req || is_done) {
            imp_map_slot *s = imp_map_find(&live, addr);
            if (s != NULL && s->b != 0 && is_done) {
                /* the free was requested earlier: it completes now. Only when other
                 * entries came between was it deferred (IMPORT.md): a synchronous
                 * free() records its request and completion back to back, and its
                 * clock may tick between the two; it frees at the request. */
                if (s->c + 1 != i)
                    d->ev[s->b - 1].ready_t = t;
                imp_map_remove(&live, s);
                continue;
            }
            if (s != NULL && s->b != 0) {
                st = imp_fail(d, e, &l, "free_requested of address 0x%" PRIx64 " twice (first at %s[%" PRIu64 "])",
                              addr, lname, s->c);
                goto done;
            }
            uint64_t id;
            if (s != NULL) {
                id = s->a;
            } else {
                uint32_t stream = 0;
                if ((st = get_stream(d, e, &l, &stream)) != SIM_OK)
                    goto done;
                if ((id = pre_alloc(d, &ll, addr, size, 0, stream, d->n)) == 0)
                    goto nomem;
            }
            if ((ev = imp_push(d)) == NULL)
                goto nomem;
            ev->op = SIM_OP_FREE;
            ev->id = id;
            if (is_req) {
                if (s == NULL && (s = imp_map_insert(&live, addr)) == NULL)
                    goto nomem;
                s->a = id;
                s->b = d->n; /* index + 1 of this free event */
                s->c = i;
            } else if (s != NULL) {
                imp_map_remove(&live, s);
            }
        } else if (strcmp(action, "oom") == 0) {
            uint64_t req = 0, dev_free = 0;
            if ((st = imp_get_u64(d, e, "size", false, UINT64_MAX, &req, NULL, &l)) != SIM_OK ||
                (st = imp_get_u64(d, e, "device_free", false, UINT64_MAX, &dev_free, NULL, &l)) != SIM_OK)
                goto done;
            ooms++;
            if ((ev = imp_push(d)) == NULL)
                goto nomem;
            ev->op = SIM_OP_MARK;
            ev->is_oom = 1;
            char name[128];
            snprintf(name, sizeof name, "recorded oom: %" PRIu64 " bytes requested, %" PRIu64 " free on the device",
                     req, dev_free);
            if ((ev->str = imp_str(d, name)) == 0)
                goto nomem;
        } else {
            /* "snapshot" marks where a snapshot was taken and "annotate" carries a
             * user annotation: knowingly skipped; any other action is unknown */
            unknown += strcmp(action, "snapshot") != 0 && strcmp(action, "annotate") != 0;
            continue;
        }
        ev->t = ev->ready_t = t;
        ev->has_point = ss.present;
        ev->rec_reserved = (uint64_t)resv_delta; /* made absolute below */
    }
    /* no alloc, free or segment entry: the file is a state only (taken at an OOM, or
     * recorded without history), not a trace that lost its start */
    const bool history = n_sev > 0 || d->n > ooms;
    /* blocks whose free was requested but had not completed when the snapshot was
     * taken: they complete 1 ns after the last entry, so that a replay ends with
     * them pending as the recording's segments show them (even the last entry's) */
    for (size_t k = 0; k < live.cap; k++)
        if (live.slots[k].used && live.slots[k].b != 0) {
            d->ev[live.slots[k].b - 1].ready_t = prev_t + 1;
            pending_end++;
        }
    /* blocks active in segments that the trace never allocated: live since the start */
    uint64_t lost = 0, unexplained = 0;
    if (ss.present) {
        if (ss.n)
            qsort(ss.blocks, ss.n, sizeof *ss.blocks, block_cmp);
        for (size_t k = 0; k < ss.n; k++) {
            if (imp_map_find(&live, ss.blocks[k].addr) != NULL)
                continue;
            uint64_t id = pre_alloc(d, &ll, ss.blocks[k].addr, ss.blocks[k].size, ss.blocks[k].block_size,
                                    ss.blocks[k].stream, UINT64_MAX);
            if (id == 0 || (ss.blocks[k].pending && !imp_pend(d, id)))
                goto nomem;
            lost++;
        }
        /* and the reverse: live in the trace, inactive in segments */
        for (size_t k = 0; k < live.cap; k++) {
            if (!live.slots[k].used || live.slots[k].b != 0)
                continue;
            seg_block key = {.addr = live.slots[k].key};
            if (ss.n == 0 || bsearch(&key, ss.blocks, ss.n, sizeof key, block_cmp) == NULL)
                unexplained++;
        }
        /* reserved before the first entry = reserved at the end − what the trace added */
        int64_t start = (int64_t)ss.reserved - resv_delta;
        if (start < 0) {
            imp_warn(d, "the segment_* events add up to more than the segments hold at the end; the recorded "
                        "reserved curve is unusable");
        } else {
            d->has_reserved = true;
            d->rec.reserved_source = "snapshot segment_alloc/segment_free running total";
            d->rec.reserved_start = (uint64_t)start;
            d->rec.has_peak_reserved = true;
            d->rec.peak_reserved = (uint64_t)(start + resv_max_delta);
            for (size_t k = 0; k < d->n; k++)
                d->ev[k].rec_reserved += (uint64_t)start;
        }
    }
    d->rec.ooms = ooms;
    /* the state at the first entry, for a strategy that can start from it */
    bool seeded = false;
    if (ss.present && ss.n_segs + n_sev > 0) {
        /* where the trace's allocations landed: evidence for the sizes of blocks
         * known only from their free (rb_rebuild) */
        allocs = malloc((d->n ? d->n : 1) * sizeof *allocs);
        if (allocs == NULL)
            goto nomem;
        size_t n_allocs = 0;
        for (size_t k = 0; k < d->n; k++)
            if (d->ev[k].op == SIM_OP_ALLOC)
                allocs[n_allocs++] = (rb_addr){d->ev[k].addr, k};
        if (n_allocs)
            qsort(allocs, n_allocs, sizeof *allocs, addr_cmp);
        rb_input rin = {.segs = ss.segs,
                        .n_segs = ss.n_segs,
                        .blocks = ss.all,
                        .n_blocks = ss.n_all,
                        .events = sev,
                        .n_events = n_sev,
                        .live = ll.v,
                        .n_live = ll.n,
                        .allocs = allocs,
                        .n_allocs = n_allocs,
                        .settings = rs};
        rb_result rr;
        if (rb_rebuild(&rin, &rr)) {
            /* the doc owns the state; a start without segments is no seed, but
             * the placements are followed from it all the same */
            d->seed = rr.seed;
            d->seed_segs = rr.segs;
            d->seed_blocks = rr.blocks;
            d->seed_planned = rr.planned;
            if (!follow_placements(d, sev, n_sev, &ss))
                goto nomem;
            d->has_seed = rr.seed.n_segs > 0 || rr.seed.n_planned > 0;
            if (rr.seed.n_segs > 0 && !history) {
                seeded = true;
                char hr[32], ha[32];
                imp_warn(d,
                         "a state only: the snapshot holds no trace for device %" PRId64 " after its state (taken "
                         "at an out-of-memory error, or with _record_memory_history off); the state holds %u segments "
                         "(%s) and %zu live blocks (%s), which is what a replay reproduces: torch starts from it, "
                         "other strategies get the blocks as allocations at the start",
                         device, rr.seed.n_segs, units_format_size(sim_seed_reserved(&rr.seed), hr, sizeof hr), d->n_pre,
                         units_format_size(sim_seed_allocated(&rr.seed), ha, sizeof ha));
            } else if (rr.seed.n_segs > 0) {
                seeded = true;
                char hr[32], ha[32];
                imp_warn(d, "recorded mid-run: the state at the first entry, rebuilt from \"segments\" and the trace "
                            "undone backwards, holds %u segments (%s) and %zu live blocks (%s%s); torch starts from "
                            "it, other strategies get the blocks as allocations at the start", rr.seed.n_segs,
                         units_format_size(sim_seed_reserved(&rr.seed), hr, sizeof hr),
                         d->n_pre, units_format_size(sim_seed_allocated(&rr.seed), ha, sizeof ha),
                         rr.inferred ? ", sizes of those the trace frees from their request" : "");
            }
            if (rr.by_address || rr.undetermined || rr.contradicted)
                imp_warn(d,
                         "of %u blocks known only by their free, %u were sized by a later allocation's address "
                         "(an unsplit remainder), %u may hold a remainder nothing later tells about, %u contradict "
                         "a later address (these: their rounded request)",
                         rr.inferred, rr.by_address, rr.undetermined, rr.contradicted);
        } else if (rr.why[0]) {
            imp_warn(d, "the allocator state at the first entry cannot be rebuilt (%s); the blocks live then are "
                        "allocations at the start of an empty allocator", rr.why);
        } else {
            goto nomem;
        }
    }
    /* the private pools: each allocation's, and a scope around each run of them */
    snap_pool_count pc;
    if (!snap_pools_route(d, d->has_seed ? &d->seed : NULL, sev, n_sev, ss.segs, ss.n_segs, &pc))
        goto nomem;
    uint32_t pool_segs = 0;
    uint64_t pool_bytes = 0;
    for (uint32_t k = 0; d->has_seed && k < d->seed.n_segs; k++)
        if (d->seed.segs[k].pool_id != 0) {
            pool_segs++;
            pool_bytes += d->seed.segs[k].size_bytes;
        }
    if (pool_segs) {
        char hb[32];
        imp_warn(d, "of the state's segments, %u (%s) belong to private memory pools (CUDA graphs, MemPool): torch "
                    "keeps them in their pools, each pool with one use the trace never releases",
                 pool_segs, units_format_size(pool_bytes, hb, sizeof hb));
    }
    if (pc.allocs) {
        char how[96] = "as their entries' pool_id say";
        if (pc.inferred)
            snprintf(how, sizeof how, "%" PRIu64 " by the pool of the segment they lie in, their entries naming none",
                     pc.inferred);
        imp_warn(d,
                 "%" PRIu64 " allocations went to %u private memory pools (CUDA graphs, MemPool; %s): %" PRIu64
                 " pool_begin/pool_end scopes around the runs of them route them there in the replay",
                 pc.allocs, pc.pools, how, pc.scopes);
    }
    if (n_entries == 0 && !seeded)
        imp_warn(d, "the snapshot holds no trace for device %" PRId64 " (was _record_memory_history on?); only the "
                    "blocks live at the end are replayed", device);
    if (d->n_pre && !seeded && !history)
        imp_warn(d,
                 "a state only (no allocation history follows it): its %zu live blocks are allocations at the "
                 "start",
                 d->n_pre);
    else if (d->n_pre && !seeded)
        imp_warn(d, "%zu blocks were live before the trace began (the ring buffer lost their allocation); they are "
                    "allocations at the start", d->n_pre);
    if (lost == 0 && unexplained)
        imp_warn(d, "%" PRIu64 " blocks allocated in the trace are not active in \"segments\"", unexplained);
    if (d->n_pend)
        imp_warn(d, "%zu blocks are active_pending_free with no free in the trace (freed before it began, the memory "
                    "not yet back at the end): neither allocated nor free, each is freed at the start and its memory "
                    "comes back after the last recorded event", d->n_pend);
    if (pending_end)
        imp_warn(d, "%" PRIu64 " frees were still pending (free_requested without free_completed) at the end; they "
                    "complete at the last recorded time", pending_end);
    if (clamped)
        imp_warn(d, "%" PRIu64 " entries had a time_us earlier than the entry before; their times were raised",
                 clamped);
    if (unknown)
        imp_warn(d, "%" PRIu64 " entries with actions gpusim does not replay were skipped", unknown);
    if (ooms)
        imp_warn(d, "the recording ran out of memory %" PRIu64 " time(s); kept as marks", ooms);
    char extra[64];
    snprintf(extra, sizeof extra, ",\"device\":%" PRId64, device);
    st = imp_doc_finish(d, extra, d->err);
    goto done;
nomem:
    st = sim_error_set(d->err, SIM_ENOMEM, d->path, 0, 0, "out of memory");
done:
    free(blocks_per_dev);
    free(ss.blocks);
    free(ss.segs);
    free(ss.all);
    free(ll.v);
    free(sev);
    free(allocs);
    imp_map_release(&live);
    return st;
}
