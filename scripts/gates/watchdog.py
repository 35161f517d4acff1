#!/usr/bin/env python3
"""Screen-watchdog gates: faults injected into a running share (typed on its stdin, as a drill
would) and the watchdog's repair judged from what the receiver decodes — aiortc behind WHIP, inside
the network namespace scripts/gates/run.sh makes. The last line is "N passed, N failed".

  capture-stall  the screen capture stops delivering: the watchdog restarts it (restartCapture)
                 and the endpoint decodes new frames again.
  encoder-stall  the encoder takes frames and produces none: keyframe, then a fresh encoder a third
                 smaller, and the endpoint decodes new frames again at the smaller size.
"""
import json
import os
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import transport  # noqa: E402
from transport import last_session, record, start_aiortc, stop, wait_http  # noqa: E402
from send import Share  # noqa: E402


def decoded(stats_path):
    return (last_session(stats_path).get("video") or {}).get("framesDecoded", 0)


def steps(share):
    """Every watchdog step the share reported, in order, without repeats."""
    seen, out = set(), []
    try:
        for line in open(share.stats_path):
            for step in ((json.loads(line).get("watchdog") or {}).get("recent") or []):
                if step["number"] not in seen:
                    seen.add(step["number"])
                    out.append(step)
    except (OSError, ValueError):
        pass
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


GATES = {
    "capture-stall": lambda: drill("capture-stall", "capture-stall", judge_capture),
    "encoder-stall": lambda: drill("encoder-stall", "encoder-stall", judge_encoder),
}


def main():
    only = set(sys.argv[1:])
    unknown = only - set(GATES)
    if unknown:
        print(f"watchdog gates: no gate named {', '.join(sorted(unknown))} (have: {', '.join(GATES)})")
        return 2
    for name, gate in GATES.items():
        if not only or name in only:
            try:
                gate()
            except Exception as error:
                record(name, False, f"the gate broke: {error!r}")
    passed = sum(transport.results)
    print(f"{passed} passed, {len(transport.results) - passed} failed")
    return 0 if passed == len(transport.results) else 1


if __name__ == "__main__":
    sys.exit(main())
