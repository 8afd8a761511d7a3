#!/usr/bin/env python3
"""The allocator study of issue 37: glibc's malloc, mimalloc and jemalloc as Heureka's global
allocator, on CPU per request, RSS and fragmentation after churn.

The `heureka` crate chooses its global allocator by Cargo feature: `mimalloc`, `jemalloc`, or
neither (glibc's); crates/heureka/Cargo.toml says which is the default. This builds the three binaries and
measures them with the same loads, on the same machine, in one run:

* **cpu** (persistence off, then on): the three servers and the ceiling (bench/baseline) side
  by side, each loaded with the same N instances (run.py's loader), then for `heartbeat` and
  `register` (run.py's WORKLOADS: heartbeats over the N instances; re-registrations of them)
  run.py's warm-ups, then rounds in a rotating order (glibc, mimalloc, jemalloc; then mimalloc,
  jemalloc, glibc; …; the ceiling last in each, as ab.py does). A round's server CPU per request
  runs from the wrk start until the store has written what the round queued
  (persistence.py's pending gauge at 0) plus --settle seconds, the same wait for every server,
  so that the store's deferred batches count against the requests that caused them; run.py's
  wrk-window figure is kept beside it. With persistence on each server writes to a fresh
  directory (`--heureka.persistence.dir`). Ratios to glibc and to the ceiling are taken within
  each round, then the median of the rounds is reported with the min–max.
* **rss**: each allocator's RSS idle and after loading N (persistence off, after one full and
  one delta fetch, as run.py reads it), from the cpu phase's servers; and at --million
  instances (memory.py's multi-process loader and measure(), one server at a time).
* **churn**: the three servers (persistence off, eviction off) loaded with N instances, then
  --churn-rounds rounds of a rolling replacement: every instance is replaced by one with a new
  id (registered, then the old one cancelled), as a redeployed fleet does. New ids rather than
  bigger metadata: a redeploy is what a registry sees most, and it frees and allocates every
  instance's records in an order unlike the one they were made in, while the delta queue holds
  both the old and the new for its retention. RSS after the load, after the churn, and settled:
  after the delta queue's retention has passed (--delta-retention-ms, the server's own timer
  drops the churned changes), one heartbeat per live instance (the activity a live fleet gives
  an allocator that returns memory only when called), and until RSS holds steady.

    python3 bench/allocators.py                      # builds the three, full study (~45 min)
    python3 bench/allocators.py --skip-build         # the binaries of the last build
    python3 bench/allocators.py --skip-build --glibc P --mimalloc P --jemalloc P
    python3 bench/allocators.py --phases churn       # one phase
    python3 bench/allocators.py --smoke              # N=300, 1 round of 1 s, 3,000 instances: does it run

Builds with `cargo build --release -p heureka` and each feature set (the default's last, so
that target/release/heureka is left as the default build), keeping each binary
in bench/results/logs/allocators/bin/heureka-<name> (--skip-build reuses them). Writes
bench/results/allocators.{md,json} (--smoke: bench/results/smoke/, git-ignored); server and wrk
logs go to bench/results/logs/allocators/. See bench/README.md ("Allocators"). Standard library
and wrk only.
"""

from __future__ import annotations

import argparse
import concurrent.futures
import http.client
import json
import multiprocessing
import os
import shlex
import shutil
import signal
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import ab  # noqa: E402  (bench/ab.py: snapshot, spread, ratio)
import memory  # noqa: E402  (bench/memory.py: the multi-process loader and the RSS at a million)
import persistence as P  # noqa: E402  (bench/persistence.py: the store's pending gauge)
import run as R  # noqa: E402  (bench/run.py: build, servers, loading, wrk, /proc helpers)
from run import BenchError, log  # noqa: E402

# name: the cargo flags that build it. Every set says its feature explicitly, so that a later
# change of the default cannot change what a name measures.
ALLOCATORS = {
    "glibc": ["--no-default-features"],
    "mimalloc": ["--no-default-features", "--features", "mimalloc"],
    "jemalloc": ["--no-default-features", "--features", "jemalloc"],
}
BUILD_ORDER = ("mimalloc", "glibc", "jemalloc")  # the default's feature set last (Cargo.toml)
# A string only that allocator's code puts in a binary: a wrong --glibc/--mimalloc/--jemalloc
# path is found before it is measured.
MARKERS = {"mimalloc": b"mimalloc", "jemalloc": b"<jemalloc>"}
KEYS = (*ALLOCATORS, "baseline")
R.LABEL.update({k: f"Heureka ({k})" for k in ALLOCATORS})
R.SHORT.update({k: k for k in ALLOCATORS})
MODES = ("off", "on")
WORKLOADS = ("heartbeat", "register")
TITLE = {"heartbeat": "Heartbeat", "register": "Registration"}
PHASES = ("cpu", "churn", "million")
LOG_DIR = R.BENCH / "results" / "logs" / "allocators"
BIN_DIR = LOG_DIR / "bin"
EVICTION_OFF = ["--eureka.server.eviction-interval-timer-in-ms=86400000"]


# --------------------------------------------------------------------------------------------
# Binaries


