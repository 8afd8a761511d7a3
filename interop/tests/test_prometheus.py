"""A real Prometheus scrapes a real heureka process, and the key series have the right values.

Debian's ``prometheus`` package (``apt-get install prometheus``; scripts/test-all.sh installs
it) is started on 127.0.0.1 with a temporary storage directory and a scrape config pointing at
heureka's ``/actuator/prometheus``, with basic auth, since heureka runs with authentication on
here, as a production registry does. The test then asks Prometheus' HTTP query API, so what is
checked is what Prometheus itself parsed and stored, not heureka's text.

The same heureka's log is checked for what an operator needs from it: the start-up line,
rejected requests at the Java server's levels, the access log (turned on here), and never
the password.
"""
from __future__ import annotations

import base64
import json
import shutil
import urllib.parse
from pathlib import Path

import pytest

from support import procs, wire
from support.procs import HOST, wait_until

USER, PASSWORD = "scraper", "pr0m-s3cret-value"
AUTH = {"Authorization": "Basic " + base64.b64encode(f"{USER}:{PASSWORD}".encode()).decode()}
DEADLINE = 60.0


def register_body(app: str, instance_id: str, port: int) -> str:
    return json.dumps({"instance": {
        "instanceId": instance_id, "app": app, "hostName": HOST, "ipAddr": HOST,
        "vipAddress": app.lower(), "status": "UP",
        "port": {"$": port, "@enabled": "true"},
        "dataCenterInfo": {"@class": "com.netflix.appinfo.InstanceInfo$DefaultDataCenterInfo",
                           "name": "MyOwn"},
    }})


@pytest.fixture(scope="module")
def heureka(tracker, log_dir) -> procs.RegistryServer:
    if not procs.HeurekaServer.binary().exists():
        pytest.fail(f"{procs.HeurekaServer.binary()} not found: build it or set HEUREKA_BIN",
                    pytrace=False)
    port = procs.free_port()
    server = tracker.add(procs.HeurekaServer(log_dir, port, settings={
        # its own URL as the only service URL: a single node, no peers to reach
        "eureka.client.service-url.defaultZone": f"http://{HOST}:{port}/eureka/",
        "spring.security.user.name": USER,
        "spring.security.user.password": PASSWORD,
        "eureka.client.register-with-eureka": "false",
        "eureka.client.fetch-registry": "false",
        "heureka.access-log": "true",
    }))
    # Not server.start(): its readiness poll reads /eureka/apps without credentials. The
    # readiness probe answers without them, which is what it is for.
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
    work = tmp_path_factory.mktemp("prometheus")
    config = work / "prometheus.yml"
    config.write_text(f"""
global:
  scrape_interval: 1s
  scrape_timeout: 1s
scrape_configs:
  - job_name: heureka
    metrics_path: /actuator/prometheus
    basic_auth:
      username: {USER}
      password: {PASSWORD}
    static_configs:
      - targets: ["{HOST}:{heureka.port}"]
""")
    port = procs.free_port()
    proc = procs.Proc("prometheus", [
        binary, f"--config.file={config}", f"--storage.tsdb.path={work / 'data'}",
        f"--web.listen-address={HOST}:{port}",
    ], log_dir)
    tracker.add(procs.PrometheusServer(proc))
    proc.start()
    api = f"http://{HOST}:{port}/api/v1"
    wait_until("prometheus answers its readiness endpoint",
               lambda: wire.get(f"http://{HOST}:{port}/-/ready").status == 200, 30.0, logs=[proc])
    return api, proc


def query(api: str, promql: str) -> list:
    response = wire.get(f"{api}/query?query={urllib.parse.quote(promql)}")
    assert response.status == 200, f"{promql}: {response.status} {response.text[:300]}"
    return response.json()["data"]["result"]


def value_of(api: str, promql: str):
    result = query(api, promql)
    return float(result[0]["value"][1]) if len(result) == 1 else None


