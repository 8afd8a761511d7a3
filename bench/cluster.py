#!/usr/bin/env python3
"""Cluster benchmark: a three-node Heureka cluster vs a three-node Spring Cloud Eureka cluster.

In one run, for each server (Heureka, then the real Java server) it measures:

* server CPU (utime+stime from /proc, summed over the cluster's processes) per client heartbeat
  and per registration at a fixed request rate to one node, on a lone node and on a three-node
  cluster: what replication costs;
* register on node A -> visible on node B (single-instance read on B), median and p99;
* how long a killed and restarted node takes to hold the whole registry (10,000; 100,000 for
  Heureka);
* client-request p99 on node A (wrk: heartbeat, registration, full fetch) with all peers
  healthy, with one peer dead (SIGKILL) and with one peer black-holed (a proxy that accepts
  and never answers).

    python3 bench/cluster.py            # full run, about 15 minutes on 2 cores
    python3 bench/cluster.py --smoke    # every measurement briefly (CI), about 2 minutes

Writes bench/results/cluster.{md,json} (smoke: bench/results/smoke/). See bench/README.md,
"Clusters". Standard library only; shares its helpers with run.py.
"""

from __future__ import annotations

import argparse
import asyncio
import datetime as dt
import gzip
import http.client
import json
import os
import re
import resource
import signal
import socket
import statistics
import struct
import subprocess
import sys
import threading
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import run as R  # noqa: E402  (bench/run.py: build, wrk, /proc helpers, instance naming)
from run import BenchError, log  # noqa: E402

KINDS = ("heureka", "java")
HOST = "127.0.0.1"
JSON_H = {"Accept": "application/json"}
# The bench's instances must not expire while it runs (self-preservation is off, as in run.py):
# the register bodies are run.py's with a one-hour lease instead of 90 s.
LONG_LEASE = b'"durationInSecs":3600'


# --------------------------------------------------------------------------------------------
# Configuration of the nodes (the exact command lines are also written to cluster.json)


def service_url(port: int) -> str:
    return f"http://{HOST}:{port}/eureka/"


def node_argv(kind: str, port: int, peer_urls: list[str], cfg, java_default_cache: bool = False) -> list[str]:
    """The command line of one node. Both servers get the same Spring keys; peers come from
    defaultZone (the peers first, the node itself last: Java's embedded client, whose registry
    Java's start-up sync copies, fetches from the first URL that answers)."""
    me = service_url(port)
    urls = [u for u in peer_urls if u != me] + [me]
    spring = [
        f"--server.port={port}",
        f"--server.address={HOST}",
        f"--eureka.instance.hostname={HOST}",
        f"--eureka.client.service-url.defaultZone={','.join(urls)}",
        "--eureka.client.register-with-eureka=false",
        "--eureka.client.fetch-registry=true",
        "--eureka.server.enable-self-preservation=false",
        "--eureka.server.wait-time-in-ms-when-sync-empty=0",
        f"--eureka.server.registry-sync-retries={cfg.sync_retries}",
        f"--eureka.server.registry-sync-retry-wait-ms={cfg.sync_retry_wait_ms}",
    ]
    if kind == "heureka":
        return [str(R.RUN_BIN["heureka"]), *spring]
    java = [
        # Java recognises itself by host name only, and all nodes here are 127.0.0.1; with
        # my-url it compares whole URLs instead, so each node sees the other two as peers
        f"--eureka.server.my-url={me}",
        # the start-up sync copies the embedded client's registry: keep all statuses
        "--eureka.client.filter-only-up-instances=false",
    ]
    if not java_default_cache:
        # reads straight from the registry (through the invalidated read-write cache), not the
        # 30 s read-only snapshot; Heureka has no such snapshot
        java.append("--eureka.server.use-read-only-response-cache=false")
    return ["java", "-jar", str(R.JAR), *spring, *java]


# --------------------------------------------------------------------------------------------
# Processes


class Node:
    """One server process on a fixed port (it keeps the port across restarts)."""

    def __init__(self, kind: str, name: str, port: int, log_dir: Path):
        self.kind, self.key, self.name, self.port, self.log_dir = kind, kind, name, port, log_dir
        self.argv: list[str] = []
        self.proc: subprocess.Popen | None = None
        self.starts = 0
        self.spawned_at = 0.0

    @property
    def url(self) -> str:
        return f"http://{HOST}:{self.port}"

    def start(self, argv: list[str]) -> None:
        assert not self.alive(), f"{self.name} already running"
        self.argv = argv
        self.starts += 1
        log_path = self.log_dir / f"{self.name}.{self.starts}.log"
        with open(log_path, "wb") as f:
            f.write(("$ " + " ".join(argv) + "\n").encode())
            f.flush()
            self.spawned_at = time.perf_counter()
            self.proc = subprocess.Popen(argv, stdout=f, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
                                         cwd=self.log_dir, start_new_session=True)
        R.STARTED.append(self.proc)
        self.log_path = log_path

    def alive(self) -> bool:
        return self.proc is not None and self.proc.poll() is None

    def cpu(self) -> float:
        return (R.cpu_seconds(self.proc.pid) or 0.0) if self.alive() else 0.0

    def kill(self) -> None:
        """SIGKILL, as a crash."""
        if self.alive():
            self.proc.kill()
            self.proc.wait(timeout=30)
        if self.proc in R.STARTED:
            R.STARTED.remove(self.proc)

    def stop(self) -> None:
        if self.proc is not None:
            R.stop_process(self.proc)

    def request(self, method: str, path: str, body: bytes | None = None, headers: dict | None = None,
                timeout: float = 10.0) -> tuple[int, bytes, dict]:
        conn = http.client.HTTPConnection(HOST, self.port, timeout=timeout)
        try:
            conn.request(method, path, body=body, headers=headers or {})
            resp = conn.getresponse()
            data = resp.read()
            return resp.status, data, {k.lower(): v for k, v in resp.getheaders()}
        finally:
            conn.close()

    def count(self, timeout: float = 30.0) -> tuple[int, int | None]:
        """(status, instances) of GET /eureka/apps (JSON, gzip); instances from apps__hashcode."""
        status, body, headers = self.request("GET", "/eureka/apps", headers=R.JSON_GZIP, timeout=timeout)
        if status != 200:
            return status, None
        return status, hashcode_count(R.decoded(body, headers))

    def status_doc(self) -> object:
        """GET /eureka/status: JSON from Heureka; XML from Java (its JSON form answers 500)."""
        try:
            status, body, _ = self.request("GET", "/eureka/status", headers=JSON_H if self.kind == "heureka" else {},
                                           timeout=5)
            if status != 200:
                return f"HTTP {status}"
            return json.loads(body) if self.kind == "heureka" else body.decode(errors="replace")[:4000]
        except (OSError, http.client.HTTPException, ValueError) as e:
            return f"{type(e).__name__}: {e}"


