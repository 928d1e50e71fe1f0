/* backend_impl.cuh - the CUDA Groth16 backend (groth16/backend.h) for one curve.
 *
 * Included by one translation unit per curve (gpu_bn254.cu, gpu_bls12_381.cu), which
 * first includes that curve's params_<curve>.cuh and defines
 *   GPU_P(x)     the curve's constant named x (BN254_##x)
 *   GPU_SYM(x)   the exported name of x for this curve (x##_bn254)
 *   GPU_CURVE_ID the cuzk_curve_id
 *
 * DESIGN. key_attach uploads the five base sets exactly as the zkey stores them, builds
 * a CSR of section 4 (rows 0..n-1 the A matrix, n..2n-1 the B matrix), the NTT twiddles
 * and the odd-coset shift table, and allocates every device buffer a proof needs, after
 * checking the total against cudaMemGetInfo. The per-proof steps then only copy in, run
 * kernels and copy out; the step buffers are guarded by two locks (a/b/c + h, and MSM)
 * so the daemon can run one job's h while another job's MSMs run, on separate streams.
 * Host buffers the daemon page-locked (groth16_ws.pinned) are copied from and to directly;
 * others go through a pinned staging buffer (witness) or the driver's own staging. Copies
 * overlap compute where the data allow: in compute_h b and c go up on the copy stream while
 * a's NTTs run, in msm_all h goes up while the four witness MSMs run. The copies a step has
 * to wait for (witness and a up, h or a/b/c down) are reported through groth16_ws.phase,
 * so the daemon counts that time as a copy gap. What a step leaves on the device is not
 * copied up again: eval_abc's a/b/c stay for compute_h of the same workspace, and compute_h's
 * h is copied device to device for msm_all while the NTT buffers still hold it, and so is
 * the witness eval_abc uploaded (tokens below, unique per call, so a reused host buffer at the
 * same address never matches). A caller that reads no host output but the MSM results
 * (groth16_ws.keep_on_device: groth16_prove) gets no copies down at all: a/b/c and h stay on
 * the device alone (at 2^24, 2 GB less over the bus), and a step that finds its input gone
 * because another workspace's step reused the buffers computes it again from the witness.
 * A key of fewer than 2^20 points a set (GPU_PAR_SETS_MAX; a winning-post circuit, a
 * Filecoin partition of 2^18 or 2^19 constraints) gets five MSM scratch areas and streams, and
 * msm_all runs its five MSMs at once, one host thread each: an MSM of this size is mostly
 * dependent chains (the partial levels, the bucket reductions, launches one after another)
 * that leave the device half empty. Above 2^16 points only where the five scratch areas leave
 * a quarter of the device's memory free.
 */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

extern "C" {
#include "gpu/stream_plan.h"
#include "groth16/backend.h"
#include "groth16/curve_exports.h"
}
#include "gpu/cuda_util.cuh"
#include "gpu/curve_fields.cuh"
#include "gpu/msm.cuh"
#include "gpu/ntt.cuh"

