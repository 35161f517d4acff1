#!/usr/bin/env python3
"""Diagnose gates: `sharectl diagnose` on the stats file of a real share, and on broken files;
`sharectl scenario check` on the scenario files. The last line is "N passed, N failed".

  share-diagnose     a share to the aiortc WHIP endpoint for 8 s with --stats-json, then diagnose:
                     exit 0, report.txt names the peer and the frame rates: its median sent is the
                     median of the file's video.fpsSent (to 0.1), and a working share's (>= 10 fps;
                     the synthetic screen runs at 30, a loaded machine sends 20 to 28),
                     plot.svg is XML with five lines (fps encoded/sent, bitrate, target, RTT).
  diagnose-broken    a stats file with a broken line in the middle, and a missing file: exit 1 with
                     one line naming the file (and the line), never a crash.
  scenario-check     every Scenarios/*.json passes; a copy with an unknown fault target fails,
                     naming the file and the field.
"""
import glob
import json
import os
import re
import subprocess
import sys
import xml.etree.ElementTree as ElementTree

from lib.paths import ROOT, SHARECTL, WORK
from lib.peers import start_aiortc
from lib.ports import wait_http
from lib.processes import stop
from lib.sharectl import share
from lib.suite import choose, finish, record, run_gates


def run(*args):
    return subprocess.run([SHARECTL, *args], capture_output=True, text=True, timeout=60, cwd=ROOT)


def share_diagnose():
    name = "share-diagnose"
    endpoint, port, _ = start_aiortc(name)
    try:
        if not wait_http(port):
            return record(name, False, "the aiortc endpoint did not start")
        stats = os.path.join(WORK, f"{name}.share.jsonl")
        if os.path.exists(stats):
            os.remove(stats)
        code, last, log = share(f"http://127.0.0.1:{port}/whip", name, "h264", duration=8)
    finally:
        stop(endpoint)
    out = os.path.join(WORK, f"{name}.diagnose")
    result = run("diagnose", stats, "--out", out)
    report = open(os.path.join(out, "report.txt")).read() if result.returncode == 0 else ""
    median = re.search(r"Frame rate sent: min [\d.]+, median ([\d.]+)", report)
    sent = sorted(json.loads(line).get("video", {}).get("fpsSent") for line in open(stats) if line.strip())
    sent = [value for value in sent if value is not None]
    middle = len(sent) // 2
    expected = (sent[middle] if len(sent) % 2 else (sent[middle - 1] + sent[middle]) / 2) if sent else None
    lines = 0
    try:
        svg = ElementTree.parse(os.path.join(out, "plot.svg")).getroot()
        lines = len(svg.findall(".//{http://www.w3.org/2000/svg}polyline"))
    except (OSError, ElementTree.ParseError) as error:
        print(f"plot.svg: {error}")
    ok = (code == 0 and result.returncode == 0 and "Peers: 1" in report and median is not None
          and expected is not None and abs(float(median.group(1)) - expected) <= 0.051
          and float(median.group(1)) >= 10 and lines == 5)
    record(name, ok, f"share exit {code}, diagnose exit {result.returncode}, median sent "
                     f"{median.group(1) if median else None} fps (the file's: "
                     f"{None if expected is None else round(expected, 2)}), {lines} plot lines")
    if not ok:
        print(result.stdout[-2000:], result.stderr[-2000:], log[-1000:])


def diagnose_broken():
    name = "diagnose-broken"
    broken = os.path.join(WORK, f"{name}.jsonl")
    with open(broken, "w") as out:
        out.write('{"t": 1, "video": {"fpsSent": 30}}\n{"t": 2, "video": \n{"t": 3}\n')
    first = run("diagnose", broken, "--out", os.path.join(WORK, f"{name}.out"))
    missing = run("diagnose", os.path.join(WORK, "no-such-file.jsonl"))
    ok = (first.returncode == 1 and f"{broken} line 2: not JSON" in first.stderr
          and missing.returncode == 1 and "cannot read the file" in missing.stderr)
    record(name, ok, f"exits {first.returncode} and {missing.returncode}: {first.stderr.strip()!r}, {missing.stderr.strip()!r}")


def scenario_check():
    name = "scenario-check"
    files = sorted(glob.glob(os.path.join(ROOT, "Scenarios", "*.json")))
    good = run("scenario", "check", *files)
    broken = os.path.join(WORK, "wedge.json")
    with open(os.path.join(ROOT, "Scenarios", "wedge.json")) as source:
        text = source.read().replace('"target": "bea"', '"target": "zed"')
    with open(broken, "w") as out:
        out.write(text)
    bad = run("scenario", "check", broken)
    ok = (len(files) >= 10 and good.returncode == 0 and good.stdout.count("\nok ") + good.stdout.startswith("ok ") == len(files)
          and bad.returncode == 1 and f"{broken}: faults[0].target:" in bad.stdout)
    record(name, ok, f"{len(files)} files, check exit {good.returncode}; broken copy exit {bad.returncode}: "
                     f"{bad.stdout.strip()!r}")
    if not ok:
        print(good.stdout[-2000:], good.stderr[-2000:])


GATES = [("share-diagnose", share_diagnose), ("diagnose-broken", diagnose_broken), ("scenario-check", scenario_check)]


def main():
    chosen = choose("diagnose", [name for name, _ in GATES])
    run_gates(GATES, chosen)
    return finish()


if __name__ == "__main__":
    sys.exit(main())
