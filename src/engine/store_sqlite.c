/* store_sqlite.c - the journal (store.h) on SQLite: WAL mode, one connection guarded by
 * a mutex, jobs and parts tables, proofs stored as JSON text in the parts rows.
 *
 * Schema (version 3):
 *   jobs(id INTEGER PRIMARY KEY, kind, priority, state, zkey, idem UNIQUE (NULL for none),
 *        n_parts, submitted_ms, finished_ms, fetched_ms, error, circuit, crc)
 *   parts(job, idx, state, attempts, owned, witness, proof, public, crc, proof_crc,
 *         PRIMARY KEY(job, idx))
 * Version 1 lacked jobs.circuit; opening such a journal adds the column ('' for all jobs).
 * Version 2 lacked the checksums (crc, proof_crc; store_sqlite.h says what they cover);
 * opening such a journal adds them and computes them over the rows as they are.
 *
 * DESIGN. Every write computes the row's checksum in the statement that writes the row
 * (the SQL function cuzk_crc64), and every update also requires the old row to match its
 * checksum (`AND crc IS cuzk_crc64(old columns)`), so a damaged row is never made to look
 * valid again: the update changes nothing and the caller gets CUZK_EFORMAT. Reads check
 * the checksum in C. Opening runs PRAGMA quick_check (the b-tree structure, O(file size):
 * 0.1 s for 100 MB in the page cache) before anything else and refuses a damaged file.
 */
#include "engine/store.h"

#include <errno.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "engine/store_sqlite.h"
#include "util/crc64.h"

typedef struct sq {
    sqlite3 *db;
    pthread_mutex_t mu;
} sq;

const char sq_schema[] =
    "CREATE TABLE IF NOT EXISTS jobs(id INTEGER PRIMARY KEY AUTOINCREMENT, kind INTEGER NOT NULL,"
    " priority INTEGER NOT NULL, state INTEGER NOT NULL, zkey TEXT NOT NULL, idem TEXT UNIQUE,"
    " n_parts INTEGER NOT NULL, submitted_ms INTEGER NOT NULL, finished_ms INTEGER NOT NULL DEFAULT 0,"
    " fetched_ms INTEGER NOT NULL DEFAULT 0, error TEXT NOT NULL DEFAULT '',"
    " circuit TEXT NOT NULL DEFAULT '', crc INTEGER);"
    "CREATE TABLE IF NOT EXISTS parts(job INTEGER NOT NULL REFERENCES jobs(id) ON DELETE CASCADE,"
    " idx INTEGER NOT NULL, state INTEGER NOT NULL, attempts INTEGER NOT NULL DEFAULT 0,"
    " owned INTEGER NOT NULL DEFAULT 0, witness TEXT NOT NULL, proof TEXT, public TEXT,"
    " crc INTEGER, proof_crc INTEGER, PRIMARY KEY(job, idx));";

/* version 1 -> 2: the circuit of input jobs */
static const char *migrate_v2 = "ALTER TABLE jobs ADD COLUMN circuit TEXT NOT NULL DEFAULT '';";
/* version 2 -> 3: row checksums, computed over the rows as they are */
static const char *migrate_v3 =
    "ALTER TABLE jobs ADD COLUMN crc INTEGER;"
    "ALTER TABLE parts ADD COLUMN crc INTEGER;"
    "ALTER TABLE parts ADD COLUMN proof_crc INTEGER;"
    "UPDATE jobs SET crc = cuzk_crc64(" SQ_JOB_COLS ");"
    "UPDATE parts SET crc = cuzk_crc64(" SQ_PART_COLS "),"
    " proof_crc = CASE WHEN proof IS NULL THEN NULL ELSE cuzk_crc64(" SQ_PROOF_COLS ") END;";

/* ---- row checksums (store_sqlite.h) ---- */

static uint64_t crc_tagged(uint64_t c, char tag, const void *p, size_t n, int with_len)
{
    uint8_t hdr[9];
    hdr[0] = (uint8_t)tag;
    for (int i = 0; i < 8; i++)
        hdr[1 + i] = (uint8_t)((uint64_t)n >> (8 * i));
    c = crc64_update(c, hdr, with_len ? 9 : 1);
    return crc64_update(c, p, n);
}

