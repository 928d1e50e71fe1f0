#!/usr/bin/env bash
# t_daemon_gpu_emu.sh - the daemon with the CUDA backend on a machine without a GPU: `cuzk serve
# --backend gpu` from `make emu`'s build (the whole CUDA backend against the emulated runtime of
# dev/cuda/emu_rt), black box over HTTP:
#   - key resident, two device workers on the one device, jobs of several partitions: every proof
#     verifies with snarkjs, /status gives the key's placement (resident) and device memory, the
#     workers, the device's busy time and its idle-gap account, /metrics the busy time;
#   - key streamed (CUZK_GPU_PLACEMENT=streamed, chunks that divide no set) with --batch-max 4:
#     jobs of 4 partitions proved in batches (the device's batch counters), every proof verifies,
#     /status says streamed and counts passes and bytes copied.
# The emulated device checks the host code's stream order and copies (see tests/t_gpu_rt_emu.sh);
# timing is the GPU suite's.
set -uo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/dashboard/daemon_helpers.sh"
command -v g++ >/dev/null 2>&1 || { echo "SKIP: g++ not found"; exit 77; }
command -v python3 >/dev/null 2>&1 || { echo "SKIP: python3 not found (it rewrites the kernel launches)"; exit 77; }
if grep -qa '__asan_init\|__ubsan_handle' "$CUZK" 2>/dev/null; then
    echo "SKIP: sanitizer build (the emulated-runtime build is not sanitized; make test runs it)"
    exit 77
fi
B=$repo/build-emu
if ! make -s -C "$repo" -j"$(nproc 2>/dev/null || echo 2)" emu >"$tmp/build.txt" 2>&1; then
    fail "make emu (the CUDA backend against the emulated runtime)"; tail -30 "$tmp/build.txt"
    finish
fi
CUZK=$B/bin/cuzk
BN=$repo/tests/data/bn128/merkle

submit_jobs() { # NJOBS PARTS KIND: fills ids[]
    ids=()
    local j p w
    for j in $(seq 1 "$1"); do
        w=()
        for p in $(seq 1 "$2"); do w+=(--witness "$BN/witness.wtns"); done
        ids+=("$("$CUZK" submit --server "$D_ADDR" --zkey "$BN/circuit.zkey" "${w[@]}" --kind "$3")")
    done
}
await_verify() { # PARTS: every job of ids[] done, every partition's proof accepted by snarkjs
    local j p
    for j in "${ids[@]}"; do
        if ! "$CUZK" await --server "$D_ADDR" --timeout 600 "$j" --out "$tmp/out-$j" >/dev/null 2>&1; then
            fail "job $j did not complete"; continue
        fi
        for p in $(seq 0 $(( $1 - 1 ))); do
            sj_verify "$BN/vk.json" "$tmp/out-$j/public-$p.json" "$tmp/out-$j/proof-$p.json" ||
                fail "snarkjs rejected job $j partition $p"
        done
    done
    pass "${#ids[@]} jobs of $1 partitions done and verified"
}

# ---------------------------------------------------------------- resident, two device workers
CUZK_EMU_SEED=3 start_daemon resident --backend gpu --gpu-workers 2 --synth-workers 2 || finish
submit_jobs 3 3 porep
await_verify 3
api GET /status
check "two device workers" [ "$(jget 'j.workers.filter(w => w.kind === "device").length')" = 2 ]
check "placement resident" [ "$(jget 'j.keys[0].placement[0].placement')" = resident ]
check "the key's device memory is counted ($(jget 'j.gpu[0].gpu_mem_keys') bytes)" [ "$(jget 'j.gpu[0].gpu_mem_keys > 0')" = true ]
check "the device was busy (busy_ms $(jget 'j.gpu[0].busy_ms'))" [ "$(jget 'j.gpu[0].busy_ms > 0')" = true ]
check "the idle-gap account has its causes" [ "$(jget 'Object.keys(j.gpu[0].idle_gap_ms).length > 0')" = true ]
check "nine partitions done" [ "$(jget j.counters.partitions_done)" = 9 ]
api GET /metrics
check "/metrics has the device's busy time" grep -q '^cuzk_gpu_busy_seconds_total{device="0"} [0-9.]*[1-9]' <<< "$BODY"
stop_daemon
check "the daemon stopped cleanly (exit $D_RC)" [ "$D_RC" = 0 ]

# ---------------------------------------------------------------- streamed, in batches
CUZK_EMU_SEED=4 CUZK_GPU_PLACEMENT=streamed CUZK_GPU_STREAM_CHUNK=333 start_daemon streamed --backend gpu \
    --gpu-workers 1 --synth-workers 2 --batch-max 4 || finish
submit_jobs 2 4 porep
await_verify 4
api GET /status
check "placement streamed" [ "$(jget 'j.keys[0].placement[0].placement')" = streamed ]
check "passes over the streamed bases ($(jget 'j.keys[0].placement[0].passes'))" \
    [ "$(jget 'j.keys[0].placement[0].passes > 0 && j.keys[0].placement[0].bytes_copied > 0')" = true ]
check "partitions proved in batches ($(jget 'j.gpu[0].batches') batches, $(jget 'j.gpu[0].batched_partitions') partitions)" \
    [ "$(jget 'j.gpu[0].batched_partitions > 0')" = true ]
stop_daemon
check "the daemon stopped cleanly (exit $D_RC)" [ "$D_RC" = 0 ]
finish
