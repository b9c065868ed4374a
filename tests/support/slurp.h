/* slurp.h — a whole file for a test, through sim_read_file: the test fails, naming the
 * file, when it cannot be read. */
#ifndef GPUSIM_TEST_SLURP_H
#define GPUSIM_TEST_SLURP_H

#include <stddef.h>

/* The bytes of path, NUL-terminated (free() them); *len without the NUL. */
char *test_slurp(const char *path, size_t *len);

#endif
