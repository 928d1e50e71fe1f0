/* store_sqlite.c - the journal (store.h) on SQLite: WAL mode, one connection guarded by
 * a mutex, jobs and parts tables, proofs stored as JSON text in the parts rows.
 *
 * Schema (version 2):
 *   jobs(id INTEGER PRIMARY KEY, kind, priority, state, zkey, idem UNIQUE (NULL for none),
 *        n_parts, submitted_ms, finished_ms, fetched_ms, error, circuit)
 * Version 1 lacked jobs.circuit; opening such a journal adds the column ('' for all jobs).
 *   parts(job, idx, state, attempts, owned, witness, proof, public, PRIMARY KEY(job, idx))
 */
#include "engine/store.h"

#include <pthread.h>
#include <sqlite3.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct sq {
    sqlite3 *db;
    pthread_mutex_t mu;
} sq;

static const char *schema =
    "CREATE TABLE IF NOT EXISTS jobs(id INTEGER PRIMARY KEY AUTOINCREMENT, kind INTEGER NOT NULL,"
    " priority INTEGER NOT NULL, state INTEGER NOT NULL, zkey TEXT NOT NULL, idem TEXT UNIQUE,"
    " n_parts INTEGER NOT NULL, submitted_ms INTEGER NOT NULL, finished_ms INTEGER NOT NULL DEFAULT 0,"
    " fetched_ms INTEGER NOT NULL DEFAULT 0, error TEXT NOT NULL DEFAULT '',"
    " circuit TEXT NOT NULL DEFAULT '');"
    "CREATE TABLE IF NOT EXISTS parts(job INTEGER NOT NULL REFERENCES jobs(id) ON DELETE CASCADE,"
    " idx INTEGER NOT NULL, state INTEGER NOT NULL, attempts INTEGER NOT NULL DEFAULT 0,"
    " owned INTEGER NOT NULL DEFAULT 0, witness TEXT NOT NULL, proof TEXT, public TEXT,"
    " PRIMARY KEY(job, idx));";

/* version 1 -> 2: the circuit of input jobs */
static const char *migrate_v2 = "ALTER TABLE jobs ADD COLUMN circuit TEXT NOT NULL DEFAULT '';";

static cuzk_err sq_fail(sq *q, char *err, const char *what)
{
    return cuzk_errf(err, CUZK_ESTORE, "journal: %s: %s", what, sqlite3_errmsg(q->db));
}

static void copy_text(char *dst, size_t cap, const unsigned char *src)
{
    snprintf(dst, cap, "%s", src ? (const char *)src : "");
}

static cuzk_err sq_job_insert(store *s, store_job *job, const store_part *parts, int *existed, char *err)
{
    sq *q = s->impl;
    cuzk_err e = CUZK_OK;
    sqlite3_stmt *st = NULL;
    *existed = 0;
    pthread_mutex_lock(&q->mu);
    if (sqlite3_exec(q->db, "BEGIN IMMEDIATE", NULL, NULL, NULL) != SQLITE_OK) {
        e = sq_fail(q, err, "begin");
        goto out;
    }
    if (job->idem[0]) {
        sqlite3_prepare_v2(q->db, "SELECT id FROM jobs WHERE idem = ?", -1, &st, NULL);
        sqlite3_bind_text(st, 1, job->idem, -1, SQLITE_TRANSIENT);
        if (sqlite3_step(st) == SQLITE_ROW) {
            job->id = sqlite3_column_int64(st, 0);
            *existed = 1;
        }
        sqlite3_finalize(st);
        st = NULL;
        if (*existed) {
            sqlite3_exec(q->db, "COMMIT", NULL, NULL, NULL);
            goto out;
        }
    }
    if (sqlite3_prepare_v2(q->db,
                           "INSERT INTO jobs(kind, priority, state, zkey, idem, n_parts, submitted_ms, circuit)"
                           " VALUES(?,?,?,?,?,?,?,?)",
                           -1, &st, NULL) != SQLITE_OK) {
        e = sq_fail(q, err, "prepare insert job");
        goto rollback;
    }
    sqlite3_bind_int(st, 1, job->kind);
    sqlite3_bind_int(st, 2, job->priority);
    sqlite3_bind_int(st, 3, job->state);
    sqlite3_bind_text(st, 4, job->zkey, -1, SQLITE_TRANSIENT);
    if (job->idem[0])
        sqlite3_bind_text(st, 5, job->idem, -1, SQLITE_TRANSIENT);
    else
        sqlite3_bind_null(st, 5);
    sqlite3_bind_int64(st, 6, job->n_parts);
    sqlite3_bind_int64(st, 7, job->submitted_ms);
    sqlite3_bind_text(st, 8, job->circuit, -1, SQLITE_TRANSIENT);
    if (sqlite3_step(st) != SQLITE_DONE) {
        e = sq_fail(q, err, "insert job");
        goto rollback;
    }
    job->id = sqlite3_last_insert_rowid(q->db);
    sqlite3_finalize(st);
    st = NULL;
    if (sqlite3_prepare_v2(q->db, "INSERT INTO parts(job, idx, state, attempts, owned, witness) VALUES(?,?,?,?,?,?)",
                           -1, &st, NULL) != SQLITE_OK) {
        e = sq_fail(q, err, "prepare insert part");
        goto rollback;
    }
    for (uint32_t i = 0; i < job->n_parts; i++) {
        sqlite3_reset(st);
        sqlite3_bind_int64(st, 1, job->id);
        sqlite3_bind_int(st, 2, (int)parts[i].index);
        sqlite3_bind_int(st, 3, parts[i].state);
        sqlite3_bind_int(st, 4, parts[i].attempts);
        sqlite3_bind_int(st, 5, parts[i].owned);
        sqlite3_bind_text(st, 6, parts[i].witness, -1, SQLITE_TRANSIENT);
        if (sqlite3_step(st) != SQLITE_DONE) {
            e = sq_fail(q, err, "insert part");
            goto rollback;
        }
    }
    sqlite3_finalize(st);
    st = NULL;
    if (sqlite3_exec(q->db, "COMMIT", NULL, NULL, NULL) != SQLITE_OK) {
        e = sq_fail(q, err, "commit");
        goto rollback;
    }
    goto out;
rollback:
    sqlite3_finalize(st);
    sqlite3_exec(q->db, "ROLLBACK", NULL, NULL, NULL);
out:
    pthread_mutex_unlock(&q->mu);
    return e;
}

