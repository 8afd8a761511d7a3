#!/usr/bin/env python3
"""Freshness end to end: how long a Spring Cloud LoadBalancer consumer keeps calling a Spring Boot
instance after it was SIGKILLed, with Heureka's health checks off, with them on, and with the
Java Eureka server, side by side in the same run (outside CI; issue 21).

    python3 bench/freshness.py                 # 3 rounds, about 15-20 minutes
    python3 bench/freshness.py --rounds 1      # about 6 minutes
    python3 bench/freshness.py --setups heureka-off,java

Three setups, each its own registry: ``heureka-off`` (target/release/heureka, health checks off:
the default), ``heureka-on`` (the same binary with ``--heureka.health-checks.enabled=true``, the
default interval 5 s) and ``java`` (interop/java/eureka-server). The servers get the keys of the
other benchmarks (bench/run.py ``COMMON_FLAGS``: a standalone server, self-preservation off, the
response cache at its defaults) and are started once for the run.

Each round, in every setup at once: two provider instances and one consumer, all the Spring Boot
app of the interop suite (interop/java/spring-client) at Spring's default client settings
(heartbeat 30 s, lease 90 s, registry fetch 30 s, Spring Cloud LoadBalancer's cache 35 s; the
app's own application.yml has fast test timings, so the defaults are passed explicitly). The
consumer calls the provider application by name through a ``@LoadBalanced`` RestTemplate every
``--call-interval-ms`` (100) and records, per instance the load balancer chose, the time of the
last call and of the last failed call. Once it has reached both providers, and the provider to be
killed has renewed its lease once (a steady-state instance: the Java server gives a renewed
lease one more duration than a lease only registered), one provider of every setup is SIGKILLed
at the same moment. The figure is the time from the SIGKILL to the consumer's
last call routed to the dead instance (each of those failed: connection refused).

A setup's round ends when its consumer's DiscoveryClient no longer lists the dead instance and
then the load balancer's cache (35 s) has expired with a margin (``--lb-cache-s`` +
``--margin-s``), with no call to the dead instance in that time; or at ``--cap-s`` after the
kill, which the table then shows as "≥ cap". Also recorded: when the registry stopped serving the
instance as UP (polled every second; the Java server's answer passes through its read-only
cache, as the consumer's fetches do), when the consumer's DiscoveryClient dropped it, and how
many calls failed.

Writes bench/results/freshness.md and freshness.json (every round). Standard library only.
"""

from __future__ import annotations

import argparse
import json
import os
import signal
import statistics
import subprocess
import sys
import threading
import time
import urllib.error
import urllib.request
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import run as bench  # noqa: E402  (build, start_server, free_port, COMMON_FLAGS, RUN_BIN)

SPRING_JAR = bench.JAVA_DIR / "spring-client" / "target" / "spring-client.jar"
HOST = "127.0.0.1"
SETUPS = ("heureka-off", "heureka-on", "java")
LABEL = {"heureka-off": "Heureka, health checks off", "heureka-on": "Heureka, health checks on (5 s)",
         "java": "Java Eureka server"}
HEALTH_CHECKS_ON = ["--heureka.health-checks.enabled=true"]
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


class BenchError(Exception):
    pass


def log(msg: str) -> None:
    bench.log(msg)


def http(method: str, url: str, accept: str = "application/json", timeout: float = 5.0) -> tuple[int, bytes]:
    req = urllib.request.Request(url, data=b"" if method == "POST" else None, method=method,
                                 headers={"Accept": accept})
    try:
        with urllib.request.urlopen(req, timeout=timeout) as r:
            return r.status, r.read()
    except urllib.error.HTTPError as e:
        return e.code, e.read()


def get_json(url: str):
    status, body = http("GET", url)
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


