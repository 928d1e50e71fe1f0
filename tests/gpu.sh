#!/usr/bin/env bash
# gpu.sh - the GPU suite (make test-gpu): the CUDA backend against the CPU backend.
#
#   1. the kernel labs (dev/cuda/lab.cu), when nvcc is here: field mul/sqr/add/sub, NTT and
#      MSM (G1, G2; random, all-one, all-zero and mixed scalars, infinity bases) against the
#      plain CPU reference dev/cuda/ref.h on fresh random inputs;
#   2. gpu_backend_test on synthetic keys (cuzk dev-circuit) of several sizes, both curves,
#      sparse and dense: eval_abc, compute_h and the five MSMs of the GPU backend equal the
#      CPU backend's on a fresh random witness;
#   3. the same keys proved with --backend gpu and --backend cpu under one CUZK_TEST_RS:
#      proof.json byte-identical, accepted by `cuzk verify` and, where node and snarkjs are
#      installed, by `snarkjs groth16 verify`; steps 2 and 3 each run once without and once
#      with the h MSM over a table of shifted bases (CUZK_GPU_MSM_TABLE=0 and 1; keys from 2^17
#      points get one by default), and with the five MSMs at once (keys below 2^20 points, as
#      all here) or one after another (CUZK_GPU_PAR_SETS_MAX=0): steps without a table at once,
#      with one after another; proofs the other way round; one proof more takes the witness
#      MSMs' wide shapes made to differ at these sizes (CUZK_TEST_WIDE): dense witnesses must
#      take them, sparse ones not, and the proof is the same;
#      steps 2 and 3 also run with the key streamed (bases in page-locked host memory, chunks
#      that do not divide the sets, a --gpu-mem cap below the resident need; gpu_backend_test
#      also batches 1, 3 and 10 partitions of witnesses of zeros, ones, mixed and random values);
#   4. `cuzk dev-circuit --backend gpu` (key points by src/gpu/fixed_base.cuh) against
#      `--backend cpu`: the same circuit.zkey byte for byte, both curves, sparse and dense,
#      in one chunk and in many (CUZK_TEST_FB_CHUNK); then a timing line for 2^20
#      constraints per curve (GPU and CPU, keys compared too), printed for the record.
# Prints "SKIPPED: no GPU" and succeeds when nvidia-smi finds no GPU.
# Keys from 2^17 points (70000 constraints: a domain of 2^17) get the h MSM's table by default,
# smaller ones none: GPU_SIZES should name sizes on both sides (the default and
# device_session.sh do).
# Env: CUZK (binary), GPU_TEST (gpu_backend_test binary), GPU_SIZES (constraint counts),
#      GPU_CASES (curve:shape pairs, default all four), GPU_FB_SIZE (step 4's constraints, 3000),
#      GPU_LABS=0 to leave out step 1, GPU_DEV_TIMING=0 to leave out the 2^20 timing,
#      GPU_EMU=0 to leave out step 0 (make test runs it too; it needs no GPU),
#      GPU_RT_EMU=1: CUZK and GPU_TEST are the emulated-runtime build (make EMU=1, dev/cuda/emu_rt:
#      the whole CUDA backend on the CPU), so steps 2-4 run without a GPU; steps 0 and 1 and
#      the timing are left out (tests/t_gpu_rt_emu.sh).
set -uo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
repo=$(cd "$here/.." && pwd)
cd "$repo"

# 0. the device field and point code, and the fixed-base kernels, on the CPU, PTX emulated
#    (needs no GPU)
rt_emu=${GPU_RT_EMU:-0}
if [ "$rt_emu" = 1 ]; then
    GPU_EMU=0 GPU_LABS=0 GPU_DEV_TIMING=0
