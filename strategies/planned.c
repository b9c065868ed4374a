/* The `planned` strategy (planned.h for its rules). The plan is made in plan(),
 * which the engine calls before the first alloc(); alloc/free then cost
 * O(log n) (the live set's hole tree, plan_live.h). A plan depends only on the
 * options and the process's alloc/free sequence, never on the device, so the
 * replays of one command share it through the command's memo (sim/memo.h): the
 * first replay plans, the others copy its offsets. */
#include "planned.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "plan.h"
#include "plan_live.h"
#include "plan_tflite.h"
#include "plan_xla.h"
#include "planned_types.h"
#include "sim/memo.h"
#include "sim/units.h"

static const char *const PLANNER_NAMES[PLANNER_COUNT] = {"xla", "xla-spatial", "xla-temporal", "tflite",
                                                         "tflite-gpu"};

/* The keys create() reads and options() writes back. */
static const strategy_option PLANNED_OPTIONS[] = {
    STRATEGY_OPT_ENUM("planner", "planner", "xla|xla-spatial|xla-temporal|tflite|tflite-gpu", "xla", "tflite",
                      "the offline planner: XLA's heap (the better of its spatial and temporal orders, or one of "
                      "them), TFLite's arena planner or its GPU delegate's greedy by size"),
    STRATEGY_OPT_SIZE("alignment", "alignment", "256 for xla, 64 for tflite, 1 for tflite-gpu", "512",
                      "every buffer's offset is a multiple of it (kXlaAllocatedBufferAlignBytes, "
                      "kDefaultTensorAlignment)"),
    STRATEGY_OPT_SIZE("heap_limit", "heap-limit", "none", "1GiB",
                      "XLA's per-heap size limit: buffers that would end past it go to a further heap (xla planners)"),
};

static bool is_xla(planner_kind k)
{
    return k <= PLANNER_XLA_TEMPORAL;
}

static uint64_t default_alignment(planner_kind k)
{
    return is_xla(k) ? PLAN_XLA_ALIGNMENT : k == PLANNER_TFLITE ? PLAN_TFLITE_ALIGNMENT : PLAN_TFLITE_GPU_ALIGNMENT;
}

static sim_status planned_create(const strategy_config *cfg, strategy **out, sim_error *err)
{
    planner_kind kind = PLANNER_XLA;
    const char *v = strategy_config_get(cfg, "planner");
    if (v != NULL) {
        kind = PLANNER_COUNT;
        for (int k = 0; k < PLANNER_COUNT; k++)
            if (strcmp(v, PLANNER_NAMES[k]) == 0)
                kind = (planner_kind)k;
        if (kind == PLANNER_COUNT)
            return strategy_option_error(err, "--planner", v, "xla, xla-spatial, xla-temporal, tflite or tflite-gpu",
                                         NULL);
    }
    uint64_t align = default_alignment(kind), limit = 0;
    if ((v = strategy_config_get(cfg, "alignment")) != NULL) {
        sim_status st = units_parse_size(v, &align, err);
        if (st != SIM_OK)
            return st;
        if (align == 0)
            return sim_error_set(err, SIM_EUSAGE, NULL, 0, 0, "--alignment must be at least 1 byte");
    }
    if ((v = strategy_config_get(cfg, "heap_limit")) != NULL) {
        sim_status st = units_parse_size(v, &limit, err);
        if (st != SIM_OK)
            return st;
        if (limit > 0 && !is_xla(kind))
            return sim_error_set(err, SIM_EUSAGE, NULL, 0, 0,
                                 "--heap-limit is XLA's multi-heap constraint: it needs an xla planner, not %s",
                                 PLANNER_NAMES[kind]);
    }
    strategy *s = calloc(1, sizeof *s);
    if (s == NULL)
        return sim_error_set(err, SIM_ENOMEM, NULL, 0, 0, "out of memory creating planned");
    *s = (strategy){.dev = cfg->dev, .proc = cfg->proc, .planner = kind, .alignment = align,
                    .heap_limit = limit, .order = "", .memo = cfg->memo};
    *out = s;
    return SIM_OK;
}

