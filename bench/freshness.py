#!/usr/bin/env python3
"""Freshness end to end: how long a Spring Cloud LoadBalancer consumer keeps calling a Spring Boot
instance after it was SIGKILLed or taken out of service, with and without Heureka's Spring
add-on (spring/, docs/spring.md) following the push, with Heureka's health checks on at their
defaults, off, and with the Java Eureka server, side by side in the same run; how long `heureka
drain` takes to confirm with consumers that follow the push and with consumers that fetch; and
what the health checks' probing costs the server (outside CI; issue 21).

    python3 bench/freshness.py                          # 3 rounds, about 25 minutes
    python3 bench/freshness.py --rounds 1               # about 9 minutes
    python3 bench/freshness.py --setups push,heureka-on,java --bin /path/to/heureka

Four setups. ``push`` and ``heureka-on`` share one registry: target/release/heureka (or
``--bin``) with ``--heureka.health-checks.enabled=true`` and every other health-check key at
its default (interval 2 s, two failures before DOWN, timeout 2 s); ``push``'s consumer is the
interop app built with the add-on (spring-client-push.jar), ``heureka-on``'s the same app
without it (spring-client.jar). Both consumers call the same providers, so both see the very
same registry. ``heureka-off`` is the same binary with the checks off (the default), ``java``
is interop/java/eureka-server. Those two have a consumer without the add-on. The servers get
the keys of the other benchmarks (bench/run.py ``COMMON_FLAGS``: standalone, self-preservation
off, response caches at their defaults) and are started once for the run. The jars and the
binary are copied before the run, so that a rebuild by someone else cannot change them half-way.

**SIGKILL** (every round, in every registry at once). Two provider instances (three in the
registry with checks on: one more for the OUT_OF_SERVICE step) and the consumers, all the
Spring Boot app of the interop suite (interop/java/spring-client) at Spring's default client
settings (heartbeat 30 s, lease 90 s, registry fetch 30 s, Spring Cloud LoadBalancer's cache
35 s; the app's own application.yml has fast test timings, so the defaults are passed
explicitly). Each consumer calls the provider application by name through a ``@LoadBalanced``
RestTemplate every ``--call-interval-ms`` (100) and records, per instance the load balancer
chose, the time of the last call and of the last failed call. Once every consumer has reached
every provider, and the provider to be killed has renewed its lease once (a steady-state
instance: the Java server gives a renewed lease one more duration than a lease only
registered), one provider of every registry is SIGKILLed at the same moment. The figure is the
time from the SIGKILL to the consumer's last call routed to the dead instance (each of those
failed: connection refused). Also recorded: when the registry stopped serving the instance as
UP (its application read polled every 100 ms, 500 ms for the Java server, whose answer passes
through its read-only cache as the consumers' fetches do), when each consumer's DiscoveryClient
dropped it, and how many calls failed. A consumer is followed until its DiscoveryClient no longer
lists the dead instance and then the load balancer's cache (35 s) has expired with a margin
(``--lb-cache-s`` + ``--margin-s``), with no call to the dead instance in that time; or until
``--cap-s`` after the kill, which the table then shows as "≥ cap".

**OUT_OF_SERVICE** (registry with checks on, after both of its consumers are done with the
kill). An operator's override on the third provider, ``PUT {base}/apps/APP/ID/status?value=
OUT_OF_SERVICE``, after a random pause of up to 35 s (so that it falls anywhere in the
consumers' fetch and cache cycles); the figure is the time from the write's answer to each
consumer's last call to that instance (negative: the last call ended before the answer was read),
followed as above.

**Drain**. Two more Heureka registries (health checks off: they play no part), each with
``--drain-consumers`` (3) Spring Boot consumers, all with the add-on on one and all without it
on the other. Each consumer reaches its registry through a small proxy of this process that
connects from a loopback address of its own (127.0.0.2, .3, ...): the registry tells consumers
apart by address and client name, and consumers on one address with one User-Agent count as
one. Those consumers start with the first round and stay up. Every round, starting 5 s after the
kill, ``--drains-per-round`` (2) times: a fresh instance is registered on both registries and
``heureka drain APP ID --timeout 60 --eureka URL`` is run on both at once, timed from starting
the command to its exit 0 (every consumer confirmed). Consumers with the add-on confirm when
they acknowledge the pushed change; the others on their next fetch (within 30 s).

**Probing cost** (once, before the rounds). Two more Heureka registries, health checks on at the
default interval and off, each with ``--probe-instances`` (200) instances (lease 1 h) whose
healthCheckUrl points at small HTTP servers of this process (one port each). After a 10 s
warm-up the servers' CPU time (utime + stime from /proc/PID/stat) is read over
``--probe-window-s`` (60 s), and the HTTP servers count the probes: CPU seconds per second
for each, and the difference per probe.

Writes bench/results/freshness.md and freshness.json (after every round). Standard library only.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import random
import shutil
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import threading
import time
import urllib.error
import urllib.request
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import run as bench  # noqa: E402  (build, start_server, free_port, COMMON_FLAGS, RUN_BIN)

SPRING_JAR = bench.JAVA_DIR / "spring-client" / "target" / "spring-client.jar"
SPRING_PUSH_JAR = bench.JAVA_DIR / "spring-client" / "target" / "spring-client-push.jar"
JARS = {"plain": SPRING_JAR, "push": SPRING_PUSH_JAR}        # replaced by the run's copies
HOST = "127.0.0.1"
SETUPS = ("push", "heureka-on", "heureka-off", "java")
# the registry each setup's consumer follows (push and heureka-on share one)
REGISTRY = {"push": "heureka-checks", "heureka-on": "heureka-checks", "heureka-off": "heureka-off", "java": "java"}
JAR_OF = {"push": "push", "heureka-on": "plain", "heureka-off": "plain", "java": "plain"}
LABEL = {"push": "Heureka, checks on (defaults), consumer with the add-on",
         "heureka-on": "Heureka, checks on (defaults), consumer without the add-on",
         "heureka-off": "Heureka, checks off", "java": "Java Eureka server"}
SHORT = {"push": "with the add-on", "heureka-on": "checks on, no add-on", "heureka-off": "checks off",
         "java": "Java"}
HEALTH_CHECKS_ON = ["--heureka.health-checks.enabled=true"]      # every other key at its default
# Spring Cloud Netflix's defaults, written out (the app's application.yml has test timings)
SPRING_DEFAULTS = {
    "eureka.instance.lease-renewal-interval-in-seconds": "30",
    "eureka.instance.lease-expiration-duration-in-seconds": "90",
    "eureka.client.registry-fetch-interval-seconds": "30",
    "eureka.client.initial-instance-info-replication-interval-seconds": "40",
    "eureka.client.instance-info-replication-interval-seconds": "30",
}
PROVIDER = "fresh-provider"
CONSUMER = "fresh-consumer"
DRAIN_APP = "drain-target"
PROBE_APP = "probe-target"
TARGETS = {"push": "≤ 5 s", "gap": "≤ 1 s"}


class BenchError(Exception):
    pass


def log(msg: str) -> None:
    bench.log(msg)


def now_ms() -> int:
    return int(time.time() * 1000)


def http(method: str, url: str, accept: str = "application/json", timeout: float = 5.0,
         body: bytes | None = None) -> tuple[int, bytes]:
    headers = {"Accept": accept}
    if body is not None:
        headers["Content-Type"] = "application/json"
    data = body if body is not None else (b"" if method in ("POST", "PUT") else None)
    req = urllib.request.Request(url, data=data, method=method, headers=headers)
    try:
        with urllib.request.urlopen(req, timeout=timeout) as r:
            return r.status, r.read()
    except urllib.error.HTTPError as e:
        return e.code, e.read()


def get_json(url: str, timeout: float = 5.0):
    status, body = http("GET", url, timeout=timeout)
    if status != 200:
        raise BenchError(f"GET {url} -> {status}")
    return json.loads(body)


def wait_for(what: str, probe, timeout: float, interval: float = 0.5):
    deadline = time.monotonic() + timeout
    last = None
    while time.monotonic() < deadline:
        try:
            value = probe()
            if value:
                return value
            last = value
        except (OSError, ValueError, BenchError) as e:
            last = f"{type(e).__name__}: {e}"
        time.sleep(interval)
    raise BenchError(f"timed out after {timeout:.0f}s: {what} (last: {last})")


def heureka_knows_health_checks() -> bool:
    """The binary refuses an unknown heureka.* key before it reads server.port."""
    out = subprocess.run([str(bench.RUN_BIN["heureka"]), "--heureka.health-checks.enabled=true",
                          "--server.port=not-a-port"], capture_output=True, text=True, timeout=30,
                         stdin=subprocess.DEVNULL)
    return "heureka.health-checks" not in out.stderr


def health_check_defaults() -> str:
    """The health-check keys as `heureka --help` states them (recorded with the results)."""
    try:
        out = subprocess.run([str(bench.RUN_BIN["heureka"]), "--help"], capture_output=True, text=True,
                             timeout=30, stdin=subprocess.DEVNULL)
    except (OSError, subprocess.TimeoutExpired) as e:
        return f"? ({e})"
    keys = ("interval", "timeout", "failures-before-down", "jitter")
    found = {}
    for line in (out.stdout + out.stderr).splitlines():
        parts = line.split()
        if len(parts) >= 2 and parts[0] in {f"heureka.health-checks.{k}" for k in keys}:
            found[parts[0].rsplit(".", 1)[1]] = parts[1]
    return ", ".join(f"{k} {found[k]}" for k in keys if k in found) or "?"


def instance_body(app: str, port: int, health_url: str | None, lease_s: int = 3600) -> bytes:
    """A registration as a plain Eureka client sends it, for an instance at HOST:port."""
    iid = f"{HOST}:{app}:{port}"
    inst = {"instanceId": iid, "app": app.upper(), "ipAddr": HOST, "hostName": HOST, "vipAddress": app,
            "secureVipAddress": app, "status": "UP", "overriddenStatus": "UNKNOWN",
            "port": {"$": port, "@enabled": "true"}, "securePort": {"$": 443, "@enabled": "false"},
            "homePageUrl": f"http://{HOST}:{port}/", "statusPageUrl": f"http://{HOST}:{port}/info",
            "dataCenterInfo": {"@class": "com.netflix.appinfo.InstanceInfo$DefaultDataCenterInfo", "name": "MyOwn"},
            "leaseInfo": {"renewalIntervalInSecs": 30, "durationInSecs": lease_s}, "metadata": {}}
    if health_url:
        inst["healthCheckUrl"] = health_url
    return json.dumps({"instance": inst}).encode()


def register(server: bench.Running, app: str, port: int, health_url: str | None = None) -> str:
    status, body = http("POST", f"{server.url}/eureka/apps/{app.upper()}", body=instance_body(app, port, health_url))
    if status not in (200, 204):
        raise BenchError(f"register {app}:{port} -> {status} {body[:200]!r}")
    return f"{HOST}:{app}:{port}"


class Spring:
    """One spring-client JVM, in its own session (killed by its own pid only)."""

    def __init__(self, name: str, service_url: str, log_dir: Path, tag: str, jar: str = "plain"):
        self.name, self.jar = name, jar
        self.port = bench.free_port()
        self.instance_id = f"{HOST}:{name}:{self.port}"
        self.log_path = log_dir / f"{tag}-{name}-{self.port}.log"
        argv = ["java", "-XX:TieredStopAtLevel=1", "-Xmx384m", "-jar", str(JARS[jar]),
                f"--server.port={self.port}", f"--server.address={HOST}",
                f"--spring.application.name={name}",
                f"--eureka.client.service-url.defaultZone={service_url}",
                f"--eureka.instance.ip-address={HOST}", f"--eureka.instance.hostname={HOST}",
                f"--spring.cloud.client.hostname={HOST}", "--spring.main.banner-mode=off",
                *[f"--{k}={v}" for k, v in SPRING_DEFAULTS.items()]]
        log = open(self.log_path, "wb")
        self.proc = subprocess.Popen(argv, stdout=log, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
                                     cwd=log_dir, start_new_session=True)
        log.close()
        bench.STARTED.append(self.proc)

    @property
    def target(self) -> str:
        return f"{HOST}:{self.port}"

    def url(self, path: str) -> str:
        return f"http://{HOST}:{self.port}{path}"

    def wait_ready(self, timeout: float = 420) -> None:
        def ready():
            if self.proc.poll() is not None:
                raise SystemExit(f"{self.name} exited during start-up (log {self.log_path})")
            return http("GET", self.url("/services"), timeout=2)[0] == 200
        wait_for(f"{self.name} on {self.port} serves /services", ready, timeout)

    def log_has(self, text: str) -> bool:
        try:
            return text in self.log_path.read_text(errors="replace")
        except OSError:
            return False

    def sigkill(self) -> None:
        os.killpg(self.proc.pid, signal.SIGKILL)     # its own session: pgid == pid
        self.proc.wait(timeout=120)
        if self.proc in bench.STARTED:
            bench.STARTED.remove(self.proc)

    def stop(self) -> None:
        bench.stop_process(self.proc)


def registry_status(server: bench.Running, app: str, instance_id: str) -> str | None:
    """The instance's status in the registry's application read (None: not there)."""
    status, body = http("GET", f"{server.url}/eureka/apps/{app.upper()}", timeout=3)
    if status == 404:
        return None
    if status != 200:
        raise BenchError(f"GET /eureka/apps/{app.upper()} -> {status}")
    insts = json.loads(body)["application"].get("instance") or []
    if isinstance(insts, dict):
        insts = [insts]
    for i in insts:
        if i["instanceId"] == instance_id:
            return i["status"]
    return None


def follow(consumer: Spring, victim: Spring, t0_ms: int, cap_s: float, before: dict) -> dict:
    """After t0 (a kill, a write): polls the consumer until its DiscoveryClient no longer lists the
    victim and then no call went to it for the load balancer's cache period plus the margin, or
    until cap_s. `before` is the victim's entry in the consumer's /calls just before t0."""
    r = {"discovery_gone_s": None, "capped": False, "last_ms": None}
    lb_wait = ARGS.lb_cache_s + ARGS.margin_s
    while True:
        now = now_ms()
        since = (now - t0_ms) / 1000
        if r["discovery_gone_s"] is None:
            try:
                listed = [i["instanceId"] for i in get_json(consumer.url(f"/instances/{PROVIDER}"), timeout=3)]
                if victim.instance_id not in listed:
                    r["discovery_gone_s"] = since
            except (OSError, ValueError, BenchError):
                pass
        try:
            calls = get_json(consumer.url("/calls"), timeout=3)
        except (OSError, ValueError, BenchError):
            time.sleep(0.5)
            continue
        t = calls["targets"].get(victim.target, {})
        last_ms = max(t.get("lastMs", 0), t.get("lastErrorMs", 0))
        r["last_ms"] = last_ms or None
        r["calls_after"] = t.get("calls", 0) - before.get("calls", 0)
        r["errors_after"] = t.get("errors", 0) - before.get("errors", 0)
        quiet_s = (now - last_ms) / 1000 if last_ms else since
        if r["discovery_gone_s"] is not None and since - r["discovery_gone_s"] >= lb_wait and quiet_s >= lb_wait:
            return r
        if since >= cap_s:
            r["capped"] = True
            return r
        time.sleep(0.5)


def poll_registry(server: bench.Running, victim: Spring, t0_ms: int, every_s: float, cap_s: float,
                  out: dict, want_not: str = "UP") -> None:
    """Polls the registry's application read until the victim is no longer served as UP."""
    out.update(server_gone_s=None, server_status=None)
    while (now_ms() - t0_ms) / 1000 < cap_s:
        try:
            status = registry_status(server, PROVIDER, victim.instance_id)
        except (OSError, ValueError, BenchError):
            status = "?"
        if status != want_not and status != "?":
            out["server_gone_s"] = (now_ms() - t0_ms) / 1000
            out["server_status"] = status or "absent"
            return
        time.sleep(every_s)


