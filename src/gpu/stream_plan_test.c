/* stream_plan_test.c - the placement planner (stream_plan.h) against a plain search over every
 * chunk and batch size, stream_compact against a one-thread loop, and the order of a pass's
 * chunks (stream_pass_order) against its rules and a model of the copies it overlaps. */
#include <stdlib.h>
#include <string.h>

#include "gpu/stream_plan.h"
#include "util/check.h"

/* a model of the streamed buffers: ring of 3 chunks of 200-byte points, 32-byte scalars, 60
   bytes of scratch a point, and per partition 1 MiB of buckets plus its scalars */
typedef struct model {
    uint64_t per_part;
} model;
static uint64_t model_bytes(void *ctx, uint64_t chunk, unsigned batch)
{
    const model *m = ctx;
    return chunk * (3 * 200 + 32 + 60) + (uint64_t)batch * (1u << 20) + (uint64_t)(batch - 1) * m->per_part;
}

/* the reference: the largest power of two chunk in [MIN, min(MAX, pow2 >= points)] that fits,
   then the largest batch <= want that fits */
static int ref_plan(const gpu_plan_in *in, uint64_t *chunk, unsigned *batch)
{
    uint64_t best = 0;
    for (uint64_t c = STREAM_CHUNK_MIN; c <= STREAM_CHUNK_MAX; c <<= 1) {
        if (c / 2 >= in->points_max && c > STREAM_CHUNK_MIN)
            break;
        if (in->fixed + in->stream_bytes(in->ctx, c, 1) <= in->avail)
            best = c;
    }
    if (!best)
        return -1;
    unsigned b = 0;
    for (unsigned t = 1; t <= in->batch_want && t <= STREAM_BATCH_MAX; t++)
        if (in->fixed + in->stream_bytes(in->ctx, best, t) <= in->avail)
            b = t;
    *chunk = best;
    *batch = b;
    return 0;
}

static void test_resident(void)
{
    model m = {1 << 20};
    gpu_plan_in in = {0};
    gpu_plan p;
    in.cap = in.avail = 100u << 20;
    in.fixed = 10u << 20;
    in.bases = 40u << 20;
    in.msm_scratch = 5u << 20;
    in.table = 30u << 20;
    in.par_extra = 20u << 20;
    in.points_max = 1 << 20;
    in.batch_want = 1;
    in.stream_bytes = model_bytes;
    in.ctx = &m;
    CHECK(gpu_plan_key(&in, &p) == 0 && !p.streamed, "55 MiB key in 100 MiB: resident (%s)", p.why);
    /* 55 + 20 par + 25 quarter = 100: fits exactly; then the table (30) no longer leaves a quarter */
    CHECK(p.par_sets && !p.table && p.need == (75u << 20), "par %d table %d need %llu", p.par_sets, p.table,
          (unsigned long long)p.need);
    in.table_forced = 1;
    in.par_extra = 0;
    CHECK(gpu_plan_key(&in, &p) == 0 && p.table && p.need == (85u << 20), "forced table: %d %llu", p.table,
          (unsigned long long)p.need);
    in.avail = 55u << 20; /* exactly the resident need */
    CHECK(gpu_plan_key(&in, &p) == 0 && !p.streamed && !p.table, "resident at exactly its need (%s)", p.why);
    in.avail--;
    CHECK(gpu_plan_key(&in, &p) == 0 && p.streamed, "one byte short: streamed (%s)", p.why);
    in.force = GPU_PLACE_RESIDENT;
    CHECK(gpu_plan_key(&in, &p) == -1 && strstr(p.why, "resident"), "forced resident that does not fit: %s", p.why);
    in.force = GPU_PLACE_STREAMED;
    in.avail = 100u << 20;
    CHECK(gpu_plan_key(&in, &p) == 0 && p.streamed && strstr(p.why, "forced"), "forced streamed: %s", p.why);
}

