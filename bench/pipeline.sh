#!/usr/bin/env bash
# pipeline.sh - throughput and latency of the proving daemon on a Filecoin-shaped job mix.
#
# Builds four synthetic BLS12-381 circuits with `cuzk dev-circuit` (cached in $WORK/circuits):
#   porep          jobs of 10 partitions            (normal priority)
#   snap           jobs of 16 partitions            (normal)
#   window-post    jobs of 1 large partition        (high)
#   winning-post   jobs of 1 small partition        (critical), submitted every
#                  WINNING_EVERY seconds while the backlog runs: the latency-critical path
# starts `cuzk serve` on loopback, submits the backlog at once, waits for everything, and
# prints: proofs/hour over the run and over the backlog alone (the jobs submitted at the start:
# once the devices finish them before the last winning-post job arrives, the run's wall time is
# the schedule's, not the work's), GPU busy % of the run and while work was queued (with the rest
# of that time split by what the device workers waited for: finalizer, copy, lock, synthesis,
# budget), the worker counts (auto or given) and what the finalizers did (batch checks, per-proof
# assemble / verify / journal time, queue peak), p50/p99 latency per kind, idle-gap attribution,
# budget and RSS peaks. The Chrome
# trace (open in https://ui.perfetto.dev) and the raw /status and job lists are kept in $WORK.
#
# Usage:  CUZK=bin/cuzk bench/pipeline.sh            (defaults sized for one H200)
#         QUICK=1 bench/pipeline.sh                  (tiny circuits, CPU backend: a smoke run)
#         bench/pipeline.sh --report DIR             (the report again, from a run's saved files;
#                                                     a run without node saves them and stops)
# Knobs (environment): BACKEND (auto), GPU_WORKERS (2), SYNTH_WORKERS (auto), FINALIZERS (auto), QUEUE_DEPTH (8),
#   BUDGET (auto), POREP_K / SNAP_K / WPOST_K / WINNING_K (log2 constraints: 20/19/21/14),
#   N_POREP (4), N_SNAP (2), N_WPOST (2), N_WINNING (6), WINNING_EVERY (5 s),
#   WORK (bench/results/pipeline), EXTRA_SERVE_ARGS.
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
repo=$(cd "$here/.." && pwd)
CUZK=${CUZK:-$repo/bin/cuzk}
case "$CUZK" in /*) ;; *) CUZK=$repo/$CUZK ;; esac

# ---------------------------------------------------------------- report (from saved files)
report() { # DIR: status.json, jobs.json, run.env written by a run
    . "$1/run.env"
    node - "$1/status.json" "$1/jobs.json" "$t0" "$t1" "$failed" "$1/solo.json" "$1/trace.json" <<'EOF'
const fs = require("fs");
const [st, jl] = [2, 3].map(i => JSON.parse(fs.readFileSync(process.argv[i])));
const wall = Number(process.argv[5]) - Number(process.argv[4]);
const failed = Number(process.argv[6]);
let solo = [];
try { solo = JSON.parse(fs.readFileSync(process.argv[7])); } catch (e) { /* a run without it */ }
/* the backlog's jobs: the solo winning-post runs before t0 are reported apart */
const jobs = (jl.jobs || []).filter(j => j.submitted_ms >= 1000 * Number(process.argv[4]) - 1);
const done = jobs.filter(j => j.state === "done");
const proofs = done.reduce((a, j) => a + (j.n_partitions || 0), 0);
const pct = (xs, p) => { if (!xs.length) return NaN; const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.ceil(p / 100 * s.length) - 1)]; };
const f1 = x => Number.isFinite(x) ? (x / 1000).toFixed(2) : "-";
const mib = b => (Number(b || 0) / 1048576).toFixed(0) + " MiB";
console.log("\n== cuzk pipeline benchmark (" + (st.backend || "?") + ", " + (st.devices || 0) + " device(s))");
console.log(`wall ${wall.toFixed(1)} s, ${done.length} jobs done, ${failed} failed, ${proofs} partition proofs`);
console.log(`throughput: ${(proofs / wall * 3600).toFixed(0)} proofs/hour`);
/* the backlog (every kind but the winning-post jobs, which arrive on a schedule and keep the run
   going after it): its completion time is the capacity measure once the devices keep up */
