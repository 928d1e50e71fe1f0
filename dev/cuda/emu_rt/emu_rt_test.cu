/* emu_rt_test.cu - the emulated runtime (cuda_runtime.h) against what CUDA guarantees and what it
 * does not: its schedule must keep every order CUDA keeps (stream order, event waits, the legacy
 * default stream with blocking streams) and must, over seeds, break the orders CUDA does not keep
 * (two non-blocking streams without a wait, a non-blocking stream and the legacy stream), or it
 * would hide missing waits; barriers and __syncthreads_count must hold; a copy past its
 * allocation must stop the process. Built by tests/t_gpu_rt_emu.sh through emu_cu.py. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

static int fails;
#define CHECK(c, ...)                   \
    do {                                \
        if (!(c)) {                     \
            printf("FAIL: " __VA_ARGS__); \
            printf("\n");                \
            fails++;                    \
        }                               \
    } while (0)

static __global__ void add_one(int *p, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n)
        p[i] += 1;
}

/* each block reverses its 64 elements through shared memory; cnt gets the block's count of odd
   values by __syncthreads_count */
static __global__ void reverse64(int *p, int *cnt)
{
    extern __shared__ uint4 smem_raw[];
    int *sm = (int *)smem_raw;
    int t = threadIdx.x, b = blockIdx.x * 64;
    sm[t] = p[b + t];
    int odd = __syncthreads_count(p[b + t] & 1);
    p[b + t] = sm[63 - t];
    __syncthreads();
    if (t == 0)
        cnt[blockIdx.x] = odd;
}

/* host 5 -> d on s1, add_one on s2 (after s1's event when wait), d -> host; the value read */
static int copy_then_add(cudaStream_t s1, cudaStream_t s2, int wait, int *h, int *d, cudaEvent_t ev)
{
    h[0] = 5;
    cudaMemcpyAsync(d, h, 4, cudaMemcpyHostToDevice, s1);
    cudaEventRecord(ev, s1);
    if (wait)
        cudaStreamWaitEvent(s2, ev, 0);
    add_one<<<1, 32, 0, s2>>>(d, 1);
    cudaMemcpyAsync(h + 1, d, 4, cudaMemcpyDeviceToHost, s2);
    cudaStreamSynchronize(s2);
    cudaStreamSynchronize(s1);
    return h[1];
}

int main()
{
    int *h, *d, *c;
    cudaStream_t nb1, nb2, bl;
    cudaEvent_t ev;
    cudaHostAlloc((void **)&h, 4096, cudaHostAllocDefault);
    cudaMalloc((void **)&d, 4096);
    cudaMalloc((void **)&c, 64);
    cudaStreamCreateWithFlags(&nb1, cudaStreamNonBlocking);
    cudaStreamCreateWithFlags(&nb2, cudaStreamNonBlocking);
    cudaStreamCreate(&bl);
    cudaEventCreate(&ev);
    int kept = 1, broken = 0, legacy_kept = 1, legacy_broken = 0;
    for (int seed = 1; seed <= 64; seed++) {
        emu_reseed(seed);
        kept &= copy_then_add(nb1, nb2, 1, h, d, ev) == 6;
        broken += copy_then_add(nb1, nb2, 0, h, d, ev) != 6;
        legacy_kept &= copy_then_add(bl, nullptr, 0, h, d, ev) == 6;  /* blocking, then legacy */
        legacy_kept &= copy_then_add(nullptr, bl, 0, h, d, ev) == 6;  /* legacy, then blocking */
        legacy_broken += copy_then_add(nb1, nullptr, 0, h, d, ev) != 6; /* non-blocking, legacy */
    }
    CHECK(kept, "an event wait was not kept in some seed");
    CHECK(broken > 0, "two non-blocking streams without a wait ran in order in all 64 seeds");
    CHECK(legacy_kept, "the legacy default stream and a blocking stream ran out of order");
    CHECK(legacy_broken > 0, "a non-blocking stream and the legacy stream ran in order in all 64 seeds");
    printf("ordering: waits kept; unordered pairs broken in %d and %d of 64 seeds\n", broken, legacy_broken);

    for (int i = 0; i < 256; i++)
        h[i] = i * 7;
    cudaMemcpy(d, h, 256 * 4, cudaMemcpyHostToDevice);
    reverse64<<<4, 64, 64 * sizeof(int)>>>(d, c);
    cudaMemcpy(h + 256, d, 256 * 4, cudaMemcpyDeviceToHost);
    cudaMemcpy(h + 512, c, 16, cudaMemcpyDeviceToHost);
    int ok = 1;
    for (int b = 0; b < 4; b++) {
        int odd = 0;
        for (int t = 0; t < 64; t++) {
            ok &= h[256 + b * 64 + t] == (b * 64 + 63 - t) * 7;
            odd += ((b * 64 + t) * 7) & 1;
        }
        ok &= h[512 + b] == odd;
    }
    CHECK(ok, "a block's threads did not meet at __syncthreads (reversal or count wrong)");
    add_one<<<0, 32>>>(d, 1);
    CHECK(cudaGetLastError() == cudaErrorInvalidConfiguration, "an empty grid was not refused");
    CHECK(cudaGetLastError() == cudaSuccess, "cudaGetLastError did not clear the error");

    pid_t pid = fork();
    if (pid == 0) {
        freopen("/dev/null", "w", stderr);
        cudaMemcpy(d + 1020, h, 32, cudaMemcpyHostToDevice); /* 16 bytes past the allocation */
        _exit(0);
    }
    int st = 0;
    waitpid(pid, &st, 0);
    CHECK(WIFSIGNALED(st) && WTERMSIG(st) == SIGABRT, "a copy past its allocation did not stop the process");
    printf("%s\n", fails ? "EMU RT FAILED" : "EMU RT OK");
    return fails != 0;
}
