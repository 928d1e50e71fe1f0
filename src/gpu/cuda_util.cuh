/* cuda_util.cuh - CUDA error handling for the backend: CUDA_TRY records the failing call
 * and jumps to the function's single `fail:` label (it never returns early). */
#pragma once
#include <cuda_runtime.h>
#include <stdio.h>

/* requires locals: cudaError_t cu_err; const char *cu_what; */
#define CUDA_TRY(expr)                                    \
    do {                                                  \
        cu_err = (expr);                                  \
        if (cu_err != cudaSuccess) {                      \
            cu_what = #expr "@" __FILE__ ":" CUDA_STR(__LINE__); \
            goto fail;                                    \
        }                                                 \
    } while (0)
#define CUDA_STR2(x) #x
#define CUDA_STR(x) CUDA_STR2(x)
