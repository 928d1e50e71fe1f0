/* cuda_emu_rt.cpp - the emulated CUDA runtime of cuda_runtime.h (read its header first).
 *
 * Env: CUZK_EMU_SEED     the schedule's seed (default 1); 0 runs every operation when it is
 *                        queued (the program order, the schedule the host code was written for)
 *      CUZK_EMU_MEM      the device's memory in bytes, K/M/G suffix (default 8G)
 *      CUZK_EMU_TRACE=1  one stderr line an operation as it runs
 */
#include "cuda_runtime.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <ucontext.h>

#include <map>
#include <memory>
#include <mutex>
#include <vector>

emu_dim blockIdx, blockDim, gridDim;
thread_local emu_dim threadIdx;
uint4 smem_raw[(228 << 10) / sizeof(uint4)]; /* dynamic shared memory: a block at a time */

namespace {

struct op {
    uint64_t id;
    std::string what;
    std::function<void()> fn;
    std::vector<std::shared_ptr<op>> deps; /* besides the one before it on its stream */
    bool done = false;
    double t_done = 0; /* host clock when it ran, for cudaEventElapsedTime */
};
using op_p = std::shared_ptr<op>;

} // namespace

struct emu_stream {
    bool blocking; /* syncs with the legacy default stream */
    std::vector<op_p> q; /* not yet run, in order */
    op_p last;           /* the last queued (run or not) */
};
struct emu_event {
    op_p mark; /* the marker of the last record; null: never recorded (complete) */
};

