#!/usr/bin/env bash
# t_gpu_rt_emu.sh - the GPU suite (tests/gpu.sh, steps 2-4) without a GPU: the whole CUDA backend,
# host code and kernels, built with g++ against the emulated CUDA runtime of dev/cuda/emu_rt
# (make EMU=1, into build-emu/) and run on the CPU against the CPU backend, byte for byte: the
# resident key, tables, the wide shapes, the streamed key in every placement the device suite
# runs (chunks that divide nothing, a/b/c on either side, the lean layout, sets on the device),
# batches of 1, 3, 4 and 10 partitions, and dev-circuit's fixed-base kernels. The emulated
# device runs stream work in an order drawn from CUZK_EMU_SEED among the orders CUDA allows, so a
# missing event wait or an early host read shows as a wrong proof (dev/cuda/emu_rt/emu_rt_test.cu,
# run first, checks that the schedule keeps every order CUDA keeps and breaks, over seeds, those
# it does not, that barriers hold and that a stray copy stops the process); each half of the cases runs
# under its own seed, side by side. It checks no timing and no race inside one kernel: the
# device suite (make test-gpu) stays the judge of those.
#   CUZK_EMU_SEEDS="a b"  the two halves' seeds (default "1 2")
set -uo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
cd "$ROOT"
command -v g++ >/dev/null 2>&1 || { echo "SKIP: g++ not found"; exit 77; }
command -v python3 >/dev/null 2>&1 || { echo "SKIP: python3 not found (it rewrites the kernel launches)"; exit 77; }
# not under the sanitizers: the emulated build is its own build, the same under make asan
if [ -n "${CUZK:-}" ] && grep -qa '__asan_init\|__ubsan_handle' "$CUZK" 2>/dev/null; then
    echo "SKIP: sanitizer build (the emulated-runtime build is not sanitized; make test runs it)"
    exit 77
fi
TMP=${CUZK_TEST_TMP:-$(mktemp -d)}
mkdir -p "$TMP"
B=build-emu
t0=$(date +%s)
if ! make -s -j"$(nproc 2>/dev/null || echo 2)" emu >"$TMP/build.txt" 2>&1; then
    echo "FAIL: make emu (the CUDA backend against the emulated runtime)"
    tail -30 "$TMP/build.txt"
    exit 1
fi
echo "build-emu: $(( $(date +%s) - t0 )) s"
# the emulated runtime itself first: the orders CUDA keeps kept, the others broken in some seeds
if ! { python3 dev/cuda/emu_rt/emu_cu.py dev/cuda/emu_rt/emu_rt_test.cu "$TMP/emu_rt_test.cpp" &&
    g++ -std=c++17 -O1 -pthread -Wall -Wno-unused-function -include dev/cuda/emu_rt/cuda_runtime.h -Idev/cuda/emu_rt \
        -Idev/cuda -Isrc -x c++ "$TMP/emu_rt_test.cpp" -x none dev/cuda/emu_rt/cuda_emu_rt.cpp \
        -o "$TMP/emu_rt_test" && "$TMP/emu_rt_test"; } >"$TMP/rt_test.txt" 2>&1; then
    cat "$TMP/rt_test.txt"
    echo "FAIL: dev/cuda/emu_rt/emu_rt_test.cu (the emulated runtime's own checks)"
    exit 1
fi
cat "$TMP/rt_test.txt"
read -r s1 s2 <<< "${CUZK_EMU_SEEDS:-1 2}"
half() { # SEED CASES NAME
    CUZK_EMU_SEED=$1 GPU_RT_EMU=1 GPU_SIZES=300 GPU_FB_SIZE=600 GPU_CASES="$2" CUZK="$ROOT/$B/bin/cuzk" \
        GPU_TEST="$ROOT/$B/test/gpu/gpu_backend_test" CUZK_TEST_TMP="$TMP/$3" bash tests/gpu.sh >"$TMP/$3.txt" 2>&1
    echo $? >"$TMP/$3.rc"
}
half "$s1" "bn128:sparse bls12381:dense" a &
half "$s2" "bn128:dense bls12381:sparse" b &
wait
fail=0
for h in a b; do
    cat "$TMP/$h.txt"
    if [ "$(cat "$TMP/$h.rc")" != 0 ] || ! grep -q '^gpu.sh: all passed' "$TMP/$h.txt"; then
        echo "FAIL: tests/gpu.sh on the emulated runtime (logs in $TMP/$h)"
        fail=1
    fi
done
[ $fail = 0 ] || exit 1
echo "all checks passed ($(( $(date +%s) - t0 )) s)"
