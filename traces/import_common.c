/* Shared machinery of the importers: the document they build, pairing maps, JSON getters. */
#include "import_common.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "sim/buf.h"
#include "sim/grow.h"

bool imp_input_mapped(const imp_doc *d)
{
    return d->input != NULL && d->input_mapped;
}

void imp_release_input(imp_doc *d)
{
    if (d->input == NULL)
        return;
    if (d->input_mapped)
        munmap(*d->input, d->input_len);
    else
        free(*d->input);
    *d->input = NULL;
    d->input = NULL;
}

void imp_doc_init(imp_doc *d, const char *path, const input_format *f)
{
    memset(d, 0, sizeof *d);
    snprintf(d->path, sizeof d->path, "%s", path);
    d->format = f;
    d->next_id = 1;
    d->header.ns_per_unit = 1;
    snprintf(d->header.time_unit, sizeof d->header.time_unit, "ns");
}

void imp_doc_release(imp_doc *d)
{
    free(d->ev);
    free(d->pre);
    free(d->pend);
    free(d->pool);
    free(d->alloc_conf);
    free(d->out);
    free(d->col_alloc);
    free(d->col_resv);
    free(d->col_has);
    free(d->streams);
    free(d->header.meta_json);
    free(d->seed_segs);
    free(d->seed_planned);
    free(d->col_seg);
    free(d->col_off);
    free(d->col_pool);
    free(d->oom_idx);
    free(d->seed_blocks);
    free(d->end_blocks);
    memset(d, 0, sizeof *d);
}

void imp_set_err(imp_doc *d, sim_error *err)
{
    d->err = err;
}

static imp_event *push_into(imp_event **arr, size_t *n, size_t *cap)
{
    if (!SIM_GROW(*arr, *n + 1, *cap))
        return NULL;
    imp_event *e = &(*arr)[(*n)++];
    memset(e, 0, sizeof *e);
    return e;
}

imp_event *imp_push(imp_doc *d)
{
    return push_into(&d->ev, &d->n, &d->cap);
}

imp_event *imp_push_pre(imp_doc *d, uint64_t size)
{
    imp_event *e = push_into(&d->pre, &d->n_pre, &d->cap_pre);
    if (e == NULL)
        return NULL;
    e->op = SIM_OP_ALLOC;
    e->id = imp_new_id(d);
    e->size = size;
    return e;
}

bool imp_pend(imp_doc *d, uint64_t id)
{
    if (!SIM_GROW(d->pend, d->n_pend + 1, d->cap_pend))
        return false;
    d->pend[d->n_pend++] = id;
    return true;
}

uint64_t imp_new_id(imp_doc *d)
{
    return d->next_id++;
}

uint64_t imp_str(imp_doc *d, const char *s)
{
    size_t n = strlen(s) + 1;
    if (d->pool_len + n > d->pool_cap) {
        size_t c = d->pool_cap ? d->pool_cap : 4096;
        while (c < d->pool_len + n)
            c *= 2;
        char *p = realloc(d->pool, c);
        if (p == NULL)
            return 0;
        d->pool = p;
        d->pool_cap = c;
    }
    memcpy(d->pool + d->pool_len, s, n);
    uint64_t off = d->pool_len;
    d->pool_len += n;
    return off + 1;
}

uint32_t imp_stream(imp_doc *d, int64_t recorded)
{
    if (recorded == 0)
        return 0;
    for (uint32_t i = 0; i < d->n_streams; i++)
        if (d->streams[i] == recorded)
            return i + 1;
    if (!SIM_GROW(d->streams, d->n_streams + 1, d->cap_streams))
        return UINT32_MAX;
    d->streams[d->n_streams++] = recorded;
    return d->n_streams;
}

void imp_warn(imp_doc *d, const char *fmt, ...)
{
    if (d->n_warnings >= IMP_MAX_WARNINGS)
        return;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(d->warnings[d->n_warnings], sizeof d->warnings[0], fmt, ap);
    va_end(ap);
    d->n_warnings++;
}

const char *imp_basename(const char *path)
{
    const char *s = strrchr(path, '/');
    return s ? s + 1 : path;
}

