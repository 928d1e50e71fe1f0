/* stream_plan.h - where a proving key lives on a GPU: resident or streamed, and the shape of
 * the streamed path (chunk size, partitions per pass). Plain C, so that CI tests it without a
 * GPU; the CUDA backend (backend_impl.cuh) fills the inputs from the key and the device.
 *
 * DESIGN. A key is RESIDENT when its bases, matrices, NTT buffers, MSM scratch and reserve fit in
 * what the device may give it (avail: the --gpu-mem cap less what other keys hold, and never more
 * than the device has free); its optional extras (the h MSM's table of shifted bases, scratch
 * for the five MSMs at once) are added only where they still leave a quarter of the cap free, as
 * before the cap existed. Otherwise it is STREAMED: the bases stay in page-locked host memory and
 * each MSM takes them in chunks through a ring of device buffers; everything else stays
 * resident. The chunk is the largest power of two of points, up to STREAM_CHUNK_MAX and no more
 * than the largest set needs, whose buffers fit (ring, chunk scalars, the chunk's MSM scratch,
 * one bucket set per partition); then as many partitions per pass (batch) as fit, up to the
 * number asked for, each with its own scalars and buckets (every copy of a pass serves them
 * all). Then PER SET: what is left keeps whole base sets on the device, the largest that fit
 * first (each saves its bytes on the bus in every pass; the pass takes their chunks from device
 * memory, in the same order and with the same buckets, so only the copies differ); the others
 * stream. Partitions come before sets because a second partition halves every set's bus time
 * per partition where a set kept on the device saves only its own (measured on an H100, 2^24,
 * 16 GiB, a job of 10: 406 ms a partition two a pass, 414 ms one a pass with the A set kept).
 * The chunk comes first because every chunk costs the device a sort, partial levels and a pass
 * over its buckets in each set: on the same H100, 2^24 under 24 GiB, chunks of 2^23 points with
 * four sets streamed proved in 321 ms, chunks of 2^22 with all five sets on the device in 363.
 * A key whose resident part alone does not fit with the smallest chunk is refused, with the
 * bytes it needs.
 */
#ifndef CUZK_GPU_STREAM_PLAN_H
#define CUZK_GPU_STREAM_PLAN_H

#include <stdint.h>

#include "groth16/formats.h"

#define STREAM_CHUNK_MAX ((uint64_t)1 << 23) /* points per chunk, at most (by default) */
#define STREAM_CHUNK_MIN ((uint64_t)1 << 12) /* points per chunk, at least */
#define STREAM_CHUNK_TRADE 4                 /* a plan with a/b/c on the CPU (or lean buffers) is
                                                taken for chunks this many times larger */
#define STREAM_BATCH_MAX 16                  /* partitions per streamed pass, at most */
#define STREAM_RING 3                        /* device buffers the chunks of bases cycle through */
#define STREAM_SETS ZKEY_BASES               /* base sets of a key (zkey order: A, B1, B2, C, H) */
#define STREAM_SETS_ALL ((1u << STREAM_SETS) - 1)

enum { GPU_PLACE_AUTO = 0, GPU_PLACE_RESIDENT = 1, GPU_PLACE_STREAMED = 2 };

typedef struct gpu_plan_in {
    uint64_t avail;       /* device bytes this key may take: min(cap - other keys, device free) */
    uint64_t cap;         /* the cap itself (device bytes in all, or --gpu-mem) */
    uint64_t fixed;       /* bytes either placement needs: matrices, NTT and scalar buffers, reserve */
    uint64_t bases;       /* the five base sets */
    uint64_t msm_scratch; /* resident: one MSM's scratch */
    uint64_t par_extra;   /* resident: the extra scratch of the five MSMs at once; 0: not for this key */
    int par_always;       /* the five at once whenever they fit (small keys), not only with a quarter free */
    uint64_t table;       /* resident: the h MSM's table (and its larger scratch); 0: none for this key */
    uint64_t table_par;   /* the table's extra scratch when the five MSMs run at once */
    int table_forced;     /* CUZK_GPU_MSM_TABLE=1: whenever it fits */
    uint64_t points_max;  /* points of the largest set as streamed (points at infinity left out) */
    uint64_t chunk_force; /* points per chunk asked for (CUZK_GPU_STREAM_CHUNK); 0: the planner's */
    unsigned batch_want;  /* partitions per streamed pass asked for (1 or more) */
    int force;            /* GPU_PLACE_*: CUZK_GPU_PLACEMENT */
    uint64_t set_bytes[STREAM_SETS]; /* streamed: device bytes of each set's bases kept resident */
    unsigned sets_force;  /* streamed: exactly these sets stream (bit i: set i), the others stay
                             on the device (CUZK_GPU_STREAM_SETS); 0: the planner's choice
                             (every set when the placement is forced to streamed) */
    /* device bytes of the streamed path's own buffers for chunks of `chunk` points and `batch`
       partitions a pass */
    uint64_t (*stream_bytes)(void *ctx, uint64_t chunk, unsigned batch);
    void *ctx;
} gpu_plan_in;

