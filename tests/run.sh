#!/usr/bin/env bash
# run.sh - runs every end-to-end suite tests/t_*.sh in sorted order and prints one summary line
# per suite (PASS / FAIL / SKIP with its reason). Exits 1 if any suite failed.
#
#   CUZK=/path/to/cuzk tests/run.sh            all suites (CUZK defaults to bin/cuzk)
#   CUZK=... tests/run.sh t_e2e t_cli          only the named suites
#
# A suite is a bash script that exits 0 on success, 77 after printing "SKIP: reason" when a
# prerequisite is truly absent (no GPU, ...), anything else on failure. Each suite runs from the
# repository root with CUZK (absolute path) and CUZK_TEST_TMP (a fresh scratch folder, removed
# afterwards unless the suite failed) in its environment; its output goes to
# tests/work/logs/<suite>.log and is printed in full when it fails. A suite that runs longer than
# CUZK_SUITE_TIMEOUT seconds (default 1200) is stopped with everything it started (its process
# group) and counts as failed, so a hung suite cannot hang CI.
set -uo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
repo=$(cd "$here/.." && pwd)
cd "$repo"

CUZK=${CUZK:-bin/cuzk}
case "$CUZK" in /*) ;; *) CUZK=$repo/$CUZK ;; esac
export CUZK
# sanitizer builds (make asan): a sanitizer report exits 86, distinguishable from an ordinary exit 1
export ASAN_OPTIONS=${ASAN_OPTIONS:-exitcode=86}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-exitcode=86:print_stacktrace=1}
if [ ! -x "$CUZK" ]; then
    echo "run.sh: cuzk binary not found at $CUZK (build it with make, or set CUZK)" >&2
    exit 2
fi

suites=()
if [ $# -gt 0 ]; then
    for name in "$@"; do
        name=${name%.sh}; name=${name#tests/}
        if [ ! -f "tests/$name.sh" ]; then
            echo "run.sh: no suite tests/$name.sh" >&2
            exit 2
        fi
        suites+=("tests/$name.sh")
    done
else
    while IFS= read -r s; do suites+=("$s"); done < <(LC_ALL=C ls tests/t_*.sh 2>/dev/null | LC_ALL=C sort)
fi
if [ ${#suites[@]} -eq 0 ]; then
    echo "run.sh: no suites found (tests/t_*.sh)" >&2
    exit 2
fi

suite_timeout=${CUZK_SUITE_TIMEOUT:-1200}
logs=$repo/tests/work/logs
mkdir -p "$logs"
npass=0 nfail=0 nskip=0
failed=()
summary=()
for s in "${suites[@]}"; do
    name=$(basename "$s" .sh)
    log=$logs/$name.log
    tmp=$(mktemp -d "${TMPDIR:-/tmp}/cuzk-$name.XXXXXX")
    start=$(date +%s)
    CUZK_TEST_TMP=$tmp timeout --kill-after=15 "$suite_timeout" bash "$s" > "$log" 2>&1 < /dev/null
    rc=$?
    if [ $rc -eq 124 ] || [ $rc -eq 137 ]; then
        echo "run.sh: $name stopped after ${suite_timeout}s (CUZK_SUITE_TIMEOUT)" >> "$log"
        rc=124
    fi
    secs=$(( $(date +%s) - start ))
    if [ $rc -eq 0 ]; then
        line=$(printf 'PASS  %-24s %4ds' "$name" "$secs")
        npass=$((npass + 1))
        rm -rf "$tmp"
    elif [ $rc -eq 77 ]; then
        reason=$(grep -m1 '^SKIP:' "$log" | sed 's/^SKIP: *//')
        line=$(printf 'SKIP  %-24s %4ds  %s' "$name" "$secs" "${reason:-no reason given}")
        nskip=$((nskip + 1))
        rm -rf "$tmp"
    else
        why="exit $rc"
        [ $rc -eq 124 ] && why="timed out after ${suite_timeout}s"
        line=$(printf 'FAIL  %-24s %4ds  %s, log %s, scratch %s' "$name" "$secs" "$why" "$log" "$tmp")
        nfail=$((nfail + 1))
        failed+=("$name")
        echo "---- $name output (exit $rc) ----"
        cat "$log"
        echo "---- end of $name ----"
    fi
    echo "$line"
    summary+=("$line")
done

echo
echo "== end-to-end summary ($CUZK)"
printf '%s\n' "${summary[@]}"
echo "== $npass passed, $nfail failed, $nskip skipped"
[ $nfail -eq 0 ]
