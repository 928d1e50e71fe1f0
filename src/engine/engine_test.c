/* engine_test.c - the engine end to end on the CPU backend with the committed fixtures
 * (tests/data): proofs come out and `snarkjs groth16 verify` accepts them (when
 * node_modules is installed), public signals equal snarkjs's public.json, a critical job
 * overtakes a backlog, a tight budget is never exceeded, an oversized partition and a
 * witness of the wrong curve are refused at submit, cancel, idempotency keys, a
 * partition that fails twice fails its job, jobs survive a restart of the engine, a
 * stored proof found damaged when it is fetched is never handed out but proved again, a
 * device out of memory pauses a partition (retried past the two attempts of a permanent
 * failure) instead of failing its job, and a data dir short of --min-free refuses a
 * submission before anything is journaled. A backend's msm_prefetch runs between the h step
 * and the MSM lock, and what it takes is always consumed or given back (a failed prefetch,
 * a job canceled between the two).
 * Run from the repository root (make test does). */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <sqlite3.h>

#include "engine/engine.h"
#include "engine/engine_internal.h" /* test_prefetch: a device backend set in e->dev_be */
#include "engine/store.h"
#include "util/check.h"
#include "util/log.h"

#define MULT_Z "tests/data/bn128/multiplier/circuit.zkey"
#define MULT_W "tests/data/bn128/multiplier/witness.wtns"
#define MERKLE_Z "tests/data/bn128/merkle/circuit.zkey"
#define MERKLE_W "tests/data/bn128/merkle/witness.wtns"
#define BLS_W "tests/data/bls12381/multiplier/witness.wtns"

static char tmpdir[] = "/tmp/cuzk-engine-XXXXXX";

/* an engine on cfg, started; NULL (a failed check) when it does not start */
static engine *start_cfg(const engine_config *cfg)
{
    engine *e = NULL;
    char err[CUZK_ERRLEN];
    cuzk_err rc = engine_create(&e, cfg, err);
    if (!rc)
        rc = engine_start(e, err);
    CHECK(!rc, "engine start: %s", err);
    if (rc) {
        engine_destroy(e);
        return NULL;
    }
    return e;
}

/* the defaults on the CPU backend with one thread, in data dir tmpdir/sub */
static void test_config(engine_config *cfg, char *dir, size_t cap, const char *sub)
{
    engine_config_defaults(cfg);
    snprintf(dir, cap, "%s/%s", tmpdir, sub);
    cfg->data_dir = dir;
    cfg->backend = ENGINE_BACKEND_CPU;
    cfg->cpu_threads = 1;
}

static engine *start(const char *sub, uint64_t budget, int gpu_workers)
{
    engine_config cfg;
    char dir[256];
    test_config(&cfg, dir, sizeof dir, sub);
    cfg.budget_bytes = budget;
    cfg.gpu_workers = gpu_workers;
    return start_cfg(&cfg);
}

static cuzk_err submit(engine *e, const char *zkey, const char *wtns, size_t n, engine_kind kind, int prio,
                       const char *idem, char *id, char *err)
{
    const char *paths[64];
    for (size_t i = 0; i < n; i++)
        paths[i] = wtns;
    engine_job_spec s = {.zkey_path = zkey, .n_partitions = n, .witness_paths = paths, .kind = kind,
                         .priority = prio, .idempotency_key = idem};
    int existed;
    return engine_submit(e, &s, id, &existed, err);
}

static int have_snarkjs(void)
{
    return access("node_modules/.bin/snarkjs", X_OK) == 0;
}

static int write_file(const char *path, const char *text)
{
    FILE *f = fopen(path, "w");
    if (!f)
        return -1;
    fputs(text, f);
    return fclose(f);
}

/* whether snarkjs accepts proof / pub (JSON text) for the merkle key; the files go to
   tmpdir/{proof,public}-tag.json */
static int snarkjs_accepts(const char *tag, const char *proof, const char *pub)
{
    char pp[300], pu[300], cmd[1200];
    snprintf(pp, sizeof pp, "%s/proof-%s.json", tmpdir, tag);
    snprintf(pu, sizeof pu, "%s/public-%s.json", tmpdir, tag);
    write_file(pp, proof);
    write_file(pu, pub);
    snprintf(cmd, sizeof cmd,
             "node_modules/.bin/snarkjs groth16 verify tests/data/bn128/merkle/vk.json %s %s >/dev/null 2>&1", pu, pp);
    return system(cmd) == 0;
}

static char *read_file(const char *path)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return NULL;
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    fseek(f, 0, SEEK_SET);
    char *b = malloc((size_t)n + 1);
    if (b && fread(b, 1, (size_t)n, f) != (size_t)n) {
        free(b);
        b = NULL;
    }
    if (b)
        b[n] = 0;
    fclose(f);
    return b;
}

/* public signals as a normalized string (whitespace dropped) */
static void squash(char *s)
{
    char *o = s;
    for (; *s; s++)
        if (*s != ' ' && *s != '\n' && *s != '\r' && *s != '\t')
            *o++ = *s;
    *o = 0;
}

/* Transient faults. CUZK_FAULT_OOM=3 fails the first three device-stage calls of the process
 * (the CPU backend's hook, read at its first call: this test runs first) as a GPU out of memory
 * does; the partition is paused three times, each not counting as an attempt, and its job ends
 * done with a proof that snarkjs accepts. Then a data dir that cannot keep min_free bytes free
 * refuses an upload with CUZK_ENOSPC, free and required bytes in the message, and journals
 * nothing. */
