/* The sweep spec loader (spec.h): the document, its traces and devices, the checks
 * and the jobs; the traces are in spec_traces.c, the strategies and option sets in
 * spec_options.c. */
#include "spec.h"
#include "spec_internal.h"

#include <cjson/cJSON.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sim/engine.h"
#include "sim/buf.h"
#include "sim/gpus.h"
#include "sim/grow.h"
#include "sim/hash.h"
#include "sim/units.h"
#include "traces/input.h"
#include "traces/json.h"

/* ---------------------------------------------------------------- devices */

static sim_status push_device(loader *l, const char *name, const device_info *info)
{
    sweep_spec *s = l->s;
    for (uint32_t i = 0; i < s->n_devices; i++)
        if (strcmp(s->devices[i].name, name) == 0 && !s->devices[i].node)
            return spec_error(l, SIM_EUSAGE, "\"devices\": '%s' is listed twice", name);
    if (!SIM_GROW(s->devices, s->n_devices + 1, l->cap_devices))
        return spec_nomem(l->err);
    sweep_device *d = &s->devices[s->n_devices++];
    memset(d, 0, sizeof *d);
    snprintf(d->name, sizeof d->name, "%s", name);
    d->info = *info;
    d->info.name = NULL;
    return SIM_OK;
}

static sim_status parse_size(loader *l, const cJSON *v, const char *what, uint64_t *out)
{
    char text[128];
    if (!spec_value_text(v, text, sizeof text) || cJSON_IsBool(v))
        return spec_error(l, SIM_EUSAGE, "%s: expected a size such as \"24GiB\"", what);
    sim_error e;
    sim_error_clear(&e);
    if (units_parse_size(text, out, &e) != SIM_OK)
        return sim_error_set(l->err, SIM_EUSAGE, l->spec_path, 0, 0, "%s: %s", what, e.msg);
    return SIM_OK;
}

/* The catalog GPU g as a device, with the spec's context. */
static device_info catalog_device(const gpu_model *g, uint64_t context)
{
    device_info info = gpus_device_info(g);
    info.context_bytes = context;
    return info;
}

static sim_status add_device(loader *l, const cJSON *v, uint64_t context)
{
    device_info info = {0};
    info.context_bytes = context;
    if (cJSON_IsString(v)) {
        const char *n = v->valuestring;
        if (strcmp(n, "all") == 0 || strcmp(n, "catalog") == 0) {
            for (size_t i = 0; i < gpus_count(); i++) {
                const gpu_model *g = gpus_get(i);
                info = catalog_device(g, context);
                sim_status st = push_device(l, g->name, &info);
                if (st != SIM_OK)
                    return st;
            }
            return SIM_OK;
        }
        const gpu_model *g = gpus_find(n);
        if (g) {
            info = catalog_device(g, context);
            return push_device(l, g->name, &info);
        }
        sim_error e;
        sim_error_clear(&e);
        if (units_parse_size(n, &info.capacity_bytes, &e) != SIM_OK || info.capacity_bytes == 0)
            return spec_error(l, SIM_EUSAGE,
                              "\"devices\": unknown GPU '%s' (see 'gpusim gpus' for the catalog, or give a capacity "
                              "such as \"24GiB\")",
                              n);
        return push_device(l, n, &info);
    }
    if (!cJSON_IsObject(v))
        return spec_error(l, SIM_EUSAGE, "\"devices\": every entry is a GPU name, a capacity or an object");
    const cJSON *name = cJSON_GetObjectItemCaseSensitive(v, "name");
    const cJSON *gpu = cJSON_GetObjectItemCaseSensitive(v, "gpu");
    const cJSON *cap = cJSON_GetObjectItemCaseSensitive(v, "capacity");
    const cJSON *ctx = cJSON_GetObjectItemCaseSensitive(v, "context");
    const cJSON *cc = cJSON_GetObjectItemCaseSensitive(v, "compute_capability");
    const cJSON *it;
    cJSON_ArrayForEach(it, v)
    {
        if (strcmp(it->string, "name") && strcmp(it->string, "gpu") && strcmp(it->string, "capacity") &&
            strcmp(it->string, "context") && strcmp(it->string, "compute_capability"))
            return spec_error(l, SIM_EUSAGE,
                              "\"devices\": unknown key '%s' (expected name, gpu, capacity, context, "
                              "compute_capability)",
                              it->string);
    }
    char devname[64] = "";
    /* a catalog GPU has its own capacity and compute capability, as on the command line */
    if (gpu && (cap || cc))
        return spec_error(l, SIM_EUSAGE,
                          "\"devices\": \"gpu\" and \"%s\" conflict: the catalog GPU has its own (give one of the two; "
                          "\"capacity\" and \"compute_capability\" describe a custom device)",
                          cap ? "capacity" : "compute_capability");
    if (gpu) {
        const gpu_model *g = cJSON_IsString(gpu) ? gpus_find(gpu->valuestring) : NULL;
        if (g == NULL)
            return spec_error(l, SIM_EUSAGE, "\"devices\": unknown GPU '%s' (see 'gpusim gpus')",
                              cJSON_IsString(gpu) ? gpu->valuestring : "?");
        info = catalog_device(g, context);
        snprintf(devname, sizeof devname, "%s", g->name);
    }
    if (cap) {
        sim_status st = parse_size(l, cap, "\"devices\": \"capacity\"", &info.capacity_bytes);
        if (st != SIM_OK)
            return st;
        char t[64];
        spec_value_text(cap, t, sizeof t);
        snprintf(devname, sizeof devname, "%s", t);
    }
    if (!gpu && !cap)
        return spec_error(l, SIM_EUSAGE, "\"devices\": an object needs \"gpu\" or \"capacity\"");
    if (info.capacity_bytes == 0)
        return spec_error(l, SIM_EUSAGE, "\"devices\": a capacity must be more than 0 bytes");
    if (ctx) {
        sim_status st = parse_size(l, ctx, "\"devices\": \"context\"", &info.context_bytes);
        if (st != SIM_OK)
            return st;
    }
    if (cc && (!cJSON_IsString(cc) || !gpus_parse_cc(cc->valuestring, &info.cc_major, &info.cc_minor)))
        return spec_error(l, SIM_EUSAGE, "\"devices\": \"compute_capability\" must be a string \"X.Y\"");
    if (name) {
        if (!cJSON_IsString(name) || !name->valuestring[0])
            return spec_error(l, SIM_EUSAGE, "\"devices\": \"name\" must be a non-empty string");
        snprintf(devname, sizeof devname, "%s", name->valuestring);
    }
    return push_device(l, devname, &info);
}

