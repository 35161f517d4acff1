#!/usr/bin/env python3
"""Janus room gates: rooms of `sharectl serve --sfu janus`, whose media runs on a Janus VideoRoom
(Debian's janus 1.1.2) behind the room server, every participant reaching Janus only through the
server's token-checked door (/janus/ROOM?t=TOKEN). Inside the gates' network namespace; Janus
gathers only on j0's 127.0.0.2 (lib/janus.py says why), so sharectl offers candidates there too
(`--ice-interface j0`). The last line is "N passed, N failed".

  door       `serve --sfu janus` with rooms "door-a" and "door-b" on a Janus of its own: the room's
             `/sfu` answer names its door, its VideoRoom and a PIN that is HMAC-SHA-256 of the
             token (32 hex digits); a wrong token is refused (403) at `/sfu` and at the door. Through
             door-a's door (a WebSocket, `janus-protocol`) a session and a VideoRoom handle are
             made and the room's participants listed (Janus's own answers); listing door-b's,
             making a room, ending door-a, and attaching another plugin are each refused with a
             Janus-shaped 403 under their transactions.
             The room page is the Janus one, with Debian's janus.js served beside it.
  room       `serve --sfu janus --janus-interface j0` starts a Janus of its own. sharectl "Ann"
             shares a synthetic 1280x720 screen and a tone into the room (`share --room`: one
             publisher, three simulcast layers h, m, l); headless Chromium "Bob" opens the invite
             link (the room's Janus page: Debian's janus.js served by the room server), publishes
             its fake camera and microphone and subscribes to Ann; three built-in viewers (`watch
             LINK --publisher Ann`) subscribe to her screen. Everyone decodes at least 150 frames
             of it and hears the tone (audio decoded, or Chromium's samples received); Cy and Dee
             are sent the largest layer throughout. Eve's downlink, and Chromium's for Ann's feed,
             are capped at 400 kbit/s once their ICE pairs are known (an htb class each on lo for
             the port): over her last 5 s Eve asks for the smallest layer and decodes at least
             15 fps (median) at the l layer's width, smaller than the others'; the page (its own
             layer rule, layerrule.js) ends asking for a smaller layer than the top, and decodes
             at least 10 fps there at a width under 1280. The share exits 0; once the server stops, the Janus it started has
             exited and its private folder is gone.
  two-janus  two Janus instances started by the gate; `serve --sfu janus --janus WS1 --janus WS2`
             with rooms "two-a" and "two-b": the rooms land on different instances (the server's
             own lines, and each Janus's own `list`). Ann shares into two-b for 12 s and a `watch`
             decodes at least 60 frames of it through the instance two-b is on, where Janus lists
             Ann as the room's publisher while the other instance has none. Once the server stops,
             neither Janus lists a room of it.
  ladder     the ladder through the SFU with a browser viewer: sharectl "Ann" shares a synthetic
             1280x720 screen into a `serve --sfu janus` room for 40 s; headless Chromium "Bob"
             opens the room's Janus page armed with `&fault=decoder-wedge@8`. The page is on the
             room's own socket beside Janus: it lists Ann as sharing with the mid janus:FEED of
             the feed it watches, and takes that feed as hers. 8 s after joining, its decoder of
             Ann's screen swallows every frame (an encoded transform, wedge-worker.js); its
             reports say the screen stalled; Ann's watchdog, on those reports, climbs to a
             rebuild for Bob (a step whose subject is Bob's room id), which reaches the page as a
             `restart` signal; the page subscribes afresh (a new handle, connection and
             receiver, so the wedge is gone) and decodes at least 30 frames there, no longer
             stalled. Then the page's room socket is closed under it (as a lost connection): it
             joins again with its resume key and keeps its id (a resume, not a new place). The
             share exits 0.
The sharer's watchdog with sharectl viewers (the ladder on their reports, share off and on) is
judged by the scenarios suite: wedge@janus, wedge-sticky@janus, reshare@janus.
"""
import asyncio
import hashlib
import hmac
import json
import os
import re
import statistics
import sys
import time
import urllib.error
import urllib.request

from lib.paths import WORK, rerun_in_venv_without

rerun_in_venv_without("aiohttp")  # run.sh uses the system python; aiohttp lives in the project's .venv

