/* Kineto / PyTorch profiler [memory] events → native events. */
#include "import_kineto.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sim/grow.h"
#include "sim/units.h"

#define KINETO_CUDA 1 /* c10::DeviceType::CUDA */

typedef struct kin_rec {
    uint64_t t;          /* ns since the epoch, as recorded */
    uint64_t ev_idx;     /* "Ev Idx", UINT64_MAX if absent */
    uint64_t order;      /* index in traceEvents */
    uint64_t addr;
    uint64_t size;       /* |Bytes| */
    uint64_t total_alloc, total_resv;
    uint32_t line;
    int64_t device;
    bool is_free, has_addr, has_ta, has_tr;
} kin_rec;

static int rec_cmp(const void *a, const void *b)
{
    const kin_rec *x = a, *y = b;
    if (x->t != y->t)
        return x->t < y->t ? -1 : 1;
    if (x->ev_idx != y->ev_idx)
        return x->ev_idx < y->ev_idx ? -1 : 1;
    return x->order < y->order ? -1 : (x->order > y->order);
}

typedef struct dev_count {
    int64_t device;
    uint64_t n;
} dev_count;

static sim_status read_records(imp_doc *d, const json_value *events, kin_rec **out, size_t *n_out,
                               dev_count *devs, uint32_t *n_devs)
{
    kin_rec *recs = NULL;
    size_t n = 0, cap = 0;
    imp_loc l = {"traceEvents", 0};
    sim_status st = SIM_OK;
    for (uint32_t i = 0; i < events->len; i++) {
        const json_value *e = &events->u.items[i];
        l.i = i;
        if (e->type != JSON_OBJECT) {
            st = imp_fail(d, e, &l, "an event must be a JSON object, not %s", json_type_name(e->type));
            goto fail;
        }
        const json_value *name = json_get(e, "name");
        if (name == NULL || name->type != JSON_STRING || strcmp(name->u.str, "[memory]") != 0)
            continue;
        const json_value *args = json_get(e, "args");
        if (args == NULL || args->type != JSON_OBJECT) {
            st = imp_fail(d, args ? args : e, &l, "a [memory] event needs an \"args\" object");
            goto fail;
        }
        int64_t dtype = 0, dev = 0;
        if ((st = imp_get_i64(d, args, "Device Type", true, &dtype, NULL, &l)) != SIM_OK ||
            (st = imp_get_i64(d, args, "Device Id", true, &dev, NULL, &l)) != SIM_OK)
            goto fail;
        if (dtype != KINETO_CUDA)
            continue;
        if (!SIM_GROW(recs, n + 1, cap)) {
            st = sim_error_set(d->err, SIM_ENOMEM, d->path, 0, 0, "out of memory");
            goto fail;
        }
        kin_rec *r = &recs[n];
        memset(r, 0, sizeof *r);
        r->order = i;
        r->line = e->line;
        r->device = dev;
        const json_value *ts = json_get(e, "ts");
        if (ts == NULL) {
            st = imp_fail(d, e, &l, "missing \"ts\"");
            goto fail;
        }
        if (ts->type != JSON_NUMBER || !imp_decimal_scaled(ts, 3, &r->t)) {
            st = imp_fail(d, ts, &l, "\"ts\" must be a non-negative number of microseconds");
            goto fail;
        }
        int64_t bytes = 0;
        bool has_idx = false;
        if ((st = imp_get_i64(d, args, "Bytes", true, &bytes, NULL, &l)) != SIM_OK ||
            (st = imp_get_u64(d, args, "Addr", false, UINT64_MAX, &r->addr, &r->has_addr, &l)) != SIM_OK ||
            (st = imp_get_u64(d, args, "Total Allocated", false, UINT64_MAX, &r->total_alloc, &r->has_ta, &l)) !=
                SIM_OK ||
            (st = imp_get_u64(d, args, "Total Reserved", false, UINT64_MAX, &r->total_resv, &r->has_tr, &l)) !=
                SIM_OK ||
            (st = imp_get_u64(d, args, "Ev Idx", false, UINT64_MAX - 1, &r->ev_idx, &has_idx, &l)) != SIM_OK)
            goto fail;
        if (!has_idx)
            r->ev_idx = UINT64_MAX;
        r->is_free = bytes < 0;
        r->size = bytes < 0 ? (uint64_t)(-(bytes + 1)) + 1 : (uint64_t)bytes;
        if (r->size > SIM_MAX_SIZE) {
            st = imp_fail(d, json_get(args, "Bytes"), &l, "\"Bytes\" %" PRId64 " exceeds 2^53", bytes);
            goto fail;
        }
        n++;
        uint32_t k = 0;
        while (k < *n_devs && devs[k].device != dev)
            k++;
        if (k == *n_devs) {
            if (*n_devs == 64) {
                st = imp_fail(d, e, &l, "more than 64 CUDA devices");
                goto fail;
            }
            devs[k].device = dev;
            devs[k].n = 0;
            (*n_devs)++;
        }
        devs[k].n++;
    }
    *out = recs;
    *n_out = n;
    return SIM_OK;
fail:
    free(recs);
    return st;
}

