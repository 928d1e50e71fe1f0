#!/usr/bin/env bash
# ntt_session.sh - NTT variants, their profiles and tests/gpu.sh in one call of a GPU machine,
# with everything compiled beforehand on a machine without a GPU.
#   dev/cuda/ntt_session.sh prepare "name:-DKNOB=v ..." ...
#       here: the NTT-only lab per variant and curve (lab_variants.sh BUILD_ONLY) packed into
#       .snap/var.tar.xz with the list in .snap/variants, and a snapshot of HEAD (snap.sh
#       --no-labs, CUDA flags from EXTRA_NVFLAGS) for tests/gpu.sh
#   OUT=dir dev/cuda/ntt_session.sh run
#       there (carry .snap and .debs): each variant's `ntt big` (2^4 .. 2^LAB_NTT_MAX, default
#       2^24, against the CPU; LAB_NTT_REPS timed runs), Nsight Compute on the variants named
#       in NCU (default: the first two) at 2^24, then tests/gpu.sh on the snapshot (NO_SUITE=1
#       skips it; SESSION_SKIP, default "pipeline large gpubench", the parts of
#       bench/device_session.sh left out: a snapshot with its labs can run bench/gpu.sh too).
#       Results go into $OUT/ntt-session.tgz, the summaries to standard output.
set -uo pipefail
repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
cd "$repo"
case "${1:-}" in
prepare)
    shift
    [ $# -gt 0 ] || { echo "usage: $0 prepare \"name:flags\" ..." >&2; exit 2; }
    rm -rf .snap/var && mkdir -p .snap
    BUILD_ONLY=1 LAB_BIN="$repo/.snap/var" OUT=/tmp/ntt-session-build bash dev/cuda/lab_variants.sh "$@" || exit 1
    for v in "$@"; do
        for c in bn254 bls12_381; do
            [ -x ".snap/var/lab_${v%%:*}_$c" ] || { echo "${v%%:*} $c: not built" >&2; exit 1; }
        done
    done
    tar -cJf .snap/var.tar.xz -C .snap var && rm -rf .snap/var
    printf '%s\n' "$@" >.snap/variants
    bash dev/cuda/snap.sh --no-labs
    ;;
run)
    O=/tmp/ntt-session
    rm -rf $O /tmp/var && mkdir -p $O "${OUT:?}"
    t0=$(date +%s)
    tar -xJf .snap/var.tar.xz -C /tmp
    mapfile -t vs <.snap/variants
    first2="${vs[0]%%:*} ${vs[1]%%:*}"
    {
        date -u
        nvidia-smi --query-gpu=name,memory.total,clocks.max.sm,driver_version --format=csv,noheader
        echo "variants built from the tree of $(cat .snap/commit); snapshot flags: $(cat .snap/flags)"
    } >$O/env.txt 2>&1
    cat $O/env.txt
    (cd dev/cuda && PREBUILT=1 LAB_BIN=/tmp/var RUN_S=${RUN_S:-45} LAB_NTT_REPS=${LAB_NTT_REPS:-21} \
        LAB_NTT_MAX=${LAB_NTT_MAX:-24} \
        NCU_VARIANT="${NCU:-$first2}" OUT=$O/var timeout ${VAR_S:-380} bash lab_variants.sh "${vs[@]}") \
        >$O/variants.txt 2>&1
    cat $O/variants.txt
    echo "variants: $(($(date +%s) - t0)) s"
    for f in $O/var/ncu_*.txt; do
        [ -f "$f" ] || continue
        echo "== $f"
        case "$f" in
        *_stalls.txt) grep -E "ntt_group|stalled|pipe_" "$f" | awk '$NF + 0 >= 0.05 || /ntt_group/' | head -60 ;;
        *) grep -E "Duration|Issue Slots Busy|SM Busy|Executed Ipc A|Registers Per|Achieved Occupancy|Memory Throughput|pipeline|Stall|No Eligible|Warp Cycles Per Issued" "$f" | head -40 ;;
        esac
    done
    if [ -z "${NO_SUITE:-}" ]; then
        timeout ${SESSION_S:-200} bash dev/cuda/snap_run.sh env OUT=$O/suite SKIP="${SESSION_SKIP:-pipeline large gpubench}" \
            SUITE_S=${SUITE_S:-170} bash bench/device_session.sh >$O/session.txt 2>&1
        cat $O/session.txt
    fi
    echo "total: $(($(date +%s) - t0)) s"
    tar -czf "$OUT/ntt-session.tgz" -C /tmp ntt-session
    ;;
*)
    sed -n 2,13p "$0" >&2
    exit 2
    ;;
esac
