/* finalize.c - the finalizers: a partition whose device stage is done gets its proof
 * assembled, verified and journaled here, and its job finishes with its last partition.
 *
 * DESIGN. The device workers hand their results over through final_queue_push, which takes
 * fq_mu only long enough to link the partitions into a list and never waits: the queue is
 * unbounded, so a device never idles because the finalizers are behind (what a partition
 * holds there is its key reference and public signals; its workspace went back to the
 * buffer pool after the device stage, and it holds no budget). There are two lists, the
 * critical partitions (winning-post) and the rest, each in arrival order; the finalizer kept
 * for critical partitions takes only from the first, the others from the first when it is not
 * empty, else from the second.
 *
 * A finalizer takes the head of its list and, with it, the other partitions of that list with
 * the same key, up to its share of the list (ceil(queued / finalizers), at most
 * ENGINE_FINAL_BATCH_MAX): the partitions of one job, or of several jobs of one key, that
 * are ready together; while the finalizers keep up, that is one. Then, holding no lock:
 *   1. assembles each proof (groth16_step_assemble, constant-time in r and s);
 *   2. verifies them together (groth16_verify_batch: random 128-bit weights, one Miller loop
 *      over n + 3 pairs and one final exponentiation for n proofs, against 4n Miller loops
 *      and n final exponentiations one by one); only when that check fails is each proof
 *      verified alone, to find the bad ones;
 *   3. journals each good proof and counts its partition done; a bad proof's partition takes
 *      the common failure path (pipeline_part_fail: a transient cause such as a full disk pauses
 *      it, see engine_pause.c; otherwise it is proved again once, then its job fails).
 * e->mu is taken only for counters and the partition's state, after the work. The batch's
 * timings and sizes are counted in e->fin (/status "finalize", /metrics).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "engine/engine_internal.h"
#include "util/log.h"

static int job_stopping(const ejob *j)
{
    return __atomic_load_n(&j->stopping, __ATOMIC_ACQUIRE);
}

static void stat_max(_Atomic uint64_t *a, uint64_t v)
{
    uint64_t cur = atomic_load(a);
    while (cur < v && !atomic_compare_exchange_weak(a, &cur, v))
        ;
}

/* ---- the queue ---- */

static void efq_append(efq *q, epart *p)
{
    p->fq_next = NULL;
    if (q->last)
        q->last->fq_next = p;
    else
        q->first = p;
    q->last = p;
    q->n++;
}

void final_queue_push(engine *e, epart *const *ps, int n)
{
    pthread_mutex_lock(&e->fq_mu);
    int drop = !e->running;
    for (int i = 0; !drop && i < n; i++) {
        epart *p = ps[i];
        p->state = PART_FINALIZE;
        efq_append(p->job->prio == PRIO_CRITICAL ? &e->fq_crit : &e->fq_bulk, p);
        atomic_fetch_add(&e->n_final, 1);
    }
    size_t total = e->fq_crit.n + e->fq_bulk.n;
    if (total > e->fq_peak)
        e->fq_peak = total;
    if (!drop)
        pthread_cond_broadcast(&e->cv_fq_item);
    pthread_mutex_unlock(&e->fq_mu);
    for (int i = 0; drop && i < n; i++)
        pipeline_part_drop(e, ps[i]); /* stopping: redone after the restart */
}

size_t final_queue_size(engine *e)
{
    pthread_mutex_lock(&e->fq_mu);
    size_t n = e->fq_crit.n + e->fq_bulk.n;
    pthread_mutex_unlock(&e->fq_mu);
    return n;
}

/* Takes the head of the list this finalizer serves and the partitions of that list with the
 * same key, at most its share; returns how many (>= 1). fq_mu held, the list not empty. */
static int final_take_locked(engine *e, int crit_only, epart **out)
{
    efq *q = crit_only || e->fq_crit.n ? &e->fq_crit : &e->fq_bulk;
    size_t nfin = e->cfg.finalizers > 0 ? (size_t)e->cfg.finalizers : 1;
    size_t limit = (q->n + nfin - 1) / nfin;
    limit = limit < 1 ? 1 : limit > ENGINE_FINAL_BATCH_MAX ? ENGINE_FINAL_BATCH_MAX : limit;
    const ekey *k = q->first->key;
    int n = 0;
    epart *prev = NULL, *cur = q->first;
    while (cur && (size_t)n < limit) {
        epart *next = cur->fq_next;
        if (cur->key == k) {
            if (prev)
                prev->fq_next = next;
            else
                q->first = next;
            if (q->last == cur)
                q->last = prev;
            q->n--;
            cur->fq_next = NULL;
            out[n++] = cur;
        } else {
            prev = cur;
        }
        cur = next;
    }
    return n;
}

/* ---- one batch ---- */

/* Test hook: CUZK_FAULT_BAD_PROOF=<n> corrupts one proof of the first batch of at least n
 * proofs, once per run: its middle proof gets pi_c = pi_a, a valid point of the subgroup, so
 * it passes the point checks and fails the pairing check. For tests of the batch's fallback
 * and of the re-proving of the bad partition alone. Never set in production. Returns the
 * index to corrupt in a batch of m, or -1. */
