/* pool.h - a fixed-size thread pool for data-parallel loops (NTT stages, MSM chunks).
 *
 * DESIGN. pool_create(n) starts n-1 worker threads; the thread that calls pool_run is
 * the n-th participant, so a pool of size 1 has no threads and runs everything inline.
 * pool_run(pool, n_tasks, fn, ctx) calls fn(ctx, task, worker) once for every task in
 * 0..n_tasks-1 and returns when all calls have returned. Tasks are claimed one at a time
 * from an atomic counter, so a few slow tasks do not hold the others back: cut work into
 * a few times more tasks than pool_size() when task costs are uneven.
 *
 * `worker` is in 0..pool_size()-1 and is unique among the calls running at the same
 * time, so fn may index per-worker scratch by it. The calling thread is worker 0.
 *
 * Concurrency: pool_run may be called from several threads on one pool; the runs are
 * serialized (a second caller blocks until the first run is finished, then runs its own).
 * A pool_run issued from inside a task of the same pool runs its tasks inline on that
 * thread, with the same worker index, instead of deadlocking. pool == NULL is allowed
 * everywhere and means "run inline on the caller, worker 0, size 1".
 */
#ifndef CUZK_UTIL_POOL_H
#define CUZK_UTIL_POOL_H

#include <stddef.h>

typedef struct pool pool_t;

typedef void (*pool_fn)(void *ctx, size_t task, int worker);

/* nthreads <= 0: as many participants as online CPUs (sysconf). Returns NULL when a
 * thread could not be started or memory ran out. */
pool_t *pool_create(int nthreads);
/* Stops and joins the workers. NULL is ignored. Must not be called while a run is active. */
void pool_destroy(pool_t *pool);
/* Number of participants (worker threads + the caller); 1 for NULL. */
int pool_size(const pool_t *pool);
/* Runs fn(ctx, task, worker) for task = 0..n_tasks-1 over the pool and the calling thread. */
void pool_run(pool_t *pool, size_t n_tasks, pool_fn fn, void *ctx);

#endif
