/* engine_status.c - the engine's observability: job JSON, job lists, the /status
 * snapshot, Prometheus metrics, the GPU utilisation timeline and the Chrome trace. */
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "engine/engine_internal.h"

static const char *stage_keys[STAGE_COUNT] = {"queued_ms", "admit_ms", "synth_ms", "ready_ms", "device_ms",
                                              "finalize_ms"};

/* e->mu held */
static json_t *job_json_locked(engine *e, const ejob *j, int with_parts)
{
    (void)e;
    json_t *o = json_pack("{s:s,s:s,s:s,s:s,s:s,s:s,s:I,s:I,s:i,s:i}", "id", j->ids, "kind",
                          engine_kind_name(j->kind), "priority", engine_priority_name(j->prio), "state",
                          engine_job_state_name(j->state), "error", j->error, "zkey", j->zkey, "submitted_ms",
                          (json_int_t)j->submitted_ms, "finished_ms", (json_int_t)j->finished_ms, "n_partitions",
                          (int)j->n_parts, "n_done", (int)j->n_done);
    if (!o)
        return NULL;
    json_object_set_new(o, "idempotency_key", j->idem[0] ? json_string(j->idem) : json_null());
    json_object_set_new(o, "fetched_ms", json_integer(j->fetched_ms));
    if (!with_parts)
        return o;
    json_t *parts = json_array();
    int64_t now = eng_now_us();
    for (uint32_t i = 0; i < j->n_parts; i++) {
        const epart *p = &j->parts[i];
        json_t *st = json_object();
        for (int s = 0; s < STAGE_COUNT; s++) {
            int64_t us = p->stage_us[s];
            /* the stage it is in now counts up to the present */
            if (((p->state == PART_QUEUED && s == STAGE_QUEUED) || (p->state == PART_ADMITTED && s == STAGE_ADMIT) ||
                 (p->state == PART_SYNTH && s == STAGE_SYNTH) || (p->state == PART_READY && s == STAGE_READY) ||
                 (p->state == PART_FINALIZE && s == STAGE_FINALIZE)) &&
                p->stage_t0 && !(j->state == JOB_CANCELED || j->state == JOB_FAILED))
                us = now - p->stage_t0;
            json_object_set_new(st, stage_keys[s], json_real((double)us / 1000.0));
        }
        json_t *po = json_pack("{s:i,s:s,s:i,s:s,s:I,s:o}", "index", (int)i, "state", engine_part_state_name(p->state),
                               "attempts", p->attempts, "error", p->error, "bytes", (json_int_t)j->part_bytes,
                               "stages", st);
        if (p->dev >= 0)
            json_object_set_new(po, "device_worker", json_sprintf("%s%d-w%d", e->use_gpu ? "gpu" : "cpu", p->dev,
                                                                  p->worker));
        else
            json_object_set_new(po, "device_worker", json_null());
        /* logical device of the last device stage (-1 before); a retry after a device
           failure runs on another logical device when there is one */
        json_object_set_new(po, "device", json_integer(p->dev));
        json_object_set_new(po, "batch", json_integer(p->batch ? p->batch : 1));
        /* transient faults (engine_pause.c): while paused, why and when it is retried */
        json_object_set_new(po, "pauses", json_integer(p->pauses_total));
        if (p->state == PART_PAUSED) {
            int64_t in = p->resume_ms - now / 1000;
            json_object_set_new(po, "cause", json_string(engine_pause_cause_name(p->pause)));
            json_object_set_new(po, "retry_in_ms", json_integer(in > 0 ? in : 0));
        }
        /* the host that proved it, with a shared store (null when not done, or unknown) */
        json_object_set_new(po, "host", p->host[0] ? json_string(p->host) : json_null());
        json_array_append_new(parts, po);
    }
    json_object_set_new(o, "partitions", parts);
    return o;
}

json_t *engine_job_json(engine *e, const char *id, char *err)
{
    pthread_mutex_lock(&e->mu);
    ejob *j = eng_job_find(e, id);
    json_t *o = j ? job_json_locked(e, j, 1) : NULL;
    pthread_mutex_unlock(&e->mu);
    if (!j)
        cuzk_errf(err, CUZK_ENOTFOUND, "no job %s", id ? id : "(null)");
    else if (!o)
        cuzk_errf(err, CUZK_ENOMEM, "out of memory");
    return o;
}

