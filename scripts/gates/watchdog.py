#!/usr/bin/env python3
"""Screen-watchdog gates: faults injected into a running share (typed on its stdin, as a drill
would) and the watchdog's repair judged from what the receiver decodes — aiortc behind WHIP, inside
the network namespace scripts/gates/run.sh makes. The last line is "N passed, N failed".

  capture-stall  the screen capture stops delivering: the watchdog restarts it (restartCapture)
                 and the endpoint decodes new frames again.
  encoder-stall  the encoder takes frames and produces none: keyframe, then a fresh encoder a third
                 smaller, and the endpoint decodes new frames again at the smaller size.
  reconnect      `share --reconnect`, and every UDP datagram dropped (nftables, on the way in)
                 until the share says the connection was lost, and 4 s more: consent expires
                 (RFC 7675: nothing heard from the endpoint for 30 s), sending stops and the
                 connection is lost, the WHIP session deleted, and once UDP flows again a new
                 session is published and the endpoint decodes it. The seconds from the drop to
                 the share's consent warning and to its "connection was lost" are printed.
"""
import sys
import time

from lib.network import clear_drops, drop_udp
from lib.peers import last_session, sessions, start_aiortc
from lib.ports import wait_http
from lib.processes import stop
from lib.sharectl import Share
from lib.suite import choose, finish, record, run_gates


def decoded(stats_path):
    return (last_session(stats_path).get("video") or {}).get("framesDecoded", 0)


def steps(share):
    """Every watchdog step the share reported, in order, without repeats."""
    seen, out = set(), []
    for line in share.lines():
        for step in ((line.get("watchdog") or {}).get("recent") or []):
            if step["number"] not in seen:
                seen.add(step["number"])
                out.append(step)
    return out


def drill(name, fault, judge):
    endpoint, port, stats_path = start_aiortc(name)
    share = None
    try:
        if not wait_http(port):
            return record(name, False, "the aiortc endpoint did not start")
        share = Share(name, f"http://127.0.0.1:{port}/whip", "balanced", size="1280x720")
        time.sleep(13)  # past the watchdog's first 10 s
        before = decoded(stats_path)
        share.type(f"fault {fault}")
        injected_at = share.last().get("t", 0)
        time.sleep(16)
        after = decoded(stats_path)
        time.sleep(4)
        final = decoded(stats_path)
        code = share.finish()
        taken = steps(share)
        ok, detail = judge(taken, injected_at, before, after, final, share.last())
        record(name, ok and code == 0, f"{detail}; exit {code}")
        if not ok:
            print(share.log()[-2500:])
    finally:
        if share and share.process.poll() is None:
            share.process.kill()
        stop(endpoint)


def gate_reconnect():
    name = "reconnect"
    endpoint, port, stats_path = start_aiortc(name)
    share = None
    try:
        if not wait_http(port):
            return record(name, False, "the aiortc endpoint did not start")
        share = Share(name, f"http://127.0.0.1:{port}/whip", "balanced", size="960x540", duration=170,
                      extra=["--reconnect"])
        time.sleep(8)
        first = decoded(stats_path)
        drop_udp(100, table="sharectl_reconnect")
        dropped_at = time.time()
        expired_after = lost_after = None
        try:
            deadline = time.time() + 75
            while time.time() < deadline and lost_after is None:
                text = share.log()
                if expired_after is None and "consent expired" in text:
                    expired_after = time.time() - dropped_at
                if "The connection was lost" in text:
                    lost_after = time.time() - dropped_at
                time.sleep(0.1)
            lost = "The connection was lost" in share.log()
            time.sleep(4)
        finally:
            clear_drops("sharectl_reconnect")
        deadline = time.time() + 75
        while time.time() < deadline and not (len(sessions(stats_path)) >= 2 and decoded(stats_path) > 30):
            time.sleep(1)
        all_sessions = sessions(stats_path)
        again = decoded(stats_path) if len(all_sessions) >= 2 else 0
        code = share.finish()
        text = share.log()
        said = [line for line in text.splitlines() if "connection was lost" in line or "Published again" in line
                or "Publishing failed" in line][:4]
        on_consent = any("connection was lost" in line and "consent expired" in line for line in said)
        ok = lost and on_consent and len(all_sessions) >= 2 and again > 30 and code == 0 and "Published again" in text

        def seconds(value):
            return "never" if value is None else f"{value:.1f} s"

        record(name, ok, f"decoded {first} before UDP was dropped; consent expired after {seconds(expired_after)}, "
                         f"the share said the connection was lost after {seconds(lost_after)}; lost and said so: {lost}; WHIP sessions at the "
                         f"endpoint {len(all_sessions)}, the last decoded {again} frames; said {said}; exit {code}")
        if not ok:
            print(text[-2500:])
    finally:
        if share and share.process.poll() is None:
            share.process.kill()
        clear_drops("sharectl_reconnect")
        stop(endpoint)


def judge_capture(taken, injected_at, before, after, final, last):
    restart = next((s for s in taken if s["action"] == "restartCapture"), None)
    moving = final > after > before
    detail = (f"fault at t={injected_at:.0f} s; steps {[(round(s['t']), s['action']) for s in taken]}; "
              f"restartCapture {'at t=%.0f s (%s)' % (restart['t'], restart['reason']) if restart else 'never'}; "
              f"aiortc decoded {before} before, {after}, then {final}")
    return restart is not None and restart["t"] >= injected_at and moving, detail


def judge_encoder(taken, injected_at, before, after, final, last):
    names = [s["action"] for s in taken]
    ladder = "keyframe" in names and "freshEncoder" in names and names.index("keyframe") < names.index("freshEncoder")
    moving = final > after > before
    video = last.get("video", {})
    detail = (f"fault at t={injected_at:.0f} s; steps {[(round(s['t']), s['action']) for s in taken]}; "
              f"aiortc decoded {before} before, {after}, then {final}; sending {video.get('width')}x{video.get('height')} "
              f"from encoder #{video.get('encodersMade')}")
    return ladder and moving, detail


GATES = [
    ("capture-stall", lambda: drill("capture-stall", "capture-stall", judge_capture)),
    ("encoder-stall", lambda: drill("encoder-stall", "encoder-stall", judge_encoder)),
    ("reconnect", gate_reconnect),
]


def main():
    chosen = choose("watchdog", [name for name, _ in GATES])
    run_gates(GATES, chosen)
    return finish()


if __name__ == "__main__":
    sys.exit(main())
