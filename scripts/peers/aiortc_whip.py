#!/usr/bin/env python3
"""A WHIP endpoint (RFC 9725) built on aiortc: a second, independent WebRTC implementation that
receives what `sharectl share --whip` sends and says what it decoded.

    .venv/bin/python scripts/peers/aiortc_whip.py --port 8089 --stats /tmp/whip.json [--token T]

POST /whip (application/sdp) answers 201 with a Location and the SDP answer; PATCH answers 405
(this endpoint takes no trickle); DELETE /whip/<id> closes the session. The stats file is rewritten
twice a second: per session, video frames decoded with their size and codec, audio samples decoded
and level, connection state, and whether DELETE came. `video` is the first video section (the
screen, or a camera sent alone); `videos` has every video section by mid, in the offer's order, each
with its track id, frames decoded, sizes, RTP bytes received, the rate of the last second, and, a
second at a time, the rate (`kbpsHistory`), the frames decoded (`framesHistory`), and the frames
handed to the decoder (`framesAssembled`) and keyframe requests sent (`plisSent`) so far.
`firstFrameSeconds` is the seconds from the session's POST to its first decoded frame (null until
one is decoded).
"""
import argparse
import array
import asyncio
import json
import math
import os
import sys
import time
import uuid

import aioice.ice
from aiohttp import web
from aiortc import RTCPeerConnection, RTCSessionDescription

# aioice never offers 127.0.0.1; the gates run where only loopback exists. AIORTC_HOST_ADDRESSES
# (comma-separated) offers others beside it: the link benchmark's namespace has a veth address for
# a sender whose ICE leaves loopback out (GStreamer's libnice).
HOST_ADDRESSES = [a for a in os.environ.get("AIORTC_HOST_ADDRESSES", "127.0.0.1").split(",") if a]
aioice.ice.get_host_addresses = lambda use_ipv4, use_ipv6: HOST_ADDRESSES if use_ipv4 else []

sessions = {}


def session_stats(s):
    figures = {k: v for k, v in s.items() if k not in ("pc", "tasks", "videos", "video")}
    clean = lambda v: {k: x for k, x in v.items() if not k.startswith("_")}
    figures["video"] = clean(s["video"])
    figures["videos"] = [clean(v) for v in s["videos"].values()]
    return figures


def video_figures():
    return {"framesDecoded": 0, "width": 0, "height": 0, "codec": None, "sizes": {}, "firstFrameSeconds": None}


async def consume_video(v, track, created):
    while True:
        try:
            frame = await track.recv()
        except Exception:
            return
        if v["framesDecoded"] == 0:
            v["firstFrameSeconds"] = round(time.time() - created, 3)
        v["framesDecoded"] += 1
        v["width"], v["height"] = frame.width, frame.height
        sizes = v["sizes"]
        key = f"{frame.width}x{frame.height}"
        sizes[key] = sizes.get(key, 0) + 1


def count_receiver(v, receiver):
    """Counts the RTP bytes (header and payload) each video receiver takes, for its bitrate, the frames
    it hands its decoder (`framesAssembled`), and the picture loss indications it sends (`plisSent`:
    aiortc asks for a keyframe when its jitter buffer gives up on a frame, which then never reaches
    the decoder)."""
    handle = receiver._handle_rtp_packet
    send_pli = receiver._send_rtcp_pli

    async def counted_pli(media_ssrc):
        v["plisSent"] += 1
        return await send_pli(media_ssrc)

    receiver._send_rtcp_pli = counted_pli
    # Frames the jitter buffer handed to the decoder (`framesAssembled`): beside `framesDecoded`,
    # what the decoder refused (a frame whose reference was lost) against what never got that far.
    frames_in = receiver._RTCRtpReceiver__decoder_queue
    put = frames_in.put

    def counted_put(item, *args, **kwargs):
        if item is not None:
            v["framesAssembled"] += 1
        return put(item, *args, **kwargs)

    frames_in.put = counted_put

    async def counted(packet, arrival_time_ms):
        v["bytes"] += len(packet.payload) + 12 + 4 * len(packet.csrc) + packet.padding_size
        return await handle(packet, arrival_time_ms=arrival_time_ms)

    receiver._handle_rtp_packet = counted


