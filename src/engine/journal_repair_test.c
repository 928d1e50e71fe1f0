/* journal_repair_test.c - `cuzk journal check` / `recover` at the library level
 * (journal_repair.c): a journal with a sound job, a job whose proof was changed, one whose
 * partition record is gone, one whose own record was changed and one still queued. check
 * counts each and changes nothing; recover keeps the sound jobs, re-queues the partition
 * whose proof failed, fails the job with a lost partition record saying which, leaves out
 * the job whose record failed, keeps the id sequence past every id, and sets the damaged
 * file aside; the store then opens the fresh journal and finds nothing damaged. A file
 * that is not a database at all is "damaged", and recover still leaves a working journal. */
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "engine/engine.h"
#include "engine/journal_repair.h"
#include "engine/store.h"
#include "engine/store_test_util.h"
#include "util/check.h"

static int64_t insert(store *st, uint32_t n)
{
    return store_test_insert(st, KIND_POREP, PRIO_NORMAL, "/keys/porep.zkey", "", n, 77, 0, NULL);
}

static void prove_all(store *st, int64_t id, uint32_t n)
{
    char err[CUZK_ERRLEN], proof[64];
    for (uint32_t i = 0; i < n; i++) {
        snprintf(proof, sizeof proof, "{\"pi_a\":[\"%lld%u99\"]}", (long long)id, i);
        CHECK(!st->part_set_done(st, id, i, proof, "[\"5\"]", err), "done: %s", err);
    }
    CHECK(!st->job_set_state(st, id, JOB_DONE, 88, "", err), "job done: %s", err);
}


typedef struct lines {
    char text[4096];
} lines;

static void note(void *ctx, const char *line)
{
    lines *l = ctx;
    size_t n = strlen(l->text);
    snprintf(l->text + n, sizeof l->text - n, "%s\n", line);
}

