#!/usr/bin/env bash
# t_daemon_sched.sh - scheduling and memory budget of `cuzk serve` (CPU backend, black box):
#   - priorities: a critical winning-post job submitted behind a backlog of normal porep
#     jobs finishes before the backlog does (before the last 3 backlog jobs), and a high job
#     overtakes the normal backlog too;
#   - budget: with --budget set so that only a few partitions fit, 10x more work than fits
#     is submitted at once; all of it completes (admission waits, nothing is refused), the
#     engine's own accounting never passes the budget (/status budget.peak <= total), and
#     the daemon's peak RSS (VmHWM from /proc) stays within budget + the documented fixed
#     overhead (docs/DAEMON.md: 64 MiB);
#   - a job whose single partition is larger than the whole budget is refused at submit
#     (422) with a message naming both numbers;
#   - the batched device stage (streamed keys; here the CPU backend's CUZK_TEST_CPU_BATCH hook):
#     a 10-partition job proved in batches of at most --batch-max, all proofs valid, batches
#     counted in /status, a winning-post partition never batched.
# Uses `cuzk dev-circuit` for a circuit big enough to make the budget matter, falling back
# to the committed fixtures when dev-circuit is not in this build.
# Usage: CUZK=bin/cuzk tests/t_daemon_sched.sh   (normally through tests/run.sh)
set -uo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/dashboard/daemon_helpers.sh"

# sanitizer builds run the arithmetic 10-20x slower: a smaller load keeps the suite short
SAN=0
# (the runtime's entry point is named in the binary whether it is linked dynamically, as gcc
# does, or statically, as clang does; grep reads the file itself, so no pipe can break)
grep -qa '__asan_init\|__tsan_init' "$CUZK" && SAN=1
BACKLOG_JOBS=8 BACKLOG_PARTS=8
[ $SAN = 1 ] && BACKLOG_JOBS=5 BACKLOG_PARTS=4
OVERHEAD_MIB=64    # documented fixed overhead over the budget (docs/DAEMON.md)
BN=$repo/tests/data/bn128/merkle
MUL=$repo/tests/data/bn128/multiplier

# ---------------------------------------------------------------- priorities
start_daemon prio --synth-workers 1 --gpu-workers 1 --queue-depth 1 --finalizers 1 || finish
backlog=()
for j in $(seq 1 $BACKLOG_JOBS); do
    w=()
    for p in $(seq 1 $BACKLOG_PARTS); do w+=(--witness "$BN/witness.wtns"); done
    backlog+=("$("$CUZK" submit --server "$D_ADDR" --zkey "$BN/circuit.zkey" "${w[@]}" --kind porep)")
done
high=$("$CUZK" submit --server "$D_ADDR" --zkey "$BN/circuit.zkey" --witness "$BN/witness.wtns" --witness "$BN/witness.wtns" --priority high)
crit=$("$CUZK" submit --server "$D_ADDR" --zkey "$MUL/circuit.zkey" --witness "$MUL/witness.wtns" --kind winning-post)
"$CUZK" await --server "$D_ADDR" --timeout 300 "$crit" --out "$tmp/crit" > /dev/null 2>&1
check "critical job done" [ $? = 0 ]
sj_verify "$MUL/vk.json" "$tmp/crit/public-0.json" "$tmp/crit/proof-0.json" || fail "critical proof rejected by snarkjs"
for id in "${backlog[@]}" "$high"; do "$CUZK" await --server "$D_ADDR" --timeout 600 "$id" > /dev/null 2>&1 || fail "job $id did not finish"; done
api GET "/v1/jobs/$crit"; crit_t=$(jget j.finished_ms)
api GET "/v1/jobs/$high"; high_t=$(jget j.finished_ms)
later=0
for id in "${backlog[@]}"; do
    api GET "/v1/jobs/$id"
    [ "$(jget j.finished_ms)" -gt "$crit_t" ] && later=$((later + 1))
done
check "critical job overtook the backlog ($later of $BACKLOG_JOBS backlog jobs finished after it)" [ $later -ge 3 ]
later=0
for id in "${backlog[@]}"; do
    api GET "/v1/jobs/$id"
    [ "$(jget j.finished_ms)" -gt "$high_t" ] && later=$((later + 1))
done
check "high job overtook the backlog ($later of $BACKLOG_JOBS backlog jobs finished after it)" [ $later -ge 3 ]
stop_daemon

# ---------------------------------------------------------------- budget
fx=$BN
if [ $SAN = 1 ]; then
    echo "note: sanitizer build: budget test on the merkle fixture"
elif "$CUZK" dev-circuit --curve bn128 --constraints 16384 --out "$tmp/dev" > "$tmp/dev.log" 2>&1 \
        && [ -f "$tmp/dev/circuit.zkey" ] && [ -f "$tmp/dev/witness.wtns" ]; then
    fx=$tmp/dev
    pass "dev-circuit of 16384 constraints for the budget test"
else
    echo "note: cuzk dev-circuit unavailable ($(tail -1 "$tmp/dev.log")); using the merkle fixture"
fi
# probe: bytes of one partition and of the key, from a daemon with the default budget
start_daemon probe || finish
id=$("$CUZK" submit --server "$D_ADDR" --zkey "$fx/circuit.zkey" --witness "$fx/witness.wtns")
"$CUZK" await --server "$D_ADDR" --timeout 300 "$id" > /dev/null 2>&1
api GET "/v1/jobs/$id"
part=$(jget 'j.partitions[0].bytes')
api GET /v1/keys
key=$(jget "j.keys.reduce((a, k) => a + k.bytes, 0)")
stop_daemon
check "probe measured partition ($part B) and key ($key B) sizes" [ "$part" -gt 0 ] 2>/dev/null
fits=2
budget=$((key + fits * part + part / 2))
n=$((10 * fits))
echo "budget $budget B = key $key + $fits.5 partitions of $part; submitting $n partitions"

