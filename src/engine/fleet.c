/* fleet.c - many hosts, one queue: the engine's side of a shared store (store.h, "the
 * fleet"; the PostgreSQL store). Every daemon on the store runs one fleet thread that
 *   - claims partitions from the store (store->claim: priority order, keys this host holds
 *     first, SKIP LOCKED) while fewer than its window are in its pipeline, and puts each
 *     into the local scheduler, where budget admission works as on one host;
 *   - renews the leases of the partitions in its pipeline every third of the lease, and
 *     notes the ones it lost (their commits will be refused);
 *   - heartbeats its host row (devices, keys loaded, leases, device workers' busy share);
 *   - mirrors the store into the job table (eng_job_mirror): jobs submitted through other
 *     hosts, partitions they proved, jobs that ended (done, failed, canceled anywhere), so
 *     that status, await, cancel and proof fetch work through any host;
 *   - sleeps on the store's change notifications (LISTEN/NOTIFY), at most 200 ms; mirrors at
 *     once after a notification, else once a second; claims after every wake-up.
 * The finalizer commits a proof under the lease (fleet_commit): refused when the lease was
 * taken over, so a host that stalled past its lease never commits late or twice. A
 * partition leaving the pipeline without a proof gives its lease back (fleet_part_leave);
 * at shutdown every lease goes back, so the others need not wait for them to expire.
 *
 * Locks: the store's calls are made without e->mu; e->mu only around the job table.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <jansson.h>

#include "engine/engine_internal.h"
#include "util/log.h"

#define FLEET_WAIT_MS 200     /* longest sleep between two looks at the store */
#define FLEET_BEAT_MS 1000    /* heartbeat period */
#define FLEET_FAIR_MS 30000   /* a partition waiting this long is claimed even by a host without its key */
#define FLEET_KEYS_MAX 32     /* loaded keys a claim prefers */
#define FLEET_HELD_MAX 256    /* leases renewed per round, at most */

static int64_t mono_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static int terminal(engine_job_state s)
{
    return s == JOB_DONE || s == JOB_FAILED || s == JOB_CANCELED;
}

/* partitions this host may have in its pipeline at once */
static int fleet_window(const engine *e)
{
    return e->cfg.synth_workers + e->n_dev * e->cfg.gpu_workers;
}

/* the leases held (e->mu held); returns how many there are (at most cap written) */
static int held_list(engine *e, store_claim *out, int cap)
{
    int n = 0;
    for (size_t i = 0; i < e->n_jobs; i++) {
        ejob *j = e->jobs[i];
        for (uint32_t k = 0; k < j->n_parts; k++)
            if (j->parts[k].local) {
                if (n < cap && j->parts[k].lease)
                    out[n] = (store_claim){j->id, k, j->parts[k].lease};
                n += j->parts[k].lease ? 1 : 0;
            }
    }
    return n;
}

static int local_count(engine *e)
{
    int n = 0;
    for (size_t i = 0; i < e->n_jobs; i++)
        for (uint32_t k = 0; k < e->jobs[i]->n_parts; k++)
            n += e->jobs[i]->parts[k].local;
    return n;
}

/* paths of the loaded keys, newline-joined into buf; the first max also into keys[] (pointers
   into buf) */
static int keys_loaded(engine *e, char *buf, size_t cap, const char **keys, int max)
{
    int n = 0;
    size_t len = 0;
    buf[0] = 0;
    pthread_mutex_lock(&e->mu);
    for (ekey *k = e->keys; k; k = k->next) {
        if (k->state != KEY_READY || len + strlen(k->path) + 2 > cap)
            continue;
        if (len)
            buf[len++] = '\n';
        size_t l = strlen(k->path);
        memcpy(buf + len, k->path, l + 1);
        if (n < max)
            keys[n++] = buf + len;
        len += l;
    }
    pthread_mutex_unlock(&e->mu);
    return n;
}

static void mirror_cb(void *ctx, const store_job *sj, const store_part *sp)
{
    eng_job_mirror(ctx, sj, sp);
}

void fleet_pull(engine *e, int64_t id)
{
    char err[CUZK_ERRLEN];
    if (e->st->load_some(e->st, INT64_MAX, &id, 1, mirror_cb, e, err))
        LOG(LOG_WARN, "fleet: j-%lld: %s", (long long)id, err);
}

/* new jobs, and the ones this host still waits on */
static void fleet_sync(engine *e)
{
    pthread_mutex_lock(&e->mu);
    int64_t after = e->fleet_max_id;
    int64_t *ids = malloc((e->n_jobs ? e->n_jobs : 1) * sizeof *ids);
    int n = 0;
    for (size_t i = 0; ids && i < e->n_jobs; i++)
        if (!terminal(e->jobs[i]->state))
            ids[n++] = e->jobs[i]->id;
    pthread_mutex_unlock(&e->mu);
    if (!ids)
        return;
    char err[CUZK_ERRLEN];
    if (e->st->load_some(e->st, after, ids, n, mirror_cb, e, err))
        LOG(LOG_WARN, "fleet: sync: %s", err);
    free(ids);
}

