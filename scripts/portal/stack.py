#!/usr/bin/env python3
"""A real ScreenCast stack, headless, for the portal gates: a private D-Bus session bus, PipeWire,
WirePlumber, sway (headless, pixman renderer: no GPU, no display), xdg-permission-store,
xdg-desktop-portal and xdg-desktop-portal-wlr (no chooser: it shares HEADLESS-1 by itself).

    with PortalStack(workdir) as stack:
        stack.start_content()          # something drawing on the output (moving content)
        subprocess.run([...], env=stack.env)
        stack.stop_content()           # nothing draws: a still screen

Everything lives under one directory and is started here as a child; `close()` (also on errors)
stops every process (SIGTERM, then SIGKILL), removes the directory and reports anything left.

Workaround: xdg-desktop-portal-wlr 0.7 refuses Start unless the compositor offered a DMA-BUF
screencopy format, which a GPU-less wlroots never does; `xdpw_shm_shim.c` (LD_PRELOAD, built with
the system C compiler at start) reports the SHM format in its place. Buffers stay memfd.

Run directly for a self-check: `python3 scripts/portal/stack.py` brings the stack up, asks
`sharectl sources` what it sees, and tears it down.
"""
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
OUTPUT = "HEADLESS-1"
# The stack's own processes: one of these exiting while the stack comes up is an error.
CORE = ("dbus", "pipewire", "wireplumber", "sway", "permission-store", "xdpw")


class StackError(Exception):
    pass


