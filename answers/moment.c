/* The statistics of one process at one moment of a replay (moment.h). */
#include "moment.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sim/grow.h"

static const char *const KIND_NAMES[] = {"end", "peak", "oom"};

bool moment_kind_parse(const char *text, moment_kind *kind)
{
    for (size_t i = 0; i < sizeof KIND_NAMES / sizeof KIND_NAMES[0]; i++)
        if (strcmp(text, KIND_NAMES[i]) == 0) {
            *kind = (moment_kind)i;
            return true;
        }
    return false;
}

const char *moment_kind_name(moment_kind kind)
{
    return KIND_NAMES[kind];
}

void moment_init(moment *m, moment_kind kind)
{
    *m = (moment){.kind = kind};
}

void moment_release(moment *m)
{
    free(m->stats);
    m->stats = NULL;
    m->n = m->cap = 0;
}

static moment_stat *push(moment *m, const char *key)
{
    if (!SIM_GROW(m->stats, m->n + 1, m->cap)) {
        m->failed = true;
        return NULL;
    }
    moment_stat *s = &m->stats[m->n++];
    snprintf(s->key, sizeof s->key, "%s", key);
    return s;
}

static void sink_u64(void *ctx, const char *key, uint64_t value)
{
    moment_stat *s = push(ctx, key);
    if (s) {
        s->kind = STRATEGY_STAT_U64;
        s->u64 = value;
    }
}

static void sink_real(void *ctx, const char *key, double value)
{
    moment_stat *s = push(ctx, key);
    if (s) {
        s->kind = STRATEGY_STAT_REAL;
        s->real = value;
    }
}

/* Replace what was kept by the statistics of process p now. */
static void take(moment *m, const sim_run *run, uint32_t p, uint64_t event)
{
    m->n = 0;
    m->found = true;
    m->process = p;
    m->event = event;
    m->ops = run->ops;
    strategy_stat_sink sink = {.u64 = sink_u64, .real = sink_real, .text = NULL, .ctx = m};
    run->ops->stats(run->procs[p].s, &sink);
}

void moment_observe(void *ctx, const engine_tick *t)
{
    moment *m = ctx;
    if (m->kind == MOMENT_PEAK) {
        /* strictly above: the first event that reached the peak, as peak_reserved_event */
        if (!m->found || t->total.reserved_bytes > m->best) {
            m->best = t->total.reserved_bytes;
            take(m, t->run, t->process, t->event);
        }
    } else if (m->kind == MOMENT_OOM && !m->found &&
               (t->outcome == ENGINE_OOM_DROPPED || t->outcome == ENGINE_OOM_ENDED)) {
        take(m, t->run, t->process, t->event);
    }
}

sim_status moment_finish(moment *m, const sim_run *run, sim_error *err)
{
    /* a replay without events (a recorded state and nothing after it) peaks at its start: its end */
    if ((m->kind == MOMENT_END || (m->kind == MOMENT_PEAK && !m->found && run->events == 0)) && run->n_procs > 0)
        take(m, run, 0, 0);
    if (m->kind == MOMENT_OOM && m->found)
        m->oom = run->procs[m->process].m.first_oom;
    if (m->failed)
        return sim_error_set(err, SIM_ENOMEM, NULL, 0, 0, "out of memory keeping the statistics for --summary");
    return SIM_OK;
}

bool moment_u64(const moment *m, const char *key, uint64_t *value)
{
    for (size_t i = m->n; i-- > 0;)
        if (strcmp(m->stats[i].key, key) == 0) {
            const moment_stat *s = &m->stats[i];
            *value = s->kind == STRATEGY_STAT_U64 ? s->u64 : (uint64_t)s->real;
            return true;
        }
    return false;
}