/* Claims one partition and puts it into the scheduler; 0 when nothing was claimable. */
static int claim_one(engine *e)
{
    char kbuf[4096], err[CUZK_ERRLEN];
    const char *keys[FLEET_KEYS_MAX];
    int nk = keys_loaded(e, kbuf, sizeof kbuf, keys, FLEET_KEYS_MAX);
    store_claim c;
    int got = 0;
    if (e->st->claim(e->st, e->host_id, keys, nk, e->lease_ms, FLEET_FAIR_MS, &c, &got, err)) {
        LOG(LOG_WARN, "fleet: claim: %s", err);
        return 0;
    }
    if (!got)
        return 0;
    atomic_fetch_add(&e->fleet_claims, 1);
    char ids[ENGINE_ID_LEN];
    snprintf(ids, sizeof ids, "j-%lld", (long long)c.job);
    pthread_mutex_lock(&e->mu);
    ejob *j = eng_job_find_pull(e, ids);
    if (!j || terminal(j->state) || j->stopping || c.index >= j->n_parts) {
        /* the table disagrees with the store (a done job proved again elsewhere, or one that
           ended here but not yet there): the lease goes back, the job is read again, and
           claiming waits for the next round */
        int reread = j && j->state == JOB_DONE;
        pthread_mutex_unlock(&e->mu);
        if (e->st->release(e->st, e->host_id, &c, err))
            LOG(LOG_WARN, "fleet: %s", err);
        if (reread)
            fleet_pull(e, c.job);
        return 0;
    }
    epart *p = &j->parts[c.index];
    if (p->local) {
        /* still in this host's pipeline from a lease that lapsed: the new lease covers it */
        p->lease = c.attempt;
        pthread_mutex_unlock(&e->mu);
        return 1;
    }
    int sized = j->part_bytes != 0;
    p->local = 1; /* from here on nobody else here takes it */
    pthread_mutex_unlock(&e->mu);
    if (!sized && eng_job_requeue(e, j, err)) { /* sizes the job from its key */
        char why[CUZK_ERRLEN];
        snprintf(why, sizeof why, "on host %.100s: %.380s", e->host_id, err);
        pthread_mutex_lock(&e->mu);
        p->local = 0;
        pthread_mutex_unlock(&e->mu);
        e->st->release(e->st, e->host_id, &c, err);
        eng_job_finish(e, j, JOB_FAILED, why);
        return 1;
    }
    pthread_mutex_lock(&e->mu);
    if (j->stopping) {
        p->local = 0;
        pthread_mutex_unlock(&e->mu);
        e->st->release(e->st, e->host_id, &c, err);
        return 1;
    }
    if (p->state == PART_DONE && j->n_done) /* proved again (its stored proof was found damaged) */
        j->n_done--;
    p->lease = c.attempt;
    p->attempts = 0;
    p->seq = ++e->seq;
    pipeline_enqueue(e, p);
    pthread_mutex_unlock(&e->mu);
    LOG(LOG_DEBUG, "fleet: claimed %s partition %u (attempt %d)", ids, c.index, c.attempt);
    return 1;
}

static void fleet_renew(engine *e)
{
    store_claim c[FLEET_HELD_MAX];
    int lost[FLEET_HELD_MAX];
    char err[CUZK_ERRLEN];
    pthread_mutex_lock(&e->mu);
    int n = held_list(e, c, FLEET_HELD_MAX);
    pthread_mutex_unlock(&e->mu);
    if (n > FLEET_HELD_MAX)
        n = FLEET_HELD_MAX;
    if (n && e->st->renew(e->st, e->host_id, c, n, e->lease_ms, lost, err)) {
        LOG(LOG_WARN, "fleet: renew: %s", err);
        return;
    }
    int held = n;
    for (int i = 0; i < n; i++) {
        if (!lost[i])
            continue;
        held--;
        atomic_fetch_add(&e->fleet_lost, 1);
        char ids[ENGINE_ID_LEN];
        snprintf(ids, sizeof ids, "j-%lld", (long long)c[i].job);
        pthread_mutex_lock(&e->mu);
        ejob *j = eng_job_find(e, ids);
        if (j && c[i].index < j->n_parts && j->parts[c[i].index].lease == c[i].attempt)
            j->parts[c[i].index].lease = 0; /* its commit will be refused */
        pthread_mutex_unlock(&e->mu);
        LOG(LOG_WARN, "fleet: %s partition %u: this host's lease (attempt %d) was lost: another host may "
            "have the partition", ids, c[i].index, c[i].attempt);
    }
    atomic_store(&e->fleet_held, held);
}

