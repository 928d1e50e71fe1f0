/* journal_repair.c - `cuzk journal check` and `cuzk journal recover` (journal_repair.h).
 *
 * DESIGN. One walk serves both: it reads the jobs table, then the parts table, row by row
 * (walk_table: rowid order, skipping ahead past what SQLite cannot read), checks each row
 * against its checksum and keeps a small record per job (jinfo) to find the partitions
 * that have no sound record. With an output database (recover) it also copies each sound
 * row as it goes, values bound as they were read (so their checksums stay what they were),
 * and fixes the jobs up at the end: back to QUEUED, or FAILED with what was lost. The
 * damaged journal is opened read-only in effect (PRAGMA query_only, no checkpoint on
 * close), so it stays exactly as it was found.
 */
#include "engine/journal_repair.h"

#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "engine/engine.h"
#include "engine/store_sqlite.h"

#define SKIP_MAX 1000000 /* rowids a walk skips past a read error when the table's largest is unknown */

/* the rows a walk reads, newest schema first (a version-1 journal has no circuit column) */
static const char *const jobs_sql[] = {
    "SELECT rowid, " SQ_JOB_COLS ", crc FROM jobs NOT INDEXED WHERE rowid > ?1 ORDER BY rowid",
    "SELECT rowid, " SQ_JOB_COLS ", NULL FROM jobs NOT INDEXED WHERE rowid > ?1 ORDER BY rowid",
    "SELECT rowid, id, kind, priority, state, zkey, idem, n_parts, submitted_ms, finished_ms, fetched_ms, error,"
    " '', NULL FROM jobs NOT INDEXED WHERE rowid > ?1 ORDER BY rowid",
};
/* columns: 0 rowid, 1-6 the record, 7 its checksum, 8-11 the proof's columns, 12 their checksum */
static const char *const parts_sql[] = {
    "SELECT rowid, " SQ_PART_COLS ", crc, " SQ_PROOF_COLS ", proof_crc FROM parts NOT INDEXED"
    " WHERE rowid > ?1 ORDER BY rowid",
    "SELECT rowid, " SQ_PART_COLS ", NULL, " SQ_PROOF_COLS ", NULL FROM parts NOT INDEXED"
    " WHERE rowid > ?1 ORDER BY rowid",
};

typedef struct jinfo {
    int64_t id;
    uint32_t n_parts;
    int state;        /* engine_job_state as journaled */
    int ok;           /* the record holds its checksum (copied by recover) */
    uint8_t *seen;    /* per partition: 0 no sound record, 1 sound, 2 sound but its proof is damaged */
} jinfo;

typedef struct walk {
    sqlite3 *db;      /* the journal read */
    sqlite3 *out;     /* the fresh journal written (recover), or NULL (check) */
    journal_report *r;
    journal_note_fn note;
    void *ctx;
    int crc;          /* the rows carry checksums */
    jinfo *jobs;      /* in id order (the walk's order) */
    size_t n_jobs, cap_jobs;
    int64_t *orphans; /* job ids named by partition records whose job record was not read */
    size_t n_orphans, cap_orphans;
    int64_t max_id;   /* largest job id seen anywhere */
    sqlite3_stmt *ins_job, *ins_part;
    cuzk_err fail;    /* first write error into out */
    char *err;
} walk;

int journal_report_damaged(const journal_report *r)
{
    return r->structure_problems || r->read_errors || r->tables_unreadable || r->jobs_bad || r->parts_bad ||
           r->proofs_bad || r->parts_missing || r->jobs_orphaned;
}

