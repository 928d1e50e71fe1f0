/* engine.h - the in-process proving engine the daemon (`cuzk serve`) runs: jobs of
 * partitions, priority scheduling, memory budget, synthesis and device workers,
 * verification, a SQLite journal, and the tracker behind /status, /metrics and traces.
 *
 * DESIGN. A job is one zkey and N witnesses ("partitions"), or a registered circuit and N
 * circuit inputs whose witnesses its generator writes during synthesis (engine_witgen.c).
 * engine_submit validates the inputs (files open, curve and size match the key, one
 * partition fits the budget), journals the job and its partitions, and only then returns
 * the id. From there each
 * partition flows through the pipeline on its own:
 *
 *   scheduler      partitions ordered by (priority desc, arrival asc)
 *   dispatcher     ONE thread: takes the head partition and reserves its bytes from the
 *                  budget, waiting (never skipping ahead) until they fit; admits no more
 *                  than queue_depth partitions past the scheduler at a time
 *   synthesis      workers: (run the witness generator,) load witness, groth16_step_abc
 *                  on the CPU backend
 *   device queue   priority queue of at most queue_depth synthesized partitions
 *   device workers N per device: groth16_step_h, then groth16_step_msm, each under its
 *                  own per-device lock so two workers overlap h and MSMs (the GPU
 *                  backend, or a CPU backend standing in as the device without a GPU)
 *   finalize queue unbounded: a device worker hands results over without waiting
 *   finalizers     groth16_step_assemble, then groth16_verify_batch over the queued proofs
 *                  of one key (finalize.c), off every shared lock; a partition that fails
 *                  (at any stage) is retried once from the scheduler, then the job fails
 *                  with the reason
 *
 * Memory. A partition reserves workspace (groth16_ws_size) + an aligned witness copy +
 * the witness file it maps; the first partition of a key not loaded also reserves the
 * key (mapped .zkey + the backends' copies, key_bytes_estimate in keys.c). It gives the
 * bytes back in parts: the witness file after synthesis, the workspace and witness copy
 * after the device stage (into the buffer pool, whose cached buffers stay charged to the
 * budget until reused or trimmed). Keys stay charged until evicted. What is not
 * budgeted is a fixed overhead: the binary and thread stacks, the CPU backends' MSM
 * bucket scratch (per pool, independent of the number of jobs), SQLite's page cache,
 * and the tracker ring (200k events x 64 bytes): about 64 MiB plus the MSM scratch.
 *
 * Job lifecycle (job.state; partitions have their own, engine_part_state):
 *
 *   engine_submit                dispatcher_main: first partition
 *   (journaled, id returned)     gets its budget
 *        |                    +-------------------------+
 *        v                    |                         v
 *    +--------+---------------+                    +---------+
 *    | QUEUED |                                    | RUNNING |
 *    +--------+ <------------------------------+   +---------+
 *        |       engine_start -> recover_one:   |    |  |  |
 *        |       every journaled QUEUED or      +----+  |  |  final_main: last partition
 *        |       RUNNING job is re-queued; its          |  |  verified -> +------+
 *        |       partitions not DONE start over         |  +------------> | DONE |
 *        |                                              |                 +------+
 *        | engine_cancel                engine_cancel   |  part_fail: a partition
 *        v                                              |  failed twice -> +--------+
 *   +----------+ <--------------------------------------+                  | FAILED |
 *   | CANCELED |                                                           +--------+
 *   +----------+
 *   A terminal job and its proofs are deleted by janitor_sweep proof_ttl_s after it finished, or
 *   fetch_grace_s after the first engine_fetch_proof; the job is then purged.
 *   A partition whose step fails for a transient cause (disk full, device or host memory:
 *   engine_err_transient) does not fail its job: it waits as PART_PAUSED and is retried with
 *   backoff (engine_pause.c) while the job stays RUNNING.
 *   A DONE job goes back to QUEUED when one of its stored proofs is found damaged, by
 *   recover_one (the journal's checksum) or engine_fetch_proof (the checksum, or the pairing
 *   check against the loaded key); only the damaged partitions are proved again. A job whose
 *   journal record is damaged is FAILED at engine_start, with what is damaged.
 *
 * DONE, FAILED and CANCELED are terminal; engine_wait returns as soon as a job is terminal.
 *
 * Threads: every engine_* call is thread-safe and may block only where it says so.
 */
#ifndef CUZK_ENGINE_ENGINE_H
#define CUZK_ENGINE_ENGINE_H

#include <stddef.h>
#include <stdint.h>

#include <jansson.h>

