"""grpc-go's own xDS client calls providers registered in Heureka, through Heureka's ADS port.

Two gRPC providers (grpc-go TestService servers, ``interop/go/xds``, each answering with its
own server id) are registered in Heureka over REST, one by its port and one by the
``gRPC_port`` metadata grpc-spring-boot-starter writes. A grpc-go client with a bootstrap file
naming Heureka's xDS port calls ``xds:///xds-orders`` in a loop and prints one line per call:
when, and which provider answered. The test reads those lines:

* the calls are spread over both providers;
* after an OUT_OF_SERVICE override on one provider, its last call comes within 1 s of the
  override being set (the figure is printed); the other is called on;
* back UP, it is called again; DOWN (the instance's own status) stops it the same way.
"""
from __future__ import annotations

import base64
import json
import os
import time
from pathlib import Path

import pytest

from support import procs, wire
from support.procs import HOST, wait_until

APP = "XDS-ORDERS"
TARGET = "xds:///xds-orders"
DEADLINE = 60.0
#: The issue's bound on the time from a status change to the client's last call there.
STOP_WITHIN_MS = 1000
#: How long after a change the calls are watched before the last one is taken as the last.
QUIET_MS = 2500

GO_BINARY = Path(os.environ.get(
    "XDS_INTEROP_BIN", Path(__file__).resolve().parents[1] / "go" / "xds" / "bin" / "xds"))


def binary() -> str:
    if not GO_BINARY.exists():
        pytest.fail(f"{GO_BINARY} not found: interop/run.sh builds it (go build in interop/go/xds)",
                    pytrace=False)
    return str(GO_BINARY)


def register(server: procs.RegistryServer, instance_id: str, port: int, status: str = "UP",
             grpc_port: int | None = None) -> None:
    metadata = {"zone": "zone-a"}
    if grpc_port is not None:
        metadata["gRPC_port"] = str(grpc_port)
    body = json.dumps({"instance": {
        "instanceId": instance_id, "app": APP, "hostName": HOST, "ipAddr": HOST,
        "vipAddress": APP.lower(), "status": status,
        "port": {"$": port, "@enabled": "true"},
        "metadata": metadata,
        "dataCenterInfo": {"@class": "com.netflix.appinfo.InstanceInfo$DefaultDataCenterInfo",
                           "name": "MyOwn"},
    }})
    r = wire.request("POST", server.url(f"/apps/{APP}"), {"Content-Type": "application/json"}, body)
    assert r.status == 204, r


def set_override(server: procs.RegistryServer, instance_id: str, status: str) -> None:
    r = wire.request("PUT", server.url(f"/apps/{APP}/{instance_id}/status?value={status}"))
    assert r.status == 200, r


def remove_override(server: procs.RegistryServer, instance_id: str) -> None:
    r = wire.request("DELETE", server.url(f"/apps/{APP}/{instance_id}/status?value=UP"))
    assert r.status == 200, r


class Calls:
    """The client's log: one ``<unix ms> <server id>`` line per call."""

    def __init__(self, proc: procs.Proc):
        self.proc = proc

    def all(self) -> list[tuple[int, str]]:
        calls = []
        for line in self.proc.log_path.read_text(errors="replace").splitlines():
            parts = line.split(" ", 1)
            if len(parts) == 2 and parts[0].isdigit():
                calls.append((int(parts[0]), parts[1]))
        return calls

    def since(self, start_ms: int) -> list[tuple[int, str]]:
        return [call for call in self.all() if call[0] >= start_ms]

    def answered_by(self, start_ms: int, server_id: str) -> list[int]:
        return [at for at, who in self.since(start_ms) if who == server_id]

    def wait_past(self, until_ms: int) -> None:
        wait_until(f"the client calls on past {until_ms}",
                   lambda: any(at >= until_ms for at, _ in self.all()), DEADLINE, interval=0.1,
                   logs=[self.proc])


@pytest.fixture(scope="module")
def heureka(tracker, log_dir) -> procs.RegistryServer:
    if not procs.HeurekaServer.binary().exists():
        pytest.fail(f"{procs.HeurekaServer.binary()} not found: build it or set HEUREKA_BIN",
                    pytrace=False)
    server = tracker.add(procs.HeurekaServer(log_dir, settings={
        "heureka.xds.enabled": "true",
        "heureka.xds.port": str(procs.free_port()),
    }))
    return server.start()


