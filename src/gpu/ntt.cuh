/* ntt.cuh - number-theoretic transforms over Fr on the GPU, and the kernels of the
 * Groth16 h computation (FORMATS.md section 4, steps 1-3).
 *
 * DESIGN. Radix-2 decimation in time, natural order in and out. The stages run in groups
 * inside shared memory (ntt_group_kernel) on blocks of G = 2^NTT_GROUP_LOG elements (2^9):
 * stages 0 .. log G - 1 on contiguous elements, then the rest in as few groups as blocks of G
 * allow, each on runs of 2^(log G - k) consecutive columns x 2^k strided rows, its k stages a
 * multiple of the radix's where the rest must split (NTT_FULL_ROUNDS, ntt_group_at; 2^24 at
 * 2^9: 9 + 8 + 7, three passes; with NTT_FULL_ROUNDS 0, runs of 8 columns: 9 + 5 + 5 + 5).
 * Inside a group each thread keeps 2^NTT_RADIX_LOG elements in registers (4) and does that
 * many stages per round (radix 4), so a round costs one pass through shared memory and one
 * barrier, not two (radix 8 measured slower: more registers, fewer warps to hide the
 * products' latency; dev/cuda/NOTES.md). Blocks of 2^9 (128 threads, 6 resident per SM at 80
 * registers) beat blocks of 2^10 (256 threads, 3 per SM) on the H200 by 3-4 % at 2^24 even
 * when they took four passes against three: the transform is bound by its products more than
 * by DRAM (NOTES study 18); 2^10 beat 2^11 (study 12). The first group gathers its input in
 * bit-reversed order straight from the source (each element is one 32-byte sector, so the
 * gather wastes no DRAM bandwidth) into a scratch array and the last group writes back: the
 * bit-reversal permutation costs no pass of its own. Twiddles come from a table tw[t] =
 * omega_n^t, t <= n/2, built once per key; stage s (span m = 2^s) reads tw[j * n/(2m)], or
 * for s < NTT_TW_COMPACT (23) the same value from a per-stage table where neighbouring j sit
 * side by side (ntt_tw). Cost: n/2 log n multiplies (stage 0's twiddles are 1 and skipped);
 * memory traffic: one pass of 2 * 32n bytes for log n <= 9, two up to 17, then one more per 8
 * stages (at 2^9 in full rounds; per 6 on runs of 8 columns). Variable time is irrelevant (no
 * secrets).
 */
#pragma once
#include "gpu/ff.cuh"

#ifndef NTT_GROUP_LOG
#define NTT_GROUP_LOG 9 /* elements per shared-memory block: 2^9 (16 KB) */
#endif
#ifndef NTT_MIN_LO
#define NTT_MIN_LO 1 /* a later group reads runs of at least 2^NTT_MIN_LO columns */
#endif
#ifndef NTT_RADIX_LOG
#define NTT_RADIX_LOG 2 /* elements a thread holds: 2^NTT_RADIX_LOG */
#endif

/* table[i] = start * base^i, i < count (64 consecutive entries per thread); MUL: table[i] *= that */
template <class fr, bool MUL = false>
__global__ __launch_bounds__(256) void ntt_powers_kernel(fr *table, size_t count, fr base, fr start)
{
    size_t t = (size_t)blockIdx.x * blockDim.x + threadIdx.x;
    size_t i0 = t * 64;
    if (i0 >= count)
        return;
    fr x = start * base.pow_u64(i0);
    size_t end = i0 + 64 < count ? i0 + 64 : count;
    for (size_t i = i0; i < end; i++) {
        table[i] = MUL ? table[i] * x : x; /* MUL: the odd-coset shift without its table */
        x = x * base;
    }
}

/* a[i] = (a[i] - c[i]) in standard form: h from a*b (in a) and c (the lean path's
   h_combine_kernel) */
template <class fr>
__global__ __launch_bounds__(256) void h_sub_kernel(fr *a, const fr *c, size_t n)
{
    size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n)
        a[i] = (a[i] - c[i]).from_mont();
}