#include "util/err.h"

typedef struct engine engine;

/* ---- kinds and priorities ---- */
typedef enum engine_kind {
    KIND_POREP = 0,
    KIND_SNAP = 1,
    KIND_WINDOW_POST = 2,
    KIND_WINNING_POST = 3,
    KIND_CUSTOM = 4,
    KIND_COUNT = 5
} engine_kind;

typedef enum engine_priority {
    PRIO_LOW = 0,
    PRIO_NORMAL = 1,
    PRIO_HIGH = 2,
    PRIO_CRITICAL = 3,
    PRIO_COUNT = 4
} engine_priority;

/* "porep", "snap", "window-post", "winning-post", "custom" */
const char *engine_kind_name(engine_kind k);
/* returns 0 and sets *out, or -1 for an unknown name */
int engine_kind_from_name(const char *name, engine_kind *out);
/* "low", "normal", "high", "critical" */
const char *engine_priority_name(engine_priority p);
int engine_priority_from_name(const char *name, engine_priority *out);
/* winning-post critical, window-post high, others normal */
engine_priority engine_kind_default_priority(engine_kind k);

/* ---- job and partition states ---- */
typedef enum engine_job_state {
    JOB_QUEUED = 0,   /* journaled, no partition admitted yet */
    JOB_RUNNING = 1,  /* at least one partition admitted */
    JOB_DONE = 2,     /* every partition proved and verified; proofs fetchable */
    JOB_FAILED = 3,   /* a partition failed twice; error says why */
    JOB_CANCELED = 4  /* engine_cancel */
} engine_job_state;

typedef enum engine_part_state {
    PART_QUEUED = 0,    /* waiting in the scheduler */
    PART_ADMITTED = 1,  /* budget reserved, waiting for a synthesis worker */
    PART_SYNTH = 2,     /* witness load + a/b/c */
    PART_READY = 3,     /* in the device queue */
    PART_DEVICE = 4,    /* h + MSMs on a device worker */
    PART_FINALIZE = 5,  /* assemble + verify */
    PART_DONE = 6,
    PART_FAILED = 7,
    PART_CANCELED = 8,
    PART_PAUSED = 9     /* a step failed for a transient cause (engine_pause_cause): waits out
                           its backoff, then goes back to the scheduler (engine_pause.c) */
} engine_part_state;

const char *engine_job_state_name(engine_job_state s);  /* "queued", "running", "done", ... */
const char *engine_part_state_name(engine_part_state s);/* "queued", "admitted", "synth", ... "paused" */

/* Why a partition is PART_PAUSED: a condition that clears by itself or by an operator, never
 * a fault of the job. Such a failure does not count as an attempt; the partition is retried
 * after 1 s, 2 s, 4 s, ... up to engine_config.retry_max_ms, for as long as it takes. */
typedef enum engine_pause_cause {
    PAUSE_NONE = 0,
    PAUSE_DISK_FULL = 1,     /* "disk_full": no space to store a proof, a witness or a journal
                                record (ENOSPC, EDQUOT, SQLITE_FULL) */
    PAUSE_DEVICE_MEMORY = 2, /* "device_memory": the device stage ran out of device memory */
    PAUSE_HOST_MEMORY = 3,   /* "host_memory": a host allocation failed in synthesis, or the
                                witness generator was killed by SIGKILL (the OOM killer) */
    PAUSE_COUNT = 4
} engine_pause_cause;

const char *engine_pause_cause_name(engine_pause_cause c); /* "none", "disk_full", ... */

/* ---- configuration ---- */
typedef enum engine_backend_choice {
    ENGINE_BACKEND_AUTO = 0, /* GPU when one is usable, else the CPU standing in as the device */
    ENGINE_BACKEND_CPU = 1,
    ENGINE_BACKEND_GPU = 2   /* engine_start fails when no GPU is usable */
} engine_backend_choice;

/* "auto", "cpu", "gpu" */
int engine_backend_from_name(const char *name, engine_backend_choice *out);

