#!/usr/bin/env python3
"""The Rust client beside the Java one (outside CI): memory, CPU per heartbeat, and how long a
status change on the server takes to reach the Rust client.

    python3 bench/client.py                    # 180 s window, 6 status changes (~10 min)
    python3 bench/client.py --seconds 30 --changes 2 --skip-build

1. Footprint: the Rust client (crates/heureka-client's interop driver example) and the Spring
   Boot client app of the interop suite (interop/java/spring-client: spring-cloud-starter-netflix-
   eureka-client, as a Spring user runs it, plain ``java -jar``) each get their own Heureka, both
   heartbeating and fetching the registry every --interval s. After a warm-up, RSS is sampled from
   /proc every second and utime+stime is read at the start and end of the window; the heartbeats
   are counted by each client's server (``heureka_renewals_total{origin="client"}``), so
   "CPU per heartbeat" is the client's CPU per heartbeat cycle (one renewal plus one registry
   refresh). The Spring app's figure includes what Spring Boot and its web server cost.
2. Latency: a third Heureka holds an instance registered over plain HTTP; its status is flipped
   (PUT .../status?value=OUT_OF_SERVICE, then DELETE the override) --changes times. A Rust client
   refreshing every --interval s and one with the default registry-fetch-interval (30 s) report
   each refresh (a fetch, or a pushed snapshot or delta: the client follows the push by default)
   with a timestamp; the latency is from just before the PUT/DELETE is sent to the first refresh
   whose copy shows the new status. (Same host, same clock.) With --java-latency a
   Spring app on that server is polled every 50 ms over HTTP for the same change, for comparison.

Writes bench/results/client.md and client.json. Standard library only.
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import os
import platform
import random
import statistics
import subprocess
import sys
import threading
import time
import urllib.request
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import run as bench  # noqa: E402  (the harness's helpers: build, start_server, /proc readers)

DRIVER = bench.TARGET_DIR / "release" / "examples" / "interop_driver"
SPRING_JAR = bench.JAVA_DIR / "spring-client" / "target" / "spring-client.jar"
HOST = "127.0.0.1"
TARGET_APP = "LATENCY-TARGET"
DEFAULT_FETCH = 30   # registry-fetch-interval-seconds, the Java client's default


def http(method: str, url: str, body: bytes | None = None, headers: dict | None = None) -> tuple[int, bytes]:
    req = urllib.request.Request(url, data=body, method=method, headers=headers or {})
    try:
        with urllib.request.urlopen(req, timeout=10) as r:
            return r.status, r.read()
    except urllib.error.HTTPError as e:
        return e.code, e.read()


def renewals(srv: bench.Running) -> int:
    _, text = http("GET", f"{srv.url}/actuator/prometheus")
    for line in text.decode().splitlines():
        if line.startswith('heureka_renewals_total{origin="client"}'):
            return int(float(line.split()[-1]))
    raise bench.BenchError("heureka_renewals_total{origin=\"client\"} not in /actuator/prometheus")


def wait_for(what: str, probe, timeout: float, interval: float = 0.1):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            value = probe()
            if value:
                return value
        except OSError:
            pass
        time.sleep(interval)
    raise bench.BenchError(f"timed out after {timeout:.0f}s: {what}")


def registered(srv: bench.Running, app: str, iid: str) -> bool:
    status, _ = http("GET", f"{srv.url}/eureka/apps/{app}/{iid}", headers={"Accept": "application/json"})
    return status == 200


class Driver:
    """The Rust client's interop driver; its stdout events are collected by a thread."""

    def __init__(self, name: str, srv: bench.Running, log_dir: Path, interval: int, fetch: int,
                 watch: str | None = None, poll_ms: int = 1000):
        self.port = bench.free_port()
        self.app = name
        self.iid = f"{HOST}:{name}:{self.port}"
        argv = [str(DRIVER), "--service-urls", f"{srv.url}/eureka/", "--app", name, "--port", str(self.port),
                "--instance-id", self.iid, "--renew-secs", str(interval), "--fetch-secs", str(fetch),
                "--poll-ms", str(poll_ms)]
        if watch:
            argv += ["--watch", watch]
        self.events: list[dict] = []
        self.lock = threading.Lock()
        err = open(log_dir / f"driver-{name}.log", "wb")
        self.proc = subprocess.Popen(argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=err,
                                     start_new_session=True)
        err.close()
        bench.STARTED.append(self.proc)
        threading.Thread(target=self._read, daemon=True).start()

    def _read(self) -> None:
        for raw in self.proc.stdout:
            try:
                event = json.loads(raw)
            except ValueError:
                continue
            with self.lock:
                self.events.append(event)

    def snapshot(self) -> list[dict]:
        with self.lock:
            return list(self.events)