static void test_streamed_sweep(void)
{
    int bad = 0, n = 0;
    for (int rep = 0; rep < 4000; rep++) {
        model m = {(uint64_t)(rand() % 64) << 20};
        gpu_plan_in in = {0};
        gpu_plan p;
        in.cap = (uint64_t)(64 + rand() % 4096) << 20;
        in.avail = in.cap - (uint64_t)(rand() % 32) * (in.cap / 64);
        in.fixed = (uint64_t)(rand() % 2048) << 20;
        in.bases = (uint64_t)(1 + rand() % 8192) << 20;
        in.msm_scratch = (uint64_t)(rand() % 512) << 20;
        in.points_max = (uint64_t)1 + (uint64_t)rand() * 3 % ((uint64_t)1 << 27);
        in.batch_want = 1 + rand() % 12;
        in.force = rand() % 4 == 0 ? GPU_PLACE_STREAMED : GPU_PLACE_AUTO;
        in.stream_bytes = model_bytes;
        in.ctx = &m;
        int rc = gpu_plan_key(&in, &p);
        uint64_t resident = in.fixed + in.bases + in.msm_scratch;
        if (in.force == GPU_PLACE_AUTO && resident <= in.avail) {
            bad += rc != 0 || p.streamed || p.need != resident;
            continue;
        }
        uint64_t chunk = 0;
        unsigned batch = 0;
        int want = ref_plan(&in, &chunk, &batch);
        n++;
        if (want != rc || (rc == 0 && (p.chunk != chunk || p.batch != batch || !p.streamed ||
                                       p.need != in.fixed + model_bytes(&m, chunk, batch) || p.need > in.avail))) {
            if (bad++ < 5)
                CHECK(0, "plan rc %d chunk %llu batch %u, reference rc %d chunk %llu batch %u (%s)", rc,
                      (unsigned long long)p.chunk, p.batch, want, (unsigned long long)chunk, batch, p.why);
        }
        if (rc)
            bad += strstr(p.why, "GiB") == NULL; /* a refusal says what it needs */
    }
    CHECK(bad == 0, "%d of the random plans differ from the reference", bad);
    CHECK(n > 1000, "only %d streamed cases drawn", n);
}

static void test_chunk_force(void)
{
    model m = {0};
    gpu_plan_in in = {0};
    gpu_plan p;
    in.cap = in.avail = 1ull << 30;
    in.fixed = 100u << 20;
    in.bases = 4ull << 30;
    in.points_max = 3000000;
    in.chunk_force = 100003; /* not a power of two, does not divide the sets */
    in.batch_want = 3;
    in.stream_bytes = model_bytes;
    in.ctx = &m;
    CHECK(gpu_plan_key(&in, &p) == 0 && p.streamed && p.chunk == 100003 && p.batch == 3, "forced chunk: %llu %u %s",
          (unsigned long long)p.chunk, p.batch, p.why);
    in.chunk_force = 1ull << 24; /* does not fit */
    CHECK(gpu_plan_key(&in, &p) == -1, "a forced chunk too large is refused (%s)", p.why);
    in.chunk_force = 0;
    in.fixed = in.avail; /* nothing left for any chunk */
    CHECK(gpu_plan_key(&in, &p) == -1 && strstr(p.why, "streamed"), "no room: %s", p.why);
}

/* a lean key's arena: the streamed buffers overlay its NTT part (a floor under stream_bytes)
   instead of sitting beside it; 1.5 KB of buffers a point of chunk, 2^26-sized numbers */
typedef struct floor_model {
    uint64_t floor;
} floor_model;
static uint64_t floor_bytes(void *ctx, uint64_t chunk, unsigned batch)
{
    uint64_t b = chunk * 1536 + (uint64_t)batch * (64u << 20);
    return b > ((floor_model *)ctx)->floor ? b : ((floor_model *)ctx)->floor;
}

