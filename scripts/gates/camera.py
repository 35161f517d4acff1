#!/usr/bin/env python3
"""Camera gates: the project's own `sharectl` against real V4L2 cameras — the kernel's vivid
driver with two webcams, in a QEMU guest (software emulation) that mounts this machine's root
read-only and runs the binary unmodified (scripts/v4l2vm/). One boot runs every act; each gate
judges its part of the guest's output and prints the director's words with their times.

  vivid-capture     `camera list` shows both cameras; the format chosen is the one the format
                    rule picks from `v4l2-ctl --list-formats-ext` (nearest 640 wide, then nearest
                    30 fps without going over); frames arrive at >= 60% of that rate.
  vivid-disconnect  vivid's Disconnect control on the camera in use: "Camera disconnected", and
                    frames from the other camera within 1 s of the control being set.
  vivid-unplug      the remembered camera's platform device unbound: "Camera disconnected" and the
                    director leaves it (vivid hangs both its cameras from that one device, so a
                    synthetic spare is what remains); bound again: "… is back; switching to it"
                    and frames from it, not from the other vivid camera.
  synthetic-drill   (no VM) `camera test` with scripted synthetic faults: a stall restarts the
                    same camera (5 s after its open at the earliest), then its next format, then
                    the spare.
  synthetic-unplug  (no VM) a refused format moves to the next; a die falls back to the spare
                    within 1 s; the camera coming back is switched back to within 1 s.
  share-camera      (no VM) `share --source synthetic --camera …` to the aiortc WHIP endpoint: two
                    video sections (screen, then camera) both decoded; the camera at <= 360 lines,
                    capped at 500 kbit/s in sharectl's figures and received at <= ~500 kbit/s; the
                    camera dies, the director switches to the spare (same track, one session) and
                    the camera goes on being decoded.
  share-camera-alone (no VM) `share --source none --camera …` for 12 s: the camera alone decoded
                    in one session through the same switch, at its full 640x480, or smaller only
                    where the share's status line says what held it back ("limited by
                    bandwidth" or "cpu": the rate starts at 300 kbit/s, and a quiet synthetic
                    camera sending 40 kbit/s may not have shown the link carries more).
  room-camera       (no VM) `share --room --camera synthetic:cam --share-for 7` with `watch` as the
                    viewer: Ana's camera decoded at <= 360 lines while her screen is shared, at
                    640x480 after the share stops (the call goes on), her figures saying capped
                    (500 kbit/s) and then not.
"""
import os
import re
import shutil
import subprocess
import sys
import time

from lib.paths import ROOT, SHARECTL, WORK, read_json
from lib.peers import last_session, start_aiortc
from lib.ports import wait_http
from lib.processes import stop
from lib.room import Participant, Server
from lib.stats import read_stats
from lib.suite import choose, finish, record, record_broken, run_gates

OUT = os.path.join(WORK, "camera-vm")

STEP = re.compile(r"^\[(-?[\d.]+)s mono ([\d.]+)\] (.*)$")
POKE = re.compile(r"^vividpoke: (\w+) (\S+) -> (.*), mono ([\d.]+) to ([\d.]+)$")

