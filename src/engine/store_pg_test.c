/* store_pg_test.c - the PostgreSQL store (store_pg.c) against a real server that
 * tests/pg_server.sh starts in a temporary folder (skipped, saying so, when PostgreSQL is not
 * installed): the round trip of jobs, partitions and proofs, idempotency keys, state
 * updates, deletion; rows changed behind the store's back (raw SQL through a connection of
 * the test's own) reported and never returned or updated; a schema newer than the binary
 * refused and a version 1 database migrated; a second daemon on an owned store refused; a
 * server restart under an open store (the next call reconnects); an unreachable server
 * refused without echoing the password of its URL. The fleet, two "hosts" on one store:
 * claim order (priority, then the host's keys, then age), leases that lapse and are taken
 * over with the next attempt, the old owner's renewal and late commit refused, a commit
 * without the lease or of a canceled job refused, release, the last commit marking the job
 * done, notifications, heartbeats, and one job when both insert the same idempotency key at
 * once. */
#include <libpq-fe.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "engine/engine.h"
#include "engine/store.h"
#include "engine/store_test_util.h"
#include "util/check.h"
#include "util/log.h"

static int64_t insert(store *st, const char *idem, uint32_t n, int *existed)
{
    return store_test_insert(st, KIND_SNAP, PRIO_HIGH, "/keys/snap.zkey", idem, n, 1234, 1, existed);
}

static const char *url;

/* runs SQL through a connection of the test's own, as a person (or a damaged disk) would */
static void raw(const char *sql)
{
    PGconn *c = PQconnectdb(url);
    PGresult *r = PQexec(c, sql);
    CHECK(PQresultStatus(r) == PGRES_COMMAND_OK || PQresultStatus(r) == PGRES_TUPLES_OK, "raw SQL '%.60s': %s", sql,
          PQerrorMessage(c));
    PQclear(r);
    PQfinish(c);
}

static long long raw_int(const char *sql)
{
    PGconn *c = PQconnectdb(url);
    PGresult *r = PQexec(c, sql);
    long long v = PQresultStatus(r) == PGRES_TUPLES_OK && PQntuples(r) == 1 ? atoll(PQgetvalue(r, 0, 0)) : -1;
    PQclear(r);
    PQfinish(c);
    return v;
}

