/* driver.c — replays fuzz inputs without libFuzzer: every file named on the
 * command line, or found (one level deep) in a directory named there, is passed
 * to LLVMFuzzerTestOneInput. A missing directory is skipped (no inputs yet). */
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "fuzz.h"

static int run_file(const char *path)
{
    FILE *f = fopen(path, "rb");
    if (f == NULL) {
        perror(path);
        return 1;
    }
    size_t cap = 1 << 16, n = 0;
    uint8_t *buf = malloc(cap);
    size_t got;
    while (buf && (got = fread(buf + n, 1, cap - n, f)) > 0) {
        n += got;
        if (n == cap) {
            uint8_t *b = realloc(buf, cap *= 2);
            if (b == NULL) {
                free(buf);
                buf = NULL;
            }
            buf = b;
        }
    }
    fclose(f);
    if (buf == NULL)
        return 1;
    /* an exact-size copy, so that ASan sees reads past the end */
    uint8_t *exact = malloc(n ? n : 1);
    if (exact == NULL) {
        free(buf);
        return 1;
    }
    memcpy(exact, buf, n);
    free(buf);
    LLVMFuzzerTestOneInput(exact, n);
    free(exact);
    return 0;
}

int main(int argc, char **argv)
{
    int ran = 0, bad = 0;
    for (int i = 1; i < argc; i++) {
        struct stat sb;
        if (stat(argv[i], &sb) != 0)
            continue;
        if (!S_ISDIR(sb.st_mode)) {
            bad += run_file(argv[i]);
            ran++;
            continue;
        }
        DIR *d = opendir(argv[i]);
        struct dirent *e;
        while (d && (e = readdir(d)) != NULL) {
            if (e->d_name[0] == '.')
                continue;
            char path[4096];
            snprintf(path, sizeof path, "%s/%s", argv[i], e->d_name);
            if (stat(path, &sb) == 0 && S_ISREG(sb.st_mode)) {
                bad += run_file(path);
                ran++;
            }
        }
        if (d)
            closedir(d);
    }
    printf("%d inputs replayed, %d unreadable\n", ran, bad);
    return bad ? 1 : 0;
}
