#!/usr/bin/env python3
"""Room server gates: `sharectl serve` and its browser client with two headless Chromium
participants, inside a network namespace where only loopback exists (scripts/gates/run.sh
enters it). The browsers' state is read through the DevTools protocol (window.sharectlState).
Each gate prints PASS or FAIL with the figures it judged; the last line is "N passed, N failed".

  call            Ana and Bo join from the invite link: each decodes the other's camera and hears
                  the other's audio; Ana shares her screen (Chromium's fake display capture) and
                  Bo decodes it on the stage, captioned "Ana's screen".
  bad-token       a WebSocket and a page load with a wrong token are refused (403), the right
                  token's page loads (200); the call goes on.
  flood           a raw WebSocket participant sends malformed messages (each answered with an
                  error), an oversized frame (closed 1009) and, on a second connection, a flood
                  (closed 1008); the two browsers keep decoding throughout.
  signalling-cut  both browsers' signalling is cut for 2 s and comes back: they resume their
                  places, media flows throughout, nobody shares again or renegotiates from scratch.
  server-restart  the server is killed and restarted 2 s later on the same port with the same
                  --state file: everyone resumes, media flows throughout, nobody shares again.
  stall-report    Ana's screen stops sending frames (no renegotiation): after 4 s Bo reports
                  screenStalled in its media reports and Ana hears it; frames again clear it.
  share-off       Ana stops sharing: Bo's stage empties (no frozen last frame, no stall report);
                  she shares again and Bo decodes her screen on the stage once more.
  renew-glare     both pages make their connection to each other anew at the same instant, as
                  each would after it failed: the two new offers cross, and Bo (the larger id)
                  drops his and answers Ana's. On the new connection each decodes the other's
                  camera again and Bo Ana's screen. Tried up to three times until the offers
                  did cross (Ana's page says it kept its own offer); never crossing is a failure.
  tls             a second server with --tls-cert/--tls-key (a certificate openssl makes for the
                  gate): its link is https, the page loads over HTTPS and a participant joins over WSS.

The gates run in this order on one call; naming some runs the call first and then those.
"""
import asyncio
import json
import os
import subprocess
import sys
import time

from lib.paths import SHARECTL, WORK, rerun_in_venv_without

rerun_in_venv_without("aiohttp")  # run.sh uses the system python; aiohttp lives in the project's .venv
import aiohttp  # noqa: E402

from lib.devtools import GRACE, Browser  # noqa: E402
from lib.ports import free_port  # noqa: E402
from lib.processes import stop  # noqa: E402
from lib.room import Server as RoomServer  # noqa: E402
from lib.suite import choose, finish, record, record_broken  # noqa: E402
from lib.waits import wait_for_async  # noqa: E402


def Server():
    return RoomServer("gate", ["--log-level", "debug"])


def peer_of(state, name):
    for ident, info in ((state or {}).get("participants") or {}).items():
        if info.get("name") == name:
            return ident, info
    return None, None


async def figures(ana, bo):
    """Decoded counts each way, read once from both pages."""
    a, b = await ana.state(), await bo.state()
    _, bo_at_ana = peer_of(a, "Bo")
    _, ana_at_bo = peer_of(b, "Ana")
    return {
        "ana": a, "bo": b,
        "ana_cam_at_bo": ((ana_at_bo or {}).get("camera") or {}).get("framesDecoded", 0),
        "bo_cam_at_ana": ((bo_at_ana or {}).get("camera") or {}).get("framesDecoded", 0),
        "ana_screen_at_bo": ((ana_at_bo or {}).get("screen") or {}).get("framesDecoded", 0),
        "bo_hears_ana": bool(((ana_at_bo or {}).get("audio") or {}).get("hearing")),
        "ana_hears_bo": bool(((bo_at_ana or {}).get("audio") or {}).get("hearing")),
        "ana_at_bo": ana_at_bo or {}, "bo_at_ana": bo_at_ana or {},
    }


def flowing(before, after):
    """Every stream decoded more frames between two readings."""
    keys = ["ana_cam_at_bo", "bo_cam_at_ana", "ana_screen_at_bo"]
    return all(after[k] > before[k] for k in keys), ", ".join(f"{k} {before[k]}→{after[k]}" for k in keys)


