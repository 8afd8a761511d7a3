"""``heureka sidecar`` in front of a Python ``http.server`` app, against Heureka and the real Java server.

The app is examples/sidecar-python/app.py: its /health answers 503 while a file exists, so a
test flips its health by creating and removing that file. The sidecar asks it every second.
What a Spring application sees is asked of the Spring client app (interop/java/spring-client):
its ``DiscoveryClient.getInstances`` lists UP instances only (Spring's
``eureka.client.filter-only-up-instances`` is true by default), so "Spring sees it DOWN" is
"Spring no longer lists it while the server still has it".

Per server kind the module shares one registry, one Spring client app, one app and one sidecar.
The tests run in file order per kind and each starts from the app registered UP; the last
one stops the sidecar.
"""
from __future__ import annotations

import signal
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest

from support import procs, wire
from support.procs import HOST, wait_until

DEADLINE = 45.0     # generous bound for a few one-second rounds on a busy 2-core machine
SERVER_KINDS = ["heureka", "java"]
APP_PY = procs.REPO_DIR / "examples" / "sidecar-python" / "app.py"


class PythonApp:
    """examples/sidecar-python/app.py on its own port; unhealthy while ``unhealthy_file`` exists."""

    def __init__(self, name: str, log_dir: Path):
        self.port = procs.free_port()
        self.unhealthy_file = Path(log_dir) / f"{name}.unhealthy"
        self.proc = procs.Proc(name, [sys.executable, "-u", str(APP_PY), "--port", str(self.port),
                                      "--unhealthy-file", str(self.unhealthy_file)], log_dir)

    @property
    def health_url(self) -> str:
        return f"http://{HOST}:{self.port}/health"

    def start(self) -> "PythonApp":
        self.proc.start()
        wait_until(f"{self.proc.name} answers on {self.health_url}",
                   lambda: self.proc.running() and wire.get(self.health_url, timeout=2).status in (200, 503),
                   DEADLINE, interval=0.1, logs=[self.proc])
        return self

    def set_healthy(self, healthy: bool) -> None:
        if healthy:
            self.unhealthy_file.unlink(missing_ok=True)
        else:
            self.unhealthy_file.touch()

    def stop(self, sig: int = signal.SIGTERM) -> None:
        self.proc.stop(sig=sig)

    def kill(self) -> None:
        self.proc.kill()


class Sidecar:
    """``heureka sidecar`` for ``app``, registered as APP/``instance_id`` with ``registry``."""

    def __init__(self, name: str, app: PythonApp, registry: procs.RegistryServer, log_dir: Path):
        self.app_name = name
        self.instance_id = f"{name}-{app.port}"
        self.proc = procs.Proc(f"sidecar-{name}", [
            str(procs.HeurekaServer.binary()), "sidecar",
            "--app", name, "--port", str(app.port), "--health-url", app.health_url,
            "--host", HOST, "--ip", HOST, "--health-interval", "1", "--health-timeout", "1",
            "--eureka", registry.service_url,
            # Spring keys: a renewal every second, so that the heartbeat test is quick, an
            # instance id the tests know, and the metadata a gray release would filter on
            "--eureka.instance.lease-renewal-interval-in-seconds=1",
            f"--eureka.instance.instance-id={self.instance_id}",
            "--eureka.instance.metadata-map.version=canary",
        ], log_dir)

    @property
    def registry_app(self) -> str:
        return self.app_name.upper()

    def start(self) -> "Sidecar":
        self.proc.start()
        return self

    def stop(self, sig: int = signal.SIGTERM) -> None:
        self.proc.stop(sig=sig)

    def kill(self) -> None:
        self.proc.kill()


@dataclass
class World:
    kind: str
    registry: procs.RegistryServer
    spring: procs.SpringClient
    app: PythonApp
    sidecar: Sidecar

    def logs(self) -> list:
        return [self.sidecar.proc, self.app.proc, self.registry.proc]

    def status(self) -> str | None:
        """The status the server has for the app, None when it is not registered."""
        inst = self.registry.get_instance(self.sidecar.registry_app, self.sidecar.instance_id)
        return inst["status"] if inst is not None else None

    def wait_status(self, status: str, why: str) -> dict:
        return wait_until(f"{self.sidecar.instance_id} {status} on the {self.kind} server ({why})",
                          lambda: self._instance_with(status), DEADLINE, logs=self.logs())

    def _instance_with(self, status: str):
        inst = self.registry.get_instance(self.sidecar.registry_app, self.sidecar.instance_id)
        return inst if inst is not None and inst["status"] == status else None

    def spring_lists(self) -> list[dict]:
        """The app's instances as Spring's DiscoveryClient has them (UP ones only)."""
        return [i for i in self.spring.instances_of(self.sidecar.app_name)
                if i["instanceId"] == self.sidecar.instance_id]

    def wait_spring(self, listed: bool, why: str) -> None:
        wait_until(f"Spring's DiscoveryClient {'lists' if listed else 'no longer lists'} "
                   f"{self.sidecar.instance_id} ({why})",
                   lambda: bool(self.spring_lists()) == listed, DEADLINE,
                   logs=[self.spring.proc, *self.logs()])


