#!/usr/bin/env python3
"""Room layer gates: a mesh room of `sharectl serve` whose sharer encodes its screen once for
everyone (`share --room`'s default: three shared layer encoders, full, 1/2 and 1/4 of the size,
each connection sent the layer its own estimate carries), with headless Chromium and two sharectl
viewers, inside a network namespace where only loopback exists (scripts/gates/run.sh enters it).
The sharer's side is read from its --stats-json (`peers[].video.layer`), the viewers' from theirs
and from the page (window.sharectlState). Each gate prints PASS or FAIL with the figures it judged.

  shared   sharectl "Ana" shares a synthetic 1280x720 screen and a tone (`share --room`); Chromium
           "Bo" and sharectl "Cy", "Dee" and "Eli" (`watch`; Eli with --no-transport-cc, a receiver
           that gives no transport-wide feedback, as aiortc gives none) join. Everyone decodes her
           screen and hears the tone; on the unshaped loopback Ana sends each of them the full
           layer (one encoder for all of them; a layer sent to no one does not run). Ana's
           estimate for Eli moves without transport-wide feedback, for Cy with it (`ccInputs`).
  capped   Bo's, Dee's and Eli's downlinks from Ana are capped at 400 kbit/s each (an htb class of
           its own on the port Ana sends them to, from her ICE pair with each). Chromium
           (transport-wide feedback), sharectl with it and sharectl without it each move to a
           smaller layer and decode at least 15 fps over a 10 s window, smaller than Cy's picture,
           while Cy keeps the full layer throughout.

The gates run in this order on one call; naming `capped` runs `shared` too.
"""
import asyncio
import os
import re
import sys

from lib.paths import WORK, rerun_in_venv_without

rerun_in_venv_without("aiohttp")  # run.sh uses the system python; aiohttp lives in the project's .venv

from lib.devtools import GRACE  # noqa: E402
from lib.devtools import Browser  # noqa: E402
from lib.room import Participant, Server  # noqa: E402
from lib.shaping import DownlinkCap  # noqa: E402
from lib.suite import record, run_call_gates  # noqa: E402
from lib.waits import wait_for_async  # noqa: E402

CAP_KBIT = 400
WINDOW = 10


class Sharectl(Participant):
    def __init__(self, name, args):
        super().__init__(name, args + ["--log-level", "notice"], os.path.join(WORK, f"layers.{name}.jsonl"),
                         os.path.join(WORK, f"layers.{name}.log"))

    def stop(self):
        super().stop(grace=GRACE)


def frames(view):
    return (view or {}).get("framesDecoded", 0) or 0


class Call:
    def __init__(self):
        self.server = Server("layers")
        self.ana = self.bo = self.cy = self.dee = self.eli = None

    def layer_of(self, name):
        """The layer Ana says she sends `name` (`full`, `half`, `quarter`), None before she does."""
        return (self.ana.peer(name).get("video") or {}).get("layer")

    def port_of(self, name):
        """The port Ana sends `name`'s media to: the far end of her ICE pair with them."""
        pair = (self.ana.peer(name).get("connection") or {}).get("pair") or ""
        match = re.search(r"<-> 127\.0\.0\.1:(\d+) ", pair)
        return int(match.group(1)) if match else None

    async def views(self):
        """What each viewer decodes of Ana's screen: {name: screen view}."""
        got = {"Bo": (await self.bo.peer("Ana")).get("screen") or {}}
        for member in (self.cy, self.dee, self.eli):
            got[member.name] = member.peer("Ana").get("screen") or {}
        return got

    async def close(self):
        for member in (self.ana, self.cy, self.dee, self.eli):
            if member:
                member.stop()
        if self.bo:
            await self.bo.close()
        if self.server.process:
            self.server.stop(grace=GRACE)