sim_status imp_doc_finish(imp_doc *d, const char *extra_meta, sim_error *err)
{
    size_t first = d->n_pre + d->n_pend; /* the first recorded event's index */
    size_t total = first + d->n;
    d->t_origin = d->n ? d->ev[0].t : 0;
    /* a pending free at the start completes 1 ns after the last recorded event, so
     * that a replay ends with it pending, as the recording's segments show it */
    uint64_t end = d->n ? d->ev[d->n - 1].t - d->t_origin : 0;
    imp_event pend = {.op = SIM_OP_FREE};
    d->out = calloc(total ? total : 1, sizeof *d->out);
    d->col_alloc = calloc(total ? total : 1, sizeof *d->col_alloc);
    d->col_resv = calloc(total ? total : 1, sizeof *d->col_resv);
    d->col_has = calloc(total ? total : 1, 1);
    if (d->out == NULL || d->col_alloc == NULL || d->col_resv == NULL || d->col_has == NULL)
        return sim_error_set(err, SIM_ENOMEM, d->path, 0, 0, "out of memory");
    if (d->has_placement) {
        d->col_seg = malloc((total ? total : 1) * sizeof *d->col_seg);
        d->col_off = calloc(total ? total : 1, sizeof *d->col_off);
        if (d->col_seg == NULL || d->col_off == NULL)
            return sim_error_set(err, SIM_ENOMEM, d->path, 0, 0, "out of memory");
        bool pools = false;
        for (size_t i = 0; i < d->n && !pools; i++)
            pools = d->ev[i].op == SIM_OP_ALLOC && d->ev[i].pool != 0;
        if (pools && (d->col_pool = calloc(total ? total : 1, sizeof *d->col_pool)) == NULL)
            return sim_error_set(err, SIM_ENOMEM, d->path, 0, 0, "out of memory");
    }
    uint64_t n_oom = 0;
    for (size_t i = 0; i < d->n; i++)
        n_oom += d->ev[i].is_oom;
    d->oom_idx = malloc((n_oom ? n_oom : 1) * sizeof *d->oom_idx);
    if (d->oom_idx == NULL)
        return sim_error_set(err, SIM_ENOMEM, d->path, 0, 0, "out of memory");
    n_oom = 0;
    uint64_t prev = 0;
    bool peak_a = false, peak_r = false;
    uint64_t max_a = 0, max_r = 0;
    for (size_t i = 0; i < total; i++) {
        if (i >= d->n_pre && i < first)
            pend.id = d->pend[i - d->n_pre];
        const imp_event *e = i < d->n_pre ? &d->pre[i] : i < first ? &pend : &d->ev[i - first];
        sim_event *o = &d->out[i];
        o->op = (sim_op)e->op;
        o->id = e->id;
        o->size = e->size;
        o->stream = e->stream;
        o->has_share = e->has_share;
        o->share = e->share;
        if (o->op == SIM_OP_POOL_BEGIN || o->op == SIM_OP_POOL_END || o->op == SIM_OP_POOL_RELEASE ||
            o->op == SIM_OP_GRAPH_REPLAY) {
            o->pool = e->pool;
            o->pool_flags = e->pool_flags;
        }
        o->index = i + 1;
        if (i < d->n_pre) {
            o->t = o->ready_t = 0;
        } else if (i < first) {
            o->t = 0;
            o->ready_t = end + 1;
        } else {
            /* importers emit recorded events in time order; times before the origin cannot occur */
            o->t = e->t - d->t_origin;
            o->ready_t = (e->ready_t > e->t ? e->ready_t : e->t) - d->t_origin;
            if (o->t < prev)
                return sim_error_set(err, SIM_EINTERNAL, d->path, 0, i + 1, "importer emitted events out of order");
            prev = o->t;
            if (o->ready_t > SIM_MAX_SIZE)
                return sim_error_set(err, SIM_ETRACE, d->path, 0, 0,
                                     "the recording spans more than 2^53 ns (104 days); times cannot be kept exactly");
        }
        if (d->has_placement) {
            bool known = i >= first && e->op == SIM_OP_ALLOC;
            d->col_seg[i] = known ? e->place_seg : UINT32_MAX;
            d->col_off[i] = known ? e->place_off : 0;
            if (d->col_pool != NULL)
                d->col_pool[i] = known ? e->pool : 0;
            if (known && e->place_seg != UINT32_MAX)
                d->rec.placements++;
        }
        if (i >= first && e->is_oom)
            d->oom_idx[n_oom++] = i;
        const char *s = e->str ? d->pool + (e->str - 1) : NULL;
        if (o->op == SIM_OP_MARK)
            o->name = s ? s : "";
        else
            o->tag = s;
        if (e->has_point) {
            d->col_has[i] = 1;
            d->col_alloc[i] = e->rec_allocated;
            d->col_resv[i] = e->rec_reserved;
            if (d->has_allocated && (!peak_a || e->rec_allocated > max_a)) {
                max_a = e->rec_allocated;
                peak_a = true;
            }
            if (d->has_reserved && (!peak_r || e->rec_reserved > max_r)) {
                max_r = e->rec_reserved;
                peak_r = true;
            }
        }
    }
    input_recorded *r = &d->rec;
    r->n = total;
    r->has_allocated = d->has_allocated;
    r->has_reserved = d->has_reserved;
    r->allocated = d->has_allocated ? d->col_alloc : NULL;
    r->reserved = d->has_reserved ? d->col_resv : NULL;
    r->has_point = (d->has_allocated || d->has_reserved) ? d->col_has : NULL;
    r->placement_segment = d->has_placement ? d->col_seg : NULL;
    r->placement_offset = d->has_placement ? d->col_off : NULL;
    r->placement_pool = d->col_pool;
    r->oom_events = d->oom_idx;
    if (!r->has_peak_allocated && peak_a) {
        r->has_peak_allocated = true;
        r->peak_allocated = max_a;
    }
    if (!r->has_peak_reserved && peak_r) {
        r->has_peak_reserved = true;
        r->peak_reserved = max_r > r->reserved_start ? max_r : r->reserved_start;
    }
    if (d->header.name[0] == '\0')
        snprintf(d->header.name, sizeof d->header.name, "%.255s", imp_basename(d->path));
    sim_buf b;
    sim_buf_init(&b);
    sim_buf_puts(&b, "{\"imported_from\":{\"format\":");
    sim_buf_json_str(&b, input_format_name(d->format));
    sim_buf_puts(&b, ",\"file\":");
    sim_buf_json_str(&b, imp_basename(d->path));
    sim_buf_printf(&b, ",\"time_origin_ns\":%llu", (unsigned long long)d->t_origin);
    sim_buf_printf(&b, ",\"start_allocations\":%llu", (unsigned long long)d->n_pre);
    if (d->alloc_conf) {
        sim_buf_puts(&b, ",\"alloc_conf\":");
        sim_buf_json_str(&b, d->alloc_conf);
    }
    sim_buf_puts(&b, extra_meta ? extra_meta : "");
    if (d->n_warnings) {
        sim_buf_puts(&b, ",\"warnings\":[");
        for (uint32_t i = 0; i < d->n_warnings; i++) {
            if (i)
                sim_buf_puts(&b, ",");
            sim_buf_json_str(&b, d->warnings[i]);
        }
        sim_buf_puts(&b, "]");
    }
    sim_buf_puts(&b, "}}");
    if (b.oom) {
        sim_buf_release(&b);
        return sim_error_set(err, SIM_ENOMEM, d->path, 0, 0, "out of memory");
    }
    d->header.meta_json = b.data;
    return SIM_OK;
}

