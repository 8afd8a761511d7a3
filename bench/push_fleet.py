#!/usr/bin/env python3
"""The push channel at fleet scale: N subscribers of `GET /eureka/push` on one node.

For each N (default 1,000 and 10,000) and each way of following (every application, and one
application per subscriber with `?app=`), on a fresh release server holding a small fleet
(200 instances over 20 apps, one-hour leases, so nothing expires meanwhile):

1. **RSS per subscriber**: the server's VmRSS with the N subscribers connected and their
   snapshots received (1 s after the last), minus its VmRSS before the first connected, / N.
   Target: at most 16 KiB.
2. **Write to delivery**: K status writes (`PUT /eureka/apps/APP/ID/status?value=OUT_OF_SERVICE`,
   then `DELETE …/status`, the pairs going round the apps); each is sent once the previous one
   has reached every subscriber that follows its app, plus 300 ms. Per (subscriber, write)
   pair, the time from just before the write is sent to the end of the delta that carries it;
   p50/p99/max over all pairs, and per write the time to the last subscriber. Target: p99 at
   most 1 s at 10,000.
3. **CPU per change**: the server's utime+stime over the write phase, minus its idle rate
   (the lower of a quiet window before the writes and one as long as the write phase after
   them) times the phase's length, / K, and / the deliveries.

The subscribers are `bench/pushfleet` (Go, standard library only), built here with `go build`
into a temporary directory: one goroutine and a 4 KiB buffer each, connecting from several
loopback addresses; it sends the writes too, so one monotonic clock times both ends. It shares
the 2 cores with the server: its own CPU is reported beside the server's.

    python3 bench/push_fleet.py                         # 1,000 and 10,000; about 5 minutes
    python3 bench/push_fleet.py --sizes 1000 --modes all --bin path/to/heureka
    python3 bench/push_fleet.py --smoke                 # 200 subscribers, 5 writes (CI)

Output: bench/results/push-fleet.{md,json} (smoke: bench/results/smoke/), server logs in
bench/results/logs/. Exits non-zero only if something could not run (the server did not
start, the client did not build, a phase did not report in time), never on a missed target.
Standard library only.
"""

from __future__ import annotations

import argparse
import http.client
import json
import math
import os
import queue
import resource
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import run as R  # noqa: E402  (instance bodies, /proc readers, machine line)

BENCH = R.BENCH
FLEET_SRC = BENCH / "pushfleet"
KIB = 1024
RSS_TARGET_KIB = 16
P99_TARGET_MS = 1000
APPS = 20
INSTANCES = 200
LEASE_S = 3600
PER_SOURCE = 2500  # subscribers per loopback source address


def log(msg: str) -> None:
    print(f"[push-fleet {time.strftime('%H:%M:%S')}] {msg}", flush=True)


class FleetError(Exception):
    """A phase could not run."""


def raise_open_file_limit() -> int:
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if soft < hard:
        resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))
    return hard


def build_fleet(go: str, into: Path) -> Path:
    exe = into / "pushfleet"
    env = {**os.environ, "GOFLAGS": "-mod=mod", "GO111MODULE": "on", "GOPROXY": "off"}
    if not any(env.get(k) for k in ("GOCACHE", "XDG_CACHE_HOME", "HOME")):  # a bare CI environment
        env["GOCACHE"], env["GOPATH"] = str(into / "gocache"), str(into / "gopath")
    p = subprocess.run([go, "build", "-o", str(exe), "."], cwd=FLEET_SRC, env=env,
                       capture_output=True, text=True, timeout=300)
    if p.returncode != 0:
        raise FleetError(f"go build failed: {p.stderr.strip()[-2000:]}")
    return exe


def wait_for_load(limit_s: float, threshold: float = 3.0) -> float:
    """Waits (bounded) while the 1-minute load average is above `threshold`."""
    deadline = time.time() + limit_s
    load = os.getloadavg()[0]
    while load > threshold and time.time() < deadline:
        log(f"load average {load:.1f} > {threshold:.0f}: waiting for other work to finish "
            f"(up to {deadline - time.time():.0f} s more)")
        time.sleep(15)
        load = os.getloadavg()[0]
    if load > threshold:
        log(f"WARNING: load average still {load:.1f}; figures will be noisy")
    return load


# ---------------------------------------------------------------------------------- server

