"""Janus (Debian's `janus` 1.1.2) with its VideoRoom plugin, in the gates' network namespace, and
headless Chromium watching a room through Debian's janus.js (scripts/peers/janus_viewer.py).

Janus gathers no ICE candidate on an interface with IFF_LOOPBACK, and drops remote candidates on
127.0.0.1, so `Janus.start()` adds a veth pair j0/j1 with 127.0.0.2/32 on j0 (once per namespace)
and gathers on j0 only: every peer of Janus must offer a candidate on 127.0.0.2 too.

Janus 1.1.2 keeps no retransmission buffer for a subscriber until an RTCP receiver report has
measured a round trip that differs from the last one, starting from 0 ms (ice.c sets
`nack_queue_ms` only then). On loopback the round trip reads 0 ms, so it answers a subscriber's
NACKs only from the first report that happens to read 1 ms, often never within a gate. Loss that a
gate puts on the path to a subscriber is therefore lost for good, as on a real path in a
subscription's first second, before the first report. A gate that tests repair drops only what is
sent to Janus (`RTP_PORTS`).

Rooms are made and listed through Janus's own HTTP API (plain JSON over POST); peers reach it on
the WebSocket API (`ws_url`, subprotocol `janus-protocol`)."""
import glob
import json
import os
import re
import resource
import shutil
import signal
import subprocess
import sys
import time
import urllib.error
import urllib.parse
import urllib.request
import uuid

from .paths import WORK, read_json
from .ports import free_port, wait_http
from .processes import start, stop
from .suite import peer_crashed

LIBDIR = "/usr/lib/x86_64-linux-gnu/janus"
# What a gate's Janus loads; every other .so in LIBDIR's folders is named in a `disable` list.
WANTED = {"plugins": {"libjanus_videoroom.so"}, "transports": {"libjanus_http.so", "libjanus_websockets.so"},
          "events": set(), "loggers": set()}
JANUS_JS = "/usr/share/javascript/janus-gateway/janus.js"
ADAPTER_JS = "/usr/share/javascript/webrtc-adapter/adapter.js"  # Debian's libjs-webrtc-adapter


# The ports Janus's ICE binds (its media, both ways), below the namespace's ephemeral ports where
# every other socket of a gate lands: a drop rule on them (lib/network.py's drop_udp `to_ports`)
# loses only what is sent to Janus.
RTP_PORTS = (10000, 10999)


def add_j0():
    """The veth pair j0/j1 with 127.0.0.2/32 on j0, both up: an address Janus gathers on (it skips
    loopback interfaces) that still stays inside the host. Nothing happens when j0 has it already.
    Refuses in a namespace with other interfaces than lo, j0, j1: that is not a gate namespace."""
    # /proc/net/dev is this network namespace's (/sys/class/net is the mount namespace's sysfs)
    with open("/proc/net/dev") as f:
        links = {line.split(":")[0].strip() for line in f.readlines()[2:]}
    others = links - {"lo", "j0", "j1"}
    if others:
        raise RuntimeError(f"janus: not in a gate network namespace (interfaces {', '.join(sorted(others))}); "
                           "run under scripts/gates/run.sh or unshare -n")
    if "j0" not in links:
        subprocess.run(["ip", "link", "add", "j0", "type", "veth", "peer", "name", "j1"], check=True)
    if "127.0.0.2/32" not in subprocess.run(["ip", "-o", "-4", "addr", "show", "dev", "j0"], capture_output=True,
                                            text=True, check=True).stdout:
        subprocess.run(["ip", "addr", "add", "127.0.0.2/32", "dev", "j0"], check=True)
    for link in ("j1", "j0"):
        subprocess.run(["ip", "link", "set", link, "up"], check=True)


def _disabled(kind):
    names = {os.path.basename(path) for path in glob.glob(os.path.join(LIBDIR, kind, "*.so"))}
    return ",".join(sorted(names - WANTED[kind]))


