"""A real Prometheus discovers its targets from heureka's HTTP service discovery.

Debian's ``prometheus`` (as in test_prometheus.py) runs with three jobs against one heureka
with authentication on:

* ``sd``: ``http_sd_configs`` on ``/eureka/prometheus/sd`` with a read-only user, a 1 s
  ``refresh_interval`` and relabelling rules on ``__meta_eureka_*`` labels;
* ``eureka``: Prometheus' own ``eureka_sd_configs`` on the same heureka with the same rules,
  the reference the labels are compared with (it lists every instance, whatever its status);
* ``refused``: ``http_sd_configs`` with a wrong password, which must discover nothing.

What is checked is what Prometheus itself holds (``/api/v1/targets``), never heureka's text.
Prometheus' discovery manager hands new target sets to the scrape manager at most every 5 s,
so the time an instance takes to leave Prometheus' targets is one SD refresh plus that
batching; it is measured and printed.
"""
from __future__ import annotations

import base64
import json
import shutil
import time
from pathlib import Path

import pytest

from support import procs, wire
from support.procs import HOST, wait_until

ADMIN, ADMIN_PASSWORD = "admin", "adm1n-s3cret"
READER, READER_PASSWORD = "prometheus", "sd-r3ader-s3cret"
AUTH = {"Authorization": "Basic " + base64.b64encode(f"{ADMIN}:{ADMIN_PASSWORD}".encode()).decode()}
REFRESH_S = 1
# One refresh, Prometheus' discovery batching (5 s), and room for a loaded machine.
GONE_WITHIN_S = REFRESH_S + 5 + 4
DEADLINE = 60.0

# Relabelling written for eureka_sd_configs, applied unchanged to both jobs.
RELABEL = """
    relabel_configs:
      - source_labels: [__meta_eureka_app_name]
        target_label: application
      - source_labels: [__meta_eureka_app_instance_metadata_zone]
        target_label: zone
      - source_labels: [__meta_eureka_app_instance_metadata_prometheus_io__002fscrape]
        target_label: scrape"""


def register(heureka: procs.RegistryServer, app: str, instance_id: str, port: int,
             status: str = "UP", metadata: dict | None = None) -> None:
    body = json.dumps({"instance": {
        "instanceId": instance_id, "app": app, "hostName": HOST, "ipAddr": HOST,
        "vipAddress": app.lower(), "secureVipAddress": app.lower() + "-secure", "status": status,
        "port": {"$": port, "@enabled": "true"}, "securePort": {"$": port + 1000, "@enabled": "false"},
        "homePageUrl": f"http://{HOST}:{port}/", "statusPageUrl": f"http://{HOST}:{port}/info",
        "healthCheckUrl": f"http://{HOST}:{port}/health",
        "dataCenterInfo": {"@class": "com.netflix.appinfo.InstanceInfo$DefaultDataCenterInfo",
                           "name": "MyOwn"},
        "metadata": metadata or {},
    }})
    r = wire.request("POST", heureka.url(f"/apps/{app}"),
                     {**AUTH, "Content-Type": "application/json"}, body)
    assert r.status == 204, r.text


@pytest.fixture(scope="module")
def heureka(tracker, log_dir) -> procs.RegistryServer:
    if not procs.HeurekaServer.binary().exists():
        pytest.fail(f"{procs.HeurekaServer.binary()} not found: build it or set HEUREKA_BIN",
                    pytrace=False)
    port = procs.free_port()
    server = tracker.add(procs.HeurekaServer(log_dir, port, settings={
        "eureka.client.service-url.defaultZone": f"http://{HOST}:{port}/eureka/",
        "spring.security.user.name": ADMIN,
        "spring.security.user.password": ADMIN_PASSWORD,
        "heureka.security.users[0].name": READER,
        "heureka.security.users[0].password": READER_PASSWORD,
        "heureka.security.users[0].roles": "read",
        "eureka.client.register-with-eureka": "false",
        "eureka.client.fetch-registry": "false",
    }))
    # Not server.start(): its readiness poll reads /eureka/apps without credentials.
    server.proc.start()
    wait_until("heureka's readiness probe answers 200",
               lambda: wire.get(f"http://{HOST}:{server.port}/actuator/health/readiness").status == 200,
               30.0, logs=[server.proc])
    return server