def server_flags(port: int, n: int) -> list[str]:
    return [
        f"--server.port={port}", *R.COMMON_FLAGS,
        f"--eureka.client.service-url.defaultZone=http://localhost:{port}/eureka/",
        # room for the fleet: all subscribers come from a few loopback addresses
        f"--heureka.push.max-subscribers={max(20000, n + 100)}",
        "--heureka.push.max-subscribers-per-client=20000",
        "--server.tomcat.max-connections=30000",
        # Keep-alive comments would land in some measurement windows and not in others (they
        # fire 15 s after a stream's last message, so all at once after a write); the streams
        # must also outlive the run (default age 10 min).
        "--heureka.push.keep-alive-interval=10m",
        "--heureka.push.max-stream-age=1h",
    ]


def start_server(binary: Path, n: int, log_path: Path, wrap: list[str] = ()) -> tuple[subprocess.Popen, int]:
    port = R.free_port()
    out = open(log_path, "wb")
    proc = subprocess.Popen([*wrap, str(binary), *server_flags(port, n)], stdout=out, stderr=subprocess.STDOUT,
                            stdin=subprocess.DEVNULL, start_new_session=True)
    out.close()
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise FleetError(f"server exited with {proc.returncode}; log: {log_path}")
        conn = http.client.HTTPConnection("127.0.0.1", port, timeout=2)
        try:
            conn.request("GET", "/eureka/apps", headers={"Accept": "application/json"})
            resp = conn.getresponse()
            resp.read()
            if resp.status == 200:
                return proc, port
        except (OSError, http.client.HTTPException):
            pass
        finally:
            conn.close()
        time.sleep(0.05)
    stop(proc)
    raise FleetError(f"server did not answer within 60 s; log: {log_path}")


def stop(proc: subprocess.Popen | None, timeout: float = 15) -> None:
    if proc is None or proc.poll() is not None:
        return
    try:
        proc.send_signal(signal.SIGTERM)
        proc.wait(timeout=timeout)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait(timeout=timeout)


def register_fleet(port: int) -> list[str]:
    """INSTANCES instances over APPS apps; the targets are the first instance of each app."""
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
    targets = {}
    try:
        for i in range(INSTANCES):
            a = i % APPS
            iid = R.instance_id(i, APPS)
            body = R.register_body(iid, a, R.ip_of(i), lease_s=LEASE_S)
            conn.request("POST", f"/eureka/apps/BENCH-APP-{a}", body=body,
                         headers={"Content-Type": "application/json"})
            resp = conn.getresponse()
            resp.read()
            if resp.status != 204:
                raise FleetError(f"registration {i} answered {resp.status}")
            targets.setdefault(a, f"BENCH-APP-{a}/{iid}")
        conn.request("GET", "/eureka/apps", headers={"Accept": "application/json"})
        resp = conn.getresponse()
        doc = json.loads(resp.read())
        held = sum(len(app["instance"]) for app in doc["applications"]["application"])
        if held != INSTANCES:
            raise FleetError(f"full fetch holds {held} instances, not {INSTANCES}")
    finally:
        conn.close()
    return [targets[a] for a in range(APPS)]


# ---------------------------------------------------------------------------------- client

class Fleet:
    """The Go client, its stdout read by a thread into a queue so every wait is bounded."""

    def __init__(self, argv: list[str], stderr_path: Path):
        self.err = open(stderr_path, "wb")
        self.proc = subprocess.Popen(argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                     stderr=self.err, text=True, start_new_session=True)
        self.lines: queue.Queue = queue.Queue()
        threading.Thread(target=self._read, daemon=True).start()

    def _read(self):
        for line in self.proc.stdout:
            self.lines.put(line)
        self.lines.put(None)

    def next(self, phase: str, timeout: float) -> dict:
        deadline = time.monotonic() + timeout
        while True:
            left = deadline - time.monotonic()
            if left <= 0:
                raise FleetError(f"the client did not report '{phase}' within {timeout:.0f} s")
            try:
                line = self.lines.get(timeout=left)
            except queue.Empty:
                continue
            if line is None:
                raise FleetError(f"the client exited ({self.proc.poll()}) before '{phase}'")
            doc = json.loads(line)
            if doc.get("phase") == phase:
                return doc

    def send(self, line: str):
        try:
            self.proc.stdin.write(line + "\n")
            self.proc.stdin.flush()
        except (BrokenPipeError, OSError):
            pass

    def close(self):
        self.send("exit")
        try:
            self.proc.stdin.close()
        except OSError:
            pass
        try:
            self.proc.wait(timeout=20)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait(timeout=10)
        self.err.close()


class Sampler:
    """The server's peak RSS, sampled every 100 ms while it runs."""

    def __init__(self, pid: int):
        self.pid, self.peak, self._stop = pid, 0, threading.Event()
        threading.Thread(target=self._run, daemon=True).start()

    def _run(self):
        while not self._stop.is_set():
            self.peak = max(self.peak, R.rss_bytes(self.pid) or 0)
            self._stop.wait(0.1)

    def stop(self) -> int:
        self._stop.set()
        return self.peak


