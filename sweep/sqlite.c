/* The SQLite form of a sweep's results: the finished JSONL, a row per line. */
#include "sqlite.h"

#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "sim/buf.h"
#include "sim/grow.h"
#include "sweep/shard.h"

static bool ends_with(const char *s, const char *tail)
{
    size_t n = strlen(s), m = strlen(tail);
    return n > m && strcmp(s + n - m, tail) == 0;
}

bool sweep_sqlite_is_db(const char *output)
{
    return output && (ends_with(output, ".sqlite") || ends_with(output, ".sqlite3") || ends_with(output, ".db"));
}

bool sweep_sqlite_journal(const char *db, char *out, size_t cap)
{
    const char *dot = strrchr(db, '.');
    size_t stem = dot ? (size_t)(dot - db) : strlen(db);
    int n = snprintf(out, cap, "%.*s.jsonl", (int)stem, db);
    return n > 0 && (size_t)n < cap;
}

#ifndef GPUSIM_HAVE_SQLITE

bool sweep_sqlite_available(void)
{
    return false;
}

sim_status sweep_sqlite_prepare(const char *db, const char *journal, bool resume, bool force, sim_error *err)
{
    (void)journal;
    (void)resume;
    (void)force;
    return sim_error_set(err, SIM_EUSAGE, NULL, 0, 0,
                         "--output=%s: this gpusim was built without SQLite (apt-get install libsqlite3-dev, then "
                         "rebuild; or write --output=FILE.jsonl)",
                         db);
}

sim_status sweep_sqlite_write(const char *journal, const char *db, sim_error *err)
{
    return sweep_sqlite_prepare(db, journal, false, false, err);
}

#else

#include <cjson/cJSON.h>
#include <sqlite3.h>

bool sweep_sqlite_available(void)
{
    return true;
}

/* ---------------------------------------------------------------- columns */

enum { COL_INT, COL_REAL, COL_TEXT };

typedef struct column {
    char key[160];  /* the flattened JSON key, e.g. "stats_allocation.all.peak" */
    char name[176]; /* its column: stats_allocation_all_peak (name_columns: base, "_", up to 10 digits) */
    int type;
    bool valued; /* some line has a value there, not null */
} column;

typedef struct columns {
    column *v;
    size_t n, cap;
    bool oom;
} columns;

static long find_col(const columns *c, const char *key)
{
    for (size_t i = 0; i < c->n; i++)
        if (strcmp(c->v[i].key, key) == 0)
            return (long)i;
    return -1;
}

static bool integral(double v)
{
    double ip;
    double frac = modf(v, &ip);
    return !(fabs(frac) > 0.0) && fabs(v) < 9007199254740992.0; /* 2^53: exact in a double */
}

static int value_type(const cJSON *v)
{
    if (cJSON_IsNumber(v))
        return integral(v->valuedouble) ? COL_INT : COL_REAL;
    if (cJSON_IsBool(v))
        return COL_INT;
    return COL_TEXT;
}

/* One flattened key of a line: its column name and value (NULL for JSON null). */
typedef void (*leaf_fn)(void *ctx, const char *name, const cJSON *v);

/* The keys of the line's "job" and "result" objects keep their names; another
 * object's keys are prefixed with its name, nested ones with each level's; an
 * array is one value (its JSON text). */
static void flatten(const cJSON *o, const char *prefix, int depth, leaf_fn fn, void *ctx)
{
    for (const cJSON *it = o->child; it; it = it->next) {
        if (it->string == NULL)
            continue;
        char name[160];
        if (depth == 0 && (strcmp(it->string, "job") == 0 || strcmp(it->string, "result") == 0))
            name[0] = '\0';
        else
            snprintf(name, sizeof name, "%s%s%s", prefix, prefix[0] ? "_" : "", it->string);
        if (cJSON_IsObject(it)) {
            flatten(it, name, depth + 1, fn, ctx);
            continue;
        }
        if (name[0])
            fn(ctx, name, it);
    }
}