def build_allocators(names: list[str]) -> dict[str, Path]:
    """Builds each named allocator's binary and keeps a copy in BIN_DIR (every build overwrites
    target/release/heureka)."""
    BIN_DIR.mkdir(parents=True, exist_ok=True)
    out = {}
    for name in [n for n in BUILD_ORDER if n in names]:
        R.run_quiet(["cargo", "build", "--release", "-p", "heureka", *ALLOCATORS[name]], R.ROOT,
                    f"build {name}", 1800)
        out[name] = BIN_DIR / f"heureka-{name}"
        shutil.copy2(R.HEUREKA_BIN, out[name])
    return out


def binaries(cfg) -> dict[str, Path]:
    """The binary of each allocator: the one given, else a fresh build (--skip-build: the copy
    the last build kept), and the ceiling's."""
    given = {k: getattr(cfg, k) for k in ALLOCATORS if getattr(cfg, k) is not None}
    missing = [k for k in ALLOCATORS if k not in given]
    if missing and not cfg.skip_build:
        given |= build_allocators(missing)
    given |= {k: BIN_DIR / f"heureka-{k}" for k in missing if k not in given}
    if cfg.baseline is None:
        errors = R.build(["baseline"], cfg.skip_build)
        if errors:
            raise BenchError(f"the ceiling is unavailable: {errors['baseline']}")
    given["baseline"] = cfg.baseline or R.BASELINE_BIN
    for key, path in given.items():
        if not (path.is_file() and os.access(path, os.X_OK)):
            raise BenchError(f"{key}: {path} is not an executable file (build it, or drop --skip-build)")
    return given


def markers_in(path: Path) -> list[str]:
    """The allocators whose marker string the binary holds."""
    found, tail = set(), b""
    width = max(len(m) for m in MARKERS.values())
    with open(path, "rb") as f:
        while chunk := f.read(1 << 22):
            data = tail + chunk
            found |= {k for k, m in MARKERS.items() if m in data}
            tail = data[-width:]
    return sorted(found)


def check_allocators(info: dict, failures: list[str]) -> None:
    """Each binary holds its own allocator's marker and no other's."""
    for key in ALLOCATORS:
        held = markers_in(Path(info[key]["run_as"]))
        info[key]["allocators_found"] = held
        want = [key] if key in MARKERS else []
        if held != want:
            failures.append(f"{key}: {info[key]['path']} links {held or 'no other allocator'}, "
                            f"not {key}: is it the right binary?")
            log(f"WARNING: {failures[-1]}")


# --------------------------------------------------------------------------------------------
# Phase cpu: the three and the ceiling side by side, rounds in a rotating order


def start_loaded(key: str, n: int, cfg, run_bins: dict[str, Path], log_dir: Path,
                 extra: list[str]) -> tuple[R.Running, dict]:
    """Starts one server, loads N instances into it (run.py's loader), waits for its store, and
    reads its RSS after one full and one delta fetch, as run.py does."""
    kind = "baseline" if key == "baseline" else "heureka"
    R.RUN_BIN[kind] = run_bins[key]
    srv = R.start_server(kind, log_dir, key, extra, deadline_s=cfg.start_deadline)
    srv.key = key
    info: dict = {"startup_ms": round(srv.startup_s * 1000, 1), "rss_idle": srv.rss()}
    try:
        info["load"] = R.load_instances(srv, n, R.napps_for(n), {200} if key == "baseline" else {204})
        info["load"]["durable"] = P.wait_durable(srv.port, cfg.durable_limit)
        if key != "baseline":
            info["payload"] = R.payload_info(srv, n, check_count=True)
        time.sleep(cfg.settle)
        info["rss_loaded"] = srv.rss()
    except BenchError:
        srv.stop()
        raise
    log(f"  {key:8} started in {info['startup_ms']:.0f} ms, idle {R.mib(info['rss_idle'])}; loaded {n:,} in "
        f"{info['load']['seconds']:.1f} s, RSS {R.mib(info['rss_loaded'])}")
    return srv, info


def measured_round(srv: R.Running, idle: list[R.Running], name: str, n: int, cfg, log_dir: Path,
                   rnd: int) -> dict:
    """One measured wrk run; its CPU per request counts until the store caught up, plus --settle."""
    cpu0 = srv.cpu()
    res = R.run_workload_round(srv, name, n, cfg, log_dir, rnd, idle=idle)
    res["durable"] = P.wait_durable(srv.port, cfg.durable_limit)
    time.sleep(cfg.settle)
    cpu1 = srv.cpu()
    if cpu0 is not None and cpu1 is not None and res["requests"]:
        res["cpu_us_per_req"] = round((cpu1 - cpu0) / res["requests"] * 1e6, 3)
    return res


def rotation(keys: list[str], rnd: int) -> list[str]:
    """Round rnd's order: the allocators rotated by one per round, the ceiling last."""
    allocs = [k for k in ALLOCATORS if k in keys]
    s = rnd % len(allocs) if allocs else 0
    return allocs[s:] + allocs[:s] + [k for k in keys if k == "baseline"]


