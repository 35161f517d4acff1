#!/usr/bin/env python3
"""Portal gates: `sharectl share --source portal` against the real ScreenCast stack (D-Bus,
PipeWire, WirePlumber, headless sway, xdg-desktop-portal, xdg-desktop-portal-wlr; see
scripts/portal/stack.py), sending to aiortc as a WHIP endpoint. One stack serves every gate.

  sources         `sharectl sources` names the portal's version, source types and cursor modes,
                  PipeWire's version and the restore token's state.
  moving          content moves on the compositor's output; `share --unattended` with no saved
                  token (this portal grants by itself: no chooser) captures it for 10 s; aiortc
                  decodes >= 90% of the frames the portal delivered (>= 10 fps of them; 30 when
                  the machine keeps up); a restore token is saved.
  token-reuse     a second `--unattended` run restores the first run's grant from its token: the
                  same token, "restored … no picker", frames decoded.
  stale-token     a token the portal does not know: a new grant, saved (unattended too, as this
                  portal needs no picker); a malformed token the portal refuses: attended, a new
                  grant; unattended, a clear error and a non-zero exit.
  static          nothing draws: the share says no first frame came; after one brief change the
                  portal sends a frame or two, and the capture repeats the last one once a second
                  (aiortc keeps decoding about one a second).
  restart         the backend's PipeWire node is destroyed mid-share: the share shows the restart,
                  gets the same screen back from the restore token (no picker) and keeps sending.
  pipewire-node   `--source pipewire:NODE` on a test PipeWire source whose buffers carry a crop
                  region and every tenth a corrupted flag: aiortc decodes the cropped 960x540,
                  >= 90% of the frames captured; the corrupted ones are skipped.
  full-hd         the output at 1920x1080, moving content (a 640x360 window floating on the still
                  desktop), an unattended share to aiortc (no
                  transport-wide feedback) on a clean link: aiortc decodes 1920 wide at >= 25 fps
                  over 13-19 s, once the start-up without feedback is over (the estimate climbs
                  on REMB and probes, and each larger size waits out the policy's 5 s hold); then
                  nothing draws, and the still desktop's repeats decode at 1920x1080 (>= 0.5 fps
                  over 22-28 s). The output gets its size back after.
  room            `share --room --source portal --unattended --policy detail` into a room of
                  `sharectl serve`, with `watch` as the viewer: the sharer names the portal's
                  screen and the policy, its encoder runs under detail, and the viewer decodes
                  the portal's 1280x720 with the content moving (>= 5 fps over the last 5 s).
  room-browser    the same room share seen by headless Chromium (the browser client, over
                  DevTools) and `watch` at once: both decode 1280x720 with the content moving
                  (>= 5 fps over 5 s); then nothing draws, and both decode the still screen's
                  repeats at 0.5-2 fps over 8 s, still at 1280x720.
  resize          the same room share, and the compositor's output changes size mid-share
                  (`swaymsg output HEADLESS-1 resolution 1024x768`): within 4 s (3 s, plus the
                  viewer's stats' second) the viewer decodes the new 4:3 picture (at the scale the
                  send policy holds then: a larger one waits the policy's 5 s), on the same
                  section (the same mid: no new offer); the output is given its size back after.
  portal-back     an unattended share (a kiosk's) while xdg-desktop-portal goes away for 3 s and
                  comes back: the share keeps its connection, asks for the same screen again from
                  its restore token (no picker) and moves again (>= 10 fps captured over 2 s)
                  within 15 s of the portal's return; exit 0.
  backend-restart the same while xdg-desktop-portal-wlr is killed and started again: within 15 s.
  pipewire-restart the same while the PipeWire daemon and WirePlumber restart under the share (and
                  the portal backend after them): moving again within 10 s of PipeWire's return.
  resize-whip     an unattended share to aiortc while the output changes size (1024x768): one WHIP
                  session throughout (no new offer), at most 2 keyframes beyond the periodic ones
                  in the 5 s after (one send-policy hold: the new size, and at most one step of
                  the ladder; a machine that keeps up may climb further a step per hold after),
                  and aiortc decodes the new 4:3 picture.
  reconnect-portal `share --reconnect --source portal --unattended` to aiortc, and every UDP datagram
                  dropped until consent expires and the first publish again has failed too: the
                  WHIP session is deleted, the portal is opened again from its restore token (no
                  picker) before each attempt, and a later WHIP session decodes the portal's
                  moving screen.
  session-closed  xdg-desktop-portal goes away mid-share under an attended share: it stops at once
                  with a clear message and a non-zero exit (the person or the desktop ended it).
  no-portal       no portal on the bus: a clear error naming xdg-desktop-portal, non-zero exit.
  teardown        the stack leaves no process, mount or directory behind.
"""
import asyncio
import contextlib
import os
import re
import subprocess
import sys
import time

from lib.paths import ROOT, SHARECTL, WORK, rerun_in_venv_without
from lib.network import clear_drops, drop_udp
from lib.peers import last_session, sessions, start_aiortc
from lib.ports import wait_http
from lib.processes import stop
from lib.room import Participant, Server
from lib.stats import read_stats
from lib.suite import choose, finish, record, record_broken
from lib.waits import wait_for

