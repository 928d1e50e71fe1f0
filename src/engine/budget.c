/* budget.c - strict-FIFO byte reservations (see budget.h). */
#include "engine/budget.h"

#include <errno.h>
#include <time.h>

struct budget_waiter {
    pthread_cond_t cv;
    uint64_t bytes;
    budget_waiter *next;
};

void budget_init(budget *b, uint64_t total)
{
    pthread_mutex_init(&b->mu, NULL);
    b->total = total;
    b->used = b->peak = b->waiting_bytes = 0;
    b->n_reserved = b->n_released = b->kicks = 0;
    b->head = b->tail = NULL;
}

void budget_destroy(budget *b)
{
    pthread_mutex_destroy(&b->mu);
}

static void take(budget *b, uint64_t bytes)
{
    b->used += bytes;
    if (b->used > b->peak)
        b->peak = b->used;
    b->n_reserved++;
}

static int fits(const budget *b, uint64_t bytes)
{
    return bytes <= b->total && b->used <= b->total - bytes;
}

int budget_try_reserve(budget *b, uint64_t bytes)
{
    pthread_mutex_lock(&b->mu);
    int ok = !b->head && fits(b, bytes);
    if (ok)
        take(b, bytes);
    pthread_mutex_unlock(&b->mu);
    return ok;
}

static void unlink_waiter(budget *b, budget_waiter *w)
{
    budget_waiter **pp = &b->head, *prev = NULL;
    while (*pp && *pp != w) {
        prev = *pp;
        pp = &(*pp)->next;
    }
    if (!*pp)
        return;
    *pp = w->next;
    if (b->tail == w)
        b->tail = prev;
    b->waiting_bytes -= w->bytes;
}

int budget_reserve(budget *b, uint64_t bytes, int64_t timeout_ms)
{
    struct timespec until;
    clock_gettime(CLOCK_MONOTONIC, &until);
    if (timeout_ms >= 0) {
        until.tv_sec += timeout_ms / 1000;
        until.tv_nsec += (timeout_ms % 1000) * 1000000L;
        if (until.tv_nsec >= 1000000000L) {
            until.tv_sec++;
            until.tv_nsec -= 1000000000L;
        }
    }
    pthread_mutex_lock(&b->mu);
    if (!b->head && fits(b, bytes)) {
        take(b, bytes);
        pthread_mutex_unlock(&b->mu);
        return 1;
    }
    budget_waiter w = {.bytes = bytes, .next = NULL};
    pthread_condattr_t ca;
    pthread_condattr_init(&ca);
    pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
    pthread_cond_init(&w.cv, &ca);
    pthread_condattr_destroy(&ca);
    if (b->tail)
        b->tail->next = &w;
    else
        b->head = &w;
    b->tail = &w;
    b->waiting_bytes += bytes;
    uint64_t gen = b->kicks;
    int ok = 0;
    for (;;) {
        if (b->head == &w && fits(b, bytes)) {
            ok = 1;
            break;
        }
        if (b->kicks != gen)
            break;
        int rc = timeout_ms >= 0 ? pthread_cond_timedwait(&w.cv, &b->mu, &until)
                                 : pthread_cond_wait(&w.cv, &b->mu);
        if (rc == ETIMEDOUT) {
            ok = b->head == &w && fits(b, bytes);
            break;
        }
    }
    unlink_waiter(b, &w);
    if (ok)
        take(b, bytes);
    /* the next waiter may fit too (a big release can satisfy several in a row) */
    if (b->head)
        pthread_cond_signal(&b->head->cv);
    pthread_mutex_unlock(&b->mu);
    pthread_cond_destroy(&w.cv);
    return ok;
}

void budget_release(budget *b, uint64_t bytes)
{
    if (!bytes)
        return;
    pthread_mutex_lock(&b->mu);
    b->used = bytes > b->used ? 0 : b->used - bytes;
    b->n_released++;
    if (b->head)
        pthread_cond_signal(&b->head->cv);
    pthread_mutex_unlock(&b->mu);
}

void budget_kick(budget *b)
{
    pthread_mutex_lock(&b->mu);
    b->kicks++;
    for (budget_waiter *w = b->head; w; w = w->next)
        pthread_cond_signal(&w->cv);
    pthread_mutex_unlock(&b->mu);
}

void budget_snapshot(budget *b, uint64_t *total, uint64_t *used, uint64_t *peak, uint64_t *waiting,
                     uint64_t *n_reserved, uint64_t *n_released)
{
    pthread_mutex_lock(&b->mu);
    if (total)
        *total = b->total;
    if (used)
        *used = b->used;
    if (peak)
        *peak = b->peak;
    if (waiting)
        *waiting = b->waiting_bytes;
    if (n_reserved)
        *n_reserved = b->n_reserved;
    if (n_released)
        *n_released = b->n_released;
    pthread_mutex_unlock(&b->mu);
}