static void planned_destroy(strategy *s)
{
    if (s == NULL)
        return;
    free(s->off);
    free(s->size);
    free(s->slot);
    free(s->grp_first);
    free(s->grp_member);
    free(s->slot_count);
    free(s->slot_at_max);
    free(s->slot_max);
    free(s->mlive);
    free(s->first);
    free(s->last);
    plan_live_free(s->live);
    free(s);
}

/* The groups of shared buffers (planned_types.h), when an xla planner colocated some. */
static sim_status make_groups(strategy *s, const plan_buffer *b, const uint32_t *shares)
{
    if (shares == NULL || !is_xla(s->planner))
        return SIM_OK;
    size_t nn = s->n ? s->n : 1;
    s->slot = malloc(nn * sizeof *s->slot);
    s->grp_first = calloc(nn + 1, sizeof *s->grp_first);
    s->grp_member = malloc(nn * sizeof *s->grp_member);
    s->slot_count = calloc(nn, sizeof *s->slot_count);
    s->slot_at_max = calloc(nn, sizeof *s->slot_at_max);
    s->slot_max = calloc(nn, sizeof *s->slot_max);
    s->mlive = calloc(nn, sizeof *s->mlive);
    uint32_t *at = malloc(nn * sizeof *at);
    sim_status st = SIM_ENOMEM;
    if (s->slot != NULL && s->grp_first != NULL && s->grp_member != NULL && s->slot_count != NULL &&
        s->slot_at_max != NULL && s->slot_max != NULL && s->mlive != NULL && at != NULL)
        st = plan_xla_roots(b, s->n, shares, s->slot);
    if (st == SIM_OK) {
        for (uint32_t i = 0; i < s->n; i++)
            if (s->slot[i] != i)
                s->grp_first[s->slot[i] + 1]++;
        for (uint32_t i = 0; i < s->n; i++) {
            s->grp_first[i + 1] += s->grp_first[i];
            at[i] = s->grp_first[i];
        }
        for (uint32_t i = 0; i < s->n; i++)
            if (s->slot[i] != i)
                s->grp_member[at[s->slot[i]]++] = i;
    }
    free(at);
    return st;
}

/* Buffer k becomes live or dead: the live set, and the bytes of its block (the
 * largest live member of its group; recounted over the group only when the last
 * live member of the largest size leaves while smaller ones stay). */
static void set_live(strategy *s, uint32_t k, bool live)
{
    if (s->live != NULL)
        plan_live_set(s->live, k, live);
    if (s->slot == NULL) {
        s->live_bytes = live ? s->live_bytes + s->size[k] : s->live_bytes - s->size[k];
        return;
    }
    uint32_t r = s->slot[k];
    uint64_t old = s->slot_max[r], sz = s->size[k];
    s->mlive[k] = live;
    if (live) {
        s->slot_count[r]++;
        if (sz > old) {
            s->slot_max[r] = sz;
            s->slot_at_max[r] = 1;
        } else if (sz == old) {
            s->slot_at_max[r]++;
        }
    } else if (--s->slot_count[r] == 0) {
        s->slot_max[r] = 0;
        s->slot_at_max[r] = 0;
    } else if (sz == old && --s->slot_at_max[r] == 0) {
        uint64_t m = 0;
        uint32_t c = 0;
        for (uint32_t j = s->grp_first[r]; j <= s->grp_first[r + 1]; j++) {
            uint32_t x = j < s->grp_first[r + 1] ? s->grp_member[j] : r;
            if (!s->mlive[x])
                continue;
            c = s->size[x] > m ? 1 : c + (s->size[x] == m ? 1u : 0u);
            m = s->size[x] > m ? s->size[x] : m;
        }
        s->slot_max[r] = m;
        s->slot_at_max[r] = c;
    }
    s->live_bytes = s->live_bytes - old + s->slot_max[r];
}

/* The no-fragmentation peak with shares: the most the live blocks ever hold (a group
 * counted once, at its largest live member), by replaying the sequence on the
 * groups alone; the state is left empty again. */
