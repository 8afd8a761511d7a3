"""The Rust client (crates/heureka-client) against Heureka and against the real Java server.

Every test runs once per server kind, whatever ``--server`` says: the Rust client must work with
both. Per kind the module shares one registry with a Spring Boot client app and a
py-eureka-client app (both heartbeating and fetching every second), one Rust client for the
tests that only look, and a second, standalone registry of the same kind for the failover test.
The Rust client runs as its interop driver (support/rust_client.py), heartbeating and
refreshing every second, and reports each refresh of its local copy on stdout.

The tests run in file order per kind; the restart test empties the shared registry, so it runs
after the tests that read it, and the deregistration test shuts the shared Rust client down last.
"""
from __future__ import annotations

from dataclasses import dataclass

import pytest

from support import procs, wire
from support.procs import wait_until
from support.rust_client import RustClient, driver_binary

DEADLINE = 45.0     # generous bound for a few client cycles on a busy 2-core machine
SERVER_KINDS = ["heureka", "java"]


@dataclass
class World:
    kind: str
    registry: procs.RegistryServer
    spare: procs.RegistryServer          # a second standalone registry, for failover
    spring: procs.SpringClient
    python: procs.PythonClient
    rust: RustClient


def _server(kind, log_dir, name):
    settings = {}
    if kind == "java":
        # let a cached /apps/delta payload lag by at most a second (the default is 180 s)
        settings["eureka.server.response-cache-auto-expiration-in-seconds"] = "1"
    srv = procs.make_server(kind, log_dir, settings=settings)
    srv.proc.name = f"{kind}-{name}"
    return srv


@pytest.fixture(scope="module", params=SERVER_KINDS)
def world(request, tracker, log_dir):
    kind = request.param
    if not driver_binary().exists():
        pytest.fail(f"Rust client driver {driver_binary()} not found: build it (cargo build --release "
                    f"-p heureka-client --example interop_driver) or set RUST_CLIENT_DRIVER", pytrace=False)
    if kind == "heureka" and not procs.HeurekaServer.binary().exists():
        pytest.fail(f"Heureka binary {procs.HeurekaServer.binary()} not found: set HEUREKA_BIN", pytrace=False)
    if kind == "java" and not (procs.EUREKA_SERVER_JAR.exists() and procs.SPRING_CLIENT_JAR.exists()):
        pytest.fail("Java jars not found: run mvn -q -B -DskipTests package in interop/java", pytrace=False)
    registry = tracker.add(_server(kind, log_dir, "registry"))
    spare = tracker.add(_server(kind, log_dir, "spare"))
    procs.start_all([registry, spare])
    spring = tracker.add(procs.SpringClient(f"spring-rs-{kind}", registry, log_dir))
    python = tracker.add(procs.PythonClient(f"py-rs-{kind}", registry, log_dir))
    procs.start_all([spring, python])
    rust = tracker.add(RustClient(f"rust-{kind}", [registry], log_dir,
                                  watch=(spring.registry_app, python.registry_app)))
    rust.start()
    yield World(kind, registry, spare, spring, python, rust)
    # this kind's processes go now, not at module end, so the two kinds never run side by side
    for item in (rust, spring, python):
        item.stop()
    for srv in (registry, spare):
        srv.stop()


def registered(server, app, instance_id):
    inst = server.get_instance(app, instance_id)
    return inst if inst is not None and inst["status"] == "UP" else None


def test_rust_client_registers_up_with_its_port(world):
    r = world.rust
    inst = wait_until(f"{r.instance_id} UP on the {world.kind} server",
                      lambda: registered(world.registry, r.registry_app, r.instance_id),
                      DEADLINE, logs=[r.proc, world.registry.proc])
    assert inst["app"] == r.registry_app
    assert inst["hostName"] == procs.HOST
    assert inst["port"]["$"] == r.port
    assert inst["vipAddress"] == r.app_name.lower()


def test_rust_client_is_seen_by_the_spring_discovery_client(world):
    r, spring = world.rust, world.spring
    wait_until(f"Spring DiscoveryClient.getInstances({r.app_name}) lists {r.instance_id}",
               lambda: r.instance_id in [i["instanceId"] for i in spring.instances_of(r.app_name)],
               DEADLINE, logs=[spring.proc, r.proc, world.registry.proc])


def test_rust_client_is_seen_by_py_eureka_client(world):
    r, python = world.rust, world.python
    wait_until(f"py-eureka-client lists {r.instance_id} under {r.registry_app}",
               lambda: r.instance_id in [i["instanceId"] for i in python.lookup(r.registry_app)],
               DEADLINE, logs=[python.proc, r.proc, world.registry.proc])


@pytest.mark.parametrize("other", ["spring", "python"])
def test_rust_client_sees_the_other_clients(world, other):
    r, c = world.rust, getattr(world, other)
    r.wait_event(f"a refresh listing {c.instance_id} UP under {c.registry_app}",
                 lambda e: e["event"] == "refresh" and c.instance_id in r.up_ids(e, c.registry_app), DEADLINE)
    answer = r.command(f"instances {c.registry_app}", "instances")
    assert [(i["id"], i["status"], i["port"]) for i in answer["instances"]] == [(c.instance_id, "UP", c.port)]


