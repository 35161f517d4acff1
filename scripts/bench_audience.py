#!/usr/bin/env python3
"""`make bench`'s audience table: what one sharer costs as its audience grows (figures, not a gate).

One synthetic 1920x1080 30 fps screen (`share --size 1920x1080 --fps 30 --bitrate 2000 --no-audio`,
H.264) watched by 1, 2, 4 and 8 built-in viewers (`sharectl watch`), in four modes:
  mesh   a `sharectl serve` room: the sharer (`share --room --no-simulcast`) has one connection and
         one encoder per viewer; viewers `watch URL`.
  shared the same room with `share --room` (its default, --simulcast): one connection per viewer, three layer
         encoders (full, 1/2, 1/4) shared by all of them, each viewer sent the layer its estimate
         carries (a layer no one is sent does not run).
  janus  a Janus VideoRoom (Debian's janus, lib/janus.py, on j0's 127.0.0.2): the sharer publishes
         once (`share --janus … --no-simulcast --ice-interface j0`), Janus forwards to each
         `watch --janus …`.
  simulcast  the same with three layers (full, 1/2, 1/4: three encoders from one capture and one
         conversion); each viewer chooses its layer.
Each cell starts afresh (server, sharer, viewers), waits until every viewer decodes (at most 30 s),
lets it settle --settle (5) s, then measures --seconds (10) s:
  sharer CPU   utime+stime from /proc/PID/stat over the window, in cores (1.00 = one core busy);
               ×1: against the same mode with its smallest audience (1 viewer by default)
  RSS          the sharer's peak resident set, VmHWM from /proc/PID/status, at the window's end
  uplink       the sharer's own --stats-json: the sum over its peers of video.bitrateKbps (mesh),
               video.bitrateKbps (janus; the JSON also has connection.bytesSent over the window)
  encoders     the video streams the sharer encodes (one per peer in the mesh; the layers in use in
               shared) and, in brackets, the
               encoders it made over the run (encodersMade summed: a new one for each change of size)
  sent         the sharer's picture at the window's end and its encoded fps (the smallest over peers),
               and what limits it: the balanced policy gives up size and rate when the machine or the
               link cannot carry everything, so a cost that grows slowly may be a picture that shrank
  viewer fps   each viewer's frames decoded over the window (its --stats-json), min and median
  server CPU   `sharectl serve` (mesh: signalling only) or janus (which forwards every packet)
  ours / busy  all the processes of the cell, and the whole machine (/proc/stat, every process,
               ours or not), as a share of all cores: busy near 100 % means the machine was
               saturated, busy well above ours means something else was running too
The sharer's pace in the mesh is the slowest of its encoders, and 8 viewers decoding 1080p on a
small machine compete with it for the same cores: the figures say how it went here, nothing more.

Inside a network namespace with only loopback (it enters one itself, as scripts/gates/run.sh does):
    python3 scripts/bench_audience.py [--viewers 1,2,4,8] [--seconds 10] [--settle 5]
                                      [--modes mesh,shared,janus,simulcast] [--json PATH]
SHARECTL names the binary (default .build/release/sharectl); logs and stats files go to
GATE_WORK (default /tmp/sharectl-bench-audience), emptied first.
"""
import os
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
os.environ.setdefault("SHARECTL", os.path.join(ROOT, ".build/release/sharectl"))
os.environ.setdefault("GATE_WORK", "/tmp/sharectl-bench-audience")
if os.environ.get("SHARECTL_IN_NETNS") != "1":
    os.execvp("unshare", ["unshare", "-n", "env", "SHARECTL_IN_NETNS=1", sys.executable, os.path.abspath(__file__),
                          *sys.argv[1:]])
subprocess.run(["ip", "link", "set", "lo", "up"], check=True)
sys.path.insert(0, os.path.join(ROOT, "scripts", "gates"))

import argparse  # noqa: E402
import json  # noqa: E402
import shutil  # noqa: E402
import signal  # noqa: E402
import statistics  # noqa: E402
import time  # noqa: E402