static void test_floor(void)
{
    const uint64_t gib = 1ull << 30, ntt = 9 * gib, persistent = 4700ull << 20;
    floor_model fm = {0};
    gpu_plan_in in = {0};
    gpu_plan side, shared;
    uint64_t chunk;
    unsigned batch;
    in.cap = in.avail = 16 * gib;
    in.bases = 47 * gib;
    in.points_max = 90000000;
    in.batch_want = 3;
    in.force = GPU_PLACE_STREAMED;
    in.stream_bytes = floor_bytes;
    in.ctx = &fm;
    in.fixed = persistent + ntt; /* side by side */
    CHECK(gpu_plan_key(&in, &side) == 0 && !ref_plan(&in, &chunk, &batch) && side.chunk == chunk &&
              side.batch == batch, "side by side: chunk %llu batch %u (reference %llu %u)",
          (unsigned long long)side.chunk, side.batch, (unsigned long long)chunk, batch);
    in.fixed = persistent;
    fm.floor = ntt; /* shared */
    CHECK(gpu_plan_key(&in, &shared) == 0 && !ref_plan(&in, &chunk, &batch) && shared.chunk == chunk &&
              shared.batch == batch, "shared: chunk %llu batch %u (reference %llu %u)",
          (unsigned long long)shared.chunk, shared.batch, (unsigned long long)chunk, batch);
    CHECK(shared.chunk >= 4 * side.chunk, "the shared arena's chunks (%llu) are not 4x the others' (%llu)",
          (unsigned long long)shared.chunk, (unsigned long long)side.chunk);
    CHECK(shared.need <= in.avail && shared.need >= persistent + ntt, "shared need %llu",
          (unsigned long long)shared.need);
    /* a chunk whose buffers are smaller than the NTT part costs the NTT part */
    in.chunk_force = 1 << 16;
    CHECK(gpu_plan_key(&in, &shared) == 0 && shared.need == persistent + ntt, "small chunk need %llu",
          (unsigned long long)shared.need);
}

/* the sets kept on the device, restated: in order of size (ties: the lower set), each that still
   fits beside the buffers of the chunk and `batch` partitions, and the sets kept before it */
static unsigned ref_sets(const gpu_plan_in *in, uint64_t chunk, unsigned batch, uint64_t *kept)
{
    int order[STREAM_SETS];
    for (int i = 0; i < STREAM_SETS; i++)
        order[i] = i;
    for (int i = 1; i < STREAM_SETS; i++) /* insertion sort: larger first, stable */
        for (int j = i; j > 0 && in->set_bytes[order[j]] > in->set_bytes[order[j - 1]]; j--) {
            int t = order[j];
            order[j] = order[j - 1];
            order[j - 1] = t;
        }
    unsigned sets = STREAM_SETS_ALL;
    uint64_t base = in->fixed + in->stream_bytes(in->ctx, chunk, batch);
    *kept = 0;
    for (int j = 0; j < STREAM_SETS; j++) {
        uint64_t b = in->set_bytes[order[j]];
        if (b && base + *kept + b <= in->avail) {
            sets &= ~(1u << order[j]);
            *kept += b;
        }
    }
    return sets;
}