def test_prometheus_scrapes_the_key_series_with_their_values(heureka, prometheus):
    api, proc = prometheus
    for app, instance_id, port in [("ORDERS", "orders-1", 8081), ("ORDERS", "orders-2", 8082),
                                   ("BILLING", "billing-1", 8083)]:
        r = wire.request("POST", heureka.url(f"/apps/{app}"),
                         {**AUTH, "Content-Type": "application/json"},
                         register_body(app, instance_id, port))
        assert r.status == 204, r.text
    r = wire.request("PUT", heureka.url("/apps/ORDERS/orders-2/status?value=OUT_OF_SERVICE"), AUTH)
    assert r.status == 200
    r = wire.request("DELETE", heureka.url("/apps/BILLING/billing-1"), AUTH)
    assert r.status == 200
    for _ in range(3):
        assert wire.request("PUT", heureka.url("/apps/ORDERS/orders-1"), AUTH).status == 200

    expected = {
        'up{job="heureka"}': 1,
        'heureka_instances{application="ORDERS",status="UP"}': 1,
        'heureka_instances{application="ORDERS",status="OUT_OF_SERVICE"}': 1,
        'heureka_registrations_total{origin="client"}': 3,
        'heureka_cancels_total{origin="client"}': 1,
        'heureka_renewals_total{origin="client"}': 3,
        'heureka_evictions_total': 0,
        # self-preservation is off in the interop settings: never active
        'heureka_self_preservation_active': 0,
        'heureka_ready': 1,
        'heureka_http_request_duration_seconds_count'
        '{method="POST",route="/eureka/apps/{app}",status="204"}': 3,
        'heureka_http_request_duration_seconds_count'
        '{method="PUT",route="/eureka/apps/{app}/{id}",status="200"}': 3,
    }

    def all_match():
        seen = {promql: value_of(api, promql) for promql in expected}
        return seen if all(seen[q] == v for q, v in expected.items()) else None

    try:
        wait_until("Prometheus has scraped every expected value", all_match, DEADLINE, interval=0.5,
                   logs=[proc, heureka.proc])
    except AssertionError:
        seen = {promql: value_of(api, promql) for promql in expected}
        raise AssertionError(f"expected {expected}\nPrometheus has {seen}")
    # The billing application was cancelled: its series is gone from the latest scrape.
    assert query(api, 'heureka_instances{application="BILLING"}') == []
    # Latency is a histogram Prometheus can compute quantiles from.
    quantile = value_of(api, 'histogram_quantile(0.99, sum by (le) '
                             '(heureka_http_request_duration_seconds_bucket{route="/eureka/apps/{app}"}))')
    assert quantile is not None and quantile > 0
    threshold = value_of(api, "heureka_renews_threshold")
    assert threshold is not None and threshold >= 1


def test_the_log_has_the_start_up_line_rejections_and_access_lines_but_never_the_password(heureka):
    url = heureka.url("/apps/GHOST/ghost-1")
    assert wire.request("PUT", url, AUTH).status == 404
    wrong = {"Authorization": "Basic " + base64.b64encode(f"{USER}:guess".encode()).decode()}
    assert wire.request("GET", heureka.url("/apps"), wrong).status == 401
    bad = wire.request("POST", heureka.url("/apps/ORDERS"), {**AUTH, "Content-Type": "application/json"},
                       "{not json")
    assert bad.status == 400

    def logged():
        text = Path(heureka.proc.log_path).read_text(errors="replace")
        wanted = ["WARN not found (renew)", "INFO rejected unauthenticated request (401)",
                  "WARN rejected request",
                  'INFO access method="PUT" uri=/eureka/apps/GHOST/ghost-1 status=404']
        return text if all(w in text for w in wanted) else None

    text = wait_until("the rejections are logged", logged, 10.0, logs=[heureka.proc])
    start_up = next(line for line in text.splitlines() if "heureka is serving the Eureka API" in line)
    assert f"auth=on (user {USER})" in start_up
    assert "peers=[]" in start_up, "a single node lists no peers"
    # The harness writes the command line (with the password) as the log's first line, "$ …".
    logged_by_heureka = "\n".join(line for line in text.splitlines() if not line.startswith("$ "))
    assert PASSWORD not in logged_by_heureka and "guess" not in logged_by_heureka
