/* The protobuf wire format (protowire.h). */
#include "protowire.h"

#include <stdarg.h>
#include <stdio.h>

bool protowire_varint(pb_msg *m, uint64_t *out)
{
    uint64_t v = 0;
    for (unsigned shift = 0; shift < 64; shift += 7) {
        if (m->at >= m->n)
            return false;
        unsigned char b = m->p[m->at++];
        v |= (uint64_t)(b & 0x7f) << shift;
        if ((b & 0x80) == 0) {
            *out = v;
            return true;
        }
    }
    return false;
}

static pb_step skip(pb_msg *m, size_t k)
{
    if (m->n - m->at < k)
        return PB_BAD;
    m->at += k;
    return PB_FIELD;
}

pb_step protowire_next(pb_msg *m, pb_field *f)
{
    if (m->at >= m->n)
        return PB_END;
    f->where = m->base + m->at;
    uint64_t key, len;
    if (!protowire_varint(m, &key) || key >> 3 == 0 || key >> 3 > UINT32_MAX)
        return PB_BAD;
    f->num = (uint32_t)(key >> 3);
    f->wire = (uint32_t)(key & 7);
    f->v = 0;
    switch (f->wire) {
    case PB_VARINT: return protowire_varint(m, &f->v) ? PB_FIELD : PB_BAD;
    case 1: return skip(m, 8);
    case 5: return skip(m, 4);
    case PB_LEN:
        if (!protowire_varint(m, &len) || len > m->n - m->at)
            return PB_BAD;
        f->sub = (pb_msg){.p = m->p + m->at, .n = (size_t)len, .base = m->base + m->at};
        m->at += (size_t)len;
        return PB_FIELD;
    default: return PB_BAD;
    }
}

sim_status protowire_fail(const pb_errors *e, size_t at, const char *fmt, ...)
{
    char msg[384];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    return sim_error_set(e->err, SIM_ETRACE, e->path, 0, 0, "%s byte %zu: %s", e->format, at, msg);
}

sim_status protowire_bad_field(const pb_errors *e, const pb_field *f, const char *what)
{
    return protowire_fail(e, f->where, "truncated or malformed protobuf in %s", what);
}

sim_status protowire_want_wire(const pb_errors *e, const pb_field *f, uint32_t wire, const char *what)
{
    if (f->wire == wire)
        return SIM_OK;
    return protowire_fail(e, f->where, "%s field %u has wire type %u, not %u (not %s?)", what, f->num, f->wire, wire,
                          e->expected);
}