def one_run(cfg, fleet_exe: Path, n: int, mode: str) -> dict:
    tag = f"n{n}-{mode}"
    log_path = cfg.log_dir / f"push-fleet-{tag}.log"
    server, port = start_server(cfg.bin, n, log_path)
    fleet = None
    res: dict = {"n": n, "mode": mode}
    try:
        targets = register_fleet(port)
        time.sleep(1.0)
        rss_before = R.rss_bytes(server.pid)
        res["server_rss_before_mib"] = rss_before / 2**20
        sources = [f"127.0.0.{2 + k}" for k in range(max(1, math.ceil(n / PER_SOURCE)))]
        argv = [str(fleet_exe), f"-base=http://127.0.0.1:{port}/eureka", f"-n={n}",
                f"-follow={mode}", "-apps=" + ",".join(f"BENCH-APP-{a}" for a in range(APPS)),
                "-targets=" + ",".join(targets), "-sources=" + ",".join(sources),
                f"-concurrency={cfg.concurrency}", f"-connect-timeout={cfg.connect_timeout}s",
                f"-writes={cfg.writes}", f"-spacing={int(cfg.spacing * 1000)}ms",
                f"-write-timeout={cfg.write_timeout}s", f"-quiet={cfg.quiet}s",
                f"-server-pid={server.pid}", f"-clk-tck={os.sysconf('SC_CLK_TCK')}"]
        sampler = Sampler(server.pid)
        cpu0 = R.cpu_seconds(server.pid)
        log(f"{tag}: connecting {n:,} subscribers from {len(sources)} address(es)")
        fleet = Fleet(argv, cfg.log_dir / f"push-fleet-{tag}.client.log")
        ready = fleet.next("ready", cfg.connect_timeout + 30)
        res["connect_server_cpu_s"] = R.cpu_seconds(server.pid) - cpu0
        time.sleep(1.0)
        rss_connected = R.rss_bytes(server.pid)
        res["server_rss_peak_connect_mib"] = sampler.stop() / 2**20
        res["server_rss_connected_mib"] = rss_connected / 2**20
        res["client_rss_mib"] = (R.rss_bytes(fleet.proc.pid) or 0) / 2**20
        res["ready"] = ready
        held = ready["snapshots"]
        res["subscribers"] = held
        res["rss_per_subscriber_kib"] = (rss_connected - rss_before) / held / KIB if held else None
        log(f"{tag}: {held:,}/{n:,} snapshots in {ready['last_snapshot_ms'] / 1000:.1f} s; server RSS "
            f"{rss_before / 2**20:.1f} -> {rss_connected / 2**20:.1f} MiB "
            f"({res['rss_per_subscriber_kib'] or 0:.1f} KiB per subscriber); failures {ready['failures']}")
        fleet.send("go")
        budget = cfg.quiet + cfg.writes * (cfg.write_timeout + cfg.spacing + 1) * 2 + 60
        done = fleet.next("done", budget)
        res["server_rss_after_writes_mib"] = (R.rss_bytes(server.pid) or 0) / 2**20
        res["done"] = done
        res.update(derive(done, cfg.writes))
        res["server_alive"] = server.poll() is None
        lat = done["latency_ms"]
        log(f"{tag}: {done['pairs']:,} deliveries, missed {done['missed']}; p50 {lat['p50']:.1f} ms, "
            f"p99 {lat['p99']:.1f} ms, max {lat['max']:.1f} ms; server CPU per change "
            f"{res['server_cpu_per_change_ms']:.1f} ms ({res['server_cpu_per_delivery_us']:.1f} µs per delivery); "
            f"client {res['client_cpu_per_change_ms']:.1f} ms per change")
    finally:
        if fleet is not None:
            fleet.close()
        stop(server)
    res["server_log_warnings"] = warnings_in(log_path)
    return res


def derive(done: dict, writes: int) -> dict:
    q0, q1, w = done["quiet_before"], done["quiet_after"], done["write_phase"]

    def rate(window, key):
        return window[key] / window["seconds"] if window["seconds"] > 0 else 0.0

    out = {}
    for who in ("server", "client"):
        key = f"{who}_cpu_s"
        idle = min(rate(q0, key), rate(q1, key))
        net = max(0.0, w[key] - idle * w["seconds"])
        out[f"{who}_idle_cpu_share"] = idle
        out[f"{who}_cpu_per_change_ms"] = net / writes * 1000
        out[f"{who}_cpu_per_delivery_us"] = net / done["pairs"] * 1e6 if done["pairs"] else None
    lasts = [x["last_ms"] for x in done["writes"] if x["delivered"]]
    out["last_subscriber_ms"] = {"median": statistics.median(lasts) if lasts else None,
                                 "max": max(lasts) if lasts else None}
    out["write_answer_ms_median"] = statistics.median(x["answer_ms"] for x in done["writes"])
    out["wrong_status_in_delta"] = sum(x["wrong_status_in_delta"] for x in done["writes"])
    out["write_statuses"] = sorted({x["http_status"] for x in done["writes"]})
    return out


