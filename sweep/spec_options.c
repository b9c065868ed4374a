/* Loading a sweep spec's strategies and option sets (spec_internal.h). An option set's
 * keys are the strategies' own option names (their tables, strategies/registry.h),
 * spelt as on the command line or as sim_kv keys; each must belong to at least one
 * of the strategies the set applies to (docs/decisions.md). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "spec_internal.h"
#include "sim/grow.h"
#include "strategies/registry.h"

/* The option a set's key names: its command-line spelling ("bfc-gc") or its sim_kv
 * key ("bfc_gc"); NULL when no strategy has it. */
static const strategy_option *option_of(const char *name)
{
    const strategy_option *o = registry_option_by_cli(name);
    return o ? o : registry_option_by_key(name);
}

/* ---------------------------------------------------------------- strategies */

static sim_status unknown_strategy(loader *l, const char *name)
{
    char names[512] = "";
    for (size_t i = 0; i < registry_count(); i++) {
        strncat(names, i ? ", " : "", sizeof names - strlen(names) - 1);
        strncat(names, registry_get(i)->name, sizeof names - strlen(names) - 1);
    }
    return spec_error(l, SIM_EUSAGE, "\"strategies\": unknown strategy '%s' (expected one of: %s)", name, names);
}

static sim_status push_strategy(loader *l, const strategy_ops *ops)
{
    sweep_spec *s = l->s;
    for (uint32_t i = 0; i < s->n_strategies; i++)
        if (s->strategies[i] == ops)
            return spec_error(l, SIM_EUSAGE, "\"strategies\": '%s' is listed twice", ops->name);
    const strategy_ops **a = realloc(s->strategies, (s->n_strategies + 1) * sizeof *a);
    if (a == NULL)
        return spec_nomem(l->err);
    s->strategies = a;
    a[s->n_strategies++] = ops;
    return SIM_OK;
}

sim_status spec_load_strategies(loader *l, const cJSON *strategies)
{
    if (strategies == NULL)
        return spec_error(l, SIM_EUSAGE, "missing \"strategies\" (names from 'gpusim strategies', or \"all\")");
    const cJSON *one = cJSON_IsString(strategies) ? strategies : NULL;
    if (!one && !cJSON_IsArray(strategies))
        return spec_error(l, SIM_EUSAGE, "\"strategies\" must be a list of names");
    const cJSON *it;
    for (it = one ? one : strategies->child; it; it = one ? NULL : it->next) {
        if (!cJSON_IsString(it))
            return spec_error(l, SIM_EUSAGE, "\"strategies\": every entry must be a name");
        if (strcmp(it->valuestring, "all") == 0) {
            for (size_t i = 0; i < registry_count(); i++) {
                sim_status st = push_strategy(l, registry_get(i));
                if (st != SIM_OK)
                    return st;
            }
            continue;
        }
        const strategy_ops *ops = registry_find(it->valuestring);
        if (ops == NULL)
            return unknown_strategy(l, it->valuestring);
        sim_status st = push_strategy(l, ops);
        if (st != SIM_OK)
            return st;
    }
    if (l->s->n_strategies == 0)
        return spec_error(l, SIM_EUSAGE, "\"strategies\" names no strategy");
    return SIM_OK;
}

/* ---------------------------------------------------------------- option sets */

static sim_status push_optset(loader *l, sweep_optset *o)
{
    sweep_spec *s = l->s;
    for (uint32_t i = 0; i < s->n_optsets; i++)
        if (strcmp(s->optsets[i].name, o->name) == 0)
            return spec_error(l, SIM_EUSAGE, "\"options\": two option sets are called '%s' (give each a \"name\")",
                              o->name);
    if (!SIM_GROW(s->optsets, s->n_optsets + 1, l->cap_optsets))
        return spec_nomem(l->err);
    s->optsets[s->n_optsets++] = *o;
    return SIM_OK;
}

void spec_optset_release(sweep_optset *o)
{
    for (uint32_t i = 0; i < o->n_kv; i++)
        free(o->values[i]);
    free(o->applies);
    memset(o, 0, sizeof *o);
}

