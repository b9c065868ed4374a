/* fuzz.h — what every fuzz target in tests/fuzz/ defines: one libFuzzer entry
 * point. A target is one file, fuzz_NAME.c; CMake picks it up by its name:
 * with -DGPUSIM_FUZZ=ON (clang) it becomes the libFuzzer binary fuzz_NAME (run by
 * scripts/fuzz), and in every build fuzz_NAME_replay (this entry point + driver.c)
 * is a ctest that replays tests/fuzz/seeds/fuzz_NAME and tests/fuzz/regress/fuzz_NAME
 * (the crash inputs found so far, kept as regression tests). A target returns 0,
 * and abort()s when it finds a bug that sanitizers would not see by themselves. */
#ifndef GPUSIM_FUZZ_H
#define GPUSIM_FUZZ_H

#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* The input as a NUL-terminated string for text parsers (free() it), or NULL when it
 * is longer than max bytes (not worth a parser's time) or memory is short. */
static inline char *fuzz_text(const uint8_t *data, size_t size, size_t max)
{
    if (size > max)
        return NULL;
    char *s = malloc(size + 1);
    if (s != NULL) {
        memcpy(s, data, size);
        s[size] = '\0';
    }
    return s;
}

/* The entry point of a target that reads its input as text: fn(s) on the input made a
 * string by fuzz_text (inputs over max bytes are skipped), then s is freed. */
#define FUZZ_TEXT_TARGET(max, fn)                                                                                     \
    int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)                                                      \
    {                                                                                                                 \
        char *s = fuzz_text(data, size, max);                                                                         \
        if (s != NULL) {                                                                                              \
            fn(s);                                                                                                    \
            free(s);                                                                                                  \
        }                                                                                                             \
        return 0;                                                                                                     \
    }

#endif
