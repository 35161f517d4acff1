#!/usr/bin/env bash
# `make bench`: sharectl's wire code and aiortc measured on the same bytes in the same run, and the
# ratio; the send pipeline (convert → encode → packetize → SRTP) against GStreamer on the same
# frames with the same encoder libraries; end-to-end latency to headless Chromium. Figures, not
# assertions: nothing here passes or fails on speed.
#   BENCH_ROUNDS=5 BENCH_FRAMES=180 BENCH_LATENCY_SECONDS=20 BENCH_LINK_SECONDS=20 scripts/bench.sh
set -euo pipefail
cd "$(dirname "$0")/.."
work=$(mktemp -d /tmp/sharectl-bench.XXXXXX)
trap 'rm -rf "$work"' EXIT
.venv/bin/python scripts/bench_peer.py generate "$work" 2>/dev/null
ours=$(.build/release/sharectl bench-wire "$work")
peer=$(.venv/bin/python scripts/bench_peer.py measure "$work")
python3 - "$ours" "$peer" <<'PY'
import json, sys
ours, peer = json.loads(sys.argv[1]), json.loads(sys.argv[2])
rows = [("RTP parse (packets/s, with header extensions)", "rtpParsePerSecond"),
        ("RTCP compound parse (compounds/s)", "rtcpParsePerSecond"),
        ("H.264 packetize, NAL units given (720p AUs/s)", "h264PacketizeFramesPerSecond")]
print(f"{'workload':50} {'sharectl':>14} {peer['implementation']:>14} {'ratio':>8}")
for label, key in rows:
    a, b = ours[key], peer[key]
    print(f"{label:50} {a:14,.0f} {b:14,.0f} {a / b:7.1f}x")
print("ratio: sharectl's rate over the peer's, both measured just now on this machine (release build).")
print("sharectl's packetizer also checks every NAL unit for a hidden start code; the peer's does not.")
PY

echo
python3 scripts/bench_pipeline.py "$work" --rounds "${BENCH_ROUNDS:-5}" --frames "${BENCH_FRAMES:-180}"
rm -f "$work/frames.bgrx"

echo
echo "end-to-end latency to headless Chromium (1920x1080 30 fps synthetic screen, timecode band read per presented frame):"
# Only loopback, as in the gates: nothing leaves the machine and no port clashes with anything else.
unshare -n bash -c 'ip link set lo up && exec python3 scripts/bench_latency.py --duration "$1"' _ "${BENCH_LATENCY_SECONDS:-20}"

echo
# The links gates' links, sharectl (release build) beside a GStreamer webrtcbin sender told each
# link's rate by hand; 24 runs of BENCH_LINK_SECONDS (20) each, about 12 minutes.
SHARECTL="$PWD/.build/release/sharectl" unshare -n bash -c \
    'ip link set lo up && exec .venv/bin/python scripts/bench_links.py --seconds "$1"' _ "${BENCH_LINK_SECONDS:-20}"

echo
# One synthetic 1920x1080 30 fps screen watched by 1, 2, 4 and 8 built-in viewers, in a sharectl
# serve room (the mesh: one encoder per viewer) and through a Janus VideoRoom (one encoder); the
# sharer's CPU, peak RSS and uplink, the viewers' fps, the machine's load. About 4 minutes.
SHARECTL="$PWD/.build/release/sharectl" unshare -n env SHARECTL_IN_NETNS=1 \
    .venv/bin/python scripts/bench_audience.py --seconds "${BENCH_AUDIENCE_SECONDS:-10}"