#ifndef NTT_FULL_ROUNDS
#define NTT_FULL_ROUNDS 1 /* 1: the later groups on blocks of 2^NTT_GROUP_LOG elements, split into
                             multiples of the radix's stages where they must split, so that no
                             round is half empty (blocks of 2^9, 2^24: 9 + 8 + 7 stages on runs
                             of 2 and 4 columns, three passes and 13 rounds instead of four and
                             14; with the lazy sums and tables to stage 22, BN254 / BLS12-381:
                             H100 3.62 / 3.70 ms against 3.69 / 3.76, H200 3.58 / 3.67 against
                             3.61 / 3.70, NOTES study 19. Blocks of 2^10: 2^24 10 + 8 + 6, 2^26
                             10 + 8 + 8, three passes instead of four). 0: the later groups on
                             runs of 8 columns (lo_bits 3) */
#endif

/* The groups of stages, one kernel launch each: the first takes stages 0 .. log G - 1 (G =
 * 2^NTT_GROUP_LOG); with NTT_FULL_ROUNDS the rest as above; without, the rest are split into as
 * few groups as blocks of G allow with runs of 8 columns (lo_bits = 3, 256 bytes), evenly; a
 * rest of log G - 2 or log G - 1 stages takes runs of 4 or 2 columns (still whole 32-byte
 * sectors) rather than one more pass through memory. */
struct ntt_group {
    unsigned s, k, lo_bits;
    unsigned radix_log() const /* the kernel's L: NTT_RADIX_LOG unless the block is smaller */
    {
        return k + lo_bits < NTT_RADIX_LOG ? k + lo_bits : NTT_RADIX_LOG;
    }
};
static inline ntt_group ntt_group_at(unsigned log_n, unsigned s)
{
    ntt_group g;
    unsigned rest = log_n - s;
    g.s = s;
    if (s == 0) {
        g.lo_bits = 0;
        g.k = rest < NTT_GROUP_LOG ? rest : NTT_GROUP_LOG;
    }
#if NTT_FULL_ROUNDS
    else { /* full blocks, and groups of a multiple of the radix's stages where one must split */
        const unsigned R = NTT_RADIX_LOG, kmax = NTT_GROUP_LOG - NTT_MIN_LO, kfull = kmax - kmax % R;
        if (rest <= kmax) {
            g.k = rest;
        } else {
            unsigned passes = (rest + kfull - 1) / kfull;
            g.k = (rest + passes - 1) / passes;
            g.k += (R - g.k % R) % R;
            g.k = g.k < kfull ? g.k : kfull;
        }
        g.lo_bits = NTT_GROUP_LOG - g.k < s ? NTT_GROUP_LOG - g.k : s;
    }
#else
    else if (rest <= NTT_GROUP_LOG - NTT_MIN_LO) {
        g.k = rest;
        g.lo_bits = NTT_GROUP_LOG - rest < 3 ? NTT_GROUP_LOG - rest : 3;
    } else {
        unsigned passes = (rest + NTT_GROUP_LOG - 4) / (NTT_GROUP_LOG - 3);
        g.k = (rest + passes - 1) / passes;
        g.lo_bits = 3;
    }
#endif
    return g;
}

#ifndef NTT_SHOUP
#define NTT_SHOUP 1 /* twiddle products by fp_t::mul_shoup (standard-form twiddles and their quotients),
                          for twice the twiddle memory: with FF_MUL_AP 2^24 4.12 ms both curves
                          (NOTES studies 12, 15) */
#endif

#ifndef NTT_LAZY
#define NTT_LAZY 1 /* 1 (with NTT_SHOUP): the butterflies keep values below 2P (Shoup's product
                      unreduced, sums and differences mod 2P), reduced once at the last store.
                      H100 2^24, blocks of 2^9 with the per-stage tables to stage 22: BN254 3.69
                      ms against 3.77 without, BLS12-381 3.75 against 3.83 (NOTES study 18) */
#endif
#define NTT_M (NTT_SHOUP && NTT_LAZY ? 2 : 1) /* the butterflies' values are below NTT_M P */

#ifndef NTT_TW_ONE
#define NTT_TW_ONE 1 /* 1: no product by the twiddle 1 in the first round (half of stage 1's
                        products at radix 4, and a quarter of stage 2's at radix 8) */
#endif

