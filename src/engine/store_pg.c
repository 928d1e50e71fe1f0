/* store_pg.c - the journal (store.h) on PostgreSQL through libpq: `cuzk serve --store
 * postgres://...`. One connection guarded by a mutex; jobs, partitions and proofs in the
 * tables cuzk_jobs and cuzk_parts of the connection's schema (its search_path).
 *
 * Schema (version PG_VERSION, recorded in cuzk_schema_versions, one row per migration
 * applied, with the time and the cuzk version that applied it):
 *   cuzk_jobs(id bigserial PRIMARY KEY, kind, priority, state, zkey, idem UNIQUE (NULL for
 *             none), n_parts, submitted_ms, finished_ms, fetched_ms, error, circuit, crc)
 *   cuzk_parts(job REFERENCES cuzk_jobs ON DELETE CASCADE, idx, state, attempts, owned,
 *              witness, proof, public, crc, proof_crc, PRIMARY KEY(job, idx),
 *              lease_host, lease_until, lease_attempt, proved_by)       (version 2)
 *   cuzk_hosts(id PRIMARY KEY, address, version, devices, keys, leases, busy, started_ms,
 *              heartbeat_ms)                                            (version 2)
 * Version 1 (one daemon) had neither leases nor hosts; opening it adds them.
 * Opening creates or migrates the schema in one transaction under a transaction-level
 * advisory lock (two daemons starting at once do it once), and refuses a schema newer than
 * this binary knows: an older cuzk must not write rows whose meaning it does not know.
 *
 * Integrity. The same row checksums as the SQLite journal (store_sqlite.h: CRC-64/XZ over
 * the typed columns), computed here in C since the server has no cuzk_crc64(): reads
 * check them, and an update reads the row, checks it, and writes the new values with the
 * new checksum under the guard `WHERE crc = <the checksum it read>` (optimistic: a row
 * changed meanwhile by another writer is read again; a damaged row is never updated). What
 * PostgreSQL adds or lacks next to SQLite: no quick_check at open (the server owns its
 * files; initdb --data-checksums is its page-level equivalent), and writes are durable
 * when the server's synchronous_commit says so (on by default).
 *
 * Shared or owned. `cuzk serve` opens the store shared (store_pg_open(shared = 1)): every
 * daemon on it claims partitions through the fleet functions (store_pg_fleet.c), and
 * insert, cancel and the end of a job are announced with pg_notify. Opened owned
 * (shared = 0), it takes a session-level advisory lock (PG_OWNER_LOCK) and refuses, saying
 * so, when another daemon holds it (after asking again for 2 s: a session that has just
 * closed releases it a moment later); the lock is taken again after a reconnection. Without
 * the fleet functions, two daemons on one store would each prove and expire every job.
 *
 * Reconnection. A statement that fails because the connection is gone (the server
 * restarted, a network cut) is retried on a fresh connection for up to PG_RETRY_S seconds.
 * Every operation is safe to repeat: updates are idempotent, and a job insert whose COMMIT
 * went unanswered looks for its own id (taken from the sequence before the transaction)
 * before it tries again, so an acknowledged job is inserted once.
 */
#include "engine/store.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "engine/store_pg_internal.h"
#include "util/crc64.h"
#include "util/log.h"

static const char *const pg_schema_v1[] = {
    "CREATE TABLE IF NOT EXISTS cuzk_jobs(id bigserial PRIMARY KEY, kind integer NOT NULL,"
    " priority integer NOT NULL, state integer NOT NULL, zkey text NOT NULL, idem text UNIQUE,"
    " n_parts bigint NOT NULL, submitted_ms bigint NOT NULL, finished_ms bigint NOT NULL DEFAULT 0,"
    " fetched_ms bigint NOT NULL DEFAULT 0, error text NOT NULL DEFAULT '',"
    " circuit text NOT NULL DEFAULT '', crc bigint)",
    "CREATE TABLE IF NOT EXISTS cuzk_parts(job bigint NOT NULL REFERENCES cuzk_jobs(id) ON DELETE CASCADE,"
    " idx integer NOT NULL, state integer NOT NULL, attempts integer NOT NULL DEFAULT 0,"
    " owned integer NOT NULL DEFAULT 0, witness text NOT NULL, proof text, public text,"
    " crc bigint, proof_crc bigint, PRIMARY KEY(job, idx))"};

/* version 1 -> 2: the fleet. Leases (owner host, expiry on the server's clock in unix ms,
   attempt = fencing token) and the host that proved each partition; the hosts table. None
   of these columns is covered by the row checksums: they coordinate, they are not the
   record. */
static const char *const pg_migrate_v2[] = {
    "ALTER TABLE cuzk_parts ADD COLUMN lease_host text, ADD COLUMN lease_until bigint NOT NULL DEFAULT 0,"
    " ADD COLUMN lease_attempt integer NOT NULL DEFAULT 0, ADD COLUMN proved_by text",
    "CREATE INDEX cuzk_parts_queued ON cuzk_parts(job, idx) WHERE state = 0",
    "CREATE TABLE cuzk_hosts(id text PRIMARY KEY, address text NOT NULL, version text NOT NULL,"
    " devices integer NOT NULL, keys text NOT NULL, leases integer NOT NULL, busy real NOT NULL,"
    " started_ms bigint NOT NULL, heartbeat_ms bigint NOT NULL)"};