HASHCODE = re.compile(rb'"apps__hashcode"\s*:\s*"([^"]*)"')


def hashcode_count(doc: bytes) -> int:
    """Instances in a full fetch, from apps__hashcode ("UP_9998_DOWN_2_"): cheap even at 100k."""
    m = HASHCODE.search(doc[:4096]) or HASHCODE.search(doc)
    if not m:
        return R.count_instances(doc)
    parts = m.group(1).decode().strip("_").split("_")
    return sum(int(c) for c in parts[1::2] if c.isdigit())


def wait_ready(nodes: list[Node], deadline_s: float) -> dict[str, float]:
    """Polls every node until GET /eureka/apps answers 200; returns seconds from spawn per node."""
    out: dict[str, float] = {}
    end = time.perf_counter() + deadline_s
    while len(out) < len(nodes):
        for n in nodes:
            if n.name in out:
                continue
            if not n.alive():
                raise BenchError(f"{n.name} exited during start-up (log {n.log_path}):\n{R.tail_of(n.log_path)}")
            try:
                # XML (no Accept): a JSON poll would not matter here, but keep run.py's habit
                if n.request("GET", "/eureka/apps", timeout=2)[0] == 200:
                    out[n.name] = round(time.perf_counter() - n.spawned_at, 3)
            except (OSError, http.client.HTTPException):
                pass
        if time.perf_counter() > end:
            missing = [n.name for n in nodes if n.name not in out]
            raise BenchError(f"{', '.join(missing)} gave no 200 on /eureka/apps within {deadline_s:.0f} s")
        time.sleep(0.02)
    return out


# --------------------------------------------------------------------------------------------
# A TCP proxy between peers that can black-hole: accept, read and drop, never answer.


class _Conn:
    """One proxied connection; `held` once black-holed."""

    def __init__(self, client, held: bool):
        self.client, self.held = client, held
        self.upstream = None
        self.tasks: list = []


class Proxy:
    def __init__(self, target_port: int, name: str):
        self.target_port, self.name = target_port, name
        self.mode = "pass"
        self.port = 0
        self.stats = {"accepted": 0, "forwarded": 0, "refused_upstream": 0, "blackholed": 0}
        self._conns: set = set()
        self._loop = asyncio.new_event_loop()
        self._thread = threading.Thread(target=self._run, name=name, daemon=True)
        ready = threading.Event()
        self._ready = ready
        self._thread.start()
        if not ready.wait(10):
            raise BenchError(f"proxy {name} did not start")

    def _run(self) -> None:
        asyncio.set_event_loop(self._loop)
        self._stopping = asyncio.Event()
        server = self._loop.run_until_complete(asyncio.start_server(self._accept, HOST, 0))
        self.port = server.sockets[0].getsockname()[1]
        self._ready.set()
        self._loop.run_forever()

    def set_mode(self, mode: str) -> None:
        def switch():
            old, self.mode = self.mode, mode
            if old == "blackhole" and mode == "pass":
                for c in list(self._conns):   # held connections end with a reset, as a peer
                    if c.held:             # coming back would end them
                        self._abort(c)
            if mode == "blackhole":
                for c in self._conns:
                    c.held = True
        self._loop.call_soon_threadsafe(switch)
        time.sleep(0.05)

    def close(self) -> None:
        if self._loop.is_running():
            try:
                asyncio.run_coroutine_threadsafe(self._shutdown(), self._loop).result(5)
            finally:
                self._loop.call_soon_threadsafe(self._loop.stop)
                self._thread.join(5)

    async def _shutdown(self) -> None:
        for c in list(self._conns):
            self._abort(c)
        self._stopping.set()
        await asyncio.sleep(0.05)

    def _abort(self, c: "_Conn") -> None:
        self._conns.discard(c)
        for w in (c.client, c.upstream):
            if w is not None:
                sock = w.get_extra_info("socket")
                try:
                    if sock is not None:
                        sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
                except OSError:
                    pass
                w.transport.abort()

    async def _accept(self, reader, writer) -> None:
        self.stats["accepted"] += 1
        c = _Conn(writer, self.mode == "blackhole")
        self._conns.add(c)
        if c.held:
            self.stats["blackholed"] += 1
            await self._drain(reader)
            return
        try:
            up_r, up_w = await asyncio.wait_for(asyncio.open_connection(HOST, self.target_port), 5)
        except (OSError, asyncio.TimeoutError):
            # the target is down: reset, so the peer sees a failed connection at once
            self.stats["refused_upstream"] += 1
            self._abort(c)
            return
        self.stats["forwarded"] += 1
        c.upstream = up_w
        c.tasks = [asyncio.ensure_future(self._pump(c, reader, up_w)),
                      asyncio.ensure_future(self._pump(c, up_r, writer))]
        await asyncio.gather(*c.tasks, return_exceptions=True)
        if c in self._conns:
            self._conns.discard(c)
            for w in (writer, up_w):
                w.close()

    async def _pump(self, c: "_Conn", src, dst) -> None:
        try:
            while True:
                data = await src.read(65536)
                if not data:
                    break
                if c.held:
                    continue   # black-holed: swallow, never forward, never answer
                dst.write(data)
                await dst.drain()
        except (OSError, asyncio.IncompleteReadError):
            pass
        if c.held:
            await self._stopping.wait()   # hold the other direction open too

    async def _drain(self, reader) -> None:
        try:
            while await reader.read(65536):
                pass
        except OSError:
            pass
        await self._stopping.wait()


# --------------------------------------------------------------------------------------------
# Requests


