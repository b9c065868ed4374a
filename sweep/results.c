/* The results file of a sweep: open (resume or start over), append, rewrite in job
 * order, and the summary of what it holds. */
#include "results.h"

#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "reports/sweep.h"
#include "sim/grow.h"
#include "sweep/sched.h"
#include "sweep/shard.h"
#include "traces/json.h"

/* One job's line in the file, and what the summary needs of it. */
typedef struct job_digest {
    report_sweep_job s; /* s.error points at error_text */
    char *error_text;   /* owned */
    uint8_t exit_code;  /* 0, or the error's exit code */
    uint64_t offset;    /* of its line in the file */
    uint32_t len;
} job_digest;

struct sweep_results {
    pthread_mutex_t mu;
    const sweep_spec *s;
    char *path;
    FILE *fp;
    uint8_t *done;
    uint64_t count;          /* jobs in the file */
    uint64_t run_jobs, run_events;
    long crash_after;        /* test hook: GPUSIM_SWEEP_TEST_CRASH_AFTER */
    bool progress;
    uint64_t first, end;     /* the jobs that belong in the file: all, or a shard's */
    char *header;            /* a shard's first line (with its '\n'), or NULL */
    size_t header_len;
    bool header_written;     /* the file starts with it */
    const char *reading;     /* the file whose lines are parsed, for messages: r->path, or a shard's */
};

static sim_status results_line_error(const sweep_results *r, uint64_t lineno, const char *what, sim_error *err)
{
    return sim_error_set(err, SIM_EUSAGE, r->reading ? r->reading : r->path, lineno, 0,
                         "%s; it is not a result of this sweep spec (use another --output, or --force to start over)",
                         what);
}

static const json_value *obj(const json_value *o, const char *key)
{
    return json_get(o, key);
}

static bool is_string(const json_value *v)
{
    return v != NULL && v->type == JSON_STRING;
}

/* A byte count or count, exactly (the exact reader keeps numbers as their text: a
 * double would round above 2^53); 0 when it is not a non-negative integer. */
static uint64_t num_u64(const json_value *v)
{
    uint64_t x = 0;
    return v != NULL && json_to_u64(v, UINT64_MAX, &x) == JSON_INT_OK ? x : 0;
}

/* The least effective limit over a node's GPUs that a job touched ("limit_bytes" not null). */
static uint64_t least_limit(const json_value *devices)
{
    uint64_t least = 0;
    if (devices == NULL || devices->type != JSON_ARRAY)
        return 0;
    for (uint32_t i = 0; i < devices->len; i++) {
        const json_value *l = obj(&devices->u.items[i], "limit_bytes");
        if (l != NULL && l->type == JSON_NUMBER && (least == 0 || num_u64(l) < least))
            least = num_u64(l);
    }
    return least;
}

#define JOB_KEY "{\"job\":"

/* The end of the "job" object that opens a result line (its closing brace + 1), or 0
 * when the line does not open with one: braces counted outside strings. */
static size_t job_object_end(const char *text, size_t len)
{
    if (len < sizeof JOB_KEY - 1 || memcmp(text, JOB_KEY, sizeof JOB_KEY - 1) != 0)
        return 0;
    int depth = 0;
    bool in_string = false;
    for (size_t i = sizeof JOB_KEY - 1; i < len; i++) {
        char c = text[i];
        if (in_string) {
            if (c == '\\')
                i++;
            else if (c == '"')
                in_string = false;
        } else if (c == '"') {
            in_string = true;
        } else if (c == '{') {
            depth++;
        } else if (c == '}' && --depth == 0) {
            return i + 1;
        } else if (depth == 0 && c != ' ') {
            return 0;
        }
    }
    return 0;
}

/* Parse one line into its job index and digest (d may be NULL), with jp. Without d only
 * the "job" object is parsed (a resume's scan, a merge's shards); the final scan, with
 * digests, reads every line whole. */
