/* tracker.c - stage and device intervals, idle-gap attribution, histograms and Chrome
 * trace export (see tracker.h for the attribution rule). */
#include "engine/tracker.h"

#include <inttypes.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { EV_STAGE = 0, EV_WORK = 1, EV_BUSY = 2, EV_GAP = 3 };

typedef struct trk_event {
    int64_t t0, t1;  /* unix us */
    uint32_t part;   /* EV_STAGE/EV_WORK: partition index */
    int8_t type;     /* EV_* */
    int8_t what;     /* EV_STAGE: trk_stage; EV_GAP: trk_gap */
    int16_t dev;     /* device, -1 for none */
    int16_t worker;  /* device worker, -1 for none */
    uint16_t batch;  /* EV_WORK: partitions of the pass over a streamed key's bases (0, 1: alone) */
    char job[26];    /* job id */
} trk_event;

#define N_BUCKETS 14
static const double bucket_le[N_BUCKETS] = {0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5,
                                            1, 2.5, 5, 10, 30, 60, 300}; /* seconds */

typedef struct trk_device {
    int *wstate;           /* per worker: TRK_BUSY or trk_gap */
    int cond;              /* TRK_BUSY or the gap reason now */
    int64_t seg_start;     /* us: start of the current segment */
    int64_t busy_us;       /* closed busy time, us */
    int64_t gap_us[GAP_COUNT];
} trk_device;

struct tracker {
    pthread_mutex_t mu;
    int n_dev, n_workers;
    int64_t created_us;
    trk_device *dev;
    trk_event *ring;
    size_t cap, head, count; /* ring: next write slot, events held */
    uint64_t hist[STAGE_COUNT][N_BUCKETS + 1];
    double hist_sum[STAGE_COUNT];
};

static const char *const gap_names[GAP_COUNT] = {"no_work", "budget", "synthesis", "finalizer", "lock", "copy"};
static const char *const stage_names[STAGE_COUNT] = {"queued", "admit", "synth", "ready", "device", "finalize"};

const char *trk_gap_name(trk_gap g)
{
    return (unsigned)g < GAP_COUNT ? gap_names[g] : "unknown";
}

const char *trk_stage_name(trk_stage s)
{
    return (unsigned)s < STAGE_COUNT ? stage_names[s] : "unknown";
}

tracker *tracker_create(int n_devices, int workers_per_device, size_t ring_events, int64_t now_us)
{
    if (n_devices < 1)
        n_devices = 1;
    if (workers_per_device < 1)
        workers_per_device = 1;
    if (ring_events < 16)
        ring_events = 16;
    tracker *t = calloc(1, sizeof *t);
    if (!t)
        return NULL;
    t->dev = calloc((size_t)n_devices, sizeof *t->dev);
    t->ring = calloc(ring_events, sizeof *t->ring);
    if (!t->dev || !t->ring)
        goto fail;
    pthread_mutex_init(&t->mu, NULL);
    t->n_dev = n_devices;
    t->n_workers = workers_per_device;
    t->cap = ring_events;
    t->created_us = now_us;
    for (int d = 0; d < n_devices; d++) {
        t->dev[d].wstate = calloc((size_t)workers_per_device, sizeof(int));
        if (!t->dev[d].wstate)
            goto fail;
        for (int w = 0; w < workers_per_device; w++)
            t->dev[d].wstate[w] = GAP_NO_WORK;
        t->dev[d].cond = GAP_NO_WORK;
        t->dev[d].seg_start = now_us;
    }
    return t;
fail:
    if (t->dev)
        for (int d = 0; d < n_devices; d++)
            free(t->dev[d].wstate);
    free(t->dev);
    free(t->ring);
    free(t);
    return NULL;
}

void tracker_destroy(tracker *t)
{
    if (!t)
        return;
    for (int d = 0; d < t->n_dev; d++)
        free(t->dev[d].wstate);
    free(t->dev);
    free(t->ring);
    pthread_mutex_destroy(&t->mu);
    free(t);
}

int tracker_n_devices(const tracker *t)
{
    return t->n_dev;
}

static trk_event *ring_put(tracker *t)
{
    trk_event *ev = &t->ring[t->head];
    t->head = (t->head + 1) % t->cap;
    if (t->count < t->cap)
        t->count++;
    memset(ev, 0, sizeof *ev);
    return ev;
}

/* i-th oldest event held */
static const trk_event *ring_at(const tracker *t, size_t i)
{
    return &t->ring[(t->head + t->cap - t->count + i) % t->cap];
}