#ifndef NTT_TW_COMPACT
#define NTT_TW_COMPACT 23 /* stages below this read per-stage contiguous twiddles (tables of up to
                             2^23 entries: 1 GiB more device memory than 18 at 2^24 and above,
                             counted by ntt_tw_bytes). Above it a butterfly gathers its twiddle
                             and quotient from the full table, a 32-byte sector each, and the
                             last passes wait on memory: H100 2^24 with blocks of 2^9, BN254
                             4.07 ms at 18, 3.84 at 21, 3.77 at 23 (NOTES study 18) */
#endif

/* The twiddles a group kernel reads: tw[t] = omega_n^t (t <= n/2) and, for the stages st <
 * c_log, the same values per stage side by side, twc[2^st + j] = tw[j << (log_n - 1 - st)], so
 * that neighbouring butterflies read neighbouring entries of a table that stays in cache; with
 * NTT_SHOUP each in standard form beside its quotient (twq, twcq). */
template <class fr>
struct ntt_tw {
    const fr *tw, *twq, *twc, *twcq;
    unsigned c_log;
};

/* log2 of the entries of the per-stage table at 2^log_n points */
static inline unsigned ntt_compact_log(unsigned log_n)
{
    unsigned c = log_n ? log_n - 1 : 0;
    return c < NTT_TW_COMPACT ? c : NTT_TW_COMPACT;
}

#ifndef NTT_MUL
#define NTT_MUL mul_eo /* 2^24: 5.1 ms, mul_sos 6.5 ms (radix 4, at most 64 registers) */
#endif
#ifndef NTT_MINB
#define NTT_MINB 6 /* resident blocks per SM the group kernel's register use must allow: 6 blocks
                      of 128 threads, 80 registers; 5 (96) and 8 (64) were 3 % and 4 % slower at
                      2^24 (H100, NOTES study 18); with blocks of 2^10, 3 an SM beat 4 (64
                      registers, 152 bytes of spills) by 2-3 % (study 17) */
#endif

/* the twiddle product: inlined, or one out-of-line copy (a round's unrolled products are
 * large code) */
#if NTT_MUL_CALL
template <class fr>
__device__ __noinline__ fr ntt_mul(fr a, fr b)
{
    return fr::NTT_MUL(a, b);
}
#else
template <class fr>
__device__ __forceinline__ fr ntt_mul(const fr &a, const fr &b)
{
    return fr::NTT_MUL(a, b);
}
#endif

/* An element in shared memory: its 16-byte quarters in separate planes of cnt entries, at the
 * position e ^ ((e >> 3) & 7). Every window of ntt_group_kernel then has the 8 threads of a
 * quarter warp touch 8 distinct 16-byte bank groups: with thread bits on e's bits 0-2 the
 * positions differ in bits 0-2; with thread bits on e's bits 3-5 (the first group's first
 * round) the swizzle moves them there; the windows at bits 1 and 2 mix both. */
template <class fr>
__device__ __forceinline__ void ntt_sm_put(uint4 *sm, unsigned cnt, unsigned e, const fr &x)
{
    unsigned p = e ^ ((e >> 3) & 7);
#pragma unroll
    for (int h = 0; h < fr::N / 4; h++)
        sm[h * cnt + p] = make_uint4(x.v[4 * h], x.v[4 * h + 1], x.v[4 * h + 2], x.v[4 * h + 3]);
}
template <class fr>
__device__ __forceinline__ fr ntt_sm_get(const uint4 *sm, unsigned cnt, unsigned e)
{
    unsigned p = e ^ ((e >> 3) & 7);
    fr x;
#pragma unroll
    for (int h = 0; h < fr::N / 4; h++) {
        uint4 q = sm[h * cnt + p];
        x.v[4 * h] = q.x, x.v[4 * h + 1] = q.y, x.v[4 * h + 2] = q.z, x.v[4 * h + 3] = q.w;
    }
    return x;
}

#ifndef NTT_WARP_SYNC
#define NTT_WARP_SYNC 0 /* 1: rounds whose elements stay in the same warps meet at __syncwarp (2^24:
                           BN254 4.98 against 4.91 ms, BLS12-381 4.87 against 4.76; 2^26 4 % / 2 %
                           faster; NOTES study 13) */
#endif