/* ---------------------------------------------------------------- map */

void imp_map_init(imp_map *m)
{
    memset(m, 0, sizeof *m);
}

void imp_map_release(imp_map *m)
{
    free(m->slots);
    if (m->ready)
        idmap_release(&m->index);
    memset(m, 0, sizeof *m);
}

imp_map_slot *imp_map_find(imp_map *m, uint64_t key)
{
    const idmap_entry *e = m->ready ? idmap_find(&m->index, key) : NULL;
    return e ? &m->slots[e->size] : NULL;
}

imp_map_slot *imp_map_insert(imp_map *m, uint64_t key)
{
    if (!m->ready) {
        if (!idmap_init(&m->index))
            return NULL;
        m->ready = true;
    }
    size_t i;
    if (m->free_head) {
        i = m->free_head - 1;
        m->free_head = (size_t)m->slots[i].a;
    } else {
        if (!SIM_GROW(m->slots, m->cap + 1, m->alloc))
            return NULL;
        i = m->cap++; /* no free record: every record made is in use */
    }
    idmap_entry *e = idmap_insert(&m->index, key);
    if (e == NULL) {
        m->slots[i] = (imp_map_slot){.a = m->free_head};
        m->free_head = i + 1;
        return NULL;
    }
    e->size = i;
    imp_map_slot *s = &m->slots[i];
    *s = (imp_map_slot){.key = key, .used = true};
    m->n++;
    return s;
}

