/* cub/cub.cuh (emulated) - the three CUB device algorithms src/gpu/msm.cuh uses, queued on the
 * emulated runtime's streams (cuda_runtime.h). A first call with no temporary storage asks for
 * its size, as with CUB; the sort is stable and reads only bits [begin_bit, end_bit) of a key. */
#pragma once
#include <algorithm>
#include <numeric>
#include <vector>

#include "cuda_runtime.h"

void emu_enqueue_op(cudaStream_t st, const char *what, std::function<void()> fn);
void emu_check_dev(const void *p, size_t n, const char *what);

/* CUB's first call of each algorithm, without storage, asks for the storage's size */
static inline bool emu_cub_query(void *tmp, size_t &tmp_bytes)
{
    if (tmp)
        return false;
    tmp_bytes = 256;
    return true;
}

namespace cub {
struct DeviceRadixSort {
    template <class K, class V, class N>
    static cudaError_t SortPairs(void *tmp, size_t &tmp_bytes, const K *keys_in, K *keys_out, const V *vals_in,
                                 V *vals_out, N n, int begin_bit = 0, int end_bit = sizeof(K) * 8,
                                 cudaStream_t st = 0)
    {
        if (emu_cub_query(tmp, tmp_bytes) || n <= 0)
            return cudaSuccess;
        size_t m = (size_t)n;
        emu_check_dev(keys_in, m * sizeof(K), "SortPairs keys_in");
        emu_check_dev(keys_out, m * sizeof(K), "SortPairs keys_out");
        emu_check_dev(vals_in, m * sizeof(V), "SortPairs vals_in");
        emu_check_dev(vals_out, m * sizeof(V), "SortPairs vals_out");
        emu_enqueue_op(st, "cub SortPairs", [=]() {
            K mask = (K)((end_bit - begin_bit >= (int)sizeof(K) * 8 ? ~(K)0 : (((K)1 << (end_bit - begin_bit)) - 1))
                         << begin_bit);
            std::vector<size_t> ix(m);
            std::iota(ix.begin(), ix.end(), 0);
            std::stable_sort(ix.begin(), ix.end(),
                             [&](size_t a, size_t b) { return (keys_in[a] & mask) < (keys_in[b] & mask); });
            std::vector<K> k(m);
            std::vector<V> v(m);
            for (size_t i = 0; i < m; i++) {
                k[i] = keys_in[ix[i]];
                v[i] = vals_in[ix[i]];
            }
            std::copy(k.begin(), k.end(), keys_out);
            std::copy(v.begin(), v.end(), vals_out);
        });
        return cudaSuccess;
    }
};
struct DeviceScan {
    template <class I, class O, class N>
    static cudaError_t ExclusiveSum(void *tmp, size_t &tmp_bytes, I in, O out, N n, cudaStream_t st = 0)
    {
        if (emu_cub_query(tmp, tmp_bytes) || n <= 0)
            return cudaSuccess;
        size_t m = (size_t)n;
        emu_check_dev(&in[0], m * sizeof(in[0]), "ExclusiveSum in");
        emu_check_dev(&out[0], m * sizeof(out[0]), "ExclusiveSum out");
        emu_enqueue_op(st, "cub ExclusiveSum", [=]() {
            typename std::remove_reference<decltype(out[0])>::type acc{};
            for (size_t i = 0; i < m; i++) {
                auto x = in[i];
                out[i] = acc;
                acc = acc + x;
            }
        });
        return cudaSuccess;
    }
};
struct DeviceSelect {
    template <class I, class F, class O, class C, class N>
    static cudaError_t Flagged(void *tmp, size_t &tmp_bytes, I in, F flags, O out, C *num_out, N n,
                               cudaStream_t st = 0)
    {
        if (emu_cub_query(tmp, tmp_bytes))
            return cudaSuccess;
        size_t m = n > 0 ? (size_t)n : 0;
        if (m)
            emu_check_dev(&flags[0], m * sizeof(flags[0]), "Flagged flags");
        emu_check_dev(num_out, sizeof *num_out, "Flagged num_selected");
        emu_enqueue_op(st, "cub Flagged", [=]() {
            size_t k = 0;
            for (size_t i = 0; i < m; i++)
                if (flags[i])
                    out[k++] = in[i];
            *num_out = (C)k;
        });
        return cudaSuccess;
    }
};
} // namespace cub
