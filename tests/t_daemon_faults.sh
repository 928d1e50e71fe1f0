#!/usr/bin/env bash
# t_daemon_faults.sh - nothing acknowledged is lost to a transient fault (CPU backend, loopback,
# black box):
#   b. device memory: with the CPU backend's fault hook on (CUZK_FAULT_OOM_FILE exists), jobs
#      submitted with --upload are acknowledged, their partitions wait as "paused" with cause
#      device_memory in /status, in cuzk_partitions_paused{cause="device_memory"}, in `cuzk top`,
#      `cuzk status ID` and the dashboard (headless Chromium, when installed), and are retried
#      many times without failing their jobs; once the file is removed every job ends done with
#      proofs that snarkjs verifies.
#   a. a 3 MiB data directory (a tmpfs this suite mounts; it needs root, else the drill is
#      skipped and the suite says so): jobs submitted with --upload until the disk has no room
#      are each either acknowledged or refused with HTTP 507 and exit code 7 with free and
#      required bytes in the message; with the disk then filled up, proofs cannot be stored and
#      their partitions wait as paused with cause disk_full (proving is held back by the device
#      memory hook until the disk is full, so that this happens every time); once the filler is
#      removed every acknowledged job ends done with proofs that snarkjs verifies, and none failed;
#      with the check off (--min-free 0) an upload that does not fit is refused the same way and
#      leaves no journal record or partial file behind.
# Usage: CUZK=bin/cuzk tests/t_daemon_faults.sh   (normally through tests/run.sh)
set -uo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/dashboard/daemon_helpers.sh"

BN=$repo/tests/data/bn128/merkle
MNT=$tmp/small
umount_small() { mountpoint -q "$MNT" 2> /dev/null && umount "$MNT" 2> /dev/null; }
trap 'cleanup_daemon; umount_small' EXIT

# metric VALUE of one sample line of /metrics, e.g. metric 'cuzk_partitions_paused{cause="disk_full"}'
metric() {
    curl -s -m 10 "http://$D_ADDR/metrics" | awk -v k="$1" '$1 == k {print $2}'
}
# eventually SECONDS CMD...: CMD succeeds within SECONDS (tried every 0.2 s; partitions go in and
# out of their paused state as they are retried, so one snapshot may catch some in flight)
eventually() {
    local s=$1 i; shift
    for i in $(seq 1 $((s * 5))); do
        "$@" && return 0
        sleep 0.2
    done
    return 1
}
# paused_ge CAUSE N: /status shows at least N partitions paused for CAUSE, in its summary and
# as partitions in state paused with that cause and a retry time (leaves BODY = that /status)
paused_ge() {
    api GET /status
    [ "$(jget "j.paused.$1 >= $2 && j.active.flatMap(x => x.partitions).filter(p => p.state === 'paused' &&
        p.cause === '$1' && p.retry_in_ms >= 0).length >= $2")" = true ]
}
metric_ge() { local v; v=$(metric "$1"); [ "${v:-0}" -ge "$2" ]; }
top_shows() { "$CUZK" top --server "$D_ADDR" --once > "$tmp/top.out" 2>&1 && grep -q "$1" "$tmp/top.out"; }
status_shows() { "$CUZK" status --server "$D_ADDR" "$1" > "$tmp/status.out" 2>&1 && [ "$(grep -c "$2" "$tmp/status.out")" = "$3" ]; }
# await_all OUTDIR IDS...: awaits every job into OUTDIR/ID; prints the number that ended done
await_all() {
    local out=$1 id n=0; shift
    mkdir -p "$out"
    for id in "$@"; do
        if "$CUZK" await --server "$D_ADDR" --timeout 120 "$id" --out "$out/$id" > "$tmp/await.out" 2>&1; then
            n=$((n + 1))
        else
            echo "    await $id: $(cat "$tmp/await.out")" >&2
        fi
    done
    echo $n
}
# verify_dirs VK DIR...: snarkjs accepts every proof in the folders (always true without snarkjs)
verify_dirs() {
    [ -z "$SNARKJS" ] && return 0
    local vk=$1; shift
    node "$repo/tests/dashboard/verify_proofs.js" "$repo" "$vk" "$@" > "$tmp/.vp" 2>&1
    local rc=$?
    echo "    $(tail -1 "$tmp/.vp")"
    return $rc
}

