/* Check suite for strategies/registry and the strategies' option tables
 * (strategy_option, sim/strategy.h): the tables are well formed, the lookups find an
 * option by spelling and by key, and every strategy's options() writes every entry
 * of its table under exactly its key, with a value that create() given back builds
 * an instance with the same options. */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sim/device.h"
#include "sim/units.h"
#include "strategies/registry.h"
#include "support/check_main.h"

#define MAX_OUT 64

/* What options() wrote, in order. */
typedef struct written {
    uint32_t n;
    char key[MAX_OUT][64];
    char value[MAX_OUT][256];
} written;

static void w_u64(void *ctx, const char *key, uint64_t v)
{
    (void)ctx;
    ck_abort_msg("options() wrote %s=%llu as an integer: options are text", key, (unsigned long long)v);
}

static void w_real(void *ctx, const char *key, double v)
{
    (void)ctx;
    ck_abort_msg("options() wrote %s=%g as a real: options are text", key, v);
}

static void w_text(void *ctx, const char *key, const char *v)
{
    written *w = ctx;
    ck_assert_uint_lt(w->n, MAX_OUT);
    snprintf(w->key[w->n], sizeof w->key[0], "%s", key);
    snprintf(w->value[w->n], sizeof w->value[0], "%s", v);
    w->n++;
}

static const char *written_get(const written *w, const char *key)
{
    for (uint32_t i = 0; i < w->n; i++)
        if (strcmp(w->key[i], key) == 0)
            return w->value[i];
    return NULL;
}

/* Create ops on a 16 GiB, cc 8.0 device with the n options kv, write its options
 * into *w and destroy it. Fails the test when create() refuses. */
static void options_of(const strategy_ops *ops, const sim_kv *kv, uint32_t n, written *w)
{
    device_info info = {.name = "test", .capacity_bytes = 16 * GiB, .cc_major = 8, .cc_minor = 0};
    device *dev = device_new(&info);
    ck_assert_ptr_nonnull(dev);
    strategy_config cfg = {.dev = dev, .proc = device_proc_start(dev), .opts = kv, .n_opts = n};
    strategy *s = NULL;
    sim_error err;
    sim_error_clear(&err);
    sim_status st = ops->create(&cfg, &s, &err);
    ck_assert_msg(st == SIM_OK, "%s: create() refused its options: %s", ops->name, err.msg);
    memset(w, 0, sizeof *w);
    strategy_stat_sink sink = {w_u64, w_real, w_text, w};
    ops->options(s, &sink);
    ops->destroy(s);
    device_free(dev);
}

/* The table's keys as written, given back to create(): the same options again. */
static void expect_round_trip(const strategy_ops *ops, const written *w, const char *what)
{
    sim_kv back[MAX_OUT];
    uint32_t n = 0;
    for (uint32_t k = 0; k < ops->n_opts; k++) {
        const char *v = written_get(w, ops->opts[k].key);
        ck_assert_msg(v != NULL, "%s (%s): options() does not write %s", ops->name, what, ops->opts[k].key);
        back[n++] = (sim_kv){ops->opts[k].key, v};
    }
    written again;
    options_of(ops, back, n, &again);
    ck_assert_uint_eq(again.n, w->n);
    for (uint32_t i = 0; i < w->n; i++) {
        ck_assert_str_eq(again.key[i], w->key[i]);
        ck_assert_msg(strcmp(again.value[i], w->value[i]) == 0, "%s (%s): %s is '%s', read back as '%s'", ops->name,
                      what, w->key[i], w->value[i], again.value[i]);
    }
}

/* The required options of ops (other than skip) with their examples, into kv. */
static uint32_t required(const strategy_ops *ops, const char *skip, sim_kv *kv)
{
    uint32_t n = 0;
    for (uint32_t k = 0; k < ops->n_opts; k++)
        if (ops->opts[k].required && (skip == NULL || strcmp(ops->opts[k].key, skip) != 0))
            kv[n++] = (sim_kv){ops->opts[k].key, ops->opts[k].example};
    return n;
}

