/* backend.h - the compute backend interface the Groth16 prover runs on.
 *
 * DESIGN. The prover (prover.h) is one procedure of named steps: evaluate a/b/c,
 * compute h (NTTs), five MSMs, assemble. The steps that cost time go through this
 * table, so the CPU backend and the CUDA backend share the procedure and differ only
 * in where the arithmetic runs. A backend instance is bound to one curve. A proving
 * key is attached once (key_attach) and the backend may keep whatever it likes
 * resident for it (the CUDA backend uploads the bases once). All buffers named here
 * are host memory owned by the caller (the daemon carves them out of a pinned pool).
 *
 * Element layouts (host, little-endian 64-bit limbs):
 *   Fr   4 limbs; "mont" = Montgomery form (R = 2^256), "std" = standard form.
 *   G1 Jacobian  X|Y|Z, each Fq in Montgomery form (R = 2^(64*FQ_LIMBS)), Z = 0 is infinity.
 *   G2 Jacobian  X.c0|X.c1|Y.c0|Y.c1|Z.c0|Z.c1.
 *   Affine bases are exactly as stored in the zkey (Montgomery LE, all-zero = infinity).
 */
#ifndef CUZK_GROTH16_BACKEND_H
#define CUZK_GROTH16_BACKEND_H

#include <stddef.h>
#include <stdint.h>

#include "curves/curve.h"
#include "groth16/formats.h"
#include "groth16/matrix.h"
#include "util/err.h"

#define G1_JAC_LIMBS_MAX 18 /* 3 x 6 limbs (BLS12-381) */
#define G2_JAC_LIMBS_MAX 36 /* 6 x 6 limbs */

/* One partition's host buffers. The caller allocates them (groth16_ws_size tells how
 * much) and owns them; backends read and write them in place. */
typedef struct groth16_ws {
    const uint8_t *wtns;  /* n_vars x 32 bytes, std form LE, 8-byte aligned (a copy of the
                             .wtns payload, which is only 4-byte aligned in the file) */
    uint64_t *a, *b, *c;  /* domain_size Fr each. After eval_abc: evaluations (mont).
                             After compute_h: a holds h (std form), b, c are scratch. */
    uint64_t msm[ZKEY_BASES][G2_JAC_LIMBS_MAX]; /* MSM results, Jacobian mont; G1 sets use
                                                   the first 3*FQ_LIMBS limbs */
    int pinned;           /* 1: wtns and a/b/c are page-locked host memory (gpu_host_alloc), so a
                             GPU backend copies straight from and to them; 0: pageable */
    /* Which device copy is current, for a device backend to skip re-uploading what it left
       there itself: a token (gpu_token_next, unique per call, never 0) that the backend stored
       both here and in its key state when its eval_abc left a/b/c on the device (abc_token) or
       its compute_h left h there (h_token). 0: none. groth16_step_abc/step_h clear them before
       the backend writes the host copies. */
    uint64_t abc_token, h_token;
    uint64_t w_token;     /* the same for the witness that eval_abc uploaded */
    /* 1: the caller runs this workspace's steps one after another on one backend and key and
       reads none of the host buffers between them (groth16_prove), so a device backend may
       leave a step's output on the device alone and skip its copy down (host_missing says
       which). 0: every step writes its output to the host buffers. */
    int keep_on_device;
    /* outputs the host buffers lack because the backend kept them on the device
       (keep_on_device): GROTH16_HOST_ABC (a/b/c of eval_abc), GROTH16_HOST_H (h of compute_h).
       A later step of this workspace that finds such an output gone from the device (a step of
       another workspace reused the buffers) computes it again from the witness. */
    unsigned host_missing;
    /* Optional phase hook (NULL: none). A device backend calls it around the copies the device
       has to wait for (not those overlapped with compute): GROTH16_PHASE_COPY when such a copy
       starts, GROTH16_PHASE_COMPUTE when device work resumes. A step starts in COMPUTE. */
    void (*phase)(void *ctx, int phase);
    void *phase_ctx;
    int urgent;           /* latency-critical (a critical job's partition): a device backend runs
                             its work ahead of other work on the device (stream priority) */
    uint64_t copy_wait_us; /* added to by a device backend: microseconds the device sat waiting
                              for a streamed chunk of the key's bases to arrive (also reported
                              through the phase hook while it lasts) */
    unsigned batch;       /* set by msm_batch: partitions proved in the same pass over the bases */
    int pre_slot;         /* a device backend's witness buffer that msm_prefetch filled for this
                             workspace, plus 1; 0: none (groth16_ws_init). msm_all and a release
                             of msm_prefetch set it back to 0 */
    void *early;          /* a device backend's MSMs that msm_early started for this workspace;
                             NULL: none (groth16_ws_init). msm_all and a release of msm_early
                             wait for them and set it back to NULL */
} groth16_ws;

