#include "mpi.h"

#include <stdlib.h>
#include <string.h>

bool sweep_mpi_launched(void)
{
    static const char *const VARS[] = {"OMPI_COMM_WORLD_SIZE", "PMIX_RANK", "PMI_RANK", "PMI_SIZE",
                                       "MPI_LOCALNRANKS"};
    for (size_t i = 0; i < sizeof VARS / sizeof VARS[0]; i++)
        if (getenv(VARS[i]) != NULL)
            return true;
    return false;
}

#ifndef GPUSIM_HAVE_MPI

bool sweep_mpi_available(void)
{
    return false;
}

sim_status sweep_mpi_init(sweep_mpi *m, sim_error *err)
{
    m->active = false;
    return sim_error_set(err, SIM_EUSAGE, NULL, 0, 0, "built without MPI");
}

void sweep_mpi_finalize(sweep_mpi *m)
{
    m->active = false;
}

void sweep_mpi_abort(sweep_mpi *m, int code)
{
    (void)m;
    exit(code);
}

void sweep_mpi_dismiss(sweep_mpi *m, double heartbeat_s)
{
    (void)m;
    (void)heartbeat_s;
}

sim_status sweep_mpi_coordinate(const sweep_mpi *m, const sweep_spec *s, sweep_results *r, uint32_t local_workers,
                                double heartbeat_s, bool progress, sweep_mpi_report *rep, sim_error *err)
{
    (void)m;
    (void)heartbeat_s;
    rep->lost = 0;
    rep->dead_ranks = 0;
    return sweep_run_local(s, r, local_workers, progress, &rep->exit_code, err);
}

void sweep_mpi_work(const sweep_mpi *m, const sweep_spec *s, const sim_error *load_err, double heartbeat_s)
{
    (void)m;
    (void)s;
    (void)load_err;
    (void)heartbeat_s;
}

#else /* GPUSIM_HAVE_MPI */

#include <mpi.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <time.h>

#include "sim/clock.h"

/* Messages (MPI_COMM_WORLD, bytes):
 *   worker → 0  HELLO     u64 spec hash, u64 jobs          ready for a first job
 *   worker → 0  FAIL      text                             cannot load the spec; stops
 *   worker → 0  BEAT      (empty)                          still working on its job
 *   worker → 0  RESULT    u64 job, u64 events, i64 exit, the line   done; ready for the next
 *   0 → worker  JOB       i64 job (−1: stop)
 * A worker's main thread does all its MPI calls (MPI_THREAD_FUNNELED); the
 * replay runs on a second thread so heartbeats go on during long jobs. */
enum { TAG_HELLO = 1, TAG_FAIL = 2, TAG_BEAT = 3, TAG_RESULT = 4, TAG_JOB = 5 };

bool sweep_mpi_available(void)
{
    return true;
}

sim_status sweep_mpi_init(sweep_mpi *m, sim_error *err)
{
    int provided = 0;
    if (MPI_Init_thread(NULL, NULL, MPI_THREAD_FUNNELED, &provided) != MPI_SUCCESS)
        return sim_error_set(err, SIM_EIO, NULL, 0, 0, "MPI_Init_thread failed");
    if (provided < MPI_THREAD_FUNNELED) {
        MPI_Finalize();
        return sim_error_set(err, SIM_EIO, NULL, 0, 0, "this MPI does not support MPI_THREAD_FUNNELED");
    }
    /* a failing peer must come back as an error code, not end this rank */
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    MPI_Comm_rank(MPI_COMM_WORLD, &m->rank);
    MPI_Comm_size(MPI_COMM_WORLD, &m->size);
    m->active = true;
    return SIM_OK;
}

void sweep_mpi_finalize(sweep_mpi *m)
{
    if (m->active)
        MPI_Finalize();
    m->active = false;
}

void sweep_mpi_abort(sweep_mpi *m, int code)
{
    fflush(stdout);
    fflush(stderr);
    if (m->active)
        MPI_Abort(MPI_COMM_WORLD, code);
    exit(code);
}

static void sleep_s(double s)
{
    struct timespec ts = {(time_t)s, (long)((s - (double)(time_t)s) * 1e9)};
    nanosleep(&ts, NULL);
}

static void put_u64(unsigned char *p, uint64_t v)
{
    memcpy(p, &v, sizeof v);
}

static uint64_t get_u64(const unsigned char *p)
{
    uint64_t v;
    memcpy(&v, p, sizeof v);
    return v;
}

/* ================================================================ rank 0 */

static int send_job(int rank, int64_t job);