json_t *engine_list(engine *e, const char *state_filter, int limit)
{
    if (limit <= 0)
        limit = 100;
    json_t *arr = json_array();
    pthread_mutex_lock(&e->mu);
    for (size_t i = e->n_jobs; i-- > 0 && (int)json_array_size(arr) < limit;) {
        const ejob *j = e->jobs[i];
        if (state_filter && *state_filter && strcmp(state_filter, engine_job_state_name(j->state)))
            continue;
        json_array_append_new(arr, job_json_locked(e, j, 0));
    }
    pthread_mutex_unlock(&e->mu);
    return arr;
}

static json_t *gaps_json(const int64_t *gap_us)
{
    json_t *o = json_object();
    for (int g = 0; g < GAP_COUNT; g++)
        json_object_set_new(o, trk_gap_name((trk_gap)g), json_real((double)gap_us[g] / 1000.0));
    return o;
}

static const char *worker_state_name(const eworker *w)
{
    int s = atomic_load(&w->state);
    if (!strcmp(w->kind, "device"))
        return s == TRK_BUSY ? "busy" : trk_gap_name((trk_gap)s);
    if (!strcmp(w->kind, "dispatch"))
        return s == 2 ? "waiting for budget" : s ? "admitting" : "idle";
    return s ? "busy" : "idle";
}

