/* Check suites for the `async` strategy (CUDA's stream-ordered pool): each documented
 * rule and each undocumented option on a small case worked out by hand, and a seeded
 * differential test against a brute-force reference of the same rules (strategies/async.c
 * lists them: D1–D4, U1–U6), and the checker catching each rule of its piece index
 * broken on purpose. Layout strings: tests/support/harness.h. */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sim/units.h"
#include "strategies/async.h"
#include "strategies/async_types.h" /* the checker tests reach into the piece index */
#include "support/check_main.h"
#include "support/harness.h"
#include "support/seed.h"

#define TWO_MIB (2u * 1024u * 1024u)

/* A 1 GiB pool (opts) whose one 2 MiB chunk was allocated on stream and freed at
 * once or, deferred, left pending (its handle in *a for the free_ready). */
static harness *one_freed_chunk(const char *opts, uint32_t stream, bool deferred, strategy_handle *a)
{
    harness *h = harness_new(async_strategy(), 1 * GiB, 0, opts);
    strategy_handle b = harness_alloc(h, TWO_MIB, stream);
    if (deferred)
        harness_free_deferred(h, b);
    else
        harness_free_block(h, b);
    if (a)
        *a = b;
    return h;
}

START_TEST(async_should_round_to_512_and_grow_by_2mib_chunks)
{
    harness *h = harness_new(async_strategy(), 1 * GiB, 0, NULL);
    /* 1 → 512 (U1) in a fresh 2 MiB chunk (U2): 2097152 − 512 = 2096640 stays free */
    harness_alloc(h, 1, 0);
    ck_assert_str_eq(harness_layout(h), "512 [2096640]");
    /* 3 MiB + 1 → 3146240 (512-rounded); no piece fits → a chunk of round_up(3146240, 2 MiB) = 4 MiB,
     * the rest 4194304 − 3146240 = 1048064 free */
    harness_alloc(h, 3 * MiB + 1, 0);
    ck_assert_str_eq(harness_layout(h), "512 [2096640] | 3146240 [1048064]");
    ck_assert_uint_eq(harness_stat(h, "ReservedMemCurrent"), 6 * MiB);
    ck_assert_uint_eq(harness_stat(h, "UsedMemCurrent"), 512 + 3146240);
    /* size 0 takes nothing */
    harness_alloc(h, 0, 0);
    ck_assert_uint_eq(harness_sample(h).num_device_allocs, 2);
    harness_free(h);
}
END_TEST

START_TEST(async_should_reuse_a_pending_free_on_its_own_stream_at_once)
{
    strategy_handle a;
    harness *h = one_freed_chunk(NULL, 1, true, &a);
    ck_assert_str_eq(harness_layout(h), "(2097152)@1");
    /* D2: the freeing stream may take it before ready_t: no growth */
    harness_alloc(h, 1 * MiB, 1);
    ck_assert_str_eq(harness_layout(h), "1048576@1 (1048576)@1");
    ck_assert_uint_eq(harness_sample(h).num_device_allocs, 1);
    /* UsedMem counts the pending rest as not reusable (D4): 1 MiB used + 1 MiB pending */
    ck_assert_uint_eq(harness_stat(h, "UsedMemCurrent"), TWO_MIB);
    /* the free completes: the rest becomes free to every stream */
    harness_free_ready(h, a);
    ck_assert_str_eq(harness_layout(h), "1048576@1 [1048576]");
    ck_assert_uint_eq(harness_stat(h, "UsedMemCurrent"), 1 * MiB);
    harness_free(h);
}
END_TEST

START_TEST(async_should_not_reuse_a_pending_free_on_another_stream_until_it_completes)
{
    strategy_handle a;
    harness *h = one_freed_chunk(NULL, 1, true, &a);
    /* stream 2 cannot take the pending 2 MiB: the pool grows */
    strategy_handle b = harness_alloc(h, TWO_MIB, 2);
    ck_assert_str_eq(harness_layout(h), "(2097152)@1 | 2097152@2");
    harness_free_block(h, b);
    harness_free_ready(h, a);
    /* once complete (ready_t passed), any stream reuses it: the lowest address of two equal fits */
    harness_alloc(h, TWO_MIB, 3);
    ck_assert_str_eq(harness_layout(h), "2097152@3 | [2097152]");
    ck_assert_uint_eq(harness_sample(h).num_device_allocs, 2);
    harness_free(h);
}
END_TEST