static void test_round_trip(void)
{
    char err[CUZK_ERRLEN];
    store *st;
    CHECK(!store_pg_open(&st, url, 0, err), "open: %s", err);
    if (failures)
        return;
    CHECK(!strcmp(st->name, "postgres"), "name %s", st->name);
    int existed = 0;
    int64_t id = insert(st, "key-a", 3, &existed);
    CHECK(!existed && id > 0, "first insert");
    int64_t again = insert(st, "key-a", 3, &existed);
    CHECK(existed && again == id, "idempotent insert gave %lld (existed %d), expected %lld", (long long)again,
          existed, (long long)id);
    CHECK(raw_int("SELECT count(*) FROM cuzk_jobs") == 1 && raw_int("SELECT count(*) FROM cuzk_parts") == 3,
          "the repeated key inserted rows");
    int64_t other = insert(st, "", 2, &existed);
    int64_t third = insert(st, "", 1, &existed);
    CHECK(!existed && other != id && third != other, "jobs without a key are never merged");

    CHECK(!st->part_set_state(st, id, 0, PART_QUEUED, 2, err), "part state: %s", err);
    CHECK(!st->part_set_done(st, id, 1, "{\"pi_a\":1}", "[\"7\"]", err), "part done: %s", err);
    char *proof = NULL, *pub = NULL;
    CHECK(!st->part_get_proof(st, id, 1, &proof, &pub, err) && proof && pub && !strcmp(proof, "{\"pi_a\":1}") &&
              !strcmp(pub, "[\"7\"]"),
          "proof round trip: %s", err);
    free(proof);
    free(pub);
    CHECK(st->part_get_proof(st, id, 0, &proof, &pub, err) == CUZK_ENOTFOUND, "missing proof should be ENOTFOUND");
    CHECK(!st->job_set_state(st, id, JOB_DONE, 5678, "", err), "job state: %s", err);
    CHECK(!st->job_set_fetched(st, id, 9000, err) && !st->job_set_fetched(st, id, 9999, err), "fetched: %s", err);
    CHECK(!st->job_set_state(st, other, JOB_FAILED, 42, "partition 1: proof did not verify", err), "%s", err);
    /* updates of rows that are gone stay quiet, as in the SQLite journal */
    CHECK(!st->job_set_state(st, 9999, JOB_DONE, 1, "", err) && !st->part_set_state(st, 9999, 0, 0, 0, err) &&
              !st->job_set_fetched(st, 9999, 1, err),
          "updates of a missing job: %s", err);
    st->close(st);

    CHECK(!store_pg_open(&st, url, 0, err), "reopen: %s", err);
    if (failures)
        return;
    seen s;
    memset(&s, 0, sizeof s);
    CHECK(!st->load_all(st, collect, &s, err), "load: %s", err);
    CHECK(s.n_jobs == 3 && s.jobs[0].id == id, "jobs %d, expected 3", s.n_jobs);
    CHECK(s.jobs[0].kind == KIND_SNAP && s.jobs[0].priority == PRIO_HIGH && s.jobs[0].n_parts == 3 &&
              !strcmp(s.jobs[0].zkey, "/keys/snap.zkey") && !strcmp(s.jobs[0].idem, "key-a") &&
              s.jobs[0].submitted_ms == 1234 && !s.jobs[0].damaged,
          "job fields did not round-trip");
    CHECK(s.jobs[0].state == JOB_DONE && s.jobs[0].finished_ms == 5678 && s.jobs[0].fetched_ms == 9000,
          "job state/fetched did not persist (state %d fin %lld fetched %lld)", s.jobs[0].state,
          (long long)s.jobs[0].finished_ms, (long long)s.jobs[0].fetched_ms);
    CHECK(!strcmp(s.parts[0][2].witness, "/w/2.wtns") && s.parts[0][1].owned == 1 && s.parts[0][2].owned == 0 &&
              s.parts[0][1].state == PART_DONE && s.parts[0][0].attempts == 2 && !s.parts[0][1].proof_damaged &&
              !s.parts[0][1].damaged,
          "partition fields did not round-trip");
    CHECK(s.jobs[1].state == JOB_FAILED && !strcmp(s.jobs[1].error, "partition 1: proof did not verify") &&
              !strcmp(s.jobs[1].idem, ""),
          "error text did not persist");

    CHECK(!st->job_delete(st, id, err), "delete: %s", err);
    CHECK(st->part_get_proof(st, id, 1, &proof, &pub, err) == CUZK_ENOTFOUND, "deleted proof still there");
    CHECK(raw_int("SELECT count(*) FROM cuzk_parts") == 3, "the deleted job's partitions remain");
    int64_t fresh = insert(st, "key-a", 1, &existed);
    CHECK(!existed && fresh != id, "key should be reusable after delete");
    st->close(st);
}

/* a row changed behind the store's back fails its checksum: reported, never returned, never
   updated */
