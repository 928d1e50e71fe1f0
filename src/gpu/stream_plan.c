/* stream_plan.c - resident or streamed placement of a key on a GPU (see stream_plan.h). */
#include "gpu/stream_plan.h"

#include <pthread.h>
#include <stdio.h>
#include <string.h>

static double gib(uint64_t b) { return (double)b / (double)(1ull << 30); }

/* the smallest power of two >= x (x >= 1) */
static uint64_t pow2_ceil(uint64_t x)
{
    uint64_t p = 1;
    while (p < x)
        p <<= 1;
    return p;
}

int gpu_plan_key(const gpu_plan_in *in, gpu_plan *out)
{
    memset(out, 0, sizeof *out);
    out->batch = 1;
    uint64_t resident = in->fixed + in->bases + in->msm_scratch, quarter = in->cap / 4;
    out->resident = resident;
    if (in->force != GPU_PLACE_STREAMED && resident <= in->avail) {
        out->need = resident;
        if (in->par_extra && out->need + in->par_extra <= in->avail &&
            (in->par_always || out->need + in->par_extra + quarter <= in->avail)) {
            out->par_sets = 1;
            out->need += in->par_extra;
        }
        uint64_t tb = in->table + (out->par_sets ? in->table_par : 0);
        if (in->table && out->need + tb <= in->avail && (in->table_forced || out->need + tb + quarter <= in->avail)) {
            out->table = 1;
            out->need += tb;
        }
        snprintf(out->why, sizeof out->why, "resident: the key needs %.2f GiB of the %.2f GiB it may use%s%s",
                 gib(out->need), gib(in->avail), out->table ? ", with the h table" : "",
                 in->table && !out->table ? " (no room for the h table)" : "");
        return 0;
    }
    if (in->force == GPU_PLACE_RESIDENT) {
        snprintf(out->why, sizeof out->why,
                 "the key needs %.2f GiB of device memory to stay resident, %.2f GiB may be used "
                 "(placement forced to resident)",
                 gib(resident), gib(in->avail));
        return -1;
    }
    /* streamed: the largest power-of-two chunk that fits, then as many partitions as fit */
    uint64_t top = in->points_max ? pow2_ceil(in->points_max) : STREAM_CHUNK_MIN;
    if (top > STREAM_CHUNK_MAX)
        top = STREAM_CHUNK_MAX;
    if (top < STREAM_CHUNK_MIN)
        top = STREAM_CHUNK_MIN;
    uint64_t chunk = 0;
    if (in->chunk_force) {
        chunk = in->chunk_force;
        if (in->fixed + in->stream_bytes(in->ctx, chunk, 1) > in->avail)
            chunk = 0;
    } else {
        for (uint64_t c = top; c >= STREAM_CHUNK_MIN && !chunk; c >>= 1)
            if (in->fixed + in->stream_bytes(in->ctx, c, 1) <= in->avail)
                chunk = c;
    }
    if (!chunk) {
        uint64_t least = in->fixed + in->stream_bytes(in->ctx, in->chunk_force ? in->chunk_force : STREAM_CHUNK_MIN, 1);
        snprintf(out->why, sizeof out->why,
                 "the key needs %.2f GiB of device memory resident, or %.2f GiB streamed (%.2f GiB of it for the "
                 "matrices, NTT and scalar buffers); %.2f GiB may be used",
                 gib(resident), gib(least), gib(in->fixed), gib(in->avail));
        return -1;
    }
    /* as many partitions a pass as fit, up to the number asked for (each shares every copy of
       the pass), then the sets kept on the device: those asked for, else the largest that still
       fit first */
    unsigned want = in->batch_want ? in->batch_want : 1, batch = 1;
    if (want > STREAM_BATCH_MAX)
        want = STREAM_BATCH_MAX;
    uint64_t kept = 0, force_kept = 0;
    unsigned sets = STREAM_SETS_ALL;
    if (in->sets_force) {
        sets = in->sets_force & STREAM_SETS_ALL;
        for (int i = 0; i < STREAM_SETS; i++)
            force_kept += sets >> i & 1 ? 0 : in->set_bytes[i];
    }
    while (batch < want && in->fixed + in->stream_bytes(in->ctx, chunk, batch + 1) + force_kept <= in->avail)
        batch++;
    uint64_t need = in->fixed + in->stream_bytes(in->ctx, chunk, batch);
    if (in->sets_force) {
        kept = force_kept;
        if (need + kept > in->avail) {
            snprintf(out->why, sizeof out->why,
                     "the key needs %.2f GiB of device memory with the sets asked for kept on the device "
                     "(%.2f GiB of bases); %.2f GiB may be used",
                     gib(need + kept), gib(kept), gib(in->avail));
            return -1;
        }
    } else if (in->force != GPU_PLACE_STREAMED) { /* forced streaming streams every set */
        for (;;) {
            int best = -1;
            for (int i = 0; i < STREAM_SETS; i++)
                if ((sets >> i & 1) && in->set_bytes[i] && need + kept + in->set_bytes[i] <= in->avail &&
                    (best < 0 || in->set_bytes[i] > in->set_bytes[best]))
                    best = i;
            if (best < 0)
                break;
            sets &= ~(1u << best);
            kept += in->set_bytes[best];
        }
    }
    out->streamed = 1;
    out->chunk = chunk;
    out->batch = batch;
    out->sets = sets;
    out->need = need + kept;
    char setw[96] = "";
    if (sets != STREAM_SETS_ALL) {
        size_t at = 0;
        for (int i = 0; i < STREAM_SETS; i++)
            if (!(sets >> i & 1))
                at += (size_t)snprintf(setw + at, sizeof setw - at, "%s%s", at ? "," : "; sets ", zkey_set_names[i]);
        snprintf(setw + at, sizeof setw - at, " on the device (%.2f GiB)", gib(kept));
    }
    if (in->force == GPU_PLACE_STREAMED && resident <= in->avail)
        snprintf(out->why, sizeof out->why,
                 "streamed (placement forced): chunks of %llu points, %u partition%s a pass, %.2f GiB on the "
                 "device%s",
                 (unsigned long long)chunk, batch, batch == 1 ? "" : "s", gib(out->need), setw);
    else
        snprintf(out->why, sizeof out->why,
                 "streamed: resident would need %.2f GiB, %.2f GiB may be used; chunks of %llu points, %u "
                 "partition%s a pass, %.2f GiB on the device%s",
                 gib(resident), gib(in->avail), (unsigned long long)chunk, batch, batch == 1 ? "" : "s",
                 gib(out->need), setw);
    return 0;
}

