#!/usr/bin/env python3
"""Transport gates: `sharectl share --whip` against real peers, inside a network namespace where
only loopback exists (scripts/gates/run.sh enters it). Each gate prints PASS or FAIL with the
figures it judged; the last line is "N passed, N failed".

  chromium-h264, chromium-vp8  headless Chromium (a WHIP bridge to a receiver page) decodes our
                               1280x720 30 fps for 10 s: >= 90% of frames sent, frozen under 1 s, its
                               decoder named; our Opus decoded above silence.
  aiortc-h264, aiortc-vp8      aiortc as a WHIP endpoint decodes >= 90% of what we sent, at the
                               sizes sent (its last one we sent in the last 2 s), and DELETE ends
                               its session.
  refuse-fingerprint           an answer whose DTLS fingerprint is wrong: the share refuses with a
                               clear reason, exits non-zero, and no media reaches the endpoint.
  refuse-4xx, refuse-not-sdp   WHIP answers 400 / text/html: exit non-zero, one clear line.
  garbage-datagrams            junk UDP thrown at our ICE port mid-share: nothing crashes, the
                               endpoint keeps decoding.
  turn-from-link               the endpoint names a TURN server (coturn on 127.0.0.1) only in its
                               Link header; `share --relay-only` cannot connect without it, so it
                               must publish again through it: exit 0, relayed pair, frames decoded.
  turn-from-config             the same TURN server given with --turn: relayed at the first try.
"""
import os
import socket
import subprocess
import sys
import time

from lib.chromium import WHIPReceiver
from lib.paths import ROOT, SHARECTL, WORK
from lib.peers import last_session, start_aiortc
from lib.ports import free_port, wait_http
from lib.processes import start, stop
from lib.sharectl import share
from lib.stats import read_stats
from lib.suite import choose, finish, record, run_gates


def chromium_gate(codec):
    name = f"chromium-{codec}"
    receiver = WHIPReceiver(name)
    try:
        if not receiver.bridge_up():
            return record(name, False, "the bridge did not start")
        receiver.open_page(timeout=20)
        code, last, log = share(receiver.endpoint, name, codec)
        time.sleep(1.0)
        session = receiver.session()
        video = ((session.get("stats") or {}).get("video")) or {}
        audio = ((session.get("stats") or {}).get("audio")) or {}
        sent = last["video"]["framesSent"] if last else 0
        decoded = video.get("framesDecoded", 0)
        energy = audio.get("totalAudioEnergy", 0) or 0
        samples = audio.get("totalSamplesReceived", 0) or 0
        # The size Chromium shows is the size we last sent: 1280x720 unless this machine was too
        # busy to encode it or the receiver's estimate held the rate down (the balanced policy
        # then takes the size down, and says which).
        want = (last["video"]["width"], last["video"]["height"]) if last else (1280, 720)
        # Frozen for under a tenth of the 10 s share: Chromium counts a freeze for one late frame
        # (0.24 s, on a machine busy building beside the gate), so the count alone swings with load.
        frozen = video.get("totalFreezesDuration", 10) or 0
        ok = (code == 0 and sent > 0 and decoded >= 0.9 * sent and (video.get("frameWidth"), video.get("frameHeight")) == want
              and (want == (1280, 720) or last["video"]["limitedBy"] in ("cpu", "bandwidth")) and frozen <= 1.0
              and bool(video.get("decoderImplementation")) and samples > 0 and energy > 1e-4 and session.get("deleted"))
        record(name, ok, f"exit {code}, sent {sent}, Chromium decoded {decoded} at {video.get('frameWidth')}x{video.get('frameHeight')} "
                         f"with {video.get('decoderImplementation')}, freezes {video.get('freezeCount')} ({frozen} s), "
                         f"{video.get('codec')}; audio {samples} samples, energy {energy:.4f}; DELETE {session.get('deleted')}")
        if not ok:
            print(log[-2000:])
    finally:
        receiver.close()