static uint64_t shared_peak(strategy *s, const strategy_lifetimes *lt)
{
    uint64_t peak = 0;
    uint32_t next = 0;
    for (uint64_t i = 0; i < lt->n_events; i++) {
        bool alloc = lt->events[i] == STRATEGY_PLAN_ALLOC;
        set_live(s, alloc ? next++ : lt->events[i], alloc);
        if (s->live_bytes > peak)
            peak = s->live_bytes;
    }
    for (uint32_t k = 0; k < s->n; k++)
        if (s->mlive[k])
            set_live(s, k, false);
    return peak;
}

/* The bytes of buffer k's block as the walk shows it (k live). */
static uint64_t block_of(const strategy *s, uint32_t k)
{
    return s->slot != NULL ? s->slot_max[s->slot[k]] : s->size[k];
}

static sim_status make_plan(strategy *s, const strategy_lifetimes *lt, sim_error *err)
{
    plan_trace *t = plan_trace_new();
    sim_status st = t ? SIM_OK : SIM_ENOMEM;
    uint32_t next = 0, id;
    for (uint64_t i = 0; st == SIM_OK && i < lt->n_events; i++) {
        if (lt->events[i] == STRATEGY_PLAN_ALLOC)
            st = plan_trace_alloc(t, lt->sizes[next++], &id);
        else
            st = plan_trace_release(t, lt->events[i]);
    }
    uint32_t n = st == SIM_OK ? plan_trace_buffers(t) : 0;
    size_t nn = n ? n : 1;
    plan_buffer *b = malloc(nn * sizeof *b);
    s->off = malloc(nn * sizeof *s->off);
    s->size = malloc(nn * sizeof *s->size);
    s->first = malloc(nn * sizeof *s->first);
    s->last = malloc(nn * sizeof *s->last);
    if (st == SIM_OK && (b == NULL || s->off == NULL || s->size == NULL || s->first == NULL || s->last == NULL))
        st = SIM_ENOMEM;
    plan_result r = {0};
    if (st == SIM_OK) {
        s->n_events = plan_trace_events(t);
        plan_lifetimes(t, PLAN_CLOCK_TFLITE, b);
        for (uint32_t i = 0; i < n; i++) {
            s->first[i] = (uint64_t)b[i].start;
            s->last[i] = b[i].end == PLAN_FOREVER ? s->n_events : (uint64_t)b[i].end;
        }
        plan_lifetimes(t, is_xla(s->planner) ? PLAN_CLOCK_XLA : PLAN_CLOCK_TFLITE, b);
        if (is_xla(s->planner)) {
            plan_xla_config cfg = {.order = s->planner == PLANNER_XLA_SPATIAL    ? PLAN_XLA_SPATIAL
                                            : s->planner == PLANNER_XLA_TEMPORAL ? PLAN_XLA_TEMPORAL
                                                                                 : PLAN_XLA_BEST,
                                   .alignment = s->alignment,
                                   .heap_limit = s->heap_limit,
                                   .share = lt->shares};
            st = plan_xla(b, n, &cfg, s->off, &r);
        } else if (s->planner == PLANNER_TFLITE) {
            st = plan_tflite(b, n, s->alignment, s->off, &r);
        } else {
            st = plan_tflite_gpu(b, n, s->alignment, s->off, &r);
        }
    }
    if (st == SIM_OK) {
        for (uint32_t i = 0; i < n; i++)
            s->size[i] = b[i].size;
        s->n = n;
        s->heap = r.heap_size;
        s->heaps = r.n_heaps;
        s->order = r.order;
        s->peak = plan_trace_peak(t);
        st = make_groups(s, b, lt->shares);
        if (st == SIM_OK && s->slot != NULL)
            s->peak = shared_peak(s, lt);
        if (st == SIM_OK && (s->live = plan_live_new(s->off, s->size, n)) == NULL)
            st = SIM_ENOMEM;
    }
    free(b);
    plan_trace_free(t);
    if (st == SIM_OK) {
        s->planned = true;
        return SIM_OK;
    }
    if (st == SIM_EUSAGE)
        return sim_error_set(err, st, NULL, 0, 0, "planned: a buffer is too large for the %s planner",
                             PLANNER_NAMES[s->planner]);
    return sim_error_set(err, st, NULL, 0, 0, "planned: %s while planning", sim_strerror(st));
}