def warnings_in(path: Path) -> list[str]:
    found = []
    try:
        for line in path.read_text(errors="replace").splitlines():
            if " WARN " in line or " ERROR " in line or "WARN" in line[:40] or "ERROR" in line[:40]:
                found.append(line.strip()[:300])
    except OSError:
        pass
    return found[:20]


# ---------------------------------------------------------------------------------- breakdown

# Who holds the server's heap with N subscribers connected, by the call stacks heaptrack
# recorded: the first pattern found in a stack names its owner.
OWNERS = [
    ("poll_read_from_io", "hyper read buffer (`BytesMut`, 8 KiB reserved at the first read)"),
    ("write_body<> (conn.rs)", "hyper write queue (the chunks handed to `writev`)"),
    ("serve_connection<> (http1.rs)", "hyper write buffer (its headers `Vec`, 8 KiB when the connection starts)"),
    ("bind_new_task", "the connection's tokio task (its future, boxed at spawn)"),
    ("security_headers", "the response's `HeaderMap` (grown by the security headers, kept by hyper for reuse)"),
    ("encode_applications", "snapshot and delta encoding (in flight)"),
    ("(runs.rs)", "other (not per connection: registry, documents, runtime, logging)"),
    ("(subscriber.rs)", "push stream (`Subscriber`, its boxed body, feed receiver, booking)"),
    ("handlers::push", "push stream (`Subscriber`, its boxed body, feed receiver, booking)"),
    ("from_stream<> (body.rs)", "push stream (`Subscriber`, its boxed body, feed receiver, booking)"),
    ("(feed.rs)", "push stream (`Subscriber`, its boxed body, feed receiver, booking)"),
    ("(listener.rs)", "other, per connection (listener, connection table, tokio I/O registration)"),
]


def owner_of(stack: str) -> str:
    for pattern, owner in OWNERS:
        if pattern in stack:
            return owner
    return "other (not per connection: registry, documents, runtime, logging)"