/* One object of "options": keys with a list of values expand into one set per
 * value (their cross product, in key order). */
typedef struct optset_template {
    const char *name;          /* "name", or NULL */
    const cJSON *strategies;   /* "strategies", or NULL */
    uint32_t n;
    const char *keys[SWEEP_MAX_KV];
    const cJSON *values[SWEEP_MAX_KV]; /* a scalar, or an array */
} optset_template;

static uint32_t template_count(const cJSON *v)
{
    return cJSON_IsArray(v) ? (uint32_t)cJSON_GetArraySize(v) : 1u;
}

/* Every key of set o belongs to at least one of the strategies it applies to (its
 * "strategies", else all of the spec's), as an option on a compare command line. */
static sim_status check_applies(loader *l, const optset_template *t, const sweep_optset *o)
{
    const sweep_spec *s = l->s;
    const strategy_ops *ops[64];
    size_t n = 0;
    for (uint32_t i = 0; i < s->n_strategies && n < sizeof ops / sizeof ops[0]; i++)
        if (o->applies == NULL || o->applies[i])
            ops[n++] = s->strategies[i];
    for (uint32_t k = 0; k < o->n_kv; k++) {
        if (registry_option_applies(o->kv[k].key, ops, n))
            continue;
        char owners[256], chosen[512] = "";
        registry_option_owners(o->kv[k].key, owners, sizeof owners);
        for (size_t i = 0; i < n; i++) {
            strncat(chosen, i ? ", " : "", sizeof chosen - strlen(chosen) - 1);
            strncat(chosen, ops[i]->name, sizeof chosen - strlen(chosen) - 1);
        }
        return spec_error(l, SIM_EUSAGE,
                          "\"options\": '%s' is an option of %s, not of %s %s (give the set \"strategies\": [...] "
                          "to which it applies)",
                          t->keys[k], owners, o->applies ? "the set's strategies" : "the spec's strategies", chosen);
    }
    return SIM_OK;
}

static sim_status expand_optset(loader *l, const optset_template *t)
{
    uint64_t total = 1;
    for (uint32_t i = 0; i < t->n; i++) {
        total *= template_count(t->values[i]);
        if (total > 100000)
            return spec_error(l, SIM_EUSAGE, "\"options\": too many combinations");
    }
    if (total > 1 && t->name)
        return spec_error(l, SIM_EUSAGE,
                          "\"options\": the set '%s' lists several values of a key; its sets cannot share one "
                          "\"name\" (leave \"name\" out: each set is named after its values)",
                          t->name);
    for (uint64_t k = 0; k < total; k++) {
        sweep_optset o;
        memset(&o, 0, sizeof o);
        uint64_t rest = k;
        char name[128] = "";
        sim_status st = SIM_OK;
        /* the last key varies fastest */
        uint32_t pick[SWEEP_MAX_KV];
        for (uint32_t i = t->n; i-- > 0;) {
            uint32_t c = template_count(t->values[i]);
            pick[i] = (uint32_t)(rest % c);
            rest /= c;
        }
        for (uint32_t i = 0; i < t->n && st == SIM_OK; i++) {
            const cJSON *v = cJSON_IsArray(t->values[i]) ? cJSON_GetArrayItem(t->values[i], (int)pick[i]) : t->values[i];
            char text[512];
            if (v == NULL || !spec_value_text(v, text, sizeof text)) {
                st = spec_error(l, SIM_EUSAGE, "\"options\": '%s' must be a string, a number or a list of them",
                                t->keys[i]);
                break;
            }
            o.values[i] = spec_strdup(text);
            if (o.values[i] == NULL) {
                st = spec_nomem(l->err);
                break;
            }
            o.kv[i] = (sim_kv){option_of(t->keys[i])->key, o.values[i]};
            o.n_kv = i + 1;
            size_t nl = strlen(name);
            if (snprintf(name + nl, sizeof name - nl, "%s%s=%s", nl ? "," : "", t->keys[i], text) < 0)
                name[0] = '\0';
        }
        if (st == SIM_OK && t->strategies) {
            o.applies = calloc(l->s->n_strategies, sizeof *o.applies);
            if (o.applies == NULL)
                st = spec_nomem(l->err);
            const cJSON *one = cJSON_IsString(t->strategies) ? t->strategies : NULL;
            if (st == SIM_OK && !one && !cJSON_IsArray(t->strategies))
                st = spec_error(l, SIM_EUSAGE, "\"options\": \"strategies\" must be a list of names");
            for (const cJSON *it = one ? one : (st == SIM_OK ? t->strategies->child : NULL); it && st == SIM_OK;
                 it = one ? NULL : it->next) {
                const strategy_ops *ops = cJSON_IsString(it) ? registry_find(it->valuestring) : NULL;
                if (ops == NULL) {
                    st = unknown_strategy(l, cJSON_IsString(it) ? it->valuestring : "?");
                    break;
                }
                bool found = false;
                for (uint32_t s = 0; s < l->s->n_strategies; s++)
                    if (l->s->strategies[s] == ops) {
                        o.applies[s] = true;
                        found = true;
                    }
                if (!found)
                    st = spec_error(l, SIM_EUSAGE,
                                    "\"options\": the set names strategy '%s', which \"strategies\" does not list",
                                    ops->name);
            }
        }
        if (st == SIM_OK)
            st = check_applies(l, t, &o);
        if (st == SIM_OK)
            snprintf(o.name, sizeof o.name, "%s", t->name ? t->name : (name[0] ? name : "default"));
        if (st == SIM_OK)
            st = push_optset(l, &o);
        if (st != SIM_OK) {
            spec_optset_release(&o);
            return st;
        }
    }
    return SIM_OK;
}

