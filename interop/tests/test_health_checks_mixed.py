"""Health-check verdicts in a mixed cluster: a Heureka node with health checks on beside the
real Spring Cloud Eureka server, peers of each other.

The Java server knows no verdicts: Heureka sends it the instance re-registered with the status
it reads (DOWN, or back), as docs/compat.md (row 43) says. Its own clients must then see what
Heureka's see. The instance is a small HTTP server in this test, answering its health URL.
"""
from __future__ import annotations

import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

from support import cluster as cl
from support.cluster import new_instance, view, wait_on_all

DEADLINE = 60.0



class HealthEndpoint:
    """Answers GET /health with 200 while healthy, 503 otherwise, on the instance's port."""

    def __init__(self, port: int):
        endpoint = self
        self.healthy = True

        class Handler(BaseHTTPRequestHandler):
            def do_GET(self):  # noqa: N802 (http.server's name)
                self.send_response(200 if endpoint.healthy else 503)
                self.send_header("Content-Length", "0")
                self.end_headers()

            def log_message(self, *args):
                pass

        self.server = ThreadingHTTPServer((cl.HOST, port), Handler)
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def close(self):
        self.server.shutdown()
        self.server.server_close()


@pytest.fixture(scope="module")
def mixed(cluster_factory):
    checks = {"heureka.health-checks.enabled": "true", "heureka.health-checks.interval": "500ms",
              "heureka.health-checks.jitter": "0"}
    return cluster_factory(["java", "heureka"], node_extra={1: checks}, label="java+checks")


def status_on(inst):
    return lambda node: view(node).instances.get(inst.key, ("",))[0]


@pytest.mark.parametrize("registered_at", ["java", "heureka"])
def test_a_failing_instance_reads_down_on_the_java_peer_and_comes_back(mixed, registered_at):
    java, heureka = mixed.nodes
    inst = new_instance(f"hc-mixed-{registered_at}")
    endpoint = HealthEndpoint(inst.port)
    try:
        cl.register(java if registered_at == "java" else heureka, inst)
        wait_on_all(mixed.nodes, f"{inst.instance_id} UP", lambda n: status_on(inst)(n) == "UP", DEADLINE)

        endpoint.healthy = False
        wait_on_all(mixed.nodes, f"{inst.instance_id} DOWN", lambda n: status_on(inst)(n) == "DOWN", DEADLINE)

        endpoint.healthy = True
        wait_on_all(mixed.nodes, f"{inst.instance_id} UP again", lambda n: status_on(inst)(n) == "UP", DEADLINE)
    finally:
        endpoint.close()
