#!/usr/bin/env python3
"""Send-pipeline gates: the synthetic 1920x1080 screen shared to headless Chromium (the WHIP bridge
and receiver page of the transport gates) over a loopback link that is capped or lossy, inside the
network namespace scripts/gates/run.sh makes. Each gate prints PASS or FAIL with the figures it
judged; the last line is "N passed, N failed".

  link-balanced-then-detail  link capped at 1.5 Mbit/s (tc tbf on lo): balanced arrives at >= 15 fps
                             over 20 s; then "policy detail" typed on the share's stdin changes what
                             arrives to 1920x1080 with no renegotiation (one WHIP session, no PATCH),
                             and detail arrives at 1920x1080 over the next 15 s.
  link-motion                the same link: motion arrives at >= 15 fps over 20 s.
  loss-5                     5% of every UDP datagram dropped at random (nftables): the view keeps
                             decoding, Chromium's nackCount > 0, our RTX sent > 0, and it is frozen
                             under a tenth of the 20 s watched (Chromium's totalFreezesDuration
                             ≤ 2 s; how many freezes that makes varies with the machine's load:
                             0, 2 and 4 were seen, 0.45–0.91 s in all).
  pli-keyframe               all RTP and RTCP dropped for 2 s mid-share (STUN still answered), longer
                             than our 1.5 s retransmission history: Chromium asks for a keyframe
                             (PLI) and each honoured request is answered with a keyframe within
                             300 ms.

Chromium's figures come from its getStats(), polled twice a second; ours from --stats-json.
"""
import contextlib
import json
import os
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import transport  # noqa: E402  (the shared gate helpers)
from transport import ROOT, SHARECTL, WORK, free_port, read_json, record, start, stop, wait_http  # noqa: E402

LINK = "tbf rate 1500kbit burst 20kb latency 100ms"


def sh(command):
    subprocess.run(command, shell=True, check=True, cwd=ROOT)


def cap_link():
    sh(f"tc qdisc replace dev lo root {LINK}")


def uncap_link():
    subprocess.run("tc qdisc del dev lo root", shell=True, cwd=ROOT, stderr=subprocess.DEVNULL)


def drop_udp(percent):
    """Drops `percent` of UDP on lo at random (100: all of it), on the way in: the sender's
    sendmsg succeeds and the datagram vanishes, as on a real lossy path (dropped on the way out,
    the sender would get EPERM, which libnice takes for a broken pair)."""
    clear_drops()
    sh("nft add table inet sharectl_gate")
    sh("nft add chain inet sharectl_gate in '{ type filter hook input priority 0; }'")
    rule = "meta l4proto udp drop" if percent >= 100 else f"meta l4proto udp numgen random mod 100 \\< {percent} drop"
    sh(f"nft add rule inet sharectl_gate in {rule}")


def drop_media():
    """Drops every RTP and RTCP datagram on lo (UDP payloads starting with version 2, RFC 7983)
    and lets STUN and DTLS through: the media stops while connectivity checks go on answering."""
    clear_drops()
    sh("nft add table inet sharectl_gate")
    sh("nft add chain inet sharectl_gate in '{ type filter hook input priority 0; }'")
    sh("nft add rule inet sharectl_gate in meta l4proto udp @th,64,2 == 2 drop")


def clear_drops():
    subprocess.run("nft delete table inet sharectl_gate", shell=True, cwd=ROOT, stderr=subprocess.DEVNULL)


class Receiver:
    """Headless Chromium behind the WHIP bridge; `sample()` records its video figures over time."""

    def __init__(self, name):
        self.name = name
        self.port = free_port()
        self.stats_path = os.path.join(WORK, f"{name}.browser.json")
        if os.path.exists(self.stats_path):
            os.remove(self.stats_path)
        self.bridge = start([sys.executable, "scripts/peers/chromium_whip_bridge.py", "--port", str(self.port),
                             "--stats", self.stats_path], os.path.join(WORK, f"{name}.bridge.log"))
        self.browser = None
        self.samples = []

    def open(self):
        if not wait_http(self.port):
            return False
        self.browser = start(["scripts/peers/chromium.sh", f"http://127.0.0.1:{self.port}/receiver.html",
                              os.path.join(WORK, f"{self.name}.profile")], os.path.join(WORK, f"{self.name}.chromium.log"))
        deadline = time.time() + 30
        while time.time() < deadline and not (read_json(self.stats_path) or {}).get("pageSeen"):
            time.sleep(0.2)
        return bool((read_json(self.stats_path) or {}).get("pageSeen"))

    @property
    def endpoint(self):
        return f"http://127.0.0.1:{self.port}/whip"

    def page(self):
        return read_json(self.stats_path) or {}

    def video(self):
        sessions = self.page().get("sessions") or [{}]
        return ((sessions[-1].get("stats") or {}).get("video")) or {}

    def sample(self):
        video = self.video()
        if video:
            self.samples.append((time.time(), video))
        return video

    def watch(self, seconds):
        end = time.time() + seconds
        while time.time() < end:
            self.sample()
            time.sleep(0.5)

    def window(self, seconds):
        """Frames decoded a second over the last `seconds`, and the samples in that window."""
        if not self.samples:
            return 0.0, []
        end_t, end = self.samples[-1]
        inside = [(t, v) for t, v in self.samples if t >= end_t - seconds]
        start_t, start_v = inside[0]
        span = max(0.001, end_t - start_t)
        return (end.get("framesDecoded", 0) - start_v.get("framesDecoded", 0)) / span, [v for _, v in inside]

    def close(self):
        stop(self.browser)
        stop(self.bridge)


