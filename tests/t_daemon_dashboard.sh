#!/usr/bin/env bash
# t_daemon_dashboard.sh - the dashboard at / rendered by headless Chromium from live data,
# while proofs run on the CPU backend: tests/dashboard/check_dom.js reads the dumped DOM and
# checks the GPU utilisation graph (samples at 200 ms, busy level seen), the worker cards,
# the partition waterfall with stage segments and the budget gauge. A screenshot is kept in
# the scratch folder. Prints SKIP when Chromium is not installed (apt-get install chromium).
# Usage: CUZK=bin/cuzk tests/t_daemon_dashboard.sh   (normally through tests/run.sh)
set -uo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/dashboard/daemon_helpers.sh"

CHROME=
for c in chromium chromium-browser google-chrome; do command -v $c > /dev/null && { CHROME=$(command -v $c); break; }; done
if [ -z "$CHROME" ]; then
    echo "SKIP: Chromium is not installed (apt-get install chromium)"
    exit 77
fi
BN=$repo/tests/data/bn128/merkle

start_daemon dash || finish
# keep the pipeline busy in the background while the page loads
(
    for j in $(seq 1 6); do
        w=()
        for p in $(seq 1 6); do w+=(--witness "$BN/witness.wtns"); done
        id=$("$CUZK" submit --server "$D_ADDR" --zkey "$BN/circuit.zkey" "${w[@]}" --kind porep) || exit 1
        "$CUZK" await --server "$D_ADDR" --timeout 300 "$id" > /dev/null 2>&1
    done
) > "$tmp/load.log" 2>&1 &
load=$!
sleep 1.5

# ---------------------------------------------------------------- dashboard in Chromium
api GET /
check "/ serves the dashboard HTML ($CODE)" grep -q '<title>cuzk dashboard</title>' <<< "$BODY"
chrome() {
    timeout 90 "$CHROME" --headless --no-sandbox --disable-gpu --disable-background-networking \
        --disable-dev-shm-usage --no-first-run --user-data-dir="$tmp/chrome-profile" \
        --virtual-time-budget=4000 --run-all-compositor-stages-before-draw "$@" 2> "$tmp/chrome.err"
}
chrome --dump-dom "http://$D_ADDR/" > "$tmp/dom.html"
if node "$repo/tests/dashboard/check_dom.js" < "$tmp/dom.html" > "$tmp/dom.check"; then
    pass "dashboard rendered from live data in headless Chromium"
else
    fail "dashboard DOM checks:"
fi
sed 's/^/      /' "$tmp/dom.check"
chrome --screenshot="$tmp/dashboard.png" --window-size=1400,1000 "http://$D_ADDR/" > /dev/null
check "dashboard screenshot written ($tmp/dashboard.png)" [ -s "$tmp/dashboard.png" ]

# the load only kept the pipeline busy while the page rendered: stop it rather than wait for it
# (under the sanitizers its 36 partitions take a minute)
kill $load 2> /dev/null
wait $load 2> /dev/null
stop_daemon
finish
