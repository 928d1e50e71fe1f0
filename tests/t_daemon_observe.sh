#!/usr/bin/env bash
# t_daemon_observe.sh - the daemon's observability surface, black box on the CPU backend,
# while proofs are running: /v1/timeline at 200 ms resolution, /status (workers, budget,
# buffers, queues, idle gaps, process RSS), `cuzk top --once`, /metrics (Prometheus text
# exposition), /v1/trace (Chrome trace-event JSON with partition stages and device intervals).
# Usage: CUZK=bin/cuzk tests/t_daemon_observe.sh   (normally through tests/run.sh)
set -uo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/dashboard/daemon_helpers.sh"

BN=$repo/tests/data/bn128/merkle

start_daemon dash || finish
# keep the pipeline busy in the background while the page loads
(
    for j in $(seq 1 6); do
        w=()
        for p in $(seq 1 6); do w+=(--witness "$BN/witness.wtns"); done
        id=$("$CUZK" submit --server "$D_ADDR" --zkey "$BN/circuit.zkey" "${w[@]}" --kind porep) || exit 1
        "$CUZK" await --server "$D_ADDR" --timeout 300 "$id" > /dev/null 2>&1
    done
) > "$tmp/load.log" 2>&1 &
load=$!
sleep 1.5

# ---------------------------------------------------------------- JSON surfaces
api GET "/v1/timeline?window_ms=10000&step_ms=200"
check "timeline at 200 ms steps ($CODE)" [ "$(jget 'j.step_ms === 200 && j.devices.length >= 1 && j.devices[0].samples.length >= 5')" = true ]
check "timeline samples are [t, busy] with busy in [0,1]" \
    [ "$(jget 'j.devices[0].samples.every(s => s.length === 2 && s[1] >= 0 && s[1] <= 1)')" = true ]
api GET /status
check "/status lists workers with kinds" [ "$(jget 'j.workers.some(w => w.kind === "device") && j.workers.some(w => w.kind === "synth")')" = true ]
check "/status has budget, buffers, queues, idle gaps" \
    [ "$(jget '["total","used","peak"].every(k => k in j.budget) && "reuses" in j.buffers && "ready" in j.queues && typeof j.idle_gap_ms === "object"')" = true ]
check "/status reports process RSS" [ "$(jget 'j.process.peak_rss_bytes > 0')" = true ]
"$CUZK" top --server "$D_ADDR" --once > "$tmp/top.txt" 2>&1
check "cuzk top --once draws budget, workers and jobs" grep -q '^budget' "$tmp/top.txt"
grep -q '^WORKER' "$tmp/top.txt" || fail "cuzk top: no worker table"; cat "$tmp/top.txt"

wait $load
check "background load finished" [ $? = 0 ]

# ---------------------------------------------------------------- metrics and trace
api GET /metrics
for m in cuzk_jobs_total cuzk_stage_seconds_bucket cuzk_gpu_busy_ratio cuzk_budget_bytes cuzk_idle_gap_seconds_total cuzk_process_peak_resident_bytes cuzk_buffer_pool_pinned_bytes cuzk_buffer_takes_total cuzk_buffer_frees_total; do
    check "/metrics has $m" grep -q "^$m" <<< "$BODY"
done
check "/metrics is text/plain Prometheus exposition" grep -q '^# TYPE cuzk_' <<< "$BODY"
api GET /v1/trace
echo "$BODY" > "$tmp/trace.json"
check "trace has partition stage events (pid 1) and device intervals (pid 2)" \
    [ "$(jget '(e => e.some(x => x.ph === "X" && x.pid === 1) && e.some(x => x.ph === "X" && x.pid === 2))(Array.isArray(j) ? j : j.traceEvents)')" = true ]
check "every complete event has ts and dur" \
    [ "$(jget '(Array.isArray(j) ? j : j.traceEvents).filter(x => x.ph === "X").every(x => typeof x.ts === "number" && typeof x.dur === "number")')" = true ]
api GET /status
check "idle-gap totals present" [ "$(jget 'Object.keys(j.idle_gap_ms).length > 0')" = true ]
check "idle-gap reasons include copy and lock" [ "$(jget '"copy" in j.idle_gap_ms && "lock" in j.idle_gap_ms')" = true ]
# host buffer pool after the load: 6 jobs x 6 partitions ran one job after another, each
# partition took one workspace buffer; all are back in the pool now (levels: buffers, bytes,
# cached; counters: takes = allocs + reuses, frees); the CPU backend pins nothing
echo "buffers: $(jget 'j.buffers')"
check "pool: one take per partition (36)" [ "$(jget 'j.buffers.takes')" = 36 ]
check "pool: takes = allocs + reuses, and later jobs reused buffers" \
    [ "$(jget 'j.buffers.takes === j.buffers.allocs + j.buffers.reuses && j.buffers.reuses >= 1')" = true ]
check "pool: buffers alive = allocs - frees, all cached while idle" \
    [ "$(jget 'j.buffers.buffers === j.buffers.allocs - j.buffers.frees && j.buffers.cached === j.buffers.buffers && j.buffers.buffers >= 1')" = true ]
check "pool: bytes are the cached bytes, equal-sized buffers, none pinned on the CPU backend" \
    [ "$(jget 'j.buffers.bytes === j.buffers.cached_bytes && j.buffers.bytes % j.buffers.buffers === 0 && j.buffers.pinned_bytes === 0')" = true ]
echo "idle gaps: $(jget 'j.idle_gap_ms')"
stop_daemon
finish