fi
if [ "${GPU_EMU:-1}" = 1 ] && command -v g++ >/dev/null 2>&1; then
    if ! make -s -C dev/cuda emu >/dev/null 2>&1; then
        echo "FAIL: dev/cuda emu_test (device field/XYZZ code on the CPU vs dev/cuda/ref.h)"
        make -s -C dev/cuda emu 2>&1 | tail -15
        exit 1
    fi
    echo "ok:   device field and XYZZ code, run on the CPU, match the reference"
    if make -s -C dev/cuda fb-emu >"${TMPDIR:-/tmp}/cuzk-fb-emu.$$" 2>&1; then
        echo "ok:   fixed-base kernels, run on the CPU, give dev-circuit's CPU points"
    else # counted below; the GPU steps still run
        echo "FAIL: dev/cuda fb-emu (dev-circuit's fixed-base kernels on the CPU vs the CPU path)"
        grep -v '^ok' "${TMPDIR:-/tmp}/cuzk-fb-emu.$$" | tail -15
        fb_emu_failed=1
    fi
    rm -f "${TMPDIR:-/tmp}/cuzk-fb-emu.$$"
fi
if [ "$rt_emu" != 1 ] && { ! command -v nvidia-smi >/dev/null 2>&1 || ! grep -q '^GPU' <<< "$(nvidia-smi -L 2>/dev/null)"; }; then
    echo "SKIPPED: no GPU"
    exit ${fb_emu_failed:-0}
