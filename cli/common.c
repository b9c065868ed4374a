/* What the subcommands share: input helpers, strategies, jobs, and the prelude. */
#include "common.h"

#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "jobdir.h"
#include "sim/units.h"
#include "strategies/registry.h"

sim_status cli_input_options(const cli_args *a, input_options *opt, sim_error *err)
{
    opt->device = -1;
    /* GPUSIM_PREFETCH=0: read the trace in the replaying thread (for debugging) */
    const char *pf = getenv("GPUSIM_PREFETCH");
    opt->prefetch = pf == NULL || strcmp(pf, "0") != 0;
    const char *v = cli_get(a, "device");
    if (v == NULL)
        return SIM_OK;
    uint64_t d = 0;
    if (units_parse_u64(v, &d, err) != SIM_OK || d > 1u << 20)
        return sim_error_set(err, SIM_EUSAGE, NULL, 0, 0, "--device: expected a device ordinal (0, 1, ...), not '%s'",
                             v);
    opt->device = (int64_t)d;
    return SIM_OK;
}

/* ---------------------------------------------------------------- strategies, jobs */

static void list_names(char *names, size_t cap)
{
    names[0] = '\0';
    for (size_t i = 0; i < registry_count(); i++) {
        strncat(names, i ? ", " : "", cap - strlen(names) - 1);
        strncat(names, registry_get(i)->name, cap - strlen(names) - 1);
    }
}

sim_status cli_pick_strategies(const cli_args *a, const strategy_ops **out, uint32_t *n, sim_error *err)
{
    *n = 0;
    const char *list = cli_get(a, "strategies");
    if (list == NULL) {
        /* the registry's usual order, leaving out a strategy whose required option
         * (limit's --limit) is not given */
        for (size_t i = 0; i < registry_count() && *n < CLI_MAX_STRATEGIES; i++) {
            const strategy_ops *ops = registry_get(i);
            bool missing = false;
            for (uint32_t k = 0; k < ops->n_opts; k++)
                missing = missing || (ops->opts[k].required && !cli_has(a, ops->opts[k].cli));
            if (!missing)
                out[(*n)++] = ops;
        }
        return SIM_OK;
    }
    cli_list items;
    for (char *tok = cli_list_first(&items, list); tok; tok = cli_list_next(&items)) {
        const strategy_ops *ops = registry_find(tok);
        if (ops == NULL) {
            char names[512];
            list_names(names, sizeof names);
            return sim_error_set(err, SIM_EUSAGE, NULL, 0, 0,
                                 "--strategies: unknown strategy '%s' (expected some of: %s)", tok, names);
        }
        for (uint32_t i = 0; i < *n; i++)
            if (out[i] == ops)
                return sim_error_set(err, SIM_EUSAGE, NULL, 0, 0, "--strategies: '%s' is listed twice", tok);
        if (*n == CLI_MAX_STRATEGIES)
            return sim_error_set(err, SIM_EUSAGE, NULL, 0, 0, "--strategies: at most %d strategies",
                                 CLI_MAX_STRATEGIES);
        out[(*n)++] = ops;
    }
    if (*n == 0)
        return sim_error_set(err, SIM_EUSAGE, NULL, 0, 0, "--strategies: no strategy named");
    return SIM_OK;
}

sim_status cli_pick_strategy(const cli_args *a, const char *dflt, const strategy_ops **out, sim_error *err)
{
    const char *sname = cli_get(a, "strategy");
    if (sname == NULL)
        sname = dflt;
    *out = registry_find(sname);
    if (*out != NULL)
        return SIM_OK;
    char names[512];
    list_names(names, sizeof names);
    return sim_error_set(err, SIM_EUSAGE, NULL, 0, 0, "--strategy: unknown strategy '%s' (expected one of: %s)", sname,
                         names);
}

sim_status cli_jobs(const cli_args *a, unsigned *jobs, sim_error *err)
{
    const char *v = cli_get(a, "jobs");
    uint64_t n = 0;
    if (v) {
        if (units_parse_u64(v, &n, err) != SIM_OK || n == 0 || n > 256)
            return sim_error_set(err, SIM_EUSAGE, NULL, 0, 0, "--jobs: expected an integer from 1 to 256, not '%s'",
                                 v);
    } else {
        long cpus = sysconf(_SC_NPROCESSORS_ONLN);
        n = cpus > 0 ? (uint64_t)cpus : 1;
        if (n > 8)
            n = 8;
    }
    *jobs = (unsigned)n;
    return SIM_OK;
}

