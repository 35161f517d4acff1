#!/usr/bin/env python3
"""The kiosk soak: an unattended portal share (the real ScreenCast stack of the portal gates,
scripts/portal/stack.py) to the aiortc WHIP endpoint, with `--reconnect` and `--metrics-listen`,
for SOAK_MINUTES (60; `make soak`), a fault every FAULT_SECONDS (300) from a rotation, /metrics
scraped each minute. Runs inside a network namespace of its own (for the UDP drop).

The faults, in turn: the capture stalls; the encoder stalls; xdg-desktop-portal-wlr is killed and
started again; PipeWire and WirePlumber restart; xdg-desktop-portal goes away for 3 s; every UDP
datagram is dropped for 40 s (consent expires, the share publishes again). SOAK_FAULTS=a,b keeps
only the faults named (udp-dropped-40s alone: a publish again each time).

It prints, and writes to WORK/soak.json: the share's resident memory at 5 minutes and at the
end, its open file descriptors at the start and the end, faults recovered of faults injected (a
fault is recovered when aiortc decodes frames steadily again within 90 s), the longest stretch
in which aiortc decoded nothing, and the metrics' counters at the end. Exit 0 when the share ran
to the end, every fault was recovered and memory grew less than 5 % after the 5-minute mark."""
import json
import os
import subprocess
import sys
import time
import urllib.request

if os.environ.get("SHARECTL_IN_NETNS") != "1" and os.geteuid() == 0:
    os.execvp("unshare", ["unshare", "-n", "env", "SHARECTL_IN_NETNS=1", sys.executable, *sys.argv])

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "gates"))
sys.path.insert(0, os.path.join(HERE, "portal"))
from lib.network import clear_drops, drop_udp, sh  # noqa: E402
from lib.paths import ROOT, SHARECTL, WORK  # noqa: E402
from lib.peers import last_session, sessions, start_aiortc  # noqa: E402
from lib.ports import free_port, wait_http  # noqa: E402
from lib.processes import stop  # noqa: E402
from stack import PortalStack  # noqa: E402

MINUTES = float(os.environ.get("SOAK_MINUTES", "60"))
FAULT_SECONDS = float(os.environ.get("FAULT_SECONDS", "300"))
# SOAK_FAULTS=name,name: only these faults, in turn (e.g. udp-dropped-40s: a publish again each time).
only = [name for name in os.environ.get("SOAK_FAULTS", "").split(",") if name]
TOKEN = os.path.join(WORK, "soak.restore-token")


def decoded_total(stats_path):
    """Frames aiortc decoded over every WHIP session so far."""
    return sum((s.get("video") or {}).get("framesDecoded", 0) for s in sessions(stats_path))


def process_figures(pid):
    rss = 0
    try:
        for line in open(f"/proc/{pid}/status"):
            if line.startswith("VmRSS:"):
                rss = int(line.split()[1]) * 1024
        fds = len(os.listdir(f"/proc/{pid}/fd"))
    except OSError:
        return None, None
    return rss, fds


def scrape(port):
    try:
        with urllib.request.urlopen(f"http://127.0.0.1:{port}/metrics", timeout=3) as response:
            text = response.read().decode()
    except OSError:
        return {}
    values = {}
    for line in text.splitlines():
        if line.startswith("#") or " " not in line:
            continue
        name, value = line.rsplit(" ", 1)
        try:
            values[name] = float(value)
        except ValueError:
            pass
    return values