/* A plan as the memo keeps it: this record, then off, size, first and last (n each). */
typedef struct plan_record {
    uint32_t n, heaps;
    uint64_t n_events, heap, peak;
    const char *order; /* a planner's static name */
} plan_record;

#define PLAN_ARRAYS 4u

/* The groups of shared buffers again, for an instance that took its offsets from
 * the memo: they are the instance's own state (which members are live). */
static sim_status adopt_groups(strategy *s, const strategy_lifetimes *lt)
{
    if (lt->shares == NULL || !is_xla(s->planner))
        return SIM_OK;
    plan_trace *t = plan_trace_new();
    sim_status st = t ? SIM_OK : SIM_ENOMEM;
    uint32_t next = 0, id;
    for (uint64_t i = 0; st == SIM_OK && i < lt->n_events; i++)
        st = lt->events[i] == STRATEGY_PLAN_ALLOC ? plan_trace_alloc(t, lt->sizes[next++], &id)
                                                  : plan_trace_release(t, lt->events[i]);
    plan_buffer *b = st == SIM_OK ? malloc((s->n ? s->n : 1) * sizeof *b) : NULL;
    if (st == SIM_OK && b == NULL)
        st = SIM_ENOMEM;
    if (st == SIM_OK) {
        plan_lifetimes(t, PLAN_CLOCK_XLA, b);
        st = make_groups(s, b, lt->shares);
    }
    free(b);
    plan_trace_free(t);
    return st;
}

/* Takes the plan of a record the memo holds (len bytes at v). */
static sim_status adopt_plan(strategy *s, const strategy_lifetimes *lt, const void *v, size_t len, sim_error *err)
{
    plan_record r;
    if (len < sizeof r)
        return sim_error_set(err, SIM_EINTERNAL, NULL, 0, 0, "planned: a shared plan of %zu bytes", len);
    memcpy(&r, v, sizeof r);
    size_t bytes = (size_t)r.n * sizeof(uint64_t);
    if (len != sizeof r + PLAN_ARRAYS * bytes)
        return sim_error_set(err, SIM_EINTERNAL, NULL, 0, 0, "planned: a shared plan of %zu bytes", len);
    size_t nn = r.n ? bytes : sizeof(uint64_t);
    uint64_t **dst[PLAN_ARRAYS] = {&s->off, &s->size, &s->first, &s->last};
    const unsigned char *src = (const unsigned char *)v + sizeof r;
    for (unsigned a = 0; a < PLAN_ARRAYS; a++, src += bytes) {
        if ((*dst[a] = malloc(nn)) == NULL)
            return sim_error_set(err, SIM_ENOMEM, NULL, 0, 0, "planned: out of memory while planning");
        if (bytes)
            memcpy(*dst[a], src, bytes);
    }
    s->n = r.n;
    s->heaps = r.heaps;
    s->n_events = r.n_events;
    s->heap = r.heap;
    s->peak = r.peak;
    s->order = r.order;
    if (adopt_groups(s, lt) != SIM_OK || (s->live = plan_live_new(s->off, s->size, s->n)) == NULL)
        return sim_error_set(err, SIM_ENOMEM, NULL, 0, 0, "planned: out of memory while planning");
    s->planned = true;
    return SIM_OK;
}

/* Gives the memo this instance's plan (nothing when the host is out of memory:
 * the next replay plans again). */
static void share_plan(const strategy *s, sim_memo *memo, const sim_memo_part *key, size_t n_key)
{
    plan_record r = {.n = s->n, .heaps = s->heaps, .n_events = s->n_events, .heap = s->heap, .peak = s->peak,
                     .order = s->order};
    size_t bytes = (size_t)s->n * sizeof(uint64_t);
    unsigned char *v = malloc(sizeof r + PLAN_ARRAYS * bytes);
    if (v == NULL) {
        sim_memo_abandon(memo, key, n_key);
        return;
    }
    memcpy(v, &r, sizeof r);
    const uint64_t *src[PLAN_ARRAYS] = {s->off, s->size, s->first, s->last};
    for (unsigned a = 0; a < PLAN_ARRAYS; a++)
        if (bytes)
            memcpy(v + sizeof r + a * bytes, src[a], bytes);
    (void)sim_memo_put(memo, key, n_key, v, sizeof r + PLAN_ARRAYS * bytes);
    free(v);
}

