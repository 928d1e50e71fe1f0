/* msm.cuh - Pippenger multi-scalar multiplication on the GPU (G1 and G2), bases resident.
 *
 * DESIGN. Variable time: scalars are the witness and h, bases are public, so timing
 * reveals nothing the proof does not. With window c and W = ceil((bits+1)/c) windows:
 *  1. digits: each scalar is recoded into W signed digits in [-2^(c-1), 2^(c-1)]; entry
 *     (window w, scalar i) gets key (w << c) | |digit| and value i | sign << 31. Digit 0
 *     (all digits of a zero scalar) is bucket 0, which is never added.
 *  2. sort: CUB radix sort of each window's (key, value) pairs on the c bucket bits (the
 *     entries are window-major), so each bucket's points are contiguous however skewed the
 *     scalars are (a witness full of ones puts n points in one bucket). Up to
 *     MSM_SORT_ALL_MAX entries all windows go through one sort on the window and bucket bits
 *     instead (same order: the sort is stable), which saves a sort's launches per window
 *     where each sort has little to do.
 *  3. accumulate: every thread adds s.chunk0 consecutive sorted entries (mixed XYZZ
 *     additions of affine bases), so the work per thread is bounded. A run of one key
 *     that lies wholly inside a chunk is a finished bucket and is stored; a run cut by a
 *     chunk border becomes a partial sum; the sorted list of partials is summed the same
 *     way, level after level, until none is left (each level divides by MSM_PCHUNK / 2; the
 *     counts stay on the device, see PARTIAL LEVELS in msm_pass).
 *     Small MSMs, whose time is the length of these dependent chains and not the device's
 *     throughput, take shorter chunks (MSM_CHUNK_SMALL) and fewer buckets per reduction
 *     thread (MSM_GROUP_BUCKETS_SMALL).
 *     Scalar-one points are therefore summed by plain balanced batched addition.
 *  4. buckets -> windows: window w's sum_b b * B_b is split over G groups of per = 2^(c-1)/G
 *     buckets, one thread each, which runs over its range [lo, lo + per) from the top and
 *     keeps A_g = sum (b - lo + 1) B_b and S_g = sum B_b (two additions per bucket). Then
 *     sum_b b B_b = sum_g A_g + per * sum_g g S_g: the A_g are added pairwise, and the S_g are
 *     buckets 1..G-1 of a second, smaller reduction of the same form (s.c2 bits, s.groups2
 *     threads, each adding its offset (lo - 1) times its range sum by double-and-add, which
 *     at this size costs little); one thread per window adds per * that (log2(per)
 *     doublings) to sum_g A_g. The host (or a last thread) combines windows by Horner
 *     (c doublings each).
 *
 * TABLE. With the bases of a set resident for many proofs, the shifted copies
 * T[w][i] = 2^(w c) P_i (w < W, affine) can be built once (msm_table_build: c doublings and a
 * batched inversion per copy). Then sum_i k_i P_i = sum_(w,i) d_(w,i) T[w][i] is one window
 * of W n entries: the digits go to one set of 2^(c-1) buckets (key = |digit|, value = the
 * table index w n + i), one sort orders them all, and the bucket reduction runs once instead
 * of W times. That makes larger windows pay (fewer level-0 additions for one larger
 * reduction), at the price of W n affine points of device memory (2^24 BN254 G1 bases at
 * c = 22: 12 copies, 12.9 GB). s.tab selects it; s.rwin is the number of windows reduced.
 *
 * COMPACT (s.compact: witness scalars, no table). A witness is mostly 0 and 1, so most of its
 * n * W entries have digit 0 and are only sorted to be skipped. Each scalar has a class: zero (no
 * entry), small (at most 2^(c-1): one entry, in window 0) or full (W entries). A scan of the
 * classes gives every scalar its place; window 0's entries come first (one per nonzero scalar),
 * then W - 1 regions of one entry per full scalar, so the entries are window-major as before and
 * each region sorts alone (or all at once under MSM_SORT_ALL_MAX). The sort and level 0 then run
 * over n_nonzero + (W - 1) n_full entries: about 1.7 n for a witness with 46 % zeros, 46 % ones
 * and 8 % full values, against 16 n. The count comes back to the host once per call (the sort's
 * length), which costs the host its lead over the device for one kernel. A full scalar's zero
 * digits stay as entries of bucket 0, which is never added. CUZK_GPU_MSM_COMPACT=0 turns it off.
 *
 * AFFINE ROUNDS (s.aff). Level 0 may first add its chunk in affine coordinates, where an
 * addition with a shared inversion costs 6 products instead of the mixed XYZZ addition's 10:
 * in round r the slots i and i + 2^r (i a multiple of 2^(r+1)) of a chunk are added when both
 * are live points of one bucket with distinct x (Montgomery's trick over the round's
 * differences, one ec_inv_vt per thread and round), the sum replaces slot i and slot i + 2^r
 * dies. A slot is a table entry until it holds a sum, which lives in the thread's scratch.
 * After s.aff rounds the usual pass adds the live slots of each run in XYZZ, so the buckets
 * and partials are those of the plain kernel. Pairs with equal x (doubling or a point and its
 * negation) and infinities are left to that pass. The threads are persistent, as many as
 * s.aff_threads, each with scratch for one chunk (slots interleaved across threads so that a
 * warp's accesses coalesce), taking chunks from a counter.
 * Measured on the H200 (dev/cuda/NOTES.md, study 8): slower than the plain kernel. BN254 G1
 * 2^24 over a table, level 0: 54.9 ms plain, 78.1 ms with 4 rounds over chunks of 512 (the
 * best variant), 60.4 ms for the kernel's frame with no rounds. An affine addition with its
 * scratch traffic, its share of an inversion and the kernel's occupancy costs about 1.35 times
 * a mixed XYZZ addition, not the 0.7 times its product count says. So MSM_AFFINE is 0.
 */
#pragma once
#if !defined(FF_HOST_EMU) || defined(CUDA_EMU_RT)
#include <cub/cub.cuh>
#include <thrust/iterator/counting_iterator.h>
#endif
#include <stdlib.h>
#include <string.h>
#include <type_traits>

#include "gpu/ec.cuh"

#define MSM_CHUNK 32    /* sorted entries per accumulating thread, level 0 */
#define MSM_CHUNK_SMALL 8 /* the same for at most MSM_SMALL_ENTRIES entries */
#define MSM_SMALL_ENTRIES ((size_t)1 << 21)
/* the same from MSM_LARGE_POINTS random scalars: fewer partials (2^24: G1 3 %, G2 10 % faster
   than 32). Not below, nor for a witness: mostly zeros and ones leave few nonzero digits, and
   long chunks of them leave too few threads (BN254 2^20 proof: MSMs 28 -> 35 ms) */
#define MSM_CHUNK_LARGE 128
/* the same for G2: an Fp2 partial is twice a G1 one to write and to add again later (BN254 G2
   2^24 over a table: chunk 128 234.5 ms, 256 225.0, 512 223.0; G1 65.2 / 65.0 / 66.0) */
#define MSM_CHUNK_LARGE_G2 512
#define MSM_LARGE_POINTS ((size_t)1 << 24)
#define MSM_PCHUNK 8    /* partials per accumulating thread, later levels (short chains: these
                           levels have little parallelism, so latency is what counts) */
#define MSM_GROUP_BUCKETS 8 /* buckets per reduction thread, at most (when groups allow) */
#define MSM_GROUP_BUCKETS_SMALL 2 /* the same for windows of at most 10 bits */
#define MSM_KEY_NONE 0xffffffffu
#define MSM_SORT_ALL_MAX ((size_t)1 << 25) /* entries sorted in one call, at most */
/* Minimum resident blocks of 128 threads per SM that the G1 accumulation is compiled for,
   which caps its registers (G2 keeps what it needs); 0: no cap, the compiler's choice. Set
   per curve by the including unit (measured on the H200, dev/cuda/NOTES.md). */
