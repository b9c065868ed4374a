#include "jobdir.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "sim/buf.h"
#include "traces/json.h"

static void job_path(const char *dir, const char *name, char *out, size_t cap)
{
    size_t n = strlen(dir);
    snprintf(out, cap, "%s%s%s", dir, n > 0 && dir[n - 1] == '/' ? "" : "/", name);
}

bool jobdir_is_job(const char *dir)
{
    char path[4200];
    job_path(dir, "job.json", path, sizeof path);
    struct stat sb;
    return stat(path, &sb) == 0 && S_ISREG(sb.st_mode);
}

/* One entry of "traces": its rank must be i, its file a plain name in dir that exists. */
static sim_status job_entry(const char *dir, const char *job, const json_value *e, uint32_t i, char **out,
                            sim_error *err)
{
    *out = NULL;
    if (e->type != JSON_OBJECT)
        return sim_error_set(err, SIM_ETRACE, job, e->line, 0, "traces[%u]: expected an object, found %s", i,
                             json_type_name(e->type));
    const json_value *rank = json_get(e, "rank"), *file = json_get(e, "file");
    uint64_t r = 0;
    if (rank == NULL || json_to_u64(rank, UINT32_MAX, &r) != JSON_INT_OK || r != i)
        return sim_error_set(err, SIM_ETRACE, job, e->line, 0,
                             "traces[%u]: expected \"rank\": %u (the traces in rank order from 0)", i, i);
    if (file == NULL || file->type != JSON_STRING || file->len == 0 || strchr(file->u.str, '/') != NULL ||
        strcmp(file->u.str, ".") == 0 || strcmp(file->u.str, "..") == 0)
        return sim_error_set(err, SIM_ETRACE, job, e->line, 0,
                             "traces[%u]: expected \"file\": the name of a trace in the directory", i);
    size_t len = strlen(dir) + strlen(file->u.str) + 2;
    char *p = malloc(len);
    if (p == NULL)
        return sim_error_set(err, SIM_ENOMEM, NULL, 0, 0, "out of memory");
    job_path(dir, file->u.str, p, len);
    struct stat sb;
    if (stat(p, &sb) != 0 || !S_ISREG(sb.st_mode)) {
        sim_error_set(err, SIM_ETRACE, job, e->line, 0, "traces[%u]: rank %u's trace %s is missing", i, i, p);
        free(p);
        return SIM_ETRACE;
    }
    *out = p;
    return SIM_OK;
}

sim_status jobdir_traces(const char *dir, char **paths, uint32_t cap, uint32_t *n, sim_error *err)
{
    *n = 0;
    char job[4200];
    job_path(dir, "job.json", job, sizeof job);
    char *text = NULL;
    size_t len = 0;
    sim_status st = sim_read_file(job, JOBDIR_MAX_BYTES, &text, &len, err);
    if (st != SIM_OK)
        return st;
    json_parser *p = json_parser_new();
    if (p == NULL) {
        free(text);
        return sim_error_set(err, SIM_ENOMEM, NULL, 0, 0, "out of memory");
    }
    char msg[256];
    const json_value *root = json_parse(p, text, len, 0, msg, sizeof msg);
    const json_value *fmt = root ? json_get(root, "format") : NULL, *ver = root ? json_get(root, "version") : NULL;
    const json_value *traces = root ? json_get(root, "traces") : NULL;
    uint64_t version = 0;
    if (root == NULL)
        st = sim_error_set(err, SIM_ETRACE, job, 0, 0, "not JSON: %s", msg);
    else if (root->type != JSON_OBJECT || fmt == NULL || fmt->type != JSON_STRING ||
             strcmp(fmt->u.str, "gpusim-job") != 0)
        st = sim_error_set(err, SIM_ETRACE, job, root->line, 0, "expected \"format\": \"gpusim-job\"");
    else if (ver == NULL || json_to_u64(ver, UINT32_MAX, &version) != JSON_INT_OK || version != 1)
        st = sim_error_set(err, SIM_ETRACE, job, ver ? ver->line : root->line, 0,
                           "expected \"version\": 1 (the job directory format this gpusim reads)");
    else if (traces == NULL || traces->type != JSON_ARRAY || traces->len == 0)
        st = sim_error_set(err, SIM_ETRACE, job, traces ? traces->line : root->line, 0,
                           "expected \"traces\": a non-empty array of {\"rank\", \"file\"}");
    else if (traces->len > cap)
        st = sim_error_set(err, SIM_EUSAGE, job, traces->line, 0, "%u traces: at most %u", traces->len, cap);
    for (uint32_t i = 0; st == SIM_OK && i < traces->len; i++) {
        st = job_entry(dir, job, &traces->u.items[i], i, &paths[i], err);
        if (st == SIM_OK)
            *n = i + 1;
    }
    if (st != SIM_OK) {
        for (uint32_t i = 0; i < *n; i++) {
            free(paths[i]);
            paths[i] = NULL;
        }
        *n = 0;
    }
    json_parser_free(p);
    free(text);
    return st;
}
