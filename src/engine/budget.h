/* budget.h - the engine's host memory budget: byte reservations granted in strict
 * arrival order.
 *
 * DESIGN. Every partition reserves the bytes it will hold (workspace, witness, and the
 * key's share when it loads a key) before it may run, and gives them back in parts as
 * its buffers die. Waiters form a FIFO: only the head may take bytes, so a large
 * request is never starved by small ones behind it, and a release wakes the head only
 * (no thundering herd). A waiter can be kicked (budget_kick) so that the engine's single
 * dispatcher can re-check which partition is now first in priority order.
 */
#ifndef CUZK_ENGINE_BUDGET_H
#define CUZK_ENGINE_BUDGET_H

#include <pthread.h>
#include <stdint.h>

typedef struct budget_waiter budget_waiter;

typedef struct budget {
    pthread_mutex_t mu;
    uint64_t total;          /* bytes */
    uint64_t used;           /* bytes reserved now */
    uint64_t peak;           /* largest used seen, bytes */
    uint64_t waiting_bytes;  /* bytes asked for by waiters */
    uint64_t n_reserved;     /* successful reservations (count) */
    uint64_t n_released;     /* release calls (count) */
    uint64_t kicks;          /* budget_kick generation */
    budget_waiter *head, *tail; /* FIFO of blocked reservers */
} budget;

void budget_init(budget *b, uint64_t total);
void budget_destroy(budget *b);

/* Takes bytes at once if they fit and nobody is waiting. Returns 1 on success. */
int budget_try_reserve(budget *b, uint64_t bytes);

/* Waits in FIFO order until bytes fit, then takes them and returns 1. Returns 0 without
 * taking anything when timeout_ms (< 0: none) passes or budget_kick is called while
 * waiting. A request larger than total never fits (returns 0 at the timeout). */
int budget_reserve(budget *b, uint64_t bytes, int64_t timeout_ms);

/* Gives bytes back (part of an earlier reservation) and wakes the head waiter. */
void budget_release(budget *b, uint64_t bytes);

/* Makes every current waiter return 0 (the dispatcher re-plans). */
void budget_kick(budget *b);

/* Consistent snapshot of the counters. */
void budget_snapshot(budget *b, uint64_t *total, uint64_t *used, uint64_t *peak, uint64_t *waiting,
                     uint64_t *n_reserved, uint64_t *n_released);

#endif
