/* store_test.c - the SQLite journal: round trip of jobs, partitions and proofs,
 * idempotency keys, state updates, deletion, and survival of a process killed right
 * after an insert (a child _exit()s without closing; the parent reopens the file).
 * Integrity: rows changed behind the store's back (raw SQL that leaves the checksums as
 * they were) are reported and never returned or updated; journals of schema versions 1
 * and 2 get their checksums on first open; a file with a damaged page is refused. */
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "engine/engine.h"
#include "engine/store.h"
#include "engine/store_test_util.h"
#include "util/check.h"

static int64_t insert(store *st, const char *idem, uint32_t n, int *existed)
{
    return store_test_insert(st, KIND_SNAP, PRIO_HIGH, "/keys/snap.zkey", idem, n, 1234, 1, existed);
}


static int64_t raw_int(const char *path, const char *sql)
{
    sqlite3 *db = NULL;
    sqlite3_stmt *st = NULL;
    int64_t v = -1;
    if (sqlite3_open(path, &db) == SQLITE_OK && sqlite3_prepare_v2(db, sql, -1, &st, NULL) == SQLITE_OK &&
        sqlite3_step(st) == SQLITE_ROW)
        v = sqlite3_column_int64(st, 0);
    sqlite3_finalize(st);
    sqlite3_close(db);
    return v;
}

/* a row changed behind the store's back fails its checksum: reported, never returned, never
   updated (which would make it look valid) */
static void test_checksums(const char *dir)
{
    char path[256], err[CUZK_ERRLEN];
    snprintf(path, sizeof path, "%s/sums.db", dir);
    store *st;
    CHECK(!store_sqlite_open(&st, path, err), "open: %s", err);
    int existed;
    int64_t a = insert(st, "", 3, &existed), b = insert(st, "", 1, &existed);
    for (uint32_t i = 0; i < 3; i++)
        CHECK(!st->part_set_done(st, a, i, "{\"pi_a\":[\"12345\"]}", "[\"7\"]", err), "done: %s", err);
    CHECK(!st->job_set_state(st, a, JOB_DONE, 99, "", err), "job done: %s", err);
    seen s;
    memset(&s, 0, sizeof s);
    CHECK(!st->load_all(st, collect, &s, err), "load: %s", err);
    CHECK(s.n_jobs == 2 && !s.jobs[0].damaged && !s.jobs[1].damaged && !s.parts[0][0].damaged &&
              !s.parts[0][2].proof_damaged,
          "sound rows reported damaged");

    /* one digit of a proof changed: that proof only */
    char sql[256];
    snprintf(sql, sizeof sql, "UPDATE parts SET proof = replace(proof, '3', '4') WHERE job = %lld AND idx = 1",
             (long long)a);
    journal_sql(path, sql);
    char *proof = NULL, *pub = NULL;
    CHECK(st->part_get_proof(st, a, 1, &proof, &pub, err) == CUZK_EFORMAT && !proof && !pub &&
              strstr(err, "checksum"),
          "a changed proof must fail its checksum (got %s)", proof ? proof : err);
    CHECK(!st->part_get_proof(st, a, 0, &proof, &pub, err) && proof && !strcmp(proof, "{\"pi_a\":[\"12345\"]}"),
          "the other proofs are fine: %s", err);
    free(proof);
    free(pub);
    memset(&s, 0, sizeof s);
    CHECK(!st->load_all(st, collect, &s, err), "load: %s", err);
    CHECK(s.parts[0][1].proof_damaged && !s.parts[0][1].damaged && !s.parts[0][0].proof_damaged &&
              !s.jobs[0].damaged,
          "load_all: the changed proof is flagged, nothing else");
    /* the public signals are covered too */
    snprintf(sql, sizeof sql, "UPDATE parts SET public = '[\"8\"]' WHERE job = %lld AND idx = 2", (long long)a);
    journal_sql(path, sql);
    CHECK(st->part_get_proof(st, a, 2, &proof, &pub, err) == CUZK_EFORMAT, "changed public signals pass");
    /* back to QUEUED drops the damaged proof; proved again, it is sound */
    CHECK(!st->part_set_state(st, a, 1, PART_QUEUED, 0, err), "requeue: %s", err);
    CHECK(st->part_get_proof(st, a, 1, &proof, &pub, err) == CUZK_ENOTFOUND, "a queued partition has no proof");
    CHECK(!st->part_set_done(st, a, 1, "{\"pi_a\":[\"2\"]}", "[\"7\"]", err), "done again: %s", err);
    CHECK(!st->part_get_proof(st, a, 1, &proof, &pub, err), "proved again: %s", err);
    free(proof);
    free(pub);

    /* a partition record changed (its witness path): flagged, and not updated */
    snprintf(sql, sizeof sql, "UPDATE parts SET witness = '/evil.wtns' WHERE job = %lld AND idx = 0", (long long)a);
    journal_sql(path, sql);
    CHECK(st->part_set_state(st, a, 0, PART_QUEUED, 1, err) == CUZK_EFORMAT && strstr(err, "checksum"),
          "an update of a damaged partition record must fail: %s", err);
    CHECK(raw_int(path, "SELECT count(*) FROM parts WHERE proof IS NOT NULL AND idx = 0") == 1,
          "the refused update changed the row");
    memset(&s, 0, sizeof s);
    st->load_all(st, collect, &s, err);
    CHECK(s.parts[0][0].damaged, "load_all: the changed partition record is not flagged");

    /* a job record changed: flagged with a reason and no partitions, and not updated */
    snprintf(sql, sizeof sql, "UPDATE jobs SET zkey = '/evil.zkey' WHERE id = %lld", (long long)b);
    journal_sql(path, sql);
    memset(&s, 0, sizeof s);
    CHECK(!st->load_all(st, collect, &s, err), "load: %s", err);
    CHECK(s.n_jobs == 2 && s.jobs[1].damaged && s.jobs[1].id == b && strstr(s.jobs[1].error, "checksum") &&
              !s.jobs[0].damaged,
          "load_all: the changed job record is not flagged (%d %s)", s.jobs[1].damaged, s.jobs[1].error);
    CHECK(st->job_set_state(st, b, JOB_FAILED, 1, "x", err) == CUZK_EFORMAT, "damaged job updated: %s", err);
    CHECK(st->job_set_fetched(st, b, 5, err) == CUZK_EFORMAT, "damaged job's fetch time updated");
    CHECK(!st->job_set_fetched(st, a, 5, err) && !st->job_set_fetched(st, a, 6, err), "fetched: %s", err);
    /* a missing partition record makes the job damaged too */
    snprintf(sql, sizeof sql, "DELETE FROM parts WHERE job = %lld AND idx = 2", (long long)a);
    journal_sql(path, sql);
    memset(&s, 0, sizeof s);
    st->load_all(st, collect, &s, err);
    CHECK(s.jobs[0].damaged && strstr(s.jobs[0].error, "missing"), "a missing partition record: %s", s.jobs[0].error);
    /* updates of rows that are gone stay quiet, as they always were */
    CHECK(!st->job_set_state(st, 9999, JOB_DONE, 1, "", err) && !st->part_set_state(st, 9999, 0, 0, 0, err),
          "updates of a deleted job: %s", err);
    st->close(st);
}

