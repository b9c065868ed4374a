/* Native trace format v1: the writer (JSON document, JSON Lines, or the binary
 * .gtrace container through gtrace.h), written to a temporary name and renamed. */
#include "trace.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gtrace.h"
#include "sim/buf.h"

struct trace_writer {
    gtrace_writer *gw;  /* TRACE_GTRACE: everything is delegated to it */
    sim_outfile out;
    trace_container container;
    sim_buf line;
    uint64_t n;
};

trace_container trace_container_for_path(const char *path)
{
    size_t n = strlen(path);
    if (n >= 7 && strcmp(path + n - 7, ".gtrace") == 0)
        return TRACE_GTRACE;
    return n >= 6 && strcmp(path + n - 6, ".jsonl") == 0 ? TRACE_JSONL : TRACE_JSON;
}

static void write_header(sim_buf *b, const trace_header *h)
{
    sim_buf_puts(b, "{\"format\":\"gpusim-trace\",\"version\":1");
    if (h && h->name[0]) {
        sim_buf_puts(b, ",\"name\":");
        sim_buf_json_str(b, h->name);
    }
    sim_buf_puts(b, ",\"time_unit\":\"ns\"");
    if (h && (h->device_name[0] || h->device_capacity)) {
        sim_buf_puts(b, ",\"device\":{");
        bool comma = false;
        if (h->device_name[0]) {
            sim_buf_puts(b, "\"name\":");
            sim_buf_json_str(b, h->device_name);
            comma = true;
        }
        if (h->device_capacity) {
            sim_buf_printf(b, "%s\"capacity_bytes\":%llu", comma ? "," : "",
                           (unsigned long long)h->device_capacity);
            comma = true;
        }
        if (h->device_cc_major)
            sim_buf_printf(b, "%s\"compute_capability\":\"%u.%u\"", comma ? "," : "", h->device_cc_major,
                           h->device_cc_minor);
        sim_buf_puts(b, "}");
    }
    if (h && h->meta_json) {
        sim_buf_puts(b, ",\"meta\":");
        sim_buf_puts(b, h->meta_json);
    }
}

sim_status trace_writer_open(const char *path, trace_container c, const trace_header *h, trace_writer **out,
                             sim_error *err)
{
    *out = NULL;
    trace_writer *w = calloc(1, sizeof *w);
    if (w == NULL)
        return sim_error_set(err, SIM_ENOMEM, path, 0, 0, "out of memory");
    w->container = c;
    sim_buf_init(&w->line);
    if (c == TRACE_GTRACE) {
        sim_status gst = gtrace_writer_open(path, h, &w->gw, err);
        if (gst != SIM_OK) {
            free(w);
            return gst;
        }
        *out = w;
        return SIM_OK;
    }
    sim_status st = sim_outfile_open(&w->out, path, err);
    if (st != SIM_OK) {
        free(w);
        return st;
    }
    write_header(&w->line, h);
    sim_buf_puts(&w->line, c == TRACE_JSONL ? "}\n" : ",\"events\":[\n");
    *out = w;
    return SIM_OK;
}

