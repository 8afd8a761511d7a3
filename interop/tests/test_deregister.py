"""Stopping a client (SIGTERM) removes its instance from the registry.

Eviction is pushed out to 10 minutes in this module (and the clients' leases are short), so an
instance that disappears within the deadline was removed by the client's own DELETE on
shutdown, not by eviction.
"""
from __future__ import annotations

import pytest

from support import procs
from support.procs import wait_until

DEADLINE = 40.0
NO_EVICTION = {"eureka.server.eviction-interval-timer-in-ms": "600000"}


@pytest.fixture(scope="module")
def registry(server_factory, server_kind):
    return server_factory(server_kind, settings=NO_EVICTION)


@pytest.fixture(scope="module")
def clients(registry, client_factory):
    spring = client_factory("spring", "spring-bye", registry, start=False)
    python = client_factory("python", "py-bye", registry, start=False)
    js = client_factory("js", "js-bye", registry, start=False)
    procs.start_all([spring, python, js])
    return {"spring": spring, "python": python, "js": js}


def is_listed(registry, client):
    return any(i.get("instanceId") == client.instance_id for i in registry.find_instances(client.registry_app))


@pytest.mark.parametrize("kind", ["spring", "python", "js"])
def test_client_deregisters_on_sigterm(registry, clients, kind):
    c = clients[kind]
    wait_until(f"{kind} client registered", lambda: is_listed(registry, c), DEADLINE,
               logs=[c.proc, registry.proc])
    rc = c.stop(timeout=30)     # SIGTERM: graceful shutdown
    # Spring/JVM exits with 143 on SIGTERM; the Python and JS drivers exit 0 after stopping
    assert rc in (0, 143, -15), f"{kind} client exited with {rc}\n{c.proc.describe_log()}"
    wait_until(f"{kind} instance {c.instance_id} gone from GET /eureka/apps",
               lambda: not is_listed(registry, c), DEADLINE, logs=[c.proc, registry.proc])
    assert registry.get_instance(c.registry_app, c.instance_id) is None, \
        "GET /eureka/apps/{app}/{id} still finds the instance after its DELETE"
