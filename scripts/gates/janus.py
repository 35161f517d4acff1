#!/usr/bin/env python3
"""Janus gates: sharectl in an existing Janus VideoRoom (Debian's janus 1.1.2), the room made
with Janus's own API. The last line is "N passed, N failed".

  existing-janus   a room with a pin, made over Janus's HTTP API; `share --janus … --janus-room`
                   publishes the synthetic 1280x720 screen as simulcast (three layers: h, m, l)
                   and the tone for 14 s; headless Chromium (janus.js from Debian's
                   libjs-janus-gateway) and `watch --janus` both subscribe to it (Janus gives them
                   the largest layer there is). Each decodes at least 150 frames of the screen and
                   hears audio; a second `watch --janus --substream 0` decodes at least 100 frames
                   of the smallest layer, at the l layer's size, smaller than the others'. The
                   share's stats list the three layers, and at least two of them sent frames. The
                   share exits 0 and, once it has ended, the room lists no publisher (it left).
                   A watcher with the wrong pin is refused at once (Janus checks a subscriber's
                   pin only when there is a publisher to subscribe to).
  simulcast-loss   5 % of every UDP datagram lost at random (nftables, on the way in): `share --janus`
                   publishes the 1280x720 screen as simulcast for 12 s, `watch --janus
                   --substream 0` watches the smallest layer for 8 s. The watcher decodes at least
                   10 fps (median of its seconds after the first two) at the l layer's size: its
                   packets cross two lossy legs (sharectl to Janus, Janus to the watcher), about
                   10 % lost end to end, and a keyframe lost on both waits for the next PLI (runs
                   gave medians of 13 to 30 fps); Janus
                   asked for retransmissions on the l layer and they were sent on its RTX stream
                   (the layer's NACKs received and RTX sent both above 0), and every layer that
                   received NACKs sent retransmissions.
  janus-refusals   a wrong pin, a room that does not exist, a Janus that is not there and an
                   address that is not a WebSocket: each ends at once with exit 1 (2 for the
                   address) and one line saying what Janus refused, never a crash or a hang.

Janus gathers only on j0's 127.0.0.2 (lib/janus.py says why), so sharectl offers candidates there
too: `--ice-interface j0`.
"""
import json
import os
import subprocess
import sys

from lib.janus import Janus, JanusViewer
from lib.network import clear_drops, drop_udp
from lib.paths import ROOT, SHARECTL, WORK
from lib.ports import free_port
from lib.processes import stop
from lib.suite import choose, finish, record, run_gates
from lib.waits import wait_for

PIN = "4711"


def run(*args, timeout=60):
    return subprocess.run([SHARECTL, *args], capture_output=True, text=True, timeout=timeout, cwd=ROOT)