def spring_argv(port: int, srv: bench.Running, name: str, interval: int) -> list[str]:
    return ["java", "-jar", str(SPRING_JAR), f"--server.port={port}", f"--server.address={HOST}",
            f"--spring.application.name={name}", f"--eureka.client.service-url.defaultZone={srv.url}/eureka/",
            f"--eureka.instance.ip-address={HOST}", f"--eureka.instance.hostname={HOST}",
            f"--spring.cloud.client.hostname={HOST}", "--spring.main.banner-mode=off",
            f"--eureka.instance.lease-renewal-interval-in-seconds={interval}",
            f"--eureka.client.registry-fetch-interval-seconds={interval}",
            "--eureka.instance.lease-expiration-duration-in-seconds=90"]


def start_spring(name: str, srv: bench.Running, log_dir: Path, interval: int) -> tuple[subprocess.Popen, int]:
    port = bench.free_port()
    log = open(log_dir / f"spring-{name}.log", "wb")
    proc = subprocess.Popen(spring_argv(port, srv, name, interval), stdout=log, stderr=subprocess.STDOUT,
                            stdin=subprocess.DEVNULL, start_new_session=True)
    log.close()
    bench.STARTED.append(proc)
    return proc, port


# ---------------------------------------------------------------------------------------------
def footprint(args, log_dir: Path) -> dict:
    rust_srv = bench.start_server("heureka", log_dir, "rust-client")
    java_srv = bench.start_server("heureka", log_dir, "java-client")
    rust = Driver("rust-bench", rust_srv, log_dir, args.interval, args.interval)
    java, java_port = start_spring("spring-bench", java_srv, log_dir, args.interval)
    wait_for("Rust client registered", lambda: registered(rust_srv, "RUST-BENCH", rust.iid), 60)
    wait_for("Spring client registered",
             lambda: registered(java_srv, "SPRING-BENCH", f"{HOST}:spring-bench:{java_port}"), 180, 0.5)
    bench.log(f"both registered; warming up {args.warmup} s")
    time.sleep(args.warmup)
    pids = {"rust": rust.proc.pid, "java": java.pid}
    servers = {"rust": rust_srv, "java": java_srv}
    cpu0 = {k: bench.cpu_seconds(p) for k, p in pids.items()}
    hb0 = {k: renewals(s) for k, s in servers.items()}
    machine0, load0 = bench.proc_stat(), os.getloadavg()
    rss = {k: [] for k in pids}
    t0 = time.monotonic()
    bench.log(f"measuring {args.seconds} s")
    while time.monotonic() - t0 < args.seconds:
        for k, p in pids.items():
            rss[k].append(bench.rss_bytes(p))
        time.sleep(1.0)
    elapsed = time.monotonic() - t0
    cpu1 = {k: bench.cpu_seconds(p) for k, p in pids.items()}
    hb1 = {k: renewals(s) for k, s in servers.items()}
    machine1, load1 = bench.proc_stat(), os.getloadavg()
    out = {"window_s": round(elapsed, 1), "load_avg_start": load0, "load_avg_end": load1,
           "machine_busy_share": round((machine1[1] - machine0[1]) / (machine1[0] - machine0[0]), 3)}
    for k in pids:
        beats = hb1[k] - hb0[k]
        cpu = cpu1[k] - cpu0[k]
        mib = [r / 2**20 for r in rss[k] if r]
        out[k] = {"heartbeats": beats, "cpu_s": round(cpu, 3),
                  "cpu_ms_per_heartbeat": round(1000 * cpu / beats, 3) if beats else None,
                  "rss_mib_median": round(statistics.median(mib), 1), "rss_mib_max": round(max(mib), 1)}
    out["ratio_rss"] = round(out["rust"]["rss_mib_median"] / out["java"]["rss_mib_median"], 4)
    if out["rust"]["cpu_ms_per_heartbeat"] and out["java"]["cpu_ms_per_heartbeat"]:
        out["ratio_cpu_per_heartbeat"] = round(out["rust"]["cpu_ms_per_heartbeat"]
                                               / out["java"]["cpu_ms_per_heartbeat"], 4)
    for p in (rust.proc, java):
        bench.stop_process(p)
    rust_srv.stop()
    java_srv.stop()
    return out


def target_body(port: int) -> bytes:
    return json.dumps({"instance": {
        "instanceId": f"{HOST}:latency-target:{port}", "hostName": HOST, "app": TARGET_APP, "ipAddr": HOST,
        "status": "UP", "port": {"$": port, "@enabled": "true"}, "securePort": {"$": 443, "@enabled": "false"},
        "dataCenterInfo": {"@class": "com.netflix.appinfo.InstanceInfo$DefaultDataCenterInfo", "name": "MyOwn"},
        "leaseInfo": {"renewalIntervalInSecs": 30, "durationInSecs": 3600},
        "vipAddress": "latency-target"}}).encode()


