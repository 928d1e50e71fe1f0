/* store.h - the engine's journal: a small interface over a durable store of jobs,
 * partitions and proofs: SQLite in the data dir by default (store_sqlite.c), or a
 * PostgreSQL database (store_pg.c, `--store postgres://...`).
 *
 * DESIGN. The journal is the truth across restarts; memory is a cache of it. A job and
 * all its partitions are written in one transaction before its id is given out. A
 * partition's proof is written (state DONE) before the job is marked DONE, so after a
 * crash a job whose partitions are all DONE is completed without proving again, and a
 * partition that was not DONE is proved again: every acknowledged job completes exactly
 * once. Proofs stay in the journal until the job is deleted (TTL or fetch grace).
 * Every function is safe to call from any thread.
 *
 * Integrity. What the journal hands back (job records, partition records, proofs with
 * their public signals) is checked on the way out: a record the store finds damaged is
 * reported as such (the `damaged` flags of load_all, CUZK_EFORMAT from the other calls)
 * and never returned as if it were valid, and a damaged record is never updated (an
 * update would make it look valid again). The SQLite store keeps a CRC-64 with every row
 * and refuses to open a file that fails SQLite's quick_check (docs/DAEMON.md, "Journal
 * integrity").
 */
#ifndef CUZK_ENGINE_STORE_H
#define CUZK_ENGINE_STORE_H

#include <stddef.h>
#include <stdint.h>

#include "util/err.h"

#define STORE_PATH_MAX 1024
#define STORE_KEY_MAX 256

typedef struct store_job {
    int64_t id;                 /* journal id (> 0), assigned by job_insert; job id is "j-<id>" */
    int kind;                   /* engine_kind */
    int priority;               /* engine_priority */
    int state;                  /* engine_job_state */
    char zkey[STORE_PATH_MAX];  /* proving key path */
    char idem[STORE_KEY_MAX];   /* idempotency key, "" for none */
    char circuit[64];           /* registered circuit of an input job, "" for witness jobs; then
                                   each partition's witness column names its input JSON file */
    uint32_t n_parts;           /* partitions */
    int64_t submitted_ms;       /* unix ms */
    int64_t finished_ms;        /* unix ms, 0 until terminal */
    int64_t fetched_ms;         /* unix ms of the first proof fetch, 0 before */
    char error[512];            /* reason for FAILED/CANCELED, "" otherwise; what is wrong when damaged */
    int damaged;                /* load_all: 1 when the job's record is damaged (fails its checksum, or
                                   partition records are missing); then only id and error are
                                   meaningful and parts is NULL */
} store_job;

typedef struct store_part {
    uint32_t index;               /* 0..n_parts-1 */
    int state;                    /* engine_part_state as journaled: QUEUED, DONE, FAILED, CANCELED */
    int attempts;                 /* proving attempts started */
    int owned;                    /* 1: witness is a file in the data dir, deleted with the job */
    char witness[STORE_PATH_MAX]; /* .wtns path (input .json path for a job with a circuit) */
    int damaged;                  /* load_all: 1 when this record fails its checksum (no field of it
                                     can be trusted) */
    int proof_damaged;            /* load_all: 1 when the record says DONE but its proof is missing or
                                     fails its checksum: the partition is not proved */
    char host[128];               /* load_all: the host that proved it (a shared store), "" otherwise */
} store_part;

/* ---- the fleet: several daemons sharing one store (store_pg.c only) ----
 *
 * A partition is proved by the host that claims it. A claim is a lease: the owner host,
 * an expiry on the store's clock, and an attempt number that grows with every claim of the
 * partition and serves as the fencing token. The owner renews its leases while it works;
 * a lease that expires (the host died, stalled, or lost the store) may be claimed by any
 * host, with the next attempt number. A proof is committed only under the lease that was
 * claimed (host and attempt): a host that comes back after its lease was taken over
 * cannot commit late, or twice. The commit that stores a job's last proof marks the job
 * DONE, in the same transaction. */
typedef struct store_claim {
    int64_t job;      /* job id */
    uint32_t index;   /* partition */
    int attempt;      /* the lease's fencing token (>= 1) */
} store_claim;

typedef struct store_host {
    char id[128];        /* "<hostname>:<pid>", unique per daemon process */
    char address[256];   /* where its API listens */
    char version[32];    /* cuzk version, or the store schema version it runs */
    int devices;         /* logical devices */
    char keys[2048];     /* loaded proving keys, newline-separated paths */
    int leases;          /* leases held at the last heartbeat */
    double busy;         /* its devices' busy share over the last 10 s, 0..1 */
    int64_t heartbeat_ms;/* the store's clock at the last heartbeat (unix ms; host_list only) */
    int64_t age_ms;      /* now - heartbeat_ms on the store's clock (host_list only) */
} store_host;

