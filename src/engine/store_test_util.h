/* store_test_util.h - what the journal's tests share (store_test.c, store_pg_test.c,
 * journal_repair_test.c): load_all's records collected into a `seen`, a job with its
 * partitions inserted in one call, SQL run on a journal file behind the store's back. Test code
 * only. */
#ifndef CUZK_ENGINE_STORE_TEST_UTIL_H
#define CUZK_ENGINE_STORE_TEST_UTIL_H

#include <sqlite3.h>
#include <stdio.h>
#include <string.h>

#include "engine/engine.h"
#include "engine/store.h"
#include "util/check.h"

#define SEEN_JOBS 8  /* jobs a seen keeps, at most */
#define SEEN_PARTS 4 /* partitions of each, at most */

typedef struct seen {
    int n_jobs;
    store_job jobs[SEEN_JOBS];
    store_part parts[SEEN_JOBS][SEEN_PARTS];
} seen;

/* load_all's callback: the first SEEN_JOBS jobs (a damaged job has no partitions) */
static void collect(void *ctx, const store_job *job, const store_part *parts)
{
    seen *s = ctx;
    if (s->n_jobs >= SEEN_JOBS)
        return;
    s->jobs[s->n_jobs] = *job;
    for (uint32_t i = 0; parts && i < job->n_parts && i < SEEN_PARTS; i++)
        s->parts[s->n_jobs][i] = parts[i];
    s->n_jobs++;
}

/* inserts a queued job of n (<= SEEN_PARTS) queued partitions with witnesses /w/<i>.wtns
   (partitions of odd index owned when owned_odd); returns its id, or -1 (a failed CHECK) */
static int64_t store_test_insert(store *st, int kind, int priority, const char *zkey, const char *idem, uint32_t n,
                                 int64_t submitted_ms, int owned_odd, int *existed)
{
    store_job job;
    memset(&job, 0, sizeof job);
    job.kind = kind;
    job.priority = priority;
    job.state = JOB_QUEUED;
    snprintf(job.zkey, sizeof job.zkey, "%s", zkey);
    snprintf(job.idem, sizeof job.idem, "%s", idem);
    job.n_parts = n;
    job.submitted_ms = submitted_ms;
    store_part parts[SEEN_PARTS];
    memset(parts, 0, sizeof parts);
    for (uint32_t i = 0; i < n && i < SEEN_PARTS; i++) {
        parts[i].index = i;
        parts[i].state = PART_QUEUED;
        parts[i].owned = owned_odd && (i & 1);
        snprintf(parts[i].witness, sizeof parts[i].witness, "/w/%u.wtns", i);
    }
    char err[CUZK_ERRLEN];
    int ex = 0;
    cuzk_err e = st->job_insert(st, &job, parts, existed ? existed : &ex, err);
    CHECK(!e, "insert: %s", err);
    return e ? -1 : job.id;
}

/* runs SQL on the SQLite file through a connection of its own, as a damaged disk (or a person)
   would */
static void journal_sql(const char *path, const char *sql)
{
    sqlite3 *db = NULL;
    char *msg = NULL;
    int rc = sqlite3_open(path, &db);
    if (rc == SQLITE_OK)
        rc = sqlite3_exec(db, sql, NULL, NULL, &msg);
    CHECK(rc == SQLITE_OK, "raw SQL '%.60s': %s", sql, msg ? msg : sqlite3_errmsg(db));
    sqlite3_free(msg);
    sqlite3_close(db);
}

#endif