namespace GPU_SYM(gpu) {

using GPU_SYM(ff)::fr;
using GPU_SYM(ff)::fq;
using GPU_SYM(ff)::fq2;

#define GPU_FR_BITS (GPU_CURVE_ID == CURVE_BN254 ? 254u : 255u)
/* window sums of one MSM, at most (4-bit windows of a 255-bit scalar) */
#define STREAM_WIN ((GPU_FR_BITS + 1 + 3) / 4)
/* Points per set, at most, for a key's five MSMs at once: always up to GPU_PAR_SETS_SMALL, up to
   GPU_PAR_SETS_MAX where memory allows (see par_sets_max). The daemon's mix of 2^18 and 2^19
   BLS12-381 partitions on the H200: porep latency p50 2.77 -> 1.46 s, the device busy for 84 %
   -> 48 % of the same run (bench/results/pipeline-2026-12-04-h200-e.md). */
#define GPU_PAR_SETS_SMALL ((size_t)1 << 16)
#define GPU_PAR_SETS_MAX (((size_t)1 << 20) - 1)
#define WPRE 2 /* witness buffers a key whose five MSMs run at once fills ahead (PREFETCH) */

/* the points per set up to which a key's five MSMs run at once: GPU_PAR_SETS_MAX, or
   CUZK_GPU_PAR_SETS_MAX (a number of points; 0: never); above GPU_PAR_SETS_SMALL only where the
   five scratch areas leave a quarter of the device's memory free */
size_t par_sets_max()
{
    const char *e = getenv("CUZK_GPU_PAR_SETS_MAX");
    if (e && *e) {
        char *end;
        unsigned long long v = strtoull(e, &end, 10);
        if (!*end)
            return (size_t)v;
    }
    return GPU_PAR_SETS_MAX;
}

struct gpu_key {
    const zkey_file *z;
    size_t n;             /* domain size */
    unsigned log_n;
    size_t n_vars;
    uint8_t *d_bases[ZKEY_BASES]; /* as in the zkey: affine Montgomery */
    int tab_h;            /* 1: the h MSM runs over d_tab_h, a table of shifted bases (msm.cuh) */
    uint8_t *d_tab_h;
    /* WIDE: 1 when the MSM scratch also holds the shapes of random scalars for the witness sets
       (msm_window_bits' windows and level-0 chunks from 2^23 points), which a dense witness takes */
    int wide;
    unsigned long long *d_full; /* count of witness scalars other than 0 and 1 (wide_for) */
    uint32_t *d_row_ptr;  /* 2n + 1 */
    uint32_t *d_col;      /* n_coefs: signal */
    fr *d_val;            /* n_coefs: coef * R^2 */
    ntt_plan<fr> plan;
    fr *d_shift;          /* n: w_(2n)^i / n */
    fr *d_w;              /* n_vars witness, std form */
    fr *d_abc;            /* 3n: a | b | c */
    uint32_t *d_msm_w;    /* n_vars x 8 witness scalars for the MSMs */
    uint32_t *d_msm_h;    /* n x 8 h scalars */
    uint8_t *d_msm;       /* MSM scratch (max over the five sets) */
    size_t msm_bytes;
    /* keys below 2^20 points a set (par_sets_max): the five MSMs run at once, each
       on its own stream with its own scratch (d_msm_set[i], msm_bytes each; [0] is d_msm) */
    int par_sets;
    uint8_t *d_msm_set[ZKEY_BASES];
    cudaStream_t st_set[2][ZKEY_BASES];
    /* PREFETCH (keys whose five MSMs run at once): WPRE device buffers of witness scalars that a
       workspace fills before it takes mu_msm (wpre_acquire), so that between one workspace's MSMs
       and the next's the device does not wait for the witness to cross the bus. msm_prefetch
       fills one before the caller takes its own MSM lock (the daemon's), and the workspace keeps
       it (groth16_ws.pre_slot) until its msm_all or a release */
    uint32_t *d_wpre[WPRE];
    cudaStream_t st_wpre[WPRE];
    int wpre_busy[WPRE];
    pthread_mutex_t mu_wpre;
    pthread_cond_t cv_wpre;
    int wpre_ok; /* mu_wpre and cv_wpre initialized, the buffers allocated */
    uint8_t *h_w[2];      /* pinned witness staging, n_vars x 32: [0] a/b/c path, [1] MSM path */
    cudaStream_t st_ntt[2], st_msm[2], st_copy[2]; /* [1]: high priority, for urgent workspaces */
    cudaEvent_t ev_h;     /* h's device copy for msm_all done (orders later NTT work after it) */
    cudaEvent_t ev_bc;    /* compute_h: b and c are up (mu_ntt) */
    cudaEvent_t ev_w;     /* msm_all: the witness scalars are up (mu_msm) */
    cudaEvent_t ev_wcopy; /* msm_all's device copy of the witness out of d_w done (orders later
                             a/b/c work after it) */
    pthread_mutex_t mu_ntt, mu_msm;
    int locks_ok;
    /* which call's data d_abc holds (mu_ntt): the gpu_token_next token eval_abc stored when it
       left a/b/c there, the one compute_h stored when it left h in d_abc[0, n); 0 none; and
       which call's witness d_w holds */
    uint64_t abc_token, h_token, w_token;
    /* a/b/c on the host (no_abc, or the matrix does not fit beside a streamed key): no CSR on
       the device; eval_abc runs on host_be (a CPU backend over the matrix, own_mat when built
       here) */
    int abc_host;
    /* LEAN (a streamed key on a small card): no shift table (the odd-coset factors are computed
       in the kernel), a/b/c in 2n (c goes up after a*b, or beside it in the arena's room), the
       MSM scalars in d_w and d_abc themselves; h and the MSMs then hold both locks (mu_msm, then mu_ntt) */
    int lean;
    /* LEAN's arena: the h step's NTT buffers (the twiddle tables, the NTT scratch, b) and a
       pass's buffers (the ring, a chunk's scalars, the MSM scratch, the buckets, the scalars of
       partitions 1..) in one allocation. With share (the default; CUZK_GPU_LEAN_SHARE=0: side by
       side) the two overlap: both are used under mu_ntt only, a pass overwrites the twiddles
       (tw_ok 0) and the next h step builds them again (H100, 2^26 BLS12-381 under 16 GiB: 74 ms
       a proof, against chunks of 2^23 points instead of 2^20 and a pass of 1.05 s instead of
       1.72). d_lean_c: where the pass's part of a shared arena is larger than the NTT part by n
       elements or more, that room past the NTT part, into which an h step with a/b/c from the
       host copies c while a and b are transformed (else null: c follows a *= b into b's buffer;
       CUZK_GPU_LEAN_C=0 leaves it null) */
    uint8_t *d_arena;
    int share, tw_ok;
    fr *d_lean_b, *d_lean_c;
    fr w2n, ninv; /* the shift factors' base and start: w_(2n)^i / n */
    fr wn, iwn, one; /* the twiddles' bases and 1 (LEAN builds its tables again after a pass) */
    cuzk_backend *host_be;
    void *host_ks;
    cuzk_matrix *own_mat;
    /* placement (stream_plan.h) and the device memory charged for it (gpu_mem_charge) */
    gpu_plan place;
    size_t dev_bytes;
    int device;
    /* STREAMED (place.streamed): the bases in page-locked host memory (shared), a ring of
       STREAM_RING device buffers of chunk points (and their indices), the gathered scalars of
       a chunk, one bucket set per partition of a pass, and the scalars of partitions 1.. of a
       pass ([0] is d_msm_w / d_msm_h) */
    struct host_bases *hb;
    unsigned sets;                 /* the sets whose bases cross the bus (place.sets); the pass
                                      takes the others' chunks from d_bases */
    size_t cnt[ZKEY_BASES];        /* points a pass takes of each set: hb->cnt, or every point */
    size_t chunk;
    unsigned batch;
    unsigned stream_c[ZKEY_BASES]; /* window bits of each set's chunks */
    int bpair;                     /* B1 and B2 take the same points of the witness, chunk by chunk
                                      (stream_pair_ok): a B2 chunk reuses the B1 chunk's sort */
    size_t bk_off[ZKEY_BASES];     /* offset of each set's buckets in a partition's d_bk */
    size_t bk_bytes;               /* a partition's d_bk */
    uint8_t *h_win;                /* page-locked window sums of a pass: [partition][set][STREAM_WIN] */
    uint8_t *d_ring[STREAM_RING];
    uint32_t *d_ring_idx[STREAM_RING];
    uint32_t *d_chunk_sc;
    uint8_t *d_inf[ZKEY_BASES];    /* the sets kept on the device: 1 for each point at infinity
                                      (null: none); their scalars are zeroed through it a chunk, as
                                      a streamed set leaves those points out */
    uint8_t *d_bk[STREAM_BATCH_MAX];
    uint32_t *d_bw[STREAM_BATCH_MAX], *d_bh[STREAM_BATCH_MAX];
    cudaEvent_t ev_copied[STREAM_RING], ev_used[STREAM_RING];
    cudaEvent_t ev_item[2]; /* the pass's items j done, by j % 2 (the host stays one item ahead) */
    /* totals since attach (mu_msm) */
    uint64_t passes, bytes_copied, copy_wait_us;
    /* PHASES (CUZK_GPU_MSM_PROFILE=1, CUZK_GPU_STREAM_PROFILE=1): device milliseconds of each
       set's MSM phases since the last report (sort, level 0, partial levels, reduction), from
       the events of prof (mu_msm; the five MSMs at once are not profiled by phase) */
    msm_prof prof;
    int prof_ok;
    double ph_ms[ZKEY_BASES][4];
    unsigned ph_levels[ZKEY_BASES];
};

struct gpu_impl {
    int device;
};

/* the error code of a failed CUDA call: out of device memory is CUZK_ENOMEM (a transient fault the
   daemon waits out, engine_pause.c), anything else CUZK_EDEVICE */
cuzk_err gpu_err_code(cudaError_t e) { return e == cudaErrorMemoryAllocation ? CUZK_ENOMEM : CUZK_EDEVICE; }

size_t set_points(const zkey_file *z, int k) { return z->n_bases[k]; }
/* the MSM shape of base set k: all but the h set take witness scalars (the shape for mostly 0
   and 1, unless wide: the shape of random scalars, for a dense witness; see WIDE); tab: the h
   set runs over a table of shifted bases */
msm_shape set_shape(const zkey_file *z, int k, int tab, int wide = 0)
{
    static int test = -1; /* CUZK_TEST_WIDE=1 (tests): wide shapes that differ from the narrow at any size */
    static unsigned bits = 0; /* CUZK_GPU_WIDE_BITS=c (a benchmark knob, 4..22): the wide shapes' window bits */
    if (test < 0) {
        test = getenv("CUZK_TEST_WIDE") && !strcmp(getenv("CUZK_TEST_WIDE"), "1");
        const char *e = getenv("CUZK_GPU_WIDE_BITS");
        int c = e && *e ? atoi(e) : 0;
        bits = c >= 4 && c <= 22 ? (unsigned)c : 0;
    }
    size_t n = set_points(z, k);
    if (wide && bits && k != ZKEY_H)
        return msm_shape_of(n, GPU_FR_BITS, bits, 0, 0, k == ZKEY_B2);
    if (wide && test && k != ZKEY_H) {
        msm_shape s = msm_shape_of(n, GPU_FR_BITS, msm_window_bits(n, 1) + 2, 0, 0, k == ZKEY_B2);
        msm_shape_set_chunk(s, k == ZKEY_B2 ? MSM_CHUNK_LARGE_G2 : MSM_CHUNK_LARGE);
        return s;
    }
    return msm_shape_of(n, GPU_FR_BITS, 0, k != ZKEY_H && !wide, k == ZKEY_H && tab, k == ZKEY_B2);
}
size_t set_point_bytes(const zkey_file *z, int k)
{
    return k == ZKEY_B2 ? z->curve->g2_bytes : z->curve->g1_bytes;
}

/* ---- host bases of streamed keys: one page-locked copy per key, shared by every device ---- */

/* A streamed key's bases, its points at infinity left out (stream_compact): pts[i] holds cnt[i]
   points of set i, idx[i] their indices in the set (NULL when none was left out). Keyed by the
   zkey, reference-counted across devices and workers; a set is copied when the first key that
   streams it arrives (have[i]: per-set placement keeps some sets on the device only). */
struct host_bases {
    const zkey_file *z;
    int refs;
    int have[ZKEY_BASES];
    uint8_t *pts[ZKEY_BASES];
    int pinned[ZKEY_BASES];
    uint32_t *idx[ZKEY_BASES];
    int idx_pinned[ZKEY_BASES];
    size_t cnt[ZKEY_BASES];
    size_t bytes;   /* host bytes of pts and idx */
    size_t skipped; /* points at infinity left out */
    host_bases *next;
};
static pthread_mutex_t hb_mu = PTHREAD_MUTEX_INITIALIZER;
static host_bases *hb_list;

/* a streamed key's set kept on the device: k->d_inf[i] marks its points at infinity, or stays
   null when it has none */
cudaError_t inf_mask(gpu_key *k, int i)
{
    const size_t n = set_points(k->z, i);
    unsigned long long *d_cnt = nullptr, cnt = 0;
    if (!n)
        return cudaSuccess;
    cudaError_t e = cudaMalloc((void **)&k->d_inf[i], n);
    if (e == cudaSuccess)
        e = cudaMalloc((void **)&d_cnt, sizeof *d_cnt);
    if (e == cudaSuccess)
        e = cudaMemset(d_cnt, 0, sizeof *d_cnt);
    if (e == cudaSuccess) {
        msm_inf_mask_kernel<<<msm_grid(n, 256), 256>>>(k->d_inf[i], d_cnt, k->d_bases[i], n,
                                                        set_point_bytes(k->z, i) / 16);
        e = cudaGetLastError();
    }
    if (e == cudaSuccess)
        e = cudaMemcpy(&cnt, d_cnt, sizeof cnt, cudaMemcpyDeviceToHost);
    cudaFree(d_cnt);
    if (e == cudaSuccess && cnt == 0) {
        cudaFree(k->d_inf[i]);
        k->d_inf[i] = nullptr;
    }
    return e;
}

/* a knob that is on unless set to 0: CUZK_GPU_LEAN_SHARE=0 (a lean key's NTT buffers and pass
   buffers side by side), CUZK_GPU_LEAN_C=0 (no buffer of c in a shared arena's room, d_lean_c),
   CUZK_GPU_STREAM_PAIR=0 (B2 sorts its own digits), CUZK_GPU_LATE_W=0 (a lean pass's witness
   goes up before the pass, not behind its first chunk), CUZK_GPU_EARLY=0 (no msm_early) */
static int env_off(const char *name)
{
    const char *e = getenv(name);
    return e && *e == '0';
}

/* whether a B2 chunk of a streamed pass can reuse the sorted entries of the B1 chunk before it:
   B1 and B2 hold the same polynomial's points in G1 and G2, so they are at infinity together and
   a pass takes the same witness indices in both, chunk by chunk, with the same window bits (both
   streamed with the same points left out, or both on the device). The resident path shares
   that sort likewise. CUZK_GPU_STREAM_PAIR=0 (a benchmark knob): each sorts its own. */
int stream_pair_ok(const gpu_key *k)
{
    if (env_off("CUZK_GPU_STREAM_PAIR") || k->cnt[ZKEY_B1] != k->cnt[ZKEY_B2] ||
        k->stream_c[ZKEY_B1] != k->stream_c[ZKEY_B2])
        return 0;
    const int s1 = k->sets >> ZKEY_B1 & 1, s2 = k->sets >> ZKEY_B2 & 1;
    if (s1 != s2)
        return 0;
    if (!s1) { /* on the device: the same points at infinity, if any */
        const uint8_t *m1 = k->d_inf[ZKEY_B1], *m2 = k->d_inf[ZKEY_B2];
        if (!m1 || !m2)
            return !m1 && !m2;
        const size_t n = k->cnt[ZKEY_B1];
        uint8_t *h = (uint8_t *)malloc(2 * n);
        int same = h && cudaMemcpy(h, m1, n, cudaMemcpyDeviceToHost) == cudaSuccess &&
                   cudaMemcpy(h + n, m2, n, cudaMemcpyDeviceToHost) == cudaSuccess && !memcmp(h, h + n, n);
        free(h);
        return same;
    }
    const uint32_t *i1 = k->hb->idx[ZKEY_B1], *i2 = k->hb->idx[ZKEY_B2];
    if (!i1 || !i2)
        return !i1 && !i2;
    return memcmp(i1, i2, k->cnt[ZKEY_B1] * sizeof *i1) == 0;
}

static void host_bases_free(host_bases *h)
{
    for (int i = 0; i < ZKEY_BASES; i++) {
        gpu_host_free(h->pts[i], h->pinned[i]);
        gpu_host_free(h->idx[i], h->idx_pinned[i]);
    }
    free(h);
}

/* copies set i of h->z to page-locked host memory, its points at infinity left out (progress
   "bases host" in bytes: done of total); 0 when out of host memory */
static int host_bases_fill(host_bases *h, int i, const groth16_key_opts *opts, uint64_t *done, uint64_t total)
{
    const zkey_file *z = h->z;
    int threads = (int)sysconf(_SC_NPROCESSORS_ONLN);
    size_t n = set_points(z, i), pb = set_point_bytes(z, i);
    size_t kept = stream_compact(z->bases[i], n, pb, nullptr, nullptr, threads);
    h->pts[i] = (uint8_t *)gpu_host_alloc(kept * pb, &h->pinned[i]);
    if (kept < n)
        h->idx[i] = (uint32_t *)gpu_host_alloc(kept * 4, &h->idx_pinned[i]);
    if (!h->pts[i] || (kept < n && !h->idx[i])) {
        gpu_host_free(h->pts[i], h->pinned[i]);
        gpu_host_free(h->idx[i], h->idx_pinned[i]);
        h->pts[i] = nullptr;
        h->idx[i] = nullptr;
        return 0;
    }
    /* in steps of 2^22 points, for the progress display of keys of tens of GiB */
    const size_t step = (size_t)1 << 22;
    size_t at = 0;
    for (size_t off = 0; off < n; off += step) {
        size_t m = n - off < step ? n - off : step;
        at += stream_compact(z->bases[i] + off * pb, m, pb, h->pts[i] + at * pb, nullptr, threads);
        *done += m * pb;
        if (opts->progress)
            opts->progress(opts->progress_ctx, "bases host", *done, total);
    }
    if (h->idx[i])
        stream_compact(z->bases[i], n, pb, nullptr, h->idx[i], threads);
    h->cnt[i] = kept;
    h->bytes += kept * pb + (kept < n ? kept * 4 : 0);
    h->skipped += n - kept;
    h->have[i] = 1;
    return 1;
}

/* the shared host copy of z's bases, with at least the sets in `sets` (bit i: set i), made on
   first use; NULL when out of host memory */
static host_bases *host_bases_acquire(const zkey_file *z, unsigned sets, const groth16_key_opts *opts)
{
    pthread_mutex_lock(&hb_mu); /* held while copying: a second device waits for the first's copy */
    host_bases *h = hb_list;
    while (h && h->z != z)
        h = h->next;
    int fresh = !h;
    if (fresh) {
        if (!(h = (host_bases *)calloc(1, sizeof *h))) {
            pthread_mutex_unlock(&hb_mu);
            return nullptr;
        }
        h->z = z;
    }
    uint64_t total = 0, done = 0;
    for (int i = 0; i < ZKEY_BASES; i++)
        if ((sets >> i & 1) && !h->have[i])
            total += (uint64_t)set_points(z, i) * set_point_bytes(z, i);
    int ok = 1;
    for (int i = 0; i < ZKEY_BASES && ok; i++)
        if ((sets >> i & 1) && !h->have[i])
            ok = host_bases_fill(h, i, opts, &done, total);
    if (!ok) {
        if (fresh)
            host_bases_free(h); /* a shared one keeps the sets it had */
        pthread_mutex_unlock(&hb_mu);
        return nullptr;
    }
    if (fresh) {
        h->next = hb_list;
        hb_list = h;
    }
    h->refs++;
    pthread_mutex_unlock(&hb_mu);
    return h;
}

static void host_bases_release(host_bases *h)
{
    if (!h)
        return;
    pthread_mutex_lock(&hb_mu);
    if (--h->refs == 0) {
        host_bases **pp = &hb_list;
        while (*pp != h)
            pp = &(*pp)->next;
        *pp = h->next;
        host_bases_free(h);
    }
    pthread_mutex_unlock(&hb_mu);
}


/* bytes of the MSM scratch: the largest of the five sets' (wide: of their narrow and wide shapes) */
size_t msm_need(const zkey_file *z, int tab, int wide = 0)
{
    size_t m = 0;
    for (int k = 0; k < ZKEY_BASES; k++)
        for (int w = 0; w <= wide; w++) {
            msm_shape s = set_shape(z, k, tab, w);
            size_t b = k == ZKEY_B2 ? msm_scratch_layout<fq2>(s, nullptr, nullptr)
                                    : msm_scratch_layout<fq>(s, nullptr, nullptr);
            if (b > m)
                m = b;
        }
    return m;
}

/* WIDE. The witness MSMs (A, B1, B2, C) take the shape of mostly 0 and 1 scalars (windows of at
 * most 16 bits, level-0 chunks of 32 entries: msm_window_bits), which is what circuits of bit
 * decompositions and boolean constraints give and where wider windows cost more in buckets than
 * they save in additions. A dense witness (circom's hashes, rollups: most values full-field) is
 * the opposite case, a random MSM, for which keys from 2^23 points take wider windows and longer
 * level-0 chunks. A resident key whose MSMs run one after another gets the scratch for both where
 * that still leaves a quarter of the cap free (CUZK_GPU_WIDE=0: never; 1: whenever it fits); each
 * msm_all then counts the witness scalars other than 0 and 1 on the device (wide_for) and takes
 * the wide shapes when they are at least half. Both shapes give the same sums, so the proof
 * does not depend on the choice. */
#define WIDE_MIN_FULL_NUM 1 /* full-field share of the witness scalars that makes it dense: 1/2 */
#define WIDE_MIN_FULL_DEN 2

static __global__ __launch_bounds__(256) void count_full_kernel(unsigned long long *cnt, const uint4 *s, size_t n)
{
    size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x;
    int full = 0;
    if (i < n) {
        uint4 x = s[2 * i], y = s[2 * i + 1];
        full = x.x > 1u || (x.y | x.z | x.w | y.x | y.y | y.z | y.w) != 0;
    }
    full = __syncthreads_count(full);
    if (threadIdx.x == 0 && full)
        atomicAdd(cnt, (unsigned long long)full);
}

/* whether this msm_all takes the wide shapes: the key has them and the n_vars witness scalars at
   d_w (on st, waited for here) are dense */
cudaError_t wide_for(gpu_key *k, const uint32_t *d_w, cudaStream_t st, int *wide)
{
    *wide = 0;
    if (!k->wide)
        return cudaSuccess;
    unsigned long long full = 0;
    cudaError_t e;
    if ((e = cudaMemsetAsync(k->d_full, 0, sizeof full, st)) != cudaSuccess)
        return e;
    count_full_kernel<<<(unsigned)((k->n_vars + 255) / 256), 256, 0, st>>>(k->d_full, (const uint4 *)d_w, k->n_vars);
    if ((e = cudaMemcpyAsync(&full, k->d_full, sizeof full, cudaMemcpyDeviceToHost, st)) != cudaSuccess ||
        (e = cudaStreamSynchronize(st)) != cudaSuccess)
        return e;
    *wide = full * WIDE_MIN_FULL_DEN >= (unsigned long long)k->n_vars * WIDE_MIN_FULL_NUM;
    return cudaSuccess;
}

/* CUZK_GPU_WIDE: 0 never, 1 whenever it fits, -1 (unset) where it leaves a quarter of the cap */
static int wide_env()
{
    const char *e = getenv("CUZK_GPU_WIDE");
    return e && *e == '0' ? 0 : e && *e == '1' ? 1 : -1;
}

#define GPU_KEY_RESERVE ((size_t)64 << 20) /* device memory a key leaves free for the runtime */

/* Whether the h MSM gets a table of shifted bases (msm.cuh TABLE; decided in key_attach through
 * gpu_plan_key): CUZK_GPU_MSM_TABLE=1 asks for one whenever the device holds it, 0 never; by
 * default from MSM_TABLE_MIN_POINTS points when the key with the table still leaves a quarter of
 * the --gpu-mem cap free (other keys and jobs share the device). From 2^17 points, above the keys whose five
 * MSMs always run at once (GPU_PAR_SETS_SMALL): on the H200 the table takes 15 % off a 2^20 h MSM, and
 * the daemon's Filecoin-shaped mix of 2^18 and 2^19 partitions ran 3 % more proofs an hour with
 * it (bench/results/pipeline-2026-12-04-h200-d.md); a 2^18 BLS12-381 key's table is 302 MB. */
#define MSM_TABLE_MIN_POINTS ((size_t)1 << 17)
/* the shape of a streamed chunk of m points of set i with window bits c (the same for every
   chunk of the set, so that they share one bucket layout) */
msm_shape stream_shape(int i, size_t m, unsigned c)
{
    msm_shape s = msm_shape_of(m, GPU_FR_BITS, c, i != ZKEY_H, 0, i == ZKEY_B2);
    /* CUZK_GPU_STREAM_HCHUNK=N (a benchmark knob, 8..1024): the h set's level-0 entries per
       thread (its random scalars leave runs that longer chunks close without partials) */
    static int hchunk = -1;
    if (hchunk < 0) {
        const char *e = getenv("CUZK_GPU_STREAM_HCHUNK");
        hchunk = e && atoi(e) >= 8 && atoi(e) <= 1024 ? atoi(e) : 0;
    }
    if (i == ZKEY_H && hchunk)
        msm_shape_set_chunk(s, (unsigned)hchunk);
    return s;
}
/* window bits of the chunks of set i when it streams cnt points in chunks of chunk points:
   those of one chunk's MSM (lg chunk - 6, at most 16). Windows as wide as one MSM of all cnt
   points would take (20 bits from 2^24) cost more than they save here: on an H100 the h set of
   a 2^24 BLS12-381 key took 196 ms a pass with 20-bit windows against 137 ms with 16, and its
   buckets (1.3 GB a partition) halve the partitions a pass can hold. CUZK_GPU_STREAM_HBITS=c
   sets the h set's (a benchmark knob, 4..22). */
unsigned stream_bits(int i, size_t cnt, size_t chunk)
{
    if (i == ZKEY_H) {
        const char *e = getenv("CUZK_GPU_STREAM_HBITS");
        int c = e && *e ? atoi(e) : 0;
        if (c >= 4 && c <= 22)
            return (unsigned)c;
    }
    size_t m = cnt < chunk ? cnt : chunk;
    return msm_window_bits(m ? m : 1, i != ZKEY_H);
}
/* bytes of set i's buckets (one partition) when it streams cnt points in chunks of chunk */
size_t stream_set_buckets(int i, size_t cnt, size_t chunk)
{
    size_t m = cnt < chunk ? cnt : chunk;
    msm_shape s = stream_shape(i, m ? m : 1, stream_bits(i, cnt, chunk));
    return msm_align(s.nbuckets * (i == ZKEY_B2 ? sizeof(xyzz_t<fq2>) : sizeof(xyzz_t<fq>)));
}
/* device bytes of one chunk's MSM scratch (max over the sets) and of one partition's buckets
   (the sum over the sets: a pass interleaves the chunks of all sets, so every set keeps its
   buckets until its last chunk), for sets of cnt[i] points */
void stream_scratch(const size_t *cnt, size_t chunk, size_t *scratch, size_t *buckets)
{
    *scratch = *buckets = 0;
    for (int i = 0; i < ZKEY_BASES; i++) {
        if (!cnt[i])
            continue;
        size_t m = cnt[i] < chunk ? cnt[i] : chunk;
        msm_shape s = stream_shape(i, m, stream_bits(i, cnt[i], chunk));
        size_t b = i == ZKEY_B2 ? msm_scratch_layout<fq2>(s, nullptr, nullptr) : msm_scratch_layout<fq>(s, nullptr, nullptr);
        *scratch = b > *scratch ? b : *scratch;
        *buckets += stream_set_buckets(i, cnt[i], chunk);
    }
}
struct stream_ctx {
    const zkey_file *z;
    uint64_t floor; /* LEAN shared: the NTT part of the arena, which the streamed buffers overlay */
};
/* stream_plan.h's stream_bytes: the ring (points and their indices), a chunk's gathered
   scalars and MSM scratch, a bucket set per partition, the scalars of partitions 1.. (at least
   the context's floor) */
uint64_t stream_bytes_cb(void *ctx, uint64_t chunk, unsigned batch)
{
    const zkey_file *z = ((stream_ctx *)ctx)->z;
    const uint64_t floor = ((stream_ctx *)ctx)->floor;
    size_t cnt[ZKEY_BASES], pbmax = 0, scratch, buckets;
    for (int i = 0; i < ZKEY_BASES; i++) {
        cnt[i] = set_points(z, i);
        pbmax = set_point_bytes(z, i) > pbmax ? set_point_bytes(z, i) : pbmax;
    }
    stream_scratch(cnt, chunk, &scratch, &buckets);
    uint64_t b = STREAM_RING * (msm_align(chunk * pbmax) + msm_align(chunk * 4)) + msm_align(chunk * 32) + scratch +
                 batch * msm_align(buckets) +
                 (uint64_t)(batch - 1) * (msm_align((size_t)z->n_vars * 32) + msm_align((size_t)z->domain_size * 32));
    return b > floor ? b : floor;
}

/* LEAN: the NTT part of the arena at base (nullptr: its bytes only): the plan's twiddle tables
   (ntt_tw_bytes) and scratch, then b; returns its bytes */
size_t lean_ntt_carve(unsigned log_n, uint8_t *base, ntt_plan<fr> *p, fr **b)
{
    const size_t n = (size_t)1 << log_n, count = n / 2 + 1, cc = (size_t)1 << ntt_compact_log(log_n);
    const size_t q = NTT_SHOUP ? 1 : 0;
    const size_t len[10] = {count, count, q * count, q * count, cc, cc, q * cc, q * cc, n, n};
    fr *at[10];
    size_t off = 0;
    for (int i = 0; i < 10; i++) {
        at[i] = base && len[i] ? (fr *)(base + off) : nullptr;
        off += msm_align(len[i] * sizeof(fr));
    }
    if (base) {
        p->d_tw = at[0], p->d_itw = at[1], p->d_twq = at[2], p->d_itwq = at[3];
        p->d_twc = at[4], p->d_itwc = at[5], p->d_twcq = at[6], p->d_itwcq = at[7];
        p->d_tmp = at[8];
        *b = at[9];
    }
    return off;
}

/* LEAN: the streamed buffers of a pass carved from base (nullptr: their bytes only), as
   stream_bytes_cb counts them; k's chunk, batch and msm_bytes are set */
size_t stream_carve(gpu_key *k, size_t pbmax, size_t buckets, uint8_t *base)
{
    size_t off = 0;
    auto take = [&](void *dst, size_t b) {
        if (base)
            *(uint8_t **)dst = base + off;
        off += msm_align(b);
    };
    for (int r = 0; r < STREAM_RING; r++) {
        take(&k->d_ring[r], k->chunk * pbmax);
        take(&k->d_ring_idx[r], k->chunk * 4);
    }
    take(&k->d_chunk_sc, k->chunk * 32);
    take(&k->d_msm, k->msm_bytes);
    for (unsigned p = 0; p < k->batch; p++) {
        take(&k->d_bk[p], buckets);
        if (p) {
            take(&k->d_bw[p], k->n_vars * 32);
            take(&k->d_bh[p], k->n * 32);
        }
    }
    return off;
}

/* LEAN: the arena is the pass's (mu_ntt held): a shared one's twiddles are overwritten */
static void lean_arena_take(gpu_key *k)
{
    if (k->share)
        k->tw_ok = 0;
}

/* LEAN: the twiddle tables built in the arena on st (mu_ntt held), as key_attach builds a key's
   own */
cudaError_t lean_tables(gpu_key *k, cudaStream_t st)
{
    const size_t count = k->n / 2 + 1;
    ntt_powers_kernel<fr><<<ntt_blocks((count + 63) / 64, 256), 256, 0, st>>>(k->plan.d_tw, count, k->wn, k->one);
    ntt_powers_kernel<fr><<<ntt_blocks((count + 63) / 64, 256), 256, 0, st>>>(k->plan.d_itw, count, k->iwn, k->one);
    cudaError_t e = ntt_plan_tables(k->plan, count, st);
    if (e == cudaSuccess)
        k->tw_ok = 1;
    return e;
}

/* CUZK_GPU_PLACEMENT=resident|streamed|auto (tests, benchmarks): forces a placement */
int placement_forced()
{
    const char *e = getenv("CUZK_GPU_PLACEMENT");
    if (e && !strcmp(e, "resident"))
        return GPU_PLACE_RESIDENT;
    if (e && !strcmp(e, "streamed"))
        return GPU_PLACE_STREAMED;
    return GPU_PLACE_AUTO;
}
/* CUZK_GPU_STREAM_SETS=all or a list of A, B1, B2, C, H (tests, benchmarks): exactly those sets
   stream when the key streams, the others stay on the device; unset: the planner's choice.
   1 and *err on a name it does not know */
int stream_sets_forced(unsigned *sets, char *err)
{
    const char *e = getenv("CUZK_GPU_STREAM_SETS");
    *sets = 0;
    if (!e || !*e)
        return 0;
    if (!strcmp(e, "all")) {
        *sets = STREAM_SETS_ALL;
        return 0;
    }
    for (const char *p = e; *p;) {
        size_t len = strcspn(p, ",");
        int hit = -1;
        for (int i = 0; i < ZKEY_BASES; i++)
            if (strlen(zkey_set_names[i]) == len && !strncmp(p, zkey_set_names[i], len))
                hit = i;
        if (hit < 0) {
            cuzk_errf(err, CUZK_EINVAL, "CUZK_GPU_STREAM_SETS=%s: sets are all or a list of A, B1, B2, C, H", e);
            return 1;
        }
        *sets |= 1u << hit;
        p += len + (p[len] == ',');
    }
    return 0;
}

/* CUZK_GPU_STREAM_CHUNK=N: points per streamed chunk (tests: sizes that do not divide a set) */
size_t chunk_forced()
{
    const char *e = getenv("CUZK_GPU_STREAM_CHUNK");
    if (e && *e) {
        char *end;
        unsigned long long v = strtoull(e, &end, 10);
        if (!*end && v >= 1)
            return (size_t)v;
    }
    return 0;
}

void key_free(gpu_key *k)
{
    if (!k)
        return;
    if (k->dev_bytes)
        gpu_mem_charge(k->device, -(int64_t)k->dev_bytes);
    if (k->host_ks)
        k->host_be->key_detach(k->host_be, k->host_ks);
    if (k->host_be)
        k->host_be->destroy(k->host_be);
    matrix_free(k->own_mat);
    host_bases_release(k->hb);
    if (k->d_arena) { /* the buffers carved from it are not freed one by one */
        cudaFree(k->d_arena);
        memset(&k->plan, 0, sizeof k->plan);
        memset(k->d_ring, 0, sizeof k->d_ring);
        memset(k->d_ring_idx, 0, sizeof k->d_ring_idx);
        memset(k->d_bk, 0, sizeof k->d_bk);
        for (unsigned p = 1; p < STREAM_BATCH_MAX; p++)
            k->d_bw[p] = k->d_bh[p] = nullptr;
        k->d_chunk_sc = nullptr;
        k->d_msm = nullptr;
    }
    for (int i = 0; i < 6 && k->prof_ok; i++)
        cudaEventDestroy(k->prof.ev[i]);
    for (int r = 0; r < STREAM_RING; r++) {
        cudaFree(k->d_ring[r]);
        cudaFree(k->d_ring_idx[r]);
        if (k->ev_copied[r])
            cudaEventDestroy(k->ev_copied[r]);
        if (k->ev_used[r])
            cudaEventDestroy(k->ev_used[r]);
    }
    for (int i = 0; i < 2; i++)
        if (k->ev_item[i])
            cudaEventDestroy(k->ev_item[i]);
    cudaFree(k->d_chunk_sc);
    for (int i = 0; i < ZKEY_BASES; i++)
        cudaFree(k->d_inf[i]);
    cudaFreeHost(k->h_win);
    for (unsigned p = 0; p < STREAM_BATCH_MAX; p++) {
        cudaFree(k->d_bk[p]);
        if (p) {
            cudaFree(k->d_bw[p]);
            cudaFree(k->d_bh[p]);
        }
    }
    for (int i = 0; i < ZKEY_BASES; i++)
        cudaFree(k->d_bases[i]);
    cudaFree(k->d_tab_h);
    cudaFree(k->d_full);
    cudaFree(k->d_row_ptr);
    cudaFree(k->d_col);
    cudaFree(k->d_val);
    ntt_plan_free(k->plan);
    cudaFree(k->d_shift);
    cudaFree(k->d_w);
    cudaFree(k->d_abc);
    if (!k->lean) {
        cudaFree(k->d_msm_w);
        cudaFree(k->d_msm_h);
    }
    cudaFree(k->d_msm);
    for (int i = 1; i < ZKEY_BASES; i++)
        cudaFree(k->d_msm_set[i]);
    for (int i = 0; i < 2; i++)
        if (k->h_w[i])
            cudaFreeHost(k->h_w[i]);
    for (int u = 0; u < 2; u++) {
        if (k->st_ntt[u])
            cudaStreamDestroy(k->st_ntt[u]);
        if (k->st_msm[u])
            cudaStreamDestroy(k->st_msm[u]);
        for (int i = 0; i < ZKEY_BASES; i++)
            if (k->st_set[u][i])
                cudaStreamDestroy(k->st_set[u][i]);
        if (k->st_copy[u])
            cudaStreamDestroy(k->st_copy[u]);
    }
    if (k->ev_h)
        cudaEventDestroy(k->ev_h);
    if (k->ev_bc)
        cudaEventDestroy(k->ev_bc);
    if (k->ev_w)
        cudaEventDestroy(k->ev_w);
    if (k->ev_wcopy)
        cudaEventDestroy(k->ev_wcopy);
    if (k->locks_ok) {
        pthread_mutex_destroy(&k->mu_ntt);
        pthread_mutex_destroy(&k->mu_msm);
    }
    for (int i = 0; i < WPRE; i++) {
        cudaFree(k->d_wpre[i]);
        if (k->st_wpre[i])
            cudaStreamDestroy(k->st_wpre[i]);
    }
    if (k->wpre_ok) {
        pthread_mutex_destroy(&k->mu_wpre);
        pthread_cond_destroy(&k->cv_wpre);
    }
    free(k);
}

/* entry k of a __constant__ table of Fr elements (params_<curve>.cuh) */
fr fr_const(const void *table, unsigned k)
{
    fr r;
    cudaMemcpyFromSymbol(&r, table, sizeof r, (size_t)k * sizeof r, cudaMemcpyDeviceToHost);
    return r;
}

cuzk_err gpu_key_attach(cuzk_backend *be, const zkey_file *z, const groth16_key_opts *opts, void **ks, char *err)
{
    static const groth16_key_opts no_opts = {};
    gpu_impl *im = (gpu_impl *)be->impl;
    cudaError_t cu_err = cudaSuccess;
    const char *cu_what = "";
    gpu_key *k = (gpu_key *)calloc(1, sizeof *k);
    cuzk_matrix *own = nullptr; /* the CSR when we build it here (freed after the upload) */
    const cuzk_matrix *mat = nullptr;
    size_t free_b = 0, total_b = 0, n = 0, rows = 0, nc = 0;
    uint64_t done = 0, total = 0;
    cuzk_err rc;
    fr wn, iwn, w2n, ninv, one;
    if (!opts)
        opts = &no_opts;
    /* copies b bytes host -> device in 64 MiB steps, adding them to done and reporting
       (phase, done, total) after each step */
    auto upload_chunked = [&](void *dst, const void *src, size_t b, const char *phase) -> cudaError_t {
        const size_t step = (size_t)64 << 20;
        for (size_t off = 0; off < b; off += step) {
            size_t c = b - off < step ? b - off : step;
            cudaError_t e = cudaMemcpy((uint8_t *)dst + off, (const uint8_t *)src + off, c, cudaMemcpyHostToDevice);
            if (e != cudaSuccess)
                return e;
            done += c;
            if (opts->progress)
                opts->progress(opts->progress_ctx, phase, done, total);
        }
        return cudaSuccess;
    };
    if (!k)
        return cuzk_errf(err, CUZK_ENOMEM, "gpu: out of host memory");
    *ks = nullptr;
    if (z->curve->id != GPU_CURVE_ID) {
        free(k);
        return cuzk_errf(err, CUZK_ECURVE, "gpu: key is %s, backend is for another curve", z->curve->label);
    }
    if (z->log_domain + 1 > (unsigned)GPU_P(FR_TWO_ADICITY)) {
        free(k);
        return cuzk_errf(err, CUZK_EINVAL, "gpu: domain 2^%u is too large for this curve", z->log_domain);
    }
    mat = opts->matrix;
    if (mat && (mat->curve != z->curve->id || mat->n != z->domain_size || mat->n_vars != z->n_vars ||
                mat->n_entries != z->n_coefs)) {
        free(k);
        return cuzk_errf(err, CUZK_EINVAL, "gpu %d: the constraint matrix given is not this key's", im->device);
    }
    k->z = z;
    k->n = n = z->domain_size;
    k->log_n = z->log_domain;
    k->n_vars = z->n_vars;
    nc = z->n_coefs;
    rows = 2 * n;
    CUDA_TRY(cudaSetDevice(im->device));

    /* memory plan, checked before any upload (stream_plan.h) */
    {
        size_t bases = 0, fixed = 0, largest = 0, pmax = par_sets_max();
        for (int i = 0; i < ZKEY_BASES; i++) {
            bases += msm_align(set_points(z, i) * set_point_bytes(z, i));
            largest = set_points(z, i) > largest ? set_points(z, i) : largest;
        }
        size_t csr = msm_align((rows + 1) * 4) + msm_align(nc * 4) + msm_align(nc * 32);
        fixed += msm_align(ntt_tw_bytes<fr>(k->log_n)) + 2 * msm_align(n * 32); /* twiddles, shift, NTT scratch */
        fixed += msm_align(k->n_vars * 32) + msm_align(3 * n * 32);             /* witness, a|b|c */
        fixed += msm_align(k->n_vars * 32) + msm_align(n * 32);                 /* MSM scalars */
        fixed += GPU_KEY_RESERVE;
        CUDA_TRY(cudaMemGetInfo(&free_b, &total_b));
        uint64_t cap = opts->gpu_mem ? opts->gpu_mem : total_b, used = gpu_mem_charge(im->device, 0);
        stream_ctx sctx{z, 0};
        gpu_plan_in pin = {};
        pin.cap = cap;
        pin.avail = cap > used ? cap - used : 0;
        if (pin.avail > free_b)
            pin.avail = free_b;
        pin.fixed = fixed;
        pin.bases = bases;
        pin.msm_scratch = msm_need(z, 0);
        if (largest <= pmax) {
            pin.par_extra = (ZKEY_BASES - 1) * msm_need(z, 0) + WPRE * msm_align(z->n_vars * 32);
            pin.par_always = largest <= GPU_PAR_SETS_SMALL;
        }
        const char *tenv = getenv("CUZK_GPU_MSM_TABLE");
        size_t hn = set_points(z, ZKEY_H);
        pin.table_forced = tenv && !strcmp(tenv, "1");
        if (!(tenv && !strcmp(tenv, "0")) && msm_table_ok(hn, GPU_FR_BITS) &&
            (pin.table_forced || hn >= MSM_TABLE_MIN_POINTS)) {
            size_t d = msm_need(z, 1) > msm_need(z, 0) ? msm_need(z, 1) - msm_need(z, 0) : 0;
            pin.table = msm_align(msm_table_bytes<fq>(set_shape(z, ZKEY_H, 1))) + d;
            pin.table_par = (ZKEY_BASES - 1) * d;
        }
        pin.points_max = largest;
        pin.chunk_force = chunk_forced();
        pin.batch_want = opts->batch_max ? opts->batch_max : 1;
        pin.force = placement_forced();
        for (int i = 0; i < ZKEY_BASES; i++)
            pin.set_bytes[i] = msm_align(set_points(z, i) * set_point_bytes(z, i)) + msm_align(set_points(z, i));
        if (stream_sets_forced(&pin.sets_force, err)) {
            free(k);
            return CUZK_EINVAL;
        }
        pin.stream_bytes = stream_bytes_cb;
        pin.ctx = &sctx;
        /* the matrix on the device unless the caller evaluates a/b/c itself; a key that streams
           may instead leave it on the host (a/b/c on the CPU) and, on a small card, use the lean
           layout (LEAN above): of the plans that work, a resident one, else the one with the
           fewest compromises unless one with more takes chunks at least STREAM_CHUNK_TRADE times
           as large (on an H100, 2^24 under 16 GiB: chunks of 2^22 with a/b/c on the device
           352 ms, chunks of 2^23 with a/b/c on the CPU and lean buffers 468 ms) */
        const char *aenv = getenv("CUZK_GPU_ABC"); /* "host" (tests): a/b/c on the CPU */
        k->abc_host = opts->no_abc || (aenv && !strcmp(aenv, "host"));
        /* lean: h and the witness, and the arena's NTT part beside the streamed buffers, or under
           them (share: stream_bytes counts at least the NTT part) */
        const size_t lean_ntt = lean_ntt_carve(k->log_n, nullptr, nullptr, nullptr);
        const int share = !env_off("CUZK_GPU_LEAN_SHARE");
        size_t lean_fixed = msm_align(n * 32) + msm_align(k->n_vars * 32) + GPU_KEY_RESERVE + (share ? 0 : lean_ntt);
        /* candidates, fewest compromises first: [0] a/b/c on the device, [1] a/b/c on the CPU,
           [2] lean with a/b/c on the device (the matrix beside the lean buffers), [3] lean with
           a/b/c on the CPU */
        gpu_plan cand[4];
        int ok[4] = {0, 0, 0, 0}, pick = -1;
        pin.fixed = fixed + (k->abc_host ? 0 : csr);
        ok[0] = !gpu_plan_key(&pin, &cand[0]);
        if (!(ok[0] && !cand[0].streamed)) {
            pin.fixed = fixed;
            ok[1] = !k->abc_host && !gpu_plan_key(&pin, &cand[1]) && cand[1].streamed;
            pin.force = GPU_PLACE_STREAMED; /* lean is for streamed keys only */
            sctx.floor = share ? lean_ntt : 0;
            for (int c = 2; c < 4; c++) {
                pin.fixed = lean_fixed + (c == 2 ? csr : 0);
                ok[c] = placement_forced() != GPU_PLACE_RESIDENT && !(c == 2 && k->abc_host) &&
                        !gpu_plan_key(&pin, &cand[c]);
            }
            sctx.floor = 0;
            pin.force = placement_forced();
        }
        pick = gpu_plan_pick(cand, ok, 4);
        const char *lenv = getenv("CUZK_GPU_LEAN"); /* "1" (tests): the lean layout whenever it streams */
        if (lenv && !strcmp(lenv, "1") && (pick < 0 || cand[pick].streamed) && (ok[2] || ok[3]))
            pick = ok[2] ? 2 : 3;
        int bad = pick < 0;
        k->place = cand[0]; /* its why says what failed */
        if (!bad) {
            k->place = cand[pick];
            k->abc_host |= pick == 1 || pick == 3;
            k->lean = pick >= 2;
            k->share = k->lean && share;
            if (pick > 0)
                snprintf(k->place.why + strlen(k->place.why), sizeof k->place.why - strlen(k->place.why),
                         "; a/b/c on the %s%s", k->abc_host ? "CPU" : "device", k->lean ? ", lean buffers" : "");
        }
        if (bad) {
            cuzk_err rc2 = cuzk_errf(err, CUZK_ENOMEM, "gpu %d: %s (--gpu-mem %.2f GiB, %.2f GiB held by other keys, "
                                     "%.2f GiB free on the device)", im->device, k->place.why,
                                     (double)cap / (1u << 30), (double)used / (1u << 30), (double)free_b / (1u << 30));
            free(k);
            return rc2;
        }
        k->par_sets = k->place.par_sets;
        k->tab_h = k->place.table;
        k->msm_bytes = msm_need(z, k->tab_h); /* streamed: the chunks' scratch, below */
        /* WIDE: the witness sets' shapes for dense witnesses, where they differ and fit */
        int wenv = wide_env();
        if (!k->place.streamed && !k->par_sets && wenv != 0) {
            int differ = 0; /* keys whose wide shapes are the narrow ones skip the count per proof */
            for (int i = 0; i < ZKEY_BASES; i++) {
                msm_shape a = set_shape(z, i, k->tab_h, 0), b = set_shape(z, i, k->tab_h, 1);
                differ |= a.c != b.c || a.chunk0 != b.chunk0;
            }
            size_t wb = msm_need(z, k->tab_h, 1), extra = wb - k->msm_bytes;
            uint64_t keep = wenv == 1 ? 0 : cap / 4;
            if (differ && k->place.need + extra + keep <= pin.avail) {
                k->wide = 1;
                k->msm_bytes = wb;
                k->place.need += extra;
                snprintf(k->place.why + strlen(k->place.why), sizeof k->place.why - strlen(k->place.why),
                         "; wide windows for dense witnesses (%+.2f GiB)", (double)extra / (1u << 30));
            }
        }
        k->device = im->device;
    }
    if (pthread_mutex_init(&k->mu_ntt, nullptr) || pthread_mutex_init(&k->mu_msm, nullptr)) {
        free(k);
        return cuzk_errf(err, CUZK_EINTERNAL, "gpu: mutex init failed");
    }
    k->locks_ok = 1;
    /* two sets of streams: an urgent workspace (ws->urgent) runs on the high-priority set, so
       the block scheduler starts its kernels' blocks ahead of other work on the device */
    {
        int lo = 0, hi = 0;
        CUDA_TRY(cudaDeviceGetStreamPriorityRange(&lo, &hi));
        for (int u = 0; u < 2; u++) {
            int prio = u ? hi : lo;
            CUDA_TRY(cudaStreamCreateWithPriority(&k->st_ntt[u], cudaStreamNonBlocking, prio));
            CUDA_TRY(cudaStreamCreateWithPriority(&k->st_msm[u], cudaStreamNonBlocking, prio));
            for (int i = 0; i < ZKEY_BASES && k->par_sets; i++)
                CUDA_TRY(cudaStreamCreateWithPriority(&k->st_set[u][i], cudaStreamNonBlocking, prio));
            CUDA_TRY(cudaStreamCreateWithPriority(&k->st_copy[u], cudaStreamNonBlocking, prio));
        }
    }
    CUDA_TRY(cudaEventCreateWithFlags(&k->ev_h, cudaEventDisableTiming));
    CUDA_TRY(cudaEventCreateWithFlags(&k->ev_bc, cudaEventDisableTiming));
    CUDA_TRY(cudaEventCreateWithFlags(&k->ev_w, cudaEventDisableTiming));
    CUDA_TRY(cudaEventCreateWithFlags(&k->ev_wcopy, cudaEventDisableTiming));

    /* bases, kept resident, uploaded in steps so the caller sees progress; streamed sets: copied
       once into page-locked host memory, shared by every device */
    k->sets = k->place.streamed ? k->place.sets : 0;
    for (int i = 0; i < ZKEY_BASES; i++)
        total += k->sets >> i & 1 ? 0 : set_points(z, i) * set_point_bytes(z, i);
    for (int i = 0; i < ZKEY_BASES; i++) {
        if (k->sets >> i & 1)
            continue;
        size_t b = set_points(z, i) * set_point_bytes(z, i);
        CUDA_TRY(cudaMalloc((void **)&k->d_bases[i], b ? b : 16));
        CUDA_TRY(upload_chunked(k->d_bases[i], z->bases[i], b, "bases"));
        if (k->place.streamed) /* also when every set stays on the device */
            CUDA_TRY(inf_mask(k, i));
    }
    if (k->sets && !(k->hb = host_bases_acquire(z, k->sets, opts))) {
        uint64_t hb = 0;
        for (int i = 0; i < ZKEY_BASES; i++)
            hb += k->sets >> i & 1 ? set_points(z, i) * set_point_bytes(z, i) : 0;
        key_free(k);
        return cuzk_errf(err, CUZK_ENOMEM, "gpu %d: no host memory for the streamed bases (%.2f GiB)", im->device,
                         (double)hb / (1u << 30));
    }

    /* CSR of section 4 (matrix.h): the caller's, or built here for this upload only; a key
       with a/b/c on the host keeps it there, for a CPU backend's eval_abc (not for no_abc) */
    if (!mat && !opts->no_abc) {
        if ((rc = matrix_build(&own, z, nullptr, opts->progress, opts->progress_ctx, err))) {
            key_free(k);
            return rc;
        }
        mat = own;
    }
    if (!k->abc_host) {
        CUDA_TRY(cudaMalloc((void **)&k->d_row_ptr, (rows + 1) * 4));
        CUDA_TRY(cudaMalloc((void **)&k->d_col, nc ? nc * 4 : 4));
        CUDA_TRY(cudaMalloc((void **)&k->d_val, nc ? nc * 32 : 32));
        done = 0;
        total = (rows + 1) * 4 + (uint64_t)nc * 36;
        CUDA_TRY(upload_chunked(k->d_row_ptr, mat->row_ptr, (rows + 1) * 4, "matrix"));
        CUDA_TRY(upload_chunked(k->d_col, mat->sig, nc * 4, "matrix"));
        CUDA_TRY(upload_chunked(k->d_val, mat->val, nc * 32, "matrix"));
        matrix_free(own);
        own = nullptr;
    } else if (!opts->no_abc) {
        groth16_key_opts ho = {};
        ho.matrix = mat;
        ho.abc_only = 1;
        k->own_mat = own; /* kept for host_be */
        own = nullptr;
        if (!(k->host_be = cpu_backend_create(z->curve->id, 0, err)) ||
            (rc = k->host_be->key_attach(k->host_be, z, &ho, &k->host_ks, err))) {
            key_free(k);
            return rc ? rc : CUZK_ENOMEM;
        }
    }

    /* NTT tables */
    k->plan.log_n = k->log_n;
    wn = fr_const(GPU_P(FR_ROOTS), k->log_n);
    iwn = fr_const(GPU_P(FR_IROOTS), k->log_n);
    w2n = fr_const(GPU_P(FR_ROOTS), k->log_n + 1);
    ninv = fr_const(GPU_P(FR_NINV), k->log_n);
    one = fr_const(GPU_P(FR_ROOTS), 0);
    k->w2n = w2n;
    k->ninv = ninv;
    k->wn = wn;
    k->iwn = iwn;
    k->one = one;
    if (!k->lean) { /* a lean key's tables are in its arena (below), built by the first h step */
        CUDA_TRY(cudaMalloc((void **)&k->plan.d_tw, (n / 2 + 1) * sizeof(fr)));
        CUDA_TRY(cudaMalloc((void **)&k->plan.d_itw, (n / 2 + 1) * sizeof(fr)));
        CUDA_TRY(cudaMalloc((void **)&k->d_shift, n * sizeof(fr)));
        CUDA_TRY(cudaMalloc((void **)&k->plan.d_tmp, n * sizeof(fr)));
        ntt_powers_kernel<fr><<<ntt_blocks((n / 2 + 63) / 64, 256), 256>>>(k->plan.d_tw, n / 2 + 1, wn, one);
        ntt_powers_kernel<fr><<<ntt_blocks((n / 2 + 63) / 64, 256), 256>>>(k->plan.d_itw, n / 2 + 1, iwn, one);
        CUDA_TRY(ntt_plan_finish(k->plan, n / 2 + 1, 0));
        ntt_powers_kernel<fr><<<ntt_blocks((n + 63) / 64, 256), 256>>>(k->d_shift, n, w2n, ninv);
        CUDA_TRY(cudaGetLastError());
    }

    CUDA_TRY(cudaMalloc((void **)&k->d_w, k->n_vars * 32));
    CUDA_TRY(cudaMalloc((void **)&k->d_abc, (k->lean ? 1 : 3) * n * 32));
    if (k->lean) { /* the MSMs read their scalars where h and the witness are */
        k->d_msm_w = (uint32_t *)k->d_w;
        k->d_msm_h = (uint32_t *)k->d_abc;
    } else {
        CUDA_TRY(cudaMalloc((void **)&k->d_msm_w, k->n_vars * 32));
        CUDA_TRY(cudaMalloc((void **)&k->d_msm_h, n * 32));
    }
    if (k->place.streamed) {
        size_t cnt[ZKEY_BASES], pbmax = 0, buckets = 0;
        k->chunk = k->place.chunk;
        k->batch = k->place.batch;
        for (int i = 0; i < ZKEY_BASES; i++) {
            cnt[i] = k->cnt[i] = k->sets >> i & 1 ? k->hb->cnt[i] : set_points(z, i);
            k->stream_c[i] = stream_bits(i, cnt[i], k->chunk);
            pbmax = set_point_bytes(z, i) > pbmax ? set_point_bytes(z, i) : pbmax;
        }
        k->bpair = stream_pair_ok(k);
        stream_scratch(cnt, k->chunk, &k->msm_bytes, &buckets);
        size_t off = 0;
        for (int i = 0; i < ZKEY_BASES; i++) {
            k->bk_off[i] = off;
            off += cnt[i] ? stream_set_buckets(i, cnt[i], k->chunk) : 0;
        }
        k->bk_bytes = off;
        CUDA_TRY(cudaHostAlloc((void **)&k->h_win, (size_t)k->batch * ZKEY_BASES * STREAM_WIN * sizeof(xyzz_t<fq2>),
                               cudaHostAllocDefault));
        for (int r = 0; r < STREAM_RING; r++) {
            CUDA_TRY(cudaEventCreateWithFlags(&k->ev_copied[r], cudaEventDisableTiming));
            CUDA_TRY(cudaEventCreateWithFlags(&k->ev_used[r], cudaEventDisableTiming));
        }
        for (int i = 0; i < 2; i++)
            CUDA_TRY(cudaEventCreateWithFlags(&k->ev_item[i], cudaEventDisableTiming));
        k->d_bw[0] = k->d_msm_w;
        k->d_bh[0] = k->d_msm_h;
        if (k->lean) {
            const size_t sb = stream_carve(k, pbmax, buckets, nullptr);
            const size_t nb = lean_ntt_carve(k->log_n, nullptr, nullptr, nullptr);
            const size_t ab = k->share ? (sb > nb ? sb : nb) : sb + nb;
            CUDA_TRY(cudaMalloc((void **)&k->d_arena, ab));
            lean_ntt_carve(k->log_n, k->d_arena, &k->plan, &k->d_lean_b);
            stream_carve(k, pbmax, buckets, k->d_arena + (k->share ? 0 : nb));
            k->tw_ok = 0;
            if (k->share && sb >= nb + msm_align(n * 32) && !env_off("CUZK_GPU_LEAN_C"))
                k->d_lean_c = (fr *)(k->d_arena + nb);
            snprintf(k->place.why + strlen(k->place.why), sizeof k->place.why - strlen(k->place.why),
                     " (the h step's NTT buffers and the pass's %s: %.2f GiB%s)", k->share ? "share" : "side by side",
                     (double)ab / (1u << 30), k->d_lean_c ? ", room for c" : "");
        } else {
            for (int r = 0; r < STREAM_RING; r++) {
                CUDA_TRY(cudaMalloc((void **)&k->d_ring[r], k->chunk * pbmax));
                CUDA_TRY(cudaMalloc((void **)&k->d_ring_idx[r], k->chunk * 4));
            }
            CUDA_TRY(cudaMalloc((void **)&k->d_chunk_sc, k->chunk * 32));
            for (unsigned p = 0; p < k->batch; p++) {
                CUDA_TRY(cudaMalloc((void **)&k->d_bk[p], buckets));
                if (p) {
                    CUDA_TRY(cudaMalloc((void **)&k->d_bw[p], k->n_vars * 32));
                    CUDA_TRY(cudaMalloc((void **)&k->d_bh[p], n * 32));
                }
            }
        }
    }
    if (!k->d_arena)
        CUDA_TRY(cudaMalloc((void **)&k->d_msm, k->msm_bytes));
    if (k->wide)
        CUDA_TRY(cudaMalloc((void **)&k->d_full, sizeof *k->d_full));
    if (k->tab_h) { /* built in the MSM scratch, which no MSM uses yet */
        msm_shape s = set_shape(z, ZKEY_H, 1);
        if (opts->progress)
            opts->progress(opts->progress_ctx, "msm table", 0, s.nwin);
        CUDA_TRY(cudaMalloc((void **)&k->d_tab_h, msm_table_bytes<fq>(s)));
        CUDA_TRY(msm_table_build<fq>(k->d_tab_h, k->d_bases[ZKEY_H], s, k->d_msm, k->msm_bytes, 0));
        CUDA_TRY(cudaDeviceSynchronize());
        if (opts->progress)
            opts->progress(opts->progress_ctx, "msm table", s.nwin, s.nwin);
    }
    k->d_msm_set[0] = k->d_msm;
    for (int i = 1; i < ZKEY_BASES && k->par_sets; i++)
        CUDA_TRY(cudaMalloc((void **)&k->d_msm_set[i], k->msm_bytes));
    if (k->par_sets) {
        for (int i = 0; i < WPRE; i++) {
            CUDA_TRY(cudaMalloc((void **)&k->d_wpre[i], k->n_vars * 32));
            CUDA_TRY(cudaStreamCreateWithFlags(&k->st_wpre[i], cudaStreamNonBlocking));
        }
        if (pthread_mutex_init(&k->mu_wpre, nullptr) == 0) {
            if (pthread_cond_init(&k->cv_wpre, nullptr) == 0)
                k->wpre_ok = 1;
            else
                pthread_mutex_destroy(&k->mu_wpre);
        }
    }
    CUDA_TRY(cudaHostAlloc((void **)&k->h_w[0], k->n_vars * 32, cudaHostAllocDefault));
    CUDA_TRY(cudaHostAlloc((void **)&k->h_w[1], k->n_vars * 32, cudaHostAllocDefault));
    CUDA_TRY(cudaDeviceSynchronize());
    k->dev_bytes = k->place.need;
    gpu_mem_charge(im->device, (int64_t)k->dev_bytes);
    *ks = k;
    return CUZK_OK;
fail:
    matrix_free(own);
    key_free(k);
    return cuzk_errf(err, gpu_err_code(cu_err),
                     "gpu %d: key attach: %s failed: %s", im->device, cu_what, cudaGetErrorString(cu_err));
}

void gpu_key_detach(cuzk_backend *be, void *ks)
{
    gpu_impl *im = (gpu_impl *)be->impl;
    cudaSetDevice(im->device);
    key_free((gpu_key *)ks);
}

/* reports a phase (GROTH16_PHASE_*) to the workspace's hook, if it has one */
void phase_set(const groth16_ws *ws, int ph)
{
    if (ws->phase)
        ws->phase(ws->phase_ctx, ph);
}

/* queues the witness's copy (std form) to dst on st: straight from ws->wtns when it is
 * page-locked, else through pinned staging buffer `which` (reused by the next call) */
cudaError_t upload_witness_async(gpu_key *k, int which, void *dst, const groth16_ws *ws, cudaStream_t st)
{
    size_t b = k->n_vars * 32;
    const void *src = ws->wtns;
    if (!ws->pinned) {
        memcpy(k->h_w[which], ws->wtns, b);
        src = k->h_w[which];
    }
    return cudaMemcpyAsync(dst, src, b, cudaMemcpyHostToDevice, st);
}

/* the same, waited for */
cudaError_t upload_witness(gpu_key *k, int which, void *dst, const groth16_ws *ws, cudaStream_t st)
{
    cudaError_t e = upload_witness_async(k, which, dst, ws, st);
    return e != cudaSuccess ? e : cudaStreamSynchronize(st);
}

/* d_w <- the witness, d_abc <- a/b/c from it (on st_ntt[u], waited for; mu_ntt held); the
 * caller sets the tokens */
cudaError_t abc_on_device(gpu_key *k, groth16_ws *ws, int u, const char **what)
{
    size_t n = k->n;
    cudaError_t e;
    k->w_token = 0; /* d_w is rewritten */
    phase_set(ws, GROTH16_PHASE_COPY);
    if ((e = upload_witness(k, 0, k->d_w, ws, k->st_ntt[u])) != cudaSuccess) {
        *what = "witness upload";
        return e;
    }
    phase_set(ws, GROTH16_PHASE_COMPUTE);
    eval_ab_kernel<fr><<<ntt_blocks(2 * n, 256), 256, 0, k->st_ntt[u]>>>(k->d_abc, k->d_row_ptr, k->d_col, k->d_val,
                                                                      k->d_w, 2 * n);
    fr_mul3_kernel<fr><<<ntt_blocks(n, 256), 256, 0, k->st_ntt[u]>>>(k->d_abc + 2 * n, k->d_abc, k->d_abc + n, n);
    if ((e = cudaGetLastError()) == cudaSuccess)
        e = cudaStreamSynchronize(k->st_ntt[u]);
    if (e != cudaSuccess)
        *what = "a/b/c evaluation";
    return e;
}

/* LEAN with the matrix on the device: the rows [r0, r0 + n) of the matrix (0: a, n: b) at
   the witness in d_w, into out (on st) */
void lean_rows(gpu_key *k, fr *out, size_t r0, cudaStream_t st)
{
    eval_ab_kernel<fr><<<ntt_blocks(k->n, 256), 256, 0, st>>>(out, k->d_row_ptr + r0, k->d_col, k->d_val,
                                                              (const fr *)k->d_w, k->n);
}

/* LEAN: d_w <- the workspace's witness unless it holds it already (mu_msm and mu_ntt held;
   waited for) */
cudaError_t lean_witness(gpu_key *k, groth16_ws *ws, int u)
{
    if (ws->w_token && ws->w_token == k->w_token)
        return cudaSuccess;
    k->w_token = 0; /* d_w is rewritten */
    phase_set(ws, GROTH16_PHASE_COPY);
    cudaError_t e = upload_witness(k, 1, k->d_w, ws, k->st_ntt[u]);
    phase_set(ws, GROTH16_PHASE_COMPUTE);
    if (e == cudaSuccess)
        k->w_token = ws->w_token = gpu_token_next();
    return e;
}

/* eval_abc of a LEAN key with the matrix on the device (mu_msm, then mu_ntt: d_w is the MSM
 * scalars): the witness goes up; compute_h evaluates a/b/c from it on the device. Host copies
 * only where the caller asks for them (not keep_on_device): a, b and c = a b evaluated into b's
 * buffer and the NTT scratch, then copied down. */
cuzk_err lean_eval_abc(gpu_impl *im, gpu_key *k, groth16_ws *ws, char *err)
{
    cudaError_t cu_err = cudaSuccess;
    const char *cu_what = "";
    size_t n = k->n;
    int u = ws->urgent != 0;
    pthread_mutex_lock(&k->mu_msm);
    pthread_mutex_lock(&k->mu_ntt);
    k->abc_token = k->h_token = 0;
    ws->abc_token = 0;
    CUDA_TRY(cudaSetDevice(im->device));
    CUDA_TRY(lean_witness(k, ws, u));
    if (ws->keep_on_device) {
        ws->host_missing |= GROTH16_HOST_ABC;
    } else {
        cudaStream_t st = k->st_ntt[u];
        lean_rows(k, k->d_abc, 0, st);
        lean_rows(k, k->d_lean_b, n, st);
        fr_mul3_kernel<fr><<<ntt_blocks(n, 256), 256, 0, st>>>(k->plan.d_tmp, k->d_abc, k->d_lean_b, n);
        CUDA_TRY(cudaGetLastError());
        phase_set(ws, GROTH16_PHASE_COPY);
        CUDA_TRY(cudaMemcpyAsync(ws->a, k->d_abc, n * 32, cudaMemcpyDeviceToHost, st));
        CUDA_TRY(cudaMemcpyAsync(ws->b, k->d_lean_b, n * 32, cudaMemcpyDeviceToHost, st));
        CUDA_TRY(cudaMemcpyAsync(ws->c, k->plan.d_tmp, n * 32, cudaMemcpyDeviceToHost, st));
        CUDA_TRY(cudaStreamSynchronize(st));
        phase_set(ws, GROTH16_PHASE_COMPUTE);
        ws->host_missing &= ~(unsigned)GROTH16_HOST_ABC;
    }
    pthread_mutex_unlock(&k->mu_ntt);
    pthread_mutex_unlock(&k->mu_msm);
    return CUZK_OK;
fail:
    cudaStreamSynchronize(k->st_ntt[u]);
    pthread_mutex_unlock(&k->mu_ntt);
    pthread_mutex_unlock(&k->mu_msm);
    return cuzk_errf(err, gpu_err_code(cu_err), "gpu %d: eval_abc: %s failed: %s", im->device, cu_what,
                     cudaGetErrorString(cu_err));
}

cuzk_err gpu_eval_abc(cuzk_backend *be, void *ks, groth16_ws *ws, char *err)
{
    gpu_impl *im = (gpu_impl *)be->impl;
    gpu_key *k = (gpu_key *)ks;
    cudaError_t cu_err = cudaSuccess;
    const char *cu_what = "";
    size_t n = k->n;
    int u = ws->urgent != 0;
    uint64_t tok = 0;
    if (k->abc_host) { /* the matrix is on the host: a/b/c by the CPU into the host buffers */
        if (!k->host_be)
            return cuzk_errf(err, CUZK_EINVAL, "gpu %d: this key was attached for callers that evaluate a/b/c "
                             "themselves (no_abc)", im->device);
        cuzk_err e = k->host_be->eval_abc(k->host_be, k->host_ks, ws, err);
        ws->host_missing &= ~(unsigned)GROTH16_HOST_ABC;
        ws->abc_token = 0;
        return e;
    }
    if (k->lean)
        return lean_eval_abc(im, k, ws, err);
    pthread_mutex_lock(&k->mu_ntt);
    k->abc_token = k->h_token = 0; /* d_abc is rewritten below */
    CUDA_TRY(cudaSetDevice(im->device));
    if ((cu_err = abc_on_device(k, ws, u, &cu_what)) != cudaSuccess)
        goto fail;
    if (ws->keep_on_device) {
        ws->host_missing |= GROTH16_HOST_ABC;
    } else {
        phase_set(ws, GROTH16_PHASE_COPY);
        CUDA_TRY(cudaMemcpyAsync(ws->a, k->d_abc, n * 32, cudaMemcpyDeviceToHost, k->st_ntt[u]));
        CUDA_TRY(cudaMemcpyAsync(ws->b, k->d_abc + n, n * 32, cudaMemcpyDeviceToHost, k->st_ntt[u]));
        CUDA_TRY(cudaMemcpyAsync(ws->c, k->d_abc + 2 * n, n * 32, cudaMemcpyDeviceToHost, k->st_ntt[u]));
        CUDA_TRY(cudaStreamSynchronize(k->st_ntt[u]));
        ws->host_missing &= ~(unsigned)GROTH16_HOST_ABC;
    }
    /* a/b/c and the witness stay on the device: compute_h and msm_all of this workspace start
       from them */
    tok = gpu_token_next();
    k->abc_token = k->w_token = tok;
    ws->abc_token = ws->w_token = tok;
    pthread_mutex_unlock(&k->mu_ntt);
    return CUZK_OK;
fail:
    cudaStreamSynchronize(k->st_ntt[u]);
    pthread_mutex_unlock(&k->mu_ntt);
    return cuzk_errf(err, gpu_err_code(cu_err), "gpu %d: eval_abc: %s failed: %s", im->device, cu_what,
                     cudaGetErrorString(cu_err));
}

/* d <- the odd-coset evaluations of the polynomial whose domain evaluations d holds:
 * iNTT, times w_(2n)^i / n, NTT (on st_ntt) */
cudaError_t coset_eval(gpu_key *k, fr *d, cudaStream_t st)
{
    cudaError_t e = ntt_run(k->plan, d, 1, st);
    if (e != cudaSuccess)
        return e;
    if (k->d_shift)
        fr_mul_vec_kernel<fr><<<ntt_blocks(k->n, 256), 256, 0, st>>>(d, k->d_shift, k->n);
    else
        ntt_powers_kernel<fr, true><<<ntt_blocks((k->n + 63) / 64, 256), 256, 0, st>>>(d, k->n, k->w2n, k->ninv);
    return ntt_run(k->plan, d, 0, st);
}

/* LEAN: n host elements at src up into dst on the copy stream cp, st waiting for them; after:
   the copy first waits for the work queued on st so far */
static cudaError_t lean_up(gpu_key *k, fr *dst, const void *src, cudaStream_t st, cudaStream_t cp, int after)
{
    cudaError_t e = cudaSuccess;
    if (after && ((e = cudaEventRecord(k->ev_bc, st)) != cudaSuccess ||
                  (e = cudaStreamWaitEvent(cp, k->ev_bc, 0)) != cudaSuccess))
        return e;
    if ((e = cudaMemcpyAsync(dst, src, k->n * 32, cudaMemcpyHostToDevice, cp)) != cudaSuccess ||
        (e = cudaEventRecord(k->ev_bc, cp)) != cudaSuccess)
        return e;
    return cudaStreamWaitEvent(st, k->ev_bc, 0);
}

/* compute_h of a LEAN key (mu_msm and mu_ntt held), h left in d_abc on st_ntt[u]: a/b/c in 2n
 * (b's buffer in the arena). With the matrix on the device a and b are evaluated from the
 * witness in d_w (uploaded again if a pass took it), and after a *= b, c = a b is evaluated
 * again into b's buffer through the NTT scratch; else a/b/c come from the host buffers, b going
 * up while a's NTTs run, and c after it into the arena's room (d_lean_c) where there is one,
 * else after a *= b into b's buffer. The twiddles are built first where a pass overwrote them. */
cudaError_t lean_h(gpu_key *k, groth16_ws *ws, int u, const char **what)
{
    const size_t n = k->n;
    fr *d_a = k->d_abc, *d_b = k->d_lean_b;
    cudaStream_t st = k->st_ntt[u], cp = k->st_copy[u];
    const int dev = !k->abc_host;
    cudaError_t e = cudaSuccess;
    *what = "h (lean buffers)";
    k->abc_token = k->h_token = 0; /* d_abc is rewritten below */
    ws->abc_token = 0;
    if (dev) {
        if ((e = lean_witness(k, ws, u)) != cudaSuccess) {
            *what = "witness upload";
            return e;
        }
        lean_rows(k, d_a, 0, st);
    } else {
        phase_set(ws, GROTH16_PHASE_COPY);
        if ((e = cudaMemcpyAsync(d_a, ws->a, n * 32, cudaMemcpyHostToDevice, st)) != cudaSuccess ||
            (e = cudaStreamSynchronize(st)) != cudaSuccess)
            return e;
        phase_set(ws, GROTH16_PHASE_COMPUTE);
    }
    if (!k->tw_ok && (e = lean_tables(k, st)) != cudaSuccess) {
        *what = "twiddle tables";
        return e;
    }
    if ((e = coset_eval(k, d_a, st)) != cudaSuccess)
        return e;
    if (dev) {
        lean_rows(k, d_b, n, st);
    } else if ((e = lean_up(k, d_b, ws->b, st, cp, 0)) != cudaSuccess) {
        return e;
    }
    /* c into the room: right behind b on the copy stream, waited for only before c's NTTs
       (ev_bc recorded again: st's wait for b above took the record before this one) */
    fr *d_c = !dev && k->d_lean_c ? k->d_lean_c : d_b;
    if (d_c != d_b && ((e = cudaMemcpyAsync(d_c, ws->c, n * 32, cudaMemcpyHostToDevice, cp)) != cudaSuccess ||
                       (e = cudaEventRecord(k->ev_bc, cp)) != cudaSuccess))
        return e;
    if ((e = coset_eval(k, d_b, st)) != cudaSuccess)
        return e;
    fr_mul_vec_kernel<fr><<<ntt_blocks(n, 256), 256, 0, st>>>(d_a, d_b, n);
    if (dev) {
        lean_rows(k, d_b, 0, st);
        lean_rows(k, k->plan.d_tmp, n, st);
        fr_mul_vec_kernel<fr><<<ntt_blocks(n, 256), 256, 0, st>>>(d_b, k->plan.d_tmp, n);
    } else if (d_c != d_b) {
        if ((e = cudaStreamWaitEvent(st, k->ev_bc, 0)) != cudaSuccess)
            return e;
    } else if ((e = lean_up(k, d_b, ws->c, st, cp, 1)) != cudaSuccess) { /* after a *= b */
        return e;
    }
    if ((e = coset_eval(k, d_c, st)) != cudaSuccess)
        return e;
    h_sub_kernel<fr><<<ntt_blocks(n, 256), 256, 0, st>>>(d_a, d_c, n);
    return cudaGetLastError();
}

/* compute_h; held: the caller holds the key's locks already (msm_all recomputing h) */
cuzk_err compute_h_impl(cuzk_backend *be, void *ks, groth16_ws *ws, char *err, int held)
{
    gpu_impl *im = (gpu_impl *)be->impl;
    gpu_key *k = (gpu_key *)ks;
    cudaError_t cu_err = cudaSuccess;
    const char *cu_what = "";
    size_t n = k->n;
    int u = ws->urgent != 0;
    fr *d_a = k->d_abc, *d_b = k->d_abc + n, *d_c = k->d_abc + 2 * n;
    int resident = 0;
    uint64_t tok = 0;
    if (!held && k->lean) /* the MSMs read d_abc and d_w in place: one at a time (mu_msm, then mu_ntt) */
        pthread_mutex_lock(&k->mu_msm);
    if (!held)
        pthread_mutex_lock(&k->mu_ntt);
    CUDA_TRY(cudaSetDevice(im->device));
    if (k->lean) {
        if ((cu_err = lean_h(k, ws, u, &cu_what)) != cudaSuccess)
            goto fail;
        goto combined;
    }
    /* this workspace's own eval_abc left a/b/c in d_abc and nothing ran there since */
    resident = ws->abc_token != 0 && ws->abc_token == k->abc_token;
    k->abc_token = k->h_token = 0; /* d_abc is rewritten below */
    ws->abc_token = 0;
    if (!resident && (ws->host_missing & GROTH16_HOST_ABC)) {
        /* a/b/c were kept on the device alone and another workspace's step has since reused
           the buffers: evaluate them again */
        if ((cu_err = abc_on_device(k, ws, u, &cu_what)) != cudaSuccess)
            goto fail;
        tok = gpu_token_next();
        k->w_token = ws->w_token = tok;
        resident = 1;
    }
    if (!resident) {
        /* a is waited for; b and c go up on the copy stream while a's NTTs run */
        phase_set(ws, GROTH16_PHASE_COPY);
        CUDA_TRY(cudaMemcpyAsync(d_a, ws->a, n * 32, cudaMemcpyHostToDevice, k->st_ntt[u]));
        CUDA_TRY(cudaStreamSynchronize(k->st_ntt[u]));
        phase_set(ws, GROTH16_PHASE_COMPUTE);
    }
    CUDA_TRY(coset_eval(k, d_a, k->st_ntt[u]));
    if (!resident) {
        CUDA_TRY(cudaMemcpyAsync(d_b, ws->b, n * 32, cudaMemcpyHostToDevice, k->st_copy[u]));
        CUDA_TRY(cudaMemcpyAsync(d_c, ws->c, n * 32, cudaMemcpyHostToDevice, k->st_copy[u]));
        CUDA_TRY(cudaEventRecord(k->ev_bc, k->st_copy[u]));
        CUDA_TRY(cudaStreamWaitEvent(k->st_ntt[u], k->ev_bc, 0));
    }
    CUDA_TRY(coset_eval(k, d_b, k->st_ntt[u]));
    CUDA_TRY(coset_eval(k, d_c, k->st_ntt[u]));
    h_combine_kernel<fr><<<ntt_blocks(n, 256), 256, 0, k->st_ntt[u]>>>(d_a, d_b, d_c, n);
combined:
    CUDA_TRY(cudaGetLastError());
    CUDA_TRY(cudaStreamSynchronize(k->st_ntt[u])); /* the copy below is a wait of its own */
    if (ws->keep_on_device) {
        ws->host_missing |= GROTH16_HOST_H;
    } else {
        phase_set(ws, GROTH16_PHASE_COPY);
        CUDA_TRY(cudaMemcpyAsync(ws->a, d_a, n * 32, cudaMemcpyDeviceToHost, k->st_ntt[u]));
        CUDA_TRY(cudaStreamSynchronize(k->st_ntt[u]));
        ws->host_missing &= ~(unsigned)GROTH16_HOST_H;
    }
    /* h stays in d_abc[0, n): msm_all of this workspace may copy it device to device */
    tok = gpu_token_next();
    k->h_token = tok;
    ws->h_token = tok;
    if (!held)
        pthread_mutex_unlock(&k->mu_ntt);
    if (!held && k->lean)
        pthread_mutex_unlock(&k->mu_msm);
    return CUZK_OK;
fail:
    /* no copy from or to the caller's buffers may outlive the call */
    cudaStreamSynchronize(k->st_copy[u]);
    cudaStreamSynchronize(k->st_ntt[u]);
    if (!held)
        pthread_mutex_unlock(&k->mu_ntt);
    if (!held && k->lean)
        pthread_mutex_unlock(&k->mu_msm);
    return cuzk_errf(err, gpu_err_code(cu_err), "gpu %d: compute_h: %s failed: %s", im->device, cu_what,
                     cudaGetErrorString(cu_err));
}

cuzk_err gpu_compute_h(cuzk_backend *be, void *ks, groth16_ws *ws, char *err)
{
    return compute_h_impl(be, ks, ws, err, 0);
}

/* PHASES: the key's profiling events, made on first use (on the calling thread's device), or
   nullptr when neither profile is asked for or they cannot be made */
static int profile_env()
{
    static int on = -1;
    if (on < 0) {
        const char *a = getenv("CUZK_GPU_MSM_PROFILE"), *b = getenv("CUZK_GPU_STREAM_PROFILE");
        on = (a && *a == '1') || (b && *b == '1');
    }
    return on;
}
msm_prof *prof_of(gpu_key *k)
{
    if (!profile_env())
        return nullptr;
    for (int i = 0; i < 6 && !k->prof_ok; i++)
        if (cudaEventCreate(&k->prof.ev[i]) != cudaSuccess) {
            while (i-- > 0)
                cudaEventDestroy(k->prof.ev[i]);
            cudaGetLastError();
            return nullptr;
        }
    k->prof_ok = 1;
    return &k->prof;
}
/* adds phases [from, to) of the key's profile events (msm_prof mark ph to mark ph + 1: 0 sort,
   1 level 0, 2 partial levels, 3 reduction; waits for mark to) to set's sums, and the partial
   levels' count with phase 2 */
void prof_take(gpu_key *k, int set, int from, int to)
{
    for (int ph = from; ph < to; ph++) {
        float ms = 0;
        if (cudaEventSynchronize(k->prof.ev[ph + 1]) == cudaSuccess &&
            cudaEventElapsedTime(&ms, k->prof.ev[ph], k->prof.ev[ph + 1]) == cudaSuccess)
            k->ph_ms[set][ph] += ms;
        cudaGetLastError();
    }
    if (from <= 2 && to > 2)
        k->ph_levels[set] += k->prof.levels;
}
/* " (sort S, level 0 L, partial P [n levels], reduction R)" for set, then zeroes its sums */
void prof_say(gpu_key *k, int set)
{
    if (!k->prof_ok)
        return;
    fprintf(stderr, " [sort %.1f, level 0 %.1f, partial %.1f (%u levels), reduction %.1f]", k->ph_ms[set][0],
            k->ph_ms[set][1], k->ph_ms[set][2], k->ph_levels[set], k->ph_ms[set][3]);
    memset(k->ph_ms[set], 0, sizeof k->ph_ms[set]);
    k->ph_levels[set] = 0;
}

template <class F>
cudaError_t run_set(gpu_key *k, int set, const uint32_t *d_scalars, uint64_t *out, int reuse_sort, cudaStream_t st,
                    uint8_t *scratch, int wide = 0, msm_prof *prof = nullptr, size_t *live = nullptr)
{
    msm_shape s = set_shape(k->z, set, k->tab_h, wide);
    msm_scratch<F> sc;
    msm_scratch_layout<F>(s, scratch, &sc);
    /* the GPU leaves the window sums; the host combines them (see msm_run) */
    xyzz_t<F> win[(GPU_FR_BITS + 1 + 3) / 4];
    const uint8_t *bases = set == ZKEY_H && k->tab_h ? k->d_tab_h : k->d_bases[set];
    cudaError_t e = msm_run<F>(s, sc, bases, d_scalars, st, reuse_sort, prof, win, live);
    if (e != cudaSuccess)
        return e;
    if ((e = cudaStreamSynchronize(st)) != cudaSuccess)
        return e;
    if (prof)
        prof_take(k, set, 0, 4);
    /* s.rwin sums: one over a table (its windows share one set of buckets) */
    if (std::is_same<F, fq>::value)
        GPU_C(msm_windows_g1)(out, win, s.rwin, s.c);
    else
        GPU_C(msm_windows_g2)(out, win, s.rwin, s.c);
    return cudaSuccess;
}

/* STREAMED (msm.cuh): the five MSMs of the P partitions of a pass, their points taken chunk by
 * chunk from page-locked host memory. The chunks of all five sets form one sequence (see
 * stream_order), so the copy stream keeps crossing the bus while the device adds up a chunk of
 * any set: item j goes up on the copy stream into ring buffer j % STREAM_RING once the item that
 * last used that buffer is done, up to STREAM_RING - 1 items ahead of the bucket work. Each item
 * is one msm_pass (accum) per partition into that partition's buckets of the item's set; its
 * scalars are the partition's, gathered through the chunk's indices where points at infinity
 * were left out. After a set's last chunk its buckets are reduced and the window sums go to
 * page-locked host memory; the host combines them after the pass. The host queues each item's
 * work and then waits for the item before it, so the device always has the next item queued
 * and the host is at most one item ahead: when an item's copy has not landed once the device
 * has finished the item before, the device is idle for it, and that wait is reported through
 * the phase hook (GROTH16_PHASE_COPY) and added up. CUZK_GPU_STREAM_PROFILE=1 prints each pass's time by set. */

/* sets of a pass (stream_all's mask): all five, the four that read the witness */
#define SETS_ALL ((1u << ZKEY_BASES) - 1)
#define SETS_WITNESS (SETS_ALL & ~(1u << ZKEY_H))

/* the items of a pass (stream_pass_order): CUZK_GPU_STREAM_ORDER=sets one set after the other,
   =lower the interleave with ties to the lower set, as before the h set went first */
size_t stream_order(const gpu_key *k, stream_item *out, unsigned mask = SETS_ALL)
{
    uint64_t cnt[ZKEY_BASES];
    for (int i = 0; i < ZKEY_BASES; i++)
        cnt[i] = mask >> i & 1 ? k->cnt[i] : 0;
    const char *e = getenv("CUZK_GPU_STREAM_ORDER");
    int mode = e && !strcmp(e, "sets") ? STREAM_ORDER_SETS : e && !strcmp(e, "lower") ? STREAM_ORDER_LOWER
                                                                                         : STREAM_ORDER_COVER;
    return stream_pass_order(cnt, k->chunk, k->sets, k->bpair, mode, out);
}

/* the set of a pass's first item, -1 when there is none */
static int stream_first_set(const gpu_key *k)
{
    size_t n = 0;
    for (int i = 0; i < ZKEY_BASES; i++)
        n += (k->cnt[i] + k->chunk - 1) / k->chunk;
    stream_item *it = (stream_item *)malloc((n ? n : 1) * sizeof *it);
    int set = it && n && stream_order(k, it) ? it[0].set : -1;
    free(it);
    return set;
}

uint8_t *stream_win(const gpu_key *k, unsigned p, int set)
{
    return k->h_win + ((size_t)p * ZKEY_BASES + set) * STREAM_WIN * sizeof(xyzz_t<fq2>);
}

/* one item's bucket work for the P partitions: its points in ring buffer r (a streamed set), or
   in the set's device bases (a set kept on the device: r < 0), partitions p0 to P - 1; reuse: the
   sorted entries of the first of them are in the scratch, left by B1's pass of the chunk (bpair) */
template <class F>
cudaError_t stream_chunk(gpu_key *k, int set, size_t i, int r, unsigned p0, unsigned P, const uint32_t *const *sc,
                         int reuse, cudaStream_t st, size_t *live)
{
    const size_t K = k->chunk, off = i * K, m = k->cnt[set] - off < K ? k->cnt[set] - off : K;
    const uint8_t *pts = r >= 0 ? k->d_ring[r] : k->d_bases[set] + off * set_point_bytes(k->z, set);
    msm_shape sm = stream_shape(set, m, k->stream_c[set]);
    msm_scratch<F> scr;
    msm_scratch_layout<F>(sm, k->d_msm, &scr);
    cudaError_t e = cudaSuccess;
    for (unsigned p = p0; p < P && e == cudaSuccess; p++) {
        const uint32_t *scal = sc[p] + off * 8;
        const int reused = reuse && p == p0;
        if (r >= 0 && k->hb->idx[set] && !reused) {
            msm_gather_kernel<<<msm_grid(m, 256), 256, 0, st>>>((uint4 *)k->d_chunk_sc, (const uint4 *)sc[p],
                                                                 k->d_ring_idx[r], m);
            scal = k->d_chunk_sc;
        } else if (r < 0 && k->d_inf[set] && !reused) {
            msm_mask_kernel<<<msm_grid(m, 256), 256, 0, st>>>((uint4 *)k->d_chunk_sc, (const uint4 *)scal,
                                                               k->d_inf[set] + off, m);
            scal = k->d_chunk_sc;
        }
        scr.buckets = (xyzz_t<F> *)(k->d_bk[p] + k->bk_off[set]);
        msm_prof *prof = prof_of(k);
        MSM_PROF_MARK(prof, 0, st);
        e = msm_pass<F>(sm, scr, pts, scal, st, reused, prof, true, live);
        if (prof && e == cudaSuccess)
            prof_take(k, set, 0, 3);
    }
    return e;
}

/* the bucket reduction of a set whose chunks are all in, for the P partitions: the window sums
   to stream_win (page-locked) */
template <class F>
cudaError_t stream_reduce(gpu_key *k, int set, unsigned P, cudaStream_t st)
{
    const size_t cnt = k->cnt[set];
    msm_shape full = stream_shape(set, cnt < k->chunk ? cnt : k->chunk, k->stream_c[set]);
    cudaError_t e = cudaSuccess;
    for (unsigned p = 0; p < P && e == cudaSuccess; p++) {
        msm_scratch<F> scr;
        msm_scratch_layout<F>(full, k->d_msm, &scr);
        scr.buckets = (xyzz_t<F> *)(k->d_bk[p] + k->bk_off[set]);
        msm_prof *prof = prof_of(k);
        MSM_PROF_MARK(prof, 3, st);
        e = msm_reduce<F>(full, scr, st, prof, stream_win(k, p, set));
        if (prof && e == cudaSuccess)
            prof_take(k, set, 3, 4);
    }
    return e;
}

/* the host's part once the pass is done: each partition's MSM of the set from its window sums
   (all windows zero for a set without points: the sum is infinity) */
template <class F>
void stream_combine(gpu_key *k, int set, unsigned P, groth16_ws *const *ws)
{
    const size_t cnt = k->cnt[set];
    msm_shape full = stream_shape(set, cnt ? (cnt < k->chunk ? cnt : k->chunk) : 1, k->stream_c[set]);
    for (unsigned p = 0; p < P; p++) {
        xyzz_t<F> *win = (xyzz_t<F> *)stream_win(k, p, set);
        unsigned rwin = cnt ? full.rwin : 1;
        if (!cnt)
            memset(win, 0, sizeof(xyzz_t<F>));
        if (std::is_same<F, fq>::value)
            GPU_C(msm_windows_g1)(ws[p]->msm[set], win, rwin, full.c);
        else
            GPU_C(msm_windows_g2)(ws[p]->msm[set], win, rwin, full.c);
    }
}

static double mono_ms()
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec * 1e3 + t.tv_nsec / 1e6;
}

