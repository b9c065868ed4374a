/* Capacity plans as text tables and as JSON. */
#include "plan.h"

#include <stdio.h>

static const char *a_path(const batch_traces *t, uint32_t i)
{
    evbuf_cursor c;
    return evbuf_source(t->b[i], &c).path;
}

static void text_cell(sim_buf *b, const plan_cell *c)
{
    char s[32], h[32];
    if (c->st != SIM_OK) {
        sim_buf_printf(b, " %-22s", "does not run");
    } else if (c->fits) {
        snprintf(h, sizeof h, "%s", units_format_size(c->peak_device, s, sizeof s));
        sim_buf_printf(b, " %-22s", h);
    } else {
        snprintf(h, sizeof h, "OOM (%s)", sim_oom_cause_name(c->cause));
        sim_buf_printf(b, " %-22s", h);
    }
}

/* The effective limit of each strategy on the model card, in the header. */
static void limits_text(const plan_question *q, const uint64_t *limits, sim_buf *b)
{
    char s[32];
    if (limits == NULL)
        return;
    sim_buf_printf(b, "  limits  on %s (%s), the allocator's effective limit:", q->model.name ? q->model.name : "the card",
                   units_format_size(q->model.capacity_bytes, s, sizeof s));
    for (uint32_t k = 0; k < q->n_ops; k++) {
        uint64_t l = limits[(size_t)q->n_gpus * q->n_ops + k];
        sim_buf_printf(b, "%s %s %s", k ? "," : "", q->ops[k]->name,
                       l == UINT64_MAX ? "does not run" : units_format_size(l, s, sizeof s));
    }
    sim_buf_puts(b, "\n");
}

static void plan_text(const plan_question *q, const plan_answer *a, const uint64_t *limits, sim_buf *b)
{
    char s[32], t2[32];
    sim_buf_printf(b, "gpusim %s: plan\n", GPUSIM_VERSION);
    for (uint32_t i = 0; i < q->t->n; i++)
        sim_buf_printf(b, "  trace   %s: %llu events\n", a_path(q->t, i), (unsigned long long)evbuf_count(q->t->b[i]));
    sim_buf_printf(b, "  context %s per process (assumed)\n", units_format_size(q->model.context_bytes, s, sizeof s));
    if (q->model.context_bytes == 0)
        sim_buf_puts(b, "  note: a real CUDA context takes about 0.3-1 GiB before any allocation (driver, kernels,\n"
                        "        cuBLAS/cuDNN workspaces), so every answer here is that much optimistic; set it\n"
                        "        with --context=SIZE (e.g. --context=500MiB, or what nvidia-smi shows for an idle process)\n");
    limits_text(q, limits, b);
    sim_buf_puts(b, "\n");
    sim_buf_puts(b, "Peak on the device (reserved + context) where it runs, else why not:\n\n");
    sim_buf_printf(b, "  %-12s %10s", "GPU", "capacity");
    for (uint32_t k = 0; k < q->n_ops; k++)
        sim_buf_printf(b, " %-22s", q->ops[k]->name);
    sim_buf_puts(b, "\n");
    for (uint32_t g = 0; g < q->n_gpus; g++) {
        sim_buf_printf(b, "  %-12s %10s", q->gpus[g]->name, units_format_size(q->gpus[g]->capacity_bytes, s, sizeof s));
        for (uint32_t k = 0; k < q->n_ops; k++)
            text_cell(b, &a->cells[g * q->n_ops + k]);
        sim_buf_puts(b, "\n");
    }
    sim_buf_puts(b, "\nHeadroom (capacity - peak on the device) where it runs:\n\n");
    for (uint32_t g = 0; g < q->n_gpus; g++) {
        sim_buf_printf(b, "  %-12s %10s", q->gpus[g]->name, "");
        for (uint32_t k = 0; k < q->n_ops; k++) {
            const plan_cell *c = &a->cells[g * q->n_ops + k];
            if (c->st == SIM_OK && c->fits)
                sim_buf_printf(b, " %-22s",
                               units_format_size(q->gpus[g]->capacity_bytes - c->peak_device, s, sizeof s));
            else
                sim_buf_printf(b, " %-22s", "-");
        }
        sim_buf_puts(b, "\n");
    }
    sim_buf_printf(b, "\nSmallest capacity each strategy runs on (bisection to 1 MiB on a card of compute "
                      "capability %u.%u):\n\n",
                   q->model.cc_major, q->model.cc_minor);
    for (uint32_t k = 0; k < q->n_ops; k++) {
        const plan_min *m = &a->mins[k];
        sim_buf_printf(b, "  %-10s ", q->ops[k]->name);
        if (!m->found) {
            sim_buf_printf(b, "does not run even on %s\n", units_format_size(PLAN_CEILING, s, sizeof s));
            continue;
        }
        sim_buf_printf(b, "%12s (%llu MiB), peak on the device %s; %s at %llu MiB; %u runs", units_format_size(m->capacity, s, sizeof s),
                       (unsigned long long)(m->capacity / MiB),
                       units_format_size(m->at_min.peak_device, t2, sizeof t2),
                       m->capacity == MiB ? "nothing below" : m->below_fails ? "fails" : "RUNS",
                       (unsigned long long)(m->capacity / MiB - 1), m->runs);
        if (m->monotonic)
            sim_buf_puts(b, ", monotonic\n");
        else if (m->counter_capacity)
            sim_buf_printf(b, "\n             NOT MONOTONIC: fails on %llu MiB although it runs on %llu MiB "
                              "(fragmentation)\n",
                           (unsigned long long)(m->counter_capacity / MiB), (unsigned long long)(m->capacity / MiB));
        else
            sim_buf_puts(b, "\n             NOT MONOTONIC: runs on 1 MiB less than the bisection's answer\n");
    }
}