/* the schema's versions in order: version i + 1 is reached by running pg_steps[i]'s statements
   (a new version appends its step here and raises PG_VERSION) */
static const struct {
    const char *what;
    const char *const *sql;
    size_t n;
} pg_steps[] = {
    {"create schema", pg_schema_v1, sizeof pg_schema_v1 / sizeof pg_schema_v1[0]},
    {"migrate schema to version 2", pg_migrate_v2, sizeof pg_migrate_v2 / sizeof pg_migrate_v2[0]},
};
_Static_assert(sizeof pg_steps / sizeof pg_steps[0] == PG_VERSION, "one step per schema version");

/* ---- row checksums: the serialization of store_sqlite.h, over typed values ---- */

uint64_t pg_crc_vals(const pv *v, int n)
{
    uint64_t c = 0;
    for (int k = 0; k < n; k++) {
        uint8_t hdr[9];
        hdr[0] = (uint8_t)v[k].type;
        if (v[k].type == 'i') {
            for (int b = 0; b < 8; b++)
                hdr[1 + b] = (uint8_t)((uint64_t)v[k].i >> (8 * b));
            c = crc64_update(c, hdr, 9);
        } else if (v[k].type == 't') {
            size_t len = strlen(v[k].t);
            for (int b = 0; b < 8; b++)
                hdr[1 + b] = (uint8_t)((uint64_t)len >> (8 * b));
            c = crc64_update(c, hdr, 9);
            c = crc64_update(c, v[k].t, len);
        } else {
            c = crc64_update(c, hdr, 1);
        }
    }
    return c;
}

int64_t pg_job_crc(const store_job *j)
{
    pv v[] = {PV_I(j->id), PV_I(j->kind), PV_I(j->priority), PV_I(j->state), PV_T(j->zkey), PV_TN(j->idem),
              PV_I(j->n_parts), PV_I(j->submitted_ms), PV_I(j->finished_ms), PV_I(j->fetched_ms),
              PV_T(j->error), PV_T(j->circuit)};
    return (int64_t)pg_crc_vals(v, (int)(sizeof v / sizeof v[0]));
}

int64_t pg_part_crc(int64_t job, const store_part *p)
{
    pv v[] = {PV_I(job), PV_I(p->index), PV_I(p->state), PV_I(p->attempts), PV_I(p->owned), PV_T(p->witness)};
    return (int64_t)pg_crc_vals(v, (int)(sizeof v / sizeof v[0]));
}

int64_t pg_proof_crc(int64_t job, uint32_t index, const char *proof, const char *pub)
{
    pv v[] = {PV_I(job), PV_I(index), PV_T(proof), PV_T(pub)};
    return (int64_t)pg_crc_vals(v, 4);
}

/* ---- reading result rows ---- */


int64_t pg_col_i(const PGresult *r, int row, int col)
{
    return strtoll(PQgetvalue(r, row, col), NULL, 10);
}

/* the text of a column; 0 when it does not fit cap (then the row cannot match its checksum) */
static int col_t(char *dst, size_t cap, const PGresult *r, int row, int col)
{
    const char *s = PQgetisnull(r, row, col) ? "" : PQgetvalue(r, row, col);
    return snprintf(dst, cap, "%s", s) < (int)cap;
}

/* a job from the JOB_COLS of row, and whether it matches its checksum */
int pg_job_from_row(store_job *j, const PGresult *r, int row, int first)
{
    memset(j, 0, sizeof *j);
    j->id = pg_col_i(r, row, first + 0);
    j->kind = (int)pg_col_i(r, row, first + 1);
    j->priority = (int)pg_col_i(r, row, first + 2);
    j->state = (int)pg_col_i(r, row, first + 3);
    int fits = col_t(j->zkey, sizeof j->zkey, r, row, first + 4);
    fits &= col_t(j->idem, sizeof j->idem, r, row, first + 5);
    int idem_null = PQgetisnull(r, row, first + 5);
    j->n_parts = (uint32_t)pg_col_i(r, row, first + 6);
    j->submitted_ms = pg_col_i(r, row, first + 7);
    j->finished_ms = pg_col_i(r, row, first + 8);
    j->fetched_ms = pg_col_i(r, row, first + 9);
    fits &= col_t(j->error, sizeof j->error, r, row, first + 10);
    fits &= col_t(j->circuit, sizeof j->circuit, r, row, first + 11);
    /* an empty idem and a NULL one differ in the checksum: keep what was stored */
    int idem_ok = idem_null == !j->idem[0];
    return fits && idem_ok && (int64_t)pg_col_i(r, row, first + 6) == (int64_t)j->n_parts &&
           !PQgetisnull(r, row, first + 12) && pg_col_i(r, row, first + 12) == pg_job_crc(j);
}