/* the five MSMs of P partitions in one pass over a streamed key's bases (mu_msm held): w[p], h[p]
   the device scalars of partition p; the h set waits for ev_h (h is up). late_w (P = 1): the
   witness is not up yet; it goes up on the copy stream behind the pass's first chunk, and the
   first item of a witness set waits for it (ev_w), so that a first h chunk covers the copy.
   mask: the sets this pass proves (bit i: zkey set i); the others' results are left as they are
   (msm_early: the witness sets in one pass, the h set in a later one, counted as one pass) */
cudaError_t stream_all(gpu_key *k, unsigned P, uint32_t *const *w, uint32_t *const *h, groth16_ws *const *ws, int u,
                       const char **what, int late_w = 0, unsigned mask = SETS_ALL)
{
    const host_bases *hb = k->hb;
    const uint32_t *sc[ZKEY_BASES][STREAM_BATCH_MAX];
    cudaStream_t st = k->st_msm[u], cp = k->st_copy[u];
    const size_t K = k->chunk;
    size_t nitems = 0, left[ZKEY_BASES];
    const char *pe = getenv("CUZK_GPU_STREAM_PROFILE");
    const int prof = pe && *pe == '1';
    double t_set[ZKEY_BASES] = {0}, w_set[ZKEY_BASES] = {0}, t0 = mono_ms();
    uint64_t wait = 0, copied0 = k->bytes_copied;
    int h_waited = 0;
    size_t live = SIZE_MAX; /* the count of sorted entries a B2 chunk reuses (msm.cuh COMPACT) */
    cudaError_t e = cudaSuccess;
    for (int set = 0; set < ZKEY_BASES; set++) {
        for (unsigned p = 0; p < P; p++)
            sc[set][p] = !(mask >> set & 1) ? nullptr
                         : set == ZKEY_H    ? h[p]
                         : set == ZKEY_C    ? w[p] + (size_t)(k->z->n_public + 1) * 8
                                            : w[p];
        left[set] = mask >> set & 1 ? (k->cnt[set] + K - 1) / K : 0;
        nitems += left[set];
    }
    /* items of the streamed sets take ring buffers in turn: ord[j], the item's turn (-1: a set on
       the device, no copy), at[q] the item of turn q */
    stream_item *items = (stream_item *)malloc((nitems ? nitems : 1) * sizeof *items);
    long *ord = (long *)malloc((nitems ? nitems : 1) * sizeof *ord);
    size_t *at = (size_t *)malloc((nitems ? nitems : 1) * sizeof *at), nq = 0;
    if (!items || !ord || !at) {
        free(items), free(ord), free(at);
        *what = "host memory for the pass";
        return cudaErrorMemoryAllocation;
    }
    stream_order(k, items, mask);
    for (size_t j = 0; j < nitems; j++) {
        ord[j] = k->sets >> items[j].set & 1 ? (long)nq : -1;
        if (ord[j] >= 0)
            at[nq++] = j;
    }
    for (unsigned p = 0; p < P && e == cudaSuccess; p++)
        e = cudaMemsetAsync(k->d_bk[p], 0, k->bk_bytes, st);
    auto issue = [&](size_t q) -> cudaError_t {
        const size_t j = at[q];
        const int set = items[j].set;
        const size_t r = q % STREAM_RING, off = (size_t)items[j].chunk * K, pb = set_point_bytes(k->z, set);
        const size_t m = hb->cnt[set] - off < K ? hb->cnt[set] - off : K;
        cudaError_t x = cudaStreamWaitEvent(cp, k->ev_used[r], 0);
        if (x == cudaSuccess)
            x = cudaMemcpyAsync(k->d_ring[r], hb->pts[set] + off * pb, m * pb, cudaMemcpyHostToDevice, cp);
        if (x == cudaSuccess && hb->idx[set])
            x = cudaMemcpyAsync(k->d_ring_idx[r], hb->idx[set] + off, m * 4, cudaMemcpyHostToDevice, cp);
        if (x == cudaSuccess)
            x = cudaEventRecord(k->ev_copied[r], cp);
        k->bytes_copied += m * pb + (hb->idx[set] ? m * 4 : 0);
        return x;
    };
    for (size_t q = 0; q < nq && q < STREAM_RING && e == cudaSuccess; q++) {
        e = issue(q);
        if (q == 0 && late_w && e == cudaSuccess &&
            (e = upload_witness_async(k, 1, w[0], ws[0], cp)) == cudaSuccess)
            e = cudaEventRecord(k->ev_w, cp);
    }
    int w_waited = !late_w;
    /* a group is one item, or (bpair, several partitions) a B1 chunk and the B2 chunk after it,
       whose bucket work alternates by partition so that each B2 pass reuses the sort of the B1
       pass before it; with one partition a B2 item reuses the sort of the B1 item before it */
    /* items j and j + 1 are a B1 chunk and the B2 chunk of the same points */
    auto pair_at = [&](size_t j) {
        return k->bpair && items[j].set == ZKEY_B1 && j + 1 < nitems && items[j + 1].set == ZKEY_B2 &&
               items[j + 1].chunk == items[j].chunk;
    };
    /* the copy behind ev that item j of set `set` reads: the host runs at most one group ahead of
       the device, so while the copy still runs the device first finishes the group before, then
       waits for it (a wait reported through the phase hook and added up); st then waits for ev */
    auto copy_wait = [&](cudaEvent_t ev, size_t j, int set) -> cudaError_t {
        cudaError_t x = cudaSuccess;
        if (cudaEventQuery(ev) == cudaErrorNotReady && j > 0 &&
            (x = cudaEventSynchronize(k->ev_item[(j - 1) & 1])) != cudaSuccess)
            return x;
        if (cudaEventQuery(ev) == cudaErrorNotReady) {
            for (unsigned p = 0; p < P; p++)
                phase_set(ws[p], GROTH16_PHASE_COPY);
            double w0 = mono_ms();
            x = cudaEventSynchronize(ev);
            double dw = mono_ms() - w0;
            wait += (uint64_t)(dw * 1000);
            w_set[set] += dw;
            for (unsigned p = 0; p < P; p++)
                phase_set(ws[p], GROTH16_PHASE_COMPUTE);
            if (x != cudaSuccess)
                return x;
        }
        cudaGetLastError(); /* cudaEventQuery's "not ready" is not an error */
        return cudaStreamWaitEvent(st, ev, 0);
    };
    for (size_t j = 0, g; j < nitems && e == cudaSuccess; j += g) {
        g = P > 1 && pair_at(j) ? 2 : 1;
        double ta = prof ? mono_ms() : 0;
        int r[2] = {-1, -1};
        for (size_t x = 0; x < g && e == cudaSuccess; x++) {
            const int set = items[j + x].set;
            r[x] = ord[j + x] >= 0 ? (int)(ord[j + x] % STREAM_RING) : -1;
            if (r[x] >= 0 && (e = copy_wait(k->ev_copied[r[x]], j, set)) != cudaSuccess)
                break;
            if (set == ZKEY_H && !h_waited++ && (e = cudaStreamWaitEvent(st, k->ev_h, 0)) != cudaSuccess)
                break;
            if (set != ZKEY_H && !w_waited++ && (e = copy_wait(k->ev_w, j, set)) != cudaSuccess)
                break; /* the witness, a copy like the ring's */
        }
        if (e != cudaSuccess)
            break;
        const int set = items[j].set;
        const uint32_t c = items[j].chunk;
        if (g == 2) {
            for (unsigned p = 0; p < P && e == cudaSuccess; p++) {
                e = stream_chunk<fq>(k, ZKEY_B1, c, r[0], p, p + 1, sc[ZKEY_B1], 0, st, &live);
                if (e == cudaSuccess)
                    e = stream_chunk<fq2>(k, ZKEY_B2, c, r[1], p, p + 1, sc[ZKEY_B2], 1, st, &live);
            }
        } else {
            const int reuse = P == 1 && set == ZKEY_B2 && j > 0 && pair_at(j - 1);
            e = set == ZKEY_B2 ? stream_chunk<fq2>(k, set, c, r[0], 0, P, sc[set], reuse, st, &live)
                               : stream_chunk<fq>(k, set, c, r[0], 0, P, sc[set], 0, st, &live);
        }
        for (size_t x = 0; x < g && e == cudaSuccess; x++) {
            const int s = items[j + x].set;
            if (r[x] >= 0)
                e = cudaEventRecord(k->ev_used[r[x]], st);
            if (e == cudaSuccess && r[x] >= 0 && (size_t)ord[j + x] + STREAM_RING < nq)
                e = issue((size_t)ord[j + x] + STREAM_RING);
            if (e == cudaSuccess && --left[s] == 0)
                e = s == ZKEY_B2 ? stream_reduce<fq2>(k, s, P, st) : stream_reduce<fq>(k, s, P, st);
        }
        /* the group before is waited for once this group's work is queued, and its event slot
           then takes this group's (the slot of the group's last item) */
        if (e == cudaSuccess && j > 0)
            e = cudaEventSynchronize(k->ev_item[(j - 1) & 1]);
        if (e == cudaSuccess)
            e = cudaEventRecord(k->ev_item[(j + g - 1) & 1], st);
        if (prof) {
            double dt = mono_ms() - ta;
            for (size_t x = 0; x < g; x++)
                t_set[items[j + x].set] += dt / g;
        }
    }
    free(items), free(ord), free(at);
    if (e == cudaSuccess)
        e = cudaStreamSynchronize(st);
    if (e != cudaSuccess) {
        *what = "streamed MSM";
        cudaStreamSynchronize(cp); /* no copy outlives the call */
        cudaStreamSynchronize(st);
        return e;
    }
    for (int set = 0; set < ZKEY_BASES; set++) {
        if (!(mask >> set & 1))
            continue;
        if (set == ZKEY_B2)
            stream_combine<fq2>(k, set, P, ws);
        else
            stream_combine<fq>(k, set, P, ws);
    }
    if (prof) {
        double all = mono_ms() - t0, gb = (double)(k->bytes_copied - copied0) / 1e9;
        fprintf(stderr, "streamed pass of %u%s: %.1f ms, %.2f GB (%.1f GB/s), copy wait %.1f ms;", P,
                mask == SETS_ALL ? "" : mask == SETS_WITNESS ? " (witness sets)" : " (h set)", all, gb,
                gb / (all / 1e3), wait / 1e3);
        for (int set = 0; set < ZKEY_BASES; set++) {
            if (!(mask >> set & 1))
                continue;
            fprintf(stderr, " %s %.1f ms (wait %.1f, c %u%s)", zkey_set_names[set], t_set[set], w_set[set],
                    k->stream_c[set], k->sets >> set & 1 ? "" : ", on the device");
            prof_say(k, set);
        }
        fprintf(stderr, "\n");
    }
    if (mask >> ZKEY_H & 1)
        k->passes++;
    k->copy_wait_us += wait;
    ws[0]->copy_wait_us += wait;
    for (unsigned p = 0; p < P; p++)
        ws[p]->batch = P;
    return cudaSuccess;
}