def latency(args, log_dir: Path) -> dict:
    srv = bench.start_server("heureka", log_dir, "latency")
    port = bench.free_port()
    iid = f"{HOST}:latency-target:{port}"
    status, _ = http("POST", f"{srv.url}/eureka/apps/{TARGET_APP}", target_body(port),
                     {"Content-Type": "application/json"})
    assert status == 204, status
    drivers = {f"rust, fetch every {args.interval} s": Driver("rust-fast", srv, log_dir, args.interval,
                                                              args.interval, TARGET_APP, poll_ms=5),
               "rust, fetch every 30 s (default)": Driver("rust-default", srv, log_dir, args.interval, DEFAULT_FETCH,
                                                          TARGET_APP, poll_ms=5)}
    spring = None
    if args.java_latency:
        spring, spring_port = start_spring("spring-latency", srv, log_dir, args.interval)
        wait_for("Spring latency client serves /services",
                 lambda: http("GET", f"http://{HOST}:{spring_port}/services")[0] == 200, 180, 0.5)

    def rust_sees_up(events, since_ms):
        for e in events:
            if e.get("event") == "refresh" and e["at_ms"] >= since_ms:
                yield e["at_ms"], iid in [i["id"] for i in e["apps"].get(TARGET_APP, [])]

    def spring_sees_up():
        _, body = http("GET", f"http://{HOST}:{spring_port}/instances/latency-target")
        return iid in [i.get("instanceId") for i in json.loads(body)]

    for name, d in drivers.items():
        wait_for(f"{name} holds the target UP",
                 lambda d=d: any(up for _, up in rust_sees_up(d.snapshot(), 0)) or
                 any(iid in [i["id"] for i in e.get("apps", {}).get(TARGET_APP, [])]
                     for e in d.snapshot() if e.get("event") == "started"), 60)
    if spring:
        wait_for("the Spring app holds the target UP", spring_sees_up, 120, 0.5)

    samples: dict[str, list[float]] = {k: [] for k in drivers}
    if spring:
        samples[f"spring (polled every 50 ms), fetch every {args.interval} s"] = []
    for n in range(args.changes):
        want_up = n % 2 == 1       # first OUT_OF_SERVICE, then back UP, ...
        # a random phase against both fetch timers: the previous change was seen right after a
        # 30 s refresh, so without it every change would land at the start of a 30 s wait
        time.sleep(random.uniform(0, DEFAULT_FETCH))
        t_ms = time.time() * 1000
        path = f"{srv.url}/eureka/apps/{TARGET_APP}/{iid}/status?value={'UP' if want_up else 'OUT_OF_SERVICE'}"
        status, _ = http("DELETE" if want_up else "PUT", path)
        assert status == 200, status
        pending = dict(drivers)
        spring_done = spring is None
        deadline = time.monotonic() + 90
        while (pending or not spring_done) and time.monotonic() < deadline:
            for name, d in list(pending.items()):
                hit = next((at for at, up in rust_sees_up(d.snapshot(), t_ms) if up == want_up), None)
                if hit is not None:
                    samples[name].append(hit - t_ms)
                    del pending[name]
            if not spring_done and spring_sees_up() == want_up:
                samples[f"spring (polled every 50 ms), fetch every {args.interval} s"].append(time.time() * 1000 - t_ms)
                spring_done = True
            time.sleep(0.05 if not spring_done else 0.005)
        if pending:
            raise bench.BenchError(f"change {n}: not seen within 90 s by {list(pending)}")
        bench.log(f"change {n + 1}/{args.changes} ({'UP' if want_up else 'OUT_OF_SERVICE'}) seen by all")
    out = {}
    for name, xs in samples.items():
        out[name] = {"n": len(xs), "median_ms": round(statistics.median(xs)), "min_ms": round(min(xs)),
                     "max_ms": round(max(xs)), "samples_ms": [round(x) for x in xs]}
    for d in drivers.values():
        bench.stop_process(d.proc)
    if spring:
        bench.stop_process(spring)
    srv.stop()
    return out