rerun_in_venv_without("aiohttp")  # the room-browser gate drives Chromium over DevTools (aiohttp, in .venv)
sys.path.insert(0, os.path.join(ROOT, "scripts", "portal"))
from stack import OUTPUT, PortalStack, terminate  # noqa: E402  (the portal stack, scripts/portal/stack.py)

TOKEN = os.path.join(WORK, "portal.restore-token")


def share_portal(stack, name, duration, extra=(), during=None, source="portal", endpoint_info=None):
    """Runs a portal share to a fresh aiortc endpoint; `during(process, log_path)` runs meanwhile
    (`endpoint_info`, a dict, gets the endpoint's stats path as "stats" first). Returns (exit
    code, stats lines, log text, endpoint session)."""
    endpoint, port, stats_path = start_aiortc(name)
    if endpoint_info is not None:
        endpoint_info["stats"] = stats_path
    share_stats = os.path.join(WORK, f"{name}.share.jsonl")
    log_path = os.path.join(WORK, f"{name}.share.log")
    for path in (share_stats,):
        if os.path.exists(path):
            os.remove(path)
    try:
        if not wait_http(port):
            raise RuntimeError("the aiortc endpoint did not start")
        args = [SHARECTL, "share", "--source", source, "--restore-token-file", TOKEN, "--whip",
                f"http://127.0.0.1:{port}/whip", "--codec", "h264", "--duration", str(duration),
                "--stats-json", share_stats, "--no-audio", "--verbose", *extra]
        with open(log_path, "w") as out:
            process = subprocess.Popen(args, stdout=out, stderr=subprocess.STDOUT, env=stack.env, cwd=ROOT)
            if during:
                during(process, log_path)
            try:
                code = process.wait(timeout=duration + 60)
            except subprocess.TimeoutExpired:
                process.kill()
                code = process.wait()
        time.sleep(1.0)
        lines = read_stats(share_stats, "share") if os.path.exists(share_stats) else []
        return code, lines, open(log_path).read(), last_session(stats_path)
    finally:
        stop(endpoint)


def sent_rate(lines):
    """Frames sent per second over the seconds in which frames went out."""
    moving = [l for l in lines if (l.get("video") or {}).get("fpsSent", 0) > 0]
    return sum(l["video"]["fpsSent"] for l in moving) / len(moving) if moving else 0.0


def moving(stack):
    name = "portal-moving"
    if os.path.exists(TOKEN):
        os.remove(TOKEN)
    stack.start_content()
    code, lines, log, session = share_portal(stack, name, 10, ["--unattended"])
    v = session.get("video") or {}
    last = lines[-1]["video"] if lines else {}
    captured, sent, decoded = last.get("framesCaptured", 0), last.get("framesSent", 0), v.get("framesDecoded", 0)
    capture_rate = captured / lines[-1]["t"] if lines and lines[-1].get("t") else 0
    token = open(TOKEN).read().strip() if os.path.exists(TOKEN) else ""
    # The compositor's rate is what the portal delivered (its output repaints at the content's 30 fps
    # when the machine keeps up). The receiver must decode close to all we sent, and we must send
    # close to all that came — unless the share said what held it back (the machine, or the
    # link: aiortc's REMB on loopback sometimes asks for a few hundred kbit/s; the balanced policy
    # then lowers size and rate, and says "limited by cpu" or "limited by bandwidth").
    limits = sorted({l["video"].get("limitedBy") for l in lines} - {None, "none"})
    cpu_limited = bool(limits)
    ok = (code == 0 and captured > 0 and capture_rate >= 10 and sent > 0 and decoded >= 0.9 * sent
          and (sent >= 0.9 * captured or cpu_limited) and bool(token) and session.get("deleted"))
    record(name, ok, f"exit {code}, the portal delivered {captured} frames ({capture_rate:.1f} fps), sent {sent} "
                     f"({sent_rate(lines):.1f} fps while sending), aiortc decoded {decoded} at "
                     f"{v.get('width')}x{v.get('height')}, limited at times by: {', '.join(limits) or 'nothing'}, token saved: "
                     f"{bool(token)}, DELETE {session.get('deleted')}")
    if not ok:
        print(log[-3000:])
    return token


def token_reuse(stack, first_token):
    name = "portal-token-reuse"
    stack.start_content()
    if not first_token:  # run on its own: a first run makes the grant
        share_portal(stack, name + "-first", 2, ["--unattended"])
        first_token = read_token()
    code, lines, log, session = share_portal(stack, name, 4, ["--unattended"])
    token = open(TOKEN).read().strip() if os.path.exists(TOKEN) else ""
    decoded = (session.get("video") or {}).get("framesDecoded", 0)
    restored = "restored from the saved token, no picker" in log
    ok = code == 0 and bool(first_token) and token == first_token and restored and decoded > 0
    record(name, ok, f"exit {code}, token kept: {token == first_token and bool(token)}, said restored: {restored}, "
                     f"aiortc decoded {decoded}")
    if not ok:
        print(log[-3000:])


