#!/usr/bin/env bash
# device_session.sh - one batched session on a GPU machine, through dev/cuda/snap_run.sh:
# builds the C side (against .debs when the machine lacks the daemon's libraries) with the
# carried CUDA objects and labs, then, each part under its own time limit:
#   1. tests/gpu.sh            GPU against CPU, byte for byte, and snarkjs-format checks
#   2. bench/pipeline.sh       the Filecoin-shaped mix through the daemon (files for --report)
#   3. a large whole proof     dev-circuit of 2^LARGE_LOG constraints, prove --repeat, verify
#   4. bench/stream.sh         streamed keys against resident ones under a --gpu-mem cap
#   5. bench/gpu.sh            kernel table and whole proofs (bench/results format)
# Logs and tables go to $OUT. Knobs: LARGE_LOG (24), LARGE_CURVE (bls12381), SKIP="pipeline ...",
# BENCH_DENSE_SIZES (bench/gpu.sh's dense proofs; none here unless set: 2^24 takes minutes to make).
set -uo pipefail
OUT=${OUT:-/tmp/cuzk-out}
mkdir -p "$OUT"
skip=" ${SKIP:-} "
pfx=/tmp/pfx
mkdir -p $pfx
for f in .debs/*.deb; do dpkg -x "$f" $pfx 2>/dev/null; done
lib=$pfx/usr/lib/x86_64-linux-gnu
export EXTRA_CFLAGS="-I$pfx/usr/include -I$pfx/usr/include/x86_64-linux-gnu -I$pfx/usr/include/postgresql"
# libpq's own dependencies (Kerberos, LDAP, SASL, OpenSSL), where the machine lacks them: .debs/lib
[ -d .debs/lib ] && lib="$lib:$PWD/.debs/lib"
export LIBRARY_PATH=$lib${LIBRARY_PATH:+:$LIBRARY_PATH}
{
    nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv,noheader
    echo "cores $(nproc); commit $(cat .commit 2>/dev/null || git rev-parse --short HEAD 2>/dev/null); CUDA flags: $(cat .flags 2>/dev/null)"
} >"$OUT/env.txt" 2>&1
find build-cuda/obj/src/gpu -name '*.o' -exec touch {} + 2>/dev/null
for f in dev/cuda/lab_bn254 dev/cuda/lab_bls12_381; do [ -s "$f" ] && touch "$f"; done
t0=$(date +%s)
make BUILD=build-cuda -j"$(nproc)" build-cuda/bin/cuzk build-cuda/test/gpu/gpu_backend_test \
    PQ_INC="-I$pfx/usr/include/postgresql" \
    LDLIBS="-L${lib//:/ -L} -Wl,-rpath-link,$lib -l:libmicrohttpd.so.12 -l:libjansson.so.4 -l:libsqlite3.so.0 -l:libpq.so.5 -lm -pthread -L/usr/local/cuda/lib64 -lcudart_static -ldl -lrt -lstdc++" \
    >"$OUT/build.txt" 2>&1 || { echo "BUILD FAILED"; grep -E 'error' "$OUT/build.txt" | head -20; exit 1; }
case "$skip" in *" gpubench "*) ;; *) make -s -C dev/cuda lab_bn254 lab_bls12_381 >>"$OUT/build.txt" 2>&1 ;; esac
echo "build: $(( $(date +%s) - t0 )) s"
grep -q 'not found' <<< "$(ldd build-cuda/bin/cuzk)" && export LD_LIBRARY_PATH=$lib
export CUZK=$PWD/build-cuda/bin/cuzk GPU_TEST=$PWD/build-cuda/test/gpu/gpu_backend_test
part() { # NAME LIMIT_S COMMAND...
    local name=$1 lim=$2 t=$(date +%s)
    shift 2
    case "$skip" in *" $name "*) echo "$name: skipped"; return ;; esac
    timeout "$lim" "$@" >"$OUT/$name.txt" 2>&1
    echo "$name: rc=$? $(( $(date +%s) - t )) s"
}
part suite ${SUITE_S:-240} env GPU_SIZES="${GPU_SIZES:-500 70000}" GPU_LABS=0 GPU_DEV_TIMING=0 GPU_EMU=${GPU_EMU:-0} \
    CUZK_TEST_TMP=/tmp/gs tests/gpu.sh
grep -E '^FAIL|failure' "$OUT/suite.txt" | head; grep -c '^ok' "$OUT/suite.txt"
part pipeline ${PIPELINE_S:-120} env WORK=/tmp/pipeline POREP_K=${POREP_K:-18} SNAP_K=${SNAP_K:-18} WPOST_K=${WPOST_K:-19} \
    WINNING_K=${WINNING_K:-12} N_POREP=${N_POREP:-24} N_SNAP=${N_SNAP:-10} N_WPOST=${N_WPOST:-4} N_WINNING=${N_WINNING:-8} \
    WINNING_EVERY=1 BACKEND=gpu bench/pipeline.sh
for f in status.json jobs.json run.env metrics.txt solo.json; do cp /tmp/pipeline/$f "$OUT/pipe-$f" 2>/dev/null; done
gzip -c /tmp/pipeline/trace.json >"$OUT/pipe-trace.json.gz" 2>/dev/null
large() {
    local d=/tmp/large
    "$CUZK" dev-circuit --curve "${LARGE_CURVE:-bls12381}" --constraints $(( (1 << ${LARGE_LOG:-24}) - 2 )) --out $d -q \
        || return 1
    ls -la $d
    "$CUZK" prove -v --repeat 3 --backend gpu $d/circuit.zkey $d/witness.wtns $d/proof.json $d/public.json &&
        "$CUZK" verify $d/vk.json $d/public.json $d/proof.json
}
export -f large
part large ${LARGE_S:-130} bash -c large
grep -E 'key|run|median|points computed|constraints' "$OUT/large.txt" | head
part stream ${STREAM_S:-300} env BENCH_OUT="$OUT/stream-bench.md" BENCH_WORK=/tmp/stream STREAM_LOGS="${STREAM_LOGS:-24}" \
    bench/stream.sh
part gpubench ${GPUBENCH_S:-180} env BENCH_OUT="$OUT/gpu-bench.md" BENCH_PROOF_SIZES="${BENCH_PROOF_SIZES:-1000000}" \
    BENCH_DENSE_SIZES="${BENCH_DENSE_SIZES-}" bench/gpu.sh
cat "$OUT/gpu-bench.md" 2>/dev/null | grep -E '^\|' | head -60
# at most 8 files travel back: keep the results, leave the build logs behind
cat "$OUT/env.txt"
mkdir -p /tmp/session-extra
mv "$OUT/env.txt" "$OUT/build.txt" "$OUT/gpubench.txt" "$OUT/pipe-metrics.txt" /tmp/session-extra/ 2>/dev/null
ls "$OUT"
