/* fixed_base.h - C interface of the GPU fixed-base scalar multiplication (fixed_base.cuh)
 * that makes the points of `cuzk dev-circuit`'s proving key: out[i] = [k[i]]G for one
 * fixed generator G and millions of scalars k[i].
 *
 * The caller builds the table on the host (devsetup.h, dev_fb_*_init_w): entry
 * t[i * half + (d - 1)] = d * 2^(w i) * G, affine, for window i < nwin and 1 <= d <= half =
 * 2^(w-1), in the zkey's point layout (Montgomery little-endian limbs). A handle keeps one
 * such table on the device; run() takes Montgomery Fr scalars (32 bytes each) and writes
 * affine points in the zkey layout (all-zero = infinity), byte for byte what the CPU path
 * writes. One set of functions per curve (suffix _bn254, _bls12_381); a build without CUDA
 * links the stubs in gpu_nocuda.c, which fail with CUZK_ENODEV.
 */
#ifndef CUZK_GPU_FIXED_BASE_H
#define CUZK_GPU_FIXED_BASE_H

#include <stddef.h>

#include "util/err.h"

/* A table uploaded to device 0, for G1 or G2 of one curve. */
typedef struct gpu_fixed_base gpu_fixed_base;

/* gpu_fixed_base_g1_C / _g2_C: uploads h_table (nwin * 2^(w-1) affine points, w 2..16) and
 * returns the handle in *out. CUZK_ENODEV: no CUDA device; CUZK_ENOMEM / CUZK_EDEVICE.
 * gpu_fixed_base_run_C: h_out[i] = [h_k[i]]G for i < n (n may be 0), in chunks that fit the
 * device's free memory (the environment variable CUZK_TEST_FB_CHUNK, when set, caps the
 * chunk so that tests reach the chunk loop on small inputs).
 * gpu_fixed_base_device_C: the device's name, for the log.
 * gpu_fixed_base_free_C: releases the handle (NULL is fine). */
#define GPU_FIXED_BASE_DECLARE(C)                                                                   \
    cuzk_err gpu_fixed_base_g1_##C(gpu_fixed_base **out, const void *h_table, unsigned w,        \
                                   unsigned nwin, char *err);                                    \
    cuzk_err gpu_fixed_base_g2_##C(gpu_fixed_base **out, const void *h_table, unsigned w,        \
                                   unsigned nwin, char *err);                                    \
    cuzk_err gpu_fixed_base_run_##C(gpu_fixed_base *fb, void *h_out, const void *h_k, size_t n,  \
                                    char *err);                                                  \
    const char *gpu_fixed_base_device_##C(const gpu_fixed_base *fb);                             \
    void gpu_fixed_base_free_##C(gpu_fixed_base *fb);

GPU_FIXED_BASE_DECLARE(bn254)
GPU_FIXED_BASE_DECLARE(bls12_381)

#endif