sim_status trace_writer_event(trace_writer *w, const sim_event *ev, sim_error *err)
{
    if (w->gw)
        return gtrace_writer_event(w->gw, ev, err);
    sim_buf *b = &w->line;
    if (w->container == TRACE_JSON && w->n > 0)
        sim_buf_puts(b, ",\n");
    sim_buf_printf(b, "{\"op\":\"%s\"", sim_op_name(ev->op));
    switch (ev->op) {
    case SIM_OP_ALLOC:
        sim_buf_printf(b, ",\"id\":%llu,\"size\":%llu,\"t\":%llu", (unsigned long long)ev->id,
                       (unsigned long long)ev->size, (unsigned long long)ev->t);
        if (ev->stream)
            sim_buf_printf(b, ",\"stream\":%u", ev->stream);
        if (ev->has_share)
            sim_buf_printf(b, ",\"share\":%llu", (unsigned long long)ev->share);
        if (ev->tag) {
            sim_buf_puts(b, ",\"tag\":");
            sim_buf_json_str(b, ev->tag);
        }
        break;
    case SIM_OP_FREE:
        sim_buf_printf(b, ",\"id\":%llu,\"t\":%llu", (unsigned long long)ev->id, (unsigned long long)ev->t);
        if (ev->ready_t != ev->t)
            sim_buf_printf(b, ",\"ready_t\":%llu", (unsigned long long)ev->ready_t);
        if (ev->has_ready_stream)
            sim_buf_printf(b, ",\"ready_stream\":%u", ev->ready_stream);
        break;
    case SIM_OP_EMPTY_CACHE:
        sim_buf_printf(b, ",\"t\":%llu", (unsigned long long)ev->t);
        break;
    case SIM_OP_MARK:
        sim_buf_puts(b, ",\"name\":");
        sim_buf_json_str(b, ev->name ? ev->name : "");
        sim_buf_printf(b, ",\"t\":%llu", (unsigned long long)ev->t);
        break;
    case SIM_OP_POOL_BEGIN:
    case SIM_OP_POOL_END:
    case SIM_OP_POOL_RELEASE:
    case SIM_OP_GRAPH_REPLAY:
        sim_buf_printf(b, ",\"pool\":%llu,\"t\":%llu", (unsigned long long)ev->pool, (unsigned long long)ev->t);
        if (ev->op == SIM_OP_POOL_BEGIN) {
            bool all = (ev->pool_flags & SIM_POOL_ALL_STREAMS) != 0, capture = (ev->pool_flags & SIM_POOL_CAPTURE) != 0;
            if (!all)
                sim_buf_printf(b, ",\"stream\":%u", ev->stream);
            if (capture != !all) /* the reader's default: a capture iff a stream is named */
                sim_buf_printf(b, ",\"capture\":%s", capture ? "true" : "false");
            if (ev->pool_flags & SIM_POOL_USE_ON_OOM)
                sim_buf_puts(b, ",\"use_on_oom\":true");
            if (ev->pool_flags & SIM_POOL_NO_SPLIT)
                sim_buf_puts(b, ",\"no_split\":true");
        }
        if (ev->op == SIM_OP_GRAPH_REPLAY && ev->name) {
            sim_buf_puts(b, ",\"name\":");
            sim_buf_json_str(b, ev->name);
        }
        break;
    }
    if (ev->proc) {
        sim_buf_puts(b, ",\"proc\":");
        sim_buf_json_str(b, ev->proc);
    }
    sim_buf_puts(b, w->container == TRACE_JSONL ? "}\n" : "}");
    w->n++;
    if (b->len >= (1u << 16) || b->oom) {
        if (b->oom)
            return sim_error_set(err, SIM_ENOMEM, w->out.path, 0, 0, "out of memory");
        if (fwrite(b->data, 1, b->len, w->out.fp) != b->len)
            return sim_error_set(err, SIM_EIO, w->out.path, 0, 0, "write failed: %s", strerror(errno));
        sim_buf_reset(b);
    }
    return SIM_OK;
}

sim_status trace_writer_close(trace_writer *w, bool commit, sim_error *err)
{
    sim_status st = SIM_OK;
    if (w->gw) {
        st = gtrace_writer_close(w->gw, commit, err);
        free(w);
        return st;
    }
    if (commit) {
        if (w->container == TRACE_JSON)
            sim_buf_puts(&w->line, "\n]}\n");
        if (w->line.oom)
            st = sim_error_set(err, SIM_ENOMEM, w->out.path, 0, 0, "out of memory");
        else if (w->line.len && fwrite(w->line.data, 1, w->line.len, w->out.fp) != w->line.len)
            st = sim_error_set(err, SIM_EIO, w->out.path, 0, 0, "write failed: %s", strerror(errno));
    }
    sim_status cst = sim_outfile_close(&w->out, commit && st == SIM_OK, err);
    if (st == SIM_OK)
        st = cst;
    sim_buf_release(&w->line);
    free(w);
    return st;
}
