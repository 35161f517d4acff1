#!/usr/bin/env python3
"""A scriptable, sometimes hostile WHIP endpoint (RFC 9725) for sharectl's tests.

Standard library only (no virtualenv needed). Listens on 127.0.0.1 and on 127.0.0.2 (another
origin on the same port, for the redirect rules), prints "PORT <n>" on stdout once it accepts
connections, and exits when its standard input closes (so a test that dies takes its server with
it).

The path of a POST picks the behaviour (a query string tunes it):
  /ok                    201 + absolute Location + ETag + SDP answer
  /app/relative-location 201 + Location "sessions/7?x=1" (relative to the request URL)
  /needs-token           401 unless "Authorization: Bearer s3cret" (its session needs it too)
  /redirect-307          307 -> /needs-token (relative Location)
  /redirect-308          308 -> http://127.0.0.1:PORT/needs-token (absolute)
  /redirect-chain?left=N 307 -> left=N-1 ... left=0 behaves like /ok
  /redirect-loop         307 -> /redirect-loop-b -> 307 -> /redirect-loop
  /redirect-scheme       307 -> https://... (another scheme)
  /redirect-other-host   307 -> http://127.0.0.2:PORT/needs-token (another origin)
  /redirect-other-port   307 -> http://127.0.0.1:PORT+1/needs-token (another origin)
  /location-other-host   201 + Location http://127.0.0.2:PORT/resource/... (another origin)
  /redirect-no-location  307 without Location
  /redirect-302          302 -> /ok (not allowed for WHIP)
  /no-trickle            session answers PATCH with 405
  /trickle               session: PATCH with the current If-Match -> 204, If-Match "*" -> ICE
                         restart (200, new ETag, sdpfrag), anything else -> 412
  /busy?times=N&retry-after=V   N (default 1, "always" for ever) 503s with Retry-After V
                         (default 1), then 201
  /not-sdp               201 with text/html
  /no-location           201 without Location
  /huge-body             201 with a 2 MiB body and Content-Length
  /endless-body          201 with a body that never ends, no Content-Length
  /error-400             400 with a two-line text body
  /ice-servers           201 with several Link headers (comma-joined lists, quoted strings)
  /many-ice-servers      201 with 20 Link headers, each a STUN server (s1 ... s20.example.net)
  /slow                  never answers
  /empty-answer          201 with an empty application/sdp body
  /not-v0                201 with a body that is not SDP
  /bad-location-scheme   201 with Location ftp://...
  /shouting              201 with upper-case and odd-case header names
  /delete-fails          its session answers DELETE with 500
Sessions live under /resource/... or .../sessions/...; DELETE on them answers 200.

GET /_log returns every other request received, as JSON: host (the address it arrived on),
method, path, headers, body.
"""

import json
import sys
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import parse_qs, urlsplit

TOKEN = "s3cret"

ANSWER = (
    "v=0\r\n"
    "o=- 4215775240449105457 2 IN IP4 127.0.0.1\r\n"
    "s=-\r\n"
    "t=0 0\r\n"
    "a=group:BUNDLE 0\r\n"
    "a=ice-lite\r\n"
    "m=video 9 UDP/TLS/RTP/SAVPF 96\r\n"
    "c=IN IP4 0.0.0.0\r\n"
    "a=mid:0\r\n"
    "a=recvonly\r\n"
    "a=ice-ufrag:srv1\r\n"
    "a=ice-pwd:serverpassword0123456789\r\n"
    "a=fingerprint:sha-256 00:11:22:33:44:55:66:77:88:99:AA:BB:CC:DD:EE:FF:00:11:22:33:44:55:66:77:88:99:AA:BB:CC:DD:EE:FF\r\n"
    "a=setup:passive\r\n"
    "a=rtpmap:96 H264/90000\r\n"
    "a=candidate:1 1 udp 2130706431 127.0.0.1 40000 typ host\r\n"
    "a=end-of-candidates\r\n"
)

RESTART_FRAG = (
    "a=ice-lite\r\n"
    "a=ice-ufrag:srv2\r\n"
    "a=ice-pwd:restartedpassword0123456789\r\n"
    "m=video 9 UDP/TLS/RTP/SAVPF 96\r\n"
    "a=mid:0\r\n"
    "a=candidate:2 1 udp 2130706431 127.0.0.1 40002 typ host\r\n"
    "a=end-of-candidates\r\n"
)

LINKS = [
    '<stun:stun.example.net>; rel="ice-server"',
    '<turn:turn.example.net?transport=udp>; rel="ice-server"; username="user"; '
    'credential="pa;ss,word"; credential-type="password", '
    '<turns:turn.example.net:5349?transport=tcp>; rel="ice-server"; username="user2"; credential="p2"',
    '</docs>; rel="help", <stun:[::1]:3479>; rel=ice-server',
]


