"""Server-side health checks (issue 21) with real processes: a three-node Heureka cluster and
Spring Boot instances of interop/java/spring-client.

The instances run at Spring's default client settings (heartbeat 30 s, lease 90 s, fetch 30 s:
``DEFAULTS``), so nothing but the health check can tell the registry that one died within the
test's time. The consumer differs only in its fetch interval (``CONSUMER_FETCH_S``), to keep the
"drops it on its next fetch" wait short.

* checks on (``--heureka.health-checks.enabled=true``, interval 1 s): a SIGKILLed instance is
  DOWN on every node (full registry, delta and instance documents) within a few check
  intervals, and the consumer's ``DiscoveryClient`` (UP instances only) drops it on its next
  fetch; an operator's OUT_OF_SERVICE survives the check's recovery (the check fails while the
  instance is frozen with SIGSTOP: a Spring Boot health answer of any status counts as alive,
  since Spring's answer echoes the registry's status); the instance's own DOWN wins over a
  healthy check; an instance whose health echoes the operator's OUT_OF_SERVICE is UP again once
  the override is removed.
* checks off (the default): a SIGKILLed instance stays UP on every node, as before health checks
  (until its lease expires, 90 s later, which the test does not wait for).

Every wait is a bounded poll; the processes are shared by the module's
tests (one cluster per setting, four Spring JVMs started in parallel).
"""
from __future__ import annotations

import http.client
import json
import threading
import time

import pytest

from support import cluster as cl
from support import procs, wire
from support.cluster import stays_true, wait_on_all
from support.procs import HOST, wait_until

CHECK_INTERVAL_S = 1
HEALTH_CHECKS_ON = {
    "heureka.health-checks.enabled": "true",
    "heureka.health-checks.interval": f"{CHECK_INTERVAL_S}s",
    "heureka.health-checks.timeout": f"{CHECK_INTERVAL_S}s",
}
# Spring Cloud's defaults, written out: the spring-client app's application.yml has fast test
# timings, which the instances here must not have.
DEFAULTS = {
    "eureka.instance.lease-renewal-interval-in-seconds": "30",
    "eureka.instance.lease-expiration-duration-in-seconds": "90",
    "eureka.client.registry-fetch-interval-seconds": "30",
    "eureka.client.initial-instance-info-replication-interval-seconds": "40",
    "eureka.client.instance-info-replication-interval-seconds": "30",
}
CONSUMER_FETCH_S = 3
# Spring Boot's /actuator/health includes the Eureka client's health indicator, which reports the
# status the registry holds for the instance ("Remote status from Eureka server"): once the
# instance has fetched its own DOWN or OUT_OF_SERVICE, its health answers 503. The precedence
# tests turn that indicator off on their instance, so that its health stays 200 while it reports
# itself DOWN (test_..._echoes_... is about that indicator left on).
WITHOUT_REMOTE_STATUS_HEALTH = {"management.health.eureka.enabled": "false"}
# failures-before-down is 2 by default: DOWN after about two intervals, then replication; the
# rest is slack for a 2-core machine running four JVMs
DOWN_DEADLINE = 10 * CHECK_INTERVAL_S + 10
# a window of several check intervals in which a status must not change
HOLD_WINDOW = 5 * CHECK_INTERVAL_S
STARTUP_DEADLINE = 120.0


# ---------------------------------------------------------------------------------------
# Processes
# ---------------------------------------------------------------------------------------
class Setup:
    """The module's processes: a cluster with checks on and one with checks off,
    each with its Spring instances."""

    def __init__(self):
        self.on = None
        self.off = None
        self.victim_on = None      # killed in the "on" test
        self.consumer_on = None    # its DiscoveryClient must drop the victim; then its own check fails
        self.flip = None           # health switched off and on, own status DOWN and UP
        self.victim_off = None     # killed in the "off" test