#ifndef MSM_ACC_MINB
#define MSM_ACC_MINB 0
#endif
/* 1: level 0 reads each base's coordinates as the addition needs them (add_affine_at), so
   they are not live across the products; set per curve by the including unit (BLS12-381: G2
   faster by 11-12 %, G1 unchanged; BN254: G1 3 % and G2 2 % slower, so off) */
#ifndef MSM_LAZY_BASE
#define MSM_LAZY_BASE 0
#endif
/* the same for G2 (fields of more than 48 bytes); 0: the compiler's choice */
#ifndef MSM_ACC_MINB2
#define MSM_ACC_MINB2 0
#endif
#define MSM_ACC_MINB_OF(F) (sizeof(F) <= 48 ? MSM_ACC_MINB : MSM_ACC_MINB2)
#if MSM_ACC_MINB || MSM_ACC_MINB2
#define MSM_ACC_BOUNDS(F) __launch_bounds__(128, MSM_ACC_MINB_OF(F) ? MSM_ACC_MINB_OF(F) : 1)
#else
#define MSM_ACC_BOUNDS(F) __launch_bounds__(128)
#endif

/* affine rounds of level 0 over a table (see AFFINE ROUNDS; 0: none), its chunk and threads */
#ifndef MSM_AFFINE
#define MSM_AFFINE 0
#endif
#ifndef MSM_AFF_CHUNK
#define MSM_AFF_CHUNK 512
#endif
#ifndef MSM_AFF_THREADS
#define MSM_AFF_THREADS (1u << 17)
#endif
#ifndef MSM_AFF_MINB
#define MSM_AFF_MINB 5 /* BN254 G1, 2^24: 5 blocks (102 registers) 78.1 ms, no cap (140) 98.0 ms */
#endif
/* 1: the affine rounds' field products are one out-of-line function (a small instruction
   stream: the kernel's phases run in different warps at once; BN254 G1 2^24 level 0: 98.0 ms,
   inline 110.4 ms, and 3.5 times the plain kernel with the XYZZ pass's two additions inline);
   0: inline */
#ifndef MSM_AFF_CALL
#define MSM_AFF_CALL 1
#endif
#if MSM_AFF_MINB
#define MSM_AFF_BOUNDS __launch_bounds__(128, MSM_AFF_MINB)
#else
#define MSM_AFF_BOUNDS __launch_bounds__(128)
#endif

/* ceil(log2 x) */
static inline unsigned msm_log2(size_t x)
{
    unsigned l = 0;
    while (((size_t)1 << l) < x)
        l++;
    return l;
}

/* Window bits for n points: lg n - 6, at most 16. For uniformly random scalars (the h MSM)
   18 at 2^23 and 20 from 2^24 points (13 windows instead of 16: fewer level-0 additions for
   more buckets; H200, G1 and G2 of both curves, dev/cuda/NOTES.md; 2^24 BLS12-381 G2 at
   c = 20 is 2.6 GB of buckets). Not for a witness (witness = 1): mostly zeros and ones leave
   few nonzero digits, so the additions saved are few and every bucket is still reduced
   (2^24 BLS12-381 proof: 0.67 s with c = 16 for the witness MSMs, 1.21 s with 20). */
static inline unsigned msm_window_bits(size_t n, int witness = 0)
{
    unsigned lg = msm_log2(n);
    if (lg >= 24 && !witness)
        return 20;
    if (lg == 23 && !witness)
        return 18;
    return lg < 10 ? 4 : lg - 6 > 16 ? 16 : lg - 6;
}

/* Window bits over a table of shifted bases (see TABLE): one reduction whatever the number of
   windows, so wider: lg n - 2, at most MSM_TABLE_BITS_MAX */
#define MSM_TABLE_BITS_MAX 22
static inline unsigned msm_table_bits(size_t n)
{
    unsigned lg = msm_log2(n);
    return lg < 6 ? 4 : lg - 2 > MSM_TABLE_BITS_MAX ? MSM_TABLE_BITS_MAX : lg - 2;
}

/* buckets of one window of c-bit signed digits: 0 .. 2^(c-1) (bucket 0 is never used), and
   the bucket of a key (w << c) | digit */
static inline __host__ __device__ uint32_t msm_wstride(unsigned c) { return (1u << (c - 1)) + 1; }
static inline __host__ __device__ size_t msm_bucket_at(uint32_t key, unsigned c)
{
    return (size_t)(key >> c) * msm_wstride(c) + (key & ((1u << c) - 1));
}

/* reduction threads per window for 2^(c-1) buckets (a power of two): as few as keep at most
   MSM_GROUP_BUCKETS(_SMALL) buckets per thread (up to c = 24) */
static inline unsigned msm_group_buckets(unsigned c) { return c <= 10 ? MSM_GROUP_BUCKETS_SMALL : MSM_GROUP_BUCKETS; }
#ifndef MSM_GROUPS_MAX
#define MSM_GROUPS_MAX (1u << 20) /* reduction threads per window, at most */
#endif
static inline unsigned msm_groups_for(unsigned c)
{
    unsigned g = 1;
    while (g * msm_group_buckets(c) < (1u << (c - 1)) && g < MSM_GROUPS_MAX)
        g *= 2;
    return g;
}

struct msm_shape {
    size_t n;          /* points */
    unsigned c;        /* window bits */
    unsigned nwin;     /* windows of the scalars */
    unsigned tab;      /* 1: the bases are a table of nwin shifted copies (see TABLE) */
    unsigned rwin;     /* windows reduced: nwin, or 1 over a table */
    unsigned key_bits; /* c + bits(nwin); c over a table */
    size_t entries;    /* n * nwin */
    unsigned chunk0;   /* sorted entries per level-0 thread */
    size_t slots0;     /* partial slots of level 0: 2 * ceil(entries / chunk0) */
    size_t slots1;     /* partial slots of later levels (ping-pong buffer) */
    size_t nbuckets;   /* nwin * msm_wstride(c): digits 0 .. 2^(c-1) of each window */
    unsigned groups;   /* reduction threads per window (power of two), G */
    unsigned c2;       /* bits of the second reduction's bucket index: log2 G + 1 */
    unsigned groups2;  /* its threads per window */
    int sort_all;      /* 1: one sort of all entries on key_bits; 0: one per window on c bits */
    unsigned aff;      /* affine rounds of level 0 (see AFFINE ROUNDS) */
    unsigned aff_kernel; /* 1: level 0 runs msm_affine_kernel (with s.aff rounds, maybe none) */
    size_t aff_threads; /* its persistent threads */
    unsigned compact;  /* 1: only the nonzero digits of witness scalars are sorted (see COMPACT) */
};

/* level-0 chunk other than the default (a benchmark knob): the partial slots follow it */
static inline void msm_shape_set_chunk(msm_shape &s, unsigned chunk0)
{
    s.chunk0 = chunk0;
    s.slots0 = 2 * ((s.entries + s.chunk0 - 1) / s.chunk0);
    s.slots1 = 2 * ((s.slots0 + MSM_PCHUNK - 1) / MSM_PCHUNK) + 2;
}

/* affine rounds of level 0 (see AFFINE ROUNDS; 0: none) over chunks of chunk0 entries (0: the
   shape's), with threads persistent threads (0: MSM_AFF_THREADS), no more than the chunks */
static inline void msm_shape_set_affine(msm_shape &s, unsigned rounds, unsigned chunk0 = 0, size_t threads = 0,
                                        int kernel = 0)
{
    if (chunk0)
        msm_shape_set_chunk(s, chunk0);
    s.aff_kernel = (rounds || kernel) && s.key_bits <= 30; /* a slot's state keeps the key in 30 bits */
    s.aff = s.aff_kernel ? rounds : 0;
    size_t chunks = (s.entries + s.chunk0 - 1) / s.chunk0;
    s.aff_threads = threads ? threads : MSM_AFF_THREADS;
    if (s.aff_threads > chunks)
        s.aff_threads = chunks;
}

/* CUZK_GPU_MSM_COMPACT=0 (a benchmark knob): witness MSMs sort every digit, zeros included, as
   before COMPACT */
