#!/usr/bin/env python3
"""Link gates: the synthetic 1920x1080 screen shared for 20 s over a loopback link that is capped
(tc tbf on lo) or lossy (nftables), to a receiver that gives no transport-wide congestion feedback
(the aiortc WHIP endpoint: REMB, receiver reports, NACK and PLI only) and to one that does
(headless Chromium, TWCC): the sender must hold up with both. Inside the network namespace
scripts/gates/run.sh makes. Each gate prints PASS or FAIL with the figures it judged; the last line
is "N passed, N failed".

The links, each set up before the receiver and the share start and taken down on every way out:
  1500   tc qdisc replace dev lo root tbf rate 1500kbit burst 32kbit latency 100ms, and lo's MTU
         1500 while it is there (a 4000-byte burst passes no 64 KiB loopback TCP segment)
  600    the same at 600kbit
  loss   10% of UDP dropped at random on the way in (nftables), no cap

  aiortc-detail-1500    H.264, policy detail, 1500 link: the endpoint's most common decoded size is
                        1920 wide; >= 3 fps decoded on average over the 20 s; >= 90% of the frames
                        we sent decoded; no second after the first 2 s in which we sent more than
                        1.2 x the link rate.
  aiortc-balanced-1500  H.264, balanced, 1500 link: >= 15 fps decoded, >= 90% of sent frames
                        decoded, the same 1.2 x rule.
  aiortc-vp8-600        VP8, balanced, 600 link: >= 12 fps decoded, >= 85% of sent frames decoded,
                        the first frame decoded within 2 s of the session's POST.
  aiortc-loss-10        H.264, balanced, loss link: >= 15 fps decoded; RTX under 35% of the video
                        rate, as a packet share: our rtxSent / packetsSent. It ran only when named
                        while it failed 2 runs of 4 on 2026-12-02 and 1 of 3 on 2026-12-04, each
                        time with aiortc decoding nothing for its first 7-11 s ("non-existing PPS 0
                        referenced"): its first RTCP came after 7 s, the mark of DTLS finishing late
                        on its side. We are the DTLS server; our final flight was lost, and aiortc
                        retransmits its own after 1, 2 and 4 s, so every keyframe sent before then
                        was undecryptable to it. Our server now sends its final flight again after
                        200 and 600 ms (DTLSTransport.finalFlightRepeats).
  chromium-detail-1500, chromium-balanced-1500, chromium-vp8-600, chromium-loss-10
                        the same links and thresholds with headless Chromium as the receiver.
  room-detail-then-motion
                        a room of `sharectl serve` on the 1500 link: `share --room --policy detail`
                        of the synthetic 1920x1080, `watch` as the viewer: it decodes 1920 wide;
                        then `policy motion` typed on the sharer's standard input: within 10 s the
                        viewer decodes at most 1280 wide at >= 20 fps over 5 s, on the same section
                        (the same mid: no new offer) and the same connection (none renewed).

How each figure is had:
  decoded fps       the receiver's frames decoded / the share's 20 s (it counts from the share's
                    start, so connecting is inside it).
  fraction decoded  frames decoded / our last `video.framesSent`. aiortc counts until DELETE.
                    Chromium's page reports getStats() twice a second and not after DELETE, so its
                    last report before DELETE is set against our last framesSent less the frames
                    of one report interval and one poll at our last second's rate.
  size              aiortc: its `sizes` count; Chromium: the frames decoded between two reports
                    counted at the frameWidth x frameHeight of the later one.
  sent a second     the delta of our `connection.bytesSent` (all media) between consecutive lines
                    whose first has t >= 2, in bits over the lines' t span (spans under 0.5 s are
                    left out); the worst one is judged against 1.2 x the tbf rate.
  first frame       aiortc: its `firstFrameSeconds` (POST to first decoded frame). Chromium: the
                    first report showing a decoded frame, seen at most 0.5 s (the page's report
                    interval) after the frame: judged as <= 2 s + 0.5 s, with the last report still
                    showing none printed beside it.
  RTX share         our rtxSent / packetsSent, judged (packetsSent counts the media packets, not
                    the retransmissions); rtxSent / (packetsSent + rtxSent), the share of all the
                    video packets, printed beside it.
Each line also says our target kbit/s and limitedBy at the end, the share's exit code (non-zero
fails the gate), and `video.rtxSuppressed` and `congestion` when our stats have them; a Chromium
gate's line also says Chromium's freezes, packets lost, NACKs and frames dropped (not judged).
"""
import contextlib
import json
import os
import subprocess
import sys
import time
from collections import Counter, namedtuple

