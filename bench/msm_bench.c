/* msm_bench.c - times the CPU MSM and NTT of one curve and prints a table (not a test: it
 * checks nothing; the unit tests in src/msm and src/ntt do).
 *
 * Build and run (the curve is chosen at compile time, one binary per curve):
 *   cc -std=c11 -D_GNU_SOURCE -O3 -march=native -Isrc -pthread bench/msm_bench.c \
 *      src/util/pool.c -o build/msm_bench_bn254
 *   cc ... -DBENCH_BLS12_381 ... -o build/msm_bench_bls12_381
 *   build/msm_bench_bn254 [log_n=16] [threads=0 (all CPUs)] [reps=5]
 * Each row is the best of reps runs: wall milliseconds, and the CPU milliseconds of the
 * whole process (all threads) for that run, which stay meaningful on a shared machine.
 */
#ifdef BENCH_BLS12_381
#include "curves/bls12_381.h"
#else
#include "curves/bn254.h"
#endif

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "ec/ec.h"
#include "ff/ff.h"
#include "msm/msm.h"
#include "ntt/ntt.h"
#include "util/pool.h"

static uint64_t g_rng = 0x243f6a8885a308d3ull;
static uint64_t rnd64(void) /* splitmix64 */
{
    uint64_t z = (g_rng += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

static double now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

static double cpu_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
    return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

/* best-of timer: wall and CPU ms of the fastest run (by wall) */
typedef struct bench_t {
    double wall, cpu;     /* best so far, ms */
    double w0, c0;        /* start of the current run */
} bench_t;

static void bench_init(bench_t *b)
{
    b->wall = b->cpu = 1e30;
}

static void bench_start(bench_t *b)
{
    b->w0 = now_ms();
    b->c0 = cpu_ms();
}

static void bench_stop(bench_t *b)
{
    double w = now_ms() - b->w0, c = cpu_ms() - b->c0;
    if (w < b->wall) {
        b->wall = w;
        b->cpu = c;
    }
}

static void bench_row(const char *what, const bench_t *b)
{
    printf("%-34s %10.2f %10.2f\n", what, b->wall, b->cpu);
}

static void rnd_fr_std(fr_t *o)
{
    do {
        for (int i = 0; i < FR_LIMBS; i++)
            o->l[i] = rnd64();
        o->l[FR_LIMBS - 1] &= (FR_BITS % 64) ? ((1ull << (FR_BITS % 64)) - 1) : ~0ull;
    } while (!fr_std_is_canonical(o));
}

/* scalars: 0 random, 1 witness-like (45% zero, 45% one, 10% random) */
static void make_scalars(fr_t *k, size_t n, int kind)
{
    for (size_t i = 0; i < n; i++) {
        unsigned v = (unsigned)(rnd64() % 100);
        memset(&k[i], 0, sizeof k[i]);
        if (kind == 0 || v >= 90)
            rnd_fr_std(&k[i]);
        else if (v >= 45)
            k[i].l[0] = 1;
    }
}

#define BENCH_BASES(G)                                                                             \
    static G##_aff_t *G##_bench_bases(size_t n)                                                    \
    {                                                                                              \
        G##_aff_t g, q, *o = malloc(n * sizeof *o);                                                \
        G##_jac_t p, t, *j = malloc(n * sizeof *j);                                                \
        fr_t s;                                                                                    \
        if (!o || !j) {                                                                            \
            fprintf(stderr, "out of memory\n");                                                    \
            exit(2);                                                                               \
        }                                                                                          \
        G##_generator(&g);                                                                         \
        rnd_fr_std(&s);                                                                            \
        G##_jac_mul(&p, &g, s.l);                                                                  \
        rnd_fr_std(&s);                                                                            \
        G##_jac_mul(&t, &g, s.l);                                                                  \
        G##_jac_to_aff(&q, &t);                                                                    \
        for (size_t i = 0; i < n; i++) {                                                           \
            j[i] = p;                                                                              \
            G##_jac_add_aff(&p, &p, &q);                                                           \
        }                                                                                          \
        G##_batch_to_aff(o, j, n);                                                                 \
        free(j);                                                                                   \
        return o;                                                                                  \
    }
BENCH_BASES(g1)
BENCH_BASES(g2)

int main(int argc, char **argv)
{
    unsigned log_n = argc > 1 ? (unsigned)atoi(argv[1]) : 16;
    int threads = argc > 2 ? atoi(argv[2]) : 0;
    int reps = argc > 3 ? atoi(argv[3]) : 5;
    if (log_n < 1 || log_n > 24 || reps < 1) {
        fprintf(stderr, "usage: %s [log_n 1..24] [threads] [reps]\n", argv[0]);
        return 2;
    }
    size_t n = (size_t)1 << log_n;
    pool_t *pool = pool_create(threads);
    if (!pool) {
        fprintf(stderr, "pool_create failed\n");
        return 2;
    }
    g1_aff_t *b1 = g1_bench_bases(n);
    g2_aff_t *b2 = g2_bench_bases(n);
    fr_t *k = malloc(n * sizeof *k), *a = malloc(n * sizeof *a);
    if (!k || !a) {
        fprintf(stderr, "out of memory\n");
        return 2;
    }
    printf("%s, n = 2^%u, %d threads, best of %d\n", CURVE_NAME, log_n, pool_size(pool), reps);
    printf("%-34s %10s %10s\n", "operation", "wall ms", "cpu ms");

    const char *names[2] = {"random scalars", "witness-like 0/1 scalars"};
    for (int kind = 0; kind < 2; kind++) {
        make_scalars(k, n, kind);
        bench_t t1, t2;
        bench_init(&t1);
        bench_init(&t2);
        for (int r = 0; r < reps; r++) {
            g1_jac_t o1;
            g2_jac_t o2;
            bench_start(&t1);
            msm_g1(&o1, b1, k, n, pool);
            bench_stop(&t1);
            bench_start(&t2);
            msm_g2(&o2, b2, k, n, pool);
            bench_stop(&t2);
        }
        char what[64];
        snprintf(what, sizeof what, "MSM G1, %s", names[kind]);
        bench_row(what, &t1);
        snprintf(what, sizeof what, "MSM G2, %s", names[kind]);
        bench_row(what, &t2);
    }

    for (size_t i = 0; i < n; i++)
        rnd_fr_std(&a[i]);
    bench_t tf, ti, tc;
    bench_init(&tf);
    bench_init(&ti);
    bench_init(&tc);
    fr_t g;
    fr_root_of_unity(&g, log_n + 1);
    for (int r = 0; r < reps; r++) {
        bench_start(&tf);
        ntt_fr(a, log_n, 0, pool);
        bench_stop(&tf);
        bench_start(&ti);
        ntt_fr(a, log_n, 1, pool);
        bench_stop(&ti);
        bench_start(&tc);
        ntt_fr_coset_shift(a, log_n, &g, pool);
        bench_stop(&tc);
    }
    bench_row("NTT forward", &tf);
    bench_row("NTT inverse", &ti);
    bench_row("coset shift", &tc);

    free(a);
    free(k);
    free(b1);
    free(b2);
    pool_destroy(pool);
    return 0;
}