/* Table cells are padded: drop the spaces before each newline. */
static void rstrip_lines(sim_buf *b, size_t from)
{
    size_t k = from;
    for (size_t i = from; i < b->len; i++) {
        if (b->data[i] == '\n')
            while (k > from && b->data[k - 1] == ' ')
                k--;
        b->data[k++] = b->data[i];
    }
    b->len = k;
    if (b->data)
        b->data[k] = '\0';
}

void report_plan_json(const plan_question *q, const plan_answer *a, const uint64_t *limits, sim_buf *b)
{
    sim_buf_puts(b, "{\n  \"gpusim\": \"" GPUSIM_VERSION "\",\n  \"traces\": [");
    for (uint32_t i = 0; i < q->t->n; i++) {
        sim_buf_puts(b, i ? ", " : "");
        sim_buf_puts(b, "{\"path\": ");
        sim_buf_json_str(b, a_path(q->t, i));
        sim_buf_printf(b, ", \"events\": %llu}", (unsigned long long)evbuf_count(q->t->b[i]));
    }
    sim_buf_printf(b, "],\n  \"context_bytes\": %llu,\n  \"strategies\": [", (unsigned long long)q->model.context_bytes);
    for (uint32_t k = 0; k < q->n_ops; k++) {
        sim_buf_puts(b, k ? ", " : "");
        sim_buf_json_str(b, q->ops[k]->name);
    }
    sim_buf_puts(b, "],\n  \"gpus\": [");
    for (uint32_t g = 0; g < q->n_gpus; g++) {
        sim_buf_puts(b, g ? ",\n    {\"name\": " : "\n    {\"name\": ");
        sim_buf_json_str(b, q->gpus[g]->name);
        sim_buf_printf(b, ", \"capacity_bytes\": %llu, \"runs\": [", (unsigned long long)q->gpus[g]->capacity_bytes);
        for (uint32_t k = 0; k < q->n_ops; k++) {
            const plan_cell *c = &a->cells[g * q->n_ops + k];
            sim_buf_puts(b, k ? ",\n      {\"strategy\": " : "\n      {\"strategy\": ");
            sim_buf_json_str(b, q->ops[k]->name);
            if (c->st != SIM_OK) {
                sim_buf_puts(b, ", \"fits\": false, \"error\": ");
                sim_buf_json_str(b, c->err.msg);
                sim_buf_puts(b, "}");
                continue;
            }
            sim_buf_printf(b, ", \"fits\": %s, \"peak_device_bytes\": %llu, \"peak_reserved_bytes\": %llu, ",
                           c->fits ? "true" : "false", (unsigned long long)c->peak_device,
                           (unsigned long long)c->peak_reserved);
            if (limits && limits[g * q->n_ops + k] != UINT64_MAX)
                sim_buf_printf(b, "\"limit_bytes\": %llu, ", (unsigned long long)limits[g * q->n_ops + k]);
            if (c->fits)
                sim_buf_printf(b, "\"headroom_bytes\": %llu, \"ooms\": 0, \"oom_cause\": null}",
                               (unsigned long long)(q->gpus[g]->capacity_bytes - c->peak_device));
            else
                sim_buf_printf(b, "\"headroom_bytes\": null, \"ooms\": %llu, \"oom_cause\": \"%s\"}",
                               (unsigned long long)c->ooms, sim_oom_cause_name(c->cause));
        }
        sim_buf_puts(b, "]}");
    }
    sim_buf_printf(b, "\n  ],\n  \"minimum_capacity\": {\"compute_capability\": \"%u.%u\", \"step_bytes\": %llu, "
                      "\"rows\": [",
                   q->model.cc_major, q->model.cc_minor, (unsigned long long)MiB);
    for (uint32_t k = 0; k < q->n_ops; k++) {
        const plan_min *m = &a->mins[k];
        sim_buf_puts(b, k ? ",\n    {\"strategy\": " : "\n    {\"strategy\": ");
        sim_buf_json_str(b, q->ops[k]->name);
        if (!m->found) {
            sim_buf_printf(b, ", \"capacity_bytes\": null, \"ceiling_bytes\": %llu}", (unsigned long long)PLAN_CEILING);
            continue;
        }
        sim_buf_printf(b,
                       ", \"capacity_bytes\": %llu, \"confirmed\": %s, \"fails_below\": %s, "
                       "\"peak_device_bytes\": %llu, \"runs\": %u, \"monotonic\": %s, \"counterexample_bytes\": ",
                       (unsigned long long)m->capacity, m->at_min.fits ? "true" : "false",
                       m->below_fails ? "true" : "false", (unsigned long long)m->at_min.peak_device, m->runs,
                       m->monotonic ? "true" : "false");
        if (m->counter_capacity)
            sim_buf_printf(b, "%llu", (unsigned long long)m->counter_capacity);
        else
            sim_buf_puts(b, "null");
        sim_buf_puts(b, ", \"probes\": [");
        for (uint32_t p = 0; p < m->n_probes; p++)
            sim_buf_printf(b, "%s{\"capacity_bytes\": %llu, \"fits\": %s}", p ? ", " : "",
                           (unsigned long long)m->probes[p].capacity, m->probes[p].fits ? "true" : "false");
        sim_buf_puts(b, "]}");
    }
    sim_buf_puts(b, "\n  ]}\n}\n");
}

void report_plan_text(const plan_question *q, const plan_answer *a, const uint64_t *limits, sim_buf *out)
{
    size_t from = out->len;
    plan_text(q, a, limits, out);
    rstrip_lines(out, from);
}
