#!/usr/bin/env bash
# stream.sh - keys larger than the card: the page-locked host-to-device bandwidth, then, for each
# size, the same key and witness proved resident and streamed under a --gpu-mem cap (one
# partition, and a job of STREAM_BATCH partitions through `cuzk prove --batch`), with the bound
# beside each: a streamed partition <= 1.10 x max(resident time, streamed bytes / bandwidth); a
# streamed job <= 1.15 x the resident time a partition. Every proof is checked with `cuzk verify`.
# Writes a Markdown table to $BENCH_OUT (default bench/results/stream-<date>.md).
#
#   CUZK=build/bin/cuzk GPU_TEST=build/test/gpu/gpu_backend_test bench/stream.sh
# Env: STREAM_LOGS ("24": domains 2^k, constraints 2^k - 2), STREAM_CURVE (bls12381), STREAM_CAP
# (16G), STREAM_BATCH (10; 0: no job), STREAM_REPS (3), STREAM_DENSE (0: dev-circuit's sparse witness, mostly
# zeros and ones), BENCH_WORK (keys are kept there between runs).
set -uo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
repo=$(cd "$here/.." && pwd)
cd "$repo"
if ! command -v nvidia-smi >/dev/null 2>&1 || ! grep -q '^GPU' <<< "$(nvidia-smi -L 2>/dev/null)"; then
    echo "SKIPPED: no GPU"
    exit 0