int gpu_plan_pick(const gpu_plan *cand, const int *ok, int n)
{
    int pick = -1;
    for (int c = 0; c < n; c++)
        if (ok[c] && (pick < 0 || (cand[pick].streamed && cand[c].chunk >= STREAM_CHUNK_TRADE * cand[pick].chunk)))
            pick = c;
    return pick;
}

/* ---- compaction of a set's points (stream_compact) ---- */

static int is_inf(const uint8_t *p, uint64_t pb)
{
    for (uint64_t i = 0; i < pb; i += 8) {
        uint64_t w;
        memcpy(&w, p + i, 8);
        if (w)
            return 0;
    }
    return 1;
}

typedef struct compact_part {
    const uint8_t *pts;
    uint64_t lo, hi, pb, at; /* points [lo, hi); at: first output slot */
    uint8_t *out;
    uint32_t *idx;
    uint64_t kept;
    int pass; /* 0: count, 1: copy */
} compact_part;

static void *compact_run(void *arg)
{
    compact_part *c = arg;
    uint64_t k = 0;
    for (uint64_t i = c->lo; i < c->hi; i++) {
        const uint8_t *p = c->pts + i * c->pb;
        if (is_inf(p, c->pb))
            continue;
        if (c->pass) {
            if (c->out)
                memcpy(c->out + (c->at + k) * c->pb, p, c->pb);
            if (c->idx)
                c->idx[c->at + k] = (uint32_t)i;
        }
        k++;
    }
    c->kept = k;
    return NULL;
}