const bl = done.filter(j => j.kind !== "winning-post");
if (bl.length) {
  const s0 = Math.min(...bl.map(j => j.submitted_ms)), s1 = Math.max(...bl.map(j => j.finished_ms));
  const bp = bl.reduce((a, j) => a + (j.n_partitions || 0), 0), bs = (s1 - s0) / 1000;
  console.log(`backlog: ${bp} partition proofs (${bl.length} jobs submitted at the start) done in ${bs.toFixed(1)} s: ` +
              `${(bp / bs * 3600).toFixed(0)} proofs/hour`);
}
const gaps0 = st.idle_gap_ms || {};
const idleAll = Object.values(gaps0).reduce((a, b) => a + b, 0), idleWork = idleAll - (gaps0.no_work || 0);
for (const g of st.gpu || []) {
  const r = g.busy_ratio || 0;
  /* idle time splits into no_work (nothing queued: start-up, tail, gaps between arrivals) and
     idle while work existed; busy while a backlog lasts = busy / (busy + the latter), and the
     rest of that time by what the device's workers waited for */
  const gg = g.idle_gap_ms || {};
  const waited = Object.entries(gg).filter(([k]) => k !== "no_work");
  const idleQ = waited.reduce((a, [, v]) => a + v, 0);
  const busyMs = g.busy_ms !== undefined ? g.busy_ms : (r < 1 && idleAll > 0 ? r * idleAll / (1 - r) : 0);
  const denom = busyMs + idleQ;
  const backlog = denom > 0 ? 100 * busyMs / denom : NaN;
  console.log(`device ${g.device}: busy ${(100 * r).toFixed(1)} % of the run` +
              (Number.isFinite(backlog) ? `, ${backlog.toFixed(1)} % while work was queued` : ""));
  if (denom > 0)
    console.log(`  while work was queued: busy ${backlog.toFixed(1)} %, ` +
                waited.sort((a, b) => b[1] - a[1]).map(([k, v]) => `${k} ${(100 * v / denom).toFixed(1)} %`).join(", "));
}
/* the worker counts (auto: chosen from the cores and devices) and what the finalizers did */
const sz = st.sizing || {};
if (sz.cores)
  console.log(`workers: ${sz.synth_workers} synthesis${sz.synth_workers_auto ? " (auto)" : ""}, ` +
              `${sz.finalizers} finalizers${sz.finalizers_auto ? " (auto)" : ""} + 1 critical, ` +
              `${sz.gpu_workers} per device, queue depth ${sz.queue_depth}, ${sz.cores} cores`);
const fz = st.finalize || {};
if (fz.proofs) {
  const fw = (st.workers || []).filter(w => w.kind === "finalize");
  const fbusy = fw.reduce((a, w) => a + (w.busy_ms || 0), 0);
  const per = k => (fz[k] / fz.proofs).toFixed(2);
  console.log(`finalizers: ${fz.proofs} proofs in ${fz.batches} batch checks (mean ${(fz.proofs / fz.batches).toFixed(1)}, ` +
              `largest ${fz.largest}; ${fz.fallbacks} failed and were verified one by one, ${fz.bad} bad proofs); ` +
              `per proof: assemble ${per("assemble_ms")} ms, verify ${per("verify_ms")} ms, journal ${per("journal_ms")} ms; ` +
              `queue peak ${fz.queue_peak}; finalizer threads busy ${(fbusy / 1000).toFixed(2)} s ` +
              `(${wall > 0 ? (100 * fbusy / 1000 / wall / Math.max(1, fw.length)).toFixed(1) : "-"} % of ${fw.length} threads over the run)`);
}
console.log("\n| kind | jobs | partitions | p50 latency s | p99 latency s | max s |\n|---|---|---|---|---|---|");
for (const kind of ["porep", "snap", "window-post", "winning-post"]) {
  const js = done.filter(j => j.kind === kind);
  const lat = js.map(j => j.finished_ms - j.submitted_ms);
  console.log(`| ${kind} | ${js.length} | ${js.reduce((a, j) => a + j.n_partitions, 0)} | ${f1(pct(lat, 50))} | ${f1(pct(lat, 99))} | ${f1(lat.length ? Math.max(...lat) : NaN)} |`);
}
/* the latency target of a winning-post job under load: its own prove time (measured alone,
   before the backlog) plus one partition's GPU time (median device stage of the porep partitions) */