class Spring:
    """One spring-client JVM, in its own session (killed by its own pid only)."""

    def __init__(self, name: str, server_port: int, log_dir: Path, tag: str):
        self.name = name
        self.port = bench.free_port()
        self.instance_id = f"{HOST}:{name}:{self.port}"
        self.log_path = log_dir / f"{tag}-{name}-{self.port}.log"
        argv = ["java", "-XX:TieredStopAtLevel=1", "-Xmx384m", "-jar", str(SPRING_JAR),
                f"--server.port={self.port}", f"--server.address={HOST}",
                f"--spring.application.name={name}",
                f"--eureka.client.service-url.defaultZone=http://{HOST}:{server_port}/eureka/",
                f"--eureka.instance.ip-address={HOST}", f"--eureka.instance.hostname={HOST}",
                f"--spring.cloud.client.hostname={HOST}", "--spring.main.banner-mode=off",
                *[f"--{k}={v}" for k, v in SPRING_DEFAULTS.items()]]
        log = open(self.log_path, "wb")
        self.proc = subprocess.Popen(argv, stdout=log, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
                                     cwd=log_dir, start_new_session=True)
        log.close()
        bench.STARTED.append(self.proc)

    def url(self, path: str) -> str:
        return f"http://{HOST}:{self.port}{path}"

    def wait_ready(self, timeout: float = 240) -> None:
        def ready():
            if self.proc.poll() is not None:
                raise SystemExit(f"{self.name} exited during start-up (log {self.log_path})")
            return http("GET", self.url("/services"), timeout=2)[0] == 200
        wait_for(f"{self.name} on {self.port} serves /services", ready, timeout)

    def sigkill(self) -> None:
        os.killpg(self.proc.pid, signal.SIGKILL)     # its own session: pgid == pid
        self.proc.wait(timeout=120)
        if self.proc in bench.STARTED:
            bench.STARTED.remove(self.proc)

    def stop(self) -> None:
        bench.stop_process(self.proc)


class Round:
    """One setup's round: its providers, its consumer, and what was seen after the kill."""

    def __init__(self, setup: str, server: bench.Running, log_dir: Path, rnd: int):
        self.setup, self.server = setup, server
        tag = f"r{rnd}-{setup}"
        self.dead = Spring(PROVIDER, server.port, log_dir, tag)
        self.alive = Spring(PROVIDER, server.port, log_dir, tag)
        self.consumer = Spring(CONSUMER, server.port, log_dir, tag)
        self.kill_ms: int | None = None
        self.result: dict = {}

    def dead_target(self) -> str:
        return f"{HOST}:{self.dead.port}"

    def calls(self) -> dict:
        return get_json(self.consumer.url("/calls"))

    def wait_both_called(self, timeout: float) -> None:
        self.dead.wait_ready()
        self.alive.wait_ready()
        self.consumer.wait_ready()
        http("POST", self.consumer.url(f"/calls/start?service={PROVIDER}&intervalMs={ARGS.call_interval_ms}"))

        def both():
            targets = self.calls()["targets"]
            return all(targets.get(f"{HOST}:{p.port}", {}).get("calls", 0)
                       > targets.get(f"{HOST}:{p.port}", {}).get("errors", 0) for p in (self.dead, self.alive))
        wait_for(f"{self.setup}: the consumer reaches both providers", both, timeout, interval=1.0)
        # a provider in its steady state: it has renewed its lease at least once (the Java server
        # expires a renewed lease one duration later than a lease only registered)
        wait_for(f"{self.setup}: the provider to be killed has renewed its lease", self.renewed, 120, interval=1.0)

    def renewed(self) -> bool:
        """Whether the server holds a renewal of the dead-to-be provider after its registration
        (the single-instance read, which neither server caches)."""
        doc = get_json(f"{self.server.url}/eureka/apps/{PROVIDER.upper()}/{self.dead.instance_id}")
        lease = doc["instance"]["leaseInfo"]
        return int(lease["lastRenewalTimestamp"]) > int(lease["registrationTimestamp"])

    def registry_status(self) -> str | None:
        """The dead instance's status in the registry's full fetch (None: not there)."""
        status, body = http("GET", f"{self.server.url}/eureka/apps/{PROVIDER.upper()}")
        if status == 404:
            return None
        if status != 200:
            raise BenchError(f"GET /eureka/apps/{PROVIDER.upper()} -> {status}")
        doc = json.loads(body)
        insts = doc["application"].get("instance") or []
        if isinstance(insts, dict):
            insts = [insts]
        for i in insts:
            if i["instanceId"] == self.dead.instance_id:
                return i["status"]
        return None

    def watch(self) -> None:
        """After the kill: poll every second until the round's end condition or the cap."""
        r = self.result
        r.update(server_gone_s=None, discovery_gone_s=None, capped=False)
        lb_wait = ARGS.lb_cache_s + ARGS.margin_s
        while True:
            now_ms = int(time.time() * 1000)
            since = (now_ms - self.kill_ms) / 1000
            if r["server_gone_s"] is None:
                try:
                    status = self.registry_status()
                except (OSError, ValueError, BenchError):
                    status = "?"
                if status != "UP" and status != "?":
                    r["server_gone_s"] = since
                    r["server_status"] = status or "absent"
            if r["discovery_gone_s"] is None:
                try:
                    listed = [i["instanceId"] for i in get_json(self.consumer.url(f"/instances/{PROVIDER}"))]
                    if self.dead.instance_id not in listed:
                        r["discovery_gone_s"] = since
                except (OSError, ValueError, BenchError):
                    pass
            try:
                calls = self.calls()
            except (OSError, ValueError, BenchError):
                time.sleep(1.0)
                continue
            dead = calls["targets"].get(self.dead_target(), {})
            last_ms = max(dead.get("lastMs", 0), dead.get("lastErrorMs", 0))
            r["last_call_s"] = max(0.0, (last_ms - self.kill_ms) / 1000) if last_ms else 0.0
            r["dead_errors"] = dead.get("errors", 0)
            r["other_errors"] = calls["errors"] - r["dead_errors"]
            quiet_s = (now_ms - last_ms) / 1000 if last_ms else since
            if r["discovery_gone_s"] is not None and since - r["discovery_gone_s"] >= lb_wait and quiet_s >= lb_wait:
                return
            if since >= ARGS.cap_s:
                r["capped"] = True
                return
            time.sleep(1.0)

    def stop(self) -> None:
        for p in (self.consumer, self.alive, self.dead):
            if p.proc.poll() is None:
                p.stop()