static void notef(walk *w, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void notef(walk *w, const char *fmt, ...)
{
    if (!w->note)
        return;
    char line[768];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(line, sizeof line, fmt, ap);
    va_end(ap);
    for (char *c = line; *c; c++)
        if (*c == '\n' || *c == '\r')
            *c = ' ';
    w->note(w->ctx, line);
}

static int64_t query_int(sqlite3 *db, const char *sql, int64_t dflt)
{
    sqlite3_stmt *st = NULL;
    int64_t v = dflt;
    if (sqlite3_prepare_v2(db, sql, -1, &st, NULL) == SQLITE_OK && sqlite3_step(st) == SQLITE_ROW &&
        sqlite3_column_type(st, 0) != SQLITE_NULL)
        v = sqlite3_column_int64(st, 0);
    sqlite3_finalize(st);
    return v;
}

static int row_ok(sqlite3_stmt *st, int first, int n, int col)
{
    return sqlite3_column_type(st, col) == SQLITE_INTEGER && sqlite3_column_int64(st, col) == sq_row_crc(st, first, n);
}

static jinfo *job_find(walk *w, int64_t id)
{
    size_t lo = 0, hi = w->n_jobs;
    while (lo < hi) {
        size_t mid = (lo + hi) / 2;
        if (w->jobs[mid].id < id)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo < w->n_jobs && w->jobs[lo].id == id ? &w->jobs[lo] : NULL;
}

static int oom(walk *w)
{
    if (!w->fail)
        w->fail = cuzk_errf(w->err, CUZK_ENOMEM, "journal: out of memory");
    return -1;
}

static void write_fail(walk *w, const char *what)
{
    if (!w->fail)
        w->fail = cuzk_errf(w->err, CUZK_ESTORE, "fresh journal: %s: %s", what, sqlite3_errmsg(w->out));
}

/* one jobs row: columns 1-12 the record, 13 its checksum */
static void job_row(walk *w, sqlite3_stmt *st)
{
    int64_t id = sqlite3_column_int64(st, 0);
    if (id > w->max_id)
        w->max_id = id;
    int64_t n_parts = sqlite3_column_int64(st, 7);
    int ok = (!w->crc || row_ok(st, 1, SQ_JOB_NCOLS, 1 + SQ_JOB_NCOLS)) && n_parts >= 1 &&
             n_parts <= ENGINE_MAX_PARTITIONS && sqlite3_column_int64(st, 1) == id;
    if (w->n_jobs == w->cap_jobs) {
        size_t cap = w->cap_jobs ? 2 * w->cap_jobs : 256;
        jinfo *v = realloc(w->jobs, cap * sizeof *v);
        if (!v) {
            oom(w);
            return;
        }
        w->jobs = v;
        w->cap_jobs = cap;
    }
    jinfo *j = &w->jobs[w->n_jobs];
    memset(j, 0, sizeof *j);
    j->id = id;
    j->ok = ok;
    if (!ok) {
        w->n_jobs++;
        w->r->jobs_bad++;
        notef(w, "j-%lld: its job record fails its checksum%s", (long long)id, w->out ? ": the job is lost" : "");
        return;
    }
    j->n_parts = (uint32_t)n_parts;
    j->state = sqlite3_column_int(st, 4);
    if (!(j->seen = calloc(j->n_parts, 1))) {
        oom(w);
        return;
    }
    w->n_jobs++;
    w->r->jobs++;
    if (!w->out)
        return;
    sqlite3_reset(w->ins_job);
    for (int k = 0; k < SQ_JOB_NCOLS; k++)
        sqlite3_bind_value(w->ins_job, k + 1, sqlite3_column_value(st, 1 + k));
    if (sqlite3_step(w->ins_job) != SQLITE_DONE)
        write_fail(w, "copy a job");
}

static void orphan_add(walk *w, int64_t id)
{
    for (size_t i = 0; i < w->n_orphans; i++)
        if (w->orphans[i] == id)
            return;
    if (w->n_orphans == w->cap_orphans) {
        size_t cap = w->cap_orphans ? 2 * w->cap_orphans : 64;
        int64_t *v = realloc(w->orphans, cap * sizeof *v);
        if (!v) {
            oom(w);
            return;
        }
        w->orphans = v;
        w->cap_orphans = cap;
    }
    w->orphans[w->n_orphans++] = id;
    if (id > w->max_id)
        w->max_id = id;
}

/* one parts row (columns: see parts_sql) */
static void part_row(walk *w, sqlite3_stmt *st)
{
    int64_t job = sqlite3_column_int64(st, 1), idx = sqlite3_column_int64(st, 2);
    int state = sqlite3_column_int(st, 3);
    if (w->crc && !row_ok(st, 1, SQ_PART_NCOLS, 1 + SQ_PART_NCOLS)) {
        w->r->parts_bad++;
        notef(w, "j-%lld partition %lld (as the record says): its partition record fails its checksum",
              (long long)job, (long long)idx);
        return;
    }
    jinfo *j = job_find(w, job);
    if (!j) {
        orphan_add(w, job);
        return;
    }
    if (!j->ok)
        return; /* reported with its job */
    if (idx < 0 || idx >= j->n_parts || j->seen[idx]) {
        w->r->parts_bad++;
        notef(w, "j-%lld: a partition record for partition %lld, which it %s", (long long)job, (long long)idx,
              idx >= 0 && idx < j->n_parts ? "already has" : "does not have");
        return;
    }
    w->r->parts++;
    int requeue = 0;
    if (state == PART_DONE) {
        if (sqlite3_column_type(st, 10) != SQLITE_NULL &&
            (!w->crc || row_ok(st, 8, SQ_PROOF_NCOLS, 8 + SQ_PROOF_NCOLS))) {
            w->r->proofs++;
        } else {
            requeue = 1;
            w->r->proofs_bad++;
            notef(w, "j-%lld partition %lld: its proof %s%s", (long long)job, (long long)idx,
                  sqlite3_column_type(st, 10) == SQLITE_NULL ? "is missing" : "fails its checksum",
                  w->out ? ": proved again at the next start" : "");
        }
    }
    j->seen[idx] = (uint8_t)(1 + requeue);
    if (!w->out)
        return;
    sqlite3_stmt *in = w->ins_part;
    sqlite3_reset(in);
    for (int k = 0; k < SQ_PART_NCOLS; k++)
        sqlite3_bind_value(in, k + 1, sqlite3_column_value(st, 1 + k));
    if (requeue) {
        sqlite3_bind_int(in, 3, PART_QUEUED);
        sqlite3_bind_null(in, 7);
        sqlite3_bind_null(in, 8);
    } else {
        sqlite3_bind_value(in, 7, sqlite3_column_value(st, 10));
        sqlite3_bind_value(in, 8, sqlite3_column_value(st, 11));
    }
    if (sqlite3_step(in) != SQLITE_DONE)
        write_fail(w, "copy a partition");
}

/* Reads every row of a table it can, in rowid order: where a step fails (a page SQLite
   cannot read), skips ahead one rowid at a time until rows come again, up to the table's
   largest rowid (or SKIP_MAX past the failure when that is unknown too). */
static void walk_table(walk *w, const char *table, const char *const *sqls, int n_sql, int *variant,
                       int64_t max_hint, void (*row)(walk *, sqlite3_stmt *))
{
    sqlite3_stmt *st = NULL;
    int v;
    for (v = 0; v < n_sql; v++)
        if (sqlite3_prepare_v2(w->db, sqls[v], -1, &st, NULL) == SQLITE_OK)
            break;
    if (v == n_sql) {
        w->r->tables_unreadable++;
        if (row == job_row)
            w->r->jobs_unreadable = 1;
        notef(w, "%s: the table cannot be read at all (%s)%s", table, sqlite3_errmsg(w->db),
              w->out ? ": what it held is lost" : "");
        return;
    }
    *variant = v;
    if (!strcmp(table, "jobs"))
        w->crc = v == 0;
    char sql[64];
    snprintf(sql, sizeof sql, "SELECT max(rowid) FROM %s", table);
    int64_t max = query_int(w->db, sql, -1);
    if (max_hint > max)
        max = max_hint;
    int64_t cursor = 0, skip_from = -1;
    char why[256] = "";
    for (;;) {
        sqlite3_reset(st);
        sqlite3_bind_int64(st, 1, cursor);
        int rc;
        while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
            int64_t rowid = sqlite3_column_int64(st, 0);
            if (skip_from >= 0) {
                notef(w, "%s: rows %lld to %lld could not be read (%s)", table, (long long)skip_from,
                      (long long)(rowid - 1), why);
                skip_from = -1;
            }
            row(w, st);
            if (w->fail)
                goto out;
            cursor = rowid;
        }
        if (rc == SQLITE_DONE)
            break;
        if (skip_from < 0) {
            skip_from = cursor + 1;
            w->r->read_errors++;
            if (row == job_row)
                w->r->jobs_unreadable = 1;
            snprintf(why, sizeof why, "%s", sqlite3_errmsg(w->db));
        }
        cursor++;
        if (max >= 0 ? cursor >= max : cursor - skip_from > SKIP_MAX)
            break;
    }
    if (skip_from >= 0)
        notef(w, "%s: rows from %lld on could not be read (%s)", table, (long long)skip_from, why);
out:
    sqlite3_finalize(st);
}

/* the partitions of each sound job that have no sound record; with out, the fixes */
static void finish_jobs(walk *w)
{
    static const char *placeholder =
        "INSERT INTO parts(" SQ_PART_COLS ", crc) VALUES(?1, ?2, 7, 0, 0, '', cuzk_crc64(?1, ?2, 7, 0, 0, ''))";
    static const char *update = "UPDATE jobs SET state = ?1, finished_ms = ?2, error = ?3, crc = cuzk_crc64(id,"
                                " kind, priority, ?1, zkey, idem, n_parts, submitted_ms, ?2, fetched_ms, ?3, circuit)"
                                " WHERE id = ?4";
    sqlite3_stmt *ph = NULL, *up = NULL;
    if (w->out && (sqlite3_prepare_v2(w->out, placeholder, -1, &ph, NULL) != SQLITE_OK ||
                   sqlite3_prepare_v2(w->out, update, -1, &up, NULL) != SQLITE_OK)) {
        write_fail(w, "prepare");
        goto out;
    }
    struct timespec now;
    clock_gettime(CLOCK_REALTIME, &now);
    int64_t now_ms = (int64_t)now.tv_sec * 1000 + now.tv_nsec / 1000000;
    for (size_t i = 0; i < w->n_jobs && !w->fail; i++) {
        jinfo *j = &w->jobs[i];
        if (!j->ok)
            continue;
        char list[256] = "";
        uint32_t missing = 0, requeue = 0;
        for (uint32_t k = 0; k < j->n_parts; k++) {
            if (j->seen[k] == 2)
                requeue++;
            if (j->seen[k])
                continue;
            size_t l = strlen(list);
            if (l < sizeof list - 16)
                snprintf(list + l, sizeof list - l, "%s%u", missing ? ", " : "", k);
            else if (l < sizeof list - 1)
                snprintf(list + l, sizeof list - l, ", ...");
            missing++;
            if (ph) {
                sqlite3_reset(ph);
                sqlite3_bind_int64(ph, 1, j->id);
                sqlite3_bind_int64(ph, 2, k);
                if (sqlite3_step(ph) != SQLITE_DONE)
                    write_fail(w, "placeholder partition");
            }
        }
        int ended = j->state == JOB_FAILED || j->state == JOB_CANCELED;
        w->r->parts_missing += missing;
        if (missing)
            notef(w, "j-%lld: %s of partition%s %s %s%s", (long long)j->id,
                  missing == 1 ? "the record" : "the records", missing == 1 ? "" : "s", list,
                  missing == 1 ? "is lost" : "are lost", w->out && !ended ? ": the job is failed" : "");
        if (!w->out)
            continue;
        if (missing && !ended) {
            char why[512];
            snprintf(why, sizeof why, "journal recover: the record%s of partition%s %s %s lost (the journal was "
                     "damaged); submit the job again", missing == 1 ? "" : "s", missing == 1 ? "" : "s", list,
                     missing == 1 ? "was" : "were");
            sqlite3_reset(up);
            sqlite3_bind_int(up, 1, JOB_FAILED);
            sqlite3_bind_int64(up, 2, now_ms);
            sqlite3_bind_text(up, 3, why, -1, SQLITE_TRANSIENT);
            sqlite3_bind_int64(up, 4, j->id);
            if (sqlite3_step(up) != SQLITE_DONE)
                write_fail(w, "fail a job");
            w->r->failed++;
        } else if (requeue && !ended) {
            sqlite3_reset(up);
            sqlite3_bind_int(up, 1, JOB_QUEUED);
            sqlite3_bind_int64(up, 2, 0);
            sqlite3_bind_text(up, 3, "", -1, SQLITE_STATIC);
            sqlite3_bind_int64(up, 4, j->id);
            if (sqlite3_step(up) != SQLITE_DONE)
                write_fail(w, "re-queue a job");
            w->r->requeued++;
            w->r->parts_requeued += requeue;
        } else {
            w->r->kept++;
        }
    }
out:
    sqlite3_finalize(ph);
    sqlite3_finalize(up);
    w->r->jobs_orphaned = (int64_t)w->n_orphans;
    for (size_t i = 0; i < w->n_orphans; i++)
        notef(w, "j-%lld: its job record could not be read (its partition records name it)%s",
              (long long)w->orphans[i], w->out ? ": the job is lost" : "");
    if (w->out)
        w->r->lost = w->r->jobs_bad + w->r->jobs_orphaned;
}

/* the journal, opened so that nothing of it changes */
static cuzk_err open_damaged(sqlite3 **db, const char *path, char *err)
{
    struct stat sb;
    *db = NULL;
    if (stat(path, &sb))
        return cuzk_errf(err, CUZK_ENOTFOUND, "no journal at %s: %s", path, strerror(errno));
    if (sqlite3_open_v2(path, db, SQLITE_OPEN_READWRITE | SQLITE_OPEN_FULLMUTEX, NULL) != SQLITE_OK ||
        sq_crc_register(*db) != SQLITE_OK) {
        cuzk_errf(err, CUZK_ESTORE, "journal %s: cannot open: %s", path, *db ? sqlite3_errmsg(*db) : "out of memory");
        sqlite3_close(*db);
        *db = NULL;
        return CUZK_ESTORE;
    }
    sqlite3_db_config(*db, SQLITE_DBCONFIG_NO_CKPT_ON_CLOSE, 1, (int *)NULL);
    sqlite3_busy_timeout(*db, 5000);
    sqlite3_exec(*db, "PRAGMA query_only = 1; PRAGMA cell_size_check = 1;", NULL, NULL, NULL);
    return CUZK_OK;
}

static void integrity(walk *w)
{
    sqlite3_stmt *st = NULL;
    int rc = sqlite3_prepare_v2(w->db, "PRAGMA integrity_check(100)", -1, &st, NULL);
    if (rc == SQLITE_OK) {
        while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
            const char *t = (const char *)sqlite3_column_text(st, 0);
            if (t && !strcmp(t, "ok"))
                continue;
            w->r->structure_problems++;
            notef(w, "integrity_check: %s", t ? t : "(no message)");
        }
    }
    if (rc != SQLITE_DONE) {
        w->r->structure_problems++;
        notef(w, "integrity_check: %s", sqlite3_errmsg(w->db));
    }
    sqlite3_finalize(st);
}