static void test_checksums(void)
{
    char err[CUZK_ERRLEN], sql[256];
    store *st;
    CHECK(!store_pg_open(&st, url, 0, err), "open: %s", err);
    if (failures)
        return;
    raw("DELETE FROM cuzk_jobs");
    int existed;
    int64_t a = insert(st, "", 3, &existed), b = insert(st, "", 1, &existed);
    for (uint32_t i = 0; i < 3; i++)
        CHECK(!st->part_set_done(st, a, i, "{\"pi_a\":[\"12345\"]}", "[\"7\"]", err), "done: %s", err);
    CHECK(!st->job_set_state(st, a, JOB_DONE, 99, "", err), "job done: %s", err);

    snprintf(sql, sizeof sql, "UPDATE cuzk_parts SET proof = replace(proof, '3', '4') WHERE job = %lld AND idx = 1",
             (long long)a);
    raw(sql);
    char *proof = NULL, *pub = NULL;
    CHECK(st->part_get_proof(st, a, 1, &proof, &pub, err) == CUZK_EFORMAT && !proof && !pub &&
              strstr(err, "checksum"),
          "a changed proof must fail its checksum (got %s)", proof ? proof : err);
    CHECK(!st->part_get_proof(st, a, 0, &proof, &pub, err) && proof, "the other proofs are fine: %s", err);
    free(proof);
    free(pub);
    snprintf(sql, sizeof sql, "UPDATE cuzk_parts SET public = '[\"8\"]' WHERE job = %lld AND idx = 2", (long long)a);
    raw(sql);
    CHECK(st->part_get_proof(st, a, 2, &proof, &pub, err) == CUZK_EFORMAT, "changed public signals pass");
    seen s;
    memset(&s, 0, sizeof s);
    CHECK(!st->load_all(st, collect, &s, err), "load: %s", err);
    CHECK(s.n_jobs == 2 && s.parts[0][1].proof_damaged && s.parts[0][2].proof_damaged &&
              !s.parts[0][0].proof_damaged && !s.parts[0][1].damaged && !s.jobs[0].damaged,
          "load_all: the changed proofs are flagged, nothing else");
    /* back to QUEUED drops the damaged proof; proved again, it is sound */
    CHECK(!st->part_set_state(st, a, 1, PART_QUEUED, 0, err), "requeue: %s", err);
    CHECK(st->part_get_proof(st, a, 1, &proof, &pub, err) == CUZK_ENOTFOUND, "a queued partition has no proof");
    CHECK(!st->part_set_done(st, a, 1, "{\"pi_a\":[\"2\"]}", "[\"7\"]", err), "done again: %s", err);
    CHECK(!st->part_get_proof(st, a, 1, &proof, &pub, err), "proved again: %s", err);
    free(proof);
    free(pub);

    /* a partition record changed: flagged, and not updated */
    snprintf(sql, sizeof sql, "UPDATE cuzk_parts SET witness = '/evil.wtns' WHERE job = %lld AND idx = 0",
             (long long)a);
    raw(sql);
    CHECK(st->part_set_state(st, a, 0, PART_QUEUED, 1, err) == CUZK_EFORMAT && strstr(err, "checksum"),
          "an update of a damaged partition record must fail: %s", err);
    CHECK(st->part_set_done(st, a, 0, "{}", "[]", err) == CUZK_EFORMAT, "a proof stored on a damaged record");
    snprintf(sql, sizeof sql, "SELECT count(*) FROM cuzk_parts WHERE proof IS NOT NULL AND job = %lld AND idx = 0",
             (long long)a);
    CHECK(raw_int(sql) == 1, "the refused update changed the row");
    memset(&s, 0, sizeof s);
    st->load_all(st, collect, &s, err);
    CHECK(s.parts[0][0].damaged, "load_all: the changed partition record is not flagged");

    /* a job record changed: flagged with a reason and no partitions, and not updated */
    snprintf(sql, sizeof sql, "UPDATE cuzk_jobs SET zkey = '/evil.zkey' WHERE id = %lld", (long long)b);
    raw(sql);
    memset(&s, 0, sizeof s);
    CHECK(!st->load_all(st, collect, &s, err), "load: %s", err);
    CHECK(s.n_jobs == 2 && s.jobs[1].damaged && s.jobs[1].id == b && strstr(s.jobs[1].error, "checksum") &&
              !s.jobs[0].damaged,
          "load_all: the changed job record is not flagged (%d %s)", s.jobs[1].damaged, s.jobs[1].error);
    CHECK(st->job_set_state(st, b, JOB_FAILED, 1, "x", err) == CUZK_EFORMAT, "damaged job updated: %s", err);
    CHECK(st->job_set_fetched(st, b, 5, err) == CUZK_EFORMAT, "damaged job's fetch time updated");
    /* a missing partition record makes the job damaged too */
    snprintf(sql, sizeof sql, "DELETE FROM cuzk_parts WHERE job = %lld AND idx = 2", (long long)a);
    raw(sql);
    memset(&s, 0, sizeof s);
    st->load_all(st, collect, &s, err);
    CHECK(s.jobs[0].damaged && strstr(s.jobs[0].error, "missing"), "a missing partition record: %s", s.jobs[0].error);
    raw("DELETE FROM cuzk_jobs");
    st->close(st);
}