static uint64_t crc_int(uint64_t c, int64_t v)
{
    uint8_t b[8];
    for (int i = 0; i < 8; i++)
        b[i] = (uint8_t)((uint64_t)v >> (8 * i));
    return crc_tagged(c, 'i', b, 8, 0);
}

static uint64_t crc_real(uint64_t c, double d)
{
    uint8_t b[8];
    memcpy(b, &d, 8);
    return crc_tagged(c, 'r', b, 8, 0);
}

static void sql_crc64(sqlite3_context *ctx, int argc, sqlite3_value **argv)
{
    uint64_t c = 0;
    for (int i = 0; i < argc; i++) {
        switch (sqlite3_value_type(argv[i])) {
        case SQLITE_INTEGER: c = crc_int(c, sqlite3_value_int64(argv[i])); break;
        case SQLITE_FLOAT: c = crc_real(c, sqlite3_value_double(argv[i])); break;
        case SQLITE_TEXT: {
            const unsigned char *t = sqlite3_value_text(argv[i]);
            c = crc_tagged(c, 't', t, (size_t)sqlite3_value_bytes(argv[i]), 1);
            break;
        }
        case SQLITE_BLOB: {
            const void *b = sqlite3_value_blob(argv[i]);
            c = crc_tagged(c, 'b', b, (size_t)sqlite3_value_bytes(argv[i]), 1);
            break;
        }
        default: c = crc_tagged(c, 'n', "", 0, 0); break;
        }
    }
    sqlite3_result_int64(ctx, (int64_t)c);
}

int sq_crc_register(sqlite3 *db)
{
    return sqlite3_create_function_v2(db, "cuzk_crc64", -1, SQLITE_UTF8 | SQLITE_DETERMINISTIC, NULL, sql_crc64,
                                      NULL, NULL, NULL);
}

int64_t sq_row_crc(sqlite3_stmt *st, int first, int n)
{
    uint64_t c = 0;
    for (int i = first; i < first + n; i++) {
        switch (sqlite3_column_type(st, i)) {
        case SQLITE_INTEGER: c = crc_int(c, sqlite3_column_int64(st, i)); break;
        case SQLITE_FLOAT: c = crc_real(c, sqlite3_column_double(st, i)); break;
        case SQLITE_TEXT: {
            const unsigned char *t = sqlite3_column_text(st, i);
            c = crc_tagged(c, 't', t, (size_t)sqlite3_column_bytes(st, i), 1);
            break;
        }
        case SQLITE_BLOB: {
            const void *b = sqlite3_column_blob(st, i);
            c = crc_tagged(c, 'b', b, (size_t)sqlite3_column_bytes(st, i), 1);
            break;
        }
        default: c = crc_tagged(c, 'n', "", 0, 0); break;
        }
    }
    return (int64_t)c;
}

/* column col of st holds the checksum of the n columns from first on */
static int row_ok(sqlite3_stmt *st, int first, int n, int col)
{
    return sqlite3_column_type(st, col) == SQLITE_INTEGER && sqlite3_column_int64(st, col) == sq_row_crc(st, first, n);
}

int sq_rc_damaged(int rc)
{
    rc &= 0xff;
    return rc == SQLITE_CORRUPT || rc == SQLITE_NOTADB;
}

/* A full file system or quota (SQLITE_FULL, or an I/O error whose errno is ENOSPC or EDQUOT)
 * is CUZK_ENOSPC, a condition the engine waits out; damage is CUZK_EFORMAT; the rest
 * CUZK_ESTORE. */