static inline int msm_compact_on()
{
    static int v = -1;
    if (v < 0) {
        const char *e = getenv("CUZK_GPU_MSM_COMPACT");
        v = !(e && !strcmp(e, "0"));
    }
    return v;
}

/* witness = 1: the scalars are a witness (see msm_window_bits); tab = 1: the bases are a table
   of shifted copies (see TABLE; msm_table_ok says whether n allows one); g2 = 1: the points are
   G2's (larger level-0 chunks for many random scalars, MSM_CHUNK_LARGE_G2) */
static inline msm_shape msm_shape_of(size_t n, unsigned scalar_bits, unsigned c = 0, int witness = 0,
                                     int tab = 0, int g2 = 0)
{
    msm_shape s;
    s.n = n;
    s.c = c ? c : tab ? msm_table_bits(n) : msm_window_bits(n, witness);
    s.nwin = (scalar_bits + 1 + s.c - 1) / s.c;
    s.tab = tab != 0;
    s.rwin = s.tab ? 1 : s.nwin;
    s.key_bits = s.tab ? s.c : s.c + msm_log2(s.nwin);
    s.entries = n * s.nwin;
    msm_shape_set_chunk(s, s.entries <= MSM_SMALL_ENTRIES             ? MSM_CHUNK_SMALL
                           : n >= MSM_LARGE_POINTS && !witness ? (g2 ? MSM_CHUNK_LARGE_G2 : MSM_CHUNK_LARGE)
                                                               : MSM_CHUNK);
    s.nbuckets = (size_t)s.rwin * msm_wstride(s.c);
    /* over a table every entry shares one bucket set, so all go through one sort */
    s.sort_all = s.tab || s.entries <= MSM_SORT_ALL_MAX;
    s.groups = msm_groups_for(s.c);
    s.c2 = msm_log2(s.groups) + 1;
    s.groups2 = msm_groups_for(s.c2);
    msm_shape_set_affine(s, 0);
    s.compact = witness && !s.tab && msm_compact_on();
    if (s.tab && MSM_AFFINE)
        msm_shape_set_affine(s, MSM_AFFINE, MSM_AFF_CHUNK);
    return s;
}

/* whether n points can have a table: its index w n + i must fit the 31 bits of an entry's value */
static inline bool msm_table_ok(size_t n, unsigned scalar_bits, unsigned c = 0)
{
    msm_shape s = msm_shape_of(n, scalar_bits, c, 0, 1);
    return n > 0 && s.entries < ((size_t)1 << 31);
}

/* device scratch of one MSM, carved from one allocation (msm_scratch_size bytes) */
template <class F>
struct msm_scratch {
    uint32_t *keys_in, *vals_in, *keys_out, *vals_out;
    void *sort_tmp;
    size_t sort_tmp_bytes;
    xyzz_t<F> *buckets;            /* nbuckets */
    uint32_t *pkey[2];             /* partial keys, slots0 / slots1 */
    xyzz_t<F> *ppt[2];             /* partial points */
    uint32_t *sel;                 /* compacted partial slot ids (slots0) */
    uint32_t *nsel;                /* 1 counter */
    void *sel_tmp;
    size_t sel_tmp_bytes;
    xyzz_t<F> *groups;             /* nwin * groups: A_g, then the window sums */
    xyzz_t<F> *sums;               /* nwin * msm_wstride(c2): S_g, buckets of the second reduction */
    xyzz_t<F> *groups2;            /* nwin * groups2 */
    uint8_t *result;               /* one Jacobian point */
    uint32_t *aff_st;              /* affine rounds (s.aff): chunk0 slot states a thread, */
    F *aff_x, *aff_y, *aff_pre;    /* chunk0 / 2 sums and products, interleaved by thread */
    uint32_t *aff_next;            /* the chunk counter */
};

static inline size_t msm_align(size_t x) { return (x + 255) & ~(size_t)255; }

#if !defined(FF_HOST_EMU) || defined(CUDA_EMU_RT)
template <class F>
static size_t msm_scratch_layout(const msm_shape &s, uint8_t *base, msm_scratch<F> *o)
{
    size_t off = 0, sort_bytes = 0, sel_bytes = 0;
    cub::DeviceRadixSort::SortPairs(nullptr, sort_bytes, (uint32_t *)nullptr, (uint32_t *)nullptr,
                                    (uint32_t *)nullptr, (uint32_t *)nullptr, (int64_t)(s.sort_all ? s.entries : s.n),
                                    0, (int)(s.sort_all ? s.key_bits : s.c));
    cub::DeviceSelect::Flagged(nullptr, sel_bytes, thrust::counting_iterator<uint32_t>(0), (const uint8_t *)nullptr,
                               (uint32_t *)nullptr, (uint32_t *)nullptr, (int64_t)s.slots0);
    msm_scratch<F> t;
#define MSM_CARVE(field, bytes)                                   \
    do {                                                          \
        t.field = (typename std::remove_reference<decltype(t.field)>::type)(base ? base + off : nullptr); \
        off += msm_align(bytes);                                  \
    } while (0)
    MSM_CARVE(keys_in, s.entries * 4);
    MSM_CARVE(vals_in, s.entries * 4);
    MSM_CARVE(keys_out, s.entries * 4);
    MSM_CARVE(vals_out, s.entries * 4);
    MSM_CARVE(sort_tmp, sort_bytes);
    t.sort_tmp_bytes = sort_bytes;
    MSM_CARVE(buckets, s.nbuckets * sizeof(xyzz_t<F>));
    MSM_CARVE(pkey[0], s.slots0 * 4);
    MSM_CARVE(pkey[1], s.slots1 * 4);
    MSM_CARVE(ppt[0], s.slots0 * sizeof(xyzz_t<F>));
    MSM_CARVE(ppt[1], s.slots1 * sizeof(xyzz_t<F>));
    MSM_CARVE(sel, s.slots0 * 4);
    MSM_CARVE(nsel, 4);
    MSM_CARVE(sel_tmp, sel_bytes);
    t.sel_tmp_bytes = sel_bytes;
    MSM_CARVE(groups, (size_t)s.rwin * s.groups * sizeof(xyzz_t<F>));
    MSM_CARVE(sums, (size_t)s.rwin * msm_wstride(s.c2) * sizeof(xyzz_t<F>));
    MSM_CARVE(groups2, (size_t)s.rwin * s.groups2 * sizeof(xyzz_t<F>));
    MSM_CARVE(result, 3 * sizeof(F));
    size_t aff_slots = s.aff_kernel ? (size_t)s.chunk0 * s.aff_threads : 0;
    MSM_CARVE(aff_st, aff_slots * 4);
    MSM_CARVE(aff_x, aff_slots / 2 * sizeof(F));
    MSM_CARVE(aff_y, aff_slots / 2 * sizeof(F));
    MSM_CARVE(aff_pre, aff_slots / 2 * sizeof(F));
    MSM_CARVE(aff_next, 4);
#undef MSM_CARVE
    if (o)
        *o = t;
    return off;
}

#endif

/* bits [off, off+c) of a 256-bit little-endian scalar (c <= 31) */
static __device__ __forceinline__ uint32_t msm_bits(const uint32_t *s, unsigned off, unsigned c)
{
    unsigned w = off >> 5, b = off & 31;
    uint32_t lo = w < 8 ? s[w] : 0, hi = w + 1 < 8 ? s[w + 1] : 0;
    return __funnelshift_r(lo, hi, b) & ((1u << c) - 1);
}

/* the eight words of scalar i (32 bytes, little-endian) */
static __device__ __forceinline__ void msm_scalar_words(uint32_t *s, const uint32_t *scalars, size_t i)
{
    const uint4 *q = (const uint4 *)(scalars + 8 * i);
    uint4 x = q[0], y = q[1];
    s[0] = x.x, s[1] = x.y, s[2] = x.z, s[3] = x.w, s[4] = y.x, s[5] = y.y, s[6] = y.z, s[7] = y.w;
}

/* the signed digit of window w in [-2^(c-1), 2^(c-1)]: |digit| returned, neg its sign; carry
   goes from each window into the next (start at 0, windows in increasing order) */