static sim_status parse_line(const sweep_results *r, json_parser *jp, const char *text, size_t len, uint64_t lineno,
                             uint64_t *job, job_digest *d, sim_error *err)
{
    char why[160];
    size_t end = d ? 0 : job_object_end(text, len);
    const json_value *doc = end ? json_parse(jp, text + sizeof JOB_KEY - 1, end - (sizeof JOB_KEY - 1), 0, why,
                                             sizeof why)
                                : json_parse(jp, text, len, 0, why, sizeof why);
    if (doc == NULL)
        return results_line_error(r, lineno, "not valid JSON", err);
    const json_value *j = end ? doc : obj(doc, "job");
    const json_value *t = obj(j, "trace"), *dev = obj(j, "device"), *st = obj(j, "strategy"), *o = obj(j, "options");
    const bool node = dev == NULL && obj(j, "node") != NULL; /* a node job: the node in place of the device */
    if (node)
        dev = obj(j, "node");
    sim_status status = SIM_OK;
    if (!is_string(t) || !is_string(dev) || !is_string(st) || !is_string(o)) {
        status = results_line_error(r, lineno, "no job coordinates", err);
    } else {
        *job = sweep_spec_find(r->s, t->u.str, dev->u.str, node, st->u.str, o->u.str);
        if (*job == SWEEP_NO_JOB) {
            char what[700];
            snprintf(what, sizeof what, "the job (%.200s, %.60s, %.30s, %.120s) is not in the spec", t->u.str,
                     dev->u.str, st->u.str, o->u.str);
            status = results_line_error(r, lineno, what, err);
        }
    }
    if (status == SIM_OK && d) {
        const json_value *e = obj(doc, "error");
        const json_value *res = obj(doc, "result");
        if (e) {
            d->exit_code = (uint8_t)num_u64(obj(e, "exit"));
            const json_value *m = obj(e, "message");
            size_t n = is_string(m) ? strlen(m->u.str) + 1 : 1;
            char *msg = malloc(n);
            if (msg)
                memcpy(msg, is_string(m) ? m->u.str : "", n);
            d->error_text = msg;
            d->s.error = msg;
        } else if (res != NULL && res->type == JSON_OBJECT) {
            const json_value *oom = obj(res, "first_oom");
            const json_value *completed = obj(res, "completed");
            d->s.fit = completed != NULL && completed->type == JSON_TRUE && num_u64(obj(res, "ooms")) == 0;
            if (oom != NULL && oom->type == JSON_OBJECT) {
                const json_value *cause = obj(oom, "cause");
                const char *cn = is_string(cause) ? cause->u.str : "";
                d->s.cause = strcmp(cn, "fragmentation") == 0     ? REPORT_SWEEP_FRAGMENTATION
                             : strcmp(cn, "other_processes") == 0 ? REPORT_SWEEP_OTHER_PROCESSES
                                                                  : REPORT_SWEEP_CAPACITY;
            }
            /* one headroom everywhere (plan's): capacity − peak on the device; a node's
             * result has it already, the least over its GPUs */
            uint64_t cap = num_u64(obj(obj(doc, "device"), "capacity_bytes"));
            uint64_t peak = num_u64(obj(res, "peak_device_bytes"));
            d->s.headroom = node ? num_u64(obj(res, "headroom_bytes")) : cap > peak ? cap - peak : 0;
            d->s.limit = node ? least_limit(obj(doc, "devices")) : num_u64(obj(obj(doc, "device"), "limit_bytes"));
            const json_value *fm = obj(obj(res, "fragmentation"), "max");
            d->s.frag_max = fm != NULL && fm->type == JSON_NUMBER ? json_to_double(fm) : 0.0;
        } else {
            status = results_line_error(r, lineno, "neither \"result\" nor \"error\"", err);
        }
    }
    return status;
}

/* The first line of the file when it is a shard's header, or this run is a shard's:
 * the same header as this run's. */