static int fault_bad_proof(int m)
{
    static _Atomic int at_least = -2, fired = 0;
    int n = atomic_load(&at_least);
    if (n == -2) {
        const char *v = getenv("CUZK_FAULT_BAD_PROOF");
        n = v && *v ? atoi(v) : -1;
        atomic_store(&at_least, n);
    }
    if (n < 1 || m < n || atomic_exchange(&fired, 1))
        return -1;
    return m / 2;
}

/* p's proof from its MSM results, with fresh blinding r, s (CUZK_TEST_RS fixes them) */
static cuzk_err final_assemble(const epart *p, cuzk_proof *proof, char *err)
{
    const ekey *k = p->key;
    groth16_rs rs;
    int env = groth16_rs_from_env(&rs, k->z.curve, err);
    if (env < 0)
        return CUZK_EINVAL;
    cuzk_err rc = env == 0 ? groth16_rs_random(&rs, k->z.curve, err) : CUZK_OK;
    if (!rc)
        rc = groth16_step_assemble(proof, &k->z, &p->ws, &rs, err);
    memset(&rs, 0, sizeof rs);
    return rc;
}

/* p's verified proof into the journal; in a fleet it is committed under this host's lease:
   *refused = 1 when the lease was lost (a late result, stored by nobody), *job_done = 1 when
   the commit completed the job */
static cuzk_err final_journal(engine *e, epart *p, const cuzk_proof *proof, int *refused, int *job_done, char *err)
{
    if (job_stopping(p->job))
        return cuzk_errf(err, CUZK_ECANCELED, "job stopped");
    char *proof_json = proof_to_json(proof), *public_json = public_to_json(&p->pub);
    cuzk_err rc = !proof_json || !public_json ? cuzk_errf(err, CUZK_ENOMEM, "out of memory writing the proof JSON")
                  : e->fleet ? fleet_commit(e, p, proof_json, public_json, refused, job_done, err)
                             : e->st->part_set_done(e->st, p->job->id, p->index, proof_json, public_json, err);
    free(proof_json);
    free(public_json);
    return rc;
}

/* p is proved: its resources back, its state DONE, and its job DONE when it was the last (in a
   fleet: when the store says so, job_done); refused: its lease was lost, the proof not stored */
static void final_done(eworker *w, epart *p, int refused, int job_done)
{
    engine *e = w->e;
    ejob *j = p->job;
    atomic_fetch_add(&w->done, 1);
    pipeline_release(e, p);
    pthread_mutex_lock(&e->mu);
    pipeline_stage_end(e, p, STAGE_FINALIZE);
    if (p->pauses && !refused) {
        /* it had been paused and its proof is stored now: what paused it has cleared */
        p->pauses = 0;
        pause_condition_cleared_locked(e, p->last_pause);
    }
    int last = 0;
    if (refused) {
        /* this host's lease was taken over (it stalled past it, or lost the store): another
           host proves or proved the partition; what the store says comes with the sync */
        p->state = PART_QUEUED;
        p->local = p->lease = 0;
        atomic_fetch_add(&e->fleet_refused, 1);
        LOG(LOG_WARN, "%s partition %u: late result refused: this host's lease was lost (another host "
            "has the partition)", j->ids, p->index);
    } else if (job_stopping(j)) {
        /* canceled (or failed) while this one was being finalized: it does not count */
        p->state = PART_CANCELED;
        p->local = p->lease = 0;
        e->parts_total[PART_CANCELED]++;
    } else {
        p->state = PART_DONE;
        e->parts_total[PART_DONE]++;
        j->n_done++;
        p->local = p->lease = 0;
        if (e->fleet)
            snprintf(p->host, sizeof p->host, "%s", e->host_id);
        last = e->fleet ? job_done : j->n_done == j->n_parts;
    }
    pthread_mutex_unlock(&e->mu);
    pthread_cond_signal(&e->cv_sched);
    if (last && e->fleet)
        fleet_pull(e, j->id); /* the store marked it done: its partitions proved elsewhere too */
    if (last)
        eng_job_finish(e, j, JOB_DONE, "");
}

/* the end of p's finalization with an error: the failure path (a stopped job's partition is
   canceled there) */
static void final_fail(engine *e, epart *p, cuzk_err rc, const char *err)
{
    atomic_fetch_sub(&e->n_final, 1);
    pipeline_part_fail(e, p, rc, err[0] ? err : cuzk_strerror(rc));
}

