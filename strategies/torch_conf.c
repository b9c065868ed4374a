/* PYTORCH_CUDA_ALLOC_CONF parsing, following c10/core/AllocatorConfig.cpp
 * (AcceleratorAllocatorConfig::parseArgs, newest main @ 0ac71663 and the
 * large_segment_size_mb addition) and c10/cuda/CUDAAllocatorConfig.cpp @ 01f9ef32.
 *
 * Rules:
 *  1. Lexing: ',' ':' '[' ']' are tokens of their own, spaces are dropped, every
 *     other run of characters is one token (ConfigTokenizer / lexArgs).
 *  2. Grammar: key ':' value {',' key ':' value}; a repeated key overwrites the
 *     earlier one (keys are applied in order).
 *  3. large_segment_size_mb is read before all other keys, because the minimum of
 *     max_non_split_rounding_mb is large_segment_size_mb, and its value is also the
 *     default of max_non_split_rounding (newest main parses it in a first pass).
 *  4. Limits (TORCH_CHECK in the parse* functions): max_split_size_mb ≥ 20
 *     (kLargeBuffer / 1 MiB); max_non_split_rounding_mb ≥ large_segment_size_mb;
 *     large_segment_size_mb > 10 (kMinLargeAlloc / 1 MiB);
 *     garbage_collection_threshold in (0, 1); roundup_power2_divisions: a single
 *     power of two, or a list of `MiB:divisions` (keys powers of two or '>', values
 *     0 or powers of two); expandable_segments True/False.
 *  5. Roundup list: index = log2(key MiB) clamped to [0, 15]; the first key also
 *     fills every smaller index; '>' fills every index after the last key
 *     (last_index + 1 from 2.10 on, so a leading '>' leaves index 0 alone);
 *     releases 2.1-2.9 start at last_index, overwriting the last key's value
 *     (CUDAAllocatorConfig::parseRoundUpPower2Divisions in 2.6; --torch-version).
 *  7. Per release (torch_version.h): keys a release does not know are
 *     unrecognized there; 2.1-2.8 require max_split_size_mb and
 *     max_non_split_rounding_mb to exceed 20 rather than reach it.
 *  6. backend: native, or cudaMallocAsync (a different allocator, CUDA's
 *     stream-ordered pool: backend_async, which the `async` strategy models).
 *     Unknown keys are rejected ("Unrecognized key ... in CUDA
 *     allocator config"); the pinned-memory and lock keys are accepted and ignored.
 * Numbers must be plain decimal integers: PyTorch's stoi would accept "20abc",
 * we refuse it rather than guess. */
#include "torch_conf.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sim/units.h"

const strategy_option torch_conf_options[TORCH_CONF_N_OPTIONS] = {
    STRATEGY_OPT_TEXT("alloc_conf", "alloc-conf", "PyTorch's, or the recording's own", "expandable_segments:True",
                      "PYTORCH_CUDA_ALLOC_CONF, key:value,... (max_split_size_mb, expandable_segments, ...)"),
    STRATEGY_OPT_REAL("memory_fraction", "memory-fraction", "none, the whole device", "0.5",
                      "torch.cuda.set_per_process_memory_fraction(F): reserved memory stays within F of total"),
    STRATEGY_OPT_TEXT("torch_version", "torch-version", "2.14, the newest checked", "2.6",
                      "the PyTorch release whose allocator rules apply: 2.1 ... 2.14 or main (as 2.14)"),
    STRATEGY_OPT_ENUM("platform", "platform", "cuda|rocm|rocm6", "cuda", "rocm",
                      "the build: a CUDA wheel, or ROCm 7+ / ROCm 6 (HIP; modelled from source, not checked against a "
                      "binary): expandable segments, the OOM message"),
    STRATEGY_OPT_TEXT("torch_fixes", "torch-fixes", "none, as every release", "193400",
                      "open pytorch/pytorch pull requests to apply, comma-separated: 191302 (re-search the pool after "
                      "the OOM ladder's synchronize, issue #189504), 193400 (expandable segments reuse blocks above "
                      "max_split_size, issue #123548)"),
};