unsigned cli_jobs_for(unsigned jobs, size_t tasks)
{
    if (jobs > tasks)
        return tasks ? (unsigned)tasks : 1;
    return jobs;
}

/* ---------------------------------------------------------------- the prelude */

sim_status cli_input_open(const cli_session *s, int i, const char *from, const input_options *opt,
                          trace_input **out, sim_error *err)
{
    const char *name = s->a.positional[i];
    if (s->io && s->io->mem_name && strcmp(name, s->io->mem_name) == 0)
        return input_open_mem(name, s->io->mem, s->io->mem_len, from, opt, out, err);
    return input_open_named(cli_input_path(s, i), name, from, opt, out, err);
}

/* Natural order: runs of digits compare as numbers, so rank2 < rank10. */
static int natural_cmp(const void *pa, const void *pb)
{
    const char *a = *(const char *const *)pa, *b = *(const char *const *)pb;
    while (*a && *b) {
        if (isdigit((unsigned char)*a) && isdigit((unsigned char)*b)) {
            while (*a == '0' && isdigit((unsigned char)a[1]))
                a++;
            while (*b == '0' && isdigit((unsigned char)b[1]))
                b++;
            size_t na = 0, nb = 0;
            while (isdigit((unsigned char)a[na]))
                na++;
            while (isdigit((unsigned char)b[nb]))
                nb++;
            if (na != nb)
                return na < nb ? -1 : 1;
            int c = strncmp(a, b, na);
            if (c != 0)
                return c;
            a += na;
            b += nb;
        } else {
            if (*a != *b)
                return (unsigned char)*a < (unsigned char)*b ? -1 : 1;
            a++;
            b++;
        }
    }
    return *a ? 1 : *b ? -1 : 0;
}

static bool snapshot_name(const char *name)
{
    size_t n = strlen(name);
    return name[0] != '.' &&
           ((n > 7 && strcmp(name + n - 7, ".pickle") == 0) || (n > 4 && strcmp(name + n - 4, ".pkl") == 0));
}

/* The snapshot files of directory dir, in natural order, appended to s->owned from
 * *first on; *n of them (0: none, dir stays as given). */
static sim_status dir_snapshots(cli_session *s, const char *dir, uint32_t *n)
{
    *n = 0;
    DIR *d = opendir(dir);
    if (d == NULL)
        return sim_error_set(&s->err, SIM_EIO, dir, 0, 0, "cannot read the directory: %s", strerror(errno));
    sim_status st = SIM_OK;
    uint32_t first = s->n_owned;
    for (struct dirent *e = readdir(d); e != NULL && st == SIM_OK; e = readdir(d)) {
        if (!snapshot_name(e->d_name))
            continue;
        size_t len = strlen(dir) + strlen(e->d_name) + 2;
        char *p = malloc(len);
        if (p == NULL) {
            st = sim_error_set(&s->err, SIM_ENOMEM, NULL, 0, 0, "out of memory");
            break;
        }
        snprintf(p, len, "%s%s%s", dir, dir[strlen(dir) - 1] == '/' ? "" : "/", e->d_name);
        struct stat sb;
        if (stat(p, &sb) != 0 || !S_ISREG(sb.st_mode)) {
            free(p);
            continue;
        }
        if (s->n_owned == CLI_MAX_ARGS) {
            free(p);
            st = sim_error_set(&s->err, SIM_EUSAGE, dir, 0, 0, "more than %d snapshot files", CLI_MAX_ARGS);
            break;
        }
        s->owned[s->n_owned++] = p;
    }
    closedir(d);
    if (st == SIM_OK) {
        *n = s->n_owned - first;
        qsort(&s->owned[first], *n, sizeof *s->owned, natural_cmp);
    }
    return st;
}

/* Each positional directory of snapshots becomes its files, and each job directory
 * (jobdir.h: synth --ranks, record --ranks) the traces its job.json lists, the ranks of
 * one job (cli_session_parse_io). */
