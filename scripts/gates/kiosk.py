#!/usr/bin/env python3
"""Kiosk gates: what a share needs to run for days under systemd. Each gate prints PASS or FAIL
with what it judged; the last line is "N passed, N failed".

  unit      `sharectl kiosk install --root TMP -- …` for a user unit and for a system unit (`--system
            --user nobody`): `systemd-analyze verify` passes on each unit; the config file holds the
            share's options and no token (the token file is the unit's `LoadCredential=`);
            `kiosk uninstall --root TMP` removes both files.
  notify    a WHIP share to aiortc under a notify socket the gate reads (`NOTIFY_SOCKET`, a unix
            datagram socket, as systemd gives a Type=notify service): READY=1 once, after media
            flows; STATUS= the status line each second; WATCHDOG=1 each second while media leaves;
            `fault encoder-stall` typed at 13 s: WATCHDOG=1 stops (a gap of at least 2 s) and comes
            back once the share's own watchdog has mended the encoder; STOPPING=1 at the end.
  config    `share --config FILE` with `policy = detail`, `codec = vp8`, `fps = 15`: the share runs
            under them (its stats say detail and VP8 at most 15 fps) and `--fps 10` on the command
            line wins; a file with an unknown key, and one with a bad value, exit 2 naming the line.
  credential the token as a systemd credential (`CREDENTIALS_DIRECTORY/whip-token`, as
            LoadCredential= gives it): the share publishes to an aiortc endpoint that requires it
            (and is refused with 401 without it); the token is on neither its command line nor in
            its environment.
  metrics   a WHIP share to aiortc with `--metrics-listen 127.0.0.1:PORT`: /healthz says 200 once media
            flows; /metrics parses with Prometheus's own Python parser (prometheus_client) and holds
            the build, frame, keyframe, NACK, RTX, reconnect, watchdog and gauge families; the frame
            counters rise between two scrapes; `fault capture-stall` typed: /healthz answers 503
            naming the capture, then 200 again once the watchdog has restarted it, and
            sharectl_watchdog_steps_total{rung="restartCapture"} counts it; a POST is refused (405).
"""
import os
import shutil
import socket
import subprocess
import sys
import tempfile
import threading
import time
import urllib.error
import urllib.request

from lib.paths import ROOT, SHARECTL, WORK, rerun_in_venv_without
from lib.peers import last_session, start_aiortc
from lib.ports import wait_http
from lib.processes import stop
from lib.stats import read_stats
from lib.suite import choose, finish, record, run_gates

rerun_in_venv_without("prometheus_client")  # run.sh uses the system python; the parser lives in .venv


def run(args, env=None, timeout=60):
    return subprocess.run(args, cwd=ROOT, capture_output=True, text=True, timeout=timeout,
                          env={**os.environ, **(env or {})})


def gate_unit():
    name = "unit"
    root = tempfile.mkdtemp(prefix="sharectl-kiosk-")
    try:
        token = os.path.join(root, "token")
        with open(token, "w") as f:
            f.write("kiosk-token\n")
        results, notes = [], []
        for scope, extra, unit_rel, config_rel in [
            ("user", [], "root/.config/systemd/user/sharectl-kiosk.service", "root/.config/sharectl/kiosk.conf"),
            ("system", ["--system", "--user", "nobody"], "etc/systemd/system/sharectl-kiosk.service",
             "etc/sharectl/kiosk.conf"),
        ]:
            install = run([SHARECTL, "kiosk", "install", "--root", root, *extra, "--", "--source", "portal",
                           "--unattended", "--whip", "http://127.0.0.1:9/whip", "--token-file", token, "--policy",
                           "detail"], env={"HOME": "/root"})
            unit = os.path.join(root, unit_rel)
            config = os.path.join(root, config_rel)
            if install.returncode != 0 or not os.path.exists(unit):
                results.append(False)
                notes.append(f"{scope}: install exit {install.returncode}: {install.stderr.strip()[-300:]}")
                continue
            verify = run(["systemd-analyze", "verify", unit])
            said = (verify.stdout + verify.stderr).strip()
            unit_text = open(unit).read()
            config_text = open(config).read()
            ok = (verify.returncode == 0 and f"LoadCredential=whip-token:{token}" in unit_text
                  and "Type=notify" in unit_text and "WatchdogSec=" in unit_text
                  and "policy = detail" in config_text and "kiosk-token" not in config_text
                  and "token" not in [line.split("=")[0].strip() for line in config_text.splitlines()])
            results.append(ok)
            notes.append(f"{scope}: systemd-analyze verify exit {verify.returncode}"
                         + (f" ({said[-300:]})" if said else " (nothing to say)")
                         + f", the config has the options and not the token: {'kiosk-token' not in config_text}")
            uninstall = run([SHARECTL, "kiosk", "uninstall", "--root", root, *extra[:1]], env={"HOME": "/root"})
            gone = uninstall.returncode == 0 and not os.path.exists(unit) and not os.path.exists(config)
            results.append(gone)
            notes.append(f"{scope}: uninstall removed both: {gone}")
        record(name, all(results) and len(results) == 4, "; ".join(notes))
    finally:
        shutil.rmtree(root, ignore_errors=True)