/* Finalizes n partitions of one key (final_take_locked), holding no lock while it works. */
static void final_batch(eworker *w, epart **ps, int n)
{
    engine *e = w->e;
    char err[CUZK_ERRLEN];
    cuzk_proof *proof = malloc((size_t)n * sizeof *proof);
    const cuzk_proof *pp[ENGINE_FINAL_BATCH_MAX];
    const cuzk_public *pub[ENGINE_FINAL_BATCH_MAX];
    int bad[ENGINE_FINAL_BATCH_MAX] = {0};
    int64_t t0 = eng_now_us();
    pipeline_worker_set(w, 1, ps[0]);
    if (!proof) {
        for (int i = 0; i < n; i++)
            final_fail(e, ps[i], CUZK_ENOMEM, "out of memory for the finalizer's proofs");
        return;
    }

    /* 1. assemble (a stopped job's partitions are dropped) */
    int m = 0;
    for (int i = 0; i < n; i++) {
        epart *p = ps[i];
        if (job_stopping(p->job)) {
            atomic_fetch_sub(&e->n_final, 1);
            pipeline_part_drop(e, p);
            continue;
        }
        err[0] = 0;
        cuzk_err rc = final_assemble(p, &proof[m], err);
        if (rc) {
            final_fail(e, p, rc, err);
            continue;
        }
        ps[m] = p;
        pp[m] = &proof[m];
        pub[m] = &p->pub;
        m++;
    }
    int64_t t1 = eng_now_us();
    if (!m) {
        free(proof);
        atomic_fetch_add(&e->fin.assemble_us, t1 - t0);
        atomic_fetch_add(&w->busy_us, t1 - t0);
        return;
    }
    int f = fault_bad_proof(m);
    if (f >= 0) {
        memcpy(proof[f].c.x, proof[f].a.x, sizeof proof[f].c.x);
        memcpy(proof[f].c.y, proof[f].a.y, sizeof proof[f].c.y);
        proof[f].c.inf = proof[f].a.inf;
        LOG(LOG_WARN, "%s partition %u: proof corrupted in a batch of %d (CUZK_FAULT_BAD_PROOF)", ps[f]->job->ids,
            ps[f]->index, m);
    }

    /* 2. verify together; one by one only when that fails (groth16_verify_batch) or cannot run */
    const cuzk_vk *vk = &ps[0]->key->vk;
    err[0] = 0;
    cuzk_err vr = groth16_verify_batch(vk, pub, pp, m, bad, err);
    if (vr == CUZK_EVERIFY) {
        atomic_fetch_add(&e->fin.fallbacks, 1);
        atomic_fetch_add(&e->fin.fallback_proofs, (uint64_t)m);
    } else if (vr) {
        LOG(LOG_WARN, "batch verification of %d proofs: %s; verifying them one by one", m, err);
        char why[CUZK_ERRLEN];
        for (int i = 0; i < m; i++)
            bad[i] = groth16_verify(vk, pub[i], pp[i], why) != CUZK_OK;
    }
    int64_t t2 = eng_now_us();
    atomic_fetch_add(&e->fin.batches, 1);
    atomic_fetch_add(&e->fin.proofs, (uint64_t)m);
    stat_max(&e->fin.largest, (uint64_t)m);

    /* 3. journal the good ones; a bad one's partition is proved again */
    for (int i = 0; i < m; i++) {
        epart *p = ps[i];
        err[0] = 0;
        if (bad[i]) {
            char why[CUZK_ERRLEN];
            cuzk_err rc = groth16_verify(vk, pub[i], pp[i], why);
            snprintf(err, sizeof err, "proof did not verify: %.400s",
                     rc ? why : "it fails in its batch but verifies alone");
            atomic_fetch_add(&e->fin.bad, 1);
            pthread_mutex_lock(&e->mu);
            e->verify_failures++;
            pthread_mutex_unlock(&e->mu);
            final_fail(e, p, rc ? rc : CUZK_EVERIFY, err);
            continue;
        }
        int refused = 0, job_done = 0;
        cuzk_err rc = final_journal(e, p, pp[i], &refused, &job_done, err);
        if (rc) {
            final_fail(e, p, rc, err);
            continue;
        }
        atomic_fetch_sub(&e->n_final, 1);
        final_done(w, p, refused, job_done);
    }
    int64_t t3 = eng_now_us();
    free(proof);
    atomic_fetch_add(&e->fin.assemble_us, t1 - t0);
    atomic_fetch_add(&e->fin.verify_us, t2 - t1);
    atomic_fetch_add(&e->fin.journal_us, t3 - t2);
    atomic_fetch_add(&w->busy_us, t3 - t0);
}

void *final_main(void *arg)
{
    eworker *w = arg;
    engine *e = w->e;
    epart *batch[ENGINE_FINAL_BATCH_MAX];
    for (;;) {
        pthread_mutex_lock(&e->fq_mu);
        pipeline_worker_set(w, 0, NULL);
        while (e->running && !(w->crit_only ? e->fq_crit.n : e->fq_crit.n + e->fq_bulk.n))
            pthread_cond_wait(&e->cv_fq_item, &e->fq_mu);
        if (!e->running) {
            pthread_mutex_unlock(&e->fq_mu);
            break;
        }
        int n = final_take_locked(e, w->crit_only, batch);
        pthread_mutex_unlock(&e->fq_mu);
        final_batch(w, batch, n);
    }
    return NULL;
}