class Call:
    def __init__(self):
        self.server = Server()
        self.ana = None
        self.bo = None
        self.sharing = False

    async def start(self):
        url = self.server.start()
        # Ana shares her screen (getDisplayMedia with Chromium's fake capture) once joined.
        self.ana = Browser("Ana", url, "&share=1")
        await self.ana.connect()
        await wait_for_async(lambda: self._joined(self.ana), 20)
        self.bo = Browser("Bo", url)
        await self.bo.connect()
        return url

    async def _joined(self, browser):
        state = await browser.state()
        return state and state.get("joined")

    async def close(self):
        for browser in (self.ana, self.bo):
            if browser:
                await browser.close()
        self.server.stop()


async def gate_call(call):
    name = "call"

    async def ready():
        f = await figures(call.ana, call.bo)
        ok = (f["ana_cam_at_bo"] > 30 and f["bo_cam_at_ana"] > 30 and f["bo_hears_ana"] and f["ana_hears_bo"]
              and f["ana_screen_at_bo"] > 30)
        return f if ok else None

    f = await wait_for_async(ready, 45) or await figures(call.ana, call.bo)
    caption = await call.bo.evaluate(
        "Array.from(document.querySelectorAll('#stage figcaption')).map(c => c.textContent).join('|')")
    ana_state = f["ana"] or {}
    call.sharing = ana_state.get("local", {}).get("screen", False)
    ok = (f["ana_cam_at_bo"] > 30 and f["bo_cam_at_ana"] > 30 and f["bo_hears_ana"] and f["ana_hears_bo"]
          and f["ana_screen_at_bo"] > 30 and caption == "Ana's screen")
    cam_b, cam_a = f["ana_at_bo"].get("camera", {}), f["bo_at_ana"].get("camera", {})
    scr = f["ana_at_bo"].get("screen", {})
    record(name, ok, f"Bo decodes Ana's camera {cam_b.get('framesDecoded')} frames at {cam_b.get('width')}x{cam_b.get('height')}, "
                     f"Ana decodes Bo's {cam_a.get('framesDecoded')} at {cam_a.get('width')}x{cam_a.get('height')}; "
                     f"hearing: Bo hears Ana {f['bo_hears_ana']} (energy {f['ana_at_bo'].get('audio', {}).get('energy', 0):.4f}), "
                     f"Ana hears Bo {f['ana_hears_bo']}; Ana's screen at Bo: {scr.get('framesDecoded')} frames "
                     f"{scr.get('width')}x{scr.get('height')}, stage caption {caption!r}")
    if not ok:
        print("  Ana:", json.dumps(ana_state)[:3000])
        print("  Bo:", json.dumps(f["bo"])[:3000])


async def gate_bad_token(call):
    name = "bad-token"
    url = call.server.url
    wrong = url.split("?t=")[0] + "?t=" + "A" * 22
    ws_wrong = wrong.replace("http://", "ws://").replace("/r/", "/ws/")
    before = await figures(call.ana, call.bo)
    statuses = {}
    async with aiohttp.ClientSession() as session:
        try:
            await session.ws_connect(ws_wrong)
            statuses["ws"] = 101
        except aiohttp.WSServerHandshakeError as error:
            statuses["ws"] = error.status
        try:
            await session.ws_connect(ws_wrong.split("?")[0])
            statuses["ws-no-token"] = 101
        except aiohttp.WSServerHandshakeError as error:
            statuses["ws-no-token"] = error.status
        try:
            await session.ws_connect(ws_wrong.replace("/ws/gate", "/ws/other"))
            statuses["ws-other-room"] = 101
        except aiohttp.WSServerHandshakeError as error:
            statuses["ws-other-room"] = error.status
        async with session.get(wrong) as response:
            statuses["page"] = response.status
        async with session.get(url) as response:
            statuses["page-right-token"] = response.status
    await asyncio.sleep(2)
    after = await figures(call.ana, call.bo)
    still, detail = flowing(before, after)
    ok = (statuses["ws"] == 403 and statuses["ws-no-token"] == 403 and statuses["ws-other-room"] == 403
          and statuses["page"] == 403 and statuses["page-right-token"] == 200 and still)
    record(name, ok, f"statuses {statuses}; call goes on: {detail}")


