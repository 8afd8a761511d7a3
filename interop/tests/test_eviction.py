"""A client that dies without deregistering is evicted once its lease expires.

py-eureka-client is killed with SIGKILL (no DOWN, no DELETE). Its lease (3 s, renewed every
1 s) expires and the eviction task (every 1 s here, self-preservation off) removes it. A
second Python client must see it disappear from its registry copy too.
"""
from __future__ import annotations

import pytest

from support import procs
from support.procs import wait_until

DEADLINE = 60.0


@pytest.fixture(scope="module")
def clients(registry, client_factory):
    victim = client_factory("python", "py-victim", registry, start=False)
    watcher = client_factory("python", "py-watcher", registry, start=False)
    procs.start_all([victim, watcher])
    return victim, watcher


def test_killed_client_is_evicted_after_its_lease_expires(registry, clients):
    victim, watcher = clients
    logs = [victim.proc, watcher.proc, registry.proc]
    wait_until("watcher sees the victim", lambda: victim.instance_id in
               [i["instanceId"] for i in watcher.lookup(victim.registry_app)], DEADLINE, logs=logs)
    victim.kill()       # SIGKILL: no deregistration
    wait_until(f"{victim.instance_id} evicted from GET /eureka/apps",
               lambda: not registry.find_instances(victim.registry_app), DEADLINE, logs=logs)
    wait_until("the watcher's registry copy drops the evicted instance",
               lambda: victim.instance_id not in [i["instanceId"] for i in watcher.lookup(victim.registry_app)],
               DEADLINE, logs=logs)
