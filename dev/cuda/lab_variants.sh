#!/usr/bin/env bash
# lab_variants.sh - on a GPU machine: build the kernel lab (lab.cu) once per knob set and curve,
# check and time each, and optionally profile some builds' 2^24 NTT with Nsight Compute.
#   OUT=dir dev/cuda/lab_variants.sh "name:-DKNOB=v -DKNOB2=v" ...
#   LAB_DEFS   build flags of every variant (default -DLAB_NTT_ONLY: the NTT lab alone, which
#              builds in a fraction of the time)
#   LAB_ARGS   what each build runs (default "ntt big": 2^4 .. 2^26 against the CPU; e.g. "ff tg1
#              tg2 ntt big" with LAB_DEFS= for the field products, the 2^24 MSMs over a table
#              and the NTTs)
#   NCU_VARIANT="name ..."  profile those variants (BN254) at 2^24
#   LAB_BIN    where the builds go (default /tmp); BUILD_ONLY=1 builds and stops (on a machine
#              without a GPU), PREBUILT=1 runs the builds found there instead of building
set -uo pipefail
cd "$(dirname "$0")"
OUT=${OUT:-/tmp/lab-variants}
LAB_DEFS=${LAB_DEFS--DLAB_NTT_ONLY}
LAB_ARGS=${LAB_ARGS:-ntt big}
BIN=${LAB_BIN:-/tmp}
mkdir -p "$OUT" "$BIN"
NVCC=${NVCC:-nvcc}
FLAGS="-std=c++17 -O3 -I../../src -I. -gencode arch=compute_90,code=sm_90 -lineinfo $LAB_DEFS"
build() { # name curve knobs...
    local name=$1 c=$2; shift 2
    $NVCC $FLAGS -DLAB_$(echo $c | tr a-z A-Z) "$@" -o $BIN/lab_${name}_$c lab.cu >"$OUT/build_${name}_$c.txt" 2>&1 ||
        echo "$name $c: BUILD FAILED"
}
t0=$(date +%s)
if [ -z "${PREBUILT:-}" ]; then
    for v in "$@"; do
        for c in bn254 bls12_381; do
            build "${v%%:*}" $c ${v#*:} &
        done
    done
    wait
    echo "builds: $(( $(date +%s) - t0 )) s"
fi
[ -n "${BUILD_ONLY:-}" ] && exit 0
for v in "$@"; do
    name=${v%%:*}
    for c in bn254 bls12_381; do
        [ -x $BIN/lab_${name}_$c ] || continue
        timeout ${RUN_S:-300} $BIN/lab_${name}_$c $LAB_ARGS >"$OUT/run_${name}_$c.txt" 2>&1
        rc=$?
        echo "== $name $c (${v#*:}) rc=$rc FAIL lines=$(grep -c FAIL "$OUT/run_${name}_$c.txt")"
        grep -E "field (mul|sqr)|NTT forward.*2\^(20|22|24|26) |MSM G. table|^phases" "$OUT/run_${name}_$c.txt"
    done
done
ncu24() { # name what ncu-options...: the BN254 build's 2^24 NTT group kernels under Nsight Compute
    local name=$1 what=$2
    shift 2
    LAB_NTT_LOG=24 timeout 240 ncu --clock-control none -k regex:ntt_group -c 3 "$@" \
        $BIN/lab_${name}_bn254 ntt >"$OUT/ncu_${name}${what}.txt" 2>&1
    echo "ncu$what $name rc=$?"
}
for v in "$@"; do
    name=${v%%:*}
    if [[ " ${NCU_VARIANT:-} " == *" $name "* ]]; then
        ncu24 $name "" --section SpeedOfLight --section Occupancy --section LaunchStats --section WarpStateStats \
            --section ComputeWorkloadAnalysis --section MemoryWorkloadAnalysis --section InstructionStats \
            --section SchedulerStats
        # the stall reasons (cycles a warp waits per issued instruction) and the pipes' shares
        ncu24 $name _stalls --metrics \
            'regex:^smsp__average_warps_issue_stalled_.*_per_issue_active\.ratio$,regex:^sm__inst_executed_pipe_.*\.avg\.pct_of_peak_sustained_active$'
    fi
done