/* The window of a round of ntt_group_kernel: it starts at bit pos = lo_bits + t0 of e, moved
 * down to B - L at the top (where u0 = the window's bits already done) */
static inline __host__ __device__ unsigned ntt_round_pos(unsigned lo_bits, unsigned t0, unsigned B, unsigned L)
{
    unsigned pos = lo_bits + t0;
    return pos + L > B ? B - L : pos;
}
/* the bits of e that a thread index's bits from 5 up (its warp) select in a round at pos: a
 * thread's bit b < pos is e's bit b, a bit b >= pos is e's bit b + L (T = log2 threads) */
static inline __host__ __device__ unsigned ntt_warp_bits(unsigned pos, unsigned T, unsigned L)
{
    unsigned m = 0;
    for (unsigned b = 5; b < T; b++)
        m |= 1u << (b < pos ? b : b + L);
    return m;
}
/* whether every warp reads in the round at pos1 exactly the elements it wrote in the round at
 * pos0 */
static inline __host__ __device__ bool ntt_warp_same(unsigned pos0, unsigned pos1, unsigned T, unsigned L)
{
    return ntt_warp_bits(pos0, T, L) == ntt_warp_bits(pos1, T, L);
}
/* whether two rounds meet at a warp's barrier instead of the block's */
static inline __host__ __device__ bool ntt_warp_local(unsigned pos0, unsigned pos1, unsigned T, unsigned L)
{
    return NTT_WARP_SYNC && ntt_warp_same(pos0, pos1, T, L);
}

/* Stages s .. s+k-1 of one group. Index bits of an element: hi | mid (k bits) | lo (s bits).
 * A block takes one hi, 2^lo_bits consecutive lo values (lo_bits <= s, so global accesses
 * come in runs of 2^lo_bits elements) and all 2^k mid values: cnt = 2^B elements, B = k +
 * lo_bits <= NTT_GROUP_LOG, numbered e = mid << lo_bits | lo. Stage t pairs e's bit lo_bits
 * + t; its twiddle is tw[J * n / 2^(s+t+1)], J = (mid mod 2^t) << s | lo.
 *
 * Each of the 2^(B-L) threads holds 2^L elements in registers and does the stages in rounds
 * of L (radix 2^L): a round's window is L consecutive bits of e, the thread's elements are
 * the 2^L values of those bits, its other bits come from the thread index (low bits first,
 * so neighbouring threads touch neighbouring elements). Between rounds the elements go
 * through shared memory (one barrier); the first round reads from global memory (in
 * bit-reversed order for the first group), the last writes there. The last round's window
 * is the top L bits: its lower bits, already done, are carried without butterflies. The
 * rounds meet at __syncthreads, or at __syncwarp where each warp's elements stay its own
 * (ntt_warp_local: the warp index selects the same bits of e in both rounds; in the first
 * group the rounds of stages 0-5). */
