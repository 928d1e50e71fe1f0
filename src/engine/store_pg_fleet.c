/* store_pg_fleet.c - the fleet part of the PostgreSQL store (store.h: host_beat, host_list,
 * claim, renew, commit, release, load_some, wait_change): several daemons sharing one queue.
 *
 * DESIGN. A lease is three columns of cuzk_parts: lease_host, lease_until (unix ms on the
 * server's clock, PG_NOW_MS, so that hosts' clocks never matter) and lease_attempt, which
 * every claim increments and which fences the commit. Claiming is one statement: the
 * first claimable partition in (priority, key held or waited long enough, job, index)
 * order, locked FOR UPDATE SKIP LOCKED, then updated with the new lease; two hosts
 * claiming at once get different partitions and never wait for each other. Committing a
 * proof is one transaction that locks the job row first (so that the commits of a job's
 * last two partitions on two hosts are serialized and exactly one of them sees the job
 * complete), then checks the partition's lease (host and attempt) and its checksum, stores
 * the proof, and marks the job DONE when no partition is left. Every change other hosts
 * must see (a job submitted, a partition proved, a job ended) is announced with
 * pg_notify(PG_CHANNEL, job id), delivered at commit; wait_change listens on a connection
 * of its own.
 */
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "engine/store_pg_internal.h"
#include "util/log.h"

/* a Postgres text[] literal of paths: {"a","b"} with " and \ escaped; malloc'd */
static char *text_array(const char *const *v, int n)
{
    size_t cap = 3;
    for (int i = 0; i < n; i++)
        cap += 2 * strlen(v[i]) + 3;
    char *out = malloc(cap), *o = out;
    if (!out)
        return NULL;
    *o++ = '{';
    for (int i = 0; i < n; i++) {
        if (i)
            *o++ = ',';
        *o++ = '"';
        for (const char *c = v[i]; *c; c++) {
            if (*c == '"' || *c == '\\')
                *o++ = '\\';
            *o++ = *c;
        }
        *o++ = '"';
    }
    *o++ = '}';
    *o = 0;
    return out;
}

static cuzk_err pg_host_beat(store *s, const store_host *h, char *err)
{
    pgs *p = s->impl;
    char b[3][32], busy[32];
    snprintf(busy, sizeof busy, "%.4f", h->busy);
    const char *v[] = {h->id, h->address, h->version, I64(b[0], h->devices), h->keys, I64(b[1], h->leases), busy};
    pthread_mutex_lock(&p->mu);
    cuzk_err e = pg_cmd(p, NULL, "heartbeat", 0,
                        "INSERT INTO cuzk_hosts(id, address, version, devices, keys, leases, busy, started_ms,"
                        " heartbeat_ms) VALUES($1, $2, $3, $4, $5, $6, $7, " PG_NOW_MS ", " PG_NOW_MS ")"
                        " ON CONFLICT (id) DO UPDATE SET address = $2, version = $3, devices = $4, keys = $5,"
                        " leases = $6, busy = $7, heartbeat_ms = " PG_NOW_MS,
                        7, v, err);
    pthread_mutex_unlock(&p->mu);
    (void)b[2];
    return e;
}

static cuzk_err pg_host_list(store *s, int64_t max_age_ms, store_host *out, int cap, int *n, char *err)
{
    pgs *p = s->impl;
    char b[32];
    const char *v[] = {I64(b, max_age_ms)};
    PGresult *r = NULL;
    *n = 0;
    pthread_mutex_lock(&p->mu);
    cuzk_err e = pg_run(p, &r, "list hosts", 0,
                        "SELECT id, address, version, devices, keys, leases, busy, heartbeat_ms, "
                        PG_NOW_MS " - heartbeat_ms FROM cuzk_hosts WHERE heartbeat_ms > " PG_NOW_MS " - $1"
                        " ORDER BY id",
                        1, v, err);
    pthread_mutex_unlock(&p->mu);
    if (e)
        return e;
    for (int i = 0; i < PQntuples(r) && *n < cap; i++) {
        store_host *h = &out[(*n)++];
        memset(h, 0, sizeof *h);
        snprintf(h->id, sizeof h->id, "%s", PQgetvalue(r, i, 0));
        snprintf(h->address, sizeof h->address, "%s", PQgetvalue(r, i, 1));
        snprintf(h->version, sizeof h->version, "%s", PQgetvalue(r, i, 2));
        h->devices = (int)pg_col_i(r, i, 3);
        snprintf(h->keys, sizeof h->keys, "%s", PQgetvalue(r, i, 4));
        h->leases = (int)pg_col_i(r, i, 5);
        h->busy = atof(PQgetvalue(r, i, 6));
        h->heartbeat_ms = pg_col_i(r, i, 7);
        h->age_ms = pg_col_i(r, i, 8);
    }
    PQclear(r);
    return CUZK_OK;
}

