#!/usr/bin/env python3
"""`make bench`'s link table: sharectl beside a GStreamer `webrtcbin` sender on the same links, to the
same two receivers, with the same encoder libraries. Figures, not verdicts.

Links (as the `links` gates make them on lo): 1.5 Mbit/s and 600 kbit/s `tc tbf` (burst 32 kbit,
latency 100 ms), and 5 % random UDP loss with no cap. Receivers: aiortc (no transport-wide
feedback) and headless Chromium (TWCC). Codecs: H.264 (x264) and VP8 (libvpx). Each cell runs each
sender for --seconds (20) at 1920x1080, 30 fps:
  sharectl   `share --policy balanced`, adapting on its own (the synthetic screen);
  GStreamer  scripts/peers/gst_whip_send.py, `videotestsrc` (a moving ball) told 85 % of the link's
             rate by hand (2,000 kbit/s on the uncapped lossy link): Debian 12 has no
             gst-plugins-rs, so no `rtpgccbwe`; this is the best a GStreamer user gets here.
The aiortc endpoint is the DTLS server (`--dtls-server`) for both senders: webrtcbin's DTLS
certificate is RSA, and aiortc 1.9 as the client offers only ECDSA cipher suites ("no shared
cipher"); as the server its own ECDSA certificate picks the suite.
libnice (webrtcbin's ICE) leaves loopback out of its gathering, so the namespace gets a veth pair
with 10.99.0.1 (its traffic to a local address still crosses lo, where the link is shaped), and
the aiortc endpoint offers that address beside 127.0.0.1.
The two senders' pictures differ (sharectl's synthetic desktop, GStreamer's test pattern), unless
`--content ball`: then sharectl shares a PipeWire node carrying GStreamer's own test picture
(`gst-launch-1.0 videotestsrc … ! pipewiresink`, on a PipeWire and WirePlumber of the run's own),
and the GStreamer sender takes the same node (`pipewiresrc`), so both senders encode the same
frames from the same source, with the same producer running beside each. The size and QP columns
(Chromium cells) say what each sent: the size most frames were decoded at and Chromium's mean
quantizer.

Per cell and sender: decoded fps (aiortc: over the run; Chromium: while it played, from the first
report with a frame decoded to the one where the count stopped, as each sender stops on its own
clock — or, if the picture froze before the sender stopped, to the sender's end less 1.5 s —
and counted at no more than the source's 30 a second in any stretch: frames decoded faster
are late ones caught up, `in_time`; the uncapped figure is in the JSON as raw_fps), the fraction of the frames sent that were decoded (GStreamer's frames sent taken as 30 a
second while it played), the seconds from the POST to the first decoded frame (Chromium: when the
page presented it), the seconds from the start to the first second the receiver got 90 % of a capped link's
rate, and RTX as a share of the video packets (sharectl only: webrtcbin's sender does not report
its retransmissions here).

Inside a network namespace with only loopback (scripts/bench.sh starts it so):
    unshare -n python3 scripts/bench_links.py [--seconds 20] [--cells aiortc-h264-1500,...]
        [--senders sharectl,gstreamer] [--content synthetic|ball]
"""
import argparse
import json
import os
import re
import subprocess
import sys
import time
from collections import namedtuple

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "gates"))

from lib.chromium import WHIPReceiver  # noqa: E402
from lib.paths import ROOT, WORK  # noqa: E402
from lib.peers import last_session, start_aiortc  # noqa: E402
from lib.ports import wait_http  # noqa: E402
from lib.processes import stop  # noqa: E402
from lib.sharectl import Share  # noqa: E402
import links  # noqa: E402

Link = namedtuple("Link", "label rate_kbit loss")
LINKS = [Link("1.5 Mbit/s", 1500, 0), Link("600 kbit/s", 600, 0), Link("5 % loss", None, 5)]
RECEIVERS = ["aiortc", "chromium"]
CODECS = ["h264", "vp8"]
FPS = 30
# From a sender's last frame decoded to its process's end (its teardown and the page's last
# report): 0.4-0.7 s seen. A count that stopped longer before its sender's end is a freeze.
TEARDOWN = 1.5


def cell_name(receiver, codec, link):
    return f"{receiver}-{codec}-{link.rate_kbit or f'loss{link.loss}'}"


def link_case(link):
    return links.Case("bench", None, None, link.rate_kbit, link.loss, None, None, None, None, None, None)


def gst_kbps(link):
    return int(link.rate_kbit * 0.85) if link.rate_kbit else 2000