template <class fr, int L>
__global__ __launch_bounds__(1u << (NTT_GROUP_LOG - L), NTT_MINB) void ntt_group_kernel(const fr *src, fr *dst, const ntt_tw<fr> tws,
                                                        unsigned log_n, unsigned s, unsigned k, unsigned lo_bits,
                                                        int bitrev_in)
{
    extern __shared__ uint4 smem_raw[];
    const unsigned E = 1u << L;
    unsigned B = k + lo_bits, cnt = 1u << B;
    unsigned chunks_log = s - lo_bits;
    size_t b = blockIdx.x;
    size_t lo_chunk = b & (((size_t)1 << chunks_log) - 1);
    size_t hi = b >> chunks_log;
    unsigned lmask = (1u << lo_bits) - 1;
    size_t base = (hi << (s + k)) | (lo_chunk << lo_bits);
    unsigned tid = threadIdx.x;
    fr x[E];
    unsigned t0 = 0, pos;
    for (;;) {
        /* window bits [pos, pos + L); butterflies on its local bits u0 .. L-1 */
        pos = ntt_round_pos(lo_bits, t0, B, L);
        unsigned u0 = lo_bits + t0 - pos;
        unsigned et = (tid & ((1u << pos) - 1)) | ((tid >> pos) << (pos + L));
        if (t0 == 0) {
#pragma unroll
            for (unsigned j = 0; j < E; j++) {
                unsigned e = et | (j << pos);
                size_t g = bitrev_in ? (size_t)(__brevll((unsigned long long)(base + e)) >> (64 - log_n))
                                     : base + ((size_t)(e >> lo_bits) << s) + (e & lmask);
                x[j] = fr::load(src + g);
            }
        } else {
#pragma unroll
            for (unsigned j = 0; j < E; j++)
                x[j] = ntt_sm_get<fr>(smem_raw, cnt, et | (j << pos));
        }
#pragma unroll
        for (unsigned u = 0; u < (unsigned)L; u++) {
            if (u < u0)
                continue;
            unsigned t = pos + u - lo_bits, st = s + t;
#pragma unroll
            for (unsigned j = 0; j < E; j++) {
                if (j & (1u << u))
                    continue;
                unsigned e0 = et | (j << pos);
                fr v = x[j | (1u << u)];
                /* the twiddle is 1 at stage 0, and where the first group's first round (s = 0,
                   pos = 0: J = j mod 2^u) takes j's low u bits zero */
                bool tw_one = st == 0 || (NTT_TW_ONE && s == 0 && pos == 0 && (j & ((1u << u) - 1)) == 0);
                if (!tw_one) {
                    size_t J = ((size_t)((e0 >> lo_bits) & ((1u << t) - 1)) << s) | (lo_chunk << lo_bits) |
                               (e0 & lmask);
                    size_t ti;
                    const fr *tb, *tq;
                    if (st < tws.c_log)
                        ti = ((size_t)1 << st) + J, tb = tws.twc, tq = tws.twcq;
                    else
                        ti = J << (log_n - 1 - st), tb = tws.tw, tq = tws.twq;
#if NTT_SHOUP
                    v = NTT_LAZY ? fr::mul_shoup_lazy(v, fr::load(tb + ti), fr::load(tq + ti))
                                 : fr::mul_shoup(v, fr::load(tb + ti), fr::load(tq + ti));
#else
                    v = ntt_mul<fr>(v, fr::load(tb + ti));
                    (void)tq;
#endif
                }
                x[j | (1u << u)] = fr::template sub_m<NTT_M>(x[j], v);
                x[j] = fr::template add_m<NTT_M>(x[j], v);
            }
        }
        t0 += L - u0;
        if (t0 >= k)
            break;
#pragma unroll
        for (unsigned j = 0; j < E; j++)
            ntt_sm_put<fr>(smem_raw, cnt, et | (j << pos), x[j]);
        if (ntt_warp_local(pos, ntt_round_pos(lo_bits, t0, B, L), B - L, L))
            __syncwarp();
        else
            __syncthreads();
    }
    unsigned et = (tid & ((1u << pos) - 1)) | ((tid >> pos) << (pos + L));
    bool last = s + k == log_n;
#pragma unroll
    for (unsigned j = 0; j < E; j++) {
        unsigned e = et | (j << pos);
        if (NTT_M == 2 && last)
            x[j] = fr::reduce_once(x[j].v, 0u);
        x[j].store(dst + base + ((size_t)(e >> lo_bits) << s) + (e & lmask));
    }
}

/* a[i] *= b[i] */
template <class fr>
__global__ __launch_bounds__(256) void fr_mul_vec_kernel(fr *a, const fr *b, size_t n)
{
    size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n)
        a[i] = a[i] * b[i];
}

/* a[i] *= c */
template <class fr>
__global__ __launch_bounds__(256) void fr_scale_kernel(fr *a, fr c, size_t n)
{
    size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n)
        a[i] = a[i] * c;
}

/* c[i] = a[i] * b[i] (the C evaluations, FORMATS.md 4 step 1) */
template <class fr>
__global__ __launch_bounds__(256) void fr_mul3_kernel(fr *c, const fr *a, const fr *b, size_t n)
{
    size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n)
        c[i] = a[i] * b[i];
}

/* h[i] = std(a[i] * b[i] - c[i]), written over a (FORMATS.md 4 step 3) */
template <class fr>
__global__ __launch_bounds__(256) void h_combine_kernel(fr *a, const fr *b, const fr *c, size_t n)
{
    size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n)
        a[i] = (a[i] * b[i] - c[i]).from_mont();
}