static __device__ __forceinline__ uint32_t msm_digit(const uint32_t *s, unsigned w, unsigned c, uint32_t &carry,
                                                     uint32_t &neg)
{
    const uint32_t raw = msm_bits(s, w * c, c) + carry;
    carry = neg = raw > 1u << (c - 1);
    return neg ? (1u << c) - raw : raw;
}

/* entry (w, i): key (w << c) | |digit| and value i | sign << 31; over a table (tab = 1) key
   |digit| and value (w n + i) | sign << 31, the table's point */
static __global__ __launch_bounds__(256) void msm_digits_kernel(uint32_t *keys, uint32_t *vals, const uint32_t *scalars,
                                                          size_t n, unsigned c, unsigned nwin, unsigned tab)
{
    size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n)
        return;
    uint32_t s[8], carry = 0, neg;
    msm_scalar_words(s, scalars, i);
    for (unsigned w = 0; w < nwin; w++) {
        uint32_t d = msm_digit(s, w, c, carry, neg);
        keys[(size_t)w * n + i] = tab ? d : (w << c) | d;
        vals[(size_t)w * n + i] = (uint32_t)(tab ? (size_t)w * n + i : i) | (neg << 31);
    }
}

/* COMPACT: where the entries of window w start, from the counts of nonzero (nz) and full (nf)
   scalars: window 0 has nz entries, every later window nf */
static inline __host__ __device__ size_t msm_compact_start(unsigned w, size_t nz, size_t nf)
{
    return w == 0 ? 0 : nz + (size_t)(w - 1) * nf;
}

/* COMPACT: the class of scalar i as two counts in one word, so that one scan places every entry:
   low half 1 for a nonzero scalar (an entry in window 0), high half 1 for a full one (entries in
   windows 1 .. W - 1); a small scalar (at most 2^(c-1)) has a digit in window 0 only */
static __global__ __launch_bounds__(256) void msm_class_kernel(uint64_t *cls, const uint32_t *scalars, size_t n,
                                                               unsigned c)
{
    size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n)
        return;
    const uint4 *q = (const uint4 *)(scalars + 8 * i);
    uint4 x = q[0], y = q[1];
    uint32_t hi = x.y | x.z | x.w | y.x | y.y | y.z | y.w;
    cls[i] = !hi && !x.x ? 0 : !hi && x.x <= 1u << (c - 1) ? 1 : 1 | (uint64_t)1 << 32;
}

/* COMPACT: the entries of scalar i (msm_digits_kernel's keys and values) at the places the
   exclusive scan off of the classes cls gives: window 0 at off's low half, window w >= 1 at
   n_nonzero + (w - 1) n_full + off's high half */
static __global__ __launch_bounds__(256) void msm_digits_compact_kernel(uint32_t *keys, uint32_t *vals,
                                                                        const uint32_t *scalars, const uint64_t *off,
                                                                        const uint64_t *cls, size_t n, unsigned c,
                                                                        unsigned nwin)
{
    size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n)
        return;
    const uint64_t ci = cls[i];
    if (!ci)
        return;
    const uint64_t last = off[n - 1] + cls[n - 1], o = off[i];
    const size_t nz = (uint32_t)last, nf = (size_t)(last >> 32);
    uint32_t s[8], carry = 0, neg;
    msm_scalar_words(s, scalars, i);
    const unsigned wins = ci >> 32 ? nwin : 1;
    for (unsigned w = 0; w < wins; w++) {
        uint32_t d = msm_digit(s, w, c, carry, neg);
        size_t at = msm_compact_start(w, nz, nf) + (w == 0 ? (size_t)(uint32_t)o : (size_t)(o >> 32));
        keys[at] = (w << c) | d;
        vals[at] = (uint32_t)i | (neg << 31);
    }
}

/* source of level 0: sorted (key, signed index) pairs over affine bases */
template <class F>
struct msm_src_affine {
    const uint32_t *keys, *vals;
    const uint8_t *bases; /* affine, 2 * sizeof(F) bytes each */
    __device__ __forceinline__ uint32_t key(size_t e) const { return keys[e]; }
    __device__ __forceinline__ void add_to(xyzz_t<F> &acc, size_t e) const
    {
        uint32_t v = vals[e];
        const uint8_t *b = bases + (size_t)(v & 0x7fffffffu) * 2 * sizeof(F);
#if MSM_LAZY_BASE
        /* infinity (all zero) is rare: y is read for the test only when x is zero */
        if (F::load(b).is_zero() && F::load(b + sizeof(F)).is_zero())
            return;
        acc.add_affine_at(b, v >> 31);
#else
        affine_t<F> p = affine_t<F>::load(b);
        if (p.is_inf())
            return;
        if (v >> 31)
            p.y = p.y.neg();
        acc.add_affine(p);
#endif
    }
};

/* source of later levels: compacted partials */
template <class F>
struct msm_src_partial {
    const uint32_t *sel, *pkey;
    const xyzz_t<F> *ppt;
    __device__ __forceinline__ uint32_t key(size_t e) const { return pkey[sel[e]]; }
    __device__ __forceinline__ void add_to(xyzz_t<F> &acc, size_t e) const
    {
        acc.add(xyzz_t<F>::load(ppt + sel[e]));
    }
};

/* level 0 and later: the sum acc of a run of key in chunk t = [start, end) of m sorted entries,
   first: the chunk's first run, last: its last. A run wholly inside the chunk is a finished
   bucket; one cut by a chunk border (the entry before the chunk or after it has the same key)
   becomes partial 2t (open on the left) or 2t + 1 */
template <class F, class SRC>
__device__ __forceinline__ void msm_flush_run(const SRC &src, const xyzz_t<F> &acc, uint32_t key, bool first,
                                              bool last, size_t start, size_t end, size_t m, unsigned c, size_t t,
                                              xyzz_t<F> *buckets, uint32_t *out_key, xyzz_t<F> *out_pt,
                                              bool accum = false)
{
    bool left_open = first && start > 0 && src.key(start - 1) == key;
    bool right_open = last && end < m && src.key(end) == key;
    if (!left_open && !right_open) {
        /* accum: the buckets hold earlier chunks' sums (STREAMED); each bucket is flushed once
           per pass, so the read-add-write races with nothing */
        if (accum) {
            xyzz_t<F> b = xyzz_t<F>::load(buckets + msm_bucket_at(key, c));
            b.add(acc);
            b.store(buckets + msm_bucket_at(key, c));
        } else {
            acc.store(buckets + msm_bucket_at(key, c));
        }
    } else {
        size_t slot = 2 * t + (left_open ? 0 : 1);
        out_key[slot] = key;
        acc.store(out_pt + slot);
    }
}

template <class F, class SRC>
__global__ MSM_ACC_BOUNDS(F) void msm_accumulate_kernel(SRC src, size_t m, unsigned c, xyzz_t<F> *buckets,
                                                             uint32_t *out_key, xyzz_t<F> *out_pt, unsigned chunk,
                                                             bool accum, const uint32_t *m_dev)
{
    if (m_dev) /* a partial level: the count the selection left on the device */
        m = *m_dev;
    size_t t = (size_t)blockIdx.x * blockDim.x + threadIdx.x;
    size_t start = t * chunk;
    if (start >= m)
        return;
    size_t end = start + chunk < m ? start + chunk : m;
    uint32_t bmask = (1u << c) - 1;
    uint32_t key = src.key(start);
    size_t run = start;
    xyzz_t<F> acc = xyzz_t<F>::inf();
    for (size_t e = start;; e++) {
        uint32_t k = e < end ? src.key(e) : MSM_KEY_NONE;
        if (e == end || k != key) {
            /* flush the run [run, e) of key */
            if (key & bmask)
                msm_flush_run(src, acc, key, run == start, e == end, start, end, m, c, t, buckets, out_key, out_pt,
                              accum);
            if (e == end)
                break;
            key = k;
            run = e;
            acc = xyzz_t<F>::inf();
        }
        if (key & bmask)
            src.add_to(acc, e);
    }
}