static void collect(void *ctx, const char *name, const cJSON *v)
{
    columns *c = ctx;
    long i = find_col(c, name);
    int t = cJSON_IsNull(v) ? -1 : value_type(v);
    if (i >= 0) {
        if (t > c->v[i].type) /* int < real < text */
            c->v[i].type = t;
        c->v[i].valued = c->v[i].valued || t >= 0;
        return;
    }
    if (!SIM_GROW(c->v, c->n + 1, c->cap)) {
        c->oom = true;
        return;
    }
    snprintf(c->v[c->n].key, sizeof c->v[c->n].key, "%s", name);
    c->v[c->n].type = t < 0 ? COL_INT : t;
    c->v[c->n].valued = t >= 0;
    c->n++;
}

/* ---------------------------------------------------------------- the journal */

typedef sim_status (*line_fn)(void *ctx, const cJSON *line, const char *text, size_t len, sim_error *err);

static sim_status each_line(const char *journal, line_fn fn, void *ctx, sim_error *err)
{
    FILE *f = fopen(journal, "rb");
    if (f == NULL)
        return sim_error_set(err, SIM_EIO, journal, 0, 0, "cannot read: %s", strerror(errno));
    char *text = NULL;
    size_t cap = 0;
    ssize_t len;
    uint64_t lineno = 0;
    sim_status st = SIM_OK;
    while (st == SIM_OK && (len = getline(&text, &cap, f)) > 0) {
        lineno++;
        while (len > 0 && (text[len - 1] == '\n' || text[len - 1] == '\r'))
            text[--len] = '\0';
        if (len == 0 || (lineno == 1 && sweep_shard_is_header(text, (size_t)len)))
            continue; /* a shard's header (shard.h): the jobs follow */
        cJSON *j = cJSON_ParseWithLength(text, (size_t)len);
        if (j == NULL || !cJSON_IsObject(j))
            st = sim_error_set(err, SIM_EIO, journal, lineno, 0, "not a sweep result line");
        else
            st = fn(ctx, j, text, (size_t)len, err);
        cJSON_Delete(j);
    }
    if (st == SIM_OK && ferror(f))
        st = sim_error_set(err, SIM_EIO, journal, 0, 0, "cannot read: %s", strerror(errno));
    free(text);
    fclose(f);
    return st;
}

/* A key that is null in every line where another line has it as an object (first_oom:
 * null, or the OOM's fields) is only those fields' columns. */
static void drop_null_parents(columns *c)
{
    size_t kept = 0;
    for (size_t i = 0; i < c->n; i++) {
        bool parent = false;
        size_t n = strlen(c->v[i].key);
        for (size_t k = 0; k < c->n && !c->v[i].valued && !parent; k++)
            parent = strncmp(c->v[k].key, c->v[i].key, n) == 0 && c->v[k].key[n] == '_';
        if (!parent)
            c->v[kept++] = c->v[i];
    }
    c->n = kept;
}

static bool name_taken(const columns *c, size_t upto, const char *name)
{
    for (size_t i = 0; i < upto; i++)
        if (strcmp(c->v[i].name, name) == 0)
            return true;
    return false;
}

/* Column names a query can use without quoting: every character of the key that is
 * not a letter, digit or '_' becomes '_' (PyTorch's "allocation.all.peak" under
 * stats is stats_allocation_all_peak), a leading digit or an SQL keyword gets a
 * trailing '_', and a name two keys would share gets _2, _3, ... in column order. */
static void name_columns(columns *c)
{
    for (size_t i = 0; i < c->n; i++) {
        char base[160];
        size_t n = 0;
        for (const char *p = c->v[i].key; *p && n + 2 < sizeof base; p++)
            base[n++] = (isalnum((unsigned char)*p) || *p == '_') ? *p : '_';
        base[n] = '\0';
        if (n == 0 || isdigit((unsigned char)base[0]) || sqlite3_keyword_check(base, (int)n)) {
            base[n++] = '_';
            base[n] = '\0';
        }
        snprintf(c->v[i].name, sizeof c->v[i].name, "%s", base);
        for (int k = 2; name_taken(c, i, c->v[i].name); k++)
            if (snprintf(c->v[i].name, sizeof c->v[i].name, "%s_%d", base, k) < 0)
                break; /* never: the result is used so that -O0 builds see no truncation warning */
    }
}