enum { GROTH16_PHASE_COMPUTE = 0, GROTH16_PHASE_COPY = 1 };
enum { GROTH16_HOST_ABC = 1, GROTH16_HOST_H = 2 };

/* Options of key_attach. opts may be NULL (= all zero). */
typedef struct groth16_key_opts {
    const cuzk_matrix *matrix; /* NULL: the backend builds its own. Otherwise the CSR of this key
                                  (matrix.h), which the caller keeps alive until key_detach:
                                  backends reference it, they do not copy it. */
    /* called from key_attach as it goes: phase "matrix build" (the CSR built from the zkey, in
       steps of a record, matrix.h), "matrix" (the CSR uploaded or taken, bytes), "bases..."
       (bases copied or uploaded, bytes), with done/total in that phase's units. May be NULL. */
    void (*progress)(void *ctx, const char *phase, uint64_t done, uint64_t total);
    void *progress_ctx;
    /* device backends: bytes of device memory every key on the device together may use
       (--gpu-mem); 0: what the device has. A key that does not fit resident is streamed
       (groth16_key_info), one that fits neither way is refused with CUZK_ENOMEM. */
    uint64_t gpu_mem;
    /* device backends: partitions one streamed pass over the bases may serve (msm_batch); 0: 1 */
    unsigned batch_max;
    /* 1: the caller never runs eval_abc on this backend (the daemon evaluates a/b/c on the CPU),
       so a device backend keeps no constraint matrix on the device */
    int no_abc;
    /* 1: only eval_abc will run (a CPU backend serving a device backend's a/b/c): no bases */
    int abc_only;
} groth16_key_opts;

/* Where a backend keeps a key, for `cuzk prove -v` and /status (key_info). */
typedef struct groth16_key_info {
    const char *placement;   /* "resident" (bases on the device), "streamed" (bases in page-locked
                                host memory, copied in chunks for each MSM), "host" (CPU) */
    char why[256];           /* the decision in words */
    uint64_t device_bytes;   /* device memory the key holds */
    uint64_t resident_bytes; /* device memory it would hold resident, at least */
    uint64_t host_bytes;     /* page-locked host memory of its streamed bases (shared by devices) */
    uint64_t chunk_points;   /* streamed: points per chunk */
    unsigned batch_max;      /* streamed: partitions per pass */
    uint64_t stream_bytes;   /* streamed: bytes of bases one pass copies (points at infinity left out) */
    uint64_t points_skipped; /* streamed: points at infinity, never copied */
    unsigned sets_streamed;  /* streamed: the base sets that cross the bus (bit i: zkey set i, in
                                the order A, B1, B2, C, H); the others stay on the device */
    int table;               /* resident: the h MSM runs over a table of shifted bases */
    int abc_on_host;         /* the constraint matrix stays in host memory: a/b/c are evaluated
                                by the CPU (no_abc, or no room on the device) */
    int serial_steps;        /* a/b/c, h and the MSMs hold the device one at a time and use no
                                CPU (a lean streamed key with a/b/c on the device): partitions
                                gain nothing from overlapping their steps */
    /* streamed, since attach: passes, bytes copied, microseconds the device waited on copies */
    uint64_t passes, bytes_copied, copy_wait_us;
} groth16_key_info;

typedef struct cuzk_backend cuzk_backend;
struct cuzk_backend {
    const char *name;     /* "cpu", "gpu" */
    cuzk_curve_id curve;
    int device;           /* GPU ordinal, -1 for the CPU */
    void *impl;           /* backend private state */
    int key_isolated;     /* 1: the backend serialises the steps of one key itself and keeps
                             separate device buffers and streams per key, so steps of different
                             keys may run at the same time (the daemon lets a critical partition's
                             device steps run beside another key's); 0: the caller serialises */

