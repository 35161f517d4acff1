#!/usr/bin/env python3
"""Audio gates: call audio through a real PipeWire daemon (pipewire + WirePlumber, headless, with
a private D-Bus bus), inside the gates' network namespace. The stack has a null sink
"sharectl-gate-sink" (the only sink: the default output) and a virtual source "sharectl-gate-mic"
(the only source: the default microphone) into which `pw-cat` plays a 660 Hz tone at −12 dBFS
when a gate asks for it. The sink's monitor is read with `pw-record` for 3 s, of which the last 2
are judged (the graph reconfigures while the recorder joins: whole quanta of silence come then). Each gate prints PASS or
FAIL with the figures it judged; the last line is "N passed, N failed".

  playout    `share --room --audio synthetic` (440 Hz at −20 dBFS) and `watch`: the viewer says
             `audioOutput: "pipewire: sharectl-gate-sink"`, and the sink's monitor carries the
             tone: its level is above silence and its pitch is about 440 Hz.
  mic        `share --room --audio mic --no-echo-cancel --no-noise-suppression` (the raw capture
             path: the echo canceller's gain control and noise suppression change a steady
             tone's level by design) captures the default source (the 660 Hz tone): the sender
             says which node it captures, the viewer decodes it at about −12 dBFS, and the sink's
             monitor carries about 660 Hz (the microphone, not the synthetic tone). Then the tone
             is unlinked from the source: within 5 s and a bit the sender says "Your microphone
             isn't picking anything up".
  mix        two sharers into one viewer: Ana sends the synthetic 440 Hz tone, Cy her microphone
             (the 660 Hz tone, without the echo canceller, as in mic), both with `--audio-output
             none`: the viewer's one playback stream carries both at their levels (each tone's amplitude on the sink's monitor, by the
             Goertzel filter, the median over 100 ms blocks, within 25 % of what was sent times
             the monitor's stereo-to-mono gain measured by the playout gate, √2; a 1 kHz control
             stays near zero).
  mic-unknown `--audio mic:no-such-node` (with the echo canceller, the default): nothing is
             captured from another node in its place; the sender says it was not found.
  no-sink    PipeWire and WirePlumber up with no sink at all: the viewer says it counts
             ("counted (no PipeWire output: no node available)", WirePlumber's reason) and still
             decodes the tone.
  echo-cancel PipeWire's echo canceller, on a stack of its own with two more nodes: a far end
             (`share --room --audio mic:sharectl-gate-far-mic`, its microphone a voice-like
             1 kHz + 300 Hz mix at −20 dBFS each, in phrases of two to five syllables with pauses
             of 0.8 to 2 s, playing what it decodes into the null sink sharectl-gate-far-sink) and
             the participant under test (`watch --audio mic:sharectl-gate-mic --audio-output
             sharectl-gate-sink`). The far end's voice plays on sharectl-gate-sink; `pw-loopback`
             feeds that sink's monitor back into sharectl-gate-mic at −6 dB, beside the near end
             talking on and off throughout at −12 dBFS (syllables of 200 to 400 ms, each at 520,
             640 or 760 Hz: a pitch that moves, as speech does). The lengths are drawn from seeded
             generators, so nothing repeats. 15 s judged, 10 s after the call's audio flows: the
             raw microphone and what the far end decodes of us (sharectl-gate-far-sink) are
             recorded side by side, the far end's delay behind the microphone is found every 2 s
             by correlating the near end's envelopes, and each 20 ms frame of what the far end
             heard is told apart by what the microphone held then: echo, the near end alone (no
             echo within 200 ms), or double talk. Run with `--no-echo-cancel` (noise suppression
             and gain control still on), then with cancellation on: PASS when the echo falls by
             ≥ 20 dB (ERLE, over the frames that held echo), the near end talking alone moves by
             ≤ 3 dB, and in double talk it falls by no more than 15 dB (heard, not cut off), over
             at least 25 frames of each. It also prints the echo's measured gain at the
             microphone (the far end's 1 kHz there against the sink's channel).
  echo-cancel-missing the same stack and call with SPA's plugins minus aec/ (the
             WebRTC engine gone): the call goes on with the raw microphone, the log says once to
             install libspa-0.2-modules, and audioProcessing says the module is missing.
  no-daemon  no PipeWire daemon at all: the viewer says it counts ("counted (no PipeWire output:
             no PipeWire daemon …)") and still decodes the tone above silence; `share --room
             --audio mic` refuses with a clear error (exit 2).
"""
import math
import operator
import os
import random
import shutil
import struct
import subprocess
import sys
import tempfile
import threading
import time
import wave

from lib.network import clear_drops, drop_udp
from lib.paths import SHARECTL, WORK
from lib.processes import stop
from lib.room import Participant, Server
from lib.suite import choose, finish, record, record_broken, run_gates
from lib.waits import wait_for

SINK, MIC, PLAYER = "sharectl-gate-sink", "sharectl-gate-mic", "sharectl-gate-tone"
# The microphone as captured, without PipeWire's echo canceller: its gain control and noise
# suppression change a steady tone's level by design (the echo-cancel gate measures them).
RAW_MIC = ["--no-echo-cancel", "--no-noise-suppression"]
# The audio gates give what they started 3 s to go on SIGTERM.
GRACE = 3.0


def terminate(process):
    stop(process, grace=GRACE)


