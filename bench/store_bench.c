/* store_bench.c - the job store's own cost per partition (not a test: it checks only that every
 * partition got its proof): claim, renew and commit on a shared PostgreSQL store with H hosts
 * claiming at once (one thread and one connection each, as one daemon each), and the commit of
 * a proof on the SQLite journal (which has no claims: one daemon owns its queue). Prints one
 * Markdown table row per operation: count, p50, p99, max in milliseconds.
 *
 * Build and run (bench/store.sh does both, with a throwaway server):
 *   cc -std=c11 -D_GNU_SOURCE -O2 -Isrc -I/usr/include/postgresql -pthread bench/store_bench.c \
 *      build/libcuzk.a -lsqlite3 -lpq -ljansson -lmicrohttpd -lm -o build/store_bench
 *   build/store_bench postgres URL HOSTS PARTITIONS
 *   build/store_bench sqlite PATH 1 PARTITIONS
 * Jobs have 10 partitions each; proofs are 700 bytes of JSON, as a BN254 proof is.
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "engine/engine.h"
#include "engine/store.h"

#define PARTS_PER_JOB 10

static double now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

typedef struct samples {
    double *v;
    int n, cap;
} samples;

static void add(samples *s, double x)
{
    if (s->n == s->cap) {
        s->cap = s->cap ? 2 * s->cap : 1024;
        s->v = realloc(s->v, (size_t)s->cap * sizeof *s->v);
        if (!s->v)
            exit(2);
    }
    s->v[s->n++] = x;
}

static int cmp(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

static void row(const char *store, int hosts, const char *op, samples *s)
{
    if (!s->n)
        return;
    qsort(s->v, (size_t)s->n, sizeof *s->v, cmp);
    printf("| %s | %d | %s | %d | %.3f | %.3f | %.3f |\n", store, hosts, op, s->n, s->v[s->n / 2],
           s->v[(int)((s->n - 1) * 0.99)], s->v[s->n - 1]);
}

static char proof[800];

static int64_t insert_job(store *st, int idx)
{
    store_job job;
    memset(&job, 0, sizeof job);
    job.kind = KIND_POREP;
    job.priority = PRIO_NORMAL;
    job.n_parts = PARTS_PER_JOB;
    job.submitted_ms = 1;
    snprintf(job.zkey, sizeof job.zkey, "/keys/porep-%d.zkey", idx % 2);
    store_part parts[PARTS_PER_JOB];
    memset(parts, 0, sizeof parts);
    for (int i = 0; i < PARTS_PER_JOB; i++) {
        parts[i].index = (uint32_t)i;
        snprintf(parts[i].witness, sizeof parts[i].witness, "/witness/j%d-%d.wtns", idx, i);
    }
    int existed;
    char err[CUZK_ERRLEN];
    if (st->job_insert(st, &job, parts, &existed, err)) {
        fprintf(stderr, "insert: %s\n", err);
        exit(1);
    }
    return job.id;
}

typedef struct host {
    store *st;
    char id[32];
    samples claim, renew, commit, empty;
    int done;
} host;

static void *host_main(void *arg)
{
    host *h = arg;
    char err[CUZK_ERRLEN];
    const char *keys[] = {"/keys/porep-0.zkey"};
    for (;;) {
        store_claim c;
        int got = 0, lost = 0, refused = 0, job_done = 0;
        double t0 = now_ms();
        if (h->st->claim(h->st, h->id, keys, 1, 30000, 30000, &c, &got, err)) {
            fprintf(stderr, "claim: %s\n", err);
            exit(1);
        }
        double t1 = now_ms();
        if (!got) {
            add(&h->empty, t1 - t0);
            break;
        }
        add(&h->claim, t1 - t0);
        if (h->st->renew(h->st, h->id, &c, 1, 30000, &lost, err) || lost) {
            fprintf(stderr, "renew: %s\n", lost ? "lost" : err);
            exit(1);
        }
        double t2 = now_ms();
        add(&h->renew, t2 - t1);
        if (h->st->commit(h->st, h->id, &c, proof, "[\"1\"]", &refused, &job_done, err) || refused) {
            fprintf(stderr, "commit: %s\n", refused ? "refused" : err);
            exit(1);
        }
        add(&h->commit, now_ms() - t2);
        h->done++;
    }
    return NULL;
}

int main(int argc, char **argv)
{
    if (argc != 5) {
        fprintf(stderr, "usage: store_bench postgres URL HOSTS PARTITIONS | sqlite PATH 1 PARTITIONS\n");
        return 2;
    }
    int pg = !strcmp(argv[1], "postgres"), hosts = atoi(argv[3]), n = atoi(argv[4]);
    if (hosts < 1 || hosts > 16 || n < PARTS_PER_JOB)
        return 2;
    memset(proof, '7', sizeof proof - 1);
    memcpy(proof, "{\"pi_a\":\"", 9);
    proof[700] = 0;
    char err[CUZK_ERRLEN];
    int jobs = n / PARTS_PER_JOB;
    samples ins = {0};
    if (!pg) {
        store *st;
        if (store_sqlite_open(&st, argv[2], err)) {
            fprintf(stderr, "%s\n", err);
            return 1;
        }
        samples commit = {0}, fin = {0};
        for (int j = 0; j < jobs; j++) {
            double t0 = now_ms();
            int64_t id = insert_job(st, j);
            add(&ins, now_ms() - t0);
            for (int i = 0; i < PARTS_PER_JOB; i++) {
                double t1 = now_ms();
                if (st->part_set_done(st, id, (uint32_t)i, proof, "[\"1\"]", err)) {
                    fprintf(stderr, "%s\n", err);
                    return 1;
                }
                add(&commit, now_ms() - t1);
            }
            double t2 = now_ms();
            st->job_set_state(st, id, JOB_DONE, 1, "", err);
            add(&fin, now_ms() - t2);
        }
        row("sqlite", 1, "insert job (10 partitions)", &ins);
        row("sqlite", 1, "commit (store a proof)", &commit);
        row("sqlite", 1, "finish job", &fin);
        st->close(st);
        return 0;
    }
    host *h = calloc((size_t)hosts, sizeof *h);
    for (int i = 0; i < hosts; i++) {
        if (store_pg_open(&h[i].st, argv[2], 1, err)) {
            fprintf(stderr, "%s\n", err);
            return 1;
        }
        snprintf(h[i].id, sizeof h[i].id, "bench-%d", i);
    }
    for (int j = 0; j < jobs; j++) {
        double t0 = now_ms();
        insert_job(h[0].st, j);
        add(&ins, now_ms() - t0);
    }
    pthread_t *t = calloc((size_t)hosts, sizeof *t);
    double t0 = now_ms();
    for (int i = 0; i < hosts; i++)
        pthread_create(&t[i], NULL, host_main, &h[i]);
    for (int i = 0; i < hosts; i++)
        pthread_join(t[i], NULL);
    double wall = now_ms() - t0;
    samples claim = {0}, renew = {0}, commit = {0};
    int total = 0;
    for (int i = 0; i < hosts; i++) {
        for (int k = 0; k < h[i].claim.n; k++)
            add(&claim, h[i].claim.v[k]);
        for (int k = 0; k < h[i].renew.n; k++)
            add(&renew, h[i].renew.v[k]);
        for (int k = 0; k < h[i].commit.n; k++)
            add(&commit, h[i].commit.v[k]);
        total += h[i].done;
    }
    if (total != jobs * PARTS_PER_JOB) {
        fprintf(stderr, "store_bench: %d of %d partitions committed\n", total, jobs * PARTS_PER_JOB);
        return 1;
    }
    row("postgres", hosts, "insert job (10 partitions)", &ins);
    row("postgres", hosts, "claim", &claim);
    row("postgres", hosts, "renew", &renew);
    row("postgres", hosts, "commit (proof, under the lease)", &commit);
    printf("| postgres | %d | all %d partitions, wall | %d | %.1f partitions/s | | |\n", hosts, total, total,
           total / (wall / 1e3));
    for (int i = 0; i < hosts; i++)
        h[i].st->close(h[i].st);
    return 0;
}
