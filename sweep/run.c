#include "run.h"

#include <cjson/cJSON.h>
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "reports/result.h"
#include "sim/engine.h"
#include "sim/units.h"
#include "traces/input.h"

/* ================================================================ scheduler */

enum { JOB_PENDING = 0, JOB_GIVEN = 1, JOB_DONE = 2, JOB_LOST = 3 };

struct sweep_sched {
    pthread_mutex_t mu;
    const sweep_spec *s;
    uint8_t *state;        /* per job */
    uint32_t *cursor;      /* per trace: first combo that may still be pending */
    uint32_t *pending;     /* per trace: jobs not handed out */
    uint8_t *started;      /* per trace: a job of it was handed out */
    uint32_t next_fresh;   /* traces below it are started or have nothing pending */
    uint64_t unfinished;
};

sweep_sched *sweep_sched_new(const sweep_spec *s, const uint8_t *done)
{
    sweep_sched *q = calloc(1, sizeof *q);
    uint64_t n = sweep_spec_jobs(s);
    if (q == NULL)
        return NULL;
    q->s = s;
    q->state = calloc((size_t)n + 1, 1);
    q->cursor = calloc(s->n_traces, sizeof *q->cursor);
    q->pending = calloc(s->n_traces, sizeof *q->pending);
    q->started = calloc(s->n_traces, 1);
    if (q->state == NULL || q->cursor == NULL || q->pending == NULL || q->started == NULL) {
        sweep_sched_free(q);
        return NULL;
    }
    pthread_mutex_init(&q->mu, NULL);
    for (uint64_t i = 0; i < n; i++) {
        if (done && done[i]) {
            q->state[i] = JOB_DONE;
            continue;
        }
        q->pending[i / s->n_combos]++;
        q->unfinished++;
    }
    return q;
}

void sweep_sched_free(sweep_sched *q)
{
    if (q == NULL)
        return;
    if (q->state)
        pthread_mutex_destroy(&q->mu);
    free(q->state);
    free(q->cursor);
    free(q->pending);
    free(q->started);
    free(q);
}

uint64_t sweep_sched_next(sweep_sched *q, uint32_t hint)
{
    const sweep_spec *s = q->s;
    pthread_mutex_lock(&q->mu);
    uint32_t t = SWEEP_NO_TRACE;
    if (hint < s->n_traces && q->pending[hint] > 0)
        t = hint;
    if (t == SWEEP_NO_TRACE) {
        while (q->next_fresh < s->n_traces && (q->started[q->next_fresh] || q->pending[q->next_fresh] == 0))
            q->next_fresh++;
        if (q->next_fresh < s->n_traces)
            t = q->next_fresh;
    }
    if (t == SWEEP_NO_TRACE) {
        /* every trace is started: help with the one that has most left */
        uint32_t best = 0;
        for (uint32_t i = 0; i < s->n_traces; i++)
            if (q->pending[i] > best) {
                best = q->pending[i];
                t = i;
            }
    }
    uint64_t job = SWEEP_NO_JOB;
    if (t != SWEEP_NO_TRACE) {
        uint64_t base = (uint64_t)t * s->n_combos;
        while (q->state[base + q->cursor[t]] != JOB_PENDING)
            q->cursor[t]++;
        job = base + q->cursor[t]++;
        q->state[job] = JOB_GIVEN;
        q->pending[t]--;
        q->started[t] = 1;
    }
    pthread_mutex_unlock(&q->mu);
    return job;
}

void sweep_sched_finish(sweep_sched *q, uint64_t job, bool lost)
{
    pthread_mutex_lock(&q->mu);
    if (q->state[job] == JOB_GIVEN) {
        q->state[job] = lost ? JOB_LOST : JOB_DONE;
        q->unfinished--;
    }
    pthread_mutex_unlock(&q->mu);
}

uint64_t sweep_sched_unfinished(sweep_sched *q)
{
    pthread_mutex_lock(&q->mu);
    uint64_t n = q->unfinished;
    pthread_mutex_unlock(&q->mu);
    return n;
}

/* ================================================================ trace cache */

enum { TRACE_NONE = 0, TRACE_LOADING = 1, TRACE_READY = 2, TRACE_FAILED = 3 };

typedef struct cache_entry {
    int state;
    evbuf *b;
    uint32_t users;
    uint64_t last_use;
    sim_error *err;      /* TRACE_FAILED */
} cache_entry;

