"""Consumers stop calling an instance a second after Heureka stops serving it UP: a real Spring
Boot consumer with Heureka's Spring add-on (spring/, `docs/spring.md`) following the push.

The consumer is interop/java/spring-client built with the add-on (spring-client-push.jar) at
Spring's default client settings (registry fetch every 30 s, Spring Cloud LoadBalancer's cache
35 s): only the push can make it leave an instance within a second. It calls the provider by
name through a ``@LoadBalanced`` RestTemplate every 100 ms and reports, per target, the time of
its last call. The providers are small HTTP servers in this process, registered with plain REST
on node a of a three-node Heureka cluster; the consumer follows node c, so every change it sees
was replicated first.

* An operator's OUT_OF_SERVICE, a cancel, and a health check's DOWN (the provider's port closed,
  checks on): no call to the instance ends later than 1 s after Heureka stopped serving it UP.
* The stream cut by a proxy between the consumer and its node, a change made meanwhile, the
  proxy restored: the consumer resumes and leaves the instance long before its next fetch.
* Against the Java Eureka server (no push endpoint) the same consumer works as without the
  add-on: it discovers and calls the provider, and says once at INFO that it keeps to the fetch.

Every wait is a bounded poll; the module's processes are shared by its tests, each test on its
own provider.
"""
from __future__ import annotations

import json
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

from support import cluster as cl
from support import procs, wire
from support.proxy import FaultProxy
from support.procs import HOST, wait_until

APP = "PUSH-PROVIDER"
# Spring Cloud's defaults, written out (the spring-client app's application.yml is fast).
DEFAULTS = {
    "eureka.instance.lease-renewal-interval-in-seconds": "30",
    "eureka.instance.lease-expiration-duration-in-seconds": "90",
    "eureka.client.registry-fetch-interval-seconds": "30",
    "eureka.client.initial-instance-info-replication-interval-seconds": "40",
    "eureka.client.instance-info-replication-interval-seconds": "30",
}
CHECKS_ON = {
    "heureka.health-checks.enabled": "true",
    "heureka.health-checks.interval": "1s",
    "heureka.health-checks.timeout": "1s",
}
# The promise: no call ends later than this after Heureka stops serving the instance UP.
WITHIN_MS = 1000
# How long after the change the calls are read: long past the promise, well inside a fetch.
SETTLE_S = 3.0
CALL_INTERVAL_MS = 100


class Provider:
    """An HTTP server answering ``GET /whoami`` (and ``/health``) with JSON, registered by REST.
    ``close()`` closes its port, as a process that died would."""

    def __init__(self):
        self.instance = cl.new_instance(APP, duration=600)
        port = self.instance.port
        body = json.dumps({"port": port}).encode()

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args):
                pass

            def do_GET(self):
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

        self.server = ThreadingHTTPServer((HOST, port), Handler)
        self.server.daemon_threads = True
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    @property
    def target(self) -> str:
        return f"{HOST}:{self.instance.port}"

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()


class Via:
    """A registry seen through a proxy: what a client's service URL points at."""

    def __init__(self, port: int):
        self.service_url = cl.eureka_url(port)


def now_ms() -> int:
    return int(time.time() * 1000)


def calls(consumer) -> dict:
    return consumer.get_json("/calls")


def start_calls(consumer) -> None:
    """The consumer calls the provider by name every CALL_INTERVAL_MS, through the load balancer."""
    r = wire.request("POST", consumer.local(f"/calls/start?service={APP.lower()}&intervalMs={CALL_INTERVAL_MS}"),
                     {"Accept": "application/json"}, b"", timeout=10)
    assert r.status == 200, f"POST /calls/start -> {r.status}: {r.text[:300]}"


def last_call_ms(consumer, provider: Provider) -> int:
    """When the consumer's last call to the provider (answered or not) ended; 0 if never."""
    target = calls(consumer)["targets"].get(provider.target)
    return max(target["lastMs"], target["lastErrorMs"]) if target else 0


def wait_calling(consumer, providers: list[Provider]) -> None:
    """The consumer reaches each provider (the load balancer spreads its calls)."""
    def reached():
        targets = calls(consumer)["targets"]
        return all(p.target in targets and targets[p.target]["lastMs"] > 0 for p in providers)
    wait_until(f"{consumer.proc.name} calls {[p.target for p in providers]}", reached, 60, interval=0.2,
               logs=[consumer.proc])


def not_up_anywhere(nodes, provider: Provider) -> int:
    """Polls every node until one no longer serves the instance UP; returns when (ms)."""
    def gone():
        for node in nodes:
            found = node.get_instance(provider.instance.app, provider.instance.instance_id)
            if found is None or found["status"] != "UP":
                return now_ms()
        return None
    return wait_until(f"{provider.instance.instance_id} not UP on some node", gone, 30, interval=0.05)