/* runs one UPDATE/DELETE with int64/text bindings described by types ("i" int64, "t" text) */
static cuzk_err sq_exec(sq *q, const char *sql, const char *what, char *err, const char *types, ...)
{
    va_list ap;
    sqlite3_stmt *st = NULL;
    cuzk_err e = CUZK_OK;
    pthread_mutex_lock(&q->mu);
    if (sqlite3_prepare_v2(q->db, sql, -1, &st, NULL) != SQLITE_OK) {
        e = sq_fail(q, err, what);
        goto out;
    }
    va_start(ap, types);
    for (int i = 0; types[i]; i++) {
        if (types[i] == 'i') {
            sqlite3_bind_int64(st, i + 1, va_arg(ap, int64_t));
        } else {
            const char *t = va_arg(ap, const char *);
            if (t)
                sqlite3_bind_text(st, i + 1, t, -1, SQLITE_TRANSIENT);
            else
                sqlite3_bind_null(st, i + 1);
        }
    }
    va_end(ap);
    if (sqlite3_step(st) != SQLITE_DONE)
        e = sq_fail(q, err, what);
out:
    sqlite3_finalize(st);
    pthread_mutex_unlock(&q->mu);
    return e;
}

static cuzk_err sq_job_set_state(store *s, int64_t id, int state, int64_t finished_ms, const char *error,
                                 char *err)
{
    return sq_exec(s->impl, "UPDATE jobs SET state = ?, finished_ms = ?, error = ? WHERE id = ?",
                   "update job state", err, "iiti", (int64_t)state, finished_ms, error ? error : "", id);
}

static cuzk_err sq_job_set_fetched(store *s, int64_t id, int64_t fetched_ms, char *err)
{
    return sq_exec(s->impl, "UPDATE jobs SET fetched_ms = ? WHERE id = ? AND fetched_ms = 0",
                   "update job fetched", err, "ii", fetched_ms, id);
}

static cuzk_err sq_part_set_state(store *s, int64_t id, uint32_t index, int state, int attempts, char *err)
{
    return sq_exec(s->impl, "UPDATE parts SET state = ?, attempts = ? WHERE job = ? AND idx = ?",
                   "update part state", err, "iiii", (int64_t)state, (int64_t)attempts, id, (int64_t)index);
}

static cuzk_err sq_part_set_done(store *s, int64_t id, uint32_t index, const char *proof_json,
                                 const char *public_json, char *err)
{
    /* 6 = PART_DONE (engine.h) */
    return sq_exec(s->impl, "UPDATE parts SET state = 6, proof = ?, public = ? WHERE job = ? AND idx = ?",
                   "store proof", err, "ttii", proof_json, public_json, id, (int64_t)index);
}

