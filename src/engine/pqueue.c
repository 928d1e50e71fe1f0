/* pqueue.c - binary heap on (prio desc, seq asc); see pqueue.h. */
#include "engine/pqueue.h"

#include <stdlib.h>
#include <string.h>

void pq_init(pqueue *q)
{
    q->v = NULL;
    q->n = q->cap = 0;
}

void pq_free(pqueue *q)
{
    free(q->v);
    pq_init(q);
}

/* a comes before b */
static int before(const pq_entry *a, const pq_entry *b)
{
    return a->prio != b->prio ? a->prio > b->prio : a->seq < b->seq;
}

static void swap(pq_entry *a, pq_entry *b)
{
    pq_entry t = *a;
    *a = *b;
    *b = t;
}

static void sift_up(pqueue *q, size_t i)
{
    while (i > 0) {
        size_t p = (i - 1) / 2;
        if (!before(&q->v[i], &q->v[p]))
            break;
        swap(&q->v[i], &q->v[p]);
        i = p;
    }
}

static void sift_down(pqueue *q, size_t i)
{
    for (;;) {
        size_t l = 2 * i + 1, r = l + 1, m = i;
        if (l < q->n && before(&q->v[l], &q->v[m]))
            m = l;
        if (r < q->n && before(&q->v[r], &q->v[m]))
            m = r;
        if (m == i)
            return;
        swap(&q->v[i], &q->v[m]);
        i = m;
    }
}

int pq_push(pqueue *q, int prio, uint64_t seq, void *item)
{
    if (q->n == q->cap) {
        size_t cap = q->cap ? 2 * q->cap : 16;
        pq_entry *v = realloc(q->v, cap * sizeof *v);
        if (!v)
            return -1;
        q->v = v;
        q->cap = cap;
    }
    q->v[q->n] = (pq_entry){prio, seq, item};
    sift_up(q, q->n++);
    return 0;
}

void *pq_peek(const pqueue *q)
{
    return q->n ? q->v[0].item : NULL;
}

void *pq_pop(pqueue *q)
{
    if (!q->n)
        return NULL;
    void *item = q->v[0].item;
    q->v[0] = q->v[--q->n];
    sift_down(q, 0);
    return item;
}

size_t pq_size(const pqueue *q)
{
    return q->n;
}

size_t pq_remove_if(pqueue *q, int (*pred)(void *ctx, void *item), void (*on_removed)(void *ctx, void *item),
                    void *ctx)
{
    size_t kept = 0, removed = 0;
    for (size_t i = 0; i < q->n; i++) {
        if (pred(ctx, q->v[i].item)) {
            if (on_removed)
                on_removed(ctx, q->v[i].item);
            removed++;
        } else {
            q->v[kept++] = q->v[i];
        }
    }
    q->n = kept;
    for (size_t i = q->n / 2 + 1; i-- > 0;)
        sift_down(q, i);
    return removed;
}

size_t pq_take_best(pqueue *q, size_t want, int (*match)(void *ctx, void *item), void *ctx, void **out)
{
    size_t got = 0;
    if (!want)
        return 0;
    /* the best `want` matching entries, kept sorted in out-of-heap slots by insertion */
    pq_entry *best = malloc(want * sizeof *best);
    if (!best)
        return 0;
    for (size_t i = 0; i < q->n; i++) {
        if (!match(ctx, q->v[i].item))
            continue;
        pq_entry x = q->v[i];
        size_t at = got < want ? got : want;
        while (at > 0 && before(&x, &best[at - 1]))
            at--;
        if (at >= want)
            continue;
        size_t last = got < want ? got : want - 1;
        memmove(&best[at + 1], &best[at], (last - at) * sizeof *best);
        best[at] = x;
        if (got < want)
            got++;
    }
    /* remove exactly those (items are distinct pointers) */
    size_t kept = 0;
    for (size_t i = 0; i < q->n; i++) {
        int take = 0;
        for (size_t j = 0; j < got && !take; j++)
            take = q->v[i].item == best[j].item;
        if (!take)
            q->v[kept++] = q->v[i];
    }
    q->n = kept;
    for (size_t i = q->n / 2 + 1; i-- > 0;)
        sift_down(q, i);
    for (size_t j = 0; j < got; j++)
        out[j] = best[j].item;
    free(best);
    return got;
}

size_t batch_size(unsigned key_batch, int popped_critical, int critical_waiting, size_t same_key_ready)
{
    if (key_batch <= 1 || popped_critical || critical_waiting)
        return 1;
    return same_key_ready + 1 < key_batch ? same_key_ready + 1 : key_batch;
}