class PortalStack:
    def __init__(self, workdir=None, size="1280x720", max_fps=30):
        base = workdir or tempfile.gettempdir()
        os.makedirs(base, exist_ok=True)
        self.dir = tempfile.mkdtemp(prefix="sharectl-portal.", dir=base)
        os.chmod(self.dir, 0o755)
        self.size, self.max_fps = size, max_fps
        self.processes = []          # (name, Popen) in start order
        self.content = None
        self.env = {}
        self.logs = os.path.join(self.dir, "log")

    # ---- life cycle ----
    def __enter__(self):
        try:
            self.start()
        except BaseException:
            self.close()
            raise
        return self

    def __exit__(self, *exc):
        self.close()

    def start(self):
        d = self.dir
        run, run_sway, home, home_sway = (os.path.join(d, n) for n in ("run", "run-sway", "home", "home-sway"))
        cfg = os.path.join(d, "cfg")
        for path in (run, run_sway, home, home_sway, self.logs, os.path.join(cfg, "sway"),
                     os.path.join(cfg, "xdg-desktop-portal-wlr"), os.path.join(cfg, "xdg-desktop-portal"),
                     os.path.join(d, "portals"), os.path.join(d, "dbus-services")):
            os.makedirs(path, exist_ok=True)
        os.chmod(run, 0o700)
        os.chmod(run_sway, 0o700)
        self.env = {
            "PATH": "/usr/local/bin:/usr/bin:/bin", "HOME": home, "XDG_RUNTIME_DIR": run, "XDG_CONFIG_HOME": cfg,
            "XDG_DATA_HOME": os.path.join(home, ".local/share"), "XDG_CACHE_HOME": os.path.join(home, ".cache"),
            "XDG_STATE_HOME": os.path.join(home, ".local/state"), "XDG_CURRENT_DESKTOP": "sway",
            "XDG_SESSION_TYPE": "wayland", "XDG_DESKTOP_PORTAL_DIR": os.path.join(d, "portals"),
            "GSETTINGS_BACKEND": "memory", "PIPEWIRE_RUNTIME_DIR": run,
            "GST_REGISTRY": os.path.join(d, "gst-registry.bin"), "LANG": "C.UTF-8",
        }
        # Only the wlr backend; xdg-desktop-portal 1.16 picks it by UseIn=sway.
        shutil.copy("/usr/share/xdg-desktop-portal/portals/wlr.portal", os.path.join(d, "portals"))
        write(os.path.join(cfg, "xdg-desktop-portal/sway-portals.conf"), "[preferred]\ndefault=wlr\n")
        write(os.path.join(cfg, "xdg-desktop-portal-wlr/config"),
              f"[screencast]\noutput_name={OUTPUT}\nchooser_type=none\nmax_fps={self.max_fps}\n")
        write(os.path.join(cfg, "sway/config"),
              f"output {OUTPUT} mode {self.size}@60Hz position 0,0\nxwayland disable\ndefault_border none\n")
        for root, dirs, files in os.walk(cfg):
            for name in dirs + files:
                os.chmod(os.path.join(root, name), 0o755 if name in dirs else 0o644)
        # A private bus with no service activation: nothing starts behind our back (no document
        # portal FUSE mount, no dconf), so everything is stopped by close().
        bus_config = os.path.join(d, "dbus.conf")
        write(bus_config, f"""<!DOCTYPE busconfig PUBLIC "-//freedesktop//DTD D-BUS Bus Configuration 1.0//EN"
 "http://www.freedesktop.org/standards/dbus/1.0/busconfig.dtd">
<busconfig><type>session</type><listen>unix:path={run}/bus</listen><auth>EXTERNAL</auth>
<servicedir>{d}/dbus-services</servicedir>
<policy context="default"><allow send_destination="*" eavesdrop="true"/><allow eavesdrop="true"/><allow own="*"/></policy>
</busconfig>
""")
        shim = os.path.join(d, "xdpw_shm_shim.so")
        cc = shutil.which("cc") or shutil.which("gcc") or shutil.which("clang")
        if not cc:
            raise StackError("no C compiler for the xdg-desktop-portal-wlr shim")
        subprocess.run([cc, "-shared", "-fPIC", "-O2", "-o", shim, os.path.join(HERE, "xdpw_shm_shim.c"), "-ldl"],
                       check=True)

        self.spawn("dbus", ["dbus-daemon", f"--config-file={bus_config}", "--nofork", "--nopidfile"])
        self.env["DBUS_SESSION_BUS_ADDRESS"] = f"unix:path={run}/bus"
        self.wait("D-Bus", lambda: os.path.exists(f"{run}/bus"))
        self.spawn("pipewire", ["pipewire"])
        self.wait("PipeWire", lambda: os.path.exists(f"{run}/pipewire-0"))
        self.spawn("wireplumber", ["wireplumber"])
        self.wait("WirePlumber", lambda: b'"WirePlumber"' in self.output(["pw-cli", "ls", "Client"]))

        # sway refuses to run as root: as root it runs as nobody with its own runtime dir.
        prefix = []
        if os.getuid() == 0:
            for path in (run_sway, home_sway):
                os.chown(path, 65534, 65534)
            prefix = ["setpriv", "--reuid=nobody", "--regid=nogroup", "--clear-groups"]
        sway_env = {"PATH": "/usr/bin:/bin", "HOME": home_sway, "XDG_RUNTIME_DIR": run_sway, "WLR_BACKENDS": "headless",
                    "WLR_LIBINPUT_NO_DEVICES": "1", "WLR_RENDERER": "pixman", "WLR_HEADLESS_OUTPUTS": "1"}
        self.spawn("sway", prefix + ["sway", "-c", os.path.join(cfg, "sway/config")], env=sway_env)
        self.wait("sway", lambda: any(n.startswith("wayland-") and not n.endswith(".lock") for n in os.listdir(run_sway)))
        self.env["WAYLAND_DISPLAY"] = os.path.join(
            run_sway, sorted(n for n in os.listdir(run_sway) if n.startswith("wayland-") and not n.endswith(".lock"))[0])
        self.wait("sway IPC", lambda: any(n.startswith("sway-ipc.") for n in os.listdir(run_sway)))
        self.env["SWAYSOCK"] = os.path.join(run_sway, next(n for n in os.listdir(run_sway) if n.startswith("sway-ipc.")))
        self.wait("sway output", lambda: OUTPUT.encode() in self.output(["swaymsg", "-t", "get_outputs"]))

        self.spawn("permission-store", ["/usr/libexec/xdg-permission-store", "--replace"])
        self.wait("permission store", lambda: self.has_name("org.freedesktop.impl.portal.PermissionStore"))
        self.start_backend()
        self.start_portal()

    def _stop_named(self, name):
        """Ends the named process on purpose: it leaves the list the liveness checks read (a core
        process that exited by itself is a broken stack; one stopped here is not)."""
        for each, process in list(self.processes):
            if each == name:
                if process.poll() is None:
                    terminate(process)
                self.processes.remove((each, process))

    def start_backend(self):
        self.spawn("xdpw", ["/usr/libexec/xdg-desktop-portal-wlr", "-l", "INFO", "-c",
                            os.path.join(self.dir, "cfg", "xdg-desktop-portal-wlr/config")],
                   extra={"LD_PRELOAD": os.path.join(self.dir, "xdpw_shm_shim.so")})
        self.wait("xdg-desktop-portal-wlr", lambda: self.has_name("org.freedesktop.impl.portal.desktop.wlr"))

    def restart_backend(self):
        """xdg-desktop-portal-wlr killed and started again (its casts end with it)."""
        self._stop_named("xdpw")
        self.start_backend()

    def restart_pipewire(self, down=1.0):
        """The PipeWire daemon (and its session manager) stopped and started again, as a desktop
        session's `systemctl --user restart pipewire` does; xdg-desktop-portal-wlr, a PipeWire client
        that does not reconnect by itself, is started again after it."""
        run = self.env["XDG_RUNTIME_DIR"]
        for name in ("wireplumber", "pipewire"):
            self._stop_named(name)
        time.sleep(down)
        self.spawn("pipewire", ["pipewire"])
        self.wait("PipeWire", lambda: os.path.exists(f"{run}/pipewire-0"))
        self.spawn("wireplumber", ["wireplumber"])
        self.wait("WirePlumber", lambda: b'"WirePlumber"' in self.output(["pw-cli", "ls", "Client"]))
        self.restart_backend()

    def start_portal(self):
        self.spawn("xdp", ["/usr/libexec/xdg-desktop-portal"])
        self.wait("xdg-desktop-portal", lambda: self.has_name("org.freedesktop.portal.Desktop"))

    def stop_portal(self):
        """Ends xdg-desktop-portal (and with it every portal session)."""
        for name, process in self.processes:
            if name == "xdp" and process.poll() is None:
                terminate(process)

    def start_content(self):
        """A client on the output that draws 30 frames a second (moving content)."""
        self.stop_content()
        self.content = self.spawn("content", [
            "gst-launch-1.0", "-q", "videotestsrc", "is-live=true", "pattern=ball", "!",
            "video/x-raw,width=640,height=360,framerate=30/1", "!", "waylandsink"])
        pid = self.content.pid
        self.wait("content window", lambda: f'"pid": {pid}'.encode() in self.output(["swaymsg", "-t", "get_tree"]), 20)

    def draw_once(self):
        """A brief change on a still screen: a client shows one frame and goes (then nothing moves)."""
        self.stop_content()
        process = self.spawn("flash", ["gst-launch-1.0", "-q", "videotestsrc", "num-buffers=1", "pattern=smpte", "!",
                                       "video/x-raw,width=640,height=360", "!", "waylandsink"])
        try:
            process.wait(timeout=15)
        except subprocess.TimeoutExpired:
            terminate(process)

    def stop_content(self):
        if self.content is not None:
            terminate(self.content)
            self.content = None

    def close(self):
        leftovers = []
        for name, process in reversed(self.processes):
            if not terminate(process):
                leftovers.append(f"{name} ({process.pid})")
        self.processes = []
        mounts = [line.split()[4] for line in open("/proc/self/mountinfo") if f" {self.dir}" in line]
        for mount in mounts:
            subprocess.run(["umount", "-l", mount], stderr=subprocess.DEVNULL)
        if os.environ.get("SHARECTL_KEEP_PORTAL_STACK") == "1":
            print(f"portal stack kept at {self.dir}", file=sys.stderr)
        else:
            shutil.rmtree(self.dir, ignore_errors=True)
        self.leftovers = leftovers + [f"mount {m}" for m in mounts]
        return self.leftovers

    # ---- helpers ----
    def spawn(self, name, args, env=None, extra=None):
        environment = dict(env if env is not None else self.env)
        environment.update(extra or {})
        log = open(os.path.join(self.logs, f"{name}.log"), "a")
        process = subprocess.Popen(args, env=environment, stdout=log, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
                                   start_new_session=True)
        self.processes.append((name, process))
        return process

    def output(self, args):
        try:
            return subprocess.run(args, env=self.env, capture_output=True, timeout=5).stdout
        except (OSError, subprocess.TimeoutExpired):
            return b""

    def has_name(self, name):
        return b"boolean true" in self.output(["dbus-send", "--session", "--print-reply", "--dest=org.freedesktop.DBus",
                                               "/org/freedesktop/DBus", "org.freedesktop.DBus.NameHasOwner",
                                               f"string:{name}"])

    def wait(self, what, condition, timeout=10):
        deadline = time.time() + timeout
        while time.time() < deadline:
            if condition():
                return
            for name, process in self.processes:
                if process.poll() is not None and name in CORE:
                    raise StackError(f"{name} exited ({process.returncode}) while waiting for {what}: {self.tail(name)}")
            time.sleep(0.1)
        raise StackError(f"{what} not ready after {timeout} s")

    def tail(self, name, lines=10):
        try:
            return "".join(open(os.path.join(self.logs, f"{name}.log")).readlines()[-lines:])
        except OSError:
            return ""

    def pids(self):
        return [p.pid for _, p in self.processes]


def terminate(process, grace=3.0):
    """SIGTERM to the process group, SIGKILL after `grace`; True when it is gone."""
    if process.poll() is None:
        try:
            os.killpg(process.pid, signal.SIGTERM)
        except ProcessLookupError:
            pass
        try:
            process.wait(timeout=grace)
        except subprocess.TimeoutExpired:
            try:
                os.killpg(process.pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
            try:
                process.wait(timeout=2)
            except subprocess.TimeoutExpired:
                return False
    return True


def write(path, text):
    with open(path, "w") as f:
        f.write(text)


if __name__ == "__main__":
    root = os.path.dirname(os.path.dirname(HERE))
    sharectl = os.environ.get("SHARECTL", os.path.join(root, ".build/debug/sharectl"))
    t0 = time.time()
    with PortalStack() as stack:
        print(f"stack up in {time.time() - t0:.1f} s at {stack.dir}")
        print(subprocess.run([sharectl, "sources"], env=stack.env, capture_output=True, text=True).stdout)
    print("leftovers:", stack.leftovers or "none")