typedef struct engine_config {
    const char *data_dir;      /* journal, uploaded witnesses, caches; created if missing.
                                  Default "cuzk-data" (relative to the working directory) */
    const char *upload_dir;    /* where uploaded witnesses (witness/) and circuit inputs (input/)
                                  are written; NULL or "" = data_dir. With a shared store, a folder
                                  every host sees at the same path, so that any host can prove them */
    int lease_s;               /* with a shared (PostgreSQL) store: seconds a claim on a partition
                                  lasts unless renewed; default 30 */
    const char *store;         /* the job store: NULL or "" = the SQLite journal <data_dir>/journal.db;
                                  a postgres:// or postgresql:// URL = that PostgreSQL database
                                  (store_pg.c; witnesses stay in data_dir) */
    uint64_t budget_bytes;     /* host memory budget in bytes; 0 = auto (total RAM minus
                                  ENGINE_BUDGET_MARGIN, at least 256 MiB) */
    engine_backend_choice backend;
    int gpu_workers;           /* device workers per device; default 2 */
    int synth_workers;         /* synthesis workers; 0 = auto (default, engine_sizing_auto) */
    int finalizers;            /* finalizer threads (besides the one kept for critical
                                  partitions); 0 = auto (default, engine_sizing_auto) */
    int queue_depth;           /* max partitions waiting in the device queue; default 4 */
    int cpu_threads;           /* threads of each CPU backend pool; 0 = online CPUs / 2, >= 1 */
    int64_t proof_ttl_s;       /* seconds proofs of a DONE job are kept; default 86400 */
    int64_t fetch_grace_s;     /* seconds kept after the first fetch; default 600 */
    const char *devices;       /* devices that run the device stage: NULL or "" = every visible
                                  GPU (one CPU device without a GPU); else a comma-separated
                                  list of CUDA ordinals, one logical device each, repeats
                                  allowed ("0,1"; "0,0" = two logical devices on GPU 0); with
                                  the CPU backend only the count matters (logical CPU devices) */
    const char *const *circuits; /* n_circuits registrations "NAME=ZKEY,GENERATOR" (witgen.h):
                                  jobs may then give circuit inputs instead of witnesses */
    size_t n_circuits;
    const char *node;          /* node program for .wasm generators: a path, or a name looked up
                                  in $PATH; NULL or "" = "node" */
    int64_t witgen_timeout_s;  /* seconds one witness generator may run; default 600 */
    uint64_t gpu_mem;          /* device memory the keys on each GPU may use together (--gpu-mem);
                                  0 = what the card has. A key that does not fit resident streams
                                  its bases from page-locked host memory */
    int batch_max;             /* partitions of one key a GPU worker proves in one pass over a
                                  streamed key's bases, at most; default 10 (1: never batch) */
    uint64_t min_free;         /* bytes the data dir's file system must keep free after a
                                  submission's own files, else the submission is refused with
                                  CUZK_ENOSPC; default ENGINE_MIN_FREE_DEFAULT, 0 = no check */
    int64_t retry_max_ms;      /* longest wait between retries of a paused partition (the
                                  wait starts at 1 s and doubles); default 30000 */
} engine_config;

#define ENGINE_MIN_FREE_DEFAULT ((uint64_t)256 << 20) /* bytes: room for the journal and proofs */

#define ENGINE_BUDGET_MARGIN ((uint64_t)2 << 30) /* bytes left to the OS by budget auto */

/* Fills the defaults above (data_dir points to a static string). */
void engine_config_defaults(engine_config *cfg);

/* The worker counts `auto` stands for (engine_start resolves them once the devices are known):
 *   finalizers    = clamp(cores / 8, 1, 2 * n_dev)
 *   synth_workers = clamp(max(2 * n_dev, cores / 2), 2, queue_depth + 1)
 * cores: the CPUs this process may run on (nproc); n_dev: logical devices. A finalizer is one
 * core per proof (constant-time assembly, then its share of a batch verification): a device
 * finishing a partition every 10-15 ms needs under half a core of it, so two per device leave
 * room for bursts (a streamed pass hands over up to batch_max at once), and no more than an
 * eighth of the cores keeps them from crowding out synthesis. A synthesis worker's a/b/c runs
 * on the shared pool (one run at a time), so workers beyond one per device overlap only the
 * serial parts (witness load and copy, witness generators, which are single-threaded: up to
 * cores / 2 of them at once); the admission window lets at most queue_depth partitions (and a
 * critical one past it) be in synthesis at a time, so more workers than queue_depth + 1 would
 * never all work. Explicit counts (> 0) are kept as given. */
void engine_sizing_auto(int cores, int n_dev, int queue_depth, int *synth_workers, int *finalizers);
/* CPUs this process may run on (sched_getaffinity; online CPUs when that fails), >= 1 */
int engine_cores(void);

/* ---- lifecycle ---- */
/* Opens (or creates) the data dir and journal and sizes the budget. No threads yet. */
cuzk_err engine_create(engine **out, const engine_config *cfg, char *err);
/* Creates the backends, starts all threads, re-queues every journaled job that is not
 * terminal (recovery after a crash: each acknowledged job completes exactly once). */