static void test_transient(void)
{
    setenv("CUZK_FAULT_OOM", "3", 1);
    engine_config cfg;
    char dir[256], err[CUZK_ERRLEN], id[ENGINE_ID_LEN];
    test_config(&cfg, dir, sizeof dir, "transient");
    cfg.retry_max_ms = 100;
    cfg.min_free = (uint64_t)1 << 62; /* more than any disk: every upload is refused */
    engine *e = start_cfg(&cfg);
    if (!e)
        return;
    /* by path: nothing is written to the data dir, and min_free still applies */
    cuzk_err rc = submit(e, MERKLE_Z, MERKLE_W, 1, KIND_CUSTOM, -1, NULL, id, err);
    CHECK(rc == CUZK_ENOSPC && strstr(err, "free") && strstr(err, "--min-free"), "min_free: rc %d %s", rc, err);
    json_t *l = engine_list(e, NULL, 0);
    CHECK(json_array_size(l) == 0, "a refused submission was journaled (%zu jobs)", json_array_size(l));
    json_decref(l);
    engine_destroy(e);

    cfg.min_free = 0;
    if (!(e = start_cfg(&cfg)))
        return;
    CHECK(!submit(e, MERKLE_Z, MERKLE_W, 1, KIND_CUSTOM, -1, NULL, id, err), "submit: %s", err);
    engine_job_info info;
    rc = engine_wait(e, id, 60000, &info, err);
    CHECK(!rc && info.state == JOB_DONE, "after 3 device OOMs: state %s %s", engine_job_state_name(info.state),
          info.error);
    json_t *jj = engine_job_json(e, id, err);
    json_t *p0 = json_array_get(json_object_get(jj, "partitions"), 0);
    CHECK(json_integer_value(json_object_get(p0, "pauses")) == 3 && json_integer_value(json_object_get(p0, "attempts")) == 1,
          "pauses %lld attempts %lld", (long long)json_integer_value(json_object_get(p0, "pauses")),
          (long long)json_integer_value(json_object_get(p0, "attempts")));
    json_decref(jj);
    json_t *st = engine_status_json(e);
    json_t *pz = json_object_get(st, "paused");
    CHECK(json_integer_value(json_object_get(pz, "total")) == 0 &&
              json_integer_value(json_object_get(json_object_get(pz, "since_start"), "device_memory")) == 3 &&
              !strcmp(json_string_value(json_object_get(pz, "last_cause")), "device_memory"),
          "status paused summary");
    json_decref(st);
    char *m = engine_metrics_text(e);
    CHECK(m && strstr(m, "cuzk_partitions_paused{cause=\"device_memory\"} 0") &&
              strstr(m, "cuzk_partition_pauses_total{cause=\"device_memory\"} 3"),
          "paused metrics");
    free(m);
    char *proof = NULL, *pub = NULL;
    CHECK(!engine_fetch_proof(e, id, 0, &proof, &pub, err), "fetch: %s", err);
    if (proof && have_snarkjs())
        CHECK(snarkjs_accepts("oom", proof, pub), "snarkjs rejected the proof made after the device OOMs");
    free(proof);
    free(pub);
    engine_destroy(e);
}

static void test_prove_and_verify(void)
{
    engine *e = start("basic", 0, 2);
    if (!e)
        return;
    char id[ENGINE_ID_LEN], err[CUZK_ERRLEN];
    cuzk_err rc = submit(e, MERKLE_Z, MERKLE_W, 3, KIND_POREP, -1, NULL, id, err);
    CHECK(!rc, "submit: %s", err);
    engine_job_info info;
    rc = engine_wait(e, id, 120000, &info, err);
    CHECK(!rc && info.state == JOB_DONE, "wait: rc %d state %s %s %s", rc, engine_job_state_name(info.state),
          err, info.error);
    CHECK(info.n_done == 3 && info.priority == PRIO_NORMAL, "n_done %u prio %d", info.n_done, info.priority);
    char *want_pub = read_file("tests/data/bn128/merkle/public.json");
    squash(want_pub);
    for (uint32_t i = 0; i < 3; i++) {
        char *proof = NULL, *pub = NULL;
        rc = engine_fetch_proof(e, id, i, &proof, &pub, err);
        CHECK(!rc, "fetch %u: %s", i, err);
        if (rc)
            continue;
        char *p2 = strdup(pub);
        squash(p2);
        CHECK(!strcmp(p2, want_pub), "public signals differ from snarkjs: %s vs %s", p2, want_pub);
        free(p2);
        if (have_snarkjs()) {
            char tag[16];
            snprintf(tag, sizeof tag, "%u", i);
            CHECK(snarkjs_accepts(tag, proof, pub), "snarkjs rejected proof %u", i);
        }
        free(proof);
        free(pub);
    }
    free(want_pub);
    char *proof, *pub;
    CHECK(engine_fetch_proof(e, id, 3, &proof, &pub, err) == CUZK_ENOTFOUND, "partition 3 must not exist");
    CHECK(engine_cancel(e, id, err) == CUZK_EINVAL, "cancel of a done job is refused");

    /* status, metrics, trace are well-formed and mention the work */
    json_t *st = engine_status_json(e);
    CHECK(json_integer_value(json_object_get(json_object_get(st, "jobs"), "done")) == 1, "status jobs.done");
    json_t *g0 = json_array_get(json_object_get(st, "gpu"), 0);
    CHECK(json_real_value(json_object_get(g0, "busy_ms")) > 0, "device busy time recorded");
    /* dispatcher, 2 synthesis, 2 device workers, 1 finalizer and the critical finalizer */
    json_t *ws = json_object_get(st, "workers");
    CHECK(json_array_size(ws) == 1 + 2 + 2 + 1 + 1, "workers %zu", json_array_size(ws));
    const char *wlast = json_string_value(json_object_get(json_array_get(ws, json_array_size(ws) - 1), "name"));
    CHECK(wlast && !strcmp(wlast, "final-critical"), "last worker %s", wlast ? wlast : "(none)");
    CHECK(json_integer_value(json_object_get(json_object_get(st, "buffers"), "allocs")) >= 1, "buffer allocs");
    json_decref(st);
    char *m = engine_metrics_text(e);
    CHECK(m && strstr(m, "cuzk_jobs_total{kind=\"porep\",state=\"done\"} 1") &&
              strstr(m, "cuzk_stage_seconds_count{stage=\"device\"} 3"),
          "metrics text");
    free(m);
    char *tr = engine_trace_json(e, 0);
    json_error_t je;
    json_t *doc = tr ? json_loads(tr, 0, &je) : NULL;
    CHECK(doc && json_array_size(json_object_get(doc, "traceEvents")) > 10, "trace JSON");
    json_decref(doc);
    free(tr);
    json_t *jj = engine_job_json(e, id, err);
    CHECK(jj && json_array_size(json_object_get(jj, "partitions")) == 3, "job json");
    json_decref(jj);
    engine_destroy(e);
}