class State:
    lock = threading.Lock()
    log = []
    busy_count = {}
    etags = {}
    counter = 0


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server_version = "whip-test-server"

    def log_message(self, fmt, *args):  # keep stderr quiet
        pass

    # -- plumbing ---------------------------------------------------------------------------

    def read_body(self):
        if self.headers.get("Transfer-Encoding", "").lower() == "chunked":
            data = b""
            while True:
                size = int(self.rfile.readline().strip().split(b";")[0], 16)
                if size == 0:
                    self.rfile.readline()
                    return data
                data += self.rfile.read(size)
                self.rfile.readline()
        length = int(self.headers.get("Content-Length", "0") or "0")
        return self.rfile.read(length) if length else b""

    def record(self, body):
        with State.lock:
            State.log.append({
                "host": self.server.server_address[0],
                "method": self.command,
                "path": self.path,
                "headers": [[k, v] for k, v in self.headers.items()],
                "body": body.decode("utf-8", "replace"),
            })

    def reply(self, status, body=b"", headers=(), content_type=None):
        if isinstance(body, str):
            body = body.encode()
        self.send_response(status)
        if content_type:
            self.send_header("Content-Type", content_type)
        for name, value in headers:
            self.send_header(name, value)
        if status != 204:
            self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        if body and status != 204:
            self.wfile.write(body)

    def base(self):
        return "http://127.0.0.1:%d" % self.server.server_address[1]

    def has_token(self):
        return self.headers.get("Authorization") == "Bearer " + TOKEN

    def created(self, location, etag=None, extra=(), content_type="application/sdp", body=ANSWER):
        headers = []
        if location is not None:
            headers.append(("Location", location))
        if etag:
            headers.append(("ETag", etag))
        headers.extend(extra)
        self.reply(201, body, headers, content_type)

    def new_session(self, kind):
        with State.lock:
            State.counter += 1
            return "/resource/%s/%d" % (kind, State.counter)

    # -- methods ----------------------------------------------------------------------------

    def do_GET(self):
        if self.path == "/_log":
            with State.lock:
                data = json.dumps(State.log).encode()
            self.reply(200, data, content_type="application/json")
            return
        self.record(b"")
        self.reply(404, "not found\n", content_type="text/plain")

    def do_POST(self):
        body = self.read_body()
        self.record(body)
        url = urlsplit(self.path)
        path, query = url.path, parse_qs(url.query)
        offer = body.decode("utf-8", "replace")
        if path != "/slow" and not offer.startswith("v=0"):
            self.reply(400, "the offer is not SDP\n", content_type="text/plain")
            return

        if path == "/ok":
            session = self.new_session("ok")
            self.created(self.base() + session, etag='"ok-1"')
        elif path == "/app/relative-location":
            self.created("sessions/7?x=1", etag='"rel-1"')
        elif path == "/needs-token":
            if not self.has_token():
                self.reply(401, "missing or wrong bearer token\n", [("WWW-Authenticate", "Bearer")], "text/plain")
                return
            self.created(self.new_session("needs-token"), etag='"tok-1"')
        elif path == "/redirect-307":
            self.reply(307, headers=[("Location", "/needs-token")])
        elif path == "/redirect-308":
            self.reply(308, headers=[("Location", self.base() + "/needs-token")])
        elif path == "/redirect-chain":
            left = int(query.get("left", ["0"])[0])
            if left <= 0:
                self.created(self.new_session("chain"))
            else:
                self.reply(307, headers=[("Location", "/redirect-chain?left=%d" % (left - 1))])
        elif path == "/redirect-loop":
            self.reply(307, headers=[("Location", "/redirect-loop-b")])
        elif path == "/redirect-loop-b":
            self.reply(307, headers=[("Location", "/redirect-loop")])
        elif path == "/redirect-scheme":
            self.reply(307, headers=[("Location", "https://127.0.0.1:%d/ok" % self.server.server_address[1])])
        elif path == "/redirect-other-host":
            self.reply(307, headers=[("Location", "http://127.0.0.2:%d/needs-token" % self.server.server_address[1])])
        elif path == "/redirect-other-port":
            self.reply(307, headers=[("Location", "http://127.0.0.1:%d/needs-token"
                                      % (self.server.server_address[1] + 1))])
        elif path == "/location-other-host":
            session = self.new_session("other-host")
            self.created("http://127.0.0.2:%d%s" % (self.server.server_address[1], session), etag='"oh-1"')
        elif path == "/redirect-no-location":
            self.reply(307)
        elif path == "/redirect-302":
            self.reply(302, headers=[("Location", "/ok")])
        elif path == "/no-trickle":
            self.created(self.new_session("no-trickle"), etag='"nt-1"')
        elif path == "/trickle":
            session = self.new_session("trickle")
            with State.lock:
                State.etags[session] = '"t-1"'
            self.created(session, etag='"t-1"', extra=[("Accept-Patch", "application/trickle-ice-sdpfrag")])
        elif path == "/busy":
            times = query.get("times", ["1"])[0]
            retry_after = query.get("retry-after", ["1"])[0]
            with State.lock:
                seen = State.busy_count.get(self.path, 0)
                State.busy_count[self.path] = seen + 1
            if times == "always" or seen < int(times):
                self.reply(503, "busy, come back later\n", [("Retry-After", retry_after)], "text/plain")
            else:
                self.created(self.new_session("busy"))
        elif path == "/not-sdp":
            self.created(self.new_session("x"), content_type="text/html", body="<html><body>hi</body></html>")
        elif path == "/no-location":
            self.created(None)
        elif path == "/huge-body":
            self.created(self.new_session("x"), body="v=0\r\n" + "a=x\r\n" * (2 * 1024 * 1024 // 5))
        elif path == "/endless-body":
            self.send_response(201)
            self.send_header("Content-Type", "application/sdp")
            self.send_header("Location", self.new_session("x"))
            self.send_header("Connection", "close")
            self.end_headers()
            self.close_connection = True
            try:
                self.wfile.write(b"v=0\r\n")
                chunk = b"a=endless\r\n" * 4096
                while True:
                    self.wfile.write(chunk)
            except (BrokenPipeError, ConnectionResetError):
                pass
        elif path == "/error-400":
            self.reply(400, "bad offer: no H.264 in the offer\nsecond line\n", content_type="text/plain")
        elif path == "/ice-servers":
            self.created(self.new_session("ice"), extra=[("Link", v) for v in LINKS])
        elif path == "/many-ice-servers":
            links = [("Link", '<stun:s%d.example.net>; rel="ice-server"' % n) for n in range(1, 21)]
            self.created(self.new_session("ice"), extra=links)
        elif path == "/slow":
            time.sleep(120)
        elif path == "/empty-answer":
            self.created(self.new_session("x"), body="")
        elif path == "/not-v0":
            self.created(self.new_session("x"), body="hello\r\n")
        elif path == "/bad-location-scheme":
            self.created("ftp://127.0.0.1/x")
        elif path == "/shouting":
            session = self.new_session("shouting")
            self.send_response(201)
            self.send_header("CONTENT-TYPE", "Application/SDP; charset=utf-8")
            self.send_header("LOCATION", session)
            self.send_header("eTaG", '"loud-1"')
            self.send_header("LINK", '<stun:loud.example.net:3478>; REL="ICE-SERVER"')
            self.send_header("content-length", str(len(ANSWER.encode())))
            self.end_headers()
            self.wfile.write(ANSWER.encode())
        elif path == "/delete-fails":
            self.created("/resource/delete-fails/1")
        else:
            self.reply(404, "no such endpoint\n", content_type="text/plain")

    def do_PATCH(self):
        body = self.read_body()
        self.record(body)
        path = urlsplit(self.path).path
        if "/needs-token/" in path and not self.has_token():
            self.reply(401, "missing or wrong bearer token\n", content_type="text/plain")
        elif path.startswith("/resource/trickle/"):
            if self.headers.get("Content-Type") != "application/trickle-ice-sdpfrag":
                self.reply(415, "expected application/trickle-ice-sdpfrag\n", content_type="text/plain")
                return
            match = self.headers.get("If-Match")
            with State.lock:
                current = State.etags.get(path)
            if match == "*":
                with State.lock:
                    State.etags[path] = '"t-2"'
                self.reply(200, RESTART_FRAG, [("ETag", '"t-2"')], "application/trickle-ice-sdpfrag")
            elif match is not None and match == current:
                self.reply(204)
            else:
                self.reply(412, "If-Match does not match %s\n" % current, content_type="text/plain")
        elif path.startswith("/resource/") or "/sessions/" in path:
            self.reply(405, "no trickle here\n", [("Allow", "DELETE")], "text/plain")
        else:
            self.reply(404, "no such session\n", content_type="text/plain")

    def do_DELETE(self):
        self.record(b"")
        path = urlsplit(self.path).path
        if "/needs-token/" in path and not self.has_token():
            self.reply(401, "missing or wrong bearer token\n", content_type="text/plain")
        elif path.startswith("/resource/delete-fails/"):
            self.reply(500, "could not delete\n", content_type="text/plain")
        elif path.startswith("/resource/") or "/sessions/" in path:
            self.reply(200)
        else:
            self.reply(404, "no such session\n", content_type="text/plain")


def listen():
    """A server on 127.0.0.1 with a free port, and one on 127.0.0.2 with the same port."""
    for _ in range(20):
        first = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        try:
            second = ThreadingHTTPServer(("127.0.0.2", first.server_address[1]), Handler)
        except OSError:
            first.server_close()
            continue
        return first, second
    raise SystemExit("no port free on both 127.0.0.1 and 127.0.0.2")


def main():
    servers = listen()
    for server in servers:
        server.daemon_threads = True
        threading.Thread(target=server.serve_forever, daemon=True).start()
    sys.stdout.write("PORT %d\n" % servers[0].server_address[1])
    sys.stdout.flush()
    # Runs until the test closes our standard input (or dies).
    while sys.stdin.buffer.read(4096):
        pass


if __name__ == "__main__":
    main()