/* one set of a small key's concurrent MSMs, on its own host thread, stream and scratch */
struct par_set {
    gpu_key *k;
    int device, set;
    const uint32_t *scalars;
    uint64_t *out;
    cudaStream_t st;
    cudaEvent_t wait; /* recorded work the set waits for first (H: h is up), or null */
    cudaError_t err;
    pthread_t th;
    int started;
};

void *par_set_main(void *arg)
{
    par_set *q = (par_set *)arg;
    q->err = cudaSetDevice(q->device); /* the current device is per host thread */
    if (q->err == cudaSuccess && q->wait)
        q->err = cudaStreamWaitEvent(q->st, q->wait, 0);
    if (q->err == cudaSuccess)
        q->err = q->set == ZKEY_B2
                     ? run_set<fq2>(q->k, q->set, q->scalars, q->out, 0, q->st, q->k->d_msm_set[q->set])
                     : run_set<fq>(q->k, q->set, q->scalars, q->out, 0, q->st, q->k->d_msm_set[q->set]);
    return nullptr;
}

/* A small key's five MSMs at once: each is a few dependent chains that leave the device nearly
 * empty, so side by side they take about as long as the longest (G2) alone. Each sorts its own
 * digits (cheap at this size) instead of sharing A's sort. */
cudaError_t msm_sets_parallel(gpu_key *k, int device, groth16_ws *ws, const uint32_t *w, int u, const char **what)
{
    const uint32_t *sc[ZKEY_BASES];
    sc[ZKEY_A] = sc[ZKEY_B1] = sc[ZKEY_B2] = w;
    sc[ZKEY_C] = w + (size_t)(k->z->n_public + 1) * 8;
    sc[ZKEY_H] = k->d_msm_h;
    par_set q[ZKEY_BASES];
    cudaError_t e = cudaSuccess;
    for (int i = 0; i < ZKEY_BASES; i++) {
        q[i] = par_set{k, device, i, sc[i], ws->msm[i], k->st_set[u][i], i == ZKEY_H ? k->ev_h : nullptr,
                       cudaSuccess, pthread_t(), 0};
        /* the witness scalars were copied on st_msm: every set's stream waits for that */
        if (e == cudaSuccess)
            e = cudaStreamWaitEvent(q[i].st, k->ev_w, 0);
    }
    for (int i = 0; i < ZKEY_BASES && e == cudaSuccess; i++)
        q[i].started = pthread_create(&q[i].th, nullptr, par_set_main, &q[i]) == 0;
    for (int i = 0; i < ZKEY_BASES; i++) {
        if (q[i].started)
            pthread_join(q[i].th, nullptr);
        else if (e == cudaSuccess) /* no thread: run it here */
            par_set_main(&q[i]);
        if (e == cudaSuccess && q[i].err != cudaSuccess)
            e = q[i].err;
    }
    for (int i = 0; i < ZKEY_BASES; i++) /* nothing of a failed call outlives it */
        cudaStreamSynchronize(q[i].st);
    if (e != cudaSuccess)
        *what = "concurrent MSM sets";
    return e;
}