void sweep_mpi_dismiss(sweep_mpi *m, double heartbeat_s)
{
    if (!m->active || m->rank != 0)
        return;
    for (int r = 1; r < m->size; r++) {
        double until = sim_clock_s() + heartbeat_s;
        int flag = 0;
        MPI_Status ms;
        while (!flag && sim_clock_s() < until) {
            if (MPI_Iprobe(r, MPI_ANY_TAG, MPI_COMM_WORLD, &flag, &ms) != MPI_SUCCESS)
                break;
            if (!flag)
                sleep_s(0.001);
        }
        if (!flag)
            continue;
        int n = 0;
        MPI_Get_count(&ms, MPI_BYTE, &n);
        unsigned char *buf = malloc((size_t)n + 1);
        if (buf == NULL)
            continue;
        MPI_Recv(buf, n, MPI_BYTE, r, ms.MPI_TAG, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        free(buf);
        if (ms.MPI_TAG == TAG_HELLO)
            send_job(r, -1);
    }
}

enum { RANK_STARTING = 0, RANK_BUSY = 1, RANK_STOPPED = 2, RANK_DEAD = 3 };

typedef struct rank_state {
    int state;
    uint64_t job;        /* RANK_BUSY */
    uint32_t hint;       /* the trace it holds */
    double last_heard;
} rank_state;

static int send_job(int rank, int64_t job)
{
    return MPI_Send(&job, 1, MPI_INT64_T, rank, TAG_JOB, MPI_COMM_WORLD);
}

static void describe_job(const sweep_spec *s, uint64_t job, char *buf, size_t cap)
{
    sweep_job j = sweep_spec_job(s, job);
    snprintf(buf, cap, "trace %s, device %s, strategy %s, options %s", s->traces[j.trace].display,
             s->devices[j.c.device].name, s->strategies[j.c.strategy]->name, s->optsets[j.c.optset].name);
}

/* Give rank r its next job, or tell it to stop. */
static void assign(sweep_sched *q, rank_state *rs, int r)
{
    uint64_t job = sweep_sched_next(q, rs->hint);
    if (job == SWEEP_NO_JOB) {
        send_job(r, -1);
        rs->state = RANK_STOPPED;
        return;
    }
    if (send_job(r, (int64_t)job) != MPI_SUCCESS) {
        /* the rank is gone before it got the job: nothing was lost, hand it back */
        sweep_sched_finish(q, job, true);
        rs->state = RANK_DEAD;
        fprintf(stderr, "gpusim sweep: rank %d cannot be reached; it gets no more jobs\n", r);
        return;
    }
    rs->state = RANK_BUSY;
    rs->job = job;
    rs->last_heard = sim_clock_s();
}

typedef struct coordinator {
    const sweep_spec *s;
    sweep_sched *q;
    sweep_results *r;
    rank_state *ranks;
    int size;
    double heartbeat_s;
    sweep_mpi_report *rep;
    sim_status st;
    sim_error *err;
} coordinator;

static void on_message(coordinator *co, const MPI_Status *ms, unsigned char *buf, int n)
{
    int src = ms->MPI_SOURCE;
    rank_state *rs = &co->ranks[src];
    rs->last_heard = sim_clock_s();
    switch (ms->MPI_TAG) {
    case TAG_HELLO:
        if (rs->state != RANK_STARTING)
            return;
        if (n != 16 || get_u64(buf) != co->s->hash || get_u64(buf + 8) != sweep_spec_jobs(co->s)) {
            fprintf(stderr, "gpusim sweep: rank %d read another spec than rank 0 (is %s the same file on every "
                            "node?); it gets no job\n",
                    src, co->s->path);
            send_job(src, -1);
            rs->state = RANK_STOPPED;
            return;
        }
        assign(co->q, rs, src);
        return;
    case TAG_FAIL:
        fprintf(stderr, "gpusim sweep: rank %d cannot run: %.*s\n", src, n, (const char *)buf);
        rs->state = RANK_STOPPED;
        return;
    case TAG_BEAT:
        return;
    case TAG_RESULT: {
        if (rs->state != RANK_BUSY || n < 24 || get_u64(buf) != rs->job)
            return; /* a rank declared dead came back: its job stays lost */
        uint64_t job = rs->job;
        int code = (int)(int64_t)get_u64(buf + 16);
        if (code > co->rep->exit_code)
            co->rep->exit_code = code;
        if (co->st == SIM_OK)
            co->st = sweep_results_append(co->r, job, (const char *)buf + 24, (size_t)n - 24, code, get_u64(buf + 8),
                                          co->err);
        sweep_sched_finish(co->q, job, co->st != SIM_OK);
        rs->hint = (uint32_t)(job / co->s->n_combos);
        if (co->st != SIM_OK) {
            send_job(src, -1);
            rs->state = RANK_STOPPED;
            return;
        }
        assign(co->q, rs, src);
        return;
    }
    default:
        return;
    }
}

static void check_silence(coordinator *co, double now, bool all_handed_out)
{
    for (int r = 1; r < co->size; r++) {
        rank_state *rs = &co->ranks[r];
        if (now - rs->last_heard <= co->heartbeat_s)
            continue;
        if (rs->state == RANK_BUSY) {
            char what[1024];
            describe_job(co->s, rs->job, what, sizeof what);
            fprintf(stderr,
                    "gpusim sweep: rank %d has been silent for %.1f s during its job (%s): it is taken for dead, "
                    "that job is lost (--resume runs it again); the other jobs go on\n",
                    r, now - rs->last_heard, what);
            sweep_sched_finish(co->q, rs->job, true);
            rs->state = RANK_DEAD;
            co->rep->lost++;
            co->rep->dead_ranks++;
        } else if (rs->state == RANK_STARTING && all_handed_out) {
            fprintf(stderr, "gpusim sweep: rank %d never asked for a job; it is taken for dead\n", r);
            rs->state = RANK_DEAD;
            co->rep->dead_ranks++;
        }
    }
}

sim_status sweep_mpi_coordinate(const sweep_mpi *m, const sweep_spec *s, sweep_results *r, uint32_t local_workers,
                                double heartbeat_s, bool progress, sweep_mpi_report *rep, sim_error *err)
{
    memset(rep, 0, sizeof *rep);
    sweep_sched *q = sweep_sched_new(s, sweep_results_done(r));
    sweep_cache *c = sweep_cache_new(s, local_workers + 1);
    rank_state *ranks = calloc((size_t)m->size, sizeof *ranks);
    sweep_worker_ctx *w = calloc(local_workers ? local_workers : 1, sizeof *w);
    pthread_t *tid = calloc(local_workers ? local_workers : 1, sizeof *tid);
    if (q == NULL || c == NULL || ranks == NULL || w == NULL || tid == NULL) {
        sweep_sched_free(q);
        sweep_cache_free(c);
        free(ranks);
        free(w);
        free(tid);
        return sim_error_set(err, SIM_ENOMEM, NULL, 0, 0, "out of memory");
    }
    sweep_results_progress(r, progress);
    double start = sim_clock_s();
    for (int i = 0; i < m->size; i++) {
        ranks[i].hint = SWEEP_NO_TRACE;
        ranks[i].last_heard = start;
    }
    ranks[0].state = RANK_STOPPED;
    uint32_t started = 0;
    for (uint32_t i = 0; i < (local_workers ? local_workers : 1); i++)
        w[i] = (sweep_worker_ctx){.s = s, .q = q, .c = c, .r = r};
    for (uint32_t i = 0; i < local_workers; i++) {
        if (pthread_create(&tid[i], NULL, sweep_worker_main, &w[i]) != 0)
            break;
        started++;
    }
    coordinator co = {.s = s, .q = q, .r = r, .ranks = ranks, .size = m->size, .heartbeat_s = heartbeat_s,
                      .rep = rep, .st = SIM_OK, .err = err};
    unsigned char *buf = NULL;
    int cap = 0;
    bool ran_here = false;
    for (;;) {
        int flag = 0;
        MPI_Status ms;
        if (MPI_Iprobe(MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, &flag, &ms) != MPI_SUCCESS)
            flag = 0;
        if (flag) {
            int n = 0;
            MPI_Get_count(&ms, MPI_BYTE, &n);
            if (n + 1 > cap) {
                cap = n + 1024;
                unsigned char *nb = realloc(buf, (size_t)cap);
                if (nb == NULL) {
                    co.st = sim_error_set(err, SIM_ENOMEM, NULL, 0, 0, "out of memory");
                    break;
                }
                buf = nb;
            }
            if (MPI_Recv(buf, n, MPI_BYTE, ms.MPI_SOURCE, ms.MPI_TAG, MPI_COMM_WORLD, MPI_STATUS_IGNORE) ==
                MPI_SUCCESS)
                on_message(&co, &ms, buf, n);
            continue;
        }
        uint64_t unfinished = sweep_sched_unfinished(q);
        bool waiting = false;
        for (int i = 1; i < m->size; i++)
            waiting = waiting || ranks[i].state == RANK_STARTING || ranks[i].state == RANK_BUSY;
        if (!waiting && (unfinished == 0 || co.st != SIM_OK))
            break;
        /* every rank stopped or dead but jobs left (rank 0 has no local worker): run them here */
        if (!waiting && started == 0 && !ran_here) {
            ran_here = true;
            sweep_worker_main(&w[0]);
            continue;
        }
        check_silence(&co, sim_clock_s(), unfinished == 0);
        sleep_s(0.0002);
    }
    free(buf);
    free(ranks);
    return sweep_workers_finish(w, tid, started, progress, co.st, &rep->exit_code, err);
}

/* ================================================================ ranks > 0 */

typedef struct job_thread {
    const sweep_spec *s;
    sweep_cache *c;
    uint64_t job;
    sim_buf line;
    uint64_t events;
    int code;
    bool done;
    pthread_mutex_t mu;
    pthread_cond_t cv;
} job_thread;

static void *job_thread_main(void *arg)
{
    job_thread *jt = arg;
    jt->code = sweep_job_run(jt->s, jt->c, jt->job, &jt->line, &jt->events);
    pthread_mutex_lock(&jt->mu);
    jt->done = true;
    pthread_cond_signal(&jt->cv);
    pthread_mutex_unlock(&jt->mu);
    return NULL;
}

/* Run the job on a second thread; beat every heartbeat/4 until it is over. */
static void run_with_heartbeat(job_thread *jt, double heartbeat_s)
{
    jt->done = false;
    pthread_t t;
    if (pthread_create(&t, NULL, job_thread_main, jt) != 0) {
        job_thread_main(jt);
        return;
    }
    double beat = heartbeat_s / 4;
    pthread_mutex_lock(&jt->mu);
    while (!jt->done) {
        struct timespec ts;
        clock_gettime(CLOCK_REALTIME, &ts);
        double when = (double)ts.tv_nsec * 1e-9 + beat;
        ts.tv_sec += (time_t)when;
        ts.tv_nsec = (long)((when - (double)(time_t)when) * 1e9);
        pthread_cond_timedwait(&jt->cv, &jt->mu, &ts);
        if (!jt->done) {
            pthread_mutex_unlock(&jt->mu);
            MPI_Send(NULL, 0, MPI_BYTE, 0, TAG_BEAT, MPI_COMM_WORLD);
            pthread_mutex_lock(&jt->mu);
        }
    }
    pthread_mutex_unlock(&jt->mu);
    pthread_join(t, NULL);
}

/* Test hook GPUSIM_SWEEP_TEST_KILL_RANK=R: rank R dies (SIGKILL) when it is given
 * its first job, as a lost node would. */
static bool doomed(const sweep_mpi *m)
{
    const char *v = getenv("GPUSIM_SWEEP_TEST_KILL_RANK");
    return v && atoi(v) == m->rank;
}

void sweep_mpi_work(const sweep_mpi *m, const sweep_spec *s, const sim_error *load_err, double heartbeat_s)
{
    if (s == NULL) {
        char msg[1600];
        sim_error_format(load_err, msg, sizeof msg);
        MPI_Send(msg, (int)strlen(msg), MPI_BYTE, 0, TAG_FAIL, MPI_COMM_WORLD);
        return;
    }
    unsigned char hello[16];
    put_u64(hello, s->hash);
    put_u64(hello + 8, sweep_spec_jobs(s));
    if (MPI_Send(hello, 16, MPI_BYTE, 0, TAG_HELLO, MPI_COMM_WORLD) != MPI_SUCCESS)
        return;
    job_thread jt;
    memset(&jt, 0, sizeof jt);
    jt.s = s;
    jt.c = sweep_cache_new(s, 1);
    sim_buf_init(&jt.line);
    pthread_mutex_init(&jt.mu, NULL);
    pthread_cond_init(&jt.cv, NULL);
    bool die = doomed(m);
    unsigned char *msg = NULL;
    size_t cap = 0;
    for (unsigned n = 0; jt.c; n++) {
        int64_t job = -1;
        if (MPI_Recv(&job, 1, MPI_INT64_T, 0, TAG_JOB, MPI_COMM_WORLD, MPI_STATUS_IGNORE) != MPI_SUCCESS || job < 0)
            break;
        if (die && n == 0)
            raise(SIGKILL);
        jt.job = (uint64_t)job;
        run_with_heartbeat(&jt, heartbeat_s);
        size_t len = 24 + jt.line.len;
        if (len > cap) {
            unsigned char *nm = realloc(msg, len * 2);
            if (nm == NULL)
                break;
            msg = nm;
            cap = len * 2;
        }
        put_u64(msg, jt.job);
        put_u64(msg + 8, jt.events);
        put_u64(msg + 16, (uint64_t)(int64_t)jt.code);
        memcpy(msg + 24, jt.line.data, jt.line.len);
        if (MPI_Send(msg, (int)len, MPI_BYTE, 0, TAG_RESULT, MPI_COMM_WORLD) != MPI_SUCCESS)
            break;
    }
    free(msg);
    sim_buf_release(&jt.line);
    pthread_mutex_destroy(&jt.mu);
    pthread_cond_destroy(&jt.cv);
    sweep_cache_free(jt.c);
}

#endif /* GPUSIM_HAVE_MPI */
