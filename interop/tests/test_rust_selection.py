"""Choosing an instance with the Rust client, against Heureka and against the real Java server.

The Rust client's interop driver calls applications by name (its ``call`` command: a
``DiscoveryHttpClient`` over the client's local copy, with a ``Selector`` built from the
command) and reports, per call, the body or the error kind and how many instances were tried.
The backends are real services registered through py-eureka-client (interop/clients/backend.py),
with its zone setting and metadata; each answers ``GET /who`` with its instance id, so the body
says which instance a call reached.

Per server kind the module shares one registry, five backends and one driver:
ORDERS (a gray release: two ``version=stable`` instances and one ``version=canary``) and
PAYMENTS (one instance in zone-a, one in zone-b). The tests run in file order per kind; the
last one kills a stable ORDERS instance.
"""
from __future__ import annotations

import signal
from dataclasses import dataclass

import pytest

from support import procs, wire
from support.backend import Backend
from support.rust_client import RustClient, driver_binary

DEADLINE = 45.0     # generous bound for a few client cycles on a busy 2-core machine
SERVER_KINDS = ["heureka", "java"]

STABLE = ("orders-stable-1", "orders-stable-2")
CANARY = "orders-canary"


@dataclass
class World:
    kind: str
    registry: procs.RegistryServer
    backends: dict          # instance id -> Backend
    caller: RustClient


@pytest.fixture(scope="module", params=SERVER_KINDS)
def world(request, tracker, log_dir):
    kind = request.param
    if not driver_binary().exists():
        pytest.fail(f"Rust client driver {driver_binary()} not found: build it (cargo build --release "
                    f"-p heureka-client --example interop_driver) or set RUST_CLIENT_DRIVER", pytrace=False)
    if kind == "heureka" and not procs.HeurekaServer.binary().exists():
        pytest.fail(f"Heureka binary {procs.HeurekaServer.binary()} not found: set HEUREKA_BIN", pytrace=False)
    if kind == "java" and not procs.EUREKA_SERVER_JAR.exists():
        pytest.fail("Java jars not found: run mvn -q -B -DskipTests package in interop/java", pytrace=False)
    settings = {}
    if kind == "java":
        # let a cached /apps/delta payload lag by at most a second (the default is 180 s)
        settings["eureka.server.response-cache-auto-expiration-in-seconds"] = "1"
    registry = tracker.add(procs.make_server(kind, log_dir, settings=settings))
    registry.proc.name = f"{kind}-registry"
    registry.start()
    specs = [("orders", STABLE[0], "", {"version": "stable"}),
             ("orders", STABLE[1], "", {"version": "stable"}),
             ("orders", CANARY, "", {"version": "canary"}),
             ("payments", "payments-a", "zone-a", {}),
             ("payments", "payments-b", "zone-b", {})]
    backends = {iid: tracker.add(Backend(app, iid, registry, log_dir, zone=zone, metadata=md))
                for app, iid, zone, md in specs}
    procs.start_all(backends.values())
    caller = tracker.add(RustClient(f"caller-{kind}", [registry], log_dir, watch=("ORDERS", "PAYMENTS")))
    caller.start()
    caller.wait_event("a refresh holding all five backends UP",
                      lambda e: e["event"] == "refresh"
                      and sorted(caller.up_ids(e, "ORDERS")) == sorted([*STABLE, CANARY])
                      and sorted(caller.up_ids(e, "PAYMENTS")) == ["payments-a", "payments-b"],
                      DEADLINE)
    yield World(kind, registry, backends, caller)
    # this kind's processes go now, not at module end, so the two kinds never run side by side
    caller.stop()
    for b in backends.values():
        b.stop()
    registry.stop()


def call(world: World, app: str, *options: str) -> list[dict]:
    """The driver's ``call APP /who OPTIONS...``: one result per call."""
    r = world.caller
    line = " ".join(["call", app, "/who", *options])
    mark = len(r.events())
    r.proc.popen.stdin.write((line + "\n").encode())
    r.proc.popen.stdin.flush()
    answer = r.wait_event(f"the answer to {line!r}", lambda e: e["event"] in ("call", "error"),
                          DEADLINE, after=mark)
    assert answer["event"] == "call", answer
    return answer["results"]