def watch_port(stats_path):
    """The local port of a `watch`'s ICE pair on 127.0.0.2, from its stats file (None before)."""
    try:
        for line in reversed(open(stats_path).read().splitlines()):
            match = re.match(r"127\.0\.0\.2:(\d+) ", json.loads(line).get("connection", {}).get("pair") or "")
            if match:
                return int(match.group(1))
    except (OSError, ValueError):
        pass
    return None


class JanusGone(RuntimeError):
    """Janus's API cannot be reached because the process has exited."""


class JanusError(RuntimeError):
    """Janus answered a request with an error."""


class Janus:
    """One Janus, configured in WORK/`name`.janus/, logging to WORK/`name`.janus.log. `start()`
    brings it up (False if its HTTP API did not answer); `stop()` ends it with SIGINT (SIGTERM
    sometimes aborts it)."""

    # How a Janus dies by itself; SIGINT, SIGTERM and SIGKILL are ours.
    CRASHES = {signal.SIGSEGV, signal.SIGABRT, signal.SIGBUS, signal.SIGILL, signal.SIGFPE}

    def __init__(self, name):
        self.name = name
        self.confdir = os.path.join(WORK, f"{name}.janus")
        self.log_path = os.path.join(WORK, f"{name}.janus.log")
        self.http_port = free_port()
        self.ws_port = free_port()
        self.process = None

    @property
    def http_url(self):
        return f"http://127.0.0.1:{self.http_port}/janus"

    @property
    def ws_url(self):
        return f"ws://127.0.0.1:{self.ws_port}"

    def configure(self):
        """Writes janus.jcfg and the three files of what it loads into the config folder."""
        shutil.rmtree(self.confdir, ignore_errors=True)
        os.makedirs(self.confdir)
        files = {
            "janus.jcfg": f"""
general: {{
    configs_folder = "{self.confdir}"
    plugins_folder = "{LIBDIR}/plugins"
    transports_folder = "{LIBDIR}/transports"
    events_folder = "{LIBDIR}/events"
    loggers_folder = "{LIBDIR}/loggers"
    debug_level = 4
    debug_timestamps = true
    debug_colors = false
    protected_folders = ["/bin", "/boot", "/dev", "/etc", "/lib", "/proc", "/sbin", "/sys", "/usr", "/var"]
}}
media: {{ rtp_port_range = "{RTP_PORTS[0]}-{RTP_PORTS[1]}" }}
nat: {{
    nice_debug = false
    # the only interface Janus gathers on (add_j0); .local candidates are never resolvable here
    ice_enforce_list = "j0"
    ignore_mdns = true
}}
plugins: {{ disable = "{_disabled('plugins')}" }}
transports: {{ disable = "{_disabled('transports')}" }}
loggers: {{ disable = "{_disabled('loggers')}" }}
events: {{ broadcast = false, disable = "{_disabled('events')}" }}
""",
            "janus.transport.http.jcfg": f"""
general: {{ json = "compact", base_path = "/janus", http = true, port = {self.http_port}, ip = "127.0.0.1", https = false }}
admin: {{ admin_http = false, admin_https = false }}
""",
            "janus.transport.websockets.jcfg": f"""
general: {{ json = "compact", ws = true, ws_port = {self.ws_port}, ws_ip = "127.0.0.1", wss = false, ws_logging = "err,warn" }}
admin: {{ admin_ws = false, admin_wss = false }}
""",
            "janus.plugin.videoroom.jcfg": "general: {}\n",
        }
        for filename, text in files.items():
            with open(os.path.join(self.confdir, filename), "w") as out:
                out.write(text.lstrip())

    def start(self, timeout=15):
        """j0 in place, the config written, Janus started; True once its HTTP API answers
        {"janus": "info"}."""
        add_j0()
        self.configure()
        # In its config folder, with core dumps on (core_pattern "core" puts one there): a crash is
        # said with the top of its backtrace.
        self.process = start(["janus", "-F", self.confdir, "-C", os.path.join(self.confdir, "janus.jcfg")],
                             self.log_path, cwd=self.confdir,
                             preexec_fn=lambda: resource.setrlimit(resource.RLIMIT_CORE, (resource.RLIM_INFINITY,) * 2))
        deadline = time.time() + timeout
        while time.time() < deadline and self.process.poll() is None:
            try:
                if self.request("", {"janus": "info"}).get("janus") == "server_info":
                    return True
            except OSError:
                pass
            time.sleep(0.05)
        return False

    def request(self, path, message):
        """POSTs one Janus API message (a transaction added) to http_url + `path`; its answer.
        An answer {"janus": "error"} raises JanusError."""
        body = json.dumps({"transaction": uuid.uuid4().hex[:12], **message}).encode()
        request = urllib.request.Request(self.http_url + path, body, {"Content-Type": "application/json"})
        try:
            with urllib.request.urlopen(request, timeout=5) as response:
                answer = json.load(response)
        except urllib.error.URLError as error:
            code = self.process.poll() if self.process else None
            if code is not None:
                how = f"signal {-code}" if code < 0 else f"exit {code}"
                raise JanusGone(f"janus has exited ({how}); its log: {self.log_path}") from error
            raise
        if answer.get("janus") == "error":
            raise JanusError(f"janus: {message.get('janus')}: {answer.get('error')}")
        return answer

    def videoroom(self, body):
        """One synchronous VideoRoom request in a session of its own (create, attach, message,
        destroy); the plugin's data. A {"videoroom": "event", "error": …} answer raises JanusError."""
        session = self.request("", {"janus": "create"})["data"]["id"]
        try:
            handle = self.request(f"/{session}", {"janus": "attach", "plugin": "janus.plugin.videoroom"})["data"]["id"]
            data = self.request(f"/{session}/{handle}", {"janus": "message", "body": body})["plugindata"]["data"]
        finally:
            self.request(f"/{session}", {"janus": "destroy"})
        if "error" in data:
            raise JanusError(f"videoroom {body.get('request')}: {data.get('error_code')} {data['error']}")
        return data

    def create_room(self, room=None, pin=None, secret=None, videocodec="h264,vp8", publishers=6):
        """A room that lives as long as this Janus (`room` None: Janus picks its id); its id."""
        body = {"request": "create", "videocodec": videocodec, "publishers": publishers, "permanent": False}
        body.update({key: value for key, value in (("room", room), ("pin", pin), ("secret", secret)) if value})
        return self.videoroom(body)["room"]

    def publishers(self, room, pin=None):
        """The room's current publishers: [{"id", "display", "publisher": True, …}]. A participant
        is listed as publisher once its PeerConnection is up. (Janus checks no pin here.)"""
        body = {"request": "listparticipants", "room": room}
        if pin:
            body["pin"] = pin
        return [p for p in self.videoroom(body).get("participants", []) if p.get("publisher")]

    def left_over(self):
        """Pids of janus processes still running on this config folder (none after `stop()`)."""
        pids = []
        for cmdline in glob.glob("/proc/[0-9]*/cmdline"):
            try:
                with open(cmdline, "rb") as f:
                    args = f.read().split(b"\0")
            except OSError:
                continue
            if args and os.path.basename(args[0]) == b"janus" and self.confdir.encode() in args:
                pids.append(int(cmdline.split("/")[2]))
        return pids

    def stop(self, grace=10.0):
        """Ends it with SIGINT. A Janus that had died by a crash signal, or dies of one on the way
        out, is said with `peer_crashed` (the top of its backtrace when it left a core)."""
        before = self.process.poll() if self.process else None
        stop(self.process, sig=signal.SIGINT, grace=grace)
        code = self.process.returncode if self.process else None
        if code is not None and -code in self.CRASHES:
            when = "during the gate" if before is not None else "as it was stopped"
            peer_crashed(f"Janus {self.name} died {when} by {signal.Signals(-code).name}{self.backtrace()}; "
                         f"its log: {self.log_path}")

    def backtrace(self):
        """`, in f ← g ← …` from the core it left (gdb's frames with a name), then the core removed;
        "" without a core or gdb."""
        core = os.path.join(self.confdir, "core")
        if not os.path.exists(core):
            return ""
        try:
            if not shutil.which("gdb"):
                return " (it left a core; gdb is not installed to read it)"
            out = subprocess.run(["gdb", "-q", "-batch", "-ex", "bt 16", shutil.which("janus") or "janus", core],
                                 capture_output=True, text=True, timeout=60).stdout
            names = []
            for frame in re.findall(r"^#\d+\s+(?:0x[0-9a-f]+ in )?([A-Za-z_]\w*) \(", out, re.M):
                if not names or names[-1] != frame:  # an inlined frame repeats its caller's name
                    names.append(frame)
            return f", in {' ← '.join(names[:8])}" if names else ""
        except (OSError, subprocess.TimeoutExpired):
            return ""
        finally:
            os.remove(core)

    def log(self):
        with open(self.log_path, errors="replace") as f:
            return f.read()


