/* The binary trace container (gtrace.h; byte layout in traces/FORMAT.md).
 *
 * Encoding of one event (all integers little-endian; varint = unsigned LEB128,
 * at most 10 bytes; zigzag maps a signed difference to an unsigned varint):
 *   u8 head        bits 0-1 op (4 + them when E), bit 2 S (string: alloc tag / mark
 *                  or graph_replay name), bit 3 P (proc), bit 4 R (alloc: stream ≠ 0 /
 *                  free: ready_t > t), bit 5 L (explicit line), bit 6 X (alloc: share),
 *                  bit 7 E (a pool op: older readers refuse it as a bad event)
 *   varint dt      t − previous event's t
 *   alloc, free:   varint zigzag(id − previous alloc/free id)
 *   alloc:         varint size; R: varint stream; X: varint zigzag(share − id);
 *                  S: varint tag string index
 *   free:          R: varint ready_t − t; S: varint ready_stream (a free has no string)
 *   mark:          S (required): varint name string index
 *   pool ops (E):  varint pool (≥ 1); pool_begin: varint flags (SIM_POOL_*), and
 *                  unless ALL_STREAMS varint stream; graph_replay: S: varint name index
 *   any:           P: varint proc string index; L: varint line (else previous line + 1)
 * The delta state (t, id, line = 1) runs on across blocks; string indices are
 * local to their block. */
#include "gtrace.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "json.h"
#include "sim/buf.h"
#include "sim/grow.h"
#include "sim/hash.h"

#define HEAD_OP 3u
#define HEAD_S 4u
#define HEAD_P 8u
#define HEAD_R 16u
#define HEAD_L 32u
#define HEAD_X 64u /* alloc: a share follows */
#define HEAD_E 0x80u /* an extended op: 4 + bits 0-1 (the pool events) */
#define POOL_FLAGS_ALL (SIM_POOL_ALL_STREAMS | SIM_POOL_CAPTURE | SIM_POOL_USE_ON_OOM | SIM_POOL_NO_SPLIT)

#define HEADER_MAX ((uint32_t)80 << 20)     /* name + device + meta (a JSONL line is ≤ 64 MiB) */
#define WRITER_BLOCK_BYTES ((size_t)1 << 20) /* the writer closes a block at about this size */

bool gtrace_is_magic(const void *p, size_t n)
{
    return n >= GTRACE_MAGIC_LEN && memcmp(p, GTRACE_MAGIC, GTRACE_MAGIC_LEN) == 0;
}

/* ---------------------------------------------------------------- CRC-32C */

void gtrace_crc_init(gtrace_crc *c)
{
    for (uint32_t i = 0; i < 256; i++) {
        uint32_t v = i;
        for (int k = 0; k < 8; k++)
            v = (v & 1u) ? (v >> 1) ^ 0x82F63B78u : v >> 1;
        c->t[0][i] = v;
    }
    for (uint32_t i = 0; i < 256; i++)
        for (int j = 1; j < 8; j++)
            c->t[j][i] = (c->t[j - 1][i] >> 8) ^ c->t[0][c->t[j - 1][i] & 0xFFu];
}