struct sweep_cache {
    pthread_mutex_t mu;
    pthread_cond_t cv;
    const sweep_spec *s;
    cache_entry *e;
    uint32_t keep, loaded;
    uint64_t tick;
};

sweep_cache *sweep_cache_new(const sweep_spec *s, uint32_t keep)
{
    sweep_cache *c = calloc(1, sizeof *c);
    if (c == NULL)
        return NULL;
    c->e = calloc(s->n_traces, sizeof *c->e);
    if (c->e == NULL) {
        free(c);
        return NULL;
    }
    c->s = s;
    c->keep = keep ? keep : 1;
    pthread_mutex_init(&c->mu, NULL);
    pthread_cond_init(&c->cv, NULL);
    return c;
}

void sweep_cache_free(sweep_cache *c)
{
    if (c == NULL)
        return;
    for (uint32_t i = 0; i < c->s->n_traces; i++) {
        evbuf_free(c->e[i].b);
        free(c->e[i].err);
    }
    free(c->e);
    pthread_mutex_destroy(&c->mu);
    pthread_cond_destroy(&c->cv);
    free(c);
}

/* The one place a sweep opens a trace: when importers arrive (traces/input.h),
 * this is what switches. The buffer is named by the trace's display path, so
 * results do not depend on the directory the sweep runs from. */
static sim_status load_trace(const sweep_trace *t, evbuf **out, sim_error *err)
{
    /* any format gpusim reads: native, gtrace, PyTorch snapshots, Kineto, TF profiles */
    trace_input *r = NULL;
    input_options opt = {.device = -1};
    sim_status st = input_open(t->path, "auto", &opt, &r, err);
    if (st != SIM_OK)
        return st;
    evbuf *b = evbuf_new(t->display, input_header(r)->name);
    if (b == NULL) {
        input_close(r);
        return sim_error_set(err, SIM_ENOMEM, t->path, 0, 0, "out of memory holding the trace");
    }
    sim_event_source src = input_source(r);
    st = evbuf_fill(b, &src, err);
    input_close(r);
    if (st != SIM_OK) {
        evbuf_free(b);
        return st;
    }
    *out = b;
    return SIM_OK;
}

static void evict_locked(sweep_cache *c)
{
    while (c->loaded > c->keep) {
        uint32_t victim = SWEEP_NO_TRACE;
        for (uint32_t i = 0; i < c->s->n_traces; i++) {
            const cache_entry *e = &c->e[i];
            if (e->state == TRACE_READY && e->users == 0 &&
                (victim == SWEEP_NO_TRACE || e->last_use < c->e[victim].last_use))
                victim = i;
        }
        if (victim == SWEEP_NO_TRACE)
            return;
        evbuf_free(c->e[victim].b);
        c->e[victim].b = NULL;
        c->e[victim].state = TRACE_NONE;
        c->loaded--;
    }
}

const evbuf *sweep_cache_acquire(sweep_cache *c, uint32_t trace, sim_error *err)
{
    cache_entry *e = &c->e[trace];
    pthread_mutex_lock(&c->mu);
    for (;;) {
        if (e->state == TRACE_READY) {
            e->users++;
            e->last_use = ++c->tick;
            const evbuf *b = e->b;
            pthread_mutex_unlock(&c->mu);
            return b;
        }
        if (e->state == TRACE_FAILED) {
            *err = *e->err;
            pthread_mutex_unlock(&c->mu);
            return NULL;
        }
        if (e->state == TRACE_LOADING) {
            pthread_cond_wait(&c->cv, &c->mu);
            continue;
        }
        e->state = TRACE_LOADING;
        pthread_mutex_unlock(&c->mu);
        evbuf *b = NULL;
        sim_error lerr;
        sim_error_clear(&lerr);
        sim_status st = load_trace(&c->s->traces[trace], &b, &lerr);
        pthread_mutex_lock(&c->mu);
        if (st == SIM_OK) {
            e->b = b;
            e->state = TRACE_READY;
            c->loaded++;
            e->users++; /* held while evicting, so it is not the victim */
            evict_locked(c);
            e->users--;
        } else {
            e->err = malloc(sizeof *e->err);
            if (e->err)
                *e->err = lerr;
            e->state = e->err ? TRACE_FAILED : TRACE_NONE;
            *err = lerr;
            pthread_cond_broadcast(&c->cv);
            pthread_mutex_unlock(&c->mu);
            return NULL;
        }
        pthread_cond_broadcast(&c->cv);
    }
}