/* Sparse A/B evaluation (FORMATS.md 4 step 1) from a CSR by row: rows 0..n-1 are the A
 * matrix, n..2n-1 the B matrix. val[e] = coef * R^2 (zkey section 4), w std form, so
 * val * w * R^-1 = coef * w in Montgomery form. out = a (rows < n) then b (contiguous). */
template <class fr>
__global__ __launch_bounds__(256) void eval_ab_kernel(fr *out, const uint32_t *row_ptr, const uint32_t *col,
                                                      const fr *val, const fr *w, size_t rows)
{
    size_t r = (size_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (r >= rows)
        return;
    fr acc = fr::zero();
    for (uint32_t e = row_ptr[r], end = row_ptr[r + 1]; e < end; e++)
        acc = acc + val[e] * w[col[e]];
    out[r] = acc;
}

/* The twiddle tables in the form ntt_group_kernel takes: with NTT_SHOUP, tw[i] (Montgomery form)
 * becomes standard form in place and twq[i] its quotient floor(tw[i] 2^(32N) / P); without, the
 * tables stay as built and no quotients are needed. */
template <class fr>
__global__ __launch_bounds__(256) void ntt_shoup_kernel(fr *tw, fr *twq, size_t count)
{
    size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= count)
        return;
    fr wm = fr::load(tw + i);
    wm.from_mont().store(tw + i);
    fr::shoup_quotient_mont(wm).store(twq + i);
}

/* twc[i] = tw[j << (log_n - 1 - st)] for i = 2^st + j, 0 < i < count (twc[0] unused) */
template <class fr>
__global__ __launch_bounds__(256) void ntt_compact_kernel(fr *twc, const fr *tw, size_t count, unsigned log_n)
{
    size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= count)
        return;
    unsigned st = 0;
    while (st < 63 && (i >> (st + 1)) != 0)
        st++;
    size_t j = i - ((size_t)1 << st);
    fr::load(tw + (i ? j << (log_n - 1 - st) : 0)).store(twc + i);
}

template <class fr>
struct ntt_plan {
    unsigned log_n;
    fr *d_tw, *d_itw;   /* n/2 forward / inverse twiddles */
    fr *d_twq, *d_itwq; /* their quotients (NTT_SHOUP), else null */
    fr *d_twc, *d_itwc, *d_twcq, *d_itwcq; /* the per-stage tables, 2^ntt_compact_log(log_n) entries */
    fr *d_tmp;        /* n elements of scratch (the first group's output) */
};

static inline unsigned ntt_blocks(size_t n, unsigned t) { return (unsigned)((n + t - 1) / t); }

#if !defined(FF_HOST_EMU) || defined(CUDA_EMU_RT)
/* device bytes of the twiddle tables at 2^log_n points (ntt_powers_kernel's two of n/2 + 1
 * entries, and what ntt_plan_finish adds) */
template <class fr>
static size_t ntt_tw_bytes(unsigned log_n)
{
    size_t full = (((size_t)1 << log_n) / 2 + 1) * sizeof(fr), c = ((size_t)1 << ntt_compact_log(log_n)) * sizeof(fr);
    return (NTT_SHOUP ? 2 : 1) * 2 * (full + c);
}

/* ntt_plan_finish's kernels alone, into tables the caller placed */
template <class fr>
static cudaError_t ntt_plan_tables(ntt_plan<fr> &p, size_t count, cudaStream_t st)
{
    size_t cc = (size_t)1 << ntt_compact_log(p.log_n);
    if (NTT_SHOUP) {
        ntt_shoup_kernel<fr><<<ntt_blocks(count, 256), 256, 0, st>>>(p.d_tw, p.d_twq, count);
        ntt_shoup_kernel<fr><<<ntt_blocks(count, 256), 256, 0, st>>>(p.d_itw, p.d_itwq, count);
        ntt_compact_kernel<fr><<<ntt_blocks(cc, 256), 256, 0, st>>>(p.d_twcq, p.d_twq, cc, p.log_n);
        ntt_compact_kernel<fr><<<ntt_blocks(cc, 256), 256, 0, st>>>(p.d_itwcq, p.d_itwq, cc, p.log_n);
    }
    ntt_compact_kernel<fr><<<ntt_blocks(cc, 256), 256, 0, st>>>(p.d_twc, p.d_tw, cc, p.log_n);
    ntt_compact_kernel<fr><<<ntt_blocks(cc, 256), 256, 0, st>>>(p.d_itwc, p.d_itw, cc, p.log_n);
    return cudaGetLastError();
}

