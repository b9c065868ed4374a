/* Shards' results merged into one run's. */
#include "merge.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "sweep/results.h"
#include "sweep/shard.h"
#include "sweep/spec.h"
#include "sweep/sqlite.h"

#define NO_FILE UINT32_MAX

typedef struct merge_input {
    char path[1024]; /* the JSONL read: the file given, or a database's journal */
    sweep_shard_info info;
} merge_input;

static bool same_file(const char *a, const char *b)
{
    struct stat sa, sb;
    return stat(a, &sa) == 0 && stat(b, &sb) == 0 && sa.st_dev == sb.st_dev && sa.st_ino == sb.st_ino;
}

/* Read every shard's header; check they are of one spec and partition, each shard once. */
static sim_status read_headers(const char *out, const char *const *shards, uint32_t n, merge_input *in,
                               uint32_t **by_shard, sim_error *err)
{
    *by_shard = NULL;
    for (uint32_t i = 0; i < n; i++) {
        const char *p = shards[i];
        if (sweep_sqlite_is_db(p) && !sweep_sqlite_journal(p, in[i].path, sizeof in[i].path))
            return sim_error_set(err, SIM_EUSAGE, p, 0, 0, "the path is too long");
        if (!sweep_sqlite_is_db(p) && snprintf(in[i].path, sizeof in[i].path, "%s", p) >= (int)sizeof in[i].path)
            return sim_error_set(err, SIM_EUSAGE, p, 0, 0, "the path is too long");
        if (strcmp(in[i].path, out) == 0 || same_file(in[i].path, out) || same_file(p, out))
            return sim_error_set(err, SIM_EUSAGE, out, 0, 0,
                                 "is one of the shards' results files; merge into another file");
        sim_status st = sweep_shard_read_header(in[i].path, &in[i].info, err);
        if (st != SIM_OK)
            return st;
        const sweep_shard_info *a = &in[0].info, *b = &in[i].info;
        if (a->spec_hash != b->spec_hash || a->shards != b->shards || a->partition != b->partition)
            return sim_error_set(err, SIM_EUSAGE, NULL, 0, 0,
                                 "%s and %s are not shards of one sweep: %s (spec %s, hash %016llx, %u shards, "
                                 "partition %016llx) against (spec %s, hash %016llx, %u shards, partition %016llx)",
                                 in[0].path, in[i].path,
                                 a->spec_hash != b->spec_hash ? "their specs differ"
                                 : a->shards != b->shards     ? "they were cut into different numbers of shards"
                                                              : "their trace files differed (sizes), so the jobs "
                                                                "were cut differently",
                                 a->spec, (unsigned long long)a->spec_hash, a->shards, (unsigned long long)a->partition,
                                 b->spec, (unsigned long long)b->spec_hash, b->shards,
                                 (unsigned long long)b->partition);
    }
    uint32_t *seen = malloc((size_t)in[0].info.shards * sizeof *seen);
    if (seen == NULL)
        return sim_error_set(err, SIM_ENOMEM, NULL, 0, 0, "out of memory");
    for (uint32_t k = 0; k < in[0].info.shards; k++)
        seen[k] = NO_FILE;
    for (uint32_t i = 0; i < n; i++) {
        uint32_t k = in[i].info.shard;
        if (seen[k] != NO_FILE) {
            sim_status st = sim_error_set(err, SIM_EUSAGE, NULL, 0, 0, "shard %u/%u is given twice: %s and %s", k,
                                          in[i].info.shards, in[seen[k]].path, in[i].path);
            free(seen);
            return st;
        }
        seen[k] = i;
    }
    *by_shard = seen;
    return SIM_OK;
}

/* "1, 4, 5 of 7" (at most 20 named) for a message. */
static void missing_list(const uint32_t *by_shard, uint32_t shards, char *buf, size_t cap)
{
    size_t at = 0;
    uint32_t named = 0, missing = 0;
    buf[0] = '\0';
    for (uint32_t k = 0; k < shards; k++) {
        if (by_shard[k] != NO_FILE)
            continue;
        if (named < 20 && at < cap) {
            int w = snprintf(buf + at, cap - at, "%s%u", named ? ", " : "", k);
            at += w > 0 ? (size_t)w : 0;
            named++;
        }
        missing++;
    }
    if (missing > named && at < cap)
        snprintf(buf + at, cap - at, " and %u more", missing - named);
}

/* The spec the shards ran: opts.spec, else the path their header names, from here or
 * else from the first shard's directory (where results go by default); named in the
 * summary as the shards named it, so that the summary is the one run's. Checked against
 * the header (hash), with its partition. */
static sim_status load_spec(const merge_input *in, const sweep_merge_opts *opts, sweep_spec **spec,
                            sweep_partition **part, sim_error *err)
{
    const sweep_shard_info *h = &in->info;
    const char *path = opts->spec ? opts->spec : h->spec;
    char beside[2100];
    sim_status st = sweep_spec_load(path, 0, spec, err);
    const char *slash = strrchr(in->path, '/');
    if (st == SIM_EIO && opts->spec == NULL && h->spec[0] != '/' && slash) {
        snprintf(beside, sizeof beside, "%.*s/%s", (int)(slash - in->path), in->path, h->spec);
        if (access(beside, F_OK) == 0) {
            path = beside;
            st = sweep_spec_load(path, 0, spec, err);
        }
    }
    if (st != SIM_OK) {
        if (opts->spec == NULL && st == SIM_EIO)
            return sim_error_set(err, st, path, 0, 0,
                                 "cannot read the spec the shards name (give --spec=FILE where it is now)");
        return st;
    }
    if ((*spec)->hash != h->spec_hash)
        return sim_error_set(err, SIM_EUSAGE, path, 0, 0,
                             "is not the spec the shards ran: it changed since (hash %016llx, the shards' %016llx); "
                             "run the shards again",
                             (unsigned long long)(*spec)->hash, (unsigned long long)h->spec_hash);
    char *named = strdup(h->spec);
    if (named == NULL)
        return sim_error_set(err, SIM_ENOMEM, NULL, 0, 0, "out of memory");
    free((*spec)->path);
    (*spec)->path = named;
    if ((st = sweep_partition_new(*spec, h->shards, part, err)) != SIM_OK)
        return st;
    if (sweep_partition_key(*part) != h->partition)
        return sim_error_set(err, SIM_EUSAGE, path, 0, 0,
                             "its trace files changed since the shards ran (their sizes differ), so the jobs "
                             "would be cut differently; run the shards again");
    return SIM_OK;
}