/* one daemon per store; a newer schema refused; the version recorded */
static void test_owner_and_schema(void)
{
    char err[CUZK_ERRLEN];
    store *st, *st2 = NULL;
    CHECK(!store_pg_open(&st, url, 0, err), "open: %s", err);
    if (failures)
        return;
    CHECK(store_pg_open(&st2, url, 0, err) == CUZK_ESTORE && !st2 && strstr(err, "another cuzk daemon"),
          "a second daemon on the store must be refused: %s", err);
    st->close(st);
    /* the closed session's lock is released by its server process a moment later: reopening
     * at once, again and again, must never be refused */
    for (int i = 0; i < 20 && !failures; i++) {
        st = NULL;
        CHECK(!store_pg_open(&st, url, 0, err), "open %d after the last closed: %s", i, err);
        if (st)
            st->close(st);
    }
    CHECK(raw_int("SELECT max(version) FROM cuzk_schema_versions") == 2, "schema version not recorded");
    raw("INSERT INTO cuzk_schema_versions VALUES(99, 0, 'cuzk from the future')");
    st = NULL;
    CHECK(store_pg_open(&st, url, 0, err) == CUZK_ESTORE && !st && strstr(err, "version 99") && strstr(err, "newer"),
          "a newer schema must be refused: %s", err);
    raw("DELETE FROM cuzk_schema_versions WHERE version = 99");
    /* a fresh schema (another database) is created from nothing */
    raw("DROP TABLE cuzk_parts; DROP TABLE cuzk_jobs; DROP TABLE cuzk_schema_versions; DROP TABLE cuzk_hosts");
    CHECK(!store_pg_open(&st, url, 0, err), "open on an empty database: %s", err);
    if (st)
        st->close(st);
    CHECK(raw_int("SELECT count(*) FROM cuzk_schema_versions") == 2, "schema not created again");

    /* a version 1 database (one host, no leases) is migrated, its rows kept */
    raw("DROP TABLE cuzk_parts; DROP TABLE cuzk_jobs; DROP TABLE cuzk_schema_versions; DROP TABLE cuzk_hosts");
    raw("CREATE TABLE cuzk_schema_versions(version integer PRIMARY KEY, applied_ms bigint NOT NULL,"
        " by_cuzk text NOT NULL);"
        "INSERT INTO cuzk_schema_versions VALUES(1, 0, 'cuzk');"
        "CREATE TABLE cuzk_jobs(id bigserial PRIMARY KEY, kind integer NOT NULL, priority integer NOT NULL,"
        " state integer NOT NULL, zkey text NOT NULL, idem text UNIQUE, n_parts bigint NOT NULL,"
        " submitted_ms bigint NOT NULL, finished_ms bigint NOT NULL DEFAULT 0, fetched_ms bigint NOT NULL DEFAULT 0,"
        " error text NOT NULL DEFAULT '', circuit text NOT NULL DEFAULT '', crc bigint);"
        "CREATE TABLE cuzk_parts(job bigint NOT NULL REFERENCES cuzk_jobs(id) ON DELETE CASCADE, idx integer NOT NULL,"
        " state integer NOT NULL, attempts integer NOT NULL DEFAULT 0, owned integer NOT NULL DEFAULT 0,"
        " witness text NOT NULL, proof text, public text, crc bigint, proof_crc bigint, PRIMARY KEY(job, idx))");
    CHECK(!store_pg_open(&st, url, 0, err), "open a version 1 database: %s", err);
    int existed;
    int64_t id = st ? insert(st, "v1", 2, &existed) : 0;
    if (st)
        st->close(st);
    CHECK(raw_int("SELECT max(version) FROM cuzk_schema_versions") == 2 &&
              raw_int("SELECT count(*) FROM cuzk_parts WHERE lease_attempt = 0") == 2 &&
              raw_int("SELECT count(*) FROM cuzk_hosts") == 0,
          "version 1 not migrated to 2");
    CHECK(!store_pg_open(&st, url, 1, err), "reopen after the migration: %s", err);
    seen s;
    memset(&s, 0, sizeof s);
    if (st) {
        CHECK(!st->load_all(st, collect, &s, err) && s.n_jobs == 1 && s.jobs[0].id == id && !s.jobs[0].damaged,
              "rows after the migration: %s", err);
        st->close(st);
    }
    raw("DELETE FROM cuzk_jobs");
}