def paired(got: dict[str, dict], field: str) -> dict:
    """One round's figure per server, with its ratios to glibc and to the ceiling."""
    val = {k: r.get(field) for k, r in got.items()}
    return {k: {"value": v, "over_glibc": ab.ratio(v, val.get("glibc")),
                "over_ceiling": ab.ratio(v, val.get("baseline"))} for k, v in val.items()}


def cpu_workload(running: dict[str, R.Running], name: str, n: int, cfg, log_dir: Path,
                 failures: list[str], mode: str) -> dict:
    keys = [k for k in KEYS if k in running]
    wl: dict = {"warmup": {}, "rounds": {k: [] for k in keys}, "paired": [], "summary": {}}
    broken: dict[str, str] = {}
    for k in keys:  # run.py's warm-up: until the CPU per request is steady
        try:
            wl["warmup"][k] = R.warm_up(running[k], name, n, cfg, log_dir)
        except BenchError as e:
            broken[k] = str(e)
    for rnd in range(cfg.rounds):
        order = [k for k in rotation(keys, rnd) if k not in broken]
        got: dict[str, dict] = {}
        for k in order:
            srv, idle = running[k], [running[o] for o in keys if o != k]
            if not srv.alive():
                broken[k] = f"server died before round {rnd + 1}"
                continue
            for other in idle:  # the previous run's batches written: the others quiet
                P.wait_durable(other.port, cfg.durable_limit)
            R.wait_until_idle(idle, cfg.idle_wait)
            try:
                got[k] = measured_round(srv, idle, name, n, cfg, log_dir, rnd)
            except BenchError as e:
                broken[k] = str(e)
                continue
            got[k]["position"] = order.index(k)
            wl["rounds"][k].append(got[k])
        wl["paired"].append({"round": rnd, "order": order, "cpu_us_per_req": paired(got, "cpu_us_per_req"),
                             "server_cpu_us_per_req": paired(got, "server_cpu_us_per_req")})
        log(f"  persistence {mode}, N={n:,} {name} round {rnd + 1}/{cfg.rounds}: "
            + "  ".join(f"{k} {got[k].get('cpu_us_per_req', 0):.2f} µs" for k in order if k in got))
    for k in keys:
        wl["summary"][k] = summarize(wl, k)
        rounds = wl["rounds"][k]
        why = broken.get(k) or (R.workload_ok(R.aggregate(rounds)) if rounds else "no round ran")
        if why:
            wl["summary"][k]["failed"] = why
            failures.append(f"cpu, persistence {mode}, N={n} {name}, {k}: {why}")
    return wl


def summarize(wl: dict, key: str) -> dict:
    """A server's medians (min–max) over the rounds: CPU, its paired ratios, p99, throughput."""
    def over(field: str, x: str) -> dict | None:
        return ab.spread([p[field].get(key, {}).get(x) for p in wl["paired"]])
    rounds = wl["rounds"][key]
    return {"cpu_us": over("cpu_us_per_req", "value"), "over_glibc": over("cpu_us_per_req", "over_glibc"),
            "over_ceiling": over("cpu_us_per_req", "over_ceiling"),
            "cpu_us_wrk_window": over("server_cpu_us_per_req", "value"),
            "over_glibc_wrk_window": over("server_cpu_us_per_req", "over_glibc"),
            "p99_ms": ab.spread([r.get("p99_ms") for r in rounds]), "rps": ab.spread([r.get("rps") for r in rounds]),
            "other_cpu_share": ab.spread([r.get("other_cpu_share") for r in rounds])}


def cpu_phase(mode: str, cfg, run_bins: dict[str, Path], data_root: Path, results: dict,
              failures: list[str]) -> None:
    n, log_dir = cfg.n, LOG_DIR / f"cpu-{mode}"
    log_dir.mkdir(parents=True, exist_ok=True)
    out: dict = {"instances": n, "servers": {}, "workloads": {}}
    results["cpu"][mode] = out
    running: dict[str, R.Running] = {}
    try:
        for key in KEYS:
            extra = []
            if mode == "on" and key != "baseline":
                store = data_root / f"{key}-{mode}"
                shutil.rmtree(store, ignore_errors=True)
                store.mkdir(parents=True)
                extra = [f"--heureka.persistence.dir={store}"]
            try:
                running[key], out["servers"][key] = start_loaded(key, n, cfg, run_bins, log_dir, extra)
            except BenchError as e:
                out["servers"][key] = {"failed": str(e)}
                failures.append(f"cpu, persistence {mode}, {key}: {e}")
                log(f"  {key:8} FAILED: {str(e).splitlines()[0]}")
        for name in WORKLOADS:
            out["workloads"][name] = cpu_workload(running, name, n, cfg, log_dir, failures, mode)
    finally:
        for srv in running.values():
            srv.stop()


# --------------------------------------------------------------------------------------------
# Phase churn: rolling replacement of every instance, K times


class Client:
    """One keep-alive connection, reopened (and the request sent again once) if it breaks."""

    def __init__(self, port: int):
        self.port, self.conn = port, http.client.HTTPConnection("127.0.0.1", port, timeout=120)

    def call(self, method: str, path: str, body: bytes | None = None) -> int:
        headers = {"Content-Type": "application/json"} if body else {}
        for attempt in range(2):
            try:
                self.conn.request(method, path, body=body, headers=headers)
                resp = self.conn.getresponse()
                resp.read()
                return resp.status
            except (OSError, http.client.HTTPException):
                self.conn.close()
                self.conn = http.client.HTTPConnection("127.0.0.1", self.port, timeout=120)
        return 0


