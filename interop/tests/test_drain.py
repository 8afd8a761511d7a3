"""`heureka drain` against real consumers: two Spring Boot apps (spring-cloud-starter-netflix-
eureka-client) and a py-eureka-client app fetching from a Heureka node.

Each consumer reaches the node through a small proxy of its own that connects from its own
loopback address (127.0.0.2, .3, .4), so that the node tells them apart as it tells apart
consumers on different hosts (two clients on one host that send the same User-Agent are one
consumer, docs/deploy.md). The Spring consumers fetch every 2 s, py-eureka-client every second.
"""
from __future__ import annotations

import socket
import subprocess
import threading
from types import SimpleNamespace

import pytest

from support import cluster as cl
from support import procs, wire
from support.cluster import new_instance

DEADLINE = 120.0        # three consumers starting on two cores, two of them JVMs



class SourceProxy:
    """Listens on 127.0.0.1 and forwards each connection to `target_port`, connecting from
    `source` (another loopback address)."""

    def __init__(self, target_port: int, source: str):
        self.target_port, self.source = target_port, source
        self.listener = socket.create_server((procs.HOST, 0))
        self.port = self.listener.getsockname()[1]
        threading.Thread(target=self._accept, daemon=True).start()

    def _accept(self):
        while True:
            try:
                client, _ = self.listener.accept()
            except OSError:
                return
            try:
                upstream = socket.create_connection((procs.HOST, self.target_port), timeout=10,
                                                    source_address=(self.source, 0))
            except OSError:
                client.close()
                continue
            for a, b in ((client, upstream), (upstream, client)):
                threading.Thread(target=self._pipe, args=(a, b), daemon=True).start()

    @staticmethod
    def _pipe(src, dst):
        try:
            while data := src.recv(65536):
                dst.sendall(data)
        except OSError:
            pass
        finally:
            for s in (src, dst):
                try:
                    s.shutdown(socket.SHUT_RDWR)
                except OSError:
                    pass

    def close(self):
        self.listener.close()


def via(proxy: SourceProxy):
    """What a client is given as its server: the proxy's URLs."""
    base = f"http://{procs.HOST}:{proxy.port}/eureka"
    return SimpleNamespace(base_url=base, service_url=base + "/")


@pytest.fixture(scope="module")
def setup(cluster_factory, client_factory):
    # The suite's own start-up reads of /apps are a minute old by the first drain: not active.
    node = cluster_factory(["heureka"], label="drain",
                           extra={"heureka.consumers.active-within": "30s"})[0]
    proxies = {name: SourceProxy(node.port, source)
               for name, source in (("spring-a", "127.0.0.2"), ("spring-b", "127.0.0.3"), ("py", "127.0.0.4"))}
    fast = {"eureka.client.registry-fetch-interval-seconds": "2"}
    consumers = {
        "spring-a": client_factory("spring", "drain-spring-a", via(proxies["spring-a"]), settings=fast),
        "spring-b": client_factory("spring", "drain-spring-b", via(proxies["spring-b"]), settings=fast),
        "py": client_factory("python", "drain-py", via(proxies["py"])),
    }
    listed = lambda: {c["address"] for c in consumers_of(node)} >= {"127.0.0.2", "127.0.0.3", "127.0.0.4"}
    procs.wait_until("the three consumers are listed", listed, DEADLINE, interval=0.5)
    yield SimpleNamespace(node=node, consumers=consumers)
    for proxy in proxies.values():
        proxy.close()


def consumers_of(node) -> list[dict]:
    r = wire.get(node.url("/consumers"), accept="application/json")
    assert r.status == 200, r.text
    return r.json()["consumers"]


def drain(node, inst, *args: str) -> subprocess.CompletedProcess:
    return subprocess.run([str(procs.HeurekaServer.binary()), "drain", inst.app, inst.instance_id,
                           *args, "--eureka", node.service_url],
                          capture_output=True, text=True, timeout=DEADLINE)


def status_of(node, inst) -> str:
    """The instance's status, read without fetching the registry (which would make this
    suite a consumer)."""
    r = wire.get(node.url(f"/apps/{inst.app}/{wire.quote(inst.instance_id)}"), accept="application/json")
    assert r.status == 200, r.text
    return r.json()["instance"]["status"]


def lines_of(out: str, address: str) -> list[str]:
    return [line for line in out.splitlines() if address in line]


def test_drain_confirms_once_two_spring_consumers_and_a_py_consumer_fetched_the_change(setup):
    inst = new_instance("drain-target")
    cl.register(setup.node, inst)

    done = drain(setup.node, inst, "--timeout", "60")

    assert done.returncode == 0, f"{done.stdout}\n{done.stderr}"
    for address in ("127.0.0.2", "127.0.0.3", "127.0.0.4"):
        line = lines_of(done.stdout, address)
        assert line and line[0].startswith("confirmed"), done.stdout
    assert status_of(setup.node, inst) == "OUT_OF_SERVICE"


def test_drain_reports_a_consumer_that_stopped_fetching_and_exits_5_at_its_timeout(setup):
    inst = new_instance("drain-stuck")
    cl.register(setup.node, inst)
    setup.consumers["spring-b"].proc.kill()      # it stopped fetching; still active within 90 s

    done = drain(setup.node, inst, "--timeout", "8", "--deregister")

    assert done.returncode == 5, f"{done.stdout}\n{done.stderr}"
    stopped = lines_of(done.stdout, "127.0.0.3")
    assert stopped and stopped[0].startswith("NOT CONFIRMED"), done.stdout
    for address in ("127.0.0.2", "127.0.0.4"):
        assert lines_of(done.stdout, address)[0].startswith("confirmed"), done.stdout
    assert "not deregistered" in done.stderr
    assert status_of(setup.node, inst) == "OUT_OF_SERVICE"
