/* store_pg_internal.h - what the PostgreSQL store's two files share: store_pg.c (the
 * journal interface of store.h, schema, connection) and store_pg_fleet.c (hosts, claims,
 * leases, fencing: the fleet part of store.h). Not an interface of its own.
 */
#ifndef CUZK_ENGINE_STORE_PG_INTERNAL_H
#define CUZK_ENGINE_STORE_PG_INTERNAL_H

#include <libpq-fe.h>
#include <pthread.h>
#include <stdint.h>

#include "engine/store.h"

#define PG_VERSION 2                    /* the schema this binary writes */
#define PG_OWNER_LOCK 0x63757a6b0001LL  /* advisory lock key of the store's one daemon ("cuzk" 1) */
#define PG_OWNER_TRIES 20               /* a held owner lock is asked for again 20 times, 100 ms apart */
#define PG_SCHEMA_LOCK 0x63757a6b0002LL /* advisory lock key of schema creation/migration */
#define PG_RETRY_S 30                   /* seconds a lost connection is retried before failing */

typedef struct pgs {
    PGconn *conn;        /* NULL or CONNECTION_BAD while the server is unreachable */
    char *conninfo;      /* the URL as given (may hold a password: never printed) */
    char where[256];     /* "host:port/db" for messages */
    int shared;          /* 1: several daemons share the store (no owner lock; the fleet API) */
    pthread_mutex_t mu;  /* guards conn and every statement on it */
    PGconn *listen;      /* the LISTEN connection of wait_change (its caller's thread only), or NULL */
} pgs;

/* the server's clock in unix ms: leases are compared against it only, never against a host's */
#define PG_NOW_MS "(extract(epoch from clock_timestamp()) * 1000)::bigint"
#define PG_CHANNEL "cuzk_changes" /* NOTIFY channel: payload = the job id that changed */

#define JOB_COLS "id, kind, priority, state, zkey, idem, n_parts, submitted_ms, finished_ms, fetched_ms, error, circuit, crc"
#define PART_COLS "job, idx, state, attempts, owned, witness, crc"

/* a text parameter from an integer: I64(buf, v) with buf a char[32] */
#define I64(buf, v) (snprintf(buf, sizeof buf, "%lld", (long long)(v)), (const char *)buf)

/* ---- row checksums (the serialization of store_sqlite.h, over typed values) ---- */
typedef struct pv {
    char type;     /* 'i' integer, 't' text, 'n' NULL */
    int64_t i;     /* 'i' */
    const char *t; /* 't' */
} pv;

#define PV_I(v) ((pv){'i', (int64_t)(v), NULL})
#define PV_T(s) ((pv){'t', 0, (s)})
#define PV_TN(s) ((s) && *(s) ? PV_T(s) : (pv){'n', 0, NULL}) /* "" stored as NULL */

uint64_t pg_crc_vals(const pv *v, int n);
int64_t pg_job_crc(const store_job *j);
int64_t pg_part_crc(int64_t job, const store_part *p);
int64_t pg_proof_crc(int64_t job, uint32_t index, const char *proof, const char *pub);

/* ---- rows ---- */
int64_t pg_col_i(const PGresult *r, int row, int col);
/* a job from the JOB_COLS of row from column first on; 1 when it matches its checksum */
int pg_job_from_row(store_job *j, const PGresult *r, int row, int first);
/* a partition from the PART_COLS of row; *job gets its job id; 1 when it matches */
int pg_part_from_row(store_part *p, int64_t *job, const PGresult *r, int row, int first);
/* whether columns first.. (job, idx, proof, public, proof_crc) hold a sound proof */
int pg_proof_ok(const PGresult *r, int row, int first);

/* ---- statements (caller holds p->mu) ---- */
int pg_conn_lost(const pgs *p);
/* ROLLBACK of the open transaction, unless the connection is gone (then there is none) */
void pg_rollback(pgs *p);
/* Runs sql with text parameters; *out gets the result (PQclear it). A lost connection is
   re-established and the statement run again for up to PG_RETRY_S seconds, unless once is
   set: then it fails with CUZK_EIO (the statement belonged to a transaction that is gone). */
cuzk_err pg_run(pgs *p, PGresult **out, const char *what, int once, const char *sql, int n,
                const char *const *vals, char *err);
/* pg_run without a result; *n_rows (may be NULL) gets the rows changed */
cuzk_err pg_cmd(pgs *p, int *n_rows, const char *what, int once, const char *sql, int n,
                const char *const *vals, char *err);
void pg_sleep_ms(int ms);

/* the load_some of store.h */
cuzk_err pg_load_some(store *s, int64_t after_id, const int64_t *ids, int n_ids,
                      void (*fn)(void *ctx, const store_job *job, const store_part *parts), void *ctx, char *err);

/* fills the fleet functions of s (store_pg_fleet.c) */
void pg_fleet_install(store *s);

#endif