#define CONF_MAX_TOKENS 256u
#define CONF_TOKEN_LEN 64u
#define CONF_MIB ((uint64_t)1 << 20)
#define CONF_LARGE_BUFFER_MB 20u   /* kLargeBuffer / 1 MiB */
#define CONF_MIN_LARGE_ALLOC_MB 10u /* kMinLargeAlloc / 1 MiB */
#define CONF_MAX_REGISTER_THREADS 128u /* pinned_max_register_threads() */

typedef struct conf_lex {
    char tok[CONF_MAX_TOKENS][CONF_TOKEN_LEN];
    uint32_t n;
} conf_lex;

void torch_conf_defaults(torch_conf *c)
{
    memset(c, 0, sizeof *c);
    c->max_split_size_bytes = TORCH_CONF_NO_MAX_SPLIT;
    c->large_segment_size_bytes = (uint64_t)CONF_LARGE_BUFFER_MB * CONF_MIB;
    c->max_non_split_rounding_bytes = c->large_segment_size_bytes;
    c->per_process_memory_fraction = -1.0;
}

static sim_status conf_lex_text(const char *text, conf_lex *lx, sim_error *err)
{
    lx->n = 0;
    size_t len = 0;
    for (const char *p = text;; p++) {
        bool special = *p == ',' || *p == ':' || *p == '[' || *p == ']';
        if (*p == '\0' || special) {
            if (len > 0) {
                if (lx->n == CONF_MAX_TOKENS)
                    return sim_error_set(err, SIM_EUSAGE, NULL, 0, 0, "alloc_conf: too many items in '%s'%s", text, "");
                lx->tok[lx->n][len] = '\0';
                lx->n++;
                len = 0;
            }
            if (*p == '\0')
                break;
            if (lx->n == CONF_MAX_TOKENS)
                return sim_error_set(err, SIM_EUSAGE, NULL, 0, 0, "alloc_conf: too many items in '%s'%s", text, "");
            lx->tok[lx->n][0] = *p;
            lx->tok[lx->n][1] = '\0';
            lx->n++;
        } else if (*p != ' ') {
            /* a new item after the last slot was filled (found by fuzz_alloc_conf) */
            if (lx->n == CONF_MAX_TOKENS)
                return sim_error_set(err, SIM_EUSAGE, NULL, 0, 0, "alloc_conf: too many items in '%s'%s", text, "");
            if (len + 1 >= CONF_TOKEN_LEN)
                return sim_error_set(err, SIM_EUSAGE, NULL, 0, 0, "alloc_conf: item too long in '%s'%s", text, "");
            lx->tok[lx->n][len++] = *p;
        }
    }
    return SIM_OK;
}

static const char *conf_tok(const conf_lex *lx, uint32_t i)
{
    return i < lx->n ? lx->tok[i] : "";
}

static sim_status conf_expect(const conf_lex *lx, uint32_t i, const char *what, const char *key,
                              sim_error *err)
{
    if (strcmp(conf_tok(lx, i), what) != 0)
        return sim_error_set(err, SIM_EUSAGE, NULL, 0, 0,
                             "alloc_conf: expected '%s' after '%s' (PYTORCH_CUDA_ALLOC_CONF is key:value,key:value)",
                             what, key);
    return SIM_OK;
}

static sim_status conf_u64(const conf_lex *lx, uint32_t i, const char *key, uint64_t *out, sim_error *err)
{
    const char *t = conf_tok(lx, i);
    sim_error scratch;
    if (units_parse_u64(t, out, &scratch) != SIM_OK)
        return sim_error_set(err, SIM_EUSAGE, NULL, 0, 0, "alloc_conf: %s expects a non-negative integer, got '%s'",
                             key, t);
    return SIM_OK;
}

static sim_status conf_bool(const conf_lex *lx, uint32_t i, const char *key, bool *out, sim_error *err)
{
    const char *t = conf_tok(lx, i);
    if (strcmp(t, "True") == 0)
        *out = true;
    else if (strcmp(t, "False") == 0)
        *out = false;
    else
        return sim_error_set(err, SIM_EUSAGE, NULL, 0, 0,
                             "alloc_conf: expected a single True/False argument for %s, got '%s'", key, t);
    return SIM_OK;
}

