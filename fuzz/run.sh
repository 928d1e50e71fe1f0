#!/usr/bin/env bash
# run.sh - runs libFuzzer harnesses built by `make fuzz` and prints one line per harness:
# executions, executions per second, coverage (cov: edges, ft: features, libFuzzer's final
# figures) and the corpus it ended with. Exits 1 if any harness found a crash, a leak, a
# sanitizer report, a failed check or a slow input.
#
#   FUZZ_SECONDS=30 FUZZ_JOBS=2 fuzz/run.sh BUILD NAME...      (make fuzz passes build-fuzz)
#
# Each harness BUILD/fuzz/NAME runs FUZZ_SECONDS (default 30) with -max_total_time, seeded
# from fuzz/corpus/<NAME without fuzz_>/ (committed, read only) and BUILD/corpus/NAME/ (what
# earlier runs found; new inputs go there), with its dictionary fuzz/NAME.dict where there is
# one. FUZZ_JOBS harnesses (default 2, at most the online CPUs) run at once. Logs are
# BUILD/fuzz-logs/NAME.log; a failing input is kept as BUILD/crashes/NAME-<kind>-<sha1> and
# the log's report is printed. Reproduce one with BUILD/fuzz/NAME BUILD/crashes/FILE.
set -uo pipefail
repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$repo" || exit 2

if [ $# -lt 2 ]; then
    echo "usage: fuzz/run.sh BUILD NAME..." >&2
    exit 2
fi
build=$1
shift
secs=${FUZZ_SECONDS:-30}
cpus=$(getconf _NPROCESSORS_ONLN 2>/dev/null || echo 1)
jobs=${FUZZ_JOBS:-2}
[ "$jobs" -gt "$cpus" ] && jobs=$cpus
[ "$jobs" -lt 1 ] && jobs=1
mkdir -p "$build/fuzz-logs" "$build/crashes"
# libFuzzer owns the exit path; make the sanitizers' reports readable and final
export ASAN_OPTIONS=${FUZZ_ASAN_OPTIONS:-detect_leaks=1:abort_on_error=0}
export UBSAN_OPTIONS=${FUZZ_UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}

run_one() {
    local name=$1 seeds=fuzz/corpus/${1#fuzz_}
    local bin=$build/fuzz/$name log=$build/fuzz-logs/$name.log
    if [ ! -x "$bin" ] || [ ! -d "$seeds" ]; then
        echo "run.sh: $bin or its seed corpus $seeds is missing" > "$log"
        return 1
    fi
    mkdir -p "$build/corpus/$name"
    local dict=()
    [ -f "fuzz/$name.dict" ] && dict=(-dict="fuzz/$name.dict")
    # -timeout: an input slower than 10 s is a failure (a reader must not hang);
    # -rss_limit_mb: one that needs more than 2 GB is one too
    "$bin" -max_total_time="$secs" -timeout=10 -rss_limit_mb=2048 -print_final_stats=1 "${dict[@]}" \
        -artifact_prefix="$build/crashes/$name-" "$build/corpus/$name" "$seeds" > "$log" 2>&1
}

# one harness's line, from its final stats and last status line ("#N DONE cov: C ft: F corp: U/Sb ...")
summary() {
    local name=$1 log=$build/fuzz-logs/$1.log
    local last execs eps
    last=$(grep -E '^#[0-9]+[[:space:]]+(DONE|NEW|REDUCE|pulse|INITED)' "$log" | tail -1)
    execs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log")
    eps=$(sed -n 's/^stat::average_exec_per_sec: *//p' "$log")
    printf '%-14s %10s execs %7s/s  cov %5s  ft %6s  corpus %s\n' "$name" "${execs:-?}" \
        "${eps:-?}" "$(sed -n 's/.* cov: \([0-9]*\).*/\1/p' <<< "$last")" \
        "$(sed -n 's/.* ft: \([0-9]*\).*/\1/p' <<< "$last")" \
        "$(sed -n 's/.* corp: \([^ ]*\).*/\1/p' <<< "$last")"
}

# every harness runs the same time: start them in groups of $jobs and wait for each group
names=("$@")
for ((i = 0; i < ${#names[@]}; i += jobs)); do
    for n in "${names[@]:i:jobs}"; do
        rm -f "$build/fuzz-logs/$n.rc"
        (run_one "$n"; echo $? > "$build/fuzz-logs/$n.rc") &
    done
    wait
done

echo "== fuzz: ${secs}s per harness, $jobs at a time ($build/fuzz-logs/)"
failed=0
for n in "${names[@]}"; do
    rc=$(cat "$build/fuzz-logs/$n.rc" 2>/dev/null || echo 1)
    if [ "$rc" -eq 0 ]; then
        summary "$n"
    else
        failed=1
        echo "---- $n: FAILED (exit $rc), log $build/fuzz-logs/$n.log ----"
        grep -v -E '^#[0-9]+[[:space:]]' "$build/fuzz-logs/$n.log" | tail -60
        echo "---- end of $n ----"
    fi
done
if [ $failed -ne 0 ]; then
    echo "== fuzz: FAILED (inputs kept in $build/crashes/)"
    exit 1
fi
echo "== fuzz: no crashes"