void imp_map_remove(imp_map *m, imp_map_slot *s)
{
    idmap_entry *e = idmap_find(&m->index, s->key);
    if (e)
        idmap_remove(&m->index, e);
    size_t i = (size_t)(s - m->slots);
    *s = (imp_map_slot){.a = m->free_head};
    m->free_head = i + 1;
    m->n--;
}

/* ---------------------------------------------------------------- JSON getters */

const char *imp_loc_text(const imp_loc *l, char *buf, size_t cap)
{
    if (l == NULL || l->name == NULL)
        snprintf(buf, cap, "top level");
    else if (l->i == UINT64_MAX)
        snprintf(buf, cap, "%s", l->name);
    else
        snprintf(buf, cap, "%s[%llu]", l->name, (unsigned long long)l->i);
    return buf;
}

sim_status imp_fail(const imp_doc *d, const json_value *at, const imp_loc *l, const char *fmt, ...)
{
    char where[160], msg[400];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    return sim_error_set(d->err, SIM_ETRACE, d->path, at ? at->line : 0, 0, "%s: %s",
                         imp_loc_text(l, where, sizeof where), msg);
}

/* -?[0-9]+, at most 30 characters */
static bool decimal_string(const char *s, uint32_t len)
{
    if (len == 0 || len > 30)
        return false;
    uint32_t i = s[0] == '-' ? 1 : 0;
    if (i == len)
        return false;
    for (; i < len; i++)
        if (s[i] < '0' || s[i] > '9')
            return false;
    return true;
}

static sim_status number_text(const imp_doc *d, const json_value *v, const char *key, const imp_loc *l,
                              json_value *tmp, const json_value **num)
{
    if (v->type == JSON_NUMBER) {
        *num = v;
        return SIM_OK;
    }
    if (v->type == JSON_STRING && decimal_string(v->u.str, v->len)) {
        /* protobuf JSON writes int64 as a decimal string */
        *tmp = *v;
        tmp->type = JSON_NUMBER;
        tmp->u.num = v->u.str;
        *num = tmp;
        return SIM_OK;
    }
    return imp_fail(d, v, l, "\"%s\" must be an integer, not %s", key, json_type_name(v->type));
}

/* What imp_get_u64 and imp_get_i64 share: the value under key (*v) and its number
 * (*num, in tmp for a decimal string); both NULL and SIM_OK when it is absent or null
 * (missing is an error when required); *present (if asked) says whether it is there. */
static sim_status integer_at(const imp_doc *d, const json_value *obj, const char *key, bool required, bool *present,
                             const imp_loc *l, json_value *tmp, const json_value **v, const json_value **num)
{
    *v = json_get(obj, key);
    *num = NULL;
    bool there = *v != NULL && (*v)->type != JSON_NULL;
    if (present)
        *present = there;
    if (!there) {
        *v = NULL;
        return required ? imp_fail(d, obj, l, "missing \"%s\"", key) : SIM_OK;
    }
    return number_text(d, *v, key, l, tmp, num);
}