from lib.devtools import GRACE, Browser  # noqa: E402
from lib.janus import Janus, add_j0, watch_port  # noqa: E402
from lib.room import Participant, Server  # noqa: E402
from lib.shaping import DownlinkCap  # noqa: E402
from lib.stats import read_stats  # noqa: E402
from lib.suite import choose, finish, record, run_gates  # noqa: E402

CAP_KBIT = 400


class Sharectl(Participant):
    """`share --room` or `watch` in a room on Janus; its stats lines are the Janus paths' own
    (`share` for the sharer, `janusWatch` for a viewer)."""

    def __init__(self, prefix, name, args, kind, typing=False):
        self.kind = kind
        super().__init__(name, [*args, "--ice-interface", "j0", "--log-level", "notice"],
                         os.path.join(WORK, f"{prefix}.{name}.jsonl"), os.path.join(WORK, f"{prefix}.{name}.log"),
                         typing=typing)

    def read(self):
        """Its stats lines so far ([] before there are any)."""
        try:
            return read_stats(self.stats, self.kind, skip_broken=True)
        except OSError:
            return []

    def wait(self, timeout):
        return self.process.wait(timeout=timeout)

    def tail(self, n=1500):
        try:
            return open(self.log).read()[-n:]
        except OSError:
            return ""


def serve_lines(server, until="Open the link"):
    """The lines serve printed after the first `Room:` line, up to the one starting with `until`."""
    lines = []
    deadline = time.time() + 15
    while time.time() < deadline:
        line = server.process.stdout.readline()
        if not line:
            break
        lines.append(line.strip())
        if line.startswith(until):
            break
    return lines


def print_tails(*processes):
    """The end of each one's log, for a gate that failed."""
    for process in processes:
        if process:
            print(f"--- {process.name}\n{process.tail()}")


def stop_all(*processes):
    for process in processes:
        if process is not None and process.process.poll() is None:
            process.stop(grace=GRACE)