async def gate_flood(call):
    name = "flood"
    ws_url = call.server.url.replace("http://", "ws://").replace("/r/", "/ws/")
    before = await figures(call.ana, call.bo)
    errors = 0
    malformed = ["", "{", "null", "[1,2]", '{"type":7}', '{"type":"dance"}', '{"type":"signal","to":"p1"}',
                 '{"type":"signal","to":"p999","kind":"offer","sdp":"v=0"}', '{"type":"share","on":"yes"}',
                 '{"type":"media","screens":{}}', '{"type":"join","name":""}', '\u0000\u0001', '{"type":"join"}']
    async with aiohttp.ClientSession() as session:
        raw = await session.ws_connect(ws_url, max_msg_size=0)
        await raw.send_str(json.dumps({"type": "join", "name": "Mallory"}))
        welcome = json.loads((await raw.receive(timeout=5)).data)
        sent = 0
        for i in range(150):  # under the rate limit: each one answered, nothing closed
            await raw.send_str(malformed[i % len(malformed)])
            sent += 1
            if i % 50 == 49:
                await asyncio.sleep(1.05)
        await raw.send_bytes(os.urandom(64))
        sent += 1
        deadline = time.time() + 10
        while errors < sent and time.time() < deadline:
            message = await raw.receive(timeout=5)
            if message.type == aiohttp.WSMsgType.TEXT and json.loads(message.data).get("type") == "error":
                errors += 1
            elif message.type != aiohttp.WSMsgType.TEXT:
                break
        # Oversized: 300 KiB in one frame.
        await raw.send_str(json.dumps({"type": "media", "pad": "x" * 300_000}))
        while True:
            message = await raw.receive(timeout=5)
            if message.type in (aiohttp.WSMsgType.CLOSE, aiohttp.WSMsgType.CLOSED, aiohttp.WSMsgType.CLOSING):
                break
        oversized_code = raw.close_code
        # A flood: 1000 small messages as fast as they go, on a new connection.
        flooder = await session.ws_connect(ws_url, max_msg_size=0)
        await flooder.send_str(json.dumps({"type": "join", "name": "Flood"}))
        for _ in range(1000):
            if flooder.closed:
                break
            try:
                await flooder.send_str('{"type":"media","hearing":[]}')
            except ConnectionResetError:
                break
        while not flooder.closed:
            message = await flooder.receive(timeout=5)
            if message.type in (aiohttp.WSMsgType.CLOSE, aiohttp.WSMsgType.CLOSED, aiohttp.WSMsgType.CLOSING):
                break
        flood_code = flooder.close_code
    await asyncio.sleep(2)
    after = await figures(call.ana, call.bo)
    still, detail = flowing(before, after)
    ok = errors == sent and oversized_code == 1009 and flood_code == 1008 and still and welcome.get("type") == "welcome"
    record(name, ok, f"{sent} malformed messages, {errors} answered with an error; oversized frame closed {oversized_code}; "
                     f"flood closed {flood_code}; the call goes on: {detail}")