from lib.janus import Janus  # noqa: E402
from lib.paths import SHARECTL, WORK  # noqa: E402
from lib.processes import start, stop  # noqa: E402
from lib.room import Server  # noqa: E402
from lib.waits import wait_for  # noqa: E402

MODES = ("mesh", "shared", "janus", "simulcast")
ROOM_MODES = ("mesh", "shared")
PIN = "4711"
SHARER = "sharer"
TICK = os.sysconf("SC_CLK_TCK")
CORES = os.cpu_count() or 1


class Interrupted(Exception):
    """SIGTERM: ended like Ctrl-C, through every `finally`."""


def on_term(signum, frame):
    raise Interrupted()


def cpu_seconds(pid):
    """utime + stime of the process (all its threads) in seconds; None once it has gone."""
    try:
        with open(f"/proc/{pid}/stat") as f:
            fields = f.read().rsplit(")", 1)[1].split()
    except OSError:
        return None
    return (int(fields[11]) + int(fields[12])) / TICK  # fields 14 and 15 of stat(5), after "pid (comm)"


def peak_rss_mib(pid):
    try:
        with open(f"/proc/{pid}/status") as f:
            for line in f:
                if line.startswith("VmHWM:"):
                    return int(line.split()[1]) / 1024
    except OSError:
        pass
    return None


def machine_ticks():
    """(busy, total) jiffies of all cores: busy is everything but idle and iowait."""
    with open("/proc/stat") as f:
        values = [int(v) for v in f.readline().split()[1:]]
    total = sum(values[:8])  # guest time is counted in user already
    return total - values[3] - values[4], total


def stats_lines(path):
    """Every complete JSON line of a --stats-json file ([] while it is missing); a last line still
    being written is left out."""
    lines = []
    try:
        with open(path) as f:
            for text in f:
                try:
                    lines.append(json.loads(text))
                except ValueError:
                    break
    except OSError:
        pass
    return lines


def last_line(path):
    lines = stats_lines(path)
    return lines[-1] if lines else None


