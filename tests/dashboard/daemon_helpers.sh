# daemon_helpers.sh - shell helpers shared by the black-box daemon suites (tests/t_daemon*.sh):
# start the real `cuzk serve` on a free loopback port with a scratch data dir, talk HTTP to it
# with curl, read JSON replies with node, verify proofs with snarkjs. Sourced, not run.
#
# After `source`, the suite has: $tmp, $CUZK, $SNARKJS (empty when node_modules is absent),
# pass/fail/check, start_daemon/stop_daemon/kill_daemon, api, jget, peak_rss_kb.

here=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
repo=$(cd "$here/.." && pwd)
cd "$repo" || exit 1
CUZK=${CUZK:-$repo/bin/cuzk}
tmp=${CUZK_TEST_TMP:-$(mktemp -d)}
mkdir -p "$tmp"
for tool in node curl; do
    if ! command -v $tool >/dev/null; then
        echo "SKIP: $tool is not installed (the daemon suites use it to read JSON / speak HTTP)"
        exit 77
    fi
done
if [ ! -x "$CUZK" ]; then
    echo "FAIL: no cuzk binary at $CUZK"
    exit 1
fi
SNARKJS=$repo/node_modules/.bin/snarkjs
[ -x "$SNARKJS" ] || SNARKJS=

failures=0
fail() { echo "FAIL: $*"; failures=$((failures + 1)); }
pass() { echo "ok:   $*"; }
# check DESC CONDITION... : evaluates the test(1)-style condition
check() {
    local desc=$1; shift
    if "$@"; then pass "$desc"; else fail "$desc"; fi
}
# a suite that dies half-way (syntax error, signal) must not leave its daemon running
cleanup_daemon() { [ -n "${D_PID:-}" ] && kill -KILL "$D_PID" 2> /dev/null; }
trap cleanup_daemon EXIT

finish() {
    [ -n "${D_PID:-}" ] && kill -0 "$D_PID" 2>/dev/null && kill -KILL "$D_PID" 2>/dev/null
    if [ $failures -ne 0 ]; then
        echo "$failures check(s) failed"
        for l in "$tmp"/*.log; do [ -f "$l" ] && { echo "---- $l (tail)"; tail -30 "$l"; }; done
        exit 1
    fi
    echo "all checks passed"
    exit 0
}

# start_daemon NAME [serve options...]: CPU backend, 1 thread per pool, data dir $tmp/NAME
# (kept if it exists: restart), listening on $D_LISTEN (default 127.0.0.1:0, a free port).
# Sets D_PID, D_ADDR, D_DATA, D_LOG.
start_daemon() {
    local name=$1; shift
    D_DATA=$tmp/$name
    D_LOG=$tmp/$name.log
    mkdir -p "$D_DATA"
    rm -f "$D_DATA/serve.addr"
    "$CUZK" serve --listen "${D_LISTEN:-127.0.0.1:0}" --data "$D_DATA" --backend cpu --threads 1 "$@" >> "$D_LOG" 2>&1 &
    D_PID=$!
    local i
    for i in $(seq 1 600); do
        if [ -s "$D_DATA/serve.addr" ]; then
            D_ADDR=$(cat "$D_DATA/serve.addr")
            return 0
        fi
        if ! kill -0 "$D_PID" 2>/dev/null; then
            fail "daemon $name exited during start-up"; tail -20 "$D_LOG"; D_PID=; return 1
        fi
        sleep 0.1
    done
    fail "daemon $name did not start within 60 s"; return 1
}
# stop_daemon: SIGTERM and wait; sets D_RC to its exit status
stop_daemon() {
    kill -TERM "$D_PID" 2>/dev/null
    wait "$D_PID" 2>/dev/null
    D_RC=$?
    D_PID=
}
kill_daemon() {
    kill -KILL "$D_PID" 2>/dev/null
    wait "$D_PID" 2>/dev/null
    D_PID=
}

# api METHOD PATH [curl args...]: sets CODE (HTTP status, 000 when unreachable) and BODY
api() {
    local m=$1 p=$2; shift 2
    CODE=$(curl -s -m 120 -o "$tmp/.body" -w '%{http_code}' -X "$m" "http://$D_ADDR$p" "$@")
    BODY=$(cat "$tmp/.body" 2>/dev/null)
}
# jget EXPR [JSON]: evaluates the JavaScript expression EXPR with j = the parsed JSON
# (default $BODY); objects print as JSON, undefined as "undefined"
jget() {
    node -e 'let j; try { j = JSON.parse(process.argv[1]); } catch (e) { console.log("INVALID_JSON"); process.exit(0); }
             let v; try { v = (new Function("j", "return (" + process.argv[2] + ")"))(j); } catch (e) { v = "ERROR(" + e.message + ")"; }
             console.log(typeof v === "object" ? JSON.stringify(v) : String(v));' "${2-$BODY}" "$1"
}
# wait_state ID STATE SECONDS: polls GET /v1/jobs/ID until state is STATE
wait_state() {
    local i
    for i in $(seq 1 $(($3 * 10))); do
        api GET "/v1/jobs/$1"
        [ "$(jget j.state)" = "$2" ] && return 0
        sleep 0.1
    done
    return 1
}
# peak_rss_kb PID: VmHWM of the process in kB
peak_rss_kb() { awk '/^VmHWM:/ {print $2}' "/proc/$1/status" 2>/dev/null; }
# sj_verify VK PUBLIC PROOF: 0 when snarkjs accepts (always 0 without snarkjs)
sj_verify() {
    [ -z "$SNARKJS" ] && return 0
    "$SNARKJS" groth16 verify "$1" "$2" "$3" > "$tmp/.sj" 2>&1
}
