/* fb_emu.cpp - runs the fixed-base kernels of src/gpu/fixed_base.cuh on the CPU (the PTX
 * carry-chain primitives emulated in C, as in emu_test.cpp; every launch one thread after
 * another) and compares their points byte for byte with the CPU path of dev-circuit, dumped
 * by fb_dump.c: G1 and G2, recoding edge cases and random scalars, the whole input in one
 * chunk and in chunks of 100. Catches recoding, indexing, batch-inversion and
 * Montgomery-form mistakes without a GPU.
 *   make -C dev/cuda fb-emu        (builds the library NO_CUDA into build/emu, then runs)
 *   fb_emu_<curve> DUMP_FILE
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <algorithm>
#include <vector>

#include "emu_ptx.h"

#ifdef FB_BLS12_381
#include "gpu/params_bls12_381.cuh"
#define GPU_P(x) BLS12_381_##x
#define GPU_SYM(x) x##_bls12_381
#else
#include "gpu/params_bn254.cuh"
#define GPU_P(x) BN254_##x
#define GPU_SYM(x) x##_bn254
#endif
#include "gpu/fixed_base.cuh"
using namespace GPU_SYM(fb);

/* a launch of blocks x threads, run one thread at a time */
template <class K>
static void launch(size_t blocks, unsigned threads, K body)
{
    gridDim.x = (unsigned)blocks;
    blockDim.x = threads;
    for (size_t b = 0; b < blocks; b++)
        for (unsigned t = 0; t < threads; t++) {
            blockIdx.x = (unsigned)b;
            threadIdx.x = t;
            body();
        }
}

/* the chunk loop of fb_run, on host memory; returns the number of points that differ */
template <class F>
static size_t check(const uint8_t *tab, const uint8_t *ks, const uint8_t *want, size_t n, unsigned w,
                    unsigned nwin, size_t chunk, const char *what)
{
    std::vector<xyzz_t<F>> acc(chunk);
    std::vector<F> pre(chunk);
    std::vector<affine_t<F>> out(n);
    for (size_t done = 0; done < n; done += chunk) {
        size_t m = std::min(chunk, n - done), threads2 = (m + EC_AFFINE_BATCH - 1) / EC_AFFINE_BATCH;
        launch((m + FB_THREADS - 1) / FB_THREADS, FB_THREADS, [&] {
            fb_mul_kernel<F>(acc.data(), ks + 32 * done, m, (const affine_t<F> *)tab, w, nwin);
        });
        launch((threads2 + FB_THREADS - 1) / FB_THREADS, FB_THREADS,
               [&] { xyzz_to_affine_kernel<F>(out.data() + done, acc.data(), pre.data(), m); });
    }
    size_t bad = 0;
    for (size_t i = 0; i < n; i++)
        if (memcmp(&out[i], want + i * sizeof(affine_t<F>), sizeof(affine_t<F>)) && bad++ < 5)
            printf("  %s: point %zu differs\n", what, i);
    printf("%s %s w=%u, %zu scalars, chunks of %zu: %s\n", bad ? "FAIL" : "ok:  ", what, w, n,
           chunk, bad ? "differs from the CPU" : "same bytes as the CPU");
    return bad;
}

int main(int argc, char **argv)
{
    uint64_t hdr[3];
    FILE *f = argc == 2 ? fopen(argv[1], "rb") : nullptr;
    if (!f || fread(hdr, 8, 3, f) != 3) {
        fprintf(stderr, "usage: %s DUMP_FILE (from fb_dump)\n", argv[0]);
        return 2;
    }
    unsigned w = (unsigned)hdr[0], nwin = (unsigned)hdr[1];
    size_t n = hdr[2], entries = (size_t)nwin << (w - 1);
    size_t a1 = sizeof(affine_t<fq>), a2 = sizeof(affine_t<fq2>);
    std::vector<uint8_t> t1(entries * a1), t2(entries * a2), ks(32 * n), o1(n * a1), o2(n * a2);
    for (std::vector<uint8_t> *v : {&t1, &t2, &ks, &o1, &o2})
        if (fread(v->data(), 1, v->size(), f) != v->size()) {
            fprintf(stderr, "%s: %s is short\n", argv[0], argv[1]);
            return 2;
        }
    fclose(f);
    size_t bad = 0;
    for (size_t chunk : {n, (size_t)100}) {
        bad += check<fq>(t1.data(), ks.data(), o1.data(), n, w, nwin, chunk, "G1");
        bad += check<fq2>(t2.data(), ks.data(), o2.data(), n, w, nwin, chunk, "G2");
    }
    return bad ? 1 : 0;
}