def static(stack):
    name = "portal-static"
    stack.stop_content()
    time.sleep(0.5)
    seen = {}

    def during(process, log_path):
        # This portal sends one frame when the stream starts even on a still screen; one that sends
        # none must say so, and then a brief change brings the first frame.
        seen["said"] = wait_for(lambda: "No picture from the screen yet" in open(log_path).read(), 5, interval=0.1)
        if seen["said"]:
            stack.draw_once()

    code, lines, log, session = share_portal(stack, name, 12, ["--unattended"], during=during)
    decoded = (session.get("video") or {}).get("framesDecoded", 0)
    summary = re.search(r"Capture: (\d+) frames from the screen, (\d+) repeats", log)
    real, repeats = (int(summary.group(1)), int(summary.group(2))) if summary else (0, 0)
    captured = [(l.get("t", 0), (l.get("video") or {}).get("framesCaptured", 0)) for l in lines]
    # The still seconds after the first frame: frames there are repeats, about one a second.
    tail = [c for c in captured if c[1] > 0][3:]
    per_second = ((tail[-1][1] - tail[0][1]) / (tail[-1][0] - tail[0][0])) if len(tail) >= 2 and tail[-1][0] > tail[0][0] else 0
    ok = code == 0 and 1 <= real <= 10 and repeats >= 5 and decoded >= 5 and 0.6 <= per_second <= 1.6
    record(name, ok, f"exit {code}, {real} frames from the portal, {repeats} repeats ({per_second:.2f}/s while still), "
                     f"said no first frame: {seen.get('said')}{' (then drew once)' if seen.get('said') else ''}, "
                     f"aiortc decoded {decoded}")
    if not ok:
        print(log[-3000:])


def session_closed(stack):
    name = "portal-session-closed"
    stack.start_content()
    ended = {}

    def during(process, log_path):
        streaming = wait_for(lambda: _sent_any(name), 25, interval=0.1)
        ended["streaming"] = streaming
        stack.stop_portal()
        ended["at"] = time.time()
        try:
            process.wait(timeout=15)
        except subprocess.TimeoutExpired:
            pass
        ended["took"] = time.time() - ended["at"]

    code, lines, log, session = share_portal(stack, name, 40, [], during=during)
    said = "session was closed" in log or "left the session bus" in log
    ok = ended.get("streaming") and code != 0 and said and ended.get("took", 99) < 10
    message = next((l for l in log.splitlines() if l.startswith("sharectl:")), "")
    record(name, ok, f"streaming first: {ended.get('streaming')}, exit {code} {ended.get('took', 0):.1f} s after the "
                     f"portal went, said: {message!r}")
    if not ok:
        print(log[-3000:])
    stack.start_portal()


def restart(stack):
    name = "portal-restart"
    stack.start_content()
    marks = {}

    def during(process, log_path):
        marks["streaming"] = wait_for(lambda: _sent_any(name), 25, interval=0.1)
        marks["at"] = _captured(name)
        # The portal backend's stream node goes away under the share (as when a compositor drops a
        # cast): the share must get the same screen back by itself, without a picker.
        nodes = stack.output(["pw-cli", "ls", "Node"]).decode()
        ids = re.findall(r'id (\d+), type PipeWire:Interface:Node.*?node.name = "(.*?)"', nodes, re.S)
        target = [i for i, n in ids if n == "xdg-desktop-portal-wlr"]
        marks["destroyed"] = target[0] if target else None
        if target:
            stack.output(["pw-cli", "destroy", target[0]])

    code, lines, log, session = share_portal(stack, name, 20, ["--unattended"], during=during)
    after = (lines[-1]["video"]["framesCaptured"] if lines else 0) - (marks.get("at") or 0)
    summary = re.search(r"Capture: (\d+) frames from the screen, (\d+) repeats of a still screen, (\d+) restarts", log)
    restarts = int(summary.group(3)) if summary else 0
    shown = "restarting it on the same screen" in log
    decoded = (session.get("video") or {}).get("framesDecoded", 0)
    # Repeats alone would add about one a second; moving frames after the restart show the capture came back.
    ok = code == 0 and marks.get("destroyed") and shown and restarts >= 1 and after >= 40 and decoded > 0
    record(name, ok, f"exit {code}, destroyed node {marks.get('destroyed')}, restarts {restarts} (shown: {shown}), "
                     f"{after} frames captured after it, aiortc decoded {decoded}")
    if not ok:
        print(log[-3000:])