from lib.chromium import WHIPReceiver
from lib.network import clear_drops, drop_udp, sh
from lib.paths import ROOT, WORK
from lib.peers import last_session, start_aiortc
from lib.ports import wait_http
from lib.processes import stop
from lib.room import Participant, Server
from lib.sharectl import Share
from lib.suite import GateSkipped, choose, finish, record, run_gates
from lib.waits import wait_for

SECONDS = 20
TABLE = "sharectl_links"
REPORT_INTERVAL = 0.5  # receiver.html posts getStats() twice a second
POLL = 0.1

# What a gate asks of the link and of what arrives; None: not judged.
Case = namedtuple("Case", "receiver codec policy rate_kbit loss min_fps min_fraction width cap first_frame max_rtx")

CASES = {
    "aiortc-detail-1500": Case("aiortc", "h264", "detail", 1500, 0, 3, 0.90, 1920, 1.2, None, None),
    "aiortc-balanced-1500": Case("aiortc", "h264", "balanced", 1500, 0, 15, 0.90, None, 1.2, None, None),
    "aiortc-vp8-600": Case("aiortc", "vp8", "balanced", 600, 0, 12, 0.85, None, None, 2.0, None),
    "aiortc-loss-10": Case("aiortc", "h264", "balanced", None, 10, 15, None, None, None, None, 0.35),
    "chromium-detail-1500": Case("chromium", "h264", "detail", 1500, 0, 3, 0.90, 1920, 1.2, None, None),
    "chromium-balanced-1500": Case("chromium", "h264", "balanced", 1500, 0, 15, 0.90, None, 1.2, None, None),
    "chromium-vp8-600": Case("chromium", "vp8", "balanced", 600, 0, 12, 0.85, None, None, 2.0, None),
    "chromium-loss-10": Case("chromium", "h264", "balanced", None, 10, 15, None, None, None, None, 0.35),
}


@contextlib.contextmanager
def link(case):
    """The case's link on lo for the body's length, gone again whatever happened. A capped link
    also has a 1500-byte MTU: tbf drops every packet larger than its 4000-byte burst, and on lo's
    64 KiB MTU one TCP segment (the receiver page, an SDP) is larger, so HTTP would never get
    through; RTP packets are far under both."""
    # Asked of ip, not /sys: unshare -n leaves /sys showing the host's lo.
    mtu = json.loads(subprocess.run("ip -j link show lo", shell=True, cwd=ROOT, check=True, capture_output=True,
                                    text=True).stdout)[0]["mtu"]
    try:
        if case.rate_kbit:
            sh("ip link set lo mtu 1500")
            sh(f"tc qdisc replace dev lo root tbf rate {case.rate_kbit}kbit burst 32kbit latency 100ms")
        if case.loss:
            drop_udp(case.loss, TABLE)
        yield
    finally:
        clear_drops(TABLE)
        if case.rate_kbit:
            subprocess.run("tc qdisc del dev lo root", shell=True, cwd=ROOT, stderr=subprocess.DEVNULL)
            subprocess.run(f"ip link set lo mtu {mtu}", shell=True, cwd=ROOT)


def link_name(case):
    if case.rate_kbit:
        return f"tbf {case.rate_kbit} kbit/s"
    return f"{case.loss}% UDP loss, no cap"


def start_share(name, endpoint, case):
    return Share(name, endpoint, case.policy, size="1920x1080", duration=SECONDS, codec=case.codec)