class Cell:
    """One mode with one audience size: its processes, started by `up()`, ended by `down()`."""

    def __init__(self, mode, viewers, bitrate, budget):
        self.mode, self.viewers, self.bitrate = mode, viewers, bitrate
        self.name = f"audience-{mode}-{viewers}"
        self.budget = budget  # --duration for every sharectl: they end on their own if we cannot end them
        self.server = None  # Server (mesh) or Janus
        self.room = None
        self.sharer = None
        self.sharer_stats = os.path.join(WORK, f"{self.name}.share.jsonl")
        self.watchers = []  # (process, stats path)

    def common(self):
        return ["--size", "1920x1080", "--fps", "30", "--bitrate", str(self.bitrate), "--no-audio",
                "--duration", str(self.budget), "--stats-json", self.sharer_stats]

    def up(self):
        if self.mode in ROOM_MODES:
            self.server = Server(self.name, state=False, log=os.path.join(WORK, f"{self.name}.serve.log"))
            url = self.server.start()
            env = {**os.environ, "SHARECTL_ROOM_URL": url}  # not on the command line (share warns)
            layers = ["--simulcast"] if self.mode == "shared" else ["--no-simulcast"]
            self.sharer = start([SHARECTL, "share", "--source", "synthetic", "--name", SHARER, "--audio-output", "none",
                                 *layers, *self.common()], os.path.join(WORK, f"{self.name}.share.log"), env=env)
            for i in range(1, self.viewers + 1):
                stats = os.path.join(WORK, f"{self.name}.v{i}.jsonl")
                process = start([SHARECTL, "watch", "--name", f"v{i}", "--audio-output", "none", "--no-audio",
                                 "--duration", str(self.budget), "--stats-json", stats],
                                os.path.join(WORK, f"{self.name}.v{i}.log"), env=env)
                self.watchers.append((process, stats))
            return
        self.server = Janus(self.name)
        if not self.server.start():
            raise RuntimeError(f"janus did not start (see {self.server.log_path})")
        self.room = self.server.create_room(pin=PIN, publishers=1)
        janus = ["--janus", self.server.ws_url, "--janus-room", str(self.room), "--pin", PIN, "--ice-interface", "j0"]
        # janus: one layer; simulcast (the default into Janus): three layers, three encoders fed
        # from one capture and one conversion, and the viewers take the full layer.
        layers = [] if self.mode == "simulcast" else ["--no-simulcast"]
        self.sharer = start([SHARECTL, "share", "--source", "synthetic", *janus, "--display", SHARER, *layers,
                             *self.common()],
                            os.path.join(WORK, f"{self.name}.share.log"))
        if not wait_for(lambda: self.sharer.poll() is not None or self.server.publishers(self.room, PIN), 20):
            raise RuntimeError("the sharer did not become a publisher of the Janus room in 20 s")
        for i in range(1, self.viewers + 1):
            stats = os.path.join(WORK, f"{self.name}.v{i}.jsonl")
            process = start([SHARECTL, "watch", *janus, "--publisher", SHARER, "--audio-output", "none",
                             "--duration", str(self.budget), "--stats-json", stats],
                            os.path.join(WORK, f"{self.name}.v{i}.log"))
            self.watchers.append((process, stats))

    def view(self, line):
        """What a viewer's stats line says of the sharer's screen ({} before it does)."""
        if not line:
            return {}
        if self.mode not in ROOM_MODES:
            return line.get("video") or {}
        for peer in line.get("peers") or []:
            if peer.get("name") == SHARER:
                return peer.get("screen") or {}
        return {}

    def decoding(self):
        """How many viewers have decoded a frame of the screen."""
        return sum(1 for _, stats in self.watchers if self.view(last_line(stats)).get("framesDecoded", 0) > 0)

    def server_pid(self):
        return self.server.process.pid if self.server and self.server.process else None

    def pids(self):
        return [p for p in [self.sharer.pid, self.server_pid(), *(w.pid for w, _ in self.watchers)] if p]

    def down(self):
        """Everything ended: the viewers and the sharer with SIGTERM (all first, then waited for,
        SIGKILL after 5 s), then the server (Janus with SIGINT)."""
        processes = [w for w, _ in self.watchers] + ([self.sharer] if self.sharer else [])
        for process in processes:
            if process.poll() is None:
                try:
                    os.killpg(process.pid, signal.SIGTERM)
                except ProcessLookupError:
                    pass
        deadline = time.time() + 5
        for process in processes:
            try:
                process.wait(timeout=max(0.1, deadline - time.time()))
            except subprocess.TimeoutExpired:
                stop(process, grace=1)  # SIGTERM again, then SIGKILL
        if self.server:
            self.server.stop()


def snapshot(cell):
    return dict(wall=time.monotonic(), machine=machine_ticks(), cpu={pid: cpu_seconds(pid) for pid in cell.pids()},
                sharer=last_line(cell.sharer_stats), viewers=[last_line(stats) for _, stats in cell.watchers])


def delta_cpu(before, after, pid):
    a, b = before["cpu"].get(pid), after["cpu"].get(pid)
    return None if a is None or b is None else b - a