const soloWp = solo.filter(j => j.kind === "winning-post").map(j => j.finished_ms - j.submitted_ms);
const devms = solo.filter(j => j.kind === "porep").map(j => ((j.partitions || [])[0] || {}).stages)
  .filter(s => s && s.device_ms).map(s => s.device_ms);
const wp = done.filter(j => j.kind === "winning-post").map(j => j.finished_ms - j.submitted_ms);
if (soloWp.length && devms.length && wp.length) {
  const alone = pct(soloWp, 50), one = pct(devms, 50), bound = alone + one;
  const worst = Math.max(...wp);
  console.log(`\nwinning-post under load: p50 ${f1(pct(wp, 50))} s, max ${f1(worst)} s; target ${f1(bound)} s ` +
              `(alone ${f1(alone)} s + one porep partition's device stage alone ${f1(one)} s): ` +
              (worst <= bound ? "met" : pct(wp, 50) <= bound ? "met at p50, missed at max" : "missed"));
  /* where its time goes: median of each stage, alone and under load (ms) */
  const stages = ["queued_ms", "admit_ms", "synth_ms", "ready_ms", "device_ms", "finalize_ms"];
  const stageRow = (label, js) => {
    const ps = js.map(j => ((j.partitions || [])[0] || {}).stages).filter(s => s);
    return `| ${label} (${ps.length}) | ` + stages.map(k => pct(ps.map(s => s[k] || 0), 50).toFixed(1)).join(" | ") + " |";
  };
  console.log("\nwinning-post stages, median ms:\n| | " + stages.map(k => k.replace("_ms", "")).join(" | ") +
              " |\n|---|" + stages.map(() => "---|").join(""));
  console.log(stageRow("alone", solo.filter(j => j.kind === "winning-post")));
  /* jobs.json has no stages; /status lists the recent jobs with them */
  const detail = new Map((st.active || []).map(j => [j.id, j]));
  console.log(stageRow("under load", done.filter(j => j.kind === "winning-post").map(j => detail.get(j.id)).filter(j => j)));
}
/* the same ratio over the backlog alone (its first submission to its last proof), from the
   trace's device tracks (pid 3, one tid a device): the figure above also counts the solo runs
   before it, one job at a time, where the device must wait for each one's synthesis */
let trace = null;
try { trace = JSON.parse(fs.readFileSync(process.argv[8])); } catch (e) { /* a run without it */ }
if (trace && bl.length) {
  const w0 = 1000 * Math.min(...bl.map(j => j.submitted_ms)), w1 = 1000 * Math.max(...bl.map(j => j.finished_ms));
  const per = new Map();
  for (const e of (trace.traceEvents || trace)) {
    if (e.pid !== 3 || e.ph !== "X" || !(e.name === "busy" || String(e.name).startsWith("idle: "))) continue;
    const a = Math.max(e.ts, w0), z = Math.min(e.ts + (e.dur || 0), w1);
    if (z <= a) continue;
    const m = per.get(e.tid) || {};
    m[e.name] = (m[e.name] || 0) + (z - a);
    per.set(e.tid, m);
  }
  for (const [dev, m] of per) {
    const waited = Object.entries(m).filter(([k]) => k.startsWith("idle: ") && k !== "idle: no_work");
    const denom = (m.busy || 0) + waited.reduce((a, [, v]) => a + v, 0);
    if (denom > 0)
      console.log(`device ${dev}, while the backlog lasted (${((w1 - w0) / 1e6).toFixed(1)} s, from the trace): busy ` +
                  `${(100 * (m.busy || 0) / denom).toFixed(1)} % while work was queued, ` +
                  waited.sort((a, b) => b[1] - a[1]).map(([k, v]) => `${k.slice(6)} ${(100 * v / denom).toFixed(1)} %`).join(", "));
  }
}
const gaps = st.idle_gap_ms || {};
const gsum = Object.values(gaps).reduce((a, b) => a + b, 0);
console.log("\nidle-gap attribution (device idle time by what its workers waited for; no_work = nothing queued;\n" +
            "finalizer = handing a result over to the finalizers):");