/* a partition from the PART_COLS of row (job id in p->... via *job), and whether it matches */
int pg_part_from_row(store_part *p, int64_t *job, const PGresult *r, int row, int first)
{
    memset(p, 0, sizeof *p);
    *job = pg_col_i(r, row, first + 0);
    int64_t idx = pg_col_i(r, row, first + 1);
    p->index = (uint32_t)idx;
    p->state = (int)pg_col_i(r, row, first + 2);
    p->attempts = (int)pg_col_i(r, row, first + 3);
    p->owned = (int)pg_col_i(r, row, first + 4);
    int fits = col_t(p->witness, sizeof p->witness, r, row, first + 5);
    return fits && idx == (int64_t)p->index && !PQgetisnull(r, row, first + 6) &&
           pg_col_i(r, row, first + 6) == pg_part_crc(*job, p);
}

/* ---- connection and statements ---- */

static void notice_quiet(void *arg, const char *msg)
{
    (void)arg;
    LOG(LOG_DEBUG, "postgres: %s", msg);
}

int pg_conn_lost(const pgs *p)
{
    return !p->conn || PQstatus(p->conn) == CONNECTION_BAD;
}

void pg_rollback(pgs *p)
{
    if (!pg_conn_lost(p))
        pg_cmd(p, NULL, "rollback", 1, "ROLLBACK", 0, NULL, NULL);
}

/* (re)connects and takes the owner lock; caller holds mu */
static cuzk_err conn_open(pgs *p, char *err)
{
    if (p->conn)
        PQfinish(p->conn);
    p->conn = PQconnectdb(p->conninfo);
    if (!p->conn)
        return cuzk_errf(err, CUZK_ENOMEM, "postgres store: out of memory");
    if (PQstatus(p->conn) != CONNECTION_OK) {
        char msg[300];
        snprintf(msg, sizeof msg, "%s", PQerrorMessage(p->conn));
        msg[strcspn(msg, "\n")] = 0;
        return cuzk_errf(err, CUZK_ESTORE, "postgres store: cannot connect: %s", msg);
    }
    PQsetNoticeProcessor(p->conn, notice_quiet, NULL);
    snprintf(p->where, sizeof p->where, "%s:%s/%s", PQhost(p->conn), PQport(p->conn), PQdb(p->conn));
    PGresult *r = PQexec(p->conn, "SET client_min_messages = warning");
    PQclear(r);
    if (p->shared)
        return CUZK_OK;
    char key[32];
    const char *v[] = {key};
    snprintf(key, sizeof key, "%lld", (long long)PG_OWNER_LOCK);
    /* A session that has just closed releases the lock when its server process exits, a
     * moment after the client has gone: a held lock is asked for again for a short while
     * before it is taken as another daemon's. */
    for (int tries = 0;; tries++) {
        r = PQexecParams(p->conn, "SELECT pg_try_advisory_lock($1)", 1, NULL, v, NULL, NULL, 0);
        cuzk_err e = CUZK_OK;
        int held = 0;
        if (PQresultStatus(r) != PGRES_TUPLES_OK)
            e = cuzk_errf(err, CUZK_ESTORE, "postgres store %s: %s", p->where, PQresultErrorMessage(r));
        else
            held = strcmp(PQgetvalue(r, 0, 0), "t") != 0;
        PQclear(r);
        if (e || !held)
            return e;
        if (tries == PG_OWNER_TRIES)
            return cuzk_errf(err, CUZK_ESTORE, "postgres store %s: another cuzk daemon is using this store (it "
                             "holds the store's lock); several daemons on one store are not supported yet",
                             p->where);
        pg_sleep_ms(100);
    }
}

void pg_sleep_ms(int ms)
{
    struct timespec ts = {ms / 1000, (long)(ms % 1000) * 1000000L};
    nanosleep(&ts, NULL);
}

/* Runs sql with text parameters; *out gets the result (PQclear it) when its status is
   PGRES_COMMAND_OK or PGRES_TUPLES_OK. A lost connection is re-established and the
   statement run again, for up to PG_RETRY_S seconds, unless once is set: then a lost
   connection fails with CUZK_EIO and is not re-established (the statement belongs to a
   transaction that is gone; the caller starts it again). Caller holds mu. */
cuzk_err pg_run(pgs *p, PGresult **out, const char *what, int once, const char *sql, int n,
                       const char *const *vals, char *err)
{
    *out = NULL;
    struct timespec t0;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    for (int attempt = 0;; attempt++) {
        if (pg_conn_lost(p)) {
            if (once)
                return cuzk_errf(err, CUZK_EIO, "postgres store %s: %s: connection lost", p->where, what);
            char why[CUZK_ERRLEN];
            cuzk_err e = conn_open(p, why);
            if (e && !pg_conn_lost(p)) /* connected, but refused (another daemon holds the lock) */
                return cuzk_errf(err, e, "%s", why);
            if (e) {
                struct timespec t;
                clock_gettime(CLOCK_MONOTONIC, &t);
                if (t.tv_sec - t0.tv_sec >= PG_RETRY_S)
                    return cuzk_errf(err, CUZK_ESTORE, "%s (%s; gave up after %d s)", why, what, PG_RETRY_S);
                pg_sleep_ms(attempt < 5 ? 100 : 500);
                continue;
            }
            LOG(LOG_WARN, "postgres store %s: reconnected", p->where);
        }
        PGresult *r = PQexecParams(p->conn, sql, n, NULL, vals, NULL, NULL, 0);
        ExecStatusType st = PQresultStatus(r);
        if (st == PGRES_COMMAND_OK || st == PGRES_TUPLES_OK) {
            *out = r;
            return CUZK_OK;
        }
        if (pg_conn_lost(p)) {
            PQclear(r);
            LOG(LOG_WARN, "postgres store %s: connection lost during %s; reconnecting", p->where, what);
            if (once)
                return cuzk_errf(err, CUZK_EIO, "postgres store %s: %s: connection lost", p->where, what);
            continue;
        }
        char msg[300];
        snprintf(msg, sizeof msg, "%s", r ? PQresultErrorMessage(r) : PQerrorMessage(p->conn));
        msg[strcspn(msg, "\n")] = 0;
        PQclear(r);
        return cuzk_errf(err, CUZK_ESTORE, "postgres store %s: %s: %s", p->where, what, msg);
    }
}

