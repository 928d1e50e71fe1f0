/* engine_pause.c - transient faults: a partition whose step failed for a reason that clears
 * by itself (a full disk or journal, device memory exhausted, a witness generator killed for
 * memory) waits in PART_PAUSED and is retried with backoff, instead of failing its job.
 *
 * DESIGN. engine_err_transient is the one place that classifies an error: the error code
 * (CUZK_ENOSPC, CUZK_ENOMEM) together with the step it came from (engine_internal.h eng_step).
 * A transient failure does not count as an attempt, so only permanent causes (a bad witness, a
 * key mismatch, a proof failing its self-check twice) can fail a job. part_fail (pipeline.c)
 * releases the partition's memory and key and calls pause_park_locked, which puts it into
 * e->paused with resume_ms = now + backoff, the backoff being 1 s, 2 s, 4 s, ... capped at
 * cfg.retry_max_ms (the partition's pauses in a row). The dispatcher calls
 * pause_release_due_locked on each pass and sleeps no longer than the next resume: a due
 * partition goes back to the scheduler in its old (priority, arrival) place and is proved
 * from the start. When a partition that had been paused succeeds (its proof is stored), the
 * condition has cleared: the others paused for the same cause are retried at once
 * (pause_condition_cleared_locked). A job canceled meanwhile takes its paused partitions
 * out (pause_remove_job_locked). Nothing of this is journaled: after a restart, a paused
 * partition is simply queued again.
 *
 *   part_fail --transient--> PART_PAUSED --resume_ms passed / cause cleared--> PART_QUEUED
 *             --permanent--> retry once, then the job FAILED (pipeline.c)
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/statvfs.h>

#include "engine/engine_internal.h"
#include "util/log.h"

engine_pause_cause engine_err_transient(cuzk_err rc, eng_step step)
{
    if (step == STEP_KEY)
        return PAUSE_NONE; /* a key that failed to load stays failed (keys.c) */
    if (rc == CUZK_ENOSPC)
        return PAUSE_DISK_FULL;
    if (rc == CUZK_ENOMEM)
        return step == STEP_DEVICE ? PAUSE_DEVICE_MEMORY : PAUSE_HOST_MEMORY;
    return PAUSE_NONE;
}

cuzk_err eng_errno_code(int en)
{
    return en == ENOSPC || en == EDQUOT ? CUZK_ENOSPC : CUZK_EIO;
}

int eng_disk_short(engine *e, uint64_t need)
{
    struct statvfs sv;
    if (statvfs(e->data_dir, &sv))
        return 0;
    return (uint64_t)sv.f_bavail * (uint64_t)sv.f_frsize < need;
}

void pause_park_locked(engine *e, epart *p, engine_pause_cause cause, const char *msg)
{
    ejob *j = p->job;
    if (p->attempts > 0)
        p->attempts--; /* not a failed attempt */
    p->pauses++;
    p->pauses_total++;
    int shift = p->pauses - 1 < 15 ? p->pauses - 1 : 15;
    int64_t wait = (int64_t)1000 << shift;
    if (wait > e->cfg.retry_max_ms)
        wait = e->cfg.retry_max_ms;
    snprintf(p->error, sizeof p->error, "%s", msg);
    e->pauses_total[cause]++;
    e->pause_cause = cause;
    snprintf(e->pause_msg, sizeof e->pause_msg, "%s partition %u: %s", j->ids, p->index, msg);
    if (pq_push(&e->paused, (int)j->prio, p->seq, p)) {
        /* no memory for the entry: straight back to the scheduler (retried at once) */
        p->pause = PAUSE_NONE;
        pipeline_enqueue(e, p);
        return;
    }
    p->pause = p->last_pause = cause;
    p->state = PART_PAUSED;
    p->resume_ms = eng_now_ms() + wait;
    e->n_paused[cause]++;
    LOG(p->pauses == 1 ? LOG_WARN : LOG_DEBUG, "%s partition %u paused (%s): %s; retry in %lld ms", j->ids,
        p->index, engine_pause_cause_name(cause), msg, (long long)wait);
    pthread_cond_signal(&e->cv_sched); /* the dispatcher's wait now ends at the resume time */
}

