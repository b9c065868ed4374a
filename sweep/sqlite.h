/* sqlite.h — a sweep's results as an SQLite database (`--output=FILE.sqlite`), for
 * teams that query them: one row per job of the finished JSONL, which stays the journal
 * beside it (FILE.jsonl: appended per job, what --resume continues from). */

/* The table `jobs` has the job's identity (job, trace, device, strategy, options), then
 * every key of its JSONL line as a column: the result's keys by their own names
 * (peak_reserved_bytes, ooms, ...), nested ones joined by "_" (fragmentation_at_peak,
 * first_oom_cause, stats_...), the other objects' keys after the object's name
 * (device_capacity_bytes, strategy_options_alloc_conf, error_message), and `line`, the
 * JSONL line itself. Column names need no quoting: other characters than letters, digits
 * and '_' become '_' (stats_allocation_all_peak), SQL keywords get a trailing '_'. Built with SQLite when CMake finds it (libsqlite3-dev); without
 * it, --output=FILE.sqlite is a usage error that says so. */
#ifndef GPUSIM_SWEEP_SQLITE_H
#define GPUSIM_SWEEP_SQLITE_H

#include <stdbool.h>
#include <stddef.h>

#include "sim/status.h"

/* Whether this build writes SQLite. */
bool sweep_sqlite_available(void);
/* Whether an --output names a database: it ends in .sqlite, .sqlite3 or .db. */
bool sweep_sqlite_is_db(const char *output);
/* The journal beside a database: FILE.jsonl for FILE.sqlite. false when it does not fit. */
bool sweep_sqlite_journal(const char *db, char *out, size_t cap);
/* Before a sweep into db: SIM_EUSAGE when this build has no SQLite, or when db
 * already holds results and neither resume nor force is given. With resume and no
 * journal (or an empty one), the journal is first rebuilt from db's lines. */
sim_status sweep_sqlite_prepare(const char *db, const char *journal, bool resume, bool force, sim_error *err);
/* Write db from the finished journal (temporary file + rename, sim_outfile). */
sim_status sweep_sqlite_write(const char *journal, const char *db, sim_error *err);

#endif