typedef struct store store;
struct store {
    const char *name; /* "sqlite" or "postgres" */
    void *impl;
    /* Inserts job (id assigned into job->id) and parts in one durable transaction. When
     * job->idem is not empty and a job with that key exists, inserts nothing, sets
     * job->id to the existing job's id and *existed = 1.
     * The updates below fail with CUZK_EFORMAT, changing nothing, when the record is damaged. */
    cuzk_err (*job_insert)(store *s, store_job *job, const store_part *parts, int *existed, char *err);
    cuzk_err (*job_set_state)(store *s, int64_t id, int state, int64_t finished_ms, const char *error,
                              char *err);
    cuzk_err (*job_set_fetched)(store *s, int64_t id, int64_t fetched_ms, char *err);
    /* a state other than DONE drops the partition's proof: only a DONE partition has one */
    cuzk_err (*part_set_state)(store *s, int64_t id, uint32_t index, int state, int attempts, char *err);
    /* state DONE with the proof and public JSON text, in one statement */
    cuzk_err (*part_set_done)(store *s, int64_t id, uint32_t index, const char *proof_json,
                              const char *public_json, char *err);
    /* malloc'd copies; CUZK_ENOTFOUND when the partition has no proof, CUZK_EFORMAT (nothing
     * returned) when the proof or its public signals are damaged (fail their checksum) */
    cuzk_err (*part_get_proof)(store *s, int64_t id, uint32_t index, char **proof_json, char **public_json,
                               char *err);
    /* calls fn for every job (ascending id) with its partitions (ascending index); checks
     * every record and every DONE partition's proof and says what is damaged (the flags).
     * fn may update the job it is given (the store is not locked while fn runs; load_all
     * itself must not run twice at once). */
    cuzk_err (*load_all)(store *s, void (*fn)(void *ctx, const store_job *job, const store_part *parts),
                         void *ctx, char *err);
    /* deletes the job, its partitions and proofs */
    cuzk_err (*job_delete)(store *s, int64_t id, char *err);
    void (*close)(store *s);

    /* ---- fleet (NULL unless the store is shared: store_pg_open with shared = 1) ---- */
    /* records this host (insert or update) with the store's clock as its heartbeat */
    cuzk_err (*host_beat)(store *s, const store_host *h, char *err);
    /* the hosts whose heartbeat is younger than max_age_ms, into out[0..cap-1]; *n = how many */
    cuzk_err (*host_list)(store *s, int64_t max_age_ms, store_host *out, int cap, int *n, char *err);
    /* Claims the next claimable partition (queued, of a queued job, with no lease or an
     * expired one) for host, in order: priority (highest first), then a partition whose key
     * is in keys (n_keys paths) or that has waited longer than fair_ms, then job id and
     * index. SELECT ... FOR UPDATE SKIP LOCKED, so hosts claiming at once never block each
     * other or take the same partition. *got = 0 when nothing is claimable. */
    cuzk_err (*claim)(store *s, const char *host, const char *const *keys, int n_keys, int64_t lease_ms,
                      int64_t fair_ms, store_claim *out, int *got, char *err);
    /* extends each lease still held (same host and attempt, partition not done) by lease_ms;
     * lost[i] = 1 for a lease that is no longer this host's */
    cuzk_err (*renew)(store *s, const char *host, const store_claim *c, int n, int64_t lease_ms, int *lost,
                      char *err);
    /* Stores the proof of a claimed partition if its lease is still held by host with that
     * attempt and the job is not terminal: state DONE, in one transaction that also marks
     * the job DONE when this was its last partition (*job_done = 1). *refused = 1 (and
     * nothing changes) when the lease is gone. */
    cuzk_err (*commit)(store *s, const char *host, const store_claim *c, const char *proof_json,
                       const char *public_json, int *refused, int *job_done, char *err);
    /* gives a lease back unfinished (shutdown, a dropped partition): claimable at once */
    cuzk_err (*release)(store *s, const char *host, const store_claim *c, char *err);
    /* like load_all, for the jobs with id > after_id and those listed in ids[0..n_ids-1] */
    cuzk_err (*load_some)(store *s, int64_t after_id, const int64_t *ids, int n_ids,
                          void (*fn)(void *ctx, const store_job *job, const store_part *parts), void *ctx,
                          char *err);
    /* Waits up to timeout_ms for a change another daemon (or this one) announced (LISTEN/
     * NOTIFY: a job submitted, a partition proved, a job ended); 1 when one came (or the
     * listening connection was re-established, when some may have been missed), 0 on
     * timeout. Call from one thread only. */
    int (*wait_change)(store *s, int timeout_ms);
};

/* Opens or creates the SQLite journal at path (WAL mode, synchronous FULL). Runs SQLite's
 * PRAGMA quick_check first and fails with CUZK_EFORMAT, saying what it found, when the file
 * is damaged; gives the rows of an older journal their checksums (schema version 3). */
cuzk_err store_sqlite_open(store **out, const char *path, char *err);

/* 1 when spec names a PostgreSQL store: a postgres:// or postgresql:// URL */
int store_is_pg_url(const char *spec);

/* Connects to the PostgreSQL database at url (a libpq connection URI) and creates or
 * migrates cuzk's tables in it. shared = 0: this daemon owns the store (an advisory lock;
 * another daemon on it is refused) and the fleet functions are NULL. shared = 1: several
 * daemons share it through the fleet functions. Fails with CUZK_ESTORE when the server
 * cannot be reached, when its cuzk schema is newer than this binary knows, or (shared = 0)
 * when another daemon holds the store; the message never repeats the URL (it may hold a
 * password). */
cuzk_err store_pg_open(store **out, const char *url, int shared, char *err);

#endif
