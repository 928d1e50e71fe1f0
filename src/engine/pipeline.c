/* pipeline.c - the engine's threads: one dispatcher, synthesis workers, device workers
 * (N per device) and finalizers.
 *
 * DESIGN. A partition moves scheduler -> (dispatcher: budget) -> synthesis queue ->
 * (synthesis worker: witness + a/b/c) -> device queue (bounded, priority order) ->
 * (device worker: h, then the MSMs, each under its own device lock, so one worker's
 * h overlaps another's MSMs) -> finalize queue (unbounded: the hand-off never waits) ->
 * (finalizer, finalize.c: assemble, verify the proofs of one key together, journal).
 * Only the dispatcher reserves budget, so
 * admission is in strict (priority, arrival) order and a release wakes exactly one
 * thread. Device workers never take e->mu: they pop from the device queue under its
 * own lock, hold a device lock only around device work, and read the engine-wide
 * counters they need for idle-gap attribution from atomics. A critical partition
 * (winning-post) goes first on its device: other workers there start no new device step
 * for a non-critical partition until its device stage is over, and a worker waiting for a
 * device lock that finds one at the head of the device queue runs it there and then
 * (dev_acquire), so it never waits for a step to end to be picked up; on a backend that
 * isolates keys it takes no device lock, so a step already running for another key does
 * not delay it either (its kernels go first on high-priority streams). The backend
 * reports the copies the device waits for through the workspace's phase hook, so such
 * intervals count as "copy" gaps. Workspace buffers come from the pool, page-locked when
 * the backend is a GPU. A partition of a job that was canceled or has failed is dropped
 * at the next stage boundary, giving back its budget, buffer and key reference. A
 * partition that fails (bad witness, backend error, proof that does not verify) is
 * retried once from the scheduler; a second failure fails the job with the reason. A failure
 * for a transient cause (no space, device or host memory exhausted: engine_err_transient)
 * is no attempt: the partition waits in PART_PAUSED and is retried with backoff
 * (engine_pause.c), which the dispatcher releases back into the scheduler.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "engine/engine_internal.h"
#include "util/log.h"

/* ---- small helpers ---- */

static void stage_end(engine *e, epart *p, trk_stage s, int dev, int worker)
{
    int64_t now = eng_now_us();
    p->stage_us[s] = now - p->stage_t0;
    tracker_stage(e->trk, p->job->ids, p->index, s, dev, worker, p->stage_t0, now);
    p->stage_t0 = now;
}

static int job_stopping(const ejob *j)
{
    return __atomic_load_n(&j->stopping, __ATOMIC_ACQUIRE);
}

static void timed_wait_ms(pthread_cond_t *cv, pthread_mutex_t *mu, int ms)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    ts.tv_nsec += (long)ms * 1000000L;
    ts.tv_sec += ts.tv_nsec / 1000000000L;
    ts.tv_nsec %= 1000000000L;
    pthread_cond_timedwait(cv, mu, &ts);
}

void pipeline_enqueue(engine *e, epart *p)
{
    p->state = PART_QUEUED;
    p->stage_t0 = eng_now_us();
    if (pq_push(&e->sched, (int)p->job->prio, p->seq, p) == 0)
        atomic_fetch_add(&e->n_sched, 1);
    pthread_cond_signal(&e->cv_sched);
    budget_kick(&e->bud);
}

/* budget and buffer (no lock needed) */
static void release_memory(engine *e, epart *p)
{
    if (p->held_file) {
        budget_release(&e->bud, p->held_file);
        p->held_file = 0;
    }
    if (p->buf) {
        bufpool_give(e, p->buf, p->buf_size, p->buf_pinned); /* keeps or releases the charge */
        p->buf = NULL;
        p->held_ws = 0;
    } else if (p->held_ws) {
        budget_release(&e->bud, p->held_ws);
        p->held_ws = 0;
    }
    public_free(&p->pub);
}

/* key reference (e->mu held) */
static void release_key_locked(epart *p)
{
    if (p->key) {
        p->key->refs--;
        p->key->last_used_ms = eng_now_ms();
        p->key = NULL;
    }
}

void pipeline_release(engine *e, epart *p)
{
    release_memory(e, p);
    pthread_mutex_lock(&e->mu);
    release_key_locked(p);
    pthread_mutex_unlock(&e->mu);
}

static void part_drop(engine *e, epart *p)
{
    pipeline_release(e, p);
    if (e->fleet)
        fleet_part_leave(e, p);
    pthread_mutex_lock(&e->mu);
    p->state = PART_CANCELED;
    e->parts_total[PART_CANCELED]++;
    pthread_mutex_unlock(&e->mu);
    pthread_cond_signal(&e->cv_sched); /* memory came back */
}

typedef struct rm_ctx {
    ejob *job;
    engine *e;
} rm_ctx;

static int rm_pred(void *ctx, void *item)
{
    return ((epart *)item)->job == ((rm_ctx *)ctx)->job;
}

/* partition of a stopped job removed from a queue while e->mu is held */
static void removed_from_sched(void *ctx, void *item)
{
    engine *e = ((rm_ctx *)ctx)->e;
    epart *p = item;
    p->state = PART_CANCELED;
    p->local = p->lease = 0; /* a stopped job's lease lapses: nobody claims its partitions */
    atomic_fetch_sub(&e->n_sched, 1);
}