sim_status imp_get_u64(const imp_doc *d, const json_value *obj, const char *key, bool required, uint64_t max,
                       uint64_t *out, bool *present, const imp_loc *l)
{
    json_value tmp;
    const json_value *v = NULL, *num = NULL;
    sim_status st = integer_at(d, obj, key, required, present, l, &tmp, &v, &num);
    if (st != SIM_OK || num == NULL)
        return st;
    json_int_status is = json_to_u64(num, max, out);
    if (is != JSON_INT_OK)
        return imp_fail(d, v, l, "\"%s\" %.*s %s (expected an integer 0..%llu)", key,
                        (int)(num->len > 40 ? 40 : num->len), num->u.num, json_int_status_text(is),
                        (unsigned long long)max);
    return SIM_OK;
}

sim_status imp_get_i64(const imp_doc *d, const json_value *obj, const char *key, bool required, int64_t *out,
                       bool *present, const imp_loc *l)
{
    json_value tmp;
    const json_value *v = NULL, *num = NULL;
    sim_status st = integer_at(d, obj, key, required, present, l, &tmp, &v, &num);
    if (st != SIM_OK || num == NULL)
        return st;
    json_int_status is = json_to_i64(num, (uint64_t)INT64_MAX, out);
    if (is != JSON_INT_OK)
        return imp_fail(d, v, l, "\"%s\" %.*s %s (expected a 64-bit integer)", key,
                        (int)(num->len > 40 ? 40 : num->len), num->u.num, json_int_status_text(is));
    return SIM_OK;
}

sim_status imp_get_str(const imp_doc *d, const json_value *obj, const char *key, bool required,
                       const char **out, const imp_loc *l)
{
    const json_value *v = json_get(obj, key);
    *out = NULL;
    if (v == NULL || v->type == JSON_NULL) {
        if (required)
            return imp_fail(d, obj, l, "missing \"%s\"", key);
        return SIM_OK;
    }
    if (v->type != JSON_STRING)
        return imp_fail(d, v, l, "\"%s\" must be a string, not %s", key, json_type_name(v->type));
    *out = v->u.str;
    return SIM_OK;
}

bool imp_decimal_scaled(const json_value *v, int pow10, uint64_t *out)
{
    if (v == NULL || (v->type != JSON_NUMBER && v->type != JSON_STRING) || v->len == 0)
        return false;
    const char *s = v->type == JSON_NUMBER ? v->u.num : v->u.str, *end = s + v->len;
    if (*s == '-' || *s == '+')
        return false;
    /* digits (integer and fraction) and the decimal exponent they imply */
    uint64_t mant = 0;
    int64_t exp10 = 0;
    bool any = false, dot = false, dropped = false;
    for (; s < end && ((*s >= '0' && *s <= '9') || *s == '.'); s++) {
        if (*s == '.') {
            if (dot)
                return false;
            dot = true;
            continue;
        }
        any = true;
        unsigned dgt = (unsigned)(*s - '0');
        if (mant > (UINT64_MAX - dgt) / 10) {
            /* more digits than 64 bits hold: keep the scale, drop the digit */
            if (!dot)
                exp10++;
            dropped = dropped || dgt != 0;
            continue;
        }
        mant = mant * 10 + dgt;
        if (dot)
            exp10--;
    }
    if (!any)
        return false;
    if (s < end && (*s == 'e' || *s == 'E')) {
        s++;
        bool neg = false;
        if (s < end && (*s == '+' || *s == '-'))
            neg = *s++ == '-';
        int64_t e = 0;
        if (s == end)
            return false;
        for (; s < end && *s >= '0' && *s <= '9'; s++) {
            if (e > 100000)
                return false;
            e = e * 10 + (*s - '0');
        }
        exp10 += neg ? -e : e;
    }
    if (s != end)
        return false;
    (void)dropped;
    /* value = mant × 10^(exp10 + pow10), truncated to an integer */
    exp10 += pow10;
    uint64_t val = mant;
    for (; exp10 > 0; exp10--) {
        if (val > UINT64_MAX / 10)
            return false;
        val *= 10;
    }
    for (; exp10 < 0 && val; exp10++)
        val /= 10;
    *out = val;
    return true;
}