/* add(entry) for each entry of a list, or for v itself when it is not a list. */
static sim_status each_entry(loader *l, const cJSON *v, uint64_t ctx,
                             sim_status (*add)(loader *l, const cJSON *v, uint64_t context))
{
    if (!cJSON_IsArray(v))
        return add(l, v, ctx);
    const cJSON *it;
    cJSON_ArrayForEach(it, v)
    {
        sim_status st = add(l, it, ctx);
        if (st != SIM_OK)
            return st;
    }
    return SIM_OK;
}

static sim_status load_device_list(loader *l, const cJSON *devices, uint64_t ctx)
{
    if (!cJSON_IsString(devices) && !cJSON_IsObject(devices) && !cJSON_IsArray(devices))
        return spec_error(l, SIM_EUSAGE, "\"devices\" must be a list");
    sim_status st = each_entry(l, devices, ctx, add_device);
    if (st == SIM_OK && l->s->n_devices == 0)
        return spec_error(l, SIM_EUSAGE, "\"devices\" names no device");
    return st;
}

/* One "node" entry: GPUS as --node takes them (8xA100-40GB, A100-40GB,T4, 8x12GiB). */
static sim_status add_node(loader *l, const cJSON *v, uint64_t context)
{
    sweep_spec *s = l->s;
    if (!cJSON_IsString(v) || !v->valuestring[0])
        return spec_error(l, SIM_EUSAGE, "\"node\": every entry is a string of GPUs, e.g. \"8xA100-40GB\"");
    if (strlen(v->valuestring) >= sizeof s->devices[0].name)
        return spec_error(l, SIM_EUSAGE, "\"node\": '%.40s...' is too long a name", v->valuestring);
    for (uint32_t i = 0; i < s->n_devices; i++)
        if (s->devices[i].node && strcmp(s->devices[i].name, v->valuestring) == 0)
            return spec_error(l, SIM_EUSAGE, "\"node\": '%s' is listed twice", v->valuestring);
    node_spec ns;
    sim_error e;
    sim_error_clear(&e);
    if (node_parse(v->valuestring, &(device_info){.context_bytes = context}, &ns, &e) != SIM_OK)
        return spec_error(l, SIM_EUSAGE, "\"node\": %s", strncmp(e.msg, "--node: ", 8) == 0 ? e.msg + 8 : e.msg);
    if (!SIM_GROW(s->devices, s->n_devices + 1, l->cap_devices))
        return spec_nomem(l->err);
    sweep_device *d = &s->devices[s->n_devices++];
    memset(d, 0, sizeof *d);
    snprintf(d->name, sizeof d->name, "%s", v->valuestring);
    d->info = ns.dev[0];
    d->info.name = NULL;
    d->node = true;
    d->gpus = ns;
    return SIM_OK;
}