static void removed_from_synthq(void *ctx, void *item)
{
    engine *e = ((rm_ctx *)ctx)->e;
    epart *p = item;
    release_memory(e, p);
    release_key_locked(p);
    p->state = PART_CANCELED;
    p->local = p->lease = 0;
    atomic_fetch_sub(&e->n_presynth, 1);
}

/* removes the job's partitions from the scheduler and synthesis queue (e->mu held) */
void pipeline_remove_job_locked(engine *e, ejob *j)
{
    rm_ctx c = {j, e};
    pq_remove_if(&e->sched, rm_pred, removed_from_sched, &c);
    pq_remove_if(&e->synthq, rm_pred, removed_from_synthq, &c);
    pause_remove_job_locked(e, j);
    budget_kick(&e->bud);
    pthread_cond_signal(&e->cv_sched);
}

/* A partition's step failed with rc at `step`: a transient cause (engine_err_transient) parks
 * it (engine_pause.c) and does not count as an attempt; a permanent one is retried once from
 * the scheduler, and fails the job the second time. */
static void part_fail(engine *e, epart *p, cuzk_err rc, eng_step step, const char *msg)
{
    release_memory(e, p);
    pthread_mutex_lock(&e->mu);
    release_key_locked(p);
    ejob *j = p->job;
    snprintf(p->error, sizeof p->error, "%s", msg);
    if (job_stopping(j)) {
        p->state = PART_CANCELED;
        p->local = p->lease = 0; /* a stopped job's lease lapses */
        pthread_mutex_unlock(&e->mu);
        return;
    }
    engine_pause_cause cause = engine_err_transient(rc, step);
    if (cause != PAUSE_NONE) {
        if (e->running)
            pause_park_locked(e, p, cause, msg);
        else
            p->state = PART_CANCELED; /* stopping: redone after the restart, as the journal says */
        pthread_mutex_unlock(&e->mu);
        return;
    }
    if (p->attempts < 2 && e->running) {
        LOG(LOG_WARN, "%s partition %u failed (%s); retrying once", j->ids, p->index, msg);
        e->retries++;
        pipeline_enqueue(e, p);
        pthread_mutex_unlock(&e->mu);
        return;
    }
    p->state = PART_FAILED;
    e->parts_total[PART_FAILED]++;
    __atomic_store_n(&j->stopping, 1, __ATOMIC_RELEASE);
    pipeline_remove_job_locked(e, j);
    pthread_mutex_unlock(&e->mu);
    if (e->fleet)
        fleet_part_leave(e, p);
    char why[CUZK_ERRLEN];
    snprintf(why, sizeof why, "partition %u failed twice: %.400s", p->index, msg);
    LOG(LOG_ERROR, "%s: %s", j->ids, why);
    eng_job_finish(e, j, JOB_FAILED, why);
}

static void worker_set(eworker *w, int state, epart *p)
{
    atomic_store(&w->state, state);
    atomic_store(&w->cur_job, p ? p->job->id : 0);
    atomic_store(&w->cur_part, p ? (int)p->index : -1);
}

/* ---- dispatcher ---- */