# The guest's acts, run chrooted in this machine's root (so paths are the same as here).
GUEST = r"""
cd {root}
export XDG_STATE_HOME=/run/state
S={sharectl}
# waitn FILE TEXT N: until FILE holds TEXT N times (a Swift binary read over 9p under emulation
# takes seconds to start, so every act waits for what it needs instead of sleeping blindly).
waitn() {{ i=0; while [ "$(grep -c "$2" "$1" 2>/dev/null)" -lt "$3" ]; do sleep 0.2; i=$((i+1)); [ $i -gt 400 ] && return 1; done; return 0; }}
$S camera list > /mnt/list.txt 2>&1
v4l2-ctl -d /dev/video0 --list-formats-ext > /mnt/formats.txt 2>&1
# Act A: the camera in use (vivid.0, asked for by its node) dies by vivid's Disconnect control.
$S camera test --device /dev/video0 --duration 300 > /mnt/a.txt 2>&1 &
A=$!
waitn /mnt/a.txt "Using vivid (vivid-000)" 1 && sleep 3
/run/vividpoke disconnect /dev/video0 > /mnt/a-poke.txt 2>&1
waitn /mnt/a.txt "Using vivid (vivid-001)" 1; sleep 3
kill $A; wait
# Fresh vivid cameras (the disconnected one stays dead). Act B: the remembered camera (vivid-000,
# from act A) is unplugged and plugged back. vivid makes all its cameras from one platform device,
# so unbinding it unplugs both: a synthetic camera is what remains meanwhile.
/run/vividpoke unbind vivid.0 > /mnt/reset.txt 2>&1; /run/vividpoke bind vivid.0 >> /mnt/reset.txt 2>&1
$S camera test --device "auto;synthetic:spare" --duration 300 > /mnt/b.txt 2>&1 &
B=$!
waitn /mnt/b.txt "Using vivid (vivid-000)" 1 && sleep 3
/run/vividpoke unbind vivid.0 > /mnt/b-poke.txt 2>&1
waitn /mnt/b.txt "Using Synthetic spare" 1; sleep 3
/run/vividpoke bind vivid.0 >> /mnt/b-poke.txt 2>&1
waitn /mnt/b.txt "Using vivid (vivid-000)" 2; sleep 2
kill $B; wait
echo finished > /mnt/finished
"""


def read(name):
    try:
        with open(os.path.join(OUT, name)) as f:
            return f.read()
    except OSError:
        return ""


def steps(text):
    """(mono seconds, words) of every line sharectl stamped."""
    found = []
    for line in text.splitlines():
        m = STEP.match(line)
        if m:
            found.append((float(m.group(2)), m.group(3)))
    return found


def pokes(text):
    return [(m.group(1), m.group(2), m.group(3), float(m.group(4)), float(m.group(5)))
            for m in map(POKE.match, text.splitlines()) if m]


def words_between(found, start, end):
    return [f"{t:.3f} {w}" for t, w in found if start <= t <= end and "frames in the last second" not in w
            and not w.startswith("format:")]


def show(label, found):
    print(f"  {label}:", flush=True)
    for t, w in found:
        if "frames in the last second" in w:
            continue
        print(f"    {t:9.3f}  {w}", flush=True)


def rule_choice(formats_text):
    """The format rule applied to v4l2-ctl's listing: (pixel, width, height, fps)."""
    options, pixel, size = {}, None, None
    for line in formats_text.splitlines():
        m = re.search(r"\[\d+\]: '(\w+)'", line)
        if m:
            pixel = m.group(1)
            continue
        m = re.search(r"Size: Discrete (\d+)x(\d+)", line)
        if m:
            size = (int(m.group(1)), int(m.group(2)))
            continue
        m = re.search(r"Interval: Discrete [\d.]+s \(([\d.]+) fps\)", line)
        if m and pixel in ("YUYV", "NV12", "MJPG") and size:
            options.setdefault((pixel, size), []).append(float(m.group(1)))
    order = ["YUYV", "NV12", "MJPG"]
    candidates = []
    for (pixel, (w, h)), rates in options.items():
        under = [r for r in rates if r <= 30.001]
        rate = max(under) if under else min(rates)
        over = rate > 30.001
        candidates.append(((abs(w - 640), over, rate if over else -rate, order.index(pixel), abs(h - 480)), (pixel, w, h, rate)))
    candidates.sort()
    return candidates[0][1] if candidates else None


def boot():
    shutil.rmtree(OUT, ignore_errors=True)
    os.makedirs(OUT)
    with open(os.path.join(OUT, "guest.sh"), "w") as f:
        f.write(GUEST.format(root=ROOT, sharectl=SHARECTL))
    prepared = subprocess.run([os.path.join(ROOT, "scripts/v4l2vm/prepare.sh")], capture_output=True, text=True)
    if prepared.returncode != 0:
        return f"prepare.sh failed: {prepared.stderr.strip()[-400:]}"
    with open(os.path.join(OUT, "console.txt"), "w") as console:
        subprocess.run([os.path.join(ROOT, "scripts/v4l2vm/run-vm.sh"), OUT], stdout=console, stderr=subprocess.STDOUT,
                       env=dict(os.environ, VM_TIMEOUT="240"))
    if not os.path.exists(os.path.join(OUT, "finished")):
        return "the guest did not finish its acts (see " + os.path.join(OUT, "console.txt") + ")"
    return None