def sharer_figures(cell, t0, t1):
    """From the sharer's stats lines with t0 < t <= t1: uplink (video kbit/s), the wire rate where
    there is one (janus: connection.bytesSent), encoders made, the picture sent, what limits it."""
    lines = [line for line in stats_lines(cell.sharer_stats) if t0 < line.get("t", 0) <= t1]
    if not lines:
        return {}
    last = lines[-1]
    if cell.mode in ROOM_MODES:
        def videos(line):
            return [p["video"] for p in line.get("peers") or [] if p.get("video")]
        kbps = statistics.mean(sum(v.get("bitrateKbps", 0) for v in videos(line)) for line in lines)
        sent = videos(last)
        per_peer = [dict(peer=p.get("name"), width=p["video"].get("width"), height=p["video"].get("height"),
                         fps=p["video"].get("fps"), kbps=p["video"].get("bitrateKbps"),
                         framesEncoded=p["video"].get("framesEncoded"), encodersMade=p["video"].get("encodersMade"),
                         encoder=p["video"].get("encoder"), limitedBy=p["video"].get("limitedBy"),
                         layer=p["video"].get("layer"))
                    for p in last.get("peers") or [] if p.get("video")]
        wire = None
    else:
        video = last.get("video") or {}
        kbps = statistics.mean((line.get("video") or {}).get("bitrateKbps", 0) for line in lines)
        sent = [dict(video, fps=video.get("fpsEncoded"))] if video else []
        per_peer = None
        first = lines[0] if len(lines) > 1 else None
        wire = None
        if first and (first.get("connection") or {}).get("bytesSent") is not None:
            wire = ((last["connection"]["bytesSent"] - first["connection"]["bytesSent"]) * 8 / 1000
                    / (last["t"] - first["t"]))
    smallest = min(sent, key=lambda v: (v.get("width") or 0, v.get("fps") or 0), default={})
    limits = sorted({str(v.get("limitedBy")) for v in sent if v.get("limitedBy") not in (None, "", "none")})
    streams, made = len(sent), sum(v.get("encodersMade") or 0 for v in sent)
    if cell.mode == "shared":  # peers on one layer share its encoder: count each layer once
        by_layer = {}
        for v in sent:
            by_layer[v.get("layer")] = max(by_layer.get(v.get("layer"), 0), v.get("encodersMade") or 0)
        streams, made = len(by_layer), sum(by_layer.values())
    return dict(uplinkKbps=kbps, wireKbps=wire, streams=streams, encodersMade=made,
                encoder=",".join(sorted({str(v.get("encoder")) for v in sent})),
                sentWidth=smallest.get("width"), sentHeight=smallest.get("height"), sentFps=smallest.get("fps"),
                limitedBy=",".join(limits) or "none", perPeer=per_peer)


def viewer_fps(cell, before, after):
    """Each viewer's frames decoded over the window, per second of its own clock (0 when it decoded
    nothing in it or had written no line yet)."""
    rates = []
    for a, b in zip(before["viewers"], after["viewers"]):
        va, vb = cell.view(a), cell.view(b)
        if not a or not b or b.get("t", 0) <= a.get("t", 0):
            rates.append(0.0)
            continue
        rates.append((vb.get("framesDecoded", 0) - va.get("framesDecoded", 0)) / (b["t"] - a["t"]))
    return rates


def measure(mode, viewers, args):
    """One cell: up, every viewer decoding (at most 30 s), settle, the window, down. Its row."""
    budget = int(30 + args.settle + args.seconds + 60)
    cell = Cell(mode, viewers, args.bitrate, budget)
    began = time.monotonic()
    try:
        cell.up()
        all_in = wait_for(lambda: cell.sharer.poll() is not None or cell.decoding() == viewers, 30, interval=0.5)
        if cell.sharer.poll() is not None:
            raise RuntimeError(f"the sharer ended (exit {cell.sharer.returncode}) before the window; see "
                               f"{WORK}/{cell.name}.share.log")
        waited = time.monotonic() - began
        time.sleep(args.settle)
        before = snapshot(cell)
        time.sleep(args.seconds)
        after = snapshot(cell)
        seconds = after["wall"] - before["wall"]
        sharer_cpu = delta_cpu(before, after, cell.sharer.pid)
        server_cpu = delta_cpu(before, after, cell.server_pid())
        ours = sum(d for d in (delta_cpu(before, after, pid) for pid in before["cpu"]) if d is not None)
        busy = (after["machine"][0] - before["machine"][0]) / max(1, after["machine"][1] - before["machine"][1])
        t0 = (before["sharer"] or {}).get("t", 0)
        t1 = (after["sharer"] or {}).get("t", 0)
        rates = viewer_fps(cell, before, after)
        sizes = [f"{cell.view(line).get('width')}x{cell.view(line).get('height')}" for line in after["viewers"]]
        row = dict(mode=mode, viewers=viewers, seconds=round(seconds, 2),
                   sharerCores=None if sharer_cpu is None else sharer_cpu / seconds,
                   sharerRssMiB=peak_rss_mib(cell.sharer.pid),
                   serverCores=None if server_cpu is None else server_cpu / seconds,
                   oursFraction=ours / seconds / CORES, machineBusyFraction=busy,
                   viewerFps=[round(r, 2) for r in rates], viewerFpsMin=min(rates),
                   viewerFpsMedian=statistics.median(rates),
                   viewersDecodingBeforeSettle=viewers if all_in else cell.decoding(),
                   secondsToAllDecoding=round(waited, 1) if all_in else None,
                   viewerSizes=sorted(set(sizes)),
                   viewersEnded=[i + 1 for i, (w, _) in enumerate(cell.watchers) if w.poll() is not None],
                   **sharer_figures(cell, t0, t1))
        return row
    finally:
        # A second Ctrl-C must not leave half the cell running: it waits until everything ended.
        signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGINT, signal.SIGTERM})
        try:
            cell.down()
        finally:
            signal.pthread_sigmask(signal.SIG_UNBLOCK, {signal.SIGINT, signal.SIGTERM})
        row_time = time.monotonic() - began
        print(f"  {mode} {viewers} viewer(s): {row_time:.0f} s", file=sys.stderr, flush=True)