    /* Prepares a key for proving (GPU: uploads bases and the matrix). *ks is opaque. z (and
       opts->matrix when given) must outlive the key state. */
    cuzk_err (*key_attach)(cuzk_backend *be, const zkey_file *z, const groth16_key_opts *opts, void **ks,
                           char *err);
    void (*key_detach)(cuzk_backend *be, void *ks);
    /* ws->a, b, c <- evaluations of the A, B, C=A*B polynomials on the domain (mont) */
    cuzk_err (*eval_abc)(cuzk_backend *be, void *ks, groth16_ws *ws, char *err);
    /* ws->a <- h (std form) by the odd-coset procedure (FORMATS.md 4, steps 2-3) */
    cuzk_err (*compute_h)(cuzk_backend *be, void *ks, groth16_ws *ws, char *err);
    /* ws->msm[set] <- sum_i scalar_i * base_i for all five sets (A, B1, B2, C, H):
       witness scalars for A/B1/B2, witness[n_public+1..] for C, h for H. */
    cuzk_err (*msm_all)(cuzk_backend *be, void *ks, groth16_ws *ws, char *err);
    /* Optional (NULL: none). Called before msm_all, outside any lock the caller holds around
       device steps: moves this workspace's witness to the device ahead of msm_all where the
       backend can (it may also do nothing), so that the device need not wait for that copy
       between another workspace's MSMs and these. msm_all (msm_batch: for each of its
       workspaces) consumes a prefetch, success or failure. release = 1 gives back what a
       prefetch took when msm_all will not run (after a failure or a cancel); harmless when
       nothing is held, and it never fails. A prefetch may
       wait for a buffer that other workspaces' prefetches hold until their msm_all or release;
       msm_all of a workspace not prefetched never waits for one. */
    cuzk_err (*msm_prefetch)(cuzk_backend *be, void *ks, groth16_ws *ws, int release, char *err);
    /* Optional (NULL: none). For a caller that runs one workspace's steps in turn and nothing
       else on the key meanwhile (groth16_prove): called before eval_abc, it starts the MSMs that
       read only the witness (A, B1, B2, C) where the device would otherwise wait for the CPU's
       eval_abc (a streamed key whose a/b/c the CPU evaluates), and returns once they hold the
       key's MSM lock; it may also do nothing. ws->early says they run. msm_all then runs the
       rest, waits for them and returns their failure (msm_batch waits for them and proves all
       five sets in its pass). release = 1, when msm_all will not run
       (a step failed), waits for them and drops their results; harmless when none run. */
    cuzk_err (*msm_early)(cuzk_backend *be, void *ks, groth16_ws *ws, int release, char *err);
    /* msm_all for n workspaces of one key (the h step of each done, h on the host), in as few
       passes over the bases as the key's batch size allows; NULL: the caller runs msm_all on
       each. Results as msm_all's, byte for byte. */
    cuzk_err (*msm_batch)(cuzk_backend *be, void *ks, groth16_ws **ws, int n, char *err);
    /* fills *out (NULL: the backend keeps keys in host memory, placement "host") */
    void (*key_info)(cuzk_backend *be, void *ks, groth16_key_info *out);
    void (*destroy)(cuzk_backend *be);
};

/* CPU backend: threads <= 0 means all online CPUs. */
cuzk_backend *cpu_backend_create(cuzk_curve_id curve, int threads, char *err);

/* Test hook of the CPU backend's device-stage calls (compute_h, msm_all, msm_batch), which
 * then fail with CUZK_ENOMEM as a GPU out of device memory does: CUZK_FAULT_OOM=N fails the
 * next N calls (of the whole process), and CUZK_FAULT_OOM_FILE=PATH fails every call while
 * PATH exists (a test clears the condition by removing it). CUZK_OK when neither applies.
 * Never set in production. */
cuzk_err cpu_fault_oom(char *err);

/* CUDA backend: NULL with CUZK_ENODEV-style message when no GPU is usable or the
 * build has no CUDA. device is the CUDA ordinal. */
cuzk_backend *gpu_backend_create(cuzk_curve_id curve, int device, char *err);
/* number of usable CUDA devices (0 when none or built without CUDA) */
int gpu_device_count(void);
/* Host memory for buffers a GPU copies from and to: page-locked (portable across devices)
 * when CUDA can give it, *pinned = 1; otherwise 64-byte aligned pageable memory, *pinned = 0
 * (always so without CUDA). NULL when out of memory. Page-locking is slow: callers keep and
 * reuse these buffers. Free with gpu_host_free(p, the same pinned). */
void *gpu_host_alloc(size_t bytes, int *pinned);
void gpu_host_free(void *p, int pinned);
/* a process-wide unique, nonzero token (groth16_ws.abc_token, h_token, w_token) */
uint64_t gpu_token_next(void);
/* device memory that attached keys hold on CUDA device `device`, after adding delta (the GPU
 * backends of both curves charge it, so --gpu-mem bounds all keys on a device together) */
uint64_t gpu_mem_charge(int device, int64_t delta);
/* page-locked host-to-device copy rate of CUDA device `device` over `bytes` bytes, GB/s (the
 * bound of a streamed key: its bytes over this rate); -1 and err when it cannot be measured */
double gpu_h2d_bandwidth(int device, size_t bytes, char *err);
/* bytes of memory of CUDA device `device` (0 when there is none) */
uint64_t gpu_device_mem(int device);

#endif
