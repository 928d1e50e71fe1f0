#!/usr/bin/env bash
# t_daemon_final.sh - the finalizers of `cuzk serve` and the worker counts `auto` picks (CPU
# backend, black box):
#   - a bad proof inside a finalizer batch: CUZK_FAULT_BAD_PROOF=2 corrupts one proof of the
#     first batch of at least 2 proofs the finalizers verify together (CUZK_TEST_CPU_BATCH=1
#     makes the device stage hand the partitions of one key over in groups, and the single
#     finalizer takes what is queued). The batch check fails, each proof is then verified
#     alone, and only the partition the daemon logged as corrupted is proved again (attempts 2,
#     every other one 1); the job completes and snarkjs accepts every proof; /status counts the
#     batch, its fallback, the one bad proof, one retry and one self-check failure;
#   - auto sizing: without options /status "sizing" shows the synthesis workers and finalizers
#     docs/DAEMON.md's formula gives for this machine (nproc cores, one device, queue depth 4),
#     and that many such worker threads run (plus the critical finalizer); explicit counts are
#     kept as given; a count that is neither a number in range nor `auto` stops the daemon at
#     start with a message naming the option.
# Usage: CUZK=bin/cuzk tests/t_daemon_final.sh   (normally through tests/run.sh)
set -uo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/dashboard/daemon_helpers.sh"

BN=$repo/tests/data/bn128/merkle
NPARTS=6

# ---------------------------------------------------------------- a bad proof in a batch
CUZK_TEST_CPU_BATCH=1 CUZK_FAULT_BAD_PROOF=2 start_daemon bad --batch-max 4 --gpu-workers 1 --queue-depth 8 \
    --synth-workers 2 --finalizers 1 || finish
w=()
for i in $(seq 1 $NPARTS); do w+=(--witness "$BN/witness.wtns"); done
id=$("$CUZK" submit --server "$D_ADDR" --zkey "$BN/circuit.zkey" "${w[@]}" --kind porep 2> "$tmp/submit.err")
check "bad proof: submitted $NPARTS partitions ($(cat "$tmp/submit.err"))" [ -n "$id" ]
"$CUZK" await --server "$D_ADDR" --timeout 300 "$id" --out "$tmp/out" > /dev/null 2> "$tmp/await.err"
rc=$?
check "bad proof: the job completed ($(cat "$tmp/await.err"))" [ $rc = 0 ]
ok=1
for i in $(seq 0 $((NPARTS - 1))); do
    sj_verify "$BN/vk.json" "$tmp/out/public-$i.json" "$tmp/out/proof-$i.json" || { ok=0; cat "$tmp/.sj"; }
done
check "bad proof: snarkjs accepts all $NPARTS proofs" [ $ok = 1 ]
# the partition the daemon corrupted, from its log
line=$(grep -m1 'CUZK_FAULT_BAD_PROOF' "$D_LOG")
bad=$(sed -n 's/.* partition \([0-9]*\): proof corrupted in a batch of \([0-9]*\).*/\1/p' <<< "$line")
size=$(sed -n 's/.* partition \([0-9]*\): proof corrupted in a batch of \([0-9]*\).*/\2/p' <<< "$line")
check "bad proof: one proof corrupted inside a batch (partition ${bad:-?} of a batch of ${size:-?})" \
    [ -n "$bad" ] && [ "${size:-0}" -ge 2 ]
api GET "/v1/jobs/$id"
check "bad proof: only partition ${bad:-?} was proved again (attempts $(jget 'j.partitions.map(p => p.attempts).join(",")'))" \
    [ "$(jget "j.partitions.every(p => p.attempts === (p.index === ${bad:--1} ? 2 : 1))")" = true ]
api GET /status
f=$(jget j.finalize)
check "bad proof: /status counts one bad proof, in a failed batch of >= 2 ($f)" \
    [ "$(jget 'j.finalize.bad === 1 && j.finalize.fallbacks === 1 && j.finalize.fallback_proofs >= 2 && j.finalize.largest >= 2')" = true ]
check "bad proof: every proof went through a batch check ($f)" [ "$(jget "j.finalize.proofs === $NPARTS + 1")" = true ]
check "bad proof: one retry and one self-check failure ($(jget j.counters))" \
    [ "$(jget 'j.counters.retries === 1 && j.counters.verify_failures === 1 && j.counters.partitions_failed === 0')" = true ]
check "bad proof: the finalize queue is empty again" [ "$(jget 'j.finalize.queued === 0 && j.queues.finalize === 0')" = true ]
api GET /metrics
check "bad proof: /metrics has the finalizer counters" grep -q '^cuzk_finalize_fallbacks_total 1$' <<< "$BODY"
stop_daemon
check "bad proof: the daemon stopped cleanly (exit $D_RC)" [ "$D_RC" = 0 ]

# ---------------------------------------------------------------- auto sizing
cores=$(nproc)
clamp() { local v=$1; [ "$v" -lt "$2" ] && v=$2; [ "$v" -gt "$3" ] && v=$3; echo "$v"; }
want_final=$(clamp $((cores / 8)) 1 2)            # 2 x 1 device
half=$((cores / 2)); [ $half -lt 2 ] && half=2     # max(2 x 1 device, cores / 2)
want_synth=$(clamp $half 2 5)                      # queue depth 4 + 1
start_daemon auto || finish
api GET /status
check "auto: /status sizing for $cores cores: $want_synth synthesis workers, $want_final finalizers ($(jget j.sizing))" \
    [ "$(jget "j.sizing.cores === $cores && j.sizing.synth_workers === $want_synth && j.sizing.synth_workers_auto &&
               j.sizing.finalizers === $want_final && j.sizing.finalizers_auto")" = true ]
check "auto: that many threads run ($(jget 'j.workers.map(w => w.name).join(" ")'))" \
    [ "$(jget "j.workers.filter(w => w.kind === 'synth').length === $want_synth &&
               j.workers.filter(w => w.kind === 'finalize').length === $want_final + 1")" = true ]
stop_daemon
start_daemon explicit --synth-workers 3 --finalizers 2 || finish
api GET /status
check "explicit counts kept ($(jget j.sizing))" \
    [ "$(jget "j.sizing.synth_workers === 3 && !j.sizing.synth_workers_auto && j.sizing.finalizers === 2 &&
               !j.sizing.finalizers_auto && j.workers.filter(w => w.kind === 'finalize').length === 3")" = true ]
stop_daemon
start_daemon autoflag --synth-workers auto --finalizers auto || finish
api GET /status
check "--synth-workers auto --finalizers auto ($(jget j.sizing))" \
    [ "$(jget "j.sizing.synth_workers === $want_synth && j.sizing.finalizers === $want_final")" = true ]
stop_daemon
"$CUZK" serve --listen 127.0.0.1:0 --data "$tmp/refused" --finalizers some > "$tmp/refused.log" 2>&1
rc=$?
check "--finalizers some is refused at start (exit $rc: $(head -1 "$tmp/refused.log"))" \
    [ $rc != 0 ] && grep -q -- "--finalizers: 'some' is not a whole number or auto" "$tmp/refused.log"

finish