def body_for(iid: str, app_index: int, ip: str) -> bytes:
    return R.register_body(iid, app_index, ip).replace(b'"durationInSecs":90', LONG_LEASE)


def load(node: Node, ids: range, napps: int, threads: int = 8) -> float:
    """Registers instances ids (run.py's naming) on one node; every answer must be 204."""
    failures: list[str] = []

    def worker(t: int) -> None:
        conn = http.client.HTTPConnection(HOST, node.port, timeout=60)
        for i in ids[t::threads]:
            a = i % napps
            for attempt in range(2):
                try:
                    conn.request("POST", f"/eureka/apps/BENCH-APP-{a}", body=body_for(R.instance_id(i, napps), a, R.ip_of(i)),
                                 headers={"Content-Type": "application/json"})
                    resp = conn.getresponse()
                    resp.read()
                    if resp.status != 204:
                        failures.append(f"HTTP {resp.status}")
                    break
                except (OSError, http.client.HTTPException) as e:
                    conn.close()
                    conn = http.client.HTTPConnection(HOST, node.port, timeout=60)
                    if attempt:
                        failures.append(type(e).__name__)
            if len(failures) > 20:
                return
        conn.close()

    t0 = time.perf_counter()
    pool = [threading.Thread(target=worker, args=(t,), daemon=True) for t in range(threads)]
    for th in pool:
        th.start()
    for th in pool:
        th.join(timeout=1800)
    if failures:
        raise BenchError(f"loading {len(ids)} instances into {node.name}: {len(failures)}+ failed, "
                         f"e.g. {sorted(set(failures))[:5]}")
    return time.perf_counter() - t0


def wait_count(nodes: list[Node], want: int, deadline_s: float, what: str) -> float:
    """Until every node's full fetch holds exactly `want` instances; returns the seconds it took."""
    t0 = time.perf_counter()
    last: dict = {}
    while True:
        done = True
        for n in nodes:
            try:
                last[n.name] = n.count()
            except (OSError, http.client.HTTPException) as e:
                last[n.name] = type(e).__name__
            if last[n.name] != (200, want):
                done = False
        if done:
            return time.perf_counter() - t0
        if time.perf_counter() - t0 > deadline_s:
            raise BenchError(f"{what}: not every node holds {want} instances after {deadline_s:.0f} s: {last}")
        time.sleep(0.25)