static sim_status check_header(const sweep_results *r, const char *line, size_t len, sim_error *err)
{
    if (r->header == NULL)
        return sim_error_set(err, SIM_EUSAGE, r->path, 1, 0,
                             "holds a shard's results (gpusim sweep --shard); run that shard again with --resume, "
                             "combine shards with `gpusim sweep merge`, or use another --output");
    if (len == r->header_len && memcmp(line, r->header, len) == 0)
        return SIM_OK;
    if (!sweep_shard_is_header(line, len))
        return sim_error_set(err, SIM_EUSAGE, r->path, 1, 0,
                             "is not a shard's results file (no {\"gpusim_shard\": ...} first line); use another "
                             "--output, or --force to start over");
    return sim_error_set(err, SIM_EUSAGE, r->path, 1, 0,
                         "holds another shard's results, or a shard of another spec or of other trace files: its "
                         "header is %.*s, this run's is %.*s (use --force to start over)",
                         (int)(len > 400 ? 400 : len - 1), line, (int)(r->header_len - 1), r->header);
}

/* Read the file's complete lines: mark done[] (and fill digests when given).
 * *good_end: the end of the last complete line (a torn last line starts there). */
static sim_status scan_file(sweep_results *r, FILE *f, job_digest *digests, uint64_t *good_end, sim_error *err)
{
    char *line = NULL;
    size_t cap = 0;
    ssize_t n;
    uint64_t off = 0, lineno = 0;
    sim_status st = SIM_OK;
    *good_end = 0;
    json_parser *jp = json_parser_new();
    if (jp == NULL)
        return sim_error_set(err, SIM_ENOMEM, NULL, 0, 0, "out of memory");
    while ((n = getline(&line, &cap, f)) > 0) {
        lineno++;
        size_t len = (size_t)n;
        if (line[len - 1] != '\n')
            break; /* cut short by a kill: dropped, the job runs again */
        uint64_t job = 0;
        job_digest d;
        memset(&d, 0, sizeof d);
        if (lineno == 1 && (r->header || sweep_shard_is_header(line, len))) {
            if ((st = check_header(r, line, len, err)) != SIM_OK)
                break;
            r->header_written = true;
        } else if (len > 1) {
            if ((st = parse_line(r, jp, line, len - 1, lineno, &job, digests ? &d : NULL, err)) != SIM_OK)
                break;
            if (job < r->first || job >= r->end) {
                free(d.error_text);
                st = results_line_error(r, lineno, "the job belongs to another shard", err);
                break;
            }
            if (!r->done[job]) {
                r->done[job] = 1;
                r->count++;
                if (digests) {
                    d.s.present = true;
                    d.offset = off;
                    d.len = (uint32_t)len;
                    digests[job] = d;
                }
            } else {
                free(d.error_text);
            }
        }
        off += len;
        *good_end = off;
    }
    free(line);
    json_parser_free(jp);
    if (st == SIM_OK && ferror(f))
        st = sim_error_set(err, SIM_EIO, r->path, 0, 0, "cannot read: %s", strerror(errno));
    return st;
}

sim_status sweep_results_open(const sweep_spec *s, const char *path, bool resume, bool force, sweep_results **out,
                              sim_error *err)
{
    return sweep_results_open_scope(s, path, NULL, resume, force, out, err);
}

