#!/usr/bin/env python3
"""A tiny web application with no Eureka client of its own, for `heureka sidecar` to front.

  GET /        -> 200 "hello from pyapp on PORT"
  GET /health  -> 200 {"status": "UP"}, or 503 {"status": "DOWN"} while the file named by
                  --unhealthy-file exists (default: ./unhealthy), so `touch unhealthy` makes
                  it fail and `rm unhealthy` makes it recover.

usage: app.py [--port 8000] [--unhealthy-file PATH]
"""
import argparse
import json
import os
import signal
import sys
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer


class App(BaseHTTPRequestHandler):
    unhealthy_file = "unhealthy"

    def do_GET(self):
        if self.path == "/health":
            healthy = not os.path.exists(self.unhealthy_file)
            body = json.dumps({"status": "UP" if healthy else "DOWN"})
            self.answer(200 if healthy else 503, "application/json", body)
        elif self.path == "/":
            self.answer(200, "text/plain", f"hello from pyapp on {self.server.server_port}\n")
        else:
            self.answer(404, "text/plain", "not found\n")

    def answer(self, status, content_type, body):
        data = body.encode()
        self.send_response(status)
        self.send_header("Content-Type", content_type)
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def log_message(self, fmt, *args):
        # one line per request on stderr, as http.server does, but without the client address
        sys.stderr.write(f"app: {fmt % args}\n")


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--port", type=int, default=8000)
    parser.add_argument("--bind", default="127.0.0.1")
    parser.add_argument("--unhealthy-file", default="unhealthy")
    args = parser.parse_args()
    App.unhealthy_file = args.unhealthy_file
    server = ThreadingHTTPServer((args.bind, args.port), App)
    # SIGTERM ends the app as Ctrl-C does
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(0))
    print(f"app: serving on http://{args.bind}:{args.port}/ (health: /health)", file=sys.stderr, flush=True)
    try:
        server.serve_forever()
    except KeyboardInterrupt:
        pass


if __name__ == "__main__":
    main()
