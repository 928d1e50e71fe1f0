/* pool_test.c - checks the thread pool: every task runs exactly once, worker indices are
 * in range and never shared by two running tasks, uneven tasks, concurrent callers,
 * nested runs, pool sizes (including <= 0 = online CPUs) and the NULL pool. */
#include "util/pool.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

#include "util/check.h"

#define MAX_WORKERS 64

struct count_ctx {
    size_t n;
    atomic_int *hits;              /* per task: number of times run */
    atomic_int busy[MAX_WORKERS];  /* per worker: tasks currently running with that index */
    atomic_int bad_worker;         /* worker index out of range or shared */
    int size;
    int uneven;                    /* 1: some tasks sleep */
};

static void count_task(void *ctxp, size_t task, int worker)
{
    struct count_ctx *c = ctxp;
    if (worker < 0 || worker >= c->size || worker >= MAX_WORKERS) {
        atomic_fetch_add(&c->bad_worker, 1);
        return;
    }
    if (atomic_fetch_add(&c->busy[worker], 1) != 0)
        atomic_fetch_add(&c->bad_worker, 1);
    if (task < c->n)
        atomic_fetch_add(&c->hits[task], 1);
    if (c->uneven && task % 7 == 0) {
        struct timespec ts = {0, 200000}; /* 0.2 ms */
        nanosleep(&ts, NULL);
    }
    atomic_fetch_sub(&c->busy[worker], 1);
}

static void run_count(pool_t *pool, size_t n, int uneven, const char *what)
{
    struct count_ctx *c = calloc(1, sizeof *c);
    c->n = n;
    c->hits = calloc(n ? n : 1, sizeof *c->hits);
    c->size = pool_size(pool);
    c->uneven = uneven;
    pool_run(pool, n, count_task, c);
    for (size_t i = 0; i < n; i++)
        CHECK(atomic_load(&c->hits[i]) == 1, "%s: task %zu ran %d times", what, i,
              atomic_load(&c->hits[i]));
    CHECK(atomic_load(&c->bad_worker) == 0, "%s: bad or shared worker index", what);
    free(c->hits);
    free(c);
}

/* several threads calling pool_run on one pool at the same time */
struct caller_arg {
    pool_t *pool;
    int rounds;
};

static void *caller_main(void *argp)
{
    struct caller_arg *a = argp;
    for (int r = 0; r < a->rounds; r++)
        run_count(a->pool, 1 + (size_t)(r * 37) % 500, r & 1, "concurrent");
    return NULL;
}

/* nested: each outer task runs an inner loop on the same pool */
struct nest_ctx {
    pool_t *pool;
    atomic_long sum;
    atomic_int bad;
};

struct inner_ctx {
    struct nest_ctx *outer;
    int outer_worker;
};

static void inner_task(void *ctxp, size_t task, int worker)
{
    struct inner_ctx *ic = ctxp;
    if (worker != ic->outer_worker)
        atomic_fetch_add(&ic->outer->bad, 1);
    atomic_fetch_add(&ic->outer->sum, (long)task);
}

static void outer_task(void *ctxp, size_t task, int worker)
{
    struct nest_ctx *c = ctxp;
    (void)task;
    struct inner_ctx ic = {c, worker};
    pool_run(c->pool, 10, inner_task, &ic); /* 0+..+9 = 45 */
}

int main(void)
{
    long ncpu = sysconf(_SC_NPROCESSORS_ONLN);

    /* NULL pool: inline */
    CHECK(pool_size(NULL) == 1, "pool_size(NULL) = %d", pool_size(NULL));
    run_count(NULL, 100, 0, "null pool");

    /* default size */
    pool_t *p0 = pool_create(0);
    CHECK(p0 != NULL, "pool_create(0) failed");
    CHECK(pool_size(p0) == (ncpu > 0 ? ncpu : 1), "pool_create(0) size %d, cpus %ld",
          pool_size(p0), ncpu);
    pool_destroy(p0);
    pool_t *pm = pool_create(-3);
    CHECK(pm && pool_size(pm) == (ncpu > 0 ? ncpu : 1), "pool_create(-3) size");
    pool_destroy(pm);

    static const int sizes[] = {1, 2, 3, 8};
    for (size_t si = 0; si < sizeof sizes / sizeof sizes[0]; si++) {
        pool_t *p = pool_create(sizes[si]);
        CHECK(p != NULL, "pool_create(%d) failed", sizes[si]);
        if (!p)
            continue;
        CHECK(pool_size(p) == sizes[si], "pool_size %d != %d", pool_size(p), sizes[si]);
        run_count(p, 0, 0, "zero tasks");
        run_count(p, 1, 0, "one task");
        run_count(p, 2, 0, "two tasks");
        run_count(p, 1000, 0, "1000 tasks");
        run_count(p, 100000, 0, "100000 tasks");
        run_count(p, 300, 1, "uneven");
        for (int r = 0; r < 200; r++) /* many short runs back to back */
            run_count(p, (size_t)r % 9, 0, "short runs");

        /* concurrent callers */
        enum { NCALLERS = 4 };
        pthread_t th[NCALLERS];
        struct caller_arg ca = {p, 30};
        for (int i = 0; i < NCALLERS; i++)
            pthread_create(&th[i], NULL, caller_main, &ca);
        for (int i = 0; i < NCALLERS; i++)
            pthread_join(th[i], NULL);

        /* nested */
        struct nest_ctx nc;
        nc.pool = p;
        atomic_init(&nc.sum, 0);
        atomic_init(&nc.bad, 0);
        pool_run(p, 50, outer_task, &nc);
        CHECK(atomic_load(&nc.sum) == 50 * 45, "nested sum %ld", atomic_load(&nc.sum));
        CHECK(atomic_load(&nc.bad) == 0, "nested worker index changed");

        pool_destroy(p);
    }
    pool_destroy(NULL);

    if (failures) {
        fprintf(stderr, "pool_test: %d failures\n", failures);
        return 1;
    }
    printf("pool_test: ok\n");
    return 0;
}