sim_status sweep_results_open_scope(const sweep_spec *s, const char *path, const sweep_results_scope *scope,
                                    bool resume, bool force, sweep_results **out, sim_error *err)
{
    *out = NULL;
    sweep_results *r = calloc(1, sizeof *r);
    if (r == NULL)
        return sim_error_set(err, SIM_ENOMEM, NULL, 0, 0, "out of memory");
    r->s = s;
    size_t pl = strlen(path) + 1;
    r->path = malloc(pl);
    r->done = calloc((size_t)sweep_spec_jobs(s) + 1, 1);
    if (r->path == NULL || r->done == NULL) {
        sweep_results_close(r);
        return sim_error_set(err, SIM_ENOMEM, NULL, 0, 0, "out of memory");
    }
    memcpy(r->path, path, pl);
    pthread_mutex_init(&r->mu, NULL);
    r->first = scope ? scope->first : 0;
    r->end = scope ? scope->end : sweep_spec_jobs(s);
    if (scope && scope->header) {
        r->header = malloc(scope->header_len + 1);
        if (r->header == NULL) {
            sweep_results_close(r);
            return sim_error_set(err, SIM_ENOMEM, NULL, 0, 0, "out of memory");
        }
        memcpy(r->header, scope->header, scope->header_len);
        r->header[scope->header_len] = '\0';
        r->header_len = scope->header_len;
    }
    const char *hook = getenv("GPUSIM_SWEEP_TEST_CRASH_AFTER");
    r->crash_after = hook ? strtol(hook, NULL, 10) : -1;
    sim_status st = SIM_OK;
    struct stat sb;
    bool exists = stat(path, &sb) == 0;
    if (exists && !S_ISREG(sb.st_mode))
        st = sim_error_set(err, SIM_EUSAGE, path, 0, 0, "the results file must be a regular file");
    else if (exists && sb.st_size > 0 && !resume && !force)
        st = sim_error_set(err, SIM_EUSAGE, path, 0, 0,
                           "already holds results; use --resume to continue that sweep or --force to start over");
    if (st == SIM_OK && exists && resume) {
        FILE *f = fopen(path, "rb");
        if (f == NULL) {
            st = sim_error_set(err, SIM_EIO, path, 0, 0, "cannot read: %s", strerror(errno));
        } else {
            uint64_t good_end = 0;
            st = scan_file(r, f, NULL, &good_end, err);
            fclose(f);
            if (st == SIM_OK && good_end < (uint64_t)sb.st_size && truncate(path, (off_t)good_end) != 0)
                st = sim_error_set(err, SIM_EIO, path, 0, 0, "cannot drop the unfinished last line: %s",
                                   strerror(errno));
            if (good_end == 0)
                r->header_written = false;
        }
    }
    if (st == SIM_OK) {
        r->fp = fopen(path, resume ? "ab" : "wb");
        if (r->fp == NULL)
            st = sim_error_set(err, SIM_EIO, path, 0, 0, "cannot write: %s", strerror(errno));
    }
    if (st == SIM_OK && r->header && !r->header_written) {
        if (fwrite(r->header, 1, r->header_len, r->fp) != r->header_len || fflush(r->fp) != 0)
            st = sim_error_set(err, SIM_EIO, path, 0, 0, "cannot write: %s", strerror(errno));
        r->header_written = true;
    }
    /* the other shards' jobs are not this run's: the scheduler skips them */
    for (uint64_t j = 0; st == SIM_OK && j < sweep_spec_jobs(s); j++)
        if (j < r->first || j >= r->end)
            r->done[j] = 1;
    if (st != SIM_OK) {
        sweep_results_close(r);
        return st;
    }
    *out = r;
    return SIM_OK;
}

const uint8_t *sweep_results_done(const sweep_results *r)
{
    return r->done;
}

uint64_t sweep_results_count(const sweep_results *r)
{
    return r->count;
}

void sweep_results_progress(sweep_results *r, bool on)
{
    r->progress = on;
}

sim_status sweep_results_append(sweep_results *r, uint64_t job, const char *line, size_t len, int exit_code,
                                uint64_t events, sim_error *err)
{
    (void)exit_code;
    sim_status st = SIM_OK;
    pthread_mutex_lock(&r->mu);
    if (!r->done[job]) {
        if (r->crash_after >= 0 && (long)r->run_jobs == r->crash_after) {
            /* test hook: die in the middle of writing a line, like a kill -9 would */
            fwrite(line, 1, len / 2, r->fp);
            fflush(r->fp);
            raise(SIGKILL);
        }
        if (fwrite(line, 1, len, r->fp) != len || fflush(r->fp) != 0)
            st = sim_error_set(err, SIM_EIO, r->path, 0, 0, "cannot write: %s", strerror(errno));
        else {
            r->done[job] = 1;
            r->count++;
            r->run_jobs++;
            r->run_events += events;
            if (r->progress)
                fprintf(stderr, "\rgpusim sweep: %llu/%llu jobs", (unsigned long long)r->count,
                        (unsigned long long)(r->end - r->first));
        }
    }
    pthread_mutex_unlock(&r->mu);
    return st;
}

