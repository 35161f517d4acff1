#!/usr/bin/env python3
"""A WHIP endpoint (RFC 9725) in front of one Janus VideoRoom room, for the gates: Janus 1.1 has no
WHIP of its own, and its VideoRoom takes simulcast (RIDs) from a publisher's offer, which the gates'
aiortc endpoint cannot. Each POST of an SDP offer becomes a Janus session whose VideoRoom handle
joins the room as a publisher with that offer ("joinandconfigure"); Janus's answer (its candidates
in it: Janus trickles nothing by default) is the POST's 201 body, and the session's URL its
Location. A thread per session long-polls Janus's events, which also keeps the session alive;
DELETE destroys it, and the publisher leaves the room.

    python3 scripts/peers/janus_whip.py --janus http://127.0.0.1:8088/janus --room 1234 \
        [--pin PIN] [--display NAME] --port 8190 [--info FILE]

`--info` names a JSON file rewritten on every change: {"sessions": [{"id", "display", "state",
"error", "deleted"}]}. A bad request gets 400, an offer Janus refuses 502, each with the reason
as text."""
import argparse
import json
import os
import threading
import urllib.error
import urllib.request
import uuid
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

LOCK = threading.Lock()
SESSIONS = {}


def janus_call(url, message, timeout=10):
    body = json.dumps({"transaction": uuid.uuid4().hex[:12], **message}).encode()
    request = urllib.request.Request(url, body, {"Content-Type": "application/json"})
    with urllib.request.urlopen(request, timeout=timeout) as response:
        answer = json.load(response)
    if answer.get("janus") == "error":
        raise RuntimeError(f"janus {message.get('janus')}: {answer.get('error')}")
    return answer


def write_info(path):
    if not path:
        return
    with LOCK:
        data = {"sessions": [dict(session["public"]) for session in SESSIONS.values()]}
    with open(path + ".tmp", "w") as out:
        json.dump(data, out)
    os.replace(path + ".tmp", path)


class Session:
    """One publisher: its Janus session and handle, and the thread that reads their events."""

    def __init__(self, args, offer):
        self.args = args
        self.base = args.janus.rstrip("/")
        self.session = janus_call(self.base, {"janus": "create"})["data"]["id"]
        self.handle = janus_call(f"{self.base}/{self.session}",
                                 {"janus": "attach", "plugin": "janus.plugin.videoroom"})["data"]["id"]
        self.events = []
        self.answer = None
        self.error = None
        self.done = threading.Event()
        self.answered = threading.Event()
        self.hung_up = threading.Event()
        self.thread = threading.Thread(target=self.poll, daemon=True)
        self.thread.start()
        body = {"request": "joinandconfigure", "room": args.room, "ptype": "publisher", "display": args.display}
        if args.pin:
            body["pin"] = args.pin
        janus_call(f"{self.base}/{self.session}/{self.handle}",
                   {"janus": "message", "body": body, "jsep": {"type": "offer", "sdp": offer}})

    def poll(self):
        while not self.done.is_set():
            try:
                with urllib.request.urlopen(f"{self.base}/{self.session}?maxev=5", timeout=40) as response:
                    events = json.load(response)
            except (OSError, ValueError) as error:
                if not self.done.is_set():
                    self.error = f"janus events: {error}"
                    self.answered.set()
                return
            for event in events if isinstance(events, list) else [events]:
                self.events.append(event.get("janus"))
                if event.get("janus") == "hangup":
                    self.hung_up.set()
                data = (event.get("plugindata") or {}).get("data") or {}
                if "error" in data:
                    self.error = f"videoroom: {data.get('error_code')} {data['error']}"
                    self.answered.set()
                jsep = event.get("jsep") or {}
                if jsep.get("type") == "answer":
                    self.answer = jsep.get("sdp")
                    self.answered.set()

    def destroy(self):
        # The PeerConnection closed first, then the session: Janus 1.1.2 closing one while it
        # destroys the handle can crash in libnice (nice_agent_remove_stream).
        try:
            janus_call(f"{self.base}/{self.session}/{self.handle}", {"janus": "hangup"})
            self.hung_up.wait(2)
        except (OSError, RuntimeError) as error:
            print(f"Janus handle {self.handle} not hung up: {error}", flush=True)
        self.done.set()
        try:
            janus_call(f"{self.base}/{self.session}", {"janus": "destroy"})
            print(f"Janus session {self.session} destroyed (Janus answered success)", flush=True)
        except (OSError, RuntimeError) as error:
            print(f"Janus session {self.session} not destroyed: {error}", flush=True)


class Handler(BaseHTTPRequestHandler):
    server_version = "janus-whip"

    def log_message(self, fmt, *args):
        print(fmt % args, flush=True)

    def reply(self, code, body=b"", headers=None):
        self.send_response(code)
        for key, value in (headers or {}).items():
            self.send_header(key, value)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def do_POST(self):
        args = self.server.args
        if self.path != "/whip":
            return self.reply(404, b"no such endpoint\n")
        if (self.headers.get("Content-Type") or "").split(";")[0].strip() != "application/sdp":
            return self.reply(415, b"an SDP offer, as application/sdp\n")
        offer = self.rfile.read(int(self.headers.get("Content-Length") or 0)).decode(errors="replace")
        if not offer.startswith("v=0"):
            return self.reply(400, b"not an SDP offer\n")
        try:
            session = Session(args, offer)
        except (OSError, RuntimeError, KeyError) as error:
            return self.reply(502, f"janus: {error}\n".encode())
        session.answered.wait(15)
        key = uuid.uuid4().hex[:12]
        public = {"id": key, "display": args.display, "state": "answered" if session.answer else "failed",
                  "error": session.error, "deleted": False}
        with LOCK:
            SESSIONS[key] = {"session": session, "public": public}
        write_info(args.info)
        if not session.answer:
            session.destroy()
            return self.reply(502, f"janus gave no answer: {session.error or 'timed out'}\n".encode())
        self.reply(201, session.answer.encode(),
                   {"Content-Type": "application/sdp", "Location": f"/whip/{key}", "ETag": f'"{key}"'})

    def do_DELETE(self):
        key = self.path.rsplit("/", 1)[-1]
        with LOCK:
            entry = SESSIONS.get(key)
        if not self.path.startswith("/whip/") or entry is None:
            return self.reply(404, b"no such session\n")
        entry["session"].destroy()
        with LOCK:
            entry["public"]["deleted"] = True
            entry["public"]["state"] = "closed"
        write_info(self.server.args.info)
        self.reply(200)

    def do_PATCH(self):
        self.reply(405, b"no trickle: send every candidate in the offer\n", {"Allow": "POST, DELETE"})


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--janus", required=True, help="Janus's HTTP API, e.g. http://127.0.0.1:8088/janus")
    parser.add_argument("--room", type=int, required=True)
    parser.add_argument("--pin")
    parser.add_argument("--display", default="whip")
    parser.add_argument("--port", type=int, required=True)
    parser.add_argument("--info")
    args = parser.parse_args()
    server = ThreadingHTTPServer(("127.0.0.1", args.port), Handler)
    server.args = args
    write_info(args.info)
    print(f"WHIP into Janus room {args.room} on http://127.0.0.1:{args.port}/whip", flush=True)
    server.serve_forever()


if __name__ == "__main__":
    main()