class RegistryRound:
    """One registry's round: its providers, its consumers (one per setup on it), and what was seen."""

    def __init__(self, registry: str, server: bench.Running, setups: list[str], log_dir: Path, rnd: int):
        self.registry, self.server, self.setups = registry, server, setups
        tag = f"r{rnd}-{registry}"
        url = f"http://{HOST}:{server.port}/eureka/"
        self.dead = Spring(PROVIDER, url, log_dir, tag)
        self.alive = Spring(PROVIDER, url, log_dir, tag)
        self.oos = Spring(PROVIDER, url, log_dir, tag) if registry == "heureka-checks" and not ARGS.no_oos else None
        self.providers = [p for p in (self.dead, self.alive, self.oos) if p]
        self.consumers = {s: Spring(CONSUMER, url, log_dir, f"{tag}-{s}", JAR_OF[s]) for s in setups}
        self.kill: dict = {}
        self.oos_result: dict = {}

    def calls(self, consumer: Spring) -> dict:
        return get_json(consumer.url("/calls"))

    def prepare(self) -> None:
        for p in (*self.providers, *self.consumers.values()):
            p.wait_ready()
        for c in self.consumers.values():
            http("POST", c.url(f"/calls/start?service={PROVIDER}&intervalMs={ARGS.call_interval_ms}"))

        def all_reached():
            for c in self.consumers.values():
                targets = self.calls(c)["targets"]
                if not all(targets.get(p.target, {}).get("calls", 0) > targets.get(p.target, {}).get("errors", 0)
                           for p in self.providers):
                    return False
            return True
        wait_for(f"{self.registry}: every consumer reaches every provider", all_reached, 300, interval=1.0)
        # a provider in its steady state: it has renewed its lease at least once (the Java server
        # expires a renewed lease one duration later than a lease only registered)
        wait_for(f"{self.registry}: the provider to be killed has renewed its lease", self.renewed, 120, interval=1.0)
        for s, c in self.consumers.items():
            if JAR_OF[s] == "push":
                wait_for(f"{self.registry}: {s} follows the push stream",
                         lambda c=c: c.log_has("Following Heureka's push stream"), 60, interval=1.0)

    def renewed(self) -> bool:
        """Whether the server holds a renewal of the dead-to-be provider after its registration
        (the single-instance read, which neither server caches)."""
        doc = get_json(f"{self.server.url}/eureka/apps/{PROVIDER.upper()}/{self.dead.instance_id}")
        lease = doc["instance"]["leaseInfo"]
        return int(lease["lastRenewalTimestamp"]) > int(lease["registrationTimestamp"])

    def targets_of(self, victim: Spring) -> dict:
        out = {}
        for s, c in self.consumers.items():
            try:
                out[s] = self.calls(c)["targets"].get(victim.target, {})
            except (OSError, ValueError, BenchError):
                out[s] = {}
        return out

    def after_kill(self, kill_ms: int, before: dict) -> None:
        every = 0.5 if self.registry == "java" else 0.1
        reg: dict = {}
        poller = threading.Thread(target=poll_registry, args=(self.server, self.dead, kill_ms, every, ARGS.cap_s, reg))
        poller.start()
        results: dict = {}

        def one(s: str, c: Spring) -> None:
            results[s] = follow(c, self.dead, kill_ms, ARGS.cap_s, before.get(s, {}))
        threads = [threading.Thread(target=one, args=(s, c)) for s, c in self.consumers.items()]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        poller.join(timeout=5)
        for s, f in results.items():
            last = f["last_ms"]
            last_s = max(0.0, (last - kill_ms) / 1000) if last else 0.0
            gone = reg.get("server_gone_s")
            self.kill[s] = {"last_call_s": last_s, "server_gone_s": gone, "server_status": reg.get("server_status"),
                            "gap_s": None if gone is None else round(last_s - gone, 3),
                            "discovery_gone_s": f["discovery_gone_s"], "dead_errors": f["errors_after"],
                            "capped": f["capped"]}
        if self.oos:
            self.out_of_service()

    def out_of_service(self) -> None:
        """An operator's OUT_OF_SERVICE on the third provider: ms from the write's answer to each
        consumer's last call to it. The write comes after a random pause of up to one load
        balancer cache period: otherwise it would fall at the same point of the consumers' fetch
        and cache cycles in every round (the kill's follow-up ends a fixed time after a fetch)."""
        pause = random.uniform(0.0, ARGS.lb_cache_s)
        time.sleep(pause)
        before = self.targets_of(self.oos)
        url = f"{self.server.url}/eureka/apps/{PROVIDER.upper()}/{self.oos.instance_id}/status?value=OUT_OF_SERVICE"
        status, body = http("PUT", url)
        answer_ms = now_ms()
        if status != 200:
            self.oos_result = {"error": f"PUT status -> {status} {body[:200]!r}"}
            return
        results: dict = {}

        def one(s: str, c: Spring) -> None:
            results[s] = follow(c, self.oos, answer_ms, ARGS.oos_cap_s, before.get(s, {}))
        threads = [threading.Thread(target=one, args=(s, c)) for s, c in self.consumers.items()]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        for s, f in results.items():
            self.oos_result[s] = {"pause_s": round(pause, 1),
                                  "last_call_ms": None if not f["last_ms"] else f["last_ms"] - answer_ms,
                                  "discovery_gone_s": f["discovery_gone_s"], "calls_after": f["calls_after"],
                                  "capped": f["capped"]}

    def stop(self) -> None:
        for p in (*self.consumers.values(), *self.providers):
            if p.proc.poll() is None:
                p.stop()