@pytest.fixture(scope="module")
def prometheus(tracker, log_dir, heureka, tmp_path_factory):
    binary = shutil.which("prometheus")
    if binary is None:
        pytest.fail("Debian's prometheus package is not installed: apt-get install -y prometheus",
                    pytrace=False)
    # Registered before Prometheus starts, so its first refresh sees them.
    register(heureka, "ORDERS", "orders-1", 18081, metadata={"zone": "eu-1", "prometheus.io/scrape": "true"})
    register(heureka, "ORDERS", "orders-2", 18082, metadata={"zone": "eu-2", "management.port": "19082",
                                                                 "build_id": "42"})
    register(heureka, "BILLING", "billing-1", 18083, metadata={"prometheus.io/port": "19083",
                                                        "prometheus.io/path": "/actuator/prometheus"})
    register(heureka, "STOCK", "stock-1", 18084, status="DOWN")
    base = f"http://{HOST}:{heureka.port}/eureka"
    work = tmp_path_factory.mktemp("prometheus-sd")
    config = work / "prometheus.yml"
    config.write_text(f"""
global:
  scrape_interval: 1m
scrape_configs:
  - job_name: sd
    http_sd_configs:
      - url: {base}/prometheus/sd
        refresh_interval: {REFRESH_S}s
        basic_auth: {{username: {READER}, password: {READER_PASSWORD}}}
{RELABEL}
  - job_name: eureka
    eureka_sd_configs:
      - server: {base}
        refresh_interval: {REFRESH_S}s
        basic_auth: {{username: {READER}, password: {READER_PASSWORD}}}
{RELABEL}
  - job_name: refused
    http_sd_configs:
      - url: {base}/prometheus/sd
        refresh_interval: {REFRESH_S}s
        basic_auth: {{username: {READER}, password: wrong}}
""")
    port = procs.free_port()
    proc = procs.Proc("prometheus-sd", [
        binary, f"--config.file={config}", f"--storage.tsdb.path={work / 'data'}",
        f"--web.listen-address={HOST}:{port}",
    ], log_dir)
    tracker.add(procs.PrometheusServer(proc))
    proc.start()
    wait_until("prometheus answers its readiness endpoint",
               lambda: wire.get(f"http://{HOST}:{port}/-/ready").status == 200, 30.0, logs=[proc])
    return f"http://{HOST}:{port}", proc


def active_targets(url: str, job: str) -> dict[str, dict]:
    """The job's active targets, by their `instance` label."""
    r = wire.get(f"{url}/api/v1/targets?state=active")
    assert r.status == 200, r.text
    return {t["labels"]["instance"]: t for t in r.json()["data"]["activeTargets"]
            if t["scrapePool"] == job}


def discovered(target: dict) -> dict[str, str]:
    """What discovery gave a target, without what depends on the job or the mechanism."""
    skip = {"job", "__meta_url"}
    return {k: v for k, v in target["discoveredLabels"].items() if k not in skip and v != ""}


