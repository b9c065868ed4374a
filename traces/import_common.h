/* import_common.h — what the importers of recorded formats share (input.h is their
 * front door): the document an importer builds (native events, synthetic
 * start-of-trace allocations, recorded reference values, warnings, header), the
 * address → live-allocation map used for pairing, and helpers to read JSON values
 * with messages that name the file and the record. Not for use outside traces/. */
#ifndef GPUSIM_IMPORT_COMMON_H
#define GPUSIM_IMPORT_COMMON_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "sim/event.h"
#include "sim/idmap.h"
#include "sim/seed.h"
#include "sim/status.h"
#include "traces/format.h"
#include "traces/json.h"
#include "traces/trace.h"

#define IMP_MAX_WARNINGS 16u

typedef struct imp_event {
    uint64_t t, ready_t;     /* ns as recorded (rebased by imp_doc_finish) */
    uint64_t id, size;
    uint64_t rec_allocated, rec_reserved;
    uint64_t str;            /* tag (alloc) or name (mark): 1 + offset into the string pool, 0 = none */
    uint32_t stream;
    uint8_t op;              /* sim_op */
    uint8_t has_point;       /* rec_* are set */
    uint8_t is_oom;          /* a mark for a recorded out-of-memory */
    uint8_t pool_flags;      /* pool_begin: SIM_POOL_*; alloc: IMP_POOL_RECORDED or 0 */
    uint32_t place_seg;      /* alloc: recorded segment number (input_recorded), UINT32_MAX unknown */
    bool has_share;          /* (here, in place_seg's padding: 104 bytes an event) */
    uint64_t place_off;      /* alloc: offset in it */
    uint64_t addr;           /* alloc: the recorded address (snapshots), else 0 */
    uint64_t share;          /* alloc: the id whose memory it shares (has_share) */
    uint64_t pool;           /* pool events: the pool; alloc: the private pool it went to (0: default) */
} imp_event;

/* imp_event.pool_flags of an alloc: the recording named its pool (a trace entry's pool_id) */
#define IMP_POOL_RECORDED 0x80u

typedef struct imp_doc {
    char path[512];
    const input_format *format;
    imp_event *ev;           /* recorded events, in time order */
    size_t n, cap;
    imp_event *pre;          /* synthetic allocations live at the start */
    size_t n_pre, cap_pre;
    /* ids among them whose free was requested before the first entry and had not
     * completed at the end (a snapshot's active_pending_free blocks): neither
     * allocated nor free, so each gets a free at the start (after the allocations)
     * whose memory comes back 1 ns after the last recorded event (imp_doc_finish) */
    uint64_t *pend;
    size_t n_pend, cap_pend;
    char *pool;              /* strings */
    size_t pool_len, pool_cap;
    uint64_t next_id;
    uint64_t t_origin;       /* ns subtracted from every time (the first recorded event's t) */
    trace_header header;
    char *alloc_conf;
    bool has_settings;       /* the recording states its allocator settings (snapshot allocator_settings) */
    char warnings[IMP_MAX_WARNINGS][320];
    uint32_t n_warnings;
    input_recorded rec;
    bool has_allocated, has_reserved;  /* which rec_* columns the importer fills */
    /* after imp_doc_finish */
    sim_event *out;          /* n_pre + n_pend + n events, strings resolved */
    uint64_t *col_alloc, *col_resv;
    uint8_t *col_has;
    uint32_t *col_seg;       /* placements (when has_placement) */
    uint64_t *col_pool;      /* the allocs' private pools (has_placement, and some alloc has one), else NULL */
    uint64_t *col_off;
    uint64_t *oom_idx;
    bool has_placement;
    /* stream ids: recorded stream values → small native stream numbers */
    int64_t *streams;
    uint32_t n_streams, cap_streams;
    sim_error *err;          /* where imp_fail reports */
    /* the allocator state at the first recorded event, when the importer could
     * rebuild it (snapshots): it holds exactly the n_pre allocations at the start */
    bool has_seed;
    sim_seed seed;
    sim_seed_segment *seed_segs; /* owned */
    sim_seed_block *seed_blocks; /* owned */
    sim_range *seed_planned;  /* owned */
    input_end_block *end_blocks; /* owned: rec.end_blocks */
    /* while a binary importer (input_format.import_magic) runs: the bytes it reads,
     * owned by input.c, which the importer may free once it needs them no more
     * (imp_release_input); NULL otherwise. input_len of them; input_mapped: a private
     * read-only mapping of a regular file (munmap'd), else malloc'd (free'd) */
    char **input;
    size_t input_len;
    bool input_mapped;
} imp_doc;