# --------------------------------------------------------------------------------------------
# Drain: consumers told apart by a source address of their own


class SourceProxy:
    """Listens on 127.0.0.1 and forwards each connection to `target_port`, connecting from
    `source` (another loopback address): the registry sees the consumer at that address."""

    def __init__(self, target_port: int, source: str):
        self.target_port, self.source = target_port, source
        self.listener = socket.create_server((HOST, 0))
        self.port = self.listener.getsockname()[1]
        threading.Thread(target=self._accept, daemon=True).start()

    def _accept(self):
        while True:
            try:
                client, _ = self.listener.accept()
            except OSError:
                return
            try:
                upstream = socket.create_connection((HOST, self.target_port), timeout=10,
                                                    source_address=(self.source, 0))
                upstream.settimeout(None)
            except OSError:
                client.close()
                continue
            for a, b in ((client, upstream), (upstream, client)):
                threading.Thread(target=self._pipe, args=(a, b), daemon=True).start()

    @staticmethod
    def _pipe(src, dst):
        try:
            while data := src.recv(65536):
                dst.sendall(data)
        except OSError:
            pass
        finally:
            for s in (src, dst):
                try:
                    s.shutdown(socket.SHUT_RDWR)
                except OSError:
                    pass

    def close(self):
        self.listener.close()