static void test_sets(void)
{
    model m = {4u << 20};
    gpu_plan_in in = {0};
    gpu_plan p;
    in.fixed = 100u << 20;
    in.points_max = 1 << 16;
    in.batch_want = 4;
    in.stream_bytes = model_bytes;
    in.ctx = &m;
    uint64_t mib = 1u << 20, sz[STREAM_SETS] = {300, 300, 600, 280, 100};
    for (int i = 0; i < STREAM_SETS; i++)
        in.set_bytes[i] = sz[i] * mib;
    in.bases = 1580 * mib;
    uint64_t chunk_bytes = model_bytes(&m, 1 << 16, 1); /* the largest chunk the points need */
    /* caps that keep none, some and all but one set on the device (one partition a pass) */
    in.batch_want = 1;
    struct {
        uint64_t room; /* MiB beside fixed + one partition's chunk buffers */
        unsigned sets;
        const char *what;
    } cases[] = {
        {50, STREAM_SETS_ALL, "no set fits: all stream"},
        {100, 0x0f, "only H fits: H on the device"},
        {650, 0x1b, "B2 fits, then nothing: B2 on the device"},
        {700, 0x0b, "B2, then only H: B2 and H on the device"},
        {1000, 0x0a, "B2, A, then nothing but H: A, B2, H on the device"},
        {1300, 0x08, "all but C"},
    };
    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
        in.cap = in.avail = in.fixed + chunk_bytes + cases[c].room * mib;
        CHECK(gpu_plan_key(&in, &p) == 0 && p.streamed && p.chunk == 1 << 16 && p.sets == cases[c].sets,
              "%s: sets streamed %#x, want %#x (%s)", cases[c].what, p.sets, cases[c].sets, p.why);
        CHECK(p.need <= in.avail && (p.sets == STREAM_SETS_ALL) == (strstr(p.why, "on the device (") == NULL),
              "%s: need %llu of %llu; the decision names the sets kept: %s", cases[c].what,
              (unsigned long long)p.need, (unsigned long long)in.avail, p.why);
    }
    /* partitions come before sets: a second partition (5 MiB) takes its room first, then B2
       fits and H no longer does */
    in.batch_want = 2;
    in.cap = in.avail = in.fixed + chunk_bytes + 700 * mib + (1u << 20) + m.per_part - 1;
    CHECK(gpu_plan_key(&in, &p) == 0 && p.sets == 0x1b && p.batch == 2, "a second partition, then sets: %#x %u",
          p.sets, p.batch);
    in.batch_want = 1;
    CHECK(gpu_plan_key(&in, &p) == 0 && p.sets == 0x0b && p.batch == 1, "one partition asked for: sets %#x %u",
          p.sets, p.batch);
    in.batch_want = 4;
    /* asked for: exactly those stream, or a refusal that names the bytes */
    in.sets_force = 0x10; /* H streams, the rest stays */
    in.cap = in.avail = in.fixed + chunk_bytes + 1480 * mib;
    CHECK(gpu_plan_key(&in, &p) == 0 && p.sets == 0x10, "sets asked for: %#x (%s)", p.sets, p.why);
    in.avail -= mib;
    CHECK(gpu_plan_key(&in, &p) == -1 && strstr(p.why, "GiB"), "sets asked for that do not fit: %s", p.why);
    in.sets_force = 0;
    in.force = GPU_PLACE_STREAMED; /* forced streaming streams every set */
    in.avail = 100ull << 30;
    CHECK(gpu_plan_key(&in, &p) == 0 && p.sets == STREAM_SETS_ALL, "forced streaming: sets %#x", p.sets);
    in.force = GPU_PLACE_AUTO;
    /* random sizes and caps against the restatement */
    int bad = 0;
    for (int rep = 0; rep < 3000; rep++) {
        uint64_t total = 0;
        for (int i = 0; i < STREAM_SETS; i++)
            total += in.set_bytes[i] = (uint64_t)(rand() % 4 ? rand() % 2000 : 0) * mib;
        in.bases = total;
        in.batch_want = 1 + rand() % 6;
        in.cap = in.avail = in.fixed + chunk_bytes + (uint64_t)(rand() % 6000) * mib;
        if (in.fixed + in.bases + in.msm_scratch <= in.avail)
            continue; /* resident */
        uint64_t kept;
        unsigned batch = 1;
        while (batch < in.batch_want && in.fixed + model_bytes(&m, 1 << 16, batch + 1) <= in.avail)
            batch++;
        unsigned want = ref_sets(&in, 1 << 16, batch, &kept);
        int rc = gpu_plan_key(&in, &p);
        if (rc || p.sets != want || p.batch != batch || p.need != in.fixed + model_bytes(&m, 1 << 16, batch) + kept ||
            p.need > in.avail)
            if (bad++ < 5)
                CHECK(0, "rc %d sets %#x batch %u need %llu; reference sets %#x batch %u kept %llu (%s)", rc, p.sets,
                      p.batch, (unsigned long long)p.need, want, batch, (unsigned long long)kept, p.why);
    }
    CHECK(bad == 0, "%d random per-set plans differ from the reference", bad);
}