def existing_janus():
    name = "existing-janus"
    janus = Janus(name)
    janus.start()
    viewer = None
    share = None
    try:
        room = janus.create_room(pin=PIN)
        log = open(os.path.join(WORK, f"{name}.share.log"), "w")
        share = subprocess.Popen(
            [SHARECTL, "share", "--source", "synthetic", "--janus", janus.ws_url, "--janus-room", str(room),
             "--pin", PIN, "--display", "Ann", "--ice-interface", "j0", "--size", "1280x720", "--duration", "14",
             "--stats-json", os.path.join(WORK, f"{name}.share.jsonl")],
            stdout=log, stderr=subprocess.STDOUT, cwd=ROOT)
        viewer = JanusViewer(name, janus, room, PIN)
        page_up = viewer.open()
        stats = os.path.join(WORK, f"{name}.watch.jsonl")
        small_stats = os.path.join(WORK, f"{name}.watch-small.jsonl")
        small_log = open(os.path.join(WORK, f"{name}.watch-small.log"), "w")
        small = subprocess.Popen(
            [SHARECTL, "watch", "--janus", janus.ws_url, "--janus-room", str(room), "--pin", PIN, "--publisher", "Ann",
             "--substream", "0", "--ice-interface", "j0", "--duration", "8", "--stats-json", small_stats],
            stdout=small_log, stderr=subprocess.STDOUT, cwd=ROOT)
        watch = run("watch", "--janus", janus.ws_url, "--janus-room", str(room), "--pin", PIN, "--publisher", "Ann",
                    "--ice-interface", "j0", "--duration", "8", "--stats-json", stats)
        # Janus checks a subscriber's pin when it subscribes, so only with a publisher there.
        wrong_pin = run("watch", "--janus", janus.ws_url, "--janus-room", str(room), "--pin", "0000",
                        "--duration", "3")
        refused = [line for line in wrong_pin.stderr.splitlines() if line.startswith("sharectl:")]
        lines = [json.loads(line) for line in open(stats) if line.strip()] if os.path.exists(stats) else []
        last = lines[-1] if lines else {}
        watched = last.get("video", {})
        heard = last.get("audio", {}).get("framesDecoded", 0)
        small_code = small.wait(timeout=30)
        small_lines = [json.loads(line) for line in open(small_stats) if line.strip()] if os.path.exists(small_stats) else []
        small_video = small_lines[-1].get("video", {}) if small_lines else {}
        code = share.wait(timeout=40)
        shared = [json.loads(line) for line in open(os.path.join(WORK, f"{name}.share.jsonl")) if line.strip()]
        layers = shared[-1].get("video", {}).get("layers") or [] if shared else []
        lowest = next((layer for line in reversed(shared) for layer in line["video"].get("layers") or []
                       if layer["rid"] == "l" and layer["width"]), {})
        browser, browser_audio = viewer.video(), viewer.audio()
        left = wait_for(lambda: not janus.publishers(room, PIN), 5)
    finally:
        if share and share.poll() is None:
            stop(share)
        if viewer:
            viewer.close()
        janus.stop()
    ok = (page_up and code == 0 and watch.returncode == 0 and browser.get("framesDecoded", 0) >= 150
          and browser_audio.get("packetsReceived", 0) > 0 and watched.get("framesDecoded", 0) >= 150
          and heard > 0 and last.get("publisher") == "Ann" and left and wrong_pin.returncode == 1
          and len(refused) == 1 and "wrong pin" in refused[0]
          and [layer["rid"] for layer in layers] == ["h", "m", "l"]
          and sum(1 for layer in layers if layer["framesSent"] > 0) >= 2
          and small_code == 0 and small_video.get("framesDecoded", 0) >= 100
          and small_video.get("width") == lowest.get("width")
          and small_video.get("width", 0) < min(watched.get("width") or 0, browser.get("frameWidth") or 0))
    record(name, ok,
           f"share exit {code}; Chromium decoded {browser.get('framesDecoded', 0)} frames at "
           f"{browser.get('frameWidth')}x{browser.get('frameHeight')} ({browser.get('codec')}), "
           f"{browser_audio.get('packetsReceived', 0)} audio packets; watch exit {watch.returncode}, decoded "
           f"{watched.get('framesDecoded', 0)} frames at {watched.get('width')}x{watched.get('height')}, "
           f"{heard} audio frames, publisher {last.get('publisher')!r}; room empty after: {left}; a watcher with "
           f"the wrong pin: exit {wrong_pin.returncode} {refused!r}; layers at the end "
           f"{[(layer['rid'], layer['active'], layer['width'], layer['framesSent']) for layer in layers]}; "
           f"watch --substream 0: exit {small_code}, decoded {small_video.get('framesDecoded', 0)} frames at "
           f"{small_video.get('width')}x{small_video.get('height')} (the l layer: {lowest.get('width')} wide)")
    if not ok:
        print(watch.stdout[-1500:], watch.stderr[-1500:])
        print(open(os.path.join(WORK, f"{name}.share.log")).read()[-2000:])
        print(json.dumps(viewer.page() if viewer else {})[-1500:])