void sweep_cache_release(sweep_cache *c, uint32_t trace)
{
    pthread_mutex_lock(&c->mu);
    c->e[trace].users--;
    evict_locked(c);
    pthread_mutex_unlock(&c->mu);
}

/* ================================================================ one job */

static void job_coordinates(const sweep_spec *s, const sweep_job *j, sim_buf *b)
{
    sim_buf_puts(b, "{\"job\":{\"trace\":");
    sim_buf_json_str(b, s->traces[j->trace].display);
    sim_buf_puts(b, ",\"device\":");
    sim_buf_json_str(b, s->devices[j->c.device].name);
    sim_buf_puts(b, ",\"strategy\":");
    sim_buf_json_str(b, s->strategies[j->c.strategy]->name);
    sim_buf_puts(b, ",\"options\":");
    sim_buf_json_str(b, s->optsets[j->c.optset].name);
    sim_buf_puts(b, "}");
}

int sweep_job_run(const sweep_spec *s, sweep_cache *c, uint64_t job, sim_buf *line, uint64_t *events)
{
    sweep_job j = sweep_spec_job(s, job);
    sim_buf_reset(line);
    *events = 0;
    job_coordinates(s, &j, line);
    sim_error err;
    sim_error_clear(&err);
    sim_status st;
    const evbuf *b = sweep_cache_acquire(c, j.trace, &err);
    if (b == NULL) {
        st = err.status;
    } else {
        const sweep_optset *o = &s->optsets[j.c.optset];
        engine_config cfg = {.device = sweep_spec_device_info(s, j.c.device),
                             .ops = s->strategies[j.c.strategy],
                             .opts = o->kv,
                             .n_opts = o->n_kv,
                             .on_oom_skip = s->on_oom_skip};
        evbuf_cursor cur;
        sim_event_source src = evbuf_source(b, &cur);
        sim_run *run = NULL;
        st = engine_run(&cfg, &src, 1, &run, &err);
        if (st == SIM_OK) {
            /* the §5 object's members follow the coordinates: its opening brace becomes a comma */
            size_t at = line->len;
            report_json_line(run, line);
            if (!line->oom && line->len > at)
                line->data[at] = ',';
            *events = run->events;
        }
        sim_run_free(run);
        sweep_cache_release(c, j.trace);
    }
    int code = 0;
    if (st != SIM_OK) {
        char msg[1600];
        sim_error_format(&err, msg, sizeof msg);
        code = sim_status_exit_code(st);
        sim_buf_printf(line, ",\"error\":{\"exit\":%d,\"message\":", code);
        sim_buf_json_str(line, msg);
        sim_buf_puts(line, "}}");
    }
    sim_buf_puts(line, "\n");
    return code;
}

/* ================================================================ results file */

/* What the summary needs of one job, read back from its line. */
typedef struct job_digest {
    uint8_t present;    /* its line is in the file */
    uint8_t fit;        /* completed without an OOM */
    uint8_t cause;      /* 0 no OOM, 1 capacity, 2 fragmentation */
    uint8_t exit_code;  /* 0, or the error's exit code */
    uint64_t offset;    /* of its line in the file */
    uint32_t len;
    uint64_t headroom;  /* limit − peak allocated (0 when above) */
    double frag_max;
    char *error;        /* the error message, or NULL */
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
};

static sim_status results_line_error(const sweep_results *r, uint64_t lineno, const char *what, sim_error *err)
{
    return sim_error_set(err, SIM_EUSAGE, r->path, lineno, 0,
                         "%s; it is not a result of this sweep spec (use another --output, or --force to start over)",
                         what);
}

static const cJSON *obj(const cJSON *o, const char *key)
{
    return cJSON_GetObjectItemCaseSensitive(o, key);
}

static uint64_t num_u64(const cJSON *v)
{
    return cJSON_IsNumber(v) && v->valuedouble > 0 ? (uint64_t)v->valuedouble : 0;
}

