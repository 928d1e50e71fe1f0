#!/usr/bin/env bash
# cpu.sh - CPU proving benchmark: `cuzk prove --backend cpu` against `snarkjs groth16 prove` on the
# same zkey and witness, pinned to the same cores (taskset), median wall time of a few runs, for
# both curves and several circuit sizes. Prints a table and saves it under bench/results/ with the
# date, the machine and the commit. See bench/README.md.
#
#   CUZK=bin/cuzk bench/cpu.sh              (make bench does this)
# Environment (defaults in brackets):
#   BENCH_CORES   cores for taskset, also the thread count given to cuzk  [0,1]
#   BENCH_RUNS    runs per tool and size, the median is reported            [3]
#   BENCH_LOGS    log2 of the domain sizes                                  [12 14 16]
#   BENCH_CURVES  curves                                                    [bn128 bls12381]
#   BENCH_SNARKJS 0 skips snarkjs (cuzk times only)                         [1]
#   BENCH_NOTE    a line saved with the results (e.g. what else ran)         []
# Circuits come from `cuzk dev-circuit` (synthetic, INSECURE known-toxic-waste setup; cached in
# bench/work/); without dev-circuit the committed fixtures of tests/data/ are used instead.
# Every cuzk proof is checked once with `snarkjs groth16 verify` (a wrong proof is no result).
set -euo pipefail

repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$repo"
CUZK=${CUZK:-$repo/bin/cuzk}
case "$CUZK" in /*) ;; *) CUZK=$repo/$CUZK ;; esac
cores=${BENCH_CORES:-0,1}
runs=${BENCH_RUNS:-3}
logs=${BENCH_LOGS:-12 14 16}
curves=${BENCH_CURVES:-bn128 bls12381}
with_snarkjs=${BENCH_SNARKJS:-1}
work=$repo/bench/work
mkdir -p "$work" bench/results

[ -x "$CUZK" ] || { echo "cpu.sh: no cuzk binary at $CUZK (run make)" >&2; exit 2; }
[ -x node_modules/.bin/snarkjs ] || { echo "cpu.sh: snarkjs missing: run npm ci" >&2; exit 2; }
snarkjs_cli=$repo/node_modules/snarkjs/build/cli.cjs

# number of cores in a taskset list such as "0,1" or "0-3,8"
ncores=$(python3 -c '
import sys
n = 0
for part in sys.argv[1].split(","):
    a, _, b = part.partition("-")
    n += int(b) - int(a) + 1 if b else 1
print(n)' "$cores")
pin=(taskset -c "$cores")
if ! taskset -c "$cores" true 2>/dev/null; then
    echo "cpu.sh: cannot pin to cores $cores, running unpinned" >&2
    pin=()
fi

# secs CMD... : wall seconds of one run (output to $work/last.log), fails on a non-zero exit
secs() {
    local t0 t1
    t0=$(date +%s.%N)
    if ! "$@" > "$work/last.log" 2>&1; then
        echo "cpu.sh: failed: $*" >&2
        tail -20 "$work/last.log" >&2
        return 1
    fi
    t1=$(date +%s.%N)
    echo "$t0 $t1" | awk '{printf "%.3f\n", $2 - $1}'
}
median() { printf '%s\n' "$@" | sort -g | awk '{a[NR] = $1} END {m = int((NR + 1) / 2); if (NR % 2) print a[m]; else printf "%.3f\n", (a[m] + a[m + 1]) / 2}'; }

# circuits: lines "curve label dir constraints"
have_dev=0
if "$CUZK" dev-circuit --help > /dev/null 2>&1; then have_dev=1; fi
circuits=()
if [ $have_dev = 1 ]; then
    for curve in $curves; do
        for k in $logs; do
            # a little below 2^k so that constraints + public inputs + 1 fit the 2^k domain
            n=$(( (1 << k) - 64 ))
            d=$work/dev/$curve/$k
            if [ ! -f "$d/circuit.zkey" ] || [ ! -f "$d/witness.wtns" ] || [ ! -f "$d/vk.json" ]; then
                echo "== generating $curve dev circuit, $n constraints (2^$k domain)" >&2
                rm -rf "$d"
                "$CUZK" dev-circuit --curve "$curve" --constraints "$n" --out "$d" >&2
            fi
            circuits+=("$curve 2^$k $d $n")
        done
    done
else
    echo "cpu.sh: 'cuzk dev-circuit' is not available, using the committed fixtures (2^12 domains only)" >&2
    for curve in $curves; do
        for d in tests/data/$curve/*/; do
            d=${d%/}
            n=$(node -e '
                const r = require("fs").readFileSync(process.argv[1]);
                let p = 12;                              // section table: find section 1 (header)
                for (let i = 0; i < r.readUInt32LE(8); i++) {
                    const t = r.readUInt32LE(p), s = Number(r.readBigUInt64LE(p + 4));
                    if (t === 1) { const n8 = r.readUInt32LE(p + 12);
                                   console.log(r.readUInt32LE(p + 12 + 4 + n8 + 24)); break; }
                    p += 12 + s;
                }' "$d/circuit.r1cs")
            circuits+=("$curve $(basename "$d") $d $n")
        done
    done
fi

date_utc=$(date -u +%Y-%m-%dT%H:%MZ)
cpu_model=$(grep -m1 'model name' /proc/cpuinfo 2>/dev/null | sed 's/.*: //' || echo unknown)
commit=$(git rev-parse --short HEAD 2>/dev/null || echo unknown)
git diff --quiet HEAD -- src 2>/dev/null || commit="$commit (with uncommitted changes in src/)"
host=$(hostname 2>/dev/null || echo unknown)
out=bench/results/cpu-$(date -u +%Y%m%d-%H%M)-$(echo "$host" | tr -c 'A-Za-z0-9_.\n-' _).md

{
    echo "# cuzk CPU prove vs snarkjs"
    echo
    echo "- date: $date_utc"
    echo "- machine: $host, $cpu_model, $(nproc) CPUs online, $(awk '/MemTotal/ {printf "%.0f GiB", $2 / 1048576}' /proc/meminfo) RAM"
    echo "- cores used: taskset -c $cores ($ncores cores); cuzk --threads $ncores --backend cpu"
    echo "- commit: $commit"
    echo "- snarkjs $(node -p 'require("./node_modules/snarkjs/package.json").version'), node $(node --version)"
    echo "- median of $runs runs, wall seconds of the whole command (file reading and writing included)"
    echo "- circuits: $([ $have_dev = 1 ] && echo 'cuzk dev-circuit (synthetic)' || echo 'tests/data fixtures')"
    [ -z "${BENCH_NOTE:-}" ] || echo "- note: $BENCH_NOTE"
    echo
    echo "| curve | circuit | constraints | snarkjs s | cuzk s | speed-up | target |"
    echo "|---|---|---:|---:|---:|---:|---|"
} > "$out.tmp"
trap 'rm -f "$out.tmp"' EXIT     # a failed run leaves no partial table behind
cat "$out.tmp"

for c in "${circuits[@]}"; do
    read -r curve label d n <<< "$c"
    proof=$work/proof.json pub=$work/public.json
    # correctness first: one cuzk proof must verify
    "${pin[@]}" "$CUZK" prove --backend cpu --threads "$ncores" "$d/circuit.zkey" "$d/witness.wtns" "$proof" "$pub" \
        > "$work/last.log" 2>&1 || { cat "$work/last.log" >&2; echo "cpu.sh: cuzk prove failed on $d" >&2; exit 1; }
    if ! node "$snarkjs_cli" groth16 verify "$d/vk.json" "$pub" "$proof" > "$work/verify.log" 2>&1; then
        cat "$work/verify.log" >&2
        echo "cpu.sh: cuzk's proof for $d does not verify" >&2
        exit 1
    fi
    ct=() st=()
    for ((i = 0; i < runs; i++)); do
        ct+=("$(secs "${pin[@]}" "$CUZK" prove --backend cpu --threads "$ncores" "$d/circuit.zkey" "$d/witness.wtns" "$proof" "$pub")")
        if [ "$with_snarkjs" = 1 ]; then
            st+=("$(secs "${pin[@]}" node "$snarkjs_cli" groth16 prove "$d/circuit.zkey" "$d/witness.wtns" "$work/sj_proof.json" "$work/sj_public.json")")
        fi
    done
    cm=$(median "${ct[@]}")
    sm=-; speedup=-
    if [ "$with_snarkjs" = 1 ]; then
        sm=$(median "${st[@]}")
        speedup=$(awk -v s="$sm" -v c="$cm" 'BEGIN {printf "%.1fx", (c > 0 ? s / c : 0)}')
    fi
    target=-
    if [ "$curve" = bn128 ] && [ "$label" = "2^16" ]; then
        target="8x"
        [ "$speedup" != - ] && target=$(awk -v s="${speedup%x}" 'BEGIN {print (s >= 8 ? "8x: met" : "8x: NOT met")}')
    fi
    line="| $curve | $label | $n | $sm | $cm | $speedup | $target |"
    echo "$line" | tee -a "$out.tmp"
done
mv "$out.tmp" "$out"
echo
echo "saved $out"