/* dst <- src, device to device on st, out of a buffer of the NTT steps (mu_ntt held); the NTT
 * streams of both priorities (whichever the next NTT work runs on) wait for it through ev */
cudaError_t copy_from_ntt(gpu_key *k, void *dst, const void *src, size_t bytes, cudaStream_t st, cudaEvent_t ev)
{
    cudaError_t e = cudaMemcpyAsync(dst, src, bytes, cudaMemcpyDeviceToDevice, st);
    if (e == cudaSuccess)
        e = cudaEventRecord(ev, st);
    for (int i = 0; i < 2 && e == cudaSuccess; i++)
        e = cudaStreamWaitEvent(k->st_ntt[i], ev, 0);
    return e;
}

/* msm_all of a LEAN key (mu_msm held; takes mu_ntt for the whole call): the scalars are read
 * where compute_h and the witness upload leave them (d_abc, d_w), so nothing else may run.
 * mask: the sets to prove (the h set alone after msm_early's pass) */
cuzk_err msm_all_lean(cuzk_backend *be, gpu_key *k, groth16_ws *ws, int u, char *err, unsigned mask)
{
    gpu_impl *im = (gpu_impl *)be->impl;
    cudaError_t cu_err = cudaSuccess;
    const char *cu_what = "";
    pthread_mutex_lock(&k->mu_ntt);
    int w_dev = ws->w_token && ws->w_token == k->w_token, h_dev = ws->h_token && ws->h_token == k->h_token;
    uint32_t *w = k->d_msm_w, *h = k->d_msm_h;
    if (!h_dev && (ws->host_missing & GROTH16_HOST_H)) {
        /* h was left on the device alone and is gone: compute it again, now with its host copy */
        int keep = ws->keep_on_device;
        ws->keep_on_device = 0;
        cuzk_err e = compute_h_impl(be, k, ws, err, 1);
        ws->keep_on_device = keep;
        if (e) {
            pthread_mutex_unlock(&k->mu_ntt);
            return e;
        }
        h_dev = 1;
        w_dev = ws->w_token && ws->w_token == k->w_token; /* the h step may have uploaded it */
    }
    /* the witness goes up during the pass's first h chunk where the pass starts with one that
       streams (stream_all's late_w), else before the pass */
    int late_w = 0;
    if (!w_dev && (mask & SETS_WITNESS)) {
        k->w_token = 0; /* d_w is rewritten */
        late_w = !env_off("CUZK_GPU_LATE_W") && stream_first_set(k) == ZKEY_H && (k->sets >> ZKEY_H & 1);
        if (!late_w) {
            phase_set(ws, GROTH16_PHASE_COPY);
            CUDA_TRY(upload_witness(k, 1, k->d_msm_w, ws, k->st_msm[u]));
            phase_set(ws, GROTH16_PHASE_COMPUTE);
        }
    }
    if (!h_dev) { /* h goes up on the copy stream while the witness MSMs run */
        k->abc_token = k->h_token = 0;
        CUDA_TRY(cudaMemcpyAsync(k->d_msm_h, ws->a, k->n * 32, cudaMemcpyHostToDevice, k->st_copy[u]));
    }
    CUDA_TRY(cudaEventRecord(k->ev_h, h_dev ? k->st_msm[u] : k->st_copy[u]));
    lean_arena_take(k);
    if ((cu_err = stream_all(k, 1, &w, &h, &ws, u, &cu_what, late_w, mask)) != cudaSuccess)
        goto fail;
    pthread_mutex_unlock(&k->mu_ntt);
    return CUZK_OK;
fail:
    cudaStreamSynchronize(k->st_copy[u]);
    cudaStreamSynchronize(k->st_msm[u]);
    pthread_mutex_unlock(&k->mu_ntt);
    return cuzk_errf(err, gpu_err_code(cu_err), "gpu %d: msm: %s failed: %s",
                     im->device, cu_what, cudaGetErrorString(cu_err));
}