def breakdown(cfg, fleet_exe: Path, n: int) -> dict:
    """The server under heaptrack with n subscribers following every app, killed (SIGKILL) while
    they are connected: what it still held then ("leaked"), by owner."""
    heaptrack, printer = shutil.which("heaptrack"), shutil.which("heaptrack_print")
    if not heaptrack or not printer:
        raise FleetError("heaptrack not installed")
    data = cfg.log_dir / "push-fleet-heaptrack"
    for old in cfg.log_dir.glob("push-fleet-heaptrack*"):
        old.unlink()
    log_path = cfg.log_dir / "push-fleet-breakdown.log"
    wrapper, port = start_server(cfg.bin, n, log_path, wrap=[heaptrack, "-o", str(data)])
    fleet, pid = None, None
    try:
        kids = subprocess.run(["pgrep", "-P", str(wrapper.pid)], capture_output=True, text=True).stdout.split()
        pid = next(int(k) for k in kids if Path(f"/proc/{k}/comm").read_text().startswith("heureka"))
        targets = register_fleet(port)
        argv = [str(fleet_exe), f"-base=http://127.0.0.1:{port}/eureka", f"-n={n}", "-follow=all",
                "-apps=" + ",".join(f"BENCH-APP-{a}" for a in range(APPS)), "-targets=" + ",".join(targets),
                "-sources=" + ",".join(f"127.0.0.{2 + k}" for k in range(max(1, math.ceil(n / PER_SOURCE)))),
                f"-concurrency={cfg.concurrency}", f"-connect-timeout={cfg.connect_timeout}s", "-writes=2",
                "-quiet=1s", "-write-timeout=30s", f"-server-pid={pid}"]
        log(f"breakdown: {n:,} subscribers, the server under heaptrack")
        fleet = Fleet(argv, cfg.log_dir / "push-fleet-breakdown.client.log")
        ready = fleet.next("ready", cfg.connect_timeout + 60)
        fleet.send("go")
        fleet.next("done", 120)
        time.sleep(1.0)
        os.kill(pid, signal.SIGKILL)  # with every subscriber still connected
        wrapper.wait(timeout=600)     # heaptrack writes its data once the server is gone
    finally:
        if pid is not None:
            try:
                os.kill(pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
        if fleet is not None:
            fleet.close()
        stop(wrapper, timeout=60)
    files = sorted(cfg.log_dir.glob("push-fleet-heaptrack*.zst")) or sorted(cfg.log_dir.glob("push-fleet-heaptrack*"))
    if not files:
        raise FleetError("heaptrack wrote no data")
    collapsed = cfg.log_dir / "push-fleet-heaptrack-held.txt"
    subprocess.run([printer, "-f", str(files[0]), "--flamegraph-cost-type", "leaked", "-F", str(collapsed)],
                   capture_output=True, timeout=900, check=True)
    owners: dict[str, int] = {}
    for line in collapsed.read_text(errors="replace").splitlines():
        stack, _, value = line.rpartition(" ")
        if value.isdigit():
            owner = owner_of(stack)
            owners[owner] = owners.get(owner, 0) + int(value)
    return {"n": n, "subscribers": ready["snapshots"], "held_heap_bytes": sum(owners.values()),
            "owners": sorted(([k, v] for k, v in owners.items()), key=lambda kv: -kv[1])}


# ---------------------------------------------------------------------------------- report

def fnum(v, digits=1) -> str:
    if v is None:
        return "–"
    return f"{v:,.{digits}f}"


MODE_LABEL = {"all": "every app", "one": "one app (`?app=`)"}


def report(results: dict) -> str:
    m, c = results["machine"], results["config"]
    runs = results["runs"]
    lines = [f"# Push channel at fleet scale ({results['mode']} run)", "",
             f"Machine: **{m.get('nproc')} CPUs, {m.get('memory_gib')} GiB, {m.get('cpu')}**, Linux {m.get('kernel')}. "
             f"Date: {m.get('date')}. Commit {m.get('commit')}. Load average before the run "
             f"{results.get('load_before', 0):.1f}; CPUs busy with other work just before it "
             f"{m.get('cpu_busy_before_run', 0):.0%}.", "",
             f"`python3 bench/push_fleet.py {results['argv']}` ({results.get('binary', 'target/release/heureka')}): one release server, {INSTANCES} instances "
             f"over {APPS} apps; N subscribers of `GET /eureka/push` from `bench/pushfleet` (Go, another "
             f"process on the same 2 cores), following every app or one app each (`?app=`, the apps in "
             f"turn); {c['writes']} status writes (OUT_OF_SERVICE, then back), each sent once the previous "
             f"one reached every subscriber, plus {c['spacing'] * 1000:.0f} ms. Latency is from just "
             f"before the write is sent to the end of its delta at a subscriber; CPU per change is "
             f"the server's utime+stime over the write phase minus its idle rate, / {c['writes']}. "
             f"Server settings beyond run.py's: `{' '.join(f for f in server_flags(0, 0)[len(R.COMMON_FLAGS) + 2:])}`.",
             "",
             "| N | follows | held | RSS / subscriber (KiB) | vs 16 KiB | p50 (ms) | p99 (ms) | max (ms) | vs 1 s (p99) "
             "| last subscriber per write, median / max (ms) | server CPU / change (ms) | / delivery (µs) "
             "| client CPU / change (ms) | connect: time to all snapshots (s), server CPU (s) | failures |",
             "|---:|---|---:|---:|---:|---:|---:|---:|---:|---|---:|---:|---:|---|---|"]
    for r in runs:
        if "error" in r:
            lines.append(f"| {r['n']:,} | {MODE_LABEL[r['mode']]} | – | – | – | – | – | – | – | – | – | – | – | – "
                         f"| could not run: {r['error']} |")
            continue
        d, lat = r["done"], r["done"]["latency_ms"]
        fails = dict(r["ready"]["failures"])
        for k, v in d["failures"].items():
            fails[k] = max(v, fails.get(k, 0))
        bad = [f"{k}: {v}" for k, v in fails.items()]
        if d["missed"]:
            bad.append(f"missed deliveries: {d['missed']}")
        if d["unexpected_deltas"]:
            bad.append(f"unexpected deltas: {d['unexpected_deltas']}")
        if r["wrong_status_in_delta"]:
            bad.append(f"delta with the wrong status: {r['wrong_status_in_delta']}")
        rss = r["rss_per_subscriber_kib"]
        lines.append(
            f"| {r['n']:,} | {MODE_LABEL[r['mode']]} | {r['subscribers']:,} | {fnum(rss)} "
            f"| {fnum(rss / RSS_TARGET_KIB if rss else None, 2)}× | {fnum(lat['p50'])} | {fnum(lat['p99'])} "
            f"| {fnum(lat['max'])} | {fnum(lat['p99'] / P99_TARGET_MS, 2)}× "
            f"| {fnum(r['last_subscriber_ms']['median'])} / {fnum(r['last_subscriber_ms']['max'])} "
            f"| {fnum(r['server_cpu_per_change_ms'], 1)} | {fnum(r['server_cpu_per_delivery_us'], 1)} "
            f"| {fnum(r['client_cpu_per_change_ms'], 1)} "
            f"| {fnum(r['ready']['last_snapshot_ms'] / 1000, 1)}, {fnum(r['connect_server_cpu_s'], 1)} "
            f"| {', '.join(bad) or 'none'} |")
    lines += ["", "Memory: server RSS before → with the subscribers (peak while they connected); "
              "client RSS; snapshot frame size:", ""]
    for r in runs:
        if "error" in r:
            continue
        lines.append(f"* N = {r['n']:,}, {MODE_LABEL[r['mode']]}: {r['server_rss_before_mib']:.1f} → "
                     f"{r['server_rss_connected_mib']:.1f} MiB (peak {r['server_rss_peak_connect_mib']:.1f}), "
                     f"{r['server_rss_after_writes_mib']:.1f} after the writes; client "
                     f"{r['client_rss_mib']:.1f} MiB; snapshot {r['ready']['snapshot_frame_bytes'] / 1024:.1f} KiB; "
                     f"write answered in {r['write_answer_ms_median']:.1f} ms (median); idle CPU "
                     f"server {r['server_idle_cpu_share']:.1%}, client {r['client_idle_cpu_share']:.1%} of a core")
    b = results.get("breakdown")
    if b and "error" not in b:
        lines += ["", f"Where the server's memory goes (`--breakdown {b['n']}`): the heap the server held with "
                  f"{b['subscribers']:,} subscribers following every app, {b['held_heap_bytes'] / 2**20:.1f} MiB "
                  f"(heaptrack; the server killed while they were connected), by the call stack that "
                  f"allocated it:", "",
                  "| owner | MiB | KiB / subscriber |", "|---|---:|---:|"]
        for owner, v in b["owners"]:
            lines.append(f"| {owner} | {v / 2**20:.2f} | {v / b['subscribers'] / KIB:.2f} |")
    elif b:
        lines += ["", f"Breakdown could not run: {b['error']}"]
    if results.get("notes"):
        for note in results["notes"]:
            lines += ["", note]
    return "\n".join(lines) + "\n"


def summary_paragraph(results: dict) -> list[str]:
    """What the numbers say, written from them."""
    out = []
    ok = [r for r in results["runs"] if "error" not in r]
    for n in sorted({r["n"] for r in ok}):
        every = next((r for r in ok if r["n"] == n and r["mode"] == "all"), None)
        one = next((r for r in ok if r["n"] == n and r["mode"] == "one"), None)
        if every:
            rss = every["rss_per_subscriber_kib"]
            p99 = every["done"]["latency_ms"]["p99"]
            s = (f"At {n:,} subscribers following every app, each costs the server "
                 f"{rss:.1f} KiB of RSS ({'within' if rss <= RSS_TARGET_KIB else 'over'} the 16 KiB target) "
                 f"and a change reaches the last of them in {every['last_subscriber_ms']['median']:.0f} ms "
                 f"(median over the writes; p99 over all deliveries {p99:.0f} ms, "
                 f"{'within' if p99 <= P99_TARGET_MS else 'over'} the 1 s target). Fanning one change out costs "
                 f"the server {every['server_cpu_per_change_ms']:.1f} ms of CPU, "
                 f"{every['server_cpu_per_delivery_us']:.1f} µs per subscriber, and the client "
                 f"{every['client_cpu_per_change_ms']:.1f} ms to read.")
            if one:
                s += (f" Following one app each, a change goes to {one['done']['pairs'] // results['config']['writes']:,} "
                      f"subscribers instead of {n:,}: {one['server_cpu_per_change_ms']:.1f} ms of server CPU per "
                      f"change ({one['server_cpu_per_delivery_us'] or 0:.1f} µs per delivery, the filter "
                      f"included), RSS {one['rss_per_subscriber_kib']:.1f} KiB per subscriber.")
            if one and one["done"]["pairs"]:
                writes = results["config"]["writes"]
                per_write = one["done"]["pairs"] / writes
                woken = n - per_write
                wake = (one["server_cpu_per_change_ms"] / 1000
                        - per_write * every["server_cpu_per_delivery_us"] / 1e6) / woken * 1e6 if woken else None
                if wake and wake > 0:
                    s += (f" Every change still wakes every stream: the {woken:,.0f} that do not follow its app "
                          f"cost about {wake:.1f} µs each to look at it and send nothing.")
            s += (f" Connecting took the server "
                  f"{every['connect_server_cpu_s'] / n * 1000:.2f} ms of CPU per subscriber "
                  f"({every['ready']['snapshot_frame_bytes'] / 1024:.0f} KiB snapshot; streams that "
                  f"start between two writes share one).")
            out.append(s)
    b = results.get("breakdown")
    if b and "error" not in b:
        per = {owner: v / b["subscribers"] / KIB for owner, v in b["owners"]}
        hyper = sum(v for k, v in per.items() if k.startswith("hyper"))
        task = sum(v for k, v in per.items() if "tokio task" in k)
        push = sum(v for k, v in per.items() if k.startswith("push stream"))
        total = sum(v for k, v in per.items() if not k.startswith("other (not per connection"))
        out.append(f"What a subscriber's memory is: of the {total:.1f} KiB of heap per subscriber that "
                   f"belongs to its connection, hyper's HTTP/1 buffers hold {hyper:.1f} KiB (an 8 KiB read "
                   f"buffer and an 8 KiB write buffer per connection, hyper 1.x's fixed initial size, with no "
                   f"setting to make them smaller), the connection's task {task:.1f} KiB, and the push stream "
                   f"itself (subscriber, feed receiver, booking) {push:.1f} KiB. hyper's two buffers alone "
                   f"hold the 16 KiB target.")
    return out


# ---------------------------------------------------------------------------------- main

def binary_label(path: Path) -> str:
    """The binary as the report names it: relative to the repository, or by its name alone."""
    path = path.resolve()
    try:
        return str(path.relative_to(R.ROOT))
    except ValueError:
        return f"{path.name} (given with --bin)"


def write_reports(results: dict, out: Path) -> str:
    results["summary"] = summary_paragraph(results)
    text = report(results)
    if results["summary"]:
        text += "\n" + "\n\n".join(results["summary"]) + "\n"
    (out / "push-fleet.json").write_text(json.dumps(results, indent=1, ensure_ascii=False) + "\n")
    (out / "push-fleet.md").write_text(text)
    return text


def parse_args(argv: list[str]):
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--bin", type=Path, default=R.HEUREKA_BIN, help="heureka binary (default target/release/heureka)")
    p.add_argument("--sizes", help="subscriber counts (default 1000,10000; smoke 200)")
    p.add_argument("--modes", default="all,one", help="all (every app), one (?app=, one app each)")
    p.add_argument("--writes", type=int, help="status writes per run (default 20; smoke 5)")
    p.add_argument("--spacing", type=float, default=0.3, help="seconds between a write's delivery and the next")
    p.add_argument("--write-timeout", type=int, default=10, help="seconds a write may take to reach everyone")
    p.add_argument("--connect-timeout", type=int, help="seconds for every snapshot (default 180; smoke 30)")
    p.add_argument("--quiet", type=int, help="seconds of the quiet window before the writes (default 6; smoke 1)")
    p.add_argument("--concurrency", type=int, default=256, help="connects in flight at once")
    p.add_argument("--go", default=shutil.which("go") or "/usr/local/go/bin/go", help="the go command")
    p.add_argument("--quiet-wait", type=float, help="seconds to wait while the load average is above 3 (default 600; smoke 0)")
    p.add_argument("--out", type=Path, help="output directory (default bench/results; smoke bench/results/smoke)")
    p.add_argument("--note", action="append", default=[], help="a paragraph for the report")
    p.add_argument("--breakdown", type=int, metavar="N",
                   help="also run N subscribers with the server under heaptrack and report its peak heap by owner")
    p.add_argument("--smoke", action="store_true", help="200 subscribers, 5 writes, a few seconds (CI)")
    p.add_argument("--report-from", type=Path, metavar="JSON",
                   help="measure nothing: write the report again from a push-fleet.json (into --out)")
    a = p.parse_args(argv)
    a.mode = "smoke" if a.smoke else "full"
    a.sizes = [int(x) for x in a.sizes.split(",")] if a.sizes else ([200] if a.smoke else [1000, 10000])
    a.modes = [x.strip() for x in a.modes.split(",") if x.strip()]
    for x in a.modes:
        if x not in MODE_LABEL:
            p.error(f"unknown mode {x!r}")
    a.writes = a.writes or (5 if a.smoke else 20)
    a.connect_timeout = a.connect_timeout or (30 if a.smoke else 180)
    a.quiet = a.quiet or (1 if a.smoke else 6)
    a.quiet_wait = a.quiet_wait if a.quiet_wait is not None else (0 if a.smoke else 600)
    a.out = a.out or (BENCH / "results" / ("smoke" if a.smoke else ""))
    shown, skip = [], False
    for arg in argv:  # the command line as the report shows it: no notes, the binary apart
        if skip:
            skip = False
        elif arg in ("--note", "--bin"):
            skip = True
        elif not arg.startswith(("--note=", "--bin=")):
            shown.append(arg)
    a.argv = " ".join(shown)
    a.binary_label = binary_label(a.bin)
    return a


def main(argv: list[str]) -> int:
    cfg = parse_args(argv)
    if cfg.report_from:
        results = json.loads(cfg.report_from.read_text())
        cfg.out.mkdir(parents=True, exist_ok=True)
        print(write_reports(results, cfg.out))
        return 0
    cfg.bin = cfg.bin.resolve()
    if not cfg.bin.exists():
        print(f"push-fleet: {cfg.bin} not found (cargo build --release -p heureka)", file=sys.stderr)
        return 2
    limit = raise_open_file_limit()
    need = max(cfg.sizes) + 200
    if limit < need:
        print(f"push-fleet: {max(cfg.sizes):,} subscribers need {need:,} open files per process; "
              f"the limit is {limit:,}", file=sys.stderr)
        return 2
    cfg.out.mkdir(parents=True, exist_ok=True)
    cfg.log_dir = cfg.out / "logs"
    cfg.log_dir.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(prefix="push-fleet-"))
    failed = False
    try:
        try:
            fleet_exe = build_fleet(cfg.go, tmp)
        except (FleetError, OSError, subprocess.TimeoutExpired) as e:
            print(f"push-fleet: cannot build the client: {e}", file=sys.stderr)
            return 2
        bin_copy = tmp / "heureka"
        shutil.copy2(cfg.bin, bin_copy)  # a rebuild meanwhile does not change what runs
        machine = R.machine_info()
        machine["nproc"] = len(os.sched_getaffinity(0))
        results = {"mode": cfg.mode, "argv": cfg.argv, "machine": machine, "binary": cfg.binary_label,
                   "config": {"sizes": cfg.sizes, "modes": cfg.modes, "writes": cfg.writes,
                              "spacing": cfg.spacing, "write_timeout": cfg.write_timeout,
                              "quiet": cfg.quiet, "connect_timeout": cfg.connect_timeout,
                              "concurrency": cfg.concurrency, "apps": APPS, "instances": INSTANCES,
                              "server_flags": server_flags(0, max(cfg.sizes))},
                   "runs": [], "notes": cfg.note}
        results["load_before"] = wait_for_load(cfg.quiet_wait)
        machine["cpu_busy_before_run"] = round(R.cpu_busy(), 3)
        cfg.bin = bin_copy
        for n in cfg.sizes:
            for mode in cfg.modes:
                if not cfg.smoke and n >= 5000:
                    results.setdefault("load_before_big", {})[f"{n}-{mode}"] = wait_for_load(cfg.quiet_wait)
                try:
                    results["runs"].append(one_run(cfg, fleet_exe, n, mode))
                except (FleetError, OSError, ValueError, KeyError) as e:
                    log(f"n={n} {mode}: could not run: {e}")
                    results["runs"].append({"n": n, "mode": mode, "error": str(e)})
                    failed = True
        if cfg.breakdown:
            try:
                results["breakdown"] = breakdown(cfg, fleet_exe, cfg.breakdown)
            except (FleetError, OSError, ValueError, KeyError, subprocess.SubprocessError) as e:
                log(f"breakdown: could not run: {e}")
                results["breakdown"] = {"n": cfg.breakdown, "error": str(e)}
        text = write_reports(results, cfg.out)
        print()
        print(text)
        print(f"Results: {cfg.out / 'push-fleet.md'}, {cfg.out / 'push-fleet.json'} (logs in {cfg.log_dir})")
        print(f"Machine: {machine['nproc']} CPUs, {machine['memory_gib']} GiB, {machine['cpu']}, Linux "
              f"{machine['kernel']}; load average before {results['load_before']:.1f}; {machine['date']}; "
              f"commit {machine['commit']}")
        if cfg.smoke:
            # CI: every subscriber must hold its stream and get every write's delta, rightly.
            for r in results["runs"]:
                if "error" in r:
                    continue
                d = r["done"]
                bad = (r["subscribers"] != r["n"] or d["missed"] or d["unexpected_deltas"] or d["failures"]
                       or r["wrong_status_in_delta"] or r["ready"]["failures"])
                if bad:
                    print(f"push-fleet: n={r['n']} {r['mode']}: subscribers {r['subscribers']}/{r['n']}, missed "
                          f"{d['missed']}, unexpected {d['unexpected_deltas']}, wrong status "
                          f"{r['wrong_status_in_delta']}, failures {r['ready']['failures']} {d['failures']}",
                          file=sys.stderr)
                    failed = True
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