void sweep_results_throughput(const sweep_results *r, uint64_t *jobs, uint64_t *events)
{
    *jobs = r->run_jobs;
    *events = r->run_events;
}

void sweep_results_close(sweep_results *r)
{
    if (r == NULL)
        return;
    if (r->fp)
        fclose(r->fp);
    if (r->path)
        pthread_mutex_destroy(&r->mu);
    free(r->path);
    free(r->done);
    free(r->header);
    free(r);
}

/* The summary of the digests (reports/sweep.h), into text and json (either may be NULL). */
static sim_status summarize(const sweep_spec *s, const job_digest *d, uint64_t present, sim_buf *text, sim_buf *json,
                            sim_error *err)
{
    uint64_t n = sweep_spec_jobs(s);
    report_sweep_job *jobs = calloc((size_t)n + 1, sizeof *jobs);
    report_sweep_group *groups = calloc((size_t)s->n_combos + 1, sizeof *groups);
    const char **traces = calloc((size_t)s->n_traces + 1, sizeof *traces);
    sim_status st = SIM_OK;
    if (jobs == NULL || groups == NULL || traces == NULL) {
        st = sim_error_set(err, SIM_ENOMEM, NULL, 0, 0, "out of memory");
    } else {
        for (uint64_t i = 0; i < n; i++)
            jobs[i] = d[i].s;
        for (uint32_t c = 0; c < s->n_combos; c++) {
            const sweep_combo *k = &s->combos[c];
            const sweep_device *dv = &s->devices[k->device];
            uint64_t cap = dv->info.capacity_bytes;
            for (uint32_t g = 1; dv->node && g < dv->gpus.n; g++)
                cap += dv->gpus.dev[g].capacity_bytes;
            groups[c] = (report_sweep_group){dv->name, cap, s->strategies[k->strategy]->name,
                                             s->optsets[k->optset].name, dv->node ? dv->gpus.n : 0};
        }
        for (uint32_t t = 0; t < s->n_traces; t++)
            traces[t] = s->traces[t].display;
        report_sweep r = {
            .spec_path = s->path,
            .jobs = n,
            .done = present,
            .n_devices = s->n_devices,
            .n_strategies = s->n_strategies,
            .n_optsets = s->n_optsets,
            .n_traces = s->n_traces,
            .traces = traces,
            .n_groups = s->n_combos,
            .groups = groups,
            .job = jobs,
        };
        if (json)
            report_sweep_json(&r, json);
        if (text)
            report_sweep_text(&r, text);
    }
    free(jobs);
    free(groups);
    free(traces);
    return st;
}

sim_status sweep_results_finish(sweep_results *r, sim_buf *text, sim_buf *json, int *exit_code, sim_error *err)
{
    return sweep_results_finish_into(r, NULL, text, json, exit_code, err);
}