def room_gate():
    name = "room"
    add_j0()
    server = Server("janusroom", ["--sfu", "janus", "--janus-interface", "j0", "--log-level", "info"], state=False)
    ann = browser = None
    viewers = {}
    cap = None
    try:
        link = server.start()
        said = serve_lines(server)
        pid = next((int(m.group(1)) for line in said for m in [re.search(r"\(pid (\d+), its files in (\S+)\)", line)]
                    if m), None)
        folder = next((m.group(2) for line in said for m in [re.search(r"\(pid (\d+), its files in (\S+)\)", line)]
                       if m), None)
        ann = Sharectl("janusroom", "Ann", ["share", "--room", link, "--source", "synthetic", "--size", "1280x720",
                                             "--duration", "30"], "share")
        time.sleep(2)
        for viewer in ("Cy", "Dee", "Eve"):
            viewers[viewer] = Sharectl("janusroom", viewer, ["watch", link, "--publisher", "Ann", "--duration", "22"],
                                       "janusWatch")
        bob = {}
        cap = DownlinkCap(CAP_KBIT, [("Eve", "127.0.0.2", lambda: watch_port(viewers["Eve"].stats)),
                                     ("Bob", "127.0.0.2", lambda: bob.get("port"))])
        figures = asyncio.run(chromium_in_room(link, bob))
        codes = {viewer: process.wait(timeout=40) for viewer, process in viewers.items()}
        share_code = ann.wait(timeout=40)
    finally:
        if cap:
            cap.stop()
        stop_all(ann, *viewers.values())
        server.stop()
    janus_gone = pid is not None and not os.path.exists(f"/proc/{pid}")
    folder_gone = folder is not None and not os.path.exists(folder)
    shared = ann.read() if ann else []
    widths = {rid: {layer["width"] for line in shared for layer in (line.get("video") or {}).get("layers") or []
                    if layer["rid"] == rid and layer["width"]} for rid in ("h", "m", "l")}
    layers = (shared[-1].get("video") or {}).get("layers") or [] if shared else []
    seen = {}
    for viewer, process in viewers.items():
        lines = process.read()
        videos = [line["video"] for line in lines if line.get("video")]
        last = lines[-1] if lines else {}
        seen[viewer] = {
            "frames": (last.get("video") or {}).get("framesDecoded", 0), "audio": (last.get("audio") or {}).get(
                "framesDecoded", 0), "publisher": last.get("publisher"), "layers": sorted(
                {video.get("layer") for video in videos}, key=str), "end": videos[-5:]}
    full_ok = all(seen[v]["frames"] >= 150 and seen[v]["audio"] > 0 and seen[v]["publisher"] == "Ann"
                  and seen[v]["layers"] == [2] for v in ("Cy", "Dee"))
    eve_end = seen["Eve"]["end"]
    eve_fps = sorted(video.get("fps", 0) for video in eve_end)
    held = bool(cap and cap.held("Eve"))
    eve_ok = (held and len(eve_end) == 5 and all(video.get("layer") == 0 for video in eve_end)
              and statistics.median(eve_fps) >= 15 and eve_end[-1].get("width") in widths["l"]
              and seen["Eve"]["frames"] > 0 and seen["Eve"]["audio"] > 0)
    ann_feed = figures.get("ann") or {}
    bob_end = figures.get("annEnd") or []
    browser_ok = (figures.get("state") == "joined" and ann_feed.get("framesDecoded", 0) >= 150
                  and (ann_feed.get("audioSamplesReceived") or 0) > 0
                  and (figures.get("publishing") or {}).get("video") and cap is not None and cap.held("Bob")
                  and len(bob_end) == 5 and all(feed.get("layerAsked") is not None and feed["layerAsked"] < 2 for feed in bob_end)
                  and statistics.median(feed.get("framesPerSecond") or 0 for feed in bob_end) >= 10
                  and 0 < (ann_feed.get("frameWidth") or 0) < 1280)
    ok = (share_code == 0 and all(code == 0 for code in codes.values()) and full_ok and eve_ok and browser_ok
          and [layer["rid"] for layer in layers] == ["h", "m", "l"] and janus_gone and folder_gone)
    record(name, ok,
           f"share exit {share_code}, layers at the end "
           f"{[(layer['rid'], layer['active'], layer['width'], layer['framesSent']) for layer in layers]}; "
           f"Chromium ({figures.get('state')}, {figures.get('error')}, publishing {figures.get('publishing')}): "
           f"Ann decoded {ann_feed.get('framesDecoded')} frames, at {ann_feed.get('frameWidth')}x"
           f"{ann_feed.get('frameHeight')} at the end ({ann_feed.get('codec')}), {ann_feed.get('audioSamplesReceived')} "
           f"audio samples; capped, its last 5 s: layers asked {[feed.get('layerAsked') for feed in bob_end]}, Janus "
           f"sending {[feed.get('substream') for feed in bob_end]}, fps {[feed.get('framesPerSecond') for feed in bob_end]}"
           f"; watchers (exit {codes}): " + "; ".join(
               f"{v} {seen[v]['frames']} frames, {seen[v]['audio']} audio frames, layers asked {seen[v]['layers']}"
               for v in seen) +
           f"; Eve capped at {CAP_KBIT} kbit/s ({cap.report() if cap else 'no cap'}), her last 5 s: layers "
           f"{[video.get('layer') for video in eve_end]}, fps {eve_fps}, "
           f"{eve_end[-1].get('width') if eve_end else None} wide (layer widths {widths}); the server's Janus "
           f"(pid {pid}) gone after: {janus_gone}, its folder gone: {folder_gone}")
    if not ok:
        print(json.dumps(figures)[-1500:])
        print_tails(ann, *viewers.values())


async def chromium_in_room(link, bob):
    """Chromium "Bob" in the room for 24 s; its last figures, with Ann's feed as `ann` and that feed's
    last 5 s as `annEnd`. `bob` gets the port Ann's feed arrives on, for the cap."""
    browser = Browser("Bob", link, prefix="janusroom")
    figures = {}
    ann = []
    try:
        await browser.connect()
        deadline = time.time() + 24
        while time.time() < deadline:
            await asyncio.sleep(1)
            text = await browser.evaluate("JSON.stringify(window.janusRoomFigures ? window.janusRoomFigures() : null)")
            figures = (json.loads(text) if text else None) or figures
            feed = next((feed for feed in figures.get("feeds") or [] if feed.get("display") == "Ann"), None)
            if feed:
                ann.append(feed)
                if feed.get("localPort"):
                    bob["port"] = feed["localPort"]
    finally:
        await browser.close()
    figures["ann"] = ann[-1] if ann else None
    figures["annEnd"] = ann[-5:]
    return figures