static inline uint32_t le32(const uint8_t *p)
{
    return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

static inline uint64_t le64(const uint8_t *p)
{
    return (uint64_t)le32(p) | (uint64_t)le32(p + 4) << 32;
}

static inline void put32(uint8_t *p, uint32_t v)
{
    p[0] = (uint8_t)v;
    p[1] = (uint8_t)(v >> 8);
    p[2] = (uint8_t)(v >> 16);
    p[3] = (uint8_t)(v >> 24);
}

uint32_t gtrace_crc_update(const gtrace_crc *c, uint32_t crc, const void *data, size_t n)
{
    const uint8_t *p = data;
    crc = ~crc;
    while (n >= 8) {
        uint32_t lo = le32(p) ^ crc, hi = le32(p + 4);
        crc = c->t[7][lo & 0xFFu] ^ c->t[6][(lo >> 8) & 0xFFu] ^ c->t[5][(lo >> 16) & 0xFFu] ^ c->t[4][lo >> 24] ^
              c->t[3][hi & 0xFFu] ^ c->t[2][(hi >> 8) & 0xFFu] ^ c->t[1][(hi >> 16) & 0xFFu] ^ c->t[0][hi >> 24];
        p += 8;
        n -= 8;
    }
    while (n--)
        crc = c->t[0][(crc ^ *p++) & 0xFFu] ^ (crc >> 8);
    return ~crc;
}

/* ---------------------------------------------------------------- bytes */

typedef struct bytes {
    uint8_t *p;
    size_t len, cap;
} bytes;

static bool bytes_reserve(bytes *b, size_t extra)
{
    return extra <= SIZE_MAX - b->len && SIM_GROW(b->p, b->len + extra, b->cap);
}

/* Callers reserve ≥ 10 bytes first. */
static inline void put_varint(bytes *b, uint64_t v)
{
    uint8_t *o = b->p + b->len;
    while (v >= 0x80) {
        *o++ = (uint8_t)(v | 0x80);
        v >>= 7;
    }
    *o++ = (uint8_t)v;
    b->len = (size_t)(o - b->p);
}

static inline uint64_t zigzag(uint64_t d)
{
    return (d << 1) ^ (0 - (d >> 63));
}

static inline uint64_t unzigzag(uint64_t z)
{
    return (z >> 1) ^ (0 - (z & 1));
}

/* ---------------------------------------------------------------- reader */

struct gtrace_reader {
    char path[512];
    FILE *fp;                 /* file mode */
    uint8_t prefix[64];
    size_t prefix_len, prefix_pos;
    const uint8_t *mem;       /* memory mode */
    size_t mem_len, mem_pos;
    uint8_t *buf;             /* file mode: the current block */
    size_t buf_cap;
    /* the current block */
    const uint8_t *p, *end;
    uint32_t left;            /* events left in the block */
    const char **strs;
    uint32_t n_strs, strs_cap;
    bool done;
    /* delta state */
    uint64_t t, id, line;
    uint64_t index;
    gtrace_crc crc;
};

/* Read exactly n bytes: *out points at them (valid until the next read). *got is
 * the number of bytes available when fewer (0 at a clean end of input). */
static sim_status take(gtrace_reader *r, size_t n, const uint8_t **out, size_t *got, sim_error *err)
{
    *got = 0;
    if (r->mem) {
        size_t avail = r->mem_len - r->mem_pos;
        *out = r->mem + r->mem_pos;
        *got = avail < n ? avail : n;
        r->mem_pos += *got;
        return SIM_OK;
    }
    if (!SIM_GROW(r->buf, n, r->buf_cap))
        return sim_error_set(err, SIM_ENOMEM, r->path, 0, 0, "out of memory reading a block");
    size_t have = 0;
    while (have < n && r->prefix_pos < r->prefix_len)
        r->buf[have++] = r->prefix[r->prefix_pos++];
    if (have < n) {
        have += fread(r->buf + have, 1, n - have, r->fp);
        if (have < n && ferror(r->fp))
            return sim_error_set(err, SIM_EIO, r->path, 0, 0, "read failed: %s", strerror(errno));
    }
    *out = r->buf;
    *got = have;
    return SIM_OK;
}

static sim_status corrupt(gtrace_reader *r, sim_error *err, const char *what)
{
    return sim_error_set(err, SIM_ETRACE, r->path, 0, r->index, "corrupt gtrace: %s", what);
}

/* Decoders over [*p, end): false when the input ends or a varint is malformed. */
static inline bool get_varint(const uint8_t **pp, const uint8_t *end, uint64_t *out)
{
    const uint8_t *p = *pp;
    if (p < end && *p < 0x80) {
        *out = *p;
        *pp = p + 1;
        return true;
    }
    uint64_t v = 0;
    for (unsigned shift = 0; shift < 64; shift += 7) {
        if (p >= end)
            return false;
        uint8_t b = *p++;
        if (shift == 63 && b > 1)
            return false; /* more than 64 bits */
        v |= (uint64_t)(b & 0x7F) << shift;
        if (b < 0x80) {
            *out = v;
            *pp = p;
            return true;
        }
    }
    return false;
}

/* A header string of fewer than cap bytes into dst (cap includes the NUL). */
static bool get_hstr(const uint8_t **p, const uint8_t *end, char *dst, size_t cap)
{
    uint64_t n;
    if (!get_varint(p, end, &n) || n >= cap || n > (uint64_t)(end - *p))
        return false;
    memcpy(dst, *p, (size_t)n);
    dst[n] = '\0';
    *p += n;
    return memchr(dst, '\0', (size_t)n) == NULL;
}

static sim_status read_header(gtrace_reader *r, trace_header *h, sim_error *err)
{
    const uint8_t *p;
    size_t got;
    sim_status st;
    if ((st = take(r, 12, &p, &got, err)) != SIM_OK)
        return st;
    if (got < 12 || !gtrace_is_magic(p, got))
        return got >= GTRACE_MAGIC_LEN && !gtrace_is_magic(p, got) ? corrupt(r, err, "bad magic")
                                                                   : corrupt(r, err, "truncated header");
    uint8_t fixed[8];
    memcpy(fixed, p + 8, 4);
    uint32_t version = le32(fixed);
    if (version != GTRACE_VERSION)
        return sim_error_set(err, SIM_ETRACE, r->path, 0, 0,
                             "gtrace container version %u is not supported (this gpusim reads version %u)",
                             version, GTRACE_VERSION);
    if ((st = take(r, 4, &p, &got, err)) != SIM_OK)
        return st;
    if (got < 4)
        return corrupt(r, err, "truncated header");
    memcpy(fixed + 4, p, 4);
    uint32_t len = le32(fixed + 4);
    if (len > HEADER_MAX)
        return corrupt(r, err, "header too large");
    if ((st = take(r, (size_t)len + 4, &p, &got, err)) != SIM_OK)
        return st;
    if (got < (size_t)len + 4)
        return corrupt(r, err, "truncated header");
    uint32_t crc = gtrace_crc_update(&r->crc, 0, fixed, 8);
    crc = gtrace_crc_update(&r->crc, crc, p, len);
    if (crc != le32(p + len))
        return corrupt(r, err, "header checksum mismatch");
    const uint8_t *q = p, *end = p + len;
    uint64_t flags = 0, cap = 0;
    memset(h, 0, sizeof *h);
    snprintf(h->time_unit, sizeof h->time_unit, "ns");
    h->ns_per_unit = 1;
    if (!get_varint(&q, end, &flags) || flags > 3 || !get_hstr(&q, end, h->name, sizeof h->name) ||
        !get_hstr(&q, end, h->device_name, sizeof h->device_name) || !get_varint(&q, end, &cap))
        return corrupt(r, err, "bad header");
    h->device_capacity = cap;
    if (flags & 2) { /* the device's compute capability */
        uint64_t maj = 0, min = 0;
        if (!get_varint(&q, end, &maj) || !get_varint(&q, end, &min) || maj == 0 || maj > 99 || min > 99)
            return corrupt(r, err, "bad header compute capability");
        h->device_cc_major = (unsigned)maj;
        h->device_cc_minor = (unsigned)min;
    }
    if (flags & 1) {
        uint64_t n;
        if (!get_varint(&q, end, &n) || n == 0 || n > (uint64_t)(end - q))
            return corrupt(r, err, "bad header meta");
        /* meta is written back verbatim into JSON: it must be one valid JSON value */
        json_parser *jp = json_parser_new();
        char msg[128];
        if (jp == NULL)
            return sim_error_set(err, SIM_ENOMEM, r->path, 0, 0, "out of memory");
        const json_value *v = json_parse(jp, (const char *)q, (size_t)n, 1, msg, sizeof msg);
        json_parser_free(jp);
        if (v == NULL || memchr(q, '\0', (size_t)n) != NULL || memchr(q, '\n', (size_t)n) != NULL)
            return corrupt(r, err, "header meta is not one line of JSON");
        h->meta_json = malloc((size_t)n + 1);
        if (h->meta_json == NULL)
            return sim_error_set(err, SIM_ENOMEM, r->path, 0, 0, "out of memory");
        memcpy(h->meta_json, q, (size_t)n);
        h->meta_json[n] = '\0';
        q += n;
    }
    if (q != end) {
        free(h->meta_json);
        h->meta_json = NULL;
        return corrupt(r, err, "bad header length");
    }
    return SIM_OK;
}

/* Read, verify and index the next block. */
static sim_status next_block(gtrace_reader *r, sim_error *err)
{
    const uint8_t *p;
    size_t got;
    sim_status st;
    if ((st = take(r, 12, &p, &got, err)) != SIM_OK)
        return st;
    if (got < 12)
        return corrupt(r, err, "truncated (no end block)");
    uint8_t bh[8];
    memcpy(bh, p, 8);
    uint32_t n_events = le32(bh), len = le32(bh + 4), want = le32(p + 8);
    if (len > GTRACE_MAX_BLOCK)
        return corrupt(r, err, "block too large");
    if (n_events == 0 ? len != 8 : (len < 2 || n_events > len / 2))
        return corrupt(r, err, "bad block header");
    if ((st = take(r, len, &p, &got, err)) != SIM_OK)
        return st;
    if (got < len)
        return corrupt(r, err, "truncated block");
    uint32_t crc = gtrace_crc_update(&r->crc, 0, bh, 8);
    if (gtrace_crc_update(&r->crc, crc, p, len) != want)
        return corrupt(r, err, "block checksum mismatch");
    if (n_events == 0) {
        if (le64(p) != r->index)
            return corrupt(r, err, "the end block's event count does not match the events read");
        const uint8_t *q;
        if ((st = take(r, 1, &q, &got, err)) != SIM_OK)
            return st;
        if (got != 0)
            return corrupt(r, err, "data after the end block");
        r->done = true;
        return SIM_OK;
    }
    const uint8_t *q = p, *end = p + len;
    uint64_t ns;
    if (!get_varint(&q, end, &ns) || ns > len)
        return corrupt(r, err, "bad string table");
    if (!SIM_GROW(r->strs, ns, r->strs_cap))
        return sim_error_set(err, SIM_ENOMEM, r->path, 0, 0, "out of memory");
    for (uint64_t i = 0; i < ns; i++) {
        uint64_t n;
        if (!get_varint(&q, end, &n) || n >= (uint64_t)(end - q) || q[n] != '\0' || memchr(q, '\0', (size_t)n))
            return corrupt(r, err, "bad string table");
        r->strs[i] = (const char *)q;
        q += n + 1;
    }
    r->n_strs = (uint32_t)ns;
    r->p = q;
    r->end = end;
    r->left = n_events;
    return SIM_OK;
}

static sim_status reader_init(gtrace_reader *r, trace_header *h, gtrace_reader **out, sim_error *err)
{
    gtrace_crc_init(&r->crc);
    r->line = 1;
    sim_status st = read_header(r, h, err);
    if (st != SIM_OK) {
        gtrace_close(r);
        *out = NULL;
        return st;
    }
    *out = r;
    return SIM_OK;
}

sim_status gtrace_open_file(const char *path, FILE *fp, const void *prefix, size_t prefix_len, trace_header *h,
                            gtrace_reader **out, sim_error *err)
{
    *out = NULL;
    gtrace_reader *r = calloc(1, sizeof *r);
    if (r == NULL || prefix_len > sizeof r->prefix) {
        free(r);
        fclose(fp);
        return sim_error_set(err, SIM_ENOMEM, path, 0, 0, "out of memory");
    }
    snprintf(r->path, sizeof r->path, "%s", path);
    r->fp = fp;
    memcpy(r->prefix, prefix, prefix_len);
    r->prefix_len = prefix_len;
    return reader_init(r, h, out, err);
}

sim_status gtrace_open_mem(const char *name, const void *data, size_t len, trace_header *h, gtrace_reader **out,
                           sim_error *err)
{
    *out = NULL;
    gtrace_reader *r = calloc(1, sizeof *r);
    if (r == NULL)
        return sim_error_set(err, SIM_ENOMEM, name, 0, 0, "out of memory");
    snprintf(r->path, sizeof r->path, "%s", name);
    static const uint8_t none[1] = {0};
    r->mem = len ? data : none;
    r->mem_len = len;
    return reader_init(r, h, out, err);
}

void gtrace_close(gtrace_reader *r)
{
    if (r == NULL)
        return;
    if (r->fp)
        fclose(r->fp);
    free(r->buf);
    free(r->strs);
    free(r);
}

static inline bool get_str(gtrace_reader *r, const uint8_t **p, const char **out)
{
    uint64_t i;
    if (!get_varint(p, r->end, &i) || i >= r->n_strs)
        return false;
    *out = r->strs[i];
    return true;
}

sim_status gtrace_next(gtrace_reader *r, sim_event *ev, sim_error *err)
{
    while (r->left == 0) {
        if (r->done)
            return SIM_END;
        if (r->p != r->end)
            return corrupt(r, err, "bytes left at the end of a block");
        sim_status st = next_block(r, err);
        if (st != SIM_OK)
            return st;
    }
    r->index++;
    const uint8_t *p = r->p, *end = r->end;
    if (p >= end)
        return corrupt(r, err, "truncated event");
    unsigned head = *p++;
    uint64_t dt, v;
    if (!get_varint(&p, end, &dt))
        return corrupt(r, err, "bad event");
    if (dt > UINT64_MAX - r->t)
        return corrupt(r, err, "time overflows");
    uint64_t t = r->t + dt;
    ev->op = (sim_op)((head & HEAD_OP) + ((head & HEAD_E) ? (unsigned)SIM_OP_POOL_BEGIN : 0u));
    ev->t = ev->ready_t = t;
    ev->id = ev->size = 0;
    ev->stream = 0;
    ev->has_ready_stream = false;
    ev->ready_stream = 0;
    ev->has_share = false;
    ev->share = 0;
    ev->pool = 0;
    ev->pool_flags = 0;
    ev->tag = ev->name = ev->proc = NULL;
    if ((head & HEAD_X) && ev->op != SIM_OP_ALLOC)
        return corrupt(r, err, "only an alloc shares");
    switch (ev->op) {
    case SIM_OP_ALLOC:
    case SIM_OP_FREE:
        if (!get_varint(&p, end, &v))
            return corrupt(r, err, "bad id");
        ev->id = r->id + unzigzag(v);
        if (ev->id > SIM_MAX_SIZE)
            return corrupt(r, err, "id exceeds 2^53");
        r->id = ev->id;
        if (ev->op == SIM_OP_ALLOC) {
            if (!get_varint(&p, end, &ev->size) || ev->size > SIM_MAX_SIZE)
                return corrupt(r, err, "bad size");
            if (head & HEAD_R) {
                if (!get_varint(&p, end, &v) || v > UINT32_MAX)
                    return corrupt(r, err, "bad stream");
                ev->stream = (uint32_t)v;
            }
            if (head & HEAD_X) {
                if (!get_varint(&p, end, &v))
                    return corrupt(r, err, "bad share");
                ev->share = ev->id + unzigzag(v);
                if (ev->share > SIM_MAX_SIZE)
                    return corrupt(r, err, "share exceeds 2^53");
                ev->has_share = true;
            }
            if ((head & HEAD_S) && !get_str(r, &p, &ev->tag))
                return corrupt(r, err, "bad tag");
        } else {
            if (head & HEAD_R) {
                if (!get_varint(&p, end, &v) || v > UINT64_MAX - t)
                    return corrupt(r, err, "bad ready_t");
                ev->ready_t = t + v;
            }
            if (head & HEAD_S) { /* on a free: its ready_stream */
                if (!get_varint(&p, end, &v) || v > UINT32_MAX)
                    return corrupt(r, err, "bad ready_stream");
                ev->has_ready_stream = true;
                ev->ready_stream = (uint32_t)v;
            }
        }
        break;
    case SIM_OP_EMPTY_CACHE:
        if (head & (HEAD_S | HEAD_R))
            return corrupt(r, err, "bad empty_cache");
        break;
    case SIM_OP_MARK:
        if ((head & HEAD_R) || !(head & HEAD_S) || !get_str(r, &p, &ev->name))
            return corrupt(r, err, "bad mark");
        break;
    case SIM_OP_POOL_BEGIN:
    case SIM_OP_POOL_END:
    case SIM_OP_POOL_RELEASE:
    case SIM_OP_GRAPH_REPLAY:
        if ((head & HEAD_R) || ((head & HEAD_S) && ev->op != SIM_OP_GRAPH_REPLAY))
            return corrupt(r, err, "bad pool event");
        if (!get_varint(&p, end, &ev->pool) || ev->pool == 0 || ev->pool > SIM_MAX_SIZE)
            return corrupt(r, err, "bad pool (0 or above 2^53)");
        if (ev->op == SIM_OP_POOL_BEGIN) {
            if (!get_varint(&p, end, &v) || (v & ~(uint64_t)POOL_FLAGS_ALL) != 0)
                return corrupt(r, err, "bad pool_begin flags");
            ev->pool_flags = (uint32_t)v;
            if (!(v & SIM_POOL_ALL_STREAMS)) {
                if (!get_varint(&p, end, &v) || v > UINT32_MAX)
                    return corrupt(r, err, "bad stream");
                ev->stream = (uint32_t)v;
            }
        }
        if ((head & HEAD_S) && !get_str(r, &p, &ev->name))
            return corrupt(r, err, "bad graph_replay name");
        break;
    }
    if ((head & HEAD_P) && !get_str(r, &p, &ev->proc))
        return corrupt(r, err, "bad proc");
    uint64_t line = r->line + 1;
    if ((head & HEAD_L) && !get_varint(&p, end, &line))
        return corrupt(r, err, "bad line");
    ev->line = line;
    ev->index = r->index;
    r->line = line;
    r->t = t;
    r->p = p;
    r->left--;
    return SIM_OK;
}

/* ---------------------------------------------------------------- writer */

typedef struct intern_slot {
    uint64_t hash;    /* 0: empty */
    uint32_t off;     /* into strs, past the length varint */
    uint32_t index;
} intern_slot;

struct gtrace_writer {
    sim_outfile out;
    gtrace_crc crc;
    bytes strs, evs;
    uint32_t n_strs, n_events;
    intern_slot *slots;
    uint32_t slot_mask;
    /* the last strings looked up (tags and procs repeat): offsets into strs, 0 none */
    uint32_t last_off[2];
    uint32_t last_i[2];
    uint64_t t, id, line, total;
    bool failed;
};

static uint64_t str_hash(const char *s, size_t n)
{
    return sim_fnv1a64(s, n) | 1; /* never 0 (the empty mark) */
}

/* Block-local index of s, adding it to the block's string table. UINT32_MAX: no memory. */
static uint32_t intern(gtrace_writer *w, const char *s, int cache)
{
    if (w->last_off[cache] != 0 && strcmp((const char *)w->strs.p + w->last_off[cache], s) == 0)
        return w->last_i[cache];
    size_t n = strlen(s);
    uint64_t h = str_hash(s, n);
    if ((w->n_strs + 1) * 2 > w->slot_mask + 1) {
        uint32_t cap = (w->slot_mask + 1) * 2;
        intern_slot *ns = calloc(cap, sizeof *ns);
        if (ns == NULL)
            return UINT32_MAX;
        for (uint32_t i = 0; i <= w->slot_mask; i++) {
            if (w->slots[i].hash == 0)
                continue;
            uint32_t j = (uint32_t)w->slots[i].hash & (cap - 1);
            while (ns[j].hash)
                j = (j + 1) & (cap - 1);
            ns[j] = w->slots[i];
        }
        free(w->slots);
        w->slots = ns;
        w->slot_mask = cap - 1;
    }
    uint32_t j = (uint32_t)h & w->slot_mask;
    for (; w->slots[j].hash; j = (j + 1) & w->slot_mask) {
        const intern_slot *e = &w->slots[j];
        if (e->hash == h && strcmp((const char *)w->strs.p + e->off, s) == 0)
            goto found;
    }
    if (!bytes_reserve(&w->strs, n + 11))
        return UINT32_MAX;
    put_varint(&w->strs, n);
    w->slots[j] = (intern_slot){.hash = h, .off = (uint32_t)w->strs.len, .index = w->n_strs++};
    memcpy(w->strs.p + w->strs.len, s, n + 1);
    w->strs.len += n + 1;
found:
    /* the caller's pointer is valid for this event only: remember our copy */
    w->last_off[cache] = w->slots[j].off;
    w->last_i[cache] = w->slots[j].index;
    return w->slots[j].index;
}

static void block_reset(gtrace_writer *w)
{
    w->strs.len = 0;
    w->evs.len = 0;
    w->n_strs = 0;
    w->n_events = 0;
    memset(w->slots, 0, ((size_t)w->slot_mask + 1) * sizeof *w->slots);
    w->last_off[0] = w->last_off[1] = 0;
}

static sim_status write_all(gtrace_writer *w, const void *p, size_t n, sim_error *err)
{
    if (n && fwrite(p, 1, n, w->out.fp) != n) {
        w->failed = true;
        return sim_error_set(err, SIM_EIO, w->out.path, 0, 0, "write failed: %s", strerror(errno));
    }
    return SIM_OK;
}

/* A block: n_events, payload length, CRC-32C of those 8 bytes and the payload
 * (given as up to three pieces). */
static sim_status write_block(gtrace_writer *w, uint32_t n_events, const bytes *parts, int n_parts, sim_error *err)
{
    uint8_t h[12];
    size_t len = 0;
    for (int i = 0; i < n_parts; i++)
        len += parts[i].len;
    put32(h, n_events);
    put32(h + 4, (uint32_t)len);
    uint32_t crc = gtrace_crc_update(&w->crc, 0, h, 8);
    for (int i = 0; i < n_parts; i++)
        crc = gtrace_crc_update(&w->crc, crc, parts[i].p, parts[i].len);
    put32(h + 8, crc);
    sim_status st = write_all(w, h, 12, err);
    for (int i = 0; i < n_parts && st == SIM_OK; i++)
        st = write_all(w, parts[i].p, parts[i].len, err);
    return st;
}

static sim_status flush_block(gtrace_writer *w, sim_error *err)
{
    if (w->n_events == 0)
        return SIM_OK;
    uint8_t pre[10];
    bytes parts[3] = {{pre, 0, sizeof pre}, w->strs, w->evs};
    put_varint(&parts[0], w->n_strs); /* the string table goes first, with its count */
    sim_status st = write_block(w, w->n_events, parts, 3, err);
    block_reset(w);
    return st;
}

sim_status gtrace_writer_open(const char *path, const trace_header *h, gtrace_writer **out, sim_error *err)
{
    *out = NULL;
    gtrace_writer *w = calloc(1, sizeof *w);
    if (w == NULL || (w->slots = calloc(256, sizeof *w->slots)) == NULL) {
        free(w);
        return sim_error_set(err, SIM_ENOMEM, path, 0, 0, "out of memory");
    }
    w->slot_mask = 255;
    w->line = 1;
    gtrace_crc_init(&w->crc);
    /* the header: flags, name, device name, capacity, compute capability, meta */
    bytes hb = {0};
    const char *name = h ? h->name : "", *dev = h ? h->device_name : "";
    const char *meta = h ? h->meta_json : NULL;
    size_t nn = strlen(name), dn = strlen(dev), mn = meta ? strlen(meta) : 0;
    sim_status st = SIM_OK;
    if (!bytes_reserve(&hb, 60 + nn + dn + mn)) {
        st = sim_error_set(err, SIM_ENOMEM, path, 0, 0, "out of memory");
        goto fail;
    }
    bool cc = h && h->device_cc_major;
    put_varint(&hb, (meta ? 1u : 0u) | (cc ? 2u : 0u));
    put_varint(&hb, nn);
    memcpy(hb.p + hb.len, name, nn);
    hb.len += nn;
    put_varint(&hb, dn);
    memcpy(hb.p + hb.len, dev, dn);
    hb.len += dn;
    put_varint(&hb, h ? h->device_capacity : 0);
    if (cc) {
        put_varint(&hb, h->device_cc_major);
        put_varint(&hb, h->device_cc_minor);
    }
    if (meta) {
        put_varint(&hb, mn);
        memcpy(hb.p + hb.len, meta, mn);
        hb.len += mn;
    }
    if ((st = sim_outfile_open(&w->out, path, err)) != SIM_OK)
        goto fail;
    uint8_t fixed[16];
    memcpy(fixed, GTRACE_MAGIC, GTRACE_MAGIC_LEN);
    put32(fixed + 8, GTRACE_VERSION);
    put32(fixed + 12, (uint32_t)hb.len);
    uint8_t crc[4];
    put32(crc, gtrace_crc_update(&w->crc, gtrace_crc_update(&w->crc, 0, fixed + 8, 8), hb.p, hb.len));
    if ((st = write_all(w, fixed, 16, err)) != SIM_OK || (st = write_all(w, hb.p, hb.len, err)) != SIM_OK ||
        (st = write_all(w, crc, 4, err)) != SIM_OK) {
        sim_outfile_close(&w->out, false, err);
        goto fail;
    }
    free(hb.p);
    *out = w;
    return SIM_OK;
fail:
    free(hb.p);
    free(w->slots);
    free(w);
    return st;
}

sim_status gtrace_writer_event(gtrace_writer *w, const sim_event *ev, sim_error *err)
{
    if (ev->t < w->t || ev->ready_t < ev->t)
        return sim_error_set(err, SIM_EUSAGE, w->out.path, 0, 0, "gtrace: events out of time order");
    if ((unsigned)ev->op >= SIM_N_OPS)
        return sim_error_set(err, SIM_EUSAGE, w->out.path, 0, 0, "gtrace: an event of unknown op %u", (unsigned)ev->op);
    if (ev->op == SIM_OP_MARK && ev->name == NULL)
        return sim_error_set(err, SIM_EUSAGE, w->out.path, 0, 0, "gtrace: a mark without a name");
    bool pool_op = ev->op >= SIM_OP_POOL_BEGIN;
    if (pool_op && (ev->pool == 0 || ev->pool > SIM_MAX_SIZE))
        return sim_error_set(err, SIM_EUSAGE, w->out.path, 0, 0, "gtrace: a %s of pool %llu (1 .. 2^53)",
                             sim_op_name(ev->op), (unsigned long long)ev->pool);
    if (!bytes_reserve(&w->evs, 64))
        return sim_error_set(err, SIM_ENOMEM, w->out.path, 0, 0, "out of memory");
    unsigned head = pool_op ? HEAD_E | ((unsigned)ev->op - SIM_OP_POOL_BEGIN) : (unsigned)ev->op;
    uint32_t si = 0, pi = 0;
    const char *s = ev->op == SIM_OP_ALLOC                                   ? ev->tag
                    : ev->op == SIM_OP_MARK || ev->op == SIM_OP_GRAPH_REPLAY ? ev->name
                                                                             : NULL;
    if (s) {
        head |= HEAD_S;
        if ((si = intern(w, s, 0)) == UINT32_MAX)
            return sim_error_set(err, SIM_ENOMEM, w->out.path, 0, 0, "out of memory");
    }
    if (ev->proc) {
        head |= HEAD_P;
        if ((pi = intern(w, ev->proc, 1)) == UINT32_MAX)
            return sim_error_set(err, SIM_ENOMEM, w->out.path, 0, 0, "out of memory");
    }
    if ((ev->op == SIM_OP_ALLOC && ev->stream) || (ev->op == SIM_OP_FREE && ev->ready_t > ev->t))
        head |= HEAD_R;
    if (ev->op == SIM_OP_FREE && ev->has_ready_stream)
        head |= HEAD_S;
    if (ev->op == SIM_OP_ALLOC && ev->has_share)
        head |= HEAD_X;
    if (ev->line != w->line + 1)
        head |= HEAD_L;
    bytes *b = &w->evs;
    b->p[b->len++] = (uint8_t)head;
    put_varint(b, ev->t - w->t);
    if (ev->op == SIM_OP_ALLOC || ev->op == SIM_OP_FREE) {
        put_varint(b, zigzag(ev->id - w->id));
        w->id = ev->id;
    }
    if (ev->op == SIM_OP_ALLOC) {
        put_varint(b, ev->size);
        if (head & HEAD_R)
            put_varint(b, ev->stream);
        if (head & HEAD_X)
            put_varint(b, zigzag(ev->share - ev->id));
    } else if (ev->op == SIM_OP_FREE) {
        if (head & HEAD_R)
            put_varint(b, ev->ready_t - ev->t);
        if (head & HEAD_S)
            put_varint(b, ev->ready_stream);
    } else if (pool_op) {
        put_varint(b, ev->pool);
        if (ev->op == SIM_OP_POOL_BEGIN) {
            uint32_t flags = ev->pool_flags & POOL_FLAGS_ALL;
            put_varint(b, flags);
            if (!(flags & SIM_POOL_ALL_STREAMS))
                put_varint(b, ev->stream);
        }
    }
    if ((head & HEAD_S) && ev->op != SIM_OP_FREE)
        put_varint(b, si);
    if (head & HEAD_P)
        put_varint(b, pi);
    if (head & HEAD_L)
        put_varint(b, ev->line);
    w->t = ev->t;
    w->line = ev->line;
    w->total++;
    if (++w->n_events == GTRACE_BLOCK_EVENTS || w->evs.len + w->strs.len >= WRITER_BLOCK_BYTES)
        return flush_block(w, err);
    return SIM_OK;
}

sim_status gtrace_writer_close(gtrace_writer *w, bool commit, sim_error *err)
{
    sim_status st = SIM_OK;
    if (commit && !w->failed) {
        st = flush_block(w, err);
        if (st == SIM_OK) {
            uint8_t end[8];
            put32(end, (uint32_t)w->total);
            put32(end + 4, (uint32_t)(w->total >> 32));
            bytes part = {end, 8, 8};
            st = write_block(w, 0, &part, 1, err);
        }
    }
    sim_status cst = sim_outfile_close(&w->out, commit && !w->failed && st == SIM_OK, err);
    if (st == SIM_OK)
        st = commit && w->failed ? SIM_EIO : cst;
    free(w->strs.p);
    free(w->evs.p);
    free(w->slots);
    free(w);
    return st;
}