static sim_status collect_line(void *ctx, const cJSON *line, const char *text, size_t len, sim_error *err)
{
    (void)text;
    (void)len;
    columns *c = ctx;
    flatten(line, "", 0, collect, c);
    return c->oom ? sim_error_set(err, SIM_ENOMEM, NULL, 0, 0, "out of memory") : SIM_OK;
}

/* ---------------------------------------------------------------- the database */

static sim_status db_error(sqlite3 *db, const char *path, sim_error *err)
{
    return sim_error_set(err, SIM_EIO, path, 0, 0, "SQLite: %s", db ? sqlite3_errmsg(db) : "cannot open");
}

typedef struct inserter {
    const columns *c;
    sqlite3_stmt *stmt;
    sqlite3 *db;
    const char *path;
    int64_t job;
} inserter;

static void bind_leaf(void *ctx, const char *name, const cJSON *v)
{
    inserter *in = ctx;
    long i = find_col(in->c, name);
    if (i < 0 || cJSON_IsNull(v))
        return;
    int at = (int)i + 2; /* ?1 is the job */
    if (in->c->v[i].type == COL_TEXT && !cJSON_IsString(v)) {
        char *s = cJSON_PrintUnformatted(v);
        if (s)
            sqlite3_bind_text(in->stmt, at, s, -1, SQLITE_TRANSIENT);
        cJSON_free(s);
    } else if (cJSON_IsString(v)) {
        sqlite3_bind_text(in->stmt, at, v->valuestring, -1, SQLITE_TRANSIENT);
    } else if (cJSON_IsBool(v)) {
        sqlite3_bind_int(in->stmt, at, cJSON_IsTrue(v) ? 1 : 0);
    } else if (in->c->v[i].type == COL_INT) {
        sqlite3_bind_int64(in->stmt, at, (sqlite3_int64)v->valuedouble);
    } else {
        sqlite3_bind_double(in->stmt, at, v->valuedouble);
    }
}

static sim_status insert_line(void *ctx, const cJSON *line, const char *text, size_t len, sim_error *err)
{
    inserter *in = ctx;
    sqlite3_reset(in->stmt);
    sqlite3_clear_bindings(in->stmt);
    sqlite3_bind_int64(in->stmt, 1, ++in->job);
    flatten(line, "", 0, bind_leaf, in);
    sqlite3_bind_text(in->stmt, (int)in->c->n + 2, text, (int)len, SQLITE_TRANSIENT);
    if (sqlite3_step(in->stmt) != SQLITE_DONE)
        return db_error(in->db, in->path, err);
    return SIM_OK;
}

static void append_ident(sim_buf *b, const char *name)
{
    sim_buf_puts(b, "\"");
    for (const char *p = name; *p; p++) {
        if (*p == '"')
            sim_buf_puts(b, "\"\""); /* a quote inside an identifier is doubled */
        else
            sim_buf_put(b, p, 1);
    }
    sim_buf_puts(b, "\"");
}

static sim_status fill(sqlite3 *db, const char *path, const char *journal, const columns *c, sim_error *err)
{
    static const char *const TYPES[] = {"INTEGER", "REAL", "TEXT"};
    sim_buf sql;
    sim_buf_init(&sql);
    sim_buf_puts(&sql, "CREATE TABLE jobs (job INTEGER PRIMARY KEY");
    for (size_t i = 0; i < c->n; i++) {
        sim_buf_puts(&sql, ", ");
        append_ident(&sql, c->v[i].name);
        sim_buf_printf(&sql, " %s", TYPES[c->v[i].type]);
    }
    sim_buf_puts(&sql, ", line TEXT NOT NULL);");
    sim_status st = SIM_OK;
    if (sql.oom)
        st = sim_error_set(err, SIM_ENOMEM, NULL, 0, 0, "out of memory");
    else if (sqlite3_exec(db, "PRAGMA journal_mode=OFF; PRAGMA synchronous=OFF; BEGIN;", NULL, NULL, NULL) !=
                 SQLITE_OK ||
             sqlite3_exec(db, sql.data, NULL, NULL, NULL) != SQLITE_OK)
        st = db_error(db, path, err);
    sim_buf_reset(&sql);
    sim_buf_puts(&sql, "INSERT INTO jobs VALUES (?");
    for (size_t i = 0; i <= c->n; i++)
        sim_buf_puts(&sql, ", ?");
    sim_buf_puts(&sql, ");");
    sqlite3_stmt *stmt = NULL;
    if (st == SIM_OK && sqlite3_prepare_v2(db, sql.data, -1, &stmt, NULL) != SQLITE_OK)
        st = db_error(db, path, err);
    sim_buf_release(&sql);
    if (st == SIM_OK) {
        inserter in = {c, stmt, db, path, 0};
        st = each_line(journal, insert_line, &in, err);
    }
    sqlite3_finalize(stmt);
    if (st == SIM_OK && sqlite3_exec(db, "COMMIT;", NULL, NULL, NULL) != SQLITE_OK)
        st = db_error(db, path, err);
    return st;
}