class NotifySocket:
    """A unix datagram socket standing in for systemd's: every message with its time."""

    def __init__(self):
        self.path = os.path.join(tempfile.mkdtemp(prefix="sharectl-notify-"), "notify.sock")
        self.sock = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
        self.sock.bind(self.path)
        self.sock.settimeout(0.2)
        self.messages = []
        self.running = True
        self.thread = threading.Thread(target=self.read, daemon=True)
        self.thread.start()

    def read(self):
        while self.running:
            try:
                data = self.sock.recv(65536)
            except socket.timeout:
                continue
            except OSError:
                return
            self.messages.append((time.time(), data.decode(errors="replace")))

    def close(self):
        self.running = False
        self.thread.join(timeout=2)
        self.sock.close()
        shutil.rmtree(os.path.dirname(self.path), ignore_errors=True)


def gate_notify():
    name = "notify"
    endpoint, port, stats_path = start_aiortc(name)
    notify = NotifySocket()
    share = None
    try:
        if not wait_http(port):
            return record(name, False, "the aiortc endpoint did not start")
        log = os.path.join(WORK, f"{name}.share.log")
        share = subprocess.Popen([SHARECTL, "share", "--source", "synthetic", "--whip", f"http://127.0.0.1:{port}/whip",
                                  "--size", "1280x720", "--duration", "32"], stdin=subprocess.PIPE,
                                 stdout=open(log, "w"), stderr=subprocess.STDOUT, cwd=ROOT, text=True,
                                 env={**os.environ, "NOTIFY_SOCKET": notify.path})
        started = time.time()
        time.sleep(13)
        share.stdin.write("fault encoder-stall\n")
        share.stdin.flush()
        fault_at = time.time() - started
        code = share.wait(timeout=60)
        time.sleep(0.5)
        messages = [(t - started, m) for t, m in notify.messages]
        fields = [(t, line) for t, m in messages for line in m.splitlines()]
        ready = [t for t, line in fields if line == "READY=1"]
        statuses = [line for _, line in fields if line.startswith("STATUS=")]
        pings = [t for t, line in fields if line == "WATCHDOG=1"]
        stopping = any(line == "STOPPING=1" for _, line in fields)
        before = [t for t in pings if t < fault_at]
        after = [t for t in pings if t >= fault_at]
        gaps = [(b - a, a) for a, b in zip(pings, pings[1:]) if a >= fault_at - 1.5]
        gap, gap_at = max(gaps) if gaps else (0, None)
        resumed = [t for t in after if gap_at is not None and t > gap_at + gap - 0.01]
        first_frame_status = next((i for i, s in enumerate(statuses) if "Screen:" in s), None)
        checks = {
            "exit 0": code == 0,
            "READY=1 once": len(ready) == 1,
            "STATUS= the status line": first_frame_status is not None,
            "WATCHDOG=1 before the fault": len(before) >= 5,
            "a gap of >= 2 s after the fault": gap >= 2.0,
            "WATCHDOG=1 again after it": len(resumed) >= 3,
            "STOPPING=1": stopping,
        }
        failed = [k for k, v in checks.items() if not v]
        record(name, not failed,
               f"exit {code}; READY=1 at {', '.join(f'{t:.1f}' for t in ready) or 'never'} s; {len(statuses)} STATUS= "
               f"(e.g. {statuses[len(statuses) // 2][7:90] if statuses else '-'!r}); WATCHDOG=1 {len(before)} times "
               f"before the fault at {fault_at:.1f} s, then none for {gap:.1f} s from {gap_at or 0:.1f} s, then "
               f"{len(resumed)} more; STOPPING=1 {stopping}" + (f"; FAILED: {failed}" if failed else ""))
        if failed:
            print(open(log).read()[-2000:])
    finally:
        if share and share.poll() is None:
            share.kill()
        notify.close()
        stop(endpoint)