static cuzk_err pg_claim(store *s, const char *host, const char *const *keys, int n_keys, int64_t lease_ms,
                         int64_t fair_ms, store_claim *out, int *got, char *err)
{
    pgs *p = s->impl;
    *got = 0;
    char *arr = text_array(keys, n_keys), b[2][32];
    if (!arr)
        return cuzk_errf(err, CUZK_ENOMEM, "claim: out of memory");
    const char *v[] = {host, arr, I64(b[0], lease_ms), I64(b[1], fair_ms)};
    PGresult *r = NULL;
    /* 0 = JOB_QUEUED and PART_QUEUED (engine.h) */
    pthread_mutex_lock(&p->mu);
    cuzk_err e = pg_run(p, &r, "claim", 0,
                        "WITH c AS (SELECT p.job, p.idx FROM cuzk_parts p JOIN cuzk_jobs j ON j.id = p.job"
                        " WHERE p.state = 0 AND j.state = 0 AND (p.lease_host IS NULL OR p.lease_until < " PG_NOW_MS ")"
                        " ORDER BY j.priority DESC,"
                        " (j.zkey = ANY($2::text[]) OR j.submitted_ms < " PG_NOW_MS " - $4::bigint) DESC,"
                        " j.id, p.idx LIMIT 1 FOR UPDATE OF p SKIP LOCKED)"
                        " UPDATE cuzk_parts p SET lease_host = $1, lease_until = " PG_NOW_MS " + $3::bigint,"
                        " lease_attempt = p.lease_attempt + 1 FROM c WHERE p.job = c.job AND p.idx = c.idx"
                        " RETURNING p.job, p.idx, p.lease_attempt",
                        4, v, err);
    pthread_mutex_unlock(&p->mu);
    free(arr);
    if (e)
        return e;
    if (PQntuples(r) == 1) {
        out->job = pg_col_i(r, 0, 0);
        out->index = (uint32_t)pg_col_i(r, 0, 1);
        out->attempt = (int)pg_col_i(r, 0, 2);
        *got = 1;
    }
    PQclear(r);
    return CUZK_OK;
}

static cuzk_err pg_renew(store *s, const char *host, const store_claim *c, int n, int64_t lease_ms, int *lost,
                         char *err)
{
    pgs *p = s->impl;
    cuzk_err e = CUZK_OK;
    pthread_mutex_lock(&p->mu);
    for (int i = 0; i < n && !e; i++) {
        char b[4][32];
        const char *v[] = {host, I64(b[0], c[i].attempt), I64(b[1], lease_ms), I64(b[2], c[i].job),
                           I64(b[3], c[i].index)};
        int rows = 0;
        e = pg_cmd(p, &rows, "renew lease", 0,
                   "UPDATE cuzk_parts SET lease_until = " PG_NOW_MS " + $3::bigint WHERE job = $4 AND idx = $5"
                   " AND lease_host = $1 AND lease_attempt = $2 AND state = 0",
                   5, v, err);
        lost[i] = !e && rows == 0;
    }
    pthread_mutex_unlock(&p->mu);
    return e;
}

static cuzk_err pg_release(store *s, const char *host, const store_claim *c, char *err)
{
    pgs *p = s->impl;
    char b[3][32];
    const char *v[] = {host, I64(b[0], c->attempt), I64(b[1], c->job), I64(b[2], c->index)};
    pthread_mutex_lock(&p->mu);
    cuzk_err e = pg_cmd(p, NULL, "release lease", 0,
                        "UPDATE cuzk_parts SET lease_host = NULL, lease_until = 0 WHERE job = $3 AND idx = $4"
                        " AND lease_host = $1 AND lease_attempt = $2 AND state = 0",
                        4, v, err);
    pthread_mutex_unlock(&p->mu);
    return e;
}

