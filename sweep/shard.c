/* A sweep's shards: the partition of its jobs, the index from a job array's
 * environment, the shard's results file name and header line. */
#include "shard.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "sim/hash.h"
#include "sim/jsonw.h"
#include "sim/units.h"
#include "traces/json.h"

/* The job arrays whose task index --shard=auto reads, in lookup order. count: the
 * variable with the number of tasks, where the scheduler sets one; base: the first
 * task's index (Slurm's --array=1-8 numbers tasks from 1). */
typedef struct shard_env {
    const char *scheduler;
    const char *index, *count, *base;
} shard_env;

static const shard_env SHARD_ENV[] = {
    {"Slurm job array", "SLURM_ARRAY_TASK_ID", "SLURM_ARRAY_TASK_COUNT", "SLURM_ARRAY_TASK_MIN"},
    {"HyperQueue task array", "HQ_TASK_ID", NULL, NULL},
    {"Kubernetes indexed Job", "JOB_COMPLETION_INDEX", NULL, NULL},
    {"AWS Batch array job", "AWS_BATCH_JOB_ARRAY_INDEX", NULL, NULL},
};
#define N_SHARD_ENV (sizeof SHARD_ENV / sizeof SHARD_ENV[0])

const char *sweep_shard_env_names(void)
{
    return "SLURM_ARRAY_TASK_ID, HQ_TASK_ID, JOB_COMPLETION_INDEX, AWS_BATCH_JOB_ARRAY_INDEX";
}

/* A whole non-negative number below max, from the start to the end of text. */
static bool parse_count(const char *text, size_t len, uint64_t max, uint64_t *out)
{
    if (len == 0 || len > 19)
        return false;
    uint64_t v = 0;
    for (size_t i = 0; i < len; i++) {
        if (text[i] < '0' || text[i] > '9')
            return false;
        v = v * 10 + (uint64_t)(text[i] - '0');
    }
    if (v >= max)
        return false;
    *out = v;
    return true;
}

static bool env_number(const char *name, uint64_t *out)
{
    const char *v = getenv(name);
    return v != NULL && parse_count(v, strlen(v), UINT64_MAX, out);
}

/* The index (and, when the scheduler has one, the count) of this task of a job array. */
static sim_status env_index(sweep_shard *sh, bool want_count, const char **from, sim_error *err)
{
    const shard_env *found = NULL;
    for (size_t i = 0; i < N_SHARD_ENV; i++) {
        const char *v = getenv(SHARD_ENV[i].index);
        if (v == NULL || v[0] == '\0')
            continue;
        if (found)
            return sim_error_set(err, SIM_EUSAGE, NULL, 0, 0,
                                 "--shard=auto: both %s and %s are set; give the shard as --shard=I/N", found->index,
                                 SHARD_ENV[i].index);
        found = &SHARD_ENV[i];
    }
    if (found == NULL)
        return sim_error_set(err, SIM_EUSAGE, NULL, 0, 0,
                             "--shard=auto: no job array index in the environment (%s); give --shard=I/N",
                             sweep_shard_env_names());
    uint64_t index = 0, base = 0, count = 0;
    if (!env_number(found->index, &index))
        return sim_error_set(err, SIM_EUSAGE, NULL, 0, 0, "--shard=auto: %s is '%s', not a task index", found->index,
                             getenv(found->index));
    if (found->base && getenv(found->base) && !env_number(found->base, &base))
        return sim_error_set(err, SIM_EUSAGE, NULL, 0, 0, "--shard=auto: %s is '%s', not a task index", found->base,
                             getenv(found->base));
    if (index < base)
        return sim_error_set(err, SIM_EUSAGE, NULL, 0, 0, "--shard=auto: %s %llu is below %s %llu", found->index,
                             (unsigned long long)index, found->base, (unsigned long long)base);
    index -= base;
    bool has_count = found->count && getenv(found->count) && env_number(found->count, &count) && count > 0;
    if (want_count && !has_count)
        return sim_error_set(err, SIM_EUSAGE, NULL, 0, 0,
                             "--shard=auto: the %s (%s) does not say how many tasks it has; give --shard=auto/N",
                             found->scheduler, found->index);
    if (want_count) {
        if (count > SWEEP_MAX_SHARDS)
            return sim_error_set(err, SIM_EUSAGE, NULL, 0, 0, "--shard=auto: %s %llu is above %u shards", found->count,
                                 (unsigned long long)count, SWEEP_MAX_SHARDS);
        sh->count = (uint32_t)count;
    } else if (has_count && count != sh->count) {
        return sim_error_set(err, SIM_EUSAGE, NULL, 0, 0,
                             "--shard=auto/%u: the %s has %llu tasks (%s); give the same count", sh->count,
                             found->scheduler, (unsigned long long)count, found->count);
    }
    if (index >= sh->count)
        return sim_error_set(err, SIM_EUSAGE, NULL, 0, 0,
                             "--shard=auto/%u: %s is %llu, not an index from 0 to %u (number the tasks from 0%s)",
                             sh->count, found->index, (unsigned long long)index + base, sh->count - 1,
                             found->base ? ", or from the array's first index" : "");
    sh->index = (uint32_t)index;
    *from = found->index;
    return SIM_OK;
}