def pipewire_node(stack):
    """Any PipeWire video node: a test source (scripts/portal/pw_test_screen.c, a stand-in for a
    screen) whose buffers carry a crop region; the share must send the cropped picture."""
    name = "pipewire-node"
    binary = os.path.join(stack.dir, "pw_test_screen")
    cflags = subprocess.run(["pkg-config", "--cflags", "--libs", "libpipewire-0.3"], capture_output=True, text=True,
                            check=True).stdout.split()
    subprocess.run(["cc", "-O2", "-o", binary, os.path.join(ROOT, "scripts/portal/pw_test_screen.c"), *cflags], check=True)
    source = stack.spawn("test-screen", [binary, "1280", "720", "30", "160", "90", "960", "540", "10"])
    try:
        log_path = os.path.join(stack.logs, "test-screen.log")
        found = {}
        def node_id():
            match = re.search(r"NODE_ID=(\d+)", open(log_path).read())
            if match:
                found["id"] = match.group(1)
            return bool(match)
        if not wait_for(node_id, 10, interval=0.1):
            return record(name, False, "the test source printed no node id")
        # Under detail the size is the source's (the crop) whatever the machine's load: the
        # geometry is what this gate judges.
        code, lines, log, session = share_portal(stack, name, 6, source=f"pipewire:{found['id']}",
                                                 extra=("--policy", "detail"))
        v = session.get("video") or {}
        captured = lines[-1]["video"]["framesCaptured"] if lines else 0
        sent = lines[-1]["video"]["framesSent"] if lines else 0
        summary = re.search(r"Capture: (\d+) frames from the screen.*?(\d+) corrupted skipped", log)
        real, corrupted = (int(summary.group(1)), int(summary.group(2))) if summary else (0, 0)
        # Every tenth buffer says it is corrupted: those are skipped, the rest go to the encoder,
        # which sends as many a second as the policy allows; the endpoint decodes what was sent.
        ok = (code == 0 and captured > 0 and sent > 0 and v.get("framesDecoded", 0) >= 0.9 * sent
              and (v.get("width"), v.get("height")) == (960, 540) and real > 0 and 0.05 <= corrupted / (real + corrupted) <= 0.15)
        record(name, ok, f"exit {code}, node {found['id']}: {captured} frames captured, {corrupted} corrupted buffers "
                         f"skipped, {sent} sent, aiortc decoded {v.get('framesDecoded')} at {v.get('width')}x{v.get('height')} "
                         f"(the 960x540 crop of 1280x720)")
        if not ok:
            print(log[-3000:])
    finally:
        terminate(source)


def stale_token(stack):
    """A token the portal does not know (stale) makes a new grant, saved; a malformed one is refused by
    the portal: attended, the share asks again without it; unattended, it stops and says why."""
    name = "portal-stale-token"
    stack.start_content()
    stale = "0b6f3c1e-5a8e-4c9e-9d1a-7e2f6a4b3c2d"
    write_token(stale)
    code1, _, log1, s1 = share_portal(stack, name + "-1", 3, ["--unattended"])
    token1 = read_token()
    ok1 = code1 == 0 and "stale" in log1 and token1 not in ("", stale) and (s1.get("video") or {}).get("framesDecoded", 0) > 0
    write_token("not-a-uuid")
    code2, _, log2, s2 = share_portal(stack, name + "-2", 3)
    token2 = read_token()
    ok2 = code2 == 0 and "was refused" in log2 and token2 not in ("", "not-a-uuid")
    write_token("not-a-uuid")
    log_path = os.path.join(WORK, f"{name}-3.share.log")
    with open(log_path, "w") as out:
        code3 = subprocess.run([SHARECTL, "share", "--source", "portal", "--unattended", "--restore-token-file", TOKEN,
                                "--whip", "http://127.0.0.1:9/whip", "--duration", "2"],
                               stdout=out, stderr=subprocess.STDOUT, env=stack.env, timeout=60).returncode
    log3 = open(log_path).read()
    ok3 = code3 != 0 and "the saved restore token was refused" in log3 and "without --unattended" in log3
    write_token(token2)  # the valid grant from the attended run, for the gates after this one
    said3 = log3.strip().splitlines()[-1] if log3.strip() else ""
    record(name, ok1 and ok2 and ok3,
           f"stale token, unattended: exit {code1}, new token saved: {token1 not in ('', stale)}; malformed token, "
           f"attended: exit {code2}, asked again and saved: {token2 not in ('', 'not-a-uuid')}; malformed token, "
           f"unattended: exit {code3}, said: {said3!r}")
    if not (ok1 and ok2 and ok3):
        print(log1[-1500:], log2[-1500:], log3[-1500:])


def write_token(value):
    with open(TOKEN, "w") as f:
        f.write(value + "\n")


def read_token():
    return open(TOKEN).read().strip() if os.path.exists(TOKEN) else ""


def _captured(name):
    path = os.path.join(WORK, f"{name}.share.jsonl")
    try:
        lines = read_stats(path, "share")
    except (OSError, ValueError):
        return 0
    return (lines[-1].get("video") or {}).get("framesCaptured", 0) if lines else 0


def _sent_any(name):
    path = os.path.join(WORK, f"{name}.share.jsonl")
    try:
        lines = read_stats(path, "share")
    except (OSError, ValueError):
        return False
    return any((l.get("video") or {}).get("framesSent", 0) > 0 for l in lines)


