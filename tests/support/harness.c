#include "harness.h"

#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define HARNESS_MAX_OPTS 16

static sim_status harness_create(harness *h, const device_info *info, const char *opts, sim_error *err)
{
    h->dev = device_new(info);
    ck_assert_ptr_nonnull(h->dev);
    h->proc = device_proc_start(h->dev);
    char buf[1024];
    snprintf(buf, sizeof buf, "%s", opts ? opts : "");
    sim_kv kv[HARNESS_MAX_OPTS];
    uint32_t n = 0;
    /* split on ',' only where the next option starts ("key=..."), so values may
     * hold commas themselves: alloc_conf=a:1,b:[64:8,>:1] */
    char *p = buf;
    while (*p && n < HARNESS_MAX_OPTS) {
        char *start = p;
        for (;;) {
            char *comma = strchr(p, ',');
            if (comma == NULL) {
                p += strlen(p);
                break;
            }
            const char *k = comma + 1;
            while ((*k >= 'a' && *k <= 'z') || *k == '_')
                k++;
            if (*k == '=' && k > comma + 1) {
                *comma = '\0';
                p = comma + 1;
                break;
            }
            p = comma + 1;
        }
        char *eq = strchr(start, '=');
        ck_assert_msg(eq != NULL, "harness option '%s' needs key=value", start);
        *eq = '\0';
        kv[n].key = start;
        kv[n].value = eq + 1;
        n++;
    }
    strategy_config cfg = {.dev = h->dev, .proc = h->proc, .opts = kv, .n_opts = n};
    return h->ops->create(&cfg, &h->s, err);
}

harness *harness_new_dev(const strategy_ops *ops, const device_info *info, const char *opts)
{
    harness *h = calloc(1, sizeof *h);
    ck_assert_ptr_nonnull(h);
    h->ops = ops;
    sim_error err;
    sim_error_clear(&err);
    sim_status st = harness_create(h, info, opts, &err);
    ck_assert_msg(st == SIM_OK, "create %s failed: %s", ops->name, err.msg);
    harness_check(h);
    return h;
}

harness *harness_new(const strategy_ops *ops, uint64_t capacity, uint64_t context, const char *opts)
{
    device_info info = {.name = "test", .capacity_bytes = capacity, .context_bytes = context,
                        .cc_major = 9, .cc_minor = 0};
    return harness_new_dev(ops, &info, opts);
}

sim_status harness_try_new(const strategy_ops *ops, uint64_t capacity, const char *opts, harness **out,
                           sim_error *err)
{
    harness *h = calloc(1, sizeof *h);
    ck_assert_ptr_nonnull(h);
    h->ops = ops;
    device_info info = {.name = "test", .capacity_bytes = capacity, .cc_major = 9};
    sim_status st = harness_create(h, &info, opts, err);
    if (st != SIM_OK) { /* no strategy instance to destroy */
        device_free(h->dev);
        free(h);
        h = NULL;
    }
    *out = h;
    return st;
}

void harness_free(harness *h)
{
    if (h == NULL)
        return;
    h->ops->destroy(h->s);
    device_free(h->dev);
    free(h->live);
    free(h->walked);
    free(h->claimed);
    free(h);
}

/* ---- the allocations made, for harness_check_locate ---- */

static void live_add(harness *h, strategy_handle b, uint64_t size)
{
    if (h->n_live == h->cap_live) {
        h->cap_live = h->cap_live ? 2 * h->cap_live : 64;
        h->live = realloc(h->live, (size_t)h->cap_live * sizeof *h->live);
        ck_assert_ptr_nonnull(h->live);
    }
    h->live[h->n_live++] = (harness_live){.h = b, .size = size};
}

static harness_live *live_find(harness *h, strategy_handle b)
{
    for (uint32_t i = 0; i < h->n_live; i++)
        if (h->live[i].h == b)
            return &h->live[i];
    return NULL; /* not one the harness made */
}

static void live_drop(harness *h, strategy_handle b)
{
    harness_live *l = live_find(h, b);
    if (l != NULL)
        *l = h->live[--h->n_live];
}

static int walked_visit(void *ctx, const strategy_block *b)
{
    harness *h = ctx;
    if (h->n_walked == h->cap_walked) {
        h->cap_walked = h->cap_walked ? 2 * h->cap_walked : 256;
        h->walked = realloc(h->walked, (size_t)h->cap_walked * sizeof *h->walked);
        ck_assert_ptr_nonnull(h->walked);
    }
    h->walked[h->n_walked++] = *b;
    return 0;
}