def churn_slice(args: tuple) -> int:
    """Instances first, first + step, … below n of one generation (ids gen × n + j, run.py's
    naming): "register" registers them, "replace" registers them and cancels the previous
    generation's instance of the same j, "renew" sends each a heartbeat. Returns the failures."""
    port, op, n, gen, first, step = args
    napps, client, failures = R.napps_for(n), Client(port), 0

    def path(i: int) -> str:
        return f"/eureka/apps/BENCH-APP-{i % napps}/{R.instance_id(i, napps)}"
    for i in range(gen * n + first, (gen + 1) * n, step):
        if op == "renew":
            failures += client.call("PUT", f"{path(i)}?status=UP&lastDirtyTimestamp={R.LAST_DIRTY}") != 200
            continue
        body = R.register_body(R.instance_id(i, napps), i % napps, R.ip_of(i), R.LOAD_LEASE_S)
        failures += client.call("POST", f"/eureka/apps/BENCH-APP-{i % napps}", body) != 204
        if op == "replace":
            failures += client.call("DELETE", path(i - n)) != 200
    client.conn.close()
    return failures


def in_parallel(srv: R.Running, op: str, n: int, gen: int, procs: int) -> float:
    """churn_slice over procs processes (connections); raises if any request failed. Seconds taken."""
    t0 = time.perf_counter()
    # Spawned, not forked (a fork copies locks other threads hold), and an executor rather than
    # a Pool: a loader that dies fails the step instead of leaving map() waiting for ever (a
    # forked Pool hung so in a full run).
    context = multiprocessing.get_context("spawn")
    with concurrent.futures.ProcessPoolExecutor(procs, mp_context=context) as pool:
        failed = sum(pool.map(churn_slice, [(srv.port, op, n, gen, k, procs) for k in range(procs)]))
    if failed:
        raise BenchError(f"{srv.key}: {failed} requests of {op} generation {gen} failed")
    return round(time.perf_counter() - t0, 2)


def steady_rss(srv: R.Running, limit_s: float) -> tuple[int | None, list[int | None]]:
    """RSS read every second until three readings in a row agree within 1 % (at most limit_s)."""
    seen = [srv.rss()]
    deadline = time.perf_counter() + limit_s
    while time.perf_counter() < deadline:
        time.sleep(1.0)
        seen.append(srv.rss())
        last = [x for x in seen[-3:] if x]
        if len(last) == 3 and max(last) - min(last) <= 0.01 * max(last):
            break
    return seen[-1], seen


def instances_in(srv: R.Running, path: str) -> int:
    conn = http.client.HTTPConnection("127.0.0.1", srv.port, timeout=R.fetch_timeout_s(1))
    try:
        status, body, headers = R.http_get(conn, path, R.JSON_GZIP)
    finally:
        conn.close()
    if status != 200:
        raise BenchError(f"{srv.key}: GET {path} answered {status}")
    return R.count_instances(R.decoded(body, headers))


def churn_server(srv: R.Running, cfg, info: dict) -> float:
    """Loads generation 0, then replaces it cfg.churn_rounds times, reading RSS at each step.
    Returns when the churn ended (time.monotonic)."""
    n = cfg.n
    info["rss_idle"] = srv.rss()
    info["load_s"] = in_parallel(srv, "register", n, 0, cfg.procs)
    time.sleep(cfg.settle)
    info["rss_loaded"] = srv.rss()
    info["rounds"] = []
    for gen in range(1, cfg.churn_rounds + 1):
        took = in_parallel(srv, "replace", n, gen, cfg.procs)
        info["rounds"].append({"seconds": took, "rss": srv.rss()})
    time.sleep(cfg.settle)
    info["rss_churned"] = srv.rss()
    log(f"  {srv.key:8} loaded {n:,}: {R.mib(info['rss_loaded'])}; after {cfg.churn_rounds} replacement(s) "
        f"of every instance: {R.mib(info['rss_churned'])}")
    return time.monotonic()


def settle_server(srv: R.Running, cfg, info: dict) -> None:
    """After the delta's retention: a heartbeat per live instance, RSS until steady, then checks
    that the registry holds the last generation and the delta nothing."""
    info["renew_s"] = in_parallel(srv, "renew", cfg.n, cfg.churn_rounds, cfg.procs)
    info["rss_settled"], info["rss_settling"] = steady_rss(srv, cfg.steady_limit)
    info["registry_instances"] = instances_in(srv, "/eureka/apps")
    info["delta_instances"] = instances_in(srv, "/eureka/apps/delta")
    if info["registry_instances"] != cfg.n:
        raise BenchError(f"{srv.key}: the registry holds {info['registry_instances']} instances after the churn, "
                         f"not {cfg.n}")
    loaded = info["rss_loaded"]
    info["churned_over_loaded"] = ab.ratio(info["rss_churned"], loaded)
    info["settled_over_loaded"] = ab.ratio(info["rss_settled"], loaded)
    log(f"  {srv.key:8} settled: {R.mib(info['rss_settled'])} = {info['settled_over_loaded']:.2f} × loaded "
        f"(after churn {info['churned_over_loaded']:.2f} ×); the delta holds {info['delta_instances']}")