/* Parse one line into its job index and digest (d may be NULL). */
static sim_status parse_line(const sweep_results *r, const char *text, size_t len, uint64_t lineno, uint64_t *job,
                             job_digest *d, sim_error *err)
{
    cJSON *doc = cJSON_ParseWithLength(text, len);
    if (doc == NULL)
        return results_line_error(r, lineno, "not valid JSON", err);
    const cJSON *j = obj(doc, "job");
    const cJSON *t = obj(j, "trace"), *dev = obj(j, "device"), *st = obj(j, "strategy"), *o = obj(j, "options");
    sim_status status = SIM_OK;
    if (!cJSON_IsString(t) || !cJSON_IsString(dev) || !cJSON_IsString(st) || !cJSON_IsString(o)) {
        status = results_line_error(r, lineno, "no job coordinates", err);
    } else {
        *job = sweep_spec_find(r->s, t->valuestring, dev->valuestring, st->valuestring, o->valuestring);
        if (*job == SWEEP_NO_JOB) {
            char what[700];
            snprintf(what, sizeof what, "the job (%.200s, %.60s, %.30s, %.120s) is not in the spec", t->valuestring,
                     dev->valuestring, st->valuestring, o->valuestring);
            status = results_line_error(r, lineno, what, err);
        }
    }
    if (status == SIM_OK && d) {
        const cJSON *e = obj(doc, "error");
        const cJSON *res = obj(doc, "result");
        if (e) {
            d->exit_code = (uint8_t)num_u64(obj(e, "exit"));
            const cJSON *m = obj(e, "message");
            size_t n = cJSON_IsString(m) ? strlen(m->valuestring) + 1 : 1;
            d->error = malloc(n);
            if (d->error)
                memcpy(d->error, cJSON_IsString(m) ? m->valuestring : "", n);
        } else if (cJSON_IsObject(res)) {
            const cJSON *oom = obj(res, "first_oom");
            d->fit = cJSON_IsTrue(obj(res, "completed")) && num_u64(obj(res, "ooms")) == 0;
            if (cJSON_IsObject(oom)) {
                const cJSON *cause = obj(oom, "cause");
                d->cause = cJSON_IsString(cause) && strcmp(cause->valuestring, "fragmentation") == 0 ? 2 : 1;
            }
            uint64_t limit = num_u64(obj(obj(doc, "device"), "limit_bytes"));
            uint64_t peak = num_u64(obj(res, "peak_allocated_bytes"));
            d->headroom = limit > peak ? limit - peak : 0;
            const cJSON *fm = obj(obj(res, "fragmentation"), "max");
            d->frag_max = cJSON_IsNumber(fm) ? fm->valuedouble : 0.0;
        } else {
            status = results_line_error(r, lineno, "neither \"result\" nor \"error\"", err);
        }
    }
    cJSON_Delete(doc);
    return status;
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
    while ((n = getline(&line, &cap, f)) > 0) {
        lineno++;
        size_t len = (size_t)n;
        if (line[len - 1] != '\n')
            break; /* cut short by a kill: dropped, the job runs again */
        uint64_t job = 0;
        job_digest d;
        memset(&d, 0, sizeof d);
        if (len > 1) {
            if ((st = parse_line(r, line, len - 1, lineno, &job, digests ? &d : NULL, err)) != SIM_OK)
                break;
            if (!r->done[job]) {
                r->done[job] = 1;
                r->count++;
                if (digests) {
                    d.present = 1;
                    d.offset = off;
                    d.len = (uint32_t)len;
                    digests[job] = d;
                }
            } else {
                free(d.error);
            }
        }
        off += len;
        *good_end = off;
    }
    free(line);
    if (st == SIM_OK && ferror(f))
        st = sim_error_set(err, SIM_EIO, r->path, 0, 0, "cannot read: %s", strerror(errno));
    return st;
}

sim_status sweep_results_open(const sweep_spec *s, const char *path, bool resume, bool force, sweep_results **out,
                              sim_error *err)
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
        }
    }
    if (st == SIM_OK) {
        r->fp = fopen(path, resume ? "ab" : "wb");
        if (r->fp == NULL)
            st = sim_error_set(err, SIM_EIO, path, 0, 0, "cannot write: %s", strerror(errno));
    }
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
                        (unsigned long long)sweep_spec_jobs(r->s));
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
    free(r);
}

/* ================================================================ summary */

typedef struct group_stats {
    uint32_t traces, fit, capacity, fragmentation, errors, missing;
    bool has_headroom;
    uint64_t worst_headroom;
    uint32_t worst_trace;
    double frag_max;
} group_stats;