/* Value of size key `key` in MiB, ≥ min_mb, stored as bytes (capped like PyTorch at
 * SIZE_MAX / 1 MiB MiB). */
static sim_status conf_mb(const conf_lex *lx, uint32_t i, const char *key, uint64_t min_mb, const char *meaning,
                          uint64_t *out, sim_error *err)
{
    uint64_t mb = 0;
    sim_status st = conf_u64(lx, i, key, &mb, err);
    if (st != SIM_OK)
        return st;
    if (mb < min_mb)
        return sim_error_set(err, SIM_EUSAGE, NULL, 0, 0,
                             "alloc_conf: %s:%llu is too small, must be >= %llu (PyTorch: \"CachingAllocator option %s "
                             "too small\"; %s)",
                             key, (unsigned long long)mb, (unsigned long long)min_mb, key, meaning);
    if (mb > UINT64_MAX / CONF_MIB)
        mb = UINT64_MAX / CONF_MIB;
    *out = mb * CONF_MIB;
    return SIM_OK;
}

static void conf_note_ignored(torch_conf *c, const char *key)
{
    if (strstr(c->ignored, key) != NULL)
        return;
    size_t used = strlen(c->ignored);
    snprintf(c->ignored + used, sizeof c->ignored - used, "%s%s", used ? "," : "", key);
}

static sim_status conf_roundup(const conf_lex *lx, uint32_t *ip, const torch_rules *rules, torch_conf *c,
                               sim_error *err)
{
    const char *key = "roundup_power2_divisions";
    uint32_t i = *ip;
    uint32_t *div = c->roundup_power2_divisions;
    if (strcmp(conf_tok(lx, i), "[") != 0) {
        /* single value for every interval: must be a power of two (0 is refused) */
        uint64_t v = 0;
        sim_status st = conf_u64(lx, i, key, &v, err);
        if (st != SIM_OK)
            return st;
        if (!units_is_pow2(v) || v > UINT32_MAX)
            return sim_error_set(err, SIM_EUSAGE, NULL, 0, 0,
                                 "alloc_conf: %s:%llu: the divisions have to be a power of 2 (PyTorch: \"For "
                                 "roundups, the divisions has to be power of 2\")",
                                 key, (unsigned long long)v);
        for (uint32_t k = 0; k < TORCH_CONF_ROUNDUP_INTERVALS; k++)
            div[k] = (uint32_t)v;
        return SIM_OK;
    }
    bool first = true;
    uint32_t last_index = 0;
    for (;;) {
        i++;
        if (i >= lx->n)
            return sim_error_set(err, SIM_EUSAGE, NULL, 0, 0, "alloc_conf: %s list is missing its closing ']'", key);
        if (strcmp(lx->tok[i], "]") == 0)
            break;
        uint32_t key_i = i;
        sim_status st = conf_expect(lx, ++i, ":", lx->tok[key_i], err);
        if (st != SIM_OK)
            return st;
        uint64_t v = 0;
        if ((st = conf_u64(lx, ++i, key, &v, err)) != SIM_OK)
            return st;
        if ((v != 0 && !units_is_pow2(v)) || v > UINT32_MAX)
            return sim_error_set(err, SIM_EUSAGE, NULL, 0, 0,
                                 "alloc_conf: %s: divisions %llu must be a power of 2, or 0 to disable rounding",
                                 key, (unsigned long long)v);
        if (strcmp(lx->tok[key_i], ">") == 0) {
            for (uint32_t k = rules->roundup_gt_after_last ? last_index + 1 : last_index;
                 k < TORCH_CONF_ROUNDUP_INTERVALS; k++)
                div[k] = (uint32_t)v;
        } else {
            uint64_t boundary = 0;
            if ((st = conf_u64(lx, key_i, key, &boundary, err)) != SIM_OK)
                return st;
            if (!units_is_pow2(boundary))
                return sim_error_set(err, SIM_EUSAGE, NULL, 0, 0,
                                     "alloc_conf: %s: interval %llu (MiB) must be a power of 2 or '>'", key,
                                     (unsigned long long)boundary);
            uint32_t index = units_log2(boundary);
            if (index > TORCH_CONF_ROUNDUP_INTERVALS - 1)
                index = TORCH_CONF_ROUNDUP_INTERVALS - 1;
            if (first)
                for (uint32_t k = 0; k < index; k++)
                    div[k] = (uint32_t)v;
            first = false;
            div[index] = (uint32_t)v;
            last_index = index;
        }
        if (i + 1 >= lx->n)
            return sim_error_set(err, SIM_EUSAGE, NULL, 0, 0, "alloc_conf: %s list is missing its closing ']'", key);
        if (strcmp(conf_tok(lx, i + 1), "]") != 0 && (st = conf_expect(lx, ++i, ",", key, err)) != SIM_OK)
            return st;
    }
    *ip = i;
    return SIM_OK;
}