static sim_status expand_dirs(cli_session *s)
{
    cli_args *a = &s->a;
    for (int i = 0; i < a->n_positional; i++) {
        struct stat sb;
        if (stat(a->positional[i], &sb) != 0 || !S_ISDIR(sb.st_mode))
            continue;
        uint32_t first = s->n_owned, n = 0;
        sim_status st;
        if (jobdir_is_job(a->positional[i])) {
            st = jobdir_traces(a->positional[i], &s->owned[first], CLI_MAX_ARGS - first, &n, &s->err);
            s->n_owned += n;
            s->job = true;
        } else {
            st = dir_snapshots(s, a->positional[i], &n);
        }
        if (st != SIM_OK)
            return st;
        if (n == 0)
            continue;
        if (a->n_positional - 1 + (int)n > CLI_MAX_ARGS)
            return sim_error_set(&s->err, SIM_EUSAGE, NULL, 0, 0, "at most %d traces", CLI_MAX_ARGS);
        size_t at = (size_t)i;
        memmove(&a->positional[at + n], &a->positional[at + 1],
                (size_t)(a->n_positional - i - 1) * sizeof *a->positional);
        for (uint32_t k = 0; k < n; k++)
            a->positional[at + k] = s->owned[first + k];
        a->n_positional += (int)n - 1;
        i += (int)n - 1;
    }
    return SIM_OK;
}

sim_status cli_session_parse(cli_session *s, const cli_command *cmd, int argc, char **argv)
{
    return cli_session_parse_io(s, cmd, NULL, argc, argv);
}

sim_status cli_session_parse_io(cli_session *s, const cli_command *cmd, cli_io *io, int argc, char **argv)
{
    memset(s, 0, sizeof *s);
    s->cmd = cmd;
    s->io = io;
    sim_error_clear(&s->err);
    bool help = false;
    sim_status st = cli_parse_args(cmd->name, cmd->opts, argc, argv, &s->a, &help, &s->err);
    if (st != SIM_OK)
        return st;
    if (help) {
        cmd->help();
        return SIM_END;
    }
    if (cmd->uses & (CLI_USES_TRACES | CLI_USES_INPUTS))
        return expand_dirs(s);
    return SIM_OK;
}

sim_status cli_session_need_traces(cli_session *s)
{
    if (s->a.n_positional > 0)
        return SIM_OK;
    return sim_error_set(&s->err, SIM_EUSAGE, NULL, 0, 0, "no trace given (usage: gpusim %s TRACE... [options])",
                         s->cmd->name);
}

sim_status cli_session_no_arguments(cli_session *s)
{
    if (s->a.n_positional == 0)
        return SIM_OK;
    return sim_error_set(&s->err, SIM_EUSAGE, NULL, 0, 0, "unexpected argument '%s'", s->a.positional[0]);
}

void cli_session_note(cli_session *s, const char *fmt, ...)
{
    char line[2048];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(line, sizeof line, fmt, ap);
    va_end(ap);
    if (s->io && s->io->notes)
        sim_buf_printf(s->io->notes, "%s\n", line);
    else
        fprintf(stderr, "gpusim: %s\n", line);
}

void cli_session_input_warnings(cli_session *s, const trace_input *in)
{
    const trace_header *h = input_header(in);
    for (uint32_t i = 0; i < input_warning_count(in); i++)
        cli_session_note(s, "warning: %s: %s", h->name[0] ? h->name : "trace", input_warning(in, i));
}

static sim_status load_traces(cli_session *s)
{
    uint64_t nccl = 0;
    memset(&s->t, 0, sizeof s->t);
    s->t.from_empty = cli_has(&s->a, "from-empty");
    s->ranks = s->a.n_positional >= 2;
    for (int i = 0; i < s->a.n_positional; i++) {
        trace_input *r = NULL;
        const char *path = s->a.positional[i];
        sim_status st = cli_input_open(s, i, cli_get(&s->a, "from"), &s->iopt, &r, &s->err);
        if (st != SIM_OK)
            return st;
        s->ranks = s->ranks && (s->job || input_get_format(r)->one_rank);
        cli_session_input_warnings(s, r);
        if (i == 0) /* the first trace's NCCL buffers stand for every process */
            st = cli_hdr_nccl(input_header(r)->meta_json, path, &s->hdr, &s->err);
        nccl = i == 0 ? s->hdr.nccl_bytes : nccl;
        if (st == SIM_OK)
            st = batch_traces_add(&s->t, r, path, &s->err);
        input_close(r);
        if (st != SIM_OK)
            return st;
    }
    snprintf(s->hdr.name, sizeof s->hdr.name, "%s", s->t.dev_name);
    s->hdr.nccl_bytes = nccl;
    s->hdr.capacity = s->t.dev_capacity;
    s->hdr.cc_major = s->t.dev_cc_major;
    s->hdr.cc_minor = s->t.dev_cc_minor;
    return SIM_OK;
}

