"""Self-test of the fault-injecting proxy the cluster tests cut links with (support/proxy.py).

A tiny HTTP server stands in for a registry; requests go through the proxy with the suite's
raw HTTP client. No registry, no JVM: this runs in well under a second.
"""
from __future__ import annotations

import http.server
import socket
import threading

import pytest

from support import wire
from support.proxy import FaultProxy

pytestmark = pytest.mark.no_process_logs


class _Hello(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def do_GET(self):  # noqa: N802 - http.server's naming
        body = f"hello {self.path}".encode()
        self.send_response(200)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args):
        pass


@pytest.fixture
def target():
    srv = http.server.ThreadingHTTPServer(("127.0.0.1", 0), _Hello)
    t = threading.Thread(target=srv.serve_forever, daemon=True)
    t.start()
    yield srv.server_address[1]
    srv.shutdown()
    srv.server_close()


@pytest.fixture
def proxy(target):
    p = FaultProxy(target, "test-proxy").start()
    yield p
    p.close()


def get(proxy: FaultProxy, path: str = "/x", timeout: float = 5.0) -> wire.Response:
    return wire.get(f"http://127.0.0.1:{proxy.port}{path}", timeout=timeout)


def test_pass_through_forwards_requests_and_answers(proxy):
    r = get(proxy, "/eureka/apps/")
    assert (r.status, r.text) == (200, "hello /eureka/apps/")


def test_partition_resets_new_connections(proxy):
    proxy.partition()
    with pytest.raises((ConnectionError, OSError)) as exc:
        get(proxy)
    assert not isinstance(exc.value, socket.timeout), "a partition must fail fast, not hang"


def test_partition_resets_open_connections(proxy):
    conn = socket.create_connection(("127.0.0.1", proxy.port), timeout=5)
    try:
        conn.sendall(b"GET /a HTTP/1.1\r\nHost: x\r\n\r\n")
        assert conn.recv(4096).startswith(b"HTTP/1.1 200")
        proxy.partition()
        conn.settimeout(5)
        with pytest.raises(ConnectionResetError):
            conn.sendall(b"GET /b HTTP/1.1\r\nHost: x\r\n\r\n")
            if not conn.recv(4096):
                raise ConnectionResetError("closed")
    finally:
        conn.close()


def test_black_hole_accepts_and_never_answers(proxy):
    proxy.black_hole()
    with pytest.raises(socket.timeout):
        get(proxy, timeout=0.5)
    assert proxy.stats.blackholed >= 1


def test_heal_after_partition_and_black_hole_forwards_again(proxy):
    proxy.partition()
    proxy.black_hole()
    proxy.pass_through()
    assert get(proxy).status == 200


def test_connections_beyond_the_limit_are_reset(target):
    p = FaultProxy(target, "small", max_connections=2).start()
    held = []
    try:
        p.black_hole()
        for _ in range(2):
            held.append(socket.create_connection(("127.0.0.1", p.port), timeout=5))
        extra = socket.create_connection(("127.0.0.1", p.port), timeout=5)
        held.append(extra)
        extra.settimeout(5)
        with pytest.raises((ConnectionResetError, BrokenPipeError)):
            extra.sendall(b"x" * 100000)
            if not extra.recv(1):
                raise ConnectionResetError("closed")
    finally:
        for s in held:
            s.close()
        p.close()