static int block_addr_order(const void *pa, const void *pb)
{
    uint64_t a = ((const strategy_block *)pa)->addr, b = ((const strategy_block *)pb)->addr;
    return (a > b) - (a < b);
}

static const char *state_name(strategy_block_state st)
{
    static const char *const names[] = {"used", "free", "pending", "unmapped"};
    return (unsigned)st < 4 ? names[st] : "?";
}

/* Fail through Check only when cond fails: a passing ck_assert costs a pipe write
 * per call in fork mode, and this runs after every operation. */
#define LOCATE_INSIST(cond, ...)       \
    do {                               \
        if (!(cond))                   \
            ck_abort_msg(__VA_ARGS__); \
    } while (0)

uint32_t harness_check_locate(harness *h)
{
    if (h->ops->locate == NULL)
        return 0;
    h->n_walked = 0;
    h->ops->walk(h->s, walked_visit, h);
    if (h->n_walked > 1)
        qsort(h->walked, h->n_walked, sizeof *h->walked, block_addr_order);
    h->claimed = realloc(h->claimed, (size_t)(h->cap_walked ? h->cap_walked : 1) * sizeof *h->claimed);
    ck_assert_ptr_nonnull(h->claimed);
    uint32_t used = 0, located_used = 0, pending = 0, located_pending = 0;
    for (uint32_t i = 0; i < h->n_walked; i++) {
        h->claimed[i] = false;
        used += h->walked[i].state == BLOCK_USED;
        pending += h->walked[i].state == BLOCK_PENDING;
        LOCATE_INSIST(i == 0 || h->walked[i].addr > h->walked[i - 1].addr, "%s: two blocks at %llu", h->ops->name,
                      (unsigned long long)h->walked[i].addr);
    }
    for (uint32_t i = 0; i < h->n_live; i++) {
        const harness_live *l = &h->live[i];
        strategy_block b;
        if (!h->ops->locate(h->s, l->h, &b)) {
            LOCATE_INSIST(l->size == 0 || l->pending, "%s: live allocation %u of %llu B not located; layout: %s",
                          h->ops->name, l->h, (unsigned long long)l->size, harness_layout(h));
            continue;
        }
        LOCATE_INSIST(l->size > 0, "%s: zero-byte allocation %u located at %llu", h->ops->name, l->h,
                      (unsigned long long)b.addr);
        strategy_block key = {.addr = b.addr};
        const strategy_block *w =
            h->n_walked ? bsearch(&key, h->walked, h->n_walked, sizeof *h->walked, block_addr_order) : NULL;
        LOCATE_INSIST(w != NULL, "%s: allocation %u located at %llu, where the walker shows no block; layout: %s",
                      h->ops->name, l->h, (unsigned long long)b.addr, harness_layout(h));
        bool same_pool = (w->pool == NULL) == (b.pool == NULL) && (w->pool == NULL || strcmp(w->pool, b.pool) == 0);
        LOCATE_INSIST(w->size_bytes == b.size_bytes && w->requested_bytes == b.requested_bytes &&
                          w->region_addr == b.region_addr && w->region == b.region && w->stream == b.stream &&
                          w->state == b.state && same_pool,
                      "%s: allocation %u located as %llu B (%llu requested) %s in region %u at %llu on stream %u, "
                      "the walker shows %llu B (%llu requested) %s in region %u at %llu on stream %u",
                      h->ops->name, l->h, (unsigned long long)b.size_bytes, (unsigned long long)b.requested_bytes,
                      state_name(b.state), b.region, (unsigned long long)b.region_addr, b.stream,
                      (unsigned long long)w->size_bytes, (unsigned long long)w->requested_bytes, state_name(w->state),
                      w->region, (unsigned long long)w->region_addr, w->stream);
        size_t at = (size_t)(w - h->walked);
        LOCATE_INSIST(!h->claimed[at], "%s: allocation %u located in a block at %llu another one holds",
                      h->ops->name, l->h, (unsigned long long)b.addr);
        h->claimed[at] = true;
        if (l->pending) {
            LOCATE_INSIST(b.state == BLOCK_PENDING, "%s: deferred free %u located in a %s block", h->ops->name, l->h,
                          state_name(b.state));
            located_pending++;
        } else {
            LOCATE_INSIST(b.state == BLOCK_USED && b.requested_bytes == l->size,
                          "%s: allocation %u of %llu B located in a %s block of %llu requested", h->ops->name, l->h,
                          (unsigned long long)l->size, state_name(b.state), (unsigned long long)b.requested_bytes);
            located_used++;
        }
    }
    LOCATE_INSIST(located_used == used, "%s: %u used blocks, %u of them located by a live allocation; layout: %s",
                  h->ops->name, used, located_used, harness_layout(h));
    return pending - located_pending;
}

