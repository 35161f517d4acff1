#!/usr/bin/env python3
"""A proof of the Janus harness, run by hand (not a suite): in a network namespace of its own,
Janus with a VideoRoom room behind a pin, an aiortc publisher speaking Janus's WebSocket API
(moving synthetic video, a 480 Hz tone) for `--seconds`, and headless Chromium subscribed through
janus.js (lib/janus.py JanusViewer). Prints the viewer's figures and the time each step took,
checks that no janus process is left, and saves the publisher's whole WebSocket exchange.

    scripts/gates/janus_check.py [--seconds 10] [--candidates sdp|sdp+completed|trickle]
                                 [--loopback-too] [--videocodec h264,vp8]
                                 [--exchange /tmp/janus-exchange.json]

--candidates: how the publisher hands Janus its ICE candidates: inside the offer (aiortc's way),
inside the offer followed by {"janus": "trickle", "candidate": {"completed": true}}, or taken out
of the offer and sent as trickle messages, then completed. Exit 0 when the viewer decoded video at
15 fps or more and nothing was left running.
"""
import os
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from lib.paths import ROOT, rerun_in_venv_without  # noqa: E402

rerun_in_venv_without("aiohttp")
if os.environ.get("SHARECTL_IN_NETNS") != "1":
    os.execvp("unshare", ["unshare", "-n", "env", "SHARECTL_IN_NETNS=1", sys.executable, os.path.abspath(__file__),
                          *sys.argv[1:]])
subprocess.run(["ip", "link", "set", "lo", "up"], check=True)

import argparse  # noqa: E402
import array  # noqa: E402
import asyncio  # noqa: E402
import fractions  # noqa: E402
import json  # noqa: E402
import math  # noqa: E402
import time  # noqa: E402
import uuid  # noqa: E402

import aiohttp  # noqa: E402
import av  # noqa: E402
from aiortc import RTCPeerConnection, RTCSessionDescription  # noqa: E402
from aiortc.mediastreams import AudioStreamTrack, VideoStreamTrack  # noqa: E402

from lib.janus import Janus, JanusViewer  # noqa: E402

av.logging.set_level(av.logging.ERROR)  # libx264's summary on every close

WIDTH, HEIGHT = 640, 360