/* The device backend of test_prefetch: the CPU backend with an msm_prefetch that takes a
 * pretend witness buffer (ws->pre_slot = 1) and holds it until msm_all consumes it or a
 * release gives it back, as the GPU backend does with its witness buffers. It counts what
 * happens and checks where the engine calls it (one device worker). */
typedef struct pf_counts {
    int held;          /* buffers taken and neither consumed nor given back */
    int taken;         /* prefetches that took one */
    int consumed;      /* msm_all calls that consumed one */
    int released;      /* releases that gave one back */
    int bare;          /* msm_all calls without a prefetch */
    int in_lock;       /* prefetches while the device's MSM lock was held */
    int no_hook;       /* prefetches without the phase hook */
    int busy;          /* prefetches during which the worker was reported busy */
    int fail_next;     /* 1: the next prefetch fails, taking nothing */
    int gate;          /* 1: the next prefetch, having taken its buffer, sets 2 and waits for 0 */
} pf_counts;

typedef struct pf_backend {
    cuzk_backend be;   /* the CPU backend's table; msm_prefetch, msm_all, msm_batch, destroy replaced */
    cuzk_backend *cpu;
    engine *e;
    pthread_mutex_t mu;
    pthread_cond_t cv;
    pf_counts n;       /* (mu) */
} pf_backend;

/* the state of device 0's only worker */
static int pf_worker_state(engine *e)
{
    for (int i = 0; i < e->n_workers; i++)
        if (!strcmp(e->workers[i].kind, "device") && e->workers[i].dev == 0)
            return atomic_load(&e->workers[i].state);
    return TRK_BUSY;
}

static cuzk_err pf_prefetch(cuzk_backend *be, void *ks, groth16_ws *ws, int release, char *err)
{
    (void)ks;
    pf_backend *f = (pf_backend *)be;
    pthread_mutex_lock(&f->mu);
    if (release) {
        if (ws->pre_slot) {
            ws->pre_slot = 0;
            f->n.held--;
            f->n.released++;
        }
        pthread_mutex_unlock(&f->mu);
        return CUZK_OK;
    }
    pthread_mutex_lock(&f->e->rq_mu);
    f->n.in_lock += f->e->dev_busy[0][1];
    pthread_mutex_unlock(&f->e->rq_mu);
    f->n.no_hook += !ws->phase;
    f->n.busy += pf_worker_state(f->e) == TRK_BUSY;
    if (f->n.fail_next) {
        f->n.fail_next = 0;
        pthread_mutex_unlock(&f->mu);
        return cuzk_errf(err, CUZK_EDEVICE, "prefetch: injected failure");
    }
    if (!ws->pre_slot) {
        ws->pre_slot = 1;
        f->n.held++;
        f->n.taken++;
    }
    if (f->n.gate) {
        f->n.gate = 2;
        pthread_cond_broadcast(&f->cv);
        while (f->n.gate)
            pthread_cond_wait(&f->cv, &f->mu);
    }
    pthread_mutex_unlock(&f->mu);
    /* the copy, reported as the GPU backend reports it; afterwards the worker waits for the
       MSM lock again, it is not busy */
    if (ws->phase) {
        ws->phase(ws->phase_ctx, GROTH16_PHASE_COPY);
        ws->phase(ws->phase_ctx, GROTH16_PHASE_COMPUTE);
    }
    pthread_mutex_lock(&f->mu);
    f->n.busy += pf_worker_state(f->e) == TRK_BUSY;
    pthread_mutex_unlock(&f->mu);
    return CUZK_OK;
}

static cuzk_err pf_msm_all(cuzk_backend *be, void *ks, groth16_ws *ws, char *err)
{
    pf_backend *f = (pf_backend *)be;
    pthread_mutex_lock(&f->mu);
    if (ws->pre_slot) {
        ws->pre_slot = 0;
        f->n.held--;
        f->n.consumed++;
    } else {
        f->n.bare++;
    }
    pthread_mutex_unlock(&f->mu);
    return f->cpu->msm_all(f->cpu, ks, ws, err);
}