sim_status sweep_merge(const char *out, const char *const *shards, uint32_t n, const sweep_merge_opts *opts,
                       sim_buf *text, sim_buf *json, sweep_merge_report *rep, sim_error *err)
{
    memset(rep, 0, sizeof *rep);
    if (n == 0)
        return sim_error_set(err, SIM_EUSAGE, NULL, 0, 0, "no shard results given");
    /* OUT.sqlite: the JSONL beside it, then the database from it, as a sweep writes them */
    const char *db = sweep_sqlite_is_db(out) ? out : NULL;
    char journal[1024];
    if (db && !sweep_sqlite_available())
        return sim_error_set(err, SIM_EUSAGE, NULL, 0, 0,
                             "%s: this gpusim was built without SQLite (install libsqlite3-dev and reconfigure)", db);
    if (db && !sweep_sqlite_journal(db, journal, sizeof journal))
        return sim_error_set(err, SIM_EUSAGE, db, 0, 0, "the path is too long");
    const char *dest = db ? journal : out;
    sweep_shard_info own;
    if (access(dest, F_OK) == 0 && sweep_shard_read_header(dest, &own, err) == SIM_OK)
        return sim_error_set(err, SIM_EUSAGE, dest, 0, 0,
                             "is a shard's results file (shard %u/%u); merge into another file", own.shard, own.shards);
    merge_input *in = calloc(n, sizeof *in);
    if (in == NULL)
        return sim_error_set(err, SIM_ENOMEM, NULL, 0, 0, "out of memory");
    uint32_t *by_shard = NULL;
    sweep_spec *spec = NULL;
    sweep_partition *part = NULL;
    sweep_results *res = NULL;
    char work[1100] = "";
    sim_status st = read_headers(dest, shards, n, in, &by_shard, err);
    if (st == SIM_OK)
        st = load_spec(&in[0], opts, &spec, &part, err);
    const uint32_t count = in[0].info.shards;
    if (st == SIM_OK && !opts->partial && n < count) {
        char list[200];
        missing_list(by_shard, count, list, sizeof list);
        st = sim_error_set(err, SIM_EUSAGE, NULL, 0, 0,
                           "shard(s) %s of %u missing (give every shard's results, or --partial to merge those "
                           "there are)",
                           list, count);
    }
    for (uint32_t i = 0; st == SIM_OK && i < n; i++) {
        uint64_t first, end;
        sweep_partition_range(part, in[i].info.shard, &first, &end);
        if (first != in[i].info.first_job || end - first != in[i].info.jobs)
            st = sim_error_set(err, SIM_EUSAGE, in[i].path, 1, 0,
                               "its header says jobs %llu to %llu, the partition of this spec jobs %llu to %llu",
                               (unsigned long long)in[i].info.first_job,
                               (unsigned long long)(in[i].info.first_job + in[i].info.jobs), (unsigned long long)first,
                               (unsigned long long)end);
    }
    if (st == SIM_OK) {
        int fd = -1;
        if (snprintf(work, sizeof work, "%s.merge-XXXXXX", dest) >= (int)sizeof work || (fd = mkstemp(work)) < 0) {
            st = sim_error_set(err, SIM_EIO, dest, 0, 0, "cannot write beside it: %s", strerror(errno));
            work[0] = '\0';
        } else {
            close(fd);
            st = sweep_results_open(spec, work, false, true, &res, err);
        }
    }
    /* in shard order, each shard's jobs as its file holds them */
    for (uint32_t k = 0; st == SIM_OK && k < count; k++) {
        if (by_shard[k] == NO_FILE)
            continue;
        const merge_input *m = &in[by_shard[k]];
        uint64_t first, end, got = 0;
        sweep_partition_range(part, k, &first, &end);
        st = sweep_results_absorb(res, m->path, first, end, &got, err);
        if (st == SIM_OK && got < end - first) {
            rep->unfinished++;
            if (!opts->partial)
                st = sim_error_set(err, SIM_EUSAGE, m->path, 0, 0,
                                   "shard %u/%u holds %llu of its %llu jobs: not finished (run it again with "
                                   "--resume, or merge with --partial)",
                                   k, count, (unsigned long long)got, (unsigned long long)(end - first));
        }
        rep->done += got;
        rep->given++;
    }
    int code = 0;
    if (st == SIM_OK)
        st = sweep_results_finish_into(res, dest, text, json, &code, err);
    if (st == SIM_OK && db)
        st = sweep_sqlite_write(dest, db, err);
    sweep_results_close(res);
    if (work[0] && access(work, F_OK) == 0)
        unlink(work);
    rep->shards = count;
    rep->jobs = spec ? sweep_spec_jobs(spec) : 0;
    rep->exit_code = code;
    sweep_partition_free(part);
    sweep_spec_free(spec);
    free(by_shard);
    free(in);
    return st;
}