def aiortc_gate(codec):
    name = f"aiortc-{codec}"
    endpoint, port, stats_path = start_aiortc(name)
    try:
        if not wait_http(port):
            return record(name, False, "the aiortc endpoint did not start")
        code, last, log = share(f"http://127.0.0.1:{port}/whip", name, codec, duration=8)
        time.sleep(1.0)
        s = last_session(stats_path)
        v = s.get("video") or {}
        sent = last["video"]["framesSent"] if last else 0
        want = (last["video"]["width"], last["video"]["height"]) if last else (1280, 720)
        # The size aiortc decoded last is one we sent in the last two seconds: a step up in the
        # share's last second may not have reached it before the DELETE. Every size it decoded is
        # one we sent.
        path = os.path.join(WORK, f"{name}.share.jsonl")
        lines = [line.get("video") or {} for line in (read_stats(path, "share") if os.path.exists(path) else [])]
        sizes_sent = {(line.get("width"), line.get("height")) for line in lines}
        late = {(line.get("width"), line.get("height")) for line in lines[-2:]} or {want}
        decoded_sizes = {tuple(int(n) for n in size.split("x")) for size in (v.get("sizes") or {})}
        ok = (code == 0 and sent > 0 and v.get("framesDecoded", 0) >= 0.9 * sent and (v.get("width"), v.get("height")) in late
              and decoded_sizes <= sizes_sent
              and (want == (1280, 720) or last["video"]["limitedBy"] in ("cpu", "bandwidth")) and s.get("deleted") is True
              and (s.get("audio") or {}).get("samplesDecoded", 0) > 0)
        record(name, ok, f"exit {code}, sent {sent}, aiortc decoded {v.get('framesDecoded')} at {v.get('width')}x{v.get('height')} "
                         f"({v.get('codec')}), audio samples {(s.get('audio') or {}).get('samplesDecoded')}, DELETE {s.get('deleted')}")
        if not ok:
            print(log[-2000:])
    finally:
        stop(endpoint)


def refusal_fingerprint():
    name = "refuse-fingerprint"
    endpoint, port, stats_path = start_aiortc(name, "--tamper-fingerprint")
    try:
        if not wait_http(port):
            return record(name, False, "the aiortc endpoint did not start")
        code, last, log = share(f"http://127.0.0.1:{port}/whip", name, "h264", duration=5)
        time.sleep(0.5)
        s = last_session(stats_path)
        decoded = (s.get("video") or {}).get("framesDecoded", 0)
        said = "fingerprint" in log and "does not match" in log
        ok = code != 0 and said and decoded == 0
        reason = next((l for l in log.splitlines() if "fingerprint" in l), log.strip().splitlines()[-1] if log.strip() else "")
        record(name, ok, f"exit {code}, frames reaching the endpoint {decoded}, said: {reason.strip()[:200]}")
    finally:
        stop(endpoint)


def refusal_http(kind, path):
    name = f"refuse-{kind}"
    server = subprocess.Popen([sys.executable, "scripts/whip-test-server.py"], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                              cwd=ROOT, text=True)
    try:
        port = int(server.stdout.readline().split()[1])
        code, _, log = share(f"http://127.0.0.1:{port}{path}", name, "h264", duration=3)
        lines = [l for l in log.splitlines() if l.startswith("sharectl:")]
        ok = code != 0 and len(lines) == 1 and "WHIP" in lines[0]
        record(name, ok, f"exit {code}, said: {lines[0] if lines else log.strip()[-200:]}")
    finally:
        server.stdin.close()
        server.wait(timeout=5)


def garbage_datagrams():
    name = "garbage-datagrams"
    endpoint, port, stats_path = start_aiortc(name)
    try:
        if not wait_http(port):
            return record(name, False, "the aiortc endpoint did not start")
        share_stats = os.path.join(WORK, f"{name}.share.jsonl")
        proc = subprocess.Popen([SHARECTL, "share", "--source", "synthetic", "--whip", f"http://127.0.0.1:{port}/whip",
                                 "--size", "640x360", "--duration", "8", "--stats-json", share_stats],
                                stdout=open(os.path.join(WORK, f"{name}.share.log"), "w"), stderr=subprocess.STDOUT)
        local = None
        deadline = time.time() + 15
        while time.time() < deadline and local is None:
            time.sleep(0.3)
            try:
                for line in read_stats(share_stats, "share"):
                    pair = line["connection"].get("pair")
                    if pair:
                        local = pair.split()[0]
            except (OSError, ValueError):
                pass
        thrown = 0
        if local:
            host, lport = local.rsplit(":", 1)
            junk = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
            for i in range(2000):
                junk.sendto(os.urandom(1 + i % 1300) if i % 3 else bytes([0x80 | (i & 0x3F)]) + os.urandom(40), (host, int(lport)))
                thrown += 1
        code = proc.wait(timeout=60)
        time.sleep(0.5)
        s = last_session(stats_path)
        lines = read_stats(share_stats, "share")
        sent = lines[-1]["video"]["framesSent"] if lines else 0
        decoded = (s.get("video") or {}).get("framesDecoded", 0)
        ok = local is not None and code == 0 and decoded >= 0.9 * sent > 0
        record(name, ok, f"{thrown} junk datagrams to {local}; exit {code}, sent {sent}, decoded {decoded}")
    finally:
        stop(endpoint)