class MovingBars(VideoStreamTrack):
    """A light bar sweeping across a dark frame, 30 frames a second."""

    def __init__(self):
        super().__init__()
        self.count = 0

    async def recv(self):
        pts, time_base = await self.next_timestamp()
        frame = av.VideoFrame(WIDTH, HEIGHT, "yuv420p")
        x = (self.count * 8) % (WIDTH - 64)
        self.count += 1
        luma = frame.planes[0]
        row = bytes([40]) * x + bytes([220]) * 64 + bytes([40]) * (WIDTH - x - 64)
        row += bytes(luma.line_size - WIDTH)
        luma.update(row * HEIGHT)
        for plane, value in ((frame.planes[1], 100 + self.count % 56), (frame.planes[2], 150)):
            plane.update(bytes([value]) * (plane.line_size * (HEIGHT // 2)))
        frame.pts, frame.time_base = pts, time_base
        return frame


class Tone(AudioStreamTrack):
    """480 Hz at a quarter of full scale, mono 48 kHz, 20 ms frames."""

    TABLE = array.array("h", (int(8000 * math.sin(2 * math.pi * i / 100)) for i in range(100)))

    def __init__(self):
        super().__init__()
        self.phase = 0

    async def recv(self):
        silence = await super().recv()  # paces the frames and stamps pts
        samples = array.array("h", (self.TABLE[(self.phase + i) % 100] for i in range(960)))
        self.phase = (self.phase + 960) % 100
        frame = av.AudioFrame(format="s16", layout="mono", samples=960)
        frame.planes[0].update(samples.tobytes())
        frame.sample_rate, frame.pts, frame.time_base = 48000, silence.pts, fractions.Fraction(1, 48000)
        return frame


class JanusSocket:
    """Janus's WebSocket API as one publisher uses it; every message in and out goes to `log`."""

    def __init__(self, url, log, started):
        self.url, self.log, self.started = url, log, started
        self.session = self.handle = None
        self.waiting = {}            # transaction -> future of its final answer
        self.events = asyncio.Queue()  # plugin events, webrtcup, media, hangup … (no transaction of ours)

    async def open(self, http):
        self.ws = await http.ws_connect(self.url, protocols=("janus-protocol",))
        self.reader = asyncio.ensure_future(self.read())

    def note(self, direction, message):
        self.log.append({"t": round(time.time() - self.started, 3), "dir": direction, "msg": message})

    async def read(self):
        async for frame in self.ws:
            if frame.type != aiohttp.WSMsgType.TEXT:
                break
            message = json.loads(frame.data)
            self.note("recv", message)
            # A plugin request is answered twice with its transaction: an ack and an event, in
            # either order (Janus 1.1.2 sends join's and configure's event before their ack).
            future = self.waiting.get(message.get("transaction"))
            if message.get("janus") == "ack" and future is not None and not future.acks_only:
                continue  # a plugin message's answer comes later, as an event with the same transaction
            if future is not None and not future.done():
                future.set_result(message)
            else:
                await self.events.put(message)

    async def send(self, message, wait=True, acks_only=False):
        """Sends `message` (a transaction, and the session and handle, added); its answer."""
        transaction = uuid.uuid4().hex[:12]
        message = {**message, "transaction": transaction}
        if self.session and "session_id" not in message and message["janus"] != "create":
            message["session_id"] = self.session
        if self.handle and message["janus"] in ("message", "trickle", "detach", "hangup"):
            message["handle_id"] = self.handle
        future = asyncio.get_running_loop().create_future()
        future.acks_only = acks_only
        self.waiting[transaction] = future
        self.note("send", message)
        await self.ws.send_str(json.dumps(message))
        if not wait:
            return None
        answer = await asyncio.wait_for(future, 10)
        if answer.get("janus") == "error" or (answer.get("plugindata", {}).get("data", {}).get("error")):
            raise RuntimeError(f"janus refused {message}: {answer}")
        return answer

    async def keepalive(self, every=25):
        """What janus.js does: a keepalive every 25 s (Janus ends a session after 60 s of silence)."""
        while True:
            await asyncio.sleep(every)
            await self.send({"janus": "keepalive"}, wait=False)


async def publish(janus, room, pin, seconds, candidates, loopback_too, log, marks):
    started = marks["t0"]
    pc = RTCPeerConnection()
    pc.addTrack(MovingBars())
    pc.addTrack(Tone())
    async with aiohttp.ClientSession() as http:
        socket = JanusSocket(janus.ws_url, log, started)
        await socket.open(http)
        socket.session = (await socket.send({"janus": "create"}))["data"]["id"]
        socket.handle = (await socket.send({"janus": "attach", "plugin": "janus.plugin.videoroom"}))["data"]["id"]
        keepalive = asyncio.ensure_future(socket.keepalive())
        joined = await socket.send({"janus": "message", "body": {"request": "join", "ptype": "publisher", "room": room,
                                                                  "pin": pin, "display": "aiortc"}})
        await pc.setLocalDescription(await pc.createOffer())  # aiortc gathers every candidate first
        sdp = pc.localDescription.sdp
        offered = [line for line in sdp.splitlines() if line.startswith("a=candidate:")]
        print(f"publisher offers {len(offered)} candidates: " + "; ".join(line.split(" ", 4)[4] for line in offered))
        if not any(" 127.0.0.2 " in line for line in offered):
            raise RuntimeError("the publisher offers no candidate on 127.0.0.2: Janus would drop the others")
        if loopback_too:  # as sharectl offers: 127.0.0.1 as well (Janus fails to add those, and goes on)
            lines = []
            for line in sdp.split("\r\n"):
                lines.append(line)
                if line.startswith("a=candidate:"):
                    lines.append(line.replace(" 127.0.0.2 ", " 127.0.0.1 ").replace(" 2130706431 ", " 2130706430 "))
            sdp = "\r\n".join(lines)
        trickled = []  # (mid, m-line index, candidate line)
        if candidates == "trickle":
            mid, index = None, -1
            for line in sdp.split("\r\n"):
                if line.startswith("m="):
                    index += 1
                elif line.startswith("a=mid:"):
                    mid = line[6:]
                elif line.startswith("a=candidate:"):
                    trickled.append((mid, index, line[2:]))
            sdp = "\r\n".join(line for line in sdp.split("\r\n") if not line.startswith("a=candidate:")
                              and line != "a=end-of-candidates")
        marks["offer"] = time.time()
        answer = await socket.send({"janus": "message", "body": {"request": "configure", "audio": True, "video": True},
                                    "jsep": {"type": "offer", "sdp": sdp}})
        marks["answer"] = time.time()
        for mid, index, line in trickled:
            await socket.send({"janus": "trickle", "candidate": {"candidate": line, "sdpMid": mid, "sdpMLineIndex": index}},
                              acks_only=True)
        if candidates != "sdp":
            await socket.send({"janus": "trickle", "candidate": {"completed": True}}, acks_only=True)
        jsep = answer["jsep"]
        await pc.setRemoteDescription(RTCSessionDescription(jsep["sdp"], jsep["type"]))
        data = answer["plugindata"]["data"]
        print(f"joined as publisher {joined['plugindata']['data'].get('id')}; answer: {data.get('videoroom')}, "
              f"configured {data.get('configured')}, codecs {data.get('video_codec')}/{data.get('audio_codec')}; "
              f"Janus's candidates: " + "; ".join(line.split(" ", 4)[4] for line in jsep["sdp"].splitlines()
                                                   if line.startswith("a=candidate:")))
        await wait(lambda: pc.connectionState == "connected", 10)  # ICE and DTLS
        marks["ice"] = time.time()
        listed = janus.publishers(room, pin)
        print(f"room {room} lists publishers: {[(p['id'], p.get('display')) for p in listed]}")
        await asyncio.sleep(seconds)
        keepalive.cancel()
        await socket.send({"janus": "message", "body": {"request": "unpublish"}})
        await socket.send({"janus": "destroy"})
        await socket.ws.close()
        socket.reader.cancel()
    await pc.close()


async def wait(condition, timeout):
    deadline = time.time() + timeout
    while time.time() < deadline and not condition():
        await asyncio.sleep(0.05)
    if not condition():
        raise RuntimeError("timed out")


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=float, default=10)
    parser.add_argument("--candidates", choices=("sdp", "sdp+completed", "trickle"), default="sdp")
    parser.add_argument("--loopback-too", action="store_true",
                        help="offer a copy of each candidate on 127.0.0.1 too, as sharectl does")
    parser.add_argument("--videocodec", default="h264,vp8", help="the room's video codecs, in Janus's order")
    parser.add_argument("--exchange", default="/tmp/janus-exchange.json")
    args = parser.parse_args()
    os.chdir(ROOT)
    marks = {"t0": time.time()}
    janus = Janus("janus-check")
    viewer = None
    log = []
    try:
        if not janus.start():
            raise RuntimeError("Janus did not start:\n" + janus.log()[-2000:])
        marks["janus"] = time.time()
        pin = "pin-" + uuid.uuid4().hex[:6]
        room = janus.create_room(pin=pin, videocodec=args.videocodec)
        viewer = JanusViewer("janus-check", janus, room, pin)
        if not viewer.open():
            raise RuntimeError(f"the viewer page did not come up: {viewer.page()}")
        marks["page"] = time.time()
        asyncio.run(publish(janus, room, pin, args.seconds, args.candidates, args.loopback_too, log, marks))
        page = viewer.page()
    finally:
        if viewer:
            viewer.close()
        janus.stop()
        with open(args.exchange, "w") as out:
            json.dump(log, out, indent=1)
    left = janus.left_over()
    video, audio = page.get("video") or {}, page.get("audio") or {}
    first = (page["firstFrameAt"] / 1000 - marks["offer"]) if page.get("firstFrameAt") else None
    t0 = marks["t0"]
    print(f"timings: Janus up {marks['janus'] - t0:.2f} s; viewer page up {marks['page'] - marks['janus']:.2f} s "
          f"later; answer {1000 * (marks['answer'] - marks['offer']):.0f} ms after the offer; publisher connected "
          f"{marks['ice'] - marks['offer']:.2f} s after it; first frame on the page "
          f"{'-' if first is None else f'{first:.2f}'} s after it; whole run {time.time() - t0:.1f} s")
    print(f"viewer: feed {page.get('feed')}, state {page.get('state')}, ICE {page.get('iceState')}, "
          f"its candidates {page.get('answeredCandidates')}, error {page.get('error')}")
    print(f"video: {video.get('framesDecoded')} frames decoded, {video.get('frameWidth')}x{video.get('frameHeight')}, "
          f"{video.get('framesPerSecond')} fps, {video.get('codec')}, lost {video.get('packetsLost')}, "
          f"NACK {video.get('nackCount')}, PLI {video.get('pliCount')}")
    print(f"audio: {audio.get('packetsReceived')} packets, {audio.get('codec')}, energy {audio.get('totalAudioEnergy')}, "
          f"level {audio.get('audioLevel')}")
    print(f"janus processes left: {left or 'none'} (exit {janus.process.returncode}); exchange: {args.exchange}")
    ok = (video.get("framesDecoded") or 0) >= 5 * args.seconds and (video.get("framesPerSecond") or 0) >= 15 \
        and video.get("frameWidth") == WIDTH and not left and (audio.get("packetsReceived") or 0) > 0
    print("OK" if ok else "NOT OK")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
