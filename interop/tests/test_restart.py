"""Clients survive a registry restart.

The registry is killed (SIGKILL, like a crash) and a fresh, empty one is started on the same
port. Each client's next heartbeat gets 404, and the client re-registers on its own.
"""
from __future__ import annotations

import pytest

from support import procs
from support.procs import wait_until

DEADLINE = 45.0


@pytest.fixture(scope="module")
def clients(registry, client_factory):
    spring = client_factory("spring", "spring-restart", registry, start=False)
    python = client_factory("python", "py-restart", registry, metadata={"lang": "python"}, start=False)
    js = client_factory("js", "js-restart", registry, metadata={"lang": "js"}, start=False)
    procs.start_all([spring, python, js])
    return {"spring": spring, "python": python, "js": js}


def is_registered(registry, client):
    return any(i.get("instanceId") == client.instance_id and i.get("status") == "UP"
               for i in registry.find_instances(client.registry_app))


@pytest.fixture(scope="module")
def restarted(registry, clients):
    """All three registered, then the registry is replaced by a fresh empty one (same port)."""
    for c in clients.values():
        wait_until(f"{c.kind} client registered before the restart", lambda c=c: is_registered(registry, c),
                   DEADLINE, logs=[c.proc, registry.proc])
    registry.restart_fresh()
    return registry


@pytest.mark.parametrize("kind", ["spring", "python", "js"])
def test_client_reregisters_after_registry_restart(restarted, clients, kind):
    c = clients[kind]
    wait_until(f"{kind} client {c.registry_app}/{c.instance_id} re-registered with the restarted registry",
               lambda: is_registered(restarted, c), DEADLINE, logs=[c.proc, restarted.proc])
    inst = restarted.get_instance(c.registry_app, c.instance_id)
    assert inst is not None and inst["status"] == "UP"
    assert inst["port"]["$"] == c.port
    assert inst["metadata"] == c.expected_metadata
    c.proc.assert_alive()


def test_discovery_works_again_after_registry_restart(restarted, clients):
    spring, python, js = clients["spring"], clients["python"], clients["js"]
    wait_until("Spring DiscoveryClient sees the Python instance again after the restart",
               lambda: [i["instanceId"] for i in spring.instances_of(python.vip)] == [python.instance_id],
               DEADLINE, logs=[spring.proc, python.proc, restarted.proc])
    wait_until("eureka-js-client sees the Spring instance again after the restart",
               lambda: spring.instance_id in [i.get("instanceId") for i in js.lookup(spring.registry_app)],
               DEADLINE, logs=[js.proc, spring.proc, restarted.proc])
    wait_until("py-eureka-client sees the JS instance again after the restart",
               lambda: js.instance_id in [i["instanceId"] for i in python.lookup(js.registry_app)],
               DEADLINE, logs=[python.proc, js.proc, restarted.proc])