def capture_gate(trouble):
    name = "vivid-capture"
    if trouble:
        return record(name, False, trouble)
    listing, a = read("list.txt"), read("a.txt")
    ids = re.findall(r"id: (v4l2:\S+)", listing)
    chosen = re.search(r"^\s+\* (\d+)×(\d+) (\w+) at ([\d.]+) fps", listing, re.M)
    expected = rule_choice(read("formats.txt"))
    used = re.search(r"format: .*\(/dev/video0\) (\d+)×(\d+) (\w+) at ([\d.]+) fps", a)
    found = steps(a)
    poke = pokes(read("a-poke.txt"))
    cut = poke[0][3] if poke else float("inf")
    counts = [int(re.match(r"(\d+) frames", w).group(1)) for t, w in found if "frames in the last second" in w and t < cut]
    steady = counts[1:] or counts
    rate = sum(steady) / len(steady) if steady else 0.0
    ok = (len(ids) == 2 and chosen is not None and expected is not None and used is not None
          and (chosen.group(3), int(chosen.group(1)), int(chosen.group(2))) == expected[:3]
          and (used.group(3), int(used.group(1)), int(used.group(2))) == expected[:3]
          and abs(float(used.group(4)) - expected[3]) < 0.01 and rate >= 0.6 * expected[3])
    show("act A (camera test --device /dev/video0)", found)
    record(name, ok, f"cameras {ids}; rule picks {expected}; listed "
           f"{chosen.groups() if chosen else None}; captured at {used.groups() if used else None}; "
           f"{rate:.1f} frames/s received (per second: {counts})")


def disconnect_gate(trouble):
    name = "vivid-disconnect"
    if trouble:
        return record(name, False, trouble)
    a = read("a.txt")
    found, poke = steps(a), pokes(read("a-poke.txt"))
    if not poke or poke[0][2] != "ok":
        return record(name, False, f"the Disconnect control was not set: {poke}")
    before, after = poke[0][3], poke[0][4]
    noticed = next((t for t, w in found if t >= before and w == "Camera disconnected"), None)
    other = next((t for t, w in found if t >= before and w.startswith("Using vivid (vivid-001)")), None)
    later = [w for t, w in found if t > (other or 1e9) + 1 and "frames in the last second from vivid (vivid-001)" in w]
    flowing = [int(w.split()[0]) for w in later]
    gap = (other - before) if other else None
    ok = noticed is not None and gap is not None and gap <= 1.0 and flowing and min(flowing) > 0
    print("  words after the control: " + "; ".join(words_between(found, before, before + 3)), flush=True)
    record(name, ok, f"control set at {before:.3f}–{after:.3f}; noticed at "
           f"{noticed if noticed is None else f'{noticed:.3f}'}; first frame from vivid-001 "
           f"{'never' if gap is None else f'{gap * 1000:.0f} ms after the control'} (limit 1000 ms); "
           f"frames each second after: {flowing}")


def unplug_gate(trouble):
    name = "vivid-unplug"
    if trouble:
        return record(name, False, trouble)
    b = read("b.txt")
    found, poke = steps(b), pokes(read("b-poke.txt"))
    show("act B (camera test, the remembered camera unplugged and back)", found)
    unbind = next((p for p in poke if p[0] == "unbind"), None)
    bind = next((p for p in poke if p[0] == "bind"), None)
    if not unbind or not bind or unbind[2] != "ok" or bind[2] != "ok":
        return record(name, False, f"unbind/bind did not happen: {poke}")
    started = any(w.startswith("Using vivid (vivid-000)") for t, w in found if t < unbind[3])
    left = next((t for t, w in found if unbind[3] <= t < bind[3] and w.startswith("Using Synthetic spare")), None)
    said_gone = any(w == "Camera disconnected" for t, w in found if unbind[3] <= t < bind[3])
    back_words = next((t for t, w in found if t >= bind[3] and w == "vivid (vivid-000) is back; switching to it"), None)
    returned = next((t for t, w in found if t >= bind[3] and w.startswith("Using vivid (vivid-000)")), None)
    ok = started and left is not None and said_gone and back_words is not None and returned is not None
    record(name, ok, f"started on vivid-000: {started}; unbind at {unbind[3]:.3f} → frames from the spare "
           f"{'never' if left is None else f'{(left - unbind[3]) * 1000:.0f} ms later'}; bind at {bind[3]:.3f} → "
           f"'is back' {'never' if back_words is None else f'{(back_words - bind[3]) * 1000:.0f} ms later'}, frames from "
           f"vivid-000 {'never' if returned is None else f'{(returned - bind[3]) * 1000:.0f} ms later'}")