void imp_doc_init(imp_doc *d, const char *path, const input_format *f);
void imp_doc_release(imp_doc *d);
/* Append a recorded event (ids are given by the caller: imp_new_id). NULL on ENOMEM. */
imp_event *imp_push(imp_doc *d);
/* Append a synthetic allocation of size bytes, live at the start of the trace (t = 0),
 * under a new id (imp_new_id). NULL on ENOMEM. */
imp_event *imp_push_pre(imp_doc *d, uint64_t size);
uint64_t imp_new_id(imp_doc *d);
/* Mark start allocation id as freed before the first entry, its free still pending
 * at the end (imp_doc.pend). false on ENOMEM. */
bool imp_pend(imp_doc *d, uint64_t id);
/* Whether the bytes being imported are a mapping of a file, whose pages an importer
 * may hand back as it reads on (the kernel reads them again if they are touched). */
bool imp_input_mapped(const imp_doc *d);
/* Free the bytes being imported now (a pickle, once its DOM is built): the import's
 * peak memory then holds the DOM and the events, not the file too. */
void imp_release_input(imp_doc *d);
/* Copy s into the pool; returns the imp_event.str value (0 on ENOMEM). */
uint64_t imp_str(imp_doc *d, const char *s);
/* The native stream number for a recorded stream value (0 stays 0; others are
 * numbered 1, 2, ... in order of first appearance). UINT32_MAX on ENOMEM. */
uint32_t imp_stream(imp_doc *d, int64_t recorded);
/* printf-style warning for the user (kept at most IMP_MAX_WARNINGS). */
void imp_warn(imp_doc *d, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* Rebase times, build the output arrays and the recorded curves. extra_meta is
 * a JSON fragment of more "imported_from" members (",\"device\":1"), or "". */
sim_status imp_doc_finish(imp_doc *d, const char *extra_meta, sim_error *err);

/* ---- address → value map: the engine's id map (sim/idmap.h) indexes records kept
 * here, so there is one hash table in gpusim. Records live in slots[0..cap) (iterate
 * them and skip !used); a pointer from find/insert is valid until the next insert. */
typedef struct imp_map_slot {
    uint64_t key;
    uint64_t a, b, c;        /* the importer's values */
    bool used;
} imp_map_slot;

typedef struct imp_map {
    imp_map_slot *slots;
    size_t cap, n;           /* records made (iterate these), records in use */
    size_t alloc;            /* room in slots */
    size_t free_head;        /* index + 1 of the first free record (0 = none), chained through .a */
    idmap index;             /* key → record index (in the entry's size field) */
    bool ready;
} imp_map;

void imp_map_init(imp_map *m);
void imp_map_release(imp_map *m);
imp_map_slot *imp_map_find(imp_map *m, uint64_t key);
/* Insert key (must be absent); NULL on ENOMEM. */
imp_map_slot *imp_map_insert(imp_map *m, uint64_t key);
void imp_map_remove(imp_map *m, imp_map_slot *s);

/* ---- reading JSON values; every error is SIM_ETRACE naming the file, the JSON
 * line (0 for pickles) and the record, e.g. "traceEvents[812]" */
typedef struct imp_loc {
    const char *name;        /* "traceEvents", "device_traces[0]" */
    uint64_t i;              /* index in it */
} imp_loc;

/* "name[i]" into buf. */
const char *imp_loc_text(const imp_loc *l, char *buf, size_t cap);
/* Fill err: "<loc>: <message>" at the value's line. */
sim_status imp_fail(const imp_doc *d, const json_value *at, const imp_loc *l, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
/* Where imp_fail and the getters report (set before an import starts). */
void imp_set_err(imp_doc *d, sim_error *err);
/* An integer as number or decimal string ("123", as protobuf JSON writes int64),
 * 0 ≤ value ≤ max. Missing and not required: *present false, *out untouched. */
sim_status imp_get_u64(const imp_doc *d, const json_value *obj, const char *key, bool required, uint64_t max,
                       uint64_t *out, bool *present, const imp_loc *l);
/* Same for signed values, |value| ≤ 2^63−1. */
sim_status imp_get_i64(const imp_doc *d, const json_value *obj, const char *key, bool required, int64_t *out,
                       bool *present, const imp_loc *l);
/* A string member, NULL if missing (or null); an error if of another type. */
sim_status imp_get_str(const imp_doc *d, const json_value *obj, const char *key, bool required,
                       const char **out, const imp_loc *l);
/* A non-negative number's text (maybe fractional, maybe with an exponent) × 10^pow10,
 * exactly, truncated to an integer: µs → ns is pow10 = 3, ps → ns is −3. A decimal
 * string is accepted too. false when negative, not a number or above 2^64−1. */
bool imp_decimal_scaled(const json_value *v, int pow10, uint64_t *out);
/* The basename of a path. */
const char *imp_basename(const char *path);

#endif