cuzk_err engine_start(engine *e, char *err);
/* Stops accepting, lets running partitions end (their work is redone after a restart),
 * joins all threads. Idempotent. */
void engine_stop(engine *e);
/* tells the engine where its API listens (shown to the other hosts of a shared store) */
void engine_set_address(engine *e, const char *addr);
/* engine_stop if needed, then frees everything. NULL is ignored. */
void engine_destroy(engine *e);

/* ---- jobs ---- */
#define ENGINE_ID_LEN 32  /* bytes of a job id buffer incl. NUL; ids look like "j-42" */
#define ENGINE_MAX_PARTITIONS 1024

typedef struct engine_job_spec {
    const char *zkey_path;          /* path on this host (required unless circuit is given) */
    size_t n_partitions;            /* 1..ENGINE_MAX_PARTITIONS */
    /* Exactly one of witness_paths (paths on this host, read at proving time), witness_data
     * (whole .wtns file images, copied into the data dir before submit returns) or inputs. */
    const char *const *witness_paths;   /* n_partitions entries, or NULL */
    const uint8_t *const *witness_data; /* n_partitions entries, or NULL */
    const size_t *witness_sizes;        /* bytes of each witness_data entry */
    /* A registered circuit (engine_config.circuits) instead of zkey_path: inputs holds one
     * circuit input per partition (JSON object text), written into the data dir before
     * submit returns; synthesis runs the circuit's witness generator on it. */
    const char *circuit;                /* circuit name, or NULL */
    const char *const *inputs;          /* n_partitions entries, or NULL */
    engine_kind kind;
    int priority;                   /* engine_priority, or -1 for engine_kind_default_priority */
    const char *idempotency_key;    /* NULL or "" for none; at most 200 bytes */
} engine_job_spec;

/* Validates, journals and enqueues a job; writes its id. With an idempotency key that
 * was seen before, writes the existing job's id and sets *existed = 1 (else 0).
 * Errors: CUZK_EINVAL (bad spec, unknown circuit), CUZK_EIO/CUZK_EFORMAT (unreadable or malformed
 * file), CUZK_ECURVE (witness curve differs from the key), CUZK_EBUDGET (one partition
 * needs more than the whole budget; the message names both numbers), CUZK_ENOSPC (the data
 * dir's file system has less free space than cfg.min_free plus the bytes the submission
 * writes, or filled up while they were written; the message gives free and required bytes),
 * CUZK_ESTORE. Nothing is journaled when it fails. */
cuzk_err engine_submit(engine *e, const engine_job_spec *spec, char id[ENGINE_ID_LEN], int *existed,
                       char *err);

/* Small snapshot for clients that only need the outcome. */
typedef struct engine_job_info {
    char id[ENGINE_ID_LEN];
    engine_job_state state;
    engine_kind kind;
    engine_priority priority;
    uint32_t n_partitions;
    uint32_t n_done;               /* partitions in PART_DONE */
    int64_t submitted_ms, finished_ms; /* unix ms; finished 0 until terminal */
    char error[CUZK_ERRLEN];       /* reason when FAILED or CANCELED, else "" */
} engine_job_info;

/* CUZK_ENOTFOUND when there is no such job (or its proofs expired and it was purged). */
cuzk_err engine_get_job(engine *e, const char *id, engine_job_info *out, char *err);

/* Full job as JSON (caller json_decref's):
 *   {"id","kind","priority","state","error","zkey","submitted_ms","finished_ms",
 *    "n_partitions","n_done","idempotency_key",
 *    "partitions":[{"index","state","attempts","error","bytes",
 *                   "stages":{"queued_ms","admit_ms","synth_ms","ready_ms","device_ms","finalize_ms"},
 *                   "device_worker","pauses",
 *                   "cause","retry_in_ms"}]}   (stage values: milliseconds spent in each stage;
 *   pauses: transient failures of the partition; cause and retry_in_ms only while "paused") */
json_t *engine_job_json(engine *e, const char *id, char *err);

/* Blocks until the job is terminal or timeout_ms passes (< 0: no limit), then fills *out.
 * CUZK_OK when terminal (check out->state), CUZK_ETIMEOUT otherwise, CUZK_ENOTFOUND. */
cuzk_err engine_wait(engine *e, const char *id, int64_t timeout_ms, engine_job_info *out, char *err);

/* Cancels a job: queued partitions are dropped, running ones stop at their next stage
 * boundary, and their budget is returned. CUZK_OK also for an already-canceled job;
 * CUZK_EINVAL for a job that is DONE or FAILED; CUZK_ENOTFOUND. */