template <class F>
__device__ __noinline__ F msm_aff_mul_call(const F a, const F b)
{
    return a * b;
}
template <class F>
__device__ __forceinline__ F msm_aff_mul(const F &a, const F &b)
{
#if MSM_AFF_CALL
    return msm_aff_mul_call<F>(a, b);
#else
    return a * b;
#endif
}

#define MSM_AFF_LOCAL 0x80000000u /* slot state: the point is a sum in the scratch */
#define MSM_AFF_DEAD 0x40000000u  /* slot state: added into another slot */
#define MSM_AFF_KEY 0x3fffffffu

/* level 0 with affine rounds (see AFFINE ROUNDS): the buckets and partials of
   msm_accumulate_kernel over msm_src_affine, for chunks of `chunk` entries; st, x, y, pre: the
   scratch of T threads (slot i of thread t at i T + t, sums and products at (i / 2) T + t);
   next: the chunk counter, 0 at the launch */
template <class F>
__global__ MSM_AFF_BOUNDS void msm_affine_kernel(msm_src_affine<F> src, size_t m, unsigned c, xyzz_t<F> *buckets,
                                                 uint32_t *out_key, xyzz_t<F> *out_pt, unsigned chunk,
                                                 unsigned rounds, uint32_t *st, F *x, F *y, F *pre, unsigned *next,
                                                 size_t T)
{
    const size_t tid = (size_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (tid >= T)
        return;
    const size_t nchunks = (m + chunk - 1) / chunk;
    const uint32_t bmask = (1u << c) - 1;
    st += tid, x += tid, y += tid, pre += tid;
#pragma unroll 1
    for (;;) {
        const size_t q = atomicAdd(next, 1u);
        if (q >= nchunks)
            break;
        const size_t start = q * chunk;
        const unsigned len = (unsigned)(m - start < chunk ? m - start : chunk);
        auto base = [&](unsigned i) {
            return src.bases + (size_t)(src.vals[start + i] & 0x7fffffffu) * 2 * sizeof(F);
        };
        auto load_x = [&](unsigned i, uint32_t s) {
            return s & MSM_AFF_LOCAL ? F::load(x + (size_t)(i / 2) * T) : F::load(base(i));
        };
        auto load_pt = [&](unsigned i, uint32_t s) {
            affine_t<F> p;
            if (s & MSM_AFF_LOCAL) {
                p.x = F::load(x + (size_t)(i / 2) * T);
                p.y = F::load(y + (size_t)(i / 2) * T);
            } else {
                const uint8_t *b = base(i);
                p.x = F::load(b);
                p.y = F::load(b + sizeof(F));
                if (src.vals[start + i] >> 31)
                    p.y = p.y.neg();
            }
            return p;
        };
#pragma unroll 1
        for (unsigned i = 0; i < len; i++)
            st[(size_t)i * T] = src.keys[start + i];
#pragma unroll 1
        for (unsigned r = 0; r < rounds && (1u << r) < len; r++) {
            const unsigned h = 1u << r;
            F acc = F::one();
            /* forward: the product of the differences before each pair, into pre */
#pragma unroll 1
            for (unsigned i = 0; i + h < len; i += 2 * h) {
                const uint32_t sa = st[(size_t)i * T], sb = st[(size_t)(i + h) * T];
                if (((sa | sb) & MSM_AFF_DEAD) || ((sa ^ sb) & MSM_AFF_KEY) || !(sa & bmask))
                    continue;
                const F xa = load_x(i, sa), xb = load_x(i + h, sb), d = xb - xa;
                if (xa.is_zero() || xb.is_zero() || d.is_zero())
                    continue; /* infinity, doubling or a point and its negation: the XYZZ pass */
                acc.store(pre + (size_t)(i >> (r + 1)) * T);
                acc = msm_aff_mul(acc, d);
                st[(size_t)(i + h) * T] = sb | MSM_AFF_DEAD; /* slot i + h cannot have died before */
            }
            F inv = ec_inv_vt(acc);
            /* backward: 1/d of each pair from inv and pre, then the affine sum into slot i */
#pragma unroll 1
            for (int j = (int)((len - h - 1) >> (r + 1)); j >= 0; j--) {
                const unsigned i = (unsigned)j << (r + 1);
                const uint32_t sb = st[(size_t)(i + h) * T];
                if (!(sb & MSM_AFF_DEAD))
                    continue;
                const uint32_t sa = st[(size_t)i * T];
                const affine_t<F> a = load_pt(i, sa), b = load_pt(i + h, sb);
                const F d = b.x - a.x, di = msm_aff_mul(inv, F::load(pre + (size_t)j * T));
                inv = msm_aff_mul(inv, d);
                const F l = msm_aff_mul(b.y - a.y, di);
                const F x3 = msm_aff_mul(l, l) - a.x - b.x;
                const F y3 = msm_aff_mul(l, a.x - x3) - a.y;
                x3.store(x + (size_t)(i / 2) * T);
                y3.store(y + (size_t)(i / 2) * T);
                st[(size_t)i * T] = (sa & MSM_AFF_KEY) | MSM_AFF_LOCAL;
            }
        }
        /* the live slots of each run in XYZZ, flushed as msm_accumulate_kernel does */
        uint32_t key = st[0] & MSM_AFF_KEY;
        unsigned run = 0;
        xyzz_t<F> acc = xyzz_t<F>::inf();
#pragma unroll 1
        for (unsigned e = 0;; e++) {
            const uint32_t se = e < len ? st[(size_t)e * T] : 0;
            const uint32_t k = e < len ? se & MSM_AFF_KEY : MSM_KEY_NONE;
            if (e == len || k != key) {
                if (key & bmask)
                    msm_flush_run(src, acc, key, run == 0, e == len, start, start + len, m, c, q, buckets, out_key,
                                  out_pt);
                if (e == len)
                    break;
                key = k;
                run = e;
                acc = xyzz_t<F>::inf();
            }
            if ((key & bmask) && !(se & MSM_AFF_DEAD)) { /* one addition in the code */
                const affine_t<F> p = load_pt(e, se);
                if (!p.is_inf())
                    acc.add_affine(p);
            }
        }
    }
}

static __global__ __launch_bounds__(256) void msm_flags_kernel(uint8_t *flags, const uint32_t *pkey, size_t n)
{
    size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n)
        flags[i] = pkey[i] != MSM_KEY_NONE;
}