@pytest.fixture(scope="module")
def providers(tracker, log_dir, heureka) -> dict[str, int]:
    ports = {}
    for server_id in ("provider-1", "provider-2"):
        port = procs.free_port()
        proc = procs.Proc(server_id, [binary(), "provider", "-id", server_id, "-port", str(port)],
                          log_dir)
        tracker.add(_Wrapped(proc))
        proc.start()
        wait_until(f"{server_id} listens", lambda: "listening" in proc.log_text(), DEADLINE,
                   logs=[proc])
        ports[server_id] = port
    # one registered by its port, one by grpc-spring-boot-starter's metadata key
    register(heureka, "provider-1", ports["provider-1"])
    register(heureka, "provider-2", 1, grpc_port=ports["provider-2"])
    return ports


@pytest.fixture(scope="module")
def calls(tracker, log_dir, heureka, providers) -> Calls:
    bootstrap = log_dir / "xds-bootstrap.json"
    bootstrap.write_text(json.dumps({
        "xds_servers": [{"server_uri": f"{HOST}:{heureka.settings['heureka.xds.port']}",
                         "channel_creds": [{"type": "insecure"}]}],
        "node": {"id": "interop-client", "locality": {"zone": "zone-a"}},
    }))
    proc = procs.Proc("grpc-client", [binary(), "client", "-target", TARGET, "-interval", "10ms"],
                      log_dir, env={"GRPC_XDS_BOOTSTRAP": str(bootstrap)})
    tracker.add(_Wrapped(proc))
    proc.start()
    return Calls(proc)


class _Wrapped:
    """A bare process for the tracker, which stops what it holds at the module's end."""

    def __init__(self, proc: procs.Proc):
        self.proc = proc

    def stop(self, sig):
        self.proc.stop(sig=sig)

    def kill(self):
        self.proc.kill()


def now_ms() -> int:
    return int(time.time() * 1000)


def stops_calling(heureka, calls: Calls, instance_id: str, other: str, change) -> int:
    """Makes ``change``, waits ``QUIET_MS`` of calls, and returns the milliseconds from the
    start of the change's request to the last call ``instance_id`` answered: negative when
    that call came before the request (the change was in force before the next call)."""
    changed_at = now_ms()
    change()
    calls.wait_past(changed_at + QUIET_MS)
    last = max(calls.answered_by(changed_at - QUIET_MS, instance_id))
    assert calls.answered_by(changed_at + STOP_WITHIN_MS, other), "the other provider is called on"
    return last - changed_at


def test_calls_are_spread_over_both_providers(calls):
    start = now_ms()
    wait_until("both providers answer calls",
               lambda: {"provider-1", "provider-2"} <= {who for _, who in calls.since(start)},
               DEADLINE, logs=[calls.proc])


def test_an_out_of_service_override_stops_calls_to_the_instance_within_a_second(heureka, calls):
    wait_until("provider-1 answers", lambda: calls.answered_by(now_ms() - 500, "provider-1"),
               DEADLINE, logs=[calls.proc])
    elapsed = stops_calling(heureka, calls, "provider-1", "provider-2",
                            lambda: set_override(heureka, "provider-1", "OUT_OF_SERVICE"))
    print(f"\nOUT_OF_SERVICE -> last call to provider-1: {elapsed} ms")
    assert elapsed < STOP_WITHIN_MS


def test_an_instance_back_up_is_called_again(heureka, calls):
    set_override(heureka, "provider-1", "OUT_OF_SERVICE")
    start = now_ms()
    remove_override(heureka, "provider-1")
    wait_until("provider-1 answers again", lambda: calls.answered_by(start, "provider-1"),
               DEADLINE, logs=[calls.proc])


def test_an_instance_going_down_stops_its_calls_within_a_second(heureka, providers, calls):
    wait_until("provider-1 answers", lambda: calls.answered_by(now_ms() - 500, "provider-1"),
               DEADLINE, logs=[calls.proc])
    elapsed = stops_calling(heureka, calls, "provider-1", "provider-2",
                            lambda: register(heureka, "provider-1", providers["provider-1"],
                                             status="DOWN"))
    print(f"\nDOWN -> last call to provider-1: {elapsed} ms")
    assert elapsed < STOP_WITHIN_MS
    start = now_ms()
    register(heureka, "provider-1", providers["provider-1"], status="UP")
    wait_until("provider-1 answers once UP again", lambda: calls.answered_by(start, "provider-1"),
               DEADLINE, logs=[calls.proc])


