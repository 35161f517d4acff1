"""What the room gates (room_server.py, room_call.py) share: the room server on a fixed port with
a state file, headless Chromium on an invite link driven through the DevTools protocol, and
waiting for a condition. Imported by those suites (after they have made sure aiohttp from the
project's .venv is importable)."""
import asyncio
import json
import os
import signal
import socket
import subprocess
import time

import aiohttp

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
SHARECTL = os.environ.get("SHARECTL", os.path.join(ROOT, ".build/debug/sharectl"))
WORK = os.environ.get("GATE_WORK", "/tmp/sharectl-gates")
os.makedirs(WORK, exist_ok=True)


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def stop(process, sig=signal.SIGTERM):
    """Signals the process group, then SIGKILL if it has not gone within 8 s."""
    if process and process.poll() is None:
        os.killpg(process.pid, sig)
        try:
            process.wait(timeout=8)
        except subprocess.TimeoutExpired:
            os.killpg(process.pid, signal.SIGKILL)
            process.wait(timeout=5)


async def wait_for(condition, timeout, interval=0.5):
    deadline = time.time() + timeout
    while time.time() < deadline:
        value = await condition()
        if value:
            return value
        await asyncio.sleep(interval)
    return None


class Server:
    """`sharectl serve` on a fixed port with a state file, so a restart keeps the room. `prefix`
    names its files in WORK and is the room's name."""

    def __init__(self, prefix, extra_args=()):
        self.prefix = prefix
        self.extra_args = list(extra_args)
        self.port = free_port()
        self.state = os.path.join(WORK, f"{prefix}.state.json")
        if os.path.exists(self.state):
            os.remove(self.state)
        self.process = None
        self.url = None
        self.starts = 0

    def start(self):
        self.starts += 1
        log = open(os.path.join(WORK, f"{self.prefix}.serve{self.starts}.log"), "w")
        self.process = subprocess.Popen(
            [SHARECTL, "serve", "--listen", f"127.0.0.1:{self.port}", "--room", self.prefix, "--grace", "15",
             "--state", self.state, *self.extra_args],
            stdout=subprocess.PIPE, stderr=log, cwd=ROOT, start_new_session=True, text=True)
        first = self.process.stdout.readline().strip()
        if not first.startswith("Room: "):
            raise RuntimeError(f"serve's first line was {first!r}, not 'Room: <URL>'")
        self.url = first.split(" ", 1)[1]
        return self.url

    def kill(self):
        os.killpg(self.process.pid, signal.SIGKILL)
        self.process.wait(timeout=5)

    def stop(self):
        stop(self.process)


class Browser:
    """Headless Chromium on the invite link (fake camera, microphone and screen), driven through
    the DevTools protocol; its files in WORK start with `prefix`."""

    def __init__(self, name, url, extra_query="", prefix="room"):
        self.name = name
        self.debug_port = free_port()
        profile = os.path.join(WORK, f"{prefix}.{name}.profile")
        subprocess.run(["rm", "-rf", profile])
        self.process = subprocess.Popen(
            ["chromium", "--headless=new", "--no-sandbox", "--no-first-run", "--disable-gpu", "--mute-audio",
             f"--user-data-dir={profile}", "--use-fake-ui-for-media-stream", "--use-fake-device-for-media-stream",
             "--auto-accept-this-tab-capture", "--autoplay-policy=no-user-gesture-required",
             "--allow-loopback-in-peer-connection", "--disable-background-timer-throttling",
             "--disable-renderer-backgrounding", f"--remote-debugging-port={self.debug_port}",
             "--remote-allow-origins=*", f"{url}&name={name}{extra_query}"],
            stdout=open(os.path.join(WORK, f"{prefix}.{name}.chromium.log"), "w"), stderr=subprocess.STDOUT,
            start_new_session=True)
        self.ws = None
        self.session = None
        self.next_id = 0

    async def connect(self, timeout=20):
        self.session = aiohttp.ClientSession()
        deadline = time.time() + timeout
        while time.time() < deadline:
            try:
                async with self.session.get(f"http://127.0.0.1:{self.debug_port}/json/list") as response:
                    pages = [p for p in await response.json() if p.get("type") == "page" and "/r/" in p.get("url", "")]
                if pages:
                    self.ws = await self.session.ws_connect(pages[0]["webSocketDebuggerUrl"], max_msg_size=0)
                    return
            except (aiohttp.ClientError, OSError, ValueError):
                pass
            await asyncio.sleep(0.3)
        raise RuntimeError(f"Chromium ({self.name}) offered no DevTools page")

    async def evaluate(self, expression):
        self.next_id += 1
        ident = self.next_id
        await self.ws.send_str(json.dumps({"id": ident, "method": "Runtime.evaluate",
                                           "params": {"expression": expression, "returnByValue": True,
                                                      "awaitPromise": True, "userGesture": True}}))
        while True:
            message = await asyncio.wait_for(self.ws.receive(), 10)
            if message.type != aiohttp.WSMsgType.TEXT:
                raise RuntimeError(f"DevTools socket of {self.name} closed")
            data = json.loads(message.data)
            if data.get("id") == ident:
                return data.get("result", {}).get("result", {}).get("value")

    async def state(self):
        """The page's window.sharectlState ({} before the client set it)."""
        text = await self.evaluate("JSON.stringify(window.sharectlState || null)")
        return (json.loads(text) if text else None) or {}

    async def peer(self, name):
        """What the page knows of the participant called `name` ({} if nothing)."""
        for info in ((await self.state()).get("participants") or {}).values():
            if info.get("name") == name:
                return info
        return {}

    async def stage_figures(self):
        """Screens of others on the stage (a browser that shares shows its own preview there too)."""
        return await self.evaluate("document.querySelectorAll('#stage figure:not([data-peer=\"self\"])').length")

    async def close(self):
        if self.ws is not None:
            await self.ws.close()
        if self.session is not None:
            await self.session.close()
        stop(self.process)