#define COMPACT_THREADS_MAX 64
uint64_t stream_compact(const uint8_t *pts, uint64_t n, uint64_t pb, uint8_t *out, uint32_t *idx, int threads)
{
    compact_part part[COMPACT_THREADS_MAX];
    pthread_t th[COMPACT_THREADS_MAX];
    int started[COMPACT_THREADS_MAX];
    if (threads < 1)
        threads = 1;
    if (threads > COMPACT_THREADS_MAX)
        threads = COMPACT_THREADS_MAX;
    if ((uint64_t)threads > n / 4096 + 1)
        threads = (int)(n / 4096 + 1);
    for (int pass = 0; pass < 2; pass++) {
        if (pass && !out && !idx)
            break;
        uint64_t at = 0;
        for (int t = 0; t < threads; t++) {
            if (pass) {
                part[t].at = at;
                at += part[t].kept;
            } else {
                part[t] = (compact_part){pts, n * t / threads, n * (t + 1) / threads, pb, 0, out, idx, 0, 0};
            }
            part[t].pass = pass;
        }
        for (int t = 1; t < threads; t++)
            started[t] = pthread_create(&th[t], NULL, compact_run, &part[t]) == 0;
        compact_run(&part[0]);
        for (int t = 1; t < threads; t++) {
            if (started[t])
                pthread_join(th[t], NULL);
            else
                compact_run(&part[t]);
        }
    }
    uint64_t kept = 0;
    for (int t = 0; t < threads; t++)
        kept += part[t].kept;
    return kept;
}

/* tie rank of a set in COVER order (lower first) */
static int cover_rank(int set)
{
    static const int rank[STREAM_SETS] = {3, 1, 2, 4, 0}; /* A, B1, B2, C, H */
    return rank[set];
}

size_t stream_pass_order(const uint64_t cnt[STREAM_SETS], uint64_t chunk, unsigned streamed, int bpair, int mode,
                         stream_item *out)
{
    uint64_t nch[STREAM_SETS], done[STREAM_SETS] = {0};
    size_t n = 0, total = 0;
    for (int i = 0; i < STREAM_SETS; i++) {
        nch[i] = (cnt[i] + chunk - 1) / chunk;
        total += nch[i];
    }
    while (n < total) {
        int best = -1;
        for (int i = 0; i < STREAM_SETS; i++) {
            if (done[i] == nch[i] || (bpair && i == ZKEY_B2 && done[ZKEY_B1] < nch[ZKEY_B1]))
                continue;
            if (best < 0) {
                best = i;
                if (mode == STREAM_ORDER_SETS) /* the first set not done */
                    break;
                continue;
            }
            /* done[i] / nch[i] against done[best] / nch[best] */
            uint64_t lhs = done[i] * nch[best], rhs = done[best] * nch[i];
            if (lhs != rhs) {
                if (lhs < rhs)
                    best = i;
                continue;
            }
            int dev_i = !(streamed >> i & 1), dev_b = !(streamed >> best & 1);
            if (dev_i != dev_b) {
                if (dev_i)
                    best = i;
                continue;
            }
            if (mode == STREAM_ORDER_COVER && cover_rank(i) < cover_rank(best))
                best = i;
        }
        out[n++] = (stream_item){best, (uint32_t)done[best]++};
        if (bpair && best == ZKEY_B1 && done[ZKEY_B2] < nch[ZKEY_B2])
            out[n++] = (stream_item){ZKEY_B2, (uint32_t)done[ZKEY_B2]++};
    }
    return n;
}
