/* engine_internal.h - the engine's private state, shared by engine.c (API, jobs,
 * recovery), pipeline.c (the worker threads), finalize.c (the finalizers), keys.c (key
 * cache, buffer pool) and engine_status.c (status JSON, metrics).
 *
 * Locks, in the order they may nest (never the other way round):
 *   e->mu        jobs table, job/partition states, scheduler and synthesis queues, key cache
 *   e->rq_mu     device (ready) queue and the device locks -- device workers take only
 *   e->fq_mu     finalize queue                   these two and the tracker's
 *   (a device lock is a flag under rq_mu, e->dev_busy[d][s], s = 0 for h, 1 for the MSMs,
 *   held around device work only; waiters sleep on e->cv_dev, see dev_acquire in pipeline.c)
 *   e->bp_mu     buffer pool
 *   budget.mu, tracker mu (leaf locks inside budget.c / tracker.c)
 */
#ifndef CUZK_ENGINE_INTERNAL_H
#define CUZK_ENGINE_INTERNAL_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>

#include <jansson.h>

#include "engine/budget.h"
#include "engine/engine.h"
#include "engine/pqueue.h"
#include "engine/store.h"
#include "engine/tracker.h"
#include "engine/witgen.h"
#include "groth16/prover.h"

#define ENGINE_PATH_MAX STORE_PATH_MAX
#define ENGINE_MAX_DEVICES 16

typedef struct ejob ejob;

/* A loaded proving key. Created by the dispatcher (or preload) with its bytes charged to
 * the budget; loaded by the first user (key_ensure); freed when evicted with refs == 0. */
typedef struct ekey {
    char path[ENGINE_PATH_MAX];
    int state;                 /* KEY_EMPTY, KEY_LOADING, KEY_READY, KEY_FAILED */
    char error[CUZK_ERRLEN];   /* load failure */
    zkey_file z;               /* mapped key (valid when READY) */
    cuzk_vk vk;                /* verification key (READY) */
    void *ks_synth;            /* key state on the synthesis backend */
    void *ks_crit;             /* key state on the critical synthesis backend, attached at first use */
    void *ks_dev[ENGINE_MAX_DEVICES]; /* key state on each device backend */
    unsigned dev_batch[ENGINE_MAX_DEVICES]; /* partitions one pass over the bases may prove on each
                                   device (streamed keys; 1: resident or CPU) */
    cuzk_matrix *matrix;       /* constraint matrix (CSR), shared by the synthesis and every
                                  device backend's key state; freed after they detach (READY) */
    const char *matrix_from;   /* "cache" (loaded from DATA/matrix/) or "built"; NULL before */
    char load_phase[48];       /* while LOADING: the step running ("matrix", "bases dev0", ...) (e->mu) */
    uint64_t load_done, load_total; /* its progress, in that step's units (e->mu) */
    uint64_t bytes;            /* bytes charged to the budget while loaded */
    int refs;                  /* partitions admitted with this key and not finished */
    int preloaded;             /* loaded by engine_key_preload */
    int64_t last_used_ms, loaded_ms; /* unix ms */
    struct ekey *next;
} ekey;

enum { KEY_EMPTY = 0, KEY_LOADING = 1, KEY_READY = 2, KEY_FAILED = 3 };

/* One partition. State changes under e->mu except where a single pipeline stage owns it. */
#define ENGINE_BATCH_MAX 16 /* partitions in one device pass over a streamed key's bases, at most */