async def resume_gate(call, name, interrupt, quiet=False):
    """Interrupts signalling; judges that media flows throughout and nobody shares again. With
    `quiet` (a cut shorter than 4 s), neither page says "Reconnecting…" (sharectl's rule)."""
    before = await figures(call.ana, call.bo)
    since = max((e.get("t", 0) for e in before["ana"].get("events", [])), default=0)
    shares_sent = before["ana"].get("sharesSent")
    shares_seen = before["bo"].get("sharesReceived")
    resumes = (before["ana"].get("resumes", 0), before["bo"].get("resumes", 0))
    offers = (before["bo_at_ana"].get("offers", 0) + before["bo_at_ana"].get("answers", 0),
              before["ana_at_bo"].get("offers", 0) + before["ana_at_bo"].get("answers", 0))
    await interrupt()
    during = await figures(call.ana, call.bo)
    status_during = [await page.evaluate("document.getElementById('status').textContent") for page in (call.ana, call.bo)]
    signalling_down = not during["ana"].get("joined") and not during["bo"].get("joined")

    async def resumed():
        f = await figures(call.ana, call.bo)
        done = (f["ana"].get("joined") and f["bo"].get("joined") and f["ana"].get("resumes", 0) > resumes[0]
                and f["bo"].get("resumes", 0) > resumes[1])
        return f if done else None

    back = await wait_for_async(resumed, 20)
    await asyncio.sleep(2)
    after = await figures(call.ana, call.bo)
    through, detail_during = flowing(before, during)
    still, detail_after = flowing(during, after)
    renegotiated = (after["bo_at_ana"].get("offers", 0) + after["bo_at_ana"].get("answers", 0),
                    after["ana_at_bo"].get("offers", 0) + after["ana_at_bo"].get("answers", 0)) != offers
    same_ids = after["ana"].get("id") == before["ana"].get("id") and after["bo"].get("id") == before["bo"].get("id")
    fresh = (after["ana"].get("freshJoins"), after["bo"].get("freshJoins"))
    connected = (after["bo_at_ana"].get("connectionState"), after["ana_at_bo"].get("connectionState"))
    shares_again = after["ana"].get("sharesSent") != shares_sent or after["bo"].get("sharesReceived") != shares_seen
    said = [who for who in ("ana", "bo") if any(e.get("kind") == "reconnecting" and e.get("on") and e.get("t", 0) > since
                                                for e in after[who].get("events", []))]
    ok = (signalling_down and back is not None and through and still and same_ids and fresh == (1, 1)
          and not shares_again and not renegotiated and connected == ("connected", "connected")
          and after["ana_at_bo"].get("screen", {}).get("shown")
          and not (quiet and (said or any("econnecting" in (s or "") for s in status_during))))
    record(name, ok, f"signalling down for both: {signalling_down}; resumed: {back is not None} with the same ids "
                     f"{same_ids} (fresh joins {fresh}); during the outage {detail_during}; after {detail_after}; "
                     f"shares sent {shares_sent}→{after['ana'].get('sharesSent')}, seen by Bo "
                     f"{shares_seen}→{after['bo'].get('sharesReceived')}; renegotiated {renegotiated}; "
                     f"connections {connected}; said Reconnecting…: {said or 'nobody'}, the pages' status during "
                     f"the cut {status_during}"
                     f"{' (a cut under 4 s: nobody should)' if quiet else ''}")
    if not ok:
        print("  Ana events:", json.dumps(after["ana"].get("events", [])[-15:])[:3000])
        print("  Bo events:", json.dumps(after["bo"].get("events", [])[-15:])[:3000])


async def gate_cut(call):
    async def interrupt():
        await call.ana.evaluate("window.sharectlDebug.cutSignalling(2000)")
        await call.bo.evaluate("window.sharectlDebug.cutSignalling(2000)")
        await asyncio.sleep(1.0)
    await resume_gate(call, "signalling-cut", interrupt, quiet=True)


async def gate_restart(call):
    # The server writes its state file at most once a second, off its loop: a kill sooner than
    # that after a change loses the change, as it would in the field. So the kill waits for a
    # write at or after the last change the browsers saw (a resume in the gate before this one).
    f = await figures(call.ana, call.bo)
    changes = [e.get("t", 0) for who in ("ana", "bo") for e in (f[who] or {}).get("events", [])
               if e.get("kind") in ("joined", "resumed")]
    last_change = max(changes or [0]) / 1000

    async def saved():
        return os.path.exists(call.server.state) and os.path.getmtime(call.server.state) >= last_change

    if not await wait_for_async(saved, 10):
        print(f"  the state file was not written after the last change ({last_change:.3f}) within 10 s")

    async def interrupt():
        call.server.kill()
        await asyncio.sleep(1.0)   # the reading in between is taken with the server down
        asyncio.get_running_loop().call_later(1.0, call.server.start)
    await resume_gate(call, "server-restart", interrupt)