namespace {

std::recursive_mutex g_mu;
emu_stream g_legacy{true, {}, nullptr};
std::vector<emu_stream *> g_streams{&g_legacy};
uint64_t g_next_id = 1, g_rng = 1;
int g_seed = -1, g_trace;
size_t g_mem_total, g_mem_used;
thread_local cudaError_t g_last_err;
std::map<const void *, int> g_smem_max;

enum kind { DEV = 1, PINNED = 2 };
struct alloc {
    size_t bytes;
    int kind;
};
std::map<uintptr_t, alloc> g_allocs;

size_t parse_size(const char *s, size_t dflt)
{
    if (!s || !*s)
        return dflt;
    char *end;
    double v = strtod(s, &end);
    switch (*end) {
    case 'K': case 'k': v *= 1024.0; break;
    case 'M': case 'm': v *= 1048576.0; break;
    case 'G': case 'g': v *= 1073741824.0; break;
    default: break;
    }
    return (size_t)v;
}

void seed_set(int seed)
{
    g_seed = seed;
    g_rng = 0x9e3779b97f4a7c15ull * (uint64_t)(seed + 1);
}

void init_once()
{
    if (g_seed >= 0)
        return;
    const char *s = getenv("CUZK_EMU_SEED");
    seed_set(s ? atoi(s) : 1);
    g_mem_total = parse_size(getenv("CUZK_EMU_MEM"), (size_t)8 << 30);
    g_trace = getenv("CUZK_EMU_TRACE") && atoi(getenv("CUZK_EMU_TRACE"));
}

uint64_t rnd()
{
    uint64_t z = (g_rng += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

double now_ms()
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec * 1e3 + t.tv_nsec / 1e6;
}

/* a defect the real device would not report (or would report as a crash): stop here */
[[noreturn]] __attribute__((format(printf, 1, 2))) void die(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    fprintf(stderr, "cuda-emu: ");
    vfprintf(stderr, fmt, ap);
    fprintf(stderr, "\n");
    va_end(ap);
    abort();
}

/* the allocation holding [p, p + n), or null */
const alloc *find(const void *p, size_t n)
{
    auto it = g_allocs.upper_bound((uintptr_t)p);
    if (it == g_allocs.begin())
        return nullptr;
    --it;
    uintptr_t a = it->first, x = (uintptr_t)p;
    if (x < a || x - a > it->second.bytes || n > it->second.bytes - (x - a))
        return nullptr;
    return &it->second;
}
/* the kind of the allocation holding p (DEV, PINNED), 0 for other host memory */
int kind_at(const void *p)
{
    const alloc *a = find(p, 1);
    return a ? a->kind : 0;
}
bool is_dev(const void *p) { return kind_at(p) == DEV; }
bool is_pinned(const void *p) { return kind_at(p) == PINNED; }

void check_dev(const void *p, size_t n, const char *what)
{
    const alloc *a = find(p, n);
    if (n && (!a || a->kind != DEV))
        die("%s: %p + %zu bytes is not inside one device allocation", what, p, n);
}
void check_host(const void *p, size_t n, const char *what)
{
    if (n && is_dev(p))
        die("%s: %p (%zu bytes) is device memory where host memory is expected", what, p, n);
}

bool ready(emu_stream *s)
{
    if (s->q.empty())
        return false;
    for (auto &d : s->q.front()->deps)
        if (!d->done)
            return false;
    return true;
}

void run_head(emu_stream *s)
{
    op_p o = s->q.front();
    s->q.erase(s->q.begin());
    if (g_trace)
        fprintf(stderr, "cuda-emu: run #%llu %s\n", (unsigned long long)o->id, o->what.c_str());
    if (o->fn)
        o->fn();
    o->fn = nullptr;
    o->deps.clear();
    o->done = true;
    o->t_done = now_ms();
}

/* runs one ready operation, chosen by the schedule; false when none is queued */
bool step()
{
    std::vector<emu_stream *> r;
    bool any = false;
    for (emu_stream *s : g_streams) {
        any |= !s->q.empty();
        if (ready(s))
            r.push_back(s);
    }
    if (!any)
        return false;
    if (r.empty()) {
        fprintf(stderr, "cuda-emu: queued operations wait on each other (an emulator defect)\n");
        abort();
    }
    run_head(r[g_seed == 0 ? 0 : rnd() % r.size()]);
    return true;
}

template <class P>
void drive(P done)
{
    while (!done())
        if (!step()) {
            fprintf(stderr, "cuda-emu: a wait that no queued operation can end (an emulator defect)\n");
            abort();
        }
}
void drive_all()
{
    while (step()) {
    }
}

emu_stream *strm(cudaStream_t s) { return s ? s : &g_legacy; }

op_p enqueue(cudaStream_t st, std::string what, std::function<void()> fn, op_p after = nullptr)
{
    init_once();
    emu_stream *s = strm(st);
    op_p o = std::make_shared<op>();
    o->id = g_next_id++;
    o->what = std::move(what);
    o->fn = std::move(fn);
    if (s->last && !s->last->done)
        o->deps.push_back(s->last);
    if (after && !after->done)
        o->deps.push_back(after);
    /* the legacy default stream: waits for, and is waited for by, every blocking stream */
    if (s == &g_legacy) {
        for (emu_stream *b : g_streams)
            if (b != s && b->blocking && b->last && !b->last->done)
                o->deps.push_back(b->last);
    } else if (s->blocking && g_legacy.last && !g_legacy.last->done) {
        o->deps.push_back(g_legacy.last);
    }
    s->last = o;
    s->q.push_back(o);
    if (g_seed == 0)
        drive_all();
    return o;
}

cudaError_t sync_op(const op_p &o)
{
    drive([&] { return o->done; });
    return cudaSuccess;
}

/* ---- fibers: a block's threads ----
   On x86-64 a fiber switch saves the callee-saved registers and the FP control words on its own
   stack and swaps stack pointers (emu_ctx_switch below): no system call, where swapcontext makes
   two (the signal mask). Elsewhere, and under ASan (which follows swapcontext's stacks), the
   ucontext calls. */
#if defined(__x86_64__) && !defined(__SANITIZE_ADDRESS__)
#define EMU_FAST_SWITCH 1
extern "C" void emu_ctx_switch(void **save_sp, void *to_sp);
asm(".text\n"
    ".globl emu_ctx_switch\n"
    ".type emu_ctx_switch,@function\n"
    "emu_ctx_switch:\n"
    "  pushq %rbp\n  pushq %rbx\n  pushq %r12\n  pushq %r13\n  pushq %r14\n  pushq %r15\n"
    "  subq $8, %rsp\n  stmxcsr (%rsp)\n  fnstcw 4(%rsp)\n"
    "  movq %rsp, (%rdi)\n  movq %rsi, %rsp\n"
    "  ldmxcsr (%rsp)\n  fldcw 4(%rsp)\n  addq $8, %rsp\n"
    "  popq %r15\n  popq %r14\n  popq %r13\n  popq %r12\n  popq %rbx\n  popq %rbp\n"
    "  ret\n"
    ".size emu_ctx_switch, .-emu_ctx_switch\n");
struct ctx_t {
    void *sp;
};
#else
#define EMU_FAST_SWITCH 0
typedef ucontext_t ctx_t;
#endif
struct fiber {
    ctx_t ctx;
    std::vector<char> stack;
    bool done;
};
ctx_t g_sched;
std::vector<fiber> g_fib;
const std::function<void()> *g_body;
unsigned g_cur;
int g_bar_sum, g_bar_result;
const size_t FIBER_STACK = 256 << 10;

void ctx_swap(ctx_t *save, ctx_t *to)
{
#if EMU_FAST_SWITCH
    emu_ctx_switch(&save->sp, to->sp);
#else
    swapcontext(save, to);
#endif
}

void fiber_main()
{
    (*g_body)();
    g_fib[g_cur].done = true;
    ctx_swap(&g_fib[g_cur].ctx, &g_sched);
}

/* a fresh context on f's stack that starts in fiber_main */
void ctx_make(fiber &f)
{
#if EMU_FAST_SWITCH
    uintptr_t top = ((uintptr_t)f.stack.data() + f.stack.size()) & ~(uintptr_t)15;
    uint64_t *sp = (uint64_t *)(top - 16);
    sp[0] = (uint64_t)(uintptr_t)&fiber_main; /* ret lands here with rsp = top - 8, as after a call */
    sp[1] = 0;
    sp -= 7; /* rbp rbx r12 r13 r14 r15 (zero), then the control words */
    memset(sp, 0, 7 * sizeof *sp);
    uint32_t cw[2] = {0x1f80, 0x037f}; /* MXCSR, x87 control word: the defaults */
    memcpy(sp, cw, sizeof cw);
    f.ctx.sp = sp;
#else
    getcontext(&f.ctx);
    f.ctx.uc_stack.ss_sp = f.stack.data();
    f.ctx.uc_stack.ss_size = f.stack.size();
    f.ctx.uc_link = nullptr;
    makecontext(&f.ctx, fiber_main, 0);
#endif
}

void set_tid(unsigned i)
{
    threadIdx.x = i % blockDim.x;
    threadIdx.y = i / blockDim.x % blockDim.y;
    threadIdx.z = i / (blockDim.x * blockDim.y);
}

void run_block(unsigned n, const std::function<void()> &body)
{
    g_body = &body;
    if (g_fib.size() < n)
        g_fib.resize(n);
    for (unsigned i = 0; i < n; i++) {
        fiber &f = g_fib[i];
        if (f.stack.empty())
            f.stack.resize(FIBER_STACK);
        ctx_make(f);
        f.done = false;
    }
    for (;;) {
        bool waiting = false;
        g_bar_sum = 0;
        for (unsigned i = 0; i < n; i++) {
            if (g_fib[i].done)
                continue;
            g_cur = i;
            set_tid(i);
            ctx_swap(&g_sched, &g_fib[i].ctx);
            waiting |= !g_fib[i].done;
        }
        if (!waiting)
            break;
        g_bar_result = g_bar_sum; /* every thread has reached the barrier (or left the kernel) */
    }
}

} // namespace

int emu_barrier(int pred)
{
    g_bar_sum += pred != 0;
    unsigned me = g_cur;
    ctx_swap(&g_fib[me].ctx, &g_sched);
    set_tid(me);
    return g_bar_result;
}

#define LOCK                                          \
    std::lock_guard<std::recursive_mutex> l_(g_mu); \
    init_once()

void emu_enqueue_kernel(const emu_cfg_t &c, const void *fn, const char *name, std::function<void()> body)
{
    LOCK;
    size_t threads = (size_t)c.block.x * c.block.y * c.block.z;
    size_t smax = 48 << 10;
    auto it = g_smem_max.find(fn);
    if (it != g_smem_max.end())
        smax = (size_t)it->second;
    if (!c.grid.x || !c.grid.y || !c.grid.z || !threads || threads > 1024 || c.smem > smax ||
        c.smem > sizeof smem_raw || c.grid.y > 65535 || c.grid.z > 65535) {
        if (g_trace)
            fprintf(stderr, "cuda-emu: launch refused: grid %u,%u,%u block %u,%u,%u smem %zu (max %zu): %s\n", c.grid.x,
                    c.grid.y, c.grid.z, c.block.x, c.block.y, c.block.z, c.smem, smax, name);
        g_last_err = cudaErrorInvalidConfiguration;
        return;
    }
    std::string what = std::string("kernel ") + name;
    emu_cfg_t cfg = c;
    enqueue(c.st, what, [cfg, body]() {
        gridDim = emu_dim{cfg.grid.x, cfg.grid.y, cfg.grid.z};
        blockDim = emu_dim{cfg.block.x, cfg.block.y, cfg.block.z};
        unsigned n = cfg.block.x * cfg.block.y * cfg.block.z;
        for (unsigned z = 0; z < cfg.grid.z; z++)
            for (unsigned y = 0; y < cfg.grid.y; y++)
                for (unsigned x = 0; x < cfg.grid.x; x++) {
                    blockIdx = emu_dim{x, y, z};
                    memset(smem_raw, 0xA5, cfg.smem);
                    run_block(n, body);
                }
    });
}

const char *cudaGetErrorString(cudaError_t e)
{
    switch (e) {
    case cudaSuccess: return "no error";
    case cudaErrorInvalidValue: return "invalid argument";
    case cudaErrorMemoryAllocation: return "out of memory";
    case cudaErrorInvalidConfiguration: return "invalid configuration argument";
    case cudaErrorNoDevice: return "no CUDA-capable device is detected";
    case cudaErrorInvalidDevice: return "invalid device ordinal";
    case cudaErrorNotReady: return "device not ready";
    default: return "unknown error";
    }
}
cudaError_t cudaGetLastError(void)
{
    cudaError_t e = g_last_err;
    g_last_err = cudaSuccess;
    return e;
}
cudaError_t cudaPeekAtLastError(void) { return g_last_err; }
cudaError_t cudaGetDeviceCount(int *n)
{
    *n = 1;
    return cudaSuccess;
}
cudaError_t cudaSetDevice(int d) { return d == 0 ? cudaSuccess : cudaErrorInvalidDevice; }
cudaError_t cudaGetDevice(int *d)
{
    *d = 0;
    return cudaSuccess;
}
cudaError_t cudaGetDeviceProperties(cudaDeviceProp *p, int d)
{
    LOCK;
    if (d != 0)
        return cudaErrorInvalidDevice;
    memset(p, 0, sizeof *p);
    snprintf(p->name, sizeof p->name, "cuda-emu (CPU)");
    p->totalGlobalMem = g_mem_total;
    p->multiProcessorCount = 4;
    p->major = 9;
    p->sharedMemPerBlockOptin = sizeof smem_raw;
    return cudaSuccess;
}
cudaError_t cudaMemGetInfo(size_t *free_b, size_t *total_b)
{
    LOCK;
    *total_b = g_mem_total;
    *free_b = g_mem_total > g_mem_used ? g_mem_total - g_mem_used : 0;
    return cudaSuccess;
}
cudaError_t cudaDeviceSynchronize(void)
{
    LOCK;
    drive_all();
    return cudaSuccess;
}
cudaError_t cudaDeviceGetStreamPriorityRange(int *least, int *greatest)
{
    *least = 0;
    *greatest = -5;
    return cudaSuccess;
}

cudaError_t cudaMalloc(void **p, size_t bytes)
{
    LOCK;
    *p = nullptr;
    if (!bytes)
        return cudaSuccess;
    size_t b = (bytes + 255) / 256 * 256;
    if (g_mem_used + b > g_mem_total)
        return cudaErrorMemoryAllocation;
    void *m = aligned_alloc(256, b);
    if (!m)
        return cudaErrorMemoryAllocation;
    memset(m, 0xA5, b); /* not zero: code that relies on zeroed device memory shows */
    g_allocs[(uintptr_t)m] = alloc{bytes, DEV};
    g_mem_used += b;
    *p = m;
    return cudaSuccess;
}
namespace {
/* cudaFree and cudaFreeHost: both wait for the device, then p must start an allocation of kind */
cudaError_t release(void *p, int kind, const char *call)
{
    if (!p)
        return cudaSuccess;
    drive_all();
    auto it = g_allocs.find((uintptr_t)p);
    if (it == g_allocs.end() || it->second.kind != kind)
        die("%s(%p): not a %s allocation", call, p, kind == DEV ? "device" : "page-locked");
    if (kind == DEV)
        g_mem_used -= (it->second.bytes + 255) / 256 * 256;
    g_allocs.erase(it);
    free(p);
    return cudaSuccess;
}
} // namespace

cudaError_t cudaFree(void *p)
{
    LOCK;
    return release(p, DEV, "cudaFree");
}
cudaError_t cudaHostAlloc(void **p, size_t bytes, unsigned flags)
{
    LOCK;
    (void)flags;
    size_t b = (bytes + 63) / 64 * 64 + 64;
    void *m = aligned_alloc(64, b);
    if (!m)
        return cudaErrorMemoryAllocation;
    g_allocs[(uintptr_t)m] = alloc{bytes, PINNED};
    *p = m;
    return cudaSuccess;
}
cudaError_t cudaMallocHost(void **p, size_t bytes) { return cudaHostAlloc(p, bytes, 0); }
cudaError_t cudaFreeHost(void *p)
{
    LOCK;
    return release(p, PINNED, "cudaFreeHost");
}

namespace {
const char *kind_name(cudaMemcpyKind k)
{
    static const char *n[] = {"HtoH", "HtoD", "DtoH", "DtoD", "default"};
    return n[(int)k];
}

/* queues a copy; pageable host memory behaves as the driver's staging does: a source is read
   when the call is made, a destination written before the call returns */
cudaError_t copy(void *dst, const void *src, size_t n, cudaMemcpyKind kind, cudaStream_t st, bool sync)
{
    if (!n)
        return cudaSuccess;
    if (kind == cudaMemcpyDefault)
        kind = is_dev(src) ? (is_dev(dst) ? cudaMemcpyDeviceToDevice : cudaMemcpyDeviceToHost)
                           : (is_dev(dst) ? cudaMemcpyHostToDevice : cudaMemcpyHostToHost);
    char what[96];
    snprintf(what, sizeof what, "copy %s %zu bytes", kind_name(kind), n);
    switch (kind) {
    case cudaMemcpyHostToDevice: check_dev(dst, n, what); check_host(src, n, what); break;
    case cudaMemcpyDeviceToHost: check_dev(src, n, what); check_host(dst, n, what); break;
    case cudaMemcpyDeviceToDevice: check_dev(src, n, what); check_dev(dst, n, what); break;
    default: check_host(src, n, what); check_host(dst, n, what); break;
    }
    bool src_pageable = (kind == cudaMemcpyHostToDevice || kind == cudaMemcpyHostToHost) && !is_pinned(src);
    bool dst_pageable = (kind == cudaMemcpyDeviceToHost || kind == cudaMemcpyHostToHost) && !is_pinned(dst);
    op_p o;
    if (src_pageable) {
        auto snap = std::make_shared<std::vector<uint8_t>>((const uint8_t *)src, (const uint8_t *)src + n);
        o = enqueue(st, what, [dst, snap]() { memcpy(dst, snap->data(), snap->size()); });
    } else {
        o = enqueue(st, what, [dst, src, n]() { memmove(dst, src, n); });
    }
    if (sync || dst_pageable)
        sync_op(o);
    return cudaSuccess;
}
} // namespace

cudaError_t cudaMemcpy(void *dst, const void *src, size_t bytes, cudaMemcpyKind kind)
{
    LOCK;
    return copy(dst, src, bytes, kind, nullptr, true);
}
cudaError_t cudaMemcpyAsync(void *dst, const void *src, size_t bytes, cudaMemcpyKind kind, cudaStream_t st)
{
    LOCK;
    return copy(dst, src, bytes, kind, st, false);
}
cudaError_t cudaMemcpy2DAsync(void *dst, size_t dpitch, const void *src, size_t spitch, size_t width, size_t height,
                              cudaMemcpyKind kind, cudaStream_t st)
{
    LOCK;
    if (width > dpitch || width > spitch)
        return cudaErrorInvalidValue;
    for (size_t r = 0; r < height; r++) /* row by row, in one stream order */
        copy((uint8_t *)dst + r * dpitch, (const uint8_t *)src + r * spitch, width, kind, st, false);
    return cudaSuccess;
}
cudaError_t cudaMemsetAsync(void *p, int v, size_t bytes, cudaStream_t st)
{
    LOCK;
    if (!bytes)
        return cudaSuccess;
    check_dev(p, bytes, "cudaMemset");
    enqueue(st, "memset", [p, v, bytes]() { memset(p, v, bytes); });
    return cudaSuccess;
}
cudaError_t cudaMemset(void *p, int v, size_t bytes)
{
    LOCK;
    cudaError_t e = cudaMemsetAsync(p, v, bytes, nullptr);
    drive_all();
    return e;
}
cudaError_t emu_memcpy_symbol(void *dst, const void *sym, size_t bytes, size_t off)
{
    LOCK;
    drive_all();
    memcpy(dst, (const uint8_t *)sym + off, bytes);
    return cudaSuccess;
}

cudaError_t cudaStreamCreateWithPriority(cudaStream_t *s, unsigned flags, int prio)
{
    LOCK;
    (void)prio;
    emu_stream *n = new emu_stream{!(flags & cudaStreamNonBlocking), {}, nullptr};
    g_streams.push_back(n);
    *s = n;
    return cudaSuccess;
}
cudaError_t cudaStreamCreateWithFlags(cudaStream_t *s, unsigned flags) { return cudaStreamCreateWithPriority(s, flags, 0); }
cudaError_t cudaStreamCreate(cudaStream_t *s) { return cudaStreamCreateWithPriority(s, 0, 0); }
cudaError_t cudaStreamDestroy(cudaStream_t s)
{
    LOCK;
    if (!s)
        return cudaErrorInvalidValue;
    drive([s] { return s->q.empty(); }); /* its queued work still runs */
    for (size_t i = 0; i < g_streams.size(); i++)
        if (g_streams[i] == s)
            g_streams.erase(g_streams.begin() + i);
    delete s;
    return cudaSuccess;
}
cudaError_t cudaStreamSynchronize(cudaStream_t s)
{
    LOCK;
    emu_stream *t = strm(s);
    if (t->last)
        return sync_op(t->last);
    return cudaSuccess;
}
cudaError_t cudaStreamQuery(cudaStream_t s)
{
    LOCK;
    step(); /* the device moves on while the host polls */
    emu_stream *t = strm(s);
    return !t->last || t->last->done ? cudaSuccess : cudaErrorNotReady;
}
cudaError_t cudaStreamWaitEvent(cudaStream_t s, cudaEvent_t e, unsigned flags)
{
    LOCK;
    (void)flags;
    if (!e)
        return cudaErrorInvalidValue;
    enqueue(s, "wait event", nullptr, e->mark);
    return cudaSuccess;
}
cudaError_t cudaEventCreate(cudaEvent_t *e)
{
    *e = new emu_event{};
    return cudaSuccess;
}
cudaError_t cudaEventCreateWithFlags(cudaEvent_t *e, unsigned flags)
{
    (void)flags;
    return cudaEventCreate(e);
}
cudaError_t cudaEventDestroy(cudaEvent_t e)
{
    LOCK;
    delete e;
    return cudaSuccess;
}
cudaError_t cudaEventRecord(cudaEvent_t e, cudaStream_t s)
{
    LOCK;
    if (!e)
        return cudaErrorInvalidValue;
    e->mark = enqueue(s, "event record", nullptr);
    return cudaSuccess;
}
cudaError_t cudaEventSynchronize(cudaEvent_t e)
{
    LOCK;
    if (!e)
        return cudaErrorInvalidValue;
    if (e->mark)
        return sync_op(e->mark);
    return cudaSuccess;
}
cudaError_t cudaEventQuery(cudaEvent_t e)
{
    LOCK;
    if (!e)
        return cudaErrorInvalidValue;
    if (e->mark && !e->mark->done)
        step();
    return !e->mark || e->mark->done ? cudaSuccess : cudaErrorNotReady;
}
cudaError_t cudaEventElapsedTime(float *ms, cudaEvent_t a, cudaEvent_t b)
{
    LOCK;
    if (!a || !b || !a->mark || !b->mark || !a->mark->done || !b->mark->done)
        return cudaErrorNotReady;
    *ms = (float)(b->mark->t_done - a->mark->t_done);
    return cudaSuccess;
}
cudaError_t emu_func_set_smem(const void *fn, int bytes)
{
    LOCK;
    if (bytes < 0 || (size_t)bytes > sizeof smem_raw)
        return cudaErrorInvalidValue;
    g_smem_max[fn] = bytes;
    return cudaSuccess;
}
void emu_enqueue_op(cudaStream_t st, const char *what, std::function<void()> fn)
{
    LOCK;
    enqueue(st, what, std::move(fn));
}
void emu_check_dev(const void *p, size_t n, const char *what)
{
    LOCK;
    check_dev(p, n, what);
}
void emu_reseed(int seed)
{
    LOCK;
    drive_all();
    seed_set(seed);
}