def show(value, form, none="—"):
    return none if value is None else form.format(value)


def table(rows):
    base = {}
    for row in rows:
        if row.get("sharerCores") is not None:
            base.setdefault(row["mode"], row)  # rows come in order of audience size
    header = (f"{'mode':9} {'viewers':>7} {'sharer CPU':>10} {'×first':>6} {'RSS MiB':>7} {'uplink kbit/s':>13} "
              f"{'encoders':>8} {'sent':>14} {'limited by':>13} {'viewers saw':>16} {'viewer fps min/med':>18} "
              f"{'server CPU':>10} "
              f"{'ours':>5} {'busy':>5}")
    out = [header]
    for row in rows:
        if "error" in row:
            out.append(f"{row['mode']:9} {row['viewers']:7} (no figures: {row['error']})")
            continue
        first = base.get(row["mode"])
        ratio = None
        if first and row.get("sharerCores") and first["sharerCores"]:
            ratio = row["sharerCores"] / first["sharerCores"]
        sent = (f"{row['sentWidth']}x{row['sentHeight']}@{row['sentFps'] or 0:.0f}" if row.get("sentWidth") else "—")
        encoders = f"{row['streams']} ({row['encodersMade']})" if "streams" in row else "—"
        out.append(f"{row['mode']:9} {row['viewers']:7} {show(row['sharerCores'], '{:.2f}'):>10} "
                   f"{show(ratio, '{:.2f}x'):>6} {show(row['sharerRssMiB'], '{:.0f}'):>7} "
                   f"{show(row.get('uplinkKbps'), '{:,.0f}'):>13} {encoders:>8} "
                   f"{sent:>14} {row.get('limitedBy', '—'):>13} {','.join(row['viewerSizes']):>16} "
                   f"{row['viewerFpsMin']:8.1f} / {row['viewerFpsMedian']:4.1f}    "
                   f"{show(row['serverCores'], '{:.2f}'):>10} {row['oursFraction']:5.0%} "
                   f"{row['machineBusyFraction']:5.0%}")
    return out