def churn_phase(cfg, run_bins: dict[str, Path], results: dict, failures: list[str]) -> None:
    """The three side by side (RSS does not depend on the neighbours), so that one wait for the
    delta's retention serves all."""
    log_dir = LOG_DIR / "churn"
    log_dir.mkdir(parents=True, exist_ok=True)
    out: dict = {"instances": cfg.n, "rounds": cfg.churn_rounds, "flags": cfg.churn_flags, "servers": {}}
    results["churn"] = out
    running: dict[str, R.Running] = {}
    ended = [time.monotonic()]
    try:
        for key in ALLOCATORS:
            info = out["servers"].setdefault(key, {})
            try:
                R.RUN_BIN["heureka"] = run_bins[key]
                running[key] = R.start_server("heureka", log_dir, key, cfg.churn_flags, deadline_s=cfg.start_deadline)
                running[key].key = key
                ended.append(churn_server(running[key], cfg, info))
            except BenchError as e:
                info["failed"] = str(e)
                failures.append(f"churn, {key}: {e}")
                log(f"  {key:8} FAILED: {str(e).splitlines()[0]}")
                running.pop(key, None)
        # the server drops a change from the delta at the first tick of its timer past the retention
        wait_s = max(ended) + (cfg.retention_ms + 2 * cfg.retention_timer_ms) / 1000 - time.monotonic()
        if running and wait_s > 0:
            log(f"  waiting {wait_s:.0f} s for the delta's retention to pass")
            time.sleep(wait_s)
        for key, srv in running.items():
            try:
                settle_server(srv, cfg, out["servers"][key])
            except BenchError as e:
                out["servers"][key]["failed"] = str(e)
                failures.append(f"churn, {key}: {e}")
    finally:
        for srv in running.values():
            srv.stop()


# --------------------------------------------------------------------------------------------
# Phase million: memory.py's measure(), one server at a time


def million_phase(cfg, run_bins: dict[str, Path], results: dict, failures: list[str]) -> None:
    out: dict = {"instances": cfg.million, "servers": {}}
    results["million"] = out
    for key in ALLOCATORS:
        log_dir = LOG_DIR / "million" / key
        log_dir.mkdir(parents=True, exist_ok=True)
        log(f"  {key:8} loading {cfg.million:,} instances (memory.py, {cfg.procs} processes)")
        try:
            r = memory.measure(run_bins[key], cfg.million, cfg.procs, [], {}, log_dir, 0)
        except (SystemExit, OSError, http.client.HTTPException) as e:  # memory.py exits on failure
            out["servers"][key] = {"failed": str(e)}
            failures.append(f"million, {key}: {e}")
            log(f"  {key:8} FAILED: {e}")
            continue
        out["servers"][key] = r
        log(f"  {key:8} idle {R.mib(r['rss_idle'])}, registered {R.mib(r['rss_registered'])}, after fetches "
            f"{R.mib(r['rss_loaded'])}: {r['growth_per_instance']:,.0f} B per instance; "
            f"loaded in {r['load_seconds']} s")


# --------------------------------------------------------------------------------------------
# Reports


def cpu_cell(results: dict, mode: str, name: str, key: str) -> tuple[float | None, str]:
    s = results["cpu"].get(mode, {}).get("workloads", {}).get(name, {}).get("summary", {}).get(key, {})
    med = (s.get("cpu_us") or {}).get("median")
    if med is None:
        return None, "–"
    g = (s.get("over_glibc") or {}).get("median")
    return med, f"{R.fmt_num(med)}" + (f" ({g:.2f})" if g is not None and key not in ("glibc", "baseline") else "")


def rss_cell(key: str, v: int | None, glibc: int | None) -> tuple[float | None, str]:
    if v is None:
        return None, "–"
    r = ab.ratio(v, glibc)
    return v, f"{v / 2**20:.1f}" + (f" ({r:.2f})" if r is not None and key != "glibc" else "")


def ratio_cell(v: float | None) -> tuple[float | None, str]:
    return v, "–" if v is None else f"{v:.2f}"


def whole_table(results: dict) -> list[list[str]]:
    """Rows per allocator (and the ceiling's CPU): each cell a median, the lowest per column bold."""
    def rss(phase: str, key: str, field: str) -> int | None:
        src = results["cpu"].get("off", {}).get("servers", {}) if phase == "cpu" else \
            results.get(phase, {}).get("servers", {})
        return src.get(key, {}).get(field)

    churn = results.get("churn", {}).get("servers", {})
    cells: dict[str, list[tuple[float | None, str]]] = {}
    for key in KEYS:
        row = [cpu_cell(results, mode, name, key) for name in WORKLOADS for mode in MODES]
        if key == "baseline":
            row += [(None, "")] * 5
        else:
            row += [rss_cell(key, rss(ph, key, f), rss(ph, "glibc", f))
                    for ph, f in (("cpu", "rss_idle"), ("cpu", "rss_loaded"), ("million", "rss_loaded"))]
            row += [ratio_cell(churn.get(key, {}).get(f)) for f in ("churned_over_loaded", "settled_over_loaded")]
        cells[key] = row
    for col in range(len(cells["glibc"])):
        vals = [cells[k][col][0] for k in ALLOCATORS if cells[k][col][0] is not None]
        if len(vals) > 1:
            for k in ALLOCATORS:
                if cells[k][col][0] == min(vals):
                    cells[k][col] = (cells[k][col][0], f"**{cells[k][col][1]}**")
    return [["Ceiling" if k == "baseline" else k] + [c[1] for c in cells[k]] for k in KEYS]


