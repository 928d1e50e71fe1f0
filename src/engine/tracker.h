/* tracker.h - what every partition and every device did, and when: stage intervals,
 * device busy intervals, idle-gap attribution, stage histograms, Chrome trace export.
 *
 * DESIGN. Workers report transitions with a timestamp (unix microseconds); the tracker
 * keeps the recent events in a ring and running totals forever. A device is BUSY while
 * at least one of its workers is running device work. While none is, the device is in
 * a gap, and the gap is attributed to the most advanced thing any of its workers is
 * waiting for, ranked
 *     copy > lock > finalizer > synthesis > budget > no_work
 * (a worker moving data the device waits for is why the device runs nothing, even when
 * others queue on the lock it holds; a worker waiting for the device lock was one step
 * from running; a worker with an empty queue while partitions wait for budget was
 * blocked by the budget). "no_work"
 * means no job existed; it is reported apart and is not counted as lost time. Each
 * change of the device's condition closes one segment and opens the next, so the
 * trace shows every gap with its reason and /status shows the totals.
 * All functions are thread-safe (one short mutex; no I/O, no allocation while held
 * except the export functions).
 */
#ifndef CUZK_ENGINE_TRACKER_H
#define CUZK_ENGINE_TRACKER_H

#include <stddef.h>
#include <stdint.h>

#include <jansson.h>

typedef enum trk_gap {
    GAP_NO_WORK = 0,   /* no job in the engine */
    GAP_BUDGET = 1,    /* partitions wait for memory budget */
    GAP_SYNTHESIS = 2, /* partitions are being synthesized, none ready yet */
    GAP_FINALIZER = 3, /* worker handing a result to the finalizers (buffer back to the pool, the
                          finalize queue; never waits for a finalizer) */
    GAP_LOCK = 4,      /* worker waiting for the device lock, or at a step boundary while a
                          critical partition has the device */
    GAP_COPY = 5,      /* worker holds the device and copies data between host and device
                          that the device waits for, or copies a witness up ahead of the MSM
                          lock (backend phase hook) */
    GAP_COUNT = 6
} trk_gap;

#define TRK_BUSY (-1) /* worker state: running device work */

/* stages of a partition, in pipeline order */
typedef enum trk_stage {
    STAGE_QUEUED = 0,   /* submit -> budget granted */
    STAGE_ADMIT = 1,    /* budget granted -> synthesis starts */
    STAGE_SYNTH = 2,    /* witness load + a/b/c */
    STAGE_READY = 3,    /* in the device queue */
    STAGE_DEVICE = 4,   /* h + MSMs */
    STAGE_FINALIZE = 5, /* assemble + verify + journal */
    STAGE_COUNT = 6
} trk_stage;

const char *trk_gap_name(trk_gap g);     /* "no_work", "budget", "synthesis", ... */
const char *trk_stage_name(trk_stage s); /* "queued", "admit", "synth", "ready", "device", "finalize" */

typedef struct tracker tracker;

/* n_devices >= 1, workers_per_device >= 1, ring_events = events kept for the trace */
tracker *tracker_create(int n_devices, int workers_per_device, size_t ring_events, int64_t now_us);
void tracker_destroy(tracker *t);

/* One finished stage of a partition (job id string is copied, up to 31 bytes). worker is
 * the device worker index for STAGE_DEVICE (else -1); dev likewise. */
void tracker_stage(tracker *t, const char *job, uint32_t part, trk_stage stage, int dev, int worker,
                   int64_t t0_us, int64_t t1_us);
/* the same for a partition proved in a pass over a streamed key's bases with batch - 1 others
   (the trace's args name the batch) */
void tracker_stage_batch(tracker *t, const char *job, uint32_t part, trk_stage stage, int dev, int worker,
                         int64_t t0_us, int64_t t1_us, unsigned batch);

/* Worker `worker` of device `dev` is now in state (TRK_BUSY or a trk_gap). */
void tracker_worker_set(tracker *t, int dev, int worker, int state, int64_t now_us);

/* Totals up to now_us (open segments included). gap_us receives GAP_COUNT values. */
void tracker_device_totals(tracker *t, int dev, int64_t now_us, int64_t *busy_us, int64_t *gap_us);
/* fraction of [now - window, now] the device was busy (window <= 0: since creation) */
double tracker_busy_ratio(tracker *t, int dev, int64_t window_us, int64_t now_us);

/* [{"device":d,"step_ms":s,"samples":[[unix_ms, busy 0..1],...]}] over the last window */
json_t *tracker_timeline(tracker *t, int64_t window_us, int64_t step_us, int64_t now_us);

/* Stage-duration histograms as Prometheus text appended to a malloc'd buffer (*buf, *len,
 * *cap grow as needed); metric cuzk_stage_seconds{stage="..."}. Returns 0 or -1 (no memory). */
int tracker_metrics(tracker *t, char **buf, size_t *len, size_t *cap);

/* Chrome trace-event JSON (malloc'd) of the ring: stages (pid 1, one tid per job),
 * device work (pid 2, tid = device*100 + worker) and gaps (pid 3, tid = device). */
char *tracker_trace_json(tracker *t, int64_t since_us, int64_t now_us);

int tracker_n_devices(const tracker *t);

#endif