@contextlib.contextmanager
def portal_room(stack, name, extra=()):
    """A room of `sharectl serve` with the portal's screen shared into it (`--unattended`, the
    suite's token) and `watch` as the viewer: yields (sharer, viewer); everything stops after."""
    stack.start_content()
    server = Server(name, state=False, log=os.path.join(WORK, f"{name}.serve.log"))
    invite = server.start()
    sharer = viewer = None
    try:
        sharer = Participant("ana", ["share", "--room", invite, "--source", "portal", "--unattended",
                                     "--restore-token-file", TOKEN, "--no-audio", *extra],
                             os.path.join(WORK, f"{name}.ana.jsonl"), os.path.join(WORK, f"{name}.ana.log"), env=stack.env)
        sharer.invite = invite
        viewer = Participant("bo", ["watch", invite], os.path.join(WORK, f"{name}.bo.jsonl"),
                             os.path.join(WORK, f"{name}.bo.log"))
        yield sharer, viewer
    finally:
        for member in (viewer, sharer):
            if member:
                member.stop()
        server.stop()


@contextlib.contextmanager
def output_size_restored(stack):
    """The compositor's output gets the stack's size back, whatever the body did to it."""
    try:
        yield
    finally:
        stack.output(["swaymsg", "output", OUTPUT, "resolution", stack.size])


def room(stack):
    name = "portal-room"
    with portal_room(stack, name, ["--policy", "detail"]) as (sharer, viewer):
        seen = wait_for(lambda: (viewer.peer("ana").get("screen") or {}).get("framesDecoded", 0) > 30, 40)
        first = viewer.peer("ana").get("screen") or {}
        time.sleep(5)
        screen = viewer.peer("ana").get("screen") or {}
        moving_fps = (screen.get("framesDecoded", 0) - first.get("framesDecoded", 0)) / 5
        sent = sharer.peer("bo").get("video") or {}
        said = sharer.output()
        sharing = next((l for l in said.splitlines() if l.startswith("Sharing")), "")
        ok = (bool(seen) and screen.get("width") == 1280 and screen.get("height") == 720 and moving_fps >= 5
              and "text and detail" in sharing and "synthetic" not in sharing and sent.get("policy") == "detail")
        record(name, ok, f"viewer decoded {screen.get('framesDecoded')} frames at {screen.get('width')}x{screen.get('height')}, "
                         f"{moving_fps:.1f} fps over the last 5 s; sharer: policy {sent.get('policy')!r}, "
                         f"said {sharing!r}")
        if not ok:
            print(said[-2000:])


def room_browser(stack):
    """The portal's screen in a room seen by headless Chromium (the browser client, over DevTools)
    and by `watch` at once: both decode the portal's size with the content moving; then nothing
    draws and both get the still screen's repeats, about one a second, still at full size."""
    from lib.devtools import Browser

    name = "portal-room-browser"
    with portal_room(stack, name, ["--policy", "detail"]) as (sharer, viewer):
        ok, detail = asyncio.run(_room_browser(stack, sharer, viewer, name, Browser))
        record("room-browser", ok, detail)
        if not ok:
            print(sharer.output()[-2000:])


async def _room_browser(stack, sharer, viewer, name, Browser):
    url = sharer.invite
    browser = Browser("cy", url, prefix=name)
    try:
        await browser.connect()

        async def figures():
            page = (await browser.peer("ana")).get("screen") or {}
            built_in = viewer.peer("ana").get("screen") or {}
            return time.time(), page, built_in

        async def both_decode():
            deadline = time.time() + 40
            while time.time() < deadline:
                _, page, built_in = await figures()
                if page.get("framesDecoded", 0) > 30 and built_in.get("framesDecoded", 0) > 30:
                    return True
                await asyncio.sleep(0.5)
            return False

        def rate(a, b, key):
            return (b[key].get("framesDecoded", 0) - a[key].get("framesDecoded", 0)) / max(0.001, b["t"] - a["t"])

        async def window(seconds):
            t0, p0, b0 = await figures()
            await asyncio.sleep(seconds)
            t1, p1, b1 = await figures()
            first, last = {"t": t0, "page": p0, "watch": b0}, {"t": t1, "page": p1, "watch": b1}
            return rate(first, last, "page"), rate(first, last, "watch"), p1, b1

        if not await both_decode():
            _, page, built_in = await figures()
            return False, f"not both decoding within 40 s: Chromium {page}, watch {built_in}"
        await asyncio.sleep(2)
        moving_page, moving_watch, page, built_in = await window(5)
        stack.stop_content()
        await asyncio.sleep(4)
        still_page, still_watch, page_still, built_in_still = await window(8)
        full = lambda s: (s.get("width"), s.get("height")) == (1280, 720)
        ok = (full(page) and full(built_in) and moving_page >= 5 and moving_watch >= 5
              and 0.5 <= still_page <= 2.0 and 0.5 <= still_watch <= 2.0 and full(page_still) and full(built_in_still))
        return ok, (f"moving: Chromium {page.get('width')}x{page.get('height')} at {moving_page:.1f} fps, "
                    f"watch {built_in.get('width')}x{built_in.get('height')} at {moving_watch:.1f} fps; "
                    f"still: Chromium {page_still.get('width')}x{page_still.get('height')} at {still_page:.2f} fps, "
                    f"watch {built_in_still.get('width')}x{built_in_still.get('height')} at {still_watch:.2f} fps "
                    f"(repeats of the still screen, about one a second)")
    finally:
        await browser.close()
        stack.start_content()