typedef struct epart {
    ejob *job;
    uint32_t index;
    engine_part_state state;
    int attempts;               /* proving attempts started (journaled) */
    int owned;                  /* witness file lives in the data dir */
    char witness[ENGINE_PATH_MAX];
    char error[CUZK_ERRLEN];    /* last failure */
    uint64_t seq;               /* arrival order for the queues */
    /* resources while in flight */
    ekey *key;                  /* ref held from admission to the end of finalize */
    uint64_t held_file;         /* budget bytes still held for the mapped witness file */
    uint64_t held_ws;           /* budget bytes still held for the workspace buffer */
    uint64_t held_key;          /* budget bytes of a key this admission charged (moved to the key) */
    uint8_t *buf;               /* workspace + aligned witness copy (buffer pool) */
    size_t buf_size;            /* bytes */
    int buf_pinned;             /* buf is page-locked (gpu_host_alloc) */
    groth16_ws ws;
    cuzk_public pub;            /* public signals (from the witness) */
    /* timing, unix us */
    int64_t stage_t0;           /* start of the current stage */
    int64_t stage_us[STAGE_COUNT]; /* time spent per stage, last attempt */
    int dev, worker;            /* device worker that ran it, -1 before */
    int avoid_dev;              /* logical device whose device stage failed for this partition
                                   (its retry runs elsewhere when there is another), -1 none */
    unsigned batch;             /* partitions proved in its device stage's pass over a streamed
                                   key's bases (1: alone), last attempt */
    struct epart *fq_next;      /* next in its finalize queue (fq_mu), NULL at the tail */
    /* transient faults (engine_pause.c; e->mu) */
    engine_pause_cause pause;   /* why it is PART_PAUSED (PAUSE_NONE otherwise); the cause of its
                                   last transient failure stays in last_pause */
    engine_pause_cause last_pause;
    int pauses;                 /* transient failures in a row (backoff exponent); 0 after a
                                   partition's proof is stored */
    int pauses_total;           /* transient failures in all */
    int64_t resume_ms;          /* unix ms when a PART_PAUSED partition goes back to the scheduler */
    /* fleet (a shared store, fleet.c; e->mu): */
    int local;                  /* 1 from this host's claim until its commit, drop or failure */
    int lease;                  /* fencing token of this host's lease on it (store_claim.attempt),
                                   0 when it holds none (never claimed, or the lease was lost) */
    char host[128];             /* the host that proved it ("" unknown, or not done) */
} epart;

/* a finalize queue: a singly linked list through epart.fq_next (fq_mu) */
typedef struct efq {
    epart *first, *last;
    size_t n;
} efq;

/* What the finalizers did since start (finalize.c; atomics, read by /status and /metrics). */
typedef struct efinal_stats {
    _Atomic uint64_t batches;       /* batch verifications run (one per finalizer take, >= 1 proof) */
    _Atomic uint64_t proofs;        /* proofs verified in them */
    _Atomic uint64_t largest;       /* proofs in the largest batch */
    _Atomic uint64_t fallbacks;     /* batches whose check failed, so each proof was verified alone */
    _Atomic uint64_t fallback_proofs; /* proofs of those batches (verified one by one) */
    _Atomic uint64_t bad;           /* proofs that did not verify (their partitions are proved again) */
    _Atomic int64_t assemble_us, verify_us, journal_us; /* time in each step, all finalizers */
} efinal_stats;

struct ejob {
    int64_t id;                 /* journal id */
    char ids[ENGINE_ID_LEN];    /* "j-<id>" */
    engine_kind kind;
    engine_priority prio;
    engine_job_state state;
    char zkey[ENGINE_PATH_MAX];
    char idem[STORE_KEY_MAX];
    char circuit[WITGEN_NAME_MAX]; /* registered circuit of an input job, "" for witness jobs */
    const witgen_circuit *gen;  /* its generator (e->circuits); NULL for witness jobs. Then each
                                   partition's `witness` is its input JSON in the data dir */
    uint32_t n_parts, n_done;
    epart *parts;
    int64_t submitted_ms, finished_ms, fetched_ms; /* unix ms */
    char error[CUZK_ERRLEN];
    uint64_t part_bytes;        /* budget bytes of one partition: workspace + witness copy + file */
    uint64_t file_bytes;        /* of which the mapped witness file */
    uint64_t key_bytes;         /* budget bytes of the key when loaded */
    int stopping;               /* canceled or failed: in-flight partitions drop at the next boundary */
};

