#!/usr/bin/env bash
# stream_profile.sh - where a streamed proof's time goes: one key (made by bench/stream.sh or
# cuzk dev-circuit) proved streamed under a --gpu-mem cap in several configurations of the
# streamed pass, each with CUZK_GPU_STREAM_PROFILE=1 (each pass's time by base set, the copy
# wait, the bus rate) and cuzk prove -v's totals; every proof is checked with cuzk verify.
#
#   CUZK=build/bin/cuzk bench/stream_profile.sh DIR [CAP]
# DIR holds circuit.zkey, witness.wtns, vk.json. Configurations (env of each run):
#   default              the sets' chunks interleaved (each round from the h set's), window bits
#                        of one chunk; with a/b/c on the CPU the witness sets in a pass of their
#                        own beside them (msm_early), the h set's after the h step
#   one                  CUZK_GPU_EARLY=0: all five sets in one pass after the h step
#   sets                 CUZK_GPU_STREAM_ORDER=sets: one set after the other
#   lower, job-lower     CUZK_GPU_STREAM_ORDER=lower: interleaved with ties to the lower set (each
#                        round from A's, the order before); one partition / a job
#   hbits20              CUZK_GPU_STREAM_HBITS=20: the h set with the window bits of all its points at 2^24
#                        (hbitsN, job-hbitsN: any N from 4 to 22, one partition / a job)
#   sets-hbits20         both
#   job, job-hbits20     a job of STREAM_PROFILE_JOB (10) partitions (--batch), defaults / hbits20
#   hchunk128            CUZK_GPU_STREAM_HCHUNK=128: the h set's level 0 in chunks of 128 entries
#   hbits20-hchunk128    both knobs
#   allsets              CUZK_GPU_STREAM_SETS=all: every set on the bus (no set kept on the device)
#   nopair, job-nopair   CUZK_GPU_STREAM_PAIR=0: B2's chunks sort their own digits (not B1's); one
#                        partition / a job
#   job-serial           CUZK_BATCH_OVERLAP=0: a job whose next partitions' copy-in, a/b/c and h
#                        run after each pass's MSMs, not beside them (the default overlaps them)
# STREAM_PROFILE_CONFIGS picks some (default: the first six); STREAM_PROFILE_REPS (2) runs of each.
# Each pass prints its sets' device time by phase (sort, level 0, partial levels, reduction).
set -uo pipefail
d=${1:?usage: stream_profile.sh DIR [CAP]}
cap=${2:-16G}
CUZK=${CUZK:-build/bin/cuzk}
reps=${STREAM_PROFILE_REPS:-2}
run() { # NAME ENV... -- ARGS...
    local name=$1; shift
    local envs=()
    while [ "$1" != -- ]; do envs+=("$1"); shift; done
    shift
    env CUZK_GPU_STREAM_PROFILE=1 "${envs[@]}" "$CUZK" prove -v --backend gpu --gpu-mem "$cap" "$@" \
        "$d/circuit.zkey" "$d/witness.wtns" "$d/proof-$name.json" "$d/public-$name.json" >"$d.prof-$name" 2>&1 ||
        { echo "$name: prove failed: $(tail -2 "$d.prof-$name")"; return; }
    "$CUZK" verify "$d/vk.json" "$d/public-$name.json" "$d/proof-$name.json" >/dev/null ||
        { echo "$name: proof does not verify"; return; }
    echo "## $name (${envs[*]:-defaults}) $*"
    grep -E 'placement|streamed|median|a partition|pass of' "$d.prof-$name" | tail -10
}
want=" ${STREAM_PROFILE_CONFIGS:-default sets hbits20 sets-hbits20 job job-hbits20} "
has() { [[ "$want" == *" $1 "* ]]; }
job=${STREAM_PROFILE_JOB:-10}
has default && run default -- --repeat "$reps"
has one && run one CUZK_GPU_EARLY=0 -- --repeat "$reps"
has sets && run sets CUZK_GPU_STREAM_ORDER=sets -- --repeat "$reps"
has lower && run lower CUZK_GPU_STREAM_ORDER=lower -- --repeat "$reps"
has job-lower && run job-lower CUZK_GPU_STREAM_ORDER=lower -- --repeat 1 --batch "$job"
for c in $want; do # hbitsN and job-hbitsN, 20 among them
    if [[ "$c" =~ ^hbits([0-9]+)$ ]]; then
        run "$c" CUZK_GPU_STREAM_HBITS="${BASH_REMATCH[1]}" -- --repeat "$reps"
    elif [[ "$c" =~ ^job-hbits([0-9]+)$ ]]; then
        run "$c" CUZK_GPU_STREAM_HBITS="${BASH_REMATCH[1]}" -- --repeat 1 --batch "$job"
    fi
done
has sets-hbits20 && run sets-hbits20 CUZK_GPU_STREAM_ORDER=sets CUZK_GPU_STREAM_HBITS=20 -- --repeat "$reps"
has job && run job -- --repeat 1 --batch "$job"
has hchunk128 && run hchunk128 CUZK_GPU_STREAM_HCHUNK=128 -- --repeat "$reps"
has hbits20-hchunk128 && run hbits20-hchunk128 CUZK_GPU_STREAM_HBITS=20 CUZK_GPU_STREAM_HCHUNK=128 -- --repeat "$reps"
has allsets && run allsets CUZK_GPU_STREAM_SETS=all -- --repeat "$reps"
has nopair && run nopair CUZK_GPU_STREAM_PAIR=0 -- --repeat "$reps"
has job-nopair && run job-nopair CUZK_GPU_STREAM_PAIR=0 -- --repeat 1 --batch "$job"
has job-serial && run job-serial CUZK_BATCH_OVERLAP=0 -- --repeat 1 --batch "$job"
exit 0