def two_janus():
    name = "two-janus"
    first, second = Janus("two-janus-1"), Janus("two-janus-2")
    server = ann = watcher = None
    try:
        if not (first.start() and second.start()):
            record(name, False, "a Janus of the gate did not start")
            return
        server = Server("two-a", ["--sfu", "janus", "--janus", first.ws_url, "--janus", second.ws_url,
                                  "--room", "two-b"], state=False)
        server.start()
        said = serve_lines(server)
        link_b = next((line.split(" ", 1)[1] for line in said if line.startswith("Room: ") and "/r/two-b?" in line),
                      None)
        placed = {m.group(1): (m.group(2), int(m.group(3))) for line in said
                  for m in [re.match(r"Room (\S+) runs on Janus at (\S+) \(VideoRoom (\d+)\)\.", line)] if m}
        listed = {janus.ws_url: {room["room"] for room in janus.videoroom({"request": "list"}).get("list", [])}
                  for janus in (first, second)}
        b_at = first if placed.get("two-b", ("",))[0] == first.ws_url else second
        other = second if b_at is first else first
        room_b = placed.get("two-b", (None, None))[1]
        ann = Sharectl("twojanus", "Ann", ["share", "--room", link_b, "--source", "synthetic", "--size", "640x360",
                                           "--duration", "12"], "share")
        time.sleep(2)
        watcher = Sharectl("twojanus", "Cy", ["watch", link_b, "--duration", "8"], "janusWatch")
        time.sleep(4)
        publishers_b = [p.get("display") for p in b_at.publishers(room_b)] if room_b else []
        publishers_other = sum(len(other.publishers(room)) for room in listed[other.ws_url])
        watch_code = watcher.wait(timeout=30)
        share_code = ann.wait(timeout=30)
        last = (watcher.read() or [{}])[-1]
        server.stop()
        server = None
        after = {janus.ws_url: {room["room"] for room in janus.videoroom({"request": "list"}).get("list", [])}
                 for janus in (first, second)}
    finally:
        stop_all(ann, watcher)
        if server:
            server.stop()
        first.stop()
        second.stop()
    where = {room: at for room, (at, _) in placed.items()}
    numbers = {room: number for room, (_, number) in placed.items()}
    frames = (last.get("video") or {}).get("framesDecoded", 0)
    ok = (set(where) == {"two-a", "two-b"} and where["two-a"] != where["two-b"]
          and numbers["two-a"] in listed[where["two-a"]] and numbers["two-b"] in listed[where["two-b"]]
          and numbers["two-a"] not in listed[where["two-b"]] and numbers["two-b"] not in listed[where["two-a"]]
          and publishers_b == ["Ann"] and publishers_other == 0 and frames >= 60 and watch_code == 0
          and share_code == 0 and not (after[first.ws_url] | after[second.ws_url]) & set(numbers.values()))
    record(name, ok,
           f"rooms placed {placed}; Janus's own lists {({k: sorted(v) for k, v in listed.items()})}; while Ann "
           f"shared into two-b its Janus listed publishers {publishers_b}, the other {publishers_other}; the watch "
           f"of two-b decoded {frames} frames (exit {watch_code}), share exit {share_code}; rooms left on Janus "
           f"after the server stopped: {({k: sorted(v) for k, v in after.items()})}")
    if not ok:
        print_tails(ann, watcher)


async def door_checks(base, token, other_room):
    """Through door-a's door: what Janus answered and what the server refused, as
    (answers, refusals) of (what, reply)."""
    import aiohttp
    url = base.replace("http", "ws", 1) + f"/janus/door-a?t={token}"
    answers, refusals = [], []
    async with aiohttp.ClientSession() as session:
        async with session.ws_connect(url, protocols=("janus-protocol",)) as ws:
            async def ask(message):
                transaction = f"t{len(answers) + len(refusals)}"
                await ws.send_str(json.dumps({**message, "transaction": transaction}))
                while True:
                    reply = json.loads((await asyncio.wait_for(ws.receive(), 10)).data)
                    if reply.get("transaction") == transaction and reply.get("janus") != "ack":
                        return reply
            created = await ask({"janus": "create"})
            answers.append(("create", created))
            sid = created.get("data", {}).get("id")
            attached = await ask({"janus": "attach", "plugin": "janus.plugin.videoroom", "session_id": sid})
            answers.append(("attach", attached))
            hid = attached.get("data", {}).get("id")

            def message(body):
                return {"janus": "message", "session_id": sid, "handle_id": hid, "body": body}
            info = json.loads(urllib.request.urlopen(f"{base}/sfu/door-a?t={token}", timeout=5).read())
            answers.append(("listparticipants", await ask(message({"request": "listparticipants",
                                                                     "room": info["room"]}))))
            for what, request in (("another room", message({"request": "listparticipants", "room": other_room})),
                                  ("a new room", message({"request": "create", "room": 4711})),
                                  ("ending the room", message({"request": "destroy", "room": info["room"],
                                                               "secret": "guess"})),
                                  ("another plugin", {"janus": "attach", "plugin": "janus.plugin.streaming",
                                                      "session_id": sid})):
                refusals.append((what, await ask(request)))
    return answers, refusals