typedef struct eworker {
    char name[32];              /* "synth-0", "dev0-w1", "final-0", "dispatcher" */
    const char *kind;           /* "synth", "device", "finalize", "dispatch" */
    int dev, index;             /* device (-1 for host workers), index within its kind */
    _Atomic int state;          /* TRK_BUSY or a trk_gap for device workers; 0 idle / 1 busy for others */
    _Atomic int64_t cur_job;    /* journal id of the partition being handled, 0 for none */
    _Atomic int cur_part;
    _Atomic int64_t busy_us;    /* time spent working */
    _Atomic int64_t done;       /* partitions handled */
    pthread_t thread;
    int started;
    int crit_only;              /* a finalizer kept for critical partitions */
    struct engine *e;
} eworker;

/* a pooled host buffer (free list) */
typedef struct ebuf {
    uint8_t *p;
    size_t size;
    int pinned;                 /* page-locked (gpu_host_alloc), else pageable */
    struct ebuf *next;
} ebuf;

struct engine {
    engine_config cfg;
    char data_dir[ENGINE_PATH_MAX];
    char upload_dir[ENGINE_PATH_MAX]; /* cfg.upload_dir, or data_dir */
    store *st;
    budget bud;
    tracker *trk;
    int64_t started_us;

    pthread_mutex_t submit_mu;  /* serializes journal insert + table insert of submissions */
    pthread_mutex_t mu;
    pthread_cond_t cv_sched;    /* scheduler changed (dispatcher) */
    pthread_cond_t cv_synth;    /* admitted partitions (synthesis workers) */
    pthread_cond_t cv_job;      /* a job became terminal (engine_wait) */
    pthread_cond_t cv_key;      /* a key finished loading */
    ejob **jobs;                /* sorted by id */
    size_t n_jobs, cap_jobs;
    pqueue sched;               /* QUEUED partitions */
    pqueue synthq;              /* ADMITTED partitions */
    pqueue paused;              /* PAUSED partitions (priority order; each has its resume_ms) */
    int n_paused[PAUSE_COUNT];  /* PAUSED partitions by cause (e->mu) */
    uint64_t pauses_total[PAUSE_COUNT]; /* transient failures by cause, since start (e->mu) */
    uint64_t seq;
    ekey *keys;                 /* key cache (unordered list) */
    _Atomic int running;        /* threads should keep going (read without e->mu by queue waiters) */
    int started;

    /* counters read by device workers without e->mu (gap attribution) */
    _Atomic int n_sched;        /* partitions in the scheduler */
    _Atomic int n_presynth;     /* admitted or in synthesis */
    _Atomic int n_final;        /* in the finalize queue or being finalized */
    _Atomic int n_ready;        /* in the device queue */

    pthread_mutex_t rq_mu;
    pthread_cond_t cv_rq_item, cv_rq_space;
    pqueue readyq;              /* READY partitions */

    /* finalize queue (finalize.c): unbounded, so a device worker hands its results over
       without ever waiting for a finalizer; its partitions hold no budget, only their key
       reference and public signals */
    pthread_mutex_t fq_mu;
    pthread_cond_t cv_fq_item;
    efq fq_crit, fq_bulk;       /* critical partitions, then the rest; each in arrival order */
    size_t fq_peak;             /* most partitions queued at once (fq_mu) */
    efinal_stats fin;           /* finalizer counters (atomics) */

    /* backends: synthesis (CPU) per curve; device per curve per device */
    pthread_mutex_t be_mu;
    cuzk_backend *synth_be[CURVE_COUNT];
    cuzk_backend *crit_be[CURVE_COUNT]; /* critical partitions' synthesis (eng_crit_synth) */
    cuzk_backend *dev_be[CURVE_COUNT][ENGINE_MAX_DEVICES];
    int n_dev;
    int dev_ord[ENGINE_MAX_DEVICES]; /* CUDA ordinal of each logical device (0 for CPU devices) */
    int use_gpu;
    int dev_busy[ENGINE_MAX_DEVICES][2]; /* device locks (rq_mu): [0] h step, [1] MSM step */
    pthread_cond_t cv_dev;               /* (rq_mu) a device lock was freed, a critical partition
                                            arrived in the device queue or left its device stage */

