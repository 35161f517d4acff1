"""Headless Chromium on a room's invite link (the browser client), driven through the DevTools
protocol. Needs aiohttp: a suite that imports this calls paths.rerun_in_venv_without("aiohttp")
first."""
import asyncio
import base64
import io
import json
import os
import subprocess
import time

import aiohttp

from .paths import WORK
from .ports import free_port
from .processes import stop

# The room gates give their browsers and servers 8 s to go on SIGTERM.
GRACE = 8.0


class Browser:
    """Headless Chromium on the invite link (fake camera, microphone and screen), joining as
    `name`; its files in WORK start with `prefix`."""

    def __init__(self, name, url, extra_query="", prefix="room", extra_args=()):
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
             "--remote-allow-origins=*", *extra_args, f"{url}&name={name}{extra_query}"],
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
        result = await self.command("Runtime.evaluate", {"expression": expression, "returnByValue": True,
                                                          "awaitPromise": True, "userGesture": True})
        return result.get("result", {}).get("value")

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

    async def command(self, method, params=None):
        """One DevTools command; its result ({} if it gave none)."""
        self.next_id += 1
        ident = self.next_id
        await self.ws.send_str(json.dumps({"id": ident, "method": method, "params": params or {}}))
        while True:
            message = await asyncio.wait_for(self.ws.receive(), 20)
            if message.type != aiohttp.WSMsgType.TEXT:
                raise RuntimeError(f"DevTools socket of {self.name} closed")
            data = json.loads(message.data)
            if data.get("id") == ident:
                return data.get("result") or {}

    async def picture(self, selector):
        """What the page paints inside the first element matching `selector`, as a screenshot
        (DevTools Page.captureScreenshot, PNG) decoded by PyAV: (width, height, RGB bytes), or
        None when there is no such element or it has no size."""
        box = await self.evaluate(
            f"(() => {{ const e = document.querySelector({json.dumps(selector)}); if (!e) return null; "
            "const r = e.getBoundingClientRect(); return [r.x, r.y, r.width, r.height]; })()")
        if not box or box[2] < 2 or box[3] < 2:
            return None
        shot = await self.command("Page.captureScreenshot", {
            "format": "png", "captureBeyondViewport": True,
            "clip": {"x": box[0], "y": box[1], "width": box[2], "height": box[3], "scale": 1}})
        import av  # PyAV, from aiortc's dependencies in the virtualenv
        container = av.open(io.BytesIO(base64.b64decode(shot["data"])))
        frame = next(container.decode(video=0)).reformat(format="rgb24")
        plane = frame.planes[0]
        rows = bytes(plane)
        pixels = b"".join(rows[y * plane.line_size:y * plane.line_size + frame.width * 3] for y in range(frame.height))
        return frame.width, frame.height, pixels

    async def stage_figures(self):
        """Screens of others on the stage (a browser that shares shows its own preview there too)."""
        return await self.evaluate("document.querySelectorAll('#stage figure:not([data-peer=\"self\"])').length")

    async def close(self):
        if self.ws is not None:
            await self.ws.close()
        if self.session is not None:
            await self.session.close()
        stop(self.process, grace=GRACE)
