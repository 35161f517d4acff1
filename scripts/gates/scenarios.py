#!/usr/bin/env python3
"""Scenario gates: `sharectl scenario run Scenarios/NAME.json` for real, inside a network namespace
where only loopback exists (scripts/gates/run.sh enters it): the room server, `share --room` with
the synthetic screen, the built-in viewer (`watch`) or headless Chromium, faults put in on the
processes' standard input (or the browser's page address, or a scripted synthetic camera). The
runner judges each expectation from the processes' --stats-json files and prints the figures;
a gate passes when the runner exits 0. Each gate prints PASS or FAIL with those figures; the last
line is "N passed, N failed".

  capture-stall   the capture stops: the watchdog restarts it within 6 s, the view moves again
                  within 12 s, no rebuild.
  encoder-stall   the encoder puts out nothing (an encoder per viewer, `--no-simulcast`): keyframe,
                  then a fresh encoder within 15 s, the view back within 20 s, no new transceiver.
  wedge           the viewer's decoder swallows every frame: the sharer's notice within 10 s, a
                  rebuild within 20 s, the view restored within 30 s, no share again.
  wedge-sticky    every new decoder wedges too: a rebuild within 20 s, then the view restored
                  (only sharing again can do it) or the give-up notice within 40 s.
  camera-unplug   the camera beside the screen dies (a scripted synthetic camera): "Camera
                  disconnected" within 5 s, the screen never still over 3 s, no watchdog step.
  wedge-browser   wedge with headless Chromium as the receiver (its encoded transform drops the
                  screen's frames), judged from what it reports to the sharer.
  wedge-browser-sharer   the browser client shares (Chromium's fake screen) and the built-in
                  viewer's decoder swallows every frame: the browser's own ladder (ladder.js) says
                  the notice within 10 s, rebuilds within 20 s, the view is restored within 30 s,
                  no share again.
  wedge-browser-sharer-sticky   every new decoder of the viewer wedges too: the browser rebuilds
                  within 20 s, then its share again restores the view or it gives up with the
                  notice within 40 s.
  wedge-shared    wedge with a second viewer on the same layer of the sharer's shared layer
                  encoders (every other scenario's sharer, too, shares from them, as `share
                  --room` does, but encoder-stall's): the ladder rebuilds for the wedged viewer
                  alone (its new section starts on an encoder of its own), the other's view
                  never still over 2 s.
  encoder-stall-shared   the shared layer encoder both viewers are sent stalls: a fresh encoder
                  (the layer's) within 15 s and both views back within 20 s.
  reshare         the sharer stops and shares again by hand, twice (the same section sends anew):
                  the view is back within 10 s each time and the ladder takes no step.
  loss-10         10 % of every UDP datagram lost at random on loopback from the start: NACK and
                  RTX keep the view at 10 fps or more, never still over 4 s, and the ladder below
                  rebuild.
  wedge@janus     wedge.json with the room on Janus (`scenario run --sfu janus`: `serve --sfu
                  janus` starts a Janus of its own, gathering on j0's 127.0.0.2, as in janus_room):
                  the viewer reports the stall over the room's socket, the sharer's ladder says the
                  notice and asks the viewer to subscribe afresh (its rebuild), the view is restored,
                  no share again. The same expectations as the mesh.
  wedge-sticky@janus   wedge-sticky.json on Janus: the fresh subscription wedges too, and the
                  sharer's share again (the screen published anew into the VideoRoom from the same
                  capture) restores the view, or it gives up with the notice.
  wedge-browser-sharer-sticky@janus   wedge-browser-sharer-sticky.json on Janus: Chromium shares
                  from the room's Janus page (its screen a publisher of its own, announced as
                  janus:FEED) and climbs its own ladder (ladder.js) on the watch's reports over the
                  room's socket: a `restart` signal to the viewer (its rebuild), then its share
                  again (the same track published anew on a new handle, a new feed), which the
                  watch follows and the wedge ends with; or the give-up notice.
  reshare@janus   (named only; not in the default list) reshare.json on Janus: SIGUSR1 takes the
                  screen out of the VideoRoom and, 3 s later, publishes it anew; the viewer follows
                  it to each new feed within 10 s, no ladder step of rebuild or above. Its sharer
                  sends VP8, and in one fresh-clone run Janus 1.1.2 itself went away 6 s in (the
                  door closed 1011, nothing decoded after 2 frames) while it passed here by hand.
"""
import os
import subprocess
import sys

from lib.janus import add_j0
from lib.room import say_janus_crash

from lib.paths import ROOT, SHARECTL, WORK
from lib.suite import choose, finish, record, run_gates

GATES = ["capture-stall", "encoder-stall", "wedge", "wedge-sticky", "camera-unplug", "wedge-browser",
         "wedge-browser-sharer", "wedge-browser-sharer-sticky", "wedge-shared", "encoder-stall-shared", "reshare",
         "loss-10", "wedge@janus", "wedge-sticky@janus", "wedge-browser-sharer-sticky@janus"]
NAMED_ONLY = ["reshare@janus"]


def run(name):
    out = os.path.join(WORK, f"scenario-{name}")
    log = os.path.join(WORK, f"scenario-{name}.log")
    file, _, sfu = name.partition("@")
    extra = []
    if sfu == "janus":
        add_j0()
        extra = ["--sfu", "janus", "--janus-interface", "j0"]
    try:
        with open(log, "w") as sink:
            code = subprocess.run([SHARECTL, "scenario", "run", f"Scenarios/{file}.json", "--out", out, *extra],
                                  stdout=sink, stderr=subprocess.STDOUT, cwd=ROOT, timeout=180).returncode
    except subprocess.TimeoutExpired:
        record(name, False, f"the runner did not end within 180 s (see {log})")
        return
    say_janus_crash(os.path.join(out, "server.log"))
    text = open(log).read()
    judged = [line.strip() for line in text.splitlines() if line.startswith("  met") or line.startswith("  FAILED")]
    problem = [line for line in text.splitlines() if line.startswith("sharectl:")]
    detail = "; ".join(judged) or "; ".join(problem) or f"no verdicts (see {log})"
    if code != 0 and problem and judged:
        detail += f" [{problem[-1]}]"
    record(name, code == 0 and bool(judged), f"{detail} (timeline: {out}/timeline.txt)")


def main():
    chosen = choose("scenarios", GATES + NAMED_ONLY)
    if not sys.argv[1:]:
        chosen = set(GATES)  # a named-only gate runs when named
    run_gates([(name, lambda name=name: run(name)) for name in GATES + NAMED_ONLY], chosen)
    return finish()


if __name__ == "__main__":
    sys.exit(main())