for (const [k, v] of Object.entries(gaps).sort((a, b) => b[1] - a[1]))
  console.log(`  ${k.padEnd(12)} ${(v / 1000).toFixed(2).padStart(9)} s  ${gsum ? (100 * v / gsum).toFixed(1) : "0.0"} %`);
const b = st.budget || {}, p = st.process || {};
console.log(`\nbudget ${mib(b.total)}, engine peak ${mib(b.peak)}; process peak RSS ${mib(p.peak_rss_bytes)}`);
const buf = st.buffers || {};
console.log(`host buffers: pool ${mib(buf.pool_bytes)}, ${buf.allocs || 0} allocations, ${buf.reuses || 0} reuses`);
EOF
}
if [ "${1:-}" = --report ]; then
    report "${2:?usage: pipeline.sh --report DIR}"
    exit 0
fi
[ -x "$CUZK" ] || { echo "pipeline.sh: no cuzk binary at $CUZK (make, or set CUZK)" >&2; exit 2; }

# http METHOD PATH [BODY]: curl when installed, else bash's /dev/tcp (HTTP/1.0, body only)
http() {
    if command -v curl > /dev/null; then
        curl -s -X "$1" "http://$ADDR$2" ${3:+-d "$3"}
        return
    fi
    local host=${ADDR%:*} port=${ADDR##*:}
    exec 3<> "/dev/tcp/$host/$port"
    printf '%s %s HTTP/1.0\r\nHost: cuzk\r\nContent-Length: %d\r\n\r\n%s' "$1" "$2" "${#3}" "${3:-}" >&3
    sed '1,/^\r$/d' <&3
    exec 3<&-
}

if [ "${QUICK:-0}" = 1 ]; then
    : "${POREP_K:=12}" "${SNAP_K:=11}" "${WPOST_K:=13}" "${WINNING_K:=10}"
    : "${N_POREP:=3}" "${N_SNAP:=2}" "${N_WPOST:=2}" "${N_WINNING:=4}" "${WINNING_EVERY:=1}"
    : "${BACKEND:=cpu}" "${GPU_WORKERS:=1}" "${QUEUE_DEPTH:=4}"
fi
POREP_K=${POREP_K:-20} SNAP_K=${SNAP_K:-19} WPOST_K=${WPOST_K:-21} WINNING_K=${WINNING_K:-14}
N_POREP=${N_POREP:-4} N_SNAP=${N_SNAP:-2} N_WPOST=${N_WPOST:-2} N_WINNING=${N_WINNING:-6}
WINNING_EVERY=${WINNING_EVERY:-5}
BACKEND=${BACKEND:-auto} GPU_WORKERS=${GPU_WORKERS:-2} SYNTH_WORKERS=${SYNTH_WORKERS:-auto} FINALIZERS=${FINALIZERS:-auto}
QUEUE_DEPTH=${QUEUE_DEPTH:-8} BUDGET=${BUDGET:-auto}
WORK=${WORK:-$repo/bench/results/pipeline}
mkdir -p "$WORK/circuits"

# ---------------------------------------------------------------- circuits
make_circuit() { # NAME LOG2
    local dir=$WORK/circuits/$1-k$2
    if [ ! -f "$dir/circuit.zkey" ] || [ ! -f "$dir/witness.wtns" ]; then
        echo "building $1 circuit: 2^$2 constraints (cuzk dev-circuit, cached in $dir)" >&2
        "$CUZK" dev-circuit --curve bls12381 --constraints $(( (1 << $2) - 2 )) --out "$dir" -q >&2
    fi
    echo "$dir"
}
C_POREP=$(make_circuit porep "$POREP_K")
C_SNAP=$(make_circuit snap "$SNAP_K")
C_WPOST=$(make_circuit window-post "$WPOST_K")
C_WINNING=$(make_circuit winning-post "$WINNING_K")

# ---------------------------------------------------------------- daemon
DATA=$WORK/data
rm -rf "$DATA"
mkdir -p "$DATA"
"$CUZK" serve --listen 127.0.0.1:0 --data "$DATA" --backend "$BACKEND" --budget "$BUDGET" \
    --gpu-workers "$GPU_WORKERS" --synth-workers "$SYNTH_WORKERS" --finalizers "$FINALIZERS" --queue-depth "$QUEUE_DEPTH" \
    ${EXTRA_SERVE_ARGS:-} > "$WORK/serve.log" 2>&1 &
PID=$!
trap 'kill -TERM $PID 2>/dev/null || true' EXIT
for _ in $(seq 1 600); do [ -s "$DATA/serve.addr" ] && break; sleep 0.1; done
[ -s "$DATA/serve.addr" ] || { echo "daemon did not start; see $WORK/serve.log" >&2; exit 1; }
ADDR=$(cat "$DATA/serve.addr")
echo "daemon at $ADDR (backend $BACKEND), log $WORK/serve.log" >&2
for c in "$C_POREP" "$C_SNAP" "$C_WPOST" "$C_WINNING"; do
    http POST /v1/keys/preload "{\"zkey\":\"$c/circuit.zkey\"}" > /dev/null
done

submit() { # KIND DIR PARTITIONS
    local w=() i
    for i in $(seq 1 "$3"); do w+=(--witness "$2/witness.wtns"); done
    "$CUZK" submit --server "$ADDR" --zkey "$2/circuit.zkey" "${w[@]}" --kind "$1"
}

# ---------------------------------------------------------------- run
# alone on the idle daemon, 3 times each: a winning-post job (its own prove time) and a
# one-partition porep job (one partition's GPU time), for the winning-post latency target
{
    echo "["
    sep=
    for kind in winning-post porep; do
        dir=$C_WINNING; [ $kind = porep ] && dir=$C_POREP
        for i in 1 2 3; do
            id=$(submit $kind "$dir" 1)
            "$CUZK" await --server "$ADDR" "$id" > /dev/null 2>&1 || true
            printf '%s' "$sep"; http GET "/v1/jobs/$id"; sep=,
        done
    done
    echo "]"
} > "$WORK/solo.json"
sleep 0.2
t0=$(date +%s.%N)
ids=()
for i in $(seq 1 "$N_POREP"); do ids+=("$(submit porep "$C_POREP" 10)"); done
for i in $(seq 1 "$N_SNAP"); do ids+=("$(submit snap "$C_SNAP" 16)"); done
for i in $(seq 1 "$N_WPOST"); do ids+=("$(submit window-post "$C_WPOST" 1)"); done
for i in $(seq 1 "$N_WINNING"); do
    ids+=("$(submit winning-post "$C_WINNING" 1)")
    sleep "$WINNING_EVERY"
done
echo "submitted ${#ids[@]} jobs; waiting" >&2
failed=0
for id in "${ids[@]}"; do
    "$CUZK" await --server "$ADDR" "$id" 2> /dev/null || { echo "job $id did not succeed" >&2; failed=$((failed + 1)); }
done
t1=$(date +%s.%N)

http GET /status > "$WORK/status.json"
http GET "/v1/jobs?limit=100000" > "$WORK/jobs.json"
http GET /v1/trace > "$WORK/trace.json"
http GET /metrics > "$WORK/metrics.txt"
printf 't0=%s\nt1=%s\nfailed=%s\n' "$t0" "$t1" "$failed" > "$WORK/run.env"
kill -TERM $PID; wait $PID || true
trap - EXIT

# ---------------------------------------------------------------- report
if command -v node > /dev/null; then
    report "$WORK"
else
    echo "node is not installed here: run 'bench/pipeline.sh --report $WORK' where it is" >&2
fi
echo "trace: $WORK/trace.json (Perfetto), status: $WORK/status.json"
[ "$failed" = 0 ]
