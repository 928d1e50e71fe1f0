#!/usr/bin/env bash
# t_load.sh - a bounded load test of `cuzk serve` on loopback and on a Unix socket, with idle
# (slowloris-style) connections, driven by the load generator bench/load.c (cuzk-load, built
# beside the binary). The arithmetic that makes it deterministic: the generator's clients keep
# one connection each, so the daemon holds exactly idle + clients + 1 (the /status probe).
#   - mix on TCP, --max-conns 64, --conn-timeout 3: 40 idle connections (half send nothing, half
#     half a request header, each reconnecting when the daemon closes it) + 16 clients that
#     submit, poll and await small jobs for two rounds of at least 4 s + the probe = 57 <= 64:
#     no request may fail, every job ends done, no idle connection is refused on its first
#     connect, the daemon closes idle ones after 2..13 s, its descriptors never exceed
#     start + 64 + slack and come back to start + slack, its resident memory grows at most
#     32 MiB from the first round's end to the second's (not checked under ASan, whose
#     quarantine keeps freed memory); a sample of proofs passes `snarkjs groth16 verify` and
#     carries the fixture's public inputs;
#   - flood on TCP: 100 idle connections against the limit of 64: at most 64 kept, the rest
#     closed at once, a request meanwhile closed unanswered, descriptors bounded, all kept
#     ones closed after the timeout, then a request is served and the descriptors are back;
#     the daemon counts the refusals (/status, /metrics) and logs a warning;
#   - flood on a Unix socket (--max-conns 16, --conn-timeout 4): the same bounds, and
#     `cuzk status` while the daemon is full exits 5 naming the connection limit.
# Prints each /status latency summary (p50/p99/max) on the way. Usage: CUZK=bin/cuzk
# tests/t_load.sh (normally through tests/run.sh); CUZK_LOAD overrides the generator's path.
set -uo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/dashboard/daemon_helpers.sh"

LOAD=${CUZK_LOAD:-$(dirname "$CUZK")/cuzk-load}
if [ ! -x "$LOAD" ]; then
    echo "FAIL: no load generator at $LOAD (make builds it beside cuzk)"
    exit 1
fi
MUL=$repo/tests/data/bn128/multiplier
SAN=0
grep -qa '__asan_init' "$CUZK" && SAN=1
RSS_CHECK=(--rss-growth-mb 32)
[ $SAN = 1 ] && RSS_CHECK=()

# field VALUE LINE: the value of key= in the generator's result line
field() { sed -n "s/.* $1=\([^ ]*\).*/\1/p" <<< "$2"; }

# ---------------------------------------------------------------- TCP: mix, then flood
start_daemon tcp --max-conns 64 --conn-timeout 3 || finish
id=$("$CUZK" submit --server "$D_ADDR" --zkey "$MUL/circuit.zkey" --witness "$MUL/witness.wtns" 2> "$tmp/warm.err")
"$CUZK" await --server "$D_ADDR" --timeout 120 "$id" > /dev/null 2>> "$tmp/warm.err" ||
    fail "warm-up job: $(cat "$tmp/warm.err")"

mkdir -p "$tmp/proofs"
"$LOAD" --server "$D_ADDR" --pid "$D_PID" --clients 16 --idle 40 --idle-reconnect \
    --max-conns 64 --conn-timeout 3 --jobs 2 --rounds 2 --round-seconds 4 \
    --zkey "$MUL/circuit.zkey" --witness "$MUL/witness.wtns" \
    --save "$tmp/proofs" --save-count 3 "${RSS_CHECK[@]}" > "$tmp/mix.out" 2> "$tmp/mix.err"
rc=$?
line=$(grep '^load: mode=mix' "$tmp/mix.out")
sed 's/^/    /' "$tmp/mix.err"
check "mix of 16 clients and 40 idle connections under --max-conns 64 passes its checks (exit $rc)" [ $rc = 0 ]
echo "    /status under load: p50 $(field status_p50_ms "$line") ms, p99 $(field status_p99_ms "$line") ms, max $(field status_max_ms "$line") ms over $(field status_n "$line") requests; $(field done "$line") jobs"
check "the idle connections were closed and reconnected ($(field idle_closed "$line") closes)" \
    [ "$(field idle_closed "$line")" -ge 40 ]