class AudioStack:
    """dbus-daemon, pipewire and WirePlumber under one temporary directory, with the null sink and
    the virtual source made by `pw-cli create-node`. `close()` stops everything it started."""

    def __init__(self, nodes=True):
        self.nodes = nodes
        self.dir = tempfile.mkdtemp(prefix="sharectl-audio.", dir=WORK)
        run = os.path.join(self.dir, "run")
        os.makedirs(run, mode=0o700)
        self.env = {"PATH": "/usr/local/bin:/usr/bin:/bin", "HOME": self.dir, "XDG_RUNTIME_DIR": run,
                    "PIPEWIRE_RUNTIME_DIR": run, "XDG_CONFIG_HOME": os.path.join(self.dir, "cfg"),
                    "XDG_STATE_HOME": os.path.join(self.dir, "state"), "LANG": "C.UTF-8",
                    "DBUS_SESSION_BUS_ADDRESS": f"unix:path={run}/bus"}
        self.processes = []
        self.player = None
        try:
            self.start(run)
        except BaseException:
            self.close()
            raise

    def spawn(self, name, args):
        log = open(os.path.join(self.dir, f"{name}.log"), "w")
        process = subprocess.Popen(args, env=self.env, stdout=log, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
                                   start_new_session=True)
        self.processes.append(process)
        return process

    def output(self, args):
        try:
            return subprocess.run(args, env=self.env, capture_output=True, text=True, timeout=10).stdout
        except (OSError, subprocess.TimeoutExpired):
            return ""

    def start(self, run):
        self.spawn("dbus", ["dbus-daemon", "--session", f"--address=unix:path={run}/bus", "--nofork", "--nopidfile"])
        if not wait_for(lambda: os.path.exists(f"{run}/bus"), 10):
            raise RuntimeError("dbus-daemon did not come up")
        self.spawn("pipewire", ["pipewire"])
        if not wait_for(lambda: os.path.exists(f"{run}/pipewire-0"), 10):
            raise RuntimeError("pipewire did not come up")
        self.spawn("wireplumber", ["wireplumber"])
        if not wait_for(lambda: '"WirePlumber"' in self.output(["pw-cli", "ls", "Client"]), 10):
            raise RuntimeError("WirePlumber did not come up")
        if not self.nodes:
            return
        for props in (f"node.name={SINK} media.class=Audio/Sink audio.position=[FL FR]",
                      f"node.name={MIC} media.class=Audio/Source/Virtual audio.position=[MONO]"):
            self.output(["pw-cli", "create-node", "adapter",
                         f"{{ factory.name=support.null-audio-sink {props} object.linger=true }}"])
        if not wait_for(lambda: SINK in self.output(["wpctl", "status"]) and MIC in self.output(["wpctl", "status"]), 10):
            raise RuntimeError("the null sink and the virtual source did not appear")
        tone = os.path.join(self.dir, "tone660.wav")
        write_tone(tone, 660, 8000, 120)
        self.tone = tone

    def play_tone(self):
        """pw-cat plays the 660 Hz tone into the virtual source (linked by hand: WirePlumber links
        playback streams to sinks only)."""
        self.player = self.spawn("tone", ["pw-cat", "--playback", "--channels", "1", "-P",
                                          f"{{ node.autoconnect=false node.name={PLAYER} }}", self.tone])
        return wait_for(lambda: subprocess.run(["pw-link", f"{PLAYER}:output_MONO", f"{MIC}:input_MONO"], env=self.env,
                                               capture_output=True).returncode == 0
                        or f"{PLAYER}:output_MONO" in self.output(["pw-link", "-l"]), 10)

    def unlink_tone(self):
        subprocess.run(["pw-link", "-d", f"{PLAYER}:output_MONO", f"{MIC}:input_MONO"], env=self.env, capture_output=True)

    def record_sink(self, seconds, path, sink=SINK, monitor=True):
        """The sink's monitor (or, `monitor` false, a source) for `seconds`, mono S16 at 48 kHz."""
        if os.path.exists(path):
            os.remove(path)
        subprocess.run(["timeout", str(seconds), "pw-record", "-P", f"{{ stream.capture.sink={str(monitor).lower()} }}",
                        "--target", sink, "--rate", "48000", "--channels", "1", "--format", "s16", path], env=self.env,
                       capture_output=True)
        return read_wav(path)

    def close(self):
        for process in reversed(self.processes):
            terminate(process)
        self.processes = []
        shutil.rmtree(self.dir, ignore_errors=True)


def write_tone(path, frequency, amplitude, seconds):
    with wave.open(path, "wb") as w:
        w.setnchannels(1)
        w.setsampwidth(2)
        w.setframerate(48000)
        w.writeframes(b"".join(struct.pack("<h", int(amplitude * math.sin(2 * math.pi * frequency * i / 48000)))
                               for i in range(48000 * seconds)))


def read_wav(path):
    try:
        with wave.open(path) as w:
            data = w.readframes(w.getnframes())
        return list(struct.unpack(f"<{len(data) // 2}h", data))
    except (OSError, EOFError, wave.Error, struct.error):
        return []


