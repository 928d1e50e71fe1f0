#!/usr/bin/env bash
# ntt_variants.sh - on a GPU machine: build the NTT-only kernel lab (lab.cu, LAB_NTT_ONLY) once
# per knob set and curve, check and time each (`ntt big`: 2^4 .. 2^26 against the CPU), and
# optionally profile one build's 2^24 transform with Nsight Compute.
#   OUT=dir dev/cuda/ntt_variants.sh "name:-DKNOB=v -DKNOB2=v" ...
#   NCU_VARIANT=name  profile that variant (BN254) at 2^24
set -uo pipefail
cd "$(dirname "$0")"
OUT=${OUT:-/tmp/ntt-variants}
mkdir -p "$OUT"
NVCC=${NVCC:-nvcc}
FLAGS="-std=c++17 -O3 -I../../src -I. -gencode arch=compute_90,code=sm_90 -lineinfo -DLAB_NTT_ONLY"
build() { # name curve knobs...
    local name=$1 c=$2; shift 2
    $NVCC $FLAGS -DLAB_$(echo $c | tr a-z A-Z) "$@" -o /tmp/ntt_${name}_$c lab.cu >"$OUT/build_${name}_$c.txt" 2>&1 ||
        echo "$name $c: BUILD FAILED"
}
t0=$(date +%s)
for v in "$@"; do
    for c in bn254 bls12_381; do
        build "${v%%:*}" $c ${v#*:} &
    done
done
wait
echo "builds: $(( $(date +%s) - t0 )) s"
for v in "$@"; do
    name=${v%%:*}
    for c in bn254 bls12_381; do
        [ -x /tmp/ntt_${name}_$c ] || continue
        timeout 120 /tmp/ntt_${name}_$c ntt big >"$OUT/run_${name}_$c.txt" 2>&1
        rc=$?
        echo "== $name $c (${v#*:}) rc=$rc FAIL lines=$(grep -c FAIL "$OUT/run_${name}_$c.txt")"
        grep -E "NTT forward" "$OUT/run_${name}_$c.txt" | grep -E "2\^(20|22|24|26) "
    done
    if [ "${NCU_VARIANT:-}" = "$name" ]; then
        LAB_NTT_LOG=24 timeout 240 ncu --clock-control none -k regex:ntt_group -c 3 --section SpeedOfLight \
            --section Occupancy --section LaunchStats --section WarpStateStats --section ComputeWorkloadAnalysis \
            --section MemoryWorkloadAnalysis --section InstructionStats --section SchedulerStats \
            /tmp/ntt_${name}_bn254 ntt >"$OUT/ncu_${name}.txt" 2>&1
        echo "ncu $name rc=$?"
    fi
done
