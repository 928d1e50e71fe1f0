/* engine.c - the engine's public API (engine.h): lifecycle, submission with journaling,
 * job lookup, long-poll wait, cancel, key preload/evict, crash recovery (with what the
 * journal finds damaged) and the janitor that expires proofs. The worker threads live in
 * pipeline.c, the key cache and buffer pool in keys.c, status/metrics in engine_status.c,
 * proof fetch in engine_proofs.c.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <time.h>
#include <unistd.h>

#include "engine/engine_internal.h"
#include "util/log.h"

int64_t eng_now_us(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return (int64_t)ts.tv_sec * 1000000 + ts.tv_nsec / 1000;
}

int64_t eng_now_ms(void)
{
    return eng_now_us() / 1000;
}

static void cond_init_mono(pthread_cond_t *cv)
{
    pthread_condattr_t ca;
    pthread_condattr_init(&ca);
    pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
    pthread_cond_init(cv, &ca);
    pthread_condattr_destroy(&ca);
}

static int mkdir_p(const char *path)
{
    char buf[ENGINE_PATH_MAX];
    snprintf(buf, sizeof buf, "%s", path);
    for (char *p = buf + 1; *p; p++) {
        if (*p != '/')
            continue;
        *p = 0;
        if (mkdir(buf, 0755) && errno != EEXIST)
            return -1;
        *p = '/';
    }
    return mkdir(buf, 0755) && errno != EEXIST ? -1 : 0;
}

static uint64_t auto_budget(void)
{
    long pages = sysconf(_SC_PHYS_PAGES), psize = sysconf(_SC_PAGESIZE);
    uint64_t total = pages > 0 && psize > 0 ? (uint64_t)pages * (uint64_t)psize : (uint64_t)4 << 30;
    uint64_t b = total > ENGINE_BUDGET_MARGIN ? total - ENGINE_BUDGET_MARGIN : 0;
    return b < ((uint64_t)256 << 20) ? (uint64_t)256 << 20 : b;
}

cuzk_err engine_create(engine **out, const engine_config *cfg, char *err)
{
    *out = NULL;
    engine *e = calloc(1, sizeof *e);
    if (!e)
        return cuzk_errf(err, CUZK_ENOMEM, "out of memory");
    engine_config def;
    engine_config_defaults(&def);
    e->cfg = *cfg;
    if (!e->cfg.data_dir || !*e->cfg.data_dir)
        e->cfg.data_dir = def.data_dir;
    if (e->cfg.gpu_workers <= 0)
        e->cfg.gpu_workers = def.gpu_workers;
    /* synth_workers and finalizers <= 0: auto, resolved by engine_start (engine_sizing_auto) */
    e->synth_auto = e->cfg.synth_workers <= 0;
    e->final_auto = e->cfg.finalizers <= 0;
    if (e->cfg.queue_depth <= 0)
        e->cfg.queue_depth = def.queue_depth;
    if (e->cfg.cpu_threads <= 0) {
        long n = sysconf(_SC_NPROCESSORS_ONLN);
        e->cfg.cpu_threads = n > 1 ? (int)(n / 2) : 1;
    }
    if (e->cfg.proof_ttl_s <= 0)
        e->cfg.proof_ttl_s = def.proof_ttl_s;
    if (e->cfg.fetch_grace_s <= 0)
        e->cfg.fetch_grace_s = def.fetch_grace_s;
    if (e->cfg.witgen_timeout_s <= 0)
        e->cfg.witgen_timeout_s = 600;
    if (e->cfg.batch_max <= 0)
        e->cfg.batch_max = def.batch_max;
    if (e->cfg.retry_max_ms <= 0)
        e->cfg.retry_max_ms = def.retry_max_ms;
    snprintf(e->data_dir, sizeof e->data_dir, "%s", e->cfg.data_dir);
    e->cfg.data_dir = e->data_dir;
    snprintf(e->upload_dir, sizeof e->upload_dir, "%s",
             e->cfg.upload_dir && *e->cfg.upload_dir ? e->cfg.upload_dir : e->data_dir);
    e->cfg.upload_dir = e->upload_dir;
    cuzk_err rc = eng_circuits_load(e, err);
    if (rc) {
        free(e->circuits);
        free(e);
        return rc;
    }
    char path[ENGINE_PATH_MAX + 32];
    for (int d = 0; d < 4; d++) {
        snprintf(path, sizeof path, "%s/%s", d < 2 ? e->data_dir : e->upload_dir, d & 1 ? "input" : "witness");
        if (mkdir_p(path)) {
            cuzk_errf(err, CUZK_EIO, "data dir %s: cannot create: %s", e->data_dir, strerror(errno));
            free(e->circuits);
            free(e);
            return CUZK_EIO;
        }
    }
    snprintf(path, sizeof path, "%s/journal.db", e->data_dir);
    if (e->cfg.store && *e->cfg.store && !store_is_pg_url(e->cfg.store)) {
        cuzk_errf(err, CUZK_EINVAL, "store '%.200s': expected a postgres:// or postgresql:// URL (or nothing: "
                  "the SQLite journal in the data dir)", e->cfg.store);
        free(e->circuits);
        free(e);
        return CUZK_EINVAL;
    }
    int on_pg = e->cfg.store && *e->cfg.store;
    if (on_pg)
        rc = store_pg_open(&e->st, e->cfg.store, 1, err);
    else
        rc = store_sqlite_open(&e->st, path, err);
    e->cfg.store = NULL; /* the caller's string is not kept */
    if (rc == CUZK_EFORMAT && !on_pg) {
        char why[CUZK_ERRLEN];
        snprintf(why, sizeof why, "%s", err);
        cuzk_errf(err, rc, "%.250s. Refusing to start on a damaged journal: `cuzk journal check --data %.100s` "
                  "says what is damaged; `cuzk journal recover --data %.100s` keeps every job that can still be "
                  "read (and sets the damaged file aside)", why, e->data_dir, e->data_dir);
    }
    if (rc) {
        free(e->circuits);
        free(e);
        return rc;
    }
    e->fleet = e->st->claim != NULL;
    e->lease_ms = (int64_t)(e->cfg.lease_s > 0 ? e->cfg.lease_s : 30) * 1000;
    char hn[64] = "host";
    gethostname(hn, sizeof hn - 1);
    snprintf(e->host_id, sizeof e->host_id, "%s:%ld", hn, (long)getpid());
    budget_init(&e->bud, e->cfg.budget_bytes ? e->cfg.budget_bytes : auto_budget());
    pthread_mutex_init(&e->mu, NULL);
    pthread_mutex_init(&e->rq_mu, NULL);
    pthread_mutex_init(&e->fq_mu, NULL);
    pthread_mutex_init(&e->be_mu, NULL);
    pthread_mutex_init(&e->bp_mu, NULL);
    pthread_mutex_init(&e->submit_mu, NULL);
    pthread_cond_t *cvs[] = {&e->cv_sched, &e->cv_synth, &e->cv_job, &e->cv_key, &e->cv_rq_item, &e->cv_dev,
                             &e->cv_rq_space, &e->cv_fq_item, &e->cv_janitor};
    for (size_t i = 0; i < sizeof cvs / sizeof cvs[0]; i++)
        cond_init_mono(cvs[i]);
    pq_init(&e->sched);
    pq_init(&e->synthq);
    pq_init(&e->readyq);
    pq_init(&e->paused);
    *out = e;
    return CUZK_OK;
}