sim_status sweep_shard_parse(const char *arg, sweep_shard *out, const char **from, sim_error *err)
{
    *from = "";
    memset(out, 0, sizeof *out);
    if (strcmp(arg, "auto") == 0)
        return env_index(out, true, from, err);
    const char *slash = strchr(arg, '/');
    uint64_t n = 0, i = 0;
    if (slash == NULL || !parse_count(slash + 1, strlen(slash + 1), (uint64_t)SWEEP_MAX_SHARDS + 1, &n) || n == 0)
        return sim_error_set(err, SIM_EUSAGE, NULL, 0, 0,
                             "--shard: expected I/N (shard I of N, from 0), auto/N or auto, not '%s' (N from 1 to %u)",
                             arg, SWEEP_MAX_SHARDS);
    out->count = (uint32_t)n;
    size_t ilen = (size_t)(slash - arg);
    if (ilen == 4 && strncmp(arg, "auto", 4) == 0)
        return env_index(out, false, from, err);
    if (!parse_count(arg, ilen, n, &i))
        return sim_error_set(err, SIM_EUSAGE, NULL, 0, 0, "--shard=%s: the shard must be a number from 0 to %llu", arg,
                             (unsigned long long)n - 1);
    out->index = (uint32_t)i;
    return SIM_OK;
}

struct sweep_partition {
    uint32_t shards;
    uint64_t *cut; /* shards + 1 job positions: shard i runs [cut[i], cut[i+1]) */
    uint32_t split;
    uint64_t key;
};

static void hash_u64(uint64_t *h, uint64_t v)
{
    uint8_t b[8];
    for (int i = 0; i < 8; i++)
        b[i] = (uint8_t)(v >> (8 * i));
    *h = sim_fnv1a64_more(*h, b, sizeof b);
}

/* Where cut k of n falls: the job position whose weight before it is nearest k·W/n,
 * moved to a trace boundary when that is within tol. prefix: the traces' weights summed. */
static uint64_t cut_at(const sweep_spec *s, const uint64_t *prefix, uint64_t total, uint32_t k, uint32_t n)
{
    const uint64_t nc = s->n_combos;
    uint64_t c = k * (total / n) + (uint64_t)k * (total % n) / n;
    uint64_t tol = total / n / 8;
    /* the trace t holding weight position c: the last with prefix[t]·nc ≤ c */
    uint32_t lo = 0, hi = s->n_traces;
    while (lo < hi) {
        uint32_t mid = lo + (hi - lo + 1) / 2;
        if (prefix[mid] * nc <= c)
            lo = mid;
        else
            hi = mid - 1;
    }
    uint32_t t = lo;
    if (t >= s->n_traces)
        return sweep_spec_jobs(s);
    uint64_t b0 = prefix[t] * nc, b1 = prefix[t + 1] * nc, w = prefix[t + 1] - prefix[t];
    if (c - b0 <= tol || b1 - c <= tol)
        return c - b0 <= b1 - c ? (uint64_t)t * nc : (uint64_t)(t + 1) * nc;
    uint64_t r = (c - b0 + w / 2) / w;
    return (uint64_t)t * nc + (r > nc ? nc : r);
}