def door_gate():
    name = "door"
    server = Server("door-a", ["--sfu", "janus", "--room", "door-b"], state=False)
    try:
        link = server.start()
        said = serve_lines(server)
        base, token = link.split("/r/")[0], link.split("?t=")[1]
        link_b = next(line.split(" ", 1)[1] for line in said if line.startswith("Room: ") and "/r/door-b?" in line)
        info = json.loads(urllib.request.urlopen(f"{base}/sfu/door-a?t={token}", timeout=5).read())
        info_b = json.loads(urllib.request.urlopen(link_b.replace("/r/", "/sfu/"), timeout=5).read())
        pin = hmac.new(token.encode(), b"sharectl janus pin", hashlib.sha256).hexdigest()[:32]
        refused = []
        for url in (f"{base}/sfu/door-a?t=wrong", f"{base}/janus/door-a?t=wrong", f"{base}/sfu/door-b?t={token}"):
            try:
                urllib.request.urlopen(url, timeout=5)
                refused.append(200)
            except urllib.error.HTTPError as error:
                refused.append(error.code)
        page = urllib.request.urlopen(link, timeout=5).read().decode()
        script = urllib.request.urlopen(f"{base}/client/janus.js", timeout=5).status
        answers, refusals = asyncio.run(door_checks(base, token, info_b["room"]))
        still = [line for line in said if line.startswith("Room door-")]
    finally:
        server.stop()
    answered = {what: reply.get("janus") for what, reply in answers}
    listed = dict(answers).get("listparticipants", {}).get("plugindata", {}).get("data", {})
    refused_ok = all(reply.get("janus") == "error" and reply.get("error", {}).get("code") == 403
                     for _, reply in refusals)
    ok = (info.get("sfu") == "janus" and info.get("janus") == "/janus/door-a" and info.get("pin") == pin
          and info_b.get("room") != info.get("room") and refused == [403, 403, 403]
          and "/client/janus-room.js" in page and script == 200
          and answered == {"create": "success", "attach": "success", "listparticipants": "success"}
          and listed.get("room") == info.get("room") and len(refusals) == 4 and refused_ok and len(still) == 2)
    record(name, ok,
           f"/sfu: {({k: v for k, v in info.items() if k != 'pin'})}, PIN the token's HMAC: {info.get('pin') == pin}; "
           f"wrong token or room: {refused}; page the Janus one: {'/client/janus-room.js' in page}, janus.js "
           f"{script}; through the door Janus answered {answered} (room {listed.get('room')}); refused: "
           + ", ".join(f"{what} {reply.get('error', {}).get('code')} ({reply.get('error', {}).get('reason', '')[:60]})"
                       for what, reply in refusals))


