#!/usr/bin/python3
"""A GStreamer `webrtcbin` WHIP sender: the peer `make bench`'s link table sets beside sharectl.

    /usr/bin/python3 scripts/peers/gst_whip_send.py --whip URL --codec h264|vp8 --kbps N
        [--size 1920x1080] [--fps 30] [--duration 20] [--stats PATH] [--pipewire-node ID]

It sends `videotestsrc` (pattern `ball` over a still background with a moving `smpte` inset: a
screen-like mix of still and moving content) encoded by x264 or libvpx at a fixed bitrate (`--kbps`):
Debian 12 has no gst-plugins-rs and so no `rtpgccbwe`, so a GStreamer sender here is told the
link's rate by hand. `--pipewire-node ID` takes the picture from a PipeWire video node instead
(`pipewiresrc`; `--size` is then the node's), the one sharectl shares beside it in the benchmark,
so both senders encode the same frames and the machine carries the same producer for each. The
offer is POSTed once ICE gathering is complete (no trickle), the answer set, and the session
DELETEd at the end. `--stats` gets one JSON line a second: {t, bytesSent,
framesSent} from the payloader's and webrtcbin's figures.

libnice leaves loopback out of its gathering: on a machine (or network namespace) with only
loopback it offers no candidate. scripts/bench_links.py gives its namespace a dummy interface.

Uses the system Python (python3-gi, gir1.2-gst-plugins-bad-1.0), not the gates' virtualenv.
"""
import argparse
import json
import sys
import time
import urllib.request

import gi

gi.require_version("Gst", "1.0")
gi.require_version("GstWebRTC", "1.0")
gi.require_version("GstSdp", "1.0")
from gi.repository import GLib, Gst, GstSdp, GstWebRTC  # noqa: E402


# The test picture, also what scripts/bench_links.py --content ball puts into PipeWire for sharectl.
TEST_PICTURE = "videotestsrc is-live=true pattern=ball motion=sweep background-color=0xff303848"


