"""A cluster answers as one (issue 35, part 4): on every node of three Heureka nodes, the three
other views of the registry, Prometheus HTTP SD, DNS (asked with ``dig``) and xDS (an ADS stream
asking as gRPC's resolver does, interop/go/xds's dump mode), list exactly the instances that
node's own Eureka document shows UP, after writes made on different nodes: registrations, an
OUT_OF_SERVICE override, an instance registering DOWN, a cancel, and an override removed.
"""
from __future__ import annotations

import json
import shutil
import subprocess
from dataclasses import dataclass

import pytest

from support import cluster as c
from support.procs import HOST, INTEROP_DIR, free_port, wait_until
from test_dns import dig

XDS_TOOL = INTEROP_DIR / "go" / "xds" / "bin" / "xds"
APPS = ("ORDERS", "PAYMENTS", "STOCK")


@pytest.fixture(scope="module")
def fleet(cluster_factory):
    if shutil.which("dig") is None:
        pytest.fail("dig is not installed: apt-get install -y bind9-dnsutils", pytrace=False)
    if not XDS_TOOL.exists():
        pytest.fail(f"{XDS_TOOL} not found: cd interop/go/xds && go build -o bin/xds .", pytrace=False)
    ports = [{"dns": free_port(), "xds": free_port()} for _ in range(3)]
    nodes = {i: {"heureka.dns.enabled": "true", "heureka.dns.port": str(p["dns"]),
                 "heureka.dns.ttl": "1", "heureka.xds.enabled": "true", "heureka.xds.port": str(p["xds"])}
             for i, p in enumerate(ports)}
    cluster = cluster_factory(["heureka"] * 3, label="fleet", node_extra=nodes)
    return cluster, ports


@dataclass
class FleetInstance(c.Instance):
    """An instance at an address of its own (DNS and xDS answer addresses), registering with the
    status it is given."""
    ip: str = HOST
    status: str = "UP"

    def body(self) -> str:
        doc = json.loads(super().body())
        doc["instance"].update({"ipAddr": self.ip, "status": self.status})
        return json.dumps(doc)


def instance(app: str, n: int, status: str = "UP") -> FleetInstance:
    made = c.new_instance(app)
    return FleetInstance(made.app, made.instance_id, made.port, ip=f"10.35.{APPS.index(app)}.{n}",
                         status=status)


def eureka_up(node) -> dict[str, set[str]]:
    """The node's own full Eureka document: each application's UP instances' addresses."""
    doc = node.apps_json()
    apps = doc["applications"].get("application", [])
    up: dict[str, set[str]] = {app: set() for app in APPS}
    for app in apps:
        instances = app["instance"] if isinstance(app["instance"], list) else [app["instance"]]
        for i in instances:
            if i["status"] == "UP" and app["name"] in up:
                up[app["name"]].add(i["ipAddr"])
    return up


def sd_up(node) -> dict[str, set[str]]:
    r = node.call("GET", "/prometheus/sd")
    assert r.status == 200, f"{node.node_name}: GET /prometheus/sd -> {r.status}: {r.text[:300]}"
    groups = r.json()
    up: dict[str, set[str]] = {app: set() for app in APPS}
    for g in groups:
        labels = g["labels"]
        if labels["__meta_eureka_app_name"] in up:
            up[labels["__meta_eureka_app_name"]].add(labels["__meta_eureka_app_instance_ip_addr"])
    return up


def dns_up(dns_port: int) -> dict[str, set[str]]:
    return {app: set(dig(dns_port, f"{app.lower()}.eureka.", "A").data("A")) for app in APPS}


def xds_up(xds_port: int) -> dict[str, set[str]]:
    argv = [str(XDS_TOOL), "dump", "-server", f"{HOST}:{xds_port}", *(app.lower() for app in APPS)]
    done = subprocess.run(argv, capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, f"{argv}: {done.stdout}{done.stderr}"
    served = json.loads(done.stdout)
    return {app: {e["address"] for e in served.get(app.lower(), []) if e["health"] == "HEALTHY"}
            for app in APPS}


def views(node, ports) -> dict[str, dict[str, set[str]]]:
    return {"eureka": eureka_up(node), "prometheus-sd": sd_up(node), "dns": dns_up(ports["dns"]),
            "xds": xds_up(ports["xds"])}


def assert_every_node_agrees(cluster, ports, expected: dict[str, set[str]], what: str) -> None:
    """Waits until every node's Eureka document shows `expected`, then requires the three other
    views of that node to hold exactly the same (DNS after its 1 s TTL at most)."""
    for node, p in zip(cluster, ports):
        wait_until(f"{node.node_name}: {what} in its Eureka document", lambda: eureka_up(node) == expected,
                   c.REPLICATION_DEADLINE)
        def agreeing(node=node, p=p):
            seen = views(node, p)
            return seen if all(view == seen["eureka"] for view in seen.values()) else None
        seen = wait_until(f"{node.node_name}: every view agrees with its Eureka document ({what})", agreeing, 10)
        assert seen["eureka"] == expected, seen


def test_every_node_serves_the_same_up_instances_in_every_view(fleet):
    cluster, ports = fleet
    orders = [instance("ORDERS", n) for n in (1, 2)]
    payments = instance("PAYMENTS", 1)
    stock_down = instance("STOCK", 1, status="DOWN")
    # Writes on different nodes, replicated to the others.
    c.register(cluster[0], orders[0])
    c.register(cluster[1], orders[1])
    c.register(cluster[2], payments)
    c.register(cluster[0], stock_down)
    assert_every_node_agrees(cluster, ports, {"ORDERS": {orders[0].ip, orders[1].ip},
                                              "PAYMENTS": {payments.ip}, "STOCK": set()},
                             "two ORDERS, one PAYMENTS, STOCK only DOWN")

    c.set_status(cluster[1], orders[0], "OUT_OF_SERVICE")
    c.cancel(cluster[2], payments)
    assert_every_node_agrees(cluster, ports, {"ORDERS": {orders[1].ip}, "PAYMENTS": set(), "STOCK": set()},
                             "ORDERS 1 out of service, PAYMENTS cancelled")

    c.remove_status_override(cluster[2], orders[0])
    assert_every_node_agrees(cluster, ports, {"ORDERS": {orders[0].ip, orders[1].ip},
                                              "PAYMENTS": set(), "STOCK": set()},
                             "the override removed")
