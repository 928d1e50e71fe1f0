#!/usr/bin/env bash
# t_daemon_devices.sh - several devices in one daemon (CPU backend, black box), the code paths a
# multi-GPU host takes, exercised with logical devices:
#   - --devices 0,0: two logical devices; /status lists both; every partition ran its device
#     stage on one of them and both took work; all proofs verify with snarkjs;
#   - a device that fails (test hook CUZK_FAULT_DEVICE=1) fails only its own partitions, which
#     are retried on the other device: every job completes, the retries are counted, and no
#     partition ends on the faulty device;
#   - a malformed --devices list is refused at start with a clear message.
# Usage: CUZK=bin/cuzk tests/t_daemon_devices.sh   (normally through tests/run.sh)
set -uo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/dashboard/daemon_helpers.sh"

BN=$repo/tests/data/bn128/merkle
JOBS=3 PARTS=4

run_jobs() { # submits JOBS jobs of PARTS partitions, waits, fills ids[]
    ids=()
    local j p w
    for j in $(seq 1 $JOBS); do
        w=()
        for p in $(seq 1 $PARTS); do w+=(--witness "$BN/witness.wtns"); done
        ids+=("$("$CUZK" submit --server "$D_ADDR" --zkey "$BN/circuit.zkey" "${w[@]}" --kind porep)")
    done
    for j in "${ids[@]}"; do
        "$CUZK" await --server "$D_ADDR" --timeout 600 "$j" --out "$tmp/out-$j" > /dev/null 2>&1 \
            || fail "job $j did not complete"
    done
}

devices_used() { # prints the sorted distinct logical devices of the jobs' partitions
    local j
    for j in "${ids[@]}"; do
        api GET "/v1/jobs/$j"
        jget 'j.partitions.map(p => p.device).join("\n")'
    done | sort -u | tr '\n' ' '
}

# ---------------------------------------------------------------- two logical devices
start_daemon two --devices 0,0 --gpu-workers 1 --synth-workers 2 || finish
api GET /status
check "status lists two logical devices" [ "$(jget j.devices)" = 2 ]
check "both map to ordinal 0" [ "$(jget 'j.device_ordinals.join(",")')" = "0,0" ]
check "one device worker per logical device" [ "$(jget 'j.workers.filter(w => w.kind === "device").length')" = 2 ]
run_jobs
used=$(devices_used)
check "partitions ran on both logical devices (used: $used)" [ "$used" = "0 1 " ]
sj_verify "$BN/vk.json" "$tmp/out-${ids[0]}/public-0.json" "$tmp/out-${ids[0]}/proof-0.json" \
    || fail "snarkjs rejected a proof from the two-device daemon"
stop_daemon

# ---------------------------------------------------------------- a failing device
CUZK_FAULT_DEVICE=1 start_daemon faulty --devices 0,0 --gpu-workers 1 --synth-workers 2 || finish
run_jobs
for j in "${ids[@]}"; do
    api GET "/v1/jobs/$j"
    check "job $j done despite the failing device" [ "$(jget j.state)" = done ]
done
used=$(devices_used)
check "every partition finished on the healthy device (used: $used)" [ "$used" = "0 " ]
api GET /status
retries=$(jget 'j.counters ? j.counters.retries : j.retries')
check "the failures were retried ($retries retries)" [ "${retries:-0}" -gt 0 ] 2>/dev/null
for j in "${ids[@]}"; do
    for p in $(seq 0 $((PARTS - 1))); do
        sj_verify "$BN/vk.json" "$tmp/out-$j/public-$p.json" "$tmp/out-$j/proof-$p.json" \
            || fail "snarkjs rejected $j partition $p"
    done
done
stop_daemon

# ---------------------------------------------------------------- bad lists
"$CUZK" serve --listen 127.0.0.1:0 --data "$tmp/bad" --backend cpu --devices 0,x > "$tmp/bad.out" 2>&1
rc=$?
check "--devices 0,x refused at start (exit $rc)" [ $rc -ne 0 ] && [ $rc -lt 128 ]
grep -q "devices" "$tmp/bad.out" && pass "the message names the option: $(head -1 "$tmp/bad.out")" \
    || fail "no clear message for --devices 0,x: $(cat "$tmp/bad.out")"
finish