json_t *engine_status_json(engine *e)
{
    int64_t now = eng_now_us();
    json_t *o = json_object();
    json_object_set_new(o, "now_ms", json_integer(now / 1000));
    json_object_set_new(o, "uptime_s", json_real(e->started ? (double)(now - e->started_us) / 1e6 : 0));
    json_object_set_new(o, "backend", json_string(e->use_gpu ? "gpu" : "cpu"));
    json_object_set_new(o, "devices", json_integer(e->n_dev));
    json_t *ords = json_array(); /* CUDA ordinal of each logical device (0 for CPU devices) */
    for (int d = 0; d < e->n_dev; d++)
        json_array_append_new(ords, json_integer(e->dev_ord[d]));
    json_object_set_new(o, "device_ordinals", ords);
    json_object_set_new(o, "data_dir", json_string(e->data_dir));
    /* worker counts as running (auto: engine_sizing_auto chose them from cores and devices) */
    json_object_set_new(o, "sizing",
                        json_pack("{s:i,s:i,s:b,s:i,s:b,s:i,s:i,s:i}", "cores", e->cores, "synth_workers",
                                  e->cfg.synth_workers, "synth_workers_auto", e->synth_auto, "finalizers",
                                  e->cfg.finalizers, "finalizers_auto", e->final_auto, "gpu_workers",
                                  e->cfg.gpu_workers, "queue_depth", e->cfg.queue_depth, "cpu_threads",
                                  e->cfg.cpu_threads));

    uint64_t total, used, peak, waiting, nres, nrel;
    budget_snapshot(&e->bud, &total, &used, &peak, &waiting, &nres, &nrel);
    json_object_set_new(o, "budget",
                        json_pack("{s:I,s:I,s:I,s:I,s:I,s:I}", "total", (json_int_t)total, "used", (json_int_t)used,
                                  "peak", (json_int_t)peak, "waiting", (json_int_t)waiting, "admitted",
                                  (json_int_t)nres, "released", (json_int_t)nrel));

    pthread_mutex_lock(&e->rq_mu);
    size_t ready = pq_size(&e->readyq);
    pthread_mutex_unlock(&e->rq_mu);
    pthread_mutex_lock(&e->fq_mu);
    size_t fin = e->fq_crit.n + e->fq_bulk.n, fin_peak = e->fq_peak;
    pthread_mutex_unlock(&e->fq_mu);

    pthread_mutex_lock(&e->mu);
    json_object_set_new(o, "queues",
                        json_pack("{s:i,s:i,s:i,s:i,s:i}", "scheduler", (int)pq_size(&e->sched), "synthesis",
                                  (int)pq_size(&e->synthq), "ready", (int)ready, "ready_limit", e->cfg.queue_depth,
                                  "finalize", (int)fin));
    int counts[JOB_CANCELED + 1] = {0};
    for (size_t i = 0; i < e->n_jobs; i++)
        counts[e->jobs[i]->state]++;
    json_t *jc = json_object();
    for (int s = 0; s <= JOB_CANCELED; s++)
        json_object_set_new(jc, engine_job_state_name((engine_job_state)s), json_integer(counts[s]));
    json_object_set_new(o, "jobs", jc);
    json_t *active = json_array();
    int recent = 0;
    for (size_t i = e->n_jobs; i-- > 0;) {
        const ejob *j = e->jobs[i];
        int term = j->state == JOB_DONE || j->state == JOB_FAILED || j->state == JOB_CANCELED;
        if (term && recent >= 20)
            continue;
        recent += term;
        json_array_append_new(active, job_json_locked(e, j, 1));
    }
    json_object_set_new(o, "active", active);
    json_t *keys = json_array();
    for (const ekey *k = e->keys; k; k = k->next) {
        static const char *const ks[] = {"empty", "loading", "ready", "failed"};
        json_t *ko = json_pack("{s:s,s:s,s:s,s:I,s:i,s:b,s:I,s:I,s:s,s:s?}", "path", k->path, "state", ks[k->state],
                               "curve", k->state == KEY_READY ? k->z.curve->label : "", "bytes", (json_int_t)k->bytes,
                               "refs", k->refs, "preloaded", k->preloaded, "last_used_ms",
                               (json_int_t)k->last_used_ms, "loaded_ms", (json_int_t)k->loaded_ms, "error", k->error,
                               "matrix", k->matrix_from);
        /* load progress while loading: the step and its units done of total */
        json_object_set_new(ko, "load",
                            k->state == KEY_LOADING
                                ? json_pack("{s:s,s:I,s:I}", "phase", k->load_phase, "done",
                                            (json_int_t)k->load_done, "total", (json_int_t)k->load_total)
                                : json_null());
        /* where each device keeps it (backend.h groth16_key_info): resident or streamed, and why */
        json_t *pl = json_array();
        for (int d = 0; k->state == KEY_READY && d < e->n_dev; d++) {
            cuzk_backend *be = e->dev_be[k->z.curve->id][d];
            groth16_key_info ki;
            if (!be || !k->ks_dev[d] || !be->key_info)
                continue;
            be->key_info(be, k->ks_dev[d], &ki);
            json_t *ss = json_array(); /* streamed: the base sets that cross the bus */
            for (int i = 0; i < ZKEY_BASES; i++)
                if (ki.sets_streamed >> i & 1)
                    json_array_append_new(ss, json_string(zkey_set_names[i]));
            json_t *po = json_pack("{s:i,s:s,s:s,s:I,s:I,s:I,s:i,s:I,s:I,s:I,s:I,s:b}", "device", d, "placement",
                                   ki.placement, "why", ki.why, "device_bytes", (json_int_t)ki.device_bytes, "host_bytes",
                                   (json_int_t)ki.host_bytes, "chunk_points", (json_int_t)ki.chunk_points, "batch_max",
                                   (int)ki.batch_max, "points_skipped", (json_int_t)ki.points_skipped, "passes",
                                   (json_int_t)ki.passes, "bytes_copied", (json_int_t)ki.bytes_copied, "copy_wait_ms",
                                   (json_int_t)(ki.copy_wait_us / 1000), "table", ki.table);
            json_object_set_new(po, "sets_streamed", ss);
            json_array_append_new(pl, po);
        }
        json_object_set_new(ko, "placement", pl);
        json_array_append_new(keys, ko);
    }
    json_object_set_new(o, "keys", keys);
    json_object_set_new(o, "counters",
                        json_pack("{s:I,s:I,s:I,s:I}", "partitions_done", (json_int_t)e->parts_total[PART_DONE],
                                  "partitions_failed", (json_int_t)e->parts_total[PART_FAILED], "retries",
                                  (json_int_t)e->retries, "verify_failures", (json_int_t)e->verify_failures));
    json_object_set_new(o, "paused", pause_summary_json_locked(e));
    pthread_mutex_unlock(&e->mu);

    json_t *workers = json_array();
    for (int i = 0; i < e->n_workers; i++) {
        const eworker *w = &e->workers[i];
        int64_t jid = atomic_load(&w->cur_job);
        json_t *wo = json_pack("{s:s,s:s,s:i,s:s,s:f,s:I}", "name", w->name, "kind", w->kind, "device", w->dev,
                               "state", worker_state_name(w), "busy_ms",
                               (double)atomic_load(&w->busy_us) / 1000.0, "jobs_done",
                               (json_int_t)atomic_load(&w->done));
        if (jid)
            json_object_set_new(wo, "partition", json_sprintf("j-%lld/%d", (long long)jid, atomic_load(&w->cur_part)));
        else
            json_object_set_new(wo, "partition", json_null());
        json_array_append_new(workers, wo);
    }
    json_object_set_new(o, "workers", workers);
    /* the finalizers (finalize.c): batch verifications, their proofs, the largest, those whose
       check failed (each proof then verified alone) and the proofs that did not verify; time
       per step over all finalizers; the most partitions queued at once */
    json_object_set_new(
        o, "finalize",
        json_pack("{s:I,s:I,s:I,s:I,s:I,s:I,s:f,s:f,s:f,s:i,s:i}", "batches",
                  (json_int_t)atomic_load(&e->fin.batches), "proofs", (json_int_t)atomic_load(&e->fin.proofs),
                  "largest", (json_int_t)atomic_load(&e->fin.largest), "fallbacks",
                  (json_int_t)atomic_load(&e->fin.fallbacks), "fallback_proofs",
                  (json_int_t)atomic_load(&e->fin.fallback_proofs), "bad", (json_int_t)atomic_load(&e->fin.bad),
                  "assemble_ms", (double)atomic_load(&e->fin.assemble_us) / 1000.0, "verify_ms",
                  (double)atomic_load(&e->fin.verify_us) / 1000.0, "journal_ms",
                  (double)atomic_load(&e->fin.journal_us) / 1000.0, "queued", (int)fin, "queue_peak", (int)fin_peak));

    pthread_mutex_lock(&e->bp_mu);
    size_t nfree = 0;
    for (const ebuf *b = e->bp_free; b; b = b->next)
        nfree++;
    /* levels (go down as buffers are freed): buffers, bytes, pinned_bytes, cached,
       cached_bytes; counters: takes = allocs + reuses, frees. pool_bytes and free are the
       older names of bytes and cached. */
    json_t *bo = json_pack("{s:I,s:I,s:I,s:i,s:I,s:I,s:I,s:I,s:I}", "buffers", (json_int_t)e->bp_buffers, "bytes",
                           (json_int_t)e->bp_bytes_total, "pinned_bytes", (json_int_t)e->bp_pinned_bytes, "cached",
                           (int)nfree, "cached_bytes", (json_int_t)e->bp_free_bytes, "takes",
                           (json_int_t)e->bp_takes, "allocs", (json_int_t)e->bp_allocs, "reuses",
                           (json_int_t)e->bp_reuses, "frees", (json_int_t)e->bp_frees);
    json_object_set_new(bo, "pool_bytes", json_integer((json_int_t)e->bp_bytes_total));
    json_object_set_new(bo, "free", json_integer((json_int_t)nfree));
    json_object_set_new(o, "buffers", bo);
    pthread_mutex_unlock(&e->bp_mu);

    json_t *gpus = json_array();
    int64_t all[GAP_COUNT] = {0};
    for (int d = 0; e->trk && d < e->n_dev; d++) {
        int64_t busy, gap[GAP_COUNT];
        tracker_device_totals(e->trk, d, now, &busy, gap);
        for (int g = 0; g < GAP_COUNT; g++)
            all[g] += gap[g];
        json_t *go = json_pack("{s:i,s:f,s:f,s:f}", "device", d, "busy_ratio",
                               tracker_busy_ratio(e->trk, d, 0, now), "busy_ratio_10s",
                               tracker_busy_ratio(e->trk, d, 10000000, now), "busy_ms", (double)busy / 1000.0);
        json_object_set_new(go, "idle_gap_ms", gaps_json(gap));
        if (e->use_gpu) { /* device memory: the cap (--gpu-mem; 0: the card's) and what keys hold */
            json_object_set_new(go, "gpu_mem_cap", json_integer((json_int_t)e->cfg.gpu_mem));
            json_object_set_new(go, "gpu_mem_keys", json_integer((json_int_t)gpu_mem_charge(e->dev_ord[d], 0)));
        }
        json_object_set_new(go, "batches", json_integer((json_int_t)atomic_load(&e->batches[d])));
        json_object_set_new(go, "batched_partitions", json_integer((json_int_t)atomic_load(&e->batched_parts[d])));
        json_array_append_new(gpus, go);
    }
    json_object_set_new(o, "gpu", gpus);
    json_object_set_new(o, "idle_gap_ms", gaps_json(all));
    json_object_set_new(o, "store", json_string(e->st->name));
    /* several hosts on one store: every host (a query of the store; e->mu is not held here) */
    json_object_set_new(o, "fleet", e->fleet ? fleet_status_json(e) : json_null());
    return o;
}