@pytest.fixture(scope="module")
def setup(cluster_factory, client_factory) -> Setup:
    s = Setup()
    s.off = cluster_factory(["heureka"] * 3, label="checks-off", start=False)
    s.on = cluster_factory(["heureka"] * 3, label="checks-on", extra=HEALTH_CHECKS_ON, start=False)
    clusters = [s.off, s.on]
    procs.start_all([n for c in clusters for n in c])

    def spring(name, node, settings=DEFAULTS):
        return client_factory("spring", name, node, start=False, settings=dict(settings))

    apps = [spring("hc-victim-off", s.off[0])]
    s.victim_off = apps[0]
    s.victim_on = spring("hc-victim", s.on[0])
    s.flip = spring("hc-flip", s.on[1], {**DEFAULTS, **WITHOUT_REMOTE_STATUS_HEALTH})
    s.consumer_on = spring("hc-consumer", s.on[2],
                           {**DEFAULTS, "eureka.client.registry-fetch-interval-seconds": str(CONSUMER_FETCH_S)})
    apps += [s.victim_on, s.flip, s.consumer_on]
    procs.start_all(apps)
    return s


def key(app: procs.SpringClient) -> tuple[str, str]:
    return (app.registry_app, app.instance_id)


def status_in_apps(node, app) -> str | None:
    v = cl.view(node).instances.get(key(app))
    return v[0] if v else None


def status_in_instance(node, app) -> str | None:
    doc = node.get_instance(app.registry_app, app.instance_id)
    return doc["status"] if doc else None


def status_in_delta(node, app) -> str | None:
    r = node.call("GET", "/apps/delta", headers=cl.JSON)
    assert r.status == 200, f"{node.node_name}: GET /eureka/apps/delta -> {r.status}: {r.text[:300]}"
    v = cl.view_of_doc(r.json()).instances.get(key(app))
    return v[0] if v else None


def reads_everywhere(app, status: str):
    """Probe: the node's full registry and its instance document show ``app`` with ``status``."""
    return lambda node: status_in_apps(node, app) == status and status_in_instance(node, app) == status


def override_of(node, app) -> str | None:
    v = cl.view(node).instances.get(key(app))
    return v[1] if v else None


def discovered(consumer: procs.SpringClient, app) -> list[str]:
    return [i["instanceId"] for i in consumer.instances_of(app.vip)]


def checks_total(nodes, outcome: str) -> float:
    """``heureka_health_checks_total{outcome=...}`` summed over the nodes (absent counts 0)."""
    total = 0.0
    for node in nodes:
        r = wire.get(f"http://{HOST}:{node.port}/actuator/prometheus", timeout=5)
        assert r.status == 200, f"{node.node_name}: GET /actuator/prometheus -> {r.status}"
        for line in r.text.splitlines():
            if line.startswith("heureka_health_checks_total{") and f'outcome="{outcome}"' in line:
                total += float(line.rsplit(" ", 1)[1])
    return total


def actuator_health(app: procs.SpringClient) -> int:
    return wire.get(app.local("/actuator/health"), timeout=5).status


def post(app: procs.SpringClient, path: str) -> dict:
    r = wire.request("POST", app.local(path), {"Accept": "application/json"}, b"", timeout=10)
    assert r.status == 200, f"{app.proc.name} POST {path} -> {r.status}: {r.text[:300]}"
    return r.json()


class Events:
    """The ``/eureka/events`` stream of every node, read from threads; ``of(type, id)`` lists
    the events of one type about one instance seen so far, from any node."""

    def __init__(self, nodes, app_name: str):
        self.events: list[dict] = []
        self._lock = threading.Lock()
        self._conns = []
        for node in nodes:
            conn = http.client.HTTPConnection(HOST, node.port, timeout=60)
            conn.request("GET", f"/eureka/events?app={app_name}", headers={"Accept": "text/event-stream"})
            resp = conn.getresponse()
            assert resp.status == 200, f"{node.node_name}: GET /eureka/events -> {resp.status}"
            self._conns.append(conn)
            threading.Thread(target=self._read, args=(node.node_name, resp), daemon=True).start()

    def _read(self, node_name, resp) -> None:
        try:
            for raw in resp:
                line = raw.decode("utf-8", "replace").rstrip("\r\n")
                if line.startswith("data:"):
                    try:
                        event = json.loads(line[5:].strip())
                    except ValueError:
                        continue
                    event["node"] = node_name
                    with self._lock:
                        self.events.append(event)
        except (OSError, ValueError, http.client.HTTPException):
            return

    def of(self, kind: str, instance_id: str) -> list[dict]:
        with self._lock:
            return [e for e in self.events if e.get("type") == kind and e.get("id") == instance_id]

    def close(self) -> None:
        for conn in self._conns:
            try:
                conn.sock and conn.sock.close()
            except OSError:
                pass