void harness_check(harness *h)
{
    sim_report r = harness_report(h);
    /* only fail through Check: a passing assert per operation costs a pipe write in fork mode */
    if (r.violations != 0)
        ck_abort_msg( "%s checker found %llu violation(s):\n%s\nlayout: %s", h->ops->name,
                  (unsigned long long)r.violations, r.text, harness_layout(h));
    harness_check_locate(h);
}

sim_report harness_report(harness *h)
{
    sim_report r;
    sim_report_init(&r);
    h->ops->check(h->s, &r);
    return r;
}

sim_status harness_try_alloc(harness *h, uint64_t size, uint32_t stream, strategy_handle *out,
                             strategy_oom *oom)
{
    strategy_oom scratch;
    strategy_handle hh = STRATEGY_HANDLE_NONE;
    sim_status st = h->ops->alloc(h->s, size, stream, &hh, oom ? oom : &scratch);
    ck_assert_msg(st == SIM_OK || st == SIM_OOM, "alloc returned %s", sim_strerror(st));
    if (out)
        *out = hh;
    if (st == SIM_OK)
        live_add(h, hh, size);
    harness_check(h);
    return st;
}

strategy_handle harness_alloc(harness *h, uint64_t size, uint32_t stream)
{
    strategy_handle b = STRATEGY_HANDLE_NONE;
    strategy_oom oom;
    sim_status st = harness_try_alloc(h, size, stream, &b, &oom);
    ck_assert_msg(st == SIM_OK, "alloc(%llu) failed (free %llu, largest %llu, reserved %llu) layout: %s",
                  (unsigned long long)size, (unsigned long long)oom.free_bytes,
                  (unsigned long long)oom.largest_free_bytes, (unsigned long long)oom.reserved_bytes,
                  harness_layout(h));
    return b;
}

void harness_alloc_two_empty(harness *h, uint32_t stream, strategy_handle out[2])
{
    out[0] = harness_alloc(h, 0, 0);
    out[1] = harness_alloc(h, 0, stream);
    ck_assert_uint_ne(out[0], STRATEGY_HANDLE_NONE);
    ck_assert_uint_ne(out[0], out[1]);
    ck_assert_str_eq(harness_layout(h), "");
    ck_assert_uint_eq(harness_sample(h).reserved_bytes, 0);
}

strategy_oom harness_oom(harness *h, uint64_t size, uint32_t stream)
{
    strategy_oom oom;
    memset(&oom, 0, sizeof oom);
    sim_status st = harness_try_alloc(h, size, stream, NULL, &oom);
    ck_assert_msg(st == SIM_OOM, "alloc(%llu) did not run out of memory; layout: %s", (unsigned long long)size,
                  harness_layout(h));
    return oom;
}

void harness_free_block(harness *h, strategy_handle b)
{
    h->ops->free(h->s, b, false);
    live_drop(h, b);
    harness_check(h);
}

void harness_free_deferred(harness *h, strategy_handle b)
{
    h->ops->free(h->s, b, true);
    harness_live *l = live_find(h, b);
    if (l != NULL)
        l->pending = true;
    harness_check(h);
}

void harness_free_deferred_on(harness *h, strategy_handle b, uint32_t stream)
{
    h->ops->free(h->s, b, true);
    if (h->ops->free_wait != NULL)
        h->ops->free_wait(h->s, b, stream);
    harness_live *l = live_find(h, b);
    if (l != NULL)
        l->pending = true;
    harness_check(h);
}

void harness_free_ready(harness *h, strategy_handle b)
{
    h->ops->free_ready(h->s, b);
    live_drop(h, b);
    harness_check(h);
}

void harness_empty_cache(harness *h)
{
    h->ops->empty_cache(h->s);
    harness_check(h);
}

void harness_pool_begin(harness *h, uint64_t pool, uint32_t stream, bool all_streams)
{
    strategy_pool_scope sc = {.pool = pool, .stream = stream, .all_streams = all_streams, .capture = !all_streams};
    harness_pool_scope(h, &sc);
}