start_daemon budget --budget "$budget" --synth-workers 3 --gpu-workers 2 --queue-depth 6 --finalizers 2 || finish
w=()
for p in $(seq 1 $((n / 4))); do w+=(--witness "$fx/witness.wtns"); done
ids=()
for j in 1 2 3 4; do ids+=("$("$CUZK" submit --server "$D_ADDR" --zkey "$fx/circuit.zkey" "${w[@]}")"); done
check "10x the budget was accepted (${#ids[@]} jobs)" [ "${ids[3]:-}" != "" ]
maxused=0
while :; do
    api GET /status
    used=$(jget j.budget.used)
    [ "$used" -gt "$maxused" ] 2>/dev/null && maxused=$used
    [ "$(jget 'j.jobs.queued + j.jobs.running')" = 0 ] && break
    sleep 0.1
done
api GET /status
check "engine's budget accounting stayed within the budget (peak $(jget j.budget.peak) <= $budget, sampled max $maxused)" \
    [ "$(jget "j.budget.peak <= $budget && j.budget.total == $budget")" = true ]
ok=1
for id in "${ids[@]}"; do
    "$CUZK" await --server "$D_ADDR" --timeout 60 "$id" --out "$tmp/b-$id" > /dev/null 2>&1 || { ok=0; fail "budget job $id failed"; }
done
if [ -n "$SNARKJS" ]; then
    sj_verify "$fx/vk.json" "$tmp/b-${ids[0]}/public-0.json" "$tmp/b-${ids[0]}/proof-0.json" || ok=0
fi
check "all $n partitions completed under the budget" [ $ok = 1 ]
hwm=$(peak_rss_kb "$D_PID")
limit=$(( (budget / 1024) + OVERHEAD_MIB * 1024 ))
if [ $SAN = 1 ]; then
    # shadow memory and the quarantine of freed blocks belong to the sanitizer, not to us
    echo "note: sanitizer build, peak RSS ${hwm} kB not held to budget + ${OVERHEAD_MIB} MiB"
else
    check "peak RSS ${hwm} kB <= budget + ${OVERHEAD_MIB} MiB overhead = ${limit} kB" [ "$hwm" -le "$limit" ]
fi

# a partition larger than the whole budget is refused at submit, naming the numbers
stop_daemon
small=$((part / 2))
start_daemon tiny --budget "$small" || finish
api POST /v1/jobs -d "{\"zkey\":\"$fx/circuit.zkey\",\"witnesses\":[\"$fx/witness.wtns\"]}"
msg=$(jget j.error)
g=0; grep -q "$small" <<< "$msg" && g=1
check "partition larger than the budget is 422 ($CODE): $msg" [ "$CODE" = 422 -a $g = 1 ]
api GET /status
check "daemon still serving after the refusal" [ "$CODE" = 200 ]
stop_daemon

# ---------------------------------------------------------------- batched device stage
# CUZK_TEST_CPU_BATCH=1 makes the CPU backend report a key's batch size as asked (a GPU does so
# for a streamed key), so the device stage proves the ready partitions of one key together: a
# job of 10 partitions behind one device worker forms batches, every proof is valid, /status
# counts the batches and names each partition's batch, and a winning-post job never joins one
CUZK_TEST_CPU_BATCH=1 start_daemon batch --batch-max 4 --gpu-workers 1 --queue-depth 8 --synth-workers 2 || finish
id=$("$CUZK" submit --server "$D_ADDR" --zkey "$BN/circuit.zkey" $(for i in $(seq 10); do echo --witness "$BN/witness.wtns"; done) \
     --kind porep 2>"$tmp/submit.err")
wid=$("$CUZK" submit --server "$D_ADDR" --zkey "$BN/circuit.zkey" --witness "$BN/witness.wtns" --kind winning-post 2>>"$tmp/submit.err")
check "batch: submitted ($(cat "$tmp/submit.err"))" [ -n "$id" -a -n "$wid" ]
ok=1
for j in $id $wid; do
    "$CUZK" await --server "$D_ADDR" --timeout 300 "$j" --out "$tmp/out-$j" 2>"$tmp/await.err" || { ok=0; cat "$tmp/await.err"; }
done
for i in $(seq 0 9); do
    sj_verify "$BN/vk.json" "$tmp/out-$id/public-$i.json" "$tmp/out-$id/proof-$i.json" || { ok=0; cat "$tmp/.sj"; }
done
sj_verify "$BN/vk.json" "$tmp/out-$wid/public-0.json" "$tmp/out-$wid/proof-0.json" || ok=0
check "batch: 10 porep partitions and a winning-post proved, all valid" [ $ok = 1 ]
api GET /status
nb=$(jget 'j.gpu[0].batches'); np=$(jget 'j.gpu[0].batched_partitions')
check "batch: /status counts batches ($nb passes, $np partitions)" [ "${nb:-0}" -ge 1 -a "${np:-0}" -ge 2 ]
api GET "/v1/jobs/$id"
maxb=$(jget 'Math.max(...j.partitions.map(p => p.batch))')
check "batch: partitions name their batch (largest $maxb, at most --batch-max 4)" [ "${maxb:-0}" -ge 2 -a "${maxb:-9}" -le 4 ]
api GET "/v1/jobs/$wid"
check "batch: the winning-post partition was proved alone" [ "$(jget 'j.partitions[0].batch')" = 1 ]
api GET /status
check "batch: the key's placement is reported" [ "$(jget 'j.keys[0].placement[0].placement')" = host ]
stop_daemon

finish