def main():
    sh("ip link set lo up")
    stack = PortalStack(WORK)
    stack.__enter__()
    endpoint = share = None
    result = {}
    try:
        stack.start_content()
        endpoint, port, stats_path = start_aiortc("soak")
        if not wait_http(port):
            raise RuntimeError("the aiortc endpoint did not start")
        metrics_port = free_port()
        log_path = os.path.join(WORK, "soak.share.log")
        share = subprocess.Popen(
            [SHARECTL, "share", "--source", "portal", "--unattended", "--restore-token-file", TOKEN, "--whip",
             f"http://127.0.0.1:{port}/whip", "--reconnect", "--no-audio", "--metrics-listen",
             f"127.0.0.1:{metrics_port}", "--duration", str(int(MINUTES * 60) + 120)],
            stdin=subprocess.PIPE, stdout=open(log_path, "w"), stderr=subprocess.STDOUT, cwd=ROOT, env=stack.env,
            text=True)

        def type_line(text):
            try:
                share.stdin.write(text + "\n")
                share.stdin.flush()
            except BrokenPipeError:
                pass  # the share has ended: its exit code says how

        def drop_for(seconds):
            drop_udp(100, table="sharectl_soak")
            try:
                time.sleep(seconds)
            finally:
                clear_drops("sharectl_soak")

        def portal_away():
            stack.stop_portal()
            time.sleep(3)
            stack.start_portal()

        rotation = [("capture-stall", lambda: type_line("fault capture-stall")),
                    ("encoder-stall", lambda: type_line("fault encoder-stall")),
                    ("backend-restart", stack.restart_backend),
                    ("pipewire-restart", stack.restart_pipewire),
                    ("portal-away", portal_away),
                    ("udp-dropped-40s", lambda: drop_for(40))]
        if only:
            rotation = [entry for entry in rotation if entry[0] in only]
        started = time.time()
        end = started + MINUTES * 60
        next_fault = started + FAULT_SECONDS
        next_scrape = started + 60
        faults = []  # {name, at, recovered_after}
        last_decoded, last_change = 0, started
        longest = (0.0, 0.0)  # (seconds, at)
        rss_5min = None
        _, fds_start = None, None
        time.sleep(5)
        _, fds_start = process_figures(share.pid)
        samples = []
        while time.time() < end and share.poll() is None:
            now = time.time()
            total = decoded_total(stats_path)
            if total > last_decoded:
                gap = now - last_change
                if gap > longest[0]:
                    longest = (gap, last_change - started)
                last_decoded, last_change = total, now
                for fault in faults:
                    # Recovered: frames decoding steadily (30 more) after the fault's end.
                    if fault["recovered_after"] is None and fault.get("mark") is not None \
                            and total >= fault["mark"] + 30 and now > fault["ended"]:
                        fault["recovered_after"] = round(now - fault["ended"], 1)
            if rss_5min is None and now - started >= 300:
                rss_5min, _ = process_figures(share.pid)
            if now >= next_scrape:
                values = scrape(metrics_port)
                rss, fds = process_figures(share.pid)
                samples.append({"t": round(now - started), "rss": rss, "fds": fds,
                                "framesSent": values.get("sharectl_video_frames_sent_total"),
                                "healthy": values.get("sharectl_healthy")})
                print(f"soak: {round((now - started) / 60, 1)} min: RSS {rss and rss // 1048576} MiB, {fds} fds, "
                      f"{int(total)} frames decoded, healthy {values.get('sharectl_healthy')}", flush=True)
                next_scrape += 60
            if now >= next_fault and now < end - min(120, FAULT_SECONDS):
                name, fault = rotation[len(faults) % len(rotation)]
                print(f"soak: fault {len(faults) + 1}: {name}", flush=True)
                entry = {"name": name, "at": round(now - started), "mark": None, "recovered_after": None}
                fault()
                entry["ended"] = time.time()
                entry["mark"] = decoded_total(stats_path)
                faults.append(entry)
                next_fault += FAULT_SECONDS
            for fault in faults:
                if fault["recovered_after"] is None and time.time() - fault["ended"] > 90:
                    fault["recovered_after"] = "not within 90 s"
            time.sleep(1)
        rss_end, fds_end = process_figures(share.pid)
        values = scrape(metrics_port)
        type_line("stop")
        code = share.wait(timeout=60)
        recovered = [f for f in faults if isinstance(f["recovered_after"], float)]
        growth = (rss_end / rss_5min - 1) if rss_5min and rss_end else None
        result = {
            "minutes": MINUTES, "exit": code, "rss5MinBytes": rss_5min, "rssEndBytes": rss_end,
            "rssGrowth": growth, "fdsStart": fds_start, "fdsEnd": fds_end,
            "faultsInjected": len(faults), "faultsRecovered": len(recovered),
            "faults": [{k: v for k, v in f.items() if k not in ("mark", "ended")} for f in faults],
            "longestFreezeSeconds": round(longest[0], 1), "longestFreezeAt": round(longest[1]),
            "whipSessions": len(sessions(stats_path)), "lastSessionDecoded":
                (last_session(stats_path).get("video") or {}).get("framesDecoded"),
            "metricsAtEnd": {k: v for k, v in values.items() if k.endswith("_total")}, "samples": samples,
        }
    finally:
        if share and share.poll() is None:
            share.kill()
        if endpoint:
            stop(endpoint)
        clear_drops("sharectl_soak")
        stack.close()
    with open(os.path.join(WORK, "soak.json"), "w") as f:
        json.dump(result, f, indent=1)
    print(json.dumps({k: v for k, v in result.items() if k not in ("samples", "metricsAtEnd")}, indent=1))
    ok = (result.get("exit") == 0 and result.get("faultsRecovered") == result.get("faultsInjected")
          and (result.get("rssGrowth") is None or result["rssGrowth"] < 0.05))
    print(f"soak: {'PASS' if ok else 'FAIL'} ({os.path.join(WORK, 'soak.json')})")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