    pthread_mutex_t bp_mu;
    ebuf *bp_free;              /* cached buffers (their bytes stay charged to the budget) */
    /* levels: buffers alive (in use + cached), their bytes, of which page-locked, of which cached */
    uint64_t bp_buffers, bp_bytes_total, bp_pinned_bytes, bp_free_bytes;
    /* counters: takes (= allocs + reuses), new allocations, reuses of a cached one, frees */
    uint64_t bp_takes, bp_allocs, bp_reuses, bp_frees;

    /* winning-post latency (device workers, no e->mu): critical partitions in the device
       queue, and in their device stage per device (see dev_acquire in pipeline.c) */
    _Atomic int n_ready_crit;
    _Atomic int crit_dev[ENGINE_MAX_DEVICES];
    /* streamed keys: passes over the bases that proved more than one partition, and those
       partitions, per device */
    _Atomic uint64_t batches[ENGINE_MAX_DEVICES], batched_parts[ENGINE_MAX_DEVICES];

    eworker *workers;
    int n_workers;
    int cores;                  /* CPUs this process may use (engine_cores), at engine_start */
    int synth_auto, final_auto; /* synth_workers / finalizers were `auto` (engine_sizing_auto) */
    pthread_t dispatcher, janitor;
    int dispatcher_started, janitor_started;
    pthread_cond_t cv_janitor;

    /* counters (e->mu) */
    uint64_t jobs_total[KIND_COUNT][JOB_CANCELED + 1]; /* terminal + submitted (QUEUED) */
    uint64_t parts_total[PART_CANCELED + 1];
    uint64_t retries, verify_failures;

    /* fleet: several daemons sharing one store (fleet.c). fleet = 1 when the store is shared:
       then partitions enter the scheduler only when this host claims them in the store */
    int fleet;
    char host_id[128];          /* "<hostname>:<pid>" */
    char host_addr[256];        /* where the API listens (engine_set_address), "" before */
    int64_t lease_ms;           /* lease length (cfg.lease_s) */
    int64_t fleet_max_id;       /* highest job id mirrored from the store (e->mu) */
    pthread_t fleet_thread;
    int fleet_started;
    _Atomic int64_t fleet_claims, fleet_refused, fleet_lost; /* counters: claims made, late
                                   commits refused, leases found lost at renewal */
    _Atomic int fleet_held;     /* leases held at the last renewal */

    /* registered circuits (engine_witgen.c), fixed after engine_create */
    witgen_circuit *circuits;
    size_t n_circuits;
    char node[ENGINE_PATH_MAX]; /* resolved node program ("" when no circuit needs it) */

    /* the latest transient failure, for /status (e->mu) */
    engine_pause_cause pause_cause;
    char pause_msg[CUZK_ERRLEN];
};

/* ---- time ---- */
int64_t eng_now_us(void);
int64_t eng_now_ms(void);

/* ---- engine.c ---- */
ejob *eng_job_find(engine *e, const char *id); /* e->mu held */
/* terminal transition of a job (journal, wake waiters); e->mu NOT held */
void eng_job_finish(engine *e, ejob *j, engine_job_state st, const char *error);
/* sizes the job from its key and puts its QUEUED partitions into the scheduler (recovery,
 * and a partition proved again after its stored proof was found damaged); e->mu NOT held.
 * Fails when the key cannot be opened. */
cuzk_err eng_job_requeue(engine *e, ejob *j, char *err);

/* Mirrors a job of the shared store into the table (fleet.c's sync and pulls): adds it when
 * it is not there (nothing is enqueued: partitions come through claims), else takes over
 * what other hosts did (partitions proved, the job ended). e->mu NOT held. */
void eng_job_mirror(engine *e, const store_job *sj, const store_part *sp);
/* eng_job_find, and in a fleet a job another host took in is fetched from the store first
   (e->mu held; released and taken again around the fetch) */