/* The effective options as options() writes them ("key=value\n" each), the part
 * of a memo key that names the option set: every option there is, so that one
 * added to the table cannot be left out of the key. */
typedef struct opts_text {
    char buf[512];
    size_t len;
    bool overflow;
} opts_text;

static void opts_text_add(void *ctx, const char *key, const char *value)
{
    opts_text *o = ctx;
    int n = snprintf(o->buf + o->len, sizeof o->buf - o->len, "%s=%s\n", key, value);
    if (n < 0 || (size_t)n >= sizeof o->buf - o->len)
        o->overflow = true;
    else
        o->len += (size_t)n;
}

static void opts_u64_add(void *ctx, const char *key, uint64_t value)
{
    char v[32];
    snprintf(v, sizeof v, "%llu", (unsigned long long)value);
    opts_text_add(ctx, key, v);
}

static void opts_real_add(void *ctx, const char *key, double value)
{
    char v[40];
    snprintf(v, sizeof v, "%.17g", value);
    opts_text_add(ctx, key, v);
}

static void planned_options(const strategy *s, const strategy_stat_sink *sink);

/* The plan of this option set and sequence: the memo's when a replay of the same
 * command made it, else made here (and shared). */
static sim_status planned_plan(strategy *s, const strategy_lifetimes *lt, sim_error *err)
{
    opts_text opts = {.len = 0};
    strategy_stat_sink sink = {opts_u64_add, opts_real_add, opts_text_add, &opts};
    planned_options(s, &sink);
    sim_memo_part key[4] = {{opts.buf, opts.len},
                            {lt->events, (size_t)lt->n_events * sizeof *lt->events},
                            {lt->sizes, (size_t)lt->n_buffers * sizeof *lt->sizes},
                            {lt->shares, lt->shares ? (size_t)lt->n_buffers * sizeof *lt->shares : 0}};
    sim_memo *memo = opts.overflow ? NULL : s->memo;
    if (memo != NULL) {
        const void *v = NULL;
        size_t len = 0;
        sim_memo_state ms = sim_memo_begin(memo, key, 4, &v, &len);
        if (ms == SIM_MEMO_FOUND)
            return adopt_plan(s, lt, v, len, err);
        if (ms == SIM_MEMO_NONE)
            memo = NULL;
    }
    sim_status st = make_plan(s, lt, err);
    if (memo != NULL) {
        if (st == SIM_OK)
            share_plan(s, memo, key, 4);
        else
            sim_memo_abandon(memo, key, 4);
    }
    return st;
}

static sim_status planned_alloc(strategy *s, uint64_t size, uint32_t stream, strategy_handle *h,
                                strategy_oom *oom)
{
    (void)stream;
    if (!s->planned || s->next >= s->n || s->size[s->next] != size)
        return SIM_EINTERNAL; /* the engine replays exactly the sequence it planned */
    if (!s->arena_taken && s->heap > 0) {
        uint64_t avail = device_free_bytes(s->dev);
        if (device_map(s->dev, s->proc, s->heap) != SIM_OK) {
            *oom = (strategy_oom){.size_bytes = s->heap, .free_bytes = 0, .largest_free_bytes = 0,
                                  .reserved_bytes = 0, .device_free_bytes = avail};
            /* the engine names the cause (design.md §3): the program's peak against what it
             * may use, so a heap larger than the live peak is fragmentation */
            char a[32], b[32], c[32];
            snprintf(oom->detail, sizeof oom->detail,
                     "the %s plan needs an arena of %s (its live peak is %s) and the device has %s left: "
                     "the program cannot run at all",
                     PLANNER_NAMES[s->planner], units_format_size(s->heap, a, sizeof a),
                     units_format_size(s->peak, b, sizeof b), units_format_size(avail, c, sizeof c));
            s->next++; /* this buffer never lives; with --on-oom=skip the next alloc is the next buffer */
            return SIM_OOM;
        }
        s->arena_taken = true;
    }
    uint32_t k = s->next++;
    set_live(s, k, true);
    s->live_count++;
    *h = k;
    return SIM_OK;
}