async def gate_stall_report(call):
    name = "stall-report"
    await call.ana.evaluate("window.sharectlDebug.holdScreen(true)")
    held_at = time.time()

    async def reported():
        f = await figures(call.ana, call.bo)
        view = f["bo_at_ana"].get("theirViewOfMe") or {}
        return f if view.get("screenStalled") and f["ana_at_bo"].get("screen", {}).get("stalled") else None

    stalled = await wait_for_async(reported, 15)
    seconds = time.time() - held_at
    await call.ana.evaluate("window.sharectlDebug.holdScreen(false)")

    async def cleared():
        f = await figures(call.ana, call.bo)
        view = f["bo_at_ana"].get("theirViewOfMe") or {}
        return f if view.get("screenStalled") is False and not f["ana_at_bo"].get("screen", {}).get("stalled") else None

    moving = await wait_for_async(cleared, 15)
    # Not before the 4 s rule allows, give or take the once-a-second reading of the counts.
    ok = stalled is not None and seconds >= 3 and moving is not None
    record(name, ok, f"Ana's screen frames held back: Bo reported screenStalled and Ana heard it after {seconds:.1f} s "
                     f"(Bo's count {(stalled or {}).get('ana_screen_at_bo')}); frames again: the report cleared "
                     f"{moving is not None} at {(moving or {}).get('ana_screen_at_bo')} frames")


async def gate_share_off(call):
    name = "share-off"
    before = await figures(call.ana, call.bo)
    await call.ana.evaluate("document.getElementById('share').click()")

    async def gone():
        f = await figures(call.ana, call.bo)
        captions = await call.bo.evaluate("document.querySelectorAll('#stage figure').length")
        return f if (not f["ana_at_bo"].get("sharing") and not f["ana_at_bo"].get("screen", {}).get("shown")
                     and captions == 0) else None

    off = await wait_for_async(gone, 10)
    await asyncio.sleep(1.5)
    quiet = await figures(call.ana, call.bo)
    # Shared again from the same button: the view comes back and decodes.
    await call.ana.evaluate("document.getElementById('share').click()")

    async def back():
        f = await figures(call.ana, call.bo)
        caption = await call.bo.evaluate(
            "Array.from(document.querySelectorAll('#stage figcaption')).map(c => c.textContent).join('|')")
        frames = f["ana_at_bo"].get("screen", {}).get("framesDecoded", 0)
        # The same m-line is used again, so its count goes on from where the first share left it.
        return f if caption == "Ana's screen" and frames > before["ana_screen_at_bo"] + 15 else None

    again = await wait_for_async(back, 15)
    camera_on = quiet["ana_cam_at_bo"] > before["ana_cam_at_bo"]
    ok = off is not None and again is not None and camera_on and not quiet["ana_at_bo"].get("screen", {}).get("stalled")
    record(name, ok, f"after Stop sharing Bo's stage emptied: {off is not None} (no stall reported for a screen no "
                     f"longer shared: {not quiet['ana_at_bo'].get('screen', {}).get('stalled')}), Ana's camera went on "
                     f"{before['ana_cam_at_bo']}→{quiet['ana_cam_at_bo']}; shared again: screen frames "
                     f"{before['ana_screen_at_bo']} before the stop, "
                     f"{(again or {}).get('ana_at_bo', {}).get('screen', {}).get('framesDecoded')} on the stage after")


async def gate_renew_glare(call):
    name = "renew-glare"
    tries = []
    f = None
    crossed = False
    for _ in range(3):
        start = await figures(call.ana, call.bo)
        since = max(e.get("t", 0) for who in ("ana", "bo") for e in start[who].get("events", []) or [{}])
        said = await asyncio.gather(call.ana.evaluate("window.sharectlDebug.renew('Bo')"),
                                    call.bo.evaluate("window.sharectlDebug.renew('Ana')"))

        async def back():
            now = await figures(call.ana, call.bo)
            ok = (now["ana_cam_at_bo"] > 30 and now["bo_cam_at_ana"] > 30 and now["ana_screen_at_bo"] > 30
                  and now["ana_at_bo"].get("connectionState") == "connected"
                  and now["bo_at_ana"].get("connectionState") == "connected")
            return now if ok else None

        f = await wait_for_async(back, 30) or await figures(call.ana, call.bo)
        kinds = {who: [e.get("kind") for e in f[who].get("events", []) if e.get("t", 0) > since] for who in ("ana", "bo")}
        crossed = "glare-kept-own-offer" in kinds["ana"]
        tries.append(f"said {said}, crossed: {crossed}, Ana's events {kinds['ana']}, Bo's {kinds['bo']}")
        if crossed:
            break
    ok = crossed and f["ana_cam_at_bo"] > 30 and f["bo_cam_at_ana"] > 30 and f["ana_screen_at_bo"] > 30
    record(name, ok, f"{len(tries)} tries ({'; '.join(tries)}); on the new connection Bo decodes Ana's camera "
                     f"{f['ana_cam_at_bo']} frames and her screen {f['ana_screen_at_bo']}, Ana Bo's camera "
                     f"{f['bo_cam_at_ana']}; connections ({f['bo_at_ana'].get('connectionState')}, "
                     f"{f['ana_at_bo'].get('connectionState')})")