def paced(node: Node, rate: float, duration: float, make, threads: int = 4) -> dict:
    """Open-loop load at a fixed rate: request k is due at t0 + k/rate (keep-alive connections,
    `threads` senders). make(k) -> (method, path, body, headers)."""
    total = max(1, int(rate * duration))
    lock = threading.Lock()
    lat: list[float] = []
    counts = {"ok": 0, "non2xx": 0, "errors": 0, "late_s": 0.0}
    t0 = time.perf_counter() + 0.05

    def worker(t: int) -> None:
        conn = None
        for k in range(t, total, threads):
            delay = t0 + k / rate - time.perf_counter()
            if delay > 0:
                time.sleep(delay)
            method, path, body, headers = make(k)
            s = time.perf_counter()
            try:
                if conn is None:
                    conn = http.client.HTTPConnection(HOST, node.port, timeout=10)
                conn.request(method, path, body=body, headers=headers)
                resp = conn.getresponse()
                resp.read()
                e = time.perf_counter()
                with lock:
                    lat.append(e - s)
                    counts["ok" if resp.status < 300 else "non2xx"] += 1
                    counts["late_s"] = max(counts["late_s"], -delay)
            except (OSError, http.client.HTTPException):
                with lock:
                    counts["errors"] += 1
                if conn is not None:
                    conn.close()
                conn = None
        if conn is not None:
            conn.close()

    pool = [threading.Thread(target=worker, args=(t,), daemon=True) for t in range(threads)]
    for th in pool:
        th.start()
    for th in pool:
        th.join(timeout=duration + 120)
    secs = time.perf_counter() - t0
    lat.sort()
    return {
        "target_rps": rate, "requests": counts["ok"] + counts["non2xx"], "ok": counts["ok"],
        "non2xx": counts["non2xx"], "errors": counts["errors"], "seconds": round(secs, 3),
        "achieved_rps": round((counts["ok"] + counts["non2xx"]) / secs, 1),
        "max_lateness_ms": round(counts["late_s"] * 1000, 1),
        "p50_ms": round(lat[len(lat) // 2] * 1000, 3) if lat else None,
        "p99_ms": round(lat[min(len(lat) - 1, int(len(lat) * 0.99))] * 1000, 3) if lat else None,
    }


def heartbeat_req(n: int, napps: int):
    def make(k: int):
        i = k % n
        return ("PUT", f"/eureka/apps/BENCH-APP-{i % napps}/{R.instance_id(i, napps)}"
                f"?status=UP&lastDirtyTimestamp={R.LAST_DIRTY}", None, {})
    return make


def register_req(tag: str, napps: int, base: int):
    """New instance ids on every request (the registry grows by one per request)."""
    def make(k: int):
        a = k % napps
        i = base + k
        iid = f"{tag}-{k}:bench-app-{a}:8080"
        return ("POST", f"/eureka/apps/BENCH-APP-{a}", body_for(iid, a, R.ip_of(i)),
                {"Content-Type": "application/json"})
    return make


# --------------------------------------------------------------------------------------------
# Measurements


def self_cpu() -> float:
    ru = resource.getrusage(resource.RUSAGE_SELF)
    return ru.ru_utime + ru.ru_stime


def cpu_per_request(nodes: list[Node], make, cfg, what: str) -> dict:
    """Cluster CPU per request at a fixed rate to nodes[0]: the CPU of all nodes over the load and
    a short tail (replication is batched, so some of its work lands just after the last request),
    minus their idle CPU rate measured right before, divided by the requests."""
    rate, duration = (cfg.hb_rate, cfg.cpu_duration) if what == "heartbeat" else (cfg.reg_rate, cfg.cpu_duration)
    c0 = [n.cpu() for n in nodes]
    time.sleep(cfg.idle_window)
    c1 = [n.cpu() for n in nodes]
    idle_rate = sum(b - a for a, b in zip(c0, c1)) / cfg.idle_window
    st0, me0 = R.proc_stat(), self_cpu()
    res = paced(nodes[0], rate, duration, make)
    time.sleep(cfg.tail)
    c2 = [n.cpu() for n in nodes]
    st1, me1 = R.proc_stat(), self_cpu()
    time.sleep(cfg.idle_window)
    c3 = [n.cpu() for n in nodes]
    idle_after = sum(b - a for a, b in zip(c2, c3)) / cfg.idle_window
    # the lower of the idle rates before and after: a JVM's background compiling and collecting
    # fades, and charging the requests with the lower rate does not flatter anyone
    idle_before, idle_rate = idle_rate, min(idle_rate, idle_after)
    window = res["seconds"] + cfg.tail
    gross = sum(b - a for a, b in zip(c1, c2))
    net = max(0.0, gross - idle_rate * window)
    ok = max(1, res["ok"])
    res.update({
        "window_s": round(window, 3), "idle_cpu_per_s": round(idle_rate, 4),
        "idle_cpu_per_s_before": round(idle_before, 4), "idle_cpu_per_s_after": round(idle_after, 4), "cpu_gross_s": round(gross, 3),
        "cpu_net_s": round(net, 3), "cpu_us_per_req": round(net / ok * 1e6, 2),
        "cpu_gross_us_per_req": round(gross / ok * 1e6, 2),
        "cpu_by_node_s": {n.name: round(b - a, 3) for n, a, b in zip(nodes, c1, c2)},
    })
    if st0 and st1:
        total, busy = st1[0] - st0[0], st1[1] - st0[1]
        if total > 0:
            # CPU used by anything but these servers and this script (load generator, proxies)
            res["other_cpu_share"] = round(max(0.0, (busy - gross - (me1 - me0)) / total), 3)
    if res["non2xx"] or res["errors"]:
        log(f"    WARNING: {res['non2xx']} non-2xx, {res['errors']} errors")
    log(f"    {what:9} {len(nodes)} node(s): {res['cpu_us_per_req']:8.1f} µs CPU/request "
        f"(gross {res['cpu_gross_us_per_req']:.1f}, idle {idle_rate * 1000:.1f} ms/s) at {res['achieved_rps']:.0f}/s, "
        f"by node {res['cpu_by_node_s']}")
    return res


def warm_up(node: Node, n: int, napps: int, cfg, tag: str) -> None:
    """JIT warm-up (matters for Java, harmless for Heureka): bursts of wrk heartbeats and
    re-registrations of the loaded instances with pauses (see run.py's warm_up for why)."""
    for i in range(cfg.warmup_runs):
        for script, args in (("heartbeat.lua", [str(n), str(napps), str(cfg.threads)]),
                             ("register.lua", [str(napps), f"{tag}w{i}", str(n)])):
            try:
                R.run_wrk(node, script, "", args, cfg.warmup, cfg, cfg.log_dir, f"{node.name}-warmup{i}-{script}")
            except BenchError as e:
                log(f"    warm-up: {e}")
        time.sleep(cfg.warmup_pause)


def verify_replication(cluster: list[Node], deadline_s: float) -> float:
    """A registration on node A must show on B and C (Java must replicate for real)."""
    a = cluster[0]
    iid = f"probe-{os.getpid()}-{a.starts}:bench-probe:8080"
    st, _, _ = a.request("POST", "/eureka/apps/BENCH-PROBE", body_for(iid, 0, "10.250.0.1").replace(
        b"BENCH-APP-0", b"BENCH-PROBE"), {"Content-Type": "application/json"})
    if st != 204:
        raise BenchError(f"probe registration on {a.name} answered {st}")
    t0 = time.perf_counter()
    pending = list(cluster[1:])
    while pending:
        pending = [n for n in pending if n.request("GET", f"/eureka/apps/BENCH-PROBE/{iid}", headers=JSON_H)[0] != 200]
        if time.perf_counter() - t0 > deadline_s:
            raise BenchError(f"a registration on {a.name} did not reach {[n.name for n in pending]} "
                             f"within {deadline_s:.0f} s: the cluster does not replicate")
        time.sleep(0.05)
    # and away again, so it does not count in the full fetch
    a.request("DELETE", f"/eureka/apps/BENCH-PROBE/{iid}")
    return time.perf_counter() - t0


def propagation(src: Node, dst: Node, samples: int, cap_s: float, threads: int = 4) -> dict:
    """Register on src, then poll dst's GET /eureka/apps/{APP}/{id} (JSON) every 2 ms until 200:
    time from src's 204 to the end of dst's 200. `threads` registrations in flight at a time."""
    out: list[float] = []
    capped = [0]
    lock = threading.Lock()

    def worker(t: int) -> None:
        reg = http.client.HTTPConnection(HOST, src.port, timeout=10)
        poll = http.client.HTTPConnection(HOST, dst.port, timeout=10)
        try:
            for k in range(t, samples, threads):
                a = k % 10
                iid = f"prop-{os.getpid()}-{src.starts}-{k}:bench-app-{a}:8080"
                reg.request("POST", f"/eureka/apps/BENCH-APP-{a}", body=body_for(iid, a, f"10.252.{k // 256 % 256}.{k % 256}"),
                            headers={"Content-Type": "application/json"})
                r = reg.getresponse()
                r.read()
                t204 = time.perf_counter()
                if r.status != 204:
                    raise BenchError(f"propagation: register on {src.name} answered {r.status}")
                seen = None
                while time.perf_counter() - t204 < cap_s:
                    poll.request("GET", f"/eureka/apps/BENCH-APP-{a}/{iid}", headers=JSON_H)
                    p = poll.getresponse()
                    p.read()
                    if p.status == 200:
                        seen = time.perf_counter() - t204
                        break
                    time.sleep(0.002)
                with lock:
                    if seen is None:
                        capped[0] += 1
                        out.append(cap_s)
                    else:
                        out.append(seen)
                time.sleep(0.01 * (t + 1))   # spread the registrations a little
        finally:
            reg.close()
            poll.close()

    pool = [threading.Thread(target=worker, args=(t,), daemon=True) for t in range(threads)]
    for th in pool:
        th.start()
    for th in pool:
        th.join(timeout=samples * cap_s + 60)
    if not out:
        raise BenchError("propagation: no sample")
    out.sort()
    res = {
        "samples": len(out), "capped": capped[0], "cap_ms": cap_s * 1000,
        "median_ms": round(statistics.median(out) * 1000, 2),
        "p99_ms": round(out[min(len(out) - 1, int(len(out) * 0.99))] * 1000, 2),
        "min_ms": round(out[0] * 1000, 2), "max_ms": round(out[-1] * 1000, 2),
    }
    log(f"    propagation {src.name} -> {dst.name}: median {res['median_ms']} ms, p99 {res['p99_ms']} ms "
        f"({res['samples']} samples, {res['capped']} capped)")
    return res


def propagation_via_delta(src: Node, dst: Node, samples: int, cap_s: float) -> dict:
    """Register on src, then poll dst's GET /eureka/apps/delta (JSON, gzip; what a running client
    fetches every 30 s) every 50 ms until the instance is in it. One at a time."""
    out: list[float] = []
    capped = 0
    for k in range(samples):
        a = k % 10
        iid = f"dprop-{os.getpid()}-{k}:bench-app-{a}:8080"
        st, _, _ = src.request("POST", f"/eureka/apps/BENCH-APP-{a}", body_for(iid, a, f"10.253.0.{k % 256}"),
                               {"Content-Type": "application/json"})
        t204 = time.perf_counter()
        if st != 204:
            raise BenchError(f"delta propagation: register on {src.name} answered {st}")
        seen = None
        while time.perf_counter() - t204 < cap_s:
            st, body, headers = dst.request("GET", "/eureka/apps/delta", headers=R.JSON_GZIP)
            if st == 200 and iid.encode() in R.decoded(body, headers):
                seen = time.perf_counter() - t204
                break
            time.sleep(0.05)
        if seen is None:
            capped += 1
        out.append(seen if seen is not None else cap_s)
    res = {"samples": len(out), "capped": capped, "cap_ms": cap_s * 1000,
           "median_ms": round(statistics.median_high(out) * 1000, 1),
           "max_ms": round(max(out) * 1000, 1), "samples_ms": [round(x * 1000, 1) for x in out]}
    log(f"    delta propagation {src.name} -> {dst.name}: median {res['median_ms']} ms, samples {res['samples_ms']}")
    return res


def restart(node: Node, argv: list[str], want: int, deadline_s: float) -> dict:
    """SIGKILL the node, start it again on its port and poll GET /eureka/apps (JSON, gzip) every
    50 ms: seconds from the spawn to the first answer, the first 200, and the first 200 holding
    all `want` instances. Every status seen on the way is kept (Heureka answers 403 until its
    start-up sync is done)."""
    node.kill()
    time.sleep(0.5)
    node.start(argv)
    t0 = node.spawned_at
    seen: dict[str, float] = {}
    statuses: list[tuple[float, object]] = []
    first_200_count = None
    while True:
        el = time.perf_counter() - t0
        if not node.alive():
            raise BenchError(f"{node.name} exited after restart:\n{R.tail_of(node.log_path)}")
        if el > deadline_s:
            raise BenchError(f"{node.name} did not hold {want} instances within {deadline_s:.0f} s of its "
                             f"restart (statuses seen: {statuses[-5:]})")
        try:
            st, cnt = node.count(timeout=60)
            el = time.perf_counter() - t0
            seen.setdefault("first_answer_s", el)
            obs = (st, cnt)
            if not statuses or statuses[-1][1] != obs:
                statuses.append((round(el, 3), obs))
            if st == 200:
                if first_200_count is None:
                    first_200_count = cnt
                    seen["first_200_s"] = el
                if cnt == want:
                    seen["full_s"] = el
                    break
        except (OSError, http.client.HTTPException):
            pass
        time.sleep(0.05)
    res = {k: round(v, 3) for k, v in seen.items()}
    res.update({"instances": want, "first_200_instances": first_200_count,
                "statuses_seen": [[t, list(o)] for t, o in statuses[:20]],
                "rss_bytes": R.rss_bytes(node.proc.pid)})
    log(f"    restart of {node.name} with {want:,} instances: full after {res['full_s']:.2f} s "
        f"(first answer {res['first_answer_s']:.2f} s, first 200 at {res['first_200_s']:.2f} s "
        f"with {first_200_count}); statuses {res['statuses_seen'][:6]}")
    return res


FAULT_WORKLOADS = {
    # name: (script, path, args(n, napps, threads, tag))
    "heartbeat": ("heartbeat.lua", "", lambda n, na, th, tag: [str(n), str(na), str(th)]),
    # re-registers the loaded instances: the same path as a new registration (and replicated
    # alike) without growing the registry from one condition to the next
    "register": ("register.lua", "", lambda n, na, th, tag: [str(na), tag, str(n)]),
    "full_fetch": ("fetch.lua", "/eureka/apps", lambda n, na, th, tag: []),
}


def fault_round(a: Node, n: int, napps: int, cfg, cond: str) -> dict:
    out = {}
    wcfg = argparse.Namespace(threads=cfg.threads, connections=cfg.fault_connections, wrk_timeout=cfg.wrk_timeout)
    for name, (script, path, argf) in FAULT_WORKLOADS.items():
        try:
            res = R.run_wrk(a, script, path, argf(n, napps, cfg.threads, f"f{cond}"), cfg.fault_duration, wcfg,
                            cfg.log_dir, f"{a.name}-{cond}-{name}")
        except BenchError as e:
            out[name] = {"failed": str(e)}
            log(f"    {cond:10} {name:10} FAILED: {e}")
            continue
        why = R.workload_ok(res)
        if why:
            res["failed"] = why
        out[name] = res
        log(f"    {cond:10} {name:10} p99 {res['p99_ms']:8.2f} ms  {res['rps']:9,.0f} req/s  "
            f"non-2xx {res['non2xx']}  sock-err {res['socket_errors']}" + (f"  FAILED: {why}" if why else ""))
    out["status_of_a"] = a.status_doc()
    return out


# --------------------------------------------------------------------------------------------
# One server kind: a lone node, then a three-node cluster


def make_cluster(kind: str, cfg, tag: str, size: int = 3) -> tuple[list[Node], list[Proxy], list[list[str]]]:
    """Nodes A, B, C (not started). The links to C (A->C, B->C) go through proxies, so that C
    can be black-holed; every other link is direct."""
    ports = [R.free_port() for _ in range(size)]
    nodes = [Node(kind, f"{kind}-{tag}-{chr(97 + i)}", p, cfg.log_dir) for i, p in enumerate(ports)]
    proxies = [Proxy(ports[-1], f"{n.name}->c") for n in nodes[:-1]]
    urls = []
    for i, n in enumerate(nodes):
        peers = []
        for j, p in enumerate(ports):
            if j == size - 1 and i != size - 1:
                peers.append(service_url(proxies[i].port))
            else:
                peers.append(service_url(p))
        urls.append(peers)
    return nodes, proxies, urls


def bench_kind(kind: str, cfg, results: dict, failures: list[str]) -> None:
    n, napps = cfg.n, R.napps_for(cfg.n)
    out = results["servers"].setdefault(kind, {})
    name = R.SHORT[kind]
    started: list[Node] = []
    proxies: list[Proxy] = []
    try:
        # ---- a lone node
        log(f"{name}: lone node, {n:,} instances")
        single = Node(kind, f"{kind}-single", R.free_port(), cfg.log_dir)
        started.append(single)
        argv = node_argv(kind, single.port, [service_url(single.port)], cfg)
        out["single_argv"] = argv
        single.start(argv)
        out["single_startup_s"] = wait_ready([single], cfg.start_deadline)[single.name]
        out["single_load_s"] = round(load(single, range(n), napps), 3)
        wait_count([single], n, 60, "lone node")
        warm_up(single, n, napps, cfg, "s")
        out["single_heartbeat"] = cpu_per_request([single], heartbeat_req(n, napps), cfg, "heartbeat")
        out["single_register"] = cpu_per_request([single], register_req("s", napps, 1 << 20), cfg, "register")
        out["single_rss_bytes"] = R.rss_bytes(single.proc.pid)
        single.stop()

        # ---- three nodes
        log(f"{name}: three-node cluster, {n:,} instances loaded on node A")
        nodes, proxies, urls = make_cluster(kind, cfg, "c")
        started += nodes
        a, b, c = nodes
        argvs = [node_argv(kind, x.port, u, cfg) for x, u in zip(nodes, urls)]
        out["cluster_argv"] = argvs
        for x, v in zip(nodes, argvs):
            x.start(v)
        out["cluster_startup_s"] = wait_ready(nodes, cfg.start_deadline)
        out["replication_verified_s"] = round(verify_replication(nodes, cfg.replication_deadline), 3)
        log(f"    a registration on A reached B and C after {out['replication_verified_s']:.2f} s")
        out["cluster_load_s"] = round(load(a, range(n), napps), 3)
        out["cluster_replicated_s"] = round(wait_count(nodes, n, cfg.replication_deadline, "after loading A"), 3)
        log(f"    loaded {n:,} on A in {out['cluster_load_s']:.1f} s; all nodes held them "
            f"{out['cluster_replicated_s']:.1f} s later")
        out["restart"] = {str(n): restart(c, argvs[2], n, cfg.restart_deadline)}
        wait_ready([c], cfg.start_deadline)
        warm_up(a, n, napps, cfg, "c")
        out["cluster_heartbeat"] = cpu_per_request(nodes, heartbeat_req(n, napps), cfg, "heartbeat")
        out["cluster_register"] = cpu_per_request(nodes, register_req("c", napps, 2 << 20), cfg, "register")
        out["cluster_status_after_load"] = a.status_doc()
        out["propagation"] = propagation(a, b, cfg.prop_samples, cfg.prop_cap)

        # ---- client p99 on A with C healthy, dead, black-holed
        faults = out.setdefault("faults", {})
        faults["healthy"] = fault_round(a, n, napps, cfg, "healthy")
        c.kill()
        time.sleep(1)
        faults["peer_dead"] = fault_round(a, n, napps, cfg, "peer_dead")
        for p in proxies:
            p.set_mode("blackhole")
        faults["peer_blackholed"] = fault_round(a, n, napps, cfg, "peer_blackholed")
        out["proxy_stats"] = {p.name: dict(p.stats) for p in proxies}
        for p in proxies:
            p.set_mode("pass")

        if kind == "java" and cfg.java_default_cache:
            # C comes back with Java's default configuration (read-only cache on): how long a
            # registration on A takes to reach what C's clients fetch (the delta)
            log("Java: node C restarted with the default read-only response cache")
            argv_c = node_argv(kind, c.port, urls[2], cfg, java_default_cache=True)
            out["default_cache_argv"] = argv_c
            st, want = a.count()
            out["default_cache_restart"] = restart(c, argv_c, want, cfg.restart_deadline)
            out["propagation_default_cache"] = propagation_via_delta(a, c, cfg.delta_samples, cfg.delta_cap)
        for x in nodes:
            x.stop()
        for p in proxies:
            p.close()
        proxies = []

        # ---- a bigger registry: restart with 100,000 (a fresh cluster)
        for big in cfg.big_sizes.get(kind, []):
            log(f"{name}: fresh three-node cluster, {big:,} instances, restart of node C")
            nodes, proxies, urls = make_cluster(kind, cfg, f"n{big}")
            started += nodes
            a, _, c = nodes
            argvs = [node_argv(kind, x.port, u, cfg) for x, u in zip(nodes, urls)]
            for x, v in zip(nodes, argvs):
                x.start(v)
            wait_ready(nodes, cfg.start_deadline)
            verify_replication(nodes, cfg.replication_deadline)
            ls = load(a, range(big), R.napps_for(big))
            rep = wait_count(nodes, big, cfg.big_replication_deadline, f"after loading {big} on A")
            log(f"    loaded {big:,} on A in {ls:.1f} s; all nodes held them {rep:.1f} s later")
            out.setdefault("big_load", {})[str(big)] = {"load_s": round(ls, 3), "replicated_s": round(rep, 3),
                                                        "status_of_a": a.status_doc()}
            out["restart"][str(big)] = restart(c, argvs[2], big, cfg.restart_deadline)
            for x in nodes:
                x.stop()
            for p in proxies:
                p.close()
            proxies = []
    except BenchError as e:
        failures.append(f"{name}: {e}")
        out["error"] = str(e)
        log(f"  {name} FAILED: {e}")
    finally:
        for x in started:
            x.stop()
        for p in proxies:
            p.close()


# --------------------------------------------------------------------------------------------
# Report


def g(d: dict, *path):
    for p in path:
        if not isinstance(d, dict) or p not in d:
            return None
        d = d[p]
    return d


def ratio(a, b):
    return a / b if isinstance(a, (int, float)) and isinstance(b, (int, float)) and b else None


def build_rows(results: dict, cfg) -> list[dict]:
    H, J = results["servers"].get("heureka", {}), results["servers"].get("java", {})
    rows: list[dict] = []

    def row(label, h, j, unit, note="", inverse=False):
        rows.append({"label": label, "heureka": h, "java": j, "unit": unit, "note": note,
                     "ratio": ratio(h, j)})

    for what, label in (("heartbeat", "heartbeat"), ("register", "registration")):
        hs, hc = g(H, f"single_{what}", "cpu_us_per_req"), g(H, f"cluster_{what}", "cpu_us_per_req")
        js, jc = g(J, f"single_{what}", "cpu_us_per_req"), g(J, f"cluster_{what}", "cpu_us_per_req")
        def got(where):
            return "/".join(f"{x:.0f}" if x is not None else "—" for x in
                            (g(H, f"{where}_{what}", "achieved_rps"), g(J, f"{where}_{what}", "achieved_rps")))
        rate = cfg.hb_rate if what == "heartbeat" else cfg.reg_rate
        row(f"Server CPU per {label}, lone node", hs, js, "µs", f"{rate:.0f}/s asked, {got('single')}/s done")
        row(f"Server CPU per {label}, 3 nodes (sum)", hc, jc, "µs", f"to node A; {got('cluster')}/s done")
        row(f"  cluster / lone node ({label})", ratio(hc, hs), ratio(jc, js), "×", "what replication costs")
    row("Register on A → visible on B, median", g(H, "propagation", "median_ms"), g(J, "propagation", "median_ms"),
        "ms", "single-instance read on B")
    row("Register on A → visible on B, p99", g(H, "propagation", "p99_ms"), g(J, "propagation", "p99_ms"), "ms",
        f"{g(H, 'propagation', 'samples') or 0} / {g(J, 'propagation', 'samples') or 0} samples")
    if g(J, "propagation_default_cache"):
        row("  Java, default read-only cache: visible in C's delta, median", None,
            g(J, "propagation_default_cache", "median_ms"), "ms", f"{g(J, 'propagation_default_cache', 'samples')} samples")
    sizes = sorted({int(s) for k in (H, J) for s in (g(k, "restart") or {})})
    for s in sizes:
        row(f"Restarted node holds all {s:,} instances", g(H, "restart", str(s), "full_s"),
            g(J, "restart", str(s), "full_s"), "s", "from spawn (SIGKILL, restart)")
    row("Lone empty node start-up (for reference)", g(H, "single_startup_s"), g(J, "single_startup_s"), "s",
        "spawn → first 200")
    for wl, label in (("heartbeat", "heartbeat"), ("register", "registration"), ("full_fetch", "full fetch")):
        base_h, base_j = g(H, "faults", "healthy", wl, "p99_ms"), g(J, "faults", "healthy", wl, "p99_ms")
        row(f"Client p99 on A, {label}, peers healthy", base_h, base_j, "ms", "wrk")
        for cond, cl in (("peer_dead", "peer C dead"), ("peer_blackholed", "peer C black-holed")):
            h, j = g(H, "faults", cond, wl, "p99_ms"), g(J, "faults", cond, wl, "p99_ms")
            row(f"Client p99 on A, {label}, {cl}", h, j, "ms", "wrk")
            row(f"  {cl} / healthy ({label})", ratio(h, base_h), ratio(j, base_j), "×", "")
    return rows


def fmt(v, unit: str) -> str:
    if v is None:
        return "—"
    if unit == "×":
        return f"{v:.2f}×"
    if unit == "s":
        return f"{v:.2f} s"
    if abs(v) >= 100:
        return f"{v:,.0f} {unit}"
    return f"{v:.2f} {unit}" if abs(v) < 10 else f"{v:.1f} {unit}"


def table(rows: list[dict], markdown: bool) -> str:
    head = ["Figure", "Heureka", "Java", "Heureka/Java", "Note"]
    cells = [[r["label"], fmt(r["heureka"], r["unit"]), fmt(r["java"], r["unit"]),
              (f"{r['ratio']:.3g}" if r["ratio"] is not None and r["unit"] != "×" else "—"), r["note"]]
             for r in rows]
    if markdown:
        lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
        lines += ["| " + " | ".join(c) + " |" for c in cells]
        return "\n".join(lines)
    w = [max(len(x[i]) for x in cells + [head]) for i in range(len(head))]
    return "\n".join("  ".join(x[i].ljust(w[i]) for i in range(len(head))) for x in [head] + cells)


def write_reports(results: dict, rows: list[dict], cfg) -> None:
    out = cfg.out
    out.mkdir(parents=True, exist_ok=True)
    results["rows"] = rows
    (out / "cluster.json").write_text(json.dumps(results, indent=1) + "\n")
    m = results["machine"]
    shares = [g(results, "servers", k, f"{t}_{w}", "other_cpu_share") for k in KINDS
              for t in ("single", "cluster") for w in ("heartbeat", "register")]
    shares = [s for s in shares if s is not None]
    busy = (f"{statistics.median(shares):.0%} (median over the CPU measurements; worst {max(shares):.0%})"
            if shares else "unknown")
    text = [
        "# Cluster benchmark: three Heureka nodes vs three Spring Cloud Eureka nodes",
        "",
        f"Run {m['date']} on {m['cores']} cores ({m['cpu']}), {m['memory_gib']} GiB; commit {m['commit']}; "
        f"{m['java']}; {'smoke run' if cfg.smoke else 'full run'} in {results['elapsed_s']:.0f} s. "
        f"Machine busy before the run: {results['busy_before']:.0%}; other work during the CPU "
        f"measurements: {busy}.",
        "",
        f"All processes on 127.0.0.1, one machine. {cfg.n:,} instances loaded on node A (and replicated) "
        f"before the measurements; heartbeats at {cfg.hb_rate:.0f}/s and registrations at {cfg.reg_rate:.0f}/s "
        f"for {cfg.cpu_duration:.0f} s each, from a Python load generator to node A (or the lone node). "
        "Read the ratios, not the absolute figures. How each figure is made and the exact "
        "command lines: [bench/README.md](../README.md#clusters) and `cluster.json`.",
        "",
        table(rows, markdown=True),
        "",
    ]
    if results["failures"]:
        text += ["Could not run:", ""] + [f"- {f}" for f in results["failures"]] + [""]
    if results.get("notes"):
        text += [f"- {x}" for x in results["notes"]] + [""]
    (out / "cluster.md").write_text("\n".join(text))


# --------------------------------------------------------------------------------------------


def parse_args(argv: list[str]):
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--smoke", action="store_true", help="brief run (CI)")
    p.add_argument("--servers", default="heureka,java")
    p.add_argument("--n", type=int, default=None, help="instances loaded (default 10000; smoke 500)")
    p.add_argument("--big", default=None, help="restart sizes on a fresh cluster, kind=size,... "
                   "(default heureka=100000; smoke none)")
    p.add_argument("--hb-rate", type=float, default=None, help="heartbeats/s (default 500; smoke 300)")
    p.add_argument("--reg-rate", type=float, default=None, help="registrations/s (default 200)")
    p.add_argument("--cpu-duration", type=float, default=None, help="seconds per CPU measurement (10; smoke 2)")
    p.add_argument("--prop-samples", type=int, default=None, help="propagation samples (300; smoke 20)")
    p.add_argument("--fault-duration", type=int, default=None, help="seconds per wrk run (5; smoke 1)")
    p.add_argument("--fault-connections", type=int, default=16)
    p.add_argument("--no-java-default-cache", action="store_true",
                   help="skip the Java read-only-cache propagation figure")
    p.add_argument("--skip-build", action="store_true")
    p.add_argument("--heureka-bin", type=Path, default=None,
                   help="run this Heureka binary instead of building one (bench/cluster_ab.py)")
    p.add_argument("--quiet-wait", type=float, default=None)
    p.add_argument("--out", type=Path, default=None)
    a = p.parse_args(argv)
    s = a.smoke
    if a.heureka_bin is not None:
        R.HEUREKA_BIN = a.heureka_bin.resolve()
    cfg = argparse.Namespace(
        smoke=s, servers=[x for x in a.servers.split(",") if x],
        n=a.n or (500 if s else 10000),
        hb_rate=a.hb_rate or (300 if s else 500), reg_rate=a.reg_rate or (200 if s else 200),
        cpu_duration=a.cpu_duration or (2 if s else 10), idle_window=1.0 if s else 4.0, tail=1.5,
        prop_samples=a.prop_samples or (20 if s else 300), prop_cap=10.0,
        delta_samples=3, delta_cap=40.0,
        java_default_cache=not a.no_java_default_cache and not s,
        fault_duration=a.fault_duration or (1 if s else 5), fault_connections=a.fault_connections,
        threads=2, connections=64, wrk_timeout=10,
        warmup=1 if s else 3, warmup_runs=1 if s else 3, warmup_pause=0.5 if s else 2,
        sync_retries=5, sync_retry_wait_ms=1000,
        start_deadline=240.0, replication_deadline=30.0 if s else 120.0, big_replication_deadline=300.0,
        restart_deadline=300.0, skip_build=a.skip_build or a.heureka_bin is not None,
        quiet_wait=a.quiet_wait if a.quiet_wait is not None else (0 if s else 120),
        out=a.out or (R.BENCH / "results" / ("smoke" if s else "")),
    )
    big = a.big if a.big is not None else ("" if s else "heureka=100000")
    cfg.big_sizes = {}
    for item in [x for x in big.split(",") if x]:
        k, v = item.split("=")
        cfg.big_sizes.setdefault(k, []).append(int(v))
    return cfg


def main(argv: list[str]) -> int:
    cfg = parse_args(argv)
    t_start = time.time()
    cfg.log_dir = R.BENCH / "results" / "logs" / ("cluster-smoke" if cfg.smoke else "cluster")
    cfg.log_dir.mkdir(parents=True, exist_ok=True)
    errors = R.build(cfg.servers, cfg.skip_build)
    for k, e in errors.items():
        log(f"{R.SHORT[k]} unavailable: {e}")
    kinds = [k for k in cfg.servers if k in KINDS and k not in errors]
    results: dict = {
        "machine": R.machine_info(), "binaries": R.snapshot_binaries(kinds, cfg.log_dir / "bin"),
        "config": {k: (str(v) if isinstance(v, Path) else v) for k, v in vars(cfg).items()},
        "servers": {}, "failures": [f"{R.SHORT[k]}: {e}" for k, e in errors.items()], "notes": [],
    }
    results["busy_before"] = R.wait_for_quiet(cfg.quiet_wait) if cfg.quiet_wait else R.cpu_busy()
    for kind in kinds:
        bench_kind(kind, cfg, results, results["failures"])
        # written after each server too, so an interrupted run keeps what it measured
        results["elapsed_s"] = round(time.time() - t_start, 1)
        write_reports(results, build_rows(results, cfg), cfg)
    results["elapsed_s"] = round(time.time() - t_start, 1)
    rows = build_rows(results, cfg)
    write_reports(results, rows, cfg)
    print()
    print(table(rows, markdown=False))
    print(f"\nResults: {cfg.out / 'cluster.md'}, {cfg.out / 'cluster.json'} (logs in {cfg.log_dir}); "
          f"{results['elapsed_s']:.0f} s")
    if results["failures"]:
        print("\nCould not run:", file=sys.stderr)
        for f in results["failures"]:
            print(f"  - {f}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    signal.signal(signal.SIGTERM, R._terminate)
    signal.signal(signal.SIGINT, R._terminate)
    try:
        sys.exit(main(sys.argv[1:]))
    finally:
        R.stop_all()
