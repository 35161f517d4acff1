#!/usr/bin/env python3
"""A WHIP endpoint (RFC 9725) whose receiver is a real browser: headless Chromium runs
receiver.html, which takes each offer from this bridge, answers it with its own
RTCPeerConnection, plays what arrives and posts its getStats() back.

    python3 scripts/peers/chromium_whip_bridge.py --port 8090 --stats /tmp/chromium.json

Python's standard library only. POST /whip waits (up to 15 s) for the page's answer and returns
201 + Location + answer; PATCH answers 405; DELETE /whip/<id> tells the page to close that
connection. The stats file is rewritten whenever the page reports (about twice a second).
"""
import argparse
import json
import os
import queue
import sys
import threading
import time
import uuid
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

HERE = os.path.dirname(os.path.abspath(__file__))
lock = threading.Lock()
offers = queue.Queue()           # (id, sdp) waiting for the page
answers = {}                     # id -> answer sdp
answered = threading.Condition(lock)
closing = set()                  # ids the page should close
state = {"sessions": {}, "pageSeen": False}


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, *args):
        pass

    def reply(self, status, body=b"", content_type="text/plain", headers=None):
        if isinstance(body, str):
            body = body.encode()
        self.send_response(status)
        self.send_header("Content-Type", content_type)
        self.send_header("Content-Length", str(len(body)))
        self.send_header("Cache-Control", "no-store")
        for k, v in (headers or {}).items():
            self.send_header(k, v)
        self.end_headers()
        self.wfile.write(body)

    def body(self):
        n = int(self.headers.get("Content-Length") or 0)
        if n > 1 << 20:
            raise ValueError("body too large")
        return self.rfile.read(n)

    def do_GET(self):
        if self.path in ("/", "/receiver.html"):
            with open(os.path.join(HERE, "receiver.html"), "rb") as f:
                return self.reply(200, f.read(), "text/html; charset=utf-8")
        if self.path == "/bridge/next":
            # Long poll: an offer to answer, or ids to close.
            with lock:
                if not state["pageSeen"]:
                    state["pageSeen"] = True
                    write_stats()
                if closing:
                    ids = sorted(closing)
                    closing.clear()
                    return self.reply(200, json.dumps({"close": ids}), "application/json")
            try:
                sid, sdp = offers.get(timeout=1.0)
            except queue.Empty:
                return self.reply(204)
            return self.reply(200, json.dumps({"offer": {"id": sid, "sdp": sdp}}), "application/json")
        return self.reply(404, "not found")

    def do_POST(self):
        if self.path == "/whip":
            if self.headers.get("Content-Type", "").split(";")[0].strip().lower() != "application/sdp":
                return self.reply(415, "offer must be application/sdp")
            offer = self.body().decode("utf-8", "replace")
            sid = uuid.uuid4().hex[:12]
            with lock:
                state["sessions"][sid] = {"id": sid, "created": time.time(), "deleted": False, "stats": None}
            offers.put((sid, offer))
            deadline = time.time() + 15
            with answered:
                while sid not in answers and time.time() < deadline:
                    answered.wait(timeout=deadline - time.time())
                answer = answers.pop(sid, None)
            if answer is None:
                return self.reply(503, "the browser did not answer in 15 s", headers={"Retry-After": "1"})
            if answer.startswith("error:"):
                return self.reply(400, "browser refused the offer: " + answer[6:])
            return self.reply(201, answer, "application/sdp", {"Location": f"/whip/{sid}", "ETag": f'"{sid}"'})
        if self.path == "/bridge/answer":
            message = json.loads(self.body())
            with answered:
                answers[message["id"]] = message["sdp"] if "sdp" in message else "error:" + message.get("error", "?")
                answered.notify_all()
            return self.reply(204)
        if self.path == "/bridge/stats":
            message = json.loads(self.body())
            with lock:
                for sid, stats in message.get("sessions", {}).items():
                    if sid in state["sessions"]:
                        state["sessions"][sid]["stats"] = stats
                write_stats()
            return self.reply(204)
        return self.reply(404, "not found")

    def do_PATCH(self):
        self.body()
        with lock:
            state["patches"] = state.get("patches", 0) + 1
            write_stats()
        return self.reply(405, "this endpoint takes no trickle", headers={"Allow": "POST, DELETE"})

    def do_DELETE(self):
        sid = self.path.rsplit("/", 1)[-1]
        with lock:
            session = state["sessions"].get(sid)
            if not self.path.startswith("/whip/") or session is None:
                return self.reply(404, "no such session")
            session["deleted"] = True
            closing.add(sid)
            write_stats()
        return self.reply(200)


def write_stats():
    path = Handler.stats_path
    if not path:
        return
    tmp = path + ".tmp"
    with open(tmp, "w") as f:
        json.dump({"pageSeen": state["pageSeen"], "sessions": list(state["sessions"].values()),
                   "patches": state.get("patches", 0)}, f)
    os.replace(tmp, path)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=8090)
    parser.add_argument("--stats", default="")
    args = parser.parse_args()
    Handler.stats_path = args.stats
    server = ThreadingHTTPServer((args.host, args.port), Handler)
    server.daemon_threads = True
    print(f"Chromium WHIP bridge on http://{args.host}:{args.port}/whip (page: /receiver.html)", flush=True)
    server.serve_forever()


if __name__ == "__main__":
    sys.exit(main())