/* the server restarts under an open store: the next calls reconnect, nothing is lost */
static void test_restart(const char *state)
{
    char err[CUZK_ERRLEN], cmd[512];
    store *st;
    CHECK(!store_pg_open(&st, url, 0, err), "open: %s", err);
    if (failures)
        return;
    int existed;
    int64_t id = insert(st, "before-restart", 2, &existed);
    snprintf(cmd, sizeof cmd, "tests/pg_server.sh restart %s", state);
    CHECK(system(cmd) == 0, "restart the server");
    CHECK(!st->part_set_done(st, id, 0, "{\"pi_a\":3}", "[]", err), "write after the restart: %s", err);
    int64_t after = insert(st, "after-restart", 1, &existed);
    CHECK(!existed && after > id, "insert after the restart");
    CHECK(insert(st, "before-restart", 2, &existed) == id && existed, "the key survives the restart");
    seen s;
    memset(&s, 0, sizeof s);
    CHECK(!st->load_all(st, collect, &s, err), "load: %s", err);
    CHECK(s.n_jobs == 2 && s.parts[0][0].state == PART_DONE && !s.parts[0][0].proof_damaged, "after the restart");
    /* the owner lock was taken again with the new session */
    store *st2 = NULL;
    CHECK(store_pg_open(&st2, url, 0, err) == CUZK_ESTORE && strstr(err, "another cuzk daemon"),
          "the lock must hold after a reconnection: %s", err);
    st->close(st);
}

static int64_t insert_prio(store *st, const char *idem, uint32_t n, int prio, const char *zkey)
{
    /* submitted now: the claim's fairness rule counts how long a partition has waited */
    return store_test_insert(st, KIND_SNAP, prio, zkey, idem, n, (int64_t)time(NULL) * 1000, 0, NULL);
}

typedef struct racer {
    store *st;
    int64_t id;
    int existed;
} racer;

static int64_t now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static void *race_insert(void *arg)
{
    racer *r = arg;
    store_job job;
    memset(&job, 0, sizeof job);
    job.n_parts = 1;
    snprintf(job.zkey, sizeof job.zkey, "/k.zkey");
    snprintf(job.idem, sizeof job.idem, "same-key");
    store_part part;
    memset(&part, 0, sizeof part);
    snprintf(part.witness, sizeof part.witness, "/w.wtns");
    char err[CUZK_ERRLEN];
    if (!r->st->job_insert(r->st, &job, &part, &r->existed, err))
        r->id = job.id;
    return NULL;
}

/* two hosts on one store: claim order, leases, fencing, release, the last commit, hosts,
   notifications, one job per idempotency key */