sim_status sweep_partition_new(const sweep_spec *s, uint32_t shards, sweep_partition **out, sim_error *err)
{
    *out = NULL;
    sweep_partition *p = calloc(1, sizeof *p);
    uint64_t *prefix = calloc((size_t)s->n_traces + 1, sizeof *prefix);
    if (p == NULL || prefix == NULL || shards == 0 || (p->cut = calloc((size_t)shards + 1, sizeof *p->cut)) == NULL) {
        free(p);
        free(prefix);
        return sim_error_set(err, SIM_ENOMEM, NULL, 0, 0, "out of memory");
    }
    p->shards = shards;
    p->key = SIM_FNV1A64_INIT;
    hash_u64(&p->key, shards);
    for (uint32_t t = 0; t < s->n_traces; t++) {
        struct stat sb;
        if (stat(s->traces[t].path, &sb) != 0) {
            sim_status st = sim_error_set(err, SIM_EIO, s->traces[t].path, 0, 0, "cannot read: %s", strerror(errno));
            free(prefix);
            sweep_partition_free(p);
            return st;
        }
        uint64_t w = sb.st_size > 0 ? (uint64_t)sb.st_size : 1;
        prefix[t + 1] = prefix[t] + w;
        p->key = sim_fnv1a64_more(p->key, s->traces[t].display, strlen(s->traces[t].display) + 1);
        hash_u64(&p->key, w);
    }
    uint64_t total = prefix[s->n_traces] * s->n_combos;
    p->cut[shards] = sweep_spec_jobs(s);
    for (uint32_t k = 1; k < shards; k++) {
        uint64_t c = cut_at(s, prefix, total, k, shards);
        p->cut[k] = c < p->cut[k - 1] ? p->cut[k - 1] : c;
    }
    uint32_t last_split = UINT32_MAX;
    for (uint32_t k = 1; k < shards && s->n_combos; k++) {
        uint64_t t = p->cut[k] / s->n_combos;
        if (p->cut[k] % s->n_combos != 0 && t != last_split) {
            p->split++;
            last_split = (uint32_t)t;
        }
    }
    free(prefix);
    *out = p;
    return SIM_OK;
}

void sweep_partition_free(sweep_partition *p)
{
    if (p == NULL)
        return;
    free(p->cut);
    free(p);
}

uint32_t sweep_partition_shards(const sweep_partition *p)
{
    return p->shards;
}

void sweep_partition_range(const sweep_partition *p, uint32_t i, uint64_t *first, uint64_t *end)
{
    *first = p->cut[i];
    *end = p->cut[i + 1];
}

uint32_t sweep_partition_shard_of(const sweep_partition *p, uint64_t job)
{
    /* the last shard that starts at or before job (an empty shard before it starts there too) */
    uint32_t lo = 0, hi = p->shards - 1;
    while (lo < hi) {
        uint32_t mid = lo + (hi - lo + 1) / 2;
        if (p->cut[mid] <= job)
            lo = mid;
        else
            hi = mid - 1;
    }
    return lo;
}

uint32_t sweep_partition_split_traces(const sweep_partition *p)
{
    return p->split;
}

uint64_t sweep_partition_key(const sweep_partition *p)
{
    return p->key;
}

bool sweep_shard_path(const char *output, sweep_shard sh, char *out, size_t cap)
{
    const char *base = strrchr(output, '/');
    base = base ? base + 1 : output;
    const char *dot = strrchr(base, '.');
    size_t stem = dot && dot != base ? (size_t)(dot - output) : strlen(output);
    int n = snprintf(out, cap, "%.*s.shard-%u-of-%u%s", (int)stem, output, sh.index, sh.count, output + stem);
    return n > 0 && (size_t)n < cap;
}

#define SHARD_KEY "{\"gpusim_shard\":"