/* journals written before the checksums get them on first open */
static void test_migration(const char *dir)
{
    static const char *v2 =
        "CREATE TABLE jobs(id INTEGER PRIMARY KEY AUTOINCREMENT, kind INTEGER NOT NULL, priority INTEGER NOT NULL,"
        " state INTEGER NOT NULL, zkey TEXT NOT NULL, idem TEXT UNIQUE, n_parts INTEGER NOT NULL,"
        " submitted_ms INTEGER NOT NULL, finished_ms INTEGER NOT NULL DEFAULT 0,"
        " fetched_ms INTEGER NOT NULL DEFAULT 0, error TEXT NOT NULL DEFAULT ''%s);"
        "CREATE TABLE parts(job INTEGER NOT NULL REFERENCES jobs(id) ON DELETE CASCADE, idx INTEGER NOT NULL,"
        " state INTEGER NOT NULL, attempts INTEGER NOT NULL DEFAULT 0, owned INTEGER NOT NULL DEFAULT 0,"
        " witness TEXT NOT NULL, proof TEXT, public TEXT, PRIMARY KEY(job, idx));"
        "INSERT INTO jobs(kind, priority, state, zkey, idem, n_parts, submitted_ms, finished_ms)"
        " VALUES(1, 2, 2, '/k.zkey', 'old-key', 2, 10, 20);"
        "INSERT INTO jobs(kind, priority, state, zkey, idem, n_parts, submitted_ms) VALUES(1, 2, 0, '/k.zkey', NULL, 1, 30);"
        "INSERT INTO parts VALUES(1, 0, 6, 1, 0, '/w0.wtns', '{\"pi_a\":1}', '[\"3\"]');"
        "INSERT INTO parts VALUES(1, 1, 6, 1, 0, '/w1.wtns', '{\"pi_a\":2}', '[\"3\"]');"
        "INSERT INTO parts VALUES(2, 0, 0, 0, 1, '/w2.wtns', NULL, NULL);"
        "PRAGMA user_version = %d;";
    for (int version = 1; version <= 2; version++) {
        char path[256], sql[2048], err[CUZK_ERRLEN];
        snprintf(path, sizeof path, "%s/v%d.db", dir, version);
        snprintf(sql, sizeof sql, v2, version == 2 ? ", circuit TEXT NOT NULL DEFAULT ''" : "", version);
        journal_sql(path, sql);
        store *st;
        cuzk_err e = store_sqlite_open(&st, path, err);
        CHECK(!e, "open a version %d journal: %s", version, err);
        if (e)
            continue;
        CHECK(raw_int(path, "PRAGMA user_version") == 3, "version %d: not migrated", version);
        CHECK(raw_int(path, "SELECT count(*) FROM jobs WHERE crc IS NULL") == 0 &&
                  raw_int(path, "SELECT count(*) FROM parts WHERE crc IS NULL") == 0 &&
                  raw_int(path, "SELECT count(*) FROM parts WHERE proof IS NOT NULL AND proof_crc IS NULL") == 0 &&
                  raw_int(path, "SELECT count(*) FROM parts WHERE proof IS NULL AND proof_crc IS NOT NULL") == 0,
              "version %d: rows without checksums after migration", version);
        seen s;
        memset(&s, 0, sizeof s);
        CHECK(!st->load_all(st, collect, &s, err), "load: %s", err);
        CHECK(s.n_jobs == 2 && !s.jobs[0].damaged && !s.jobs[1].damaged && s.jobs[0].state == JOB_DONE &&
                  !strcmp(s.jobs[0].idem, "old-key") && !strcmp(s.jobs[0].circuit, "") && !s.parts[0][1].damaged &&
                  !s.parts[0][1].proof_damaged && s.parts[1][0].owned == 1,
              "version %d: rows did not survive the migration", version);
        char *proof = NULL, *pub = NULL;
        CHECK(!st->part_get_proof(st, 1, 1, &proof, &pub, err) && proof && !strcmp(proof, "{\"pi_a\":2}"),
              "version %d: proof after migration: %s", version, err);
        free(proof);
        free(pub);
        CHECK(!st->job_set_state(st, 2, JOB_DONE, 50, "", err), "update after migration: %s", err);
        int existed;
        int64_t id = insert(st, "", 1, &existed);
        CHECK(id == 3, "new job after migration got id %lld", (long long)id);
        st->close(st);
        /* and the second open leaves it alone */
        CHECK(!store_sqlite_open(&st, path, err), "reopen: %s", err);
        memset(&s, 0, sizeof s);
        st->load_all(st, collect, &s, err);
        CHECK(s.n_jobs == 3 && !s.jobs[1].damaged && s.jobs[1].state == JOB_DONE, "version %d: reopen", version);
        st->close(st);
    }
}