def ramp_seconds(points, rate_kbit):
    """The seconds from the start to the first second whose received rate reached 90 % of the
    link; points are (t, cumulative bytes). None when never (or the link is not capped)."""
    if not rate_kbit:
        return None
    for (t0, b0), (t1, b1) in zip(points, points[1:]):
        if t1 - t0 >= 0.5 and (b1 - b0) * 8 / (t1 - t0) / 1000 >= 0.9 * rate_kbit:
            return t1
    return None


class TestPictureNode:
    """GStreamer's test picture (the GStreamer sender's) as a PipeWire video node, on a D-Bus,
    PipeWire and WirePlumber of this run's own: what sharectl shares with `--content ball`."""

    def __init__(self, width=1920, height=1080, fps=FPS):
        self.dir = os.path.join(WORK, "bench-links-pipewire")
        self.caps = f"video/x-raw,format=BGRx,width={width},height={height},framerate={fps}/1"
        self.processes = []
        self.node = None
        self.gst = None

    def start(self):
        # gst_whip_send.py runs under the system Python (gi), so its constant is read, not imported
        with open(os.path.join(ROOT, "scripts", "peers", "gst_whip_send.py")) as f:
            TEST_PICTURE = re.search(r'^TEST_PICTURE = "([^"]+)"', f.read(), re.M).group(1)
        run = os.path.join(self.dir, "run")
        os.makedirs(run, exist_ok=True)
        os.chmod(run, 0o700)
        env = dict(os.environ, XDG_RUNTIME_DIR=run, PIPEWIRE_RUNTIME_DIR=run, HOME=self.dir)
        bus = os.path.join(self.dir, "dbus.conf")
        with open(bus, "w") as f:
            f.write(f"""<!DOCTYPE busconfig PUBLIC "-//freedesktop//DTD D-BUS Bus Configuration 1.0//EN"
 "http://www.freedesktop.org/standards/dbus/1.0/busconfig.dtd">
<busconfig><type>session</type><listen>unix:path={run}/bus</listen><auth>EXTERNAL</auth>
<policy context="default"><allow send_destination="*" eavesdrop="true"/><allow eavesdrop="true"/><allow own="*"/></policy>
</busconfig>
""")
        self.spawn(["dbus-daemon", f"--config-file={bus}", "--nofork", "--nopidfile"], env, "dbus")
        self.wait(lambda: os.path.exists(os.path.join(run, "bus")), "D-Bus")
        env["DBUS_SESSION_BUS_ADDRESS"] = f"unix:path={run}/bus"
        self.spawn(["pipewire"], env, "pipewire")
        self.wait(lambda: os.path.exists(os.path.join(run, "pipewire-0")), "PipeWire")
        self.spawn(["wireplumber"], env, "wireplumber")
        self.env, self.test_picture = env, TEST_PICTURE
        os.environ["XDG_RUNTIME_DIR"] = run
        os.environ["PIPEWIRE_RUNTIME_DIR"] = run

    def fresh(self):
        """Starts the picture anew and returns its node: pipewiresink in provide mode serves one
        share and then sends nothing more, so each run gets a node of its own."""
        if self.gst:
            self.gst.terminate()
            self.gst.wait(timeout=5)
            self.wait(lambda: self.listed() is None, "the last test picture's node to go")
        self.spawn(["gst-launch-1.0", "-q", *self.test_picture.split(), "!", "videoconvert", "!", self.caps, "!",
                    "pipewiresink", "mode=provide",
                    "stream-properties=props,media.class=Video/Source,node.name=bench-test-picture"],
                   self.env, "gst")
        self.gst = self.processes[-1]

        def found():
            self.node = self.listed()
            return self.node is not None
        self.wait(found, "the test picture's PipeWire node")
        return self.node

    def listed(self):
        """The test picture's node id, or None."""
        listed = subprocess.run(["pw-cli", "ls", "Node"], env=self.env, capture_output=True, text=True).stdout
        block = None
        for line in listed.splitlines():
            if line.strip().startswith("id "):
                block = line.strip().split()[1].rstrip(",")
            if "bench-test-picture" in line and block:
                return block
        return None

    def spawn(self, args, env, name):
        log = open(os.path.join(self.dir, f"{name}.log"), "w")
        self.processes.append(subprocess.Popen(args, env=env, stdout=log, stderr=subprocess.STDOUT,
                                               start_new_session=True))

    def wait(self, condition, what, timeout=15):
        deadline = time.time() + timeout
        while time.time() < deadline:
            if condition():
                return
            time.sleep(0.1)
        raise RuntimeError(f"bench_links: {what} did not come up within {timeout} s (logs in {self.dir})")

    def stop(self):
        for process in reversed(self.processes):
            process.terminate()
            try:
                process.wait(timeout=5)
            except subprocess.TimeoutExpired:
                process.kill()