void sweep_shard_header(const sweep_spec *s, const sweep_partition *p, uint32_t shard, sim_buf *out)
{
    char hex[2][20];
    snprintf(hex[0], sizeof hex[0], "%016llx", (unsigned long long)s->hash);
    snprintf(hex[1], sizeof hex[1], "%016llx", (unsigned long long)p->key);
    jsonw w;
    jsonw_init_buf(&w, out, JSONW_COMPACT, 0);
    jsonw_object(&w);
    jsonw_key(&w, "gpusim_shard");
    jsonw_object(&w);
    jsonw_key_str(&w, "spec", s->path);
    jsonw_key_str(&w, "spec_hash", hex[0]);
    jsonw_key_str(&w, "partition", hex[1]);
    jsonw_key_u64(&w, "shard", shard);
    jsonw_key_u64(&w, "shards", p->shards);
    jsonw_key_u64(&w, "first_job", p->cut[shard]);
    jsonw_key_u64(&w, "jobs", p->cut[shard + 1] - p->cut[shard]);
    jsonw_end(&w);
    jsonw_end(&w);
    sim_buf_puts(out, "\n");
}

bool sweep_shard_is_header(const char *line, size_t len)
{
    return len >= sizeof SHARD_KEY - 1 && memcmp(line, SHARD_KEY, sizeof SHARD_KEY - 1) == 0;
}

static bool hex_u64(const json_value *v, uint64_t *out)
{
    if (v == NULL || v->type != JSON_STRING || strlen(v->u.str) != 16)
        return false;
    char *end = NULL;
    errno = 0;
    *out = strtoull(v->u.str, &end, 16);
    return errno == 0 && end && *end == '\0';
}

static bool u64_of(const json_value *v, uint64_t max, uint64_t *out)
{
    return v != NULL && json_to_u64(v, max, out) == JSON_INT_OK;
}

sim_status sweep_shard_read_header(const char *path, sweep_shard_info *out, sim_error *err)
{
    memset(out, 0, sizeof *out);
    FILE *f = fopen(path, "rb");
    if (f == NULL)
        return sim_error_set(err, SIM_EIO, path, 0, 0, "cannot read: %s", strerror(errno));
    char *line = NULL;
    size_t cap = 0;
    ssize_t n = getline(&line, &cap, f);
    fclose(f);
    sim_status st = SIM_OK;
    json_parser *jp = json_parser_new();
    const json_value *h = NULL;
    if (jp == NULL)
        st = sim_error_set(err, SIM_ENOMEM, NULL, 0, 0, "out of memory");
    else if (n > 1 && line[n - 1] == '\n' && sweep_shard_is_header(line, (size_t)n)) {
        char why[160];
        const json_value *doc = json_parse(jp, line, (size_t)n - 1, 0, why, sizeof why);
        h = doc ? json_get(doc, "gpusim_shard") : NULL;
    }
    if (st == SIM_OK) {
        const json_value *spec = h ? json_get(h, "spec") : NULL;
        uint64_t shard = 0, shards = 0;
        if (h == NULL || spec == NULL || spec->type != JSON_STRING || strlen(spec->u.str) >= sizeof out->spec ||
            !hex_u64(json_get(h, "spec_hash"), &out->spec_hash) ||
            !hex_u64(json_get(h, "partition"), &out->partition) ||
            !u64_of(json_get(h, "shards"), SWEEP_MAX_SHARDS, &shards) || shards == 0 ||
            !u64_of(json_get(h, "shard"), shards - 1, &shard) ||
            !u64_of(json_get(h, "first_job"), UINT64_MAX, &out->first_job) ||
            !u64_of(json_get(h, "jobs"), UINT64_MAX, &out->jobs))
            st = sim_error_set(err, SIM_EUSAGE, path, 1, 0,
                               "not a shard's results file (its first line is not the {\"gpusim_shard\": ...} "
                               "header that `gpusim sweep --shard` writes)");
        else {
            memcpy(out->spec, spec->u.str, strlen(spec->u.str) + 1);
            out->shard = (uint32_t)shard;
            out->shards = (uint32_t)shards;
        }
    }
    json_parser_free(jp);
    free(line);
    return st;
}