class Share:
    """`sharectl share` to the receiver, with a pipe to type commands on its stdin."""

    def __init__(self, name, endpoint, policy, size="1920x1080", duration=60, codec="h264", extra=()):
        self.stats_path = os.path.join(WORK, f"{name}.share.jsonl")
        self.log_path = os.path.join(WORK, f"{name}.share.log")
        args = [SHARECTL, "share", "--source", "synthetic", "--whip", endpoint, "--codec", codec, "--size", size,
                "--fps", "30", "--policy", policy, "--duration", str(duration), "--stats-json", self.stats_path, *extra]
        self.process = subprocess.Popen(args, stdin=subprocess.PIPE, stdout=open(self.log_path, "w"),
                                        stderr=subprocess.STDOUT, cwd=ROOT, text=True)

    def type(self, line):
        self.process.stdin.write(line + "\n")
        self.process.stdin.flush()

    def last(self):
        try:
            lines = [json.loads(l) for l in open(self.stats_path) if l.strip()]
        except (OSError, ValueError):
            return {}
        return lines[-1] if lines else {}

    def finish(self):
        if self.process.poll() is None:
            self.type("stop")
        try:
            code = self.process.wait(timeout=30)
        except subprocess.TimeoutExpired:
            self.process.kill()
            code = self.process.wait()
        return code

    def log(self):
        return open(self.log_path).read()


def wait_decoding(receiver, seconds=30):
    deadline = time.time() + seconds
    while time.time() < deadline:
        if receiver.sample().get("framesDecoded", 0) > 0:
            return True
        time.sleep(0.5)
    return False


def size_of(video):
    return f"{video.get('frameWidth')}x{video.get('frameHeight')}"


class GateSkipped(Exception):
    """The gate could not get as far as judging: recorded as a failure with its reason."""


@contextlib.contextmanager
def chromium_share(name, policy, size="1920x1080", capped=False):
    """Chromium's receiver page up (the link capped first if asked), a share to it decoding;
    everything taken down again on the way out, whatever happened."""
    receiver = Receiver(name)
    share = None
    try:
        if capped:
            cap_link()
        if not receiver.open():
            raise GateSkipped("Chromium's receiver page did not come up")
        share = Share(name, receiver.endpoint, policy, size=size)
        if not wait_decoding(receiver):
            raise GateSkipped(f"Chromium decoded nothing\n{share.log()[-1500:]}")
        yield receiver, share
    finally:
        clear_drops()
        if share and share.process.poll() is None:
            share.process.kill()
        receiver.close()
        if capped:
            uncap_link()


def judged(name, ok, detail, share):
    record(name, ok, detail)
    if not ok:
        print(share.log()[-2500:])


def gate_balanced_then_detail():
    name = "link-balanced-then-detail"
    with chromium_share(name, "balanced", capped=True) as (receiver, share):
        receiver.watch(22)
        balanced_fps, _ = receiver.window(20)
        before = receiver.sample()
        ours_before = share.last().get("video", {})
        share.type("policy detail")
        receiver.watch(20)
        detail_fps, window = receiver.window(15)
        after = receiver.sample()
        ours = share.last().get("video", {})
        code = share.finish()
        sessions = receiver.page().get("sessions") or []
        full = all(v.get("frameWidth") == 1920 and v.get("frameHeight") == 1080 for v in window)
        ok = (code == 0 and balanced_fps >= 15 and size_of(before) != "1920x1080" and full and detail_fps > 0
              and len(sessions) == 1 and not receiver.page().get("patches"))
        judged(name, ok, f"balanced {balanced_fps:.1f} fps at {size_of(before)} (ours: target {ours_before.get('targetKbps')} "
                         f"kbit/s, limited by {ours_before.get('limitedBy')}); after 'policy detail': {detail_fps:.1f} fps at "
                         f"{size_of(after)}, every sample of the last 15 s at 1920x1080: {full} (ours: "
                         f"{ours.get('width')}x{ours.get('height')}, policy {ours.get('policy')}, target {ours.get('targetKbps')} "
                         f"kbit/s); WHIP sessions {len(sessions)}; exit {code}", share)