ejob *eng_job_find_pull(engine *e, const char *id);

/* ---- fleet.c ---- */
cuzk_err fleet_start(engine *e, char *err);
/* stops the fleet thread and gives back every lease held (after pipeline_stop) */
void fleet_stop(engine *e);
/* fetches job id from the store into the table (eng_job_mirror); e->mu NOT held */
void fleet_pull(engine *e, int64_t id);
/* Commits partition p's proof under this host's lease (the finalizer): *refused = 1 when
 * the lease is gone (the result is late), *job_done = 1 when this was the job's last. */
cuzk_err fleet_commit(engine *e, epart *p, const char *proof_json, const char *public_json, int *refused,
                      int *job_done, char *err);
/* the partition left this host's pipeline (dropped, failed for good): its lease goes back.
   e->mu NOT held */
void fleet_part_leave(engine *e, epart *p);
/* the "fleet" object of /status: this host, its counters, every host heartbeating (with the
   store's view of their devices' busy share, leases, keys, heartbeat age); e->mu NOT held */
json_t *fleet_status_json(engine *e);
/* the fleet's Prometheus lines, each handed to put; e->mu NOT held */
void fleet_metrics(engine *e, void (*put)(void *ctx, const char *text), void *ctx);

/* ---- keys.c ---- */
/* bytes a key will take when loaded on the synthesis backend and n_dev device backends */
uint64_t key_bytes_estimate(const engine *e, const zkey_file *z);
ekey *key_find(engine *e, const char *path);         /* e->mu held */
ekey *key_new(engine *e, const char *path, uint64_t bytes); /* e->mu held; NULL on OOM */
/* loads the key if needed (blocks); CUZK_OK when READY. e->mu NOT held. */
cuzk_err key_ensure(engine *e, ekey *k, char *err);
/* frees idle keys (refs == 0, not loading, not `keep`; preloaded ones only when the
 * others do not suffice) least recently used first, until `need` bytes fit in the
 * budget; returns bytes released. e->mu held. */
uint64_t key_evict_lru(engine *e, uint64_t need, const char *keep);
/* bytes key_evict_lru could free at most (e->mu held) */
uint64_t key_idle_bytes(engine *e, const char *keep);
void key_free(engine *e, ekey *k);                   /* unlinked, refs == 0 */
cuzk_backend *eng_synth_backend(engine *e, cuzk_curve_id c, char *err);
/* the backend and key state a critical partition synthesizes with: a pool of its own (up to
 * ENGINE_CRIT_THREADS threads), so it never waits behind a bulk partition's pool run (runs on
 * one pool are serialized); the key (loaded, referenced) is attached to it at first use */
#define ENGINE_CRIT_THREADS 4
cuzk_backend *eng_crit_synth(engine *e, ekey *k, void **ks, char *err);
cuzk_backend *eng_dev_backend(engine *e, cuzk_curve_id c, int dev, char *err);

/* buffer pool: a buffer's bytes stay charged to the budget while it is cached. With a GPU
 * backend the buffers are page-locked when CUDA can give that memory (*pinned = 1). */
uint8_t *bufpool_take(engine *e, size_t size, int *reused, int *pinned); /* cached one of that size or new */
void bufpool_give(engine *e, uint8_t *p, size_t size, int pinned); /* caches it (keeps charge) or frees it */
int bufpool_has(engine *e, size_t size);                    /* a cached buffer of that size exists */
uint64_t bufpool_trim(engine *e);                            /* frees all cached; returns bytes released */
uint64_t bufpool_cached_bytes(engine *e);

/* ---- engine_witgen.c ---- */
/* parses and checks cfg.circuits into e->circuits, resolves node (engine_create) */
cuzk_err eng_circuits_load(engine *e, char *err);
const witgen_circuit *eng_circuit_find(engine *e, const char *name);
/* Runs the job's generator on partition p's input into a .wtns in the data dir, whose path
 * is written to out; the caller unlinks it once loaded. Stops when the job stops or the
 * engine does. e->mu NOT held. */