/* one attempt at the commit transaction; CUZK_EIO when the connection went away */
static cuzk_err commit_once(pgs *p, const char *host, const store_claim *c, const char *proof_json,
                            const char *public_json, int *refused, int *job_done, char *err)
{
    char b[8][32];
    PGresult *r = NULL;
    const char *jv[] = {I64(b[0], c->job)};
    cuzk_err e = pg_cmd(p, NULL, "begin", 0, "BEGIN", 0, NULL, err);
    if (e)
        return e;
    /* the job row first: commits of one job's partitions on several hosts queue here */
    if ((e = pg_run(p, &r, "lock job", 1, "SELECT " JOB_COLS " FROM cuzk_jobs WHERE id = $1 FOR UPDATE", 1, jv, err)))
        goto fail;
    store_job job;
    int have_job = PQntuples(r) == 1, job_sound = have_job && pg_job_from_row(&job, r, 0, 0);
    int64_t job_crc_old = have_job ? pg_col_i(r, 0, 12) : 0;
    PQclear(r);
    r = NULL;
    if (!have_job || (job_sound && job.state != 0 /* JOB_QUEUED */)) {
        *refused = 1; /* deleted, or ended (canceled, failed) meanwhile */
        goto rollback;
    }
    if (!job_sound) {
        e = cuzk_errf(err, CUZK_EFORMAT, "journal: store proof: the record of job j-%lld fails its checksum "
                      "(damaged); left as it is", (long long)c->job);
        goto fail;
    }
    const char *pv_[] = {I64(b[0], c->job), I64(b[1], c->index)};
    if ((e = pg_run(p, &r, "lock partition", 1,
                    "SELECT " PART_COLS ", lease_host, lease_attempt FROM cuzk_parts WHERE job = $1 AND idx = $2"
                    " FOR UPDATE",
                    2, pv_, err)))
        goto fail;
    store_part q;
    int64_t jid;
    int have = PQntuples(r) == 1;
    int sound = have && pg_part_from_row(&q, &jid, r, 0, 0);
    int held = have && !PQgetisnull(r, 0, 7) && !strcmp(PQgetvalue(r, 0, 7), host) &&
               pg_col_i(r, 0, 8) == c->attempt && pg_col_i(r, 0, 2) == 0 /* PART_QUEUED */;
    int64_t crc_old = have ? pg_col_i(r, 0, 6) : 0;
    PQclear(r);
    r = NULL;
    if (!held) {
        *refused = 1;
        goto rollback;
    }
    if (!sound) {
        e = cuzk_errf(err, CUZK_EFORMAT, "journal: store proof: the record of job j-%lld partition %u fails its "
                      "checksum (damaged); left as it is", (long long)c->job, c->index);
        goto fail;
    }
    q.state = 6; /* PART_DONE */
    const char *uv[] = {I64(b[0], c->job), I64(b[1], c->index), proof_json, public_json,
                        I64(b[2], pg_proof_crc(c->job, c->index, proof_json, public_json)),
                        I64(b[3], pg_part_crc(c->job, &q)), I64(b[4], crc_old), host};
    int rows = 0;
    if ((e = pg_cmd(p, &rows, "store proof", 1,
                    "UPDATE cuzk_parts SET state = 6, proof = $3, public = $4, proof_crc = $5, crc = $6,"
                    " lease_host = NULL, lease_until = 0, proved_by = $8 WHERE job = $1 AND idx = $2 AND crc = $7",
                    8, uv, err)))
        goto fail;
    if (rows != 1) {
        e = cuzk_errf(err, CUZK_ESTORE, "store proof: the partition changed under its lock");
        goto fail;
    }
    if ((e = pg_run(p, &r, "count partitions", 1, "SELECT count(*) FROM cuzk_parts WHERE job = $1 AND state <> 6", 1,
                    jv, err)))
        goto fail;
    int left = (int)pg_col_i(r, 0, 0);
    PQclear(r);
    r = NULL;
    if (!left) {
        job.state = 2; /* JOB_DONE */
        job.error[0] = 0;
        if ((e = pg_run(p, &r, "now", 1, "SELECT " PG_NOW_MS, 0, NULL, err)))
            goto fail;
        job.finished_ms = pg_col_i(r, 0, 0);
        PQclear(r);
        r = NULL;
        const char *dv[] = {I64(b[0], c->job), I64(b[1], job.finished_ms), I64(b[2], pg_job_crc(&job)),
                            I64(b[3], job_crc_old)};
        if ((e = pg_cmd(p, &rows, "finish job", 1,
                        "UPDATE cuzk_jobs SET state = 2, finished_ms = $2, error = '', crc = $3 WHERE id = $1"
                        " AND crc = $4",
                        4, dv, err)))
            goto fail;
        *job_done = rows == 1;
    }
    if ((e = pg_cmd(p, NULL, "notify", 1, "SELECT pg_notify('" PG_CHANNEL "', $1)", 1, jv, err)))
        goto fail;
    e = pg_cmd(p, NULL, "commit", 1, "COMMIT", 0, NULL, err);
    if (e == CUZK_EIO) {
        /* the COMMIT's answer was lost: did it happen? (the partition is DONE by this host under
           this attempt, and nobody claims a DONE partition) */
        const char *cv[] = {I64(b[0], c->job), I64(b[1], c->index), host, I64(b[2], c->attempt)};
        char why[CUZK_ERRLEN];
        if (!pg_run(p, &r, "look for the proof", 0,
                    "SELECT (SELECT state FROM cuzk_jobs WHERE id = $1) FROM cuzk_parts WHERE job = $1 AND idx = $2"
                    " AND state = 6 AND proved_by = $3 AND lease_attempt = $4::integer",
                    4, cv, why)) {
            int there = PQntuples(r) == 1;
            if (there)
                *job_done = !left && pg_col_i(r, 0, 0) == 2;
            PQclear(r);
            if (there)
                return CUZK_OK;
        }
    }
    return e;
rollback:
    pg_cmd(p, NULL, "rollback", 1, "ROLLBACK", 0, NULL, NULL);
    return CUZK_OK;
fail:
    PQclear(r);
    pg_rollback(p);
    return e;
}