def gate_motion():
    name = "link-motion"
    with chromium_share(name, "motion", capped=True) as (receiver, share):
        receiver.watch(22)
        fps, _ = receiver.window(20)
        video = receiver.sample()
        ours = share.last().get("video", {})
        code = share.finish()
        ok = code == 0 and fps >= 15 and (video.get("frameWidth") or 0) <= 1280
        judged(name, ok, f"motion {fps:.1f} fps at {size_of(video)} over 20 s (ours: target {ours.get('targetKbps')} kbit/s, "
                         f"sent {ours.get('fpsSent', 0):.0f} fps, limited by {ours.get('limitedBy')}); exit {code}", share)


def gate_loss():
    name = "loss-5"
    with chromium_share(name, "balanced", size="1280x720") as (receiver, share):
        drop_udp(5)
        receiver.watch(20)
        fps, _ = receiver.window(5)
        video = receiver.sample()
        clear_drops()
        time.sleep(1.5)
        ours = share.last().get("video", {})
        code = share.finish()
        nacks, rtx, freezes = video.get("nackCount", 0), ours.get("rtxSent", 0), video.get("freezeCount", 0)
        frozen = video.get("totalFreezesDuration") or 0
        ok = code == 0 and fps >= 5 and nacks > 0 and rtx > 0 and frozen <= 2.0
        judged(name, ok, f"under 5% loss: still decoding at {fps:.1f} fps over the last 5 s, {size_of(video)}; Chromium "
                         f"nackCount {nacks}, freezes {freezes} ({video.get('totalFreezesDuration')} s); ours: NACKs "
                         f"{ours.get('nacksReceived')}, RTX sent {rtx}, target {ours.get('targetKbps')} kbit/s; exit {code}", share)


def gate_pli():
    name = "pli-keyframe"
    with chromium_share(name, "balanced", size="1280x720") as (receiver, share):
        receiver.watch(4)
        before = receiver.sample()
        drop_media()
        time.sleep(2)
        clear_drops()
        receiver.watch(8)
        after = receiver.sample()
        ours = share.last().get("video", {})
        code = share.finish()
        plis = after.get("pliCount", 0) + after.get("firCount", 0) - before.get("pliCount", 0) - before.get("firCount", 0)
        answered, slowest = ours.get("keyframeResponses", 0), ours.get("keyframeResponseMaxMs")
        resumed = after.get("framesDecoded", 0) > before.get("framesDecoded", 0) + 30
        ok = code == 0 and plis >= 1 and answered >= 1 and slowest is not None and slowest <= 300 and resumed
        judged(name, ok, f"after 2 s without media Chromium asked {plis} time(s) (PLI/FIR); we received "
                         f"{ours.get('pliReceived')} PLI, answered {answered} with a keyframe, slowest {slowest} ms; "
                         f"decoding resumed: {after.get('framesDecoded')} frames (was {before.get('framesDecoded')}); exit {code}",
               share)


GATES = {
    "link-balanced-then-detail": gate_balanced_then_detail,
    "link-motion": gate_motion,
    "loss-5": gate_loss,
    "pli-keyframe": gate_pli,
}


def main():
    only = set(sys.argv[1:])
    unknown = only - set(GATES)
    if unknown:
        print(f"send gates: no gate named {', '.join(sorted(unknown))} (have: {', '.join(GATES)})")
        return 2
    for name, gate in GATES.items():
        if not only or name in only:
            try:
                gate()
            except GateSkipped as reason:
                record(name, False, str(reason))
            except Exception as error:  # a gate that breaks is a failed gate, and the others still run
                record(name, False, f"the gate broke: {error!r}")
    passed = sum(transport.results)
    print(f"{passed} passed, {len(transport.results) - passed} failed")
    return 0 if passed == len(transport.results) else 1


if __name__ == "__main__":
    sys.exit(main())
