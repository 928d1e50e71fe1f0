/* pool.c - fixed worker threads that share one loop at a time (see pool.h).
 *
 * DESIGN. One job slot per pool, protected by `mu`. pool_run takes `run_mu` (this is
 * what serializes callers), publishes the job with `seats` = min(n_tasks - 1, workers),
 * bumps `generation` and wakes that many workers (all of them by broadcast when every
 * worker is wanted). A worker that sees a new generation takes a seat if one is left,
 * claims task numbers from the atomic `next` until they run out, then leaves its seat
 * (`active`--); the last one out signals `done_cv`. The caller claims tasks too; when it
 * runs out, no task is left to start, so it withdraws the seats nobody has taken yet and
 * waits for the workers still seated. The slot may then be reused. A thread-local
 * pointer tells pool_run whether it is already running inside a task of this pool
 * (nested call: run inline).
 */
#include "util/pool.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdlib.h>
#include <unistd.h>

struct pool {
    int size;                 /* participants: worker threads + the caller, >= 1 */
    pthread_t *threads;       /* size-1 worker threads */
    pthread_mutex_t run_mu;   /* held by the caller for the whole of pool_run */
    pthread_mutex_t mu;       /* guards generation, stop, active */
    pthread_cond_t work_cv;   /* workers wait here for a new generation or stop */
    pthread_cond_t done_cv;   /* the caller waits here for active == 0 */
    uint64_t generation;      /* bumped once per published job */
    int stop;                 /* 1: workers exit */
    int seats;                /* workers the current job still accepts */
    int active;               /* seats taken or not yet withdrawn, minus workers that left */
    /* the current job (written under mu before generation is bumped) */
    pool_fn fn;
    void *ctx;
    size_t n_tasks;
    atomic_size_t next;       /* next task number to claim */
};

struct pool_worker_arg {
    pool_t *pool;
    int index; /* 1..size-1 */
};

static _Thread_local pool_t *tls_pool; /* pool whose task this thread is running, or NULL */
static _Thread_local int tls_worker;   /* worker index inside tls_pool */

static void pool_drain(pool_t *p, int worker)
{
    for (;;) {
        size_t t = atomic_fetch_add_explicit(&p->next, 1, memory_order_relaxed);
        if (t >= p->n_tasks)
            break;
        p->fn(p->ctx, t, worker);
    }
}

static void *pool_worker_main(void *argp)
{
    struct pool_worker_arg *arg = argp;
    pool_t *p = arg->pool;
    int index = arg->index;
    free(arg);
    tls_pool = p;
    tls_worker = index;
    uint64_t seen = 0;
    pthread_mutex_lock(&p->mu);
    for (;;) {
        while (!p->stop && p->generation == seen)
            pthread_cond_wait(&p->work_cv, &p->mu);
        if (p->stop)
            break;
        seen = p->generation;
        if (p->seats == 0)
            continue; /* enough workers on this job already */
        p->seats--;
        pthread_mutex_unlock(&p->mu);
        pool_drain(p, index);
        pthread_mutex_lock(&p->mu);
        if (--p->active == 0)
            pthread_cond_signal(&p->done_cv);
    }
    pthread_mutex_unlock(&p->mu);
    return NULL;
}

pool_t *pool_create(int nthreads)
{
    if (nthreads <= 0) {
        long n = sysconf(_SC_NPROCESSORS_ONLN);
        nthreads = n > 0 ? (int)n : 1;
    }
    pool_t *p = calloc(1, sizeof *p);
    if (!p)
        return NULL;
    p->size = 1;
    pthread_mutex_init(&p->run_mu, NULL);
    pthread_mutex_init(&p->mu, NULL);
    pthread_cond_init(&p->work_cv, NULL);
    pthread_cond_init(&p->done_cv, NULL);
    atomic_init(&p->next, 0);
    if (nthreads > 1) {
        p->threads = calloc((size_t)nthreads - 1, sizeof *p->threads);
        if (!p->threads)
            goto fail;
        for (int i = 1; i < nthreads; i++) {
            struct pool_worker_arg *arg = malloc(sizeof *arg);
            if (!arg)
                goto fail;
            arg->pool = p;
            arg->index = i;
            if (pthread_create(&p->threads[i - 1], NULL, pool_worker_main, arg) != 0) {
                free(arg);
                goto fail;
            }
            p->size++;
        }
    }
    return p;
fail:
    pool_destroy(p);
    return NULL;
}

void pool_destroy(pool_t *p)
{
    if (!p)
        return;
    pthread_mutex_lock(&p->mu);
    p->stop = 1;
    pthread_cond_broadcast(&p->work_cv);
    pthread_mutex_unlock(&p->mu);
    for (int i = 0; i < p->size - 1; i++)
        pthread_join(p->threads[i], NULL);
    free(p->threads);
    pthread_cond_destroy(&p->done_cv);
    pthread_cond_destroy(&p->work_cv);
    pthread_mutex_destroy(&p->mu);
    pthread_mutex_destroy(&p->run_mu);
    free(p);
}

int pool_size(const pool_t *p)
{
    return p ? p->size : 1;
}

void pool_run(pool_t *p, size_t n_tasks, pool_fn fn, void *ctx)
{
    if (n_tasks == 0)
        return;
    /* inline: no pool, no workers, a single task, or a nested call from one of our tasks */
    if (!p || p->size == 1 || n_tasks == 1 || tls_pool == p) {
        int worker = (p && tls_pool == p) ? tls_worker : 0;
        for (size_t t = 0; t < n_tasks; t++)
            fn(ctx, t, worker);
        return;
    }
    pthread_mutex_lock(&p->run_mu);
    pthread_mutex_lock(&p->mu);
    p->fn = fn;
    p->ctx = ctx;
    p->n_tasks = n_tasks;
    atomic_store_explicit(&p->next, 0, memory_order_relaxed);
    int want = p->size - 1;
    if (n_tasks - 1 < (size_t)want)
        want = (int)(n_tasks - 1);
    p->seats = want;
    p->active = want;
    p->generation++;
    if (want == p->size - 1)
        pthread_cond_broadcast(&p->work_cv);
    else
        for (int i = 0; i < want; i++)
            pthread_cond_signal(&p->work_cv);
    pthread_mutex_unlock(&p->mu);

    pool_t *saved_pool = tls_pool;
    int saved_worker = tls_worker;
    tls_pool = p;
    tls_worker = 0;
    pool_drain(p, 0);
    tls_pool = saved_pool;
    tls_worker = saved_worker;

    pthread_mutex_lock(&p->mu);
    p->active -= p->seats; /* seats nobody took: no task is left for them */
    p->seats = 0;
    while (p->active > 0)
        pthread_cond_wait(&p->done_cv, &p->mu);
    pthread_mutex_unlock(&p->mu);
    pthread_mutex_unlock(&p->run_mu);
}