class DrainFleet:
    """A Heureka registry with N consumers of one kind (with the add-on or without), each behind
    a SourceProxy of its own."""

    def __init__(self, kind: str, log_dir: Path, first_address: int):
        self.kind = kind
        self.server = bench.start_server("heureka", log_dir, f"drain-{kind}", [])
        # start_server's readiness read (a full fetch from 127.0.0.1) makes the registry book a
        # consumer that never fetches again: a drain waits for it until it is older than
        # heureka.consumers.active-within (90 s). The first drain comes after that.
        self.usable_at = time.monotonic() + 95.0
        self.addresses = [f"127.0.0.{first_address + i}" for i in range(ARGS.drain_consumers)]
        self.proxies = [SourceProxy(self.server.port, a) for a in self.addresses]
        self.consumers = [Spring(f"drain-{kind}-{i + 1}", f"http://{HOST}:{p.port}/eureka/", log_dir,
                                 f"drain-{kind}", kind) for i, p in enumerate(self.proxies)]
        self.ready = threading.Event()
        self.error: str | None = None
        self.seq = 0

    def wait_ready(self) -> None:
        try:
            for c in self.consumers:
                c.wait_ready()

            def listed():
                doc = get_json(f"{self.server.url}/eureka/consumers")
                seen = {c["address"]: c for c in doc.get("consumers", [])}
                return all(a in seen and (self.kind != "push" or seen[a].get("push")) for a in self.addresses)
            wait_for(f"drain-{self.kind}: the registry lists {len(self.addresses)} consumers"
                     f"{' following the push' if self.kind == 'push' else ''}", listed, 240, interval=1.0)
        except (BenchError, SystemExit) as e:
            self.error = str(e)
        finally:
            self.ready.set()

    def drain_once(self) -> dict:
        self.seq += 1
        port = 20000 + self.seq            # nothing listens there: the checks are off on this registry
        iid = register(self.server, DRAIN_APP, port)
        time.sleep(1.0)                    # the registration reaches the consumers first
        argv = [str(bench.RUN_BIN["heureka"]), "drain", DRAIN_APP.upper(), iid, "--timeout",
                str(ARGS.drain_timeout), "--eureka", f"{self.server.url}/eureka/"]
        t0 = time.perf_counter()
        try:
            p = subprocess.run(argv, capture_output=True, text=True, timeout=ARGS.drain_timeout + 30,
                               stdin=subprocess.DEVNULL)
            elapsed = time.perf_counter() - t0
            out = {"s": round(elapsed, 3), "rc": p.returncode,
                   "confirmed": sum(1 for line in p.stdout.splitlines() if line.startswith("confirmed")),
                   "not_confirmed": sum(1 for line in p.stdout.splitlines() if line.startswith("NOT CONFIRMED"))}
            out["output"] = (p.stdout + p.stderr)[-1500:]
        except subprocess.TimeoutExpired:
            out = {"s": None, "rc": None, "error": f"no exit within {ARGS.drain_timeout + 30} s"}
        http("DELETE", f"{self.server.url}/eureka/apps/{DRAIN_APP.upper()}/{iid}")
        return out

    def stop(self) -> None:
        for c in self.consumers:
            if c.proc.poll() is None:
                c.stop()
        for p in self.proxies:
            p.close()