fi
CUZK=${CUZK:-$repo/bin/cuzk}
GPU_TEST=${GPU_TEST:-$repo/build/test/gpu/gpu_backend_test}
logs=${STREAM_LOGS:-24}
curve=${STREAM_CURVE:-bls12381}
cap=${STREAM_CAP:-16G}
batch=${STREAM_BATCH:-10}
reps=${STREAM_REPS:-3}
work=${BENCH_WORK:-$repo/bench/work/stream}
out=${BENCH_OUT:-bench/results/stream-$(date -u +%Y-%m-%d).md}
mkdir -p "$work" "$(dirname "$out")"
dev=$(nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv,noheader | head -1)
commit=$(git rev-parse --short HEAD 2>/dev/null || cat .commit 2>/dev/null || echo unknown)
bw=$("$GPU_TEST" --bandwidth 4096 | sed -n 's/^h2d page-locked: \([0-9.]*\) GB.*/\1/p')
{
    echo "# Streamed keys $(date -u +%Y-%m-%dT%H:%MZ)"
    echo
    echo "device: $dev; commit: $commit; host-to-device bandwidth (page-locked, 4 GiB in 64 MiB copies): **$bw GB/s**"
    echo
    echo "Witness: cuzk dev-circuit $([ "${STREAM_DENSE:-0}" = 1 ] && echo "--dense (every value full-field)" ||
        echo "sparse (bit decompositions, boolean and XOR/AND constraints: mostly 0 and 1, some full-field)")."
    echo "Times: median of $reps; the key loaded once and not counted. Bound of a streamed partition:"
    echo "1.10 x max(resident, bytes / bandwidth); of a streamed job: 1.15 x resident a partition."
    echo
    echo "| curve | domain | placement | bases streamed GiB | proof ms a partition | MSM ms a partition | copy wait % | bound ms | within |"
    echo "|---|---|---|---|---|---|---|---|---|"
} >"$out"
median_ms() { sed -n 's/.*median \([0-9.]*\) ms.*/\1/p' "$1" | tail -1; }
for k in $logs; do
    d=$work/$curve-$k
    if [ ! -s "$d/circuit.zkey" ]; then
        flag=""; [ "${STREAM_DENSE:-0}" = 1 ] && flag=--dense
        "$CUZK" dev-circuit --curve "$curve" --constraints $(( (1 << k) - 2 )) $flag --out "$d" >"$d.gen" 2>&1 ||
            { echo "dev-circuit 2^$k failed"; tail -3 "$d.gen"; continue; }
    fi
    run() { # NAME ARGS...: cuzk prove -v into $d.NAME, verified
        local name=$1; shift
        "$CUZK" prove -v --backend gpu "$@" "$d/circuit.zkey" "$d/witness.wtns" "$d/proof-$name.json" \
            "$d/public-$name.json" >"$d.$name" 2>&1 || { echo "prove $name failed: $(tail -2 "$d.$name")"; return 1; }
        "$CUZK" verify "$d/vk.json" "$d/public-$name.json" "$d/proof-$name.json" >/dev/null ||
            { echo "proof $name does not verify"; return 1; }
        grep -E 'placement|streamed|median' "$d.$name"
    }
    res=""; st=""; job=""
    run resident --repeat "$reps" && res=$(median_ms "$d.resident")
    resmsm=$(sed -n 's/.*msm \([0-9.]*\),.*/\1/p' "$d.resident" | sort -n | sed -n "$(( (reps + 1) / 2 ))p")
    run streamed --repeat "$reps" --gpu-mem "$cap" && st=$(median_ms "$d.streamed")
    [ "$batch" -gt 0 ] && run job --repeat "$reps" --gpu-mem "$cap" --batch "$batch" &&
        job=$(sed -n 's/.*, \([0-9.]*\) ms a partition$/\1/p' "$d.job" | tail -1)
    gib=$(sed -n 's/.*, \([0-9.]*\) GiB a pass.*/\1/p' "$d.streamed" | head -1)
    waitms=$(sed -n 's/.*waited \([0-9.]*\) ms on copies.*/\1/p' "$d.streamed" | tail -1)
    passes=$(sed -n 's/.*streamed: \([0-9]*\) passes.*/\1/p' "$d.streamed" | tail -1)
    stmsm=$(sed -n 's/.*msm \([0-9.]*\),.*/\1/p' "$d.streamed" | sort -n | sed -n "$(( (reps + 1) / 2 ))p")
    jobwait=$(sed -n 's/.*waited \([0-9.]*\) ms on copies.*/\1/p' "$d.job" | tail -1)
    jobmsm=$(sed -n 's/.*batch [0-9]* of [0-9]* partitions:.* msm \([0-9.]*\), assemble.*/\1/p' "$d.job" | sort -n | sed -n "$(( (reps + 1) / 2 ))p")
    awk -v c="$curve" -v k="$k" -v res="$res" -v st="$st" -v job="$job" -v gib="${gib:-0}" -v bw="${bw:-0}" \
        -v w="${waitms:-0}" -v p="${passes:-1}" -v rm="${resmsm:-0}" -v sm="${stmsm:-0}" -v jw="${jobwait:-0}" \
        -v jm="${jobmsm:-0}" -v b="$batch" -v reps="$reps" -v cap="$cap" 'BEGIN {
        xfer = bw > 0 ? gib * 1.073741824 / bw * 1000 : 0
        printf "| %s | 2^%s | resident | - | %s | %s | - | - | - |\n", c, k, res, rm
        bound = 1.10 * (res > xfer ? res : xfer)
        share = (p > 0 && sm > 0) ? 100 * (w / p) / sm : 0
        within = (st != "" && res != "" && st + 0 <= bound) ? "yes" : "NO"
        printf "| %s | 2^%s | streamed, --gpu-mem %s | %.2f | %s | %s | %.1f | %.1f (transfer %.1f) | %s |\n", c, k, cap,
            gib, st, sm, share, bound, xfer, within
        jb = 1.15 * res
        jshare = (jm > 0) ? 100 * (jw / reps) / jm : 0
        jwithin = (job != "" && res != "" && job + 0 <= jb) ? "yes" : "NO"
        if (b > 0) printf "| %s | 2^%s | streamed job of %d, --gpu-mem %s | %.2f | %s | %.1f | %.1f | %.1f | %s |\n", c, k, b, cap,
            gib, job, jm / b, jshare, jb, jwithin
    }' >>"$out"
done
cat "$out"