static group_stats group_of(const sweep_spec *s, const job_digest *d, uint32_t c)
{
    group_stats g;
    memset(&g, 0, sizeof g);
    for (uint32_t t = 0; t < s->n_traces; t++) {
        const job_digest *j = &d[(uint64_t)t * s->n_combos + c];
        g.traces++;
        if (!j->present) {
            g.missing++;
            continue;
        }
        if (j->error) {
            g.errors++;
            continue;
        }
        if (j->frag_max > g.frag_max)
            g.frag_max = j->frag_max;
        if (j->cause == 1)
            g.capacity++;
        else if (j->cause == 2)
            g.fragmentation++;
        if (j->fit) {
            g.fit++;
            if (!g.has_headroom || j->headroom < g.worst_headroom) {
                g.has_headroom = true;
                g.worst_headroom = j->headroom;
                g.worst_trace = t;
            }
        }
    }
    return g;
}

static const char *cause_name(uint8_t c)
{
    return c == 2 ? "fragmentation" : "capacity";
}

static void summary_json(const sweep_spec *s, const job_digest *d, uint64_t present, sim_buf *b)
{
    uint64_t n = sweep_spec_jobs(s);
    sim_buf_printf(b, "{\n  \"gpusim\": \"%s\",\n  \"spec\": ", GPUSIM_VERSION);
    sim_buf_json_str(b, s->path);
    sim_buf_printf(b, ",\n  \"jobs\": %llu,\n  \"done\": %llu,\n  \"traces\": %u,\n  \"groups\": [",
                   (unsigned long long)n, (unsigned long long)present, s->n_traces);
    for (uint32_t c = 0; c < s->n_combos; c++) {
        const sweep_combo *k = &s->combos[c];
        group_stats g = group_of(s, d, c);
        sim_buf_puts(b, c ? ",\n    {" : "\n    {");
        sim_buf_puts(b, "\"device\": ");
        sim_buf_json_str(b, s->devices[k->device].name);
        sim_buf_printf(b, ", \"capacity_bytes\": %llu, \"strategy\": ",
                       (unsigned long long)s->devices[k->device].info.capacity_bytes);
        sim_buf_json_str(b, s->strategies[k->strategy]->name);
        sim_buf_puts(b, ", \"options\": ");
        sim_buf_json_str(b, s->optsets[k->optset].name);
        sim_buf_printf(b, ",\n     \"traces\": %u, \"fit\": %u, \"fit_share\": ", g.traces, g.fit);
        uint32_t ran = g.traces - g.missing - g.errors;
        sim_buf_json_real(b, ran ? (double)g.fit / (double)ran : 0.0);
        sim_buf_printf(b, ", \"missing\": %u, \"errors\": %u,\n     \"worst_headroom_bytes\": ", g.missing, g.errors);
        if (g.has_headroom) {
            sim_buf_printf(b, "%llu, \"worst_headroom_trace\": ", (unsigned long long)g.worst_headroom);
            sim_buf_json_str(b, s->traces[g.worst_trace].display);
        } else {
            sim_buf_puts(b, "null, \"worst_headroom_trace\": null");
        }
        sim_buf_puts(b, ", \"fragmentation_max\": ");
        sim_buf_json_real(b, g.frag_max);
        sim_buf_printf(b, ",\n     \"ooms\": {\"capacity\": %u, \"fragmentation\": %u}, \"oom_traces\": [", g.capacity,
                       g.fragmentation);
        bool first = true;
        for (uint32_t t = 0; t < s->n_traces; t++) {
            const job_digest *j = &d[(uint64_t)t * s->n_combos + c];
            if (!j->present || j->error || j->cause == 0)
                continue;
            sim_buf_puts(b, first ? "{\"trace\": " : ", {\"trace\": ");
            first = false;
            sim_buf_json_str(b, s->traces[t].display);
            sim_buf_printf(b, ", \"cause\": \"%s\"}", cause_name(j->cause));
        }
        sim_buf_puts(b, "]");
        if (g.errors) {
            sim_buf_puts(b, ", \"error_traces\": [");
            first = true;
            for (uint32_t t = 0; t < s->n_traces; t++) {
                const job_digest *j = &d[(uint64_t)t * s->n_combos + c];
                if (!j->present || !j->error)
                    continue;
                sim_buf_puts(b, first ? "{\"trace\": " : ", {\"trace\": ");
                first = false;
                sim_buf_json_str(b, s->traces[t].display);
                sim_buf_puts(b, ", \"message\": ");
                sim_buf_json_str(b, j->error);
                sim_buf_puts(b, "}");
            }
            sim_buf_puts(b, "]");
        }
        sim_buf_puts(b, "}");
    }
    sim_buf_puts(b, "\n  ]\n}\n");
}