def drains(fleets: dict, results: dict, start_at: float) -> None:
    """Runs --drains-per-round drains on every fleet at once, the first at `start_at`."""
    while time.monotonic() < start_at:
        time.sleep(0.2)
    for kind, fleet in fleets.items():
        fleet.ready.wait(timeout=600)
        if fleet.error:
            results.setdefault("errors", {})[kind] = fleet.error
    live = {k: f for k, f in fleets.items() if not f.error}
    while any(time.monotonic() < f.usable_at for f in live.values()):
        time.sleep(0.5)
    for i in range(ARGS.drains_per_round):
        got: dict = {}
        threads = [threading.Thread(target=lambda k=k, f=f: got.__setitem__(k, f.drain_once())) for k, f in live.items()]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        for k, v in got.items():
            results.setdefault(k, []).append(v)
        log("drain: " + "; ".join(f"{k} {v['s']} s (exit {v['rc']}, {v.get('confirmed')} confirmed)" for k, v in got.items()))
        if i + 1 < ARGS.drains_per_round:
            time.sleep(random.uniform(2.0, 8.0))


# --------------------------------------------------------------------------------------------
# Probing cost


class Responders:
    """N small HTTP servers (one port each) on one asyncio loop in a thread, answering 200 to any
    request and counting them."""

    def __init__(self, n: int):
        self.count = 0
        self.connections = 0
        self.ports: list[int] = []
        self.loop = asyncio.new_event_loop()
        started = threading.Event()
        self.error = None

        async def handle(reader, writer):
            self.connections += 1
            try:
                while True:
                    await reader.readuntil(b"\r\n\r\n")
                    self.count += 1
                    writer.write(b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: 15\r\n\r\n"
                                 b'{"status":"UP"}')
                    await writer.drain()
            except (asyncio.IncompleteReadError, asyncio.LimitOverrunError, ConnectionError):
                pass
            finally:
                writer.close()

        async def main():
            for _ in range(n):
                srv = await asyncio.start_server(handle, HOST, 0)
                self.ports.append(srv.sockets[0].getsockname()[1])
            started.set()
            await asyncio.Event().wait()

        def run():
            try:
                self.loop.run_until_complete(main())
            except Exception as e:  # noqa: BLE001
                self.error = e
                started.set()
        threading.Thread(target=run, daemon=True).start()
        if not started.wait(60) or self.error:
            raise BenchError(f"responders did not start: {self.error}")


def probe_cost(log_dir: Path) -> dict:
    n, window = ARGS.probe_instances, ARGS.probe_window_s
    log(f"probing cost: {n} instances, checks on (default interval) vs off, {window:.0f} s")
    resp = Responders(n)
    servers = {"on": bench.start_server("heureka", log_dir, "probe-on", HEALTH_CHECKS_ON),
               "off": bench.start_server("heureka", log_dir, "probe-off", [])}
    try:
        for srv in servers.values():
            for port in resp.ports:
                register(srv, PROBE_APP, port, f"http://{HOST}:{port}/health")
        time.sleep(10.0)                                    # warm-up: every instance probed a few times
        cpu0 = {k: s.cpu() for k, s in servers.items()}
        count0, conns0, t0 = resp.count, resp.connections, time.monotonic()
        time.sleep(window)
        cpu1 = {k: s.cpu() for k, s in servers.items()}
        count1, conns1, t1 = resp.count, resp.connections, time.monotonic()
        elapsed = t1 - t0
        probes = count1 - count0
        doc = get_json(f"{servers['on'].url}/eureka/apps/{PROBE_APP.upper()}")
        insts = doc["application"]["instance"]
        insts = [insts] if isinstance(insts, dict) else insts
        up = sum(1 for i in insts if i["status"] == "UP")
        cpu = {k: (cpu1[k] - cpu0[k]) for k in servers}
        out = {"instances": n, "window_s": round(elapsed, 2), "probes": probes,
               "probes_per_s": round(probes / elapsed, 2), "connections": conns1 - conns0,
               "cpu_s": {k: round(v, 3) for k, v in cpu.items()},
               "cpu_per_s": {k: round(v / elapsed, 5) for k, v in cpu.items()},
               "up_at_end": up,
               "us_per_probe": round((cpu["on"] - cpu["off"]) / probes * 1e6, 1) if probes else None,
               "us_per_probe_total": round(cpu["on"] / probes * 1e6, 1) if probes else None}
        log(f"probing cost: {out}")
        return out
    finally:
        for s in servers.values():
            s.stop()
        resp.loop.call_soon_threadsafe(resp.loop.stop)


# --------------------------------------------------------------------------------------------