class JanusViewer:
    """Headless Chromium subscribed to the first publisher of a room through janus.js: the page
    server (scripts/peers/janus_viewer.py) on a free port, started at once, and Chromium on its
    page with `open()`. The page's figures are in the stats file: `page()`, `video()`, `audio()`.
    Its files in WORK start with `name`."""

    def __init__(self, name, janus, room, pin=None):
        self.name = name
        self.janus = janus
        self.room = room
        self.pin = pin
        for needed, package in ((JANUS_JS, "libjs-janus-gateway"), (ADAPTER_JS, "libjs-webrtc-adapter")):
            if not os.path.exists(needed):
                raise RuntimeError(f"janus viewer: {needed} is missing (Debian package {package})")
        self.port = free_port()
        self.stats_path = os.path.join(WORK, f"{name}.viewer.json")
        if os.path.exists(self.stats_path):
            os.remove(self.stats_path)
        self.server = start([sys.executable, "scripts/peers/janus_viewer.py", "--port", str(self.port),
                             "--stats", self.stats_path], os.path.join(WORK, f"{name}.viewer.log"))
        self.browser = None

    @property
    def url(self):
        query = urllib.parse.urlencode({"janus": self.janus.ws_url, "room": self.room, "pin": self.pin or ""})
        return f"http://127.0.0.1:{self.port}/janus_viewer.html?{query}"

    def open_page(self, timeout=30):
        """Starts Chromium on the viewer page; true once the page said it is there, false after
        `timeout` seconds."""
        profile = os.path.join(WORK, f"{self.name}.profile")
        shutil.rmtree(profile, ignore_errors=True)
        self.browser = start(["scripts/peers/chromium.sh", self.url, profile],
                             os.path.join(WORK, f"{self.name}.chromium.log"))
        deadline = time.time() + timeout
        while time.time() < deadline and not self.page().get("pageSeen"):
            time.sleep(0.1)
        return bool(self.page().get("pageSeen"))

    def open(self, timeout=30):
        """The page server up and the page there."""
        return wait_http(self.port) and self.open_page(timeout)

    def page(self):
        """The page's last report ({} before it wrote one): pageSeen, state, feed {id, display},
        video, audio, error, firstFrameAt (the page's clock, ms), t."""
        return read_json(self.stats_path) or {}

    def video(self):
        """framesDecoded, frameWidth, frameHeight, framesPerSecond, codec, packetsLost, nackCount,
        pliCount … of the subscribed feed ({} before there are any)."""
        return self.page().get("video") or {}

    def audio(self):
        return self.page().get("audio") or {}

    def close(self):
        stop(self.browser)
        stop(self.server)