static void walk_free(walk *w)
{
    for (size_t i = 0; i < w->n_jobs; i++)
        free(w->jobs[i].seen);
    free(w->jobs);
    free(w->orphans);
}

/* reads the journal: the jobs, then the partitions, then what is missing */
static void walk_run(walk *w)
{
    int v;
    w->r->version = (int)query_int(w->db, "PRAGMA user_version", -1);
    int64_t seq = query_int(w->db, "SELECT seq FROM sqlite_sequence WHERE name = 'jobs'", -1);
    walk_table(w, "jobs", jobs_sql, 3, &v, seq, job_row);
    w->r->checksums = w->crc;
    if (!w->fail)
        walk_table(w, "parts", parts_sql + !w->crc, 1, &v, -1, part_row);
    if (!w->fail)
        finish_jobs(w);
    if (seq > w->max_id)
        w->max_id = seq;
}

cuzk_err journal_check(const char *path, journal_report *r, journal_note_fn note, void *ctx, char *err)
{
    memset(r, 0, sizeof *r);
    walk w = {.r = r, .note = note, .ctx = ctx, .err = err};
    cuzk_err rc = open_damaged(&w.db, path, err);
    if (rc)
        return rc;
    integrity(&w);
    walk_run(&w);
    rc = w.fail;
    walk_free(&w);
    sqlite3_close(w.db);
    return rc;
}

