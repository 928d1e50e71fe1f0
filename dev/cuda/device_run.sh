#!/usr/bin/env bash
# device_run.sh - one batched session on a GPU machine: build what is missing, run the kernel
# labs, the GPU suite and (optionally) the benchmark, leaving logs in $OUT.
#
#   dev/cuda/device_run.sh [labs] [suite] [bench]      (default: labs suite)
#
# The machine may lack the libmicrohttpd/jansson/sqlite development files: .debs/ (a
# gitignored folder of Debian packages: lib{microhttpd,jansson,sqlite3}{,-dev} and the GnuTLS
# chain) is unpacked into /tmp/pfx and used for compiling and, if the system lacks a library,
# at run time. Prebuilt CUDA objects (build-cuda/obj/src/gpu) and lab binaries are kept when
# present (touched newer than their sources) so the machine compiles only C.
set -uo pipefail
OUT=${OUT:-/tmp/cuzk-out}
mkdir -p "$OUT"
what=${*:-labs suite}
pfx=/tmp/pfx
mkdir -p $pfx
for f in .debs/*.deb; do dpkg -x "$f" $pfx; done
lib=$pfx/usr/lib/x86_64-linux-gnu
{
    nvidia-smi --query-gpu=name,memory.total,driver_version,clocks.sm,clocks.max.sm --format=csv
    nproc; grep PRETTY /etc/os-release; ldd --version | head -1; git rev-parse --short HEAD 2>/dev/null
} >"$OUT/env.txt" 2>&1
cat "$OUT/env.txt"
find build-cuda/obj/src/gpu -name '*.o' -exec touch {} + 2>/dev/null
for f in dev/cuda/lab_bn254 dev/cuda/lab_bls12_381; do [ -s "$f" ] && touch "$f"; done
t0=$(date +%s)
make -s -C dev/cuda -j2 >"$OUT/build_labs.txt" 2>&1 &
labs_pid=$!
make BUILD=build-cuda -j16 build-cuda/bin/cuzk build-cuda/test/gpu/gpu_backend_test \
    EXTRA_CFLAGS="-I$pfx/usr/include -I$pfx/usr/include/x86_64-linux-gnu" \
    LDLIBS="-L$lib -l:libmicrohttpd.so.12 -l:libjansson.so.4 -l:libsqlite3.so.0 -lm -pthread -L/usr/local/cuda/lib64 -lcudart_static -ldl -lrt -lstdc++" \
    >"$OUT/build.txt" 2>&1 || { echo "BUILD FAILED"; grep -E 'error|Error' "$OUT/build.txt" | head -30; }
wait $labs_pid || { echo "LAB BUILD FAILED"; tail -20 "$OUT/build_labs.txt"; }
echo "build: $(( $(date +%s) - t0 )) s"
if ldd build-cuda/bin/cuzk | grep -q 'not found'; then
    export LD_LIBRARY_PATH=$lib
    echo "using libraries from .debs"
fi
ldd build-cuda/bin/cuzk | grep -E 'not found|microhttpd|jansson' || true
export CUZK=$PWD/build-cuda/bin/cuzk
case " $what " in *" labs "*)
    for c in bn254 bls12_381; do
        t0=$(date +%s)
        timeout 120 dev/cuda/lab_$c ff ntt msm big >"$OUT/lab_$c.txt" 2>&1; echo "lab_$c rc=$? $(( $(date +%s) - t0 )) s"
        grep -E 'FAIL|error|LAB' "$OUT/lab_$c.txt" | head; grep '^|' "$OUT/lab_$c.txt"
    done ;;
esac
case " $what " in *" suite "*)
    t0=$(date +%s)
    GPU_SIZES="${GPU_SIZES:-500 20000}" GPU_LABS=0 GPU_TEST=$PWD/build-cuda/test/gpu/gpu_backend_test CUZK_TEST_TMP=/tmp/gpu-suite \
        timeout 150 tests/gpu.sh >"$OUT/suite.txt" 2>&1
    echo "suite rc=$? $(( $(date +%s) - t0 )) s"
    grep -E 'FAIL|gpu.sh' "$OUT/suite.txt" | head -40
    grep -h -A8 'witness seed' /tmp/gpu-suite/*.steps 2>/dev/null | grep -B3 FAIL | head -40 ;;
esac
case " $what " in *" prof "*)
    t0=$(date +%s)
    timeout 200 dev/cuda/lab_bn254 ntt big prof >"$OUT/prof_bn254.txt" 2>&1; echo "prof bn254 rc=$?"
    grep -E '^phases|^check.*FAIL|LAB' "$OUT/prof_bn254.txt"
    timeout 120 dev/cuda/lab_bls12_381 prof >"$OUT/prof_bls.txt" 2>&1; echo "prof bls rc=$?"
    grep -E '^phases|FAIL|LAB' "$OUT/prof_bls.txt"
    echo "prof: $(( $(date +%s) - t0 )) s"
    if [ -n "${NCU:-}" ]; then
        t0=$(date +%s)
        timeout 150 ncu --clock-control none -k regex:"$NCU" -c ${NCU_COUNT:-3} --section SpeedOfLight \
            --section Occupancy --section LaunchStats --section ComputeWorkloadAnalysis \
            --section MemoryWorkloadAnalysis dev/cuda/lab_bn254 one >"$OUT/ncu.txt" 2>&1
        echo "ncu rc=$? $(( $(date +%s) - t0 )) s"
    fi
    for c in ${PROOF_CURVES:-bn128}; do
        d=/tmp/proof-$c
        "$CUZK" dev-circuit --curve $c --constraints ${PROOF_N:-1000000} --out $d -q >/dev/null 2>&1 || echo "dev-circuit $c failed"
        for rep in 1 2 3; do
            "$CUZK" prove -v --backend gpu $d/circuit.zkey $d/witness.wtns $d/proof.json $d/public.json 2>&1 | grep -E 'steps|prove [0-9]'
        done
    done ;;
esac
case " $what " in *" bench "*)
    GPU_TEST=$PWD/build-cuda/test/gpu/gpu_backend_test BENCH_OUT=$OUT/bench.md timeout 330 bench/gpu.sh >/dev/null 2>&1; echo "bench rc=$?"; cat "$OUT/bench.md" ;;
esac