START_TEST(async_best_fit_should_take_the_smallest_piece_and_first_fit_the_lowest)
{
    /* chunks: [4 MiB free] | [2 MiB free] | 2 MiB used; then a 1 MiB request (U3) */
    const char *opts[2] = {NULL, "pool_placement=first"};
    const char *want[2] = {/* best: the 2 MiB piece, the smallest that fits */
                           "[4194304] | 1048576 [1048576] | 2097152",
                           /* first: the lowest address that fits, in chunk 1 */
                           "1048576 [3145728] | [2097152] | 2097152"};
    for (int k = 0; k < 2; k++) {
        harness *h = harness_new(async_strategy(), 1 * GiB, 0, opts[k]);
        strategy_handle a = harness_alloc(h, 4 * MiB, 0);
        strategy_handle b = harness_alloc(h, 2 * MiB, 0);
        harness_alloc(h, 2 * MiB, 0);
        harness_free_block(h, a);
        harness_free_block(h, b);
        harness_alloc(h, 1 * MiB, 0);
        ck_assert_str_eq(harness_layout(h), want[k]);
        harness_free(h);
    }
}
END_TEST

START_TEST(async_coalescing_should_be_an_option)
{
    harness *on = harness_new(async_strategy(), 1 * GiB, 0, NULL);
    harness *off = harness_new(async_strategy(), 1 * GiB, 0, "pool_coalesce=off");
    harness *hs[2] = {on, off};
    for (int k = 0; k < 2; k++) {
        strategy_handle a = harness_alloc(hs[k], 512 * KiB, 0);
        strategy_handle b = harness_alloc(hs[k], 512 * KiB, 0);
        harness_free_block(hs[k], a);
        harness_free_block(hs[k], b);
    }
    /* on: 512 KiB + 512 KiB + the 1 MiB rest merge back into the whole chunk (U4) */
    ck_assert_str_eq(harness_layout(on), "[2097152]");
    /* off: the pieces stay as split */
    ck_assert_str_eq(harness_layout(off), "[524288] [524288] [1048576]");
    /* off: a 2 MiB request fits no piece, so the pool grows */
    harness_alloc(off, TWO_MIB, 0);
    ck_assert_uint_eq(harness_stat(off, "ReservedMemCurrent"), 2 * TWO_MIB);
    harness_free(on);
    harness_free(off);
}
END_TEST

START_TEST(async_synchronize_should_release_down_to_the_threshold_highest_address_first)
{
    /* three 2 MiB chunks, all freed; threshold 3 MiB: release the top chunk (6 → 4 MiB, still
     * > 3 MiB), then the middle (→ 2 MiB ≤ 3 MiB): the lowest chunk stays (D1, U5) */
    harness *h = harness_new(async_strategy(), 1 * GiB, 0, "release_threshold=3MiB");
    strategy_handle x[3];
    for (int i = 0; i < 3; i++)
        x[i] = harness_alloc(h, TWO_MIB, 0);
    for (int i = 0; i < 3; i++)
        harness_free_block(h, x[i]);
    ck_assert_uint_eq(harness_sample(h).reserved_bytes, 3 * TWO_MIB); /* no release without a synchronize */
    harness_empty_cache(h);
    ck_assert_str_eq(harness_layout(h), "[2097152]");
    ck_assert_uint_eq(harness_stat(h, "ReservedMemHigh"), 3 * TWO_MIB);
    ck_assert_uint_eq(harness_sample(h).num_device_frees, 2);
    harness_free(h);
}
END_TEST

START_TEST(async_cuda_default_threshold_should_release_every_free_chunk_at_a_synchronize)
{
    harness *h = harness_new(async_strategy(), 1 * GiB, 0, NULL);
    strategy_handle a = harness_alloc(h, TWO_MIB, 0);
    harness_alloc(h, TWO_MIB, 0);
    harness_free_block(h, a);
    /* threshold 0: the wholly free chunk goes; the live one cannot (D3) */
    harness_empty_cache(h);
    ck_assert_str_eq(harness_layout(h), "2097152");
    ck_assert_uint_eq(harness_stat(h, "ReservedMemCurrent"), TWO_MIB);
    harness_free(h);
}
END_TEST

START_TEST(async_pytorch_preset_should_keep_everything_until_empty_cache_trims_to_zero)
{
    strategy_handle a;
    harness *h = one_freed_chunk("async_preset=pytorch", 0, true, &a);
    /* empty_cache = cudaDeviceSynchronize (the pending free completes, U6) + TrimTo(0) */
    harness_empty_cache(h);
    ck_assert_uint_eq(harness_sample(h).reserved_bytes, 0);
    ck_assert_uint_eq(harness_stat(h, "trims"), 1);
    /* the engine's later free_ready finds the free already done: a no-op */
    harness_free_ready(h, a);
    ck_assert_uint_eq(harness_sample(h).reserved_bytes, 0);
    harness_free(h);
}
END_TEST