/* pg_run for statements whose result is not needed; *n_rows gets the rows changed (may be NULL) */
cuzk_err pg_cmd(pgs *p, int *n_rows, const char *what, int once, const char *sql, int n,
                       const char *const *vals, char *err)
{
    PGresult *r;
    cuzk_err e = pg_run(p, &r, what, once, sql, n, vals, err);
    if (!e && n_rows)
        *n_rows = atoi(PQcmdTuples(r));
    PQclear(r);
    return e;
}


/* ---- the store interface ---- */

/* one attempt at the insert transaction; CUZK_EIO when the connection went away */
static cuzk_err insert_once(pgs *p, store_job *job, const store_part *parts, int *existed, char *err)
{
    char b[12][32];
    PGresult *r = NULL;
    cuzk_err e = pg_run(p, &r, "job id", 0, "SELECT nextval(pg_get_serial_sequence('cuzk_jobs', 'id'))", 0, NULL,
                        err);
    if (e)
        return e;
    job->id = pg_col_i(r, 0, 0);
    PQclear(r);
    if ((e = pg_cmd(p, NULL, "begin", 1, "BEGIN", 0, NULL, err)))
        return e;
    const char *jv[] = {I64(b[0], job->id), I64(b[1], job->kind), I64(b[2], job->priority), I64(b[3], job->state),
                        job->zkey, job->idem[0] ? job->idem : NULL, I64(b[4], job->n_parts),
                        I64(b[5], job->submitted_ms), I64(b[6], job->finished_ms), I64(b[7], job->fetched_ms),
                        job->error, job->circuit, I64(b[8], pg_job_crc(job))};
    e = pg_run(p, &r, "insert job", 1,
               "INSERT INTO cuzk_jobs(" JOB_COLS ") VALUES($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13)"
               " ON CONFLICT (idem) DO NOTHING RETURNING id",
               13, jv, err);
    if (e)
        goto fail;
    int inserted = PQntuples(r) == 1;
    PQclear(r);
    if (!inserted) {
        /* the key is taken (by this host or another): that job is the answer */
        pg_cmd(p, NULL, "rollback", 1, "ROLLBACK", 0, NULL, err);
        const char *kv[] = {job->idem};
        if ((e = pg_run(p, &r, "find idempotency key", 1, "SELECT id FROM cuzk_jobs WHERE idem = $1", 1, kv, err)))
            return e;
        if (PQntuples(r) != 1) {
            PQclear(r);
            return cuzk_errf(err, CUZK_ESTORE, "postgres store %s: idempotency key '%s' is taken but its job is gone",
                             p->where, job->idem);
        }
        job->id = pg_col_i(r, 0, 0);
        *existed = 1;
        PQclear(r);
        return CUZK_OK;
    }
    for (uint32_t i = 0; i < job->n_parts; i++) {
        store_part q = parts[i];
        q.index = i;
        const char *pv_[] = {I64(b[0], job->id), I64(b[1], i), I64(b[2], q.state), I64(b[3], q.attempts),
                             I64(b[4], q.owned), q.witness, I64(b[5], pg_part_crc(job->id, &q))};
        if ((e = pg_cmd(p, NULL, "insert partition", 1,
                        "INSERT INTO cuzk_parts(" PART_COLS ") VALUES($1, $2, $3, $4, $5, $6, $7)", 7, pv_, err)))
            goto fail;
    }
    const char *nv[] = {I64(b[0], job->id)};
    if ((e = pg_cmd(p, NULL, "notify", 1, "SELECT pg_notify('" PG_CHANNEL "', $1)", 1, nv, err)))
        goto fail;
    e = pg_cmd(p, NULL, "commit", 1, "COMMIT", 0, NULL, err);
    if (e == CUZK_EIO) {
        /* the COMMIT's answer was lost: did it happen? */
        const char *iv[] = {I64(b[0], job->id)};
        char why[CUZK_ERRLEN];
        if (!pg_run(p, &r, "look for the job", 0, "SELECT 1 FROM cuzk_jobs WHERE id = $1", 1, iv, why)) {
            int there = PQntuples(r) == 1;
            PQclear(r);
            if (there)
                return CUZK_OK;
        }
    }
    return e;
fail:
    pg_rollback(p);
    return e;
}