SOURCE = {"source": "synthetic", "picture": None}


def run_sender(sender, name, endpoint, codec, link, seconds):
    """Runs one sender to the end; (exit code, frames sent, RTX share or None, its log tail)."""
    if sender == "sharectl":
        if SOURCE["picture"]:
            SOURCE["source"] = f"pipewire:{SOURCE['picture'].fresh()}"
        share = Share(name, endpoint, "balanced", size="1920x1080", duration=seconds, codec=codec,
                      extra=os.environ.get("BENCH_SHARE_ARGS", "").split(), source=SOURCE["source"])
        try:
            share.process.wait(timeout=seconds + 30)
        except subprocess.TimeoutExpired:
            pass
        code = share.finish()
        lines = share.lines()
        video = (lines[-1] if lines else {}).get("video") or {}
        rtx, packets = video.get("rtxSent", 0), video.get("packetsSent", 0)
        return code, video.get("framesSent", 0), (rtx / (rtx + packets) if rtx + packets else None), share.log()[-600:]
    log = os.path.join(WORK, f"{name}.gst.log")
    with open(log, "w") as out:
        process = subprocess.Popen(
            ["/usr/bin/python3", "scripts/peers/gst_whip_send.py", "--whip", endpoint, "--codec", codec,
             "--kbps", str(gst_kbps(link)), "--duration", str(seconds), "--fps", str(FPS),
             # the same picture through the same PipeWire node as sharectl's (--content ball)
             *(["--pipewire-node", SOURCE["picture"].fresh()] if SOURCE["picture"] else [])],
            cwd=ROOT, stdout=out, stderr=subprocess.STDOUT)
        try:
            code = process.wait(timeout=seconds + 40)
        except subprocess.TimeoutExpired:
            process.kill()
            code = -9
    with open(log) as f:
        tail = f.read()[-600:]
    return code, FPS * seconds, None, tail


def aiortc_cell(sender, name, codec, link, seconds):
    # The endpoint as the DTLS server (`--dtls-server`) for both senders: webrtcbin's certificate is
    # RSA, and aiortc as the client offers only ECDSA suites ("no shared cipher").
    endpoint, port, stats_path = start_aiortc(name, "--dtls-server")
    try:
        if not wait_http(port):
            return None
        with links.link(link_case(link)):
            started = time.time()
            code, sent, rtx, tail = run_sender(sender, name, f"http://127.0.0.1:{port}/whip", codec, link, seconds)
        time.sleep(1.0)
        video = last_session(stats_path).get("video") or {}
        history = video.get("kbpsHistory") or []
        ramp = None
        if link.rate_kbit:
            ramp = next((i + 1 for i, kbps in enumerate(history) if kbps >= 0.9 * link.rate_kbit), None)
        decoded = video.get("framesDecoded", 0)
        return dict(code=code, fps=decoded / seconds, fraction=decoded / sent if sent else 0.0,
                    first=video.get("firstFrameSeconds"), ramp=ramp, rtx=rtx, tail=tail,
                    elapsed=time.time() - started)
    finally:
        stop(endpoint)