def _server(kind, log_dir):
    settings = {}
    if kind == "java":
        # let a cached /apps/delta payload lag by at most a second (the default is 180 s)
        settings["eureka.server.response-cache-auto-expiration-in-seconds"] = "1"
    srv = procs.make_server(kind, log_dir, settings=settings)
    srv.proc.name = f"{kind}-registry"
    return srv


@pytest.fixture(scope="module", params=SERVER_KINDS)
def world(request, tracker, log_dir):
    kind = request.param
    if not procs.HeurekaServer.binary().exists():
        pytest.fail(f"Heureka binary {procs.HeurekaServer.binary()} not found: set HEUREKA_BIN", pytrace=False)
    if not procs.SPRING_CLIENT_JAR.exists() or (kind == "java" and not procs.EUREKA_SERVER_JAR.exists()):
        pytest.fail("Java jars not found: run mvn -q -B -DskipTests package in interop/java", pytrace=False)
    registry = tracker.add(_server(kind, log_dir))
    spring = tracker.add(procs.SpringClient(f"spring-sc-{kind}", registry, log_dir))
    app = tracker.add(PythonApp(f"pyapp-{kind}", log_dir))
    # side by side: the Spring app keeps trying the registry (every second) until it answers
    procs.start_all([registry, spring, app])
    sidecar = tracker.add(Sidecar(f"sidecar-py-{kind}", app, registry, log_dir)).start()
    world = World(kind, registry, spring, app, sidecar)
    yield world
    # this kind's processes go now, not at module end, so the two kinds never run side by side
    for item in (sidecar, spring, app, registry):
        item.stop()


@pytest.fixture
def up(world) -> World:
    """The world with the app healthy, registered UP and listed by Spring."""
    world.app.set_healthy(True)
    if not world.app.proc.running():
        world.app.start()
    world.wait_status("UP", "the app is healthy")
    world.wait_spring(True, "the app is UP")
    return world


def test_sidecar_registers_the_app_up_with_its_port_and_health_url(up):
    inst = up.wait_status("UP", "its health URL answers 200")
    assert inst["app"] == up.sidecar.registry_app
    assert inst["vipAddress"] == up.sidecar.app_name
    assert (inst["hostName"], inst["ipAddr"]) == (HOST, HOST)
    assert inst["port"]["$"] == up.app.port
    assert inst["healthCheckUrl"] == up.app.health_url


def test_the_spring_client_sees_the_app_at_its_port(up):
    [seen] = up.spring_lists()
    assert (seen["host"], seen["port"]) == (HOST, up.app.port)
    # and the app really answers there
    assert wire.get(seen["uri"] + "/").status == 200


def test_a_spring_key_reaches_the_registered_metadata(up):
    inst = up.registry.get_instance(up.sidecar.registry_app, up.sidecar.instance_id)
    assert inst["metadata"]["version"] == "canary"
    [seen] = up.spring_lists()
    assert seen["metadata"]["version"] == "canary"


def test_the_sidecar_renews_the_lease_while_the_app_is_healthy(up):
    first = up.wait_status("UP", "healthy")["leaseInfo"]

    def renewed():
        inst = up._instance_with("UP")
        later = inst and inst["leaseInfo"]["lastRenewalTimestamp"] > first["lastRenewalTimestamp"]
        return inst if later else None
    inst = wait_until("lastRenewalTimestamp advances", renewed, DEADLINE, logs=up.logs())
    # by heartbeats, not by registering again
    assert inst["leaseInfo"]["registrationTimestamp"] == first["registrationTimestamp"]


def test_a_failing_health_endpoint_shows_the_app_down_and_spring_stops_listing_it(up):
    up.app.set_healthy(False)
    up.wait_status("DOWN", "its health URL answers 503")
    up.wait_spring(False, "the app is DOWN")
    # still registered, DOWN: reported, not cancelled
    assert up.status() == "DOWN"


def test_a_recovered_health_endpoint_brings_the_app_back_up_for_spring(up):
    up.app.set_healthy(False)
    up.wait_status("DOWN", "its health URL answers 503")
    up.wait_spring(False, "the app is DOWN")
    up.app.set_healthy(True)
    up.wait_status("UP", "its health URL answers 200 again")
    up.wait_spring(True, "the app is UP again")


def test_a_killed_app_is_shown_down_while_the_sidecar_runs(up):
    up.app.kill()          # its port now refuses connections
    up.wait_status("DOWN", "its health URL refuses connections")
    up.wait_spring(False, "the app is DOWN")
    up.sidecar.proc.assert_alive()
    # the `up` fixture of the next test starts the app again on the same port


def test_sigterm_cancels_the_registration_at_once_and_exits_0(up):
    sidecar = up.sidecar
    sidecar.proc.send_signal(signal.SIGTERM)
    try:
        rc = sidecar.proc.popen.wait(timeout=DEADLINE)
    except subprocess.TimeoutExpired:
        pytest.fail(f"the sidecar did not exit after SIGTERM\n{sidecar.proc.describe_log()}")
    assert rc == 0, sidecar.proc.describe_log()
    # gone at once: the cancel was answered before the sidecar exited
    assert up.status() is None
    up.wait_spring(False, "the app was cancelled")