def end_share(share):
    """Waits for the share to end by its --duration (typed `stop` if it overruns by 30 s); its
    exit code."""
    with contextlib.suppress(subprocess.TimeoutExpired):
        share.process.wait(timeout=SECONDS + 30)
    return share.finish()


def most_common(sizes):
    """('WxH', count) of the size most frames were decoded at, ('none', 0) when none was."""
    sizes = Counter({k: v for k, v in sizes.items() if v})
    return sizes.most_common(1)[0] if sizes else ("none", 0)


def worst_second(lines, after=2.0):
    """(kbit/s, t) of the second after the first `after` s in which we sent the most, from the delta
    of connection.bytesSent between consecutive lines; (None, None) when there is no such second."""
    worst = (None, None)
    for a, b in zip(lines, lines[1:]):
        span = b["t"] - a["t"]
        if a["t"] < after or span < 0.5:
            continue
        kbps = (b["connection"]["bytesSent"] - a["connection"]["bytesSent"]) * 8 / span / 1000
        if worst[0] is None or kbps > worst[0]:
            worst = (kbps, b["t"])
    return worst


# What arrived, the same figures from either receiver.
Arrived = namedtuple("Arrived", "decoded fraction_decoded fraction_sent size size_frames first_frame first_note seen",
                     defaults=("",))


def aiortc_gate(name, case):
    endpoint, port, stats_path = start_aiortc(name)
    share = None
    try:
        if not wait_http(port):
            raise GateSkipped("the aiortc endpoint did not start")
        with link(case):
            share = start_share(name, f"http://127.0.0.1:{port}/whip", case)
            code = end_share(share)
        time.sleep(1.0)  # its stats file is rewritten twice a second
        lines = share.lines()
        video = last_session(stats_path).get("video") or {}
        sent = lines[-1]["video"]["framesSent"] if lines else 0
        size, frames = most_common(video.get("sizes") or {})
        first = video.get("firstFrameSeconds")
        arrived = Arrived(video.get("framesDecoded", 0), video.get("framesDecoded", 0), sent, size, frames, first,
                          f"{first} s after the POST" if first is not None else "never")
        judge(name, case, code, lines, arrived, share)
    finally:
        if share and share.process.poll() is None:
            share.process.kill()
        stop(endpoint)


def chromium_gate(name, case):
    receiver = WHIPReceiver(name)
    share = None
    try:
        with link(case):
            if not receiver.open():
                raise GateSkipped("Chromium's receiver page did not come up")
            share = start_share(name, receiver.endpoint, case)
            reports, session = follow(share, receiver)
            code = share.finish()
        lines = share.lines()
        judge(name, case, code, lines, chromium_arrived(lines, reports, session), share)
    finally:
        if share and share.process.poll() is None:
            share.process.kill()
        receiver.close()


def follow(share, receiver):
    """Polls the page's stats every POLL s while the share runs and 1.5 s after: ([(seen, the
    page's session stats, deleted)] one per change, the session)."""
    reports, session, ended = [], {}, None
    while ended is None or time.time() < ended + 1.5:
        if ended is None and share.process.poll() is not None:
            ended = time.time()
        now = time.time()
        session = receiver.session()
        stats = session.get("stats")
        if stats and (not reports or reports[-1][1] != stats):
            reports.append((now, stats, bool(session.get("deleted"))))
        time.sleep(POLL)
    return reports, session


