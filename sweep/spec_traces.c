/* Loading a sweep spec's traces (spec_internal.h): files, globs and directories
 * (their *.json and *.jsonl, not recursive), relative to the spec's directory,
 * sorted by the path results show, without duplicates. */
#include <dirent.h>
#include <errno.h>
#include <glob.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "spec_internal.h"
#include "sim/grow.h"

/* ---------------------------------------------------------------- traces */

static sim_status add_trace(loader *l, const char *opened, bool relative)
{
    sweep_spec *s = l->s;
    if (!SIM_GROW(s->traces, s->n_traces + 1, l->cap_traces))
        return spec_nomem(l->err);
    const char *display = opened;
    size_t dl = strlen(l->dir);
    if (relative && dl && strncmp(opened, l->dir, dl) == 0 && opened[dl] == '/')
        display = opened + dl + 1;
    else if (relative && dl == 1 && l->dir[0] == '/' && opened[0] == '/')
        display = opened + 1; /* the spec sits in / */
    sweep_trace *t = &s->traces[s->n_traces];
    t->path = spec_strdup(opened);
    t->display = spec_strdup(display);
    if (t->path == NULL || t->display == NULL) {
        free(t->path);
        free(t->display);
        return spec_nomem(l->err);
    }
    s->n_traces++;
    return SIM_OK;
}

static bool is_trace_name(const char *name)
{
    size_t n = strlen(name);
    if (name[0] == '.')
        return false;
    return (n > 5 && strcmp(name + n - 5, ".json") == 0) || (n > 6 && strcmp(name + n - 6, ".jsonl") == 0);
}

static bool same_file(const char *a, const char *b)
{
    struct stat sa, sb;
    return b && stat(a, &sa) == 0 && stat(b, &sb) == 0 && sa.st_dev == sb.st_dev && sa.st_ino == sb.st_ino;
}

/* A directory or glob that holds the spec itself or its results file does not make
 * them traces (a results file read as a trace would fail the next run). */
static bool is_own_file(const loader *l, const char *path)
{
    return same_file(path, l->spec_path) || same_file(path, l->s->output);
}

static int cmp_str(const void *a, const void *b)
{
    return strcmp(*(const char *const *)a, *(const char *const *)b);
}

static sim_status add_directory(loader *l, const char *entry, const char *dirpath, bool relative)
{
    DIR *d = opendir(dirpath);
    if (d == NULL)
        return sim_error_set(l->err, SIM_EIO, l->spec_path, 0, 0, "traces: cannot read directory '%s': %s", entry,
                             strerror(errno));
    char **names = NULL;
    size_t n = 0, cap = 0;
    sim_status st = SIM_OK;
    struct dirent *de;
    while ((de = readdir(d)) != NULL) {
        if (!is_trace_name(de->d_name))
            continue;
        char full[2048];
        size_t dl0 = strlen(dirpath);
        int fw = snprintf(full, sizeof full, "%s%s%s", dirpath, dl0 && dirpath[dl0 - 1] == '/' ? "" : "/", de->d_name);
        if (fw > 0 && (size_t)fw < sizeof full && is_own_file(l, full))
            continue;
        if (!SIM_GROW(names, n + 1, cap)) {
            st = spec_nomem(l->err);
            break;
        }
        if ((names[n] = spec_strdup(de->d_name)) == NULL) {
            st = spec_nomem(l->err);
            break;
        }
        n++;
    }
    closedir(d);
    if (st == SIM_OK && n == 0)
        st = sim_error_set(l->err, SIM_EIO, l->spec_path, 0, 0,
                           "traces: directory '%s' holds no trace (*.json, *.jsonl)", entry);
    if (st == SIM_OK)
        qsort(names, n, sizeof *names, cmp_str);
    for (size_t i = 0; i < n; i++) {
        if (st == SIM_OK) {
            char p[2048];
            size_t dl = strlen(dirpath);
            int w = snprintf(p, sizeof p, "%s%s%s", dirpath, dl && dirpath[dl - 1] == '/' ? "" : "/", names[i]);
            st = w > 0 && (size_t)w < sizeof p ? add_trace(l, p, relative) : spec_error(l, SIM_EIO, "traces: path too long");
        }
        free(names[i]);
    }
    free(names);
    return st;
}

static sim_status add_trace_entry(loader *l, const char *entry)
{
    char p[2048];
    spec_join_dir(l, entry, p, sizeof p);
    bool relative = entry[0] != '/';
    if (strpbrk(entry, "*?[") != NULL) {
        glob_t g;
        int rc = glob(p, 0, NULL, &g);
        if (rc == GLOB_NOMATCH)
            return spec_error(l, SIM_EIO, "traces: '%s' matches no file", entry);
        if (rc != 0)
            return spec_error(l, SIM_EIO, "traces: cannot expand '%s'", entry);
        sim_status st = SIM_OK;
        for (size_t i = 0; i < g.gl_pathc && st == SIM_OK; i++) {
            struct stat sb;
            if ((stat(g.gl_pathv[i], &sb) == 0 && S_ISDIR(sb.st_mode)) || is_own_file(l, g.gl_pathv[i]))
                continue;
            st = add_trace(l, g.gl_pathv[i], relative);
        }
        globfree(&g);
        return st;
    }
    struct stat sb;
    if (stat(p, &sb) != 0)
        return sim_error_set(l->err, SIM_EIO, l->spec_path, 0, 0, "traces: cannot open '%s': %s", p, strerror(errno));
    if (S_ISDIR(sb.st_mode))
        return add_directory(l, entry, p, relative);
    return add_trace(l, p, relative);
}

static int cmp_trace(const void *a, const void *b)
{
    return strcmp(((const sweep_trace *)a)->display, ((const sweep_trace *)b)->display);
}

sim_status spec_load_traces(loader *l, const cJSON *traces)
{
    if (!cJSON_IsArray(traces) && !cJSON_IsString(traces))
        return spec_error(l, SIM_EUSAGE, "\"traces\" must be a string or a list of strings (files, globs, directories)");
    const cJSON *it;
    if (cJSON_IsString(traces)) {
        sim_status st = add_trace_entry(l, traces->valuestring);
        if (st != SIM_OK)
            return st;
    } else {
        cJSON_ArrayForEach(it, traces)
        {
            if (!cJSON_IsString(it))
                return spec_error(l, SIM_EUSAGE, "\"traces\": every entry must be a string");
            sim_status st = add_trace_entry(l, it->valuestring);
            if (st != SIM_OK)
                return st;
        }
    }
    sweep_spec *s = l->s;
    if (s->n_traces == 0)
        return spec_error(l, SIM_EUSAGE, "\"traces\" names no trace");
    qsort(s->traces, s->n_traces, sizeof *s->traces, cmp_trace);
    uint32_t k = 0;
    for (uint32_t i = 0; i < s->n_traces; i++) {
        if (k > 0 && strcmp(s->traces[k - 1].display, s->traces[i].display) == 0) {
            free(s->traces[i].path);
            free(s->traces[i].display);
            continue;
        }
        s->traces[k++] = s->traces[i];
    }
    s->n_traces = k;
    return SIM_OK;
}

