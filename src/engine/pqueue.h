/* pqueue.h - a binary-heap priority queue ordered by (priority desc, sequence asc).
 *
 * Used for the scheduler (partitions waiting for budget) and the device queue
 * (synthesized partitions waiting for a device worker). Not thread-safe: the owner
 * holds its own lock. Items are opaque pointers; the queue never frees them.
 */
#ifndef CUZK_ENGINE_PQUEUE_H
#define CUZK_ENGINE_PQUEUE_H

#include <stddef.h>
#include <stdint.h>

typedef struct pq_entry {
    int prio;      /* higher first */
    uint64_t seq;  /* lower first among equal prio (arrival order) */
    void *item;
} pq_entry;

typedef struct pqueue {
    pq_entry *v;   /* heap array */
    size_t n, cap; /* entries, allocated entries */
} pqueue;

void pq_init(pqueue *q);
void pq_free(pqueue *q);
/* returns 0, or -1 when out of memory */
int pq_push(pqueue *q, int prio, uint64_t seq, void *item);
/* head item or NULL when empty */
void *pq_peek(const pqueue *q);
void *pq_pop(pqueue *q);
size_t pq_size(const pqueue *q);
/* removes every item for which pred(ctx, item) != 0 and returns how many; each removed
 * item is passed to on_removed (may be NULL) */
size_t pq_remove_if(pqueue *q, int (*pred)(void *ctx, void *item), void (*on_removed)(void *ctx, void *item),
                    void *ctx);

#endif