static sim_status open_inputs(cli_session *s)
{
    s->ranks = s->a.n_positional >= 2;
    for (int i = 0; i < s->a.n_positional; i++) {
        sim_status st = cli_input_open(s, i, cli_get(&s->a, "from"), &s->iopt, &s->in[i], &s->err);
        if (st != SIM_OK)
            return st;
        s->n_in++;
        s->ranks = s->ranks && (s->job || input_get_format(s->in[i])->one_rank);
        cli_session_input_warnings(s, s->in[i]);
        s->src[i] = input_source(s->in[i]);
    }
    const trace_header *h = input_header(s->in[0]);
    sim_status st = cli_hdr_nccl(h->meta_json, s->a.positional[0], &s->hdr, &s->err);
    if (st != SIM_OK)
        return st;
    snprintf(s->hdr.name, sizeof s->hdr.name, "%s", h->device_name);
    s->hdr.capacity = h->device_capacity;
    s->hdr.cc_major = h->device_cc_major;
    s->hdr.cc_minor = h->device_cc_minor;
    return SIM_OK;
}

static sim_status strategy_kv(cli_session *s)
{
    /* an option of none of the chosen strategies is a usage error (docs/decisions.md) */
    if (s->n_ops > 0) {
        sim_status st = cli_strategy_opts_apply(&s->a, s->ops, s->n_ops, &s->err);
        if (st != SIM_OK)
            return st;
    }
    s->n_kv = cli_strategy_kv(&s->a, s->kv, CLI_MAX_KV);
    /* a recording's own allocator settings are the default of the option they feed
     * (torch's --alloc-conf: recorded_conf_key) */
    const char *conf = s->n_in > 0 ? input_alloc_conf(s->in[0]) : NULL;
    const strategy_option *rec = s->n_ops == 1 ? registry_recorded_conf(s->ops[0]) : NULL;
    if (conf && rec != NULL && !cli_has(&s->a, rec->cli))
        s->kv[s->n_kv++] = (sim_kv){rec->key, conf};
    return SIM_OK;
}

sim_status cli_session_prepare(cli_session *s, unsigned uses)
{
    sim_status st = SIM_OK;
    sim_error *err = &s->err;
    if ((uses & CLI_USES_FORMAT) && (st = cli_format_json(&s->a, &s->json, err)) != SIM_OK)
        return st;
    if ((uses & CLI_USES_ON_OOM) && (st = cli_on_oom_skip(&s->a, &s->skip_oom, err)) != SIM_OK)
        return st;
    if (uses & CLI_USES_STRATEGY) {
        if ((st = cli_pick_strategy(&s->a, s->cmd->default_strategy, &s->ops[0], err)) != SIM_OK)
            return st;
        s->n_ops = 1;
    }
    if ((uses & CLI_USES_STRATEGIES) && (st = cli_pick_strategies(&s->a, s->ops, &s->n_ops, err)) != SIM_OK)
        return st;
    if ((uses & CLI_USES_JOBS) && (st = cli_jobs(&s->a, &s->jobs, err)) != SIM_OK)
        return st;
    if (uses & (CLI_USES_TRACES | CLI_USES_INPUTS)) {
        if ((st = cli_session_need_traces(s)) != SIM_OK)
            return st;
        if ((uses & CLI_USES_TRACES) && s->a.n_positional > BATCH_MAX_TRACES)
            return sim_error_set(err, SIM_EUSAGE, NULL, 0, 0, "at most %d traces", BATCH_MAX_TRACES);
        if ((st = cli_input_options(&s->a, &s->iopt, err)) != SIM_OK)
            return st;
        if ((st = (uses & CLI_USES_TRACES) ? load_traces(s) : open_inputs(s)) != SIM_OK)
            return st;
    }
    if ((uses & CLI_USES_DEVICE) &&
        cli_resolve_device(&s->a, &s->hdr, &s->dev, err) != SIM_OK) {
        err->status = SIM_EUSAGE; /* a device option that does not hold */
        return SIM_EUSAGE;
    }
    if (uses & CLI_USES_KV)
        st = strategy_kv(s);
    return st;
}

sim_status cli_session_open(cli_session *s, const cli_command *cmd, int argc, char **argv)
{
    return cli_session_open_io(s, cmd, NULL, argc, argv);
}

sim_status cli_session_open_io(cli_session *s, const cli_command *cmd, cli_io *io, int argc, char **argv)
{
    sim_status st = cli_session_parse_io(s, cmd, io, argc, argv);
    return st != SIM_OK ? st : cli_session_prepare(s, cmd->uses);
}