def whole_head(config: dict) -> list[str]:
    return ["Allocator", "Heartbeat µs, off", "Heartbeat µs, on", "Registration µs, off", "Registration µs, on",
            "RSS idle MiB", f"RSS {config['n']:,} MiB", f"RSS {config['million']:,} MiB", "After churn ÷ loaded",
            "Settled ÷ loaded"]


def cpu_detail(results: dict) -> list[str]:
    lines = ["| Persistence | Workload | Server | CPU µs/request | ÷ glibc | ÷ ceiling | CPU µs, wrk window only "
             "| p99 ms | requests/s | other CPU share |", "|---|---|---|--:|--:|--:|--:|--:|--:|--:|"]
    for mode, run in results["cpu"].items():
        for name, wl in run.get("workloads", {}).items():
            for key, s in wl["summary"].items():
                lines.append(f"| {mode} | {TITLE[name]} | {'ceiling' if key == 'baseline' else key} | "
                             f"{ab.fmt_spread(s['cpu_us'])} | {ab.fmt_spread(s['over_glibc'], True)} | "
                             f"{ab.fmt_spread(s['over_ceiling'], True)} | {ab.fmt_spread(s['cpu_us_wrk_window'])} | "
                             f"{ab.fmt_spread(s['p99_ms'])} | {ab.fmt_spread(s['rps'])} | "
                             f"{ab.fmt_spread(s['other_cpu_share'], True)} |"
                             + (f" failed: {s['failed']}" if s.get("failed") else ""))
    return lines


def memory_detail(results: dict) -> list[str]:
    lines = []
    churn = results.get("churn", {})
    if churn.get("servers"):
        lines += [f"Churn at N={churn['instances']:,}, {churn['rounds']} rolling replacement(s) of every instance; "
                  f"server flags `{' '.join(churn['flags'])}`.", "",
                  "| Allocator | idle | loaded | after each round | after churn | settled | delta after settling "
                  "| settled ÷ loaded |", "|---|--:|--:|---|--:|--:|--:|--:|"]
        for key, s in churn["servers"].items():
            rounds = ", ".join(R.mib(r["rss"]) for r in s.get("rounds", []))
            lines.append(f"| {key} | {R.mib(s.get('rss_idle'))} | {R.mib(s.get('rss_loaded'))} | {rounds} | "
                         f"{R.mib(s.get('rss_churned'))} | {R.mib(s.get('rss_settled'))} | "
                         f"{s.get('delta_instances', '–')} | {ratio_cell(s.get('settled_over_loaded'))[1]} |"
                         + (f" failed: {s['failed']}" if s.get("failed") else ""))
        lines.append("")
    million = results.get("million", {})
    if million.get("servers"):
        lines += [f"At {million['instances']:,} instances (memory.py, one server at a time):", "",
                  "| Allocator | idle | registered | after a full and a delta fetch | growth B/instance "
                  "| µs CPU per registration (loading) |", "|---|--:|--:|--:|--:|--:|"]
        for key, s in million["servers"].items():
            if "failed" in s:
                lines.append(f"| {key} | failed: {s['failed']} | | | | |")
                continue
            lines.append(f"| {key} | {R.mib(s['rss_idle'])} | {R.mib(s['rss_registered'])} | "
                         f"{R.mib(s['rss_loaded'])} | {s['growth_per_instance']:,.0f} | "
                         f"{s['cpu_us_per_registration']} |")
    return lines