static void pf_destroy(cuzk_backend *be)
{
    pf_backend *f = (pf_backend *)be;
    f->cpu->destroy(f->cpu);
    pthread_mutex_destroy(&f->mu);
    pthread_cond_destroy(&f->cv);
    free(f);
}

static pf_counts pf_read(pf_backend *f)
{
    pthread_mutex_lock(&f->mu);
    pf_counts c = f->n;
    pthread_mutex_unlock(&f->mu);
    return c;
}

static int pf_gate_reached(const pf_counts *c) { return c->gate == 2; }
static int pf_given_back(const pf_counts *c) { return c->released == 1 && c->held == 0; }

/* f's counters once done(counters) holds, or after ms milliseconds */
static pf_counts pf_wait(pf_backend *f, int ms, int (*done)(const pf_counts *))
{
    pf_counts c = pf_read(f);
    for (int t = 0; t < ms && !done(&c); t += 10) {
        usleep(10000);
        c = pf_read(f);
    }
    return c;
}

/* A backend with msm_prefetch (pf_backend) behind one device worker: every partition is
 * prefetched once, between its h step and the MSM lock (never while the lock is held, with the
 * phase hook set and the worker not shown busy), and its msm_all consumes the prefetch; a failed
 * prefetch fails the attempt as a failed step does (the retry proves it); a job canceled while its
 * partition holds a prefetch gives it back. Nothing is ever left held. */
static void test_prefetch(void)
{
    engine_config cfg;
    char dir[256], err[CUZK_ERRLEN], id[ENGINE_ID_LEN];
    test_config(&cfg, dir, sizeof dir, "prefetch");
    cfg.gpu_workers = 1;
    engine *e = NULL;
    pf_backend *f = NULL;
    cuzk_backend *cpu = NULL;
    cuzk_err rc = engine_create(&e, &cfg, err);
    CHECK(!rc, "engine create: %s", err);
    if (!rc) {
        f = calloc(1, sizeof *f);
        cpu = f ? cpu_backend_create(CURVE_BN254, 1, err) : NULL;
        CHECK(cpu, "cpu backend: %s", f ? err : "out of memory");
    }
    if (!cpu) {
        free(f);
        engine_destroy(e);
        return;
    }
    f->be = *cpu;
    f->be.msm_prefetch = pf_prefetch;
    f->be.msm_all = pf_msm_all;
    f->be.msm_batch = NULL; /* one partition per device stage (device_stage, not the batch path) */
    f->be.destroy = pf_destroy;
    f->cpu = cpu;
    f->e = e;
    pthread_mutex_init(&f->mu, NULL);
    pthread_cond_init(&f->cv, NULL);
    e->dev_be[CURVE_BN254][0] = &f->be; /* before the start: no key is loaded yet */
    if ((rc = engine_start(e, err))) {
        CHECK(!rc, "engine start: %s", err);
        engine_destroy(e);
        return;
    }
    engine_job_info info;

    CHECK(!submit(e, MERKLE_Z, MERKLE_W, 3, KIND_CUSTOM, -1, NULL, id, err), "submit: %s", err);
    rc = engine_wait(e, id, 120000, &info, err);
    CHECK(!rc && info.state == JOB_DONE, "job: %s %s", engine_job_state_name(info.state), info.error);
    pf_counts c = pf_read(f);
    CHECK(c.taken == 3 && c.consumed == 3 && c.released == 0 && c.bare == 0 && c.held == 0,
          "3 partitions: %d prefetched, %d consumed by msm_all, %d given back, %d msm_all without, %d held",
          c.taken, c.consumed, c.released, c.bare, c.held);
    CHECK(!c.in_lock && !c.no_hook && !c.busy,
          "prefetches: %d under the MSM lock, %d without the phase hook, %d with the worker shown busy", c.in_lock,
          c.no_hook, c.busy);

    /* a failed prefetch: the attempt fails, the retry proves the partition */
    pthread_mutex_lock(&f->mu);
    f->n.fail_next = 1;
    pthread_mutex_unlock(&f->mu);
    CHECK(!submit(e, MERKLE_Z, MERKLE_W, 1, KIND_CUSTOM, -1, NULL, id, err), "submit: %s", err);
    rc = engine_wait(e, id, 120000, &info, err);
    CHECK(!rc && info.state == JOB_DONE, "after a failed prefetch: %s %s", engine_job_state_name(info.state),
          info.error);
    json_t *jj = engine_job_json(e, id, err);
    json_int_t att = json_integer_value(json_object_get(json_array_get(json_object_get(jj, "partitions"), 0), "attempts"));
    CHECK(att == 2, "a failed prefetch counts as a failed attempt: %lld attempts", (long long)att);
    json_decref(jj);
    c = pf_read(f);
    CHECK(c.taken == 4 && c.consumed == 4 && c.released == 0 && c.held == 0,
          "after a failed prefetch: %d prefetched, %d consumed, %d given back, %d held", c.taken, c.consumed,
          c.released, c.held);

    /* canceled while its partition holds a prefetch: the worker finds the job stopping at the
       MSM lock and gives the buffer back */
    pthread_mutex_lock(&f->mu);
    f->n.gate = 1;
    pthread_mutex_unlock(&f->mu);
    CHECK(!submit(e, MERKLE_Z, MERKLE_W, 1, KIND_CUSTOM, -1, NULL, id, err), "submit: %s", err);
    c = pf_wait(f, 60000, pf_gate_reached);
    CHECK(c.gate == 2, "the prefetch of the job to cancel never came");
    CHECK(!engine_cancel(e, id, err), "cancel: %s", err);
    pthread_mutex_lock(&f->mu);
    f->n.gate = 0;
    pthread_cond_broadcast(&f->cv);
    pthread_mutex_unlock(&f->mu);
    CHECK(!engine_wait(e, id, 10000, &info, err) && info.state == JOB_CANCELED, "canceled: %s",
          engine_job_state_name(info.state));
    c = pf_wait(f, 10000, pf_given_back);
    CHECK(c.taken == 5 && c.consumed == 4 && c.released == 1 && c.held == 0,
          "canceled between prefetch and MSMs: %d prefetched, %d consumed, %d given back, %d held", c.taken,
          c.consumed, c.released, c.held);
    engine_destroy(e);
}