void tracker_stage(tracker *t, const char *job, uint32_t part, trk_stage stage, int dev, int worker,
                   int64_t t0_us, int64_t t1_us)
{
    tracker_stage_batch(t, job, part, stage, dev, worker, t0_us, t1_us, 0);
}

void tracker_stage_batch(tracker *t, const char *job, uint32_t part, trk_stage stage, int dev, int worker,
                         int64_t t0_us, int64_t t1_us, unsigned batch)
{
    if ((unsigned)stage >= STAGE_COUNT)
        return;
    if (t1_us < t0_us)
        t1_us = t0_us;
    double sec = (double)(t1_us - t0_us) / 1e6;
    pthread_mutex_lock(&t->mu);
    int b = 0;
    while (b < N_BUCKETS && sec > bucket_le[b])
        b++;
    t->hist[stage][b]++;
    t->hist_sum[stage] += sec;
    trk_event *ev = ring_put(t);
    ev->type = stage == STAGE_DEVICE && worker >= 0 ? EV_WORK : EV_STAGE;
    ev->what = (int8_t)stage;
    ev->t0 = t0_us;
    ev->t1 = t1_us;
    ev->part = part;
    ev->dev = (int16_t)dev;
    ev->worker = (int16_t)worker;
    ev->batch = (uint16_t)batch;
    snprintf(ev->job, sizeof ev->job, "%s", job ? job : "");
    pthread_mutex_unlock(&t->mu);
}

/* the device's condition from its workers' states */
static int device_cond(const tracker *t, const trk_device *d)
{
    int best = GAP_NO_WORK;
    for (int w = 0; w < t->n_workers; w++) {
        if (d->wstate[w] == TRK_BUSY)
            return TRK_BUSY;
        if (d->wstate[w] > best)
            best = d->wstate[w];
    }
    return best;
}

static void close_segment(tracker *t, int dev, trk_device *d, int64_t now_us)
{
    int64_t len = now_us - d->seg_start;
    if (len <= 0)
        return;
    if (d->cond == TRK_BUSY)
        d->busy_us += len;
    else
        d->gap_us[d->cond] += len;
    trk_event *ev = ring_put(t);
    ev->type = d->cond == TRK_BUSY ? EV_BUSY : EV_GAP;
    ev->what = (int8_t)(d->cond == TRK_BUSY ? 0 : d->cond);
    ev->t0 = d->seg_start;
    ev->t1 = now_us;
    ev->dev = (int16_t)dev;
    ev->worker = -1;
}

void tracker_worker_set(tracker *t, int dev, int worker, int state, int64_t now_us)
{
    if (dev < 0 || dev >= t->n_dev || worker < 0 || worker >= t->n_workers)
        return;
    if (state != TRK_BUSY && (state < 0 || state >= GAP_COUNT))
        return;
    pthread_mutex_lock(&t->mu);
    trk_device *d = &t->dev[dev];
    d->wstate[worker] = state;
    int cond = device_cond(t, d);
    if (cond != d->cond) {
        if (now_us < d->seg_start)
            now_us = d->seg_start;
        close_segment(t, dev, d, now_us);
        d->cond = cond;
        d->seg_start = now_us;
    }
    pthread_mutex_unlock(&t->mu);
}

void tracker_device_totals(tracker *t, int dev, int64_t now_us, int64_t *busy_us, int64_t *gap_us)
{
    pthread_mutex_lock(&t->mu);
    if (dev < 0 || dev >= t->n_dev) {
        *busy_us = 0;
        memset(gap_us, 0, GAP_COUNT * sizeof *gap_us);
        pthread_mutex_unlock(&t->mu);
        return;
    }
    trk_device *d = &t->dev[dev];
    *busy_us = d->busy_us;
    memcpy(gap_us, d->gap_us, GAP_COUNT * sizeof *gap_us);
    int64_t open = now_us > d->seg_start ? now_us - d->seg_start : 0;
    if (d->cond == TRK_BUSY)
        *busy_us += open;
    else
        gap_us[d->cond] += open;
    pthread_mutex_unlock(&t->mu);
}

/* busy microseconds of dev within [a, b] (held lock) */
static int64_t busy_within(const tracker *t, int dev, int64_t a, int64_t b)
{
    int64_t sum = 0;
    for (size_t i = 0; i < t->count; i++) {
        const trk_event *ev = ring_at(t, i);
        if (ev->type != EV_BUSY || ev->dev != dev || ev->t1 <= a || ev->t0 >= b)
            continue;
        int64_t lo = ev->t0 > a ? ev->t0 : a, hi = ev->t1 < b ? ev->t1 : b;
        sum += hi - lo;
    }
    const trk_device *d = &t->dev[dev];
    if (d->cond == TRK_BUSY && d->seg_start < b) {
        int64_t lo = d->seg_start > a ? d->seg_start : a;
        sum += b - lo;
    }
    return sum;
}