/* Whether release r knows key (the keys absent from some releases). */
static bool conf_key_known(const torch_rules *r, const char *key)
{
    if (strcmp(key, "expandable_segments") == 0)
        return r->key_expandable_segments;
    if (strcmp(key, "max_non_split_rounding_mb") == 0)
        return r->key_max_non_split_rounding_mb;
    if (strcmp(key, "graph_capture_record_stream_reuse") == 0)
        return r->key_graph_capture_record_stream_reuse;
    if (strcmp(key, "pinned_reserve_segment_size_mb") == 0)
        return r->key_pinned_reserve_segment_size_mb;
    if (strcmp(key, "per_process_memory_fraction") == 0)
        return r->key_per_process_memory_fraction;
    if (strcmp(key, "large_segment_size_mb") == 0)
        return r->key_large_segment_size_mb;
    if (strcmp(key, "throw_on_cudamalloc_oom") == 0 || strcmp(key, "pinned_free_catch_all") == 0)
        return r->key_throw_on_oom_and_pinned_catch_all;
    if (strcmp(key, "pinned_max_round_threshold_mb") == 0 || strcmp(key, "pinned_max_cached_size_mb") == 0)
        return r->key_pinned_max_round_and_cached;
    return true;
}

static sim_status conf_apply(const conf_lex *lx, const torch_rules *rules, torch_conf *c, sim_error *err)
{
    sim_status st;
    /* the smallest max_split_size_mb / max_non_split_rounding_mb: 20 from 2.9 on,
     * 21 before (they had to exceed kLargeBuffer) */
    uint64_t mb_floor = rules->mb_minimum_inclusive ? 0 : 1;
    /* rule 3: large_segment_size_mb first */
    for (uint32_t i = 0; i < lx->n; i++) {
        if (rules->key_large_segment_size_mb && strcmp(lx->tok[i], "large_segment_size_mb") == 0) {
            if ((st = conf_expect(lx, i + 1, ":", lx->tok[i], err)) != SIM_OK)
                return st;
            if ((st = conf_mb(lx, i + 2, "large_segment_size_mb", CONF_MIN_LARGE_ALLOC_MB + 1,
                              "it is the segment size of 1-10 MiB requests and the page of large expandable "
                              "segments, and must exceed the 10 MiB kMinLargeAlloc",
                              &c->large_segment_size_bytes, err)) != SIM_OK)
                return st;
        }
    }
    c->max_non_split_rounding_bytes = c->large_segment_size_bytes;

    for (uint32_t i = 0; i < lx->n; i++) {
        const char *key = lx->tok[i];
        if (strcmp(key, ",") == 0 || strcmp(key, ":") == 0 || strcmp(key, "[") == 0 || strcmp(key, "]") == 0)
            return sim_error_set(err, SIM_EUSAGE, NULL, 0, 0, "alloc_conf: expected a key, got '%s'%s", key, "");
        if ((st = conf_expect(lx, ++i, ":", key, err)) != SIM_OK)
            return st;
        i++;
        if (i >= lx->n)
            return sim_error_set(err, SIM_EUSAGE, NULL, 0, 0, "alloc_conf: %s has no value%s", key, "");
        char vbuf[16];
        if (!conf_key_known(rules, key)) {
            st = sim_error_set(err, SIM_EUSAGE, NULL, 0, 0,
                               "alloc_conf: unrecognized key '%s' in CUDA allocator config: PyTorch %s does not have "
                               "it (PyTorch: \"Unrecognized CachingAllocator option\")",
                               key, torch_version_format(rules, vbuf, sizeof vbuf));
        } else if (strcmp(key, "large_segment_size_mb") == 0) {
            /* applied in the first pass */
        } else if (strcmp(key, "max_split_size_mb") == 0) {
            st = conf_mb(lx, i, key, CONF_LARGE_BUFFER_MB + mb_floor,
                         "blocks of at least this size are never split and are reused only by requests within "
                         "max_non_split_rounding_mb of their size",
                         &c->max_split_size_bytes, err);
        } else if (strcmp(key, "max_non_split_rounding_mb") == 0) {
            st = conf_mb(lx, i, key, c->large_segment_size_bytes / CONF_MIB + mb_floor,
                         "an oversize request may take a cached block at most this much larger than itself",
                         &c->max_non_split_rounding_bytes, err);
        } else if (strcmp(key, "garbage_collection_threshold") == 0) {
            char *end = NULL;
            errno = 0;
            double v = strtod(lx->tok[i], &end);
            if (errno != 0 || end == lx->tok[i] || *end != '\0' || !isfinite(v) || !(v > 0.0 && v < 1.0))
                st = sim_error_set(err, SIM_EUSAGE, NULL, 0, 0,
                                   "alloc_conf: garbage_collection_threshold '%s' is invalid, set it in (0.0, 1.0) "
                                   "(the fraction of the memory-fraction cap above which cached blocks are "
                                   "reclaimed)",
                                   lx->tok[i]);
            else
                c->garbage_collection_threshold = v;
        } else if (strcmp(key, "roundup_power2_divisions") == 0) {
            st = conf_roundup(lx, &i, rules, c, err);
        } else if (strcmp(key, "per_process_memory_fraction") == 0) {
            char *end = NULL;
            errno = 0;
            double v = strtod(lx->tok[i], &end);
            if (errno != 0 || end == lx->tok[i] || *end != '\0' || !isfinite(v) || v < 0.0 || v > 1.0)
                st = sim_error_set(err, SIM_EUSAGE, NULL, 0, 0,
                                   "alloc_conf: per_process_memory_fraction '%s' is invalid, set it in [0.0, 1.0] "
                                   "(the share of the device's total memory that reserved memory may reach)",
                                   lx->tok[i]);
            else
                c->per_process_memory_fraction = v;
        } else if (strcmp(key, "expandable_segments") == 0) {
            st = conf_bool(lx, i, key, &c->expandable_segments, err);
        } else if (strcmp(key, "backend") == 0) {
            if (strcmp(lx->tok[i], "cudaMallocAsync") == 0 || strcmp(lx->tok[i], "native") == 0)
                c->backend_async = strcmp(lx->tok[i], "cudaMallocAsync") == 0; /* the last one given wins */
            else
                st = sim_error_set(err, SIM_EUSAGE, NULL, 0, 0,
                                   "alloc_conf: unknown allocator backend '%s', options are native and "
                                   "cudaMallocAsync",
                                   lx->tok[i]);
        } else if (strcmp(key, "release_lock_on_cudamalloc") == 0 || strcmp(key, "release_lock_on_hipmalloc") == 0) {
            st = conf_bool(lx, i, key, &c->release_lock_on_cudamalloc, err);
            conf_note_ignored(c, key);
        } else if (strcmp(key, "throw_on_cudamalloc_oom") == 0) {
            st = conf_bool(lx, i, key, &c->throw_on_cudamalloc_oom, err);
        } else if (strcmp(key, "pinned_use_cuda_host_register") == 0 ||
                   strcmp(key, "pinned_free_catch_all") == 0 ||
                   strcmp(key, "pinned_use_hip_host_register") == 0 ||
                   strcmp(key, "pinned_use_background_threads") == 0 ||
                   strcmp(key, "graph_capture_record_stream_reuse") == 0) {
            bool ignored = false;
            st = conf_bool(lx, i, key, &ignored, err);
            conf_note_ignored(c, key);
        } else if (strcmp(key, "pinned_max_round_threshold_mb") == 0 || strcmp(key, "pinned_max_cached_size_mb") == 0) {
            uint64_t v = 0;
            st = conf_u64(lx, i, key, &v, err);
            conf_note_ignored(c, key);
        } else if (strcmp(key, "pinned_num_register_threads") == 0) {
            uint64_t v = 0;
            st = conf_u64(lx, i, key, &v, err);
            if (st == SIM_OK && (!units_is_pow2(v) || v > CONF_MAX_REGISTER_THREADS))
                st = sim_error_set(err, SIM_EUSAGE, NULL, 0, 0,
                                   "alloc_conf: pinned_num_register_threads must be a power of 2 and <= %u, got %llu",
                                   CONF_MAX_REGISTER_THREADS, (unsigned long long)v);
            conf_note_ignored(c, key);
        } else if (strcmp(key, "pinned_reserve_segment_size_mb") == 0) {
            uint64_t v = 0;
            st = conf_u64(lx, i, key, &v, err);
            if (st == SIM_OK && v == 0)
                st = sim_error_set(err, SIM_EUSAGE, NULL, 0, 0, "alloc_conf: %s has to be greater than 0%s", key, "");
            conf_note_ignored(c, key);
        } else {
            st = sim_error_set(err, SIM_EUSAGE, NULL, 0, 0,
                               "alloc_conf: unrecognized key '%s' in CUDA allocator config (PyTorch rejects it too)",
                               key);
        }
        if (st != SIM_OK)
            return st;
        if (i + 1 < lx->n && (st = conf_expect(lx, ++i, ",", key, err)) != SIM_OK)
            return st;
    }
    return SIM_OK;
}