sim_status sweep_sqlite_write(const char *journal, const char *path, sim_error *err)
{
    columns c = {0};
    sim_status st = each_line(journal, collect_line, &c, err);
    drop_null_parents(&c);
    name_columns(&c);
    for (size_t i = 0; st == SIM_OK && i < c.n; i++)
        if (strcmp(c.v[i].name, "line") == 0 || strcmp(c.v[i].name, "job") == 0)
            st = sim_error_set(err, SIM_EINTERNAL, journal, 0, 0, "a result key is named '%s'", c.v[i].name);
    sim_outfile o;
    if (st == SIM_OK && (st = sim_outfile_open(&o, path, err)) == SIM_OK && (o.is_stdout || o.direct)) {
        sim_outfile_close(&o, false, err);
        st = sim_error_set(err, SIM_EUSAGE, NULL, 0, 0, "--output=%s: an SQLite database must be a regular file",
                           path);
    } else if (st == SIM_OK) {
        sqlite3 *db = NULL;
        if (sqlite3_open_v2(o.tmp, &db, SQLITE_OPEN_READWRITE, NULL) != SQLITE_OK)
            st = db_error(db, path, err);
        else
            st = fill(db, path, journal, &c, err);
        if (sqlite3_close(db) != SQLITE_OK && st == SIM_OK)
            st = db_error(db, path, err);
        st = sim_outfile_finish(&o, st, err);
    }
    free(c.v);
    return st;
}

/* ---------------------------------------------------------------- resume */

static sim_status restore_journal(const char *path, const char *journal, sim_error *err)
{
    sqlite3 *db = NULL;
    sqlite3_stmt *stmt = NULL;
    sim_status st = SIM_OK;
    if (sqlite3_open_v2(path, &db, SQLITE_OPEN_READONLY, NULL) != SQLITE_OK ||
        sqlite3_prepare_v2(db, "SELECT line FROM jobs ORDER BY job;", -1, &stmt, NULL) != SQLITE_OK)
        st = db_error(db, path, err);
    sim_outfile o;
    if (st == SIM_OK && (st = sim_outfile_open(&o, journal, err)) == SIM_OK) {
        int rc;
        while ((rc = sqlite3_step(stmt)) == SQLITE_ROW) {
            fwrite(sqlite3_column_text(stmt, 0), 1, (size_t)sqlite3_column_bytes(stmt, 0), o.fp);
            fputc('\n', o.fp);
        }
        if (rc != SQLITE_DONE)
            st = db_error(db, path, err);
        st = sim_outfile_finish(&o, st, err);
    }
    sqlite3_finalize(stmt);
    sqlite3_close(db);
    return st;
}

static bool nonempty(const char *path)
{
    struct stat sb;
    return stat(path, &sb) == 0 && sb.st_size > 0;
}

sim_status sweep_sqlite_prepare(const char *path, const char *journal, bool resume, bool force, sim_error *err)
{
    if (!nonempty(path) || force)
        return SIM_OK;
    if (!resume)
        return sim_error_set(err, SIM_EUSAGE, NULL, 0, 0,
                             "%s already holds results; use --resume to continue that sweep or --force to start over",
                             path);
    return nonempty(journal) ? SIM_OK : restore_journal(path, journal, err);
}

#endif