static cuzk_err pg_job_insert(store *s, store_job *job, const store_part *parts, int *existed, char *err)
{
    pgs *p = s->impl;
    *existed = 0;
    pthread_mutex_lock(&p->mu);
    cuzk_err e;
    struct timespec t0, t;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    while ((e = insert_once(p, job, parts, existed, err)) == CUZK_EIO) {
        clock_gettime(CLOCK_MONOTONIC, &t);
        if (t.tv_sec - t0.tv_sec >= PG_RETRY_S) {
            e = CUZK_ESTORE;
            break;
        }
    }
    pthread_mutex_unlock(&p->mu);
    return e;
}

/* reads job id's row: CUZK_ENOTFOUND when it is gone, CUZK_EFORMAT when it fails its checksum.
   Caller holds mu. */
static cuzk_err job_read(pgs *p, int64_t id, store_job *j, int64_t *crc, const char *what, char *err)
{
    char b[32];
    const char *v[] = {I64(b, id)};
    PGresult *r;
    cuzk_err e = pg_run(p, &r, what, 0, "SELECT " JOB_COLS " FROM cuzk_jobs WHERE id = $1", 1, v, err);
    if (e)
        return e;
    if (PQntuples(r) != 1)
        e = CUZK_ENOTFOUND;
    else if (!pg_job_from_row(j, r, 0, 0))
        e = cuzk_errf(err, CUZK_EFORMAT, "journal: %s: the record of job j-%lld fails its checksum (damaged); "
                      "left as it is", what, (long long)id);
    else
        *crc = pg_col_i(r, 0, 12);
    PQclear(r);
    return e;
}

/* writes j over the row that had checksum old; *changed = 0 when the row changed meanwhile */
static cuzk_err job_write(pgs *p, const store_job *j, int64_t old, int *changed, const char *what, char *err)
{
    char b[6][32];
    const char *v[] = {I64(b[0], j->id), I64(b[1], j->state), I64(b[2], j->finished_ms), I64(b[3], j->fetched_ms),
                       j->error, I64(b[4], pg_job_crc(j)), I64(b[5], old)};
    return pg_cmd(p, changed, what, 0,
                  "UPDATE cuzk_jobs SET state = $2, finished_ms = $3, fetched_ms = $4, error = $5, crc = $6"
                  " WHERE id = $1 AND crc = $7",
                  7, v, err);
}

static cuzk_err pg_job_set_state(store *s, int64_t id, int state, int64_t finished_ms, const char *error, char *err)
{
    pgs *p = s->impl;
    cuzk_err e;
    pthread_mutex_lock(&p->mu);
    for (int changed = 0; !changed;) {
        store_job j;
        int64_t crc = 0;
        e = job_read(p, id, &j, &crc, "update job state", err);
        if (e)
            break;
        j.state = state;
        j.finished_ms = finished_ms;
        snprintf(j.error, sizeof j.error, "%s", error ? error : "");
        if ((e = job_write(p, &j, crc, &changed, "update job state", err)))
            break;
    }
    if (!e) { /* the other daemons learn that the job changed (ended, or went back to queued) */
        char b[32];
        const char *nv[] = {I64(b, id)};
        pg_cmd(p, NULL, "notify", 0, "SELECT pg_notify('" PG_CHANNEL "', $1)", 1, nv, NULL);
    }
    pthread_mutex_unlock(&p->mu);
    return e == CUZK_ENOTFOUND ? CUZK_OK : e; /* a job that is gone stays quiet, as in SQLite */
}

static cuzk_err pg_job_set_fetched(store *s, int64_t id, int64_t fetched_ms, char *err)
{
    pgs *p = s->impl;
    cuzk_err e;
    pthread_mutex_lock(&p->mu);
    for (int changed = 0; !changed;) {
        store_job j;
        int64_t crc = 0;
        if ((e = job_read(p, id, &j, &crc, "update job fetched", err)) || j.fetched_ms)
            break;
        j.fetched_ms = fetched_ms;
        if ((e = job_write(p, &j, crc, &changed, "update job fetched", err)))
            break;
    }
    pthread_mutex_unlock(&p->mu);
    return e == CUZK_ENOTFOUND ? CUZK_OK : e;
}

/* reads a partition's record; as job_read. Caller holds mu. */
static cuzk_err part_read(pgs *p, int64_t id, uint32_t index, store_part *q, int64_t *crc, const char *what,
                          char *err)
{
    char b[2][32];
    const char *v[] = {I64(b[0], id), I64(b[1], index)};
    PGresult *r;
    cuzk_err e = pg_run(p, &r, what, 0, "SELECT " PART_COLS " FROM cuzk_parts WHERE job = $1 AND idx = $2", 2, v,
                        err);
    if (e)
        return e;
    int64_t job;
    if (PQntuples(r) != 1)
        e = CUZK_ENOTFOUND;
    else if (!pg_part_from_row(q, &job, r, 0, 0))
        e = cuzk_errf(err, CUZK_EFORMAT, "journal: %s: the record of job j-%lld partition %u fails its checksum "
                      "(damaged); left as it is", what, (long long)id, index);
    else
        *crc = pg_col_i(r, 0, 6);
    PQclear(r);
    return e;
}

