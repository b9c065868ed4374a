/* progress.h — the progress line of long replays on stderr (design.md §6): events
 * done, rate and, when the total is known or estimated, percent and ETA. Drawn only
 * when the stream is a terminal (tests and pipes see nothing), at most ten times a
 * second, and erased when done. One progress line per program; updates from several
 * threads go through progress_update, which serializes them. */
#ifndef GPUSIM_PROGRESS_H
#define GPUSIM_PROGRESS_H

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

typedef struct progress {
    FILE *f;
    bool on;             /* f is a terminal */
    bool estimated;      /* total is an estimate ("~") */
    bool drawn;
    uint64_t total;      /* 0: unknown */
    double start_s, last_s;
    char label[64];
    pthread_mutex_t lock;
} progress;

/* Start; draws nothing unless f is a terminal and GPUSIM_NO_PROGRESS is unset. */
void progress_init(progress *p, FILE *f, const char *label, uint64_t total, bool estimated);
/* done events so far (any thread; an update while another draws is skipped). */
void progress_update(progress *p, uint64_t done);
/* Erase the line and release. */
void progress_finish(progress *p);

/* The line itself, for tests: "replay  1.25M events  830k/s  42%  ETA 3s". */
void progress_format(char *buf, size_t cap, const char *label, uint64_t done, uint64_t total, bool estimated,
                     double elapsed_s);
/* Events in a trace file, estimated from its size and the event density of its
 * first 64 KiB (lines that hold "op"); 0 when the file cannot be read. */
uint64_t progress_estimate_events(const char *path);

#endif