def reached(results: list[dict]) -> list[str]:
    """The instance each call reached, by its own word (the body of /who); every call succeeded."""
    failed = [r for r in results if not (r["ok"] and r["status"] == 200)]
    assert not failed, failed
    # the instance the client says answered is the one that did
    assert [r["instance"] for r in results] == [r["body"] for r in results], results
    return [r["body"] for r in results]


# -- gray release: version metadata picks the route --------------------------------------------
def test_the_canary_route_always_reaches_the_canary(world):
    assert reached(call(world, "ORDERS", "meta=version=canary", "strategy=random", "times=8")) == [CANARY] * 8


def test_the_stable_route_never_reaches_the_canary(world):
    seen = reached(call(world, "orders", "meta=version=stable", "strategy=random", "times=8"))
    assert set(seen) <= set(STABLE), seen


def test_round_robin_alternates_over_both_stable_instances(world):
    seen = reached(call(world, "ORDERS", "meta=version=stable", "strategy=round_robin", "times=6"))
    assert set(seen) == set(STABLE), seen
    assert all(a != b for a, b in zip(seen, seen[1:])), f"not in turn: {seen}"


def test_weighted_choice_stays_within_the_route(world):
    # no instance sets metadata weight, so each weighs 1; the route filter still applies
    seen = reached(call(world, "ORDERS", "meta=version=stable", "strategy=weighted", "times=6"))
    assert set(seen) <= set(STABLE), seen


# -- zone preference with a fallback -------------------------------------------------------------
def test_the_callers_zone_is_preferred(world):
    assert reached(call(world, "PAYMENTS", "zone=zone-a", "times=6")) == ["payments-a"] * 6


def _status_path(b: Backend, value: str) -> str:
    return b.server.url(f"/apps/{b.registry_app}/{wire.quote(b.instance_id)}/status?value={value}")


def test_calls_fall_back_to_another_zone_when_the_zone_has_no_instance_up(world):
    r, near = world.caller, world.backends["payments-a"]
    mark = len(r.events())
    assert wire.request("PUT", _status_path(near, "OUT_OF_SERVICE"), {"Accept": "application/json"}).status == 200
    try:
        r.wait_event("a refresh without payments-a among the UP PAYMENTS instances",
                     lambda e: e["event"] == "refresh" and r.up_ids(e, "PAYMENTS") == ["payments-b"],
                     DEADLINE, after=mark)
        assert reached(call(world, "PAYMENTS", "zone=zone-a", "times=4")) == ["payments-b"] * 4
    finally:
        mark = len(r.events())
        assert wire.request("DELETE", _status_path(near, "UP"), {"Accept": "application/json"}).status == 200
    # back in service, zone-a is preferred again
    r.wait_event("a refresh with payments-a UP again",
                 lambda e: e["event"] == "refresh" and "payments-a" in r.up_ids(e, "PAYMENTS"),
                 DEADLINE, after=mark)
    assert reached(call(world, "PAYMENTS", "zone=zone-a", "times=2")) == ["payments-a"] * 2


# -- retry on another instance ------------------------------------------------------------------
def test_a_killed_instance_is_retried_on_the_other_within_the_same_call(world):
    r, dead = world.caller, world.backends[STABLE[0]]
    dead.proc.send_signal(signal.SIGKILL)     # no deregistration: it stays UP for its 30 s lease
    dead.proc.popen.wait(timeout=10)
    # the client's copy still offers it, so round robin picks it first in every other call
    listed = r.command("instances ORDERS", "instances")
    assert STABLE[0] in [i["id"] for i in listed["instances"]], listed
    results = call(world, "ORDERS", "meta=version=stable", "strategy=round_robin", "times=4")
    assert reached(results) == [STABLE[1]] * 4
    assert sorted(res["attempts"] for res in results) == [1, 1, 2, 2], results