cuzk_err engine_cancel(engine *e, const char *id, char *err);

/* Jobs, newest first, at most limit (<= 0: 100): JSON array of engine_job_json objects
 * without "partitions". state_filter NULL for all, else a state name. */
json_t *engine_list(engine *e, const char *state_filter, int limit);

/* Proof and public signals of partition `part` of a DONE job, as the exact snarkjs JSON
 * text (malloc'd, caller frees both). First fetch starts the fetch grace period.
 * CUZK_ENOTFOUND (job, partition or expired proof), CUZK_EINVAL (job not DONE). A proof is
 * handed out only when its journal checksum holds and, when the job's key is loaded, it
 * verifies against the key's verification key; otherwise CUZK_EINVAL, and the partition is
 * being proved again (the job is no longer DONE: wait for it again). */
cuzk_err engine_fetch_proof(engine *e, const char *id, uint32_t part, char **proof_json,
                            char **public_json, char *err);

/* Registered circuits (caller json_decref's):
 *   [{"name","zkey","generator","kind":"native|wasm"}]                                 */
json_t *engine_circuits_json(engine *e);

/* ---- proving keys ---- */
/* Loads a key (mmap, attach to every backend) and keeps it until evicted. Blocks. */
cuzk_err engine_key_preload(engine *e, const char *zkey_path, char *err);
/* Drops a key that no partition is using: CUZK_EINVAL while in use, CUZK_ENOTFOUND. */
cuzk_err engine_key_evict(engine *e, const char *zkey_path, char *err);

/* ---- observability ---- */
/* Whole-engine snapshot (caller json_decref's):
 *   {"now_ms","uptime_s","backend","devices",
 *    "budget":{"total","used","waiting","peak","admitted","released"},  (bytes / counts)
 *    "queues":{"scheduler","ready","ready_limit","finalize"},
 *    "jobs":{"queued","running","done","failed","canceled"},
 *    "active":[engine_job_json objects of non-terminal jobs and the 20 last finished],
 *    "workers":[{"name","kind":"synth|device|finalize","device","state","partition",
 *                "busy_ms","jobs_done"}],
 *    "keys":[{"path","curve","bytes","refs","last_used_ms","loaded_ms"}],
 *    "buffers":{"buffers","bytes","pinned_bytes","cached","cached_bytes",   (levels)
 *               "takes","allocs","reuses","frees",                       (counters)
 *               "pool_bytes","free"},                                    (= bytes, cached)
 *    "gpu":[{"device","busy_ratio","busy_ratio_10s","busy_ms",
 *            "idle_gap_ms":{"no_work","budget","synthesis","finalizer","lock","copy"}}],
 *    "idle_gap_ms":{...totals over all devices...},
 *    "sizing":{"cores","synth_workers","synth_workers_auto","finalizers","finalizers_auto",
 *              "gpu_workers","queue_depth","cpu_threads"},
 *    "finalize":{"batches","proofs","largest","fallbacks","fallback_proofs","bad",
 *                "assemble_ms","verify_ms","journal_ms","queued","queue_peak"},
 *    "paused":{"total","disk_full","device_memory","host_memory",       (partitions now)
 *              "next_retry_ms","last_cause","last_error","since_start":{...by cause...}}} */
json_t *engine_status_json(engine *e);

/* Prometheus text exposition (malloc'd; caller frees): cuzk_jobs_total{kind,state},
 * cuzk_partitions_total{state}, cuzk_partitions_paused{cause}, cuzk_partition_pauses_total{cause},
 * cuzk_stage_seconds histogram{stage}, cuzk_gpu_busy_ratio,
 * cuzk_budget_bytes{kind=total|used}, cuzk_idle_gap_seconds_total{device,reason}, ... */
char *engine_metrics_text(engine *e);

/* Chrome trace-event JSON (Perfetto opens it), malloc'd. One complete ("X") event per
 * partition stage (pid 1, tid = job), one per device busy interval and one per idle gap
 * (pid 2, tid = device worker, name = reason). since_ms > 0 limits it to events ending
 * after that unix time. */
char *engine_trace_json(engine *e, int64_t since_ms);

/* GPU utilisation samples for the dashboard graph: JSON array of [unix_ms, busy 0..1]
 * per device at `step_ms` resolution (>= 50) over the last `window_ms` (caller json_decref's):
 *   [{"device":0,"step_ms":200,"samples":[[t,b],...]}]                                  */
json_t *engine_gpu_timeline(engine *e, int64_t window_ms, int64_t step_ms);

#endif