typedef struct due_ctx {
    engine *e;
    int64_t now_ms;  /* resume what is due at this time */
    const ejob *job; /* pause_remove_job_locked: this job's partitions */
} due_ctx;

static int due_pred(void *ctx, void *item)
{
    return ((const epart *)item)->resume_ms <= ((const due_ctx *)ctx)->now_ms;
}

static void due_resume(void *ctx, void *item)
{
    engine *e = ((due_ctx *)ctx)->e;
    epart *p = item;
    e->n_paused[p->pause]--;
    p->pause = PAUSE_NONE;
    pipeline_enqueue(e, p);
}

int64_t pause_release_due_locked(engine *e)
{
    if (!pq_size(&e->paused))
        return -1;
    due_ctx c = {e, eng_now_ms(), NULL};
    pq_remove_if(&e->paused, due_pred, due_resume, &c);
    int64_t next = -1;
    for (size_t i = 0; i < e->paused.n; i++) {
        const epart *p = e->paused.v[i].item;
        int64_t in = p->resume_ms > c.now_ms ? p->resume_ms - c.now_ms : 0;
        if (next < 0 || in < next)
            next = in;
    }
    return next;
}

void pause_condition_cleared_locked(engine *e, engine_pause_cause cause)
{
    if (cause == PAUSE_NONE || !e->n_paused[cause])
        return;
    int64_t now = eng_now_ms();
    for (size_t i = 0; i < e->paused.n; i++) {
        epart *p = e->paused.v[i].item;
        if (p->pause == cause && p->resume_ms > now)
            p->resume_ms = now;
    }
    LOG(LOG_INFO, "%s cleared: %d paused partition(s) retried now", engine_pause_cause_name(cause),
        e->n_paused[cause]);
    pthread_cond_signal(&e->cv_sched);
}

static int job_pred(void *ctx, void *item)
{
    return ((const epart *)item)->job == ((const due_ctx *)ctx)->job;
}

static void job_removed(void *ctx, void *item)
{
    engine *e = ((due_ctx *)ctx)->e;
    epart *p = item;
    e->n_paused[p->pause]--;
    p->pause = PAUSE_NONE;
    p->state = PART_CANCELED;
}

void pause_remove_job_locked(engine *e, ejob *j)
{
    due_ctx c = {e, 0, j};
    pq_remove_if(&e->paused, job_pred, job_removed, &c);
}

json_t *pause_summary_json_locked(engine *e)
{
    json_t *o = json_object();
    int total = 0;
    for (int c = PAUSE_NONE + 1; c < PAUSE_COUNT; c++) {
        total += e->n_paused[c];
        json_object_set_new(o, engine_pause_cause_name((engine_pause_cause)c), json_integer(e->n_paused[c]));
    }
    json_object_set_new(o, "total", json_integer(total));
    int64_t now = eng_now_ms(), next = -1;
    for (size_t i = 0; i < e->paused.n; i++) {
        const epart *p = e->paused.v[i].item;
        int64_t in = p->resume_ms > now ? p->resume_ms - now : 0;
        if (next < 0 || in < next)
            next = in;
    }
    json_object_set_new(o, "next_retry_ms", next < 0 ? json_null() : json_integer(next));
    /* the latest transient failure (also after it cleared) and the counts since start */
    json_object_set_new(o, "last_cause", json_string(engine_pause_cause_name(e->pause_cause)));
    json_object_set_new(o, "last_error", json_string(e->pause_msg));
    json_t *tot = json_object();
    for (int c = PAUSE_NONE + 1; c < PAUSE_COUNT; c++)
        json_object_set_new(tot, engine_pause_cause_name((engine_pause_cause)c),
                            json_integer((json_int_t)e->pauses_total[c]));
    json_object_set_new(o, "since_start", tot);
    return o;
}