static void *dispatcher_main(void *arg)
{
    eworker *w = arg;
    engine *e = w->e;
    pthread_mutex_lock(&e->mu);
    while (e->running) {
        /* paused partitions whose backoff has passed go back to the scheduler first */
        int64_t next_resume = pause_release_due_locked(e);
        epart *p = pq_peek(&e->sched);
        if (!p) {
            worker_set(w, 0, NULL);
            if (next_resume < 0)
                pthread_cond_wait(&e->cv_sched, &e->mu);
            else
                timed_wait_ms(&e->cv_sched, &e->mu, (int)(next_resume < 1 ? 1 : next_resume > 1000 ? 1000 : next_resume));
            continue;
        }
        ejob *j = p->job;
        if (job_stopping(j)) {
            pq_pop(&e->sched);
            atomic_fetch_sub(&e->n_sched, 1);
            p->state = PART_CANCELED;
            p->local = p->lease = 0; /* a stopped job's lease lapses */
            continue;
        }
        /* admission window: no more partitions between the scheduler and the devices
           than the device queue holds, so synthesis workers never sit on a finished
           partition and a later, more urgent one finds at most the device queue's
           in-flight work ahead of it (priority order is exact only in the scheduler) */
        /* (a critical partition is admitted past the window: one more in flight is the price
           of not waiting for a device worker to free a slot) */
        if (j->prio != PRIO_CRITICAL && atomic_load(&e->n_presynth) + atomic_load(&e->n_ready) >= e->cfg.queue_depth) {
            worker_set(w, 0, NULL);
            timed_wait_ms(&e->cv_sched, &e->mu, 50);
            continue;
        }
        ekey *k = key_find(e, j->zkey);
        uint64_t key_need = k ? 0 : j->key_bytes;
        size_t bs = (size_t)(j->part_bytes - j->file_bytes);
        int reuse = bufpool_has(e, bs);
        uint64_t need = j->part_bytes - (reuse ? bs : 0) + key_need;
        pthread_mutex_unlock(&e->mu);
        worker_set(w, 1, p);
        int ok = budget_try_reserve(&e->bud, need);
        if (!ok) {
            /* memory pressure: drop cached buffers and idle keys (least recently used
               first, never the head's own key), but only when that makes the head fit;
               otherwise wait for running partitions to give memory back */
            uint64_t total, used;
            budget_snapshot(&e->bud, &total, &used, NULL, NULL, NULL, NULL);
            pthread_mutex_lock(&e->mu);
            uint64_t reclaim = key_idle_bytes(e, j->zkey) + bufpool_cached_bytes(e);
            uint64_t after = used > reclaim ? used - reclaim : 0;
            uint64_t freed = 0;
            if (need <= total && after <= total - need) {
                pthread_mutex_unlock(&e->mu);
                freed = bufpool_trim(e);
                pthread_mutex_lock(&e->mu);
                freed += key_evict_lru(e, need, j->zkey);
            }
            if (freed)
                continue; /* re-plan with the new numbers */
            pthread_mutex_unlock(&e->mu);
            worker_set(w, 2, p);
            ok = budget_reserve(&e->bud, need, 250);
        }
        pthread_mutex_lock(&e->mu);
        if (!ok)
            continue;
        if (!e->running || pq_peek(&e->sched) != p || job_stopping(j) || (key_find(e, j->zkey) != NULL) != !key_need ||
            (reuse && !bufpool_has(e, bs))) {
            /* something changed while we waited: give it back and re-plan */
            pthread_mutex_unlock(&e->mu);
            budget_release(&e->bud, need);
            pthread_mutex_lock(&e->mu);
            continue;
        }
        if (key_need) {
            k = key_new(e, j->zkey, key_need);
            if (!k) {
                pthread_mutex_unlock(&e->mu);
                budget_release(&e->bud, need);
                pthread_mutex_lock(&e->mu);
                timed_wait_ms(&e->cv_sched, &e->mu, 100);
                continue;
            }
        }
        pq_pop(&e->sched);
        atomic_fetch_sub(&e->n_sched, 1);
        k->refs++;
        k->last_used_ms = eng_now_ms();
        p->key = k;
        p->buf_size = bs;
        p->held_ws = bs;
        p->held_file = j->file_bytes;
        if (reuse) {
            int reused;
            p->buf = bufpool_take(e, bs, &reused, &p->buf_pinned);
        }
        p->attempts++;
        p->state = PART_ADMITTED;
        p->error[0] = 0;
        p->dev = p->worker = -1;
        stage_end(e, p, STAGE_QUEUED, -1, -1);
        if (j->state == JOB_QUEUED)
            j->state = JOB_RUNNING;
        atomic_fetch_add(&e->n_presynth, 1);
        pq_push(&e->synthq, (int)j->prio, p->seq, p);
        pthread_cond_signal(&e->cv_synth);
        atomic_fetch_add(&w->done, 1);
    }
    pthread_mutex_unlock(&e->mu);
    return NULL;
}

/* ---- synthesis ---- */

/* *step says where it failed: STEP_KEY while the key loads, STEP_SYNTH after */
static cuzk_err synthesize(engine *e, epart *p, eng_step *step, char *err)
{
    ekey *k = p->key;
    *step = STEP_KEY;
    cuzk_err rc = key_ensure(e, k, err);
    if (rc)
        return rc;
    *step = STEP_SYNTH;
    const zkey_file *z = &k->z;
    size_t ws_bytes = groth16_ws_size(z), wbytes = 32 * (size_t)z->n_vars;
    if (ws_bytes + wbytes != p->buf_size)
        return cuzk_errf(err, CUZK_EINVAL, "key %s changed since submission (workspace %zu bytes, planned %zu)",
                         k->path, ws_bytes + wbytes, p->buf_size);
    if (!p->buf) {
        int reused;
        p->buf = bufpool_take(e, p->buf_size, &reused, &p->buf_pinned);
        if (!p->buf)
            return cuzk_errf(err, CUZK_ENOMEM, "cannot allocate %zu bytes of workspace", p->buf_size);
    }
    /* a job of circuit inputs: the generator writes the witness (engine_witgen.c) */
    char gen_path[ENGINE_PATH_MAX + 64];
    const char *wpath = p->witness;
    if (p->job->gen) {
        if ((rc = eng_witgen_partition(e, p, gen_path, sizeof gen_path, err)))
            return rc;
        wpath = gen_path;
    }
    wtns_file w;
    if (!(rc = wtns_open(&w, wpath, err))) {
        if (!(rc = zkey_check_witness(z, &w, err)) && !(rc = groth16_public_from_wtns(&p->pub, z, &w, err)))
            memcpy(p->buf + ws_bytes, w.values, wbytes);
        wtns_close(&w);
    } else if (p->job->gen && eng_disk_short(e, witgen_wtns_bytes(z->n_vars))) {
        /* the generator's witness was cut short by a full data dir: no space, not a bad input */
        cuzk_err_prefix(err, "no room for the witness in %s", e->data_dir);
        rc = CUZK_ENOSPC;
    }
    if (p->job->gen)
        unlink(gen_path); /* copied into the workspace: a retry generates it again */
    if (rc)
        return rc;
    budget_release(&e->bud, p->held_file);
    p->held_file = 0;
    groth16_ws_init(&p->ws, z, p->buf, p->buf + ws_bytes);
    p->ws.pinned = p->buf_pinned;
    void *ks = k->ks_synth;
    cuzk_backend *be = p->job->prio == PRIO_CRITICAL ? eng_crit_synth(e, k, &ks, err)
                                                     : eng_synth_backend(e, z->curve->id, err);
    if (!be)
        return err[0] ? CUZK_ENOMEM : cuzk_errf(err, CUZK_ENOMEM, "cannot create a synthesis backend");
    return groth16_step_abc(be, ks, &p->ws, err);
}