def synthetic_gate():
    """Scripted faults on synthetic cameras, timed: no VM needed."""
    name = "synthetic-drill"
    env = dict(os.environ, XDG_STATE_HOME=os.path.join(WORK, "camera-state"))
    shutil.rmtree(env["XDG_STATE_HOME"], ignore_errors=True)
    spec = "synthetic:front?stall=2,die=20;synthetic:spare"
    run = subprocess.run([SHARECTL, "camera", "test", "--device", spec, "--duration", "17"], capture_output=True,
                         text=True, env=env, timeout=60)
    found = steps(run.stdout)
    show(f"camera test --device '{spec}'", found)
    said = [w for _, w in found if "frames in the last second" not in w and not w.startswith("format:")]
    expected = ["Starting camera…", "Using Synthetic front (640×480 YUYV at 30 fps)",
                "No frames from Synthetic front for 3 s; restarting it", "Starting camera…",
                "No picture from Synthetic front within 3 s after a restart; trying 320×240 YUYV at 30 fps",
                "Starting camera…", "No picture from Synthetic front within 3 s; switching to Synthetic spare",
                "Starting camera…", "Using Synthetic spare (640×480 YUYV at 30 fps)"]
    times = {w: t for t, w in reversed(found)}
    start = found[0][0] if found else 0
    timeline = ", ".join(f"{w.split(';')[0]} at {times[w] - start:.1f} s" for w in expected[2::2] if w in times)
    record(name, run.returncode == 0 and said == expected,
           f"exit {run.returncode}; steps {'as expected' if said == expected else f'were {said}'}; {timeline}")


def synthetic_unplug_gate():
    name = "synthetic-unplug"
    env = dict(os.environ, XDG_STATE_HOME=os.path.join(WORK, "camera-state"))
    shutil.rmtree(env["XDG_STATE_HOME"], ignore_errors=True)
    spec = "synthetic:front?refuse=640x480,die=4,back=8;synthetic:spare"
    run = subprocess.run([SHARECTL, "camera", "test", "--device", spec, "--duration", "11"], capture_output=True,
                         text=True, env=env, timeout=60)
    elapsed = []
    for line in run.stdout.splitlines():
        m = STEP.match(line)
        if m and "frames in the last second" not in m.group(3) and not m.group(3).startswith("format:"):
            elapsed.append((float(m.group(1)), m.group(3)))
    print(f"  camera test --device '{spec}':", flush=True)
    for t, w in elapsed:
        print(f"    {t:6.2f} s  {w}", flush=True)
    said = [w for _, w in elapsed]
    expected = ["Starting camera…",
                "Synthetic front refused 640×480 YUYV at 30 fps (its script refuses 640×480); trying 320×240 YUYV at 30 fps",
                "Using Synthetic front (320×240 YUYV at 30 fps)",
                "Camera disconnected", "Switching to Synthetic spare", "Starting camera…",
                "Using Synthetic spare (640×480 YUYV at 30 fps)",
                "Synthetic front is back; switching to it", "Starting camera…",
                "Synthetic front refused 640×480 YUYV at 30 fps (its script refuses 640×480); trying 320×240 YUYV at 30 fps",
                "Using Synthetic front (320×240 YUYV at 30 fps)"]
    spare = next((t for t, w in elapsed if w.startswith("Using Synthetic spare")), None)
    back = [t for t, w in elapsed if w.startswith("Using Synthetic front")]
    to_spare = spare - 4.0 if spare is not None else None
    to_front = back[1] - 8.0 if len(back) > 1 else None
    ok = (run.returncode == 0 and said == expected and to_spare is not None and to_spare <= 1.0
          and to_front is not None and to_front <= 1.0)
    record(name, ok, f"exit {run.returncode}; steps {'as expected' if said == expected else f'were {said}'}; "
           f"died at 4.0 s → spare's first frame {'never' if to_spare is None else f'{to_spare * 1000:.0f} ms later'}; "
           f"back at 8.0 s → its first frame {'never' if to_front is None else f'{to_front * 1000:.0f} ms later'} "
           f"(limits 1000 ms)")