/* a page whose b-tree header is damaged: SQLite's quick_check finds it and the store refuses */
static void test_quick_check(const char *dir)
{
    char path[256], err[CUZK_ERRLEN];
    snprintf(path, sizeof path, "%s/pages.db", dir);
    store *st;
    CHECK(!store_sqlite_open(&st, path, err), "open: %s", err);
    int existed;
    for (int i = 0; i < 4; i++)
        insert(st, "", 2, &existed);
    st->close(st);
    int64_t root = raw_int(path, "SELECT rootpage FROM sqlite_master WHERE name = 'parts'");
    int64_t psize = raw_int(path, "PRAGMA page_size");
    FILE *f = fopen(path, "r+b");
    CHECK(f && root > 1 && psize > 0, "cannot damage %s", path);
    if (!f)
        return;
    /* the page's cell count (bytes 3-4 of its header) beyond what a page can hold */
    fseek(f, (long)((root - 1) * psize + 3), SEEK_SET);
    fputc(0xff, f);
    fputc(0xff, f);
    fclose(f);
    cuzk_err e = store_sqlite_open(&st, path, err);
    CHECK(e == CUZK_EFORMAT && strstr(err, "damaged"), "a damaged page must be refused (%d: %s)", e, err);
    if (!e)
        st->close(st);
}

