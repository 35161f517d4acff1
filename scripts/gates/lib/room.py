"""A room on this machine: `sharectl serve`, and sharectl participants (`share --room`, `watch`)
read through their --stats-json call lines (each checked against the schema)."""
import os
import re
import signal
import subprocess

from .paths import ROOT, SHARECTL, WORK
from .ports import free_port
from .processes import stop
from .stats import last_stats, read_stats
from .suite import peer_crashed

# What `serve --sfu janus` says when the Janus it started dies by itself of a crash signal.
JANUS_CRASH = re.compile(r"the rooms' Janus \(pid \d+\) has exited \(signal (?:4|6|7|8|11) \([^)]*\)\)[^\n]*")


def say_janus_crash(log_path):
    """peer_crashed() with serve's line, when the server log at `log_path` has one."""
    try:
        text = open(log_path, errors="replace").read()
    except OSError:
        return
    for line in JANUS_CRASH.findall(text):
        peer_crashed(f"{line} (said by serve)")


class Server:
    """`sharectl serve` of the room `room` on a port of its own. With `state` (the room gates) it
    keeps a state file (removed first) and holds a participant's place for 15 s, so a start again
    on the same port keeps the room. `log` is its log's path, `{n}` the how-many-th start
    (WORK/ROOM.serveN.log unless given)."""

    def __init__(self, room, extra_args=(), state=True, env=None, log=None):
        self.room = room
        self.extra_args = list(extra_args)
        self.env = env
        self.log = log or os.path.join(WORK, f"{room}.serve{{n}}.log")
        self.port = free_port()
        self.state = os.path.join(WORK, f"{room}.state.json") if state else None
        if self.state and os.path.exists(self.state):
            os.remove(self.state)
        self.process = None
        self.url = None
        self.starts = 0

    def start(self):
        """Starts it and returns the invite link it printed (`Room: <URL>`)."""
        self.starts += 1
        args = [SHARECTL, "serve", "--listen", f"127.0.0.1:{self.port}", "--room", self.room]
        if self.state:
            args += ["--grace", "15", "--state", self.state]
        log = open(self.log.format(n=self.starts), "w")
        self.process = subprocess.Popen([*args, *self.extra_args], stdout=subprocess.PIPE, stderr=log, cwd=ROOT,
                                        env=self.env, start_new_session=True, text=True)
        first = self.process.stdout.readline().strip()
        if not first.startswith("Room: "):
            stop(self.process)
            raise RuntimeError(f"serve's first line was {first!r}, not 'Room: <URL>'")
        self.url = first.split(" ", 1)[1]
        return self.url

    def kill(self):
        os.killpg(self.process.pid, signal.SIGKILL)
        self.process.wait(timeout=5)

    def stop(self, grace=8.0):
        stop(self.process, grace=grace)
        if self.starts:
            say_janus_crash(self.log.format(n=self.starts))


class Participant:
    """`sharectl ARGS --name NAME --stats-json STATS` (share --room or watch), output into `log`,
    in a session of its own; with `typing`, a pipe to its standard input (`type`)."""

    def __init__(self, name, args, stats, log, env=None, typing=False):
        self.name = name
        self.stats = stats
        self.log = log
        if os.path.exists(stats):
            os.remove(stats)
        self.process = subprocess.Popen([SHARECTL, *args, "--name", name, "--stats-json", stats],
                                        stdout=open(log, "w"), stderr=subprocess.STDOUT, cwd=ROOT, env=env,
                                        start_new_session=True, stdin=subprocess.PIPE if typing else None, text=True)

    def type(self, line):
        """Types one command on its standard input (`policy motion`, `keyframe`)."""
        self.process.stdin.write(line + "\n")
        self.process.stdin.flush()

    def lines(self, skip_broken=False):
        """Every stats line so far; [] while the file is missing or (without `skip_broken`) its
        last line is half written."""
        try:
            return read_stats(self.stats, "call", skip_broken=skip_broken)
        except (OSError, ValueError):
            return []

    def last(self):
        return last_stats(self.stats, "call")

    def peer(self, name, line=None):
        """What the line (the last one unless given) says of the participant called `name`."""
        for peer in (line or self.last()).get("peers", []):
            if peer.get("name") == name:
                return peer
        return {}

    def output(self):
        try:
            with open(self.log) as f:
                return f.read()
        except OSError:
            return ""

    def stop(self, sig=signal.SIGTERM, grace=5.0):
        stop(self.process, sig, grace)