START_TEST(async_pytorch_sync_mode_should_keep_the_pool_under_its_max_threshold)
{
    /* pytorch preset with empty_cache as a plain synchronize: threshold UINT64_MAX keeps all */
    harness *h = one_freed_chunk("async_preset=pytorch,async_empty_cache=sync", 0, false, NULL);
    harness_empty_cache(h);
    ck_assert_str_eq(harness_layout(h), "[2097152]");
    harness_free(h);
}
END_TEST

START_TEST(async_oom_should_say_capacity_or_fragmentation)
{
    /* 8 MiB device: two 2 MiB chunks live, one freed with coalescing off in pieces */
    harness *h = harness_new(async_strategy(), 8 * MiB, 0, "pool_coalesce=off");
    strategy_handle a = harness_alloc(h, 1 * MiB, 0);
    strategy_handle b = harness_alloc(h, 1 * MiB, 0);
    harness_alloc(h, 4 * MiB, 0);
    harness_free_block(h, a);
    harness_free_block(h, b);
    /* pool: [1 MiB] [1 MiB] | 4 MiB; device free 8 − 6 = 2 MiB. 3 MiB: no piece fits and
     * the growth of 4 MiB > 2 MiB free; 2 MiB free in the pool + 2 MiB on the device ≥ 3 MiB
     * → fragmentation */
    strategy_oom oom = harness_oom(h, 3 * MiB, 0);
    ck_assert_uint_eq(oom.usable_bytes, 0); /* capacity − context: the engine names the cause */
    ck_assert_uint_eq(oom.free_bytes, 2 * MiB);
    ck_assert_uint_eq(oom.device_free_bytes, 2 * MiB);
    ck_assert_uint_eq(oom.reserved_bytes, 6 * MiB);
    /* 5 MiB > 2 + 2 MiB → capacity; nothing changed */
    ck_assert_int_eq(harness_try_alloc(h, 5 * MiB, 0, NULL, &oom), SIM_OOM);
    ck_assert_uint_eq(oom.size_bytes, 5 * MiB); /* the request, rounded to the alignment */
    ck_assert_ptr_nonnull(strstr(oom.detail, "cudaMallocAsync"));
    ck_assert_uint_eq(harness_sample(h).reserved_bytes, 6 * MiB);
    harness_free(h);
}
END_TEST

START_TEST(async_tf_preset_should_synchronize_and_retry_a_failed_allocation)
{
    /* 4 MiB device, a pending 4 MiB on stream 1; stream 0 asks for 2 MiB: no usable piece,
     * no room to grow. tf: synchronize (the pending free completes, U6) and retry: it fits.
     * cuda: OOM, fragmentation (4 MiB pending is not usable by stream 0: capacity by the
     * numbers it can use, 0 + 0 < 2 MiB) */
    const char *opts[2] = {"async_preset=tf", "async_preset=cuda"};
    for (int k = 0; k < 2; k++) {
        harness *h = harness_new(async_strategy(), 4 * MiB, 0, opts[k]);
        strategy_handle a = harness_alloc(h, 4 * MiB, 1);
        harness_free_deferred(h, a);
        strategy_oom oom;
        strategy_handle b;
        sim_status st = harness_try_alloc(h, TWO_MIB, 0, &b, &oom);
        if (k == 0) {
            ck_assert_int_eq(st, SIM_OK);
            ck_assert_str_eq(harness_layout(h), "2097152 [2097152]");
            ck_assert_uint_eq(harness_stat(h, "synchronizes"), 1);
        } else {
            ck_assert_int_eq(st, SIM_OOM);
            ck_assert_uint_eq(oom.free_bytes, 0); /* the pending 4 MiB is not usable by stream 0 */
        }
        harness_free_ready(h, a);
        harness_free(h);
    }
}
END_TEST

START_TEST(async_tf_preset_threshold_should_be_the_tf_memory_limit)
{
    /* TF's limit on a 16 GiB cc 9.0 device without context: the BFC rule (bfc_limits.h) */
    harness *h = harness_new(async_strategy(), 16 * GiB, 0, "async_preset=tf");
    uint64_t t = strtoull(harness_option(h, "release_threshold"), NULL, 10);
    ck_assert_uint_gt(t, 0);
    ck_assert_uint_lt(t, 16 * GiB);
    harness_free(h);
}
END_TEST