def update_rates(now):
    for s in sessions.values():
        for v in s["videos"].values():
            last_at, last_bytes = v.pop("_last", (None, 0))
            if last_at is not None and now - last_at >= 0.9:
                v["kbps"] = round((v["bytes"] - last_bytes) * 8 / (now - last_at) / 1000)
                v["kbpsHistory"].append(v["kbps"])
                v["framesHistory"].append(v["framesDecoded"] - v.pop("_framesAt", 0))
                v["_framesAt"] = v["framesDecoded"]
                v["_last"] = (now, v["bytes"])
            else:
                v["_last"] = (last_at, last_bytes) if last_at is not None else (now, v["bytes"])


async def consume_audio(s, track):
    while True:
        try:
            frame = await track.recv()
        except Exception:
            return
        # Packed signed 16-bit samples (aiortc's Opus decoder gives s16); no numpy needed.
        pcm = array.array("h", bytes(frame.planes[0]))
        s["audio"]["samplesDecoded"] += frame.samples
        peak = float(max(max(pcm), -min(pcm))) if len(pcm) else 0.0
        level = -120.0 if peak <= 0 else 20 * math.log10(peak / 32768.0)
        s["audio"]["levelDbfs"] = max(s["audio"]["levelDbfs"], level) if s["audio"]["samplesDecoded"] > frame.samples else level


async def whip_post(request):
    token = request.app["token"]
    if token and request.headers.get("Authorization") != f"Bearer {token}":
        return web.Response(status=401, text="missing or wrong bearer token")
    if request.content_type != "application/sdp":
        return web.Response(status=415, text="offer must be application/sdp")
    offer = await request.text()
    pc = RTCPeerConnection()
    sid = uuid.uuid4().hex[:12]
    s = {
        "id": sid, "created": time.time(), "deleted": False, "state": "new",
        "video": video_figures(), "videos": {},
        "audio": {"samplesDecoded": 0, "levelDbfs": -120.0, "codec": None},
        "pc": pc, "tasks": [],
    }
    sessions[sid] = s

    @pc.on("connectionstatechange")
    async def on_state():
        s["state"] = pc.connectionState

    @pc.on("track")
    def on_track(track):
        if track.kind != "video":
            s["tasks"].append(asyncio.ensure_future(consume_audio(s, track)))
            return
        transceiver = next((t for t in pc.getTransceivers() if t.receiver.track is track), None)
        mid = transceiver.mid if transceiver else None
        v = s["videos"].setdefault(mid, {**video_figures(), "mid": mid})
        v.update({"trackId": track.id, "bytes": 0, "kbps": 0, "kbpsHistory": [], "framesHistory": [], "plisSent": 0,
                  "framesAssembled": 0})
        if transceiver:
            count_receiver(v, transceiver.receiver)
        # The first video section keeps the old `video` figures.
        first = next((t.mid for t in pc.getTransceivers() if t.kind == "video"), None)
        if mid == first:
            s["video"] = v
        s["tasks"].append(asyncio.ensure_future(consume_video(v, track, s["created"])))

    try:
        await pc.setRemoteDescription(RTCSessionDescription(sdp=offer, type="offer"))
        if request.app["dtls_server"]:
            # Answer `a=setup:passive` and take the DTLS server's part (aiortc's own choice for an
            # `actpass` offer is the client's): the cipher suite then follows this endpoint's ECDSA
            # certificate, and a client with an RSA one (GStreamer's webrtcbin) can connect.
            for transceiver in pc.getTransceivers():
                if transceiver._transport._role == "auto":
                    transceiver._transport._set_role("server")
        await pc.setLocalDescription(await pc.createAnswer())
    except Exception as error:  # a malformed offer is the client's fault
        await pc.close()
        del sessions[sid]
        return web.Response(status=400, text=f"offer refused: {error}")
    for transceiver in pc.getTransceivers():
        negotiated = [c.mimeType for c in getattr(transceiver, "_codecs", [])]
        if negotiated and transceiver.kind == "video":
            s["videos"].setdefault(transceiver.mid, {**video_figures(), "mid": transceiver.mid})["codec"] = negotiated[0]
        elif negotiated:
            s[transceiver.kind]["codec"] = negotiated[0]
    first = next((t.mid for t in pc.getTransceivers() if t.kind == "video"), None)
    if first in s["videos"]:
        s["video"] = s["videos"][first]
    answer = pc.localDescription.sdp
    if request.app["tamper_fingerprint"]:
        answer = tamper_fingerprint(answer)
    headers = {"Location": f"/whip/{sid}", "ETag": f'"{sid}"'}
    if request.app["link_turn"]:
        uri, username, credential = request.app["link_turn"]
        headers["Link"] = (f'<{uri}>; rel="ice-server"; username="{username}"; '
                           f'credential="{credential}"; credential-type="password"')
    return web.Response(status=201, text=answer, content_type="application/sdp", headers=headers)


