#!/usr/bin/env python3
"""The page a browser watches a Janus VideoRoom with: janus_viewer.html subscribes, through
Debian's janus.js, to the first publisher of a room and posts its getStats() figures back here
once a second.

    python3 scripts/peers/janus_viewer.py --port 8091 --stats /tmp/viewer.json
    chromium … 'http://127.0.0.1:8091/janus_viewer.html?janus=ws://127.0.0.1:8188&room=1234&pin=x'

Python's standard library only. Serves the page, /janus.js (libjs-janus-gateway) and /adapter.js
(libjs-webrtc-adapter, the `adapter` global janus.js reads) from their Debian packages, nothing
from the Internet; POST /stats rewrites the stats file with what the page sent.
"""
import argparse
import json
import os
import sys
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

HERE = os.path.dirname(os.path.abspath(__file__))
FILES = {
    "/janus_viewer.html": (os.path.join(HERE, "janus_viewer.html"), "text/html; charset=utf-8"),
    "/janus.js": ("/usr/share/javascript/janus-gateway/janus.js", "text/javascript"),
    "/adapter.js": ("/usr/share/javascript/webrtc-adapter/adapter.js", "text/javascript"),
}
lock = threading.Lock()


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    stats_path = ""

    def log_message(self, *args):
        pass

    def reply(self, status, body=b"", content_type="text/plain"):
        if isinstance(body, str):
            body = body.encode()
        self.send_response(status)
        self.send_header("Content-Type", content_type)
        self.send_header("Content-Length", str(len(body)))
        self.send_header("Cache-Control", "no-store")
        self.end_headers()
        self.wfile.write(body)

    def do_GET(self):
        path = self.path.split("?", 1)[0]
        path = "/janus_viewer.html" if path == "/" else path
        if path not in FILES:
            return self.reply(404, "not found")
        filename, content_type = FILES[path]
        try:
            with open(filename, "rb") as f:
                return self.reply(200, f.read(), content_type)
        except OSError as error:
            print(f"cannot serve {path}: {error}", flush=True)
            return self.reply(500, f"cannot read {filename}: {error}")

    def do_POST(self):
        if self.path != "/stats":
            return self.reply(404, "not found")
        length = int(self.headers.get("Content-Length") or 0)
        if length > 1 << 20:
            return self.reply(413, "body too large")
        try:
            report = json.loads(self.rfile.read(length))
        except ValueError:
            return self.reply(400, "not JSON")
        if self.stats_path:
            with lock:
                tmp = self.stats_path + ".tmp"
                with open(tmp, "w") as out:
                    json.dump(report, out)
                os.replace(tmp, self.stats_path)
        if report.get("error"):
            print(f"page: {report['error']}", flush=True)
        return self.reply(204)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=8091)
    parser.add_argument("--stats", default="")
    args = parser.parse_args()
    Handler.stats_path = args.stats
    server = ThreadingHTTPServer((args.host, args.port), Handler)
    server.daemon_threads = True
    print(f"Janus viewer page on http://{args.host}:{args.port}/janus_viewer.html", flush=True)
    server.serve_forever()


if __name__ == "__main__":
    sys.exit(main())