/* PREFETCH: a free witness buffer of k, waited for (-1: the key has none, or the workspace is
   urgent or not page-locked: its witness goes up under mu_msm as before). Every holder of a buffer
   either runs its MSMs or waits for mu_msm, whose holder needs no buffer to finish, so the wait
   ends; urgent workspaces keep the path without one, so they never queue behind two others. */
int wpre_acquire(gpu_key *k, const groth16_ws *ws, int wait)
{
    if (!k->wpre_ok || ws->urgent || !ws->pinned)
        return -1;
    pthread_mutex_lock(&k->mu_wpre);
    int slot;
    for (;;) {
        for (slot = 0; slot < WPRE && k->wpre_busy[slot]; slot++)
            ;
        if (slot < WPRE)
            break;
        if (!wait) {
            pthread_mutex_unlock(&k->mu_wpre);
            return -1;
        }
        pthread_cond_wait(&k->cv_wpre, &k->mu_wpre);
    }
    k->wpre_busy[slot] = 1;
    pthread_mutex_unlock(&k->mu_wpre);
    return slot;
}

void wpre_release(gpu_key *k, int slot)
{
    if (slot < 0 || !k->wpre_ok)
        return;
    pthread_mutex_lock(&k->mu_wpre);
    k->wpre_busy[slot] = 0;
    pthread_cond_signal(&k->cv_wpre);
    pthread_mutex_unlock(&k->mu_wpre);
}

