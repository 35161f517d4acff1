#!/usr/bin/env python3
"""Transport gates: `sharectl share --whip` against real peers, inside a network namespace where
only loopback exists (scripts/gates/run.sh enters it). Each gate prints PASS or FAIL with the
figures it judged; the last line is "N passed, N failed".

  chromium-h264, chromium-vp8  headless Chromium (a WHIP bridge to a receiver page) decodes our
                               1280x720 30 fps for 10 s: >= 90% of frames sent, frozen under 1 s, its
                               decoder named; our Opus decoded above silence.
  aiortc-h264, aiortc-vp8      aiortc as a WHIP endpoint decodes >= 90% of what we sent, at the
                               sent size, and DELETE ends its session.
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
import json
import os
import signal
import socket
import subprocess
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
SHARECTL = os.environ.get("SHARECTL", os.path.join(ROOT, ".build/debug/sharectl"))
VENV_PY = os.path.join(ROOT, ".venv/bin/python")
WORK = os.environ.get("GATE_WORK", "/tmp/sharectl-gates")
os.makedirs(WORK, exist_ok=True)
results = []


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def start(args, log):
    return subprocess.Popen(args, stdout=open(log, "w"), stderr=subprocess.STDOUT, cwd=ROOT, start_new_session=True)


def stop(process):
    if process and process.poll() is None:
        os.killpg(process.pid, signal.SIGTERM)
        try:
            process.wait(timeout=5)
        except subprocess.TimeoutExpired:
            os.killpg(process.pid, signal.SIGKILL)


def wait_http(port, timeout=15):
    deadline = time.time() + timeout
    while time.time() < deadline:
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=0.5):
                return True
        except OSError:
            time.sleep(0.1)
    return False


def share(endpoint, name, codec="h264", duration=10, extra=()):
    stats = os.path.join(WORK, f"{name}.share.jsonl")
    log = os.path.join(WORK, f"{name}.share.log")
    args = [SHARECTL, "share", "--source", "synthetic", "--whip", endpoint, "--codec", codec,
            "--size", "1280x720", "--fps", "30", "--duration", str(duration), "--stats-json", stats, *extra]
    with open(log, "w") as out:
        code = subprocess.run(args, stdout=out, stderr=subprocess.STDOUT, timeout=duration + 60).returncode
    lines = [json.loads(l) for l in open(stats)] if os.path.exists(stats) else []
    return code, (lines[-1] if lines else None), open(log).read()


def record(name, ok, detail):
    results.append(ok)
    print(f"{'PASS' if ok else 'FAIL'} {name}: {detail}", flush=True)


def read_json(path):
    try:
        return json.load(open(path))
    except (OSError, ValueError):
        return None


def start_aiortc(name, *extra):
    """The aiortc WHIP endpoint on a free port; returns (process, port, stats path)."""
    port = free_port()
    stats_path = os.path.join(WORK, f"{name}.endpoint.json")
    process = start([VENV_PY, "scripts/peers/aiortc_whip.py", "--port", str(port), "--stats", stats_path, *extra],
                    os.path.join(WORK, f"{name}.endpoint.log"))
    return process, port, stats_path


def last_session(stats_path):
    return ((read_json(stats_path) or {}).get("sessions") or [{}])[-1]


def chromium_gate(codec):
    name = f"chromium-{codec}"
    port = free_port()
    stats_path = os.path.join(WORK, f"{name}.browser.json")
    bridge = start([sys.executable, "scripts/peers/chromium_whip_bridge.py", "--port", str(port), "--stats", stats_path],
                   os.path.join(WORK, f"{name}.bridge.log"))
    browser = None
    try:
        if not wait_http(port):
            return record(name, False, "the bridge did not start")
        browser = start(["scripts/peers/chromium.sh", f"http://127.0.0.1:{port}/receiver.html", os.path.join(WORK, f"{name}.profile")],
                        os.path.join(WORK, f"{name}.chromium.log"))
        deadline = time.time() + 20
        while time.time() < deadline and not (read_json(stats_path) or {}).get("pageSeen"):
            time.sleep(0.2)
        code, last, log = share(f"http://127.0.0.1:{port}/whip", name, codec)
        time.sleep(1.0)
        page = read_json(stats_path) or {}
        session = (page.get("sessions") or [{}])[-1]
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
        stop(browser)
        stop(bridge)


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
        ok = (code == 0 and sent > 0 and v.get("framesDecoded", 0) >= 0.9 * sent and (v.get("width"), v.get("height")) == want
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
                for line in open(share_stats):
                    pair = json.loads(line)["connection"].get("pair")
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
        lines = [json.loads(l) for l in open(share_stats)]
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


def main():
    only = set(sys.argv[1:])
    gates = [
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
    return run_suite(gates, only)


def run_suite(gates, only):
    """Runs the named gates (all when `only` is empty) and prints "N passed, N failed". Every
    suite ends through here: a gate that breaks is a failed gate, with its reason."""
    for name, gate in gates:
        if only and name not in only:
            continue
        try:
            gate()
        except Exception as error:
            record(name, False, f"the gate itself failed: {error!r}")
    passed = sum(results)
    print(f"{passed} passed, {len(results) - passed} failed")
    return 0 if passed == len(results) else 1


if __name__ == "__main__":
    sys.exit(main())
