#!/usr/bin/env python3
"""Room call gates: `sharectl share --room` and `sharectl watch` in a room of `sharectl serve`
with headless Chromium (the browser client) as another participant, inside a network namespace
where only loopback exists (scripts/gates/run.sh enters it). sharectl's side is read from its
--stats-json lines, the browser's through the DevTools protocol (window.sharectlState). Each gate
prints PASS or FAIL with the figures it judged; the last line is "N passed, N failed".

  browser         sharectl "Ana" shares the synthetic screen and a tone; Chromium "Bo" joins from
                  the invite link with its fake camera and microphone and shares its fake screen.
                  Bo decodes Ana's screen on the stage and hears her tone; Ana decodes Bo's camera,
                  his screen (a section his browser added by a re-offer) and his audio above silence;
                  the "Your name / Join" form is gone from the page once he has joined; and a
                  DevTools screenshot of the stage and of Ana's camera tile holds the synthetic
                  picture (lit, with its blue), not black.
  three           sharectl "Cy" (`watch` with a synthetic camera, sending digital silence as audio)
                  joins too: everyone decodes everyone (both screens, cameras, audio) in the mesh.
  who-hears       who hears whom, in sharectl and in the browser by the same rules: Cy's silence is
                  "No sound from Cy" on Bo's page and in Ana's stats, and Cy is told "Bo isn't
                  getting any sound from you" and "Ana isn't getting any sound from you" from their
                  reports; nobody says it of Ana or Bo; Bo's page lights Ana's tile (her tone) and
                  not Cy's, and his own tile lit (his fake microphone's syllables) before Mute. Then Bo presses
                  Mute: Ana decodes silence from him and sees him muted, his own light stays off,
                  and for 7 s neither Ana nor Cy says "No sound from Bo"; Unmute brings his sound
                  back.
  server-restart  the server is killed and started again 2 s later on the same port and state
                  file: everyone's signalling is cut for about 2 s. Media flows throughout, the
                  ids stay, nobody shares again, and sharectl says "Reconnecting…" only if its
                  signalling was down 4 s (each says how long: about 2.5 s on a quiet machine).
  long-outage     the server stays away for 6 s: sharectl says "Reconnecting…" (signalling down
                  over 4 s) while media keeps flowing, and stops saying it once resumed.
  udp-outage      every UDP datagram is dropped (nftables, on the way in) until every media
                  connection failed (Chromium's after about 30 s, sharectl's when consent expires:
                  30 s with nothing heard from the peer), at most 65 s, and 3 s more, while the
                  signalling (TCP) stays up. Once UDP flows again each failed connection is made
                  anew (the smaller id offers after 2 s, the other after 15 s) and Bo and Cy
                  decode Ana's screen, Ana Bo's and Cy's cameras, and Cy Bo's camera again.
  share-off       Ana stops sharing (SIGUSR1): Bo's screen view goes (not frozen on the last
                  frame, no stall reported) and Cy's too, while Ana's camera and audio go on.

The gates run in this order on one call; naming some runs the ones before them too.
"""
import asyncio
import json
import math
import os
import re
import signal
import struct
import sys
import time
import wave

from lib.paths import WORK, rerun_in_venv_without

rerun_in_venv_without("aiohttp")  # run.sh uses the system python; aiohttp lives in the project's .venv

from lib.devtools import GRACE  # noqa: E402
from lib.devtools import Browser as RoomBrowser  # noqa: E402
from lib.network import clear_drops, drop_udp  # noqa: E402
from lib.processes import stop  # noqa: E402
from lib.room import Participant, Server  # noqa: E402
from lib.suite import record, run_call_gates  # noqa: E402
from lib.waits import wait_for_async  # noqa: E402


def Browser(name, url, extra_query=""):
    # The fake microphone speaks in syllables (a 500 Hz tone at −12 dBFS, 400 ms on, 400 ms off)
    # rather than Chromium's own 20 ms beeps, which are too short to light a speaking indicator.
    voice = os.path.join(WORK, f"call.{name}.voice.wav")
    write_syllables(voice)
    return RoomBrowser(name, url, extra_query, prefix="call", extra_args=[f"--use-file-for-fake-audio-capture={voice}"])