if [ -z "$SNARKJS" ]; then
    echo "    (snarkjs absent: sample proofs not verified)"
fi
for k in 0 1 2; do
    check "sample proof $k passes snarkjs groth16 verify" sj_verify "$MUL/vk.json" "$tmp/proofs/public-$k.json" "$tmp/proofs/proof-$k.json"
    check "sample proof $k has the fixture's public inputs" \
        [ "$(jget 'JSON.stringify(j)' "$(cat "$tmp/proofs/public-$k.json")")" = "$(jget 'JSON.stringify(j)' "$(cat "$MUL/public.json")")" ]
done

"$LOAD" --server "$D_ADDR" --pid "$D_PID" --mode flood --idle 100 --max-conns 64 --conn-timeout 3 \
    > "$tmp/flood.out" 2> "$tmp/flood.err"
rc=$?
sed 's/^/    /' "$tmp/flood.err"
line=$(grep '^load: mode=flood' "$tmp/flood.out")
check "flood of 100 idle connections against --max-conns 64 passes its checks (exit $rc)" [ $rc = 0 ]
# 64 exactly unless the generator's previous connection was still being reaped (then 63 or 62)
held=$(field held "$line"); at_once=$(field refused_at_once "$line")
check "the daemon kept 64 and closed the rest at once ($held / $at_once)" \
    [ "${held:-0}" -ge 62 -a "${held:-0}" -le 64 -a $((${held:-0} + ${at_once:-0})) = 100 ]
api GET /status
check "/status server.http reports the limit, the timeout and the refusals ($(jget j.server.http))" \
    [ "$(jget 'j.server.http.max_conns === 64 && j.server.http.conn_timeout_s === 3 && j.server.http.peak <= 64 && j.server.http.refused >= 37')" = true ]
api GET /metrics
refused=$(sed -n 's/^cuzk_http_connections_refused_total \([0-9]*\)$/\1/p' <<< "$BODY")
check "/metrics counts the refused connections ($refused)" [ "${refused:-0}" -ge 37 ]
check "the daemon logged that it reached its connection limit" grep -q 'at the connection limit (max-conns 64)' "$D_LOG"
stop_daemon
check "daemon stops cleanly after the load (exit $D_RC)" [ "$D_RC" = 0 ]

# ---------------------------------------------------------------- Unix socket: flood
D_LISTEN=unix:$tmp/load.sock start_daemon unix --max-conns 16 --conn-timeout 4 || finish
base=$(ls "/proc/$D_PID/fd" | wc -l)
"$LOAD" --server "$D_ADDR" --pid "$D_PID" --mode flood --idle 40 --max-conns 16 --conn-timeout 4 \
    > "$tmp/uflood.out" 2> "$tmp/uflood.err" &
lpid=$!
# while the 16 kept connections are held (4 s), a client is turned away with a reason
for i in $(seq 1 100); do
    [ "$(ls "/proc/$D_PID/fd" 2>/dev/null | wc -l)" -ge $((base + 16)) ] && break
    sleep 0.02
done
"$CUZK" status --server "$D_ADDR" > "$tmp/full.out" 2>&1
rc=$?
g=0; grep -q 'connection limit' "$tmp/full.out" && g=1
check "cuzk status against a full daemon exits 5 naming the limit (exit $rc: $(head -c 200 "$tmp/full.out"))" \
    [ $rc = 5 -a $g = 1 ]
wait $lpid
rc=$?
sed 's/^/    /' "$tmp/uflood.err"
line=$(grep '^load: mode=flood' "$tmp/uflood.out")
check "Unix socket: flood of 40 against --max-conns 16 passes its checks (exit $rc)" [ $rc = 0 ]
held=$(field held "$line")
check "Unix socket: the daemon kept 16 ($held)" [ "${held:-0}" -ge 14 -a "${held:-0}" -le 16 ]
"$CUZK" status --server "$D_ADDR" > /dev/null 2>&1
check "cuzk status is served once the idle connections are gone" [ $? = 0 ]
stop_daemon
check "daemon stops cleanly (exit $D_RC)" [ "$D_RC" = 0 ]
finish
