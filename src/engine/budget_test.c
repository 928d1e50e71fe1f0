/* budget_test.c - strict FIFO order of budget reservations, kicks, timeouts, and the
 * scheduler's priority queue order (checked against a plain sort as the reference). */
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

#include "engine/budget.h"
#include "engine/pqueue.h"
#include "util/check.h"

static budget B;
static atomic_int order_pos;
static int order[8];

typedef struct req {
    int id;
    uint64_t bytes;
    int got;
} req;

static void *reserver(void *arg)
{
    req *r = arg;
    r->got = budget_reserve(&B, r->bytes, 5000);
    if (r->got)
        order[atomic_fetch_add(&order_pos, 1)] = r->id;
    return NULL;
}

static void wait_waiting(uint64_t bytes)
{
    for (int i = 0; i < 2000; i++) {
        uint64_t w;
        budget_snapshot(&B, NULL, NULL, NULL, &w, NULL, NULL);
        if (w == bytes)
            return;
        usleep(1000);
    }
}

static void wait_granted(int n)
{
    for (int i = 0; i < 5000 && atomic_load(&order_pos) < n; i++)
        usleep(1000);
}

/* The grant order is read from which requests can be granted at each step, not from the order
 * in which the granted threads get to run afterwards (that is the scheduler's). */
static void test_fifo(void)
{
    budget_init(&B, 100);
    CHECK(budget_try_reserve(&B, 80), "first 80 of 100 should fit");
    req big = {1, 50, 0}, small = {2, 20, 0};
    pthread_t tb, ts;
    pthread_create(&tb, NULL, reserver, &big);
    wait_waiting(50);
    pthread_create(&ts, NULL, reserver, &small);
    wait_waiting(70);
    /* small fits (80+20 <= 100) but must wait behind big */
    usleep(20000);
    CHECK(atomic_load(&order_pos) == 0, "a request jumped the FIFO (%d granted)", atomic_load(&order_pos));
    CHECK(!budget_try_reserve(&B, 1), "try_reserve must not pass waiters");
    /* 40 used: big (50) fits and goes first; after it small (20) no longer fits, while out of
       turn small would have fitted and left no room for big */
    budget_release(&B, 40);
    wait_granted(1);
    usleep(20000);
    CHECK(atomic_load(&order_pos) == 1 && order[0] == 1, "after the first release: %d granted, first %d, expected "
          "big (1) alone", atomic_load(&order_pos), order[0]);
    budget_release(&B, 60);
    pthread_join(tb, NULL);
    pthread_join(ts, NULL);
    CHECK(big.got && small.got, "both should be granted after the releases");
    CHECK(order[0] == 1 && order[1] == 2, "grant order %d,%d, expected 1,2", order[0], order[1]);
    uint64_t used, peak, n_res;
    budget_snapshot(&B, NULL, &used, &peak, NULL, &n_res, NULL);
    CHECK(used == 50, "used %llu, expected 50", (unsigned long long)used);
    CHECK(peak <= 100, "peak %llu over total", (unsigned long long)peak);
    CHECK(n_res == 3, "reservations %llu", (unsigned long long)n_res);
    budget_destroy(&B);
}

static void test_too_big_and_timeout(void)
{
    budget_init(&B, 100);
    struct timespec t0, t1;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    CHECK(!budget_reserve(&B, 101, 30), "101 of 100 must never fit");
    clock_gettime(CLOCK_MONOTONIC, &t1);
    CHECK(t1.tv_sec - t0.tv_sec < 5, "timeout not honoured");
    CHECK(budget_reserve(&B, 100, 0), "exactly total fits");
    budget_release(&B, 60);
    budget_release(&B, 40);
    uint64_t used;
    budget_snapshot(&B, NULL, &used, NULL, NULL, NULL, NULL);
    CHECK(used == 0, "release in parts left %llu", (unsigned long long)used);
    budget_destroy(&B);
}

static void *kicked(void *arg)
{
    req *r = arg;
    r->got = budget_reserve(&B, r->bytes, -1);
    return NULL;
}

static void test_kick(void)
{
    budget_init(&B, 10);
    budget_try_reserve(&B, 10);
    req r = {3, 5, -1};
    pthread_t t;
    pthread_create(&t, NULL, kicked, &r);
    wait_waiting(5);
    budget_kick(&B);
    pthread_join(t, NULL);
    CHECK(r.got == 0, "kicked waiter should return 0");
    budget_destroy(&B);
}

typedef struct item {
    int prio;
    uint64_t seq;
} item;

static int cmp_ref(const void *a, const void *b)
{
    const item *x = *(item *const *)a, *y = *(item *const *)b;
    if (x->prio != y->prio)
        return y->prio - x->prio;
    return x->seq < y->seq ? -1 : x->seq > y->seq;
}