def chromium_arrived(lines, reports, session):
    videos = [(seen, (stats.get("video") or {}), deleted) for seen, stats, deleted in reports]
    decoded = max((v.get("framesDecoded") or 0 for _, v, _ in videos), default=0)
    # The last report before DELETE, against what we had sent by then.
    before = [(seen, v) for seen, v, deleted in videos if not deleted and v]
    last = before[-1][1] if before else {}
    fraction_decoded = last.get("framesDecoded") or 0
    final_video = lines[-1]["video"] if lines else {}
    fraction_sent = max(0.0, (final_video.get("framesSent") or 0)
                        - (final_video.get("fpsSent") or 0) * (REPORT_INTERVAL + POLL))
    sizes, previous = Counter(), 0
    for _, v, _ in videos:
        count = v.get("framesDecoded") or 0
        if count > previous:
            sizes[f"{v.get('frameWidth')}x{v.get('frameHeight')}"] += count - previous
            previous = count
    size, frames = most_common(sizes)
    final = videos[-1][1] if videos else {}
    seen = (f"Chromium: freezes {final.get('freezeCount')} ({final.get('totalFreezesDuration')} s), packets lost "
            f"{final.get('packetsLost')}, NACKs sent {final.get('nackCount')}, frames dropped {final.get('framesDropped')}")
    created = session.get("created")
    first = next((seen for seen, v, _ in videos if (v.get("framesDecoded") or 0) > 0), None)
    if first is None or created is None:
        return Arrived(decoded, fraction_decoded, fraction_sent, size, frames, None, "never", seen)
    without = [seen for seen, v, _ in videos if seen < first]
    low = (without[-1] if without else created) - created
    # Judged as the first frame's time: the report's, less the page's report interval.
    note = f"seen in a report {first - created:.2f} s after the POST (the last report without one at {low:.2f} s)"
    return Arrived(decoded, fraction_decoded, fraction_sent, size, frames, first - created - REPORT_INTERVAL, note, seen)


def judge(name, case, code, lines, arrived, share):
    last = lines[-1] if lines else {}
    video = last.get("video") or {}
    span = max(SECONDS, last.get("t") or 0)
    fps = arrived.decoded / span
    verdicts, figures = [code == 0], []
    figures.append(f"decoded {arrived.decoded} frames = {fps:.1f} fps over {span:.1f} s (needs >= {case.min_fps})")
    verdicts.append(fps >= case.min_fps)
    fraction = arrived.fraction_decoded / arrived.fraction_sent if arrived.fraction_sent else 0.0
    notes = [f"needs >= {case.min_fraction:.0%}"] if case.min_fraction is not None else []
    if case.receiver == "chromium":
        notes.append(f"Chromium's last report before DELETE; we sent {video.get('framesSent')} in all")
    if case.min_fraction is not None:
        verdicts.append(fraction >= case.min_fraction)
    figures.append(f"{arrived.fraction_decoded} of {arrived.fraction_sent:.0f} sent frames decoded = {fraction:.0%}"
                   + (f" ({'; '.join(notes)})" if notes else ""))
    size_note = f"most decoded at {arrived.size} ({arrived.size_frames} frames)"
    if case.width is not None:
        verdicts.append(arrived.size.split("x")[0] == str(case.width))
        size_note += f" (needs {case.width} wide)"
    figures.append(size_note)
    kbps, at = worst_second(lines)
    if case.rate_kbit:
        worst = f"worst second after 2 s sent {kbps:.0f} kbit/s at t={at:.0f}" if kbps is not None else "no second after 2 s"
        if case.cap is not None:
            cap = case.cap * case.rate_kbit
            verdicts.append(kbps is not None and kbps <= cap)
            figures.append(f"{worst} (needs <= {cap:.0f} = {case.cap} x link {case.rate_kbit} kbit/s)")
        else:
            figures.append(f"{worst} (link {case.rate_kbit} kbit/s, not judged here)")
    if case.first_frame is not None:
        verdicts.append(arrived.first_frame is not None and arrived.first_frame <= case.first_frame)
        allowance = f", so a report by {case.first_frame + REPORT_INTERVAL} s passes" if case.receiver == "chromium" else ""
        figures.append(f"first frame decoded: {arrived.first_note} (needs <= {case.first_frame} s{allowance})")
    rtx, packets = video.get("rtxSent", 0), video.get("packetsSent", 0)
    share_rtx = rtx / packets if packets else 0.0
    rtx_note = (f"RTX {rtx} / {packets} media packets = {share_rtx:.1%} ({rtx / (rtx + packets) if rtx + packets else 0:.1%} "
                f"of all video packets), NACKs received {video.get('nacksReceived')}")
    if case.max_rtx is not None:
        verdicts.append(packets > 0 and share_rtx < case.max_rtx)
        figures.append(f"{rtx_note} (needs < {case.max_rtx:.0%})")
    else:
        figures.append(rtx_note)
    ours = (f"ours at the end: target {video.get('targetKbps')} kbit/s, sending {video.get('bitrateKbps')} kbit/s, "
            f"{video.get('width')}x{video.get('height')} at {video.get('fpsSent') or 0:.1f} fps, limited by "
            f"{video.get('limitedBy')}, fraction lost {(last.get('connection') or {}).get('fractionLost')}, "
            f"PLI {video.get('pliReceived')}, keyframes {video.get('keyframes')}")
    if "rtxSuppressed" in video:
        ours += f", RTX suppressed {video['rtxSuppressed']}"
    if last.get("congestion") is not None:
        ours += f", congestion {json.dumps(last['congestion'], separators=(',', ':'))[:300]}"
    figures.append(ours)
    if arrived.seen:
        figures.append(arrived.seen)
    figures.append(f"link {link_name(case)}; exit {code}")
    ok = all(verdicts)
    record(name, ok, "; ".join(figures))
    if not ok:
        print(share.log()[-1500:])


