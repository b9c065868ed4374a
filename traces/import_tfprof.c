/* TensorFlow memory profile → native events. */
#include "import_tfprof.h"
#include "import_tfprof_timeline.h"

#include "sim/buf.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct tf_rec {
    uint64_t t;          /* ns since the profile start */
    uint64_t order;
    uint64_t addr, requested, allocation;
    uint64_t in_use;     /* heap + stack after the event */
    const char *op_name;
    uint32_t line;
    int activity;        /* 1 ALLOCATION, 2 DEALLOCATION, else ignored */
    bool has_stats;
} tf_rec;

static uint64_t points_of(const json_value *prof, const char *key)
{
    const json_value *a = json_get(prof, key);
    return a && a->type == JSON_ARRAY ? a->len : 0;
}

static int rec_cmp(const void *a, const void *b)
{
    const tf_rec *x = a, *y = b;
    if (x->t != y->t)
        return x->t < y->t ? -1 : 1;
    return x->order < y->order ? -1 : (x->order > y->order);
}

static bool is_gpu_key(const char *k)
{
    if (strncmp(k, "GPU_", 4) == 0)
        return true;
    for (const char *c = k; *c; c++)
        if (*c < '0' || *c > '9')
            return false;
    return *k != '\0';
}

/* profileSummary: the capacity, and the profile's peak (heap + stack of peakStats: its
 * peakBytesInUse is the allocator's, which may be older than the profile). */
static sim_status summary_read(imp_doc *d, const json_value *prof)
{
    const json_value *sum = json_get(prof, "profileSummary");
    imp_loc ls = {"profileSummary", UINT64_MAX};
    sim_status st;
    if (sum == NULL || sum->type != JSON_OBJECT)
        return SIM_OK;
    uint64_t cap = 0, heap = 0, stack = 0, peak = 0;
    bool has = false, has_heap = false;
    if ((st = imp_get_u64(d, sum, "memoryCapacity", false, SIM_MAX_SIZE, &cap, &has, &ls)) != SIM_OK)
        return st;
    if (has && cap) {
        d->rec.capacity = cap;
        d->header.device_capacity = cap;
    }
    const json_value *ps = json_get(sum, "peakStats");
    if (ps == NULL || ps->type != JSON_OBJECT)
        return SIM_OK;
    if ((st = imp_get_u64(d, ps, "peakBytesInUse", false, SIM_MAX_SIZE, &peak, &has, &ls)) != SIM_OK ||
        (st = imp_get_u64(d, ps, "heapAllocatedBytes", false, SIM_MAX_SIZE, &heap, &has_heap, &ls)) != SIM_OK ||
        (st = imp_get_u64(d, ps, "stackReservedBytes", false, SIM_MAX_SIZE, &stack, NULL, &ls)) != SIM_OK)
        return st;
    if (has_heap || has) {
        d->rec.has_peak_allocated = true;
        d->rec.peak_allocated = has_heap ? heap + stack : peak;
    }
    return SIM_OK;
}

static sim_status timeline_replay(imp_doc *d, const json_value *prof, const json_value *tl, const char *key)
{
    char where[160];
    snprintf(where, sizeof where, "memoryProfilePerAllocator[\"%.80s\"].sampledTimelineSnapshots", key);
    const json_value *snaps = json_get(prof, "memoryProfileSnapshots");
    uint64_t pruned = snaps && snaps->type == JSON_ARRAY ? snaps->len : UINT64_MAX;
    sim_status st = tfprof_timeline_import(d, tl, where, pruned);
    if (st != SIM_OK)
        return st;
    sim_buf extra;
    sim_buf_init(&extra);
    sim_buf_puts(&extra, ",\"allocator\":");
    sim_buf_json_str(&extra, key);
    sim_buf_puts(&extra, ",\"sampled\":true,\"source\":\"sampledTimelineSnapshots\"");
    st = extra.oom ? sim_error_set(d->err, SIM_ENOMEM, d->path, 0, 0, "out of memory")
                   : imp_doc_finish(d, extra.data, d->err);
    sim_buf_release(&extra);
    return st;
}