def tamper_fingerprint(sdp):
    """The answer with one byte of every a=fingerprint changed (for the refusal gate)."""
    lines = []
    for line in sdp.split("\r\n"):
        if line.startswith("a=fingerprint:"):
            head, _, digest = line.rpartition(" ")
            first = format((int(digest[:2], 16) ^ 0xFF), "02X")
            line = f"{head} {first}{digest[2:]}"
        lines.append(line)
    return "\r\n".join(lines)


async def whip_patch(request):
    return web.Response(status=405, text="this endpoint takes no trickle", headers={"Allow": "POST, DELETE"})


async def whip_delete(request):
    s = sessions.get(request.match_info["sid"])
    if not s:
        return web.Response(status=404, text="no such session")
    s["deleted"] = True
    await s["pc"].close()
    write_stats(request.app)
    return web.Response(status=200)


def write_stats(app):
    path = app["stats"]
    if not path:
        return
    tmp = path + ".tmp"
    with open(tmp, "w") as f:
        json.dump({"sessions": [session_stats(s) for s in sessions.values()]}, f)
    os.replace(tmp, path)


async def stats_loop(app):
    while True:
        update_rates(time.time())
        write_stats(app)
        await asyncio.sleep(0.5)


async def start_background(app):
    app["stats_task"] = asyncio.ensure_future(stats_loop(app))


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=8089)
    parser.add_argument("--stats", default="")
    parser.add_argument("--token", default="")
    parser.add_argument("--link-turn", nargs=3, metavar=("URI", "USERNAME", "CREDENTIAL"),
                        help="name a TURN server in a Link: rel=\"ice-server\" header of every 201")
    parser.add_argument("--tamper-fingerprint", action="store_true",
                        help="answer with a wrong DTLS fingerprint (the client must refuse to connect)")
    parser.add_argument("--dtls-server", action="store_true",
                        help="answer a=setup:passive and be the DTLS server (aiortc's cipher list is ECDSA only, "
                             "so a client whose certificate is RSA needs this endpoint to pick the suite)")
    args = parser.parse_args()
    app = web.Application()
    app["stats"], app["token"], app["tamper_fingerprint"] = args.stats, args.token, args.tamper_fingerprint
    app["link_turn"], app["dtls_server"] = args.link_turn, args.dtls_server
    app.router.add_post("/whip", whip_post)
    app.router.add_patch("/whip/{sid}", whip_patch)
    app.router.add_delete("/whip/{sid}", whip_delete)
    app.on_startup.append(start_background)
    print(f"aiortc WHIP endpoint on http://{args.host}:{args.port}/whip", flush=True)
    web.run_app(app, host=args.host, port=args.port, print=None, shutdown_timeout=1)


if __name__ == "__main__":
    sys.exit(main())
