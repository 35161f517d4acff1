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
  pli-keyframe               once the share has reached its full size, all RTP and RTCP dropped for 2 s (STUN answered), longer
                             than our 1.5 s retransmission history: Chromium asks for a keyframe
                             (PLI) and each honoured request is answered with a keyframe within
                             300 ms.

Chromium's figures come from its getStats(), polled twice a second; ours from --stats-json.
"""
import contextlib
import subprocess
import sys
import time

from lib.chromium import WHIPReceiver
from lib.network import clear_drops, drop_media, drop_udp, sh
from lib.paths import ROOT
from lib.sharectl import Share
from lib.suite import GateSkipped, choose, finish, record, run_gates
from lib.waits import wait_for

LINK = "tbf rate 1500kbit burst 20kb latency 100ms"


def cap_link():
    sh(f"tc qdisc replace dev lo root {LINK}")


def uncap_link():
    subprocess.run("tc qdisc del dev lo root", shell=True, cwd=ROOT, stderr=subprocess.DEVNULL)


def wait_decoding(receiver, seconds=30):
    deadline = time.time() + seconds
    while time.time() < deadline:
        if receiver.sample().get("framesDecoded", 0) > 0:
            return True
        time.sleep(0.5)
    return False


def size_of(video):
    return f"{video.get('frameWidth')}x{video.get('frameHeight')}"


@contextlib.contextmanager
def chromium_share(name, policy, size="1920x1080", capped=False):
    """Chromium's receiver page up (the link capped first if asked), a share to it decoding;
    everything taken down again on the way out, whatever happened."""
    receiver = WHIPReceiver(name)
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
        # The outage comes once the share has climbed to its full size: a size step made during
        # it would bring a keyframe of its own, and Chromium would have nothing to ask for.
        wait_for(lambda: (share.last() or {}).get("video", {}).get("width") == 1280, 25)
        receiver.watch(3)
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


GATES = [
    ("link-balanced-then-detail", gate_balanced_then_detail),
    ("link-motion", gate_motion),
    ("loss-5", gate_loss),
    ("pli-keyframe", gate_pli),
]


def main():
    chosen = choose("send", [name for name, _ in GATES])
    run_gates(GATES, chosen)
    return finish()


if __name__ == "__main__":
    sys.exit(main())
