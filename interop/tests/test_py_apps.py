"""The suite's own Python apps (clients/py_client.py, clients/backend.py) keep their instance alive.

Both run the real py-eureka-client 0.13, whose heartbeat thread deadlocks itself when a round's
registration fails and the same round's fetch then reaches a server and needs a full fetch (a
server restart that completes between the two; see clients/py_eureka_lock.py for the other way in). They work around it (clients/py_eureka_lock.py);
without that, a restart test lost the Python instance for good now and then (issue 18, item 8).

The scripted registry here refuses every registration (503) and answers every read with an empty
registry, so each heartbeat round of the app is that round: the app must go on sending
registrations. No Eureka server is needed.
"""
from __future__ import annotations

import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

from support import procs
from support.backend import Backend
from support.procs import HOST, wait_until

DEADLINE = 15.0
EMPTY_REGISTRY = (b"<applications><versions__delta>1</versions__delta>"
                  b"<apps__hashcode></apps__hashcode></applications>")


class RefusingRegistry:
    """A registry on a free port that answers 503 to registrations and an empty registry to reads."""

    def __init__(self):
        self.registrations = 0
        self.reads = 0
        lock = threading.Lock()
        outer = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, fmt, *a):
                pass

            def reply(self, code, body=b""):
                self.send_response(code)
                self.send_header("Content-Type", "application/xml")
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def do_GET(self):
                with lock:
                    outer.reads += 1
                self.reply(200, EMPTY_REGISTRY)

            def do_POST(self):
                self.rfile.read(int(self.headers.get("Content-Length") or 0))
                with lock:
                    outer.registrations += 1
                self.reply(503)

            def do_PUT(self):       # a heartbeat: the instance is unknown
                self.reply(404)

            def do_DELETE(self):
                self.reply(200)

        self.httpd = ThreadingHTTPServer((HOST, 0), Handler)
        self.httpd.daemon_threads = True
        self.port = self.httpd.server_address[1]
        threading.Thread(target=self.httpd.serve_forever, daemon=True).start()

    @property
    def base_url(self) -> str:
        return f"http://{HOST}:{self.port}/eureka"

    def close(self) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()


@pytest.fixture
def refusing_registry():
    registry = RefusingRegistry()
    yield registry
    registry.close()


@pytest.mark.parametrize("kind", ["py_client", "backend"])
def test_the_app_keeps_registering_after_a_refused_registration_and_a_successful_fetch(
        kind, refusing_registry, tracker, log_dir):
    if kind == "py_client":
        app = procs.PythonClient("py-refused", refusing_registry, log_dir)
    else:
        app = Backend("backend-refused", "backend-refused-1", refusing_registry, log_dir)
    tracker.add(app).start()
    # start-up registers and fetches once; each heartbeat round (every second) registers again,
    # then fetches: the deadlocked first round never sends its fetch, nor anything after it
    wait_until(f"{app.proc.name} fetches after a refused registration, and goes on registering",
               lambda: refusing_registry.reads >= 2 and refusing_registry.registrations >= 3,
               DEADLINE, logs=[app.proc])
    app.stop()