def gate_config():
    name = "config"
    endpoint, port, stats_path = start_aiortc(name)
    folder = tempfile.mkdtemp(prefix="sharectl-config-")
    try:
        if not wait_http(port):
            return record(name, False, "the aiortc endpoint did not start")
        good = os.path.join(folder, "share.conf")
        with open(good, "w") as f:
            f.write(f"# a kiosk\nwhip = http://127.0.0.1:{port}/whip\npolicy = detail\ncodec = vp8\nfps = 15\n"
                    "size = 1280x720\nno-audio = true\n")
        stats = os.path.join(WORK, f"{name}.share.jsonl")
        ran = run([SHARECTL, "share", "--config", good, "--fps", "10", "--duration", "6", "--stats-json", stats],
                  timeout=60)
        lines = read_stats(stats, "share", skip_broken=True) if os.path.exists(stats) else []
        video = (lines[-1] if lines else {}).get("video") or {}
        fps_max = max((l.get("video", {}).get("fpsSent") or 0 for l in lines), default=0)
        arrived = (last_session(stats_path).get("video") or {})
        applied = (ran.returncode == 0 and video.get("policy") == "detail" and video.get("codec", "").upper() == "VP8"
                   and fps_max <= 11 and arrived.get("framesDecoded", 0) > 0)
        bad_key = os.path.join(folder, "bad-key.conf")
        with open(bad_key, "w") as f:
            f.write("whip = http://127.0.0.1:9/whip\n\npolcy = detail\n")
        key = run([SHARECTL, "share", "--config", bad_key])
        bad_value = os.path.join(folder, "bad-value.conf")
        with open(bad_value, "w") as f:
            f.write("whip = http://127.0.0.1:9/whip\nfps = many\n")
        value = run([SHARECTL, "share", "--config", bad_value])
        key_ok = key.returncode == 2 and f"{bad_key}:3: unknown key 'polcy'" in key.stderr
        value_ok = value.returncode == 2 and f"({bad_value}:2)" in value.stderr
        record(name, applied and key_ok and value_ok,
               f"from the file: exit {ran.returncode}, policy {video.get('policy')!r}, codec {video.get('codec')!r}, "
               f"at most {fps_max:.0f} fps (--fps 10 on the command line over the file's 15), aiortc decoded "
               f"{arrived.get('framesDecoded', 0)}; an unknown key: exit {key.returncode}, "
               f"{key.stderr.strip()[:120]!r}; a bad value: exit {value.returncode}, {value.stderr.strip()[:140]!r}")
    finally:
        shutil.rmtree(folder, ignore_errors=True)
        stop(endpoint)


def gate_credential():
    name = "credential"
    endpoint, port, stats_path = start_aiortc(name, "--token", "kiosk-token")
    folder = tempfile.mkdtemp(prefix="sharectl-credentials-")
    try:
        if not wait_http(port):
            return record(name, False, "the aiortc endpoint did not start")
        with open(os.path.join(folder, "whip-token"), "w") as f:
            f.write("kiosk-token\n")
        env = {k: v for k, v in os.environ.items() if k != "WHIP_TOKEN"}
        env["CREDENTIALS_DIRECTORY"] = folder
        args = [SHARECTL, "share", "--whip", f"http://127.0.0.1:{port}/whip", "--duration", "4", "--size", "640x360",
                "--no-audio"]
        ran = subprocess.run(args, cwd=ROOT, capture_output=True, text=True, timeout=60, env=env)
        decoded = (last_session(stats_path).get("video") or {}).get("framesDecoded", 0)
        without = subprocess.run(args, cwd=ROOT, capture_output=True, text=True, timeout=60,
                                 env={k: v for k, v in env.items() if k != "CREDENTIALS_DIRECTORY"})
        ok = (ran.returncode == 0 and decoded > 0 and "kiosk-token" not in " ".join(args)
              and without.returncode != 0 and "401" in (without.stderr + without.stdout))
        record(name, ok, f"with the credential: exit {ran.returncode}, aiortc decoded {decoded}; without it: exit "
                         f"{without.returncode}, {(without.stderr.strip() or without.stdout.strip())[-160:]!r}")
        if not ok:
            print(ran.stdout[-1000:] + ran.stderr[-1000:])
    finally:
        shutil.rmtree(folder, ignore_errors=True)
        stop(endpoint)


def fetch(url, method="GET"):
    """(status, body) of one request; the status of an HTTP error too, None when nothing answers."""
    request = urllib.request.Request(url, method=method, data=b"x" if method == "POST" else None)
    try:
        with urllib.request.urlopen(request, timeout=3) as response:
            return response.status, response.read().decode()
    except urllib.error.HTTPError as error:
        return error.code, error.read().decode()
    except OSError:
        return None, ""