def one_round(rnd: int, servers: dict, setups: list[str], fleets: dict, log_dir: Path) -> dict:
    by_registry: dict[str, list[str]] = {}
    for s in setups:
        by_registry.setdefault(REGISTRY[s], []).append(s)
    rounds = {reg: RegistryRound(reg, servers[reg], ss, log_dir, rnd) for reg, ss in by_registry.items()}
    drain_results: dict = {}
    drain_thread = None
    try:
        errors: dict = {}

        def prepare(r: RegistryRound) -> None:
            try:
                r.prepare()
            except (BenchError, SystemExit) as e:
                errors[r.registry] = str(e)
        threads = [threading.Thread(target=prepare, args=(r,)) for r in rounds.values()]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        if errors:
            raise BenchError(f"round {rnd}: {errors}")
        before = {reg: r.targets_of(r.dead) for reg, r in rounds.items()}
        # the same moment for every registry
        kill_ms = now_ms()
        for r in rounds.values():
            r.dead.sigkill()
        log(f"round {rnd}: SIGKILLed one provider in each of {', '.join(rounds)}")
        if fleets:
            drain_thread = threading.Thread(target=drains, args=(fleets, drain_results, time.monotonic() + 5.0))
            drain_thread.start()
        threads = [threading.Thread(target=r.after_kill, args=(kill_ms, before[reg])) for reg, r in rounds.items()]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        if drain_thread:
            drain_thread.join(timeout=ARGS.drains_per_round * (ARGS.drain_timeout + 45) + 600)
        out = {"kill": {}, "oos": {}, "drain": drain_results}
        for r in rounds.values():
            out["kill"].update(r.kill)
            out["oos"].update(r.oos_result)
        log(f"round {rnd}: " + "; ".join(
            f"{s} last call {v['last_call_s']:.1f} s{' (capped)' if v['capped'] else ''}, registry "
            f"{fmt_s(v['server_gone_s'])}, DiscoveryClient {fmt_s(v['discovery_gone_s'])}, "
            f"{v['dead_errors']} failed calls" for s, v in out["kill"].items()))
        if out["oos"]:
            log(f"round {rnd}: OUT_OF_SERVICE: " + "; ".join(
                f"{s} last call {v.get('last_call_ms')} ms after the answer" for s, v in out["oos"].items()
                if isinstance(v, dict)))
        return out
    finally:
        for r in rounds.values():
            r.stop()


def fmt_s(v, digits: int = 1) -> str:
    return "—" if v is None else f"{v:.{digits}f} s"


def fmt_ms(v) -> str:
    return "—" if v is None else f"{v:+.0f} ms"


def med(vals: list):
    vals = [v for v in vals if v is not None]
    return statistics.median(vals) if vals else None


def kill_med(rows: list[dict], setup: str, field: str):
    return med([r["kill"][setup].get(field) for r in rows if setup in r.get("kill", {})])


def oos_med(rows: list[dict], setup: str, field: str):
    return med([r["oos"][setup].get(field) for r in rows if isinstance(r.get("oos", {}).get(setup), dict)])