def _camera_env():
    env = dict(os.environ, XDG_STATE_HOME=os.path.join(WORK, "camera-state"))
    shutil.rmtree(env["XDG_STATE_HOME"], ignore_errors=True)
    return env


def _jsonl(path, kind):
    """The stats lines of `path` (of `kind`, see lib.stats), broken ones left out; [] if missing."""
    try:
        return read_stats(path, kind, skip_broken=True)
    except OSError:
        return []


def share_camera_gate():
    """A camera beside the screen over WHIP: two video sections, both decoded by aiortc, the
    camera capped while the screen goes out, and a director switch on the same track."""
    name = "share-camera"
    env = _camera_env()
    endpoint, port, stats_path = start_aiortc(name)
    try:
        if not wait_http(port):
            return record(name, False, "the aiortc endpoint did not start")
        spec = "synthetic:cam?die=4;synthetic:spare"
        share_stats = os.path.join(WORK, f"{name}.share.jsonl")
        log_path = os.path.join(WORK, f"{name}.log")
        process = subprocess.Popen([SHARECTL, "share", "--source", "synthetic", "--size", "1280x720", "--fps", "15",
                                    "--camera", spec, "--whip", f"http://127.0.0.1:{port}/whip", "--duration", "11",
                                    "--no-audio", "--stats-json", share_stats],
                                   stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, env=env)
        said, at_switch = [], None
        for line in process.stdout:  # as it happens: the camera's view at aiortc when the spare takes over
            said.append(line.rstrip("\n"))
            if line.startswith("Camera: Using Synthetic spare") and at_switch is None:
                videos = last_session(stats_path).get("videos") or []
                at_switch = (videos[1] if len(videos) > 1 else {}).get("framesDecoded", 0)
        code = process.wait(timeout=60)
        with open(log_path, "w") as f:
            f.write("\n".join(said) + "\n")
        time.sleep(1.0)
        sessions = ((read_json(stats_path) or {}).get("sessions") or [])
        s = sessions[-1] if sessions else {}
        videos = s.get("videos") or []
        screen = videos[0] if videos else {}
        camera = videos[1] if len(videos) > 1 else {}
        camera_lines = [int(size.split("x")[1]) for size in (camera.get("sizes") or {})]
        # What aiortc received each second (after the first, which holds the connection's start).
        received = (camera.get("kbpsHistory") or [])[1:]
        mean_received = sum(received) / len(received) if received else 0
        lines = [l.get("camera") or {} for l in _jsonl(share_stats, "share")]
        capped = [c for c in lines if c.get("framesSent")]
        sent_kbps = [c.get("bitrateKbps", 0) for c in capped[1:]]
        devices = []
        for c in capped:
            if c.get("device") and (not devices or devices[-1] != c["device"]):
                devices.append(c["device"])
        # The director's words (not the camera's status line, "Camera: 480×360 at 30 fps, …").
        steps = [l[len("Camera: "):] for l in said if l.startswith("Camera: ") and not re.match(r"Camera: \d", l)]
        checks = {
            "exit 0": code == 0,
            "one session, deleted": len(sessions) == 1 and s.get("deleted") is True,
            "two video sections (screen, camera)": [v.get("trackId") for v in videos] == ["screen", "camera"],
            "screen decoded": screen.get("framesDecoded", 0) >= 30,
            "camera decoded": camera.get("framesDecoded", 0) >= 60,
            # The 640×480 synthetic camera capped: 480×360 at most (less when the link says so).
            "camera <= 360 lines": bool(camera_lines) and max(camera_lines) <= 360
                                   and max((camera.get("sizes") or {"0x0": 0}), key=lambda k: int(k.split("x")[1])) == "480x360",
            "capped in sharectl's figures": bool(capped) and all(c.get("capped") and c.get("maxKbps") == 500
                                                                and c.get("targetKbps", 999) <= 500
                                                                and c.get("height", 999) <= 360 for c in capped),
            "camera <= ~500 kbit/s": bool(received) and mean_received <= 500 and max(received) <= 600
                                     and bool(sent_kbps) and max(sent_kbps) <= 600,
            "switched to the spare": "Switching to Synthetic spare" in steps and devices == ["Synthetic cam", "Synthetic spare"],
            "camera decoded after the switch": at_switch is not None and camera.get("framesDecoded", 0) >= at_switch + 30,
        }
        ok = all(checks.values())
        if not ok:
            print("\n".join(said[-30:]), flush=True)
        failed = [k for k, v in checks.items() if not v]
        record(name, ok, f"exit {code}; {len(sessions)} session(s); aiortc decoded the screen {screen.get('framesDecoded')} "
               f"frames {screen.get('sizes')} and the camera {camera.get('framesDecoded')} frames {camera.get('sizes')}; "
               f"camera received {mean_received:.0f} kbit/s on average (most in a second {max(received or [0])}), "
               f"sent at most {max(sent_kbps or [0])} kbit/s a second under a {capped[-1].get('maxKbps') if capped else '?'} "
               f"kbit/s cap; cameras used {devices} through the steps {steps}; camera frames decoded "
               f"{at_switch} when the spare took over, {camera.get('framesDecoded')} at the end"
               + (f"; FAILED: {failed}" if failed else ""))
    finally:
        stop(endpoint)