def summary(rows):
    lines = []
    for mode in MODES:
        measured = [r for r in rows if r["mode"] == mode and r.get("sharerCores")]
        if len(measured) < 2:
            continue
        small, large = measured[0], measured[-1]
        ratio = large["sharerCores"] / small["sharerCores"]
        saturated = " (the machine was saturated)" if large["machineBusyFraction"] >= 0.9 else ""
        lines.append(dict(mode=mode, fromViewers=small["viewers"], toViewers=large["viewers"], cpuRatio=ratio,
                          text=f"{mode}: {large['viewers']} viewers cost the sharer {ratio:.2f}x the CPU of "
                               f"{small['viewers']} ({large['sharerCores']:.2f} against {small['sharerCores']:.2f} "
                               f"cores); its viewers decoded {large['viewerFpsMin']:.1f} fps at worst, sent "
                               f"{large.get('sentWidth')}x{large.get('sentHeight')} at "
                               f"{large.get('sentFps') or 0:.0f} fps; "
                               f"machine {large['machineBusyFraction']:.0%} busy{saturated}"))
    return lines


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--viewers", default="1,2,4,8", help="audience sizes, comma-separated (default 1,2,4,8)")
    parser.add_argument("--seconds", type=float, default=10, help="the measured window (default 10)")
    parser.add_argument("--settle", type=float, default=5, help="seconds after every viewer decodes (default 5)")
    parser.add_argument("--modes", default="mesh,shared,janus,simulcast",
                        help="mesh, janus and/or simulcast (Janus with three layers), comma-separated (default all)")
    parser.add_argument("--bitrate", type=int, default=2000, help="the sharer's --bitrate, kbit/s (default 2000)")
    parser.add_argument("--json", help="write the rows and the summary here as JSON")
    args = parser.parse_args()
    viewers = sorted({int(v) for v in args.viewers.split(",") if v.strip()})
    modes = [m for m in MODES if m in args.modes.split(",")]  # mesh first: janus leaves j0 in the namespace
    if not viewers or min(viewers) < 1 or not modes or set(args.modes.split(",")) - set(MODES):
        parser.error("--viewers takes numbers of 1 or more, --modes mesh, shared, janus and/or simulcast")
    if not os.access(SHARECTL, os.X_OK):
        parser.error(f"no sharectl at {SHARECTL} (swift build -c release, or set SHARECTL)")
    signal.signal(signal.SIGTERM, on_term)
    signal.signal(signal.SIGINT, signal.default_int_handler)  # even where it was started with SIGINT ignored
    shutil.rmtree(WORK, ignore_errors=True)
    os.makedirs(WORK)
    # What the machine does without us: other work on it shows in every cell's busy figure.
    idle_before = machine_ticks()
    time.sleep(2)
    idle_after = machine_ticks()
    background = (idle_after[0] - idle_before[0]) / max(1, idle_after[1] - idle_before[1])
    began = time.monotonic()
    rows = []
    try:
        for mode in modes:
            for n in viewers:
                try:
                    rows.append(measure(mode, n, args))
                except (RuntimeError, OSError) as error:
                    print(f"  {mode} {n} viewer(s): {error}", file=sys.stderr, flush=True)
                    rows.append(dict(mode=mode, viewers=n, error=str(error)))
    except (KeyboardInterrupt, Interrupted):
        print("interrupted: every process of the cell was ended; the rows so far:", file=sys.stderr)
    took = time.monotonic() - began
    print(f"audience table: one 1920x1080 30 fps synthetic screen (H.264, --bitrate {args.bitrate}, no audio), "
          f"settle {args.settle:g} s, window {args.seconds:g} s, {CORES} cores, {os.path.basename(SHARECTL)} at "
          f"{SHARECTL}; the machine was {background:.0%} busy before the first cell, without us")
    for line in table(rows):
        print(line)
    ends = summary(rows)
    for line in ends:
        print(line["text"])
    print("sharer CPU in cores (1.00 = one core); ×first: against the same mode's smallest audience; RSS: peak "
          "(VmHWM); uplink: video kbit/s summed over the sharer's streams; encoders: video streams encoded at the "
          "window's end (encoders made over the whole run, a new one for each change of size); sent: the smallest "
          "picture at the window's end and its fps, limited by: what the sharer says holds it there; viewers saw: "
          "the size they decoded last; viewer fps: frames decoded over the window, slowest and median viewer; "
          "server: serve (mesh) or janus; "
          f"ours/busy: this cell's processes and the whole machine, of all {CORES} cores. Took {took:.0f} s; "
          f"logs in {WORK}.")
    if args.json:
        with open(args.json, "w") as out:
            json.dump(dict(bitrateKbps=args.bitrate, settleSeconds=args.settle, windowSeconds=args.seconds,
                           cores=CORES, sharectl=SHARECTL, busyBeforeFraction=background, seconds=round(took, 1),
                           rows=rows,
                           summary=[{k: v for k, v in s.items()} for s in ends]), out, indent=1)
    return 0 if any("error" not in r for r in rows) else 1  # figures, not a verdict: 1 only when none


if __name__ == "__main__":
    sys.exit(main())