def report(results: dict, out: Path) -> str:
    rows = results["rounds"]
    setups = results["setups"]
    n = len(rows)
    lines = ["# Freshness: how long a consumer keeps calling an instance that is gone", "",
             f"{n} round{'s' if n != 1 else ''}; in each, the setups side by side, their providers killed at the same "
             "moment. Spring Boot providers and consumers at Spring's default client settings (heartbeat "
             "30 s, lease 90 s, fetch 30 s, Spring Cloud LoadBalancer cache 35 s); each consumer calls "
             f"the provider by name every {results['call_interval_ms']} ms. “With the add-on”: the consumer "
             "has Heureka's Spring Cloud add-on (docs/spring.md) and follows the push; the two “checks on” "
             "setups share one registry (health checks enabled, every other key at its default: "
             f"{results.get('health_check_defaults', '?')}) and the same providers. Servers: bench/run.py's "
             "standalone settings (self-preservation off, response caches at their defaults). "
             "Produced by `python3 bench/freshness.py`; every round in `freshness.json`.", ""]

    # --- SIGKILL -------------------------------------------------------------------------------
    lines += ["## SIGKILL of a provider → the consumer's last call to it", "",
              "| setup | last call to the dead instance (median) | each round | registry stops serving it UP "
              "(median) | last call − registry (median) | consumer's DiscoveryClient drops it (median) | "
              "failed calls (median) |",
              "|---|---|---|---|---|---|---|"]
    kmed = {}
    for s in setups:
        m = kill_med(rows, s, "last_call_s")
        kmed[s] = m
        per = ", ".join(("≥" if r["kill"][s]["capped"] else "") + f"{r['kill'][s]['last_call_s']:.1f}"
                        for r in rows if s in r.get("kill", {}))
        gap = kill_med(rows, s, "gap_s")
        errs = kill_med(rows, s, "dead_errors")
        lines.append(f"| {LABEL[s]} | {fmt_s(m)} | {per} s | {fmt_s(kill_med(rows, s, 'server_gone_s'))} | "
                     f"{fmt_s(gap)} | {fmt_s(kill_med(rows, s, 'discovery_gone_s'))} | "
                     f"{'—' if errs is None else f'{errs:.0f}'} |")
    ratios = []
    for a, b in (("push", "heureka-on"), ("push", "java"), ("push", "heureka-off"), ("heureka-on", "java"),
                 ("heureka-on", "heureka-off"), ("heureka-off", "java")):
        if kmed.get(a) and kmed.get(b):
            ratios.append(f"{SHORT[a]} / {SHORT[b]}: {kmed[a] / kmed[b]:.2f}")
    if ratios:
        lines += ["", "Ratios of the medians (last call): " + "; ".join(ratios) + "."]
    if "push" in kmed and kmed["push"] is not None:
        gap = kill_med(rows, "push", "gap_s")
        gaps = [r["kill"]["push"].get("gap_s") for r in rows if "push" in r.get("kill", {})]
        lines += ["", f"Targets, with the add-on: last call ≤ 5 s after the SIGKILL (median {kmed['push']:.1f} s: "
                  f"{'met' if kmed['push'] <= 5 else 'missed'}); last call ≤ 1 s after the registry stopped "
                  f"serving the instance UP (median {fmt_s(gap, 2)}, each round "
                  f"{', '.join('—' if g is None else f'{g:.2f}' for g in gaps)} s: "
                  f"{'met' if gap is not None and gap <= 1 else 'missed'})."]
    lines += ["", "What the columns add up to: the registry's share is the “registry stops serving it UP” column "
              "(checks on: a probe every 2 s, plus up to 1 s of jitter, two failures before DOWN; checks off: "
              "the 90 s lease and the eviction task; Java: twice the lease, its eviction task and its 30 s "
              "read-only cache). The consumer's share is the rest. Without the add-on it adds up to one fetch "
              "interval (30 s) to the DiscoveryClient column and up to one LoadBalancer cache period (35 s) "
              "to the last call, whatever the server does. With the add-on the change is pushed and the "
              "load balancer's cache cleared when it arrives: “last call − registry” is the push's delivery "
              "plus at most one call interval (the calls round-robin over the providers, so the dead one is "
              "called every 200-300 ms); a negative figure means the last call ended before the poll (every "
              "100 ms) saw the change. The kill comes right after the provider's first lease renewal, which "
              "falls at a similar point of the consumers' own 30 s fetch cycle in every round (the JVMs start "
              "together), so without the add-on the consumer's share varies less between rounds than the "
              "0-30 s plus 0-35 s it can take.", ""]

    # --- OUT_OF_SERVICE ------------------------------------------------------------------------
    oos_setups = [s for s in setups if any(isinstance(r.get("oos", {}).get(s), dict) and "last_call_ms" in r["oos"][s]
                                           for r in rows)]
    if oos_setups:
        lines += ["## OUT_OF_SERVICE set by an operator → the consumer's last call to the instance", "",
                  "`PUT {base}/apps/APP/ID/status?value=OUT_OF_SERVICE` on a live provider (registry with checks on), "
                  "after a random pause of up to one LoadBalancer cache period (so that the write falls anywhere in "
                  "the consumers' fetch and cache cycles); "
                  "the time from reading the write's answer to the consumer's last call routed to the instance "
                  "(negative: it ended before the answer was read).", "",
                  "| consumer | last call after the write's answer (median) | each round | DiscoveryClient drops it "
                  "(median) | calls to it after the write (median) |",
                  "|---|---|---|---|---|"]
        omed = {}
        for s in oos_setups:
            m = oos_med(rows, s, "last_call_ms")
            omed[s] = m
            per = ", ".join(("≥" if r["oos"][s]["capped"] else "") + f"{r['oos'][s]['last_call_ms']:+.0f}"
                            for r in rows if isinstance(r.get("oos", {}).get(s), dict)
                            and r["oos"][s].get("last_call_ms") is not None)
            ca = oos_med(rows, s, "calls_after")
            lines.append(f"| {LABEL[s]} | {fmt_ms(m)} | {per} ms | {fmt_s(oos_med(rows, s, 'discovery_gone_s'))} | "
                         f"{'—' if ca is None else f'{ca:.0f}'} |")
        if omed.get("push") is not None and omed.get("heureka-on") is not None:
            lines += ["", f"Without the add-on the consumer kept calling the instance {omed['heureka-on'] - omed['push']:.0f} ms "
                      "longer (difference of the medians): its next fetch (up to 30 s) plus the load balancer's "
                      "cache (up to 35 s)."]
        lines.append("")

    # --- drain ---------------------------------------------------------------------------------
    drain_rows = {k: [d for r in rows for d in r.get("drain", {}).get(k, [])] for k in ("push", "plain")}
    if any(drain_rows.values()):
        nc = results.get("drain_consumers", "?")
        lines += ["## `heureka drain` → confirmed", "",
                  f"`heureka drain APP ID --timeout {results.get('drain_timeout', 60)} --eureka URL` on a fresh instance, "
                  f"{nc} Spring Boot consumers on the registry, each from a loopback address of its own; time from "
                  "starting the command to its exit.", "",
                  "| consumers | drain time (median) | each drain | exit 0 | consumers confirmed (median) |",
                  "|---|---|---|---|---|"]
        dmed = {}
        for k, label in (("push", f"{nc} with the add-on"), ("plain", f"{nc} without the add-on")):
            ds = drain_rows[k]
            if not ds:
                continue
            dmed[k] = med([d["s"] for d in ds if d.get("rc") == 0])
            ok = sum(1 for d in ds if d.get("rc") == 0)
            conf = med([d.get("confirmed") for d in ds])
            each = ", ".join("—" if d["s"] is None else f"{d['s']:.1f}" for d in ds)
            lines.append(f"| {label} | {fmt_s(dmed[k])} | {each} s "
                         f"| {ok} of {len(ds)} | {'—' if conf is None else f'{conf:.0f}'} |")
        if dmed.get("push") and dmed.get("plain"):
            lines += ["", f"Ratio of the medians, with / without the add-on: {dmed['push'] / dmed['plain']:.2f}. "
                      "`heureka drain` asks for the progress four times a second, so a drain confirmed by pushed "
                      "acknowledgements ends within moments of the last consumer's acknowledgement; without the "
                      "add-on it waits for the slowest consumer's next fetch (up to 30 s)."]
        lines.append("")

    # --- probing cost --------------------------------------------------------------------------
    pc = results.get("probe_cost")
    if pc:
        lines += ["## What the probing costs the server", "",
                  f"{pc['instances']} instances whose healthCheckUrl points at small HTTP servers (one port each), "
                  f"the server's CPU (utime + stime) over {pc['window_s']:.0f} s, health checks on at the default "
                  "interval and off, side by side.", "",
                  "| health checks | probes / s | server CPU s / s | CPU per probe |",
                  "|---|---|---|---|",
                  f"| on (defaults) | {pc['probes_per_s']:.1f} | {pc['cpu_per_s']['on']:.4f} | "
                  f"{pc['us_per_probe_total']} µs (all of the server's CPU) |",
                  f"| off | 0 | {pc['cpu_per_s']['off']:.4f} | — |",
                  "",
                  f"The probing's own cost (on − off): {pc['cpu_per_s']['on'] - pc['cpu_per_s']['off']:.4f} CPU s per "
                  f"second, {pc['us_per_probe']} µs per probe; {pc['up_at_end']} of {pc['instances']} instances "
                  f"served UP at the end. The HTTP servers saw {pc.get('connections', '?')} connections for "
                  f"{pc['probes']} probes: each probe connects anew (a refused connection is how a dead process "
                  "shows), so the figure includes a TCP connect and close per probe.", ""]

    for s, why in results.get("skipped", {}).items():
        lines += [f"{LABEL.get(s, s)}: not run ({why}).", ""]
    for k, v in results.get("notes", {}).items():
        lines += [f"{v}", ""]
    lines += [f"Machine: {os.cpu_count()} CPUs, load average (1 min) {results.get('load_start', 0):.1f} at the start, "
              f"{results.get('load_end', 0):.1f} at the end (other work shared the machine); "
              f"run {results['started']} to {results.get('ended', '?')} UTC; heureka {results.get('heureka_bin', '?')}.", ""]
    text = "\n".join(lines)
    out.mkdir(parents=True, exist_ok=True)
    (out / "freshness.md").write_text(text)
    (out / "freshness.json").write_text(json.dumps(results, indent=1) + "\n")
    return text