def gate(name):
    case = CASES[name]
    return lambda: (aiortc_gate if case.receiver == "aiortc" else chromium_gate)(name, case)


def room_detail_then_motion():
    name = "room-detail-then-motion"
    case = CASES["aiortc-detail-1500"]._replace(receiver="room")
    server = sharer = viewer = None
    with link(case):
        try:
            server = Server("links", state=False, log=os.path.join(WORK, f"{name}.serve.log"))
            invite = server.start()
            sharer = Participant("ana", ["share", "--room", invite, "--size", "1920x1080", "--fps", "30",
                                         "--policy", "detail", "--no-audio"],
                                 os.path.join(WORK, f"{name}.ana.jsonl"), os.path.join(WORK, f"{name}.ana.log"),
                                 typing=True)
            viewer = Participant("bo", ["watch", invite], os.path.join(WORK, f"{name}.bo.jsonl"),
                                 os.path.join(WORK, f"{name}.bo.log"))
            screen = lambda: viewer.peer("ana").get("screen") or {}
            detail = wait_for(lambda: screen().get("width") == 1920 and screen().get("framesDecoded", 0) > 5 and screen(), 40)
            mid = (detail or {}).get("mid")
            sharer.type("policy motion")
            motion = wait_for(lambda: 0 < screen().get("width", 0) <= 1280 and screen(), 10)
            before = screen().get("framesDecoded", 0)
            time.sleep(5)
            after = screen()
            fps = (after.get("framesDecoded", 0) - before) / 5
            renewed = (viewer.last() or {}).get("connectionsRenewed", 0) + (sharer.last() or {}).get("connectionsRenewed", 0)
            said = "Send policy: motion and video (1 connection)" in sharer.output()
            ok = (bool(detail) and bool(motion) and after.get("mid") == mid and fps >= 20 and renewed == 0 and said)
            record(name, ok, f"detail: {'decoded 1920 wide' if detail else 'never 1920 wide'} "
                             f"({(detail or screen()).get('width')}x{(detail or screen()).get('height')}); after 'policy motion' "
                             f"(said: {said}): {after.get('width')}x{after.get('height')} at {fps:.1f} fps over 5 s; "
                             f"mid {mid!r} then {after.get('mid')!r}; connections renewed {renewed}; link {link_name(case)}")
            if not ok:
                print(sharer.output()[-1500:])
        finally:
            for member in (viewer, sharer):
                if member:
                    member.stop()
            if server:
                server.stop()


GATES = [(name, gate(name)) for name in CASES] + [("room-detail-then-motion", room_detail_then_motion)]


def main():
    chosen = choose("links", [name for name, _ in GATES])
    run_gates(GATES, chosen)
    return finish()


if __name__ == "__main__":
    sys.exit(main())