static sim_status load_devices(loader *l, const cJSON *devices, const cJSON *nodes, const cJSON *context)
{
    uint64_t ctx = 0;
    if (context) {
        sim_status st = parse_size(l, context, "\"context\"", &ctx);
        if (st != SIM_OK)
            return st;
    }
    if (devices == NULL && nodes == NULL)
        return spec_error(l, SIM_EUSAGE, "missing \"devices\" (GPU names from 'gpusim gpus', \"all\", or capacities) or \"node\"");
    sim_status nst = devices == NULL ? SIM_OK : load_device_list(l, devices, ctx);
    if (nst != SIM_OK || nodes == NULL)
        return nst;
    if (!cJSON_IsString(nodes) && (!cJSON_IsArray(nodes) || cJSON_GetArraySize(nodes) == 0))
        return spec_error(l, SIM_EUSAGE, "\"node\" must be a string of GPUs (\"8xA100-40GB\") or a list of them");
    return each_entry(l, nodes, ctx, add_node);
}


/* ---------------------------------------------------------------- checks */

static sim_status build_combos(loader *l)
{
    sweep_spec *s = l->s;
    uint64_t n = (uint64_t)s->n_devices * s->n_strategies * s->n_optsets;
    if (n > UINT32_MAX / 2)
        return spec_error(l, SIM_EUSAGE, "too many combinations of devices, strategies and options");
    s->combos = malloc((size_t)(n ? n : 1) * sizeof *s->combos);
    s->combo_at = malloc((size_t)(n ? n : 1) * sizeof *s->combo_at);
    if (s->combos == NULL || s->combo_at == NULL)
        return spec_nomem(l->err);
    size_t at = 0;
    for (uint32_t d = 0; d < s->n_devices; d++)
        for (uint32_t st = 0; st < s->n_strategies; st++)
            for (uint32_t o = 0; o < s->n_optsets; o++, at++) {
                s->combo_at[at] = UINT32_MAX;
                if (s->optsets[o].applies == NULL || s->optsets[o].applies[st]) {
                    s->combo_at[at] = s->n_combos;
                    s->combos[s->n_combos++] = (sweep_combo){d, st, o};
                }
            }
    if (s->n_combos == 0)
        return spec_error(l, SIM_EUSAGE, "no option set applies to any strategy: the sweep has no job");
    return SIM_OK;
}

static sim_status check_traces(loader *l)
{
    for (uint32_t i = 0; i < l->s->n_traces; i++) {
        trace_input *r = NULL;
        input_options opt = {.device = -1};
        sim_status st = input_open(l->s->traces[i].path, "auto", &opt, &r, l->err);
        input_close(r);
        if (st != SIM_OK)
            return st;
    }
    return SIM_OK;
}

static sim_status no_event(void *ctx, sim_event *ev, sim_error *err)
{
    (void)ctx;
    (void)ev;
    (void)err;
    return SIM_END;
}

/* Every (device, strategy, option set) once on an empty trace: the engine creates
 * the allocator first, so a bad option value is found here, not in job 7000. */
static sim_status check_options(loader *l)
{
    sweep_spec *s = l->s;
    for (uint32_t c = 0; c < s->n_combos; c++) {
        const sweep_combo *k = &s->combos[c];
        const sweep_device *dv = &s->devices[k->device];
        /* a node: every GPU of it (a limit may hold on one and not on another) */
        for (uint32_t g = 0; g < (dv->node ? dv->gpus.n : 1u); g++) {
            engine_config cfg = {.device = dv->node ? dv->gpus.dev[g] : sweep_spec_device_info(s, k->device),
                                 .ops = s->strategies[k->strategy],
                                 .opts = s->optsets[k->optset].kv,
                                 .n_opts = s->optsets[k->optset].n_kv};
            sim_event_source src = {.next = no_event, .ctx = NULL, .path = s->path, .name = NULL};
            sim_run *run = NULL;
            sim_error e;
            sim_error_clear(&e);
            sim_status st = engine_run(&cfg, &src, 1, &run, &e);
            sim_run_free(run);
            if (st != SIM_OK) {
                return sim_error_set(l->err, st == SIM_ENOMEM ? st : SIM_EUSAGE, s->path, 0, 0,
                                     "option set '%s' under strategy '%s' on %s '%s': %s", s->optsets[k->optset].name,
                                     s->strategies[k->strategy]->name, dv->node ? "node" : "device", dv->name, e.msg);
            }
        }
    }
    return SIM_OK;
}