static void test_priority(void)
{
    /* one device worker so the order of device work is the order of the queue */
    engine *e = start("prio", 0, 1);
    if (!e)
        return;
    char ids[8][ENGINE_ID_LEN], crit[ENGINE_ID_LEN], err[CUZK_ERRLEN];
    for (int i = 0; i < 8; i++)
        CHECK(!submit(e, MERKLE_Z, MERKLE_W, 2, KIND_POREP, PRIO_LOW, NULL, ids[i], err), "submit: %s", err);
    CHECK(!submit(e, MULT_Z, MULT_W, 1, KIND_WINNING_POST, -1, NULL, crit, err), "submit: %s", err);
    engine_job_info ci, last;
    CHECK(!engine_wait(e, crit, 120000, &ci, err) && ci.state == JOB_DONE, "critical job: %s", err);
    CHECK(ci.priority == PRIO_CRITICAL, "winning-post defaults to critical");
    CHECK(!engine_wait(e, ids[7], 120000, &last, err) && last.state == JOB_DONE, "backlog: %s", err);
    int after = 0;
    for (int i = 0; i < 8; i++) {
        engine_job_info bi;
        engine_wait(e, ids[i], 120000, &bi, err);
        after += bi.finished_ms > ci.finished_ms;
    }
    printf("    critical job finished ahead of %d of 8 backlog jobs\n", after);
    CHECK(after >= 6, "critical job finished before only %d of 8 backlog jobs", 8 - after);
    CHECK(ci.finished_ms <= last.finished_ms, "critical job finished after the last of the backlog");
    engine_destroy(e);
}

static void test_budget(void)
{
    /* find the sizes from a refused submit on a tiny budget */
    engine *e = start("tiny", 1 << 20, 1);
    if (!e)
        return;
    char id[ENGINE_ID_LEN], err[CUZK_ERRLEN];
    cuzk_err rc = submit(e, MERKLE_Z, MERKLE_W, 1, KIND_CUSTOM, -1, NULL, id, err);
    CHECK(rc == CUZK_EBUDGET && strstr(err, "budget") && strstr(err, "1048576"),
          "oversized partition: rc %d, %s", rc, err);
    engine_destroy(e);
    unsigned long long need = 0;
    const char *p = strstr(err, "needs ");
    if (p)
        need = strtoull(p + 6, NULL, 10);
    CHECK(need > 0, "message should name the bytes needed: %s", err);
    if (!need)
        return;
    /* room for the key and one and a half partitions: admission must wait, not fail */
    e = start("tight", need + need / 2, 2);
    if (!e)
        return;
    char ids[6][ENGINE_ID_LEN];
    for (int i = 0; i < 6; i++)
        CHECK(!submit(e, MERKLE_Z, MERKLE_W, 2, KIND_SNAP, -1, NULL, ids[i], err), "submit %d: %s", i, err);
    for (int i = 0; i < 6; i++) {
        engine_job_info info;
        CHECK(!engine_wait(e, ids[i], 180000, &info, err) && info.state == JOB_DONE, "job %d: %s %s", i, err,
              info.error);
    }
    json_t *st = engine_status_json(e);
    json_t *b = json_object_get(st, "budget");
    json_int_t peak = json_integer_value(json_object_get(b, "peak")), total = json_integer_value(json_object_get(b, "total"));
    CHECK(peak <= total && peak > 0, "budget peak %lld of %lld", (long long)peak, (long long)total);
    json_decref(st);
    engine_destroy(e);
}