def scrape(base):
    """The /metrics samples as {(name, labels as a sorted tuple): value}, read by prometheus_client."""
    from prometheus_client.parser import text_string_to_metric_families
    status, text = fetch(base + "/metrics")
    if status != 200:
        return None, set()
    samples, families = {}, set()
    for family in text_string_to_metric_families(text):
        families.add(family.name)
        for sample in family.samples:
            samples[(sample.name, tuple(sorted(sample.labels.items())))] = sample.value
    return samples, families


def wait_health(base, want, within):
    """Polls /healthz until its status is `want`; returns (seconds it took, body) or (None, last body)."""
    started = time.time()
    body = ""
    while time.time() - started < within:
        status, body = fetch(base + "/healthz")
        if status == want:
            return time.time() - started, body
        time.sleep(0.25)
    return None, body


def gate_metrics():
    name = "metrics"
    endpoint, port, stats_path = start_aiortc(name)
    share = None
    try:
        if not wait_http(port):
            return record(name, False, "the aiortc endpoint did not start")
        with socket.socket() as probe:
            probe.bind(("127.0.0.1", 0))
            metrics_port = probe.getsockname()[1]
        base = f"http://127.0.0.1:{metrics_port}"
        log = os.path.join(WORK, f"{name}.share.log")
        share = subprocess.Popen([SHARECTL, "share", "--source", "synthetic", "--whip", f"http://127.0.0.1:{port}/whip",
                                  "--size", "640x360", "--duration", "40", "--metrics-listen", f"127.0.0.1:{metrics_port}"],
                                 stdin=subprocess.PIPE, stdout=open(log, "w"), stderr=subprocess.STDOUT, cwd=ROOT,
                                 text=True)
        ready, _ = wait_health(base, 200, 20)
        first, families = scrape(base)
        time.sleep(3)
        second, _ = scrape(base)
        sent = ("sharectl_video_frames_sent_total", ())
        rose = bool(first and second) and second.get(sent, 0) > first.get(sent, 0) > 0
        wanted = {"sharectl_build_info", "sharectl_video_frames_sent", "sharectl_video_keyframes",
                  "sharectl_video_nacks_received", "sharectl_video_rtx_packets_sent", "sharectl_reconnects",
                  "sharectl_capture_restarts", "sharectl_video_frames_per_second",
                  "sharectl_video_target_bits_per_second", "sharectl_send_policy", "sharectl_healthy"}
        missing = sorted(wanted - families)
        post, _ = fetch(base + "/metrics", method="POST")
        share.stdin.write("fault capture-stall\n")
        share.stdin.flush()
        unhealthy, why = wait_health(base, 503, 8)
        healthy_again, _ = wait_health(base, 200, 15)
        third, _ = scrape(base)
        restarts = (third or {}).get(("sharectl_watchdog_steps_total", (("rung", "restartCapture"),)), 0)
        share.stdin.write("stop\n")
        share.stdin.flush()
        code = share.wait(timeout=60)
        checks = {
            "exit 0": code == 0,
            "/healthz 200 once media flows": ready is not None,
            "/metrics parses with the families": first is not None and not missing,
            "frames sent rise between scrapes": rose,
            "POST refused with 405": post == 405,
            "503 naming the capture during the stall": unhealthy is not None and "capture" in why,
            "200 again after the restart": healthy_again is not None,
            "the restart counted by rung": restarts >= 1,
        }
        failed = [k for k, v in checks.items() if not v]
        record(name, not failed,
               f"exit {code}; healthy {ready and round(ready, 1)} s after start; {len(families)} families"
               f"{f' (missing {missing})' if missing else ''}; frames sent {first and first.get(sent)} then "
               f"{second and second.get(sent)}; POST {post}; after capture-stall 503 in "
               f"{unhealthy and round(unhealthy, 1)} s ({why.strip()!r}), 200 again {healthy_again and round(healthy_again, 1)}"
               f" s later; restartCapture steps {restarts}" + (f"; FAILED: {failed}" if failed else ""))
        if failed:
            print(open(log).read()[-2000:])
    finally:
        if share and share.poll() is None:
            share.kill()
        stop(endpoint)


GATES = [("unit", gate_unit), ("notify", gate_notify), ("config", gate_config), ("credential", gate_credential),
         ("metrics", gate_metrics)]


def main():
    chosen = choose("kiosk", [name for name, _ in GATES])
    run_gates(GATES, chosen)
    return finish()


if __name__ == "__main__":
    sys.exit(main())