def share_camera_alone_gate():
    """`share --source none --camera …`: the camera alone, at its own size, through a switch."""
    name = "share-camera-alone"
    env = _camera_env()
    endpoint, port, stats_path = start_aiortc(name)
    try:
        if not wait_http(port):
            return record(name, False, "the aiortc endpoint did not start")
        spec = "synthetic:cam?die=3;synthetic:spare"
        run = subprocess.run([SHARECTL, "share", "--source", "none", "--camera", spec, "--whip",
                              f"http://127.0.0.1:{port}/whip", "--duration", "12", "--no-audio"],
                             capture_output=True, text=True, timeout=90, env=env)
        with open(os.path.join(WORK, f"{name}.log"), "w") as f:
            f.write(run.stdout + run.stderr)
        time.sleep(1.0)
        sessions = ((read_json(stats_path) or {}).get("sessions") or [])
        s = sessions[-1] if sessions else {}
        sizes = (s.get("video") or {}).get("sizes") or {}
        steps = [l[len("Camera: "):] for l in run.stdout.splitlines()
                 if l.startswith("Camera: ") and not re.match(r"Camera: \d", l)]
        explained = any("limited by" in l for l in run.stdout.splitlines() if re.match(r"Camera: \d", l))
        ok = (run.returncode == 0 and (sizes.get("640x480", 0) > 0 or (sizes and explained)) and len(sessions) == 1
              and len(s.get("videos") or []) == 1 and "Switching to Synthetic spare" in steps and s.get("deleted") is True)
        if not ok:
            print(run.stdout[-1500:] + run.stderr[-1500:], flush=True)
        record(name, ok, f"exit {run.returncode}, aiortc decoded {sizes} (the share said what held it back: "
               f"{explained}) on {len(s.get('videos') or [])} video "
               f"section(s) in {len(sessions)} session(s) through the steps {steps}")
    finally:
        stop(endpoint)