static void *synth_main(void *arg)
{
    eworker *w = arg;
    engine *e = w->e;
    char err[CUZK_ERRLEN];
    for (;;) {
        pthread_mutex_lock(&e->mu);
        worker_set(w, 0, NULL);
        while (e->running && !pq_size(&e->synthq))
            pthread_cond_wait(&e->cv_synth, &e->mu);
        if (!e->running) {
            pthread_mutex_unlock(&e->mu);
            break;
        }
        epart *p = pq_pop(&e->synthq);
        p->state = PART_SYNTH;
        stage_end(e, p, STAGE_ADMIT, -1, -1);
        pthread_mutex_unlock(&e->mu);
        worker_set(w, 1, p);
        if (job_stopping(p->job)) {
            atomic_fetch_sub(&e->n_presynth, 1);
            part_drop(e, p);
            continue;
        }
        int64_t t0 = eng_now_us();
        err[0] = 0;
        eng_step step;
        cuzk_err rc = synthesize(e, p, &step, err);
        atomic_fetch_add(&w->busy_us, eng_now_us() - t0);
        if (rc) {
            atomic_fetch_sub(&e->n_presynth, 1);
            if (!e->running)
                part_drop(e, p); /* stopped by the shutdown (a witness generator is killed): redone after restart */
            else
                part_fail(e, p, rc, step, err[0] ? err : cuzk_strerror(rc));
            continue;
        }
        stage_end(e, p, STAGE_SYNTH, -1, -1);
        atomic_fetch_add(&w->done, 1);
        /* hand over to the device queue (bounded: wait for space) */
        pthread_mutex_lock(&e->rq_mu);
        while (e->running && !job_stopping(p->job) && p->job->prio != PRIO_CRITICAL &&
               pq_size(&e->readyq) >= (size_t)e->cfg.queue_depth)
            timed_wait_ms(&e->cv_rq_space, &e->rq_mu, 100);
        int drop = !e->running || job_stopping(p->job);
        if (!drop) {
            p->state = PART_READY;
            pq_push(&e->readyq, (int)p->job->prio, p->seq, p);
            atomic_fetch_add(&e->n_ready, 1);
            pthread_cond_signal(&e->cv_rq_item);
            if (p->job->prio == PRIO_CRITICAL) {
                /* also wakes device workers waiting for a device lock (dev_acquire) */
                atomic_fetch_add(&e->n_ready_crit, 1);
                pthread_cond_broadcast(&e->cv_dev);
            }
        }
        atomic_fetch_sub(&e->n_presynth, 1);
        pthread_mutex_unlock(&e->rq_mu);
        if (drop)
            part_drop(e, p);
    }
    return NULL;
}

/* ---- device workers ---- */

static int idle_reason(engine *e)
{
    if (atomic_load(&e->n_presynth) > 0)
        return GAP_SYNTHESIS;
    if (atomic_load(&e->n_sched) > 0)
        return GAP_BUDGET;
    return GAP_NO_WORK;
}

/* Test hook: CUZK_FAULT_DEVICE=<logical device> makes every device step on that device fail,
 * to check that a device failure stays with its own partitions and that they are retried on
 * another device. Never set in production. */
static int fault_injected(const engine *e, int d)
{
    static int fault_dev = -2;
    if (fault_dev == -2) {
        const char *v = getenv("CUZK_FAULT_DEVICE");
        fault_dev = v && *v ? atoi(v) : -1;
    }
    return fault_dev >= 0 && fault_dev == d && d < e->n_dev;
}

/* What a device worker hands the backend's phase hook (groth16_ws.phase). */
typedef struct dev_phase_ctx {
    eworker *w;
    epart *p;
    int between; /* 1: the hook reports for msm_prefetch, between the two steps, where the worker
                    holds no device lock and runs no device work: the copy's end is GAP_LOCK */
} dev_phase_ctx;

/* The backend waits for a copy (the device idles because of the transfer: GAP_COPY) or
 * resumes device work (busy; between the steps, the wait for the MSM lock). */
static void device_phase(void *ctx, int phase)
{
    dev_phase_ctx *c = ctx;
    int st = phase == GROTH16_PHASE_COPY ? GAP_COPY : c->between ? GAP_LOCK : TRK_BUSY;
    worker_set(c->w, st, c->p);
    tracker_worker_set(c->w->e->trk, c->w->dev, c->w->index, st, eng_now_us());
}

/* p was popped from the device queue by a worker of device d (rq_mu held): counts it */
static void popped_locked(engine *e, epart *p, int d)
{
    atomic_fetch_sub(&e->n_ready, 1);
    if (p->job->prio == PRIO_CRITICAL) {
        /* in its device stage on d from now on, with no window where it is in neither count */
        atomic_fetch_add(&e->crit_dev[d], 1);
        atomic_fetch_sub(&e->n_ready_crit, 1);
    }
    pthread_cond_signal(&e->cv_rq_space);
}