static void test_compact(void)
{
    for (int rep = 0; rep < 40; rep++) {
        uint64_t n = (uint64_t)(rand() % 50000), pb = rep % 2 ? 96 : 192;
        uint8_t *pts = calloc(n ? n : 1, pb), *out = malloc((n ? n : 1) * pb), *ref = malloc((n ? n : 1) * pb);
        uint32_t *idx = malloc((n ? n : 1) * 4), *ridx = malloc((n ? n : 1) * 4);
        int mode = rep % 4; /* 0: no infinity, 1: a few, 2: most, 3: all */
        for (uint64_t i = 0; i < n; i++) {
            int inf = mode == 3 || (mode == 1 && rand() % 50 == 0) || (mode == 2 && rand() % 5);
            if (!inf)
                pts[i * pb + (uint64_t)rand() % pb] = (uint8_t)(1 + rand() % 255);
        }
        uint64_t k = 0;
        for (uint64_t i = 0; i < n; i++) {
            int z = 1;
            for (uint64_t b = 0; b < pb; b++)
                z &= pts[i * pb + b] == 0;
            if (!z) {
                memcpy(ref + k * pb, pts + i * pb, pb);
                ridx[k++] = (uint32_t)i;
            }
        }
        int threads = 1 + rep % 7;
        uint64_t got = stream_compact(pts, n, pb, out, idx, threads);
        uint64_t cnt = stream_compact(pts, n, pb, NULL, NULL, threads);
        CHECK(got == k && cnt == k, "n %llu mode %d threads %d: kept %llu / %llu, reference %llu",
              (unsigned long long)n, mode, threads, (unsigned long long)got, (unsigned long long)cnt,
              (unsigned long long)k);
        CHECK(got != k || (!memcmp(out, ref, k * pb) && !memcmp(idx, ridx, k * 4)),
              "n %llu mode %d threads %d: compacted points or indices differ", (unsigned long long)n, mode, threads);
        free(pts), free(out), free(ref), free(idx), free(ridx);
    }
}

/* the choice among a key's plans: resident first, else the fewest compromises unless a later
   plan's chunks are STREAM_CHUNK_TRADE times larger (2^22 with a/b/c on the device beats 2^23
   with them on the CPU; 2^20 loses to 2^22), against a plain restatement */
static void test_pick(void)
{
    gpu_plan c[3];
    int ok[3];
    memset(c, 0, sizeof c);
    c[0].streamed = c[1].streamed = c[2].streamed = 1;
    c[0].chunk = 1u << 22, c[1].chunk = 1u << 23, c[2].chunk = 1u << 23;
    ok[0] = ok[1] = ok[2] = 1;
    CHECK(gpu_plan_pick(c, ok, 3) == 0, "2^22 on the device against 2^23 with compromises: %d", gpu_plan_pick(c, ok, 3));
    c[0].chunk = 1u << 20;
    CHECK(gpu_plan_pick(c, ok, 3) == 1, "2^20 on the device against 2^23 (8x) with a/b/c on the CPU: %d",
          gpu_plan_pick(c, ok, 3));
    c[1].chunk = 1u << 21;
    CHECK(gpu_plan_pick(c, ok, 3) == 2, "2^20 / 2^21 / 2^23: the lean plan (8x): %d", gpu_plan_pick(c, ok, 3));
    c[0].streamed = 0, c[0].chunk = 0;
    CHECK(gpu_plan_pick(c, ok, 3) == 0, "a resident plan first: %d", gpu_plan_pick(c, ok, 3));
    ok[0] = ok[1] = ok[2] = 0;
    CHECK(gpu_plan_pick(c, ok, 3) == -1, "no plan: %d", gpu_plan_pick(c, ok, 3));
    /* random sets of three against the rule restated */
    for (int rep = 0; rep < 2000; rep++) {
        for (int i = 0; i < 3; i++) {
            ok[i] = rand() % 4 != 0;
            c[i].streamed = i > 0 || rand() % 3 != 0;
            c[i].chunk = c[i].streamed ? (uint64_t)1 << (12 + rand() % 12) : 0;
        }
        int want = -1;
        for (int i = 0; i < 3; i++) {
            if (!ok[i])
                continue;
            if (want < 0)
                want = i;
            else if (c[want].streamed && c[i].chunk >= c[want].chunk * STREAM_CHUNK_TRADE)
                want = i;
        }
        CHECK(gpu_plan_pick(c, ok, 3) == want, "case %d: picked %d, want %d", rep, gpu_plan_pick(c, ok, 3), want);
    }
}