ARGS: argparse.Namespace


def snapshot_artifacts(into: Path) -> None:
    """Private copies of the binary and the jars for the run."""
    into.mkdir(parents=True, exist_ok=True)
    src = Path(ARGS.bin) if ARGS.bin else bench.HEUREKA_BIN
    dst = into / "heureka"
    shutil.copy2(src, dst)
    bench.RUN_BIN["heureka"] = dst
    for key, jar in (("plain", SPRING_JAR), ("push", SPRING_PUSH_JAR)):
        JARS[key] = into / jar.name
        shutil.copy2(jar, JARS[key])
    java = into / bench.JAR.name
    shutil.copy2(bench.JAR, java)
    bench.JAR = java


def main() -> int:
    global ARGS
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--setups", default=",".join(SETUPS), help=f"comma-separated, of {', '.join(SETUPS)}")
    parser.add_argument("--bin", help="the heureka binary (default target/release/heureka, built first)")
    parser.add_argument("--call-interval-ms", type=int, default=100)
    parser.add_argument("--lb-cache-s", type=float, default=35.0, help="Spring Cloud LoadBalancer's cache TTL")
    parser.add_argument("--margin-s", type=float, default=10.0)
    parser.add_argument("--cap-s", type=float, default=480.0, help="a round's longest wait after the kill")
    parser.add_argument("--oos-cap-s", type=float, default=150.0, help="the longest wait after OUT_OF_SERVICE")
    parser.add_argument("--no-oos", action="store_true", help="no OUT_OF_SERVICE step")
    parser.add_argument("--drain-consumers", type=int, default=3, help="consumers per drain registry (0: no drains)")
    parser.add_argument("--drains-per-round", type=int, default=2)
    parser.add_argument("--drain-timeout", type=int, default=60)
    parser.add_argument("--probe-instances", type=int, default=200, help="0: no probing-cost step")
    parser.add_argument("--probe-window-s", type=float, default=60.0)
    parser.add_argument("--skip-build", action="store_true")
    parser.add_argument("--out", default=str(bench.BENCH / "results"))
    parser.add_argument("--report-from", help="write the report again from this freshness.json, measuring nothing")
    ARGS = parser.parse_args()
    if ARGS.report_from:
        print(report(json.loads(Path(ARGS.report_from).read_text()), Path(ARGS.out)))
        return 0

    def terminate(signum, _frame):
        raise KeyboardInterrupt(f"signal {signum}")
    signal.signal(signal.SIGTERM, terminate)
    setups = [s.strip() for s in ARGS.setups.split(",") if s.strip()]
    bad = [s for s in setups if s not in SETUPS]
    if bad:
        parser.error(f"unknown setups {bad}")
    errors = bench.build(["java"] if ARGS.bin else ["heureka", "java"], ARGS.skip_build)
    if ARGS.bin and not Path(ARGS.bin).is_file():
        errors["heureka"] = f"{ARGS.bin} does not exist"
    for jar in (SPRING_JAR, SPRING_PUSH_JAR):
        if not jar.exists():
            errors[jar.name] = f"{jar} missing: see interop/run.sh (spring/ installed, then interop/java packaged, then -P push)"
    if errors:
        print(errors)
        return 2
    log_dir = Path(ARGS.out) / "logs" / "freshness"
    log_dir.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(prefix="freshness-"))
    results = {"started": time.strftime("%Y-%m-%d %H:%M:%S", time.gmtime()), "rounds": [],
               "call_interval_ms": ARGS.call_interval_ms, "skipped": {}, "notes": {},
               "load_start": os.getloadavg()[0], "drain_consumers": ARGS.drain_consumers,
               "drain_timeout": ARGS.drain_timeout}
    fleets: dict = {}
    servers: dict = {}
    try:
        snapshot_artifacts(tmp)
        head = subprocess.run(["git", "-C", str(bench.ROOT), "log", "-1", "--format=%h"],
                              capture_output=True, text=True).stdout.strip()
        built = time.strftime("%Y-%m-%d %H:%M", time.gmtime((Path(ARGS.bin) if ARGS.bin else bench.HEUREKA_BIN).stat().st_mtime))
        results["heureka_bin"] = f"binary built {built} UTC (the tree at {head} when the run started)"
        results["health_check_defaults"] = health_check_defaults()
        if not heureka_knows_health_checks():
            for s in ("push", "heureka-on"):
                if s in setups:
                    results["skipped"][s] = "this heureka has no heureka.health-checks.* keys yet"
                    setups.remove(s)
        if "heureka-off" not in setups:
            results["notes"]["heureka-off"] = ("Heureka with checks off was not run this time "
                                               "(`--setups`): see earlier runs in git history.")
        results["setups"] = setups
        if ARGS.probe_instances > 0:
            results["probe_cost"] = probe_cost(log_dir)
            report(results, Path(ARGS.out))
        for reg in dict.fromkeys(REGISTRY[s] for s in setups):
            if reg == "java":
                servers[reg] = bench.start_server("java", log_dir, reg, [])
            else:
                servers[reg] = bench.start_server("heureka", log_dir, reg,
                                                  HEALTH_CHECKS_ON if reg == "heureka-checks" else [])
            log(f"{reg} on port {servers[reg].port}")
        if ARGS.drain_consumers > 0 and ARGS.drains_per_round > 0:
            fleets = {"push": DrainFleet("push", log_dir, 2),
                      "plain": DrainFleet("plain", log_dir, 2 + ARGS.drain_consumers)}
            for f in fleets.values():
                threading.Thread(target=f.wait_ready, daemon=True).start()
        for rnd in range(1, ARGS.rounds + 1):
            results["rounds"].append(one_round(rnd, servers, setups, fleets, log_dir))
            results["ended"] = time.strftime("%Y-%m-%d %H:%M:%S", time.gmtime())
            results["load_end"] = os.getloadavg()[0]
            report(results, Path(ARGS.out))      # after every round: a partial run leaves its rounds
    finally:
        for f in fleets.values():
            f.stop()
        bench.stop_all()
        shutil.rmtree(tmp, ignore_errors=True)
    results["ended"] = time.strftime("%Y-%m-%d %H:%M:%S", time.gmtime())
    results["load_end"] = os.getloadavg()[0]
    print(report(results, Path(ARGS.out)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
