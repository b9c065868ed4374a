/* pngstat FILE.png — prints "WIDTH HEIGHT NONWHITE DISTINCT": the pixels that are
 * not (near) white and the distinct colours (counted up to 4096), so a test can
 * tell a rendered page from a blank screenshot. 8-bit RGB/RGBA/grey, no interlace:
 * what headless Chromium writes. Built by cli_browser.sh with `cc ... -lz`. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

static uint32_t be32(const unsigned char *p)
{
    return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}

static int paeth(int a, int b, int c)
{
    int p = a + b - c, pa = abs(p - a), pb = abs(p - b), pc = abs(p - c);
    return pa <= pb && pa <= pc ? a : pb <= pc ? b : c;
}

int main(int argc, char **argv)
{
    if (argc != 2) {
        fprintf(stderr, "usage: pngstat FILE.png\n");
        return 2;
    }
    FILE *f = fopen(argv[1], "rb");
    if (!f) {
        perror(argv[1]);
        return 2;
    }
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    fseek(f, 0, SEEK_SET);
    unsigned char *d = malloc((size_t)n);
    if (!d || fread(d, 1, (size_t)n, f) != (size_t)n || n < 33 || memcmp(d, "\x89PNG\r\n\x1a\n", 8) != 0) {
        fprintf(stderr, "pngstat: %s: not a PNG file\n", argv[1]);
        return 2;
    }
    fclose(f);
    uint32_t w = 0, h = 0;
    int depth = 0, ctype = 0, interlace = 0;
    unsigned char *idat = NULL;
    size_t idat_len = 0;
    for (long off = 8; off + 12 <= n;) {
        uint32_t len = be32(d + off);
        const unsigned char *type = d + off + 4, *body = d + off + 8;
        if (off + 12 + (long)len > n)
            break;
        if (memcmp(type, "IHDR", 4) == 0) {
            w = be32(body);
            h = be32(body + 4);
            depth = body[8];
            ctype = body[9];
            interlace = body[12];
        } else if (memcmp(type, "IDAT", 4) == 0) {
            idat = realloc(idat, idat_len + len);
            memcpy(idat + idat_len, body, len);
            idat_len += len;
        }
        off += 12 + (long)len;
    }
    int ch = ctype == 6 ? 4 : ctype == 2 ? 3 : ctype == 0 ? 1 : ctype == 4 ? 2 : 0;
    if (w == 0 || h == 0 || depth != 8 || ch == 0 || interlace != 0 || idat == NULL) {
        fprintf(stderr, "pngstat: unsupported PNG (depth %d, colour type %d, interlace %d)\n", depth, ctype, interlace);
        return 2;
    }
    size_t stride = (size_t)w * (size_t)ch;
    uLongf raw_len = (uLongf)((stride + 1) * h);
    unsigned char *raw = malloc(raw_len);
    if (uncompress(raw, &raw_len, idat, (uLong)idat_len) != Z_OK || raw_len != (stride + 1) * h) {
        fprintf(stderr, "pngstat: bad image data\n");
        return 2;
    }
    unsigned char *prev = calloc(stride, 1), *cur = malloc(stride);
    uint32_t seen[4096];
    size_t distinct = 0;
    unsigned long long nonwhite = 0;
    for (uint32_t y = 0; y < h; y++) {
        const unsigned char *line = raw + (size_t)y * (stride + 1);
        int filter = line[0];
        for (size_t x = 0; x < stride; x++) {
            int a = x >= (size_t)ch ? cur[x - (size_t)ch] : 0, b = prev[x], c = x >= (size_t)ch ? prev[x - (size_t)ch] : 0;
            int v = line[1 + x];
            switch (filter) {
            case 1: v += a; break;
            case 2: v += b; break;
            case 3: v += (a + b) / 2; break;
            case 4: v += paeth(a, b, c); break;
            default: break;
            }
            cur[x] = (unsigned char)v;
        }
        for (uint32_t x = 0; x < w; x++) {
            const unsigned char *p = cur + (size_t)x * (size_t)ch;
            unsigned r = p[0], g = ch >= 3 ? p[1] : p[0], bl = ch >= 3 ? p[2] : p[0];
            if (r < 240 || g < 240 || bl < 240)
                nonwhite++;
            uint32_t rgb = r << 16 | g << 8 | bl;
            size_t k = 0;
            while (k < distinct && seen[k] != rgb)
                k++;
            if (k == distinct && distinct < 4096)
                seen[distinct++] = rgb;
        }
        memcpy(prev, cur, stride);
    }
    printf("%u %u %llu %zu\n", w, h, nonwhite, distinct);
    return 0;
}