def full_hd(stack):
    """The real portal screen at 1920x1080 on a clean link to aiortc (no transport-wide feedback):
    moving content reaches the endpoint 1920 wide at >= 25 fps once the start-up is over (13-19 s:
    in CI runs the full size came at 7 to 16 s); then nothing draws, and the still desktop's repeats
    still decode at 1920x1080 (cheap content must not talk the size down)."""
    name = "portal-full-hd"
    info, samples = {}, []
    with output_size_restored(stack):
        stack.output(["swaymsg", "output", OUTPUT, "resolution", "1920x1080"])
        stack.start_content()
        # The moving picture in a window of its own size, not scaled to the whole output: sway
        # (pixman, on the CPU) then redraws 640x360 a frame instead of scaling to 1920x1080, which
        # on two cores beside the share and aiortc held the portal to 15-17 frames a second in one
        # fresh-clone run (27 in the runs before). A moving ball on a still desktop.
        stack.output(["swaymsg", f"[pid={stack.content.pid}] floating enable"])

        def during(process, log_path):
            started = time.time()
            stopped = False
            while process.poll() is None and time.time() - started < 36:
                video = (last_session(info["stats"]).get("video") or {})
                samples.append((time.time() - started, dict(video)))
                if not stopped and time.time() - started >= 19:
                    stack.stop_content()
                    stopped = True
                time.sleep(0.5)

        code, lines, log, session = share_portal(stack, name, 29, ["--unattended"], during=during, endpoint_info=info)
        stack.start_content()

    def window(start, end):
        inside = [(t, v) for t, v in samples if start <= t <= end and v.get("framesDecoded")]
        if len(inside) < 2:
            return 0.0, {}
        (t0, v0), (t1, v1) = inside[0], inside[-1]
        return (v1["framesDecoded"] - v0["framesDecoded"]) / max(0.001, t1 - t0), v1

    moving_fps, moving = window(13, 19)
    still_fps, still = window(22, 28)
    last = (lines or [{}])[-1].get("video") or {}
    ok = (code == 0 and moving.get("width") == 1920 and moving_fps >= 25 and still.get("width") == 1920
          and still.get("height") == 1080 and still_fps >= 0.5)
    record("full-hd", ok, f"exit {code}; moving (13-19 s): aiortc decoded {moving.get('width')}x{moving.get('height')} at "
                          f"{moving_fps:.1f} fps; still (22-28 s): {still.get('width')}x{still.get('height')} at "
                          f"{still_fps:.2f} fps; the sharer's last second: {last.get('width')}x{last.get('height')}, "
                          f"target {last.get('targetKbps', '?')} kbit/s, limited by {last.get('limitedBy', '?')}")
    if not ok:
        for t, v in samples[::4]:
            print(f"  {t:5.1f} s  {v.get('framesDecoded')} frames {v.get('width')}x{v.get('height')}")
        print(log[-2500:])


def resize(stack):
    name = "portal-resize"
    with portal_room(stack, name) as (sharer, viewer), output_size_restored(stack):
        screen = lambda: viewer.peer("ana").get("screen") or {}
        before = wait_for(lambda: screen().get("framesDecoded", 0) > 30 and screen(), 40) or {}
        changed_at = time.time()
        answer = stack.output(["swaymsg", "output", OUTPUT, "resolution", "1024x768"])
        four_by_three = lambda s: s.get("height") and abs(s["width"] / s["height"] - 4 / 3) < 0.02
        after = wait_for(lambda: four_by_three(screen()) and screen(), 15) or {}
        took = time.time() - changed_at
        time.sleep(2)
        later = screen()
        ok = (bool(before) and b'"success": true' in answer and bool(after) and took <= 4.0
              and later.get("mid") == before.get("mid") and later.get("framesDecoded", 0) > after.get("framesDecoded", 0))
        record(name, ok, f"decoded {before.get('width')}x{before.get('height')} on mid {before.get('mid')!r}; after the "
                         f"output went to 1024x768: {after.get('width')}x{after.get('height')} (4:3) after {took:.1f} s "
                         f"(needs <= 4), mid {later.get('mid')!r}, frames {after.get('framesDecoded')}→{later.get('framesDecoded')}")
        if not ok:
            print(sharer.output()[-2000:])


def _moving_again(name, since, within, rate=10):
    """Seconds after `since` at which the capture delivered >= `rate` frames a second over 2 s (more
    than the still screen's repeats), or None within `within` s."""
    samples = []
    while time.time() - since < within:
        samples.append((time.time(), _captured(name)))
        window = [c for t, c in samples if samples[-1][0] - t <= 2.05]
        if samples[-1][0] - samples[0][0] >= 2 and len(window) >= 2 and window[-1] - window[0] >= 2 * rate:
            return samples[-1][0] - since
        time.sleep(0.25)
    return None


