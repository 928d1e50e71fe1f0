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

/* removes and returns in out[] (in queue order: priority desc, sequence asc) the first `want`
 * items for which match(ctx, item) != 0; returns how many (the device stage's batches: the next
 * ready partitions of one key) */
size_t pq_take_best(pqueue *q, size_t want, int (*match)(void *ctx, void *item), void *ctx, void **out);

/* How many partitions a device worker proves in one pass over a key's bases: the one it popped
 * plus `same_key_ready` of the same key ready now, up to the key's batch size on the device
 * (key_batch: 1 for a resident key). It never waits for more to arrive, and it is 1 when the
 * popped partition is critical or a critical one waits for a device, so that a winning-post
 * partition never waits behind a longer pass. */
size_t batch_size(unsigned key_batch, int popped_critical, int critical_waiting, size_t same_key_ready);

#endif