/* ---------------------------------------------------------------- load */

static sim_status load_doc(loader *l, const cJSON *doc)
{
    if (!cJSON_IsObject(doc))
        return spec_error(l, SIM_EUSAGE, "a sweep spec is a JSON object");
    static const char *const KEYS[] = {"traces", "devices", "node", "strategies", "options", "context", "on_oom",
                                       "output", "name", "comment"};
    const cJSON *it;
    cJSON_ArrayForEach(it, doc)
    {
        bool known = false;
        for (size_t i = 0; i < sizeof KEYS / sizeof KEYS[0]; i++)
            known = known || strcmp(it->string, KEYS[i]) == 0;
        if (!known)
            return spec_error(l, SIM_EUSAGE,
                              "unknown key '%s' (expected traces, devices, node, strategies, options, context, "
                              "on_oom, output, name, comment)",
                              it->string);
    }
    const cJSON *traces = cJSON_GetObjectItemCaseSensitive(doc, "traces");
    if (traces == NULL)
        return spec_error(l, SIM_EUSAGE, "missing \"traces\" (files, globs or directories)");
    sim_status st;
    if ((st = spec_load_strategies(l, cJSON_GetObjectItemCaseSensitive(doc, "strategies"))) != SIM_OK)
        return st;
    if ((st = load_devices(l, cJSON_GetObjectItemCaseSensitive(doc, "devices"),
                           cJSON_GetObjectItemCaseSensitive(doc, "node"),
                           cJSON_GetObjectItemCaseSensitive(doc, "context"))) != SIM_OK)
        return st;
    if ((st = spec_load_optsets(l, cJSON_GetObjectItemCaseSensitive(doc, "options"))) != SIM_OK)
        return st;
    const cJSON *on_oom = cJSON_GetObjectItemCaseSensitive(doc, "on_oom");
    if (on_oom) {
        if (!cJSON_IsString(on_oom) || (strcmp(on_oom->valuestring, "stop") && strcmp(on_oom->valuestring, "skip")))
            return spec_error(l, SIM_EUSAGE, "\"on_oom\" must be \"stop\" or \"skip\"");
        l->s->on_oom_skip = strcmp(on_oom->valuestring, "skip") == 0;
    }
    const cJSON *output = cJSON_GetObjectItemCaseSensitive(doc, "output");
    char p[2048];
    if (output) {
        if (!cJSON_IsString(output) || !output->valuestring[0])
            return spec_error(l, SIM_EUSAGE, "\"output\" must be a file name");
        spec_join_dir(l, output->valuestring, p, sizeof p);
    } else {
        /* the default: SPEC.results.jsonl beside the spec (SPEC without its .json) */
        const char *base = strrchr(l->spec_path, '/');
        base = base ? base + 1 : l->spec_path;
        size_t n = strlen(base);
        if (n > 5 && strcmp(base + n - 5, ".json") == 0)
            n -= 5;
        char name[512];
        snprintf(name, sizeof name, "%.*s.results.jsonl", (int)(n < 400 ? n : 400), base);
        spec_join_dir(l, name, p, sizeof p);
    }
    if ((l->s->output = spec_strdup(p)) == NULL)
        return spec_nomem(l->err);
    if ((st = spec_load_traces(l, traces)) != SIM_OK)
        return st;
    return build_combos(l);
}