def chromium_cell(sender, name, codec, link, seconds):
    receiver = WHIPReceiver(name)
    try:
        with links.link(link_case(link)):
            if not receiver.open():
                return None
            started = time.time()
            samples = []
            presented = None
            code_box = {}

            import threading

            def send():
                code_box["result"] = run_sender(sender, name, receiver.endpoint, codec, link, seconds)

            thread = threading.Thread(target=send)
            thread.start()
            while thread.is_alive():
                session = receiver.session()
                stats = (session.get("stats") or {}).get("video") or {}
                if stats:
                    samples.append((time.time(), stats, session.get("created")))
                if (session.get("stats") or {}).get("firstFrameAt"):
                    presented = session["stats"]["firstFrameAt"] / 1000
                time.sleep(0.25)
            ended = time.time()
            code, sent, rtx, tail = code_box["result"]
        decoded = max((s.get("framesDecoded") or 0 for _, s, _ in samples), default=0)
        created = next((c for _, _, c in samples if c), None)
        # what the pictures were: the size most frames were decoded at, and the mean quantizer
        # Chromium's decoder read (qpSum over frames decoded; H.264 0-51, VP8 0-127: lower is finer)
        frames_at = {}
        for (_, earlier, _), (_, later, _) in zip(samples, samples[1:]):
            size = (later.get("frameWidth") or 0, later.get("frameHeight") or 0)
            frames_at[size] = frames_at.get(size, 0) + (later.get("framesDecoded") or 0) - (earlier.get("framesDecoded") or 0)
        size = max(frames_at, key=frames_at.get) if frames_at else None
        last = samples[-1][1] if samples else {}
        qp = last.get("qpSum") / last["framesDecoded"] if last.get("qpSum") and last.get("framesDecoded") else None
        # the receiver's figures as they came, for whoever asks why a cell looks as it does
        with open(os.path.join(WORK, f"{name}.samples.json"), "w") as out:
            json.dump([dict(at=round(t - (created or started), 3), **s) for t, s, _ in samples], out)
        # The first frame: when the page presented it (its clock is this machine's); failing that,
        # the first getStats() report (twice a second) with one decoded.
        first = next((t - created for t, s, _ in samples if (s.get("framesDecoded") or 0) > 0 and created), None)
        if presented and created:
            first = presented - created
        # Frames a second while it played: from the first report with frames decoded to the one
        # where the count stopped, the same for both senders (each stops on its own clock:
        # GStreamer 20 s after its POST, sharectl 20 s after it started). The start is the first
        # frame's column.
        counts = [(s["reportedAt"] / 1000 if s.get("reportedAt") else t, s.get("framesDecoded") or 0)
                  for t, s, _ in samples]
        playing = [(t, n) for t, n in counts if n > 0]
        fps = decoded / seconds
        raw_fps = idle = None
        if len(playing) >= 2:
            # Where the count stopped: the sender's end, or, where the picture froze before it (a
            # lost keyframe never repaired: GStreamer's H.264 on the lossy link decoded 36 frames
            # in its first 2.3 s and none after, and read 44 fps), the sender's own end less
            # `TEARDOWN`: the frames it should have shown there count as not shown.
            stopped = next(t for t, n in playing if n == decoded)
            idle = ended - stopped
            end = max(stopped, ended - TEARDOWN)
            if end > playing[0][0]:
                raw_fps = (decoded - playing[0][1]) / (end - playing[0][0])
                fps = in_time(playing, end) / (end - playing[0][0])
        points = [(t - (created or started), s.get("bytesReceived") or 0) for t, s, _ in samples]
        thinned, last = [], None
        for point in points:
            if last is None or point[0] - last[0] >= 1.0:
                thinned.append(point)
                last = point
        if sender == "gstreamer" and len(playing) >= 2:
            sent = FPS * (max(next(t for t, n in playing if n == decoded), ended - TEARDOWN)
                          - (presented or playing[0][0])) + 1
        return dict(code=code, fps=fps, raw_fps=raw_fps, idle_before_end=idle, fraction=min(decoded / sent, 1.0) if sent else 0.0, first=first,
                    ramp=ramp_seconds(thinned, link.rate_kbit), rtx=rtx, tail=tail, elapsed=time.time() - started,
                    size=f"{size[0]}x{size[1]}" if size and size[0] else None, qp=qp)
    finally:
        receiver.close()


def in_time(playing, end, slack=2):
    """Frames decoded while it played, counted at no more than the source's rate in any stretch
    (`FPS` a second, with `slack` frames for the reports' jitter): a receiver that decodes faster
    than the source made them is catching up on frames that came late — after a slow first
    keyframe GStreamer's H.264 on the lossy link decoded 35-60 a second and read 44 fps from a
    30 fps source — and a viewer sees that as a jump, not as more frames."""
    counted, tokens = 0.0, float(slack)
    for (t0, n0), (t1, n1) in zip(playing, playing[1:]):
        if t0 >= end:
            break
        allowed = FPS * max(0.0, t1 - t0)
        tokens = min(tokens + allowed, allowed + slack)
        take = min(max(0, n1 - n0), tokens)
        counted += take
        tokens -= take
    return counted