def assert_left_within(consumer, provider: Provider, stopped_ms: int) -> None:
    """Reads the consumer's calls once SETTLE_S has passed: its last call to the provider ended
    no later than WITHIN_MS after Heureka stopped serving it UP."""
    wait_until("settle", lambda: now_ms() >= stopped_ms + SETTLE_S * 1000, SETTLE_S + 5, interval=0.1)
    last = last_call_ms(consumer, provider)
    print(f"{consumer.proc.name}: last call to {provider.target} ended {last - stopped_ms} ms after "
          f"Heureka stopped serving it UP")
    assert last <= stopped_ms + WITHIN_MS, (
        f"last call to {provider.target} ended {last - stopped_ms} ms after Heureka stopped serving it UP "
        f"(promise: {WITHIN_MS} ms)\n{calls(consumer)}")


class Setup:
    def __init__(self):
        self.cluster = None
        self.consumer = None          # follows node c directly
        self.proxied = None           # follows node c through `proxy`
        self.proxy = None
        self.steady = None            # a provider that stays UP, so calls always have a target


@pytest.fixture(scope="module")
def setup(cluster_factory, client_factory) -> Setup:
    s = Setup()
    s.cluster = cluster_factory(["heureka"] * 3, label="push", extra=CHECKS_ON)
    s.steady = Provider()
    cl.register(s.cluster[0], s.steady.instance)
    s.proxy = FaultProxy(s.cluster[2].port, "consumer->push-c").start()
    s.consumer = client_factory("spring-push", "push-consumer", s.cluster[2], start=False,
                                settings=dict(DEFAULTS))
    s.proxied = client_factory("spring-push", "push-proxied", Via(s.proxy.port), start=False,
                               settings=dict(DEFAULTS))
    procs.start_all([s.consumer, s.proxied])
    for consumer in (s.consumer, s.proxied):
        start_calls(consumer)
    yield s
    s.proxy.close()


def provider_in(s: Setup) -> Provider:
    """A new provider registered on node a, reached by both consumers."""
    provider = Provider()
    cl.register(s.cluster[0], provider.instance)
    wait_calling(s.consumer, [provider, s.steady])
    wait_calling(s.proxied, [provider, s.steady])
    return provider


def test_out_of_service_on_one_node_stops_calls_through_another_within_a_second(setup):
    provider = provider_in(setup)
    cl.set_status(setup.cluster[0], provider.instance, "OUT_OF_SERVICE")
    stopped = now_ms()
    assert_left_within(setup.consumer, provider, stopped)


def test_a_cancel_stops_calls_within_a_second(setup):
    provider = provider_in(setup)
    cl.cancel(setup.cluster[0], provider.instance)
    stopped = now_ms()
    assert_left_within(setup.consumer, provider, stopped)
    provider.close()


def test_a_health_check_down_stops_calls_within_a_second_of_the_verdict(setup):
    provider = provider_in(setup)
    provider.close()
    stopped = not_up_anywhere(setup.cluster, provider)
    assert_left_within(setup.consumer, provider, stopped)


def test_an_instance_back_in_service_is_called_again_without_a_fetch(setup):
    provider = provider_in(setup)
    cl.set_status(setup.cluster[0], provider.instance, "OUT_OF_SERVICE")
    assert_left_within(setup.consumer, provider, now_ms())
    cl.remove_status_override(setup.cluster[0], provider.instance)
    back = now_ms()
    wait_until(f"{provider.target} called again", lambda: last_call_ms(setup.consumer, provider) > back,
               10, interval=0.1)


def test_a_change_made_while_the_stream_is_cut_reaches_the_consumer_once_restored(setup):
    provider = provider_in(setup)
    setup.proxy.partition()
    cl.set_status(setup.cluster[0], provider.instance, "OUT_OF_SERVICE")
    wait_until("the change on node c", lambda: setup.cluster[2].get_instance(
        provider.instance.app, provider.instance.instance_id)["status"] == "OUT_OF_SERVICE", 10, interval=0.1)
    setup.proxy.pass_through()
    restored = now_ms()
    # The add-on reconnects (backing off at most a few seconds this early) and resumes; its
    # Eureka client would take up to 30 s (its fetch) plus 35 s (the load balancer's cache).
    wait_until(f"{setup.proxied.proc.name} leaves {provider.target}",
               lambda: now_ms() - last_call_ms(setup.proxied, provider) > 2000, 20, interval=0.2,
               logs=[setup.proxied.proc])
    assert last_call_ms(setup.proxied, provider) - restored < 15000, calls(setup.proxied)


@pytest.fixture(scope="module")
def java_setup(server_factory, client_factory):
    java = server_factory("java")
    provider = Provider()
    r = wire.request("POST", java.url(f"/apps/{APP}"), cl.JSON_BODY, provider.instance.body())
    assert r.status == 204, r.text
    consumer = client_factory("spring-push", "push-on-java", java,
                              settings={**DEFAULTS, "eureka.client.registry-fetch-interval-seconds": "5"})
    start_calls(consumer)
    return consumer, provider


def test_against_the_java_server_the_consumer_works_as_without_the_add_on(java_setup):
    consumer, provider = java_setup
    wait_calling(consumer, [provider])
    log = consumer.proc.log_text(max_chars=200000)
    fallbacks = [line for line in log.splitlines() if "INFO" in line and "Heureka push not in use" in line]
    assert len(fallbacks) == 1, "one INFO line saying it keeps to the fetch:\n" + "\n".join(fallbacks)
    assert "Following Heureka's push stream" not in log