def write_reports(results: dict, out_md: Path, out_json: Path) -> str:
    out_json.write_text(json.dumps(results, indent=1, ensure_ascii=False) + "\n")
    c, m = results["config"], results["machine"]
    head = [f"# Allocators: glibc, mimalloc, jemalloc ({results['mode']} run)", "",
            f"Machine: **{m['nproc']} CPUs (nproc), {m['memory_gib']} GiB, {m['cpu']}**, Linux {m['kernel']}. "
            f"Date: {m['date']}. Commit {m['commit']}. CPUs busy with other work just before the run: "
            f"{m.get('cpu_busy_before_run', 0):.0%}.", ""]
    head += [f"* **{k}**: `{b['path']}` (sha256 {b['sha256'][:12]}, built {b['built']}; allocator strings found: "
             f"{', '.join(b.get('allocators_found', [])) or 'none'})" for k, b in results.get("binaries", {}).items()]
    head += ["", f"N={c['n']:,} instances (N/10 apps); wrk `-t{c['threads']} -c{c['connections']}`; run.py's warm-ups "
             f"({c['warmup']} s runs until steady, at most {c['warmup_runs']}), then {c['rounds']} round(s) of "
             f"{c['duration']} s per workload in a rotating order, the ceiling last. CPU per request counts until the "
             f"store has written what the round queued, plus {c['settle']} s, for every server. Each cell of the "
             f"whole table is a median over the rounds; in parentheses the ratio to glibc (CPU: paired per round, "
             f"then the median). Lowest per column in bold. RSS {c['n']:,}: after loading and one full and one delta "
             f"fetch; RSS {c['million']:,}: the same, one server at a time (memory.py). Churn: RSS after "
             f"{c['churn_rounds']} rolling replacement(s) of all N instances (new ids), and settled after the delta's retention, over RSS after "
             f"the load.", "", f"Produced by `{results['command']}`.", ""]
    if results.get("note"):
        head += [results["note"], ""]
    table = ["| " + " | ".join(whole_head(c)) + " |", "|---|" + "--:|" * (len(whole_head(c)) - 1)]
    table += ["| " + " | ".join(r) + " |" for r in whole_table(results)]
    md = head + ["## The whole table", ""] + table + ["", "## CPU per request", ""] + cpu_detail(results) \
        + ["", "## Memory", ""] + memory_detail(results)
    if results["failures"]:
        md += ["", "## Failures", ""] + [f"* {f.splitlines()[0]}" for f in results["failures"]]
    out_md.write_text("\n".join(md) + "\n")
    return "\n".join(table)


# --------------------------------------------------------------------------------------------


def parse_args(argv: list[str]):
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--smoke", action="store_true",
                   help="N=300, one round of 1 s, --million 3000, one churn round (checks it runs)")
    for key in ALLOCATORS:
        p.add_argument(f"--{key}", type=Path, help=f"the {key} binary, used as it is (default: built here)")
    p.add_argument("--baseline", type=Path, help="the ceiling's binary (default: built here)")
    p.add_argument("--skip-build", action="store_true",
                   help="build nothing: binaries not given are the last build's (bench/results/logs/allocators/bin/)")
    p.add_argument("--phases", default=",".join(PHASES), help=f"comma list of {', '.join(PHASES)} (default all)")
    p.add_argument("--modes", default=",".join(MODES),
                   help="persistence off, on or both in the cpu phase (default off,on)")
    p.add_argument("--n", type=int, help="instances per server in the cpu and churn phases (default 10000; smoke 300)")
    p.add_argument("--million", type=int, help="instances for the large RSS figure (default 1000000; smoke 3000)")
    p.add_argument("--churn-rounds", type=int, help="replacements of every instance (default 5; smoke 1)")
    p.add_argument("--delta-retention-ms", type=int,
                   help="the churn servers' delta retention (default the server's 180000; smoke 2000)")
    p.add_argument("--rounds", type=int, help="measured rounds per workload (default 5; smoke 1)")
    p.add_argument("--duration", type=int, help="seconds per measured wrk round (default 5; smoke 1)")
    p.add_argument("--warmup", type=int, help="seconds per warm-up run (default 3; smoke 1)")
    p.add_argument("--warmup-runs", type=int, help="at most this many warm-up runs (default 15; smoke 1)")
    p.add_argument("--threads", type=int, default=2, help="wrk threads (default 2)")
    p.add_argument("--connections", type=int, default=64, help="wrk connections (default 64)")
    p.add_argument("--procs", type=int, default=3, help="loader processes in the churn and million phases (default 3)")
    p.add_argument("--quiet-wait", type=float,
                   help="seconds to wait for other processes to leave the CPUs idle first (default 30; smoke 0)")
    p.add_argument("--note", help="a line for the report (say, that the machine was busy)")
    p.add_argument("--out", type=Path, help="output directory (default bench/results; smoke bench/results/smoke)")
    p.add_argument("--report-from", type=Path, metavar="JSON",
                   help="measure nothing: write the report again from a JSON")
    a = p.parse_args(argv)
    smoke = a.smoke
    a.mode = "smoke" if smoke else "full"

    def listed(v: str, known: tuple[str, ...], what: str) -> list[str]:
        got = [x.strip() for x in v.split(",") if x.strip()]
        for x in got:
            if x not in known:
                p.error(f"unknown {what} {x!r} (known: {', '.join(known)})")
        return got
    a.phases, a.modes = listed(a.phases, PHASES, "phase"), listed(a.modes, MODES, "mode")
    a.n = a.n or (300 if smoke else 10000)
    a.million = a.million or (3000 if smoke else 1_000_000)
    a.churn_rounds = a.churn_rounds or (1 if smoke else 5)
    a.retention_ms = a.delta_retention_ms or (2000 if smoke else 180000)
    a.retention_timer_ms = 500 if smoke else 30000  # the server's default timer, shorter for the smoke run
    # The cancelled instances' tombstones kept as long as the delta's changes, so that once the
    # wait is over the registry holds the last generation alone: what RSS still holds then is
    # the allocator's (with the default 300 s retention, 50,000 tombstones were still there).
    a.churn_flags = [*EVICTION_OFF, "--logging.level.root=warn",
                     f"--heureka.replication.tombstone-retention-ms={a.retention_ms}",
                     f"--eureka.server.retention-time-in-m-s-in-delta-queue={a.retention_ms}",
                     f"--eureka.server.delta-retention-timer-interval-in-ms={a.retention_timer_ms}"]
    a.steady_limit = 5.0 if smoke else 60.0
    ab.round_defaults(a, smoke)
    a.durable_limit = 120.0  # persistence.py's wait for the store, read by the cpu phase
    a.out = (a.out or (R.BENCH / "results" / ("smoke" if smoke else ""))).resolve()
    return a