static void read_device_properties(imp_doc *d, const json_value *root, int64_t device)
{
    const json_value *props = root->type == JSON_OBJECT ? json_get(root, "deviceProperties") : NULL;
    if (props == NULL || props->type != JSON_ARRAY)
        return;
    for (uint32_t i = 0; i < props->len; i++) {
        const json_value *p = &props->u.items[i];
        if (p->type != JSON_OBJECT)
            continue;
        int64_t id = -1;
        const json_value *idv = json_get(p, "id");
        if (idv == NULL || json_to_i64(idv, (uint64_t)INT64_MAX, &id) != JSON_INT_OK || id != device)
            continue;
        const json_value *name = json_get(p, "name");
        if (name && name->type == JSON_STRING)
            snprintf(d->header.device_name, sizeof d->header.device_name, "%s", name->u.str);
        const json_value *mem = json_get(p, "totalGlobalMem");
        uint64_t cap = 0;
        if (mem && json_to_u64(mem, SIM_MAX_SIZE, &cap) == JSON_INT_OK)
            d->header.device_capacity = cap;
        /* computeMajor/computeMinor: TensorFlow's reserve depends on the major */
        uint64_t maj = 0, min = 0;
        const json_value *mj = json_get(p, "computeMajor"), *mn = json_get(p, "computeMinor");
        if (mj && mn && json_to_u64(mj, 99, &maj) == JSON_INT_OK && json_to_u64(mn, 99, &min) == JSON_INT_OK &&
            maj > 0) {
            d->header.device_cc_major = (unsigned)maj;
            d->header.device_cc_minor = (unsigned)min;
        }
    }
}

typedef struct lifo_node {
    uint64_t id;
    uint64_t next;  /* index + 1 of the node below, 0 = none */
} lifo_node;