static void test_refusals_cancel_idem(void)
{
    engine *e = start("misc", 0, 1);
    if (!e)
        return;
    char id[ENGINE_ID_LEN], id2[ENGINE_ID_LEN], err[CUZK_ERRLEN];
    cuzk_err rc = submit(e, MULT_Z, BLS_W, 1, KIND_CUSTOM, -1, NULL, id, err);
    CHECK(rc == CUZK_ECURVE || rc == CUZK_EFORMAT, "bls witness on a bn254 key: rc %d %s", rc, err);
    CHECK(strstr(err, "witness 0"), "message names the witness: %s", err);
    rc = submit(e, MULT_Z, MERKLE_W, 1, KIND_CUSTOM, -1, NULL, id, err);
    CHECK(rc != CUZK_OK, "witness of the wrong size must be refused");
    rc = submit(e, "/nonexistent.zkey", MULT_W, 1, KIND_CUSTOM, -1, NULL, id, err);
    CHECK(rc == CUZK_EIO, "missing key: %d %s", rc, err);
    rc = submit(e, MULT_Z, MULT_W, 0, KIND_CUSTOM, -1, NULL, id, err);
    CHECK(rc == CUZK_EINVAL, "zero partitions");

    /* idempotency */
    CHECK(!submit(e, MULT_Z, MULT_W, 1, KIND_CUSTOM, -1, "abc", id, err), "%s", err);
    CHECK(!submit(e, MULT_Z, MULT_W, 1, KIND_CUSTOM, -1, "abc", id2, err), "%s", err);
    CHECK(!strcmp(id, id2), "idempotency key gave %s and %s", id, id2);

    /* uploaded witness bytes */
    char *wbytes = NULL;
    FILE *f = fopen(MULT_W, "rb");
    size_t wn = 0;
    if (f) {
        wbytes = malloc(4096);
        wn = fread(wbytes, 1, 4096, f);
        fclose(f);
    }
    const uint8_t *data[1] = {(const uint8_t *)wbytes};
    engine_job_spec s = {.zkey_path = MULT_Z, .n_partitions = 1, .witness_data = data, .witness_sizes = &wn,
                         .kind = KIND_CUSTOM, .priority = PRIO_HIGH};
    int existed;
    CHECK(!engine_submit(e, &s, id, &existed, err), "upload: %s", err);
    engine_job_info info;
    CHECK(!engine_wait(e, id, 60000, &info, err) && info.state == JOB_DONE, "uploaded job: %s", info.error);
    wbytes[0] ^= 0xff; /* bad magic */
    CHECK(engine_submit(e, &s, id, &existed, err) != CUZK_OK, "corrupt upload must be refused");
    free(wbytes);

    /* cancel a queued job behind a backlog */
    char back[6][ENGINE_ID_LEN], victim[ENGINE_ID_LEN];
    for (int i = 0; i < 6; i++)
        submit(e, MERKLE_Z, MERKLE_W, 2, KIND_CUSTOM, PRIO_NORMAL, NULL, back[i], err);
    CHECK(!submit(e, MERKLE_Z, MERKLE_W, 4, KIND_CUSTOM, PRIO_LOW, NULL, victim, err), "%s", err);
    CHECK(!engine_cancel(e, victim, err), "cancel: %s", err);
    CHECK(!engine_wait(e, victim, 1000, &info, err) && info.state == JOB_CANCELED, "canceled state");
    char *pr, *pu;
    CHECK(engine_fetch_proof(e, victim, 0, &pr, &pu, err) == CUZK_EINVAL, "no proofs of a canceled job");
    for (int i = 0; i < 6; i++)
        CHECK(!engine_wait(e, back[i], 120000, &info, err) && info.state == JOB_DONE, "backlog after cancel");
    CHECK(engine_wait(e, "j-99999", 10, &info, err) == CUZK_ENOTFOUND, "unknown job");
    CHECK(engine_wait(e, "garbage", 10, &info, err) == CUZK_ENOTFOUND, "malformed id");

    /* a witness that does not satisfy the circuit (c = 34 instead of 3 * 11) passes the
       submit checks, but its proof fails verification twice, so the job fails */
    char wbad[300];
    snprintf(wbad, sizeof wbad, "%s/bad.wtns", tmpdir);
    char *img = NULL;
    f = fopen(MULT_W, "rb");
    wn = 0;
    if (f) {
        img = malloc(4096);
        wn = fread(img, 1, 4096, f);
        fclose(f);
    }
    CHECK(img && wn == 204, "multiplier witness is %zu bytes, expected 204", wn);
    if (img && wn == 204) {
        img[wn - 3 * 32] = 34; /* values: 1, c, a, b; c's low byte */
        f = fopen(wbad, "wb");
        fwrite(img, 1, wn, f);
        fclose(f);
    }
    free(img);
    CHECK(!submit(e, MULT_Z, wbad, 1, KIND_CUSTOM, PRIO_LOW, NULL, id, err), "%s", err);
    CHECK(!engine_wait(e, id, 120000, &info, err) && info.state == JOB_FAILED, "bad witness: state %s",
          engine_job_state_name(info.state));
    CHECK(strstr(info.error, "partition 0") && strstr(info.error, "verify"), "failure reason: %s", info.error);
    json_t *jj = engine_job_json(e, id, err);
    CHECK(json_integer_value(json_object_get(json_array_get(json_object_get(jj, "partitions"), 0), "attempts")) == 2,
          "two attempts");
    json_decref(jj);
    engine_destroy(e);
}

/* bytes one partition of zkey/wtns needs, read from the refusal on a 1 KiB budget */
static unsigned long long need_of(const char *sub, const char *zkey, const char *wtns)
{
    engine *e = start(sub, 1024, 1);
    if (!e)
        return 0;
    char id[ENGINE_ID_LEN], err[CUZK_ERRLEN];
    unsigned long long need = 0;
    if (submit(e, zkey, wtns, 1, KIND_CUSTOM, -1, NULL, id, err) == CUZK_EBUDGET && strstr(err, "needs "))
        need = strtoull(strstr(err, "needs ") + 6, NULL, 10);
    engine_destroy(e);
    return need;
}

static int key_loaded(engine *e, const char *suffix)
{
    json_t *st = engine_status_json(e);
    json_t *keys = json_object_get(st, "keys");
    int found = 0;
    for (size_t i = 0; i < json_array_size(keys); i++) {
        const char *p = json_string_value(json_object_get(json_array_get(keys, i), "path"));
        if (p && strlen(p) >= strlen(suffix) && !strcmp(p + strlen(p) - strlen(suffix), suffix))
            found = 1;
    }
    json_decref(st);
    return found;
}

