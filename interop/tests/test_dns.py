"""Heureka's DNS server (``heureka.dns.*``) asked by real resolvers: BIND's ``dig`` (Debian's
``bind9-dnsutils``; scripts/test-all.sh installs it) and Go's own resolver (``net.Resolver``
with PreferGo, the program in interop/go/dns, built by interop/run.sh), against a real heureka
process whose registry is written over REST.

Checked: A and SRV answers of UP instances only, with the configured TTL; a status change seen
by the next query, within the TTL a cache would hold the old answer for; NXDOMAIN for an
unknown application and NOERROR without answers when none is UP, each with the SOA; SRV over
TCP with targets that resolve; an answer too long for UDP truncated (TC) and taken whole over
TCP by both clients; the asker's zone first; REFUSED outside the domain and over the per-source
rate limit.
"""
from __future__ import annotations

import json
import shutil
import socket
import subprocess
import time
from pathlib import Path

import pytest

from support import procs, wire
from support.procs import HOST, INTEROP_DIR, wait_until

TTL = 1
DNSPROBE = INTEROP_DIR / "go" / "dns" / "bin" / "dnsprobe"


def register(server: procs.RegistryServer, app: str, instance_id: str, ip: str,
             zone: str | None = None, port: int = 8080) -> None:
    metadata = {"zone": zone} if zone else {}
    body = json.dumps({"instance": {
        "instanceId": instance_id, "app": app, "hostName": ip, "ipAddr": ip,
        "vipAddress": app.lower(), "status": "UP", "metadata": metadata,
        "port": {"$": port, "@enabled": "true"},
        "securePort": {"$": 8443, "@enabled": "false"},
        "dataCenterInfo": {"@class": "com.netflix.appinfo.InstanceInfo$DefaultDataCenterInfo",
                           "name": "MyOwn"},
    }})
    r = wire.request("POST", server.url(f"/apps/{app}"), {"Content-Type": "application/json"}, body)
    assert r.status == 204, r.text


def set_status(server: procs.RegistryServer, app: str, instance_id: str, status: str | None) -> None:
    path = f"/apps/{app}/{instance_id}/status"
    if status is None:
        # As Eureka's clients remove an override: the instance's own status comes back UP.
        r = wire.request("DELETE", server.url(f"{path}?value=UP"))
    else:
        r = wire.request("PUT", server.url(f"{path}?value={status}"))
    assert r.status == 200, r.text


def start_heureka(tracker, log_dir, **dns) -> tuple[procs.HeurekaServer, int]:
    dns_port = procs.free_port()
    settings = {"heureka.dns.enabled": "true", "heureka.dns.port": str(dns_port),
                "heureka.dns.ttl": str(TTL)}
    settings.update({f"heureka.dns.{key.replace('_', '-')}": str(value) for key, value in dns.items()})
    server = tracker.add(procs.HeurekaServer(log_dir, settings=settings))
    server.start()
    return server, dns_port


@pytest.fixture(scope="module")
def heureka(tracker, log_dir):
    if shutil.which("dig") is None:
        pytest.fail("dig is not installed: apt-get install -y bind9-dnsutils", pytrace=False)
    if not DNSPROBE.exists():
        pytest.fail(f"{DNSPROBE} not found: cd interop/go/dns && go build -o bin/dnsprobe .", pytrace=False)
    return start_heureka(tracker, log_dir, max_answers=64)


class Dig:
    """One ``dig`` run's answer, read from its sections."""

    def __init__(self, text: str):
        self.text = text
        self.statuses: list[str] = []
        self.flags: list[set[str]] = []
        self.sections: dict[str, list[list[str]]] = {"ANSWER": [], "AUTHORITY": [], "ADDITIONAL": []}
        section = None
        for line in text.splitlines():
            if "->>HEADER<<-" in line:
                self.statuses.append(line.split("status: ")[1].split(",")[0])
            elif line.startswith(";; flags:"):
                self.flags.append(set(line.split(";; flags:")[1].split(";")[0].split()))
            elif line.startswith(";; ") and line.endswith(" SECTION:"):
                section = line[3:].split()[0]
            elif line.strip() and not line.startswith(";") and section in self.sections:
                self.sections[section].append(line.split())

    @property
    def status(self) -> str:
        assert len(self.statuses) == 1, self.text
        return self.statuses[0]

    def records(self, section: str = "ANSWER", rtype: str | None = None) -> list[list[str]]:
        return [r for r in self.sections[section] if rtype is None or r[3] == rtype]

    def data(self, rtype: str) -> list[str]:
        return [" ".join(r[4:]) for r in self.records("ANSWER", rtype)]


def dig(port: int, *args: str) -> Dig:
    argv = ["dig", f"@{HOST}", "-p", str(port), "+tries=1", "+time=3", "+nocmd", "+nostats",
            "+noquestion", *args]
    done = subprocess.run(argv, capture_output=True, text=True, timeout=30)
    assert done.returncode == 0, f"{argv}: {done.stdout}{done.stderr}"
    return Dig(done.stdout)