def level_and_pitch(samples):
    """Peak dBFS; the pitch (the median over 100 ms blocks of their zero crossings, so a click or a
    concealed frame does not move it); and how many blocks were silent or off that pitch by more
    than 10 % (glitches: underruns, concealment, clicks)."""
    if not samples:
        return -120.0, 0.0, 0
    peak = max(abs(s) for s in samples)
    dbfs = 20 * math.log10(peak / 32768) if peak else -120.0
    pitches = []
    for i in range(0, len(samples) - 4800 + 1, 4800):
        block = samples[i:i + 4800]
        pitches.append(sum(1 for a, b in zip(block, block[1:]) if (a < 0) != (b < 0)) / 2 / 0.1)
    if not pitches:
        return dbfs, 0.0, 0
    pitch = sorted(pitches)[len(pitches) // 2]
    return dbfs, pitch, sum(1 for p in pitches if abs(p - pitch) > 0.1 * pitch)


class Call:
    """`sharectl serve` with `share --room` (args) and `watch`, each read through --stats-json."""

    def __init__(self, tag, share_args, env, before_viewer=None):
        self.tag, self.env = tag, env
        self.members = {}
        self.server = Server("audio", state=False, env=env, log=self.path("serve.log"))
        self.invite = self.server.start()
        self.sharer = self.run("ana", ["share", "--room", self.invite, "--size", "320x180", "--fps", "5", *share_args],
                               typing=True)
        if before_viewer:
            before_viewer(self)
        self.viewer = self.run("bo", ["watch", self.invite])

    def path(self, name):
        return os.path.join(WORK, f"audio.{self.tag}.{name}")

    def run(self, name, args, typing=False):
        member = Participant(name, args, self.path(f"{name}.jsonl"), self.path(f"{name}.log"), env=self.env,
                             typing=typing)
        self.members[name] = member
        return member

    def last(self, name):
        return self.members[name].last()

    def peer(self, name, other):
        return self.members[name].peer(other)

    def heard(self):
        """The viewer's figures for the sharer's audio once it decodes more than a second of it."""
        audio = self.peer("bo", "ana").get("audio") or {}
        return audio if audio.get("samplesDecoded", 0) > 48000 else None

    def log(self, name):
        return self.members[name].output()

    def close(self):
        for member in (self.viewer, self.sharer):
            member.stop(grace=GRACE)
        self.server.stop(grace=GRACE)


def gate_playout(stack):
    call = Call("playout", ["--audio", "synthetic"], stack.env)
    try:
        audio = wait_for(call.heard, 30)
        output = wait_for(lambda: call.last("bo").get("audioOutput", "").startswith("pipewire:")
                          and call.last("bo")["audioOutput"], 10) or call.last("bo").get("audioOutput")
        samples = stack.record_sink(3, call.path("sink.wav"))[48000:]  # the last two seconds: the graph settles first
        dbfs, pitch, glitches = level_and_pitch(samples)
        ok = (audio is not None and output == f"pipewire: {SINK}" and dbfs > -40 and abs(pitch - 440) < 15)
        record("playout", ok, f"audioOutput {output!r}, decoded {audio and audio['samplesDecoded']} samples at "
                              f"{audio and audio['levelDbfs']} dBFS; the sink's monitor: {len(samples)} samples, "
                              f"peak {dbfs:.1f} dBFS, {pitch:.0f} Hz (want > −40 dBFS, 440 ± 15 Hz), "
                              f"{glitches} of its last {len(samples) // 4800} blocks of 100 ms off it; the output's short reads "
                              f"{call.last('bo').get('audioOutputShortReads')}")
    finally:
        call.close()


def gate_mic(stack):
    if not stack.play_tone():
        record("mic", False, "the tone could not be linked into the virtual source")
        return
    call = Call("mic", ["--audio", "mic", *RAW_MIC], stack.env)
    try:
        audio = wait_for(call.heard, 30)
        level = wait_for(lambda: (a := (call.peer("bo", "ana").get("audio") or {})).get("levelDbfs", -120) > -30
                         and a["levelDbfs"], 10) or (call.peer("bo", "ana").get("audio") or {}).get("levelDbfs")
        sent = call.peer("ana", "bo").get("audioSent") or {}
        samples = stack.record_sink(3, call.path("sink.wav"))[48000:]  # the last two seconds: the graph settles first
        dbfs, pitch, glitches = level_and_pitch(samples)
        ok = (audio is not None and level is not None and -16 < level < -9 and sent.get("source") == f"microphone: {MIC}"
              and abs(pitch - 660) < 15 and not sent.get("silent"))
        record("mic", ok, f"sender: source {sent.get('source')!r}, {sent.get('framesSent')} frames sent at "
                          f"{sent.get('levelDbfs')} dBFS, {sent.get('framesDropped')} dropped; viewer decodes "
                          f"{level} dBFS (want about −12); the sink's monitor {dbfs:.1f} dBFS at {pitch:.0f} Hz (want 660 ± 15), "
                          f"{glitches} of its last {len(samples) // 4800} blocks of 100 ms off it")
        stack.unlink_tone()
        t0 = time.time()
        silent = wait_for(lambda: (call.peer("ana", "bo").get("audioSent") or {}).get("silent"), 15)
        waited = time.time() - t0
        said = "Your microphone isn't picking anything up" in call.log("ana")
        record("mic-silent", bool(silent) and said,
               f"tone unlinked: audioSent.silent {bool(silent)} after {waited:.1f} s, the warning "
               f"{'said' if said else 'not said'} (want both, after about 5 s)")
    finally:
        call.close()
        terminate(stack.player)


def lines_from(member, since):
    return member.lines(skip_broken=True)[since:]


def gate_mute(stack):
    """`mute` typed to a sharer: the viewer decodes digital silence on the same stream (its samples
    go on rising), reports her muted, never says "No sound from ana" (8 s judged, past the 5 s
    rule); `unmute` brings the tone back."""
    call = Call("mute", ["--audio", "synthetic"], stack.env)
    try:
        audio = wait_for(call.heard, 30)
        before = (call.peer("bo", "ana").get("audio") or {}).get("levelDbfs")
        call.sharer.type("mute")
        silent = wait_for(lambda: (a := call.peer("bo", "ana").get("audio") or {}).get("muted")
                          and a.get("levelDbfs", 0) < -90 and a, 10)
        judged_from = len(call.viewer.lines(skip_broken=True))
        samples_at = (silent or {}).get("samplesDecoded", 0)
        time.sleep(8)
        during = lines_from(call.viewer, judged_from)
        views = [next((p.get("audio") or {} for p in line.get("peers", []) if p.get("name") == "ana"), {})
                 for line in during]
        loudest = max([v.get("levelDbfs", -120) for v in views] + [-120])
        said_no_sound = any("ana" in line.get("noSoundFrom", []) for line in during) or "No sound from ana" in call.log("bo")
        still_heard = all(v.get("hearing") for v in views)
        samples_after = views[-1].get("samplesDecoded", 0) if views else 0
        sender = call.last("ana")
        sent_muted = sender.get("muted") is True and (call.peer("ana", "bo").get("audioSent") or {}).get("muted") is True
        printed = "Muted: the call hears silence from you" in call.log("ana")
        call.sharer.type("unmute")
        back = wait_for(lambda: (a := call.peer("bo", "ana").get("audio") or {}).get("levelDbfs", -120) > -30
                        and not a.get("muted") and a["levelDbfs"], 10)
        ok = (audio is not None and silent and not said_no_sound and still_heard and loudest < -90
              and samples_after > samples_at + 5 * 48000 and sent_muted and printed and back is not None)
        record("mute", ok, f"before: bo decodes ana at {before} dBFS; muted: the loudest of {len(views)} s judged "
                           f"{loudest} dBFS (want under −90), samples {samples_at}→{samples_after} (the stream goes on), "
                           f"hearing throughout {still_heard}, 'No sound from ana' said: {said_no_sound} (want no); "
                           f"ana says muted in her stats {sent_muted} and printed it {printed}; unmuted: back at {back} dBFS")
    finally:
        call.close()


def gate_no_sound(stack):
    """A sharer whose microphone (the virtual source with nothing playing into it) gives digital
    silence, unmuted: the viewer says "No sound from ana" within 6 s of first decoding her, and
    she is told "bo isn't getting any sound from you" from his report."""
    terminate(stack.player)
    call = Call("no-sound", ["--audio", "mic", *RAW_MIC], stack.env)
    try:
        first = wait_for(lambda: next((line["t"] for line in call.viewer.lines(skip_broken=True)
                                       if any(((p.get("audio") or {}).get("samplesDecoded", 0) > 0)
                                              for p in line.get("peers", []) if p.get("name") == "ana")), None), 30)
        raised = wait_for(lambda: next((line["t"] for line in call.viewer.lines(skip_broken=True)
                                        if "ana" in line.get("noSoundFrom", [])
                                        and "No sound from ana" in line.get("audioNotices", [])), None), 15)
        told = wait_for(lambda: "bo isn't getting any sound from you" in call.last("ana").get("audioNotices", []), 10)
        printed = "Notice: No sound from ana" in call.log("bo")
        level = (call.peer("bo", "ana").get("audio") or {}).get("levelDbfs")
        after = None if first is None or raised is None else raised - first
        ok = after is not None and after <= 6.0 and bool(told) and printed
        record("no-sound", ok, f"bo first decodes ana at {first} s, at {level} dBFS; 'No sound from ana' at {raised} s "
                               f"({after if after is None else round(after, 1)} s later, want ≤ 6), printed as a notice "
                               f"{printed}; ana told 'bo isn't getting any sound from you': {bool(told)}")
    finally:
        call.close()


def gate_cant_hear_you(stack):
    """Every UDP datagram dropped before the viewer joins, so his connection never comes up: the
    sharer says "bo is connecting and can't hear you yet" within 2 s of his joining (her first line
    that lists him) and stops by 21 s."""
    notice = "bo is connecting and can't hear you yet"
    drop_udp(100, table="sharectl_audio")
    try:
        call = Call("cant-hear-you", ["--audio", "synthetic"], stack.env)
        try:
            def listed():
                return next((line["t"] for line in call.sharer.lines(skip_broken=True)
                             if any(p.get("name") == "bo" for p in line.get("peers", []))), None)
            joined = wait_for(listed, 30)

            def shown():
                return next((line["t"] for line in call.sharer.lines(skip_broken=True)
                             if notice in line.get("audioNotices", [])), None)
            first = wait_for(shown, 5)
            ended = None
            if joined is not None and first is not None:
                def gone():
                    lines = call.sharer.lines(skip_broken=True)
                    showing = [line["t"] for line in lines if notice in line.get("audioNotices", [])]
                    later = [line["t"] for line in lines if showing and line["t"] > showing[-1]]
                    return later[0] if later else None
                ended = wait_for(gone, 30)
            state = (call.peer("ana", "bo").get("connection") or {}).get("state")
            ok = (joined is not None and first is not None and first - joined <= 2.0 and ended is not None
                  and ended - joined <= 21.0)
            record("cant-hear-you", ok,
                   f"bo listed at {joined} s; '{notice}' from {first} s "
                   f"({None if first is None or joined is None else round(first - joined, 1)} s after, want ≤ 2), "
                   f"gone at {ended} s ({None if ended is None or joined is None else round(ended - joined, 1)} s "
                   f"after, want ≤ 21); the connection then: {state}")
        finally:
            call.close()
    finally:
        clear_drops("sharectl_audio")


def tone_amplitude(samples, frequency, hann=False):
    """The amplitude of one frequency in `samples` (Goertzel), in sample units; `hann`: the frame
    windowed first (for 20 ms frames: FRAME samples), its coherent gain of one half made up."""
    if not samples:
        return 0.0
    k = 2 * math.cos(2 * math.pi * frequency / 48000)
    s1 = s2 = 0.0
    for x in (map(operator.mul, samples, HANN) if hann else samples):
        s1, s2 = x + k * s1 - s2, s1
    power = s1 * s1 + s2 * s2 - k * s1 * s2
    return (4 if hann else 2) * math.sqrt(max(power, 0.0)) / len(samples)


def gate_mix(stack):
    stack.play_tone()
    # The sharers hear each other too: they play nothing (--audio-output none), so the sink carries
    # only the viewer's mix.
    call = Call("mix", ["--audio", "synthetic", "--audio-output", "none"], stack.env)
    cy = call.run("cy", ["share", "--room", call.invite, "--size", "320x180", "--fps", "5", "--audio", "mic",
                         *RAW_MIC, "--audio-output", "none"])
    try:
        both = wait_for(lambda: all(((call.peer("bo", n).get("audio") or {}).get("samplesDecoded", 0) > 48000)
                                    for n in ("ana", "cy")), 40)
        samples = stack.record_sink(3, call.path("sink.wav"))[48000:]  # the last two seconds
        # Each tone's amplitude is the median over 100 ms blocks (whole cycles of all three): a
        # quantum the graph skipped on a busy machine (PipeWire clients here run without real-time
        # priority) breaks the phase of a whole-window filter, not the median; the blocks off it
        # are counted and reported.
        blocks = [samples[i:i + 4800] for i in range(0, len(samples) - 4800 + 1, 4800)]
        per_block = {f: sorted(tone_amplitude(b, f) for b in blocks) for f in (440, 660, 1000)}
        a440, a660, a1000 = (per_block[f][len(blocks) // 2] if blocks else 0.0 for f in (440, 660, 1000))
        glitches = sum(1 for b in blocks if tone_amplitude(b, 440) < 0.75 * a440 or tone_amplitude(b, 660) < 0.75 * a660)
        levels = {n: (call.peer("bo", n).get("audio") or {}).get("levelDbfs") for n in ("ana", "cy")}
        want440, want660 = 3277 * math.sqrt(2), 8000 * math.sqrt(2)  # −20 dBFS and the 8000 tone, L+R at −3 dB
        ok = (both and abs(a440 / want440 - 1) < 0.25 and abs(a660 / want660 - 1) < 0.25
              and a1000 < 0.05 * min(a440, a660))
        record("mix", ok, f"viewer decodes ana {levels['ana']} dBFS and cy {levels['cy']} dBFS; the sink's monitor: "
                          f"440 Hz amplitude {a440:.0f}, 660 Hz {a660:.0f}, 1 kHz {a1000:.0f}, the median of "
                          f"{len(blocks)} blocks of 100 ms, {glitches} of them off by more than 25 % "
                          f"(want {want440:.0f} and {want660:.0f} ± 25 %, the control under 5 % of them); "
                          f"audioOutput {call.last('bo').get('audioOutput')!r}")
    finally:
        cy.stop(grace=GRACE)
        call.close()
        terminate(stack.player)


def gate_mic_unknown(stack):
    stack.play_tone()
    call = Call("mic-unknown", ["--audio", "mic:no-such-node"], stack.env)
    try:
        source = wait_for(lambda: "no-such-node" in ((call.peer("ana", "bo").get("audioSent") or {}).get("source") or "")
                          and "(" in call.peer("ana", "bo")["audioSent"]["source"]
                          and call.peer("ana", "bo")["audioSent"]["source"], 20)
        time.sleep(2)
        sent = call.peer("ana", "bo").get("audioSent") or {}
        linked = [l.strip() for l in stack.output(["pw-link", "-l"]).splitlines() if "sharectl-microphone:" in l]
        ok = bool(source) and "not found" in source and sent.get("framesSent", 0) == 0 and MIC not in (sent.get("source") or "")
        record("mic-unknown", ok, f"source {sent.get('source')!r}, {sent.get('framesSent')} frames sent (want 0); "
                                  f"capture links: {linked or 'none'}")
    finally:
        call.close()
        terminate(stack.player)


def gate_no_sink():
    try:
        stack = AudioStack(nodes=False)
    except Exception as error:  # noqa: BLE001 - reported as the gate's failure
        record("no-sink", False, f"the PipeWire stack did not start: {error}")
        return
    call = Call("no-sink", ["--audio", "synthetic"], stack.env)
    try:
        audio = wait_for(call.heard, 30)
        output = call.last("bo").get("audioOutput", "")
        # WirePlumber fails a stream it cannot link ("no node available"); before it does, the stream
        # is only not linked.
        ok = (audio is not None and audio["levelDbfs"] > -30
              and output in ("counted (no PipeWire output: no node available)",
                             "counted (no PipeWire output: no audio sink linked)"))
        record("no-sink", ok, f"audioOutput {output!r}; decoded {audio and audio['samplesDecoded']} samples at "
                              f"{audio and audio['levelDbfs']} dBFS")
    finally:
        call.close()
        stack.close()


def gate_no_daemon():
    base = tempfile.mkdtemp(prefix="sharectl-nopw.", dir=WORK)
    env = {"PATH": "/usr/local/bin:/usr/bin:/bin", "HOME": base, "XDG_RUNTIME_DIR": base,
           "PIPEWIRE_RUNTIME_DIR": base, "LANG": "C.UTF-8"}
    call = Call("no-daemon", ["--audio", "synthetic"], env)
    try:
        audio = wait_for(call.heard, 30)
        output = call.last("bo").get("audioOutput", "")
        refused = subprocess.run([SHARECTL, "share", "--room", call.invite, "--name", "cy", "--audio", "mic",
                                  "--duration", "2"], env=env, capture_output=True, text=True, timeout=30)
        ok = (audio is not None and audio["levelDbfs"] > -30 and output.startswith("counted (no PipeWire output: no PipeWire daemon")
              and refused.returncode == 2 and "PipeWire" in refused.stderr)
        record("no-daemon", ok, f"audioOutput {output!r}; decoded {audio and audio['samplesDecoded']} samples at "
                                f"{audio and audio['levelDbfs']} dBFS; --audio mic exits {refused.returncode}: "
                                f"{refused.stderr.strip()[:160]!r}")
    finally:
        call.close()
        shutil.rmtree(base, ignore_errors=True)


SPA_PLUGINS = "/usr/lib/x86_64-linux-gnu/spa-0.2"
FAR_SINK, FAR_MIC, FAR_PLAYER, ECHO = ("sharectl-gate-far-sink", "sharectl-gate-far-mic", "sharectl-gate-far-voice",
                                       "sharectl-gate-echo")


def write_speech(path, voices, seed, seconds, syllable_ms, gap_ms, phrase=None, pause_ms=None):
    """A voice-like signal in syllables of `syllable_ms` (a range) with gaps of `gap_ms` and 10 ms
    ramps, each syllable one of `voices` (a sum of (frequency, amplitude) tones); with `phrase`,
    syllables come in phrases of that many with pauses of `pause_ms` between them, as a person takes
    turns. Lengths and voices are drawn from a seeded generator: never periodic, so a recording's
    delay behind another is found without ambiguity, and a pitch that moves as speech does (one
    tone over and over is what noise suppression learns as noise and removes)."""
    draw = random.Random(seed)
    envelope, parts, ramp = [], [], 480
    while len(envelope) < 48000 * seconds:
        for _ in range(draw.randint(*phrase) if phrase else 1):
            on, voice = draw.randint(*syllable_ms) * 48, draw.choice(voices)
            envelope += [min(1.0, i / ramp, (on - i) / ramp) for i in range(on)]
            gap = draw.randint(*gap_ms) * 48
            envelope += [0.0] * gap
            parts += [voice] * (on + gap)
        if pause_ms:
            pause = draw.randint(*pause_ms) * 48
            envelope += [0.0] * pause
            parts += [[]] * pause
    frames = (struct.pack("<h", int(envelope[i] * sum(a * math.sin(2 * math.pi * f * i / 48000) for f, a in parts[i])))
              for i in range(48000 * seconds))
    with wave.open(path, "wb") as w:
        w.setnchannels(1)
        w.setsampwidth(2)
        w.setframerate(48000)
        w.writeframes(b"".join(frames))


FRAME = 960  # 20 ms
HANN = [0.5 - 0.5 * math.cos(2 * math.pi * i / (FRAME - 1)) for i in range(FRAME)]
NEAR_PITCHES = (520, 640, 760)  # the near end's syllables, each at one of these (the echo: 1 kHz + 300 Hz)


def mean_of(values):
    return sum(values) / len(values) if values else 0.0


def envelope(samples, *frequencies):
    """Per 20 ms frame, the amplitude of `frequencies` together (root of summed squares). The frames
    are Hann-windowed: a rectangular frame lets the near end's syllables leak about −26 dB into the
    1 kHz and 300 Hz bins, which would read as echo."""
    return [math.hypot(*(tone_amplitude(samples[i:i + FRAME], f, hann=True) for f in frequencies))
            for i in range(0, len(samples) - FRAME + 1, FRAME)]


def delays(ahead, behind, window=100, most=75):
    """How many frames `behind` lags `ahead` (0 to `most`, 1.5 s), for each window of `window`
    frames (2 s) of `ahead`: by the correlation of the two envelopes around their means. The delay
    drifts within a run (playout buffers settle, the canceller's own buffering), so it is found
    piece by piece. None for a window with nothing to correlate."""
    a, b = ([v - mean_of(values) for v in values] for values in (ahead, behind))
    found = []
    for start in range(0, len(a), window):
        span = range(start, min(start + window, len(a)))
        scores = [(sum(a[i] * b[i + lag] for i in span if i + lag < len(b)), lag) for lag in range(most + 1)]
        best = max(scores)
        found += [best[1] if best[0] > 0 else None] * len(span)
    return found


def talk_states(mic, heard):
    """The far end's recording of us, frame by frame, told apart by what the microphone held at that
    moment: `mic` is the raw microphone (the near end's syllables (NEAR_PITCHES), the echo's 1 kHz +
    300 Hz), `heard` what the far end decoded of us. Returns the delays found and the mean amplitudes
    of the echo where the microphone held it, of the near end where it talked alone (no echo within
    200 ms either side: the canceller's hang-over), and of the near end in double talk."""
    near_mic, echo_mic = envelope(mic, *NEAR_PITCHES), envelope(mic, 1000, 300)
    near_heard, echo_heard = envelope(heard, *NEAR_PITCHES), envelope(heard, 1000, 300)
    lags = delays(near_mic, near_heard)
    echo_frames, single, double = [], [], []
    for i, lag in enumerate(lags):
        if lag is None or i < 10 or i + 10 >= len(near_mic) or i + lag >= len(near_heard):
            continue
        j = i + lag
        talking = all(n > 4000 for n in near_mic[i - 1:i + 2])  # the near end's syllable, past its ramps
        if all(e > 1000 for e in echo_mic[i - 1:i + 2]):
            echo_frames.append(echo_heard[j])
            if talking:
                double.append(near_heard[j])
        elif talking and max(echo_mic[i - 10:i + 11]) < 150:
            single.append(near_heard[j])
    found = sorted({lag * 20 for lag in lags if lag is not None})
    return {"lags": f"{found[0]}–{found[-1]}" if found else "?", "echo": mean_of(echo_frames),
            "single": mean_of(single), "double": mean_of(double), "counts": (len(echo_frames), len(single), len(double))}


def echo_run(stack, tag, flags, near_env=None, settle=10, judged=15):
    """One call through the echo path: what the far end decodes of us, told apart by the talk
    state the microphone held (see talk_states)."""
    server = Server("audio", state=False, env=stack.env, log=os.path.join(WORK, f"audio.{tag}.serve.log"))
    invite = server.start()
    path = lambda name: os.path.join(WORK, f"audio.{tag}.{name}")  # noqa: E731
    far = Participant("far", ["share", "--room", invite, "--size", "320x180", "--fps", "5", "--audio",
                              f"mic:{FAR_MIC}", "--no-echo-cancel", "--no-noise-suppression", "--audio-output", FAR_SINK],
                      path("far.jsonl"), path("far.log"), env=stack.env)
    near = Participant("near", ["watch", invite, "--audio", f"mic:{MIC}", "--audio-output", SINK, *flags],
                       path("near.jsonl"), path("near.log"), env=near_env or stack.env)
    try:
        flowing = wait_for(lambda: all((p.peer(o).get("audio") or {}).get("samplesDecoded", 0) > 48000
                                       for p, o in ((far, "near"), (near, "far"))), 40)
        time.sleep(settle)  # the canceller converges, gain control settles
        # Side by side: the raw microphone, the sink that plays the far end (the echo's gain: the
        # far end's voice on the microphone against the sink's monitor, whose mono recording is √2
        # times a centred voice's channel) and what the far end decodes of us, 15 s judged.
        heard = {}
        threading.Thread(target=lambda: heard.update(sink=stack.record_sink(min(judged, 6) + 1, path("sink.wav"))[48000:])).start()
        threading.Thread(target=lambda: heard.update(mic=stack.record_sink(judged + 1, path("mic.wav"), MIC, False)[48000:])).start()
        samples = stack.record_sink(judged + 1, path("far-sink.wav"), FAR_SINK)[48000:]
        wait_for(lambda: len(heard) == 2, 5)
        states = talk_states(heard.get("mic", []), samples)
        played, fed = (mean_of(envelope(heard.get(n, [])[:240000], 1000)) for n in ("sink", "mic"))
        gain = 20 * math.log10(fed / (played / math.sqrt(2))) if played > 0 and fed > 0 else None
        line = near.last()
        return {"flowing": bool(flowing), **states, "gain": gain, "log": near.output(), "near": mean_of(envelope(samples, *NEAR_PITCHES)),
                "processing": line.get("audioProcessing"), "output": line.get("audioOutput"),
                "source": (near.peer("far").get("audioSent") or {}).get("source")}
    finally:
        for member in (near, far):
            member.stop(grace=GRACE)
        server.stop(grace=GRACE)


def gate_echo_cancel(cancel=True, missing_module=True):
    """`cancel`: judge echo-cancel (two calls: off, on); `missing_module`: judge
    echo-cancel-missing (one call without the WebRTC engine)."""
    try:
        stack = AudioStack()
    except Exception as error:  # noqa: BLE001 - reported as the gate's failure
        for name, wanted in (("echo-cancel", cancel), ("echo-cancel-missing", missing_module)):
            if wanted:
                record(name, False, f"the PipeWire stack did not start: {error}")
        return
    players = []
    try:
        for props in (f"node.name={FAR_SINK} media.class=Audio/Sink audio.position=[FL FR]",
                      f"node.name={FAR_MIC} media.class=Audio/Source/Virtual audio.position=[MONO]"):
            stack.output(["pw-cli", "create-node", "adapter",
                          f"{{ factory.name=support.null-audio-sink {props} object.linger=true }}"])
        voice, talk = os.path.join(stack.dir, "voice.wav"), os.path.join(stack.dir, "near.wav")
        # Two people taking turns: the far end in phrases of two to five syllables with pauses of
        # 0.8 to 2 s, the near end talking on and off throughout (alone, and over the far end).
        write_speech(voice, [[(1000, 3277), (300, 3277)]], 1, 150, (180, 320), (80, 200), (2, 5), (800, 2000))
        write_speech(talk, [[(f, 8231)] for f in NEAR_PITCHES], 2, 150, (200, 400), (100, 300))
        links = [(f"{FAR_PLAYER}:output_MONO", f"{FAR_MIC}:input_MONO"), (f"{PLAYER}:output_MONO", f"{MIC}:input_MONO")]
        players.append(stack.spawn("far-voice", ["pw-cat", "--playback", "--channels", "1", "-P",
                                                 f"{{ node.autoconnect=false node.name={FAR_PLAYER} }}", voice]))
        players.append(stack.spawn("near-talk", ["pw-cat", "--playback", "--channels", "1", "-P",
                                                 f"{{ node.autoconnect=false node.name={PLAYER} }}", talk]))
        # The echo: the sink's monitor (mono: the left and right at −3 dB each, so +3 dB for a
        # centred voice) into the microphone at a volume of 0.354: −6 dB in all.
        players.append(stack.spawn("echo", ["pw-loopback", "-n", ECHO, "-c", "1", "-m", "[ MONO ]",
                                            "--capture-props", f"stream.capture.sink=true target.object={SINK}",
                                            "--playback-props", "node.autoconnect=false"]))
        linked = wait_for(lambda: all(subprocess.run(["pw-link", a, b], env=stack.env, capture_output=True).returncode == 0
                                      or f"{a}" in stack.output(["pw-link", "-l"]) for a, b in links), 10)
        echo_out = wait_for(lambda: next((l.split()[0] for l in stack.output(["pw-link", "-o"]).splitlines()
                                          if l.startswith("output.") and ECHO in l), None), 10)
        echo_linked = bool(echo_out) and subprocess.run(["pw-link", echo_out, f"{MIC}:input_MONO"], env=stack.env,
                                                         capture_output=True).returncode == 0
        volume = set_volume(stack, echo_out.split(":")[0] if echo_out else "", 0.354)
        if not (linked and echo_linked and volume):
            record("echo-cancel" if cancel else "echo-cancel-missing", False, f"the test graph could not be built (tones linked {bool(linked)}, echo "
                                         f"{echo_out!r} linked {echo_linked}, volume set {volume})")
            return
        if cancel:
            judge_cancel(stack)
        if missing_module:
            judge_missing(stack)
    finally:
        for player in players:
            terminate(player)
        stack.close()


def judge_cancel(stack):
    off = echo_run(stack, "echo-off", ["--no-echo-cancel"])
    on = echo_run(stack, "echo-on", [])
    db = lambda a, b: 20 * math.log10(a / b) if a > 0 and b > 0 else -120.0  # noqa: E731
    erle, single, double = db(off["echo"], on["echo"]), db(on["single"], off["single"]), db(on["double"], off["double"])
    enough = all(min(run["counts"]) >= 25 for run in (off, on))  # half a second of each state, at least
    ok = (off["flowing"] and on["flowing"] and enough and erle >= 20 and abs(single) <= 3 and double >= -15
          and (on["processing"] or "").startswith("echo cancellation on (webrtc)"))
    record("echo-cancel", ok,
           f"ERLE {erle:.1f} dB (want ≥ 20), near end {single:+.1f} dB talking alone (want within ±3) and "
           f"{double:+.1f} dB in double talk (want no more than 15 dB lower: heard, not cut off); what the far end decodes of us, off / on: "
           f"the echo (1 kHz + 300 Hz) {off['echo']:.0f} / {on['echo']:.0f} where the microphone held it, the near end "
           f"(520, 640, 760 Hz) {off['single']:.0f} / {on['single']:.0f} alone and {off['double']:.0f} / {on['double']:.0f} "
           f"over the echo; 20 ms frames of echo, near end alone, double talk: {off['counts']} off, {on['counts']} on "
           f"(want ≥ 25 each); the far end hears us {off['lags']} / {on['lags']} ms "
           f"after the microphone; the echo reaches the microphone at "
           f"{'?' if off['gain'] is None else format(off['gain'], '+.1f')} dB of what plays; off: {off['processing']!r}; "
           f"on: {on['processing']!r}, audioOutput {on['output']!r}, source {on['source']!r}")


def judge_missing(stack):
    # The module missing: SPA plugins without aec/ (what libspa-0.2-modules brings).
    plugins = os.path.join(stack.dir, "spa-without-aec")
    os.makedirs(plugins)
    for entry in os.listdir(SPA_PLUGINS):
        if entry != "aec":
            os.symlink(os.path.join(SPA_PLUGINS, entry), os.path.join(plugins, entry))
    missing = echo_run(stack, "echo-missing", [], near_env={**stack.env, "SPA_PLUGIN_DIR": plugins}, settle=0, judged=5)
    said = missing["log"].count("install libspa-0.2-modules")
    want = "echo cancellation off, noise suppression off (PipeWire's echo-cancel module is missing)"
    record("echo-cancel-missing", missing["flowing"] and said == 1 and missing["processing"] == want
           and missing["source"] == f"microphone: {MIC}" and missing["near"] > 1000,
           f"without the WebRTC engine: the install hint said {said} times (want once); audioProcessing "
           f"{missing['processing']!r}; source {missing['source']!r}; the far end decodes the near end's syllables "
           f"at {missing['near']:.0f} and the echo at {missing['echo']:.0f} (the call goes on, uncancelled)")


def set_volume(stack, port_node, volume):
    """The linear volume of the node named `port_node` (its Props' channelVolumes, mono)."""
    if not port_node:
        return False
    for line in stack.output(["pw-cli", "ls", "Node"]).split("\tid "):
        if f'node.name = "{port_node}"' in line:
            node = line.split(",")[0].strip().split()[-1]
            result = subprocess.run(["pw-cli", "set-param", node, "Props", f"{{ channelVolumes: [ {volume} ] }}"],
                                    env=stack.env, capture_output=True, text=True)
            return result.returncode == 0
    return False


STACKED = ["playout", "mic", "mix", "mic-unknown", "mute", "no-sound", "cant-hear-you"]  # on one PipeWire stack with the sink and the microphone


def main():
    chosen = choose("audio", STACKED + ["echo-cancel", "echo-cancel-missing", "no-sink", "no-daemon"],
                    parts={"mic-silent": "mic"})
    if chosen & set(STACKED):
        try:
            stack = AudioStack()
        except Exception as error:  # noqa: BLE001 - reported as the gates' failure
            for name in [n for n in STACKED if n in chosen]:
                record(name, False, f"the PipeWire stack did not start: {error}")
            stack = None
        if stack:
            try:
                run_gates([("playout", lambda: gate_playout(stack)), ("mic", lambda: gate_mic(stack)),
                           ("mix", lambda: gate_mix(stack)), ("mic-unknown", lambda: gate_mic_unknown(stack)),
                           ("mute", lambda: gate_mute(stack)), ("no-sound", lambda: gate_no_sound(stack)),
                           ("cant-hear-you", lambda: gate_cant_hear_you(stack))], chosen)
            finally:
                stack.close()
    if "echo-cancel" in chosen or "echo-cancel-missing" in chosen:
        try:
            gate_echo_cancel(cancel="echo-cancel" in chosen, missing_module="echo-cancel-missing" in chosen)
        except Exception as error:  # noqa: BLE001 - a gate that breaks is a failed gate
            record_broken("echo-cancel" if "echo-cancel" in chosen else "echo-cancel-missing", error)
    run_gates([("no-sink", gate_no_sink), ("no-daemon", gate_no_daemon)], chosen)
    return finish()


if __name__ == "__main__":
    sys.exit(main())