int main(void)
{
    char dir[] = "/tmp/cuzk-repair-XXXXXX";
    if (!mkdtemp(dir)) {
        perror("mkdtemp");
        return 1;
    }
    char path[256], err[CUZK_ERRLEN], sql[256];
    snprintf(path, sizeof path, "%s/journal.db", dir);
    store *st;
    CHECK(!store_sqlite_open(&st, path, err), "open: %s", err);
    int64_t sound = insert(st, 2), reproof = insert(st, 3), nopart = insert(st, 2), badjob = insert(st, 1),
            queued = insert(st, 2);
    prove_all(st, sound, 2);
    prove_all(st, reproof, 3);
    prove_all(st, nopart, 2);
    prove_all(st, badjob, 1);
    st->close(st);

    journal_report r;
    lines l;
    memset(&l, 0, sizeof l);
    CHECK(!journal_check(path, &r, note, &l, err), "check: %s", err);
    CHECK(!journal_report_damaged(&r) && r.version == 3 && r.checksums && r.jobs == 5 && r.parts == 10 &&
              r.proofs == 8,
          "a sound journal: damaged %d, %lld jobs, %lld parts, %lld proofs\n%s", journal_report_damaged(&r),
          (long long)r.jobs, (long long)r.parts, (long long)r.proofs, l.text);

    snprintf(sql, sizeof sql, "UPDATE parts SET proof = replace(proof, '99', '98') WHERE job = %lld AND idx = 2",
             (long long)reproof);
    journal_sql(path, sql);
    snprintf(sql, sizeof sql, "DELETE FROM parts WHERE job = %lld AND idx = 1", (long long)nopart);
    journal_sql(path, sql);
    snprintf(sql, sizeof sql, "UPDATE jobs SET priority = 0 WHERE id = %lld", (long long)badjob);
    journal_sql(path, sql);
    struct stat before, after;
    stat(path, &before);

    memset(&l, 0, sizeof l);
    CHECK(!journal_check(path, &r, note, &l, err), "check: %s", err);
    stat(path, &after);
    CHECK(journal_report_damaged(&r) && r.structure_problems == 0 && r.jobs == 4 && r.jobs_bad == 1 &&
              r.proofs_bad == 1 && r.parts_missing == 1,
          "check: %lld jobs, %lld bad, %lld proofs bad, %lld missing\n%s", (long long)r.jobs, (long long)r.jobs_bad,
          (long long)r.proofs_bad, (long long)r.parts_missing, l.text);
    char want[128];
    snprintf(want, sizeof want, "j-%lld partition 2: its proof fails its checksum", (long long)reproof);
    CHECK(strstr(l.text, want), "check does not name the damaged proof:\n%s", l.text);
    CHECK(before.st_mtime == after.st_mtime && before.st_size == after.st_size, "check changed the journal");

    memset(&l, 0, sizeof l);
    CHECK(!journal_recover(path, &r, note, &l, err), "recover: %s", err);
    CHECK(r.kept == 2 && r.requeued == 1 && r.parts_requeued == 1 && r.failed == 1 && r.lost == 1,
          "recover: kept %lld, requeued %lld (%lld), failed %lld, lost %lld\n%s", (long long)r.kept,
          (long long)r.requeued, (long long)r.parts_requeued, (long long)r.failed, (long long)r.lost, l.text);
    CHECK(r.set_aside[0] && access(r.set_aside, F_OK) == 0 && strstr(r.set_aside, "journal.db.damaged-"),
          "the damaged journal was not set aside: '%s'", r.set_aside);
    journal_report r2;
    CHECK(!journal_check(path, &r2, NULL, NULL, err) && !journal_report_damaged(&r2), "the fresh journal: %s", err);
    CHECK(!journal_check(r.set_aside, &r2, NULL, NULL, err) && r2.jobs_bad == 1, "the set-aside file changed");

    CHECK(!store_sqlite_open(&st, path, err), "open the fresh journal: %s", err);
    seen s;
    memset(&s, 0, sizeof s);
    CHECK(!st->load_all(st, collect, &s, err), "load: %s", err);
    CHECK(s.n_jobs == 4, "jobs in the fresh journal: %d", s.n_jobs);
    for (int i = 0; i < s.n_jobs; i++) {
        const store_job *j = &s.jobs[i];
        CHECK(!j->damaged, "j-%lld damaged in the fresh journal: %s", (long long)j->id, j->error);
        if (j->id == sound)
            CHECK(j->state == JOB_DONE && j->finished_ms == 88 && s.parts[i][1].state == PART_DONE &&
                      !s.parts[i][1].proof_damaged,
                  "the sound job changed");
        if (j->id == reproof)
            CHECK(j->state == JOB_QUEUED && s.parts[i][2].state == PART_QUEUED && s.parts[i][1].state == PART_DONE &&
                      !s.parts[i][1].proof_damaged,
                  "the job with a damaged proof: state %d, partition 2 %d", j->state, s.parts[i][2].state);
        if (j->id == nopart)
            CHECK(j->state == JOB_FAILED && strstr(j->error, "partition 1 was lost") && s.parts[i][0].state == PART_DONE,
                  "the job with a lost partition record: %d '%s'", j->state, j->error);
        if (j->id == queued)
            CHECK(j->state == JOB_QUEUED && !strcmp(s.parts[i][1].witness, "/w/1.wtns"), "the queued job changed");
        CHECK(j->id != badjob, "the job whose record failed its checksum was copied");
    }
    char *proof = NULL, *pub = NULL;
    CHECK(st->part_get_proof(st, reproof, 2, &proof, &pub, err) == CUZK_ENOTFOUND, "the damaged proof was copied");
    CHECK(!st->part_get_proof(st, sound, 1, &proof, &pub, err) && proof && strstr(proof, "99"), "sound proof: %s", err);
    free(proof);
    free(pub);
    int64_t fresh = insert(st, 1);
    CHECK(fresh > queued, "a new job got id %lld, at most the journal's largest (%lld)", (long long)fresh,
          (long long)queued);
    st->close(st);

    /* not a database at all */
    char junk[256];
    snprintf(junk, sizeof junk, "%s/junk", dir);
    mkdir(junk, 0755);
    snprintf(path, sizeof path, "%s/journal.db", junk);
    FILE *f = fopen(path, "wb");
    for (int i = 0; f && i < 8192; i++)
        fputc(i * 7 & 0xff, f);
    if (f)
        fclose(f);
    CHECK(!journal_check(path, &r, NULL, NULL, err) && journal_report_damaged(&r), "junk is not damaged?");
    CHECK(!journal_recover(path, &r, NULL, NULL, err), "recover junk: %s", err);
    CHECK(!store_sqlite_open(&st, path, err), "open after recovering junk: %s", err);
    if (!failures)
        st->close(st);
    CHECK(journal_check("/nonexistent/journal.db", &r, NULL, NULL, err) == CUZK_ENOTFOUND, "missing journal");

    snprintf(sql, sizeof sql, "rm -rf %s", dir);
    if (system(sql) != 0)
        fprintf(stderr, "could not remove %s\n", dir);
    if (failures) {
        fprintf(stderr, "journal_repair_test: %d of %d checks failed\n", failures, checks);
        return 1;
    }
    printf("journal_repair_test: ok (%d checks)\n", checks);
    return 0;
}
