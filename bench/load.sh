#!/usr/bin/env bash
# load.sh - the daemon under a bigger HTTP load than tests/t_load.sh: `cuzk serve` (CPU backend)
# on loopback, driven by cuzk-load (bench/load.c) in a few runs, each a row of one table:
#   mix          LOAD_CLIENTS clients (keep-alive; submit a small job, poll it with
#                GET /status + GET /v1/jobs/ID, await it) and a GET /status probe every 20 ms,
#                two rounds of LOAD_SECONDS each;
#   mix + idle   the same beside LOAD_IDLE idle connections (half send nothing, half half a
#                request header), each reconnecting when the daemon closes it;
#   flood        LOAD_FLOOD idle connections at once against the limit, nothing else.
# Columns: clients, idle connections, requests answered, jobs (all must end done), /status
# p50/p99/max (ms), errors, the daemon's descriptors at the start, peak and end, its VmRSS at the
# start and the end. Every run also passes cuzk-load's checks (descriptor bound and growth,
# idle timeouts, refusals past the limit); a failed check is marked in the table.
#
#   bench/load.sh                 (after make)
# Environment (defaults in brackets):
#   LOAD_CLIENTS    clients of the mix runs                                 [64]
#   LOAD_IDLE       idle connections beside them                            [160]
#   LOAD_FLOOD      idle connections of the flood                           [600]
#   LOAD_SECONDS    seconds per round of a mix run (two rounds)             [15]
#   LOAD_MAX_CONNS  the daemon's --max-conns                                [256]
#   LOAD_TIMEOUT    the daemon's --conn-timeout, s                          [10]
#   LOAD_LISTEN     where the daemon listens                                [127.0.0.1:0]
#   LOAD_OUT        the result file          [bench/results/load-<UTC date>.md]
#   LOAD_NOTE       a line saved with the results (e.g. what else ran)      []
set -euo pipefail

repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$repo"
CUZK=${CUZK:-$repo/bin/cuzk}
case "$CUZK" in /*) ;; *) CUZK=$repo/$CUZK ;; esac
LOAD=${CUZK_LOAD:-$(dirname "$CUZK")/cuzk-load}
clients=${LOAD_CLIENTS:-64}
idle=${LOAD_IDLE:-160}
flood=${LOAD_FLOOD:-600}
secs=${LOAD_SECONDS:-15}
max_conns=${LOAD_MAX_CONNS:-256}
ctimeout=${LOAD_TIMEOUT:-10}
listen=${LOAD_LISTEN:-127.0.0.1:0}
out=${LOAD_OUT:-bench/results/load-$(date -u +%Y-%m-%d).md}
[ -x "$CUZK" ] && [ -x "$LOAD" ] || { echo "load.sh: need $CUZK and $LOAD (run make)" >&2; exit 2; }
if [ $((idle + clients + 1)) -gt "$max_conns" ]; then
    echo "load.sh: $idle idle + $clients clients + 1 probe exceed --max-conns $max_conns" >&2
    exit 2
fi
MUL=$repo/tests/data/bn128/multiplier
work=$repo/bench/work/load
rm -rf "$work"
mkdir -p "$work" bench/results

"$CUZK" serve --listen "$listen" --data "$work/data" --backend cpu --threads 1 \
    --max-conns "$max_conns" --conn-timeout "$ctimeout" --log-level warn > "$work/serve.log" 2>&1 &
dpid=$!
trap 'kill $dpid 2>/dev/null; wait $dpid 2>/dev/null' EXIT
for _ in $(seq 1 300); do [ -s "$work/data/serve.addr" ] && break; sleep 0.1; done
addr=$(cat "$work/data/serve.addr")
# the key loaded before the first sample
id=$("$CUZK" submit --server "$addr" --zkey "$MUL/circuit.zkey" --witness "$MUL/witness.wtns")
"$CUZK" await --server "$addr" "$id" > /dev/null

rows=()
# run NAME cuzk-load options...: one table row
run() {
    local name=$1; shift
    echo "load.sh: $name: cuzk-load $*" >&2
    local rc=0
    "$LOAD" --server "$addr" --pid "$dpid" --max-conns "$max_conns" --conn-timeout "$ctimeout" \
        --fd-slack 16 "$@" > "$work/$name.out" 2> "$work/$name.err" || rc=$?
    sed 's/^/    /' "$work/$name.err" >&2
    local l
    l=$(grep '^load: mode=' "$work/$name.out" || true)
    f() { sed -n "s/.* $1=\([^ ]*\).*/\1/p" <<< "$l"; }
    local mib_s mib_e
    mib_s=$(awk -v k="$(f rss_start_kb)" 'BEGIN{printf "%.1f", k / 1024}')
    mib_e=$(awk -v k="$(f rss_end_kb)" 'BEGIN{printf "%.1f", k / 1024}')
    local jobs="$(f done)/$(f jobs)"
    [ "$(f mode)" = flood ] && jobs="held $(f held), closed at once $(f refused_at_once)"
    rows+=("| $name | $(f clients) | $(f idle) | $(f requests) | $jobs | $(f status_n) | $(f status_p50_ms) | $(f status_p99_ms) | $(f status_max_ms) | $(f errors) | $(f fds_start) / $(f fds_peak) / $(f fds_end) | $mib_s / $mib_e | $(f seconds) | $([ $rc = 0 ] && echo pass || echo "FAIL ($rc)") |")
}

run mix --clients "$clients" --rounds 2 --round-seconds "$secs" --jobs 1 \
    --zkey "$MUL/circuit.zkey" --witness "$MUL/witness.wtns"
run "mix + idle" --clients "$clients" --idle "$idle" --idle-reconnect --rounds 2 \
    --round-seconds "$secs" --jobs 1 --zkey "$MUL/circuit.zkey" --witness "$MUL/witness.wtns"
run flood --mode flood --idle "$flood"

commit=$(git rev-parse --short HEAD 2>/dev/null || echo unknown)
dirty=$(git status --porcelain --untracked-files=no 2>/dev/null | grep -q . && echo " (with uncommitted changes)" || true)
cpu=$(sed -n 's/^model name[[:space:]]*: //p' /proc/cpuinfo | head -1)
{
    echo "# Daemon under HTTP load (bench/load.sh)"
    echo
    echo "- date: $(date -u +%Y-%m-%dT%H:%MZ)"
    echo "- machine: $(hostname), $cpu, $(nproc) CPUs online, no GPU (CPU backend, --threads 1)"
    echo "- commit: $commit$dirty"
    echo "- daemon: --max-conns $max_conns --conn-timeout $ctimeout, listening on $addr"
    echo "- jobs: tests/data/bn128/multiplier, one partition each (an API load, not a proving one)"
    [ -n "${LOAD_NOTE:-}" ] && echo "- note: $LOAD_NOTE"
    echo
    echo "| run | clients | idle | requests | jobs done | /status n | p50 ms | p99 ms | max ms | errors | fds start / peak / end | RSS MiB start / end | s | checks |"
    echo "|---|---:|---:|---:|---|---:|---:|---:|---:|---:|---|---|---:|---|"
    printf '%s\n' "${rows[@]}"
} > "$out"
cat "$out"
echo "load.sh: written to $out" >&2
grep -q 'FAIL' "$out" && exit 1
exit 0