def simulcast_loss():
    name = "simulcast-loss"
    janus = Janus(name)
    janus.start()
    share = None
    try:
        room = janus.create_room(pin=PIN)
        drop_udp(5)
        shared_path = os.path.join(WORK, f"{name}.share.jsonl")
        log = open(os.path.join(WORK, f"{name}.share.log"), "w")
        share = subprocess.Popen(
            [SHARECTL, "share", "--source", "synthetic", "--janus", janus.ws_url, "--janus-room", str(room),
             "--pin", PIN, "--display", "Ann", "--ice-interface", "j0", "--size", "1280x720", "--duration", "12",
             "--no-audio", "--stats-json", shared_path],
            stdout=log, stderr=subprocess.STDOUT, cwd=ROOT)
        stats = os.path.join(WORK, f"{name}.watch.jsonl")
        watch = run("watch", "--janus", janus.ws_url, "--janus-room", str(room), "--pin", PIN, "--publisher", "Ann",
                    "--substream", "0", "--ice-interface", "j0", "--duration", "8", "--stats-json", stats)
        code = share.wait(timeout=40)
    finally:
        clear_drops()
        if share and share.poll() is None:
            stop(share)
        janus.stop()
    lines = [json.loads(line) for line in open(stats) if line.strip()] if os.path.exists(stats) else []
    decoding = sorted(line["video"]["fps"] for line in lines[2:] if "video" in line)
    median = decoding[len(decoding) // 2] if decoding else 0
    watched = lines[-1].get("video", {}) if lines else {}
    shared = [json.loads(line) for line in open(shared_path) if line.strip()] if os.path.exists(shared_path) else []
    layers = {layer["rid"]: layer for layer in (shared[-1]["video"].get("layers") or [] if shared else [])}
    lowest = layers.get("l", {})
    sizes = {layer["width"] for line in shared for layer in line["video"].get("layers") or [] if layer["rid"] == "l"}
    ok = (code == 0 and watch.returncode == 0 and median >= 10 and watched.get("width") in sizes
          and lowest.get("nacksReceived", 0) > 0 and lowest.get("rtxSent", 0) > 0
          and all(layer["rtxSent"] > 0 for layer in layers.values() if layer["nacksReceived"] > 0))
    record(name, ok,
           f"share exit {code}; watch --substream 0: exit {watch.returncode}, median {median:.1f} fps, decoded "
           f"{watched.get('framesDecoded', 0)} frames at {watched.get('width')}x{watched.get('height')} (the l "
           f"layer's widths: {sorted(sizes)}), NACKs sent {watched.get('nacksSent')}; layers (NACKs received, RTX "
           f"sent): {[(rid, layer['nacksReceived'], layer['rtxSent']) for rid, layer in layers.items()]}")
    if not ok:
        print(watch.stdout[-1500:], watch.stderr[-1500:])
        print(open(os.path.join(WORK, f"{name}.share.log")).read()[-2000:])


def janus_refusals():
    name = "janus-refusals"
    janus = Janus(name)
    janus.start()
    try:
        room = janus.create_room(pin=PIN)
        common = ["--ice-interface", "j0", "--duration", "5", "--size", "320x180"]
        wrong_pin = run("share", "--janus", janus.ws_url, "--janus-room", str(room), "--pin", "0000", *common)
        no_room = run("share", "--janus", janus.ws_url, "--janus-room", "424242", *common)
    finally:
        janus.stop()
    nobody = run("share", "--janus", f"ws://127.0.0.1:{free_port()}", "--janus-room", "1", *common)
    not_ws = run("share", "--janus", "http://127.0.0.1:8088/janus", "--janus-room", "1", *common)

    def said(result, words):
        lines = [line for line in result.stderr.splitlines() if line.startswith("sharectl:")]
        return len(lines) == 1 and all(word in lines[0] for word in words) and "Fatal" not in result.stderr

    checks = {
        "wrong pin": wrong_pin.returncode == 1 and said(wrong_pin, ["joining room", "wrong pin", "433"]),
        "no room": no_room.returncode == 1 and said(no_room, ["No such room (424242)", "426"]),
        "no Janus": nobody.returncode == 1 and said(nobody, ["Janus at ws://127.0.0.1:"]),
        "not a WebSocket": not_ws.returncode == 2 and "ws://HOST:8188" in not_ws.stderr,
    }
    record(name, all(checks.values()),
           "; ".join(f"{what}: exit {result.returncode} {result.stderr.strip().splitlines()[-1:]!r}"
                     for what, result in (("wrong pin", wrong_pin), ("no room", no_room),
                                          ("no Janus", nobody), ("not a WebSocket", not_ws)))
           + f" — failed: {[what for what, ok in checks.items() if not ok]}")


GATES = [("existing-janus", existing_janus), ("simulcast-loss", simulcast_loss), ("janus-refusals", janus_refusals)]

def main():
    chosen = choose("janus", [name for name, _ in GATES])
    run_gates(GATES, chosen)
    return finish()


if __name__ == "__main__":
    sys.exit(main())