sim_status sweep_spec_load(const char *path, unsigned flags, sweep_spec **out, sim_error *err)
{
    *out = NULL;
    char *text = NULL;
    size_t len = 0;
    sim_status st = spec_read(path, &text, &len, err);
    if (st != SIM_OK)
        return st;
    sweep_spec *s = calloc(1, sizeof *s);
    if (s == NULL || (s->path = spec_strdup(path)) == NULL) {
        free(s);
        free(text);
        return spec_nomem(err);
    }
    s->hash = sim_fnv1a64(text, len);
    loader l = {.s = s, .spec_path = path, .err = err};
    const char *slash = strrchr(path, '/');
    if (slash)
        snprintf(l.dir, sizeof l.dir, "%.*s", (int)(slash == path ? 1 : slash - path), path);
    if (strcmp(l.dir, ".") == 0)
        l.dir[0] = '\0';
    const char *end = NULL;
    cJSON *doc = cJSON_ParseWithLengthOpts(text, len, &end, false);
    if (doc == NULL) {
        /* cJSON only says where it stopped: gpusim's own parser says line, column and why */
        char why[256] = "";
        json_parser *jp = json_parser_new();
        if (jp && json_parse(jp, text, len, 1, why, sizeof why) != NULL)
            why[0] = '\0';
        json_parser_free(jp);
        size_t off = end && end >= text ? (size_t)(end - text) : 0;
        unsigned long jl = 0, jc = 0;
        int at = 0;
        if (why[0] && sscanf(why, "line %lu, column %lu: %n", &jl, &jc, &at) == 2 && at > 0)
            st = sim_error_set(err, SIM_EUSAGE, path, jl, 0, "the sweep spec is not valid JSON (column %lu: %s)", jc,
                               why + at);
        else
            st = sim_error_set(err, SIM_EUSAGE, path, spec_line_of(text, off), 0, "the sweep spec is not valid JSON%s%s%s",
                               why[0] ? " (" : "", why, why[0] ? ")" : "");
    } else {
        st = load_doc(&l, doc);
        cJSON_Delete(doc);
    }
    free(text);
    if (st == SIM_OK && (flags & SWEEP_LOAD_CHECK_OPTIONS))
        st = check_options(&l);
    if (st == SIM_OK && (flags & SWEEP_LOAD_CHECK_TRACES))
        st = check_traces(&l);
    if (st != SIM_OK) {
        sweep_spec_free(s);
        return st;
    }
    *out = s;
    return SIM_OK;
}

void sweep_spec_free(sweep_spec *s)
{
    if (s == NULL)
        return;
    for (uint32_t i = 0; i < s->n_traces; i++) {
        free(s->traces[i].path);
        free(s->traces[i].display);
    }
    free(s->traces);
    free(s->devices);
    free(s->strategies);
    for (uint32_t i = 0; i < s->n_optsets; i++)
        spec_optset_release(&s->optsets[i]);
    free(s->optsets);
    free(s->combos);
    free(s->combo_at);
    free(s->output);
    free(s->path);
    free(s);
}

/* ---------------------------------------------------------------- jobs */

sweep_job sweep_spec_job(const sweep_spec *s, uint64_t i)
{
    sweep_job j;
    j.trace = (uint32_t)(i / s->n_combos);
    j.c = s->combos[i % s->n_combos];
    return j;
}

uint64_t sweep_spec_find(const sweep_spec *s, const char *trace, const char *dev_name, bool node,
                         const char *strategy_name, const char *options)
{
    uint32_t lo = 0, hi = s->n_traces;
    while (lo < hi) {
        uint32_t mid = lo + (hi - lo) / 2;
        if (strcmp(s->traces[mid].display, trace) < 0)
            lo = mid + 1;
        else
            hi = mid;
    }
    if (lo == s->n_traces || strcmp(s->traces[lo].display, trace) != 0)
        return UINT64_MAX;
    uint32_t d = 0, st = 0, o = 0;
    while (d < s->n_devices && (strcmp(s->devices[d].name, dev_name) != 0 || s->devices[d].node != node))
        d++;
    while (st < s->n_strategies && strcmp(s->strategies[st]->name, strategy_name) != 0)
        st++;
    while (o < s->n_optsets && strcmp(s->optsets[o].name, options) != 0)
        o++;
    if (d == s->n_devices || st == s->n_strategies || o == s->n_optsets)
        return UINT64_MAX;
    uint32_t c = s->combo_at[((size_t)d * s->n_strategies + st) * s->n_optsets + o];
    return c == UINT32_MAX ? UINT64_MAX : (uint64_t)lo * s->n_combos + c;
}

device_info sweep_spec_device_info(const sweep_spec *s, uint32_t d)
{
    device_info info = s->devices[d].info;
    info.name = s->devices[d].name;
    return info;
}
