"""Headless Chromium as a WHIP receiver: the WHIP bridge (scripts/peers/chromium_whip_bridge.py)
answers a share's offers and hands them to Chromium on its receiver page (scripts/peers/
chromium.sh); the page writes its getStats() figures into the bridge's stats file."""
import os
import sys
import time

from .paths import WORK, read_json
from .ports import free_port, wait_http
from .processes import start, stop


class WHIPReceiver:
    """The bridge on a free port, started at once; `open()` brings Chromium up on the page.
    `sample()` records the page's video figures over time. Its files in WORK start with `name`."""

    def __init__(self, name):
        self.name = name
        self.port = free_port()
        self.stats_path = os.path.join(WORK, f"{name}.browser.json")
        if os.path.exists(self.stats_path):
            os.remove(self.stats_path)
        self.bridge = start([sys.executable, "scripts/peers/chromium_whip_bridge.py", "--port", str(self.port),
                             "--stats", self.stats_path], os.path.join(WORK, f"{name}.bridge.log"))
        self.browser = None
        self.samples = []

    def bridge_up(self):
        """True once the bridge listens (False after 15 s)."""
        return wait_http(self.port)

    def open_page(self, timeout=30):
        """Starts Chromium on the receiver page; true once the page said it is there, false after
        `timeout` seconds."""
        self.browser = start(["scripts/peers/chromium.sh", f"http://127.0.0.1:{self.port}/receiver.html",
                              os.path.join(WORK, f"{self.name}.profile")], os.path.join(WORK, f"{self.name}.chromium.log"))
        deadline = time.time() + timeout
        while time.time() < deadline and not self.page().get("pageSeen"):
            time.sleep(0.2)
        return bool(self.page().get("pageSeen"))

    def open(self, timeout=30):
        """The bridge up and the page there."""
        return self.bridge_up() and self.open_page(timeout)

    @property
    def endpoint(self):
        return f"http://127.0.0.1:{self.port}/whip"

    def page(self):
        """The page's stats file ({} before it wrote one)."""
        return read_json(self.stats_path) or {}

    def session(self):
        """The last WHIP session the page received ({} before the first)."""
        return (self.page().get("sessions") or [{}])[-1]

    def video(self):
        return ((self.session().get("stats") or {}).get("video")) or {}

    def sample(self):
        video = self.video()
        if video:
            self.samples.append((time.time(), video))
        return video

    def watch(self, seconds):
        end = time.time() + seconds
        while time.time() < end:
            self.sample()
            time.sleep(0.5)

    def window(self, seconds):
        """Frames decoded a second over the last `seconds`, and the samples in that window."""
        if not self.samples:
            return 0.0, []
        end_t, end = self.samples[-1]
        inside = [(t, v) for t, v in self.samples if t >= end_t - seconds]
        start_t, start_v = inside[0]
        span = max(0.001, end_t - start_t)
        return (end.get("framesDecoded", 0) - start_v.get("framesDecoded", 0)) / span, [v for _, v in inside]

    def close(self):
        stop(self.browser)
        stop(self.bridge)