typedef struct gpu_plan {
    int streamed;  /* 0: resident */
    int table;     /* resident: the h MSM over a table */
    int par_sets;  /* resident: the five MSMs at once */
    uint64_t chunk;  /* streamed: points per chunk */
    unsigned sets;   /* streamed: the sets whose bases cross the bus (bit i: set i); the others
                        are on the device */
    unsigned batch;  /* streamed: partitions per pass (1 when resident) */
    uint64_t need;   /* device bytes of the plan */
    uint64_t resident; /* device bytes the key needs resident at least (no table, one MSM at a time) */
    char why[256];   /* the decision in words (cuzk prove -v, /status), or why it fails */
} gpu_plan;

/* 0 and *out on success; -1 when the key cannot be placed at all, or not with the sets asked
   for (out->why says why) */
int gpu_plan_key(const gpu_plan_in *in, gpu_plan *out);

/* Of n candidate plans of one key, ordered by compromises (0: a/b/c on the device; then the
 * ones that leave a/b/c to the CPU, then lean buffers), those with ok[i] set: the index of a
 * resident one, else of the one with the fewest compromises unless a later one takes chunks at
 * least STREAM_CHUNK_TRADE times as large; -1 when none is ok. */
int gpu_plan_pick(const gpu_plan *cand, const int *ok, int n);

/* Host side of a streamed set: the points of pts (n of pb bytes each, all-zero = infinity) that
 * are not at infinity, copied in order to out (when not NULL), and their indices to idx (when
 * not NULL); returns how many. With threads > 1 the scan and the copies run on that many
 * threads. The streamed MSM copies only these (a key's all-zero columns never cross the bus). */
uint64_t stream_compact(const uint8_t *pts, uint64_t n, uint64_t pb, uint8_t *out, uint32_t *idx, int threads);

/* The items of a streamed pass: chunk `chunk` of set `set`. */
typedef struct stream_item {
    int set;
    uint32_t chunk;
} stream_item;

enum {
    STREAM_ORDER_COVER = 0, /* shares balanced; ties: sets on the device, H, B1, B2, A, C */
    STREAM_ORDER_LOWER = 1, /* shares balanced; ties: sets on the device, then the lower set */
    STREAM_ORDER_SETS = 2   /* one set after the other: A, B1, B2, C, H */
};

/* The order of a pass's items, the chunks of its five sets, into out; returns their number
 * (sum over the sets of ceil(cnt / chunk)). Each set's chunks come in increasing order; with
 * bpair every B1 chunk is followed by the B2 chunk of the same points (B2 is not placed on its
 * own). streamed: bit i set when set i crosses the bus (the others are on the device).
 * Interleaved (COVER, LOWER) so that the copy stream and the device both keep busy: the next
 * item is always of the set with the smallest share of its chunks done. On a tie COVER takes a
 * set on the device first (it needs no copy, so it covers the ring's first copies), then the
 * h set, then B1 and B2: the h set's bucket work (random scalars) is the longest per byte
 * copied, the B pair's copies (a G1 and a G2 chunk) the longest per unit of work, so the ring
 * fills with the pair while the device adds up the h chunk. Modelled with the chunks' copy and
 * device times of a 2^26 pass under 16 GiB (H100, all five sets streamed), the device waits
 * 15 ms on copies in a pass of ~970 against LOWER's 85 ms (stream_plan_test.c). */
size_t stream_pass_order(const uint64_t cnt[STREAM_SETS], uint64_t chunk, unsigned streamed, int bpair, int mode,
                         stream_item *out);

#endif