def show(value, form):
    return "—" if value is None else form.format(value)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--seconds", type=int, default=20)
    parser.add_argument("--cells", help="comma-separated cell names (receiver-codec-1500|600|loss5)")
    parser.add_argument("--senders", default="sharectl,gstreamer", help="comma-separated: sharectl, gstreamer")
    parser.add_argument("--content", choices=["synthetic", "ball"], default="synthetic",
                        help="what sharectl shares: its synthetic desktop, or GStreamer's test picture")
    args = parser.parse_args()
    subprocess.run("ip link set lo up", shell=True, check=True)
    subprocess.run("ip link add bench0 type veth peer name bench1 && ip addr add 10.99.0.1/24 dev bench0 && "
                   "ip link set bench0 up && ip link set bench1 up", shell=True, check=True)
    os.environ["AIORTC_HOST_ADDRESSES"] = "127.0.0.1,10.99.0.1"
    os.makedirs(WORK, exist_ok=True)
    wanted = set(args.cells.split(",")) if args.cells else None
    picture = None
    if args.content == "ball":
        picture = TestPictureNode()
        picture.start()
        SOURCE["picture"] = picture
    try:
        rows = run_cells(args, wanted)
    finally:
        if picture:
            picture.stop()
    print(f"link table: {args.seconds} s a run, 1920x1080 at 30 fps; sharectl adapts (balanced) and shares "
          f"{'GStreamer' + chr(39) + 's test picture through PipeWire (GStreamer too)' if picture else 'its synthetic screen'}, "
          f"GStreamer webrtcbin is told 85 % of a capped link (2,000 kbit/s on the lossy one)")
    return report(rows, args)


def run_cells(args, wanted):
    rows = []
    for link in LINKS:
        for receiver in RECEIVERS:
            for codec in CODECS:
                cell = cell_name(receiver, codec, link)
                if wanted and cell not in wanted:
                    continue
                for sender in [s for s in ("sharectl", "gstreamer") if s in args.senders.split(",")]:
                    name = f"bench-links-{cell}-{sender}"
                    run = (aiortc_cell if receiver == "aiortc" else chromium_cell)(sender, name, codec, link,
                                                                                  args.seconds)
                    rows.append((link, receiver, codec, sender, run))
                    if run is None:
                        print(f"{cell} {sender}: the receiver did not come up", file=sys.stderr, flush=True)
                    elif isinstance(run, dict) and run["code"] != 0:
                        print(f"{cell} {sender}: exit {run['code']}: {run['tail']}", file=sys.stderr, flush=True)
    return rows


def report(rows, args):
    print(f"{'link':11} {'receiver':9} {'codec':5} {'sender':10} {'fps':>5} {'raw':>5} {'decoded':>8} {'first frame':>12} "
          f"{'to 90 %':>8} {'RTX':>6} {'size':>10} {'QP':>5}")
    for link, receiver, codec, sender, run in rows:
        if isinstance(run, str):
            print(f"{link.label:11} {receiver:9} {codec:5} {sender:10} (not measured: {run})")
            continue
        if run is None:
            print(f"{link.label:11} {receiver:9} {codec:5} {sender:10} (receiver did not come up)")
            continue
        note = "" if run["code"] == 0 else f"  exit {run['code']}"
        if (run.get("idle_before_end") or 0) > TEARDOWN:
            note += f"  froze {run['idle_before_end']:.1f} s before its end"
        print(f"{link.label:11} {receiver:9} {codec:5} {sender:10} {run['fps']:5.1f} {show(run.get('raw_fps'), '{:.1f}'):>5} {run['fraction']:8.0%} "
              f"{show(run['first'], '{:.2f} s'):>12} {show(run['ramp'], '{:.0f} s'):>8} "
              f"{show(run['rtx'], '{:.1%}'):>6} {show(run.get('size'), '{}'):>10} {show(run.get('qp'), '{:.1f}'):>5}{note}")
    print("fps: frames decoded a second (aiortc: over the run; Chromium: while it played, at most the source's 30 "
          "a second in any stretch; raw: not so capped, late frames caught up counting as more); decoded: of the frames "
          "sent (GStreamer's taken as 30 a second while it played); first frame: from the POST (Chromium: to its "
          "presentation); to 90 %: seconds until a second carried 90 % of a capped link "
          "(— never, or no cap); RTX: share of video packets (sharectl only); size: the size most frames were "
          "decoded at, QP: their mean quantizer as Chromium decoded them (lower is finer; Chromium cells only).")
    print(json.dumps([dict(link=l.label, receiver=r, codec=c, sender=s,
                           **({"skipped": run} if isinstance(run, str) else
                              {k: v for k, v in (run or {}).items() if k != "tail"}))
                      for l, r, c, s, run in rows]), file=open(os.path.join(WORK, "bench-links.json"), "w"))
    return 0


if __name__ == "__main__":
    sys.exit(main())