def go(port: int, *args: str) -> list[dict]:
    argv = [str(DNSPROBE), "-server", f"{HOST}:{port}", *args]
    done = subprocess.run(argv, capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, f"{argv}: {done.stdout}{done.stderr}"
    return [json.loads(line) for line in done.stdout.splitlines()]


def metric(server: procs.RegistryServer, series: str) -> float:
    text = wire.get(f"http://{HOST}:{server.port}/actuator/prometheus").text
    values = [line.split()[-1] for line in text.splitlines() if line.startswith(series + " ")]
    return float(values[0]) if values else 0.0


def test_dig_and_go_answer_the_up_instances_addresses_with_the_ttl(heureka):
    server, port = heureka
    register(server, "ORDERS", "orders-1", "10.1.0.1")
    register(server, "ORDERS", "orders-2", "10.1.0.2")
    answer = dig(port, "Orders.eureka.", "A")
    assert answer.status == "NOERROR"
    assert "aa" in answer.flags[0]
    assert sorted(answer.data("A")) == ["10.1.0.1", "10.1.0.2"]
    assert {r[1] for r in answer.records("ANSWER")} == {str(TTL)}
    [found] = go(port, "host", "orders.eureka.")
    assert sorted(found["addrs"]) == ["10.1.0.1", "10.1.0.2"], found


def test_an_instance_out_of_service_is_gone_from_the_next_query_within_the_ttl(heureka):
    server, port = heureka
    register(server, "CATALOG", "catalog-1", "10.1.1.1")
    register(server, "CATALOG", "catalog-2", "10.1.1.2")
    assert sorted(go(port, "host", "catalog.eureka.")[0]["addrs"]) == ["10.1.1.1", "10.1.1.2"]
    changed = time.monotonic()
    set_status(server, "CATALOG", "catalog-2", "OUT_OF_SERVICE")
    wait_until("Go's resolver no longer sees catalog-2",
               lambda: go(port, "host", "catalog.eureka.")[0].get("addrs") == ["10.1.1.1"],
               10.0, interval=0.1, logs=[server.proc])
    seen_after = time.monotonic() - changed
    print(f"OUT_OF_SERVICE seen by Go's resolver {seen_after * 1000:.0f} ms after the override")
    # The server keeps no answer: a resolver caching for the TTL is the only delay.
    assert seen_after <= TTL
    assert dig(port, "catalog.eureka.", "A").data("A") == ["10.1.1.1"]
    set_status(server, "CATALOG", "catalog-2", None)
    wait_until("catalog-2 is answered again once its override is removed",
               lambda: sorted(dig(port, "catalog.eureka.", "A").data("A")) == ["10.1.1.1", "10.1.1.2"],
               10.0, interval=0.1, logs=[server.proc])


def test_an_unknown_app_is_nxdomain_and_an_app_with_none_up_is_noerror_without_answers(heureka):
    server, port = heureka
    register(server, "PAYMENTS", "payments-1", "10.1.2.1")
    set_status(server, "PAYMENTS", "payments-1", "DOWN")
    unknown = dig(port, "nobody.eureka.", "A")
    assert unknown.status == "NXDOMAIN"
    [soa] = unknown.records("AUTHORITY", "SOA")
    assert soa[0] == "eureka." and soa[-1] == str(TTL), soa
    empty = dig(port, "payments.eureka.", "A")
    assert empty.status == "NOERROR"
    assert empty.records("ANSWER") == []
    assert len(empty.records("AUTHORITY", "SOA")) == 1
    # Go's resolver reports both as "no such host".
    for name in ["nobody.eureka.", "payments.eureka."]:
        [found] = go(port, "host", name)
        assert found.get("notfound") is True, found


def test_srv_over_tcp_answers_ports_with_targets_that_resolve(heureka):
    server, port = heureka
    register(server, "BILLING", "billing-1", "10.1.3.1", port=9001)
    answer = dig(port, "+tcp", "_billing._tcp.eureka.", "SRV")
    assert answer.data("SRV") == ["0 1 9001 10-1-3-1.billing.eureka."]
    assert [" ".join(r[i] for i in (0, 4)) for r in answer.records("ADDITIONAL", "A")] == \
        ["10-1-3-1.billing.eureka. 10.1.3.1"]
    [found] = go(port, "-tcp", "srv", "billing", "tcp", "eureka.")
    assert found["srvs"] == [{"target": "10-1-3-1.billing.eureka.", "port": 9001,
                              "priority": 0, "weight": 1}], found
    [target] = go(port, "host", found["srvs"][0]["target"])
    assert target["addrs"] == ["10.1.3.1"]
    assert dig(port, "_billing._https.eureka.", "SRV").records("ANSWER") == [], \
        "no secure port enabled: nothing under _https"


def test_an_answer_too_long_for_udp_is_truncated_and_taken_whole_over_tcp(heureka):
    server, port = heureka
    for n in range(1, 41):
        register(server, "SEARCH", f"search-{n}", f"10.2.0.{n}")
    before = metric(server, "heureka_dns_truncated_answers_total")
    cut = dig(port, "+noedns", "+ignore", "_search._tcp.eureka.", "SRV")
    assert "tc" in cut.flags[0], cut.text
    assert len(cut.records("ANSWER")) < 40
    whole = dig(port, "_search._tcp.eureka.", "SRV")   # dig retries over TCP on TC
    assert len(whole.data("SRV")) == 40
    [found] = go(port, "srv", "search", "tcp", "eureka.")   # so does Go, offering 1232 bytes
    assert len(found["srvs"]) == 40, found
    assert metric(server, "heureka_dns_truncated_answers_total") >= before + 3


def test_the_askers_zone_is_answered_first(heureka):
    server, port = heureka
    register(server, "GATEWAY", "gateway-1", "127.0.0.2", zone="zone-b")
    register(server, "STOCK", "stock-a", "10.3.0.1", zone="zone-a")
    register(server, "STOCK", "stock-b", "10.3.0.2", zone="zone-b")
    from_b = dig(port, "-b", "127.0.0.2", "_stock._tcp.eureka.", "SRV")
    assert sorted(from_b.data("SRV")) == ["0 1 8080 10-3-0-2.stock.eureka.",
                                          "1 1 8080 10-3-0-1.stock.eureka."]
    [found] = go(port, "-source", "127.0.0.2", "srv", "stock", "tcp", "eureka.")
    assert found["srvs"][0]["target"] == "10-3-0-2.stock.eureka.", found
    unknown_asker = dig(port, "_stock._tcp.eureka.", "SRV")
    assert {r.split()[0] for r in unknown_asker.data("SRV")} == {"0"}


def test_a_name_outside_the_domain_is_refused(heureka):
    _, port = heureka
    assert dig(port, "example.com.", "A").status == "REFUSED"


def test_a_source_over_the_rate_limit_is_refused_then_answered_again(tracker, log_dir, heureka):
    server, port = start_heureka(tracker, log_dir, rate_limit=5)
    burst = dig(port, *["nobody.eureka."] * 12)
    assert burst.statuses[:5] == ["NXDOMAIN"] * 5, burst.statuses
    assert "REFUSED" in burst.statuses[5:], burst.statuses
    refused = [line for line in go(port, "-count", "5", "host", "nobody.eureka.")
               if not line.get("notfound")]
    assert refused, "Go's resolver is refused too while the bucket is empty"
    wait_until("the source is answered again as its bucket refills",
               lambda: dig(port, "nobody.eureka.").status == "NXDOMAIN", 10.0, interval=0.3,
               logs=[server.proc])
    assert metric(server, 'heureka_dns_queries_total{outcome="rate_limited"}') >= 1


def test_a_dns_port_already_taken_stops_the_start_up_with_one_line_naming_the_key():
    http_port = procs.free_port()
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as taken:
        taken.bind((HOST, 0))
        dns_port = taken.getsockname()[1]
        done = subprocess.run([
            str(procs.HeurekaServer.binary()), f"--server.port={http_port}", f"--server.address={HOST}",
            f"--eureka.client.service-url.defaultZone=http://{HOST}:{http_port}/eureka/",
            "--eureka.client.register-with-eureka=false",
            "--heureka.dns.enabled=true", f"--heureka.dns.port={dns_port}",
        ], capture_output=True, text=True, timeout=30)
    assert done.returncode == 1, done
    [line] = done.stderr.splitlines()
    assert "heureka.dns.port" in line and f"{HOST}:{dns_port}" in line, line


def up_addresses(server: procs.RegistryServer, app: str) -> list[str]:
    """The addresses of ``app``'s UP instances in the node's own Eureka document."""
    return sorted(i["ipAddr"] for i in server.find_instances(app) if i["status"] == "UP")


def test_every_node_of_a_cluster_answers_what_its_own_eureka_documents_hold(tracker, log_dir, heureka):
    ports = [procs.free_port(), procs.free_port()]
    peers = ",".join(f"http://{HOST}:{port}/eureka/" for port in ports)
    nodes = []
    for port in ports:
        dns_port = procs.free_port()
        node = tracker.add(procs.HeurekaServer(log_dir, port, settings={
            "eureka.client.service-url.defaultZone": peers, "heureka.dns.enabled": "true",
            "heureka.dns.port": str(dns_port), "heureka.dns.ttl": str(TTL)}))
        node.start()
        nodes.append((node, dns_port))
    (first, _), (second, _) = nodes
    register(first, "LEDGER", "ledger-1", "10.4.0.1")
    register(first, "LEDGER", "ledger-2", "10.4.0.2")
    wait_until("the second node holds ledger-2, replicated",
               lambda: second.get_instance("LEDGER", "ledger-2"), 20.0, interval=0.1,
               logs=[first.proc, second.proc])
    set_status(second, "LEDGER", "ledger-2", "OUT_OF_SERVICE")

    def agree():
        views = [(up_addresses(node, "LEDGER"), sorted(dig(port, "ledger.eureka.").data("A")))
                 for node, port in nodes]
        return views if all(doc == answered == ["10.4.0.1"] for doc, answered in views) else None

    wait_until("both nodes' DNS answers what their documents hold, replicated", agree, 20.0,
               interval=0.2, logs=[first.proc, second.proc])
