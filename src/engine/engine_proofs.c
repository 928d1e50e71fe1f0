/* engine_proofs.c - handing out proofs: engine_fetch_proof (engine.h) reads a DONE
 * partition's proof from the journal and hands it out only if it is still sound.
 *
 * DESIGN. Two checks stand between the journal and a client. The store checks the row's
 * checksum on every read (store.h), so bytes that changed on disk are never returned. When
 * the job's key is loaded (READY in the key cache) the proof is also verified against the
 * key's verification key: one pairing check (1-2 ms on one core for either curve, per fetch
 * of the proof or of its public signals). A key that is not
 * loaded is not loaded for this: then the checksum alone vouches for the proof, which the
 * finalizer verified before it was journaled. A proof that fails either check is never
 * returned: its partition goes back to the scheduler (part_reprove), the job to QUEUED,
 * and the caller gets CUZK_EINVAL (409 over HTTP: the job is not done) saying so;
 * `cuzk await` then waits for the job again.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "engine/engine_internal.h"
#include "util/log.h"

/* the pairing check against the job's key when it is loaded; CUZK_OK also when it is not */
static cuzk_err proof_check(engine *e, const char *zkey, const char *proof_json, const char *public_json,
                            char *err)
{
    pthread_mutex_lock(&e->mu);
    ekey *k = key_find(e, zkey);
    if (!k || k->state != KEY_READY) {
        pthread_mutex_unlock(&e->mu);
        return CUZK_OK;
    }
    k->refs++; /* keeps its verification key alive */
    pthread_mutex_unlock(&e->mu);
    cuzk_proof proof;
    cuzk_public pub;
    memset(&pub, 0, sizeof pub);
    cuzk_err rc = proof_from_json(&proof, k->vk.curve, proof_json, err);
    if (!rc)
        rc = public_from_json(&pub, k->vk.curve, public_json, err);
    if (!rc)
        rc = groth16_verify(&k->vk, &pub, &proof, err);
    public_free(&pub);
    pthread_mutex_lock(&e->mu);
    k->refs--;
    pthread_mutex_unlock(&e->mu);
    if (rc)
        cuzk_err_prefix(err, "the stored proof does not verify against its key");
    return rc;
}

/* Partition `part` of job jid (DONE) is not proved after all: back to QUEUED, in the journal
   (job first, then the partition, which drops its proof) and in the scheduler. */
static void part_reprove(engine *e, int64_t jid, uint32_t part)
{
    char ids[ENGINE_ID_LEN], err[CUZK_ERRLEN];
    snprintf(ids, sizeof ids, "j-%lld", (long long)jid);
    pthread_mutex_lock(&e->mu);
    ejob *j = eng_job_find(e, ids);
    if (!j || j->state != JOB_DONE || part >= j->n_parts || j->parts[part].state != PART_DONE) {
        pthread_mutex_unlock(&e->mu); /* gone, or another fetch got here first */
        return;
    }
    epart *p = &j->parts[part];
    p->state = PART_QUEUED;
    p->attempts = 0;
    j->n_done--;
    j->state = JOB_QUEUED; /* not terminal: the janitor leaves it alone */
    j->finished_ms = 0;
    pthread_mutex_unlock(&e->mu);
    if (e->st->job_set_state(e->st, jid, JOB_QUEUED, 0, "", err) ||
        e->st->part_set_state(e->st, jid, part, PART_QUEUED, 0, err))
        LOG(LOG_ERROR, "%s: %s", ids, err);
    if (eng_job_requeue(e, j, err)) {
        char why[CUZK_ERRLEN];
        snprintf(why, sizeof why, "partition %u could not be proved again: %.400s", part, err);
        eng_job_finish(e, j, JOB_FAILED, why);
    }
}

cuzk_err engine_fetch_proof(engine *e, const char *id, uint32_t part, char **proof_json, char **public_json,
                            char *err)
{
    *proof_json = *public_json = NULL;
    pthread_mutex_lock(&e->mu);
    ejob *j = eng_job_find_pull(e, id);
    if (!j) {
        pthread_mutex_unlock(&e->mu);
        return cuzk_errf(err, CUZK_ENOTFOUND, "no job %s (never submitted, or its proofs expired)",
                         id ? id : "(null)");
    }
    if (j->state != JOB_DONE) {
        engine_job_state s = j->state;
        pthread_mutex_unlock(&e->mu);
        return cuzk_errf(err, CUZK_EINVAL, "job %s is %s, not done", id, engine_job_state_name(s));
    }
    if (part >= j->n_parts) {
        uint32_t np = j->n_parts;
        pthread_mutex_unlock(&e->mu);
        return cuzk_errf(err, CUZK_ENOTFOUND, "job %s has %u partition(s); there is no partition %u", id, np,
                         part);
    }
    int64_t jid = j->id, first = 0;
    char zkey[ENGINE_PATH_MAX];
    snprintf(zkey, sizeof zkey, "%s", j->zkey);
    if (!j->fetched_ms)
        first = j->fetched_ms = eng_now_ms();
    pthread_mutex_unlock(&e->mu);
    if (first) {
        char e2[CUZK_ERRLEN];
        if (e->st->job_set_fetched(e->st, jid, first, e2))
            LOG(LOG_WARN, "%s", e2);
    }
    char why[CUZK_ERRLEN] = "";
    cuzk_err rc = e->st->part_get_proof(e->st, jid, part, proof_json, public_json, why);
    if (rc && rc != CUZK_EFORMAT) {
        snprintf(err, CUZK_ERRLEN, "%s", why);
        return rc;
    }
    if (!rc && !(rc = proof_check(e, zkey, *proof_json, *public_json, why)))
        return CUZK_OK;
    free(*proof_json);
    free(*public_json);
    *proof_json = *public_json = NULL;
    LOG(LOG_ERROR, "%s partition %u: %s; proving it again", id, part, why);
    part_reprove(e, jid, part);
    return cuzk_errf(err, CUZK_EINVAL, "job %s partition %u: %.300s; the partition is being proved again (the "
                     "job is no longer done: wait for it again)", id, part, why);
}