static size_t width_max(size_t w, const char *s)
{
    size_t n = strlen(s);
    return n > w ? n : w;
}

static void summary_text(const sweep_spec *s, const job_digest *d, uint64_t present, sim_buf *b)
{
    uint64_t n = sweep_spec_jobs(s);
    sim_buf_printf(b,
                   "gpusim sweep: %llu of %llu jobs (%u traces x %u devices x %u strategies x %u option sets%s)\n"
                   "fit: completed without an out-of-memory; headroom: the allocator's limit minus peak "
                   "allocated\n\n",
                   (unsigned long long)present, (unsigned long long)n, s->n_traces, s->n_devices, s->n_strategies,
                   s->n_optsets, s->n_combos < s->n_devices * s->n_strategies * s->n_optsets ? ", where they apply" : "");
    size_t wd = strlen("device"), ws = strlen("strategy"), wo = strlen("options");
    for (uint32_t c = 0; c < s->n_combos; c++) {
        wd = width_max(wd, s->devices[s->combos[c].device].name);
        ws = width_max(ws, s->strategies[s->combos[c].strategy]->name);
        wo = width_max(wo, s->optsets[s->combos[c].optset].name);
    }
    sim_buf_printf(b, "%-*s  %-*s  %-*s  %11s  %-34s %8s  %s\n", (int)wd, "device", (int)ws, "strategy", (int)wo,
                   "options", "fit", "worst headroom", "frag max", "out of memory (cause)");
    for (uint32_t c = 0; c < s->n_combos; c++) {
        const sweep_combo *k = &s->combos[c];
        group_stats g = group_of(s, d, c);
        uint32_t ran = g.traces - g.missing - g.errors;
        char fit[32], head[160], sz[32];
        snprintf(fit, sizeof fit, "%u/%u %3.0f%%", g.fit, ran, ran ? 100.0 * g.fit / ran : 0.0);
        if (g.has_headroom)
            snprintf(head, sizeof head, "%s (%s)", units_format_size(g.worst_headroom, sz, sizeof sz),
                     s->traces[g.worst_trace].display);
        else
            snprintf(head, sizeof head, "-");
        sim_buf_printf(b, "%-*s  %-*s  %-*s  %11s  %-34s %8.4f  ", (int)wd, s->devices[k->device].name, (int)ws,
                       s->strategies[k->strategy]->name, (int)wo, s->optsets[k->optset].name, fit, head, g.frag_max);
        uint32_t shown = 0, total = g.capacity + g.fragmentation;
        for (uint32_t t = 0; t < s->n_traces && shown < 3; t++) {
            const job_digest *j = &d[(uint64_t)t * s->n_combos + c];
            if (!j->present || j->error || j->cause == 0)
                continue;
            sim_buf_printf(b, "%s%s (%s)", shown ? ", " : "", s->traces[t].display, cause_name(j->cause));
            shown++;
        }
        if (total > shown)
            sim_buf_printf(b, ", +%u more", total - shown);
        if (total == 0)
            sim_buf_puts(b, "-");
        if (g.capacity && g.fragmentation)
            sim_buf_printf(b, "  [%u capacity, %u fragmentation]", g.capacity, g.fragmentation);
        if (g.errors)
            sim_buf_printf(b, "  [%u invalid]", g.errors);
        if (g.missing)
            sim_buf_printf(b, "  [%u not run]", g.missing);
        sim_buf_puts(b, "\n");
    }
    bool header = false;
    for (uint32_t t = 0; t < s->n_traces; t++)
        for (uint32_t c = 0; c < s->n_combos; c++) {
            const job_digest *j = &d[(uint64_t)t * s->n_combos + c];
            if (!j->present || !j->error)
                continue;
            if (!header)
                sim_buf_puts(b, "\ninvalid traces:\n");
            header = true;
            sim_buf_printf(b, "  %s\n", j->error);
            c = s->n_combos; /* one line per trace */
        }
}