def desktop_fault(stack, name, fault, within, what):
    """An unattended share (a kiosk's) to aiortc while `fault()` breaks the desktop under it and mends
    it: the share keeps going, gets the same screen back from its restore token (no picker) and moves
    again within `within` s of the mend."""
    stack.start_content()
    marks = {}

    def during(process, log_path):
        marks["streaming"] = wait_for(lambda: _sent_any(name), 25, interval=0.1)
        time.sleep(2)
        marks["before"] = _captured(name)
        started = time.time()
        fault()
        marks["mended"] = time.time()
        marks["fault took"] = marks["mended"] - started
        marks["back"] = _moving_again(name, marks["mended"], within)

    code, lines, log, session = share_portal(stack, name, 35, ["--unattended"], during=during)
    decoded = (session.get("video") or {}).get("framesDecoded", 0)
    asked = "asking for the same screen again" in log or "restarting it on the same screen" in log
    back = marks.get("back")
    # Unattended: the share can only have got its screen back from the restore token, never a picker.
    ok = (code == 0 and marks.get("streaming") and back is not None and asked and decoded > 0)
    record(name, ok, f"{what} ({marks.get('fault took', 0):.1f} s); exit {code}; moving again "
                     f"{'%.1f s' % back if back is not None else 'not'} after (needs <= {within}); asked for the "
                     f"screen again: {asked}; aiortc decoded {decoded}")
    if not ok:
        print(log[-3000:])


def portal_back(stack):
    def fault():
        stack.stop_portal()
        time.sleep(3)
        stack.start_portal()
    desktop_fault(stack, "portal-back", fault, 15, "xdg-desktop-portal gone for 3 s and started again")


def backend_restart(stack):
    desktop_fault(stack, "backend-restart", stack.restart_backend, 15, "xdg-desktop-portal-wlr killed and started again")


def pipewire_restart(stack):
    desktop_fault(stack, "pipewire-restart", stack.restart_pipewire, 10,
                  "PipeWire and WirePlumber stopped and started again, then the portal backend")


def resize_whip(stack):
    name = "resize-whip"
    stack.start_content()
    marks = {}

    def stats():
        try:
            return read_stats(os.path.join(WORK, f"{name}.share.jsonl"), "share")
        except (OSError, ValueError):
            return []

    def during(process, log_path):
        marks["streaming"] = wait_for(lambda: _sent_any(name), 25, interval=0.1)
        time.sleep(3)
        before = (stats() or [{}])[-1].get("video") or {}
        marks["answer"] = stack.output(["swaymsg", "output", OUTPUT, "resolution", "1024x768"])
        time.sleep(5)
        after = (stats() or [{}])[-1].get("video") or {}
        time.sleep(3)
        extra = lambda v: v.get("keyframes", 0) - v.get("periodicKeyframes", 0)
        marks["keyframes"] = extra(after) - extra(before)
        marks["size"] = (after.get("width"), after.get("height"))

    with output_size_restored(stack):
        code, lines, log, session = share_portal(stack, name, 16, ["--unattended"], during=during)
    v = session.get("video") or {}
    w, h = v.get("width") or 0, v.get("height") or 1
    republished = log.count("Published again")
    ok = (code == 0 and marks.get("streaming") and b'"success": true' in marks.get("answer", b"")
          and marks.get("keyframes", 99) <= 2 and republished == 0 and abs(w / h - 4 / 3) < 0.02)
    record(name, ok, f"exit {code}; sent {marks.get('size')} 5 s after the output went to 1024x768, with "
                     f"{marks.get('keyframes')} keyframes beyond the periodic ones (needs <= 2); WHIP sessions "
                     f"published again: {republished}; aiortc decoded {v.get('framesDecoded')} frames, last at {w}x{h}")
    if not ok:
        print(log[-3000:])


def reconnect_portal(stack):
    name = "reconnect-portal"
    stack.start_content()
    endpoint = {}
    marks = {}

    def during(process, log_path):
        marks["streaming"] = wait_for(lambda: _sent_any(name), 25, interval=0.1)
        time.sleep(2)
        drop_udp(100, table="sharectl_portal_reconnect")
        try:
            marks["lost"] = wait_for(lambda: "The connection was lost" in open(log_path).read(), 45, interval=0.2)
            # Still dropped when it first publishes again, so that attempt fails too (ICE) and its
            # end closes the capture: the next attempt must open the portal again (it once shared
            # the closed session and ended: "the portal session is closed").
            marks["failed again"] = wait_for(lambda: "Publishing failed" in open(log_path).read(), 30, interval=0.2)
        finally:
            clear_drops("sharectl_portal_reconnect")
        marks["again"] = wait_for(lambda: len(sessions(endpoint["stats"])) >= 2
                                  and (last_session(endpoint["stats"]).get("video") or {}).get("framesDecoded", 0) > 60,
                                  40, interval=0.5)
        process.terminate()  # SIGTERM: the share ends as asked, its session deleted

    try:
        code, lines, log, session = share_portal(stack, name, 120, ["--unattended", "--reconnect"], during=during,
                                                 endpoint_info=endpoint)
    finally:
        clear_drops("sharectl_portal_reconnect")
    all_sessions = sessions(endpoint.get("stats", ""))
    decoded = (session.get("video") or {}).get("framesDecoded", 0)
    # A second portal session after the loss, opened from the token the first one saved (no second
    # "no saved restore token" notice; unattended, a picker is never shown).
    portal_sessions = log.count("portal: session /org/freedesktop/portal")
    reopened = portal_sessions >= 2 and log.count("no saved restore token") <= 1
    ok = (marks.get("streaming") and marks.get("lost") and marks.get("failed again") and marks.get("again")
          and len(all_sessions) >= 2
          and decoded > 60 and "Published again" in log and reopened)
    record(name, ok, f"lost and said so: {marks.get('lost')}; a publish while still cut failed: "
                     f"{bool(marks.get('failed again'))}; WHIP sessions {len(all_sessions)}, the last decoded "
                     f"{decoded} frames of the portal's screen; portal sessions {portal_sessions}, the second from the token: "
                     f"{reopened}; "
                     f"exit {code}")
    if not ok:
        print(log[-3000:])