# ---------------------------------------------------------------------------------------
# Tests
# ---------------------------------------------------------------------------------------
def test_checks_off_a_killed_instance_stays_up_on_every_node(setup):
    nodes, victim = list(setup.off), setup.victim_off
    wait_on_all(nodes, f"{victim.instance_id} UP", reads_everywhere(victim, "UP"), deadline=STARTUP_DEADLINE)
    victim.kill()                                # SIGKILL: no cancel, no more heartbeats
    stays_true(f"{victim.instance_id} still UP on every node after SIGKILL (checks off)",
               lambda: all(reads_everywhere(victim, "UP")(n) and status_in_delta(n, victim) in (None, "UP")
                           for n in nodes),
               window=2 * HOLD_WINDOW, interval=1.0)
    assert checks_total(nodes, "failed") == 0 and checks_total(nodes, "passed") == 0, \
        "a node with health checks off counted checks"


def test_checks_on_a_killed_instance_is_down_on_every_node_and_leaves_the_consumer(setup):
    nodes, victim, consumer = list(setup.on), setup.victim_on, setup.consumer_on
    wait_on_all(nodes, f"{victim.instance_id} UP", reads_everywhere(victim, "UP"), deadline=STARTUP_DEADLINE)
    wait_until(f"{consumer.proc.name} discovers {victim.instance_id}",
               lambda: discovered(consumer, victim) == [victim.instance_id], STARTUP_DEADLINE,
               logs=[consumer.proc])
    events = Events(nodes, victim.registry_app)
    try:
        victim.kill()
        killed = time.monotonic()
        wait_on_all(nodes, f"{victim.instance_id} DOWN in the full registry and the instance document",
                    reads_everywhere(victim, "DOWN"), deadline=DOWN_DEADLINE)
        down_after = time.monotonic() - killed
        wait_on_all(nodes, f"{victim.instance_id} DOWN in the delta", lambda n: status_in_delta(n, victim) == "DOWN",
                    deadline=10)
        # the client reported UP and nobody set an override: DOWN is the check's alone
        assert all(override_of(n, victim) == "UNKNOWN" for n in nodes), [override_of(n, victim) for n in nodes]
        wait_until(f"{consumer.proc.name}'s DiscoveryClient drops {victim.instance_id} on its next fetch "
                   f"(every {CONSUMER_FETCH_S} s)",
                   lambda: discovered(consumer, victim) == [], CONSUMER_FETCH_S + 10, logs=[consumer.proc])
        wait_until("a health-check-failed event about the victim",
                   lambda: events.of("health-check-failed", victim.instance_id), 10)
    finally:
        events.close()
    assert checks_total(nodes, "failed") >= 2
    print(f"DOWN on every node {down_after:.1f} s after SIGKILL (interval {CHECK_INTERVAL_S} s)")


def test_checks_on_an_operators_out_of_service_survives_the_checks_recovery(setup):
    nodes, flip = list(setup.on), setup.flip
    inst = cl.Instance(flip.registry_app, flip.instance_id, flip.port)
    wait_on_all(nodes, f"{flip.instance_id} UP", reads_everywhere(flip, "UP"), deadline=STARTUP_DEADLINE)
    events = Events(nodes, flip.registry_app)
    try:
        flip.proc.freeze()              # SIGSTOP: its health URL answers nothing, the check times out
        wait_on_all(nodes, f"{flip.instance_id} DOWN by its failing check", reads_everywhere(flip, "DOWN"),
                    deadline=DOWN_DEADLINE)
        cl.set_status(nodes[2], inst, "OUT_OF_SERVICE")
        wait_on_all(nodes, f"{flip.instance_id} OUT_OF_SERVICE (the operator's override beats the check)",
                    reads_everywhere(flip, "OUT_OF_SERVICE"), deadline=cl.REPLICATION_DEADLINE)
        flip.proc.thaw()
        wait_until("a health-check-recovered event about the instance",
                   lambda: events.of("health-check-recovered", flip.instance_id), DOWN_DEADLINE)
        stays_true(f"{flip.instance_id} still OUT_OF_SERVICE on every node after the check recovered",
                   lambda: all(reads_everywhere(flip, "OUT_OF_SERVICE")(n) for n in nodes), window=HOLD_WINDOW)
        cl.remove_status_override(nodes[0], inst)
        wait_on_all(nodes, f"{flip.instance_id} UP once the override is removed (check healthy)",
                    reads_everywhere(flip, "UP"), deadline=cl.REPLICATION_DEADLINE)
    finally:
        events.close()
        flip.proc.thaw()