/* ---- Prometheus ---- */

typedef struct mbuf {
    char *p;
    size_t len, cap;
    int oom;
} mbuf;

static void mb_printf(mbuf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void mb_printf(mbuf *b, const char *fmt, ...)
{
    if (b->oom)
        return;
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(NULL, 0, fmt, ap);
    va_end(ap);
    if (n < 0) {
        b->oom = 1;
        return;
    }
    if (b->len + (size_t)n + 1 > b->cap) {
        size_t cap = b->cap ? b->cap : 8192;
        while (cap < b->len + (size_t)n + 1)
            cap *= 2;
        char *q = realloc(b->p, cap);
        if (!q) {
            b->oom = 1;
            return;
        }
        b->p = q;
        b->cap = cap;
    }
    va_start(ap, fmt);
    vsnprintf(b->p + b->len, b->cap - b->len, fmt, ap);
    va_end(ap);
    b->len += (size_t)n;
}

static void mb_put(void *ctx, const char *text)
{
    mb_printf(ctx, "%s", text);
}

char *engine_metrics_text(engine *e)
{
    mbuf b = {NULL, 0, 0, 0};
    int64_t now = eng_now_us();
    pthread_mutex_lock(&e->mu);
    mb_printf(&b, "# HELP cuzk_jobs_total Jobs by kind and outcome (queued = submitted).\n"
                  "# TYPE cuzk_jobs_total counter\n");
    for (int k = 0; k < KIND_COUNT; k++)
        for (int s = 0; s <= JOB_CANCELED; s++) {
            if (s == JOB_RUNNING)
                continue;
            mb_printf(&b, "cuzk_jobs_total{kind=\"%s\",state=\"%s\"} %" PRIu64 "\n", engine_kind_name((engine_kind)k),
                      s == JOB_QUEUED ? "submitted" : engine_job_state_name((engine_job_state)s),
                      e->jobs_total[k][s]);
        }
    mb_printf(&b, "# HELP cuzk_partitions_total Partitions by outcome.\n# TYPE cuzk_partitions_total counter\n");
    mb_printf(&b, "cuzk_partitions_total{state=\"done\"} %" PRIu64 "\n", e->parts_total[PART_DONE]);
    mb_printf(&b, "cuzk_partitions_total{state=\"failed\"} %" PRIu64 "\n", e->parts_total[PART_FAILED]);
    mb_printf(&b, "cuzk_partitions_total{state=\"canceled\"} %" PRIu64 "\n", e->parts_total[PART_CANCELED]);
    mb_printf(&b, "# HELP cuzk_partition_retries_total Partitions retried after a failure.\n"
                  "# TYPE cuzk_partition_retries_total counter\ncuzk_partition_retries_total %" PRIu64 "\n",
              e->retries);
    mb_printf(&b, "# HELP cuzk_verify_failures_total Proofs that failed the self-check.\n"
                  "# TYPE cuzk_verify_failures_total counter\ncuzk_verify_failures_total %" PRIu64 "\n",
              e->verify_failures);
    int active = 0;
    for (size_t i = 0; i < e->n_jobs; i++)
        active += e->jobs[i]->state == JOB_QUEUED || e->jobs[i]->state == JOB_RUNNING;
    mb_printf(&b, "# HELP cuzk_jobs_active Jobs queued or running.\n# TYPE cuzk_jobs_active gauge\ncuzk_jobs_active %d\n",
              active);
    mb_printf(&b, "# HELP cuzk_queue_depth Partitions waiting per queue.\n# TYPE cuzk_queue_depth gauge\n"
                  "cuzk_queue_depth{queue=\"scheduler\"} %zu\ncuzk_queue_depth{queue=\"synthesis\"} %zu\n",
              pq_size(&e->sched), pq_size(&e->synthq));
    mb_printf(&b, "# HELP cuzk_partitions_paused Partitions waiting out a transient fault, by cause.\n"
                  "# TYPE cuzk_partitions_paused gauge\n");
    for (int c = PAUSE_NONE + 1; c < PAUSE_COUNT; c++)
        mb_printf(&b, "cuzk_partitions_paused{cause=\"%s\"} %d\n", engine_pause_cause_name((engine_pause_cause)c),
                  e->n_paused[c]);
    mb_printf(&b, "# HELP cuzk_partition_pauses_total Transient failures (partition paused), by cause.\n"
                  "# TYPE cuzk_partition_pauses_total counter\n");
    for (int c = PAUSE_NONE + 1; c < PAUSE_COUNT; c++)
        mb_printf(&b, "cuzk_partition_pauses_total{cause=\"%s\"} %" PRIu64 "\n",
                  engine_pause_cause_name((engine_pause_cause)c), e->pauses_total[c]);
    pthread_mutex_unlock(&e->mu);
    pthread_mutex_lock(&e->rq_mu);
    mb_printf(&b, "cuzk_queue_depth{queue=\"device\"} %zu\n", pq_size(&e->readyq));
    pthread_mutex_unlock(&e->rq_mu);
    mb_printf(&b, "cuzk_queue_depth{queue=\"finalize\"} %zu\n", final_queue_size(e));
    mb_printf(&b, "# HELP cuzk_finalize_batches_total Batch verifications run by the finalizers.\n"
                  "# TYPE cuzk_finalize_batches_total counter\ncuzk_finalize_batches_total %" PRIu64 "\n"
                  "# HELP cuzk_finalize_proofs_total Proofs verified in them.\n"
                  "# TYPE cuzk_finalize_proofs_total counter\ncuzk_finalize_proofs_total %" PRIu64 "\n"
                  "# HELP cuzk_finalize_fallbacks_total Batches whose check failed (proofs then verified one by one).\n"
                  "# TYPE cuzk_finalize_fallbacks_total counter\ncuzk_finalize_fallbacks_total %" PRIu64 "\n",
              (uint64_t)atomic_load(&e->fin.batches), (uint64_t)atomic_load(&e->fin.proofs),
              (uint64_t)atomic_load(&e->fin.fallbacks));

    uint64_t total, used, peak;
    budget_snapshot(&e->bud, &total, &used, &peak, NULL, NULL, NULL);
    mb_printf(&b, "# HELP cuzk_budget_bytes Memory budget.\n# TYPE cuzk_budget_bytes gauge\n"
                  "cuzk_budget_bytes{kind=\"total\"} %" PRIu64 "\ncuzk_budget_bytes{kind=\"used\"} %" PRIu64
                  "\ncuzk_budget_bytes{kind=\"peak\"} %" PRIu64 "\n",
              total, used, peak);
    pthread_mutex_lock(&e->bp_mu);
    mb_printf(&b, "# HELP cuzk_buffer_pool_bytes Host workspace buffers.\n# TYPE cuzk_buffer_pool_bytes gauge\n"
                  "cuzk_buffer_pool_bytes %" PRIu64 "\n"
                  "# HELP cuzk_buffer_pool_pinned_bytes Of which page-locked.\n"
                  "# TYPE cuzk_buffer_pool_pinned_bytes gauge\ncuzk_buffer_pool_pinned_bytes %" PRIu64 "\n"
                  "# HELP cuzk_buffer_pool_cached_bytes Of which cached for reuse.\n"
                  "# TYPE cuzk_buffer_pool_cached_bytes gauge\ncuzk_buffer_pool_cached_bytes %" PRIu64 "\n"
                  "# HELP cuzk_buffer_pool_buffers Host workspace buffers alive (in use and cached).\n"
                  "# TYPE cuzk_buffer_pool_buffers gauge\ncuzk_buffer_pool_buffers %" PRIu64 "\n"
                  "# TYPE cuzk_buffer_takes_total counter\ncuzk_buffer_takes_total %" PRIu64 "\n"
                  "# TYPE cuzk_buffer_reuses_total counter\ncuzk_buffer_reuses_total %" PRIu64 "\n"
                  "# TYPE cuzk_buffer_allocs_total counter\ncuzk_buffer_allocs_total %" PRIu64 "\n"
                  "# TYPE cuzk_buffer_frees_total counter\ncuzk_buffer_frees_total %" PRIu64 "\n",
              e->bp_bytes_total, e->bp_pinned_bytes, e->bp_free_bytes, e->bp_buffers, e->bp_takes, e->bp_reuses,
              e->bp_allocs, e->bp_frees);
    pthread_mutex_unlock(&e->bp_mu);

    if (e->trk) {
        mb_printf(&b, "# HELP cuzk_gpu_busy_ratio Fraction of time the device ran work (since start).\n"
                      "# TYPE cuzk_gpu_busy_ratio gauge\n");
        for (int d = 0; d < e->n_dev; d++)
            mb_printf(&b, "cuzk_gpu_busy_ratio{device=\"%d\"} %.6f\n", d, tracker_busy_ratio(e->trk, d, 0, now));
        int64_t busy[ENGINE_MAX_DEVICES], gap[ENGINE_MAX_DEVICES][GAP_COUNT];
        for (int d = 0; d < e->n_dev; d++)
            tracker_device_totals(e->trk, d, now, &busy[d], gap[d]);
        mb_printf(&b, "# HELP cuzk_gpu_busy_seconds_total Device busy time.\n# TYPE cuzk_gpu_busy_seconds_total counter\n");
        for (int d = 0; d < e->n_dev; d++)
            mb_printf(&b, "cuzk_gpu_busy_seconds_total{device=\"%d\"} %.6f\n", d, (double)busy[d] / 1e6);
        mb_printf(&b, "# HELP cuzk_idle_gap_seconds_total Device idle time by what its workers waited for.\n"
                      "# TYPE cuzk_idle_gap_seconds_total counter\n");
        for (int d = 0; d < e->n_dev; d++)
            for (int g = 0; g < GAP_COUNT; g++)
                mb_printf(&b, "cuzk_idle_gap_seconds_total{device=\"%d\",reason=\"%s\"} %.6f\n", d,
                          trk_gap_name((trk_gap)g), (double)gap[d][g] / 1e6);
        if (!b.oom && tracker_metrics(e->trk, &b.p, &b.len, &b.cap))
            b.oom = 1;
    }
    if (e->fleet)
        fleet_metrics(e, mb_put, &b);
    if (b.oom) {
        free(b.p);
        return NULL;
    }
    return b.p;
}

char *engine_trace_json(engine *e, int64_t since_ms)
{
    if (!e->trk)
        return strdup("{\"traceEvents\":[]}\n");
    return tracker_trace_json(e->trk, since_ms > 0 ? since_ms * 1000 : 0, eng_now_us());
}

json_t *engine_gpu_timeline(engine *e, int64_t window_ms, int64_t step_ms)
{
    if (!e->trk)
        return json_array();
    if (step_ms < 50)
        step_ms = 50;
    if (window_ms <= 0)
        window_ms = 60000;
    return tracker_timeline(e->trk, window_ms * 1000, step_ms * 1000, eng_now_us());
}