static void test_keys(void)
{
    unsigned long long a = need_of("need-a", MERKLE_Z, MERKLE_W), b = need_of("need-b", MULT_Z, MULT_W);
    CHECK(a > 0 && b > 0, "sizes %llu %llu", a, b);
    if (!a || !b)
        return;
    /* room for the merkle key and partition exactly: nothing else fits beside them */
    engine *e = start("keys", a > b ? a : b, 1);
    if (!e)
        return;
    char id[ENGINE_ID_LEN], err[CUZK_ERRLEN];
    engine_job_info info;
    CHECK(!engine_key_preload(e, MERKLE_Z, err), "preload: %s", err);
    CHECK(key_loaded(e, "merkle/circuit.zkey"), "preloaded key listed");
    CHECK(!engine_key_evict(e, MERKLE_Z, err), "evict: %s", err);
    CHECK(!key_loaded(e, "merkle/circuit.zkey"), "evicted key gone");
    CHECK(engine_key_evict(e, MERKLE_Z, err) == CUZK_ENOTFOUND, "second evict: ENOTFOUND");
    CHECK(!submit(e, MULT_Z, MULT_W, 1, KIND_CUSTOM, -1, NULL, id, err), "%s", err);
    CHECK(!engine_wait(e, id, 60000, &info, err) && info.state == JOB_DONE, "multiplier job: %s", info.error);
    CHECK(key_loaded(e, "multiplier/circuit.zkey"), "key stays loaded after its job");
    /* the merkle key does not fit next to it: the idle key is evicted */
    CHECK(!submit(e, MERKLE_Z, MERKLE_W, 1, KIND_CUSTOM, -1, NULL, id, err), "%s", err);
    CHECK(!engine_wait(e, id, 60000, &info, err) && info.state == JOB_DONE, "merkle job: %s", info.error);
    CHECK(!key_loaded(e, "multiplier/circuit.zkey") && key_loaded(e, "merkle/circuit.zkey"),
          "memory pressure should have evicted the idle multiplier key");
    engine_destroy(e);
}

static void test_restart(void)
{
    engine *e = start("restart", 0, 1);
    if (!e)
        return;
    char ids[5][ENGINE_ID_LEN], err[CUZK_ERRLEN];
    for (int i = 0; i < 5; i++)
        CHECK(!submit(e, MERKLE_Z, MERKLE_W, 2, KIND_CUSTOM, -1, NULL, ids[i], err), "%s", err);
    engine_job_info info;
    CHECK(!engine_wait(e, ids[0], 120000, &info, err) && info.state == JOB_DONE, "first job done");
    engine_destroy(e); /* the rest are queued or running */
    e = start("restart", 0, 1);
    if (!e)
        return;
    for (int i = 0; i < 5; i++) {
        CHECK(!engine_wait(e, ids[i], 180000, &info, err) && info.state == JOB_DONE, "after restart %s: %s %s",
              ids[i], engine_job_state_name(info.state), info.error);
        char *pr = NULL, *pu = NULL;
        CHECK(!engine_fetch_proof(e, ids[i], 1, &pr, &pu, err), "proof after restart: %s", err);
        free(pr);
        free(pu);
    }
    json_t *l = engine_list(e, "done", 0);
    CHECK(json_array_size(l) == 5, "list done: %zu", json_array_size(l));
    json_decref(l);
    engine_destroy(e);
}

/* fetches partition part of job id, expecting it to be refused as damaged, then waits for the
   job to be done again and fetches the new proof, which must differ */
static void refetch_damaged(engine *e, const char *id, uint32_t part, const char *damaged, const char *why)
{
    char *proof = NULL, *pub = NULL, err[CUZK_ERRLEN] = "";
    cuzk_err rc = engine_fetch_proof(e, id, part, &proof, &pub, err);
    CHECK(rc == CUZK_EINVAL && !proof && !pub && strstr(err, why) && strstr(err, "proved again"),
          "a damaged proof (%s) was handed out or not reported: %d %s", why, rc, err);
    free(proof);
    free(pub);
    engine_job_info info;
    rc = engine_wait(e, id, 120000, &info, err);
    CHECK(!rc && info.state == JOB_DONE && info.n_done == 2, "done again: %d %s %s", rc, err, info.error);
    rc = engine_fetch_proof(e, id, part, &proof, &pub, err);
    CHECK(!rc && proof && strcmp(proof, damaged), "the partition proved again: %s", err);
    free(proof);
    free(pub);
}