def write_syllables(path, seconds=4):
    amplitude = 32767 * 10 ** (-12 / 20)
    frames = bytearray()
    for n in range(48000 * seconds):
        on = (n // 19200) % 2 == 0
        frames += struct.pack("<h", int(amplitude * math.sin(2 * math.pi * 500 * n / 48000)) if on else 0)
    with wave.open(path, "wb") as f:
        f.setnchannels(1)
        f.setsampwidth(2)
        f.setframerate(48000)
        f.writeframes(bytes(frames))


class Sharectl(Participant):
    """One sharectl participant (`share --room` or `watch`), read through its --stats-json."""

    def __init__(self, name, args):
        # Notices too: server-restart reads "signalling: connected again after N s" from them.
        super().__init__(name, args + ["--log-level", "notice"], os.path.join(WORK, f"call.{name}.jsonl"),
                         os.path.join(WORK, f"call.{name}.log"))

    def said_reconnecting(self):
        return max([l.get("reconnectingShown", 0) for l in self.lines()] + [0]) > 0 or "Reconnecting" in self.output()

    def stop(self):
        super().stop(signal.SIGINT, grace=GRACE)


def frames(view):
    return (view or {}).get("framesDecoded", 0) or 0


class Call:
    def __init__(self):
        self.server = Server("call")
        self.url = None
        self.ana = self.bo = self.cy = None

    async def close(self):
        for member in (self.ana, self.cy):
            if member:
                member.stop()
        if self.bo:
            await self.bo.close()
        if self.server.process:
            stop(self.server.process, grace=GRACE)


async def gate_browser(call):
    call.url = call.server.start()
    call.ana = Sharectl("Ana", ["share", "--room", call.url, "--size", "960x540", "--fps", "15", "--audio", "synthetic",
                                "--camera", "synthetic"])
    call.bo = Browser("Bo", call.url, "&share=1")
    await call.bo.connect()

    async def ready():
        bo_ana = await call.bo.peer("Ana")
        ana_bo = call.ana.peer("Bo")
        audio = ana_bo.get("audio") or {}
        ok = (frames(bo_ana.get("screen")) > 30 and (bo_ana.get("screen") or {}).get("shown")
              and (bo_ana.get("audio") or {}).get("hearing") and frames(ana_bo.get("camera")) > 30
              and audio.get("samplesDecoded", 0) > 48000 and audio.get("hearing") and frames(ana_bo.get("screen")) > 20)
        return (bo_ana, ana_bo) if ok else None

    got = await wait_for_async(ready, 60)
    bo_ana, ana_bo = got or (await call.bo.peer("Ana"), call.ana.peer("Bo"))
    screen, camera, audio = bo_ana.get("screen") or {}, ana_bo.get("camera") or {}, ana_bo.get("audio") or {}
    # Joined (the page took &name=): the "Your name / Join" form is gone from the layout.
    form_shown = await call.bo.evaluate("document.getElementById('join-form').getClientRects().length > 0")
    # What the page paints, not only what getStats counts: a screenshot of the stage (Ana's
    # screen) and of Ana's camera tile holds the synthetic picture (lit, its blue), not black.
    stage = painted(await call.bo.picture('#stage figure:not([data-peer="self"]) video'))
    tile = painted(await call.bo.picture("#tiles figure:not(.self) video"))
    pictures_ok = all(p is not None and p[2] >= 0.5 and p[3] >= 0.15 for p in (stage, tile))
    record("browser", got is not None and form_shown is False and pictures_ok,
           f"Chromium decodes Ana's screen {frames(screen)} frames at {screen.get('width')}x{screen.get('height')} "
           f"(on the stage: {screen.get('shown')}), hears her tone {(bo_ana.get('audio') or {}).get('hearing')} "
           f"(energy {(bo_ana.get('audio') or {}).get('energy', 0):.4f}); sharectl decodes Bo's camera {frames(camera)} "
           f"frames at {camera.get('width')}x{camera.get('height')} and {audio.get('samplesDecoded')} samples of his "
           f"audio (loudest of the last second {audio.get('levelDbfs')} dBFS, heard: {audio.get('hearing')}), and his "
           f"screen {frames(ana_bo.get('screen'))} frames at {(ana_bo.get('screen') or {}).get('width')}x"
           f"{(ana_bo.get('screen') or {}).get('height')}; connection {(ana_bo.get('connection') or {}).get('state')}; "
           f"the join form still laid out after joining: {form_shown}; painted (w, h, lit, blue, mean RGB; "
           f"want lit >= 0.5, blue >= 0.15): stage {stage}, Ana's camera tile {tile}")


def painted(picture):
    """(width, height, the share of pixels lit (a channel over 40), the share bluer than red by
    30 (the synthetic pattern's background), mean RGB) of a screenshot; None if there was none."""
    if not picture:
        return None
    width, height, pixels = picture
    count = width * height
    lit = sum(1 for i in range(0, len(pixels), 3) if max(pixels[i:i + 3]) > 40) / count
    blue = sum(1 for i in range(0, len(pixels), 3) if pixels[i + 2] > pixels[i] + 30) / count
    mean = [round(sum(pixels[c::3]) / count) for c in range(3)]
    return width, height, round(lit, 2), round(blue, 2), mean


async def gate_three(call):
    call.cy = Sharectl("Cy", ["watch", call.url, "--camera", "synthetic", "--audio", "silence"])

    async def everyone():
        bo_ana, bo_cy = await call.bo.peer("Ana"), await call.bo.peer("Cy")
        a_bo, a_cy = call.ana.peer("Bo"), call.ana.peer("Cy")
        c_ana, c_bo = call.cy.peer("Ana"), call.cy.peer("Bo")
        figures = {
            "Bo←Ana screen": frames(bo_ana.get("screen")), "Bo←Ana camera": frames(bo_ana.get("camera")),
            "Bo←Cy camera": frames(bo_cy.get("camera")),
            "Ana←Bo camera": frames(a_bo.get("camera")), "Ana←Cy camera": frames(a_cy.get("camera")),
            "Cy←Ana screen": frames(c_ana.get("screen")), "Cy←Ana camera": frames(c_ana.get("camera")),
            "Cy←Bo camera": frames(c_bo.get("camera")),
            "Ana←Bo screen": frames(a_bo.get("screen")), "Cy←Bo screen": frames(c_bo.get("screen")),
        }
        hearing = {
            "Bo hears Ana": bool((bo_ana.get("audio") or {}).get("hearing")),
            "Bo hears Cy": bool((bo_cy.get("audio") or {}).get("hearing")),
            "Ana hears Bo": bool((a_bo.get("audio") or {}).get("hearing")),
            "Ana hears Cy": bool((a_cy.get("audio") or {}).get("hearing")),
            "Cy hears Ana": bool((c_ana.get("audio") or {}).get("hearing")),
            "Cy hears Bo": bool((c_bo.get("audio") or {}).get("hearing")),
        }
        ok = all(v > 20 for v in figures.values()) and all(hearing.values())
        return (ok, figures, hearing)

    got = await wait_for_async(lambda: _only_ok(everyone), 60)
    ok, figures, hearing = got or await everyone()
    record("three", bool(got), ", ".join(f"{k} {v}" for k, v in figures.items()) + "; "
           + ", ".join(f"{k} {v}" for k, v in hearing.items()))


async def _only_ok(check):
    result = await check()
    return result if result[0] else None


async def readings(call, ana_line=None, cy_line=None):
    bo_ana = await call.bo.peer("Ana")
    return {
        "Bo←Ana screen": frames(bo_ana.get("screen")),
        "Ana←Bo camera": frames(call.ana.peer("Bo", ana_line).get("camera")),
        "Cy←Ana screen": frames(call.cy.peer("Ana", cy_line).get("screen")),
        "Ana←Cy camera": frames(call.ana.peer("Cy", ana_line).get("camera")),
        # sharectl as the larger id (the side that gives way in glare) against Chromium.
        "Cy←Bo camera": frames(call.cy.peer("Bo", cy_line).get("camera")),
    }


def line_of_the_outage(member, since, resumes):
    """The last stats line `member` wrote after its first `since` lines and before it resumed (the
    figures of the outage, whenever its once-a-second line happened to come); its first line after
    `since` when every one came after the resume; and the state of its signalling in them."""
    written = member.lines(skip_broken=True)[since:]
    during = [line for line in written if line.get("resumes", 0) == resumes]
    line = (during or written or [member.last()])[-1]
    return line, tuple(dict.fromkeys(line.get("signalling") for line in during))


# ReconnectRule.signallingGrace (seconds).
RECONNECTING_AFTER = 4.0


def signalling_down_for(member, since):
    """How long the member's signalling was down, as it said once connected again after the
    first `since` characters of its output; None if it has not said so."""
    said = re.findall(r"signalling: connected again after ([0-9.]+) s", member.output()[since:])
    return float(said[-1]) if said else None


async def gate_restart(call):
    before = await readings(call)
    ids = (call.ana.last().get("id"), call.cy.last().get("id"))
    shares = (call.ana.last().get("sharesSent"), (await call.bo.state()).get("sharesReceived"))
    written = (len(call.ana.lines(skip_broken=True)), len(call.cy.lines(skip_broken=True)))
    resumed_before = (call.ana.last().get("resumes", 0), call.cy.last().get("resumes", 0))
    said_before = (len(call.ana.output()), len(call.cy.output()))
    killed = time.monotonic()
    call.server.kill()
    await asyncio.sleep(1.5)
    bo_during = await readings(call)  # the page is read live; sharectl's lines once they are written
    await asyncio.sleep(0.5)
    call.server.start()  # about 2 s after the kill, same port and state file
    # Kill to listening again: about 2 s, more when the machine is loaded and the server slow to start.
    away = time.monotonic() - killed

    async def resumed():
        a, c, b = call.ana.last(), call.cy.last(), await call.bo.state()
        return (a.get("signalling") == "up" and c.get("signalling") == "up" and a.get("resumes", 0) >= 1
                and c.get("resumes", 0) >= 1 and b.get("joined") and b.get("resumes", 0) >= 1)

    back = await wait_for_async(resumed, 20)
    # A line a second, each on its own clock: on a loaded machine one may come a second late, so
    # the outage's figures are those of the last line each wrote before it resumed.
    ana_line, ana_states = line_of_the_outage(call.ana, written[0], resumed_before[0])
    cy_line, cy_states = line_of_the_outage(call.cy, written[1], resumed_before[1])
    during = await readings(call, ana_line, cy_line)
    during["Bo←Ana screen"] = bo_during["Bo←Ana screen"]
    signalling = (ana_states, cy_states)
    await asyncio.sleep(2.0)
    after = await readings(call)
    through = all(during[k] > before[k] for k in before) and all(after[k] > during[k] for k in before)
    same_ids = (call.ana.last().get("id"), call.cy.last().get("id")) == ids
    shares_after = (call.ana.last().get("sharesSent"), (await call.bo.state()).get("sharesReceived"))
    reconnecting = call.ana.said_reconnecting() or call.cy.said_reconnecting()
    # "Reconnecting…" comes after 4 s without signalling. Each sharectl says how long its own
    # signalling was down ("connected again after 2.61 s"): the notice is wrong if neither was
    # down that long. (A loaded machine can stretch a 2 s restart past 4 s: then it may come.)
    down = [signalling_down_for(call.ana, said_before[0]), signalling_down_for(call.cy, said_before[1])]
    may_say = any(d is not None and d >= RECONNECTING_AFTER for d in down)
    ok = (bool(back) and through and same_ids and shares_after == shares and None not in down
          and (may_say or not reconnecting))
    record("server-restart", ok,
           f"signalling in the lines written while the server was down: {signalling}; resumed: {bool(back)} with the same ids {same_ids}; "
           + ", ".join(f"{k} {before[k]}→{during[k]}→{after[k]}" for k in before)
           + f"; shares sent/seen {shares}→{shares_after}; the server was away {away:.1f} s, the signalling of "
           + f"(Ana, Cy) {tuple(down)} s; 'Reconnecting…' said: {reconnecting}"
           + (" (allowed: down that long)" if may_say else ""))


async def gate_long_outage(call):
    before = await readings(call)
    call.server.kill()

    async def said():
        return call.ana.last().get("reconnecting") and call.cy.last().get("reconnecting")

    shown = await wait_for_async(said, 10, interval=0.25)
    # The browser says it by the same rule (signalling down 4 s).
    browser_said = await wait_for_async(lambda: call.bo.evaluate("window.sharectlState.reconnecting"), 6, interval=0.25)
    during = await readings(call)
    await asyncio.sleep(max(0.0, 6.0 - 4.5))
    call.server.start()

    async def cleared():
        a, c = call.ana.last(), call.cy.last()
        return (a.get("signalling") == "up" and c.get("signalling") == "up" and not a.get("reconnecting")
                and not c.get("reconnecting"))

    back = await wait_for_async(cleared, 15, interval=0.25)
    browser_cleared = await wait_for_async(
        lambda: call.bo.evaluate("!window.sharectlState.reconnecting && window.sharectlState.joined"), 10, interval=0.25)
    after = await readings(call)
    through = all(during[k] > before[k] for k in before) and all(after[k] > during[k] for k in before)
    printed = "Reconnecting…" in call.ana.output()
    ok = bool(shown) and bool(back) and through and printed and bool(browser_said) and bool(browser_cleared)
    record("long-outage", ok,
           f"'Reconnecting…' shown by both while the server was away: {bool(shown)} (printed by Ana: {printed}); "
           f"cleared after it came back: {bool(back)}; the browser (Bo) said it: {bool(browser_said)}, cleared: "
           f"{bool(browser_cleared)}; "
           + ", ".join(f"{k} {before[k]}→{during[k]}→{after[k]}" for k in before))


async def outage_diagnosis(call):
    """The pair that most often stays dark after an outage, Ana and Bo, as each side saw it at the
    end: short enough to stand in the gate's verdict, which is what a run's summary keeps."""
    ana_bo = call.ana.peer("Bo")
    bo_state = await call.bo.state()
    bo_ana = await call.bo.peer("Ana")
    events = [{k: v for k, v in e.items() if k not in ("t",)} for e in (bo_state.get("events") or [])[-12:]]
    about_bo = [line for line in call.ana.output().splitlines() if "Bo" in line][-8:]
    return (f"at the end Ana had of Bo: connection {json.dumps(ana_bo.get('connection'))[:300]}, camera "
            f"{json.dumps(ana_bo.get('camera'))[:500]}; Bo's page of Ana: {bo_ana.get('connectionState')}, offers "
            f"{bo_ana.get('offers')}, answers {bo_ana.get('answers')}, camera sent {json.dumps(bo_ana.get('cameraSent'))}; "
            f"Bo's last events {json.dumps(events)[-1500:]}; Ana said of Bo: {' / '.join(about_bo)[-1500:]}")


async def gate_udp_outage(call):
    before = await readings(call)
    renewed_before = (call.ana.last().get("connectionsRenewed", 0), call.cy.last().get("connectionsRenewed", 0),
                      (await call.bo.state()).get("connectionsRenewed", 0))
    drop_udp(100, table="sharectl_outage")
    try:
        async def all_failed():
            states = [(call.ana.peer("Bo").get("connection") or {}).get("state", ""),
                      (call.ana.peer("Cy").get("connection") or {}).get("state", ""),
                      (await call.bo.peer("Ana")).get("connectionState", "")]
            return states if all(s.startswith("failed") or s == "connecting" or s == "checking" for s in states[:2]) \
                and states[2] in ("failed", "new", "connecting") else None

        failed = await wait_for_async(all_failed, 65, interval=1.0)
        await asyncio.sleep(max(0.0, 3.0))
    finally:
        clear_drops("sharectl_outage")
    outage_end = await readings(call)

    async def back():
        now = await readings(call)
        states = [(call.ana.peer("Bo").get("connection") or {}).get("state"),
                  (call.ana.peer("Cy").get("connection") or {}).get("state"),
                  (await call.bo.peer("Ana")).get("connectionState")]
        ok = all(now[k] > outage_end[k] + 10 for k in now) and states == ["connected", "connected", "connected"]
        return (now, states) if ok else None

    got = await wait_for_async(back, 90, interval=1.0)
    now, states = got or (await readings(call), None)
    renewed = (call.ana.last().get("connectionsRenewed", 0), call.cy.last().get("connectionsRenewed", 0),
               (await call.bo.state()).get("connectionsRenewed", 0))
    ok = got is not None and failed is not None and sum(renewed) > sum(renewed_before)
    record("udp-outage", ok,
           f"connections while UDP was dropped: {failed}; after it flowed again: {states}; connections renewed "
           f"(Ana, Cy, Bo) {renewed_before}→{renewed}; "
           + ", ".join(f"{k} {before[k]}→{outage_end[k]}→{now[k]}" for k in before)
           + ("" if ok else "; " + await outage_diagnosis(call)))
    if not ok:
        # What each side of the pairs that did not come back knew at the end, for whoever reads this.
        print("Ana's last line of Bo:", json.dumps(call.ana.peer("Bo"))[-2000:])
        print("Ana's last line of Cy:", json.dumps(call.ana.peer("Cy"))[-1000:])
        bo = await call.bo.state()
        print("Bo's page of Ana:", json.dumps(await call.bo.peer("Ana"))[-2000:])
        print("Bo's page, its last events:", json.dumps((bo.get("events") or [])[-25:])[-3000:])
        print("Ana's output, its end:", call.ana.output()[-3000:])


async def gate_share_off(call):
    before = await readings(call)
    camera_before = frames((await call.bo.peer("Ana")).get("camera"))
    os.killpg(call.ana.process.pid, signal.SIGUSR1)

    async def gone():
        bo_ana = await call.bo.peer("Ana")
        stage = await call.bo.stage_figures()
        cy_ana = call.cy.peer("Ana")
        ok = (not bo_ana.get("sharing") and not (bo_ana.get("screen") or {}).get("shown") and stage == 0
              and not cy_ana.get("sharing") and cy_ana.get("screen") is None)
        return (bo_ana, stage, cy_ana) if ok else None

    got = await wait_for_async(gone, 15)
    await asyncio.sleep(2.0)
    bo_ana = await call.bo.peer("Ana")
    stage = await call.bo.stage_figures()
    # No track left on a screen section that Chromium still receives on (ended, not frozen).
    live = await call.bo.evaluate(
        "(() => { let n = 0; for (const v of document.querySelectorAll('#stage figure:not([data-peer=\"self\"]) video')) "
        "{ if (v.srcObject) n += v.srcObject.getVideoTracks().filter(t => t.readyState === 'live').length; } return n; })()")
    camera_after = frames(bo_ana.get("camera"))
    stalled = (bo_ana.get("screen") or {}).get("stalled")
    ok = got is not None and stage == 0 and live == 0 and camera_after > camera_before and not stalled
    record("share-off", ok,
           f"after SIGUSR1 Bo's stage holds {stage} views ({live} live screen tracks), Ana's screen shown at Bo: "
           f"{(bo_ana.get('screen') or {}).get('shown')}, stall reported: {stalled}; Cy sees Ana sharing: "
           f"{call.cy.peer('Ana').get('sharing')}; Ana's camera at Bo went on {camera_before}→{camera_after}; "
           f"screen frames at Bo before the stop {before['Bo←Ana screen']}")


async def gate_who_hears(call):
    async def notices():
        page = (await call.bo.state()).get("audioNotices") or []
        return page, call.ana.last().get("audioNotices", []), call.cy.last().get("audioNotices", [])

    async def settled():
        page, ana, cy = await notices()
        ok = ("No sound from Cy" in page and "No sound from Cy" in ana and "Bo isn't getting any sound from you" in cy
              and "Ana isn't getting any sound from you" in cy)
        return (page, ana, cy) if ok else None

    got = await wait_for_async(settled, 20, interval=0.5)
    page, ana, cy = got or await notices()
    wrong = [n for n in page + ana + cy if n in ("No sound from Ana", "No sound from Bo")]
    bo_ana, bo_cy = await call.bo.peer("Ana"), await call.bo.peer("Cy")
    lit = ((bo_ana.get("audio") or {}).get("speaking"), (bo_cy.get("audio") or {}).get("speaking"))
    heard = (call.ana.peer("Bo").get("audio") or {}).get("levelDbfs")

    await call.bo.evaluate("document.getElementById('mute').click()")

    def bo_at_ana():
        return call.ana.peer("Bo").get("audio") or {}

    async def muted():
        audio = bo_at_ana()
        return audio if audio.get("muted") and audio.get("levelDbfs", 0) < -90 else None

    silent = await wait_for_async(muted, 10, interval=0.5)
    muted_at = (await call.bo.evaluate("Date.now()")) or 0
    judged = (len(call.ana.lines(skip_broken=True)), len(call.cy.lines(skip_broken=True)))
    await asyncio.sleep(7)
    later = call.ana.lines(skip_broken=True)[judged[0]:] + call.cy.lines(skip_broken=True)[judged[1]:]
    said = [line.get("t") for line in later if "Bo" in line.get("noSoundFrom", [])]
    bo_state = await call.bo.state()
    page_muted = bo_state.get("muted")
    lights = [e for e in bo_state.get("events", []) if e.get("kind") == "speaking-self" and e.get("on")]
    lit_self = bool(lights) and lights[0]["t"] < muted_at
    lit_muted = [e["t"] for e in lights if e["t"] > muted_at]
    await call.bo.evaluate("document.getElementById('mute').click()")

    async def back():
        audio = bo_at_ana()
        level = audio.get("levelDbfs", -120)
        return f"{level}" if not audio.get("muted") and level > -60 else None

    unmuted = await wait_for_async(back, 10, interval=0.5)
    ok = (got is not None and not wrong and lit == (True, False) and silent is not None and not said
          and page_muted is True and unmuted is not None and lit_self and not lit_muted)
    record("who-hears", ok,
           f"Bo's page says {page}; Ana says {ana}; Cy is told {cy}; said of Ana or Bo: {wrong or 'nothing'}; Bo's "
           f"page lights Ana's tile {lit[0]} and Cy's {lit[1]} (want True, False), and his own (his fake "
           f"microphone's syllables) before Mute {lit_self}, while muted {bool(lit_muted)} (want True, False); Bo at "
           f"Ana {heard} dBFS; after "
           f"Mute: Ana decodes him at {(silent or {}).get('levelDbfs')} dBFS, muted {(silent or {}).get('muted')}, "
           f"the page says muted {page_muted}; 'No sound from Bo' in the 7 s after: {said or 'never'}; after "
           f"Unmute: {unmuted} dBFS")


GATES = [("browser", gate_browser), ("three", gate_three), ("who-hears", gate_who_hears), ("server-restart", gate_restart),
         ("long-outage", gate_long_outage), ("udp-outage", gate_udp_outage), ("share-off", gate_share_off)]


if __name__ == "__main__":
    sys.exit(asyncio.run(run_call_gates("room_call", GATES, Call, needed=2)))