sim_status sweep_results_finish(sweep_results *r, sim_buf *text, sim_buf *json, int *exit_code, sim_error *err)
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
        st = sim_outfile_open(&o, r->path, err);
    if (st == SIM_OK) {
        char *buf = NULL;
        size_t cap = 0;
        for (uint64_t i = 0; i < n && st == SIM_OK; i++) {
            if (!d[i].present)
                continue;
            if (d[i].len > cap) {
                cap = d[i].len * 2u;
                char *nb = realloc(buf, cap);
                if (nb == NULL) {
                    st = sim_error_set(err, SIM_ENOMEM, NULL, 0, 0, "out of memory");
                    break;
                }
                buf = nb;
            }
            if (pread(fileno(f), buf, d[i].len, (off_t)d[i].offset) != (ssize_t)d[i].len)
                st = sim_error_set(err, SIM_EIO, r->path, 0, 0, "cannot read: %s", strerror(errno));
            else if (fwrite(buf, 1, d[i].len, o.fp) != d[i].len)
                st = sim_error_set(err, SIM_EIO, r->path, 0, 0, "cannot write: %s", strerror(errno));
            if (d[i].exit_code > *exit_code)
                *exit_code = d[i].exit_code;
        }
        free(buf);
        sim_error cerr;
        sim_error_clear(&cerr);
        sim_status cst = sim_outfile_close(&o, st == SIM_OK, &cerr);
        if (st == SIM_OK && cst != SIM_OK) {
            *err = cerr;
            st = cst;
        }
    }
    if (f)
        fclose(f);
    if (st == SIM_OK && json)
        summary_json(s, d, present, json);
    if (st == SIM_OK && text)
        summary_text(s, d, present, text);
    for (uint64_t i = 0; i < n; i++)
        free(d[i].error);
    free(d);
    return st;
}

/* ================================================================ local driver */

void *sweep_worker_main(void *arg)
{
    sweep_worker_ctx *w = arg;
    sim_buf line;
    sim_buf_init(&line);
    uint32_t hint = SWEEP_NO_TRACE;
    for (;;) {
        uint64_t job = sweep_sched_next(w->q, hint);
        if (job == SWEEP_NO_JOB)
            break;
        hint = (uint32_t)(job / w->s->n_combos);
        uint64_t events = 0;
        int code = sweep_job_run(w->s, w->c, job, &line, &events);
        if (code > w->exit_code)
            w->exit_code = code;
        if (w->st == SIM_OK && line.oom)
            w->st = sim_error_set(&w->err, SIM_ENOMEM, NULL, 0, 0, "out of memory rendering a result");
        if (w->st == SIM_OK)
            w->st = sweep_results_append(w->r, job, line.data, line.len, code, events, &w->err);
        sweep_sched_finish(w->q, job, w->st != SIM_OK);
    }
    sim_buf_release(&line);
    return NULL;
}

sim_status sweep_run_local(const sweep_spec *s, sweep_results *r, uint32_t threads, bool progress, int *exit_code,
                           sim_error *err)
{
    *exit_code = 0;
    if (threads == 0)
        threads = 1;
    sweep_sched *q = sweep_sched_new(s, sweep_results_done(r));
    sweep_cache *c = sweep_cache_new(s, threads + 1);
    sweep_worker_ctx *w = calloc(threads, sizeof *w);
    pthread_t *tid = calloc(threads, sizeof *tid);
    if (q == NULL || c == NULL || w == NULL || tid == NULL) {
        sweep_sched_free(q);
        sweep_cache_free(c);
        free(w);
        free(tid);
        return sim_error_set(err, SIM_ENOMEM, NULL, 0, 0, "out of memory");
    }
    sweep_results_progress(r, progress);
    uint32_t started = 0;
    for (uint32_t i = 0; i < threads; i++) {
        w[i] = (sweep_worker_ctx){.s = s, .q = q, .c = c, .r = r};
        if (threads == 1)
            break;
        if (pthread_create(&tid[i], NULL, sweep_worker_main, &w[i]) != 0)
            break;
        started++;
    }
    if (started == 0) /* one worker, or no thread could start: this thread works */
        sweep_worker_main(&w[0]);
    for (uint32_t i = 0; i < started; i++)
        pthread_join(tid[i], NULL);
    if (progress)
        fputc('\n', stderr);
    sim_status st = SIM_OK;
    for (uint32_t i = 0; i < (started ? started : 1); i++) {
        if (w[i].exit_code > *exit_code)
            *exit_code = w[i].exit_code;
        if (st == SIM_OK && w[i].st != SIM_OK) {
            st = w[i].st;
            *err = w[i].err;
        }
    }
    sweep_results_progress(r, false);
    sweep_sched_free(q);
    sweep_cache_free(c);
    free(w);
    free(tid);
    return st;
}