/* a critical partition left its device stage on d: wake the workers waiting for that */
static void critical_done(engine *e, epart *p, int d)
{
    if (p->job->prio != PRIO_CRITICAL)
        return;
    pthread_mutex_lock(&e->rq_mu);
    atomic_fetch_sub(&e->crit_dev[d], 1);
    pthread_cond_broadcast(&e->cv_dev); /* only dev_acquire waits for crit_dev */
    pthread_mutex_unlock(&e->rq_mu);
}

/* the head of the device queue when it is a critical partition device d may run, popped
   (rq_mu held) */
static epart *pop_critical_locked(engine *e, int d)
{
    epart *h = pq_peek(&e->readyq);
    if (!e->running || !h || h->job->prio != PRIO_CRITICAL || (h->avoid_dev == d && e->n_dev > 1))
        return NULL;
    epart *c = pq_pop(&e->readyq);
    popped_locked(e, c, d);
    return c;
}

static void device_stage(eworker *w, epart *p);
static int device_done(eworker *w, epart *p, cuzk_err rc, const char *err, int64_t t0, int64_t t1);

/* Takes device d's lock for one step of p (step 0: h, 1: the MSMs); 0 when the engine or p's
 * job stops first. The lock is a flag under rq_mu, so a worker waiting for it also sees the
 * device queue: winning-post latency. A non-critical partition's worker that finds a critical
 * partition at the head of the device queue takes it and runs its whole device stage first (p
 * waits, holding no device lock), and starts no step while a critical partition is in its
 * device stage on this device with another worker. Nothing waits for a worker that is itself
 * waiting, so there is no deadlock: a critical partition never waits for a non-critical one to
 * give way, and one in the queue is run by a worker that would otherwise wait. The wait shows
 * as GAP_LOCK; while it lasts the device runs another step, the critical partition (busy) or
 * copies for it (copy). rq_mu and atomics only, never e->mu. */
static int dev_acquire(eworker *w, epart *p, int step)
{
    engine *e = w->e;
    int d = w->dev, crit = p->job->prio == PRIO_CRITICAL, got = 0, shown = 0;
    pthread_mutex_lock(&e->rq_mu);
    while (e->running && !job_stopping(p->job)) {
        if (!crit && atomic_load(&e->n_ready_crit) > 0) {
            epart *c = pop_critical_locked(e, d);
            if (c) {
                pthread_mutex_unlock(&e->rq_mu);
                pthread_cond_signal(&e->cv_sched); /* a slot of the admission window is free */
                device_stage(w, c);
                shown = 0;
                pthread_mutex_lock(&e->rq_mu);
                continue;
            }
        }
        if (!e->dev_busy[d][step] && (crit || atomic_load(&e->crit_dev[d]) == 0)) {
            e->dev_busy[d][step] = 1;
            got = 1;
            break;
        }
        if (!shown) {
            worker_set(w, GAP_LOCK, p);
            tracker_worker_set(e->trk, d, w->index, GAP_LOCK, eng_now_us());
            shown = 1;
        }
        timed_wait_ms(&e->cv_dev, &e->rq_mu, 100);
    }
    pthread_mutex_unlock(&e->rq_mu);
    return got;
}

static void dev_release(engine *e, int d, int step)
{
    pthread_mutex_lock(&e->rq_mu);
    e->dev_busy[d][step] = 0;
    pthread_cond_broadcast(&e->cv_dev);
    pthread_mutex_unlock(&e->rq_mu);
}

/* One partition's device stage on this worker's device (h, then the MSMs, each under its
 * device lock), then the hand-off to the finalizers. p was just popped (popped_locked). */