static void planned_free(strategy *s, strategy_handle h, bool deferred)
{
    (void)deferred; /* rule 4: the buffer ends at its free's place in the program */
    set_live(s, h, false);
    s->live_count--;
}

static void planned_free_ready(strategy *s, strategy_handle h)
{
    (void)s;
    (void)h;
}

static void planned_empty_cache(strategy *s)
{
    (void)s;
}

static uint64_t reserved(const strategy *s)
{
    return s->arena_taken ? s->heap : 0;
}

static void planned_sample(const strategy *s, strategy_sample *out)
{
    uint64_t r = reserved(s);
    *out = (strategy_sample){.allocated_bytes = s->live_bytes, .reserved_bytes = r,
                             .free_bytes = r - s->live_bytes,
                             .largest_free_bytes = r ? plan_live_largest_hole(s->live, r) : 0,
                             .num_device_allocs = s->arena_taken ? 1 : 0};
}

static void planned_stats(const strategy *s, const strategy_stat_sink *sink)
{
    sink->u64(sink->ctx, "heap_size_bytes", s->heap);
    sink->u64(sink->ctx, "no_fragmentation_peak_bytes", s->peak);
    sink->u64(sink->ctx, "fragmentation_size_bytes", s->heap - s->peak);
    sink->u64(sink->ctx, "heaps", s->heaps);
    strategy_emit_text(sink, "order", s->order); /* a --summary sink takes no text */
    sink->u64(sink->ctx, "buffers", s->n);
    sink->u64(sink->ctx, "bytes_in_use", s->live_bytes);
    sink->u64(sink->ctx, "live_allocations", s->live_count);
}

static void planned_options(const strategy *s, const strategy_stat_sink *sink)
{
    char buf[32];
    strategy_emit_text(sink, "planner", PLANNER_NAMES[s->planner]);
    snprintf(buf, sizeof buf, "%llu", (unsigned long long)s->alignment);
    strategy_emit_text(sink, "alignment", buf);
    snprintf(buf, sizeof buf, "%llu", (unsigned long long)s->heap_limit);
    strategy_emit_text(sink, "heap_limit", s->heap_limit ? buf : "");
}

/* Live buffers and the holes between them, in address order; the arena is region 0. */
static int planned_walk(const strategy *s, strategy_visitor v, void *ctx)
{
    uint64_t r = reserved(s), at = 0;
    uint32_t cursor = 0, id, shown = PLAN_NONE;
    while (s->live != NULL && (id = plan_live_next(s->live, &cursor)) != PLAN_LIVE_END) {
        uint64_t o = s->off[id], size = block_of(s, id);
        if (s->slot != NULL) {
            if (s->slot[id] == shown)
                continue; /* another live member of the block just shown (they are adjacent in offset order) */
            shown = s->slot[id];
        }
        if (o > at) {
            strategy_block hole = {.addr = at, .size_bytes = o - at, .state = BLOCK_FREE};
            int rc = v(ctx, &hole);
            if (rc)
                return rc;
        }
        strategy_block b = {.addr = o, .size_bytes = size, .requested_bytes = size, .state = BLOCK_USED};
        int rc = v(ctx, &b);
        if (rc)
            return rc;
        if (o + size > at)
            at = o + size;
    }
    if (r > at) {
        strategy_block hole = {.addr = at, .size_bytes = r - at, .state = BLOCK_FREE};
        return v(ctx, &hole);
    }
    return 0;
}

static bool planned_locate(const strategy *s, strategy_handle h, strategy_block *out)
{
    if (h >= s->n || s->size[h] == 0 || !plan_live_is(s->live, h))
        return false;
    uint64_t size = block_of(s, h);
    *out = (strategy_block){.addr = s->off[h], .size_bytes = size, .requested_bytes = size, .state = BLOCK_USED};
    return true;
}

typedef struct check_ctx {
    const strategy *s;
    sim_report *r;
    uint64_t used, used_count, end, largest_free;
} check_ctx;