START_TEST(every_table_entry_should_say_what_help_and_the_tests_need)
{
    for (size_t i = 0; i < registry_count(); i++) {
        const strategy_ops *ops = registry_get(i);
        ck_assert_ptr_nonnull(ops->name);
        ck_assert_msg(ops->n_opts == 0 || ops->opts != NULL, "%s: n_opts without opts", ops->name);
        for (uint32_t k = 0; k < ops->n_opts; k++) {
            const strategy_option *o = &ops->opts[k];
            ck_assert_msg(o->key && o->key[0] && o->cli && o->cli[0], "%s: option %u has no key or spelling",
                          ops->name, k);
            ck_assert_msg(strchr(o->key, '-') == NULL && strchr(o->cli, '_') == NULL,
                          "%s: key %s is spelt with '_', its command line %s with '-'", ops->name, o->key, o->cli);
            ck_assert_msg(o->help && o->help[0] && o->example && o->example[0], "%s: %s needs help and an example",
                          ops->name, o->key);
            ck_assert_msg(o->required || (o->default_text && o->default_text[0]), "%s: %s says no default",
                          ops->name, o->key);
            ck_assert_msg(o->kind != STRATEGY_OPTION_ENUM || (o->choices && strchr(o->example, '|') == NULL),
                          "%s: enum %s without choices", ops->name, o->key);
            for (uint32_t j = 0; j < k; j++)
                ck_assert_msg(strcmp(ops->opts[j].key, o->key) != 0, "%s: two entries for %s", ops->name, o->key);
            /* strategies that share an option share its key and its spelling */
            ck_assert_str_eq(registry_option_by_cli(o->cli)->key, o->key);
            ck_assert_str_eq(registry_option_by_key(o->key)->cli, o->cli);
        }
    }
}
END_TEST

START_TEST(lookups_should_find_options_by_spelling_and_key_and_name_their_strategies)
{
    char buf[256];
    ck_assert_str_eq(registry_option_by_cli("bfc-gc")->key, "bfc_gc");
    ck_assert_str_eq(registry_option_by_cli("bfc-fragmentation-fraction")->key, "bfc_fragmentation_fraction");
    ck_assert_str_eq(registry_option_by_key("memory_fraction")->cli, "memory-fraction");
    ck_assert_ptr_null(registry_option_by_cli("bfc_gc")); /* the key is not a spelling */
    ck_assert_str_eq(registry_option_by_cli("release-threshold")->key, "release_threshold");
    ck_assert_ptr_null(registry_option_by_cli("release_threshold"));
    ck_assert_ptr_null(registry_option_by_key("fragmentation_fraction"));
    ck_assert_str_eq(registry_option_owners("mem_fraction", buf, sizeof buf), "greedy, growth");
    ck_assert_str_eq(registry_option_owners("bfc_gc", buf, sizeof buf), "greedy, growth, limit");
    ck_assert_str_eq(registry_option_owners("limit", buf, sizeof buf), "limit");
    ck_assert_str_eq(registry_option_owners("alloc_conf", buf, sizeof buf), "torch, async");
    ck_assert_str_eq(registry_option_owners("pool_granularity", buf, sizeof buf), "async");
    ck_assert_str_eq(registry_option_owners("nope", buf, sizeof buf), "");
    /* a short buffer stays terminated */
    ck_assert_str_eq(registry_option_owners("bfc_gc", buf, 10), "greedy");
    const strategy_ops *some[] = {registry_find("raw"), registry_find("torch")};
    ck_assert(registry_option_applies("memory_fraction", some, 2));
    ck_assert(!registry_option_applies("bfc_gc", some, 2));
    ck_assert(!registry_option_applies("memory_fraction", some, 1));
    ck_assert_ptr_null(registry_option_of(registry_find("limit"), "mem_fraction"));
    ck_assert_ptr_nonnull(registry_option_of(registry_find("growth"), "mem_fraction"));
    /* the distinct options: each key once, every strategy's every key among them */
    size_t n = 0;
    while (registry_option_get(n))
        n++;
    for (size_t i = 0; i < n; i++)
        for (size_t j = 0; j < i; j++)
            ck_assert_str_ne(registry_option_get(i)->key, registry_option_get(j)->key);
    for (size_t s = 0; s < registry_count(); s++) {
        const strategy_ops *ops = registry_get(s);
        for (uint32_t k = 0; k < ops->n_opts; k++) {
            bool listed = false;
            for (size_t i = 0; i < n; i++)
                listed = listed || strcmp(registry_option_get(i)->key, ops->opts[k].key) == 0;
            ck_assert_msg(listed, "%s's %s is not among the distinct options", ops->name, ops->opts[k].key);
        }
    }
    /* mem_fraction, bfc_preset, bfc_gc, bfc_fragmentation_fraction, bfc_version, bfc_alignment,
     * bfc_spatial, limit, alloc_conf, memory_fraction, async's async_preset, release_threshold,
     * pool_granularity, pool_alignment, pool_placement, pool_coalesce, async_empty_cache,
     * async_oom_retry, planned's planner, alignment, heap_limit, and torch's torch_version,
     * platform and torch_fixes: 10 + 8 + 3 + 3 */
    ck_assert_uint_eq(n, 24);
    /* growth has no bfc_spatial (XLA CHECKs spatial partitioning off with growth) */
    ck_assert_ptr_null(registry_option_of(registry_find("growth"), "bfc_spatial"));
    ck_assert_ptr_nonnull(registry_option_of(registry_find("greedy"), "bfc_spatial"));
}
END_TEST