double tracker_busy_ratio(tracker *t, int dev, int64_t window_us, int64_t now_us)
{
    if (dev < 0 || dev >= t->n_dev)
        return 0;
    if (window_us <= 0) {
        int64_t busy, gaps[GAP_COUNT];
        tracker_device_totals(t, dev, now_us, &busy, gaps);
        int64_t span = now_us - t->created_us;
        return span > 0 ? (double)busy / (double)span : 0;
    }
    pthread_mutex_lock(&t->mu);
    int64_t a = now_us - window_us;
    if (a < t->created_us)
        a = t->created_us;
    int64_t busy = busy_within(t, dev, a, now_us);
    pthread_mutex_unlock(&t->mu);
    return now_us > a ? (double)busy / (double)(now_us - a) : 0;
}

json_t *tracker_timeline(tracker *t, int64_t window_us, int64_t step_us, int64_t now_us)
{
    if (step_us < 50000)
        step_us = 50000;
    if (window_us < step_us)
        window_us = step_us;
    if (window_us / step_us > 6000)
        window_us = step_us * 6000;
    json_t *arr = json_array();
    pthread_mutex_lock(&t->mu);
    int64_t end = now_us / step_us * step_us, start = end - window_us;
    for (int d = 0; d < t->n_dev; d++) {
        json_t *samples = json_array();
        for (int64_t s = start; s < end; s += step_us) {
            if (s + step_us <= t->created_us)
                continue;
            double b = (double)busy_within(t, d, s, s + step_us) / (double)step_us;
            json_array_append_new(samples, json_pack("[I,f]", (json_int_t)((s + step_us) / 1000), b));
        }
        json_array_append_new(arr, json_pack("{s:i,s:I,s:o}", "device", d, "step_ms", (json_int_t)(step_us / 1000),
                                             "samples", samples));
    }
    pthread_mutex_unlock(&t->mu);
    return arr;
}

/* ---- growing text buffer ---- */
typedef struct sbuf {
    char *p;
    size_t len, cap;
    int oom;
} sbuf;

