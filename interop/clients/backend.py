#!/usr/bin/env python3
"""A backend service registered through the real py-eureka-client, for the selection tests.

It registers under --app with instance id --instance-id, zone --zone (py-eureka-client's own
``zone`` setting, which it writes to the metadata as ``zone``) and the extra --metadata (such
as ``{"version": "canary"}``), heartbeats every second, and answers on 127.0.0.1:PORT:

  GET /who -> its instance id, as text/plain

It speaks HTTP/1.1 with keep-alive, as real services do, so a caller's pooled connections are
part of what a kill exercises. The lease is --lease-secs long (30 by default): a backend killed
with SIGKILL stays registered UP that long, as after a crash, unless a test removes it.

SIGTERM / SIGINT -> eureka_client.stop() (DOWN, then DELETE), then exit 0.

usage: backend.py --server http://127.0.0.1:8761/eureka --app orders --port 9090
                  --instance-id orders-stable-1 [--zone zone-a] [--metadata '{"version": "stable"}']
"""
import argparse
import json
import signal
import sys
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import py_eureka_client.eureka_client as ec

import py_eureka_lock


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--server", required=True, help="eureka service URL, e.g. http://127.0.0.1:8761/eureka")
    ap.add_argument("--app", required=True)
    ap.add_argument("--port", type=int, required=True)
    ap.add_argument("--instance-id", required=True)
    ap.add_argument("--zone", default="")
    ap.add_argument("--metadata", default="{}")
    ap.add_argument("--lease-secs", type=int, default=30)
    args = ap.parse_args()

    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, fmt, *a):
            pass

        def do_GET(self):
            found = self.path.split("?")[0] == "/who"
            body = (args.instance_id if found else "no such endpoint").encode()
            self.send_response(200 if found else 404)
            self.send_header("Content-Type", "text/plain")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

    # Bind first: the port registered is a real endpoint from the start.
    httpd = ThreadingHTTPServer(("127.0.0.1", args.port), Handler)
    httpd.daemon_threads = True
    stopped = threading.Event()

    def on_signal(signum, frame):
        signal.signal(signal.SIGTERM, signal.SIG_IGN)   # one graceful stop is enough
        signal.signal(signal.SIGINT, signal.SIG_IGN)
        stopped.set()

    signal.signal(signal.SIGTERM, on_signal)
    signal.signal(signal.SIGINT, on_signal)

    def on_error(kind, exc):
        print(f"ON_ERROR {kind}: {type(exc).__name__}: {str(exc)[:300]}", flush=True)

    py_eureka_lock.install()   # py-eureka-client 0.13's heartbeat deadlock, see there
    ec.init(eureka_server=args.server, app_name=args.app, instance_id=args.instance_id,
            instance_host="127.0.0.1", instance_ip="127.0.0.1", instance_port=args.port,
            zone=args.zone, metadata=json.loads(args.metadata),
            renewal_interval_in_secs=1, duration_in_secs=args.lease_secs, on_error=on_error)
    threading.Thread(target=httpd.serve_forever, daemon=True).start()
    print(f"registered {args.app}/{args.instance_id} zone={args.zone!r}; serving on {args.port}", flush=True)
    while not stopped.wait(0.5):   # a timed wait, so the signal handler always gets to run
        pass
    print("signal received: stopping the eureka client (DOWN + DELETE)", flush=True)
    ec.stop()
    httpd.shutdown()
    return 0


if __name__ == "__main__":
    sys.exit(main())