static cuzk_err sq_part_get_proof(store *s, int64_t id, uint32_t index, char **proof_json, char **public_json,
                                  char *err)
{
    sq *q = s->impl;
    sqlite3_stmt *st = NULL;
    cuzk_err e = CUZK_OK;
    *proof_json = *public_json = NULL;
    pthread_mutex_lock(&q->mu);
    if (sqlite3_prepare_v2(q->db, "SELECT proof, public FROM parts WHERE job = ? AND idx = ?", -1, &st, NULL) !=
        SQLITE_OK) {
        e = sq_fail(q, err, "prepare proof read");
        goto out;
    }
    sqlite3_bind_int64(st, 1, id);
    sqlite3_bind_int64(st, 2, index);
    if (sqlite3_step(st) != SQLITE_ROW || sqlite3_column_type(st, 0) == SQLITE_NULL) {
        e = cuzk_errf(err, CUZK_ENOTFOUND, "job j-%lld has no proof for partition %u", (long long)id, index);
        goto out;
    }
    *proof_json = strdup((const char *)sqlite3_column_text(st, 0));
    *public_json = strdup(sqlite3_column_text(st, 1) ? (const char *)sqlite3_column_text(st, 1) : "[]");
    if (!*proof_json || !*public_json) {
        free(*proof_json);
        free(*public_json);
        *proof_json = *public_json = NULL;
        e = cuzk_errf(err, CUZK_ENOMEM, "journal: out of memory reading a proof");
    }
out:
    sqlite3_finalize(st);
    pthread_mutex_unlock(&q->mu);
    return e;
}

static cuzk_err sq_load_all(store *s, void (*fn)(void *ctx, const store_job *job, const store_part *parts),
                            void *ctx, char *err)
{
    sq *q = s->impl;
    sqlite3_stmt *sj = NULL, *sp = NULL;
    cuzk_err e = CUZK_OK;
    store_job *job = calloc(1, sizeof *job);
    store_part *parts = NULL;
    if (!job)
        return cuzk_errf(err, CUZK_ENOMEM, "journal: out of memory");
    pthread_mutex_lock(&q->mu);
    if (sqlite3_prepare_v2(q->db,
                           "SELECT id, kind, priority, state, zkey, idem, n_parts, submitted_ms, finished_ms,"
                           " fetched_ms, error, circuit FROM jobs ORDER BY id",
                           -1, &sj, NULL) != SQLITE_OK ||
        sqlite3_prepare_v2(q->db, "SELECT idx, state, attempts, owned, witness FROM parts WHERE job = ? ORDER BY idx",
                           -1, &sp, NULL) != SQLITE_OK) {
        e = sq_fail(q, err, "prepare load");
        goto out;
    }
    int rc;
    while ((rc = sqlite3_step(sj)) == SQLITE_ROW) {
        memset(job, 0, sizeof *job);
        job->id = sqlite3_column_int64(sj, 0);
        job->kind = sqlite3_column_int(sj, 1);
        job->priority = sqlite3_column_int(sj, 2);
        job->state = sqlite3_column_int(sj, 3);
        copy_text(job->zkey, sizeof job->zkey, sqlite3_column_text(sj, 4));
        copy_text(job->idem, sizeof job->idem, sqlite3_column_text(sj, 5));
        job->n_parts = (uint32_t)sqlite3_column_int64(sj, 6);
        job->submitted_ms = sqlite3_column_int64(sj, 7);
        job->finished_ms = sqlite3_column_int64(sj, 8);
        job->fetched_ms = sqlite3_column_int64(sj, 9);
        copy_text(job->error, sizeof job->error, sqlite3_column_text(sj, 10));
        copy_text(job->circuit, sizeof job->circuit, sqlite3_column_text(sj, 11));
        free(parts);
        parts = calloc(job->n_parts ? job->n_parts : 1, sizeof *parts);
        if (!parts) {
            e = cuzk_errf(err, CUZK_ENOMEM, "journal: out of memory loading job %lld", (long long)job->id);
            goto out;
        }
        sqlite3_reset(sp);
        sqlite3_bind_int64(sp, 1, job->id);
        uint32_t got = 0;
        while (sqlite3_step(sp) == SQLITE_ROW) {
            int64_t idx = sqlite3_column_int64(sp, 0);
            if (idx < 0 || idx >= job->n_parts)
                continue;
            store_part *p = &parts[idx];
            p->index = (uint32_t)idx;
            p->state = sqlite3_column_int(sp, 1);
            p->attempts = sqlite3_column_int(sp, 2);
            p->owned = sqlite3_column_int(sp, 3);
            copy_text(p->witness, sizeof p->witness, sqlite3_column_text(sp, 4));
            got++;
        }
        if (got != job->n_parts) {
            e = cuzk_errf(err, CUZK_ESTORE, "journal: job %lld has %u partition rows, expected %u",
                          (long long)job->id, got, job->n_parts);
            goto out;
        }
        fn(ctx, job, parts);
    }
    if (rc != SQLITE_DONE)
        e = sq_fail(q, err, "load jobs");
out:
    sqlite3_finalize(sj);
    sqlite3_finalize(sp);
    pthread_mutex_unlock(&q->mu);
    free(parts);
    free(job);
    return e;
}