def fresh_logs() -> None:
    """Logs describe one run; the kept binaries stay."""
    LOG_DIR.mkdir(parents=True, exist_ok=True)
    for entry in LOG_DIR.iterdir():
        if entry != BIN_DIR:
            shutil.rmtree(entry) if entry.is_dir() else entry.unlink()


def new_results(cfg, argv: list[str]) -> dict:
    machine = R.machine_info()
    machine["nproc"] = len(os.sched_getaffinity(0))
    return {"mode": cfg.mode, "machine": machine, "command": "python3 bench/allocators.py " + shlex.join(argv),
            "note": cfg.note,
            "config": {"phases": cfg.phases, "modes": cfg.modes, "n": cfg.n, "million": cfg.million,
                       "churn_rounds": cfg.churn_rounds, "rounds": cfg.rounds, "duration": cfg.duration,
                       "warmup": cfg.warmup, "warmup_runs": cfg.warmup_runs, "threads": cfg.threads,
                       "connections": cfg.connections, "settle": cfg.settle, "procs": cfg.procs,
                       "server_flags": R.COMMON_FLAGS, "features": ALLOCATORS,
                       "order": "allocators rotated by one per round (glibc, mimalloc, jemalloc first), ceiling last"},
            "cpu": {}, "failures": []}


def measure(cfg, results: dict, out_md: Path, out_json: Path, t_begin: float) -> None:
    failures = results["failures"]
    tmp = Path(tempfile.mkdtemp(prefix="heureka-allocators-"))
    try:
        bins = binaries(cfg)
        results["binaries"] = ab.snapshot(bins, tmp)
        check_allocators(results["binaries"], failures)
        run_bins = {k: Path(v["run_as"]) for k, v in results["binaries"].items()}
        results["machine"]["cpu_busy_before_run"] = round(R.wait_for_quiet(cfg.quiet_wait), 3)
        steps = [(f"CPU per request, persistence {mode}, N={cfg.n:,}",
                  lambda mode=mode: cpu_phase(mode, cfg, run_bins, tmp / "data", results, failures))
                 for mode in cfg.modes if "cpu" in cfg.phases]
        if "churn" in cfg.phases:
            steps.append((f"churn, N={cfg.n:,}", lambda: churn_phase(cfg, run_bins, results, failures)))
        if "million" in cfg.phases:
            steps.append((f"RSS at {cfg.million:,}", lambda: million_phase(cfg, run_bins, results, failures)))
        for title, step in steps:
            log(title)
            step()
            results["elapsed_s"] = round(time.time() - t_begin, 1)
            write_reports(results, out_md, out_json)  # a run cut short still leaves what it measured
    finally:
        R.stop_all()
        shutil.rmtree(tmp, ignore_errors=True)


def main(argv: list[str]) -> int:
    cfg = parse_args(argv)
    out_md, out_json = cfg.out / "allocators.md", cfg.out / "allocators.json"
    cfg.out.mkdir(parents=True, exist_ok=True)
    if cfg.report_from:
        print(write_reports(json.loads(cfg.report_from.read_text()), out_md, out_json))
        return 0
    if not shutil.which("wrk"):
        print("allocators: wrk not found (Debian/Ubuntu: apt-get install wrk)", file=sys.stderr)
        return 2
    fresh_logs()
    t_begin = time.time()
    results = new_results(cfg, argv)
    log(f"allocators: phases {cfg.phases}, persistence {cfg.modes}; N={cfg.n:,}, {cfg.million:,}; output {out_md}")
    try:
        measure(cfg, results, out_md, out_json, t_begin)
    except BenchError as e:
        results["failures"].append(str(e))
    except KeyboardInterrupt:
        results["failures"].append("interrupted")
    results["elapsed_s"] = round(time.time() - t_begin, 1)
    write_reports(results, out_md, out_json)
    print()
    print(out_md.read_text())
    print(f"Results: {out_md}, {out_json} (logs in {LOG_DIR}); {results['elapsed_s']:.0f} s")
    if results["failures"]:
        print("\nWhat could not run:", file=sys.stderr)
        for f in results["failures"]:
            print(f"  - {f.splitlines()[0]}", file=sys.stderr)
        return 1
    return 0


MAIN_PID = os.getpid()


def _terminate(signum, frame):  # noqa: ARG001
    if os.getpid() != MAIN_PID:  # a loader process, ended by its pool: quietly
        os._exit(128 + signum)
    raise KeyboardInterrupt(f"signal {signum}")


if __name__ == "__main__":
    signal.signal(signal.SIGTERM, _terminate)
    signal.signal(signal.SIGINT, _terminate)
    try:
        sys.exit(main(sys.argv[1:]))
    finally:
        R.stop_all()
