#!/bin/sh
# Captures the SDP fixtures the SDPWire tests read from a real headless Chromium.
#
# Runs in its own network namespace where only loopback exists (unshare -n, lo up), serves
# scripts/chromium-sdp/page.html from collect.py (Python standard library) on 127.0.0.1, and lets
# the page make offers and answers with real RTCPeerConnections. What it saves lands in
# Tests/SDPWireTests/Fixtures/chromium-*.
#
# Usage: scripts/capture-chromium-sdp.sh [OUTDIR]    (needs root for unshare, and `chromium`)
set -eu

here=$(cd "$(dirname "$0")" && pwd)
out=${1:-$here/../Tests/SDPWireTests/Fixtures}
out=$(cd "$out" && pwd)

if [ "${SHARECTL_IN_NETNS:-}" != 1 ]; then
    exec env SHARECTL_IN_NETNS=1 unshare -n "$0" "$out"
fi
ip link set lo up

port=8617
profile=$(mktemp -d /tmp/sharectl-sdp-chromium.XXXXXX)
chromium_pid=
cleanup() {
    [ -n "$chromium_pid" ] && kill "$chromium_pid" 2>/dev/null && wait "$chromium_pid" 2>/dev/null
    rm -rf "$profile"
}
trap cleanup EXIT

python3 "$here/chromium-sdp/collect.py" "$port" "$out" &
collector_pid=$!
sleep 0.3

chromium --headless=new --no-sandbox --no-first-run --user-data-dir="$profile" \
    --use-fake-ui-for-media-stream --use-fake-device-for-media-stream \
    --allow-loopback-in-peer-connection \
    "http://127.0.0.1:$port/page.html" >"$profile/chromium.log" 2>&1 &
chromium_pid=$!

# The collector exits when the page says it is done; give up after 60 s.
( sleep 60; kill "$collector_pid" 2>/dev/null ) &
timer_pid=$!
status=0
wait "$collector_pid" || status=$?
kill "$timer_pid" 2>/dev/null || true

if [ "$status" -ne 0 ]; then
    echo "capture failed (status $status); chromium said:" >&2
    tail -n 20 "$profile/chromium.log" >&2
    exit 1
fi
chromium --version 2>/dev/null | sed 's/^/captured with /'