/* Old profiles (no sampled timeline) may hold every snapshot: replay them as they are. */
static sim_status snapshots_replay(imp_doc *d, const json_value *snaps, imp_loc l, const char *key)
{
    sim_status st;
    tf_rec *recs = calloc(snaps->len ? snaps->len : 1, sizeof *recs);
    imp_map live;
    imp_map_init(&live);
    if (recs == NULL)
        return sim_error_set(d->err, SIM_ENOMEM, d->path, 0, 0, "out of memory");
    bool all_stats = true;
    for (uint32_t i = 0; i < snaps->len; i++) {
        const json_value *s = &snaps->u.items[i];
        tf_rec *r = &recs[i];
        l.i = i;
        r->order = i;
        r->line = s->line;
        if (s->type != JSON_OBJECT) {
            st = imp_fail(d, s, &l, "a snapshot must be an object, not %s", json_type_name(s->type));
            goto done;
        }
        const json_value *tv = json_get(s, "timeOffsetPs");
        if (tv != NULL && tv->type != JSON_NULL && !imp_decimal_scaled(tv, -3, &r->t)) {
            st = imp_fail(d, tv, &l, "\"timeOffsetPs\" must be a non-negative integer of picoseconds");
            goto done;
        }
        const json_value *meta = json_get(s, "activityMetadata");
        if (meta == NULL || meta->type != JSON_OBJECT) {
            st = imp_fail(d, meta ? meta : s, &l, "missing \"activityMetadata\" object");
            goto done;
        }
        if ((st = tfprof_activity(d, meta, &l, &r->activity)) != SIM_OK ||
            (st = imp_get_u64(d, meta, "requestedBytes", false, SIM_MAX_SIZE, &r->requested, NULL, &l)) != SIM_OK ||
            (st = imp_get_u64(d, meta, "allocationBytes", false, SIM_MAX_SIZE, &r->allocation, NULL, &l)) != SIM_OK ||
            (st = imp_get_u64(d, meta, "address", false, UINT64_MAX, &r->addr, NULL, &l)) != SIM_OK ||
            (st = imp_get_str(d, meta, "tfOpName", false, &r->op_name, &l)) != SIM_OK)
            goto done;
        const json_value *agg = json_get(s, "aggregationStats");
        if (agg && agg->type == JSON_OBJECT) {
            uint64_t heap = 0, stack = 0;
            bool has_heap = false;
            if ((st = imp_get_u64(d, agg, "heapAllocatedBytes", false, UINT64_MAX / 2, &heap, &has_heap, &l)) !=
                    SIM_OK ||
                (st = imp_get_u64(d, agg, "stackReservedBytes", false, UINT64_MAX / 2, &stack, NULL, &l)) != SIM_OK)
                goto done;
            r->has_stats = has_heap;
            r->in_use = heap + stack;
        } else if (agg != NULL && agg->type != JSON_NULL) {
            st = imp_fail(d, agg, &l, "\"aggregationStats\" must be an object, not %s", json_type_name(agg->type));
            goto done;
        }
        if (r->activity == 1 || r->activity == 2)
            all_stats = all_stats && r->has_stats;
    }
    qsort(recs, snaps->len, sizeof *recs, rec_cmp);
    d->has_allocated = all_stats;
    uint64_t skipped = 0, missed = 0, pre_alloc_bytes = 0, used = 0;
    const tf_rec *first = NULL;
    for (uint32_t i = 0; i < snaps->len; i++) {
        const tf_rec *r = &recs[i];
        if (r->activity != 1 && r->activity != 2)
            continue;
        if (r->addr == 0) {
            skipped++;
            continue;
        }
        if (first == NULL)
            first = r;
        used++;
        uint64_t size = r->requested ? r->requested : r->allocation;
        imp_map_slot *s = imp_map_find(&live, r->addr);
        if (r->activity == 1 && s != NULL) {
            /* the sampling dropped this address's deallocation: free it just before */
            imp_event *f = imp_push(d);
            if (f == NULL)
                goto nomem;
            f->op = SIM_OP_FREE;
            f->id = s->a;
            f->t = f->ready_t = r->t;
            imp_map_remove(&live, s);
            missed++;
        }
        imp_event *e = imp_push(d);
        if (e == NULL)
            goto nomem;
        e->t = e->ready_t = r->t;
        e->has_point = (uint8_t)r->has_stats;
        e->rec_allocated = r->in_use;
        if (r->activity == 1) {
            if ((s = imp_map_insert(&live, r->addr)) == NULL)
                goto nomem;
            e->op = SIM_OP_ALLOC;
            e->id = s->a = imp_new_id(d);
            e->size = size;
            if (r->op_name && r->op_name[0] && (e->str = imp_str(d, r->op_name)) == 0)
                goto nomem;
        } else if (s != NULL) {
            e->op = SIM_OP_FREE;
            e->id = s->a;
            imp_map_remove(&live, s);
        } else {
            imp_event *p = imp_push_pre(d, size);
            if (p == NULL)
                goto nomem;
            pre_alloc_bytes += r->allocation ? r->allocation : size;
            if (r->op_name && r->op_name[0] && (p->str = imp_str(d, r->op_name)) == 0)
                goto nomem;
            e->op = SIM_OP_FREE;
            e->id = p->id;
        }
    }
    imp_warn(d, "sampled, not a full trace: a TensorFlow memory profile keeps only some allocations (those around "
                "the peak step, %" PRIu64 " of them here); replayed numbers describe those only", used);
    if (missed)
        imp_warn(d, "%" PRIu64 " addresses were allocated again without a recorded deallocation; a free was inserted "
                    "before each", missed);
    if (skipped)
        imp_warn(d, "%" PRIu64 " activities with address 0 (special allocations) were skipped", skipped);
    if (d->n_pre)
        imp_warn(d, "%zu blocks were deallocated without a recorded allocation; they are allocations at the start",
                 d->n_pre);
    if (all_stats && first != NULL) {
        d->rec.allocated_source = "TensorFlow heapAllocatedBytes + stackReservedBytes";
        uint64_t delta = first->allocation ? first->allocation : first->requested;
        uint64_t before = first->activity == 1 ? first->in_use - (first->in_use >= delta ? delta : first->in_use)
                                               : first->in_use + delta;
        if (before >= pre_alloc_bytes) {
            d->rec.allocated_offset = before - pre_alloc_bytes;
            d->rec.allocated_offset_known = true;
        }
    }
    sim_buf extra;
    sim_buf_init(&extra);
    sim_buf_puts(&extra, ",\"allocator\":");
    sim_buf_json_str(&extra, key);
    sim_buf_puts(&extra, ",\"sampled\":true");
    st = extra.oom ? sim_error_set(d->err, SIM_ENOMEM, d->path, 0, 0, "out of memory")
                   : imp_doc_finish(d, extra.data, d->err);
    sim_buf_release(&extra);
    goto done;
nomem:
    st = sim_error_set(d->err, SIM_ENOMEM, d->path, 0, 0, "out of memory");
done:
    free(recs);
    imp_map_release(&live);
    return st;
}