/* ---- jobs table ---- */

static int64_t id_parse(const char *id)
{
    if (!id || strncmp(id, "j-", 2))
        return -1;
    char *end;
    errno = 0;
    long long v = strtoll(id + 2, &end, 10);
    return *end || errno || v <= 0 ? -1 : (int64_t)v;
}

ejob *eng_job_find(engine *e, const char *id)
{
    int64_t v = id_parse(id);
    size_t lo = 0, hi = e->n_jobs;
    while (lo < hi) {
        size_t mid = (lo + hi) / 2;
        if (e->jobs[mid]->id < v)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo < e->n_jobs && e->jobs[lo]->id == v ? e->jobs[lo] : NULL;
}

/* inserts j keeping the table sorted by id (e->mu held); -1 on OOM */
static int jobs_add(engine *e, ejob *j)
{
    if (e->n_jobs == e->cap_jobs) {
        size_t cap = e->cap_jobs ? 2 * e->cap_jobs : 64;
        ejob **v = realloc(e->jobs, cap * sizeof *v);
        if (!v)
            return -1;
        e->jobs = v;
        e->cap_jobs = cap;
    }
    size_t at = e->n_jobs;
    while (at > 0 && e->jobs[at - 1]->id > j->id)
        at--;
    memmove(&e->jobs[at + 1], &e->jobs[at], (e->n_jobs - at) * sizeof *e->jobs);
    e->jobs[at] = j;
    e->n_jobs++;
    return 0;
}

static ejob *job_alloc(int64_t id, uint32_t n_parts)
{
    ejob *j = calloc(1, sizeof *j);
    if (!j)
        return NULL;
    j->parts = calloc(n_parts ? n_parts : 1, sizeof *j->parts);
    if (!j->parts) {
        free(j);
        return NULL;
    }
    j->id = id;
    snprintf(j->ids, sizeof j->ids, "j-%lld", (long long)id);
    j->n_parts = n_parts;
    for (uint32_t i = 0; i < n_parts; i++) {
        j->parts[i].job = j;
        j->parts[i].index = i;
        j->parts[i].dev = j->parts[i].worker = j->parts[i].avoid_dev = -1;
    }
    return j;
}

static void job_free(ejob *j)
{
    if (!j)
        return;
    for (uint32_t i = 0; i < j->n_parts; i++) {
        free(j->parts[i].buf);
        public_free(&j->parts[i].pub);
    }
    free(j->parts);
    free(j);
}

static int is_terminal(engine_job_state s)
{
    return s == JOB_DONE || s == JOB_FAILED || s == JOB_CANCELED;
}

void eng_job_finish(engine *e, ejob *j, engine_job_state st, const char *error)
{
    pthread_mutex_lock(&e->mu);
    if (is_terminal(j->state)) {
        pthread_mutex_unlock(&e->mu);
        return;
    }
    j->state = st;
    j->finished_ms = eng_now_ms();
    snprintf(j->error, sizeof j->error, "%s", error ? error : "");
    if (st != JOB_DONE)
        __atomic_store_n(&j->stopping, 1, __ATOMIC_RELEASE);
    e->jobs_total[j->kind][st]++;
    int64_t id = j->id, fin = j->finished_ms;
    char why[CUZK_ERRLEN];
    snprintf(why, sizeof why, "%s", j->error);
    pthread_mutex_unlock(&e->mu);
    char err[CUZK_ERRLEN];
    if (e->st->job_set_state(e->st, id, (int)st, fin, why, err))
        LOG(LOG_ERROR, "j-%lld: %s", (long long)id, err);
    LOG(LOG_INFO, "j-%lld %s%s%s", (long long)id, engine_job_state_name(st), why[0] ? ": " : "", why);
    pthread_mutex_lock(&e->mu);
    pthread_cond_broadcast(&e->cv_job);
    pthread_mutex_unlock(&e->mu);
}

/* sizes of one partition of a key: workspace + witness copy + mapped witness file */
static void job_sizes(engine *e, ejob *j, const zkey_file *z, uint64_t wfile_max)
{
    j->file_bytes = wfile_max;
    j->part_bytes = (uint64_t)groth16_ws_size(z) + 32ull * z->n_vars + wfile_max;
    j->key_bytes = key_bytes_estimate(e, z);
}

/* ---- recovery ---- */

typedef struct recover_ctx {
    engine *e;
    int n_requeued, n_failed, n_loaded, n_reprove, n_damaged;
} recover_ctx;

cuzk_err eng_job_requeue(engine *e, ejob *j, char *err)
{
    zkey_file z;
    cuzk_err rc = zkey_open(&z, j->zkey, err);
    if (rc)
        return rc;
    uint64_t wmax = 0;
    if (j->gen) {
        wmax = witgen_wtns_bytes(z.n_vars); /* the partitions' files are inputs, not witnesses */
    } else {
        for (uint32_t i = 0; i < j->n_parts; i++) {
            struct stat stt;
            if (j->parts[i].state == PART_QUEUED && !stat(j->parts[i].witness, &stt) &&
                (uint64_t)stt.st_size > wmax)
                wmax = (uint64_t)stt.st_size;
        }
    }
    pthread_mutex_lock(&e->mu);
    job_sizes(e, j, &z, wmax);
    for (uint32_t i = 0; i < j->n_parts && !j->stopping && !e->fleet; i++) {
        epart *p = &j->parts[i];
        if (p->state != PART_QUEUED)
            continue;
        p->seq = ++e->seq;
        pipeline_enqueue(e, p);
    }
    pthread_mutex_unlock(&e->mu);
    zkey_close(&z);
    return CUZK_OK;
}

/* A job the journal could not vouch for: failed, with what is damaged, and nothing else of it
   kept (its journal record is left as it is for `cuzk journal check` and `recover`). */
static void recover_damaged(recover_ctx *rc, ejob *j, const char *why)
{
    j->state = JOB_FAILED;
    j->finished_ms = eng_now_ms();
    snprintf(j->error, sizeof j->error, "journal: %.300s; run `cuzk journal check`", why);
    LOG(LOG_ERROR, "%s: %s", j->ids, j->error);
    rc->n_damaged++;
}

static void recover_one(void *vctx, const store_job *sj, const store_part *sp)
{
    recover_ctx *rc = vctx;
    engine *e = rc->e;
    ejob *j = job_alloc(sj->id, sj->damaged ? 0 : sj->n_parts);
    if (!j) {
        LOG(LOG_ERROR, "recovery: out of memory for j-%lld", (long long)sj->id);
        return;
    }
    if (sj->damaged) { /* none of its fields can be trusted */
        j->kind = KIND_CUSTOM;
        j->prio = PRIO_NORMAL;
        recover_damaged(rc, j, sj->error);
        goto add;
    }
    j->kind = (unsigned)sj->kind < KIND_COUNT ? (engine_kind)sj->kind : KIND_CUSTOM;
    j->prio = (unsigned)sj->priority < PRIO_COUNT ? (engine_priority)sj->priority : PRIO_NORMAL;
    j->state = (engine_job_state)sj->state;
    snprintf(j->zkey, sizeof j->zkey, "%s", sj->zkey);
    snprintf(j->idem, sizeof j->idem, "%s", sj->idem);
    snprintf(j->circuit, sizeof j->circuit, "%s", sj->circuit);
    j->gen = eng_circuit_find(e, j->circuit);
    j->submitted_ms = sj->submitted_ms;
    j->finished_ms = sj->finished_ms;
    j->fetched_ms = sj->fetched_ms;
    snprintf(j->error, sizeof j->error, "%s", sj->error);
    int reprove = 0;
    char why[CUZK_ERRLEN] = "";
    for (uint32_t i = 0; i < sj->n_parts; i++) {
        epart *p = &j->parts[i];
        snprintf(p->witness, sizeof p->witness, "%s", sp[i].witness);
        snprintf(p->host, sizeof p->host, "%s", sp[i].host);
        p->owned = sp[i].owned;
        p->attempts = 0;
        if (sp[i].damaged && !why[0])
            snprintf(why, sizeof why, "the record of partition %u fails its checksum (the journal is damaged)", i);
        /* a proof that fails its checksum was never proved, as far as anyone can tell */
        if (sp[i].state == PART_DONE && sp[i].proof_damaged && j->state != JOB_FAILED && j->state != JOB_CANCELED) {
            LOG(LOG_ERROR, "%s partition %u: its proof in the journal fails its checksum; proving it again", j->ids,
                i);
            reprove++;
        }
        p->state = sp[i].state == PART_DONE && !sp[i].proof_damaged ? PART_DONE
                   : is_terminal(j->state) && j->state != JOB_DONE  ? PART_CANCELED
                                                                    : PART_QUEUED;
        if (p->state == PART_DONE)
            j->n_done++;
    }
    if (why[0] && j->state != JOB_FAILED && j->state != JOB_CANCELED) {
        recover_damaged(rc, j, why);
        goto add;
    }
    if (reprove) {
        /* back to queued in the journal first, then each partition (which drops its proof): a
           crash in between finds the same damage at the next start */
        char err[CUZK_ERRLEN];
        if (e->st->job_set_state(e->st, j->id, JOB_QUEUED, 0, "", err))
            LOG(LOG_ERROR, "%s: %s", j->ids, err);
        for (uint32_t i = 0; i < j->n_parts; i++)
            if (sp[i].state == PART_DONE && sp[i].proof_damaged &&
                e->st->part_set_state(e->st, j->id, i, PART_QUEUED, 0, err))
                LOG(LOG_ERROR, "%s: %s", j->ids, err);
    }
    if (j->state == JOB_DONE && j->n_done < j->n_parts) {
        j->state = JOB_QUEUED;
        j->finished_ms = 0;
        j->error[0] = 0;
    }
    rc->n_reprove += reprove;
add:
    pthread_mutex_lock(&e->mu);
    int fail = jobs_add(e, j);
    pthread_mutex_unlock(&e->mu);
    if (fail) {
        job_free(j);
        return;
    }
    rc->n_loaded++;
    if (is_terminal(j->state))
        return;
    /* acknowledged and not finished: prove what is missing */
    j->state = JOB_QUEUED;
    if (e->fleet) {
        /* the hosts of the fleet claim its partitions from the store */
        if (j->n_done == j->n_parts)
            eng_job_finish(e, j, JOB_DONE, "");
        else
            rc->n_requeued++;
        return;
    }
    if (j->n_done == j->n_parts) {
        eng_job_finish(e, j, JOB_DONE, "");
        return;
    }
    char err[CUZK_ERRLEN];
    if (j->circuit[0] && !j->gen) {
        snprintf(err, sizeof err, "after restart: circuit %s is no longer registered (cuzk serve --circuit)",
                 j->circuit);
        eng_job_finish(e, j, JOB_FAILED, err);
        rc->n_failed++;
        return;
    }
    if (eng_job_requeue(e, j, err)) {
        char why2[CUZK_ERRLEN];
        snprintf(why2, sizeof why2, "after restart: %.450s", err);
        eng_job_finish(e, j, JOB_FAILED, why2);
        rc->n_failed++;
        return;
    }
    rc->n_requeued++;
}

void eng_job_mirror(engine *e, const store_job *sj, const store_part *sp)
{
    char ids[ENGINE_ID_LEN];
    snprintf(ids, sizeof ids, "j-%lld", (long long)sj->id);
    pthread_mutex_lock(&e->submit_mu); /* a job this host is submitting is added by engine_submit */
    pthread_mutex_lock(&e->mu);
    if (sj->id > e->fleet_max_id)
        e->fleet_max_id = sj->id;
    ejob *j = eng_job_find(e, ids);
    if (!j) {
        pthread_mutex_unlock(&e->mu);
        recover_ctx rc = {e, 0, 0, 0, 0, 0};
        recover_one(&rc, sj, sp);
        pthread_mutex_lock(&e->mu);
        if ((j = eng_job_find(e, ids)) && !sj->damaged)
            e->jobs_total[j->kind][JOB_QUEUED]++;
        pthread_mutex_unlock(&e->mu);
        pthread_mutex_unlock(&e->submit_mu);
        return;
    }
    pthread_mutex_unlock(&e->submit_mu);
    if (sj->damaged || j->state == JOB_FAILED || j->state == JOB_CANCELED || sj->n_parts != j->n_parts) {
        pthread_mutex_unlock(&e->mu);
        return;
    }
    if (j->state == JOB_DONE && sj->state == JOB_QUEUED) {
        /* a host found a stored proof damaged and proves it again (part_reprove): not done */
        for (uint32_t i = 0; i < j->n_parts; i++)
            if (j->parts[i].state == PART_DONE && sp[i].state != PART_DONE) {
                j->parts[i].state = PART_QUEUED;
                j->parts[i].host[0] = 0;
                j->n_done--;
            }
        j->state = JOB_QUEUED;
        j->finished_ms = 0;
    }
    /* what other hosts proved */
    for (uint32_t i = 0; i < j->n_parts; i++) {
        epart *p = &j->parts[i];
        if (sp[i].state == PART_DONE && !sp[i].proof_damaged && !p->local && p->state != PART_DONE) {
            p->state = PART_DONE;
            snprintf(p->host, sizeof p->host, "%s", sp[i].host);
            j->n_done++;
        }
    }
    if (sj->fetched_ms && !j->fetched_ms)
        j->fetched_ms = sj->fetched_ms;
    engine_job_state st = (engine_job_state)sj->state;
    if (!is_terminal(st) || is_terminal(j->state)) {
        pthread_mutex_unlock(&e->mu);
        return;
    }
    /* ended on another host (done, failed, canceled): in-flight partitions here stop */
    j->state = st;
    j->finished_ms = sj->finished_ms;
    snprintf(j->error, sizeof j->error, "%s", sj->error);
    if (st != JOB_DONE) {
        __atomic_store_n(&j->stopping, 1, __ATOMIC_RELEASE);
        pipeline_remove_job_locked(e, j);
    }
    e->jobs_total[j->kind][st]++;
    pthread_cond_broadcast(&e->cv_job);
    pthread_mutex_unlock(&e->mu);
    LOG(LOG_INFO, "%s %s%s%s", ids, engine_job_state_name(st), sj->error[0] ? ": " : "", sj->error);
}

ejob *eng_job_find_pull(engine *e, const char *id)
{
    ejob *j = eng_job_find(e, id);
    int64_t v = id_parse(id);
    if (j || !e->fleet || v <= 0)
        return j;
    pthread_mutex_unlock(&e->mu);
    fleet_pull(e, v);
    pthread_mutex_lock(&e->mu);
    return eng_job_find(e, id);
}

/* ---- janitor: expiry of proofs ---- */

static int job_quiet(const ejob *j)
{
    for (uint32_t i = 0; i < j->n_parts; i++) {
        engine_part_state s = j->parts[i].state;
        if (s != PART_DONE && s != PART_FAILED && s != PART_CANCELED && s != PART_QUEUED)
            return 0;
    }
    return 1;
}

static void janitor_sweep(engine *e)
{
    int64_t now = eng_now_ms();
    for (;;) {
        ejob *victim = NULL;
        pthread_mutex_lock(&e->mu);
        for (size_t i = 0; i < e->n_jobs && !victim; i++) {
            ejob *j = e->jobs[i];
            if (!is_terminal(j->state) || !job_quiet(j))
                continue;
            int64_t ttl_end = j->finished_ms + e->cfg.proof_ttl_s * 1000;
            int64_t grace_end = j->fetched_ms ? j->fetched_ms + e->cfg.fetch_grace_s * 1000 : INT64_MAX;
            if (now >= ttl_end || now >= grace_end) {
                victim = j;
                memmove(&e->jobs[i], &e->jobs[i + 1], (e->n_jobs - i - 1) * sizeof *e->jobs);
                e->n_jobs--;
            }
        }
        pthread_mutex_unlock(&e->mu);
        if (!victim)
            return;
        char err[CUZK_ERRLEN];
        if (e->st->job_delete(e->st, victim->id, err))
            LOG(LOG_ERROR, "%s: %s", victim->ids, err);
        for (uint32_t i = 0; i < victim->n_parts; i++)
            if (victim->parts[i].owned)
                unlink(victim->parts[i].witness);
        LOG(LOG_INFO, "%s expired and purged", victim->ids);
        job_free(victim);
    }
}

static void *janitor_main(void *arg)
{
    engine *e = arg;
    pthread_mutex_lock(&e->mu);
    while (e->running) {
        struct timespec ts;
        clock_gettime(CLOCK_MONOTONIC, &ts);
        ts.tv_nsec += 500000000L;
        ts.tv_sec += ts.tv_nsec / 1000000000L;
        ts.tv_nsec %= 1000000000L;
        pthread_cond_timedwait(&e->cv_janitor, &e->mu, &ts);
        if (!e->running)
            break;
        pthread_mutex_unlock(&e->mu);
        janitor_sweep(e);
        pthread_mutex_lock(&e->mu);
    }
    pthread_mutex_unlock(&e->mu);
    return NULL;
}

/* ---- lifecycle ---- */

/* Fills e->n_dev and e->dev_ord from cfg.devices (see engine.h). Each listed ordinal is one
 * logical device with its own workers, locks and backend; a partition runs its whole device
 * stage on the one logical device whose worker took it. */
static cuzk_err parse_devices(engine *e, int ngpu, char *err)
{
    const char *s = e->cfg.devices;
    if (!s || !*s) {
        int n = e->use_gpu ? ngpu : 1;
        e->n_dev = n < ENGINE_MAX_DEVICES ? n : ENGINE_MAX_DEVICES;
        for (int d = 0; d < e->n_dev; d++)
            e->dev_ord[d] = e->use_gpu ? d : 0;
        return CUZK_OK;
    }
    int n = 0;
    while (*s) {
        char *end;
        long v = strtol(s, &end, 10);
        if (end == s || v < 0 || (*end && *end != ','))
            return cuzk_errf(err, CUZK_EINVAL, "devices: expected a comma-separated list of GPU ordinals "
                                               "such as 0,1 or 0,0; got '%s'", e->cfg.devices);
        if (e->use_gpu && v >= ngpu)
            return cuzk_errf(err, CUZK_ENODEV, "devices: GPU %ld does not exist (%d visible)", v, ngpu);
        if (n == ENGINE_MAX_DEVICES)
            return cuzk_errf(err, CUZK_EINVAL, "devices: at most %d logical devices", ENGINE_MAX_DEVICES);
        e->dev_ord[n++] = e->use_gpu ? (int)v : 0;
        s = *end ? end + 1 : end;
    }
    e->n_dev = n;
    return CUZK_OK;
}

cuzk_err engine_start(engine *e, char *err)
{
    if (e->started)
        return CUZK_OK;
    int ngpu = gpu_device_count();
    if (e->cfg.backend == ENGINE_BACKEND_GPU && ngpu <= 0)
        return cuzk_errf(err, CUZK_ENODEV, "backend gpu: no usable GPU (built %s CUDA)",
#ifdef CUZK_HAVE_CUDA
                         "with"
#else
                         "without"
#endif
        );
    e->use_gpu = e->cfg.backend != ENGINE_BACKEND_CPU && ngpu > 0;
    cuzk_err dr = parse_devices(e, ngpu, err);
    if (dr)
        return dr;
    e->cores = engine_cores();
    if (e->synth_auto)
        e->cfg.synth_workers = 0;
    if (e->final_auto)
        e->cfg.finalizers = 0;
    engine_sizing_auto(e->cores, e->n_dev, e->cfg.queue_depth, &e->cfg.synth_workers, &e->cfg.finalizers);
    e->started_us = eng_now_us();
    e->trk = tracker_create(e->n_dev, e->cfg.gpu_workers, 200000, e->started_us);
    if (!e->trk)
        return cuzk_errf(err, CUZK_ENOMEM, "out of memory for the tracker");
    e->running = 1;
    recover_ctx rc = {e, 0, 0, 0, 0, 0};
    cuzk_err r = e->st->load_all(e->st, recover_one, &rc, err);
    if (r) {
        e->running = 0;
        return r;
    }
    pthread_mutex_lock(&e->mu);
    if (e->n_jobs)
        e->seq = e->seq > 0 ? e->seq : 1;
    if (e->n_jobs && e->jobs[e->n_jobs - 1]->id > e->fleet_max_id)
        e->fleet_max_id = e->jobs[e->n_jobs - 1]->id; /* the fleet's mirror goes on from here */
    pthread_mutex_unlock(&e->mu);
    if (rc.n_loaded)
        LOG(LOG_INFO, "journal: %d jobs, %d re-queued, %d failed on recovery", rc.n_loaded, rc.n_requeued,
            rc.n_failed);
    if (rc.n_reprove || rc.n_damaged)
        LOG(LOG_ERROR, "journal: %d proof(s) failed their checksum and are proved again, %d job(s) failed on a "
            "damaged record (cuzk journal check)", rc.n_reprove, rc.n_damaged);
    eng_witgen_sweep(e);
    if ((r = pipeline_start(e, err))) {
        engine_stop(e);
        return r;
    }
    if (e->fleet && (r = fleet_start(e, err))) {
        engine_stop(e);
        return r;
    }
    if (pthread_create(&e->janitor, NULL, janitor_main, e)) {
        engine_stop(e);
        return cuzk_errf(err, CUZK_ENOMEM, "cannot start the janitor thread");
    }
    e->janitor_started = 1;
    e->started = 1;
    uint64_t total;
    budget_snapshot(&e->bud, &total, NULL, NULL, NULL, NULL, NULL);
    LOG(LOG_INFO, "engine: %s x%d, %d workers per device, %d synthesis workers%s, %d finalizers%s (+1 critical), "
        "%d cores, budget %llu MiB, data %s", e->use_gpu ? "gpu" : "cpu", e->n_dev, e->cfg.gpu_workers,
        e->cfg.synth_workers, e->synth_auto ? " (auto)" : "", e->cfg.finalizers, e->final_auto ? " (auto)" : "",
        e->cores, (unsigned long long)(total >> 20), e->data_dir);
    return CUZK_OK;
}

void engine_stop(engine *e)
{
    if (!e)
        return;
    pipeline_stop(e);
    if (e->fleet)
        fleet_stop(e);
    pthread_mutex_lock(&e->mu);
    e->running = 0;
    pthread_cond_broadcast(&e->cv_janitor);
    pthread_cond_broadcast(&e->cv_job);
    pthread_mutex_unlock(&e->mu);
    if (e->janitor_started) {
        pthread_join(e->janitor, NULL);
        e->janitor_started = 0;
    }
    e->started = 0;
}

void engine_set_address(engine *e, const char *addr)
{
    pthread_mutex_lock(&e->mu);
    snprintf(e->host_addr, sizeof e->host_addr, "%s", addr ? addr : "");
    pthread_mutex_unlock(&e->mu);
}

void engine_destroy(engine *e)
{
    if (!e)
        return;
    engine_stop(e);
    for (size_t i = 0; i < e->n_jobs; i++)
        job_free(e->jobs[i]);
    free(e->jobs);
    while (e->keys) {
        ekey *k = e->keys;
        e->keys = k->next;
        key_free(e, k);
    }
    bufpool_trim(e);
    for (int c = 0; c < CURVE_COUNT; c++) {
        if (e->synth_be[c])
            e->synth_be[c]->destroy(e->synth_be[c]);
        if (e->crit_be[c])
            e->crit_be[c]->destroy(e->crit_be[c]);
        for (int d = 0; d < ENGINE_MAX_DEVICES; d++)
            if (e->dev_be[c][d])
                e->dev_be[c][d]->destroy(e->dev_be[c][d]);
    }
    pq_free(&e->sched);
    pq_free(&e->synthq);
    pq_free(&e->readyq);
    pq_free(&e->paused);
    free(e->workers);
    tracker_destroy(e->trk);
    if (e->st)
        e->st->close(e->st);
    budget_destroy(&e->bud);
    free(e->circuits);
    free(e);
}

/* ---- submission ---- */

/* writes an uploaded witness (UPLOAD/witness/w-*.wtns) or a circuit input (UPLOAD/input/i-*.json;
 * UPLOAD = --upload-dir, by default the data dir), fsync'd, so the journal never names a file
 * that a crash lost; the name holds the host, so hosts sharing the folder never collide */
static cuzk_err witness_save(engine *e, int is_input, const uint8_t *data, size_t n, char *path, size_t cap,
                             char *err)
{
    static _Atomic unsigned long counter;
    char host[64];
    snprintf(host, sizeof host, "%s", e->host_id);
    for (char *c = host; *c; c++)
        if (*c == '/' || *c == ':')
            *c = '_';
    snprintf(path, cap, "%s/%s-%s-%lld-%lu.%s", e->upload_dir, is_input ? "input/i" : "witness/w", host,
             (long long)eng_now_us(), atomic_fetch_add(&counter, 1), is_input ? "json" : "wtns");
    int fd = open(path, O_WRONLY | O_CREAT | O_EXCL, 0644);
    if (fd < 0)
        return cuzk_errf(err, eng_errno_code(errno), "%s: cannot create: %s", path, strerror(errno));
    size_t off = 0;
    while (off < n) {
        ssize_t k = write(fd, data + off, n - off);
        if (k < 0 && errno == EINTR)
            continue;
        if (k <= 0) {
            int en = k < 0 ? errno : ENOSPC; /* a write of 0 bytes: no room */
            cuzk_err rc = cuzk_errf(err, eng_errno_code(en), "%s: write failed: %s", path, strerror(en));
            close(fd);
            unlink(path);
            return rc;
        }
        off += (size_t)k;
    }
    if (fsync(fd) || close(fd)) {
        cuzk_err rc = cuzk_errf(err, eng_errno_code(errno), "%s: fsync failed: %s", path, strerror(errno));
        unlink(path);
        return rc;
    }
    return CUZK_OK;
}

static void fmt_bytes(char *out, size_t cap, uint64_t b)
{
    if (b >= (1ull << 30))
        snprintf(out, cap, "%llu bytes (%.2f GiB)", (unsigned long long)b, (double)b / (1u << 30));
    else
        snprintf(out, cap, "%llu bytes (%.1f MiB)", (unsigned long long)b, (double)b / (1u << 20));
}

/* Admission: the data dir's file system must have cfg.min_free bytes free beyond what this
 * submission writes there (uploaded witnesses, circuit inputs), else CUZK_ENOSPC with both
 * numbers. Work that was accepted then waits out a full disk (engine_pause.c); refusing here
 * keeps new work from filling what is left. */
static cuzk_err admit_space(engine *e, const engine_job_spec *spec, size_t n, char *err)
{
    if (!e->cfg.min_free)
        return CUZK_OK;
    uint64_t writes = 0;
    for (size_t i = 0; i < n; i++)
        writes += spec->witness_data && spec->witness_data[i] ? spec->witness_sizes[i]
                  : spec->inputs && spec->inputs[i]            ? strlen(spec->inputs[i])
                                                               : 0;
    struct statvfs sv;
    if (statvfs(e->data_dir, &sv))
        return cuzk_errf(err, CUZK_EIO, "data dir %s: statvfs: %s", e->data_dir, strerror(errno));
    uint64_t avail = (uint64_t)sv.f_bavail * (uint64_t)sv.f_frsize;
    if (avail >= e->cfg.min_free + writes)
        return CUZK_OK;
    char a[64], m[64], w[64];
    fmt_bytes(a, sizeof a, avail);
    fmt_bytes(m, sizeof m, e->cfg.min_free);
    fmt_bytes(w, sizeof w, writes);
    return cuzk_errf(err, CUZK_ENOSPC,
                     "not enough free space in the data dir %s: %s free, a submission needs %s (--min-free) "
                     "plus %s for its files; free some space or lower --min-free",
                     e->data_dir, a, m, w);
}

static void info_fill(const ejob *j, engine_job_info *out)
{
    memset(out, 0, sizeof *out);
    snprintf(out->id, sizeof out->id, "%s", j->ids);
    out->state = j->state;
    out->kind = j->kind;
    out->priority = j->prio;
    out->n_partitions = j->n_parts;
    out->n_done = j->n_done;
    out->submitted_ms = j->submitted_ms;
    out->finished_ms = j->finished_ms;
    snprintf(out->error, sizeof out->error, "%s", j->error);
}

cuzk_err engine_submit(engine *e, const engine_job_spec *spec, char id[ENGINE_ID_LEN], int *existed, char *err)
{
    int dummy;
    if (!existed)
        existed = &dummy;
    *existed = 0;
    id[0] = 0;
    if (!e->started)
        return cuzk_errf(err, CUZK_EINVAL, "engine is not running");
    const witgen_circuit *gen = NULL;
    if (spec->circuit) {
        if (!(gen = eng_circuit_find(e, spec->circuit))) {
            if (!e->n_circuits)
                return cuzk_errf(err, CUZK_EINVAL, "unknown circuit '%.64s': no circuit is registered (cuzk serve "
                                                   "--circuit NAME=ZKEY,GENERATOR)", spec->circuit);
            char names[256] = "";
            for (size_t i = 0; i < e->n_circuits; i++) {
                size_t l = strlen(names);
                snprintf(names + l, sizeof names - l, "%s%s", l ? ", " : "", e->circuits[i].name);
            }
            return cuzk_errf(err, CUZK_EINVAL, "unknown circuit '%.64s' (registered: %s)", spec->circuit, names);
        }
        if (spec->zkey_path && *spec->zkey_path)
            return cuzk_errf(err, CUZK_EINVAL, "give either a zkey or a circuit, not both (the circuit names its key)");
        if (!spec->inputs || spec->witness_paths || spec->witness_data)
            return cuzk_errf(err, CUZK_EINVAL, "a job for circuit %s gives circuit inputs, and no witnesses",
                             gen->name);
    } else {
        if (spec->inputs)
            return cuzk_errf(err, CUZK_EINVAL, "circuit inputs need a circuit (a registered name)");
        if (!spec->zkey_path || !*spec->zkey_path)
            return cuzk_errf(err, CUZK_EINVAL, "zkey path is required");
        if (strlen(spec->zkey_path) >= ENGINE_PATH_MAX)
            return cuzk_errf(err, CUZK_EINVAL, "zkey path is longer than %d bytes", ENGINE_PATH_MAX - 1);
        if (!spec->witness_paths == !spec->witness_data)
            return cuzk_errf(err, CUZK_EINVAL, "give the witnesses either as paths or as uploaded data, not %s",
                             spec->witness_paths ? "both" : "neither");
    }
    if (spec->n_partitions < 1 || spec->n_partitions > ENGINE_MAX_PARTITIONS)
        return cuzk_errf(err, CUZK_EINVAL, "a job needs 1 to %d %s, got %zu", ENGINE_MAX_PARTITIONS,
                         gen ? "inputs" : "witnesses", spec->n_partitions);
    if (spec->witness_data && !spec->witness_sizes)
        return cuzk_errf(err, CUZK_EINVAL, "uploaded witnesses need their sizes");
    if ((unsigned)spec->kind >= KIND_COUNT)
        return cuzk_errf(err, CUZK_EINVAL, "unknown job kind %d", (int)spec->kind);
    if (spec->priority != -1 && (spec->priority < 0 || spec->priority >= PRIO_COUNT))
        return cuzk_errf(err, CUZK_EINVAL, "unknown priority %d", spec->priority);
    const char *idem = spec->idempotency_key ? spec->idempotency_key : "";
    if (strlen(idem) > 200)
        return cuzk_errf(err, CUZK_EINVAL, "idempotency key is longer than 200 bytes");

    /* a known idempotency key answers at once */
    if (*idem) {
        pthread_mutex_lock(&e->mu);
        for (size_t i = 0; i < e->n_jobs; i++)
            if (!strcmp(e->jobs[i]->idem, idem)) {
                snprintf(id, ENGINE_ID_LEN, "%s", e->jobs[i]->ids);
                *existed = 1;
                break;
            }
        pthread_mutex_unlock(&e->mu);
        if (*existed)
            return CUZK_OK;
    }

    size_t n = spec->n_partitions;
    store_part *parts = calloc(n, sizeof *parts);
    ejob *j = job_alloc(0, (uint32_t)n);
    zkey_file z;
    int z_open = 0;
    cuzk_err rc = CUZK_OK;
    if (!parts || !j) {
        rc = cuzk_errf(err, CUZK_ENOMEM, "out of memory");
        goto fail;
    }
    char zpath[PATH_MAX];
    const char *zkey_path = gen ? gen->zkey : spec->zkey_path;
    if (!realpath(zkey_path, zpath)) {
        rc = cuzk_errf(err, CUZK_EIO, "%s: cannot open: %s", zkey_path, strerror(errno));
        goto fail;
    }
    if ((rc = zkey_open(&z, zpath, err)))
        goto fail;
    z_open = 1;
    if ((rc = admit_space(e, spec, n, err)))
        goto fail;
    uint64_t wmax = 0;
    for (size_t i = 0; i < n; i++) {
        store_part *sp = &parts[i];
        sp->index = (uint32_t)i;
        sp->state = PART_QUEUED;
        if (gen) {
            /* the generator checks the input when it runs; its witness size is the key's */
            const char *in = spec->inputs[i];
            if (!in) {
                rc = cuzk_errf(err, CUZK_EINVAL, "input %zu: missing", i);
                goto fail;
            }
            if ((rc = witness_save(e, 1, (const uint8_t *)in, strlen(in), sp->witness, sizeof sp->witness, err)))
                goto fail;
            sp->owned = 1;
            if (witgen_wtns_bytes(z.n_vars) > wmax)
                wmax = witgen_wtns_bytes(z.n_vars);
            continue;
        }
        if (spec->witness_data) {
            if (!spec->witness_data[i]) {
                rc = cuzk_errf(err, CUZK_EINVAL, "witness %zu: no data", i);
                goto fail;
            }
            if ((rc = witness_save(e, 0, spec->witness_data[i], spec->witness_sizes[i], sp->witness,
                                   sizeof sp->witness, err)))
                goto fail;
            sp->owned = 1;
        } else {
            const char *wp = spec->witness_paths[i];
            char rp[PATH_MAX];
            if (!wp || !realpath(wp, rp)) {
                rc = cuzk_errf(err, CUZK_EIO, "witness %zu: %s: cannot open: %s", i, wp ? wp : "(null)",
                               wp ? strerror(errno) : "no path");
                goto fail;
            }
            if (strlen(rp) >= sizeof sp->witness) {
                rc = cuzk_errf(err, CUZK_EINVAL, "witness %zu: path too long", i);
                goto fail;
            }
            snprintf(sp->witness, sizeof sp->witness, "%s", rp);
        }
        wtns_file w;
        if ((rc = wtns_open(&w, sp->witness, err))) {
            cuzk_err_prefix(err, "witness %zu", i);
            goto fail;
        }
        rc = zkey_check_witness(&z, &w, err);
        if (w.map.size > wmax)
            wmax = w.map.size;
        wtns_close(&w);
        if (rc) {
            cuzk_err_prefix(err, "witness %zu", i);
            goto fail;
        }
    }
    job_sizes(e, j, &z, wmax);
    uint64_t total;
    budget_snapshot(&e->bud, &total, NULL, NULL, NULL, NULL, NULL);
    if (j->part_bytes + j->key_bytes > total) {
        char a[64], b[64], c[64], d[64];
        fmt_bytes(a, sizeof a, j->part_bytes + j->key_bytes);
        fmt_bytes(b, sizeof b, j->part_bytes);
        fmt_bytes(c, sizeof c, j->key_bytes);
        fmt_bytes(d, sizeof d, total);
        rc = cuzk_errf(err, CUZK_EBUDGET,
                       "one partition needs %s (workspace and witness %s + proving key %s) but the memory budget "
                       "is %s",
                       a, b, c, d);
        goto fail;
    }
    zkey_close(&z);
    z_open = 0;

    store_job sj;
    memset(&sj, 0, sizeof sj);
    sj.kind = (int)spec->kind;
    sj.priority = spec->priority == -1 ? (int)engine_kind_default_priority(spec->kind) : spec->priority;
    sj.state = JOB_QUEUED;
    snprintf(sj.zkey, sizeof sj.zkey, "%s", zpath);
    snprintf(sj.idem, sizeof sj.idem, "%s", idem);
    snprintf(sj.circuit, sizeof sj.circuit, "%s", gen ? gen->name : "");
    sj.n_parts = (uint32_t)n;
    sj.submitted_ms = eng_now_ms();
    pthread_mutex_lock(&e->submit_mu);
    rc = e->st->job_insert(e->st, &sj, parts, existed, err);
    if (rc || *existed) {
        pthread_mutex_unlock(&e->submit_mu);
        if (!rc)
            snprintf(id, ENGINE_ID_LEN, "j-%lld", (long long)sj.id);
        if (!rc && e->fleet)
            fleet_pull(e, sj.id); /* another host's job: status, await, proofs work here too */
        goto fail; /* also the cleanup path for an existing key */
    }
    j->id = sj.id;
    snprintf(j->ids, sizeof j->ids, "j-%lld", (long long)sj.id);
    j->kind = spec->kind;
    j->prio = (engine_priority)sj.priority;
    j->state = JOB_QUEUED;
    snprintf(j->zkey, sizeof j->zkey, "%s", zpath);
    snprintf(j->idem, sizeof j->idem, "%s", idem);
    snprintf(j->circuit, sizeof j->circuit, "%s", sj.circuit);
    j->gen = gen;
    j->submitted_ms = sj.submitted_ms;
    for (size_t i = 0; i < n; i++) {
        snprintf(j->parts[i].witness, sizeof j->parts[i].witness, "%s", parts[i].witness);
        j->parts[i].owned = parts[i].owned;
    }
    pthread_mutex_lock(&e->mu);
    if (jobs_add(e, j)) {
        pthread_mutex_unlock(&e->mu);
        pthread_mutex_unlock(&e->submit_mu);
        /* journaled: it will run after a restart; report the memory problem now */
        free(parts);
        job_free(j);
        return cuzk_errf(err, CUZK_ENOMEM, "out of memory (job j-%lld is journaled)", (long long)sj.id);
    }
    e->jobs_total[j->kind][JOB_QUEUED]++;
    if (sj.id > e->fleet_max_id)
        e->fleet_max_id = sj.id;
    for (size_t i = 0; i < n && !e->fleet; i++) { /* a fleet's hosts claim them from the store */
        j->parts[i].seq = ++e->seq;
        pipeline_enqueue(e, &j->parts[i]);
    }
    pthread_mutex_unlock(&e->mu);
    pthread_mutex_unlock(&e->submit_mu);
    snprintf(id, ENGINE_ID_LEN, "%s", j->ids);
    free(parts);
    LOG(LOG_INFO, "%s submitted: %s, %zu partition(s), priority %s%s%s", j->ids, engine_kind_name(j->kind), n,
        engine_priority_name(j->prio), gen ? ", circuit " : "", gen ? gen->name : "");
    return CUZK_OK;
fail:
    if (z_open)
        zkey_close(&z);
    if (parts)
        for (size_t i = 0; i < n; i++)
            if (parts[i].owned)
                unlink(parts[i].witness);
    free(parts);
    job_free(j);
    return rc;
}

/* ---- queries ---- */

cuzk_err engine_get_job(engine *e, const char *id, engine_job_info *out, char *err)
{
    pthread_mutex_lock(&e->mu);
    ejob *j = eng_job_find_pull(e, id);
    if (j)
        info_fill(j, out);
    pthread_mutex_unlock(&e->mu);
    return j ? CUZK_OK : cuzk_errf(err, CUZK_ENOTFOUND, "no job %s", id ? id : "(null)");
}

cuzk_err engine_wait(engine *e, const char *id, int64_t timeout_ms, engine_job_info *out, char *err)
{
    struct timespec until;
    clock_gettime(CLOCK_MONOTONIC, &until);
    if (timeout_ms >= 0) {
        until.tv_sec += timeout_ms / 1000;
        until.tv_nsec += (timeout_ms % 1000) * 1000000L;
        until.tv_sec += until.tv_nsec / 1000000000L;
        until.tv_nsec %= 1000000000L;
    }
    cuzk_err rc;
    pthread_mutex_lock(&e->mu);
    for (;;) {
        ejob *j = eng_job_find_pull(e, id);
        if (!j) {
            rc = cuzk_errf(err, CUZK_ENOTFOUND, "no job %s", id ? id : "(null)");
            break;
        }
        info_fill(j, out);
        if (is_terminal(j->state)) {
            rc = CUZK_OK;
            break;
        }
        if (!e->running) {
            rc = cuzk_errf(err, CUZK_ETIMEOUT, "engine is stopping; %s is %s", j->ids,
                           engine_job_state_name(j->state));
            break;
        }
        int w = timeout_ms >= 0 ? pthread_cond_timedwait(&e->cv_job, &e->mu, &until)
                                : pthread_cond_wait(&e->cv_job, &e->mu);
        if (w == ETIMEDOUT) {
            info_fill(j, out);
            rc = is_terminal(j->state) ? CUZK_OK
                                       : cuzk_errf(err, CUZK_ETIMEOUT, "%s is still %s after %lld ms", j->ids,
                                                   engine_job_state_name(j->state), (long long)timeout_ms);
            break;
        }
    }
    pthread_mutex_unlock(&e->mu);
    return rc;
}

cuzk_err engine_cancel(engine *e, const char *id, char *err)
{
    pthread_mutex_lock(&e->mu);
    ejob *j = eng_job_find_pull(e, id);
    if (!j) {
        pthread_mutex_unlock(&e->mu);
        return cuzk_errf(err, CUZK_ENOTFOUND, "no job %s", id ? id : "(null)");
    }
    if (j->state == JOB_CANCELED) {
        pthread_mutex_unlock(&e->mu);
        return CUZK_OK;
    }
    if (j->state == JOB_DONE || j->state == JOB_FAILED) {
        engine_job_state s = j->state;
        pthread_mutex_unlock(&e->mu);
        return cuzk_errf(err, CUZK_EINVAL, "job %s is already %s", id, engine_job_state_name(s));
    }
    __atomic_store_n(&j->stopping, 1, __ATOMIC_RELEASE);
    pipeline_remove_job_locked(e, j);
    pthread_mutex_unlock(&e->mu);
    eng_job_finish(e, j, JOB_CANCELED, "canceled by request");
    /* wake synthesis workers waiting for device-queue space so they drop it now */
    pthread_mutex_lock(&e->rq_mu);
    pthread_cond_broadcast(&e->cv_rq_space);
    pthread_mutex_unlock(&e->rq_mu);
    return CUZK_OK;
}

/* ---- keys ---- */

cuzk_err engine_key_preload(engine *e, const char *zkey_path, char *err)
{
    char zpath[PATH_MAX];
    if (!zkey_path || !realpath(zkey_path, zpath))
        return cuzk_errf(err, CUZK_EIO, "%s: cannot open: %s", zkey_path ? zkey_path : "(null)", strerror(errno));
    pthread_mutex_lock(&e->mu);
    ekey *k = key_find(e, zpath);
    if (!k) {
        pthread_mutex_unlock(&e->mu);
        zkey_file z;
        cuzk_err rc = zkey_open(&z, zpath, err);
        if (rc)
            return rc;
        uint64_t bytes = key_bytes_estimate(e, &z), total;
        zkey_close(&z);
        budget_snapshot(&e->bud, &total, NULL, NULL, NULL, NULL, NULL);
        if (bytes > total)
            return cuzk_errf(err, CUZK_EBUDGET, "key %s needs %llu bytes but the memory budget is %llu bytes",
                             zpath, (unsigned long long)bytes, (unsigned long long)total);
        pthread_mutex_lock(&e->mu);
        key_evict_lru(e, bytes, zpath);
        pthread_mutex_unlock(&e->mu);
        if (!budget_reserve(&e->bud, bytes, 60000))
            return cuzk_errf(err, CUZK_ETIMEOUT, "key %s: %llu bytes of budget did not free up within 60 s", zpath,
                             (unsigned long long)bytes);
        pthread_mutex_lock(&e->mu);
        k = key_find(e, zpath); /* someone else may have created it meanwhile */
        if (k) {
            pthread_mutex_unlock(&e->mu);
            budget_release(&e->bud, bytes);
            pthread_mutex_lock(&e->mu);
        } else if (!(k = key_new(e, zpath, bytes))) {
            pthread_mutex_unlock(&e->mu);
            budget_release(&e->bud, bytes);
            return cuzk_errf(err, CUZK_ENOMEM, "out of memory");
        }
    }
    k->preloaded = 1;
    k->refs++;
    pthread_mutex_unlock(&e->mu);
    cuzk_err rc = key_ensure(e, k, err);
    pthread_mutex_lock(&e->mu);
    k->refs--;
    pthread_mutex_unlock(&e->mu);
    return rc;
}

cuzk_err engine_key_evict(engine *e, const char *zkey_path, char *err)
{
    char zpath[PATH_MAX];
    const char *p = zkey_path && realpath(zkey_path, zpath) ? zpath : zkey_path;
    pthread_mutex_lock(&e->mu);
    for (ekey **pp = &e->keys; *pp; pp = &(*pp)->next) {
        ekey *k = *pp;
        if (strcmp(k->path, p ? p : ""))
            continue;
        if (k->refs || k->state == KEY_LOADING) {
            int refs = k->refs;
            pthread_mutex_unlock(&e->mu);
            return cuzk_errf(err, CUZK_EINVAL, "key %s is in use by %d partition(s)", k->path, refs);
        }
        *pp = k->next;
        pthread_mutex_unlock(&e->mu);
        key_free(e, k);
        pthread_cond_signal(&e->cv_sched);
        return CUZK_OK;
    }
    pthread_mutex_unlock(&e->mu);
    return cuzk_errf(err, CUZK_ENOTFOUND, "key %s is not loaded", zkey_path ? zkey_path : "(null)");
}