static void unlink_db(const char *path)
{
    char p[1200];
    unlink(path);
    const char *sfx[] = {"-journal", "-wal", "-shm"};
    for (int i = 0; i < 3; i++) {
        snprintf(p, sizeof p, "%s%s", path, sfx[i]);
        unlink(p);
    }
}

static void fsync_dir_of(const char *path)
{
    char dir[1100];
    snprintf(dir, sizeof dir, "%s", path);
    char *slash = strrchr(dir, '/');
    if (slash)
        *(slash == dir ? slash + 1 : slash) = 0;
    else
        snprintf(dir, sizeof dir, ".");
    int fd = open(dir, O_RDONLY | O_DIRECTORY);
    if (fd >= 0) {
        fsync(fd);
        close(fd);
    }
}

cuzk_err journal_recover(const char *path, journal_report *r, journal_note_fn note, void *ctx, char *err)
{
    memset(r, 0, sizeof *r);
    walk w = {.r = r, .note = note, .ctx = ctx, .err = err};
    char tmp[1100], aside[1100], from[1200], to[1200];
    snprintf(tmp, sizeof tmp, "%s.recover", path);
    cuzk_err rc = open_damaged(&w.db, path, err);
    if (rc)
        return rc;
    unlink_db(tmp);
    char *msg = NULL;
    char setup[256];
    snprintf(setup, sizeof setup, "PRAGMA user_version = %d; BEGIN", SQ_VERSION);
    if (sqlite3_open_v2(tmp, &w.out, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE, NULL) != SQLITE_OK ||
        sq_crc_register(w.out) != SQLITE_OK ||
        sqlite3_exec(w.out, "PRAGMA synchronous = FULL;", NULL, NULL, &msg) != SQLITE_OK ||
        sqlite3_exec(w.out, sq_schema, NULL, NULL, &msg) != SQLITE_OK ||
        sqlite3_exec(w.out, setup, NULL, NULL, &msg) != SQLITE_OK ||
        sqlite3_prepare_v2(w.out,
                           "INSERT INTO jobs(" SQ_JOB_COLS ", crc) VALUES(?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10,"
                           " ?11, ?12, cuzk_crc64(?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12))",
                           -1, &w.ins_job, NULL) != SQLITE_OK ||
        sqlite3_prepare_v2(w.out,
                           "INSERT INTO parts(" SQ_PART_COLS ", crc, proof, public, proof_crc) VALUES(?1, ?2, ?3,"
                           " ?4, ?5, ?6, cuzk_crc64(?1, ?2, ?3, ?4, ?5, ?6), ?7, ?8,"
                           " CASE WHEN ?7 IS NULL THEN NULL ELSE cuzk_crc64(?1, ?2, ?7, ?8) END)",
                           -1, &w.ins_part, NULL) != SQLITE_OK) {
        rc = cuzk_errf(err, CUZK_ESTORE, "fresh journal %s: %s", tmp,
                       msg ? msg : w.out ? sqlite3_errmsg(w.out) : "cannot create");
        sqlite3_free(msg);
        goto fail;
    }
    walk_run(&w);
    if ((rc = w.fail))
        goto fail;
    /* ids are never given out twice: the sequence goes past every id the journal had */
    sqlite3_stmt *sq = NULL;
    if (sqlite3_prepare_v2(w.out, "UPDATE sqlite_sequence SET seq = max(seq, ?1) WHERE name = 'jobs'", -1, &sq,
                           NULL) != SQLITE_OK) {
        write_fail(&w, "id sequence");
        rc = w.fail;
        goto fail;
    }
    sqlite3_bind_int64(sq, 1, w.max_id);
    int ok = sqlite3_step(sq) == SQLITE_DONE;
    int changed = sqlite3_changes(w.out);
    sqlite3_finalize(sq);
    if (ok && !changed && w.max_id > 0) {
        sq = NULL;
        ok = sqlite3_prepare_v2(w.out, "INSERT INTO sqlite_sequence(name, seq) VALUES('jobs', ?1)", -1, &sq, NULL) ==
                 SQLITE_OK;
        if (ok) {
            sqlite3_bind_int64(sq, 1, w.max_id);
            ok = sqlite3_step(sq) == SQLITE_DONE;
        }
        sqlite3_finalize(sq);
    }
    if (!ok || sqlite3_exec(w.out, "COMMIT", NULL, NULL, NULL) != SQLITE_OK) {
        write_fail(&w, "commit");
        rc = w.fail;
        goto fail;
    }
    sqlite3_finalize(w.ins_job);
    sqlite3_finalize(w.ins_part);
    w.ins_job = w.ins_part = NULL;
    if (sqlite3_close(w.out) != SQLITE_OK) {
        rc = cuzk_errf(err, CUZK_ESTORE, "fresh journal %s: cannot close it", tmp);
        w.out = NULL;
        goto fail;
    }
    w.out = NULL;
    sqlite3_close(w.db);
    w.db = NULL;

    /* the damaged file and its companions aside, the fresh one in its place */
    time_t t = time(NULL);
    struct tm tmv;
    localtime_r(&t, &tmv);
    char stamp[32];
    strftime(stamp, sizeof stamp, "%Y%m%d-%H%M%S", &tmv);
    snprintf(aside, sizeof aside, "%s.damaged-%s", path, stamp);
    struct stat sb;
    if (!stat(aside, &sb)) {
        rc = cuzk_errf(err, CUZK_EIO, "%s exists already; run recover again in a second", aside);
        goto fail;
    }
    if (rename(path, aside)) {
        rc = cuzk_errf(err, CUZK_EIO, "cannot set %s aside as %s: %s", path, aside, strerror(errno));
        goto fail;
    }
    const char *sfx[] = {"-wal", "-journal"};
    for (int i = 0; i < 2; i++) {
        snprintf(from, sizeof from, "%s%s", path, sfx[i]);
        snprintf(to, sizeof to, "%s%s", aside, sfx[i]);
        if (!stat(from, &sb) && rename(from, to))
            fprintf(stderr, "journal recover: cannot move %s to %s: %s\n", from, to, strerror(errno));
    }
    snprintf(from, sizeof from, "%s-shm", path);
    unlink(from); /* derived from the -wal, rebuilt by whoever opens it */
    if (rename(tmp, path)) {
        rc = cuzk_errf(err, CUZK_EIO, "cannot move the fresh journal %s to %s: %s; %s", tmp, path, strerror(errno),
                       rename(aside, path) ? "the damaged journal is set aside" : "the journal is as it was");
        snprintf(from, sizeof from, "%s-wal", aside);
        snprintf(to, sizeof to, "%s-wal", path);
        if (!stat(from, &sb))
            rename(from, to);
        goto fail;
    }
    fsync_dir_of(path);
    snprintf(r->set_aside, sizeof r->set_aside, "%s", aside);
    walk_free(&w);
    return CUZK_OK;
fail:
    sqlite3_finalize(w.ins_job);
    sqlite3_finalize(w.ins_part);
    if (w.out) {
        sqlite3_exec(w.out, "ROLLBACK", NULL, NULL, NULL);
        sqlite3_close(w.out);
    }
    unlink_db(tmp);
    sqlite3_close(w.db);
    walk_free(&w);
    return rc;
}