def one_round(rnd: int, servers: dict, log_dir: Path) -> dict:
    rounds = {setup: Round(setup, srv, log_dir, rnd) for setup, srv in servers.items()}
    try:
        errors: dict = {}

        def prepare(r: Round) -> None:
            try:
                r.wait_both_called(timeout=300)
            except (BenchError, SystemExit) as e:
                errors[r.setup] = str(e)
        threads = [threading.Thread(target=prepare, args=(r,)) for r in rounds.values()]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        if errors:
            raise BenchError(f"round {rnd}: {errors}")
        # the same moment for every setup
        kill_ms = int(time.time() * 1000)
        for r in rounds.values():
            r.kill_ms = kill_ms
            r.dead.sigkill()
        log(f"round {rnd}: SIGKILLed one provider in each of {', '.join(rounds)}")
        threads = [threading.Thread(target=r.watch) for r in rounds.values()]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        out = {setup: r.result for setup, r in rounds.items()}
        log(f"round {rnd}: " + "; ".join(
            f"{s} last call {v['last_call_s']:.1f} s{' (capped)' if v['capped'] else ''}, registry "
            f"{fmt_s(v['server_gone_s'])}, DiscoveryClient {fmt_s(v['discovery_gone_s'])}, "
            f"{v['dead_errors']} failed calls" for s, v in out.items()))
        return out
    finally:
        for r in rounds.values():
            r.stop()


def fmt_s(v) -> str:
    return "—" if v is None else f"{v:.1f} s"


def median_of(rows: list[dict], setup: str, field: str):
    vals = [r[setup][field] for r in rows if setup in r and r[setup].get(field) is not None]
    return statistics.median(vals) if vals else None