static int odd_seq(void *ctx, void *it)
{
    (void)ctx;
    return ((item *)it)->seq % 2 == 1;
}

static void test_pqueue(void)
{
    enum { N = 500 };
    static item items[N];
    item *ref[N];
    pqueue q;
    pq_init(&q);
    srand(7);
    for (int i = 0; i < N; i++) {
        items[i].prio = rand() % 4;
        items[i].seq = (uint64_t)i;
        ref[i] = &items[i];
        pq_push(&q, items[i].prio, items[i].seq, &items[i]);
    }
    qsort(ref, N, sizeof ref[0], cmp_ref);
    for (int i = 0; i < N; i++) {
        item *got = pq_pop(&q);
        CHECK(got == ref[i], "pop %d: prio %d seq %llu, expected prio %d seq %llu", i, got ? got->prio : -1,
              got ? (unsigned long long)got->seq : 0ULL, ref[i]->prio, (unsigned long long)ref[i]->seq);
        if (got != ref[i])
            break;
    }
    CHECK(pq_pop(&q) == NULL, "queue should be empty");
    /* removal keeps the order of the rest */
    for (int i = 0; i < N; i++)
        pq_push(&q, items[i].prio, items[i].seq, &items[i]);
    size_t removed = pq_remove_if(&q, odd_seq, NULL, NULL);
    CHECK(removed == N / 2, "removed %zu", removed);
    int k = 0;
    for (int i = 0; i < N; i++) {
        if (ref[i]->seq % 2)
            continue;
        item *got = pq_pop(&q);
        CHECK(got == ref[i], "after removal, pop %d out of order", k);
        if (got != ref[i])
            break;
        k++;
    }
    pq_free(&q);
}

static int even_prio(void *ctx, void *it)
{
    (void)ctx;
    return ((item *)it)->prio % 2 == 0;
}

/* pq_take_best against the reference order filtered by the predicate; the rest keeps its order */
static void test_take_best(void)
{
    enum { N = 300 };
    static item items[N];
    item *ref[N];
    pqueue q;
    srand(11);
    for (int i = 0; i < N; i++) {
        items[i].prio = rand() % 5;
        items[i].seq = (uint64_t)(rand() % 1000) * N + (uint64_t)i; /* arrival order not the index order */
        ref[i] = &items[i];
    }
    qsort(ref, N, sizeof ref[0], cmp_ref);
    static const size_t wants[] = {0, 1, 3, 10, 1000};
    for (size_t w = 0; w < sizeof wants / sizeof wants[0]; w++) {
        pq_init(&q);
        for (int i = 0; i < N; i++)
            pq_push(&q, items[i].prio, items[i].seq, &items[i]);
        void *out[N];
        size_t got = pq_take_best(&q, wants[w], even_prio, NULL, out);
        size_t k = 0, bad = 0;
        for (int i = 0; i < N && k < wants[w]; i++)
            if (ref[i]->prio % 2 == 0)
                bad += k >= got || out[k++] != ref[i];
        CHECK(bad == 0 && got == k, "take_best(%zu): got %zu, expected %zu, %zu out of order", wants[w], got, k, bad);
        /* the rest: the reference order without the taken ones */
        size_t rest = 0;
        for (int i = 0; i < N; i++) {
            int taken = 0;
            for (size_t j = 0; j < got; j++)
                taken |= out[j] == ref[i];
            if (taken)
                continue;
            bad += pq_pop(&q) != ref[i];
            rest++;
        }
        CHECK(bad == 0 && pq_pop(&q) == NULL && rest + got == N, "take_best(%zu): the rest out of order", wants[w]);
        pq_free(&q);
    }
    CHECK(batch_size(1, 0, 0, 9) == 1, "a resident key proves one at a time");
    CHECK(batch_size(10, 0, 0, 9) == 10 && batch_size(10, 0, 0, 30) == 10 && batch_size(4, 0, 0, 2) == 3,
          "batch: what is ready, up to the key's size");
    CHECK(batch_size(10, 0, 0, 0) == 1, "nothing else ready: alone, no waiting");
    CHECK(batch_size(10, 1, 0, 9) == 1 && batch_size(10, 0, 1, 9) == 1, "critical: never batched, never behind one");
}

int main(void)
{
    test_take_best();
    test_fifo();
    test_too_big_and_timeout();
    test_kick();
    test_pqueue();
    if (failures) {
        fprintf(stderr, "budget_test: %d failure(s)\n", failures);
        return 1;
    }
    printf("budget_test: ok\n");
    return 0;
}