def test_checks_on_the_instances_own_down_wins_over_a_healthy_check(setup):
    nodes, flip = list(setup.on), setup.flip
    wait_on_all(nodes, f"{flip.instance_id} UP", reads_everywhere(flip, "UP"), deadline=STARTUP_DEADLINE)
    try:
        post(flip, "/interop/status?value=DOWN")     # ApplicationInfoManager: re-registers DOWN
        wait_on_all(nodes, f"{flip.instance_id} DOWN, as it reports itself", reads_everywhere(flip, "DOWN"),
                    deadline=cl.REPLICATION_DEADLINE)
        assert actuator_health(flip) == 200, "the instance's health endpoint must stay healthy for this test"
        passed = checks_total(nodes, "passed")
        stays_true(f"{flip.instance_id} still DOWN on every node while its check passes",
                   lambda: all(reads_everywhere(flip, "DOWN")(n) for n in nodes), window=HOLD_WINDOW)
        assert actuator_health(flip) == 200
        assert checks_total(nodes, "passed") >= passed + 2, "no check passed during the window"
        post(flip, "/interop/status?value=UP")
        wait_on_all(nodes, f"{flip.instance_id} UP again, as it reports itself", reads_everywhere(flip, "UP"),
                    deadline=cl.REPLICATION_DEADLINE)
    finally:
        post(flip, "/interop/status?value=UP")


def test_checks_on_a_spring_instance_whose_health_echoes_an_override_is_up_once_it_is_removed(setup):
    """The consumer runs Spring's health indicators as they come, so its /actuator/health reports
    the status the registry holds for it: with an operator's OUT_OF_SERVICE it answers 503
    ("Remote status from Eureka server"). That answer must not fail its check, or the instance
    would read DOWN once the override is removed, and stay DOWN: its health would echo that
    DOWN. (Runs last: it takes the consumer out of service for a while.)"""
    nodes, app = list(setup.on), setup.consumer_on
    inst = cl.Instance(app.registry_app, app.instance_id, app.port)
    wait_on_all(nodes, f"{app.instance_id} UP", reads_everywhere(app, "UP"), deadline=STARTUP_DEADLINE)
    try:
        cl.set_status(nodes[0], inst, "OUT_OF_SERVICE")
        wait_on_all(nodes, f"{app.instance_id} OUT_OF_SERVICE", reads_everywhere(app, "OUT_OF_SERVICE"),
                    deadline=cl.REPLICATION_DEADLINE)
        wait_until(f"{app.proc.name}'s /actuator/health echoes OUT_OF_SERVICE (503) after its next fetch",
                   lambda: actuator_health(app) == 503, CONSUMER_FETCH_S + 10, logs=[app.proc])
        passed = checks_total(nodes, "passed")
        # several checks of the echoing instance (and of the nodes' own registrations)
        wait_until("a few more checks made", lambda: checks_total(nodes, "passed") >= passed + 3 * len(nodes),
                   DOWN_DEADLINE)
        assert actuator_health(app) == 503
        cl.remove_status_override(nodes[1], inst)
        wait_on_all(nodes, f"{app.instance_id} UP once the override is removed", reads_everywhere(app, "UP"),
                    deadline=cl.REPLICATION_DEADLINE)
        stays_true(f"{app.instance_id} stays UP on every node",
                   lambda: all(reads_everywhere(app, "UP")(n) for n in nodes), window=HOLD_WINDOW)
    finally:
        try:
            cl.remove_status_override(nodes[1], inst)
        except AssertionError:
            pass