def turn_gate(from_link):
    name = "turn-from-link" if from_link else "turn-from-config"
    if not os.path.exists("/usr/bin/turnserver"):
        return record(name, False, "coturn's turnserver is not installed (scripts/setup.sh installs it)")
    turn_port = free_port()
    turn_dir = os.path.join(WORK, f"{name}.turn")
    os.makedirs(turn_dir, exist_ok=True)
    turn = start(["/usr/bin/turnserver", "-n", "--listening-ip=127.0.0.1", "--relay-ip=127.0.0.1",
                  f"--listening-port={turn_port}", "--min-port=49160", "--max-port=49200", "--lt-cred-mech",
                  "--user=sharectl:relay-secret", "--realm=sharectl.test", "--allow-loopback-peers", "--no-cli",
                  "--no-tls", "--no-dtls", f"--log-file={turn_dir}/turn.log", f"--pidfile={turn_dir}/turn.pid",
                  f"--userdb={turn_dir}/turndb"], os.path.join(WORK, f"{name}.turn.log"))
    turn_uri = f"turn:127.0.0.1:{turn_port}?transport=udp"
    link = ["--link-turn", turn_uri, "sharectl", "relay-secret"] if from_link else []
    endpoint, port, stats_path = start_aiortc(name, *link)
    try:
        if not wait_http(port) or not wait_http(turn_port):
            return record(name, False, "the endpoint or coturn did not start")
        ours = () if from_link else ("--turn", turn_uri, "--turn-user", "sharectl", "--turn-credential", "relay-secret")
        code, last, log = share(f"http://127.0.0.1:{port}/whip", name, "h264", duration=8,
                                extra=("--relay-only", "--verbose", *ours))
        time.sleep(1.0)
        s = last_session(stats_path)
        v = s.get("video") or {}
        sent = last["video"]["framesSent"] if last else 0
        relayed = bool(last and last["connection"].get("relayed"))
        retried = "publishing again through the endpoint's ICE servers" in log
        ok = code == 0 and relayed and retried == from_link and sent > 0 and v.get("framesDecoded", 0) >= 0.9 * sent
        record(name, ok, f"exit {code}, published again through the Link TURN server: {retried}, "
                         f"pair {last['connection'].get('pair') if last else None} (relayed {relayed}), "
                         f"sent {sent}, aiortc decoded {v.get('framesDecoded')}")
        if not ok:
            print(log[-3000:])
    finally:
        stop(endpoint)
        stop(turn)


GATES = [
    ("chromium-h264", lambda: chromium_gate("h264")),
    ("chromium-vp8", lambda: chromium_gate("vp8")),
    ("aiortc-h264", lambda: aiortc_gate("h264")),
    ("aiortc-vp8", lambda: aiortc_gate("vp8")),
    ("refuse-fingerprint", refusal_fingerprint),
    ("refuse-4xx", lambda: refusal_http("4xx", "/error-400")),
    ("refuse-not-sdp", lambda: refusal_http("not-sdp", "/not-sdp")),
    ("garbage-datagrams", garbage_datagrams),
    ("turn-from-link", lambda: turn_gate(True)),
    ("turn-from-config", lambda: turn_gate(False)),
]


def main():
    chosen = choose("transport", [name for name, _ in GATES])
    run_gates(GATES, chosen)
    return finish()


if __name__ == "__main__":
    sys.exit(main())