/* the rest of the plan's tables, once d_tw and d_itw (count = n/2 + 1 entries each) are built
 * by ntt_powers_kernel: with NTT_SHOUP the quotient tables (d_tw, d_itw to standard form in
 * place), then the per-stage tables */
template <class fr>
static cudaError_t ntt_plan_finish(ntt_plan<fr> &p, size_t count, cudaStream_t st)
{
    p.d_twq = p.d_itwq = p.d_twc = p.d_itwc = p.d_twcq = p.d_itwcq = nullptr;
    size_t cc = (size_t)1 << ntt_compact_log(p.log_n);
    fr **bufs[6] = {&p.d_twq, &p.d_itwq, &p.d_twcq, &p.d_itwcq, &p.d_twc, &p.d_itwc};
    for (int b = NTT_SHOUP ? 0 : 4; b < 6; b++) {
        cudaError_t e = cudaMalloc((void **)bufs[b], (b < 2 ? count : cc) * sizeof(fr));
        if (e != cudaSuccess)
            return e;
    }
    return ntt_plan_tables(p, count, st);
}

/* the plan's device buffers: the twiddles, the tables ntt_plan_finish added, the scratch (any
 * of them may be null) */
template <class fr>
static void ntt_plan_free(ntt_plan<fr> &p)
{
    fr *bufs[9] = {p.d_tw, p.d_itw, p.d_twq, p.d_itwq, p.d_twc, p.d_itwc, p.d_twcq, p.d_itwcq, p.d_tmp};
    for (fr *b : bufs)
        cudaFree(b);
    p.d_tw = p.d_itw = p.d_twq = p.d_itwq = p.d_twc = p.d_itwc = p.d_twcq = p.d_itwcq = p.d_tmp = nullptr;
}

/* natural order in and out; inverse=1 uses the inverse twiddles and does NOT scale by
 * 1/n (callers fold the scale into a following multiply) */
template <class fr>
static cudaError_t ntt_run(const ntt_plan<fr> &p, fr *d_a, int inverse, cudaStream_t st)
{
    unsigned log_n = p.log_n;
    size_t n = (size_t)1 << log_n;
    if (log_n == 0)
        return cudaSuccess;
    ntt_tw<fr> tws;
    tws.tw = inverse ? p.d_itw : p.d_tw;
    tws.twq = inverse ? p.d_itwq : p.d_twq;
    tws.twc = inverse ? p.d_itwc : p.d_twc;
    tws.twcq = inverse ? p.d_itwcq : p.d_twcq;
    tws.c_log = ntt_compact_log(log_n);
    size_t smem_max = ((size_t)1 << NTT_GROUP_LOG) * sizeof(fr);
    const int R = NTT_RADIX_LOG;
    cudaError_t e = cudaFuncSetAttribute(ntt_group_kernel<fr, R>, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                         (int)smem_max);
    if (e != cudaSuccess)
        return e;
    for (unsigned s = 0; s < log_n;) {
        ntt_group g = ntt_group_at(log_n, s);
        unsigned bits = g.k + g.lo_bits;
        size_t cnt = (size_t)1 << bits, blocks = n >> bits;
        /* one group: a single block, which reads everything before it writes: in place.
           Otherwise a -> tmp (gathering), tmp in place, last group tmp -> a. */
        bool first = s == 0, last = s + g.k == log_n;
        const fr *src = first ? d_a : p.d_tmp;
        fr *dst = last ? d_a : p.d_tmp;
        unsigned L = g.radix_log();
        auto kern = L == 3 ? ntt_group_kernel<fr, 3> : L == 2 ? ntt_group_kernel<fr, 2> : ntt_group_kernel<fr, 1>;
        kern<<<(unsigned)blocks, (unsigned)(cnt >> L), cnt * sizeof(fr), st>>>(src, dst, tws, log_n, s, g.k,
                                                                             g.lo_bits, first);
        s += g.k;
    }
    return cudaGetLastError();
}
#endif