async def gate_shared(call):
    url = call.server.start()
    call.ana = Sharectl("Ana", ["share", "--room", url, "--size", "1280x720", "--fps", "30",
                                "--audio", "synthetic", "--audio-output", "none"])
    call.bo = Browser("Bo", url, prefix="layers")
    await call.bo.connect()
    call.cy = Sharectl("Cy", ["watch", url, "--audio-output", "none", "--no-audio"])
    call.dee = Sharectl("Dee", ["watch", url, "--audio-output", "none", "--no-audio"])
    call.eli = Sharectl("Eli", ["watch", url, "--audio-output", "none", "--no-audio", "--no-transport-cc"])
    names = ("Bo", "Cy", "Dee", "Eli")

    async def ready():
        views = await call.views()
        bo_audio = (await call.bo.peer("Ana")).get("audio") or {}
        heard = [bo_audio.get("hearing")] + [(m.peer("Ana").get("audio") or {}).get("hearing")
                                              for m in (call.cy, call.dee, call.eli)]
        inputs = {n: (call.ana.peer(n).get("video") or {}).get("ccInputs") or [] for n in ("Cy", "Eli")}
        ok = (all(frames(views[n]) >= 60 for n in names) and all(heard)
              and all(call.layer_of(n) == "full" for n in names)
              and "twcc" in inputs["Cy"] and inputs["Eli"] and "twcc" not in inputs["Eli"])
        return (views, heard) if ok else None

    got = await wait_for_async(ready, 60)
    views, heard = got or (await call.views(), None)
    sent = {n: call.ana.peer(n).get("video") or {} for n in names}
    record("shared", got is not None,
           "decoded of Ana's screen: "
           + ", ".join(f"{n} {frames(views[n])} frames at {views[n].get('width')}x{views[n].get('height')}"
                       for n in names)
           + f"; hearing her tone (Bo, Cy, Dee, Eli): {heard}; Ana's estimate inputs: Cy "
           + f"{(sent['Cy'].get('ccInputs'))}, Eli {(sent['Eli'].get('ccInputs'))}; Ana sends "
           + ", ".join(f"{n} the {sent[n].get('layer')} layer ({sent[n].get('width')}x{sent[n].get('height')}, "
                       f"{sent[n].get('bitrateKbps')} kbit/s, {sent[n].get('encoder')})" for n in names))


async def gate_capped(call):
    capped = ("Bo", "Dee", "Eli")
    cap = DownlinkCap(CAP_KBIT, [(name, "127.0.0.1", lambda name=name: call.port_of(name)) for name in capped])
    try:
        async def moved():
            layers = {n: call.layer_of(n) for n in ("Bo", "Cy", *capped)}
            views = await call.views()
            ok = (all(layers[n] in ("half", "quarter") for n in capped)
                  and all(frames(views[n]) > 0 for n in views))
            return layers if ok else None

        settled = await wait_for_async(moved, 30)
        await asyncio.sleep(3)  # the switch's keyframe through the cap
        before = await call.views()
        seen = {n: set() for n in ("Bo", "Cy", *capped)}
        for _ in range(WINDOW):
            await asyncio.sleep(1)
            for n in seen:
                seen[n].add(call.layer_of(n))
        after = await call.views()
    finally:
        cap.stop()
    fps = {n: (frames(after[n]) - frames(before[n])) / WINDOW for n in after}
    widths = {n: after[n].get("width") or 0 for n in after}
    held = all(cap.held(n) for n in capped)
    smaller = widths["Cy"] > 0 and all(0 < widths[n] < widths["Cy"] for n in capped)
    ok = (settled is not None and held and seen["Cy"] == {"full"}
          and all(seen[n] <= {"half", "quarter"} for n in capped)
          and all(fps[n] >= 15 for n in fps) and smaller)
    record("capped", ok,
           f"Bo (Chromium), Dee (sharectl) and Eli (sharectl without transport-wide feedback) capped at "
           f"{CAP_KBIT} kbit/s ({cap.report()}); moved: {settled}; "
           f"layers Ana sent over the {WINDOW} s window: "
           + ", ".join(f"{n} {sorted(seen[n], key=str)}" for n in seen)
           + "; decoded over it: " + ", ".join(f"{n} {fps[n]:.1f} fps at {widths[n]}x{after[n].get('height')}"
                                              for n in fps)
           + " (want Cy full only, Bo, Dee and Eli half or quarter, smaller than Cy's, each 15 fps or more)")


GATES = [("shared", gate_shared), ("capped", gate_capped)]


if __name__ == "__main__":
    sys.exit(asyncio.run(run_call_gates("room_layers", GATES, Call, needed=1)))