static cuzk_err pg_part_set_state(store *s, int64_t id, uint32_t index, int state, int attempts, char *err)
{
    pgs *p = s->impl;
    cuzk_err e;
    pthread_mutex_lock(&p->mu);
    for (int changed = 0; !changed;) {
        store_part q;
        int64_t crc = 0;
        if ((e = part_read(p, id, index, &q, &crc, "update part state", err)))
            break;
        q.state = state;
        q.attempts = attempts;
        char b[6][32];
        /* 6 = PART_DONE (engine.h): any other state has no proof */
        const char *v[] = {I64(b[0], id), I64(b[1], index), I64(b[2], state), I64(b[3], attempts),
                           I64(b[4], pg_part_crc(id, &q)), I64(b[5], crc)};
        if ((e = pg_cmd(p, &changed, "update part state", 0,
                        "UPDATE cuzk_parts SET state = $3, attempts = $4, crc = $5,"
                        " proof = CASE WHEN $3 = 6 THEN proof END, public = CASE WHEN $3 = 6 THEN public END,"
                        " proof_crc = CASE WHEN $3 = 6 THEN proof_crc END"
                        " WHERE job = $1 AND idx = $2 AND crc = $6",
                        6, v, err)))
            break;
    }
    pthread_mutex_unlock(&p->mu);
    return e == CUZK_ENOTFOUND ? CUZK_OK : e;
}

static cuzk_err pg_part_set_done(store *s, int64_t id, uint32_t index, const char *proof_json,
                                 const char *public_json, char *err)
{
    pgs *p = s->impl;
    cuzk_err e;
    pthread_mutex_lock(&p->mu);
    for (int changed = 0; !changed;) {
        store_part q;
        int64_t crc = 0;
        if ((e = part_read(p, id, index, &q, &crc, "store proof", err)))
            break;
        q.state = 6; /* PART_DONE */
        char b[6][32];
        const char *v[] = {I64(b[0], id), I64(b[1], index), proof_json, public_json,
                           I64(b[2], pg_proof_crc(id, index, proof_json, public_json)), I64(b[3], pg_part_crc(id, &q)),
                           I64(b[4], crc)};
        if ((e = pg_cmd(p, &changed, "store proof", 0,
                        "UPDATE cuzk_parts SET state = 6, proof = $3, public = $4, proof_crc = $5, crc = $6"
                        " WHERE job = $1 AND idx = $2 AND crc = $7",
                        7, v, err)))
            break;
    }
    pthread_mutex_unlock(&p->mu);
    return e == CUZK_ENOTFOUND ? CUZK_OK : e;
}

/* whether columns first.. of row (job, idx, proof, public, proof_crc) hold a sound proof */
int pg_proof_ok(const PGresult *r, int row, int first)
{
    if (PQgetisnull(r, row, first + 2) || PQgetisnull(r, row, first + 4))
        return 0;
    const char *pub = PQgetisnull(r, row, first + 3) ? NULL : PQgetvalue(r, row, first + 3);
    pv v[] = {PV_I(pg_col_i(r, row, first)), PV_I(pg_col_i(r, row, first + 1)), PV_T(PQgetvalue(r, row, first + 2)),
              pub ? PV_T(pub) : (pv){'n', 0, NULL}};
    return pg_col_i(r, row, first + 4) == (int64_t)pg_crc_vals(v, 4);
}

static cuzk_err pg_part_get_proof(store *s, int64_t id, uint32_t index, char **proof_json, char **public_json,
                                  char *err)
{
    pgs *p = s->impl;
    *proof_json = *public_json = NULL;
    char b[2][32];
    const char *v[] = {I64(b[0], id), I64(b[1], index)};
    PGresult *r = NULL;
    pthread_mutex_lock(&p->mu);
    cuzk_err e = pg_run(p, &r, "read proof", 0,
                        "SELECT job, idx, proof, public, proof_crc FROM cuzk_parts WHERE job = $1 AND idx = $2", 2, v,
                        err);
    pthread_mutex_unlock(&p->mu);
    if (e)
        return e;
    if (PQntuples(r) != 1 || PQgetisnull(r, 0, 2)) {
        e = cuzk_errf(err, CUZK_ENOTFOUND, "job j-%lld has no proof for partition %u", (long long)id, index);
    } else if (!pg_proof_ok(r, 0, 0)) {
        e = cuzk_errf(err, CUZK_EFORMAT, "journal: the proof of job j-%lld partition %u fails its checksum "
                      "(the journal is damaged)", (long long)id, index);
    } else {
        *proof_json = strdup(PQgetvalue(r, 0, 2));
        *public_json = strdup(PQgetisnull(r, 0, 3) ? "[]" : PQgetvalue(r, 0, 3));
        if (!*proof_json || !*public_json) {
            free(*proof_json);
            free(*public_json);
            *proof_json = *public_json = NULL;
            e = cuzk_errf(err, CUZK_ENOMEM, "journal: out of memory reading a proof");
        }
    }
    PQclear(r);
    return e;
}

/* Two statements (the jobs that match `where`, then their partitions in (job, idx) order)
   read whole in one snapshot; the walk then merges them without the lock, so fn may update
   the store. where is a condition on cuzk_jobs with parameters $1 (an id) and $2 (an array
   of ids). */