cuzk_err gpu_msm_all_locked(cuzk_backend *be, gpu_key *k, groth16_ws *ws, int slot, char *err,
                            unsigned mask = SETS_ALL);

/* gives back the witness buffer msm_prefetch filled for ws, if any */
void wpre_drop(gpu_key *k, groth16_ws *ws)
{
    if (ws->pre_slot) {
        wpre_release(k, ws->pre_slot - 1);
        ws->pre_slot = 0;
    }
}

/* msm_prefetch (PREFETCH): the witness goes up into a free witness buffer of the key, outside
   mu_msm and outside the caller's own device locks, so that it crosses the bus while another
   workspace's MSMs run; a workspace without a buffer (wpre_acquire) is left to msm_all. On
   failure the buffer goes back at once: nothing is held. release: 1 gives back a held buffer,
   0 (the hook) may wait for a free one, -1 (msm_all's own call) takes one only if free. */
cuzk_err gpu_msm_prefetch(cuzk_backend *be, void *ks, groth16_ws *ws, int release, char *err)
{
    gpu_impl *im = (gpu_impl *)be->impl;
    gpu_key *k = (gpu_key *)ks;
    if (release > 0) {
        wpre_drop(k, ws);
        return CUZK_OK;
    }
    if (ws->pre_slot)
        return CUZK_OK;
    /* the hook may wait for a buffer (the caller holds none of its device locks); msm_all's own
       call does not (its caller may hold one: with no buffer free, the upload goes under mu_msm) */
    int slot = wpre_acquire(k, ws, release == 0);
    if (slot < 0)
        return CUZK_OK;
    cudaError_t e = cudaSetDevice(im->device);
    phase_set(ws, GROTH16_PHASE_COPY);
    if (e == cudaSuccess)
        e = cudaMemcpyAsync(k->d_wpre[slot], ws->wtns, k->n_vars * 32, cudaMemcpyHostToDevice, k->st_wpre[slot]);
    if (e == cudaSuccess)
        e = cudaStreamSynchronize(k->st_wpre[slot]);
    phase_set(ws, GROTH16_PHASE_COMPUTE);
    if (e != cudaSuccess) {
        cudaStreamSynchronize(k->st_wpre[slot]);
        wpre_release(k, slot);
        return cuzk_errf(err, gpu_err_code(e), "gpu %d: msm: witness upload failed: %s", im->device,
                         cudaGetErrorString(e));
    }
    ws->pre_slot = slot + 1;
    return CUZK_OK;
}

/* EARLY (msm_early): a streamed key whose a/b/c the CPU evaluates leaves the device idle for
 * that step, and the MSMs of the witness sets (A, B1, B2, C) need nothing from it. So for one
 * proof whose steps run in turn (groth16_prove) their pass runs on a thread of its own from
 * before eval_abc: it takes mu_msm (and a lean key's mu_ntt, its arena being the pass's) before
 * msm_early returns, so the h step queues behind it, and msm_all runs the h set's pass after it.
 * At 2^26 under 16 GiB the witness sets' pass (bus-bound, ~31 GB) then runs beside the CPU's
 * a/b/c instead of after the h step. CUZK_GPU_EARLY=0 keeps the one pass after the h step. */
struct early_run {
    cuzk_backend *be;
    gpu_key *k;
    groth16_ws *ws;
    pthread_t th;
    pthread_mutex_t mu;
    pthread_cond_t cv;
    int held; /* the thread holds the key's locks */
    cudaError_t e;
    const char *what;
};

void *early_main(void *arg)
{
    early_run *r = (early_run *)arg;
    gpu_key *k = r->k;
    const int u = r->ws->urgent != 0;
    pthread_mutex_lock(&k->mu_msm);
    if (k->lean)
        pthread_mutex_lock(&k->mu_ntt);
    pthread_mutex_lock(&r->mu);
    r->held = 1;
    pthread_cond_signal(&r->cv);
    pthread_mutex_unlock(&r->mu);
    uint32_t *w = k->d_msm_w, *h = k->d_msm_h;
    r->what = "witness upload";
    r->e = cudaSetDevice(((gpu_impl *)r->be->impl)->device);
    if (r->e == cudaSuccess) {
        k->w_token = 0; /* a lean key's d_w is rewritten */
        r->e = upload_witness(k, 1, w, r->ws, k->st_msm[u]);
    }
    if (r->e == cudaSuccess) {
        if (k->lean)
            lean_arena_take(k);
        r->e = stream_all(k, 1, &w, &h, &r->ws, u, &r->what, 0, SETS_WITNESS);
    }
    if (k->lean)
        pthread_mutex_unlock(&k->mu_ntt);
    pthread_mutex_unlock(&k->mu_msm);
    return nullptr;
}

/* waits for ws's early pass and frees it: its failure as msm_all's */
cuzk_err early_join(cuzk_backend *be, groth16_ws *ws, char *err)
{
    early_run *r = (early_run *)ws->early;
    ws->early = nullptr;
    pthread_join(r->th, nullptr);
    cudaError_t e = r->e;
    const char *what = r->what;
    pthread_cond_destroy(&r->cv);
    pthread_mutex_destroy(&r->mu);
    free(r);
    if (e != cudaSuccess)
        return cuzk_errf(err, gpu_err_code(e), "gpu %d: msm: %s failed: %s", ((gpu_impl *)be->impl)->device,
                         what, cudaGetErrorString(e));
    return CUZK_OK;
}