static void test_damaged_proof(void)
{
    engine *e = start("damaged", 0, 1);
    if (!e)
        return;
    char id[ENGINE_ID_LEN], err[CUZK_ERRLEN], path[300], sql[200];
    CHECK(!submit(e, MULT_Z, MULT_W, 2, KIND_CUSTOM, -1, NULL, id, err), "submit: %s", err);
    engine_job_info info;
    CHECK(!engine_wait(e, id, 120000, &info, err) && info.state == JOB_DONE, "done: %s", err);
    snprintf(path, sizeof path, "%s/damaged/journal.db", tmpdir);

    /* bytes changed on disk: the journal's checksum */
    sqlite3 *db = NULL;
    snprintf(sql, sizeof sql, "UPDATE parts SET proof = replace(proof, '1', '2') WHERE job = %s AND idx = 1", id + 2);
    CHECK(sqlite3_open(path, &db) == SQLITE_OK && sqlite3_exec(db, sql, NULL, NULL, NULL) == SQLITE_OK,
          "damage: %s", sqlite3_errmsg(db));
    sqlite3_close(db);
    refetch_damaged(e, id, 1, "", "checksum");

    /* a proof that does not verify, with a sound checksum (swapped points): the pairing check
       against the key, which is loaded */
    char *proof = NULL, *pub = NULL;
    CHECK(!engine_fetch_proof(e, id, 0, &proof, &pub, err), "fetch: %s", err);
    json_t *j = proof ? json_loads(proof, 0, NULL) : NULL;
    char *bad = NULL;
    if (j) {
        json_t *a = json_incref(json_object_get(j, "pi_a")), *c = json_incref(json_object_get(j, "pi_c"));
        json_object_set_new(j, "pi_a", c);
        json_object_set_new(j, "pi_c", a);
        bad = json_dumps(j, 0);
        json_decref(j);
    }
    store *st = NULL;
    CHECK(bad && !store_sqlite_open(&st, path, err), "second connection: %s", err);
    if (st) {
        CHECK(!st->part_set_done(st, atoll(id + 2), 0, bad, pub, err), "write: %s", err);
        st->close(st);
        refetch_damaged(e, id, 0, bad, "does not verify");
    }
    free(bad);
    free(proof);
    free(pub);
    engine_destroy(e);
}

/* engine_sizing_auto against counts worked out by hand from the formula in engine.h:
 * finalizers = clamp(cores / 8, 1, 2 * n_dev), synth = clamp(max(2 * n_dev, cores / 2), 2,
 * queue_depth + 1); explicit counts kept */
static void test_sizing_auto(void)
{
    static const struct {
        int cores, n_dev, queue_depth, synth, final;
    } cases[] = {
        {2, 1, 4, 2, 1},      /* this CI machine: the old defaults */
        {16, 1, 4, 5, 2},     /* one H100 host, default queue depth: synthesis capped by the window */
        {16, 1, 8, 8, 2},     /* the same with bench/pipeline.sh's queue depth */
        {64, 1, 8, 9, 2},     /* many cores, one device: finalizers capped at 2 per device */
        {128, 8, 32, 33, 16}, /* eight GPUs */
        {8, 2, 4, 4, 1},      /* two devices, few cores */
        {1, 1, 1, 2, 1},      /* the floor */
        {0, 0, 0, 2, 1},      /* nonsense in, the floor out */
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        int synth = 0, fin = 0;
        engine_sizing_auto(cases[i].cores, cases[i].n_dev, cases[i].queue_depth, &synth, &fin);
        CHECK(synth == cases[i].synth && fin == cases[i].final,
              "auto sizing for %d cores, %d devices, queue depth %d: %d synthesis workers and %d finalizers, "
              "expected %d and %d", cases[i].cores, cases[i].n_dev, cases[i].queue_depth, synth, fin, cases[i].synth,
              cases[i].final);
    }
    int synth = 3, fin = 7;
    engine_sizing_auto(128, 8, 32, &synth, &fin);
    CHECK(synth == 3 && fin == 7, "explicit counts changed by auto sizing: %d, %d", synth, fin);
    synth = 0, fin = 5;
    engine_sizing_auto(16, 1, 4, &synth, &fin);
    CHECK(synth == 5 && fin == 5, "one auto, one explicit: %d, %d", synth, fin);
    CHECK(engine_cores() >= 1, "engine_cores %d", engine_cores());
    engine_config cfg;
    engine_config_defaults(&cfg);
    CHECK(cfg.synth_workers == 0 && cfg.finalizers == 0, "defaults are auto (0): %d, %d", cfg.synth_workers,
          cfg.finalizers);
}

int main(void)
{
    if (access(MERKLE_Z, R_OK) || access(MULT_Z, R_OK)) {
        printf("engine_test: SKIP (run from the repository root; fixtures in tests/data)\n");
        return 0;
    }
    if (!mkdtemp(tmpdir)) {
        perror("mkdtemp");
        return 1;
    }
    log_threshold = getenv("CUZK_TEST_VERBOSE") ? LOG_INFO : LOG_ERROR;
    struct {
        const char *name;
        void (*fn)(void);
    } tests[] = {{"transient faults", test_transient}, /* first: CUZK_FAULT_OOM counts from the first call */
                 {"auto sizing", test_sizing_auto}, {"prove and verify", test_prove_and_verify},
                 {"prefetch", test_prefetch}, {"priority", test_priority}, {"budget", test_budget},
                 {"refusals, cancel, idempotency", test_refusals_cancel_idem}, {"restart", test_restart}, {"key cache", test_keys},
                 {"damaged proofs", test_damaged_proof}};
    for (size_t i = 0; i < sizeof tests / sizeof tests[0]; i++) {
        time_t t0 = time(NULL);
        int before = failures;
        tests[i].fn();
        printf("  %-32s %s (%lds)\n", tests[i].name, failures == before ? "ok" : "FAILED", (long)(time(NULL) - t0));
    }
    char cmd[300];
    snprintf(cmd, sizeof cmd, "rm -rf %s", tmpdir);
    if (!failures && system(cmd) != 0)
        fprintf(stderr, "could not remove %s\n", tmpdir);
    if (failures) {
        fprintf(stderr, "engine_test: %d failure(s) (data in %s)\n", failures, tmpdir);
        return 1;
    }
    printf("engine_test: ok\n");
    return 0;
}