/* thread (w, g): sum over buckets b in its range of b * B_b */
template <class F>
__global__ __launch_bounds__(128) void msm_bucket_reduce_kernel(xyzz_t<F> *groups, const xyzz_t<F> *buckets,
                                                                unsigned c, unsigned nwin, unsigned ngroups)
{
    size_t t = (size_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (t >= (size_t)nwin * ngroups)
        return;
    unsigned w = (unsigned)(t / ngroups), g = (unsigned)(t % ngroups);
    uint32_t nb = 1u << (c - 1); /* buckets 1..nb */
    uint32_t per = (nb + ngroups - 1) / ngroups;
    uint32_t lo = 1 + g * per, hi = lo + per - 1;
    if (hi > nb)
        hi = nb;
    xyzz_t<F> run = xyzz_t<F>::inf(), acc = xyzz_t<F>::inf();
    const xyzz_t<F> *wb = buckets + (size_t)w * msm_wstride(c);
    for (uint32_t b = hi; b >= lo && lo <= nb; b--) {
        run.add(xyzz_t<F>::load(wb + b));
        acc.add(run);
    }
    /* acc = sum (b - lo + 1) B_b; add (lo - 1) * run */
    if (lo > 1 && lo <= nb) {
        run.mul_small(lo - 1);
        acc.add(run);
    }
    acc.store(groups + t);
}

/* thread (w, g) of G = ngroups: over its per = 2^(c-1)/G buckets from lo = 1 + g per,
   A_g = sum (b - lo + 1) B_b into groups[t] and S_g = sum B_b into bucket g of window w of sums
   (c2 bits) */
template <class F>
__global__ __launch_bounds__(128) void msm_bucket_sums_kernel(xyzz_t<F> *groups, xyzz_t<F> *sums,
                                                              const xyzz_t<F> *buckets, unsigned c, unsigned nwin,
                                                              unsigned ngroups, unsigned c2)
{
    size_t t = (size_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (t >= (size_t)nwin * ngroups)
        return;
    unsigned w = (unsigned)(t / ngroups), g = (unsigned)(t % ngroups);
    uint32_t per = (1u << (c - 1)) / ngroups, lo = 1 + g * per;
    xyzz_t<F> run = xyzz_t<F>::inf(), acc = xyzz_t<F>::inf();
    const xyzz_t<F> *wb = buckets + (size_t)w * msm_wstride(c);
    for (uint32_t b = lo + per - 1; b >= lo; b--) {
        run.add(xyzz_t<F>::load(wb + b));
        acc.add(run);
    }
    acc.store(groups + t);
    run.store(sums + (size_t)w * msm_wstride(c2) + g);
}

/* window w: groups[w G] (sum_g A_g) += 2^dbls * groups2[w G2] (sum_g g S_g) */
template <class F>
__global__ __launch_bounds__(128) void msm_window_join_kernel(xyzz_t<F> *groups, const xyzz_t<F> *groups2,
                                                              unsigned nwin, unsigned ngroups, unsigned ngroups2,
                                                              unsigned dbls)
{
    size_t w = (size_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (w >= nwin)
        return;
    xyzz_t<F> u = xyzz_t<F>::load(groups2 + w * ngroups2);
    for (unsigned k = 0; k < dbls; k++)
        u.dbl();
    xyzz_t<F> a = xyzz_t<F>::load(groups + w * ngroups);
    a.add(u);
    a.store(groups + w * ngroups);
}

template <class F>
__global__ __launch_bounds__(128) void msm_group_pairs_kernel(xyzz_t<F> *groups, unsigned nwin, unsigned stride,
                                                              unsigned ngroups)
{
    size_t t = (size_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (t >= (size_t)nwin * stride)
        return;
    unsigned w = (unsigned)(t / stride), i = (unsigned)(t % stride);
    xyzz_t<F> a = xyzz_t<F>::load(groups + (size_t)w * ngroups + i);
    a.add(xyzz_t<F>::load(groups + (size_t)w * ngroups + i + stride));
    a.store(groups + (size_t)w * ngroups + i);
}

template <class F>
__global__ void msm_final_kernel(uint8_t *out, const xyzz_t<F> *groups, unsigned c, unsigned nwin, unsigned ngroups)
{
    if (blockIdx.x || threadIdx.x)
        return;
    xyzz_t<F> r = xyzz_t<F>::load(groups + (size_t)(nwin - 1) * ngroups);
    for (int w = (int)nwin - 2; w >= 0; w--) {
        for (unsigned k = 0; k < c; k++)
            r.dbl();
        r.add(xyzz_t<F>::load(groups + (size_t)w * ngroups));
    }
    r.store_jacobian(out);
}

/* one copy of a table (see TABLE): acc[j] = 2^c prev[j] (XYZZ), j < m; prev: affine points */
template <class F>
__global__ __launch_bounds__(128) void msm_table_dbl_kernel(xyzz_t<F> *acc, const uint8_t *prev, size_t m, unsigned c)
{
    size_t j = (size_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (j >= m)
        return;
    xyzz_t<F> p = xyzz_t<F>::from_affine(affine_t<F>::load(prev + j * 2 * sizeof(F)));
    for (unsigned k = 0; k < c; k++)
        p.dbl();
    p.store(acc + j);
}

/* bytes of the table of shape s (s.tab): nwin copies of n affine points */
template <class F>
static inline size_t msm_table_bytes(const msm_shape &s)
{
    return (size_t)s.nwin * s.n * 2 * sizeof(F);
}

#if !defined(FF_HOST_EMU) || defined(CUDA_EMU_RT)
static inline unsigned msm_grid(size_t n, unsigned t) { return (unsigned)((n + t - 1) / t); }

/* Builds the table of shape s (s.tab) at d_tab (msm_table_bytes) from the n bases at d_bases:
 * copy 0 is the bases, copy w is 2^c times copy w - 1, in steps of as many points as the
 * scratch holds (an XYZZ point and a field element each). Asynchronous on st. */
template <class F>
static cudaError_t msm_table_build(uint8_t *d_tab, const uint8_t *d_bases, const msm_shape &s, void *scratch,
                                   size_t scratch_bytes, cudaStream_t st)
{
    const size_t pt = 2 * sizeof(F), per = sizeof(xyzz_t<F>) + sizeof(F);
    size_t chunk = scratch_bytes > 512 ? (scratch_bytes - 512) / per : 0;
    if (chunk > s.n)
        chunk = s.n;
    if (s.n && chunk == 0)
        return cudaErrorInvalidValue;
    cudaError_t e = cudaMemcpyAsync(d_tab, d_bases, s.n * pt, cudaMemcpyDeviceToDevice, st);
    if (e != cudaSuccess)
        return e;
    xyzz_t<F> *acc = (xyzz_t<F> *)scratch;
    F *pre = (F *)((uint8_t *)scratch + msm_align(chunk * sizeof(xyzz_t<F>)));
    for (unsigned w = 1; w < s.nwin; w++)
        for (size_t off = 0; off < s.n; off += chunk) {
            size_t m = s.n - off < chunk ? s.n - off : chunk;
            msm_table_dbl_kernel<F><<<msm_grid(m, 128), 128, 0, st>>>(acc, d_tab + ((w - 1) * s.n + off) * pt, m, s.c);
            size_t th = (m + EC_AFFINE_BATCH - 1) / EC_AFFINE_BATCH;
            xyzz_to_affine_kernel<F>
                <<<msm_grid(th, 256), 256, 0, st>>>((affine_t<F> *)(d_tab + (w * s.n + off) * pt), acc, pre, m);
            if ((e = cudaGetLastError()) != cudaSuccess)
                return e;
        }
    return cudaSuccess;
}

/* optional phase timing (dev/cuda/lab.cu): events after digits+sort, level 0, the later
   levels, the bucket reduction and the end; ev[0] is recorded at the start */
struct msm_prof {
    cudaEvent_t ev[6];
    unsigned levels; /* partial levels run after level 0 */
};
#define MSM_PROF_MARK(p, i, st)                \
    do {                                       \
        if (p)                                 \
            cudaEventRecord((p)->ev[i], st);   \
    } while (0)

/* Runs one MSM: d_scalars (n x 32 bytes, std form, on the device) over d_bases (n affine
 * points, zkey layout; over a table, s.tab, the nwin n points of msm_table_build). Writes the
 * Jacobian result to sc.result, or, when h_windows is given, copies the s.rwin window sums
 * (XYZZ, window 0 first) there for the host to combine: the
 * c * (nwin - 1) doublings of that last step are one dependent chain, which a CPU core runs
 * many times faster than one GPU thread. reuse_sort != 0 skips the
 * digits and the sort and uses the sorted entries the previous call left in sc (same n and
 * scalars: the A, B1 and B2 MSMs share the witness; the entry arrays sit at the same offsets
 * in the G1 and G2 layouts); with s.compact, *live carries their count from that call to this
 * one (SIZE_MAX: not compacted). The two halves, msm_pass and msm_reduce, also run apart
 * (STREAMED below). */
template <class F>
static cudaError_t msm_pass(const msm_shape &s, const msm_scratch<F> &sc, const uint8_t *d_bases,
                            const uint32_t *d_scalars, cudaStream_t st, int reuse_sort, msm_prof *prof, bool accum,
                            size_t *live = nullptr);
template <class F>
static cudaError_t msm_reduce(const msm_shape &s, const msm_scratch<F> &sc, cudaStream_t st, msm_prof *prof,
                              void *h_windows);

template <class F>
static cudaError_t msm_run(const msm_shape &s, const msm_scratch<F> &sc, const uint8_t *d_bases,
                           const uint32_t *d_scalars, cudaStream_t st, int reuse_sort = 0,
                           msm_prof *prof = nullptr, void *h_windows = nullptr, size_t *live = nullptr)
{
    cudaError_t e;
    MSM_PROF_MARK(prof, 0, st);
    if (s.n == 0) {
        if (h_windows) {
            memset(h_windows, 0, (size_t)s.rwin * sizeof(xyzz_t<F>));
            return cudaSuccess;
        }
        e = cudaMemsetAsync(sc.result, 0, 3 * sizeof(F), st);
        return e;
    }
    if ((e = cudaMemsetAsync(sc.buckets, 0, s.nbuckets * sizeof(xyzz_t<F>), st)) != cudaSuccess)
        return e;
    if ((e = msm_pass<F>(s, sc, d_bases, d_scalars, st, reuse_sort, prof, false, live)) != cudaSuccess)
        return e;
    return msm_reduce<F>(s, sc, st, prof, h_windows);
}

/* STREAMED. The bases of a key too large for the device cross in chunks (backend_impl.cuh):
 * each chunk of m points is one msm_pass over its m scalars with accum set, so its buckets are
 * added to those of the chunks before (the buckets start at zero, and every chunk uses the same
 * window bits c, so the same nwin and bucket layout), and one msm_reduce after the last chunk
 * gives the MSM's window sums. A bucket is flushed once per pass (a run wholly inside a
 * level-0 chunk, or at the partial level where its run closes), so the addition to the stored
 * bucket races with nothing. The digits, sort and partial levels of a chunk cost what they cost
 * in one pass over all points; the extra cost is one bucket read and addition per bucket a
 * chunk touches. */

/* CUZK_GPU_MSM_LEVELS=sync (a benchmark knob): the partial levels read each count back to the
   host and size the next level by it, as before PARTIAL LEVELS without the host */
static inline int msm_levels_sync()
{
    static int v = -1;
    if (v < 0) {
        const char *e = getenv("CUZK_GPU_MSM_LEVELS");
        v = e && !strcmp(e, "sync");
    }
    return v;
}

/* COMPACT: the classes, their scan, the entries of the nonzero digits and their sort; *live
 * their count, or SIZE_MAX when the scan's scratch does not fit the sort's (the caller then runs
 * the plain digits). Waits for the device once, for the count. */
template <class F>
static cudaError_t msm_compact(const msm_shape &s, const msm_scratch<F> &sc, const uint32_t *d_scalars,
                               cudaStream_t st, size_t *live)
{
    size_t scan_bytes = 0;
    uint64_t *cls = (uint64_t *)sc.vals_out, *off = (uint64_t *)sc.keys_out; /* free until the sort */
    *live = SIZE_MAX;
    cudaError_t e = cub::DeviceScan::ExclusiveSum(nullptr, scan_bytes, cls, off, (int64_t)s.n, st);
    if (e != cudaSuccess || scan_bytes > sc.sort_tmp_bytes || s.nwin < 2)
        return e;
    msm_class_kernel<<<msm_grid(s.n, 256), 256, 0, st>>>(cls, d_scalars, s.n, s.c);
    if ((e = cub::DeviceScan::ExclusiveSum(sc.sort_tmp, scan_bytes, cls, off, (int64_t)s.n, st)) != cudaSuccess)
        return e;
    uint64_t tail[2];
    if ((e = cudaMemcpyAsync(&tail[0], off + s.n - 1, 8, cudaMemcpyDeviceToHost, st)) != cudaSuccess ||
        (e = cudaMemcpyAsync(&tail[1], cls + s.n - 1, 8, cudaMemcpyDeviceToHost, st)) != cudaSuccess ||
        (e = cudaStreamSynchronize(st)) != cudaSuccess)
        return e;
    const uint64_t last = tail[0] + tail[1];
    const size_t nz = (uint32_t)last, nf = (size_t)(last >> 32), m = msm_compact_start(s.nwin, nz, nf);
    if (m) {
        msm_digits_compact_kernel<<<msm_grid(s.n, 256), 256, 0, st>>>(sc.keys_in, sc.vals_in, d_scalars, off, cls,
                                                                        s.n, s.c, s.nwin);
        /* window-major as before: each window's region sorts alone on the c bucket bits, or all
           at once on the window and bucket bits (the scratch holds a sort of s.entries then) */
        for (unsigned w = 0; w < (s.sort_all ? 1 : s.nwin); w++) {
            const size_t at = s.sort_all ? 0 : msm_compact_start(w, nz, nf),
                         len = s.sort_all ? m : msm_compact_start(w + 1, nz, nf) - at;
            size_t tmp = sc.sort_tmp_bytes;
            if (len && (e = cub::DeviceRadixSort::SortPairs(sc.sort_tmp, tmp, sc.keys_in + at, sc.keys_out + at,
                                                            sc.vals_in + at, sc.vals_out + at, (int64_t)len, 0,
                                                            (int)(s.sort_all ? s.key_bits : s.c), st)) != cudaSuccess)
                return e;
        }
    }
    *live = m;
    return cudaGetLastError();
}

/* digits and sort (unless reuse_sort), level 0 and the partial levels of one MSM (or one chunk
 * of it, accum) into sc.buckets, which the caller zeroed; nothing in it waits for the device but
 * COMPACT's count. live (s.compact): the count of sorted entries, set here, or read when
 * reuse_sort (msm_run) */
template <class F>
static cudaError_t msm_pass(const msm_shape &s, const msm_scratch<F> &sc, const uint8_t *d_bases,
                            const uint32_t *d_scalars, cudaStream_t st, int reuse_sort, msm_prof *prof, bool accum,
                            size_t *live)
{
    cudaError_t e;
    if (s.n == 0)
        return cudaSuccess;
    size_t m = SIZE_MAX; /* the entries level 0 runs over (SIZE_MAX: all of them, s.entries) */
    if (s.compact && reuse_sort) {
        if (!live)
            return cudaErrorInvalidValue;
        m = *live;
    } else if (s.compact) {
        if ((e = msm_compact<F>(s, sc, d_scalars, st, &m)) != cudaSuccess)
            return e;
        if (live)
            *live = m;
    }
    if (m == SIZE_MAX)
        m = s.entries;
    else if (!reuse_sort)
        reuse_sort = 1; /* sorted above */
    if (m == 0) { /* no nonzero digit: nothing to add */
        MSM_PROF_MARK(prof, 1, st);
        MSM_PROF_MARK(prof, 2, st);
        if (prof)
            prof->levels = 0;
        MSM_PROF_MARK(prof, 3, st);
        return cudaGetLastError();
    }
    if (!reuse_sort) {
        msm_digits_kernel<<<msm_grid(s.n, 256), 256, 0, st>>>(sc.keys_in, sc.vals_in, d_scalars, s.n, s.c, s.nwin,
                                                                    s.tab);
        /* entries are window-major, so each window sorts alone on its c bucket bits */
        if (s.sort_all) {
            size_t tmp = sc.sort_tmp_bytes;
            e = cub::DeviceRadixSort::SortPairs(sc.sort_tmp, tmp, sc.keys_in, sc.keys_out, sc.vals_in, sc.vals_out,
                                                (int64_t)s.entries, 0, (int)s.key_bits, st);
            if (e != cudaSuccess)
                return e;
        }
        for (unsigned w = 0; w < s.nwin && !s.sort_all; w++) {
            size_t tmp = sc.sort_tmp_bytes, off = (size_t)w * s.n;
            e = cub::DeviceRadixSort::SortPairs(sc.sort_tmp, tmp, sc.keys_in + off, sc.keys_out + off, sc.vals_in + off,
                                                sc.vals_out + off, (int64_t)s.n, 0, (int)s.c, st);
            if (e != cudaSuccess)
                return e;
        }
    }
    MSM_PROF_MARK(prof, 1, st);
    size_t threads = (m + s.chunk0 - 1) / s.chunk0;
    if ((e = cudaMemsetAsync(sc.pkey[0], 0xff, 2 * threads * 4, st)) != cudaSuccess)
        return e;
    msm_src_affine<F> src0{sc.keys_out, sc.vals_out, d_bases};
    if (s.aff_kernel && !accum) {
        if ((e = cudaMemsetAsync(sc.aff_next, 0, 4, st)) != cudaSuccess)
            return e;
        msm_affine_kernel<F><<<msm_grid(s.aff_threads, 128), 128, 0, st>>>(
            src0, s.entries, s.c, sc.buckets, sc.pkey[0], sc.ppt[0], s.chunk0, s.aff, sc.aff_st, sc.aff_x, sc.aff_y,
            sc.aff_pre, sc.aff_next, s.aff_threads);
    } else {
        msm_accumulate_kernel<F, msm_src_affine<F>><<<msm_grid(threads, 128), 128, 0, st>>>(
            src0, m, s.c, sc.buckets, sc.pkey[0], sc.ppt[0], s.chunk0, accum, nullptr);
    }
    MSM_PROF_MARK(prof, 2, st);
    size_t nslots = 2 * threads;
    int cur = 0;
    if (prof)
        prof->levels = 0;
    uint8_t *flags = (uint8_t *)sc.keys_in; /* keys_in is free after the sort */
    /* PARTIAL LEVELS without the host: each level's selection leaves its count on the device and
       the next level's kernels read it there, over grids sized by the bound nslots (slots past
       the count are empty, so they select nothing); the bound shrinks by MSM_PCHUNK / 2 a level,
       and the level whose bound fits one thread closes every run. No level waits for the host,
       so the device runs the levels back to back and the caller's next work queues behind them.
       sync (CUZK_GPU_MSM_LEVELS=sync): each count is read back and sizes the next level. */
    const int sync = msm_levels_sync();
    for (;;) {
        msm_flags_kernel<<<msm_grid(nslots, 256), 256, 0, st>>>(flags, sc.pkey[cur], nslots);
        size_t stmp = sc.sel_tmp_bytes;
        e = cub::DeviceSelect::Flagged(sc.sel_tmp, stmp, thrust::counting_iterator<uint32_t>(0), flags, sc.sel,
                                       sc.nsel, (int64_t)nslots, st);
        if (e != cudaSuccess)
            return e;
        uint32_t cnt = 0;
        if (sync) {
            if ((e = cudaMemcpyAsync(&cnt, sc.nsel, 4, cudaMemcpyDeviceToHost, st)) != cudaSuccess ||
                (e = cudaStreamSynchronize(st)) != cudaSuccess)
                return e;
            if (cnt == 0)
                break;
        }
        /* threads for the count, or enough for any count */
        size_t th = ((sync ? cnt : nslots) + MSM_PCHUNK - 1) / MSM_PCHUNK;
        int nxt = cur ^ 1;
        if ((sync || th > 1) && (e = cudaMemsetAsync(sc.pkey[nxt], 0xff, 2 * th * 4, st)) != cudaSuccess)
            return e;
        msm_src_partial<F> src{sc.sel, sc.pkey[cur], sc.ppt[cur]};
        msm_accumulate_kernel<F, msm_src_partial<F>><<<msm_grid(th, 128), 128, 0, st>>>(
            src, cnt, s.c, sc.buckets, sc.pkey[nxt], sc.ppt[nxt], MSM_PCHUNK, accum, sync ? nullptr : sc.nsel);
        if (prof)
            prof->levels++;
        if (!sync && th == 1) /* one thread took every partial left: no run stays open */
            break;
        nslots = 2 * th;
        cur = nxt;
    }
    MSM_PROF_MARK(prof, 3, st);
    return cudaGetLastError();
}

/* the bucket reduction of s.rwin windows of sc.buckets: the window sums to h_windows (host), or
 * the Jacobian result to sc.result */
template <class F>
static cudaError_t msm_reduce(const msm_shape &s, const msm_scratch<F> &sc, cudaStream_t st, msm_prof *prof,
                              void *h_windows)
{
    cudaError_t e;
    if (s.groups > 1 && (e = cudaMemsetAsync(sc.sums, 0, (size_t)s.rwin * msm_wstride(s.c2) * sizeof(xyzz_t<F>), st)))
        return e;
    msm_bucket_sums_kernel<F><<<msm_grid((size_t)s.rwin * s.groups, 128), 128, 0, st>>>(
        sc.groups, sc.sums, sc.buckets, s.c, s.rwin, s.groups, s.c2);
    for (unsigned stride = s.groups / 2; stride >= 1; stride /= 2)
        msm_group_pairs_kernel<F>
            <<<msm_grid((size_t)s.rwin * stride, 128), 128, 0, st>>>(sc.groups, s.rwin, stride, s.groups);
    if (s.groups > 1) {
        msm_bucket_reduce_kernel<F><<<msm_grid((size_t)s.rwin * s.groups2, 128), 128, 0, st>>>(
            sc.groups2, sc.sums, s.c2, s.rwin, s.groups2);
        for (unsigned stride = s.groups2 / 2; stride >= 1; stride /= 2)
            msm_group_pairs_kernel<F>
                <<<msm_grid((size_t)s.rwin * stride, 128), 128, 0, st>>>(sc.groups2, s.rwin, stride, s.groups2);
        msm_window_join_kernel<F><<<msm_grid(s.rwin, 128), 128, 0, st>>>(
            sc.groups, sc.groups2, s.rwin, s.groups, s.groups2, s.c - s.c2);
    }
    MSM_PROF_MARK(prof, 4, st);
    if (h_windows) {
        e = cudaMemcpy2DAsync(h_windows, sizeof(xyzz_t<F>), sc.groups, s.groups * sizeof(xyzz_t<F>),
                              sizeof(xyzz_t<F>), s.rwin, cudaMemcpyDeviceToHost, st);
        if (e != cudaSuccess)
            return e;
    } else {
        msm_final_kernel<F><<<1, 32, 0, st>>>(sc.result, sc.groups, s.c, s.rwin, s.groups);
    }
    MSM_PROF_MARK(prof, 5, st);
    return cudaGetLastError();
}

/* mask[j] = 1 where point j (w 16-byte words, affine) is the point at infinity (all zero);
   *cnt counts them */
static __global__ __launch_bounds__(256) void msm_inf_mask_kernel(uint8_t *mask, unsigned long long *cnt,
                                                                  const uint8_t *pts, size_t n, unsigned w)
{
    size_t j = (size_t)blockIdx.x * blockDim.x + threadIdx.x;
    int inf = 0;
    if (j < n) {
        const uint4 *q = (const uint4 *)pts + j * w;
        uint32_t any = 0;
        for (unsigned k = 0; k < w; k++) {
            uint4 v = q[k];
            any |= v.x | v.y | v.z | v.w;
        }
        inf = any == 0;
        mask[j] = (uint8_t)inf;
    }
    int block = __syncthreads_count(inf);
    if (threadIdx.x == 0 && block)
        atomicAdd(cnt, (unsigned long long)block);
}

/* scalars of a chunk of a set kept whole on the device: out[j] <- 0 where mask[j] (a point at
   infinity, whose entries would only be read to be skipped), else scalars[j]; m entries of 32 bytes */
static __global__ __launch_bounds__(256) void msm_mask_kernel(uint4 *out, const uint4 *scalars, const uint8_t *mask,
                                                              size_t m)
{
    size_t j = (size_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (j >= m)
        return;
    const uint4 z = make_uint4(0, 0, 0, 0);
    const int inf = mask[j];
    out[2 * j] = inf ? z : scalars[2 * j];
    out[2 * j + 1] = inf ? z : scalars[2 * j + 1];
}

/* scalars of a chunk of a set whose bases were compacted (points at infinity left out):
   out[j] <- scalars[idx[j]], m entries of 32 bytes */
static __global__ __launch_bounds__(256) void msm_gather_kernel(uint4 *out, const uint4 *scalars, const uint32_t *idx,
                                                                size_t m)
{
    size_t j = (size_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (j >= m)
        return;
    size_t i = idx[j];
    out[2 * j] = scalars[2 * i];
    out[2 * j + 1] = scalars[2 * i + 1];
}
#endif