static cuzk_err sq_fail(sq *q, char *err, const char *what)
{
    int rc = sqlite3_extended_errcode(q->db), sys = sqlite3_system_errno(q->db);
    cuzk_err code = sq_rc_damaged(rc) ? CUZK_EFORMAT : CUZK_ESTORE;
    if ((rc & 0xff) == SQLITE_FULL || ((rc & 0xff) == SQLITE_IOERR && (sys == ENOSPC || sys == EDQUOT)))
        code = CUZK_ENOSPC;
    return cuzk_errf(err, code, "journal: %s: %s", what, sqlite3_errmsg(q->db));
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
    /* the checksum covers the id, known only now (same transaction) */
    if (sqlite3_prepare_v2(q->db, "UPDATE jobs SET crc = cuzk_crc64(" SQ_JOB_COLS ") WHERE id = ?", -1, &st,
                           NULL) != SQLITE_OK) {
        e = sq_fail(q, err, "prepare job checksum");
        goto rollback;
    }
    sqlite3_bind_int64(st, 1, job->id);
    if (sqlite3_step(st) != SQLITE_DONE) {
        e = sq_fail(q, err, "job checksum");
        goto rollback;
    }
    sqlite3_finalize(st);
    st = NULL;
    if (sqlite3_prepare_v2(q->db,
                           "INSERT INTO parts(" SQ_PART_COLS ", crc) VALUES(?1,?2,?3,?4,?5,?6,"
                           " cuzk_crc64(?1,?2,?3,?4,?5,?6))",
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

/* runs one UPDATE/DELETE with int64/text bindings described by types ("i" int64, "t" text);
 * *changes (may be NULL) gets the rows it changed */
static cuzk_err sq_exec(sq *q, int *changes, const char *sql, const char *what, char *err, const char *types, ...)
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
    else if (changes)
        *changes = sqlite3_changes(q->db);
out:
    sqlite3_finalize(st);
    pthread_mutex_unlock(&q->mu);
    return e;
}

/* An update guarded by the old row's checksum changed nothing: CUZK_EFORMAT when the row is
 * there and fails its checksum, CUZK_OK otherwise (gone, as an update of a deleted job always
 * was, or the update's own condition did not hold). idx < 0: the job row. */
static cuzk_err sq_unchanged(sq *q, int64_t id, int64_t idx, const char *what, char *err)
{
    sqlite3_stmt *st = NULL;
    cuzk_err e = CUZK_OK;
    pthread_mutex_lock(&q->mu);
    if (sqlite3_prepare_v2(q->db,
                           idx < 0 ? "SELECT crc IS cuzk_crc64(" SQ_JOB_COLS ") FROM jobs WHERE id = ?1"
                                   : "SELECT crc IS cuzk_crc64(" SQ_PART_COLS ") FROM parts WHERE job = ?1 AND idx = ?2",
                           -1, &st, NULL) != SQLITE_OK) {
        e = sq_fail(q, err, what);
        goto out;
    }
    sqlite3_bind_int64(st, 1, id);
    if (idx >= 0)
        sqlite3_bind_int64(st, 2, idx);
    int rc = sqlite3_step(st);
    if (rc == SQLITE_ROW && !sqlite3_column_int(st, 0)) {
        if (idx < 0)
            e = cuzk_errf(err, CUZK_EFORMAT, "journal: %s: the record of job j-%lld fails its checksum (damaged); "
                          "left as it is", what, (long long)id);
        else
            e = cuzk_errf(err, CUZK_EFORMAT, "journal: %s: the record of job j-%lld partition %lld fails its "
                          "checksum (damaged); left as it is", what, (long long)id, (long long)idx);
    } else if (rc != SQLITE_ROW && rc != SQLITE_DONE) {
        e = sq_fail(q, err, what);
    }
out:
    sqlite3_finalize(st);
    pthread_mutex_unlock(&q->mu);
    return e;
}

/* the row's checksum over its columns with the updates of SET, and the guard: the old row
   matches its checksum */
#define JOB_GUARD " AND crc IS cuzk_crc64(" SQ_JOB_COLS ")"
#define PART_GUARD " AND crc IS cuzk_crc64(" SQ_PART_COLS ")"

static cuzk_err sq_job_set_state(store *s, int64_t id, int state, int64_t finished_ms, const char *error,
                                 char *err)
{
    int n = 0;
    cuzk_err e = sq_exec(s->impl, &n,
                         "UPDATE jobs SET state = ?1, finished_ms = ?2, error = ?3, crc = cuzk_crc64(id, kind,"
                         " priority, ?1, zkey, idem, n_parts, submitted_ms, ?2, fetched_ms, ?3, circuit)"
                         " WHERE id = ?4" JOB_GUARD,
                         "update job state", err, "iiti", (int64_t)state, finished_ms, error ? error : "", id);
    return e || n ? e : sq_unchanged(s->impl, id, -1, "update job state", err);
}

static cuzk_err sq_job_set_fetched(store *s, int64_t id, int64_t fetched_ms, char *err)
{
    int n = 0;
    cuzk_err e = sq_exec(s->impl, &n,
                         "UPDATE jobs SET fetched_ms = ?1, crc = cuzk_crc64(id, kind, priority, state, zkey, idem,"
                         " n_parts, submitted_ms, finished_ms, ?1, error, circuit)"
                         " WHERE id = ?2 AND fetched_ms = 0" JOB_GUARD,
                         "update job fetched", err, "ii", fetched_ms, id);
    return e || n ? e : sq_unchanged(s->impl, id, -1, "update job fetched", err);
}

static cuzk_err sq_part_set_state(store *s, int64_t id, uint32_t index, int state, int attempts, char *err)
{
    /* 6 = PART_DONE (engine.h): any other state has no proof */
    int n = 0;
    cuzk_err e = sq_exec(s->impl, &n,
                         "UPDATE parts SET state = ?1, attempts = ?2, proof = CASE WHEN ?1 = 6 THEN proof END,"
                         " public = CASE WHEN ?1 = 6 THEN public END,"
                         " proof_crc = CASE WHEN ?1 = 6 THEN proof_crc END,"
                         " crc = cuzk_crc64(job, idx, ?1, ?2, owned, witness)"
                         " WHERE job = ?3 AND idx = ?4" PART_GUARD,
                         "update part state", err, "iiii", (int64_t)state, (int64_t)attempts, id, (int64_t)index);
    return e || n ? e : sq_unchanged(s->impl, id, index, "update part state", err);
}

static cuzk_err sq_part_set_done(store *s, int64_t id, uint32_t index, const char *proof_json,
                                 const char *public_json, char *err)
{
    /* 6 = PART_DONE (engine.h) */
    int n = 0;
    cuzk_err e = sq_exec(s->impl, &n,
                         "UPDATE parts SET state = 6, proof = ?1, public = ?2, proof_crc = cuzk_crc64(job, idx, ?1, ?2),"
                         " crc = cuzk_crc64(job, idx, 6, attempts, owned, witness)"
                         " WHERE job = ?3 AND idx = ?4" PART_GUARD,
                         "store proof", err, "ttii", proof_json, public_json, id, (int64_t)index);
    return e || n ? e : sq_unchanged(s->impl, id, index, "store proof", err);
}

static cuzk_err sq_part_get_proof(store *s, int64_t id, uint32_t index, char **proof_json, char **public_json,
                                  char *err)
{
    sq *q = s->impl;
    sqlite3_stmt *st = NULL;
    cuzk_err e = CUZK_OK;
    *proof_json = *public_json = NULL;
    pthread_mutex_lock(&q->mu);
    if (sqlite3_prepare_v2(q->db, "SELECT " SQ_PROOF_COLS ", proof_crc FROM parts WHERE job = ? AND idx = ?", -1,
                           &st, NULL) != SQLITE_OK) {
        e = sq_fail(q, err, "prepare proof read");
        goto out;
    }
    sqlite3_bind_int64(st, 1, id);
    sqlite3_bind_int64(st, 2, index);
    int rc = sqlite3_step(st);
    if (rc != SQLITE_ROW && rc != SQLITE_DONE) {
        e = sq_fail(q, err, "read proof");
        goto out;
    }
    if (rc != SQLITE_ROW || sqlite3_column_type(st, 2) == SQLITE_NULL) {
        e = cuzk_errf(err, CUZK_ENOTFOUND, "job j-%lld has no proof for partition %u", (long long)id, index);
        goto out;
    }
    if (!row_ok(st, 0, SQ_PROOF_NCOLS, SQ_PROOF_NCOLS)) {
        e = cuzk_errf(err, CUZK_EFORMAT, "journal: the proof of job j-%lld partition %u fails its checksum "
                      "(the journal is damaged)", (long long)id, index);
        goto out;
    }
    *proof_json = strdup((const char *)sqlite3_column_text(st, 2));
    *public_json = strdup(sqlite3_column_text(st, 3) ? (const char *)sqlite3_column_text(st, 3) : "[]");
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

/* fn runs without the store's lock, so that it may update the job it is given: the walk's
   statements stay open on the connection meanwhile, which SQLite allows (an update of the
   row the walk is on does not move it) */
static void load_call(sq *q, void (*fn)(void *ctx, const store_job *job, const store_part *parts), void *ctx,
                      const store_job *job, const store_part *parts)
{
    pthread_mutex_unlock(&q->mu);
    fn(ctx, job, parts);
    pthread_mutex_lock(&q->mu);
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
    /* parts: the record (0-5) and its checksum (6), then the proof's columns (7-10) and
       its checksum (11) */
    if (sqlite3_prepare_v2(q->db, "SELECT " SQ_JOB_COLS ", crc FROM jobs ORDER BY id", -1, &sj, NULL) != SQLITE_OK ||
        sqlite3_prepare_v2(q->db,
                           "SELECT " SQ_PART_COLS ", crc, " SQ_PROOF_COLS ", proof_crc FROM parts WHERE job = ?"
                           " ORDER BY idx",
                           -1, &sp, NULL) != SQLITE_OK) {
        e = sq_fail(q, err, "prepare load");
        goto out;
    }
    int rc;
    while ((rc = sqlite3_step(sj)) == SQLITE_ROW) {
        memset(job, 0, sizeof *job);
        job->id = sqlite3_column_int64(sj, 0);
        if (!row_ok(sj, 0, SQ_JOB_NCOLS, SQ_JOB_NCOLS)) {
            job->damaged = 1;
            snprintf(job->error, sizeof job->error, "its record fails its checksum (the journal is damaged)");
            load_call(q, fn, ctx, job, NULL);
            continue;
        }
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
        int prc;
        while ((prc = sqlite3_step(sp)) == SQLITE_ROW) {
            int64_t idx = sqlite3_column_int64(sp, 1);
            if (idx < 0 || idx >= job->n_parts)
                continue;
            store_part *p = &parts[idx];
            p->index = (uint32_t)idx;
            p->state = sqlite3_column_int(sp, 2);
            p->attempts = sqlite3_column_int(sp, 3);
            p->owned = sqlite3_column_int(sp, 4);
            copy_text(p->witness, sizeof p->witness, sqlite3_column_text(sp, 5));
            p->damaged = !row_ok(sp, 0, SQ_PART_NCOLS, SQ_PART_NCOLS);
            if (!p->damaged && p->state == 6 /* PART_DONE */)
                p->proof_damaged = sqlite3_column_type(sp, 9) == SQLITE_NULL ||
                                   !row_ok(sp, 7, SQ_PROOF_NCOLS, 7 + SQ_PROOF_NCOLS);
            got++;
        }
        if (prc != SQLITE_DONE) {
            e = sq_fail(q, err, "load partitions");
            goto out;
        }
        if (got != job->n_parts) {
            job->damaged = 1;
            snprintf(job->error, sizeof job->error, "%u of its %u partition records are missing (the journal is "
                     "damaged)", job->n_parts - got, job->n_parts);
            load_call(q, fn, ctx, job, NULL);
            continue;
        }
        load_call(q, fn, ctx, job, parts);
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
    cuzk_err e = sq_exec(q, NULL, "DELETE FROM parts WHERE job = ?", "delete parts", err, "i", id);
    if (!e)
        e = sq_exec(q, NULL, "DELETE FROM jobs WHERE id = ?", "delete job", err, "i", id);
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

/* PRAGMA quick_check: CUZK_OK, or CUZK_EFORMAT with the first problem it names */
static cuzk_err quick_check(sqlite3 *db, const char *path, char *err)
{
    sqlite3_stmt *st = NULL;
    cuzk_err e = CUZK_OK;
    int rc = sqlite3_prepare_v2(db, "PRAGMA quick_check", -1, &st, NULL);
    char first[256] = "";
    int n = 0;
    if (rc == SQLITE_OK)
        rc = SQLITE_ROW;
    while (rc == SQLITE_ROW && (rc = sqlite3_step(st)) == SQLITE_ROW) {
        const unsigned char *t = sqlite3_column_text(st, 0);
        if (t && !strcmp((const char *)t, "ok"))
            continue;
        if (!n++)
            copy_text(first, sizeof first, t);
    }
    if (rc != SQLITE_DONE) {
        int xrc = sqlite3_extended_errcode(db);
        e = cuzk_errf(err, sq_rc_damaged(xrc) ? CUZK_EFORMAT : CUZK_ESTORE, "journal %s %s: %s", path,
                      sq_rc_damaged(xrc) ? "is damaged" : "cannot be checked", sqlite3_errmsg(db));
    } else if (n) {
        e = cuzk_errf(err, CUZK_EFORMAT, "journal %s is damaged: SQLite's quick_check found %d problem%s, the "
                      "first: %s", path, n, n == 1 ? "" : "s", first);
    }
    sqlite3_finalize(st);
    return e;
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
            SQLITE_OK ||
        sq_crc_register(q->db) != SQLITE_OK) {
        cuzk_errf(err, CUZK_ESTORE, "journal: cannot open %s: %s", path,
                  q->db ? sqlite3_errmsg(q->db) : "out of memory");
        sq_close(s);
        return CUZK_ESTORE;
    }
    sqlite3_busy_timeout(q->db, 5000);
    cuzk_err rc = quick_check(q->db, path, err);
    if (rc) {
        sq_close(s);
        return rc;
    }
    char *msg = NULL;
    if (sqlite3_exec(q->db, "PRAGMA journal_mode=WAL; PRAGMA synchronous=FULL; PRAGMA foreign_keys=ON;", NULL,
                     NULL, &msg) != SQLITE_OK ||
        sqlite3_exec(q->db, "BEGIN IMMEDIATE", NULL, NULL, &msg) != SQLITE_OK) {
        rc = sq_rc_damaged(sqlite3_extended_errcode(q->db)) ? CUZK_EFORMAT : CUZK_ESTORE;
        cuzk_errf(err, rc, "journal %s: %s", path, msg ? msg : "setup failed");
        sqlite3_free(msg);
        sq_close(s);
        return rc;
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
    char set_version[64];
    snprintf(set_version, sizeof set_version, "PRAGMA user_version = %d; COMMIT", SQ_VERSION);
    if (version < 0 || sqlite3_exec(q->db, sq_schema, NULL, NULL, &msg) != SQLITE_OK ||
        (has_jobs && version < 2 && sqlite3_exec(q->db, migrate_v2, NULL, NULL, &msg) != SQLITE_OK) ||
        (has_jobs && version < 3 && sqlite3_exec(q->db, migrate_v3, NULL, NULL, &msg) != SQLITE_OK) ||
        sqlite3_exec(q->db, set_version, NULL, NULL, &msg) != SQLITE_OK) {
        rc = sq_rc_damaged(sqlite3_extended_errcode(q->db)) ? CUZK_EFORMAT : CUZK_ESTORE;
        cuzk_errf(err, rc, "journal %s: %s", path, msg ? msg : version < 0 ? sqlite3_errmsg(q->db) : "setup failed");
        sqlite3_free(msg);
        sqlite3_exec(q->db, "ROLLBACK", NULL, NULL, NULL);
        sq_close(s);
        return rc;
    }
    *out = s;
    return CUZK_OK;
}