static void device_stage(eworker *w, epart *p)
{
    engine *e = w->e;
    int d = w->dev, wi = w->index;
    int crit = p->job->prio == PRIO_CRITICAL;
    char err[CUZK_ERRLEN];
    p->state = PART_DEVICE;
    p->dev = d;
    p->worker = wi;
    stage_end(e, p, STAGE_READY, -1, -1);
    if (job_stopping(p->job)) {
        critical_done(e, p, d);
        part_drop(e, p);
        return;
    }
    ekey *k = p->key;
    cuzk_backend *be = e->dev_be[k->z.curve->id][d];
    void *ks = k->ks_dev[d];
    err[0] = 0;
    cuzk_err rc = be && ks ? CUZK_OK : cuzk_errf(err, CUZK_EINTERNAL, "device %d has no state for key %s", d, k->path);
    int64_t t0 = 0, t1 = 0, busy = 0;
    dev_phase_ctx pc = {w, p, 0};
    p->ws.urgent = crit; /* the GPU backend runs a critical partition on high-priority streams */
    /* two device locks: h (NTTs) and MSM, so that one worker's h overlaps another
       worker's MSMs; the GPU backend keeps separate buffers and streams for each. A critical
       partition on a backend that isolates keys (backend.h) takes neither: its kernels run on
       high-priority streams beside the step already running for another key instead of waiting
       for that step's end (one of the same key still waits, on the backend's own key lock) */
    int unlocked = crit && be && be->key_isolated;
    for (int step = 0; step < 2 && !rc; step++) {
        if (step == 1 && be->msm_prefetch && !job_stopping(p->job)) {
            /* the witness goes up before the MSM lock is taken, while another worker's MSMs
               may still run, so the device need not wait for it between theirs and these. No
               device lock is held: a wait for the backend's buffer shows as GAP_LOCK, the copy
               through the phase hook as GAP_COPY. */
            worker_set(w, GAP_LOCK, p);
            pc.between = 1;
            p->ws.phase = device_phase;
            p->ws.phase_ctx = &pc;
            rc = be->msm_prefetch(be, ks, &p->ws, 0, err);
            p->ws.phase = NULL;
            p->ws.phase_ctx = NULL;
            pc.between = 0;
            if (rc)
                break;
        }
        if (unlocked ? job_stopping(p->job) : !dev_acquire(w, p, step))
            break;
        int64_t s0 = eng_now_us();
        if (!t0)
            t0 = s0;
        worker_set(w, TRK_BUSY, p);
        tracker_worker_set(e->trk, d, wi, TRK_BUSY, s0);
        /* copies the device waits for are reported through the phase hook (GAP_COPY) */
        p->ws.phase = device_phase;
        p->ws.phase_ctx = &pc;
        rc = fault_injected(e, d) ? cuzk_errf(err, CUZK_EDEVICE, "device %d: injected fault (CUZK_FAULT_DEVICE)", d)
             : step == 0      ? groth16_step_h(be, ks, &p->ws, err)
                              : groth16_step_msm(be, ks, &p->ws, err);
        p->ws.phase = NULL;
        p->ws.phase_ctx = NULL;
        if (!unlocked)
            dev_release(e, d, step);
        t1 = eng_now_us();
        busy += t1 - s0;
        /* after device work the worker hands the result to the finalizers; that time
           is attributed to them until it is back at the queue */
        tracker_worker_set(e->trk, d, wi, step == 0 ? GAP_LOCK : GAP_FINALIZER, t1);
    }
    if (be && ks && be->msm_prefetch) {
        /* a prefetch whose MSMs did not run (the job or the engine stopped while the worker
           waited for the MSM lock, or a failure) gives its buffer back; after msm_all,
           nothing is held and this does nothing */
        char scratch[CUZK_ERRLEN];
        be->msm_prefetch(be, ks, &p->ws, 1, scratch);
    }
    if (crit)
        critical_done(e, p, d);
    if (!t0)
        t0 = t1 = eng_now_us();
    worker_set(w, GAP_FINALIZER, p);
    tracker_worker_set(e->trk, d, wi, GAP_FINALIZER, eng_now_us());
    atomic_fetch_add(&w->busy_us, busy);
    p->batch = 1;
    if (device_done(w, p, rc, err, t0, t1))
        final_queue_push(e, &p, 1);
}

/* The end of p's device stage on w's device (device work from t0 to t1, result rc with err):
 * its workspace back to the pool, then 1: the caller hands it to the finalizers
 * (final_queue_push), or 0: it took the failure or drop path. */
static int device_done(eworker *w, epart *p, cuzk_err rc, const char *err, int64_t t0, int64_t t1)
{
    engine *e = w->e;
    int d = w->dev, wi = w->index;
    atomic_fetch_add(&w->done, 1);
    p->stage_us[STAGE_DEVICE] = t1 - t0;
    tracker_stage_batch(e->trk, p->job->ids, p->index, STAGE_DEVICE, d, wi, t0, t1, p->batch);
    p->stage_t0 = t1;
    /* a, b, c and the witness copy are dead now */
    bufpool_give(e, p->buf, p->buf_size, p->buf_pinned);
    p->buf = NULL;
    p->held_ws = 0;
    if (rc || job_stopping(p->job)) {
        if (job_stopping(p->job)) {
            part_drop(e, p);
        } else {
            /* out of device memory is no fault of the device: the retry may run there again */
            p->avoid_dev = rc == CUZK_ENOMEM ? -1 : d;
            part_fail(e, p, rc, STEP_DEVICE, err[0] ? err : cuzk_strerror(rc));
        }
        return 0;
    }
    if (!e->running) {
        part_drop(e, p); /* redone after the restart */
        return 0;
    }
    return 1;
}

/* A pass over a streamed key's bases for n partitions of that key (none critical), popped
 * together from the device queue: h of each under the h lock, then the MSMs of all under the
 * MSM lock in one msm_batch call (the backend crosses each chunk of the bases once for as many
 * of them as its batch size allows), then each goes to the finalizers. The copies the device
 * waits for are reported through the first partition's phase hook (GAP_COPY). */
