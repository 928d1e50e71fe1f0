#!/bin/sh
# t_gpu_emu.sh - the CUDA backend's device code without a GPU: dev/cuda/emu_test compiles
# src/gpu/ff.cuh, ec.cuh and the NTT and MSM kernels for the CPU with the PTX carry-chain
# primitives emulated in C, runs every kernel one thread at a time, and checks field products
# (both multiplication forms), point additions, NTTs and MSMs (random, all-one, 0/1/r-1 mixes)
# against the plain reference in dev/cuda/ref.h. Catches carry, index and bucket mistakes in
# the GPU code on machines that have no GPU (CI).
set -eu
ROOT=$(cd "$(dirname "$0")/.." && pwd)
cd "$ROOT"
command -v g++ >/dev/null 2>&1 || { echo "SKIP: g++ not found"; exit 77; }
# the emulator is built here with g++ alone, not with the sanitizers: under `make asan` it would
# repeat `make test`'s run exactly (10 minutes on two cores), so that run is the one
if [ -n "${CUZK:-}" ] && grep -qa '__asan_init\|__ubsan_handle' "$CUZK" 2>/dev/null; then
    echo "SKIP: sanitizer build (the emulator is not sanitized; make test runs it)"
    exit 77
fi
TMP=${CUZK_TEST_TMP:-$(mktemp -d)}
mkdir -p "$TMP"
# three builds: level 0 loading each base whole (BN254's build) and reading its coordinates as
# the addition needs them (MSM_LAZY_BASE, BLS12-381's build); the field and NTT tests, which
# that knob does not touch, in the first run only; then the NTT's other schedule, the
# transforms alone: butterflies reduced mod P at every stage, the products by 1, blocks of
# 2^10 with the later groups on runs of 8 columns (NTT_LAZY off, NTT_TW_ONE off,
# NTT_GROUP_LOG 10, NTT_FULL_ROUNDS off)
# The three builds and runs are independent and single-threaded at heart: they run side by
# side, as many at once as there are cores (two on CI), each in its own folder.
runs="-DMSM_LAZY_BASE=0:|-DMSM_LAZY_BASE=1:msm|-DNTT_LAZY=0 -DNTT_TW_ONE=0 -DNTT_GROUP_LOG=10 -DNTT_FULL_ROUNDS=0:ntt"
cores=$(nproc 2>/dev/null || echo 2)
emu_run() { # INDEX DEFS WHAT: build and run one configuration into $TMP/emu-INDEX
    d="$TMP/emu-$1"
    mkdir -p "$d"
    g++ -std=c++17 -O1 -pthread -Wall -Wno-unknown-pragmas -Wno-unused-function -Isrc -Idev/cuda $2 \
        -o "$d/emu_test" dev/cuda/emu_test.cpp > "$d/build.txt" 2>&1 &&
        "$d/emu_test" $3 > "$d/emu.txt" 2>&1
    echo $? > "$d/rc"
}
i=0
pids=""
IFS='|'
for run in $runs; do
    unset IFS
    i=$((i + 1))
    emu_run $i "${run%%:*}" "${run#*:}" &
    pids="$pids $!"
    # at most $cores at once: wait for the oldest before starting another
    if [ $(echo $pids | wc -w) -ge "$cores" ]; then
        set -- $pids
        wait "$1"
        shift
        pids="$*"
    fi
    IFS='|'
done
unset IFS
wait
i=0
fail=0
IFS='|'
for run in $runs; do
    unset IFS
    i=$((i + 1))
    d="$TMP/emu-$i"
    echo "== ${run%%:*}"
    cat "$d/build.txt" "$d/emu.txt" 2>/dev/null
    if [ "$(cat "$d/rc" 2>/dev/null)" != 0 ]; then
        echo "FAIL: emu_test (${run%%:*})"
        fail=1
    elif ! grep -q '^EMU OK' "$d/emu.txt"; then
        echo "FAIL: emu_test did not report EMU OK (${run%%:*})"
        fail=1
    fi
    IFS='|'
done
unset IFS
[ $fail = 0 ] || exit 1
echo "all checks passed"