static cuzk_err load_where(store *s, const char *where, const char *const *params,
                           void (*fn)(void *ctx, const store_job *job, const store_part *parts), void *ctx,
                           char *err)
{
    pgs *p = s->impl;
    PGresult *rj = NULL, *rp = NULL;
    store_job *job = calloc(1, sizeof *job);
    store_part *parts = NULL;
    if (!job)
        return cuzk_errf(err, CUZK_ENOMEM, "journal: out of memory");
    pthread_mutex_lock(&p->mu);
    cuzk_err e = CUZK_EIO;
    /* one consistent snapshot; started again when the connection goes away half-way */
    for (int tries = 0; e == CUZK_EIO && tries < 10; tries++) {
        PQclear(rj);
        PQclear(rp);
        rj = rp = NULL;
        e = pg_cmd(p, NULL, "load", 0, "BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY", 0, NULL, err);
        char qj[512], qp[512];
        snprintf(qj, sizeof qj, "SELECT " JOB_COLS " FROM cuzk_jobs WHERE %s ORDER BY id", where);
        snprintf(qp, sizeof qp,
                 "SELECT " PART_COLS ", job, idx, proof, public, proof_crc, proved_by FROM cuzk_parts"
                 " WHERE job IN (SELECT id FROM cuzk_jobs WHERE %s) ORDER BY job, idx", where);
        if (!e)
            e = pg_run(p, &rj, "load jobs", 1, qj, params ? 2 : 0, params, err);
        if (!e)
            e = pg_run(p, &rp, "load partitions", 1, qp, params ? 2 : 0, params, err);
        if (!e)
            e = pg_cmd(p, NULL, "load", 1, "COMMIT", 0, NULL, err);
        else
            pg_rollback(p);
    }
    pthread_mutex_unlock(&p->mu);
    if (e == CUZK_EIO)
        e = CUZK_ESTORE;
    if (e)
        goto out;
    int np = PQntuples(rp), k = 0;
    for (int row = 0; row < PQntuples(rj); row++) {
        int64_t id = pg_col_i(rj, row, 0);
        int sound = pg_job_from_row(job, rj, row, 0);
        while (k < np && pg_col_i(rp, k, 0) < id) /* partitions of no job (cannot happen: the foreign key) */
            k++;
        if (!sound) {
            memset(job, 0, sizeof *job);
            job->id = id;
            job->damaged = 1;
            snprintf(job->error, sizeof job->error, "its record fails its checksum (the journal is damaged)");
            while (k < np && pg_col_i(rp, k, 0) == id)
                k++;
            fn(ctx, job, NULL);
            continue;
        }
        free(parts);
        parts = calloc(job->n_parts ? job->n_parts : 1, sizeof *parts);
        if (!parts) {
            e = cuzk_errf(err, CUZK_ENOMEM, "journal: out of memory loading job %lld", (long long)id);
            goto out;
        }
        uint32_t got = 0;
        for (; k < np && pg_col_i(rp, k, 0) == id; k++) {
            int64_t idx = pg_col_i(rp, k, 1), jid;
            if (idx < 0 || idx >= job->n_parts)
                continue;
            store_part *q = &parts[idx];
            q->damaged = !pg_part_from_row(q, &jid, rp, k, 0);
            q->index = (uint32_t)idx;
            if (!q->damaged && q->state == 6 /* PART_DONE */)
                q->proof_damaged = !pg_proof_ok(rp, k, 7);
            if (!PQgetisnull(rp, k, 12))
                snprintf(q->host, sizeof q->host, "%s", PQgetvalue(rp, k, 12));
            got++;
        }
        if (got != job->n_parts) {
            uint32_t n = job->n_parts;
            memset(job, 0, sizeof *job);
            job->id = id;
            job->damaged = 1;
            snprintf(job->error, sizeof job->error, "%u of its %u partition records are missing (the journal is "
                     "damaged)", n - got, n);
            fn(ctx, job, NULL);
            continue;
        }
        fn(ctx, job, parts);
    }
out:
    PQclear(rj);
    PQclear(rp);
    free(parts);
    free(job);
    return e;
}

static cuzk_err pg_load_all(store *s, void (*fn)(void *ctx, const store_job *job, const store_part *parts),
                            void *ctx, char *err)
{
    return load_where(s, "true", NULL, fn, ctx, err);
}

/* the fleet's sync: new jobs, and the ones a daemon still waits on */
cuzk_err pg_load_some(store *s, int64_t after_id, const int64_t *ids, int n_ids,
                             void (*fn)(void *ctx, const store_job *job, const store_part *parts), void *ctx,
                             char *err)
{
    size_t cap = 32 + (size_t)n_ids * 21;
    char *arr = malloc(cap), after[32];
    if (!arr)
        return cuzk_errf(err, CUZK_ENOMEM, "journal: out of memory");
    size_t len = (size_t)snprintf(arr, cap, "{");
    for (int i = 0; i < n_ids; i++)
        len += (size_t)snprintf(arr + len, cap - len, "%s%lld", i ? "," : "", (long long)ids[i]);
    snprintf(arr + len, cap - len, "}");
    const char *params[] = {I64(after, after_id), arr};
    cuzk_err e = load_where(s, "id > $1::bigint OR id = ANY($2::bigint[])", params, fn, ctx, err);
    free(arr);
    return e;
}