static void device_stage_batch(eworker *w, epart **ps, int n)
{
    engine *e = w->e;
    int d = w->dev, wi = w->index, live = 0;
    char err[CUZK_ERRLEN];
    cuzk_err rc[ENGINE_BATCH_MAX];
    groth16_ws *wsv[ENGINE_BATCH_MAX];
    int64_t t0 = 0, t1 = 0, busy = 0;
    err[0] = 0;
    for (int i = 0; i < n; i++) {
        epart *p = ps[i];
        p->state = PART_DEVICE;
        p->dev = d;
        p->worker = wi;
        p->batch = (unsigned)n;
        stage_end(e, p, STAGE_READY, -1, -1);
        if (job_stopping(p->job))
            part_drop(e, p);
        else
            ps[live++] = p;
    }
    if (!live)
        return;
    ekey *k = ps[0]->key;
    cuzk_backend *be = e->dev_be[k->z.curve->id][d];
    void *ks = k->ks_dev[d];
    /* h of each; a partition whose lock wait ended because its job or the engine stops is
       skipped (its device_done drops it) */
    int skip[ENGINE_BATCH_MAX] = {0};
    for (int i = 0; i < live; i++) {
        epart *p = ps[i];
        rc[i] = be && ks ? CUZK_OK : cuzk_errf(err, CUZK_EINTERNAL, "device %d has no state for key %s", d, k->path);
        if (rc[i])
            continue;
        if (!dev_acquire(w, p, 0)) {
            skip[i] = 1;
            continue;
        }
        dev_phase_ctx pc = {w, p, 0};
        int64_t s0 = eng_now_us();
        t0 = t0 ? t0 : s0;
        worker_set(w, TRK_BUSY, p);
        tracker_worker_set(e->trk, d, wi, TRK_BUSY, s0);
        p->ws.urgent = 0;
        p->ws.phase = device_phase;
        p->ws.phase_ctx = &pc;
        rc[i] = fault_injected(e, d) ? cuzk_errf(err, CUZK_EDEVICE, "device %d: injected fault (CUZK_FAULT_DEVICE)", d)
                                     : groth16_step_h(be, ks, &p->ws, err);
        p->ws.phase = NULL;
        p->ws.phase_ctx = NULL;
        dev_release(e, d, 0);
        t1 = eng_now_us();
        busy += t1 - s0;
        tracker_worker_set(e->trk, d, wi, GAP_LOCK, t1);
    }
    /* the MSMs of those whose h is done, in one call; the lock is taken for a partition whose
       job still runs (a canceled one's wait would end it) */
    int m = 0, idx[ENGINE_BATCH_MAX];
    for (;;) {
        m = 0;
        for (int i = 0; i < live; i++)
            if (!rc[i] && !skip[i] && !job_stopping(ps[i]->job)) {
                idx[m] = i;
                wsv[m++] = &ps[i]->ws;
            }
        if (!m || !e->running || dev_acquire(w, ps[idx[0]], 1))
            break;
    }
    if (m && e->running) {
        epart *lead = ps[idx[0]];
        dev_phase_ctx pc = {w, lead, 0};
        int64_t s0 = eng_now_us();
        t0 = t0 ? t0 : s0;
        worker_set(w, TRK_BUSY, lead);
        tracker_worker_set(e->trk, d, wi, TRK_BUSY, s0);
        lead->ws.phase = device_phase;
        lead->ws.phase_ctx = &pc;
        /* a batch forms only on a backend with msm_batch (keys.c sets dev_batch > 1 for those) */
        cuzk_err r = fault_injected(e, d)
                         ? cuzk_errf(err, CUZK_EDEVICE, "device %d: injected fault (CUZK_FAULT_DEVICE)", d)
                         : be->msm_batch(be, ks, wsv, m, err);
        lead->ws.phase = NULL;
        lead->ws.phase_ctx = NULL;
        dev_release(e, d, 1);
        t1 = eng_now_us();
        busy += t1 - s0;
        for (int j = 0; j < m; j++)
            rc[idx[j]] = r;
        if (m > 1) {
            atomic_fetch_add(&e->batches[d], 1);
            atomic_fetch_add(&e->batched_parts[d], (uint64_t)m);
        }
    } else {
        for (int i = 0; i < live; i++) /* stopping: device_done drops them */
            skip[i] |= !rc[i];
    }
    if (!t0)
        t0 = t1 = eng_now_us();
    worker_set(w, GAP_FINALIZER, ps[0]);
    tracker_worker_set(e->trk, d, wi, GAP_FINALIZER, eng_now_us());
    atomic_fetch_add(&w->busy_us, busy);
    int nf = 0;
    for (int i = 0; i < live; i++)
        if (device_done(w, ps[i], skip[i] ? CUZK_OK : rc[i], err, t0, t1))
            ps[nf++] = ps[i];
    if (nf)
        final_queue_push(e, ps, nf); /* together: a finalizer may verify them as one batch */
}

/* whether item (an epart in the device queue) may join a pass over key ctx->k on device ctx->d */
typedef struct batch_ctx {
    const ekey *k;
    int d, n_dev;
} batch_ctx;
static int batch_match(void *vctx, void *item)
{
    const batch_ctx *c = vctx;
    const epart *p = item;
    return p->key == c->k && p->job->prio != PRIO_CRITICAL && !(p->avoid_dev == c->d && c->n_dev > 1);
}