static int check_visit(void *vctx, const strategy_block *b)
{
    check_ctx *c = vctx;
    sim_report_insist(c->r, b->addr >= c->end, "planned: block at %llu overlaps the one ending at %llu",
                      (unsigned long long)b->addr, (unsigned long long)c->end);
    if (b->state == BLOCK_USED) {
        c->used += b->size_bytes;
        c->used_count++;
    } else if (b->size_bytes > c->largest_free) {
        c->largest_free = b->size_bytes;
    }
    c->end = b->addr + b->size_bytes;
    return 0;
}

static void planned_check(const strategy *s, sim_report *r)
{
    if (!s->planned) {
        sim_report_insist(r, s->live_bytes == 0 && s->next == 0, "planned: allocations before the plan");
        return;
    }
    check_ctx c = {.s = s, .r = r};
    planned_walk(s, check_visit, &c);
    uint64_t res = reserved(s);
    sim_report_insist(r, c.used == s->live_bytes, "planned: live bytes %llu != sum of live buffers %llu",
                      (unsigned long long)s->live_bytes, (unsigned long long)c.used);
    sim_report_insist(r, c.used_count <= s->live_count, "planned: %llu live blocks, %u live buffers",
                      (unsigned long long)c.used_count, s->live_count);
    sim_report_insist(r, c.end <= res || (res == 0 && c.used == 0), "planned: a live buffer ends at %llu past the arena %llu",
                      (unsigned long long)c.end, (unsigned long long)res);
    if (res > 0)
        sim_report_insist(r, c.largest_free == plan_live_largest_hole(s->live, res),
                          "planned: largest hole %llu, the hole tree says %llu", (unsigned long long)c.largest_free,
                          (unsigned long long)plan_live_largest_hole(s->live, res));
    sim_report_insist(r, plan_live_verify(s->live) == 0, "planned: the hole tree disagrees with its leaves");
    sim_report_insist(r, s->heap >= s->peak, "planned: heap %llu below the no-fragmentation peak %llu",
                      (unsigned long long)s->heap, (unsigned long long)s->peak);
    sim_report_insist(r, s->next <= s->n, "planned: %u allocations of a %u-buffer plan", s->next, s->n);
    sim_report_insist(r, device_proc_held(s->dev, s->proc) == res || !device_proc_alive(s->dev, s->proc),
                      "planned: device holds %llu for the process, strategy %llu",
                      (unsigned long long)device_proc_held(s->dev, s->proc), (unsigned long long)res);
}

static const strategy_ops PLANNED_OPS;

bool planned_plan_info(const strategy_ops *ops, const strategy *s, uint32_t *n_buffers, uint64_t *heap,
                       uint64_t *n_events)
{
    if (ops != &PLANNED_OPS || s == NULL || !s->planned)
        return false;
    *n_buffers = s->n;
    *heap = s->heap;
    *n_events = s->n_events;
    return true;
}

void planned_plan_rect(const strategy *s, uint32_t k, planned_rect *out)
{
    *out = (planned_rect){.off = s->off[k], .size = s->size[k], .first = s->first[k], .last = s->last[k]};
}

static const strategy_ops PLANNED_OPS = {
    .name = "planned",
    .summary = "a compiled graph (XLA, TFLite): every buffer's offset planned offline, one arena",
    STRATEGY_OPTS_OF(PLANNED_OPTIONS),
    .family = STRATEGY_FAMILY_PLANNED,
    .fits_by_peak = true,
    /* framework NULL: the plans are XLA's or TFLite's */
    .no_pools_note = "an offline plan (XLA, TFLite) has no private pools; the pools' allocations were planned "
                     "into the one arena with every other buffer",
    .create = planned_create,
    .destroy = planned_destroy,
    .alloc = planned_alloc,
    .free = planned_free,
    .free_ready = planned_free_ready,
    .empty_cache = planned_empty_cache,
    .sample = planned_sample,
    .stats = planned_stats,
    .options = planned_options,
    .check = planned_check,
    .walk = planned_walk,
    .plan = planned_plan,
    .locate = planned_locate,
};

const strategy_ops *planned_strategy(void)
{
    return &PLANNED_OPS;
}