static cuzk_err sq_job_delete(store *s, int64_t id, char *err)
{
    sq *q = s->impl;
    cuzk_err e = sq_exec(q, "DELETE FROM parts WHERE job = ?", "delete parts", err, "i", id);
    if (!e)
        e = sq_exec(q, "DELETE FROM jobs WHERE id = ?", "delete job", err, "i", id);
    return e;
}

static void sq_close(store *s)
{
    if (!s)
        return;
    sq *q = s->impl;
    if (q) {
        sqlite3_close(q->db);
        pthread_mutex_destroy(&q->mu);
        free(q);
    }
    free(s);
}

cuzk_err store_sqlite_open(store **out, const char *path, char *err)
{
    *out = NULL;
    store *s = calloc(1, sizeof *s);
    sq *q = calloc(1, sizeof *q);
    if (!s || !q) {
        free(s);
        free(q);
        return cuzk_errf(err, CUZK_ENOMEM, "journal: out of memory");
    }
    pthread_mutex_init(&q->mu, NULL);
    s->impl = q;
    s->name = "sqlite";
    s->job_insert = sq_job_insert;
    s->job_set_state = sq_job_set_state;
    s->job_set_fetched = sq_job_set_fetched;
    s->part_set_state = sq_part_set_state;
    s->part_set_done = sq_part_set_done;
    s->part_get_proof = sq_part_get_proof;
    s->load_all = sq_load_all;
    s->job_delete = sq_job_delete;
    s->close = sq_close;
    if (sqlite3_open_v2(path, &q->db, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_FULLMUTEX, NULL) !=
        SQLITE_OK) {
        cuzk_errf(err, CUZK_ESTORE, "journal: cannot open %s: %s", path,
                  q->db ? sqlite3_errmsg(q->db) : "out of memory");
        sq_close(s);
        return CUZK_ESTORE;
    }
    sqlite3_busy_timeout(q->db, 5000);
    char *msg = NULL;
    if (sqlite3_exec(q->db, "PRAGMA journal_mode=WAL; PRAGMA synchronous=FULL; PRAGMA foreign_keys=ON;", NULL,
                     NULL, &msg) != SQLITE_OK ||
        sqlite3_exec(q->db, "BEGIN IMMEDIATE", NULL, NULL, &msg) != SQLITE_OK) {
        cuzk_errf(err, CUZK_ESTORE, "journal: %s: %s", path, msg ? msg : "setup failed");
        sqlite3_free(msg);
        sq_close(s);
        return CUZK_ESTORE;
    }
    /* schema and migration in one transaction, so that two daemons racing on a new data dir
       cannot both add the column */
    sqlite3_stmt *uv = NULL;
    int version = -1;
    if (sqlite3_prepare_v2(q->db, "PRAGMA user_version", -1, &uv, NULL) == SQLITE_OK && sqlite3_step(uv) == SQLITE_ROW)
        version = sqlite3_column_int(uv, 0);
    sqlite3_finalize(uv);
    int has_jobs = 0;
    if (sqlite3_prepare_v2(q->db, "SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'jobs'", -1, &uv,
                           NULL) == SQLITE_OK && sqlite3_step(uv) == SQLITE_ROW)
        has_jobs = 1;
    sqlite3_finalize(uv);
    if (version < 0 || sqlite3_exec(q->db, schema, NULL, NULL, &msg) != SQLITE_OK ||
        (has_jobs && version < 2 && sqlite3_exec(q->db, migrate_v2, NULL, NULL, &msg) != SQLITE_OK) ||
        sqlite3_exec(q->db, "PRAGMA user_version = 2; COMMIT", NULL, NULL, &msg) != SQLITE_OK) {
        cuzk_errf(err, CUZK_ESTORE, "journal: %s: %s", path,
                  msg ? msg : version < 0 ? sqlite3_errmsg(q->db) : "setup failed");
        sqlite3_free(msg);
        sqlite3_exec(q->db, "ROLLBACK", NULL, NULL, NULL);
        sq_close(s);
        return CUZK_ESTORE;
    }
    *out = s;
    return CUZK_OK;
}