def write_md(res: dict, path: Path) -> None:
    f = res["footprint"]
    lines = [
        "# The Rust client beside the Java client",
        "",
        f"`python3 bench/client.py` — {res['when']}, {res['machine']}.",
        f"Load average at the window's start {tuple(round(x, 2) for x in f['load_avg_start'])}, "
        f"end {tuple(round(x, 2) for x in f['load_avg_end'])}; the machine's CPUs were "
        f"{100 * f['machine_busy_share']:.0f} % busy during it (a shared 2-core machine: other "
        f"engineers' builds and tests ran too).",
        "",
        f"## Footprint: heartbeat and registry refresh every {res['interval_s']} s, "
        f"{f['window_s']:.0f} s window after {res['warmup_s']} s warm-up",
        "",
        "Each client has its own Heureka, which counts its heartbeats; CPU is the client process's "
        "utime+stime over the window. The Java client is the interop suite's Spring Boot app "
        "(spring-cloud-starter-netflix-eureka-client, `java -jar` with the JVM's default flags), so "
        "its figures include Spring Boot and its embedded web server, as a Spring service carries them. "
        "The Rust figures include the driver's own work: one JSON line on stdout per refresh and a "
        "look at the fetch counts every second. A count of CPU ticks is 10 ms, so the window is long.",
        "",
        "| client | RSS median (MiB) | RSS max (MiB) | heartbeats | CPU (s) | CPU per heartbeat (ms) |",
        "|---|---|---|---|---|---|",
    ]
    for k, label in (("rust", "Rust (heureka-client driver)"), ("java", "Java (Spring Cloud Eureka client app)")):
        c = f[k]
        lines.append(f"| {label} | {c['rss_mib_median']} | {c['rss_mib_max']} | {c['heartbeats']} | "
                     f"{c['cpu_s']} | {c['cpu_ms_per_heartbeat']} |")
    lines += ["", f"Rust/Java: RSS **{f['ratio_rss']}**, CPU per heartbeat **{f.get('ratio_cpu_per_heartbeat')}**.",
              "", "## Status change on the server → the client acting on it", "",
              "Mechanism: the client follows Heureka's push (docs/push.md) by default, so a change "
              "reaches its copy as a pushed delta whatever its registry-fetch-interval; against a "
              "server without push (the Java server, or `heureka.push.enabled=false`) it learns of a "
              "change at its next registry refresh, a `GET apps/delta` every "
              "registry-fetch-interval (Heureka has no read-only response cache, so the delta carries "
              "the change at once; the Java server's 30 s read-only cache would add up to 30 s more), "
              "and the latency is the wait for the next refresh tick plus one round trip. Measured from "
              "just before the PUT/DELETE status request to the refresh event the driver "
              "printed (it polls the fetch counts every 5 ms).", "",
              "| client | changes | median (ms) | min (ms) | max (ms) | samples (ms) |", "|---|---|---|---|---|---|"]
    for name, s in res["latency"].items():
        lines.append(f"| {name} | {s['n']} | {s['median_ms']} | {s['min_ms']} | {s['max_ms']} | "
                     f"{', '.join(map(str, s['samples_ms']))} |")
    lines.append("")
    path.write_text("\n".join(lines))


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--seconds", type=int, default=180, help="footprint window")
    parser.add_argument("--warmup", type=int, default=20)
    parser.add_argument("--interval", type=int, default=1, help="heartbeat and fast fetch interval (s)")
    parser.add_argument("--changes", type=int, default=6, help="status changes in the latency run")
    parser.add_argument("--java-latency", action=argparse.BooleanOptionalAction, default=True)
    parser.add_argument("--skip-build", action="store_true")
    parser.add_argument("--out", type=Path, default=bench.BENCH / "results")
    args = parser.parse_args()

    if not args.skip_build:
        bench.run_quiet(["cargo", "build", "--release", "-p", "heureka"], bench.ROOT, "build Heureka", 1800)
        bench.run_quiet(["cargo", "build", "--release", "-p", "heureka-client", "--example", "interop_driver"],
                        bench.ROOT, "build the Rust client driver", 1800)
    if not SPRING_JAR.exists():
        bench.run_quiet(["mvn", "-q", "-B", "-DskipTests", "package"], bench.JAVA_DIR, "build the Spring client", 1800)
    log_dir = args.out / "logs"
    log_dir.mkdir(parents=True, exist_ok=True)
    res = {"when": dt.datetime.now(dt.timezone.utc).strftime("%Y-%m-%d %H:%M UTC"),
           "machine": f"{platform.machine()}, {os.cpu_count()} CPUs, Linux {platform.release()}",
           "interval_s": args.interval, "warmup_s": args.warmup}
    try:
        res["footprint"] = footprint(args, log_dir)
        res["latency"] = latency(args, log_dir)
    finally:
        bench.stop_all()
    (args.out / "client.json").write_text(json.dumps(res, indent=2) + "\n")
    write_md(res, args.out / "client.md")
    print((args.out / "client.md").read_text())
    return 0


if __name__ == "__main__":
    sys.exit(main())