# ---------------------------------------------------------------------------------------
# TLS and authentication: the API's certificate and users on the xDS port
# ---------------------------------------------------------------------------------------
USER, PASSWORD = "eureka", "x5s-s3cret"
BASIC = {"Authorization": "Basic " + base64.b64encode(f"{USER}:{PASSWORD}".encode()).decode()}


@pytest.fixture(scope="module")
def secure_heureka(tracker, log_dir, pki, providers) -> procs.RegistryServer:
    """Heureka over HTTPS with authentication on; CN=reader is a user with the read role."""
    server = tracker.add(procs.HeurekaServer(log_dir, tls=pki.client_context(), settings={
        "server.ssl.enabled": "true",
        "server.ssl.certificate": pki.server.cert,
        "server.ssl.certificate-private-key": pki.server.key,
        "server.ssl.client-auth": "want",
        "server.ssl.trust-certificate": pki.ca_cert,
        "spring.security.user.name": USER,
        "spring.security.user.password": PASSWORD,
        "heureka.security.users[0].name": "reader",
        "heureka.security.users[0].certificate": "reader",
        "heureka.security.users[0].roles": "read",
        "heureka.xds.enabled": "true",
        "heureka.xds.port": str(procs.free_port()),
    }))
    server.proc.start()
    wait_until("heureka's readiness probe answers 200",
               lambda: wire.get(f"https://{server.host}:{server.port}/actuator/health/readiness",
                                context=server.tls).status == 200,
               30.0, logs=[server.proc])
    body = json.dumps({"instance": {
        "instanceId": "provider-1", "app": APP, "hostName": HOST, "ipAddr": HOST,
        "vipAddress": APP.lower(), "status": "UP",
        "port": {"$": providers["provider-1"], "@enabled": "true"},
        "dataCenterInfo": {"@class": "com.netflix.appinfo.InstanceInfo$DefaultDataCenterInfo",
                           "name": "MyOwn"},
    }})
    r = wire.request("POST", server.url(f"/apps/{APP}"),
                     {"Content-Type": "application/json", **BASIC}, body, context=server.tls)
    assert r.status == 204, r
    return server


def tls_client(tracker, log_dir, server, pki, name: str, identity) -> Calls:
    creds = {"ca_certificate_file": str(pki.ca_cert)}
    if identity is not None:
        creds.update({"certificate_file": str(identity.cert), "private_key_file": str(identity.key)})
    bootstrap = log_dir / f"{name}-bootstrap.json"
    bootstrap.write_text(json.dumps({
        "xds_servers": [{"server_uri": f"localhost:{server.settings['heureka.xds.port']}",
                         "channel_creds": [{"type": "tls", "config": creds}]}],
        "node": {"id": name},
    }))
    proc = procs.Proc(name, [binary(), "client", "-target", TARGET, "-interval", "50ms"],
                      log_dir, env={"GRPC_XDS_BOOTSTRAP": str(bootstrap)})
    tracker.add(_Wrapped(proc))
    proc.start()
    return Calls(proc)


def test_over_tls_a_client_certificate_mapped_to_a_reader_is_served(tracker, log_dir, pki,
                                                                     secure_heureka):
    calls = tls_client(tracker, log_dir, secure_heureka, pki, "grpc-client-reader", pki.reader)
    wait_until("the reader's calls reach provider-1 through the TLS xDS port",
               lambda: calls.answered_by(0, "provider-1"), DEADLINE,
               logs=[calls.proc, secure_heureka.proc])


def test_over_tls_a_client_without_a_user_is_refused(tracker, log_dir, pki, secure_heureka):
    calls = tls_client(tracker, log_dir, secure_heureka, pki, "grpc-client-anonymous", None)
    wait_until("heureka refuses the anonymous xDS stream",
               lambda: "rejected an unauthenticated xDS stream" in secure_heureka.proc.log_text(),
               DEADLINE, logs=[calls.proc, secure_heureka.proc])
    assert not calls.answered_by(0, "provider-1")
