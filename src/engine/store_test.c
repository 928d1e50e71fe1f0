/* store_test.c - the SQLite journal: round trip of jobs, partitions and proofs,
 * idempotency keys, state updates, deletion, and survival of a process killed right
 * after an insert (a child _exit()s without closing; the parent reopens the file). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "engine/engine.h"
#include "engine/store.h"
#include "util/check.h"

typedef struct seen {
    int n_jobs;
    store_job jobs[8];
    store_part parts[8][4];
} seen;

static void collect(void *ctx, const store_job *job, const store_part *parts)
{
    seen *s = ctx;
    if (s->n_jobs >= 8)
        return;
    s->jobs[s->n_jobs] = *job;
    for (uint32_t i = 0; i < job->n_parts && i < 4; i++)
        s->parts[s->n_jobs][i] = parts[i];
    s->n_jobs++;
}

static int64_t insert(store *st, const char *idem, uint32_t n, int *existed)
{
    store_job job;
    memset(&job, 0, sizeof job);
    job.kind = KIND_SNAP;
    job.priority = PRIO_HIGH;
    job.state = JOB_QUEUED;
    snprintf(job.zkey, sizeof job.zkey, "/keys/snap.zkey");
    snprintf(job.idem, sizeof job.idem, "%s", idem);
    job.n_parts = n;
    job.submitted_ms = 1234;
    store_part parts[4];
    memset(parts, 0, sizeof parts);
    for (uint32_t i = 0; i < n; i++) {
        parts[i].index = i;
        parts[i].state = PART_QUEUED;
        parts[i].owned = (int)(i & 1);
        snprintf(parts[i].witness, sizeof parts[i].witness, "/w/%u.wtns", i);
    }
    char err[CUZK_ERRLEN];
    cuzk_err e = st->job_insert(st, &job, parts, existed, err);
    CHECK(!e, "insert: %s", err);
    return job.id;
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