def sources(stack):
    name = "sources"
    out = subprocess.run([SHARECTL, "sources", "--restore-token-file", TOKEN], capture_output=True, text=True,
                         env=stack.env, timeout=30)
    text = out.stdout
    ok = (out.returncode == 0 and "ScreenCast version 4" in text and re.search(r"source types\s+monitor", text)
          and re.search(r"cursor modes\s+hidden, embedded", text) and "PipeWire 0.3" in text and "daemon reachable" in text
          and re.search(r"restore token\s+(saved|none)", text))
    record(name, bool(ok), " | ".join(l.strip() for l in text.splitlines() if l.strip()))


def no_portal(stack):
    name = "portal-no-portal"
    stack.stop_portal()
    try:
        log_path = os.path.join(WORK, f"{name}.share.log")
        with open(log_path, "w") as out:
            code = subprocess.run([SHARECTL, "share", "--source", "portal", "--unattended", "--restore-token-file", TOKEN,
                                   "--whip", "http://127.0.0.1:9/whip", "--duration", "2"],
                                  stdout=out, stderr=subprocess.STDOUT, env=stack.env, timeout=60).returncode
        log = open(log_path).read()
        ok = code != 0 and "xdg-desktop-portal is not running" in log and "install xdg-desktop-portal" in log
        record(name, ok, f"exit {code}, said: {log.strip().splitlines()[-1] if log.strip() else ''!r}")
    finally:
        stack.start_portal()


NAMES = ["sources", "moving", "token-reuse", "static", "stale-token", "restart", "pipewire-node", "full-hd", "room",
         "room-browser", "resize", "resize-whip", "portal-back", "backend-restart", "pipewire-restart",
         "reconnect-portal", "session-closed", "no-portal", "teardown"]


def main():
    chosen = choose("portal", NAMES)
    stack = PortalStack(WORK)
    pids = []
    if os.path.exists(TOKEN):
        os.remove(TOKEN)
    try:
        stack.__enter__()
        pids = stack.pids()
        token = ""
        gates = [
            ("sources", lambda: sources(stack)),
            ("moving", lambda: moving(stack)),
            ("token-reuse", lambda: token_reuse(stack, token)),
            ("static", lambda: static(stack)),
            ("stale-token", lambda: stale_token(stack)),
            ("restart", lambda: restart(stack)),
            ("pipewire-node", lambda: pipewire_node(stack)),
            ("full-hd", lambda: full_hd(stack)),
            ("room", lambda: room(stack)),
            ("room-browser", lambda: room_browser(stack)),
            ("resize", lambda: resize(stack)),
            ("resize-whip", lambda: resize_whip(stack)),
            ("portal-back", lambda: portal_back(stack)),
            ("backend-restart", lambda: backend_restart(stack)),
            ("pipewire-restart", lambda: pipewire_restart(stack)),
            ("reconnect-portal", lambda: reconnect_portal(stack)),
            ("session-closed", lambda: session_closed(stack)),
            ("no-portal", lambda: no_portal(stack)),
        ]
        for name, gate in gates:
            if name not in chosen:
                continue
            try:
                value = gate()
                if name == "moving":
                    token = value
            except Exception as error:  # a gate that breaks is a failed gate, with its reason
                record_broken(name, error)
    except Exception as error:
        record("stack", False, f"the portal stack did not come up: {error!r}")
    finally:
        pids = sorted(set(pids + stack.pids()))
        leftovers = stack.close()
    if "teardown" in chosen:
        alive = [p for p in pids if os.path.exists(f"/proc/{p}") and "Z" not in open(f"/proc/{p}/stat").read().split(")")[-1][:3]]
        mounts = [l.split()[4] for l in open("/proc/self/mountinfo") if "sharectl-portal." in l]
        ok = not leftovers and not alive and not mounts and not os.path.exists(stack.dir)
        record("teardown", ok, f"{len(pids)} processes started, left alive {alive or 'none'}, mounts {mounts or 'none'}, "
                               f"directory removed: {not os.path.exists(stack.dir)}")
    return finish()


if __name__ == "__main__":
    sys.exit(main())