void harness_pool_scope(harness *h, const strategy_pool_scope *scope)
{
    ck_assert_msg(h->ops->pool_begin != NULL, "%s has no private pools", h->ops->name);
    h->ops->pool_begin(h->s, scope);
    harness_check(h);
}

void harness_pool_end(harness *h, uint64_t pool)
{
    h->ops->pool_end(h->s, pool);
    harness_check(h);
}

void harness_pool_release(harness *h, uint64_t pool)
{
    h->ops->pool_release(h->s, pool);
    harness_check(h);
}

static int pool_info_of(void *ctx, const strategy_pool_info *p)
{
    strategy_pool_info *want = ctx;
    if (p->pool != want->pool)
        return 0;
    *want = *p;
    return 1;
}

bool harness_pool_info(harness *h, uint64_t pool, strategy_pool_info *out)
{
    *out = (strategy_pool_info){.pool = pool};
    return h->ops->pools(h->s, pool_info_of, out) != 0;
}

typedef struct layout_ctx {
    char *buf;
    size_t cap, len;
    bool first;
    uint64_t region_addr;
    uint32_t region;
} layout_ctx;

static void layout_put(layout_ctx *c, const char *open, unsigned long long v, const char *close,
                       const char *suffix)
{
    int n = snprintf(c->buf + c->len, c->cap - c->len, "%s%llu%s%s", open, v, close, suffix);
    if (n > 0 && (size_t)n < c->cap - c->len)
        c->len += (size_t)n;
}

static void layout_str(layout_ctx *c, const char *text)
{
    int n = snprintf(c->buf + c->len, c->cap - c->len, "%s", text);
    if (n > 0 && (size_t)n < c->cap - c->len)
        c->len += (size_t)n;
}

static int layout_visit(void *ctx, const strategy_block *b)
{
    layout_ctx *c = ctx;
    if (!c->first) {
        bool new_region = b->region != c->region || b->region_addr != c->region_addr;
        layout_str(c, new_region ? " | " : " ");
    }
    c->first = false;
    c->region = b->region;
    c->region_addr = b->region_addr;
    char stream[16] = "";
    if (b->stream != 0)
        snprintf(stream, sizeof stream, "@%u", b->stream);
    switch (b->state) {
    case BLOCK_USED: layout_put(c, "", b->size_bytes, "", stream); break;
    case BLOCK_FREE: layout_put(c, "[", b->size_bytes, "]", stream); break;
    case BLOCK_PENDING: layout_put(c, "(", b->size_bytes, ")", stream); break;
    case BLOCK_UNMAPPED: layout_put(c, "~", b->size_bytes, "", stream); break;
    }
    return 0;
}

const char *harness_layout(harness *h)
{
    layout_ctx c = {.buf = h->layout, .cap = sizeof h->layout, .len = 0, .first = true};
    h->layout[0] = '\0';
    h->ops->walk(h->s, layout_visit, &c);
    return h->layout;
}

strategy_sample harness_sample(harness *h)
{
    strategy_sample s;
    h->ops->sample(h->s, &s);
    return s;
}

uint64_t harness_stat(harness *h, const char *key)
{
    strategy_stat_value v;
    ck_assert_msg(strategy_stat_find(h->ops, h->s, key, &v), "%s has no stat '%s'", h->ops->name, key);
    ck_assert_msg(v.kind == STRATEGY_STAT_U64, "%s: stat '%s' is not an integer", h->ops->name, key);
    return v.u64;
}

const char *harness_option(harness *h, const char *key)
{
    ck_assert_msg(strategy_option_find(h->ops, h->s, key, &h->option), "%s has no option '%s'", h->ops->name, key);
    ck_assert_msg(h->option.kind == STRATEGY_STAT_TEXT, "%s: option '%s' is not text", h->ops->name, key);
    return h->option.text;
}

static int collect_block(void *ctx, const strategy_block *b)
{
    harness_blocks *out = ctx;
    if (out->n == HARNESS_MAX_BLOCKS)
        ck_abort_msg("more than %d blocks", HARNESS_MAX_BLOCKS);
    out->b[out->n++] = *b;
    return 0;
}

void harness_walk(harness *h, harness_blocks *out)
{
    out->n = 0;
    h->ops->walk(h->s, collect_block, out);
}