/* The allocator to replay: --device=N's, else the GPU one with the most snapshots or
 * timeline points, else the one with the most. */
static sim_status allocator_choose(imp_doc *d, const json_value *per, const input_options *opt,
                                   const json_member **out)
{
    const json_member *chosen = NULL;
    imp_loc top = {NULL, 0};
    char want1[32] = "", want2[32] = "";
    if (opt && opt->device >= 0) {
        snprintf(want1, sizeof want1, "GPU_%" PRId64 "_bfc", opt->device);
        snprintf(want2, sizeof want2, "%" PRId64, opt->device);
    }
    uint64_t best = 0;
    bool best_gpu = false;
    for (uint32_t i = 0; i < per->len; i++) {
        const json_member *m = &per->u.members[i];
        if (m->value.type != JSON_OBJECT) {
            imp_loc l = {"memoryProfilePerAllocator", i};
            return imp_fail(d, &m->value, &l, "an allocator's profile must be an object, not %s",
                            json_type_name(m->value.type));
        }
        if (want1[0]) {
            if (strcmp(m->key, want1) == 0 || strcmp(m->key, want2) == 0)
                chosen = m;
            continue;
        }
        uint64_t n = points_of(&m->value, "memoryProfileSnapshots");
        uint64_t n_tl = points_of(&m->value, "sampledTimelineSnapshots");
        n = n_tl > n ? n_tl : n;
        bool gpu = is_gpu_key(m->key);
        if (chosen == NULL || (gpu && !best_gpu) || (gpu == best_gpu && n > best)) {
            chosen = m;
            best = n;
            best_gpu = gpu;
        }
    }
    if (chosen == NULL) {
        if (want1[0]) {
            char list[256] = "";
            for (uint32_t i = 0; i < per->len; i++) {
                strncat(list, i ? ", " : "", sizeof list - strlen(list) - 1);
                strncat(list, per->u.members[i].key, sizeof list - strlen(list) - 1);
            }
            return sim_error_set(d->err, SIM_EUSAGE, d->path, 0, 0,
                                 "--device=%" PRId64 ": no allocator \"%s\" or \"%s\" in this profile (it has: %s)",
                                 opt->device, want1, want2, list);
        }
        return imp_fail(d, per, &top, "\"memoryProfilePerAllocator\" is empty");
    }
    *out = chosen;
    return SIM_OK;
}