# ---------------------------------------------------------------- b. device memory exhausted
export CUZK_FAULT_OOM_FILE=$tmp/device-oom.flag
touch "$CUZK_FAULT_OOM_FILE"
start_daemon oom --retry-max 2 || finish
ids=()
for j in 1 2 3; do
    id=$("$CUZK" submit --server "$D_ADDR" --zkey "$BN/circuit.zkey" --witness "$BN/witness.wtns" \
        --witness "$BN/witness.wtns" --upload 2> "$tmp/submit.err")
    rc=$?
    [ $rc = 0 ] && [ -n "$id" ] && ids+=("$id") || fail "submit $j while the device is out of memory: exit $rc $(cat "$tmp/submit.err")"
done
check "3 jobs acknowledged while the device is out of memory" [ ${#ids[@]} = 3 ]
check "/status: all 6 partitions paused with cause device_memory (summary and per partition)" \
    eventually 30 paused_ge device_memory 6
check "metric cuzk_partitions_paused{cause=\"device_memory\"} reaches 6" \
    eventually 20 metric_ge 'cuzk_partitions_paused{cause="device_memory"}' 6
check "cuzk top shows the paused partitions and their cause" \
    eventually 20 top_shows "PAUSED: [1-6] partition.*device_memory [1-6]"
check "cuzk status ID shows both partitions paused (device_memory)" \
    eventually 20 status_shows "${ids[0]}" "paused (device_memory" 2
# the dashboard draws the paused partitions (headless Chromium, when installed)
CHROME=
for c in chromium chromium-browser google-chrome; do command -v $c > /dev/null && { CHROME=$(command -v $c); break; }; done
if [ -n "$CHROME" ]; then
    timeout 60 "$CHROME" --headless --no-sandbox --disable-gpu --disable-background-networking \
        --disable-dev-shm-usage --no-first-run --user-data-dir="$tmp/chrome-profile" \
        --virtual-time-budget=1500 --dump-dom "http://$D_ADDR/" > "$tmp/dom.html" 2> "$tmp/chrome.err"
    banner=$(grep -o '<div id="paused-banner"[^>]*>[^<]*' "$tmp/dom.html")
    check "the dashboard's banner shows the paused partitions and their cause (${banner:0:160})" \
        bash -c '[[ "$1" =~ data-paused=\"[1-6]\" ]] && [[ "$1" == *"device memory"* ]]' _ "$banner"
else
    echo "note: Chromium is not installed: the dashboard's paused banner is not checked"
fi
# each partition fails more than twice (the limit for a permanent cause) and no job fails
for i in $(seq 1 100); do
    api GET /status
    [ "$(jget 'j.paused.since_start.device_memory')" -ge 18 ] 2> /dev/null && break
    sleep 0.2
done
check "retried with backoff: $(jget 'j.paused.since_start.device_memory') transient failures, no job failed" \
    [ "$(jget 'j.paused.since_start.device_memory >= 18 && j.jobs.failed === 0 && j.jobs.done === 0')" = true ]
rm -f "$CUZK_FAULT_OOM_FILE"
n=$(await_all "$tmp/out-oom" "${ids[@]}")
check "device memory back: all 3 acknowledged jobs end done ($n)" [ "$n" = 3 ]
check "their 6 proofs verify" verify_dirs "$BN/vk.json" "${ids[@]/#/$tmp/out-oom/}"
m=$(metric 'cuzk_partitions_paused{cause="device_memory"}')
check "metric back to 0 (got ${m:-none})" [ "${m:-x}" = 0 ]
stop_daemon

# ---------------------------------------------------------------- a. a 3 MiB data directory
skipped=
mkdir -p "$MNT"
if [ "$(id -u)" != 0 ]; then
    skipped="not root: cannot mount the 3 MiB tmpfs for the disk-full drill"
elif ! mount -t tmpfs -o size=3m cuzk-faults "$MNT" 2> "$tmp/mount.err"; then
    skipped="mount of a 3 MiB tmpfs failed ($(head -1 "$tmp/mount.err")): the disk-full drill did not run"
fi
if [ -n "$skipped" ]; then
    echo "note: $skipped"
else
    touch "$CUZK_FAULT_OOM_FILE"   # hold proving until the disk is full
    D_DATA_DIR=$MNT/data
    mkdir -p "$D_DATA_DIR"
    # start_daemon keeps its data dir under $tmp: point it at the tmpfs through a link
    ln -s "$D_DATA_DIR" "$tmp/full"
    start_daemon full --retry-max 1 --min-free 2304K || finish
    acc=() refused=0 other=0
    for j in $(seq 1 60); do
        id=$("$CUZK" submit --server "$D_ADDR" --zkey "$BN/circuit.zkey" --witness "$BN/witness.wtns" --upload 2> "$tmp/submit.err")
        rc=$?
        if [ $rc = 0 ] && [ -n "$id" ]; then
            acc+=("$id")
        elif [ $rc = 7 ] && grep -q "507.*free.*--min-free" "$tmp/submit.err"; then
            refused=$((refused + 1))
            [ $refused = 1 ] && sed 's/^/    /' "$tmp/submit.err"
            [ $refused -ge 3 ] && break
        else
            other=$((other + 1))
            echo "    submit $j: exit $rc: $(cat "$tmp/submit.err")"
        fi
    done
    check "until the disk had no room: ${#acc[@]} acknowledged, $refused refused with 507 / exit 7, $other otherwise" \
        [ ${#acc[@]} -ge 5 -a $refused -ge 1 -a $other = 0 ]
    # the HTTP answer itself
    api POST "/v1/jobs?zkey=$BN/circuit.zkey" -H 'Content-Type: application/octet-stream' --data-binary "@$BN/witness.wtns"
    check "POST /v1/jobs is answered 507 with free and required bytes ($CODE: $(jget j.error))" \
        [ "$CODE" = 507 -a "$(jget '/free, a submission needs .* \(--min-free\)/.test(j.error)')" = true ]
    # fill what is left, then let proving go: no proof can be stored
    dd if=/dev/zero of="$MNT/filler" bs=4k > /dev/null 2>&1
    rm -f "$CUZK_FAULT_OOM_FILE"
    check "/status shows partitions paused with cause disk_full" eventually 30 paused_ge disk_full 1
    check "their error says the journal is full ($(jget 'j.paused.last_error'))" \
        [ "$(jget 'j.active.flatMap(x => x.partitions).some(p => p.cause === "disk_full" && /full/.test(p.error))')" = true ]
    check "metric cuzk_partitions_paused{cause=\"disk_full\"} >= 1" \
        eventually 20 metric_ge 'cuzk_partitions_paused{cause="disk_full"}' 1
    "$CUZK" submit --server "$D_ADDR" --zkey "$BN/circuit.zkey" --witness "$BN/witness.wtns" --upload > /dev/null 2> "$tmp/submit.err"
    rc=$?
    check "a submission while the disk is full exits 7 ($(cat "$tmp/submit.err"))" [ $rc = 7 ]
    sleep 2
    api GET /status
    check "while full, no job failed and none is done" [ "$(jget 'j.jobs.failed === 0 && j.jobs.done === 0')" = true ]
    rm -f "$MNT/filler"
    n=$(await_all "$tmp/out-full" "${acc[@]}")
    check "space back: all ${#acc[@]} acknowledged jobs end done ($n)" [ "$n" = ${#acc[@]} ]
    check "their proofs verify" verify_dirs "$BN/vk.json" "${acc[@]/#/$tmp/out-full/}"
    api GET "/v1/jobs?state=failed&limit=1000"
    check "no job failed" [ "$(jget 'j.jobs.length')" = 0 ]
    stop_daemon
    # --min-free 0 turns the check off: an upload whose write runs out of space is refused the
    # same way, leaving neither a journal record nor a partial file
    start_daemon full --retry-max 1 --min-free 0 || finish
    dd if=/dev/zero of="$MNT/filler" bs=4k > /dev/null 2>&1
    nw=$(ls "$D_DATA_DIR/witness" | wc -l)
    "$CUZK" submit --server "$D_ADDR" --zkey "$BN/circuit.zkey" --witness "$BN/witness.wtns" --upload > /dev/null 2> "$tmp/submit.err"
    rc=$?
    check "--min-free 0 on a full disk: the upload is refused with 507 / exit 7 ($(cat "$tmp/submit.err"))" \
        [ $rc = 7 -a "$(grep -c 'answered 507' "$tmp/submit.err")" = 1 ]
    api GET "/v1/jobs?limit=1000"
    check "nothing of it was journaled or left behind ($(jget 'j.jobs.length') jobs, $(ls "$D_DATA_DIR/witness" | wc -l) witness files)" \
        [ "$(jget 'j.jobs.length')" = ${#acc[@]} -a "$(ls "$D_DATA_DIR/witness" | wc -l)" = "$nw" ]
    rm -f "$MNT/filler"
    stop_daemon
    umount_small
fi

if [ -n "$skipped" ] && [ $failures = 0 ]; then
    echo "SKIP: $skipped (the device-memory drill passed)"
    exit 77
fi
finish