sim_status cli_session_write(cli_session *s, const sim_buf *out)
{
    if (s->io && s->io->out) {
        sim_buf_put(s->io->out, out->data ? out->data : "", out->len);
        return s->io->out->oom ? sim_error_set(&s->err, SIM_ENOMEM, NULL, 0, 0, "out of memory") : SIM_OK;
    }
    const char *outpath = cli_get(&s->a, "output");
    return sim_buf_write_file(out, outpath ? outpath : "-", &s->err);
}

void cli_session_close(cli_session *s)
{
    batch_traces_release(&s->t);
    for (uint32_t i = 0; i < s->n_in; i++)
        input_close(s->in[i]);
    s->n_in = 0;
    for (int i = 0; i < CLI_MAX_ARGS; i++) {
        if (s->spool[i])
            unlink(s->spool[i]);
        free(s->spool[i]);
        s->spool[i] = NULL;
    }
    for (uint32_t i = 0; i < s->n_owned; i++)
        free(s->owned[i]);
    s->n_owned = 0;
}

sim_status cli_report_x(const cli_args *a, bool *time, sim_error *err)
{
    const char *v = cli_get(a, "x");
    *time = v != NULL && strcmp(v, "time") == 0;
    if (v != NULL && !*time && strcmp(v, "event") != 0)
        return sim_error_set(err, SIM_EUSAGE, NULL, 0, 0, "--x: expected event or time, not '%s'", v);
    return SIM_OK;
}

const char *cli_input_path(const cli_session *s, int i)
{
    return s->spool[i] ? s->spool[i] : s->a.positional[i];
}

/* Copy the bytes of `from` ("-": standard input) into a new temporary file. */
static sim_status spool_one(const char *from, char **out, sim_error *err)
{
    const char *dir = getenv("TMPDIR");
    char tmpl[1024];
    snprintf(tmpl, sizeof tmpl, "%s/gpusim-spool-XXXXXX", dir && dir[0] ? dir : "/tmp");
    int fd = mkstemp(tmpl);
    if (fd < 0)
        return sim_error_set(err, SIM_EIO, from, 0, 0, "cannot spool the pipe to a temporary file (%s): %s", tmpl,
                             strerror(errno));
    FILE *in = strcmp(from, "-") == 0 ? stdin : fopen(from, "rb");
    FILE *o = fdopen(fd, "wb");
    sim_status st = SIM_OK;
    if (in == NULL || o == NULL) {
        st = sim_error_set(err, SIM_EIO, from, 0, 0, "cannot open: %s", strerror(errno));
    } else {
        char buf[1 << 16];
        size_t k;
        while ((k = fread(buf, 1, sizeof buf, in)) > 0)
            if (fwrite(buf, 1, k, o) != k) {
                st = sim_error_set(err, SIM_EIO, from, 0, 0, "cannot spool the pipe to %s: %s", tmpl, strerror(errno));
                break;
            }
        if (st == SIM_OK && ferror(in))
            st = sim_error_set(err, SIM_EIO, from, 0, 0, "read failed: %s", strerror(errno));
    }
    if (in && in != stdin)
        fclose(in);
    if (o) {
        if (fclose(o) != 0 && st == SIM_OK)
            st = sim_error_set(err, SIM_EIO, from, 0, 0, "cannot spool the pipe to %s: %s", tmpl, strerror(errno));
    } else {
        close(fd);
    }
    if (st == SIM_OK && (*out = strdup(tmpl)) == NULL)
        st = sim_error_set(err, SIM_ENOMEM, from, 0, 0, "out of memory");
    if (st != SIM_OK)
        unlink(tmpl);
    return st;
}

sim_status cli_spool_pipes(cli_session *s)
{
    for (int i = 0; i < s->a.n_positional; i++) {
        const char *p = s->a.positional[i];
        struct stat sb;
        if (strcmp(p, "-") != 0 && (stat(p, &sb) != 0 || S_ISREG(sb.st_mode) || S_ISDIR(sb.st_mode)))
            continue; /* a file (or an error input_open reports in its words) */
        sim_status st = spool_one(p, &s->spool[i], &s->err);
        if (st != SIM_OK)
            return st;
    }
    return SIM_OK;
}

int cli_session_end(cli_session *s, sim_status st)
{
    cli_session_close(s);
    if (s->io) {
        s->io->err = s->err;
        s->io->err.status = st;
        return st == SIM_OK || st == SIM_END ? 0 : sim_status_exit_code(st);
    }
    return cli_exit(s->cmd->name, st, &s->err);
}

const char *cli_session_ranks_what(const cli_session *s, bool pytorch)
{
    return s->job ? "traces of the job directory" : pytorch ? "PyTorch snapshots" : "snapshots";
}