static void test_fleet(void)
{
    char err[CUZK_ERRLEN];
    store *a = NULL, *b = NULL;
    CHECK(!store_pg_open(&a, url, 1, err) && !store_pg_open(&b, url, 1, err), "two shared opens: %s", err);
    if (!a || !b)
        goto out;
    CHECK(a->claim && a->commit && a->renew && a->release && a->wait_change, "the fleet functions are set");
    raw("DELETE FROM cuzk_jobs");
    int64_t low = insert_prio(a, "", 2, PRIO_LOW, "/k1.zkey");
    int64_t crit = insert_prio(a, "", 1, PRIO_CRITICAL, "/k1.zkey");
    int64_t other = insert_prio(a, "", 1, PRIO_LOW, "/k2.zkey");
    store_claim c1, c2, c3, c4;
    int got = 0;
    /* the critical job first, whatever keys are held */
    CHECK(!a->claim(a, "A", NULL, 0, 60000, 60000, &c1, &got, err) && got && c1.job == crit && c1.attempt == 1,
          "the critical partition goes first (got j-%lld): %s", (long long)c1.job, err);
    /* among equals, a partition whose key the host holds */
    const char *k2[] = {"/k2.zkey"};
    CHECK(!b->claim(b, "B", k2, 1, 60000, 60000, &c2, &got, err) && got && c2.job == other,
          "a host's own key first (got j-%lld)", (long long)c2.job);
    /* ... unless one has waited longer than fair_ms (here 0) */
    CHECK(!b->claim(b, "B", k2, 1, 60000, 0, &c3, &got, err) && got && c3.job == low && c3.index == 0,
          "a partition that waited long enough is not starved (got j-%lld)", (long long)c3.job);
    /* A commits its claim: the job's only partition: the job is done */
    int refused = -1, done = -1;
    CHECK(!a->commit(a, "A", &c1, "{\"pi_a\":1}", "[]", &refused, &done, err) && !refused && done,
          "commit under the lease: %s (refused %d done %d)", err, refused, done);
    CHECK(raw_int("SELECT state FROM cuzk_jobs WHERE id = (SELECT max(id) - 1 FROM cuzk_jobs)") == JOB_DONE,
          "the last commit marks the job done");
    /* twice: refused (the lease went with the commit) */
    CHECK(!a->commit(a, "A", &c1, "{\"pi_a\":2}", "[]", &refused, &done, err) && refused,
          "a second commit of the same claim must be refused");
    /* another host's claim cannot be committed */
    CHECK(!a->commit(a, "A", &c2, "{\"pi_a\":3}", "[]", &refused, &done, err) && refused,
          "a commit without the lease must be refused");
    /* a short lease lapses; B takes the partition over with the next attempt; A is fenced off */
    /* the lease is long enough that a loaded machine still asks again inside it, and the wait
     * for it to lapse is counted from before the claim */
    const int64_t short_ms = 1500;
    int64_t t_claim = now_ms();
    CHECK(!a->claim(a, "A", NULL, 0, short_ms, 60000, &c4, &got, err) && got && c4.job == low && c4.index == 1,
          "claim with a short lease: j-%lld/%u", (long long)c4.job, c4.index);
    store_claim none;
    CHECK(!b->claim(b, "B", NULL, 0, 60000, 60000, &none, &got, err) && !got, "a held lease is not claimable");
    while (now_ms() - t_claim < short_ms + 200)
        usleep(50000);
    store_claim c5;
    CHECK(!b->claim(b, "B", NULL, 0, 60000, 60000, &c5, &got, err) && got && c5.job == low && c5.index == 1 &&
              c5.attempt == c4.attempt + 1,
          "an expired lease is claimed again with the next attempt (%d after %d)", c5.attempt, c4.attempt);
    int lost = 0;
    CHECK(!a->renew(a, "A", &c4, 1, 60000, &lost, err) && lost, "the old owner's renewal finds the lease lost");
    CHECK(!a->commit(a, "A", &c4, "{\"pi_a\":4}", "[]", &refused, &done, err) && refused,
          "the old owner's late commit must be refused");
    CHECK(!b->renew(b, "B", &c5, 1, 60000, &lost, err) && !lost, "the new owner renews");
    CHECK(!b->commit(b, "B", &c5, "{\"pi_a\":5}", "[]", &refused, &done, err) && !refused && !done,
          "the new owner commits (the job has a partition left)");
    /* release: claimable at once */
    CHECK(!b->release(b, "B", &c3, err), "release: %s", err);
    CHECK(!a->claim(a, "A", NULL, 0, 60000, 60000, &c1, &got, err) && got && c1.job == low && c1.index == 0 &&
              c1.attempt == 2,
          "a released partition is claimable at once");
    CHECK(!a->commit(a, "A", &c1, "{\"pi_a\":6}", "[]", &refused, &done, err) && !refused && done,
          "the last partition completes the job");
    CHECK(raw_int("SELECT count(*) FROM cuzk_parts WHERE state = 6 AND lease_host IS NULL") == 3 &&
              raw_int("SELECT count(*) FROM cuzk_parts WHERE proof LIKE '%4%'") == 0,
          "the refused commits left nothing behind");
    char *proof = NULL, *pub = NULL;
    CHECK(!b->part_get_proof(b, low, 1, &proof, &pub, err) && proof && !strcmp(proof, "{\"pi_a\":5}"),
          "the proof is the new owner's: %s", proof ? proof : err);
    free(proof);
    free(pub);
    /* a canceled job's partition cannot be committed */
    int64_t cj = insert_prio(a, "", 1, PRIO_NORMAL, "/k1.zkey");
    CHECK(!b->claim(b, "B", NULL, 0, 60000, 60000, &c2, &got, err) && got && c2.job == cj, "claim: %s", err);
    CHECK(!a->job_set_state(a, cj, JOB_CANCELED, 5, "canceled by request", err), "cancel: %s", err);
    CHECK(!b->commit(b, "B", &c2, "{}", "[]", &refused, &done, err) && refused, "a canceled job's commit");
    /* notifications: B hears about A's submission */
    /* drain until quiet: the cancel's notification may still be on its way to B */
    while (b->wait_change(b, 300))
        ;
    insert_prio(a, "", 1, PRIO_NORMAL, "/k1.zkey");
    CHECK(b->wait_change(b, 2000) == 1, "a submission on A must wake B");
    CHECK(b->wait_change(b, 100) == 0, "no change, no wake-up");
    /* the same idempotency key on two hosts at once: one job */
    racer ra = {a, 0, 0}, rb = {b, 0, 0};
    pthread_t ta, tb;
    pthread_create(&ta, NULL, race_insert, &ra);
    pthread_create(&tb, NULL, race_insert, &rb);
    pthread_join(ta, NULL);
    pthread_join(tb, NULL);
    CHECK(ra.id > 0 && ra.id == rb.id && ra.existed + rb.existed == 1 &&
              raw_int("SELECT count(*) FROM cuzk_jobs WHERE idem = 'same-key'") == 1,
          "one job per key across hosts (%lld/%d, %lld/%d)", (long long)ra.id, ra.existed, (long long)rb.id,
          rb.existed);
    /* hosts */
    store_host h;
    memset(&h, 0, sizeof h);
    snprintf(h.id, sizeof h.id, "A");
    snprintf(h.address, sizeof h.address, "127.0.0.1:1");
    snprintf(h.keys, sizeof h.keys, "/k1.zkey");
    h.devices = 2;
    h.leases = 1;
    h.busy = 0.5;
    CHECK(!a->host_beat(a, &h, err) && !a->host_beat(a, &h, err), "heartbeat: %s", err);
    store_host list[4];
    int n = 0;
    CHECK(!b->host_list(b, 60000, list, 4, &n, err) && n == 1 && !strcmp(list[0].id, "A") && list[0].devices == 2 &&
              !strcmp(list[0].keys, "/k1.zkey") && list[0].busy > 0.49 && list[0].age_ms < 5000,
          "host list: %d %s", n, err);
    /* load_some: new jobs and the listed ones */
    seen sn;
    memset(&sn, 0, sizeof sn);
    CHECK(!b->load_some(b, other, &low, 1, collect, &sn, err) && sn.n_jobs >= 3 && sn.jobs[0].id == low,
          "load_some: %d jobs: %s", sn.n_jobs, err);
    raw("DELETE FROM cuzk_jobs; DELETE FROM cuzk_hosts");
out:
    if (a)
        a->close(a);
    if (b)
        b->close(b);
}