sim_status import_kineto(const json_value *root, const input_options *opt, imp_doc *d)
{
    const json_value *events = root;
    imp_loc top = {NULL, 0};
    if (root->type == JSON_OBJECT) {
        events = json_get(root, "traceEvents");
        if (events == NULL)
            return imp_fail(d, root, &top, "missing \"traceEvents\" (is this a PyTorch profiler trace?)");
    }
    if (events->type != JSON_ARRAY)
        return imp_fail(d, events, &top, "\"traceEvents\" must be an array, not %s", json_type_name(events->type));
    kin_rec *recs = NULL;
    size_t n = 0;
    dev_count devs[64];
    uint32_t n_devs = 0;
    sim_status st = read_records(d, events, &recs, &n, devs, &n_devs);
    if (st != SIM_OK)
        return st;
    imp_map live;
    imp_map_init(&live);
    lifo_node *nodes = NULL;
    size_t n_nodes = 0, cap_nodes = 0;
    if (n_devs == 0) {
        st = imp_fail(d, events, &top, "no CUDA [memory] events (was the profiler run with profile_memory=True?)");
        goto done;
    }
    /* the device: --device, else the one with most events (ties: the lowest ordinal) */
    int64_t device = -1;
    uint64_t best = 0;
    for (uint32_t k = 0; k < n_devs; k++) {
        if (opt && opt->device >= 0) {
            if (devs[k].device == opt->device) {
                device = opt->device;
                best = devs[k].n;
            }
        } else if (devs[k].n > best || (devs[k].n == best && devs[k].device < device)) {
            device = devs[k].device;
            best = devs[k].n;
        }
    }
    if (device < 0 || (opt && opt->device >= 0 && device != opt->device)) {
        char list[256] = "";
        for (uint32_t k = 0; k < n_devs; k++) {
            char one[48];
            snprintf(one, sizeof one, "%s%" PRId64 " (%" PRIu64 " events)", k ? ", " : "", devs[k].device, devs[k].n);
            strncat(list, one, sizeof list - strlen(list) - 1);
        }
        st = sim_error_set(d->err, SIM_EUSAGE, d->path, 0, 0,
                           "--device=%" PRId64 ": no CUDA [memory] events on that device (the trace has: %s)",
                           opt ? opt->device : -1, list);
        goto done;
    }
    /* keep that device's events, in time order ("Ev Idx", then file order, break ties) */
    size_t m = 0;
    bool all_addr = true, all_ta = true, all_tr = true, all_idx = true;
    for (size_t i = 0; i < n; i++) {
        if (recs[i].device != device)
            continue;
        recs[m++] = recs[i];
        all_addr = all_addr && recs[i].has_addr;
        all_ta = all_ta && recs[i].has_ta;
        all_tr = all_tr && recs[i].has_tr;
        all_idx = all_idx && recs[i].ev_idx != UINT64_MAX;
    }
    /* "Ev Idx" breaks ties only when every event has one (else the order would not be total) */
    if (!all_idx)
        for (size_t i = 0; i < m; i++)
            recs[i].ev_idx = UINT64_MAX;
    qsort(recs, m, sizeof *recs, rec_cmp);
    read_device_properties(d, root, device);
    d->has_allocated = all_ta;
    d->has_reserved = all_tr;
    if (!all_addr)
        imp_warn(d, "pairing inferred: this trace has no \"Addr\" on its [memory] events, so each free was paired "
                    "with the most recent live allocation of the same size (LIFO per size)");
    uint64_t zero = 0, pre_bytes = 0;
    imp_loc l = {"traceEvents", 0};
    for (size_t i = 0; i < m; i++) {
        const kin_rec *r = &recs[i];
        l.i = r->order;
        json_value at = {.line = r->line};
        if (r->size == 0) {
            zero++;
            continue;
        }
        imp_event *e = imp_push(d);
        if (e == NULL)
            goto nomem;
        e->t = e->ready_t = r->t;
        e->has_point = (uint8_t)(all_ta || all_tr);
        e->rec_allocated = r->total_alloc;
        e->rec_reserved = r->total_resv;
        if (!r->is_free) {
            e->op = SIM_OP_ALLOC;
            e->id = imp_new_id(d);
            e->size = r->size;
            if (all_addr) {
                imp_map_slot *s = imp_map_find(&live, r->addr);
                if (s != NULL) {
                    st = imp_fail(d, &at, &l, "allocation at address 0x%" PRIx64 ", which is still allocated "
                                             "(since traceEvents[%" PRIu64 "])", r->addr, s->c);
                    goto done;
                }
                if ((s = imp_map_insert(&live, r->addr)) == NULL)
                    goto nomem;
                s->a = e->id;
                s->b = r->size;
                s->c = r->order;
                char tag[32];
                snprintf(tag, sizeof tag, "0x%" PRIx64, r->addr);
                if ((e->str = imp_str(d, tag)) == 0)
                    goto nomem;
            } else {
                if (!SIM_GROW(nodes, n_nodes + 1, cap_nodes))
                    goto nomem;
                imp_map_slot *s = imp_map_find(&live, r->size);
                if (s == NULL && (s = imp_map_insert(&live, r->size)) == NULL)
                    goto nomem;
                nodes[n_nodes] = (lifo_node){.id = e->id, .next = s->a};
                s->a = ++n_nodes;
            }
            continue;
        }
        e->op = SIM_OP_FREE;
        uint64_t id = 0;
        if (all_addr) {
            imp_map_slot *s = imp_map_find(&live, r->addr);
            if (s != NULL) {
                if (s->b != r->size) {
                    st = imp_fail(d, &at, &l, "free of %" PRIu64 " bytes at address 0x%" PRIx64 ", where "
                                             "traceEvents[%" PRIu64 "] allocated %" PRIu64 " bytes",
                                  r->size, r->addr, s->c, s->b);
                    goto done;
                }
                id = s->a;
                imp_map_remove(&live, s);
            }
        } else {
            imp_map_slot *s = imp_map_find(&live, r->size);
            if (s != NULL && s->a != 0) {
                lifo_node *top_node = &nodes[s->a - 1];
                id = top_node->id;
                s->a = top_node->next;
            }
        }
        if (id == 0) {
            /* freed but never seen allocated: it was live when recording began */
            imp_event *p = imp_push_pre(d, r->size);
            if (p == NULL)
                goto nomem;
            id = p->id;
            pre_bytes += r->size;
            if (all_addr) {
                char tag[32];
                snprintf(tag, sizeof tag, "0x%" PRIx64, r->addr);
                if ((p->str = imp_str(d, tag)) == 0)
                    goto nomem;
            }
        }
        e->id = id;
    }
    if (zero)
        imp_warn(d, "%" PRIu64 " [memory] events of 0 bytes were skipped (neither an allocation nor a free)", zero);
    if (d->n_pre)
        imp_warn(d, "%zu blocks were freed without being seen allocated; they are allocations live at the start "
                    "(%" PRIu64 " bytes)", d->n_pre, pre_bytes);
    input_recorded *rec = &d->rec;
    if (all_ta && m > 0) {
        rec->allocated_source = "Kineto \"Total Allocated\"";
        rec->allocated_counts_event_sizes = true;
        /* what was allocated before the first event: its total minus its own change */
        const kin_rec *f = &recs[0];
        uint64_t before = f->is_free ? f->total_alloc + f->size : f->total_alloc - f->size;
        if ((!f->is_free && f->total_alloc < f->size) || before < pre_bytes) {
            imp_warn(d, "\"Total Allocated\" is inconsistent with the first event; no offset is known");
        } else {
            rec->allocated_offset = before - pre_bytes;
            rec->allocated_offset_known = true;
        }
    }
    if (rec->allocated_offset_known && rec->allocated_offset > 0) {
        /* recorded mid-run: what was live before the first event and never freed in
         * the window is one allocation at the start, so every command sees it */
        uint64_t live_before = rec->allocated_offset;
        imp_event *p = imp_push_pre(d, live_before);
        if (p == NULL)
            goto nomem;
        if ((p->str = imp_str(d, "live before the recording")) == 0)
            goto nomem;
        rec->live_before_bytes = live_before;
        rec->allocated_offset = 0;
        char h[32];
        imp_warn(d, "recorded mid-run: %s (%" PRIu64 " B) were allocated before the first event and stay live through "
                    "it; they are one allocation at the start (the blocks they were in are not recorded)",
                 units_format_size(live_before, h, sizeof h), live_before);
    }
    /* a cache already warm at the first event: something was live before it, or
     * more is reserved than the first event's own segment could be (20 MiB, or
     * its size rounded up to 2 MiB) */
    if (d->n_pre > 0)
        rec->reserved_start_unknown = true;
    if (all_tr && m > 0) {
        uint64_t seg = (recs[0].size + ((uint64_t)2 << 20) - 1) / ((uint64_t)2 << 20) * ((uint64_t)2 << 20);
        if (seg < ((uint64_t)20 << 20))
            seg = (uint64_t)20 << 20;
        if (recs[0].is_free ? recs[0].total_resv > 0 : recs[0].total_resv > seg)
            rec->reserved_start_unknown = true;
    }
    if (all_tr && m > 0) {
        rec->reserved_source = "Kineto \"Total Reserved\"";
        rec->reserved_start = recs[0].total_resv;
    }
    char extra[128];
    snprintf(extra, sizeof extra, ",\"device\":%" PRId64 ",\"pairing\":\"%s\",\"live_before_bytes\":%" PRIu64,
             device, all_addr ? "address" : "lifo-per-size", rec->live_before_bytes);
    st = imp_doc_finish(d, extra, d->err);
    goto done;
nomem:
    st = sim_error_set(d->err, SIM_ENOMEM, d->path, 0, 0, "out of memory");
done:
    free(recs);
    free(nodes);
    imp_map_release(&live);
    return st;
}