cuzk_err eng_witgen_partition(engine *e, epart *p, char *out, size_t cap, char *err);
/* removes generated witnesses a crash left behind (engine_start, before any worker) */
void eng_witgen_sweep(engine *e);

/* ---- engine_pause.c: transient faults ---- */
/* Where a partition's step failed, for the classification of its error. */
typedef enum eng_step {
    STEP_KEY = 0,      /* loading its proving key (never transient: the key is marked failed) */
    STEP_SYNTH = 1,    /* witness (upload, generator) and a/b/c */
    STEP_DEVICE = 2,   /* h and the MSMs */
    STEP_FINALIZE = 3  /* assembly, self-check, storing the proof */
} eng_step;
/* The one place that tells a transient failure from a permanent one: the pause cause of a
 * step's error, or PAUSE_NONE when it should count as a failed attempt (a bad witness, a key
 * mismatch, a proof that fails its self-check, a device error other than memory). */
engine_pause_cause engine_err_transient(cuzk_err rc, eng_step step);
/* CUZK_ENOSPC for ENOSPC and EDQUOT, CUZK_EIO otherwise (file writes into the data dir) */
cuzk_err eng_errno_code(int en);
/* 1 when the data dir's file system has fewer than `need` bytes free for us */
int eng_disk_short(engine *e, uint64_t need);
/* Parks a partition whose step failed for `cause` (resources already released, e->mu held):
 * PART_PAUSED until its backoff (1 s doubling to cfg.retry_max_ms) has passed. */
void pause_park_locked(engine *e, epart *p, engine_pause_cause cause, const char *msg);
/* Moves the partitions whose backoff has passed to the scheduler (e->mu held); returns ms
 * until the next one is due, or -1 when none is paused. */
int64_t pause_release_due_locked(engine *e);
/* A step that the cause stopped succeeded again (a proof was stored: the disk has room; a
 * device stage ran: the device has memory): the partitions paused for it are retried now
 * (e->mu held). */
void pause_condition_cleared_locked(engine *e, engine_pause_cause cause);
/* removes a stopping job's paused partitions (e->mu held) */
void pause_remove_job_locked(engine *e, ejob *j);
/* {"total","disk_full","device_memory","host_memory","next_retry_ms","causes":[...]} (e->mu held) */
json_t *pause_summary_json_locked(engine *e);

/* ---- pipeline.c ---- */
cuzk_err pipeline_start(engine *e, char *err);
void pipeline_stop(engine *e);
/* puts a QUEUED partition into the scheduler (e->mu held) */
void pipeline_enqueue(engine *e, epart *p);
/* removes a stopping job's partitions from the scheduler and synthesis queue (e->mu held) */
void pipeline_remove_job_locked(engine *e, ejob *j);
/* drops a partition's resources (budget, buffer, key ref); e->mu NOT held */
void pipeline_release(engine *e, epart *p);
/* for finalize.c, e->mu NOT held: a partition that failed (retried once from the scheduler,
 * then its job fails), one dropped because its job stops, the end of its current stage, and a
 * worker's state for /status */
void pipeline_part_fail(engine *e, epart *p, cuzk_err rc, const char *msg);
void pipeline_part_drop(engine *e, epart *p);
void pipeline_stage_end(engine *e, epart *p, trk_stage s);
void pipeline_worker_set(eworker *w, int state, epart *p);

/* ---- finalize.c ---- */
/* hands n partitions whose device stage is done to the finalizers, in one step; never waits
 * (fq_mu only). The engine must be running. */
void final_queue_push(engine *e, epart *const *ps, int n);
/* partitions in the finalize queue (fq_mu taken) */
size_t final_queue_size(engine *e);
/* a finalizer thread (pipeline_start) */
void *final_main(void *arg);
/* the proofs one finalizer verifies together, at most */
#define ENGINE_FINAL_BATCH_MAX 64

#endif
