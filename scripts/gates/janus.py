#!/usr/bin/env python3
"""Janus gates: sharectl in an existing Janus VideoRoom (Debian's janus 1.1.2), the room made
with Janus's own API. The last line is "N passed, N failed".

  existing-janus   a room with a pin, made over Janus's HTTP API; `share --janus … --janus-room`
                   publishes the synthetic 1280x720 screen and the tone for 14 s; headless Chromium
                   (janus.js from Debian's libjs-janus-gateway) and `watch --janus` both subscribe
                   to it. Each decodes at least 150 frames of the screen and hears audio; the
                   share exits 0 and, once it has ended, the room lists no publisher (it left).
                   A watcher with the wrong pin is refused at once (Janus checks a subscriber's
                   pin only when there is a publisher to subscribe to).
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
        code = share.wait(timeout=40)
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
          and len(refused) == 1 and "wrong pin" in refused[0])
    record(name, ok,
           f"share exit {code}; Chromium decoded {browser.get('framesDecoded', 0)} frames at "
           f"{browser.get('frameWidth')}x{browser.get('frameHeight')} ({browser.get('codec')}), "
           f"{browser_audio.get('packetsReceived', 0)} audio packets; watch exit {watch.returncode}, decoded "
           f"{watched.get('framesDecoded', 0)} frames at {watched.get('width')}x{watched.get('height')}, "
           f"{heard} audio frames, publisher {last.get('publisher')!r}; room empty after: {left}; a watcher with "
           f"the wrong pin: exit {wrong_pin.returncode} {refused!r}")
    if not ok:
        print(watch.stdout[-1500:], watch.stderr[-1500:])
        print(open(os.path.join(WORK, f"{name}.share.log")).read()[-2000:])
        print(json.dumps(viewer.page() if viewer else {})[-1500:])


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


GATES = [("existing-janus", existing_janus), ("janus-refusals", janus_refusals)]

def main():
    chosen = choose("janus", [name for name, _ in GATES])
    run_gates(GATES, chosen)
    return finish()


if __name__ == "__main__":
    sys.exit(main())