static void fleet_beat(engine *e)
{
    store_host h;
    memset(&h, 0, sizeof h);
    const char *keys[1];
    keys_loaded(e, h.keys, sizeof h.keys, keys, 0);
    pthread_mutex_lock(&e->mu);
    snprintf(h.id, sizeof h.id, "%s", e->host_id);
    snprintf(h.address, sizeof h.address, "%s", e->host_addr);
    pthread_mutex_unlock(&e->mu);
    snprintf(h.version, sizeof h.version, "cuzk");
    h.devices = e->n_dev;
    h.leases = atomic_load(&e->fleet_held);
    /* the devices' busy share over the last 10 s (the tracker's timeline), as /status's
       busy_ratio_10s */
    int64_t now = eng_now_us();
    for (int d = 0; d < e->n_dev && e->trk; d++)
        h.busy += tracker_busy_ratio(e->trk, d, 10000000, now) / e->n_dev;
    h.busy = h.busy < 0 ? 0 : h.busy > 1 ? 1 : h.busy;
    char err[CUZK_ERRLEN];
    if (e->st->host_beat(e->st, &h, err))
        LOG(LOG_WARN, "fleet: heartbeat: %s", err);
}

static void *fleet_main(void *arg)
{
    engine *e = arg;
    int64_t next_renew = 0, next_beat = 0, next_sync = 0;
    int changed = 1;
    while (atomic_load(&e->running)) {
        int64_t now = mono_ms();
        if (now >= next_renew) {
            fleet_renew(e);
            next_renew = now + e->lease_ms / 3;
        }
        if (now >= next_beat) {
            fleet_beat(e);
            next_beat = now + FLEET_BEAT_MS;
        }
        /* the mirror: at once when a change was announced, else once a second (a missed
           notification costs at most that) */
        if (changed || now >= next_sync) {
            fleet_sync(e);
            next_sync = now + 1000;
        }
        for (;;) {
            pthread_mutex_lock(&e->mu);
            int room = local_count(e) < fleet_window(e);
            pthread_mutex_unlock(&e->mu);
            if (!room || !atomic_load(&e->running) || !claim_one(e))
                break;
        }
        int64_t until = next_renew < next_beat ? next_renew : next_beat;
        int64_t wait = until - mono_ms();
        changed = e->st->wait_change(e->st, (int)(wait < 1 ? 1 : wait > FLEET_WAIT_MS ? FLEET_WAIT_MS : wait));
    }
    return NULL;
}

cuzk_err fleet_start(engine *e, char *err)
{
    if (pthread_create(&e->fleet_thread, NULL, fleet_main, e))
        return cuzk_errf(err, CUZK_ENOMEM, "cannot start the fleet thread");
    e->fleet_started = 1;
    LOG(LOG_INFO, "fleet: host %s shares the store (lease %lld s)", e->host_id, (long long)(e->lease_ms / 1000));
    return CUZK_OK;
}

void fleet_stop(engine *e)
{
    if (e->fleet_started) {
        pthread_join(e->fleet_thread, NULL);
        e->fleet_started = 0;
    }
    /* the leases of what was in the pipeline go back: claimable at once by the others */
    store_claim c[FLEET_HELD_MAX];
    pthread_mutex_lock(&e->mu);
    int n = held_list(e, c, FLEET_HELD_MAX);
    for (size_t i = 0; i < e->n_jobs; i++)
        for (uint32_t k = 0; k < e->jobs[i]->n_parts; k++)
            e->jobs[i]->parts[k].local = e->jobs[i]->parts[k].lease = 0;
    pthread_mutex_unlock(&e->mu);
    char err[CUZK_ERRLEN];
    for (int i = 0; i < n && i < FLEET_HELD_MAX; i++)
        if (e->st->release(e->st, e->host_id, &c[i], err))
            LOG(LOG_WARN, "fleet: %s", err);
}

cuzk_err fleet_commit(engine *e, epart *p, const char *proof_json, const char *public_json, int *refused,
                      int *job_done, char *err)
{
    pthread_mutex_lock(&e->mu);
    store_claim c = {p->job->id, p->index, p->lease};
    pthread_mutex_unlock(&e->mu);
    *refused = *job_done = 0;
    if (!c.attempt) {
        *refused = 1; /* lost at a renewal already */
        return CUZK_OK;
    }
    return e->st->commit(e->st, e->host_id, &c, proof_json, public_json, refused, job_done, err);
}

void fleet_part_leave(engine *e, epart *p)
{
    pthread_mutex_lock(&e->mu);
    store_claim c = {p->job->id, p->index, p->lease};
    p->local = p->lease = 0;
    pthread_mutex_unlock(&e->mu);
    char err[CUZK_ERRLEN];
    if (c.attempt && e->st->release(e->st, e->host_id, &c, err))
        LOG(LOG_WARN, "fleet: %s", err);
}