sim_status torch_conf_parse(const char *text, torch_conf *c, sim_error *err)
{
    torch_rules newest;
    (void)torch_version_parse(NULL, &newest, err);
    return torch_conf_parse_for(text, &newest, c, err);
}

sim_status torch_conf_parse_for(const char *text, const torch_rules *r, torch_conf *c, sim_error *err)
{
    torch_conf_defaults(c);
    if (text == NULL || *text == '\0')
        return SIM_OK;
    conf_lex *lx = malloc(sizeof *lx);
    if (lx == NULL)
        return sim_error_set(err, SIM_ENOMEM, NULL, 0, 0, "out of memory parsing alloc_conf");
    sim_status st = conf_lex_text(text, lx, err);
    if (st == SIM_OK)
        st = conf_apply(lx, r, c, err);
    free(lx);
    if (st != SIM_OK)
        torch_conf_defaults(c);
    return st;
}

uint32_t torch_conf_divisions(const torch_conf *c, uint64_t size)
{
    unsigned lg = units_log2(size);
    unsigned index = lg > 20 ? lg - 20 : 0;
    if (index > TORCH_CONF_ROUNDUP_INTERVALS - 1)
        index = TORCH_CONF_ROUNDUP_INTERVALS - 1;
    return c->roundup_power2_divisions[index];
}

char *torch_conf_format_divisions(const torch_conf *c, char *buf, uint64_t cap)
{
    size_t used = 0;
    if (cap == 0)
        return buf;
    buf[0] = '\0';
    for (uint32_t k = 0; k < TORCH_CONF_ROUNDUP_INTERVALS && used < cap; k++) {
        int n = snprintf(buf + used, (size_t)cap - used, "%s%llu:%u", k == 0 ? "[" : ",",
                         (unsigned long long)((uint64_t)1 << k), c->roundup_power2_divisions[k]);
        if (n < 0)
            break;
        used += (size_t)n;
    }
    if (used < cap)
        snprintf(buf + used, (size_t)cap - used, "]");
    return buf;
}