static void sb_printf(sbuf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void sb_printf(sbuf *b, const char *fmt, ...)
{
    if (b->oom)
        return;
    for (;;) {
        va_list ap;
        va_start(ap, fmt);
        size_t room = b->cap - b->len;
        int n = vsnprintf(b->p ? b->p + b->len : NULL, b->p ? room : 0, fmt, ap);
        va_end(ap);
        if (n < 0) {
            b->oom = 1;
            return;
        }
        if (b->p && (size_t)n < room) {
            b->len += (size_t)n;
            return;
        }
        size_t cap = b->cap ? b->cap : 4096;
        while (cap - b->len <= (size_t)n)
            cap *= 2;
        char *p = realloc(b->p, cap);
        if (!p) {
            b->oom = 1;
            return;
        }
        b->p = p;
        b->cap = cap;
    }
}

int tracker_metrics(tracker *t, char **buf, size_t *len, size_t *cap)
{
    sbuf b = {*buf, *len, *cap, 0};
    pthread_mutex_lock(&t->mu);
    sb_printf(&b, "# HELP cuzk_stage_seconds Time partitions spent in each pipeline stage.\n"
                  "# TYPE cuzk_stage_seconds histogram\n");
    for (int s = 0; s < STAGE_COUNT; s++) {
        uint64_t cum = 0;
        for (int i = 0; i < N_BUCKETS; i++) {
            cum += t->hist[s][i];
            sb_printf(&b, "cuzk_stage_seconds_bucket{stage=\"%s\",le=\"%g\"} %" PRIu64 "\n", stage_names[s],
                      bucket_le[i], cum);
        }
        cum += t->hist[s][N_BUCKETS];
        sb_printf(&b, "cuzk_stage_seconds_bucket{stage=\"%s\",le=\"+Inf\"} %" PRIu64 "\n", stage_names[s], cum);
        sb_printf(&b, "cuzk_stage_seconds_sum{stage=\"%s\"} %.6f\n", stage_names[s], t->hist_sum[s]);
        sb_printf(&b, "cuzk_stage_seconds_count{stage=\"%s\"} %" PRIu64 "\n", stage_names[s], cum);
    }
    pthread_mutex_unlock(&t->mu);
    *buf = b.p;
    *len = b.len;
    *cap = b.cap;
    return b.oom ? -1 : 0;
}

/* thread id of a job in the trace: its number ("j-42" -> 42) */
static long job_tid(const char *job)
{
    const char *p = job;
    while (*p && (*p < '0' || *p > '9'))
        p++;
    return strtol(p, NULL, 10);
}

static void trace_event(sbuf *b, int *first, const char *name, const char *cat, int64_t t0, int64_t t1, int pid,
                        long tid, const trk_event *ev)
{
    sb_printf(b, "%s\n{\"name\":\"%s\",\"cat\":\"%s\",\"ph\":\"X\",\"ts\":%" PRId64 ",\"dur\":%" PRId64
                 ",\"pid\":%d,\"tid\":%ld",
              *first ? "" : ",", name, cat, t0, t1 - t0 > 0 ? t1 - t0 : 1, pid, tid);
    if (ev->job[0] && ev->batch > 1)
        sb_printf(b, ",\"args\":{\"job\":\"%s\",\"partition\":%u,\"batch\":%u}", ev->job, ev->part, ev->batch);
    else if (ev->job[0])
        sb_printf(b, ",\"args\":{\"job\":\"%s\",\"partition\":%u}", ev->job, ev->part);
    sb_printf(b, "}");
    *first = 0;
}

char *tracker_trace_json(tracker *t, int64_t since_us, int64_t now_us)
{
    sbuf b = {NULL, 0, 0, 0};
    int first = 1;
    sb_printf(&b, "{\"displayTimeUnit\":\"ms\",\"traceEvents\":[");
    static const char *const pnames[] = {NULL, "partitions", "device workers", "device gaps"};
    for (int p = 1; p <= 3; p++) {
        sb_printf(&b, "%s\n{\"name\":\"process_name\",\"ph\":\"M\",\"pid\":%d,\"tid\":0,\"args\":{\"name\":\"%s\"}}",
                  first ? "" : ",", p, pnames[p]);
        first = 0;
    }
    pthread_mutex_lock(&t->mu);
    for (int d = 0; d < t->n_dev; d++) {
        sb_printf(&b, ",\n{\"name\":\"thread_name\",\"ph\":\"M\",\"pid\":3,\"tid\":%d,\"args\":{\"name\":\"device %d\"}}",
                  d, d);
        for (int w = 0; w < t->n_workers; w++)
            sb_printf(&b,
                      ",\n{\"name\":\"thread_name\",\"ph\":\"M\",\"pid\":2,\"tid\":%d,\"args\":{\"name\":\"device %d "
                      "worker %d\"}}",
                      d * 100 + w, d, w);
    }
    for (size_t i = 0; i < t->count; i++) {
        const trk_event *ev = ring_at(t, i);
        if (ev->t1 < since_us)
            continue;
        char name[64];
        switch (ev->type) {
        case EV_STAGE:
            trace_event(&b, &first, stage_names[ev->what], "stage", ev->t0, ev->t1, 1, job_tid(ev->job), ev);
            break;
        case EV_WORK:
            snprintf(name, sizeof name, "%s/%u", ev->job, ev->part);
            trace_event(&b, &first, name, "device", ev->t0, ev->t1, 2, ev->dev * 100L + ev->worker, ev);
            /* the stage view shows it too, on the job's row */
            trace_event(&b, &first, stage_names[STAGE_DEVICE], "stage", ev->t0, ev->t1, 1, job_tid(ev->job), ev);
            break;
        case EV_BUSY:
            trace_event(&b, &first, "busy", "device", ev->t0, ev->t1, 3, ev->dev, ev);
            break;
        case EV_GAP:
            snprintf(name, sizeof name, "idle: %s", gap_names[ev->what]);
            trace_event(&b, &first, name, "gap", ev->t0, ev->t1, 3, ev->dev, ev);
            break;
        }
    }
    /* open segments up to now */
    for (int d = 0; d < t->n_dev; d++) {
        const trk_device *dv = &t->dev[d];
        if (now_us <= dv->seg_start)
            continue;
        trk_event ev;
        memset(&ev, 0, sizeof ev);
        char name[64];
        if (dv->cond == TRK_BUSY)
            snprintf(name, sizeof name, "busy");
        else
            snprintf(name, sizeof name, "idle: %s", gap_names[dv->cond]);
        trace_event(&b, &first, name, dv->cond == TRK_BUSY ? "device" : "gap", dv->seg_start, now_us, 3, d, &ev);
    }
    pthread_mutex_unlock(&t->mu);
    sb_printf(&b, "\n]}\n");
    if (b.oom) {
        free(b.p);
        return NULL;
    }
    return b.p;
}