static cuzk_err pg_commit(store *s, const char *host, const store_claim *c, const char *proof_json,
                          const char *public_json, int *refused, int *job_done, char *err)
{
    pgs *p = s->impl;
    cuzk_err e;
    pthread_mutex_lock(&p->mu);
    for (int tries = 0;; tries++) {
        *refused = *job_done = 0;
        e = commit_once(p, host, c, proof_json, public_json, refused, job_done, err);
        if (e != CUZK_EIO || tries == 20)
            break;
        pg_sleep_ms(100);
    }
    pthread_mutex_unlock(&p->mu);
    return e == CUZK_EIO ? CUZK_ESTORE : e;
}

/* (re)opens the LISTEN connection; 0 on success */
static int listen_open(pgs *p)
{
    if (p->listen)
        PQfinish(p->listen);
    p->listen = PQconnectdb(p->conninfo);
    if (!p->listen || PQstatus(p->listen) != CONNECTION_OK)
        return -1;
    PGresult *r = PQexec(p->listen, "LISTEN " PG_CHANNEL);
    int ok = PQresultStatus(r) == PGRES_COMMAND_OK;
    PQclear(r);
    return ok ? 0 : -1;
}

static int pg_wait_change(store *s, int timeout_ms)
{
    pgs *p = s->impl;
    if (!p->listen || PQstatus(p->listen) != CONNECTION_OK) {
        if (listen_open(p)) {
            pg_sleep_ms(timeout_ms < 500 ? timeout_ms : 500);
            return 1; /* changes may have been missed: look */
        }
        return 1;
    }
    int got = 0;
    PGnotify *n;
    PQconsumeInput(p->listen);
    while ((n = PQnotifies(p->listen))) {
        got = 1;
        PQfreemem(n);
    }
    if (got)
        return 1;
    struct pollfd pfd = {.fd = PQsocket(p->listen), .events = POLLIN};
    if (pfd.fd < 0 || poll(&pfd, 1, timeout_ms) <= 0)
        return 0;
    if (!PQconsumeInput(p->listen))
        return 1; /* the connection broke: reopened at the next call */
    while ((n = PQnotifies(p->listen))) {
        got = 1;
        PQfreemem(n);
    }
    return got;
}

void pg_fleet_install(store *s)
{
    s->host_beat = pg_host_beat;
    s->host_list = pg_host_list;
    s->claim = pg_claim;
    s->renew = pg_renew;
    s->commit = pg_commit;
    s->release = pg_release;
    s->load_some = pg_load_some;
    s->wait_change = pg_wait_change;
}