static cuzk_err pg_job_delete(store *s, int64_t id, char *err)
{
    pgs *p = s->impl;
    char b[32];
    const char *v[] = {I64(b, id)};
    pthread_mutex_lock(&p->mu);
    cuzk_err e = pg_cmd(p, NULL, "delete job", 0, "DELETE FROM cuzk_jobs WHERE id = $1", 1, v, err);
    pthread_mutex_unlock(&p->mu);
    return e;
}

static void pg_close(store *s)
{
    if (!s)
        return;
    pgs *p = s->impl;
    if (p) {
        if (p->conn)
            PQfinish(p->conn); /* ends the session: the owner lock goes with it */
        if (p->listen)
            PQfinish(p->listen);
        free(p->conninfo);
        pthread_mutex_destroy(&p->mu);
        free(p);
    }
    free(s);
}

/* creates or migrates the schema in one transaction; refuses a newer one */
static cuzk_err schema_setup(pgs *p, char *err)
{
    PGresult *r = NULL;
    char b[2][32];
    cuzk_err e = pg_cmd(p, NULL, "schema", 1, "BEGIN", 0, NULL, err);
    if (e)
        return e;
    const char *lk[] = {I64(b[0], PG_SCHEMA_LOCK)};
    if ((e = pg_cmd(p, NULL, "schema lock", 1, "SELECT pg_advisory_xact_lock($1)", 1, lk, err)) ||
        (e = pg_cmd(p, NULL, "versions table", 1,
                    "CREATE TABLE IF NOT EXISTS cuzk_schema_versions(version integer PRIMARY KEY,"
                    " applied_ms bigint NOT NULL, by_cuzk text NOT NULL)",
                    0, NULL, err)) ||
        (e = pg_run(p, &r, "schema version", 1, "SELECT coalesce(max(version), 0) FROM cuzk_schema_versions", 0, NULL,
                    err)))
        goto fail;
    int version = (int)pg_col_i(r, 0, 0);
    PQclear(r);
    r = NULL;
    if (version > PG_VERSION) {
        e = cuzk_errf(err, CUZK_ESTORE, "postgres store %s: its schema is version %d, newer than this cuzk knows "
                      "(version %d): a newer cuzk wrote it. Run that version (or a later one), or give this one "
                      "another database", p->where, version, PG_VERSION);
        goto fail;
    }
    for (int v = version; v < PG_VERSION; v++) {
        char ms[32], vs[16];
        struct timespec ts;
        clock_gettime(CLOCK_REALTIME, &ts);
        snprintf(vs, sizeof vs, "%d", v + 1);
        const char *vv[] = {vs, I64(ms, (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000), "cuzk"};
        for (size_t i = 0; i < pg_steps[v].n; i++)
            if ((e = pg_cmd(p, NULL, pg_steps[v].what, 1, pg_steps[v].sql[i], 0, NULL, err)))
                goto fail;
        if ((e = pg_cmd(p, NULL, "record schema version", 1,
                        "INSERT INTO cuzk_schema_versions(version, applied_ms, by_cuzk) VALUES($1, $2, $3)", 3, vv,
                        err)))
            goto fail;
    }
    if ((e = pg_cmd(p, NULL, "schema commit", 1, "COMMIT", 0, NULL, err)))
        return e;
    return CUZK_OK;
fail:
    pg_rollback(p);
    return e;
}

int store_is_pg_url(const char *spec)
{
    return spec && (!strncmp(spec, "postgres://", 11) || !strncmp(spec, "postgresql://", 13));
}

cuzk_err store_pg_open(store **out, const char *url, int shared, char *err)
{
    *out = NULL;
    store *s = calloc(1, sizeof *s);
    pgs *p = calloc(1, sizeof *p);
    char *ci = url ? strdup(url) : NULL;
    if (!s || !p || !ci) {
        free(s);
        free(p);
        free(ci);
        return cuzk_errf(err, CUZK_ENOMEM, "postgres store: out of memory");
    }
    pthread_mutex_init(&p->mu, NULL);
    p->conninfo = ci;
    p->shared = shared;
    snprintf(p->where, sizeof p->where, "(not connected)");
    s->impl = p;
    s->name = "postgres";
    s->job_insert = pg_job_insert;
    s->job_set_state = pg_job_set_state;
    s->job_set_fetched = pg_job_set_fetched;
    s->part_set_state = pg_part_set_state;
    s->part_set_done = pg_part_set_done;
    s->part_get_proof = pg_part_get_proof;
    s->load_all = pg_load_all;
    s->job_delete = pg_job_delete;
    s->close = pg_close;
    if (shared)
        pg_fleet_install(s);
    if (!store_is_pg_url(url)) {
        cuzk_errf(err, CUZK_EINVAL, "postgres store: '%s' is not a postgres:// or postgresql:// URL",
                  url ? url : "");
        pg_close(s);
        return CUZK_EINVAL;
    }
    /* the first connection is not retried: a wrong URL should fail at once */
    pthread_mutex_lock(&p->mu);
    cuzk_err e = conn_open(p, err);
    if (!e)
        e = schema_setup(p, err);
    pthread_mutex_unlock(&p->mu);
    if (e) {
        pg_close(s);
        return e == CUZK_EIO ? CUZK_ESTORE : e;
    }
    *out = s;
    return CUZK_OK;
}