def pipeline_text(codec, kbps, width, height, fps, node=None):
    if node is None:
        source = (f"{TEST_PICTURE} "
                  f"! video/x-raw,width={width},height={height},framerate={fps}/1 ! videoconvert ! video/x-raw,format=I420")
    else:
        source = f"pipewiresrc path={node} do-timestamp=true ! videoconvert ! video/x-raw,format=I420"
    if codec == "h264":
        encode = (f"x264enc tune=zerolatency speed-preset=veryfast bitrate={kbps} key-int-max={fps * 10} "
                  f"vbv-buf-capacity=300 ! video/x-h264,profile=constrained-baseline "
                  f"! rtph264pay name=pay config-interval=-1 pt=96 aggregate-mode=zero-latency "
                  f"! application/x-rtp,media=video,encoding-name=H264,payload=96,clock-rate=90000")
    else:
        encode = (f"vp8enc deadline=1 cpu-used=8 end-usage=cbr target-bitrate={kbps * 1000} "
                  f"keyframe-max-dist={fps * 10} error-resilient=partitions "
                  f"! rtpvp8pay name=pay pt=96 ! application/x-rtp,media=video,encoding-name=VP8,payload=96,"
                  f"clock-rate=90000")
    return f"webrtcbin name=send bundle-policy=max-bundle {source} ! {encode} ! send."


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--whip", required=True)
    parser.add_argument("--codec", choices=["h264", "vp8"], default="h264")
    parser.add_argument("--kbps", type=int, required=True)
    parser.add_argument("--size", default="1920x1080")
    parser.add_argument("--fps", type=int, default=30)
    parser.add_argument("--duration", type=float, default=20)
    parser.add_argument("--stats")
    parser.add_argument("--pipewire-node", type=int)
    args = parser.parse_args()
    width, height = (int(v) for v in args.size.split("x"))

    Gst.init(None)
    pipe = Gst.parse_launch(pipeline_text(args.codec, args.kbps, width, height, args.fps, args.pipewire_node))
    webrtc = pipe.get_by_name("send")
    pay = pipe.get_by_name("pay")
    loop = GLib.MainLoop()
    state = {"location": None, "error": None, "start": None, "posted": False, "candidates": []}
    stats_file = open(args.stats, "w") if args.stats else None

    def fail(message):
        state["error"] = message
        loop.quit()

    def post_offer():
        if state["posted"]:
            return False
        state["posted"] = True
        offer = webrtc.get_property("local-description").sdp.as_text()
        # webrtcbin (1.22) on a host with only loopback may never report gathering complete: the
        # candidates it gave so far go in the offer, each once, at the end of the first media
        # section (everything is bundled on it).
        lines = offer.replace("\r\n", "\n").strip("\n").split("\n")
        have = {line for line in lines if line.startswith("a=candidate:")}
        extra = [f"a={c}" for m, c in state["candidates"] if f"a={c}" not in have and m == 0]
        if extra:
            media = [i for i, line in enumerate(lines) if line.startswith("m=")]
            end = media[1] if len(media) > 1 else len(lines)
            lines[end:end] = extra + ["a=end-of-candidates"]
        offer = "\r\n".join(lines) + "\r\n"
        request = urllib.request.Request(args.whip, data=offer.encode(), method="POST",
                                         headers={"Content-Type": "application/sdp"})
        try:
            with urllib.request.urlopen(request, timeout=10) as response:
                answer = response.read().decode()
                location = response.headers.get("Location")
        except Exception as error:  # noqa: BLE001 — any failure ends the run with its reason
            fail(f"WHIP POST failed: {error}")
            return False
        state["location"] = urllib.request.urljoin(args.whip, location) if location else None
        _, message = GstSdp.SDPMessage.new_from_text(answer)
        description = GstWebRTC.WebRTCSessionDescription.new(GstWebRTC.WebRTCSDPType.ANSWER, message)
        def answered(promise, _, __):
            reply = promise.get_reply()
            if reply is not None and reply.has_field("error"):
                GLib.idle_add(fail, f"webrtcbin refused the answer: {reply.get_value('error')}")

        webrtc.emit("set-remote-description", description, Gst.Promise.new_with_change_func(answered, None, None))
        # The answer's candidates, given to ICE one by one (webrtcbin 1.22 does not take them from
        # the SDP); all on the first media section, which carries the bundle.
        for line in answer.replace("\r\n", "\n").split("\n"):
            if line.startswith("a=candidate:"):
                webrtc.emit("add-ice-candidate", 0, line[2:])
        state["start"] = time.time()
        GLib.timeout_add(1000, report)
        GLib.timeout_add(int(args.duration * 1000), loop.quit)
        return False

    def on_gathering(element, _):
        if element.get_property("ice-gathering-state") == GstWebRTC.WebRTCICEGatheringState.COMPLETE:
            GLib.idle_add(post_offer)

    def on_candidate(_, mline, candidate):
        state["candidates"].append((mline, candidate))

    def on_offer(promise, _, __):
        reply = promise.get_reply()
        offer = reply.get_value("offer")
        webrtc.emit("set-local-description", offer, Gst.Promise.new())
        # Gathering on loopback takes milliseconds; its "complete" may never come (see post_offer).
        GLib.timeout_add(1500, post_offer)

    def on_negotiation(element):
        # NACK and RTX on (webrtcbin's are off unless asked): a lost packet is repaired instead of
        # costing the picture until the next keyframe.
        transceiver = element.emit("get-transceiver", 0)
        if transceiver is not None:
            transceiver.set_property("do-nack", True)
        promise = Gst.Promise.new_with_change_func(on_offer, element, None)
        element.emit("create-offer", None, promise)

    def report():
        if stats_file is None:
            return True
        figures = pay.get_property("stats")
        line = {"t": round(time.time() - state["start"], 2),
                "bytesSent": None, "framesSent": None,
                "rtpPackets": figures.get_value("seqnum") if figures else None}
        promise = Gst.Promise.new()
        webrtc.emit("get-stats", None, promise)
        promise.wait()
        reply = promise.get_reply()
        if reply is not None:
            def each(_, value, __):
                if isinstance(value, Gst.Structure) and value.get_name() == "application/x-webrtc-stats":
                    kind = value.get_value("type")
                    if kind == GstWebRTC.WebRTCStatsType.OUTBOUND_RTP:
                        line["bytesSent"] = value.get_value("bytes-sent")
                        line["packetsSent"] = value.get_value("packets-sent")
                return True
            reply.foreach(each, None)
        stats_file.write(json.dumps(line) + "\n")
        stats_file.flush()
        return True

    webrtc.connect("on-negotiation-needed", on_negotiation)
    webrtc.connect("notify::ice-gathering-state", on_gathering)
    webrtc.connect("on-ice-candidate", on_candidate)
    bus = pipe.get_bus()
    bus.add_signal_watch()
    bus.connect("message::error", lambda _, m: fail(f"GStreamer: {m.parse_error()[0].message}"))
    pipe.set_state(Gst.State.PLAYING)
    GLib.timeout_add(15000, lambda: state["start"] is None and fail("no answer within 15 s") or False)
    loop.run()
    pipe.set_state(Gst.State.NULL)
    if state["location"]:
        try:
            urllib.request.urlopen(urllib.request.Request(state["location"], method="DELETE"), timeout=5).close()
        except Exception:  # noqa: BLE001
            pass
    if state["error"]:
        print(f"gst_whip_send: {state['error']}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