/* stream_pass_order: every chunk once, each set's in order, B2 right after its B1 chunk (bpair),
   the set with the smallest share done next, ties as the mode says; then the first items of a
   2^26 pass and, in a model of the copy stream and the device, the device's wait on copies */
static int order_rank(int mode, unsigned streamed, int set)
{
    static const int cover[STREAM_SETS] = {3, 1, 2, 4, 0};
    int dev = !(streamed >> set & 1);
    return (dev ? 0 : 100) + (mode == STREAM_ORDER_COVER ? cover[set] : set);
}

/* the device's wait for copies in a pass of the given order: a copy stream taking each streamed
   item's bytes in turn into a ring of STREAM_RING buffers (an item's copy waits for the bucket
   work of the item that last used its buffer), the device taking the items in turn, each once
   its copy is in. Returns the wait; *end the time the pass ends. */
static double order_model(const stream_item *it, size_t n, unsigned streamed, const double *copy_ms,
                          const double *work_ms, double *end)
{
    double t_copy = 0, t_dev = 0, wait = 0, used[STREAM_RING] = {0};
    size_t q = 0;
    for (size_t j = 0; j < n; j++) {
        int s = it[j].set;
        double ready = 0;
        if (streamed >> s & 1) {
            double st = t_copy > used[q % STREAM_RING] ? t_copy : used[q % STREAM_RING];
            t_copy = ready = st + copy_ms[s];
        }
        if (ready > t_dev) {
            wait += ready - t_dev;
            t_dev = ready;
        }
        t_dev += work_ms[s];
        if (streamed >> s & 1)
            used[q++ % STREAM_RING] = t_dev;
    }
    *end = t_dev;
    return wait;
}

