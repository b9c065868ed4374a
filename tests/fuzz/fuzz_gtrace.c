/* Fuzz target: the gtrace reader. Checksums are fixed up before reading (on a
 * copy), so that mutations reach the decoder behind them instead of stopping at
 * a checksum mismatch; the reader must still refuse anything malformed cleanly. */
#include <stdlib.h>
#include <string.h>

#include "fuzz.h"
#include "traces/gtrace.h"

static uint32_t rd32(const uint8_t *p)
{
    return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

static void wr32(uint8_t *p, uint32_t v)
{
    for (int i = 0; i < 4; i++)
        p[i] = (uint8_t)(v >> (8 * i));
}

static void fix_checksums(uint8_t *d, size_t n, const gtrace_crc *c)
{
    if (n < 16 || !gtrace_is_magic(d, n))
        return;
    size_t len = rd32(d + 12);
    if (len > n || 20 + len > n)
        return;
    wr32(d + 16 + len, gtrace_crc_update(c, 0, d + 8, 8 + len));
    size_t pos = 20 + len;
    while (pos + 12 <= n) {
        size_t plen = rd32(d + pos + 4);
        if (plen > n - pos - 12)
            return;
        uint32_t crc = gtrace_crc_update(c, 0, d + pos, 8);
        wr32(d + pos + 8, gtrace_crc_update(c, crc, d + pos + 12, plen));
        pos += 12 + plen;
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static gtrace_crc crc; /* fuzz harness only: built once, read-only afterwards */
    static int ready;
    if (!ready) {
        gtrace_crc_init(&crc);
        ready = 1;
    }
    uint8_t *d = malloc(size ? size : 1);
    if (d == NULL)
        return 0;
    memcpy(d, data, size);
    fix_checksums(d, size, &crc);
    trace_header h;
    gtrace_reader *r = NULL;
    sim_error err;
    if (gtrace_open_mem("fuzz.gtrace", d, size, &h, &r, &err) == SIM_OK) {
        sim_event ev;
        while (gtrace_next(r, &ev, &err) == SIM_OK)
            if (ev.ready_t < ev.t || ev.size > SIM_MAX_SIZE || ev.id > SIM_MAX_SIZE ||
                (ev.op == SIM_OP_MARK && ev.name == NULL) || (unsigned)ev.op >= SIM_N_OPS ||
                (ev.op >= SIM_OP_POOL_BEGIN) != (ev.pool != 0) || ev.pool > SIM_MAX_SIZE ||
                (ev.op != SIM_OP_POOL_BEGIN && ev.pool_flags != 0) || ev.pool_flags > 15u)
                __builtin_trap();
        gtrace_close(r);
        free(h.meta_json);
    }
    free(d);
    return 0;
}