sim_status sweep_results_absorb(sweep_results *r, const char *path, uint64_t first, uint64_t end, uint64_t *jobs,
                                sim_error *err)
{
    *jobs = 0;
    FILE *f = fopen(path, "rb");
    if (f == NULL)
        return sim_error_set(err, SIM_EIO, path, 0, 0, "cannot read: %s", strerror(errno));
    json_parser *jp = json_parser_new();
    char *line = NULL;
    size_t cap = 0;
    ssize_t n;
    uint64_t lineno = 0;
    sim_status st = jp ? SIM_OK : sim_error_set(err, SIM_ENOMEM, NULL, 0, 0, "out of memory");
    r->reading = path; /* messages name the shard's file, not the merge's work file */
    while (st == SIM_OK && (n = getline(&line, &cap, f)) > 0) {
        size_t len = (size_t)n;
        if (++lineno == 1 || line[len - 1] != '\n' || len == 1)
            continue; /* the header; a line still being written (a shard that runs) */
        uint64_t job = 0;
        if ((st = parse_line(r, jp, line, len - 1, lineno, &job, NULL, err)) != SIM_OK)
            break;
        if (job < first || job >= end) {
            st = results_line_error(r, lineno, "the job belongs to another shard than the header says", err);
            break;
        }
        if (r->done[job])
            continue;
        if (fwrite(line, 1, len, r->fp) != len) {
            st = sim_error_set(err, SIM_EIO, r->path, 0, 0, "cannot write: %s", strerror(errno));
            break;
        }
        r->done[job] = 1;
        r->count++;
        (*jobs)++;
    }
    r->reading = NULL;
    if (st == SIM_OK && ferror(f))
        st = sim_error_set(err, SIM_EIO, path, 0, 0, "cannot read: %s", strerror(errno));
    if (st == SIM_OK && fflush(r->fp) != 0)
        st = sim_error_set(err, SIM_EIO, r->path, 0, 0, "cannot write: %s", strerror(errno));
    free(line);
    json_parser_free(jp);
    fclose(f);
    return st;
}

sim_status sweep_results_finish_into(sweep_results *r, const char *dest, sim_buf *text, sim_buf *json, int *exit_code,
                                     sim_error *err)
{
    *exit_code = 0;
    const sweep_spec *s = r->s;
    uint64_t n = sweep_spec_jobs(s);
    pthread_mutex_lock(&r->mu);
    if (r->fp) {
        fclose(r->fp);
        r->fp = NULL;
    }
    pthread_mutex_unlock(&r->mu);
    job_digest *d = calloc((size_t)n + 1, sizeof *d);
    if (d == NULL)
        return sim_error_set(err, SIM_ENOMEM, NULL, 0, 0, "out of memory");
    FILE *f = fopen(r->path, "rb");
    sim_status st = SIM_OK;
    if (f == NULL)
        st = sim_error_set(err, SIM_EIO, r->path, 0, 0, "cannot read: %s", strerror(errno));
    uint64_t present = 0;
    if (st == SIM_OK) {
        memset(r->done, 0, (size_t)n);
        r->count = 0;
        uint64_t good_end;
        st = scan_file(r, f, d, &good_end, err);
        present = r->count;
    }
    /* the same bytes in job order: the result of every run of this spec */
    sim_outfile o;
    if (st == SIM_OK)
        st = sim_outfile_open(&o, dest ? dest : r->path, err);
    if (st == SIM_OK) {
        char *buf = NULL;
        size_t cap = 0;
        if (r->header && fwrite(r->header, 1, r->header_len, o.fp) != r->header_len)
            st = sim_error_set(err, SIM_EIO, r->path, 0, 0, "cannot write: %s", strerror(errno));
        for (uint64_t i = 0; i < n && st == SIM_OK; i++) {
            if (!d[i].s.present)
                continue;
            if (!SIM_GROW(buf, d[i].len, cap)) {
                st = sim_error_set(err, SIM_ENOMEM, NULL, 0, 0, "out of memory");
                break;
            }
            if (pread(fileno(f), buf, d[i].len, (off_t)d[i].offset) != (ssize_t)d[i].len)
                st = sim_error_set(err, SIM_EIO, r->path, 0, 0, "cannot read: %s", strerror(errno));
            else if (fwrite(buf, 1, d[i].len, o.fp) != d[i].len)
                st = sim_error_set(err, SIM_EIO, r->path, 0, 0, "cannot write: %s", strerror(errno));
            if (d[i].exit_code > *exit_code)
                *exit_code = d[i].exit_code;
        }
        free(buf);
        st = sim_outfile_finish(&o, st, err);
    }
    if (f)
        fclose(f);
    if (st == SIM_OK && dest)
        unlink(r->path);
    if (st == SIM_OK && (json || text))
        st = summarize(s, d, present, text, json, err);
    for (uint64_t i = 0; i < n; i++)
        free(d[i].error_text);
    free(d);
    return st;
}