def ladder_gate():
    name = "ladder"
    add_j0()
    server = Server("janusladder", ["--sfu", "janus", "--janus-interface", "j0", "--log-level", "info"], state=False)
    ann = None
    samples = []
    share_code = None
    try:
        link = server.start()
        serve_lines(server)
        ann = Sharectl("janusladder", "Ann", ["share", "--room", link, "--source", "synthetic", "--size", "1280x720",
                                               "--duration", "40"], "share")
        time.sleep(2)
        samples = asyncio.run(chromium_wedged(link))
        share_code = ann.wait(timeout=45)
    finally:
        stop_all(ann)
        server.stop()
    shared = ann.read() if ann else []
    steps = {}
    for line in shared:
        for step in ((line.get("watchdog") or {}).get("recent") or []):
            steps[step["number"]] = step
    steps = [steps[n] for n in sorted(steps)]
    last = samples[-1] if samples else {}
    presence = last.get("presence") or {}
    # a step's subject is the person's room id: Bob's, as the page was told in its welcome
    rebuilds = [step for step in steps if step["action"] == "rebuild" and step.get("subject") == presence.get("id")]
    feeds = [next((feed for feed in sample.get("feeds") or [] if feed.get("display") == "Ann"), None) for sample in samples]
    ann_person = next((person for person in presence.get("people") or [] if person.get("name") == "Ann"), {})
    feed = feeds[-1] if feeds and feeds[-1] else {}
    announced = ann_person.get("sharing") and ann_person.get("mid") == f"janus:{feed.get('id')}"
    stalled_at = next((i for i, f in enumerate(feeds) if f and f.get("screenStalled")), None)
    wedged = any("decoder-wedge" in fault for sample in samples for fault in sample.get("faults") or [])
    restarted_at = next((i for i, f in enumerate(feeds) if f and f.get("restarts", 0) >= 1), None)
    restored = (restarted_at is not None and (feed.get("framesDecoded") or 0) >= 30 and not feed.get("screenStalled")
                and feed.get("restarts", 0) >= 1)
    # the socket dropped after the repair: the page resumed its place (the same id, one welcome more)
    ids = {(sample.get("presence") or {}).get("id") for sample in samples} - {None}
    resumed = (presence.get("resumes", 0) >= 1 and presence.get("reconnects", 0) >= 1 and len(ids) == 1
               and presence.get("welcomes", 0) >= 2)
    ok = (share_code == 0 and presence.get("connected") and announced and feed.get("person") == ann_person.get("id")
          and wedged and stalled_at is not None and rebuilds and presence.get("restartsAsked", 0) >= 1 and restored
          and resumed)
    record(name, ok,
           f"share exit {share_code}; the page on the room's socket: {presence.get('connected')} as "
           f"{presence.get('id')}, people {[(p.get('name'), p.get('sharing'), p.get('mid')) for p in presence.get('people') or []]}"
           f", Ann's feed {feed.get('id')} taken as {feed.get('person')}; the page's decoder wedged: {wedged}, its report "
           f"stalled at {stalled_at} s; Ann's watchdog: "
           + ", ".join(f"{step['action']} ({step.get('subject') or ''}) at {step['t']:.1f} s" for step in steps)
           + f"; restarts asked of the page {presence.get('restartsAsked')}, its fresh subscription from {restarted_at} s, "
           f"then {feed.get('framesDecoded')} frames decoded ({feed.get('framesPerSecond')} fps, stalled "
           f"{feed.get('screenStalled')}) after {len(samples)} s; reports sent {presence.get('reportsSent')}; its room "
           f"socket dropped, then {presence.get('reconnects')} reconnect(s), {presence.get('welcomes')} welcomes, "
           f"{presence.get('resumes')} resumed, ids {sorted(ids)}, people after {[p.get('name') for p in presence.get('people') or []]}")
    if not ok:
        print(json.dumps(last)[-1500:])
        print_tails(ann)


async def chromium_wedged(link):
    """Chromium "Bob" in the room, its decoder wedged 8 s after joining the room's socket; its
    figures once a second until Ann's screen decodes again on a fresh subscription, then its room
    socket dropped once, until it has resumed (or 40 s, and at most 10 s after the drop)."""
    browser = Browser("Bob", link, extra_query="&fault=decoder-wedge@8", prefix="janusladder")
    samples = []
    dropped = None
    try:
        await browser.connect()
        deadline = time.time() + 40
        while time.time() < deadline:
            await asyncio.sleep(1)
            text = await browser.evaluate("JSON.stringify(window.janusRoomFigures ? window.janusRoomFigures() : null)")
            figures = json.loads(text) if text else None
            if not figures:
                continue
            samples.append(figures)
            feed = next((feed for feed in figures.get("feeds") or [] if feed.get("display") == "Ann"), {})
            presence = figures.get("presence") or {}
            if dropped is None and feed.get("restarts", 0) >= 1 and (feed.get("framesDecoded") or 0) >= 60:
                # the room's socket lost once: the page joins again with its resume key
                dropped = await browser.evaluate("window.janusRoomDropSocket()")
                deadline = min(deadline, time.time() + 10)
                continue
            if dropped is not None and presence.get("resumes", 0) >= 1 and presence.get("connected"):
                break
    finally:
        await browser.close()
    return samples


GATES = [("door", door_gate), ("room", room_gate), ("two-janus", two_janus), ("ladder", ladder_gate)]


def main():
    chosen = choose("janus_room", [name for name, _ in GATES])
    run_gates(GATES, chosen)
    return finish()


if __name__ == "__main__":
    sys.exit(main())