/* ---- what /status and /metrics show of the fleet ---- */

#define FLEET_LIST_MAX 64

static int fleet_hosts(engine *e, store_host *hs)
{
    int n = 0;
    char err[CUZK_ERRLEN];
    /* a host silent for 10 leases is gone: left out */
    if (e->st->host_list(e->st, 10 * e->lease_ms, hs, FLEET_LIST_MAX, &n, err)) {
        LOG(LOG_WARN, "fleet: %s", err);
        return 0;
    }
    return n;
}

json_t *fleet_status_json(engine *e)
{
    store_host *hs = calloc(FLEET_LIST_MAX, sizeof *hs);
    if (!hs)
        return json_null();
    int n = fleet_hosts(e, hs);
    json_t *o = json_object(), *arr = json_array();
    for (int i = 0; i < n; i++) {
        json_t *keys = json_array();
        for (char *k = hs[i].keys, *nl; k && *k; k = nl ? nl + 1 : NULL) {
            nl = strchr(k, '\n');
            json_array_append_new(keys, nl ? json_stringn(k, (size_t)(nl - k)) : json_string(k));
        }
        json_array_append_new(arr, json_pack("{s:s,s:s,s:s,s:i,s:f,s:i,s:o,s:f,s:b}", "id", hs[i].id, "address",
                                             hs[i].address, "version", hs[i].version, "devices", hs[i].devices,
                                             "busy", hs[i].busy, "leases", hs[i].leases, "keys", keys,
                                             "heartbeat_age_s", (double)hs[i].age_ms / 1000.0, "self",
                                             !strcmp(hs[i].id, e->host_id)));
    }
    free(hs);
    json_object_set_new(o, "host", json_string(e->host_id));
    json_object_set_new(o, "lease_s", json_real((double)e->lease_ms / 1000.0));
    json_object_set_new(o, "leases_held", json_integer(atomic_load(&e->fleet_held)));
    json_object_set_new(o, "claims", json_integer(atomic_load(&e->fleet_claims)));
    json_object_set_new(o, "late_commits_refused", json_integer(atomic_load(&e->fleet_refused)));
    json_object_set_new(o, "leases_lost", json_integer(atomic_load(&e->fleet_lost)));
    json_object_set_new(o, "hosts", arr);
    return o;
}

/* Prometheus lines of the fleet, appended with put(ctx, line) */
void fleet_metrics(engine *e, void (*put)(void *ctx, const char *text), void *ctx)
{
    store_host *hs = calloc(FLEET_LIST_MAX, sizeof *hs);
    if (!hs)
        return;
    int n = fleet_hosts(e, hs);
    char line[2048];
    snprintf(line, sizeof line,
             "# HELP cuzk_fleet_claims_total Partitions this host claimed from the shared store.\n"
             "# TYPE cuzk_fleet_claims_total counter\ncuzk_fleet_claims_total %lld\n"
             "# HELP cuzk_fleet_late_commits_refused_total Proofs refused because this host's lease was lost.\n"
             "# TYPE cuzk_fleet_late_commits_refused_total counter\ncuzk_fleet_late_commits_refused_total %lld\n"
             "# HELP cuzk_fleet_leases_lost_total Leases this host found taken over at renewal.\n"
             "# TYPE cuzk_fleet_leases_lost_total counter\ncuzk_fleet_leases_lost_total %lld\n"
             "# HELP cuzk_fleet_hosts Hosts heartbeating on the shared store.\n"
             "# TYPE cuzk_fleet_hosts gauge\ncuzk_fleet_hosts %d\n",
             (long long)atomic_load(&e->fleet_claims), (long long)atomic_load(&e->fleet_refused),
             (long long)atomic_load(&e->fleet_lost), n);
    put(ctx, line);
    static const char *names[3] = {"cuzk_fleet_host_leases", "cuzk_fleet_host_busy_ratio",
                                   "cuzk_fleet_host_heartbeat_age_seconds"};
    static const char *helps[3] = {"Leases each host holds.", "Each host's devices' busy share.",
                                   "Seconds since each host's last heartbeat."};
    for (int m = 0; m < 3; m++) {
        snprintf(line, sizeof line, "# HELP %s %s\n# TYPE %s gauge\n", names[m], helps[m], names[m]);
        put(ctx, line);
        for (int i = 0; i < n; i++) {
            double v = m == 0 ? hs[i].leases : m == 1 ? hs[i].busy : (double)hs[i].age_ms / 1000.0;
            snprintf(line, sizeof line, "%s{host=\"%s\"} %.3f\n", names[m], hs[i].id, v);
            put(ctx, line);
        }
    }
    free(hs);
}
