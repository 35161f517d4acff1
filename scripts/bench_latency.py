#!/usr/bin/env python3
"""End-to-end latency to headless Chromium, for `make bench` (figures, not a gate).

For each codec: `sharectl share --source synthetic --whip` sends 1920x1080 30 fps to the Chromium
WHIP bridge; the receiver page (?latency=1) reads the timecode band of every presented frame and
takes now - capture time (both wall clock on this machine). Prints one JSON object per codec:
p50, p95 and max in milliseconds and the frames measured. The first second of frames (the
connection and the jitter buffer settling) is left out and counted apart.

    python3 scripts/bench_latency.py [--duration 20] [--codecs h264,vp8]

Run it where only loopback exists (scripts/bench.sh enters a network namespace first).
"""
import argparse
import json
import os
import signal
import socket
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SHARECTL = os.environ.get("SHARECTL", os.path.join(ROOT, ".build/release/sharectl"))
sys.path.insert(0, os.path.join(ROOT, "scripts", "gates"))
from transport import free_port, start, stop  # noqa: E402  (the gates' process helpers)


def read_json(path):
    try:
        return json.load(open(path))
    except (OSError, ValueError):
        return None


def wait_for(condition, timeout):
    deadline = time.time() + timeout
    while time.time() < deadline:
        if condition():
            return True
        time.sleep(0.2)
    return False


def percentile(values, fraction):
    ordered = sorted(values)
    index = min(len(ordered) - 1, max(0, round(fraction * (len(ordered) - 1))))
    return ordered[index]


def measure(codec, duration, work):
    port = free_port()
    stats_path = os.path.join(work, f"{codec}.browser.json")
    bridge = start([sys.executable, "scripts/peers/chromium_whip_bridge.py", "--port", str(port), "--stats", stats_path],
                   os.path.join(work, f"{codec}.bridge.log"))
    browser = None
    try:
        if not wait_for(lambda: socket_open(port), 15):
            return {"codec": codec, "error": "the WHIP bridge did not start"}
        browser = start(["scripts/peers/chromium.sh", f"http://127.0.0.1:{port}/receiver.html?latency=1",
                         os.path.join(work, f"{codec}.profile")], os.path.join(work, f"{codec}.chromium.log"))
        if not wait_for(lambda: (read_json(stats_path) or {}).get("pageSeen"), 60):
            return {"codec": codec, "error": "Chromium did not open the receiver page"}
        log = os.path.join(work, f"{codec}.share.log")
        with open(log, "w") as out:
            code = subprocess.run([SHARECTL, "share", "--source", "synthetic", "--whip", f"http://127.0.0.1:{port}/whip",
                                   "--codec", codec, "--size", "1920x1080", "--fps", "30", "--duration", str(duration),
                                   "--no-audio"], stdout=out, stderr=subprocess.STDOUT, timeout=duration + 60).returncode
        time.sleep(1.0)
        session = ((read_json(stats_path) or {}).get("sessions") or [{}])[-1]
        stats = session.get("stats") or {}
        latency = stats.get("latency") or {}
        measured = latency.get("samples") or []
        video = stats.get("video") or {}
        result = {"codec": codec, "shareExit": code, "decoder": video.get("decoderImplementation"),
                  "framesDecoded": video.get("framesDecoded"), "size": f"{latency.get('width')}x{latency.get('height')}",
                  "framesMeasured": len(measured), "warmupFrames": latency.get("warmup"),
                  "unreadable": latency.get("unreadable"), "repeated": latency.get("repeated")}
        if not measured:
            result["error"] = "no timecode was read (see " + log + ")"
            return result
        result.update({"p50Millis": percentile(measured, 0.50), "p95Millis": percentile(measured, 0.95),
                       "maxMillis": max(measured), "minMillis": min(measured)})
        return result
    finally:
        stop(browser)
        stop(bridge)


def socket_open(port):
    try:
        with socket.create_connection(("127.0.0.1", port), timeout=0.5):
            return True
    except OSError:
        return False


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--duration", type=int, default=20)
    parser.add_argument("--codecs", default="h264,vp8")
    parser.add_argument("--keep", default="", help="a folder to keep the logs in (else a temporary one)")
    parser.add_argument("--json", action="store_true", help="one JSON object per codec instead of a line of text")
    args = parser.parse_args()
    if args.keep:
        os.makedirs(args.keep, exist_ok=True)
    with tempfile.TemporaryDirectory(prefix="sharectl-latency.") as scratch:
        for codec in args.codecs.split(","):
            result = measure(codec, args.duration, args.keep or scratch)
            print(json.dumps(result) if args.json else describe(result), flush=True)


def describe(r):
    if "error" in r:
        return f"  {r['codec']:5} no figures: {r['error']}"
    return (f"  {r['codec']:5} p50 {r['p50Millis']} ms, p95 {r['p95Millis']} ms, max {r['maxMillis']} ms over "
            f"{r['framesMeasured']} frames at {r['size']} (first second's {r['warmupFrames']} frames left out, "
            f"{r['unreadable']} unreadable), Chromium decoder {r['decoder']}")


if __name__ == "__main__":
    sys.exit(main())
