#include "progress.h"

#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "sim/clock.h"

static void human_count(char *buf, size_t cap, double v)
{
    if (v >= 1e6)
        snprintf(buf, cap, "%.2fM", v / 1e6);
    else if (v >= 1e3)
        snprintf(buf, cap, "%.0fk", v / 1e3);
    else
        snprintf(buf, cap, "%.0f", v);
}

static void human_time(char *buf, size_t cap, double s)
{
    if (s >= 3600)
        snprintf(buf, cap, "%dh%02dm", (int)(s / 3600), (int)(s / 60) % 60);
    else if (s >= 60)
        snprintf(buf, cap, "%dm%02ds", (int)(s / 60), (int)s % 60);
    else
        snprintf(buf, cap, "%ds", (int)(s + 0.5));
}

void progress_format(char *buf, size_t cap, const char *label, uint64_t done, uint64_t total, bool estimated,
                     double elapsed_s)
{
    char d[32], r[32];
    human_count(d, sizeof d, (double)done);
    double rate = elapsed_s > 0 ? (double)done / elapsed_s : 0;
    human_count(r, sizeof r, rate);
    int n = snprintf(buf, cap, "%s  %s events  %s/s", label, d, r);
    if (n < 0 || (size_t)n >= cap || total == 0)
        return;
    double frac = (double)done / (double)total;
    if (frac > 1)
        frac = 1;
    char eta[32] = "?";
    if (rate > 0 && done < total)
        human_time(eta, sizeof eta, (double)(total - done) / rate);
    else if (done >= total)
        snprintf(eta, sizeof eta, "0s");
    snprintf(buf + n, cap - (size_t)n, "  %s%.0f%%  ETA %s%s", estimated ? "~" : "", frac * 100.0,
             estimated ? "~" : "", eta);
}

void progress_init(progress *p, FILE *f, const char *label, uint64_t total, bool estimated)
{
    memset(p, 0, sizeof *p);
    p->f = f;
    p->on = f != NULL && isatty(fileno(f)) && getenv("GPUSIM_NO_PROGRESS") == NULL;
    p->total = total;
    p->estimated = estimated;
    snprintf(p->label, sizeof p->label, "%s", label);
    p->start_s = sim_clock_s();
    p->last_s = p->start_s - 1.0; /* the first update draws at once; then at most every 0.1 s */
    pthread_mutex_init(&p->lock, NULL);
}

void progress_update(progress *p, uint64_t done)
{
    if (!p->on || pthread_mutex_trylock(&p->lock) != 0)
        return;
    double t = sim_clock_s();
    if (t - p->last_s >= 0.1) {
        p->last_s = t;
        char line[160];
        progress_format(line, sizeof line, p->label, done, p->total, p->estimated, t - p->start_s);
        fprintf(p->f, "\r\033[K%s", line);
        fflush(p->f);
        p->drawn = true;
    }
    pthread_mutex_unlock(&p->lock);
}

void progress_finish(progress *p)
{
    if (p->drawn) {
        fputs("\r\033[K", p->f);
        fflush(p->f);
    }
    pthread_mutex_destroy(&p->lock);
}

uint64_t progress_estimate_events(const char *path)
{
    struct stat st;
    if (path == NULL || stat(path, &st) != 0 || !S_ISREG(st.st_mode) || st.st_size <= 0)
        return 0;
    FILE *f = fopen(path, "rb");
    if (f == NULL)
        return 0;
    static const size_t CHUNK = 64 * 1024;
    char *buf = malloc(CHUNK + 1);
    size_t n = buf ? fread(buf, 1, CHUNK, f) : 0;
    fclose(f);
    if (n == 0) {
        free(buf);
        return 0;
    }
    buf[n] = '\0';
    uint64_t ops = 0;
    for (const char *s = buf; (s = strstr(s, "\"op\"")) != NULL; s += 4)
        ops++;
    free(buf);
    if (ops == 0)
        return 0;
    return (uint64_t)((double)st.st_size * (double)ops / (double)n);
}
