#!/usr/bin/env python3
"""Room reconnect gate: a room share outlives its room server with `--reconnect`, and ends with the
reason without it. Inside the network namespace scripts/gates/run.sh makes; the last line is
"N passed, N failed".

  server-gone   `sharectl serve --grace 15 --state FILE`; Ana shares with `--reconnect`, Bo shares
                without it, Vi watches. The server is killed and started again 40 s later (past
                the grace: every place is lost) on the same port and state file. Bo ends within
                45 s of the kill with a non-zero exit and "the room server has not answered for
                30 s"; Ana keeps trying, joins again as a new participant, and Vi decodes her
                screen again within 70 s of the restart.
"""
import os
import sys
import time

from lib.paths import WORK
from lib.room import Participant, Server
from lib.suite import choose, finish, record, run_gates
from lib.waits import wait_for

OUTAGE = 40


def screen_frames(viewer, name):
    return (viewer.peer(name).get("screen") or {}).get("framesDecoded", 0)


def gate_server_gone():
    name = "server-gone"
    server = Server("reconnect", log=os.path.join(WORK, "room-reconnect.serve{n}.log"))
    members = []
    try:
        url = server.start()

        def join(who, args):
            member = Participant(who, args, os.path.join(WORK, f"room-reconnect.{who}.jsonl"),
                                 os.path.join(WORK, f"room-reconnect.{who}.log"))
            members.append(member)
            return member

        ana = join("Ana", ["share", "--room", url, "--reconnect", "--size", "960x540", "--fps", "15", "--no-audio"])
        bo = join("Bo", ["share", "--room", url, "--size", "640x360", "--fps", "10", "--no-audio"])
        vi = join("Vi", ["watch", url, "--no-audio"])
        first = wait_for(lambda: screen_frames(vi, "Ana") > 15, 40)
        if not first:
            return record(name, False, f"Vi never decoded Ana's screen before the outage ({screen_frames(vi, 'Ana')})")
        server.kill()
        killed = time.time()
        bo_code = None
        while time.time() < killed + 45 and bo_code is None:
            bo_code = bo.process.poll()
            time.sleep(0.25)
        bo_after = time.time() - killed
        time.sleep(max(0.0, killed + OUTAGE - time.time()))
        ana_alive = ana.process.poll() is None
        server.start()
        restarted = time.time()

        # Vi joined again, and then Ana's screen decodes: 15 new frames after that (the count may
        # carry over from before the outage).
        rejoined = wait_for(lambda: (vi.last() or {}).get("welcomes", 0) >= 2, 70, interval=0.5)
        base = screen_frames(vi, "Ana")
        again = rejoined and wait_for(lambda: screen_frames(vi, "Ana") > base + 15,
                                      max(1.0, restarted + 70 - time.time()), interval=0.5)
        back_after = time.time() - restarted
        ana_line = ana.last() or {}
        bo_said = "the room server has not answered for 30 s" in bo.output()
        checks = {
            "Bo ended without --reconnect": bo_code not in (None, 0) and bo_said,
            "Ana still running through the outage": ana_alive,
            "Vi decodes Ana again within 70 s": bool(again),
            "Ana joined again as a new participant": ana_line.get("welcomes", 0) >= 2,
        }
        failed = [k for k, v in checks.items() if not v]
        record(name, not failed,
               f"Bo (no --reconnect): exit {bo_code} {bo_after:.1f} s after the kill, said the reason: {bo_said}; "
               f"Ana (--reconnect) running after {OUTAGE} s without a server: {ana_alive}; after the restart Vi "
               f"decoded Ana's screen again {back_after:.1f} s later: {bool(again)} ({screen_frames(vi, 'Ana')} "
               f"frames; Ana welcomed {ana_line.get('welcomes')} times, Vi {(vi.last() or {}).get('welcomes')})"
               + (f"; FAILED: {failed}" if failed else ""))
        if failed:
            print(bo.output()[-800:] + ana.output()[-1200:])
    finally:
        for member in members:
            member.stop()
        server.stop()


GATES = [("server-gone", gate_server_gone)]


def main():
    chosen = choose("room_reconnect", [name for name, _ in GATES])
    run_gates(GATES, chosen)
    return finish()


if __name__ == "__main__":
    sys.exit(main())