def test_targets_appear_with_the_labels_eureka_sd_gives_them(heureka, prometheus):
    url, proc = prometheus
    wanted = {"orders-1", "orders-2", "billing-1"}

    def both_jobs():
        sd, eureka = active_targets(url, "sd"), active_targets(url, "eureka")
        return (sd, eureka) if set(sd) == wanted and wanted <= set(eureka) else None

    sd, eureka = wait_until("both jobs discover the UP instances", both_jobs, DEADLINE,
                            interval=0.5, logs=[proc, heureka.proc])
    assert "stock-1" in eureka, "eureka_sd lists a DOWN instance; the HTTP SD does not"
    for instance in ["orders-1", "orders-2"]:
        assert discovered(sd[instance]) == discovered(eureka[instance]), instance
    # Metadata keys named as eureka_sd names them: XStream's element coding, then sanitised.
    orders_2 = sd["orders-2"]["discoveredLabels"]
    assert orders_2["__meta_eureka_app_instance_metadata_management_port"] == "19082"
    assert orders_2["__meta_eureka_app_instance_metadata_build__id"] == "42"
    orders_1 = sd["orders-1"]["discoveredLabels"]
    assert orders_1["__meta_eureka_app_instance_metadata_prometheus_io__002fscrape"] == "true"
    # The prometheus.io conventions: eureka_sd has none of them.
    billing = sd["billing-1"]
    assert billing["discoveredLabels"]["__address__"] == f"{HOST}:19083"
    assert billing["discoveredLabels"]["__metrics_path__"] == "/actuator/prometheus"
    assert eureka["billing-1"]["discoveredLabels"]["__address__"] == f"{HOST}:18083"
    assert billing["scrapeUrl"] == f"http://{HOST}:19083/actuator/prometheus"


def test_relabelling_written_for_eureka_sd_works_unchanged(heureka, prometheus):
    url, proc = prometheus
    targets = wait_until("the sd job has its targets",
                         lambda: active_targets(url, "sd") if len(active_targets(url, "sd")) == 3
                         else None, DEADLINE, logs=[proc])
    orders_1 = targets["orders-1"]["labels"]
    assert orders_1["application"] == "ORDERS"
    assert orders_1["zone"] == "eu-1"
    assert orders_1["scrape"] == "true"
    assert targets["orders-2"]["labels"]["zone"] == "eu-2"
    assert "zone" not in targets["billing-1"]["labels"]


def test_a_wrong_password_discovers_nothing(heureka, prometheus):
    url, proc = prometheus

    def refused_and_counted():
        r = wire.get(f"{url}/metrics")
        failures = [line for line in r.text.splitlines()
                    if line.startswith("prometheus_sd_http_failures_total")]
        return failures and float(failures[0].split()[-1]) > 0

    wait_until("Prometheus counts failed HTTP SD refreshes", refused_and_counted, DEADLINE,
               logs=[proc])
    assert active_targets(url, "refused") == {}
    log = Path(heureka.proc.log_path).read_text(errors="replace")
    assert READER_PASSWORD not in "\n".join(l for l in log.splitlines() if not l.startswith("$ "))


def seconds_until_gone(url: str, instance: str, proc) -> float:
    started = time.monotonic()
    wait_until(f"{instance} leaves Prometheus' targets",
               lambda: instance not in active_targets(url, "sd"), DEADLINE, interval=0.1,
               logs=[proc])
    return time.monotonic() - started


def test_an_instance_out_of_service_or_down_leaves_within_one_refresh(heureka, prometheus):
    url, proc = prometheus
    wait_until("orders-2 and billing-1 are targets",
               lambda: {"orders-2", "billing-1"} <= set(active_targets(url, "sd")), DEADLINE,
               logs=[proc])

    r = wire.request("PUT", heureka.url("/apps/ORDERS/orders-2/status?value=OUT_OF_SERVICE"), AUTH)
    assert r.status == 200
    out_of_service = seconds_until_gone(url, "orders-2", proc)

    register(heureka, "BILLING", "billing-1", 18083, status="DOWN")
    down = seconds_until_gone(url, "billing-1", proc)
    print(f"\nleft Prometheus' targets after: OUT_OF_SERVICE {out_of_service:.2f} s, "
          f"DOWN {down:.2f} s (refresh {REFRESH_S} s, discovery batching 5 s)")
    assert out_of_service < GONE_WITHIN_S and down < GONE_WITHIN_S
    # Still listed by eureka_sd, which knows nothing of statuses.
    assert "orders-2" in active_targets(url, "eureka")

    r = wire.request("DELETE", heureka.url("/apps/ORDERS/orders-2/status?value=UP"), AUTH)
    assert r.status == 200
    wait_until("orders-2 is a target again once its override is removed",
               lambda: "orders-2" in active_targets(url, "sd"), DEADLINE, logs=[proc])
