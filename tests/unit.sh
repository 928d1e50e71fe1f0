#!/usr/bin/env bash
# unit.sh - runs the unit test binaries given on the command line (make unit), as many at once as
# there are cores (UNIT_JOBS overrides), each into its own log; prints every log in the order
# given, then each failed test's log again and a line per failure. Exit 1 when any failed. The
# tests share nothing: each makes its own temporary folder (and store_pg_test its own
# PostgreSQL server).
set -uo pipefail
jobs=${UNIT_JOBS:-$(nproc 2>/dev/null || echo 2)}
logs=$(mktemp -d)
trap 'rm -rf "$logs"' EXIT
run_one() { # INDEX BINARY
    local t0=$SECONDS
    "$2" > "$logs/$1.log" 2>&1
    echo "$? $((SECONDS - t0))" > "$logs/$1.rc"
}
i=0
for t in "$@"; do
    while [ "$(jobs -rp | wc -l)" -ge "$jobs" ]; do wait -n; done
    run_one $i "$t" &
    i=$((i + 1))
done
wait
i=0
failed=()
failed_logs=()
for t in "$@"; do
    read -r rc secs < "$logs/$i.rc" || { rc=1; secs=0; }
    echo "== $t (${secs}s)"
    cat "$logs/$i.log"
    [ "$rc" = 0 ] || { failed+=("$t (exit $rc)"); failed_logs+=("$i"); }
    i=$((i + 1))
done
if [ ${#failed[@]} -gt 0 ]; then
    # the failures' logs again, last, where a log's tail shows them
    for k in "${!failed_logs[@]}"; do
        echo "== again, the log of the failed ${failed[$k]}:"
        tail -40 "$logs/${failed_logs[$k]}.log"
    done
    printf 'FAIL: %s\n' "${failed[@]}"
    exit 1
fi
echo "== unit: all $# passed"