def _status_path(c, value):
    return c.server.url(f"/apps/{c.registry_app}/{wire.quote(c.instance_id)}/status?value={value}")


@pytest.mark.parametrize("other", ["spring", "python"])
def test_rust_client_follows_a_status_change_through_deltas(world, other):
    r, c = world.rust, getattr(world, other)
    r.wait_event(f"{c.instance_id} UP in the Rust client's copy",
                 lambda e: e["event"] == "refresh" and c.instance_id in r.up_ids(e, c.registry_app), DEADLINE)
    mark = len(r.events())
    before = r.refreshes()[-1]["counts"]
    assert wire.request("PUT", _status_path(c, "OUT_OF_SERVICE"), {"Accept": "application/json"}).status == 200
    try:
        gone = r.wait_event(f"a refresh without {c.instance_id} among the UP instances",
                            lambda e: e["event"] == "refresh" and c.instance_id not in r.up_ids(e, c.registry_app),
                            DEADLINE, after=mark)
        # the change came in a delta that was applied, not by a full fetch
        assert gone["counts"]["deltas"] > before["deltas"], (before, gone["counts"])
        assert gone["counts"]["full"] == before["full"], (before, gone["counts"])
    finally:
        mark = len(r.events())
        assert wire.request("DELETE", _status_path(c, "UP"), {"Accept": "application/json"}).status == 200
    back = r.wait_event(f"{c.instance_id} UP again once the override is removed",
                        lambda e: e["event"] == "refresh" and c.instance_id in r.up_ids(e, c.registry_app),
                        DEADLINE, after=mark)
    assert back["counts"]["full"] == before["full"], (before, back["counts"])


def test_rust_client_fails_over_when_one_of_two_servers_is_killed(world, tracker, log_dir):
    spare, registry, spring = world.spare, world.registry, world.spring
    # the spare first: the client registers there, and the shared registry does not know it
    r = tracker.add(RustClient(f"rust-failover-{world.kind}", [spare, registry], log_dir,
                               watch=(spring.registry_app,)))
    r.start()
    try:
        assert registered(spare, r.registry_app, r.instance_id) is not None
        assert registry.get_instance(r.registry_app, r.instance_id) is None
        spare.kill()
        mark = len(r.events())
        # heartbeat: refused by the spare, answered 404 by the other, which the client registers with
        first = wait_until(f"{r.instance_id} registered with the surviving server",
                           lambda: registered(registry, r.registry_app, r.instance_id),
                           DEADLINE, logs=[r.proc, registry.proc])
        # fetches: the Spring app lives only on the surviving server
        r.wait_event(f"a refresh listing {spring.instance_id}, which only the surviving server knows",
                     lambda e: e["event"] == "refresh" and spring.instance_id in r.up_ids(e, spring.registry_app),
                     DEADLINE, after=mark)
        # heartbeats keep renewing the lease there, without a re-registration
        def renewed_since_registration():
            inst = registry.get_instance(r.registry_app, r.instance_id)
            later = inst and inst["leaseInfo"]["lastRenewalTimestamp"] > first["leaseInfo"]["lastRenewalTimestamp"]
            return inst if later else None
        renewed = wait_until("lastRenewalTimestamp advances on the surviving server", renewed_since_registration,
                             DEADLINE, logs=[r.proc, registry.proc])
        assert renewed["leaseInfo"]["registrationTimestamp"] == first["leaseInfo"]["registrationTimestamp"]
    finally:
        r.stop()
    assert registry.get_instance(r.registry_app, r.instance_id) is None, "not deregistered on shutdown"


def test_rust_client_survives_a_server_restart(world):
    r, registry, spring, python = world.rust, world.registry, world.spring, world.python
    wait_until(f"{r.instance_id} registered before the restart",
               lambda: registered(registry, r.registry_app, r.instance_id), DEADLINE, logs=[r.proc])
    registry.restart_fresh()       # SIGKILL, then a new empty server on the same port
    mark = len(r.events())
    wait_until(f"{r.instance_id} re-registered with the restarted server (heartbeat 404 -> register)",
               lambda: registered(registry, r.registry_app, r.instance_id),
               DEADLINE, logs=[r.proc, registry.proc])
    # its local copy refills as the other clients come back
    r.wait_event("a refresh listing the Spring and Python instances again",
                 lambda e: e["event"] == "refresh" and spring.instance_id in r.up_ids(e, spring.registry_app)
                 and python.instance_id in r.up_ids(e, python.registry_app),
                 DEADLINE, after=mark)
    r.proc.assert_alive()


def test_rust_client_deregisters_on_shutdown(world):
    r, registry = world.rust, world.registry
    wait_until(f"{r.instance_id} registered", lambda: registered(registry, r.registry_app, r.instance_id),
               DEADLINE, logs=[r.proc, registry.proc])
    done = r.shutdown()
    assert done["ok"], done
    assert r.proc.popen.returncode == 0
    # gone at once: the cancel was answered before the driver reported the shutdown
    assert registry.get_instance(r.registry_app, r.instance_id) is None