fi
CUZK=${CUZK:-$repo/bin/cuzk}
case "$CUZK" in /*) ;; *) CUZK=$repo/$CUZK ;; esac
if [ -z "${GPU_TEST:-}" ]; then
    for t in "$(dirname "$CUZK")/../test/gpu/gpu_backend_test" "$repo/build/test/gpu/gpu_backend_test"; do
        if [ -x "$t" ]; then GPU_TEST=$t; break; fi
    done
fi
if [ ! -x "$CUZK" ] || [ ! -x "${GPU_TEST:-}" ]; then
    echo "FAIL: need the cuzk binary ($CUZK) and gpu_backend_test (make test-gpu builds both)"
    exit 1
fi
tmp=${CUZK_TEST_TMP:-$(mktemp -d)}
mkdir -p "$tmp"
failures=${fb_emu_failed:-0}
fail() { echo "FAIL: $*"; failures=$((failures + 1)); }
pass() { echo "ok:   $*"; }
[ "$rt_emu" = 1 ] && echo "device: the emulated CUDA runtime (CPU), schedule seed ${CUZK_EMU_SEED:-1}" || nvidia-smi -L

# 1. kernel labs
if [ "${GPU_LABS:-1}" = 1 ] && command -v nvcc >/dev/null 2>&1; then
    if make -s -C dev/cuda -j2 >"$tmp/labs.build" 2>&1; then
        for c in bn254 bls12_381; do
            if dev/cuda/lab_$c ff ntt msm >"$tmp/lab_$c.out" 2>&1; then
                pass "kernel lab $c"
            else
                fail "kernel lab $c"; grep -E 'FAIL|error' "$tmp/lab_$c.out" | head -20
            fi
        done
    else
        fail "kernel labs do not build"; tail -20 "$tmp/labs.build"
    fi
fi

# 2 and 3. synthetic keys
snarkjs=""
if command -v node >/dev/null 2>&1 && [ -x "$repo/node_modules/.bin/snarkjs" ]; then
    snarkjs=$repo/node_modules/.bin/snarkjs
fi
sizes=${GPU_SIZES:-"300 5000 70000"}
cases=${GPU_CASES:-"bn128:sparse bn128:dense bls12381:sparse bls12381:dense"}
for curve in bn128 bls12381; do
    for size in $sizes; do
        for shape in sparse dense; do
            [[ " $cases " == *" $curve:$shape "* ]] || continue
            d=$tmp/$curve-$size-$shape
            flag=""; [ $shape = dense ] && flag=--dense
            if ! "$CUZK" dev-circuit --curve $curve --constraints $size --public 3 $flag --seed $RANDOM \
                --out "$d" -q >"$d.gen" 2>&1; then
                fail "dev-circuit $curve $size $shape"; tail -5 "$d.gen"; continue
            fi
            if CUZK_GPU_MSM_TABLE=0 "$GPU_TEST" "$d/circuit.zkey" >"$d.steps" 2>&1; then
                pass "steps gpu == cpu: $curve $size $shape"
            else
                fail "steps gpu != cpu: $curve $size $shape"; cat "$d.steps"
            fi
            if GPU_TEST_STREAM=0 CUZK_GPU_MSM_TABLE=1 CUZK_GPU_PAR_SETS_MAX=0 "$GPU_TEST" "$d/circuit.zkey" \
                >"$d.steps_tab" 2>&1; then
                pass "steps gpu == cpu, h MSM over a table: $curve $size $shape"
            else
                fail "steps gpu != cpu, h MSM over a table: $curve $size $shape"; cat "$d.steps_tab"
            fi
            rs="$((RANDOM * 32768 + RANDOM))123456789,$((RANDOM * 32768 + RANDOM))987654321"
            for be in cpu gpu; do
                CUZK_GPU_MSM_TABLE=0 CUZK_GPU_PAR_SETS_MAX=0 CUZK_TEST_RS=$rs "$CUZK" prove --backend $be \
                    "$d/circuit.zkey" "$d/witness.wtns" \
                    "$d/proof_$be.json" "$d/public_$be.json" >"$d.prove_$be" 2>&1 \
                    || fail "prove --backend $be $curve $size $shape: $(tail -2 "$d.prove_$be")"
            done
            if cmp -s "$d/proof_cpu.json" "$d/proof_gpu.json"; then
                pass "proof.json gpu == cpu: $curve $size $shape"
            else
                fail "proof.json gpu != cpu: $curve $size $shape"
            fi
            # the witness MSMs' wide shapes (WIDE in backend_impl.cuh), made to differ at this size:
            # taken for a dense witness only, and the same proof
            want=witness; [ $shape = dense ] && want=wide
            CUZK_GPU_WIDE=1 CUZK_TEST_WIDE=1 CUZK_GPU_MSM_PROFILE=1 CUZK_GPU_MSM_TABLE=0 CUZK_GPU_PAR_SETS_MAX=0 \
                CUZK_TEST_RS=$rs "$CUZK" prove --backend gpu "$d/circuit.zkey" "$d/witness.wtns" \
                "$d/proof_wide.json" "$d/public_wide.json" >"$d.prove_wide" 2>&1 \
                || fail "prove --backend gpu, wide shapes, $curve $size $shape: $(tail -2 "$d.prove_wide")"
            if cmp -s "$d/proof_cpu.json" "$d/proof_wide.json" && grep -q "msm sets ($want shapes)" "$d.prove_wide"; then
                pass "proof.json gpu ($want shapes for a $shape witness) == cpu: $curve $size $shape"
            else
                fail "proof.json gpu ($want shapes for a $shape witness) != cpu: $curve $size $shape"
                grep 'msm sets' "$d.prove_wide"
            fi
            CUZK_GPU_MSM_TABLE=1 CUZK_TEST_RS=$rs "$CUZK" prove --backend gpu "$d/circuit.zkey" "$d/witness.wtns" \
                "$d/proof_tab.json" "$d/public_tab.json" >"$d.prove_tab" 2>&1 \
                || fail "prove --backend gpu, h MSM over a table, $curve $size $shape: $(tail -2 "$d.prove_tab")"
            if cmp -s "$d/proof_cpu.json" "$d/proof_tab.json"; then
                pass "proof.json gpu (h MSM over a table) == cpu: $curve $size $shape"
            else
                fail "proof.json gpu (h MSM over a table) != cpu: $curve $size $shape"
            fi
            # streamed bases (chunks of a third of the largest set plus 7 points: no chunk divides
            # a set), byte for byte
            # second run: a/b/c on the CPU, no matrix on the device; third: the lean layout (no
            # shift table, a/b/c in 2n, the MSMs' scalars in place); fourth: lean with a/b/c on the
            # device; fifth: per set, B1, C and H streamed, the chunks of A and B2 taken from the
            # device; the lean runs with a/b/c on the CPU: c copied into the arena's room while a and
            # b are transformed and the witness behind the pass's first h chunk, then
            # (CUZK_GPU_LEAN_C=0, CUZK_GPU_LATE_W=0) c after a *= b into b's buffer and the witness
            # before the pass. With a/b/c on the CPU the witness sets' MSMs run in a pass of their
            # own beside them (msm_early; the profile names it), but not with CUZK_GPU_EARLY=0
            # (the fourth run)
            for run in "$(( size / 3 + 7 )) device 0 all" "0 host 0 all" "$(( size / 5 + 3 )) host 1 all" \
                "$(( size / 5 + 3 )) host 1 all 0" "$(( size / 5 + 3 )) device 1 all" \
                "$(( size / 4 + 1 )) device 0 B1,C,H"; do
                read -r chunk abc lean sets leanc <<< "$run"
                leanc=${leanc:-1}
                want='key placement: streamed'
                [ "$sets" = all ] || want='sets A,B2 on the device'
                [ "$abc$lean$leanc" = host11 ] && want='room for c'
                early='pass of 1: ' ename=one
                [ "$abc$leanc" = host1 ] && early='pass of 1 (witness sets)' ename=early
                CUZK_GPU_LEAN=$lean CUZK_GPU_LEAN_C=$leanc CUZK_GPU_LATE_W=$leanc CUZK_GPU_EARLY=$leanc CUZK_GPU_ABC=$abc \
                    CUZK_GPU_PLACEMENT=streamed CUZK_GPU_STREAM_CHUNK=$chunk CUZK_GPU_STREAM_SETS=$sets \
                    CUZK_GPU_STREAM_PROFILE=1 CUZK_TEST_RS=$rs "$CUZK" prove -v \
                    --backend gpu "$d/circuit.zkey" "$d/witness.wtns" "$d/proof_st.json" "$d/public_st.json" \
                    >"$d.prove_st" 2>&1 || fail "prove --backend gpu, streamed: $(tail -2 "$d.prove_st")"
                if cmp -s "$d/proof_cpu.json" "$d/proof_st.json" && grep -q "$want" "$d.prove_st" &&
                    grep -qF "$early" "$d.prove_st"; then
                    pass "proof.json gpu (streamed $sets, chunk $chunk, a/b/c on the $abc, lean $lean, c room $leanc, $ename pass) == cpu: $curve $size $shape"
                else
                    fail "proof.json gpu (streamed $sets, chunk $chunk, a/b/c on the $abc, lean $lean, c room $leanc) != cpu: $curve $size $shape"
                    grep placement "$d.prove_st"
                fi
            done
            # a streamed job of 4 partitions in passes of 2: the next pass's a/b/c and h beside
            # this pass's MSMs (cuzk prove --batch checks every proof equals the first); then the
            # lean layout, whose h steps follow passes that overwrote its twiddles
            for lean in 0 1; do
                CUZK_GPU_LEAN=$lean CUZK_GPU_PLACEMENT=streamed CUZK_GPU_STREAM_CHUNK=$(( size / 3 + 7 )) \
                    CUZK_TEST_RS=$rs "$CUZK" prove -v --backend gpu --batch 4 --batch-max 2 "$d/circuit.zkey" \
                    "$d/witness.wtns" "$d/proof_bt.json" "$d/public_bt.json" >"$d.prove_bt" 2>&1 \
                    || fail "prove --backend gpu --batch 4 (lean $lean): $(tail -2 "$d.prove_bt")"
                want='2 partitions a pass'
                [ $lean = 1 ] && want='NTT buffers and the pass.s share'
                if cmp -s "$d/proof_cpu.json" "$d/proof_bt.json" && grep -q "$want" "$d.prove_bt"; then
                    pass "proof.json gpu (streamed, batch of 4 in passes of 2, lean $lean) == cpu: $curve $size $shape"
                else
                    fail "proof.json gpu (streamed, batch of 4 in passes of 2, lean $lean) != cpu: $curve $size $shape"
                    grep -E 'placement|batch' "$d.prove_bt"
                fi
            done
            if "$CUZK" verify "$d/vk.json" "$d/public_gpu.json" "$d/proof_gpu.json" >"$d.verify" 2>&1; then
                pass "cuzk verify gpu proof: $curve $size $shape"
            else
                fail "cuzk verify gpu proof: $curve $size $shape"; tail -3 "$d.verify"
            fi
            if [ -n "$snarkjs" ]; then
                if grep -q 'OK' <<< "$("$snarkjs" groth16 verify "$d/vk.json" "$d/public_gpu.json" \
                    "$d/proof_gpu.json" 2>&1)"; then
                    pass "snarkjs verify gpu proof: $curve $size $shape"
                else
                    fail "snarkjs verify gpu proof: $curve $size $shape"
                fi
            fi
        done
    done
done
# 4. dev-circuit's fixed-base products on the GPU against the CPU
now() { date +%s.%N; }
# devkey CURVE N SHAPE BACKEND DIR [VAR=value...]: makes a key; $secs: the seconds it took
devkey() {
    local curve=$1 n=$2 shape=$3 be=$4 d=$5 flag="" t0; shift 5
    [ "$shape" = dense ] && flag=--dense
    t0=$(now)
    if ! env "$@" "$CUZK" dev-circuit --curve "$curve" --constraints "$n" --public 2 $flag --seed 11 \
        --backend "$be" --out "$d" >"$d.gen" 2>&1; then
        fail "dev-circuit --backend $be $curve $n $shape"; tail -5 "$d.gen"; return 1
    fi
    if ! grep -q "key points computed on: $be" "$d.gen"; then
        fail "dev-circuit --backend $be $curve $n $shape: the report does not name $be"; tail -3 "$d.gen"
        return 1
    fi
    secs=$(echo "$(now) $t0" | awk '{printf "%.2f", $1 - $2}')
}
fb=${GPU_FB_SIZE:-3000}
for curve in bn128 bls12381; do
    for shape in sparse dense; do
        [[ " $cases " == *" $curve:$shape "* ]] || continue
        d=$tmp/fb-$curve-$shape
        devkey $curve $fb $shape cpu "$d-cpu" || continue
        for run in "one chunk:" "chunks of $(( fb / 3 )):CUZK_TEST_FB_CHUNK=$(( fb / 3 ))"; do
            label=${run%%:*}; envs=${run#*:}
            rm -rf "$d-gpu"
            devkey $curve $fb $shape gpu "$d-gpu" $envs || continue
            if cmp -s "$d-cpu/circuit.zkey" "$d-gpu/circuit.zkey"; then
                pass "dev-circuit zkey gpu == cpu: $curve $fb $shape, $label"
            else
                fail "dev-circuit zkey gpu != cpu: $curve $fb $shape, $label"
                cmp "$d-cpu/circuit.zkey" "$d-gpu/circuit.zkey" | head -2
            fi
        done
    done
done
if [ "${GPU_DEV_TIMING:-1}" = 1 ]; then
    for curve in bn128 bls12381; do
        d=$tmp/fb-$curve-2p20
        devkey $curve 2^20 sparse gpu "$d-gpu" || continue
        tg=$secs
        devkey $curve 2^20 sparse cpu "$d-cpu" || continue
        tc=$secs
        echo "timing: dev-circuit $curve 2^20 sparse: --backend gpu ${tg} s, --backend cpu ${tc} s" \
            "($(nproc) CPUs; whole command)"
        if cmp -s "$d-cpu/circuit.zkey" "$d-gpu/circuit.zkey"; then
            pass "dev-circuit zkey gpu == cpu: $curve 2^20 sparse"
        else
            fail "dev-circuit zkey gpu != cpu: $curve 2^20 sparse"
        fi
        rm -rf "$d-gpu" "$d-cpu"
    done
fi

if [ $failures -ne 0 ]; then
    echo "gpu.sh: $failures failure(s); logs in $tmp"
    exit 1
fi
[ -z "${CUZK_TEST_TMP:-}" ] && rm -rf "$tmp"
echo "gpu.sh: all passed"