def report(results: dict, out: Path) -> str:
    rows = results["rounds"]
    setups = results["setups"]
    lines = ["# Freshness: SIGKILL of a Spring Boot instance to the last call a consumer sends it", "",
             f"{len(rows)} round{'s' if len(rows) != 1 else ''}; in each, the setups side by side, their providers killed at the same "
             "moment. Spring Boot providers and consumer at Spring's default client settings (heartbeat "
             "30 s, lease 90 s, fetch 30 s, Spring Cloud LoadBalancer cache 35 s); the consumer calls "
             f"the provider by name every {results['call_interval_ms']} ms. Servers: bench/run.py's "
             "standalone settings (self-preservation off, response caches at their defaults). "
             "Produced by `python3 bench/freshness.py`; every round in `freshness.json`.", "",
             "| setup | last call to the dead instance (median) | each round | registry stops serving it UP "
             "(median) | consumer's DiscoveryClient drops it (median) | failed calls (median) |",
             "|---|---|---|---|---|---|"]
    med = {}
    for s in setups:
        m = median_of(rows, s, "last_call_s")
        med[s] = m
        per = ", ".join(("≥" if r[s]["capped"] else "") + f"{r[s]['last_call_s']:.0f}" for r in rows if s in r)
        lines.append(f"| {LABEL[s]} | {fmt_s(m)} | {per} s | {fmt_s(median_of(rows, s, 'server_gone_s'))} | "
                     f"{fmt_s(median_of(rows, s, 'discovery_gone_s'))} | "
                     f"{median_of(rows, s, 'dead_errors') if median_of(rows, s, 'dead_errors') is not None else '—'} |")
    lines += ["", "What the columns add up to: the registry's share is the “registry stops serving it UP” column "
              "(checks off: the 90 s lease and the eviction task; Java: twice the lease, its eviction task "
              "and its 30 s read-only cache; checks on: two failed checks 5 s apart); the consumer adds up "
              "to one fetch interval (30 s) to the DiscoveryClient column and up to one LoadBalancer cache "
              "period (35 s) to the last call. With checks on the consumer's caches are nearly all that is "
              "left, and no server setting shortens them.", ""]
    ratios = []
    for a, b in (("heureka-on", "heureka-off"), ("heureka-on", "java"), ("heureka-off", "java")):
        if med.get(a) and med.get(b):
            ratios.append(f"{LABEL[a]} / {LABEL[b]}: {med[a] / med[b]:.2f}")
    if ratios:
        lines += ["Ratios of the medians: " + "; ".join(ratios) + ".", ""]
    for s in results.get("skipped", {}):
        lines += [f"{LABEL[s]}: not run ({results['skipped'][s]}).", ""]
    load = results.get("load_end") or os.getloadavg()[0]
    lines += [f"Machine: {os.cpu_count()} CPUs, load average at the end {load:.1f}; "
              f"run {results['started']} to {results['ended']} UTC; heureka {results.get('heureka_bin', '?')}.", ""]
    text = "\n".join(lines)
    out.mkdir(parents=True, exist_ok=True)
    (out / "freshness.md").write_text(text)
    (out / "freshness.json").write_text(json.dumps(results, indent=1) + "\n")
    return text


ARGS: argparse.Namespace


def main() -> int:
    global ARGS
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--setups", default=",".join(SETUPS), help=f"comma-separated, of {', '.join(SETUPS)}")
    parser.add_argument("--call-interval-ms", type=int, default=100)
    parser.add_argument("--lb-cache-s", type=float, default=35.0, help="Spring Cloud LoadBalancer's cache TTL")
    parser.add_argument("--margin-s", type=float, default=10.0)
    parser.add_argument("--cap-s", type=float, default=480.0, help="a round's longest wait after the kill")
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
    errors = bench.build(["heureka", "java"], ARGS.skip_build)
    if not SPRING_JAR.exists():
        errors["spring"] = f"{SPRING_JAR} missing: mvn -q -B -DskipTests package in interop/java"
    if errors:
        print(errors)
        return 2
    log_dir = Path(ARGS.out) / "logs" / "freshness"
    log_dir.mkdir(parents=True, exist_ok=True)
    results = {"started": time.strftime("%Y-%m-%d %H:%M:%S", time.gmtime()), "rounds": [],
               "call_interval_ms": ARGS.call_interval_ms, "skipped": {}}
    bench.snapshot_binaries(["heureka"], log_dir / "bin")
    results["heureka_bin"] = subprocess.run(["git", "-C", str(bench.ROOT), "log", "-1", "--format=%h"],
                                            capture_output=True, text=True).stdout.strip()
    if "heureka-on" in setups and not heureka_knows_health_checks():
        results["skipped"]["heureka-on"] = "this heureka has no heureka.health-checks.* keys yet"
        setups.remove("heureka-on")
    results["setups"] = setups
    servers = {}
    try:
        for s in setups:
            key = "java" if s == "java" else "heureka"
            servers[s] = bench.start_server(key, log_dir, s, HEALTH_CHECKS_ON if s == "heureka-on" else [])
            log(f"{s}: {LABEL[s]} on port {servers[s].port}")
        for rnd in range(1, ARGS.rounds + 1):
            results["rounds"].append(one_round(rnd, servers, log_dir))
            results["ended"] = time.strftime("%Y-%m-%d %H:%M:%S", time.gmtime())
            results["load_end"] = os.getloadavg()[0]
            report(results, Path(ARGS.out))      # after every round: a partial run leaves its rounds
    finally:
        bench.stop_all()
    results["ended"] = time.strftime("%Y-%m-%d %H:%M:%S", time.gmtime())
    print(report(results, Path(ARGS.out)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