sim_status import_tfprof(const json_value *root, const input_options *opt, imp_doc *d)
{
    imp_loc top = {NULL, 0};
    if (root->type == JSON_ARRAY) {
        if (root->len != 1)
            return imp_fail(d, root, &top, "a TensorFlow memory profile array must hold exactly one profile, not %u",
                            root->len);
        root = &root->u.items[0];
    }
    if (root->type != JSON_OBJECT)
        return imp_fail(d, root, &top, "a memory profile must be an object, not %s", json_type_name(root->type));
    const json_value *per = json_get(root, "memoryProfilePerAllocator");
    if (per == NULL)
        return imp_fail(d, root, &top, "missing \"memoryProfilePerAllocator\" (is this a TensorFlow memory profile?)");
    if (per->type != JSON_OBJECT)
        return imp_fail(d, per, &top, "\"memoryProfilePerAllocator\" must be an object, not %s",
                        json_type_name(per->type));
    const json_member *chosen = NULL;
    sim_status st = allocator_choose(d, per, opt, &chosen);
    if (st != SIM_OK)
        return st;
    const json_value *prof = &chosen->value;
    snprintf(d->header.device_name, sizeof d->header.device_name, "%s", chosen->key);
    if ((st = summary_read(d, prof)) != SIM_OK)
        return st;
    char lname[160];
    snprintf(lname, sizeof lname, "memoryProfilePerAllocator[\"%.80s\"].sampledTimelineSnapshots", chosen->key);
    imp_loc l = {lname, UINT64_MAX};
    const json_value *tl = json_get(prof, "sampledTimelineSnapshots");
    if (tl != NULL && tl->type != JSON_ARRAY && tl->type != JSON_NULL)
        return imp_fail(d, tl, &l, "must be an array, not %s", json_type_name(tl->type));
    /* XProf's profiles with a timeline keep in memoryProfileSnapshots only the
     * allocations live at the peak: the timeline is the better record */
    if (tl != NULL && tl->type == JSON_ARRAY && tl->len > 0)
        return timeline_replay(d, prof, tl, chosen->key);
    snprintf(lname, sizeof lname, "memoryProfilePerAllocator[\"%.80s\"].memoryProfileSnapshots", chosen->key);
    const json_value *snaps = json_get(prof, "memoryProfileSnapshots");
    if (snaps == NULL)
        return imp_fail(d, prof, &l, "missing, and no \"sampledTimelineSnapshots\" to read instead");
    if (snaps->type != JSON_ARRAY)
        return imp_fail(d, snaps, &l, "must be an array, not %s", json_type_name(snaps->type));
    return snapshots_replay(d, snaps, l, chosen->key);
}