static void *device_main(void *arg)
{
    eworker *w = arg;
    engine *e = w->e;
    int d = w->dev, wi = w->index;
    for (;;) {
        pthread_mutex_lock(&e->rq_mu);
        while (e->running && !pq_size(&e->readyq)) {
            int why = idle_reason(e);
            if (atomic_load(&w->state) != why) {
                worker_set(w, why, NULL);
                tracker_worker_set(e->trk, d, wi, why, eng_now_us());
            }
            timed_wait_ms(&e->cv_rq_item, &e->rq_mu, 20);
        }
        if (!e->running) {
            pthread_mutex_unlock(&e->rq_mu);
            break;
        }
        epart *p = pq_pop(&e->readyq);
        if (p->avoid_dev == d && e->n_dev > 1) {
            /* its device stage failed on this device: leave it to another one */
            pq_push(&e->readyq, (int)p->job->prio, p->seq, p);
            pthread_cond_signal(&e->cv_rq_item);
            timed_wait_ms(&e->cv_rq_item, &e->rq_mu, 5);
            pthread_mutex_unlock(&e->rq_mu);
            continue;
        }
        popped_locked(e, p, d);
        /* a streamed key: the partitions of the same key ready now join this pass over its bases
           (batch_size: never for or behind a critical one, never waiting for more) */
        epart *batch[ENGINE_BATCH_MAX];
        size_t nb = 1;
        unsigned kb = p->key->dev_batch[d] < ENGINE_BATCH_MAX ? p->key->dev_batch[d] : ENGINE_BATCH_MAX;
        size_t want = batch_size(kb, p->job->prio == PRIO_CRITICAL, atomic_load(&e->n_ready_crit) > 0,
                                 pq_size(&e->readyq));
        batch[0] = p;
        if (want > 1) {
            batch_ctx bc = {p->key, d, e->n_dev};
            nb += pq_take_best(&e->readyq, want - 1, batch_match, &bc, (void **)batch + 1);
            for (size_t i = 1; i < nb; i++)
                popped_locked(e, batch[i], d);
        }
        pthread_mutex_unlock(&e->rq_mu);
        pthread_cond_signal(&e->cv_sched); /* a slot of the admission window is free */
        if (nb > 1)
            device_stage_batch(w, batch, (int)nb);
        else
            device_stage(w, p);
    }
    return NULL;
}

/* ---- for the finalizers (finalize.c) ---- */

void pipeline_part_fail(engine *e, epart *p, cuzk_err rc, const char *msg) { part_fail(e, p, rc, STEP_FINALIZE, msg); }
void pipeline_part_drop(engine *e, epart *p) { part_drop(e, p); }
void pipeline_stage_end(engine *e, epart *p, trk_stage s) { stage_end(e, p, s, -1, -1); }
void pipeline_worker_set(eworker *w, int state, epart *p) { worker_set(w, state, p); }

/* ---- start / stop ---- */

cuzk_err pipeline_start(engine *e, char *err)
{
    /* the finalizers, and one more kept for critical partitions */
    int n = 1 + e->cfg.synth_workers + e->n_dev * e->cfg.gpu_workers + e->cfg.finalizers + 1;
    e->workers = calloc((size_t)n, sizeof *e->workers);
    if (!e->workers)
        return cuzk_errf(err, CUZK_ENOMEM, "out of memory starting the pipeline");
    int i = 0;
    eworker *wd = &e->workers[i++];
    snprintf(wd->name, sizeof wd->name, "dispatcher");
    wd->kind = "dispatch";
    wd->dev = -1;
    for (int s = 0; s < e->cfg.synth_workers; s++, i++) {
        snprintf(e->workers[i].name, sizeof e->workers[i].name, "synth-%d", s);
        e->workers[i].kind = "synth";
        e->workers[i].dev = -1;
        e->workers[i].index = s;
    }
    for (int d = 0; d < e->n_dev; d++)
        for (int g = 0; g < e->cfg.gpu_workers; g++, i++) {
            snprintf(e->workers[i].name, sizeof e->workers[i].name, "%s%d-w%d", e->use_gpu ? "gpu" : "cpu", d, g);
            e->workers[i].kind = "device";
            e->workers[i].dev = d;
            e->workers[i].index = g;
            e->workers[i].state = GAP_NO_WORK;
        }
    for (int f = 0; f <= e->cfg.finalizers; f++, i++) {
        int crit = f == e->cfg.finalizers;
        if (crit)
            snprintf(e->workers[i].name, sizeof e->workers[i].name, "final-critical");
        else
            snprintf(e->workers[i].name, sizeof e->workers[i].name, "final-%d", f);
        e->workers[i].kind = "finalize";
        e->workers[i].dev = -1;
        e->workers[i].index = f;
        e->workers[i].crit_only = crit;
    }
    e->n_workers = n;
    for (i = 0; i < n; i++) {
        eworker *w = &e->workers[i];
        w->e = e;
        atomic_store(&w->cur_part, -1);
        void *(*fn)(void *) = !strcmp(w->kind, "dispatch") ? dispatcher_main
                              : !strcmp(w->kind, "synth")  ? synth_main
                              : !strcmp(w->kind, "device") ? device_main
                                                           : final_main;
        if (pthread_create(&w->thread, NULL, fn, w))
            return cuzk_errf(err, CUZK_ENOMEM, "cannot start thread %s", w->name);
        w->started = 1;
    }
    return CUZK_OK;
}

void pipeline_stop(engine *e)
{
    pthread_mutex_lock(&e->mu);
    e->running = 0;
    pthread_cond_broadcast(&e->cv_sched);
    pthread_cond_broadcast(&e->cv_synth);
    pthread_cond_broadcast(&e->cv_key);
    pthread_mutex_unlock(&e->mu);
    budget_kick(&e->bud);
    pthread_mutex_lock(&e->rq_mu);
    pthread_cond_broadcast(&e->cv_rq_item);
    pthread_cond_broadcast(&e->cv_rq_space);
    pthread_cond_broadcast(&e->cv_dev);
    pthread_mutex_unlock(&e->rq_mu);
    pthread_mutex_lock(&e->fq_mu);
    pthread_cond_broadcast(&e->cv_fq_item);
    pthread_mutex_unlock(&e->fq_mu);
    for (int i = 0; i < e->n_workers; i++)
        if (e->workers[i].started) {
            pthread_join(e->workers[i].thread, NULL);
            e->workers[i].started = 0;
        }
}