static void test_order(void)
{
    static stream_item it[4096];
    int bad = 0;
    for (int rep = 0; rep < 3000; rep++) {
        uint64_t cnt[STREAM_SETS], chunk = 1 + (uint64_t)(rand() % 1000);
        int bpair = rand() % 2, mode = rand() % 3;
        unsigned streamed = (unsigned)rand() & STREAM_SETS_ALL;
        size_t want = 0;
        for (int i = 0; i < STREAM_SETS; i++) {
            cnt[i] = rand() % 4 == 0 ? 0 : (uint64_t)(rand() % 40000);
            if (bpair && i == ZKEY_B2)
                cnt[i] = cnt[ZKEY_B1];
            want += (cnt[i] + chunk - 1) / chunk;
        }
        if (want > 4096)
            continue;
        size_t n = stream_pass_order(cnt, chunk, streamed, bpair, mode, it);
        uint64_t done[STREAM_SETS] = {0}, nch[STREAM_SETS];
        for (int i = 0; i < STREAM_SETS; i++)
            nch[i] = (cnt[i] + chunk - 1) / chunk;
        int ok = n == want;
        for (size_t j = 0; ok && j < n; j++) {
            int s = it[j].set;
            ok = s >= 0 && s < STREAM_SETS && it[j].chunk == done[s];
            if (!ok)
                break;
            int follower = bpair && s == ZKEY_B2;
            if (follower)
                ok = j > 0 && it[j - 1].set == ZKEY_B1 && it[j - 1].chunk == it[j].chunk;
            else if (bpair && s == ZKEY_B1)
                ok = j + 1 < n && it[j + 1].set == ZKEY_B2 && it[j + 1].chunk == it[j].chunk;
            if (ok && !follower && mode != STREAM_ORDER_SETS)
                for (int i = 0; i < STREAM_SETS && ok; i++) {
                    if (i == s || done[i] == nch[i] || (bpair && i == ZKEY_B2))
                        continue;
                    uint64_t mine = done[s] * nch[i], other = done[i] * nch[s];
                    ok = mine < other ||
                         (mine == other && order_rank(mode, streamed, s) < order_rank(mode, streamed, i));
                }
            if (ok && !follower && mode == STREAM_ORDER_SETS)
                for (int i = 0; i < s && ok; i++)
                    ok = done[i] == nch[i];
            done[s]++;
        }
        for (int i = 0; ok && i < STREAM_SETS; i++)
            ok = done[i] == nch[i];
        if (!ok && bad++ < 5)
            CHECK(0, "order case %d (mode %d, bpair %d, streamed %#x, chunk %llu): bad order", rep, mode, bpair,
                  streamed, (unsigned long long)chunk);
    }
    CHECK(bad == 0, "stream_pass_order: %d bad orders", bad);

    /* a 2^26 BLS12-381 pass under 16 GiB: chunks of 2^23, every set 8 chunks, all streamed */
    uint64_t cnt[STREAM_SETS] = {1u << 26, 1u << 26, 1u << 26, 1u << 26, 1u << 26};
    const uint64_t K = 1u << 23;
    size_t n = stream_pass_order(cnt, K, STREAM_SETS_ALL, 1, STREAM_ORDER_COVER, it);
    CHECK(n == 40 && it[0].set == ZKEY_H && it[1].set == ZKEY_B1 && it[2].set == ZKEY_B2 && it[3].set == ZKEY_A &&
              it[4].set == ZKEY_C && it[5].set == ZKEY_H && it[5].chunk == 1,
          "cover order of a 2^26 pass: %zu items, first %d %d %d %d %d", n, it[0].set, it[1].set, it[2].set,
          it[3].set, it[4].set);
    /* a set on the device goes first on a tie (its chunks need no copy) */
    n = stream_pass_order(cnt, K, STREAM_SETS_ALL & ~1u, 1, STREAM_ORDER_COVER, it);
    CHECK(it[0].set == ZKEY_A && it[1].set == ZKEY_H && it[2].set == ZKEY_B1, "cover order, A on the device: %d %d %d",
          it[0].set, it[1].set, it[2].set);
    /* the model, with the costs of a chunk in that pass as measured on an H100 (dev/cuda/NOTES.md
       study 25): copies at 55.3 GB/s of 96-byte G1 and 192-byte G2 points; the device's time a
       chunk per set from the pass's profile (A 94, B1 83, B2 151, C 102, H 523 ms in 8 chunks) */
    const double g1 = (double)K * 96 / 55.3e6, copy_ms[STREAM_SETS] = {g1, g1, 2 * g1, g1, g1};
    const double work_ms[STREAM_SETS] = {94 / 8.0, 83 / 8.0, 151 / 8.0, 102 / 8.0, 523 / 8.0};
    double end_cover, end_lower, end_sets;
    double w_cover = order_model(it, stream_pass_order(cnt, K, STREAM_SETS_ALL, 1, STREAM_ORDER_COVER, it),
                                 STREAM_SETS_ALL, copy_ms, work_ms, &end_cover);
    double w_lower = order_model(it, stream_pass_order(cnt, K, STREAM_SETS_ALL, 1, STREAM_ORDER_LOWER, it),
                                 STREAM_SETS_ALL, copy_ms, work_ms, &end_lower);
    double w_sets = order_model(it, stream_pass_order(cnt, K, STREAM_SETS_ALL, 1, STREAM_ORDER_SETS, it),
                                STREAM_SETS_ALL, copy_ms, work_ms, &end_sets);
    printf("modelled 2^26 pass: device waits %.1f ms (cover, pass %.1f), %.1f (lower, %.1f), %.1f (sets, %.1f)\n",
           w_cover, end_cover, w_lower, end_lower, w_sets, end_sets);
    CHECK(w_cover < 20 && w_lower > 60 && w_sets > w_lower, "modelled waits: cover %.1f, lower %.1f, sets %.1f",
          w_cover, w_lower, w_sets);
}

int main(void)
{
    srand(12345);
    test_resident();
    test_streamed_sweep();
    test_chunk_force();
    test_floor();
    test_sets();
    test_compact();
    test_pick();
    test_order();
    printf("stream_plan_test: %d checks, %d failures\n", checks, failures);
    return failures != 0;
}