static sim_status load_optset(loader *l, const cJSON *v)
{
    if (!cJSON_IsObject(v))
        return spec_error(l, SIM_EUSAGE,
                          "\"options\": every entry is an object such as {\"name\": \"gc-off\", \"bfc-gc\": \"off\"}");
    optset_template t;
    memset(&t, 0, sizeof t);
    const cJSON *it;
    cJSON_ArrayForEach(it, v)
    {
        if (strcmp(it->string, "name") == 0) {
            if (!cJSON_IsString(it) || !it->valuestring[0])
                return spec_error(l, SIM_EUSAGE, "\"options\": \"name\" must be a non-empty string");
            t.name = it->valuestring;
            continue;
        }
        if (strcmp(it->string, "strategies") == 0) {
            t.strategies = it;
            continue;
        }
        if (option_of(it->string) == NULL) {
            char keys[512] = "";
            for (size_t i = 0; registry_option_get(i); i++) {
                strncat(keys, i ? ", " : "", sizeof keys - strlen(keys) - 1);
                strncat(keys, registry_option_get(i)->cli, sizeof keys - strlen(keys) - 1);
            }
            return spec_error(l, SIM_EUSAGE, "\"options\": unknown option '%s' (expected name, strategies, %s)",
                              it->string, keys);
        }
        if (t.n == SWEEP_MAX_KV)
            return spec_error(l, SIM_EUSAGE, "\"options\": too many options in one set");
        if (cJSON_IsArray(it) && cJSON_GetArraySize(it) == 0)
            return spec_error(l, SIM_EUSAGE, "\"options\": '%s' lists no value", it->string);
        t.keys[t.n] = it->string;
        t.values[t.n] = it;
        t.n++;
    }
    return expand_optset(l, &t);
}

sim_status spec_load_optsets(loader *l, const cJSON *options)
{
    if (options == NULL) {
        sweep_optset o;
        memset(&o, 0, sizeof o);
        snprintf(o.name, sizeof o.name, "default");
        return push_optset(l, &o);
    }
    if (cJSON_IsObject(options))
        return load_optset(l, options);
    if (!cJSON_IsArray(options) || cJSON_GetArraySize(options) == 0)
        return spec_error(l, SIM_EUSAGE, "\"options\" must be a non-empty list of option sets");
    const cJSON *it;
    cJSON_ArrayForEach(it, options)
    {
        sim_status st = load_optset(l, it);
        if (st != SIM_OK)
            return st;
    }
    return SIM_OK;
}