START_TEST(async_pytorch_memory_fraction_should_refuse_before_the_pool_is_asked)
{
    /* fraction 0.5 of 8 MiB = 4194304; 3 MiB live + 2 MiB > 4 MiB → refused (capacity),
     * in PyTorch's wording */
    harness *h = harness_new(async_strategy(), 8 * MiB, 0, "async_preset=pytorch,memory_fraction=0.5");
    harness_alloc(h, 3 * MiB, 0);
    strategy_oom oom = harness_oom(h, TWO_MIB, 0);
    ck_assert_uint_eq(oom.usable_bytes, 4194304); /* what the fraction lets the process use */
    ck_assert_ptr_nonnull(strstr(oom.detail, "would exceed allowed memory"));
    ck_assert_ptr_nonnull(strstr(oom.detail, "Currently allocated     : 3.00 MiB"));
    ck_assert_ptr_nonnull(strstr(oom.detail, ": 4.00 MiB"));
    harness_free(h);
}
END_TEST

START_TEST(async_should_reject_bad_option_values_naming_the_flag)
{
    static const char *const bad[][2] = {
        {"async_preset=jax", "--async-preset"},      {"release_threshold=lots", "--release-threshold"},
        {"pool_granularity=3MiB", "--pool-granularity"}, {"pool_alignment=0", "--pool-alignment"},
        {"pool_granularity=256", "--pool-granularity"},  {"pool_placement=worst", "--pool-placement"},
        {"pool_coalesce=yes", "--pool-coalesce"},        {"async_empty_cache=x", "--async-empty-cache"},
        {"async_oom_retry=x", "--async-oom-retry"},      {"memory_fraction=2", "--memory-fraction"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        harness *h = NULL;
        sim_error err;
        sim_error_clear(&err);
        ck_assert_int_eq(harness_try_new(async_strategy(), 1 * GiB, bad[i][0], &h, &err), SIM_EUSAGE);
        ck_assert_msg(strstr(err.msg, bad[i][1]) != NULL, "%s: %s", bad[i][0], err.msg);
    }
}
END_TEST

START_TEST(async_options_should_read_back_to_the_same_instance)
{
    harness *h = harness_new(async_strategy(), 1 * GiB, 0,
                             "async_preset=pytorch,pool_granularity=32MiB,pool_placement=first,pool_coalesce=off");
    static const char *const keys[] = {"async_preset", "release_threshold", "pool_granularity", "pool_placement",
                                       "pool_coalesce", "async_empty_cache", "async_oom_retry"};
    static const char *const want[] = {"pytorch", "max", "33554432", "first", "off", "trim", "none"};
    for (size_t i = 0; i < sizeof keys / sizeof keys[0]; i++)
        ck_assert_str_eq(harness_option(h, keys[i]), want[i]);
    /* 32 MiB granularity: a 1-byte request reserves 32 MiB */
    harness_alloc(h, 1, 0);
    ck_assert_uint_eq(harness_sample(h).reserved_bytes, 32 * MiB);
    harness_free(h);
}
END_TEST

START_TEST(async_alloc_conf_cudamallocasync_should_select_the_pytorch_wiring)
{
    harness *h = harness_new(async_strategy(), 1 * GiB, 0, "alloc_conf=backend:cudaMallocAsync");
    ck_assert_str_eq(harness_option(h, "async_preset"), "pytorch");
    ck_assert_str_eq(harness_option(h, "release_threshold"), "max");
    harness_free(h);
    /* the native allocator's keys are checked and change nothing here */
    h = harness_new(async_strategy(), 1 * GiB, 0, "alloc_conf=expandable_segments:True");
    ck_assert_str_eq(harness_option(h, "async_preset"), "cuda");
    harness_free(h);
    /* two frameworks at once, and what PyTorch refuses, are refused */
    static const char *const bad[][2] = {
        {"alloc_conf=backend:cudaMallocAsync,async_preset=tf", "give one"},
        {"alloc_conf=backend:other", "unknown allocator backend"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        sim_error err;
        sim_error_clear(&err);
        ck_assert_int_eq(harness_try_new(async_strategy(), 1 * GiB, bad[i][0], &h, &err), SIM_EUSAGE);
        ck_assert_msg(strstr(err.msg, bad[i][1]) != NULL, "%s: %s", bad[i][0], err.msg);
    }
}
END_TEST

/* ==== the brute-force reference of D1–D3 and U1–U5 ==== */

#define REF_MAX 512
enum { R_USED, R_FREE, R_PENDING };

typedef struct ref_block {
    uint64_t addr, size;
    int state;
    uint32_t stream;
    int owner; /* test id of the allocation (used) or of the free (pending); -1 free */
    int chunk;
} ref_block;

typedef struct ref_pool {
    ref_block b[REF_MAX];
    int nb;
    uint64_t chunk_addr[REF_MAX], chunk_size[REF_MAX];
    bool chunk_live[REF_MAX];
    int nc;
    uint64_t next_addr, reserved, capacity, keep;
    bool first_fit, coalesce;
} ref_pool;

static int ref_cmp(const void *a, const void *b)
{
    uint64_t x = ((const ref_block *)a)->addr, y = ((const ref_block *)b)->addr;
    return (x > y) - (x < y);
}

/* Merge free neighbours of one chunk until none are left (U4): sort by address, one pass. */
static void ref_coalesce(ref_pool *p)
{
    if (!p->coalesce)
        return;
    qsort(p->b, (size_t)p->nb, sizeof p->b[0], ref_cmp);
    int out = 0;
    for (int i = 0; i < p->nb; i++) {
        ref_block *last = out > 0 ? &p->b[out - 1] : NULL;
        if (last && last->state == R_FREE && p->b[i].state == R_FREE && last->chunk == p->b[i].chunk &&
            last->addr + last->size == p->b[i].addr)
            last->size += p->b[i].size;
        else
            p->b[out++] = p->b[i];
    }
    p->nb = out;
}

/* true and a block index, or false: OOM */
static bool ref_alloc(ref_pool *p, uint64_t n, uint32_t stream, int id)
{
    if (n == 0)
        return true;
    uint64_t r = units_round_up(n, 512);
    int best = -1;
    for (int i = 0; i < p->nb; i++) {
        const ref_block *x = &p->b[i];
        bool usable = x->state == R_FREE || (x->state == R_PENDING && x->stream == stream);
        if (!usable || x->size < r)
            continue;
        if (best < 0 || (p->first_fit ? x->addr < p->b[best].addr
                                      : (x->size < p->b[best].size ||
                                         (x->size == p->b[best].size && x->addr < p->b[best].addr))))
            best = i;
    }
    if (best < 0) {
        uint64_t need = units_round_up(r, TWO_MIB);
        if (p->capacity - p->reserved < need)
            return false;
        uint64_t base = units_round_up(p->next_addr, TWO_MIB);
        p->next_addr = base + need;
        p->chunk_addr[p->nc] = base;
        p->chunk_size[p->nc] = need;
        p->chunk_live[p->nc] = true;
        p->b[p->nb] = (ref_block){base, need, R_FREE, 0, -1, p->nc};
        p->nc++;
        p->reserved += need;
        best = p->nb++;
    }
    ref_block *x = &p->b[best];
    if (x->size > r) {
        p->b[p->nb] = *x;
        p->b[p->nb].addr = x->addr + r;
        p->b[p->nb].size = x->size - r;
        p->nb++;
        x->size = r;
    }
    x->state = R_USED;
    x->stream = stream;
    x->owner = id;
    return true;
}

static void ref_complete(ref_pool *p, int id, int from)
{
    for (int i = 0; i < p->nb; i++)
        if (p->b[i].state == from && p->b[i].owner == id) {
            p->b[i].state = R_FREE;
            p->b[i].owner = -1;
            p->b[i].stream = 0;
        }
    ref_coalesce(p);
}

static void ref_free(ref_pool *p, int id, bool deferred)
{
    if (!deferred) {
        ref_complete(p, id, R_USED);
        return;
    }
    for (int i = 0; i < p->nb; i++)
        if (p->b[i].state == R_USED && p->b[i].owner == id)
            p->b[i].state = R_PENDING;
}

static void ref_sync(ref_pool *p)
{
    for (int i = 0; i < p->nb; i++)
        if (p->b[i].state == R_PENDING) {
            p->b[i].state = R_FREE;
            p->b[i].owner = -1;
            p->b[i].stream = 0;
        }
    ref_coalesce(p);
    for (int c = p->nc - 1; c >= 0 && p->reserved > p->keep; c--) { /* addresses rise with c */
        if (!p->chunk_live[c])
            continue;
        bool all_free = true;
        for (int i = 0; i < p->nb; i++)
            all_free = all_free && (p->b[i].chunk != c || p->b[i].state == R_FREE);
        if (!all_free)
            continue;
        for (int i = 0; i < p->nb;)
            if (p->b[i].chunk == c)
                p->b[i] = p->b[--p->nb];
            else
                i++;
        p->chunk_live[c] = false;
        p->reserved -= p->chunk_size[c];
    }
}

/* The reference's layout in the harness's notation. */
static void ref_layout(const ref_pool *p, char *out, size_t cap)
{
    ref_block sorted[REF_MAX];
    memcpy(sorted, p->b, (size_t)p->nb * sizeof sorted[0]);
    qsort(sorted, (size_t)p->nb, sizeof sorted[0], ref_cmp);
    size_t len = 0;
    out[0] = '\0';
    for (int i = 0; i < p->nb && len < cap; i++) {
        const ref_block *x = &sorted[i];
        const char *sep = i == 0 ? "" : x->chunk != sorted[i - 1].chunk ? " | " : " ";
        char st[16] = "";
        if (x->state != R_FREE && x->stream != 0)
            snprintf(st, sizeof st, "@%u", x->stream);
        const char *open = x->state == R_FREE ? "[" : x->state == R_PENDING ? "(" : "";
        const char *close = x->state == R_FREE ? "]" : x->state == R_PENDING ? ")" : "";
        int n = snprintf(out + len, cap - len, "%s%s%llu%s%s", sep, open, (unsigned long long)x->size, close, st);
        len += n > 0 ? (size_t)n : 0;
    }
}

typedef struct live_id {
    int id;
    strategy_handle h;
    bool pending;
} live_id;

static void differential_run(const char *opts, bool first_fit, bool coalesce, uint64_t keep, uint64_t seed)
{
    harness *h = harness_new(async_strategy(), 64 * MiB, 0, opts);
    ref_pool *p = calloc(1, sizeof *p);
    ck_assert_ptr_nonnull(p);
    *p = (ref_pool){.next_addr = TWO_MIB, .capacity = 64 * MiB, .keep = keep, .first_fit = first_fit,
                    .coalesce = coalesce};
    live_id live[128];
    int n_live = 0, next_id = 0;
    char want[8192];
    uint64_t s = seed;
    for (int step = 0; step < 1500; step++) {
        unsigned r = (unsigned)(test_rand(&s) % 100);
        if (r < 45 && n_live < 120 && p->nb < REF_MAX - 4) {
            uint64_t size = test_rand(&s) % 4 == 0 ? test_rand(&s) % (6 * MiB) : test_rand(&s) % (256 * KiB);
            uint32_t stream = (uint32_t)(test_rand(&s) % 3);
            strategy_handle hd = STRATEGY_HANDLE_NONE;
            strategy_oom oom;
            sim_status st = harness_try_alloc(h, size, stream, &hd, &oom);
            bool ok = ref_alloc(p, size, stream, next_id);
            ck_assert_msg((st == SIM_OK) == ok, "seed %llu step %d: alloc(%llu) model %d, reference %d",
                          (unsigned long long)seed, step, (unsigned long long)size, st, ok);
            if (ok)
                live[n_live++] = (live_id){next_id, hd, false};
            next_id++;
        } else if (r < 85 && n_live > 0) {
            int k = (int)(test_rand(&s) % (uint64_t)n_live);
            if (live[k].pending) {
                harness_free_ready(h, live[k].h);
                ref_complete(p, live[k].id, R_PENDING);
                live[k] = live[--n_live];
            } else {
                bool deferred = test_rand(&s) % 3 == 0;
                int id = live[k].id;
                if (deferred) {
                    harness_free_deferred(h, live[k].h);
                    live[k].pending = true;
                } else {
                    harness_free_block(h, live[k].h);
                    live[k] = live[--n_live];
                }
                ref_free(p, id, deferred);
            }
        } else if (r < 88) {
            harness_empty_cache(h);
            ref_sync(p);
            /* every pending free completed: their handles still await free_ready */
            for (int k = 0; k < n_live;)
                if (live[k].pending) {
                    harness_free_ready(h, live[k].h);
                    live[k] = live[--n_live];
                } else {
                    k++;
                }
        }
        ref_layout(p, want, sizeof want);
        ck_assert_msg(strcmp(harness_layout(h), want) == 0, "seed %llu step %d:\nmodel     %s\nreference %s",
                      (unsigned long long)seed, step, harness_layout(h), want);
        ck_assert_uint_eq(harness_stat(h, "ReservedMemCurrent"), p->reserved);
    }
    free(p);
    harness_free(h);
}

GPUSIM_TCASE("size classes", 0, NULL, NULL);
START_TEST(async_size_classes_should_follow_the_order_of_sizes_without_gaps)
{
    /* below 64 KiB a class per 512 B; from 2^f units of 512 B on, 64 classes per power
     * of two, each 2^(f - 6) units wide: 64 KiB is class 128, 128 KiB 192, 1 MiB 384 */
    ck_assert_uint_eq(async_index_class(0), 0);
    ck_assert_uint_eq(async_index_class(511), 0);
    ck_assert_uint_eq(async_index_class(512), 1);
    ck_assert_uint_eq(async_index_class(64 * KiB - 512), 127);
    ck_assert_uint_eq(async_index_class(64 * KiB), 128);
    ck_assert_uint_eq(async_index_class(64 * KiB + 512), 128);
    ck_assert_uint_eq(async_index_class(64 * KiB + 1024), 129);
    ck_assert_uint_eq(async_index_class(128 * KiB), 192);
    ck_assert_uint_eq(async_index_class(1 * MiB), 384);
    ck_assert_uint_eq(async_index_class(UINT64_MAX), A_CLASSES - 1);
    /* every power of two and its neighbours: a size never has a lower class than a
     * smaller one, and the class rises by at most one at a time */
    uint32_t prev = 0;
    for (unsigned f = 9; f < 64; f++)
        for (int d = -1; d <= 1; d++) {
            uint64_t size = ((uint64_t)1 << f) + (uint64_t)(int64_t)d;
            uint32_t c = async_index_class(size);
            ck_assert_msg(c >= prev && c < A_CLASSES, "class of %llu is %u after %u", (unsigned long long)size, c,
                          prev);
            prev = c;
        }
    uint64_t seed = test_seed("async_size_classes"), s = seed;
    for (int i = 0; i < 100000; i++) {
        /* a size of any magnitude, and a gap of any smaller one (one call per statement:
         * the order of calls within an expression is unspecified) */
        uint64_t a = test_rand(&s);
        a >>= test_rand(&s) % 64;
        uint64_t gap = test_rand(&s);
        gap >>= test_rand(&s) % 63 + 1;
        uint64_t b = a + gap;
        uint32_t ca = async_index_class(a), cb = async_index_class(b);
        ck_assert_msg(b < a || (ca <= cb && cb < A_CLASSES), "seed %llu: class of %llu is %u, of %llu %u",
                      (unsigned long long)seed, (unsigned long long)a, ca, (unsigned long long)b, cb);
        uint32_t cn = async_index_class(a + 512);
        ck_assert_msg(a + 512 < a || cn <= ca + 1, "seed %llu: %llu + 512 B skips a class (%u to %u)",
                      (unsigned long long)seed, (unsigned long long)a, ca, cn);
    }
}
END_TEST

GPUSIM_TCASE("differential", 120, NULL, NULL);
START_TEST(async_should_match_a_brute_force_reference_of_its_rules_on_random_traces)
{
    uint64_t seed = test_seed("async_differential");
    static const struct {
        const char *opts;
        bool first_fit, coalesce;
        uint64_t keep;
    } cases[] = {
        {NULL, false, true, 0},
        {"pool_coalesce=off", false, false, 0},
        {"pool_placement=first", true, true, 0},
        {"release_threshold=8MiB", false, true, 8 * MiB},
        {"async_preset=pytorch", false, true, 0}, /* empty_cache trims to 0 */
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++)
        for (uint64_t k = 0; k < 4; k++)
            differential_run(cases[i].opts, cases[i].first_fit, cases[i].coalesce, cases[i].keep, seed + k * 7919);
}
END_TEST

/* ==== the checker catches a piece index broken on purpose ==== */

/* Coalescing off, one 2 MiB chunk cut into 8 pieces of 256 KiB, all freed: a treap of 8
 * nodes in the free set's class of 256 KiB (so its root has a child) that the checker
 * passes. */
static harness *eight_free_pieces(void)
{
    harness *h = harness_new(async_strategy(), 1 * GiB, 0, "pool_coalesce=off");
    strategy_handle a[8];
    for (int i = 0; i < 8; i++)
        a[i] = harness_alloc(h, 256 * KiB, 0);
    for (int i = 0; i < 8; i++)
        harness_free_block(h, a[i]);
    ck_assert_uint_eq(h->s->free_set.n, 8);
    sim_report r = harness_report(h);
    ck_assert_msg(r.violations == 0, "the intact index fails the checker:\n%s", r.text);
    return h;
}

static void expect_index_caught(harness *h, const char *needle)
{
    sim_report r = harness_report(h);
    ck_assert_msg(r.violations >= 1, "the broken index went unnoticed");
    ck_assert_msg(sim_report_mentions(&r, needle), "report does not mention '%s':\n%s", needle, r.text);
    harness_free(h);
}

/* The free set's root of the class of 256 KiB, which holds the 8 pieces. */
static uint32_t *class_root(strategy *s)
{
    return &s->free_set.root[async_index_class(256 * KiB)];
}

/* A child of that root (there is one: 8 nodes). */
static uint32_t root_child(strategy *s)
{
    const ablock *root = blk(s, *class_root(s));
    return root->kid[0] != A_NONE ? root->kid[0] : root->kid[1];
}

GPUSIM_TCASE("checker", 0, NULL, NULL);

START_TEST(async_checker_should_catch_index_keys_out_of_order)
{
    harness *h = eight_free_pieces();
    strategy *s = h->s;
    /* swap the addresses (the keys are the blocks' own) of the first and last node in
     * order: the walk meets the largest first */
    uint32_t lo = *class_root(s), hi = *class_root(s);
    while (blk(s, lo)->kid[0] != A_NONE)
        lo = blk(s, lo)->kid[0];
    while (blk(s, hi)->kid[1] != A_NONE)
        hi = blk(s, hi)->kid[1];
    uint64_t addr = blk(s, lo)->addr;
    blk(s, lo)->addr = blk(s, hi)->addr;
    blk(s, hi)->addr = addr;
    expect_index_caught(h, "out of (size, address) order");
}
END_TEST

START_TEST(async_checker_should_catch_a_child_above_its_parent_in_priority)
{
    harness *h = eight_free_pieces();
    strategy *s = h->s;
    /* rotate a child of the root above it: the order and the links stay sound, the
     * heap order of priorities does not */
    uint32_t p = *class_root(s), x = root_child(s), mid;
    ablock *t = block_table(s);
    if (t[p].kid[0] == x) {
        mid = t[x].kid[1];
        t[p].kid[0] = mid;
        t[x].kid[1] = p;
    } else {
        mid = t[x].kid[0];
        t[p].kid[1] = mid;
        t[x].kid[0] = p;
    }
    if (mid != A_NONE)
        t[mid].parent = p;
    t[p].parent = x;
    t[x].parent = A_NONE;
    *class_root(s) = x;
    expect_index_caught(h, "heap order of priorities");
}
END_TEST

START_TEST(async_checker_should_catch_a_broken_parent_link)
{
    harness *h = eight_free_pieces();
    blk(h->s, root_child(h->s))->parent = A_NONE;
    expect_index_caught(h, "names parent");
}
END_TEST

START_TEST(async_checker_should_catch_index_links_that_loop)
{
    harness *h = eight_free_pieces();
    strategy *s = h->s;
    /* the smallest node's left link back to the root: the walk down the left spine
     * would not end */
    uint32_t lo = *class_root(s);
    while (blk(s, lo)->kid[0] != A_NONE)
        lo = blk(s, lo)->kid[0];
    blk(s, lo)->kid[0] = *class_root(s);
    expect_index_caught(h, "links loop");
}
END_TEST

START_TEST(async_checker_should_catch_a_free_block_tagged_pending)
{
    harness *h = eight_free_pieces();
    blk(h->s, *class_root(h->s))->in = A_IN_PEND;
    expect_index_caught(h, "not in the index its state names");
}
END_TEST

START_TEST(async_checker_should_catch_an_index_count_that_disagrees)
{
    harness *h = eight_free_pieces();
    h->s->free_set.n++;
    expect_index_caught(h, "index holds 8 pieces, counts 9");
}
END_TEST

START_TEST(async_checker_should_catch_a_wrong_last_node)
{
    harness *h = eight_free_pieces();
    /* the root of 8 nodes is not the last in order: its child is, or one below it */
    strategy *s = h->s;
    s->free_set.last = s->free_set.last == *class_root(s) ? root_child(s) : *class_root(s);
    expect_index_caught(h, "its last");
}
END_TEST

START_TEST(async_checker_should_catch_a_class_with_pieces_that_the_bitmap_calls_empty)
{
    harness *h = eight_free_pieces();
    strategy *s = h->s;
    uint32_t c = async_index_class(256 * KiB);
    s->free_set.words[c / 64] &= ~((uint64_t)1 << (c % 64));
    expect_index_caught(h, "is not empty but not marked in the bitmap");
}
END_TEST

START_TEST(async_checker_should_catch_an_empty_class_that_the_bitmap_marks)
{
    harness *h = eight_free_pieces();
    strategy *s = h->s;
    uint32_t c = async_index_class(256 * KiB) + 1; /* 260 KiB up to 264 KiB: no piece that size */
    s->free_set.words[c / 64] |= (uint64_t)1 << (c % 64);
    expect_index_caught(h, "is empty but marked in the bitmap");
}
END_TEST

START_TEST(async_checker_should_catch_a_summary_bit_that_disagrees_with_its_word)
{
    harness *h = eight_free_pieces();
    h->s->free_set.summary = 0;
    expect_index_caught(h, "summary bit");
}
END_TEST

START_TEST(async_checker_should_catch_a_treap_under_the_wrong_size_class)
{
    harness *h = eight_free_pieces();
    strategy *s = h->s;
    /* move the 256 KiB class's treap, bitmap bits included, one class up */
    uint32_t c = async_index_class(256 * KiB);
    s->free_set.root[c + 1] = s->free_set.root[c];
    s->free_set.root[c] = A_NONE;
    /* 256 KiB is 512 units of 512 B: 2^9, class (9 - 6) * 64 + (512 >> 3) = 256; 257 shares its word */
    ck_assert_uint_eq(c, 256);
    s->free_set.words[c / 64] ^= (uint64_t)3 << (c % 64);
    expect_index_caught(h, "in size class");
}
END_TEST