int main(void)
{
    char dir[] = "/tmp/cuzk-store-XXXXXX";
    if (!mkdtemp(dir)) {
        perror("mkdtemp");
        return 1;
    }
    char path[256], err[CUZK_ERRLEN];
    snprintf(path, sizeof path, "%s/journal.db", dir);

    /* a child inserts and dies without closing the database (like kill -9) */
    pid_t pid = fork();
    if (pid == 0) {
        store *st;
        if (store_sqlite_open(&st, path, err))
            _exit(2);
        int existed;
        insert(st, "key-a", 3, &existed);
        _exit(failures ? 1 : 0);
    }
    int status;
    waitpid(pid, &status, 0);
    CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0, "child insert failed");

    store *st;
    cuzk_err e = store_sqlite_open(&st, path, err);
    CHECK(!e, "reopen: %s", err);
    if (e)
        return 1;
    seen s;
    memset(&s, 0, sizeof s);
    e = st->load_all(st, collect, &s, err);
    CHECK(!e, "load: %s", err);
    CHECK(s.n_jobs == 1, "jobs after crash: %d, expected 1", s.n_jobs);
    int64_t id = s.jobs[0].id;
    CHECK(s.jobs[0].kind == KIND_SNAP && s.jobs[0].priority == PRIO_HIGH && s.jobs[0].n_parts == 3 &&
              !strcmp(s.jobs[0].zkey, "/keys/snap.zkey") && !strcmp(s.jobs[0].idem, "key-a") &&
              s.jobs[0].submitted_ms == 1234,
          "job fields did not round-trip");
    CHECK(!strcmp(s.parts[0][2].witness, "/w/2.wtns") && s.parts[0][1].owned == 1 && s.parts[0][2].owned == 0,
          "partition fields did not round-trip");

    /* idempotency: same key returns the same id, inserts nothing */
    int existed = 0;
    int64_t again = insert(st, "key-a", 3, &existed);
    CHECK(existed && again == id, "idempotent insert gave %lld (existed %d), expected %lld", (long long)again,
          existed, (long long)id);
    int64_t other = insert(st, "", 2, &existed);
    CHECK(!existed && other != id, "second job should be new");
    int64_t third = insert(st, "", 1, &existed);
    CHECK(!existed && third != other, "jobs without a key are never merged");

    /* states and proofs */
    CHECK(!st->part_set_state(st, id, 0, PART_QUEUED, 2, err), "part state: %s", err);
    CHECK(!st->part_set_done(st, id, 1, "{\"pi_a\":1}", "[\"7\"]", err), "part done: %s", err);
    char *proof = NULL, *pub = NULL;
    CHECK(!st->part_get_proof(st, id, 1, &proof, &pub, err), "get proof: %s", err);
    CHECK(proof && pub && !strcmp(proof, "{\"pi_a\":1}") && !strcmp(pub, "[\"7\"]"), "proof text changed");
    free(proof);
    free(pub);
    CHECK(st->part_get_proof(st, id, 0, &proof, &pub, err) == CUZK_ENOTFOUND, "missing proof should be ENOTFOUND");
    CHECK(!st->job_set_state(st, id, JOB_DONE, 5678, "", err), "job state: %s", err);
    CHECK(!st->job_set_fetched(st, id, 9000, err), "fetched: %s", err);
    CHECK(!st->job_set_fetched(st, id, 9999, err), "fetched again: %s", err);
    CHECK(!st->job_set_state(st, other, JOB_FAILED, 42, "partition 1: proof did not verify", err), "%s", err);
    st->close(st);

    /* reopen: everything persisted */
    e = store_sqlite_open(&st, path, err);
    CHECK(!e, "reopen 2: %s", err);
    memset(&s, 0, sizeof s);
    st->load_all(st, collect, &s, err);
    CHECK(s.n_jobs == 3, "jobs %d, expected 3", s.n_jobs);
    CHECK(s.jobs[0].state == JOB_DONE && s.jobs[0].finished_ms == 5678 && s.jobs[0].fetched_ms == 9000,
          "job state/fetched did not persist (state %d fin %lld fetched %lld)", s.jobs[0].state,
          (long long)s.jobs[0].finished_ms, (long long)s.jobs[0].fetched_ms);
    CHECK(s.parts[0][1].state == PART_DONE && s.parts[0][0].attempts == 2, "part updates did not persist");
    CHECK(s.jobs[1].state == JOB_FAILED && !strcmp(s.jobs[1].error, "partition 1: proof did not verify"),
          "error text did not persist");

    /* delete */
    CHECK(!st->job_delete(st, id, err), "delete: %s", err);
    memset(&s, 0, sizeof s);
    st->load_all(st, collect, &s, err);
    CHECK(s.n_jobs == 2 && s.jobs[0].id == other, "delete left %d jobs", s.n_jobs);
    CHECK(st->part_get_proof(st, id, 1, &proof, &pub, err) == CUZK_ENOTFOUND, "deleted proof still there");
    /* the idempotency key is free again after deletion */
    int64_t fresh = insert(st, "key-a", 1, &existed);
    CHECK(!existed && fresh != id, "key should be reusable after delete");
    st->close(st);

    /* an unwritable path is an error with a message, not a crash */
    e = store_sqlite_open(&st, "/nonexistent-dir/x/journal.db", err);
    CHECK(e == CUZK_ESTORE && strstr(err, "journal"), "bad path: %d %s", e, err);

    test_checksums(dir);
    test_migration(dir);
    test_quick_check(dir);

    char cmd[300];
    snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
    if (system(cmd) != 0)
        fprintf(stderr, "could not remove %s\n", dir);
    if (failures) {
        fprintf(stderr, "store_test: %d failure(s)\n", failures);
        return 1;
    }
    printf("store_test: ok\n");
    return 0;
}