async def gate_tls(call):
    """A second server with --tls-cert/--tls-key: the page over HTTPS, a participant over WSS."""
    name = "tls"
    import ssl
    key, cert = os.path.join(WORK, "room.tls.key"), os.path.join(WORK, "room.tls.crt")
    made = subprocess.run(["openssl", "req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256", "-nodes",
                           "-keyout", key, "-out", cert, "-days", "2", "-subj", "/CN=127.0.0.1",
                           "-addext", "subjectAltName=IP:127.0.0.1"],
                          capture_output=True)
    if made.returncode != 0:
        return record(name, False, f"openssl could not make a test certificate: {made.stderr.decode()[-200:]}")
    port = free_port()
    server = subprocess.Popen([SHARECTL, "serve", "--listen", f"127.0.0.1:{port}", "--room", "secure",
                               "--tls-cert", cert, "--tls-key", key], stdout=subprocess.PIPE,
                              stderr=open(os.path.join(WORK, "room.tls.log"), "w"), text=True, start_new_session=True)
    try:
        first = server.stdout.readline().strip()
        url = first.split(" ", 1)[1] if first.startswith("Room: ") else ""
        context = ssl.create_default_context(cafile=cert)
        async with aiohttp.ClientSession() as session:
            async with session.get(url, ssl=context) as response:
                page = response.status
            ws = await session.ws_connect(url.replace("https://", "wss://").replace("/r/", "/ws/"), ssl=context)
            await ws.send_str(json.dumps({"type": "join", "name": "Tess"}))
            welcome = json.loads((await ws.receive(timeout=5)).data)
            await ws.close()
        ok = url.startswith("https://") and page == 200 and welcome.get("type") == "welcome"
        record(name, ok, f"link {url.split('?')[0]}; page over HTTPS {page}; over WSS: {welcome.get('type')} as {welcome.get('id')}")
    finally:
        stop(server, grace=GRACE)


NAMES = ["call", "bad-token", "flood", "signalling-cut", "server-restart", "stall-report", "share-off", "renew-glare",
         "tls"]


async def main():
    chosen = choose("room_server", NAMES)
    gates = [("call", gate_call), ("bad-token", gate_bad_token), ("flood", gate_flood),
             ("signalling-cut", gate_cut), ("server-restart", gate_restart),
             ("stall-report", gate_stall_report), ("share-off", gate_share_off),
             ("renew-glare", gate_renew_glare), ("tls", gate_tls)]
    call = Call()
    try:
        try:
            await call.start()
        except Exception as error:
            for gate_name, _ in gates:
                if gate_name in chosen:
                    record(gate_name, False, f"the call could not start: {error!r}")
            return finish()
        for gate_name, gate in gates:
            if gate_name not in chosen and gate_name != "call":
                continue
            try:
                if gate_name == "call" and "call" not in chosen:
                    await wait_for_async(lambda: _flowing_once(call), 45)  # the others need a running call
                    continue
                await gate(call)
            except Exception as error:  # a gate that breaks is a failed gate, with its reason
                record_broken(gate_name, error)
    finally:
        await call.close()
    return finish()


async def _flowing_once(call):
    f = await figures(call.ana, call.bo)
    return f["ana_cam_at_bo"] > 30 and f["bo_cam_at_ana"] > 30


if __name__ == "__main__":
    sys.exit(asyncio.run(main()))