cuzk_err gpu_msm_early(cuzk_backend *be, void *ks, groth16_ws *ws, int release, char *err)
{
    gpu_key *k = (gpu_key *)ks;
    if (release)
        return ws->early ? early_join(be, ws, err) : CUZK_OK;
    if (ws->early || !k->place.streamed || !k->abc_host || env_off("CUZK_GPU_EARLY"))
        return CUZK_OK;
    early_run *r = (early_run *)calloc(1, sizeof *r);
    if (!r)
        return CUZK_OK; /* the witness sets stay in msm_all's pass */
    r->be = be, r->k = k, r->ws = ws;
    pthread_mutex_init(&r->mu, nullptr);
    pthread_cond_init(&r->cv, nullptr);
    if (pthread_create(&r->th, nullptr, early_main, r)) {
        pthread_cond_destroy(&r->cv);
        pthread_mutex_destroy(&r->mu);
        free(r);
        return CUZK_OK;
    }
    pthread_mutex_lock(&r->mu);
    while (!r->held)
        pthread_cond_wait(&r->cv, &r->mu);
    pthread_mutex_unlock(&r->mu);
    ws->early = r;
    return CUZK_OK;
}

/* gives back what a workspace may hold before its MSMs: a prefetched witness buffer, and its
   early pass (waited for); the early pass's failure is returned */
cuzk_err ws_unhold(cuzk_backend *be, void *ks, groth16_ws *ws, char *err)
{
    wpre_drop((gpu_key *)ks, ws);
    return gpu_msm_early(be, ks, ws, 1, err);
}

/* msm_all: the witness buffer a prefetch filled, or one filled now (the daemon prefetches before
   it takes its MSM lock; a caller that does not still gets the upload outside mu_msm); given back
   when the MSMs end, whatever their result */
cuzk_err gpu_msm_all(cuzk_backend *be, void *ks, groth16_ws *ws, char *err)
{
    gpu_key *k = (gpu_key *)ks;
    if (ws->early) { /* the witness sets' pass of msm_early: the h set's pass remains */
        cuzk_err rc = early_join(be, ws, err);
        if (rc)
            return rc;
        wpre_drop(k, ws);
        return gpu_msm_all_locked(be, k, ws, -1, err, 1u << ZKEY_H);
    }
    cuzk_err rc = gpu_msm_prefetch(be, ks, ws, -1, err);
    if (rc)
        return rc; /* nothing held: a failed prefetch gives its buffer back */
    int slot = ws->pre_slot - 1;
    ws->pre_slot = 0;
    rc = gpu_msm_all_locked(be, k, ws, slot, err);
    wpre_release(k, slot);
    return rc;
}

/* msm_all under mu_msm; slot >= 0: the witness scalars are in k->d_wpre[slot] already. mask
   (a streamed key): the sets to prove */
cuzk_err gpu_msm_all_locked(cuzk_backend *be, gpu_key *k, groth16_ws *ws, int slot, char *err, unsigned mask)
{
    gpu_impl *im = (gpu_impl *)be->impl;
    cudaError_t cu_err = cudaSuccess;
    const char *cu_what = "";
    const zkey_file *z = k->z;
    int h_on_device = 0, w_on_device = slot >= 0, u = ws->urgent != 0;
    uint32_t *w = slot >= 0 ? k->d_wpre[slot] : k->d_msm_w;
    pthread_mutex_lock(&k->mu_msm);
    CUDA_TRY(cudaSetDevice(im->device));
    if (k->lean) {
        cuzk_err e = msm_all_lean(be, k, ws, u, err, mask);
        pthread_mutex_unlock(&k->mu_msm);
        return e;
    }
    /* The witness and h: device to device when d_w still holds this workspace's witness from
       its eval_abc and d_abc its h from its compute_h. The NTT lock (which guards both) is only
       tried, so msm_all never waits for another workspace's NTT step, unless the host copy of h
       was never made (keep_on_device). Later NTT work, which rewrites d_w and d_abc, is ordered
       after the copies through ev_wcopy and ev_h. */
    if ((ws->w_token || ws->h_token) && (ws->keep_on_device ? pthread_mutex_lock(&k->mu_ntt) == 0
                                                            : pthread_mutex_trylock(&k->mu_ntt) == 0)) {
        if (!w_on_device && ws->w_token && ws->w_token == k->w_token)
            w_on_device = (cu_err = copy_from_ntt(k, k->d_msm_w, k->d_w, k->n_vars * 32, k->st_msm[u],
                                                  k->ev_wcopy)) == cudaSuccess;
        if (cu_err == cudaSuccess && ws->h_token && ws->h_token == k->h_token)
            h_on_device = (cu_err = copy_from_ntt(k, k->d_msm_h, k->d_abc, k->n * 32, k->st_copy[u], k->ev_h)) ==
                          cudaSuccess;
        pthread_mutex_unlock(&k->mu_ntt);
        if (cu_err != cudaSuccess) {
            cu_what = "device copy of the witness or h";
            goto fail;
        }
    }
    if (!w_on_device && (mask & SETS_WITNESS)) {
        phase_set(ws, GROTH16_PHASE_COPY);
        CUDA_TRY(upload_witness(k, 1, k->d_msm_w, ws, k->st_msm[u]));
        phase_set(ws, GROTH16_PHASE_COMPUTE);
    }
    if (!h_on_device && (ws->host_missing & GROTH16_HOST_H)) {
        /* h was kept on the device alone and another workspace's NTT step has since reused the
           buffers: compute it again, this time with its host copy (mu_ntt after mu_msm, the
           order every path that holds both takes) */
        int keep = ws->keep_on_device;
        ws->keep_on_device = 0;
        cuzk_err e = gpu_compute_h(be, k, ws, err);
        ws->keep_on_device = keep;
        if (e) {
            cudaStreamSynchronize(k->st_msm[u]);
            pthread_mutex_unlock(&k->mu_msm);
            return e;
        }
    }
    if (!h_on_device) {
        /* h goes up on the copy stream while the witness MSMs run */
        CUDA_TRY(cudaMemcpyAsync(k->d_msm_h, ws->a, k->n * 32, cudaMemcpyHostToDevice, k->st_copy[u]));
        CUDA_TRY(cudaEventRecord(k->ev_h, k->st_copy[u]));
    }
    if (k->place.streamed) {
        uint32_t *h = k->d_msm_h;
        if ((cu_err = stream_all(k, 1, &w, &h, &ws, u, &cu_what, 0, mask)) != cudaSuccess)
            goto fail;
        pthread_mutex_unlock(&k->mu_msm);
        return CUZK_OK;
    }
    if (k->par_sets) {
        CUDA_TRY(cudaEventRecord(k->ev_w, k->st_msm[u]));
        if ((cu_err = msm_sets_parallel(k, im->device, ws, w, u, &cu_what)) != cudaSuccess)
            goto fail;
        pthread_mutex_unlock(&k->mu_msm);
        return CUZK_OK;
    }
    {
        /* A, B1, B2 share the witness scalars: one digit recoding and sort for the three (the
           sorted entries sit at the same offsets in every shape's scratch) */
        int wide = 0;
        CUDA_TRY(wide_for(k, w, k->st_msm[u], &wide));
        const char *pe = getenv("CUZK_GPU_MSM_PROFILE");
        const int prof = pe && *pe == '1';
        msm_prof *pp = prof ? prof_of(k) : nullptr;
        double t[ZKEY_BASES + 1];
        t[0] = prof ? mono_ms() : 0;
        size_t live = SIZE_MAX; /* the count of sorted entries B1 and B2 reuse (msm.cuh COMPACT) */
        CUDA_TRY(run_set<fq>(k, ZKEY_A, w, ws->msm[ZKEY_A], 0, k->st_msm[u], k->d_msm, wide, pp, &live));
        t[1] = prof ? mono_ms() : 0;
        CUDA_TRY(run_set<fq>(k, ZKEY_B1, w, ws->msm[ZKEY_B1], 1, k->st_msm[u], k->d_msm, wide, pp, &live));
        t[2] = prof ? mono_ms() : 0;
        CUDA_TRY(run_set<fq2>(k, ZKEY_B2, w, ws->msm[ZKEY_B2], 1, k->st_msm[u], k->d_msm, wide, pp, &live));
        t[3] = prof ? mono_ms() : 0;
        CUDA_TRY(run_set<fq>(k, ZKEY_C, w + (size_t)(z->n_public + 1) * 8, ws->msm[ZKEY_C], 0, k->st_msm[u],
                             k->d_msm, wide, pp));
        t[4] = prof ? mono_ms() : 0;
        CUDA_TRY(cudaStreamWaitEvent(k->st_msm[u], k->ev_h, 0));
        CUDA_TRY(run_set<fq>(k, ZKEY_H, k->d_msm_h, ws->msm[ZKEY_H], 0, k->st_msm[u], k->d_msm, 0, pp));
        t[5] = prof ? mono_ms() : 0;
        if (prof) {
            fprintf(stderr, "msm sets (%s shapes): %.1f ms;", wide ? "wide" : "witness", t[5] - t[0]);
            for (int i = 0; i < ZKEY_BASES; i++) {
                msm_shape s = set_shape(z, i, k->tab_h, wide);
                fprintf(stderr, " %s %.1f ms (c %u, chunk %u%s)", zkey_set_names[i], t[i + 1] - t[i], s.c, s.chunk0,
                        s.tab ? ", table" : "");
                prof_say(k, i);
            }
            fprintf(stderr, "\n");
        }
    }
    pthread_mutex_unlock(&k->mu_msm);
    return CUZK_OK;
fail:
    cudaStreamSynchronize(k->st_copy[u]);
    cudaStreamSynchronize(k->st_msm[u]);
    pthread_mutex_unlock(&k->mu_msm);
    return cuzk_errf(err, gpu_err_code(cu_err), "gpu %d: msm: %s failed: %s", im->device, cu_what,
                     cudaGetErrorString(cu_err));
}

/* msm_all for n workspaces of one key: a streamed key proves up to k->batch of them in each pass
 * over its bases, their witnesses and h copied up from the host buffers (h must be there: the
 * daemon's h step writes it); a resident key, or a single workspace, goes through msm_all. Every
 * workspace's prefetch is consumed, also those that a failure leaves unproved. */
cuzk_err gpu_msm_batch(cuzk_backend *be, void *ks, groth16_ws **ws, int n, char *err)
{
    gpu_impl *im = (gpu_impl *)be->impl;
    gpu_key *k = (gpu_key *)ks;
    cudaError_t cu_err = cudaSuccess;
    const char *cu_what = "";
    int u = 0;
    if (!k->place.streamed || n == 1) {
        for (int i = 0; i < n; i++) {
            cuzk_err e = gpu_msm_all(be, ks, ws[i], err);
            if (e) {
                char scratch[CUZK_ERRLEN];
                while (++i < n)
                    ws_unhold(be, ks, ws[i], scratch);
                return e;
            }
        }
        return CUZK_OK;
    }
    /* only keys whose five MSMs run at once have witness buffers, never a streamed one, so no
       prefetch holds one here; given back all the same, so that no path leaves one held. A
       workspace's early pass (msm_early), which no caller of msm_batch starts, is waited for:
       the batch's pass proves its five sets again */
    cuzk_err early_e = CUZK_OK;
    for (int i = 0; i < n; i++) {
        char scratch[CUZK_ERRLEN];
        cuzk_err x = ws_unhold(be, ks, ws[i], early_e ? scratch : err);
        early_e = early_e ? early_e : x;
    }
    if (early_e)
        return early_e;
    for (int i = 0; i < n; i++) {
        u |= ws[i]->urgent != 0;
        if (ws[i]->host_missing & GROTH16_HOST_H)
            return cuzk_errf(err, CUZK_EINTERNAL, "gpu %d: msm_batch: h of a partition is not in host memory",
                             im->device);
    }
    pthread_mutex_lock(&k->mu_msm);
    if (k->lean) { /* slot 0's scalars are d_w and d_abc themselves */
        pthread_mutex_lock(&k->mu_ntt);
        k->w_token = k->abc_token = k->h_token = 0;
        lean_arena_take(k);
    }
    CUDA_TRY(cudaSetDevice(im->device));
    for (int at = 0; at < n; at += (int)k->batch) {
        unsigned P = n - at < (int)k->batch ? (unsigned)(n - at) : k->batch;
        groth16_ws **g = ws + at;
        phase_set(g[0], GROTH16_PHASE_COPY);
        for (unsigned p = 0; p < P; p++) {
            CUDA_TRY(cudaMemcpyAsync(k->d_bw[p], g[p]->wtns, k->n_vars * 32, cudaMemcpyHostToDevice, k->st_msm[u]));
            CUDA_TRY(cudaMemcpyAsync(k->d_bh[p], g[p]->a, k->n * 32, cudaMemcpyHostToDevice, k->st_msm[u]));
        }
        CUDA_TRY(cudaStreamSynchronize(k->st_msm[u]));
        phase_set(g[0], GROTH16_PHASE_COMPUTE);
        CUDA_TRY(cudaEventRecord(k->ev_h, k->st_msm[u]));
        if ((cu_err = stream_all(k, P, k->d_bw, k->d_bh, g, u, &cu_what)) != cudaSuccess)
            goto fail;
    }
    if (k->lean)
        pthread_mutex_unlock(&k->mu_ntt);
    pthread_mutex_unlock(&k->mu_msm);
    return CUZK_OK;
fail:
    cudaStreamSynchronize(k->st_copy[u]);
    cudaStreamSynchronize(k->st_msm[u]);
    if (k->lean)
        pthread_mutex_unlock(&k->mu_ntt);
    pthread_mutex_unlock(&k->mu_msm);
    return cuzk_errf(err, gpu_err_code(cu_err),
                     "gpu %d: msm batch: %s failed: %s", im->device, cu_what, cudaGetErrorString(cu_err));
}

void gpu_key_info(cuzk_backend *be, void *ks, groth16_key_info *out)
{
    (void)be;
    const gpu_key *k = (const gpu_key *)ks;
    memset(out, 0, sizeof *out);
    out->placement = k->place.streamed ? "streamed" : "resident";
    snprintf(out->why, sizeof out->why, "%s", k->place.why);
    out->device_bytes = k->dev_bytes;
    out->resident_bytes = k->place.resident;
    out->table = k->tab_h;
    out->abc_on_host = k->abc_host;
    out->serial_steps = k->lean && !k->abc_host;
    out->batch_max = k->place.streamed ? k->batch : 1;
    if (k->place.streamed)
        out->chunk_points = k->chunk;
    if (k->hb) { /* none when the plan keeps every set on the device (chunked all the same) */
        out->host_bytes = k->hb->bytes;
        out->sets_streamed = k->sets;
        for (int i = 0; i < ZKEY_BASES; i++)
            if (k->sets >> i & 1) {
                out->stream_bytes += k->hb->cnt[i] * set_point_bytes(k->z, i) + (k->hb->idx[i] ? k->hb->cnt[i] * 4 : 0);
                out->points_skipped += set_points(k->z, i) - k->hb->cnt[i];
            }
    }
    out->passes = __atomic_load_n(&k->passes, __ATOMIC_RELAXED);
    out->bytes_copied = __atomic_load_n(&k->bytes_copied, __ATOMIC_RELAXED);
    out->copy_wait_us = __atomic_load_n(&k->copy_wait_us, __ATOMIC_RELAXED);
}

void gpu_destroy(cuzk_backend *be)
{
    if (!be)
        return;
    free(be->impl);
    free(be);
}

} /* namespace GPU_SYM(gpu) */

using namespace GPU_SYM(gpu);

extern "C" cuzk_backend *GPU_SYM(gpu_backend_create)(int device, char *err)
{
    int count = 0;
    cudaError_t e = cudaGetDeviceCount(&count);
    if (e != cudaSuccess || count == 0) {
        cuzk_errf(err, CUZK_ENODEV, "no CUDA device found (%s)",
                  e != cudaSuccess ? cudaGetErrorString(e) : "device count is 0");
        return nullptr;
    }
    if (device < 0 || device >= count) {
        cuzk_errf(err, CUZK_ENODEV, "no CUDA device %d (this machine has %d)", device, count);
        return nullptr;
    }
    if ((e = cudaSetDevice(device)) != cudaSuccess) {
        cuzk_errf(err, CUZK_EDEVICE, "gpu %d: cudaSetDevice: %s", device, cudaGetErrorString(e));
        return nullptr;
    }
    cuzk_backend *be = (cuzk_backend *)calloc(1, sizeof *be);
    gpu_impl *im = (gpu_impl *)calloc(1, sizeof *im);
    if (!be || !im) {
        free(be);
        free(im);
        cuzk_errf(err, CUZK_ENOMEM, "gpu: out of host memory");
        return nullptr;
    }
    im->device = device;
    be->name = "gpu";
    be->curve = GPU_CURVE_ID;
    be->device = device;
    be->impl = im;
    be->key_isolated = 1; /* per-key locks, buffers and streams (struct gpu_key) */
    be->key_attach = gpu_key_attach;
    be->key_detach = gpu_key_detach;
    be->eval_abc = gpu_eval_abc;
    be->compute_h = gpu_compute_h;
    be->msm_all = gpu_msm_all;
    be->msm_batch = gpu_msm_batch;
    be->msm_prefetch = gpu_msm_prefetch;
    be->msm_early = gpu_msm_early;
    be->key_info = gpu_key_info;
    be->destroy = gpu_destroy;
    return be;
}
