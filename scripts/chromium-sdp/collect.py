#!/usr/bin/env python3
"""Serves page.html on 127.0.0.1 and saves what the page POSTs.

POST /save/NAME  writes the request body to OUTDIR/NAME (NAME: letters, digits, '-', '.')
POST /log        prints the body (the page's progress and errors)
POST /done       ends the server; the exit status is 0 if the body is "ok", else 1

Standard library only. Usage: collect.py PORT OUTDIR
"""
import http.server
import os
import re
import sys
import threading

HERE = os.path.dirname(os.path.abspath(__file__))
PORT = int(sys.argv[1])
OUTDIR = sys.argv[2]
NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9.-]*$")
result = {"status": 1}


class Handler(http.server.BaseHTTPRequestHandler):
    def log_message(self, fmt, *args):  # keep the output to what the page says
        pass

    def reply(self, code, body=b"", kind="text/plain"):
        self.send_response(code)
        self.send_header("Content-Type", kind)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def do_GET(self):
        if self.path in ("/", "/page.html"):
            with open(os.path.join(HERE, "page.html"), "rb") as f:
                self.reply(200, f.read(), "text/html; charset=utf-8")
        else:
            self.reply(404)

    def do_POST(self):
        length = int(self.headers.get("Content-Length", "0"))
        body = self.rfile.read(length)
        if self.path.startswith("/save/"):
            name = self.path[len("/save/"):]
            if not NAME.match(name):
                self.reply(400, b"bad name")
                return
            with open(os.path.join(OUTDIR, name), "wb") as f:
                f.write(body)
            print(f"saved {name} ({len(body)} bytes)", flush=True)
            self.reply(200)
        elif self.path == "/log":
            print("page:", body.decode("utf-8", "replace"), flush=True)
            self.reply(200)
        elif self.path == "/done":
            result["status"] = 0 if body == b"ok" else 1
            self.reply(200)
            threading.Thread(target=self.server.shutdown).start()
        else:
            self.reply(404)


server = http.server.ThreadingHTTPServer(("127.0.0.1", PORT), Handler)
server.serve_forever()
sys.exit(result["status"])