START_TEST(options_should_write_every_table_key_and_read_back_the_same_with_defaults)
{
    for (size_t i = 0; i < registry_count(); i++) {
        const strategy_ops *ops = registry_get(i);
        sim_kv kv[MAX_OUT];
        uint32_t n = required(ops, NULL, kv);
        written w;
        options_of(ops, kv, n, &w);
        expect_round_trip(ops, &w, "defaults");
    }
}
END_TEST

START_TEST(each_option_given_should_come_back_under_its_own_key)
{
    /* every option of every strategy: each choice of an enum, else the example */
    for (size_t i = 0; i < registry_count(); i++) {
        const strategy_ops *ops = registry_get(i);
        for (uint32_t k = 0; k < ops->n_opts; k++) {
            const strategy_option *o = &ops->opts[k];
            char values[256];
            snprintf(values, sizeof values, "%s", o->kind == STRATEGY_OPTION_ENUM ? o->choices : o->example);
            char *save = NULL;
            for (char *v = strtok_r(values, "|", &save); v; v = strtok_r(NULL, "|", &save)) {
                sim_kv kv[MAX_OUT];
                uint32_t n = required(ops, o->key, kv);
                kv[n++] = (sim_kv){o->key, v};
                written w;
                options_of(ops, kv, n, &w);
                const char *got = written_get(&w, o->key);
                ck_assert_msg(got && got[0], "%s: --%s=%s comes back as '%s'", ops->name, o->cli, v, got ? got : "");
                char what[128];
                snprintf(what, sizeof what, "--%s=%s", o->cli, v);
                expect_round_trip(ops, &w, what);
            }
        }
    }
}
END_TEST

START_TEST(an_empty_value_should_read_as_unset)
{
    /* strategy.h: options() writes "" for an unset option; create() reads it as unset */
    const sim_kv kv[] = {{"bfc_gc", "off"}, {"bfc_gc", ""}};
    strategy_config cfg = {.opts = kv, .n_opts = 1};
    ck_assert_str_eq(strategy_config_get(&cfg, "bfc_gc"), "off");
    cfg.n_opts = 2; /* the last occurrence wins, and it is empty */
    ck_assert_ptr_null(strategy_config_get(&cfg, "bfc_gc"));
    ck_assert_ptr_null(strategy_config_get(&cfg, "bfc_preset"));
}
END_TEST

START_TEST(the_traits_should_name_strategies_and_options_that_exist)
{
    /* what the reports, the what-ifs and the CLI ask instead of a name (sim/strategy.h) */
    for (size_t i = 0; i < registry_count(); i++) {
        const strategy_ops *ops = registry_get(i);
        ck_assert_int_le(ops->family, STRATEGY_FAMILY_PLANNED);
        for (size_t k = 0; ops->whatif_strategies != NULL && ops->whatif_strategies[k] != NULL; k++) {
            const strategy_ops *alt = registry_find(ops->whatif_strategies[k]);
            ck_assert_msg(alt != NULL, "%s: what-if strategy %s is unknown", ops->name, ops->whatif_strategies[k]);
            ck_assert_int_eq(alt->family, ops->family);
        }
        if (ops->recorded_conf_key != NULL) {
            const strategy_option *o = registry_recorded_conf(ops);
            ck_assert_msg(o != NULL, "%s: recorded_conf_key %s is not an option", ops->name, ops->recorded_conf_key);
            ck_assert_int_eq(o->kind, STRATEGY_OPTION_TEXT);
        } else {
            ck_assert_ptr_null(registry_recorded_conf(ops));
        }
        if (ops->takes_region_at_start)
            ck_assert_int_eq(ops->family, STRATEGY_FAMILY_BFC);
        /* fitting by the peak: only the bounds and the offline plan (a caching allocator's
         * release-and-retry or a region sized from the capacity changes its replay) */
        bool by_peak = strcmp(ops->name, "raw") == 0 || strcmp(ops->name, "ideal") == 0 ||
                       strcmp(ops->name, "planned") == 0;
        ck_assert_msg(ops->fits_by_peak == by_peak, "%s: fits_by_peak %d", ops->name, ops->fits_by_peak);
    }
    ck_assert_int_eq(registry_find("torch")->family, STRATEGY_FAMILY_TORCH);
    ck_assert_int_eq(registry_find("growth")->family, STRATEGY_FAMILY_BFC);
    ck_assert_int_eq(registry_find("ideal")->family, STRATEGY_FAMILY_BOUND);
    ck_assert_str_eq(registry_recorded_conf(registry_find("torch"))->cli, "alloc-conf");
    ck_assert(registry_find("greedy")->takes_region_at_start);
    ck_assert(!registry_find("growth")->takes_region_at_start);
}
END_TEST

START_TEST(a_framework_should_find_its_first_strategy_in_the_usual_order)
{
    ck_assert_str_eq(registry_find_framework("torch")->name, "torch");
    ck_assert_str_eq(registry_find_framework("tf")->name, "greedy");
    ck_assert_ptr_null(registry_find_framework("mxnet"));
}
END_TEST
