/* The memo of memo.h: a short list of entries (a command shares a few plans),
 * each with its key's hash, its key copied whole (a hit compares every byte) and
 * its value; one mutex, and a condition variable the waiters sleep on. */
#include "memo.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "hash.h"

typedef struct memo_entry {
    struct memo_entry *next;
    uint64_t hash;
    unsigned char *key;
    size_t key_len;
    void *value; /* NULL while it is being computed */
    size_t len;
    bool ready;
} memo_entry;

struct sim_memo {
    pthread_mutex_t mu;
    pthread_cond_t cv;
    memo_entry *head;
    _Atomic uint64_t computed, found;
};

sim_memo *sim_memo_new(void)
{
    sim_memo *m = calloc(1, sizeof *m);
    if (m == NULL)
        return NULL;
    if (pthread_mutex_init(&m->mu, NULL) != 0) {
        free(m);
        return NULL;
    }
    if (pthread_cond_init(&m->cv, NULL) != 0) {
        pthread_mutex_destroy(&m->mu);
        free(m);
        return NULL;
    }
    atomic_init(&m->computed, 0);
    atomic_init(&m->found, 0);
    return m;
}

static void entry_free(memo_entry *e)
{
    free(e->key);
    free(e->value);
    free(e);
}

void sim_memo_free(sim_memo *m)
{
    if (m == NULL)
        return;
    for (memo_entry *e = m->head, *n; e != NULL; e = n) {
        n = e->next;
        entry_free(e);
    }
    pthread_cond_destroy(&m->cv);
    pthread_mutex_destroy(&m->mu);
    free(m);
}

static uint64_t key_hash(const sim_memo_part *key, size_t n, size_t *len)
{
    uint64_t h = SIM_FNV1A64_INIT;
    *len = 0;
    for (size_t i = 0; i < n; i++) {
        h = sim_fnv1a64_more(h, &key[i].len, sizeof key[i].len); /* parts cannot slide into each other */
        h = sim_fnv1a64_more(h, key[i].data, key[i].len);
        *len += sizeof key[i].len + key[i].len;
    }
    return h;
}

static bool key_equal(const memo_entry *e, uint64_t h, size_t len, const sim_memo_part *key, size_t n)
{
    if (e->hash != h || e->key_len != len)
        return false;
    const unsigned char *p = e->key;
    for (size_t i = 0; i < n; i++) {
        if (memcmp(p, &key[i].len, sizeof key[i].len) != 0)
            return false;
        p += sizeof key[i].len;
        if (key[i].len && memcmp(p, key[i].data, key[i].len) != 0)
            return false;
        p += key[i].len;
    }
    return true;
}

/* Under the lock. */
static memo_entry *find(sim_memo *m, uint64_t h, size_t len, const sim_memo_part *key, size_t n)
{
    for (memo_entry *e = m->head; e != NULL; e = e->next)
        if (key_equal(e, h, len, key, n))
            return e;
    return NULL;
}

sim_memo_state sim_memo_begin(sim_memo *m, const sim_memo_part *key, size_t n_parts, const void **value, size_t *len)
{
    size_t klen;
    uint64_t h = key_hash(key, n_parts, &klen);
    pthread_mutex_lock(&m->mu);
    for (;;) {
        memo_entry *e = find(m, h, klen, key, n_parts);
        if (e == NULL)
            break;
        if (e->ready) {
            *value = e->value;
            *len = e->len;
            pthread_mutex_unlock(&m->mu);
            atomic_fetch_add(&m->found, 1);
            return SIM_MEMO_FOUND;
        }
        pthread_cond_wait(&m->cv, &m->mu); /* another replay is computing it */
    }
    memo_entry *e = calloc(1, sizeof *e);
    unsigned char *k = e ? malloc(klen ? klen : 1) : NULL;
    if (k == NULL) {
        free(e);
        pthread_mutex_unlock(&m->mu);
        return SIM_MEMO_NONE;
    }
    unsigned char *p = k;
    for (size_t i = 0; i < n_parts; i++) {
        memcpy(p, &key[i].len, sizeof key[i].len);
        p += sizeof key[i].len;
        if (key[i].len)
            memcpy(p, key[i].data, key[i].len);
        p += key[i].len;
    }
    *e = (memo_entry){.next = m->head, .hash = h, .key = k, .key_len = klen};
    m->head = e;
    pthread_mutex_unlock(&m->mu);
    return SIM_MEMO_COMPUTE;
}

/* Takes the pending entry of key off the list (under the lock). */
static memo_entry *unlink_pending(sim_memo *m, const sim_memo_part *key, size_t n_parts)
{
    size_t klen;
    uint64_t h = key_hash(key, n_parts, &klen);
    for (memo_entry **pe = &m->head; *pe != NULL; pe = &(*pe)->next) {
        memo_entry *e = *pe;
        if (!e->ready && key_equal(e, h, klen, key, n_parts)) {
            *pe = e->next;
            return e;
        }
    }
    return NULL;
}

sim_status sim_memo_put(sim_memo *m, const sim_memo_part *key, size_t n_parts, const void *value, size_t len)
{
    void *copy = malloc(len ? len : 1);
    if (copy == NULL) {
        sim_memo_abandon(m, key, n_parts);
        return SIM_ENOMEM;
    }
    if (len)
        memcpy(copy, value, len);
    size_t klen;
    uint64_t h = key_hash(key, n_parts, &klen);
    pthread_mutex_lock(&m->mu);
    memo_entry *e = find(m, h, klen, key, n_parts);
    if (e != NULL && !e->ready) {
        e->value = copy;
        e->len = len;
        e->ready = true;
        copy = NULL;
    }
    pthread_cond_broadcast(&m->cv);
    pthread_mutex_unlock(&m->mu);
    free(copy); /* not begun with SIM_MEMO_COMPUTE: nothing to fill */
    atomic_fetch_add(&m->computed, 1);
    return SIM_OK;
}

void sim_memo_abandon(sim_memo *m, const sim_memo_part *key, size_t n_parts)
{
    pthread_mutex_lock(&m->mu);
    memo_entry *e = unlink_pending(m, key, n_parts);
    pthread_cond_broadcast(&m->cv);
    pthread_mutex_unlock(&m->mu);
    if (e != NULL)
        entry_free(e);
}

uint64_t sim_memo_computed(sim_memo *m)
{
    return atomic_load(&m->computed);
}

uint64_t sim_memo_found(sim_memo *m)
{
    return atomic_load(&m->found);
}