int main(void)
{
    log_threshold = LOG_ERROR; /* the reconnection's warnings are expected */
    char state[] = "/tmp/cuzk-store-pg-XXXXXX";
    if (!mkdtemp(state)) {
        perror("mkdtemp");
        return 1;
    }
    char cmd[512], line[1024] = "";
    snprintf(cmd, sizeof cmd, "tests/pg_server.sh start %s", state);
    FILE *f = popen(cmd, "r");
    if (!f || !fgets(line, sizeof line, f)) {
        if (f)
            pclose(f);
        fprintf(stderr, "store_pg_test: could not start PostgreSQL (tests/pg_server.sh)\n");
        return 1;
    }
    int rc = pclose(f);
    line[strcspn(line, "\n")] = 0;
    if (WIFEXITED(rc) && WEXITSTATUS(rc) == 77) {
        printf("store_pg_test: %s\n", line);
        rmdir(state);
        return 0;
    }
    CHECK(rc == 0 && !strncmp(line, "postgresql://", 13), "pg_server.sh start: %s", line);
    url = line;
    if (!failures) {
        test_round_trip();
        test_checksums();
        test_owner_and_schema();
        test_fleet();
        test_restart(state);
        /* an unreachable server: an error that names the cause, never the password */
        char err[CUZK_ERRLEN];
        store *st = NULL;
        cuzk_err e = store_pg_open(&st, "postgresql://cuzk:s3cret-pw@127.0.0.1:1/db?connect_timeout=2", 0, err);
        CHECK(e == CUZK_ESTORE && !st && strstr(err, "cannot connect") && !strstr(err, "s3cret"),
              "an unreachable server: %d %s", e, err);
        CHECK(store_pg_open(&st, "sqlite:///x", 0, err) == CUZK_EINVAL, "a URL of another kind: %s", err);
    }
    snprintf(cmd, sizeof cmd, "tests/pg_server.sh stop %s; rm -rf %s", state, state);
    if (system(cmd) != 0)
        fprintf(stderr, "store_pg_test: could not stop the server in %s\n", state);
    if (failures) {
        fprintf(stderr, "store_pg_test: %d failure(s)\n", failures);
        return 1;
    }
    printf("store_pg_test: ok\n");
    return 0;
}