def room_camera_gate():
    """`share --room --camera synthetic:…` beside the screen, `watch` as the viewer: the camera at
    most 360 lines while the screen is shared, its full size once the share stops (--share-for)."""
    name = "room-camera"
    env = _camera_env()
    server = Server("cam", state=False, log=os.path.join(WORK, f"{name}.serve.log"))
    sharer = viewer = None
    try:
        try:
            url = server.start()
        except RuntimeError as error:
            return record(name, False, str(error))
        sharer = Participant("Ana", ["share", "--room", url, "--size", "960x540", "--fps", "15", "--audio", "none",
                                     "--camera", "synthetic:cam", "--share-for", "7", "--duration", "18"],
                             os.path.join(WORK, f"{name}.ana.jsonl"), os.path.join(WORK, f"{name}.ana.log"), env=env)
        viewer = Participant("Vi", ["watch", url, "--duration", "19"], os.path.join(WORK, f"{name}.viewer.jsonl"),
                             os.path.join(WORK, f"{name}.viewer.log"))
        codes = (sharer.process.wait(timeout=90), viewer.process.wait(timeout=90))
        views = []  # (Ana sharing, camera view) each second at the viewer
        for line in viewer.lines(skip_broken=True):
            for peer in line.get("peers") or []:
                if peer.get("name") == "Ana" and peer.get("camera"):
                    views.append((peer.get("sharing"), peer["camera"]))
        sent = []
        for line in sharer.lines(skip_broken=True):
            for peer in line.get("peers") or []:
                if peer.get("name") == "Vi" and peer.get("cameraSent"):
                    sent.append((line.get("sharing"), peer["cameraSent"]))
        shared = [v for on, v in views if on and v.get("framesDecoded", 0) > 0]
        after = [v for on, v in views if not on]
        # The seconds after the stop, once the first full-size picture arrived.
        full = after[next((i for i, v in enumerate(after) if v.get("height") == 480), len(after)):]
        decoded_after = (full[-1].get("framesDecoded", 0) - full[0].get("framesDecoded", 0)) if len(full) > 1 else 0
        sent_on = [c for on, c in sent if on]
        sent_off = [c for on, c in sent if not on]
        checks = {
            "exits 0": codes == (0, 0),
            "capped while shared": len(shared) >= 3 and all(0 < v.get("height", 0) <= 360 for v in shared),
            "cap in Ana's figures": bool(sent_on) and all(c.get("capped") and c.get("maxKbps") == 500 for c in sent_on),
            "full size after the stop": sum(v.get("width") == 640 and v.get("height") == 480 for v in full) >= 2
                                        and decoded_after >= 30,
            "defaults back in Ana's figures": bool(sent_off) and sent_off[-1].get("capped") is False
                                              and sent_off[-1].get("maxKbps", 0) > 500,
        }
        ok = all(checks.values())
        failed = [k for k, v in checks.items() if not v]
        sizes = lambda vs: sorted({f"{v.get('width')}x{v.get('height')}" for v in vs})
        record(name, ok, f"exits {codes}; while shared the viewer decoded Ana's camera at {sizes(shared)} "
               f"({len(shared)} s, cap {sent_on[-1].get('maxKbps') if sent_on else '?'} kbit/s); after the stop at "
               f"{sizes(after)} ({decoded_after} frames in {max(0, len(full) - 1)} s at full size, limit now "
               f"{sent_off[-1].get('maxKbps') if sent_off else '?'} kbit/s)" + (f"; FAILED: {failed}" if failed else ""))
    finally:
        for member in (sharer, viewer):
            if member and member.process.poll() is None:
                member.process.kill()
        server.stop(grace=10)


VM_GATES = [("vivid-capture", capture_gate), ("vivid-disconnect", disconnect_gate), ("vivid-unplug", unplug_gate)]
GATES = [("synthetic-drill", synthetic_gate), ("synthetic-unplug", synthetic_unplug_gate),
         ("share-camera", share_camera_gate), ("share-camera-alone", share_camera_alone_gate),
         ("room-camera", room_camera_gate)]


def main():
    chosen = choose("camera", [name for name, _ in VM_GATES + GATES])
    wanted_vm = [(n, g) for n, g in VM_GATES if n in chosen]
    if wanted_vm:
        try:
            trouble = boot()
        except Exception as error:
            trouble = f"the VM could not run: {error!r}"
        for name, gate in wanted_vm:
            try:
                gate(trouble)
            except Exception as error:
                record_broken(name, error)
    run_gates(GATES, chosen)
    return finish()


if __name__ == "__main__":
    sys.exit(main())
