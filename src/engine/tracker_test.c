/* tracker_test.c - idle-gap attribution on a scripted timeline of two devices with two
 * workers each and on one of copies the device waits for (expected totals worked out by
 * hand in the comments), busy ratios, the
 * utilisation timeline, histograms, and the Chrome trace (parsed back with jansson). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "engine/tracker.h"
#include "util/check.h"

#define T0 1000000000000LL /* an arbitrary unix time in us */
#define MS(x) (T0 + (int64_t)(x) * 1000)

int main(void)
{
    tracker *t = tracker_create(2, 2, 1000, T0);
    CHECK(t != NULL, "create");
    if (!t)
        return 1;
    /* device 0, ms timeline:
     *   0..100    both workers idle, no work                  -> no_work 100
     *   100..250  w0 waits synthesis, w1 no work               -> synthesis 150
     *   250..400  w0 busy                                      -> busy 150
     *   400..450  w0 waits lock, w1 waits budget               -> lock 50 (lock outranks budget)
     *   450..600  w1 busy, w0 waits lock                       -> busy 150
     *   600..700  w0 busy too (w1 still busy until 650)        -> busy 100
     *   700..760  w0 finalizer, w1 budget                      -> finalizer 60
     *   760..800  w0 budget, w1 budget                         -> budget 40
     * totals at 800: busy 400, no_work 100, synthesis 150, lock 50, finalizer 60, budget 40 */
    tracker_worker_set(t, 0, 0, GAP_SYNTHESIS, MS(100));
    tracker_worker_set(t, 0, 0, TRK_BUSY, MS(250));
    tracker_worker_set(t, 0, 1, GAP_BUDGET, MS(300)); /* device stays busy: no segment change */
    tracker_worker_set(t, 0, 0, GAP_LOCK, MS(400));
    tracker_worker_set(t, 0, 1, TRK_BUSY, MS(450));
    tracker_worker_set(t, 0, 0, TRK_BUSY, MS(600));
    tracker_worker_set(t, 0, 1, GAP_BUDGET, MS(650));
    tracker_worker_set(t, 0, 0, GAP_FINALIZER, MS(700));
    tracker_worker_set(t, 0, 0, GAP_BUDGET, MS(760));
    tracker_stage(t, "j-7", 0, STAGE_DEVICE, 0, 0, MS(250), MS(400));
    tracker_stage(t, "j-7", 1, STAGE_DEVICE, 0, 1, MS(450), MS(650));
    tracker_stage(t, "j-7", 0, STAGE_SYNTH, -1, -1, MS(100), MS(250));
    tracker_stage(t, "j-7", 1, STAGE_SYNTH, -1, -1, MS(150), MS(450));

    int64_t busy, gap[GAP_COUNT];
    tracker_device_totals(t, 0, MS(800), &busy, gap);
    CHECK(busy == 400000, "busy %lld us, expected 400000", (long long)busy);
    CHECK(gap[GAP_NO_WORK] == 100000, "no_work %lld", (long long)gap[GAP_NO_WORK]);
    CHECK(gap[GAP_SYNTHESIS] == 150000, "synthesis %lld", (long long)gap[GAP_SYNTHESIS]);
    CHECK(gap[GAP_LOCK] == 50000, "lock %lld", (long long)gap[GAP_LOCK]);
    CHECK(gap[GAP_FINALIZER] == 60000, "finalizer %lld", (long long)gap[GAP_FINALIZER]);
    CHECK(gap[GAP_BUDGET] == 40000, "budget %lld", (long long)gap[GAP_BUDGET]);
    CHECK(gap[GAP_COPY] == 0, "copy %lld", (long long)gap[GAP_COPY]);
    int64_t sum = busy;
    for (int g = 0; g < GAP_COUNT; g++)
        sum += gap[g];
    CHECK(sum == 800000, "busy + gaps = %lld, must cover the whole 800 ms", (long long)sum);

    /* device 1 never did anything */
    tracker_device_totals(t, 1, MS(800), &busy, gap);
    CHECK(busy == 0 && gap[GAP_NO_WORK] == 800000, "idle device: busy %lld no_work %lld", (long long)busy,
          (long long)gap[GAP_NO_WORK]);

    double r = tracker_busy_ratio(t, 0, 0, MS(800));
    CHECK(r > 0.499 && r < 0.501, "busy ratio %f, expected 0.5", r);
    /* last 200 ms (600..800): busy 600..700 = 100 -> 0.5 */
    r = tracker_busy_ratio(t, 0, 200000, MS(800));
    CHECK(r > 0.499 && r < 0.501, "windowed busy ratio %f, expected 0.5", r);
    /* window 250..400 inside one busy segment */
    r = tracker_busy_ratio(t, 0, 400000, MS(800)); /* 400..800: busy 450..700 = 250 -> 0.625 */
    CHECK(r > 0.624 && r < 0.626, "windowed busy ratio %f, expected 0.625", r);

    /* timeline at 100 ms steps over the last 800 ms: busy fractions per step */
    json_t *tl = tracker_timeline(t, 800000, 100000, MS(800));
    json_t *s0 = json_object_get(json_array_get(tl, 0), "samples");
    static const double want[8] = {0, 0, 0.5, 1, 0.5, 1, 1, 0};
    CHECK(json_array_size(s0) == 8, "timeline has %zu samples, expected 8", json_array_size(s0));
    for (size_t i = 0; i < json_array_size(s0) && i < 8; i++) {
        double b = json_real_value(json_array_get(json_array_get(s0, i), 1));
        CHECK(b > want[i] - 1e-9 && b < want[i] + 1e-9, "timeline step %zu: %f, expected %f", i, b, want[i]);
    }
    json_decref(tl);

    /* histograms */
    char *buf = NULL;
    size_t len = 0, cap = 0;
    CHECK(tracker_metrics(t, &buf, &len, &cap) == 0, "metrics");
    CHECK(buf && strstr(buf, "cuzk_stage_seconds_count{stage=\"device\"} 2\n"), "device histogram count");
    CHECK(buf && strstr(buf, "cuzk_stage_seconds_bucket{stage=\"synth\",le=\"0.25\"} 1\n"),
          "synth 0.15 s and 0.3 s: one at or below 0.25");
    free(buf);

    /* trace: valid JSON, has the gaps and the device work */
    char *trace = tracker_trace_json(t, 0, MS(800));
    json_error_t je;
    json_t *doc = trace ? json_loads(trace, 0, &je) : NULL;
    CHECK(doc != NULL, "trace is not JSON: %s", trace ? je.text : "NULL");
    int n_lock = 0, n_work = 0, n_stage = 0;
    json_t *evs = json_object_get(doc, "traceEvents");
    for (size_t i = 0; i < json_array_size(evs); i++) {
        json_t *ev = json_array_get(evs, i);
        const char *name = json_string_value(json_object_get(ev, "name"));
        const char *cat = json_string_value(json_object_get(ev, "cat"));
        if (name && !strcmp(name, "idle: lock")) {
            n_lock++;
            CHECK(json_integer_value(json_object_get(ev, "dur")) == 50000, "lock gap duration");
        }
        if (cat && !strcmp(cat, "device") && name && !strcmp(name, "j-7/1"))
            n_work++;
        if (cat && !strcmp(cat, "stage"))
            n_stage++;
    }
    CHECK(n_lock == 1, "lock gaps in trace: %d", n_lock);
    CHECK(n_work == 1, "device work of j-7/1 in trace: %d", n_work);
    CHECK(n_stage == 4, "stage events in trace: %d", n_stage);
    json_decref(doc);
    free(trace);

    /* copies the device waits for (a worker holding the device reports GAP_COPY through the
     * backend's phase hook). One device, three workers, ms timeline:
     *   0..100    w0 busy (h step)                                     -> busy 100
     *   100..160  w0 copies h back, w1 waits for the lock w0 holds,
     *             w2 synthesis                                         -> copy 60 (copy outranks lock)
     *   160..200  w0 finalizer, w1 busy                                -> busy 40
     *   200..230  w1 copies the witness up while w2 is busy            -> busy 30 (busy outranks copy)
     *   230..280  w2 lock (step boundary behind a critical partition),
     *             w1 still copying                                     -> copy 50
     *   280..300  w1 busy                                              -> busy 20
     *   300..340  w1 lock, w0 lock, w2 finalizer                       -> lock 40
     * totals at 340: busy 190, copy 110, lock 40 */
    tracker *tc = tracker_create(1, 3, 1000, T0);
    CHECK(tc != NULL, "create");
    if (!tc)
        return 1;
    CHECK(!strcmp(trk_gap_name(GAP_COPY), "copy") && !strcmp(trk_gap_name(GAP_LOCK), "lock"), "gap names");
    CHECK(GAP_COPY > GAP_LOCK && GAP_LOCK > GAP_FINALIZER, "rank: copy > lock > finalizer");
    tracker_worker_set(tc, 0, 0, TRK_BUSY, MS(0));
    tracker_worker_set(tc, 0, 2, GAP_SYNTHESIS, MS(0));
    tracker_worker_set(tc, 0, 1, GAP_LOCK, MS(50)); /* device busy: no segment change */
    tracker_worker_set(tc, 0, 0, GAP_COPY, MS(100));
    tracker_worker_set(tc, 0, 0, GAP_FINALIZER, MS(160));
    tracker_worker_set(tc, 0, 1, TRK_BUSY, MS(160));
    tracker_worker_set(tc, 0, 2, TRK_BUSY, MS(190));
    tracker_worker_set(tc, 0, 1, GAP_COPY, MS(200));
    tracker_worker_set(tc, 0, 2, GAP_LOCK, MS(230));
    tracker_worker_set(tc, 0, 1, TRK_BUSY, MS(280));
    tracker_worker_set(tc, 0, 2, GAP_FINALIZER, MS(290));
    tracker_worker_set(tc, 0, 0, GAP_LOCK, MS(295));
    tracker_worker_set(tc, 0, 1, GAP_LOCK, MS(300));
    tracker_device_totals(tc, 0, MS(340), &busy, gap);
    CHECK(busy == 190000, "copy timeline: busy %lld us, expected 190000", (long long)busy);
    CHECK(gap[GAP_COPY] == 110000, "copy timeline: copy %lld, expected 110000", (long long)gap[GAP_COPY]);
    CHECK(gap[GAP_LOCK] == 40000, "copy timeline: lock %lld, expected 40000", (long long)gap[GAP_LOCK]);
    sum = busy;
    for (int g = 0; g < GAP_COUNT; g++)
        sum += gap[g];
    CHECK(sum == 340000, "copy timeline: busy + gaps = %lld, must cover 340 ms", (long long)sum);
    trace = tracker_trace_json(tc, 0, MS(340));
    doc = trace ? json_loads(trace, 0, &je) : NULL;
    CHECK(doc != NULL, "copy trace is not JSON");
    int n_copy = 0;
    int64_t copy_dur = 0;
    evs = json_object_get(doc, "traceEvents");
    for (size_t i = 0; i < json_array_size(evs); i++) {
        json_t *ev = json_array_get(evs, i);
        const char *name = json_string_value(json_object_get(ev, "name"));
        if (name && !strcmp(name, "idle: copy")) {
            n_copy++;
            copy_dur += json_integer_value(json_object_get(ev, "dur"));
        }
    }
    CHECK(n_copy == 2 && copy_dur == 110000, "copy gaps in trace: %d lasting %lld us, expected 2 lasting 110000",
          n_copy, (long long)copy_dur);
    json_decref(doc);
    free(trace);
    tracker_destroy(tc);

    /* the ring keeps the newest events when full */
    for (int i = 0; i < 3000; i++)
        tracker_stage(t, "j-9", (uint32_t)i, STAGE_SYNTH, -1, -1, MS(900 + i), MS(901 + i));
    trace = tracker_trace_json(t, MS(3800), MS(4000));
    CHECK(trace && strstr(trace, "\"partition\":2999") && !strstr(trace, "\"partition\":100}"),
          "ring should keep the newest events");
    free(trace);
    tracker_destroy(t);
    if (failures) {
        fprintf(stderr, "tracker_test: %d failure(s)\n", failures);
        return 1;
    }
    printf("tracker_test: ok\n");
    return 0;
}
