#!/usr/bin/env python3
"""What persistence costs (issue 22): CPU per registration and per heartbeat with
`heureka.persistence.dir` set, as a ratio to the same binary without it; restore time; store size.

    python3 bench/persistence.py --bin /path/to/heureka --skip-build    # full run, ~20 minutes
    python3 bench/persistence.py --phases cpu --cpu-sizes 10000 --rounds 5
    python3 bench/persistence.py --phases restore --restore-sizes 100000
    python3 bench/persistence.py --smoke                                  # N=1,000, short runs
    python3 bench/persistence.py --report-from bench/results/persistence.json

Two phases, both against one release binary (a private copy of --bin, default
target/release/heureka, built unless --skip-build):

* **cpu**: at each N of --cpu-sizes (10,000 and 100,000), two servers side by side, persistence
  off and on (a fresh directory), each loaded with the same N instances (run.py's loader). Then,
  per workload, measured rounds that alternate off, on / on, off (so that other work on the
  machine hits both alike): re-registration of the loaded instances (POST, run.py's
  register.lua in its re-register mode: the registry stays at N) and heartbeats (PUT,
  heartbeat.lua), each paced at --rate requests/s (wrk's `delay()`, the same pace for both modes,
  so that both do the same work and the store's batches are as large in every round), and
  again flat out (wrk -c64, as run.py and ab.py run them: "_flat"). A round's server CPU time
  (utime+stime from /proc/PID/stat) runs from the wrk start until the store has written
  everything the round queued (`heureka_persistence_pending_records` 0 at
  /actuator/prometheus) plus --settle seconds, the same wait for both modes: batching defers
  the store's work past the wrk run, and it belongs to the requests. Divided by the requests,
  paired per round (on/off of the same round), median of the rounds.
* **restore**: at each N of --restore-sizes (100,000 and 1,000,000): a server with persistence
  on is loaded with N instances, until pending is 0; the store's size is read (every file in
  the directory), the server gets SIGTERM (timed to its exit), and is started again on the
  same directory, --restore-rounds times: time from the spawn to the first `GET /eureka/apps`
  (JSON, gzip, polled every 10 ms) answering 200, and to the first answering with all N
  instances (counted from apps__hashcode), next to the figure of the server's "registry
  restored" log line. At --kill-sizes (100,000) the last restored server re-registers
  --kill-writes instances, waits until they are durable and gets SIGKILL; the restart after it
  is timed the same way (an unclean shutdown may make the store repair itself first).

Writes bench/results/persistence.{md,json} (--smoke: bench/results/smoke/); server and wrk logs
in bench/results/logs/persistence/. Standard library and wrk only.
"""

from __future__ import annotations

import argparse
import datetime as dt
import hashlib
import http.client
import json
import os
import re
import shlex
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import run as R  # noqa: E402  (bench/run.py: servers, loading, wrk, /proc helpers)
from run import BenchError, log  # noqa: E402

MODES = ("off", "on")
R.LABEL.update({"off": "Heureka (persistence off)", "on": "Heureka (persistence on)"})
R.SHORT.update({"off": "off", "on": "on"})
# "_flat": the same requests flat out (wrk -c64 without pacing), as run.py and ab.py run them
WORKLOADS = ("register", "heartbeat", "register_flat", "heartbeat_flat")
TITLE = {"register": "Registration (re-register, POST), paced", "heartbeat": "Heartbeat (PUT), paced",
         "register_flat": "Registration (re-register, POST), flat out", "heartbeat_flat": "Heartbeat (PUT), flat out"}


def base_of(name: str) -> str:
    return name.removesuffix("_flat")

PENDING = "heureka_persistence_pending_records"
BATCHES = "heureka_persistence_batches_total"
BATCH_SUM = "heureka_persistence_batch_seconds_sum"
BATCH_COUNT = "heureka_persistence_batch_seconds_count"
RECORDS = "heureka_persistence_records_total"  # rows written or deleted (changes coalesce per instance and window)
REGISTRATIONS = "heureka_registrations_total"
RENEWALS = "heureka_renewals_total"


# --------------------------------------------------------------------------------------------
# Small helpers


def metrics(port: int) -> dict[str, float]:
    """/actuator/prometheus as {metric name: value}, label sets summed; {} if it cannot be read."""
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
    try:
        conn.request("GET", "/actuator/prometheus")
        resp = conn.getresponse()
        text = resp.read().decode(errors="replace")
        if resp.status != 200:
            return {}
    except (OSError, http.client.HTTPException):
        return {}
    finally:
        conn.close()
    out: dict[str, float] = {}
    for line in text.splitlines():
        if not line or line.startswith("#"):
            continue
        m = re.match(r"([A-Za-z_:][A-Za-z0-9_:]*)(\{[^}]*\})?\s+(\S+)", line)
        if not m:
            continue
        try:
            out[m.group(1)] = out.get(m.group(1), 0.0) + float(m.group(3))
        except ValueError:
            pass
    return out


def wait_durable(port: int, limit_s: float, poll_s: float = 0.1) -> dict:
    """Polls the pending gauge until it reads 0 (everything the server queued for the store is
    written). A server without the gauge (persistence off) returns after one scrape, so that
    both modes pay at least the same scrape. Returns the time waited and the last reading."""
    t0 = time.perf_counter()
    seen_max = 0.0
    while True:
        m = metrics(port)
        pending = m.get(PENDING)
        if pending is not None:
            seen_max = max(seen_max, pending)
        waited = time.perf_counter() - t0
        if pending is None or pending == 0:
            return {"waited_s": round(waited, 3), "pending": pending, "pending_max_seen": seen_max}
        if waited > limit_s:
            return {"waited_s": round(waited, 3), "pending": pending, "pending_max_seen": seen_max,
                    "timed_out": True}
        time.sleep(poll_s)


def dir_size(path: Path) -> dict:
    """Every file under path: apparent bytes (st_size) and bytes allocated on disk (st_blocks)."""
    size = blocks = files = 0
    for root, _, names in os.walk(path):
        for name in names:
            try:
                st = os.stat(os.path.join(root, name))
            except OSError:
                continue
            size += st.st_size
            blocks += st.st_blocks * 512
            files += 1
    return {"bytes": size, "allocated_bytes": blocks, "files": files}


def filesystem_of(path: Path) -> str:
    """The file system type holding path, from /proc/mounts (longest matching mount point)."""
    best, kind = "", "?"
    try:
        real = os.path.realpath(path)
        for line in open("/proc/mounts"):
            parts = line.split()
            if len(parts) >= 3 and (real == parts[1] or real.startswith(parts[1].rstrip("/") + "/")) \
                    and len(parts[1]) >= len(best):
                best, kind = parts[1], f"{parts[2]} ({parts[0]} on {parts[1]})"
    except OSError:
        pass
    return kind


def persist_flags(cfg, data_dir: Path) -> list[str]:
    flags = [f"--heureka.persistence.dir={data_dir}"]
    if cfg.flush_interval:
        flags.append(f"--heureka.persistence.flush-interval={cfg.flush_interval}")
    return flags


# Loading a registry for the restore phase logs no line per registration (1,000,000 lines);
# the restarted servers log at INFO, as by default, so that their "registry restored" line is there.
QUIET_REGISTRATIONS = ["--logging.level.heureka_server.store=warn"]


def start(mode: str, cfg, log_dir: Path, tag: str, extra: list[str]) -> R.Running:
    srv = R.start_server("heureka", log_dir, tag, extra, deadline_s=cfg.start_deadline)
    srv.key = mode
    return srv


def stop_timed(proc, sig: int, limit_s: float = 600.0) -> dict:
    """Sends sig and waits for the exit: (seconds, exit code)."""
    t0 = time.perf_counter()
    if proc.poll() is None:
        proc.send_signal(sig)
    try:
        rc = proc.wait(timeout=limit_s)
    except subprocess.TimeoutExpired:
        proc.kill()
        rc = proc.wait(timeout=30)
        rc = f"killed after {limit_s:.0f} s ({rc})"
    if proc in R.STARTED:
        R.STARTED.remove(proc)
    return {"seconds": round(time.perf_counter() - t0, 3), "exit": rc}


def spread(vals: list[float]) -> dict | None:
    vals = [v for v in vals if v is not None]
    if not vals:
        return None
    return {"median": round(statistics.median(vals), 4), "min": round(min(vals), 4),
            "max": round(max(vals), 4), "rounds": [round(v, 4) for v in vals]}


# --------------------------------------------------------------------------------------------
# Paced wrk: run.py's scripts with a delay() before each request of a connection


def paced_scripts(into: Path, delay_ms: int) -> dict[str, str]:
    """Wrappers around bench/wrk's register.lua and heartbeat.lua that add wrk's `delay()`:
    each connection waits delay_ms before each request, so C connections send about
    C × 1000 / (delay_ms + latency) requests a second."""
    out = {}
    for name, script in (("register", "register.lua"), ("heartbeat", "heartbeat.lua")):
        path = into / f"paced-{script}"
        path.write_text(f"-- generated by bench/persistence.py: {script} paced by delay()\n"
                        f"dofile({json.dumps(str(R.WRK_DIR / script))})\n"
                        f"local delay_ms = {delay_ms}\n"
                        "if delay_ms > 0 then\n  function delay() return delay_ms end\nend\n")
        out[name] = str(path)
    return out


def wrk_args(name: str, n: int, cfg, tag: str) -> list[str]:
    napps = R.napps_for(n)
    if base_of(name) == "register":  # re-register the N loaded instances in turn, with their one-hour lease
        return [str(napps), tag, str(n), str(R.LOAD_LEASE_S)]
    return [str(n), str(napps), str(cfg.threads)]


def one_run(srv: R.Running, other: R.Running | None, name: str, n: int, cfg, log_dir: Path,
            tag: str, duration: int) -> dict:
    """One wrk run against srv; its server CPU runs until the store has caught up (pending 0),
    plus cfg.settle seconds: the same wait whatever the mode."""
    idle = [other] if other else []
    m0 = metrics(srv.port)
    cpu0 = srv.cpu()
    t0 = time.perf_counter()
    res = R.run_wrk(srv, cfg.scripts[name], "", wrk_args(name, n, cfg, tag), duration, cfg, log_dir,
                    f"{srv.key}-{name}-{n}-{tag}", idle,
                    connections=cfg.flat_connections if name.endswith("_flat") else cfg.paced_connections)
    durable = wait_durable(srv.port, cfg.durable_limit)
    time.sleep(cfg.settle)
    cpu1 = srv.cpu()
    m1 = metrics(srv.port)
    res["window_s"] = round(time.perf_counter() - t0, 3)
    res["durable"] = durable
    if cpu0 is not None and cpu1 is not None and res["requests"]:
        res["server_cpu_incl_store_s"] = round(cpu1 - cpu0, 4)
        res["cpu_us_per_req"] = round((cpu1 - cpu0) / res["requests"] * 1e6, 3)
    counter = REGISTRATIONS if base_of(name) == "register" else RENEWALS
    if counter in m0 and counter in m1:
        res["server_counted"] = int(m1[counter] - m0[counter])
    for key, metric in (("batches", BATCHES), ("batch_seconds", BATCH_SUM), ("batch_count", BATCH_COUNT),
                        ("records", RECORDS)):
        if metric in m0 and metric in m1:
            res[key] = round(m1[metric] - m0[metric], 6)
    return res


# --------------------------------------------------------------------------------------------
# Phase 1: CPU per request, off and on side by side


def cpu_phase(n: int, cfg, log_dir: Path, data_root: Path, results: dict, failures: list[str]) -> None:
    napps = R.napps_for(n)
    out: dict = {"instances": n, "apps": napps, "servers": {}, "workloads": {}}
    results["cpu"][str(n)] = out
    running: dict[str, R.Running] = {}
    try:
        for mode in MODES:
            info: dict = {}
            out["servers"][mode] = info
            extra: list[str] = []
            if mode == "on":
                data_dir = data_root / f"cpu-n{n}"
                shutil.rmtree(data_dir, ignore_errors=True)
                data_dir.mkdir(parents=True)
                extra = persist_flags(cfg, data_dir)
                info["dir"] = str(data_dir)
            try:
                srv = start(mode, cfg, log_dir, f"{mode}-n{n}", extra)
            except BenchError as e:
                info["failed"] = str(e)
                failures.append(f"cpu N={n} persistence {mode}: {e}")
                log(f"  persistence {mode}: FAILED to start: {str(e).splitlines()[0]}")
                continue
            running[mode] = srv
            info["startup_ms"] = round(srv.startup_s * 1000, 1)
            info["rss_idle"] = srv.rss()
            cpu0 = srv.cpu()
            try:
                info["load"] = R.load_instances(srv, n, napps, {204})
            except BenchError as e:
                info["failed"] = str(e)
                failures.append(f"cpu N={n} persistence {mode}: {e}")
                log(f"  persistence {mode}: loading FAILED: {e}")
                srv.stop()
                del running[mode]
                continue
            durable = wait_durable(srv.port, cfg.durable_limit_load(n))
            info["load"]["durable"] = durable
            # bulk loading, one sample each (not interleaved): CPU per registration until durable
            info["load"]["server_cpu_us_per_registration"] = round((srv.cpu() - cpu0) / n * 1e6, 2)
            info["rss_loaded"] = srv.rss()
            if mode == "on":
                info["store_loaded"] = dir_size(Path(info["dir"]))
            log(f"  persistence {mode:3}: loaded {n:,} in {info['load']['seconds']:.1f} s, durable after "
                f"{durable['waited_s']:.1f} s more; {info['load']['server_cpu_us_per_registration']} µs CPU per "
                f"registration while loading; RSS {R.mib(info['rss_loaded'])}"
                + (f"; store {info['store_loaded']['bytes']:,} B = "
                   f"{info['store_loaded']['bytes'] / n:,.0f} B/instance" if mode == "on" else ""))
        if len(running) < 2:
            log(f"  N={n}: only {', '.join(running) or 'no server'} running; measuring it alone, no ratios")
        for name in cfg.workloads:
            out["workloads"][name] = cpu_workload(running, name, n, cfg, log_dir, failures)
        if "on" in running:
            wait_durable(running["on"].port, cfg.durable_limit)
            out["servers"]["on"]["store_after_workloads"] = dir_size(Path(out["servers"]["on"]["dir"]))
            out["servers"]["on"]["rss_after_workloads"] = running["on"].rss()
    finally:
        for srv in running.values():
            srv.stop()


def cpu_workload(running: dict[str, R.Running], name: str, n: int, cfg, log_dir: Path,
                 failures: list[str]) -> dict:
    modes = [m for m in MODES if m in running]
    wl: dict = {"rounds": {m: [] for m in modes}, "warmup": {m: [] for m in modes}, "paired": []}
    broken: dict[str, str] = {}
    for i in range(cfg.warmup_runs):
        for mode in modes:
            other = running[[m for m in modes if m != mode][0]] if len(modes) > 1 else None
            try:
                r = one_run(running[mode], other, name, n, cfg, log_dir, f"w{n}i{i}", cfg.warmup)
                wl["warmup"][mode].append({"rps": r["rps"], "cpu_us_per_req": r.get("cpu_us_per_req")})
            except BenchError as e:
                broken[mode] = str(e)
    for rnd in range(cfg.rounds):
        order = modes if rnd % 2 == 0 else list(reversed(modes))
        got: dict[str, dict] = {}
        for mode in order:
            if mode in broken:
                continue
            srv = running[mode]
            other = running[[m for m in modes if m != mode][0]] if len(modes) > 1 else None
            if not srv.alive():
                broken[mode] = f"server died before {name} round {rnd + 1}"
                continue
            for s in running.values():  # the previous run's batches written, both servers quiet
                wait_durable(s.port, cfg.durable_limit)
            R.wait_until_idle([s for s in running.values() if s is not srv], cfg.idle_wait)
            try:
                r = one_run(srv, other, name, n, cfg, log_dir, f"m{n}r{rnd}", cfg.duration)
            except BenchError as e:
                broken[mode] = str(e)
                continue
            why = R.workload_ok(r)
            if why:
                r["failed"] = why
            r["position"] = order.index(mode)
            wl["rounds"][mode].append(r)
            got[mode] = r
        off, on = (got.get(m, {}).get("cpu_us_per_req") for m in MODES)
        off_w, on_w = (got.get(m, {}).get("server_cpu_us_per_req") for m in MODES)
        pair = {"round": rnd, "order": order, "off_us": off, "on_us": on,
                "ratio": round(on / off, 4) if on and off else None,
                "ratio_wrk_window": round(on_w / off_w, 4) if on_w and off_w else None,
                "on_stats": {k: got["on"].get(k) for k in ("requests", "records", "batches", "batch_seconds")}
                | {"pending_wait_s": got["on"]["durable"]["waited_s"]} if "on" in got else {}}
        wl["paired"].append(pair)
        log(f"  N={n:,} {name} round {rnd + 1}/{cfg.rounds} ({'-'.join(order)}): "
            + "  ".join(f"{m} {got[m].get('cpu_us_per_req', 0):.2f} µs ({got[m]['rps']:,.0f}/s"
                        + (f", {got[m].get('records', 0):.0f} rows in {got[m].get('batches', 0):.0f} batches, "
                           f"store waited "
                           f"{got[m]['durable']['waited_s']:.2f} s" if m == "on" else "") + ")"
                        for m in order if m in got)
            + (f"  on/off {pair['ratio']:.3f}" if pair["ratio"] else ""))
    for mode, why in broken.items():
        failures.append(f"cpu N={n} {name} persistence {mode}: {why}")
        wl.setdefault("failed", {})[mode] = why
    wl["summary"] = {
        "off_us": spread([r.get("cpu_us_per_req") for r in wl["rounds"].get("off", [])]),
        "on_us": spread([r.get("cpu_us_per_req") for r in wl["rounds"].get("on", [])]),
        "ratio": spread([p["ratio"] for p in wl["paired"]]),
        "ratio_wrk_window": spread([p["ratio_wrk_window"] for p in wl["paired"]]),
        "off_rps": spread([r.get("rps") for r in wl["rounds"].get("off", [])]),
        "on_rps": spread([r.get("rps") for r in wl["rounds"].get("on", [])]),
        "off_p99_ms": spread([r.get("p99_ms") for r in wl["rounds"].get("off", [])]),
        "on_p99_ms": spread([r.get("p99_ms") for r in wl["rounds"].get("on", [])]),
        "other_cpu_share": spread([r.get("other_cpu_share") for m in modes for r in wl["rounds"].get(m, [])]),
    }
    s = wl["summary"]
    if s["ratio"]:
        log(f"  N={n:,} {name}: off {s['off_us']['median']:.2f} µs, on {s['on_us']['median']:.2f} µs per request; "
            f"on/off {s['ratio']['median']:.3f} ({s['ratio']['min']:.3f}–{s['ratio']['max']:.3f})")
    return wl


# --------------------------------------------------------------------------------------------
# Phase 2: restore


RESTORED_LINE = re.compile(r"restor", re.I)


def parse_restore_line(log_path: Path) -> dict | None:
    """The server's "registry restored" line, read leniently: a line mentioning a restore and the
    registry or instances, with `instances=N` and an elapsed time (elapsed_ms=T, elapsed=1.2s, …)."""
    try:
        text = log_path.read_text(errors="replace")
    except OSError:
        return None
    lines = text.splitlines()
    # lines saying "restored" first, then any mentioning a restore
    for line in [x for x in lines if re.search(r"restored", x, re.I)] + [x for x in lines if not re.search(r"restored", x, re.I)]:
        if not RESTORED_LINE.search(line) or not re.search(r"registry|instances", line, re.I):
            continue
        out: dict = {"line": line.strip()[:400]}
        m = re.search(r"\binstances\s*[=:]\s*(\d+)", line)
        if m:
            out["instances"] = int(m.group(1))
        m = re.search(r"\b(?:elapsed|took|duration|restore)(?:_(ms|s|us|µs))?\s*[=:]\s*\"?([\d.]+)\s*(ms|µs|us|s)?\b", line)
        if m:
            unit = m.group(3) or m.group(1) or "ms"
            out["elapsed_ms"] = float(m.group(2)) * {"ms": 1, "s": 1000, "us": 1e-3, "µs": 1e-3}[unit]
        if "instances" in out or "elapsed_ms" in out:
            return out
    return None


def timed_start(cfg, n: int, data_dir: Path, log_dir: Path, tag: str, extra: list[str] | None = None) -> dict:
    """Spawns a server on data_dir and polls GET /eureka/apps (JSON, gzip) every 10 ms: time to
    the first 200, and to the first 200 that holds all n instances. Leaves it running
    (returned as "running")."""
    port = R.free_port()
    argv = R.server_argv("heureka", port, [*persist_flags(cfg, data_dir), *(extra or [])])
    log_path = log_dir / f"heureka-{tag}.log"
    log_file = open(log_path, "wb")
    t0 = time.perf_counter()
    proc = subprocess.Popen(argv, stdout=log_file, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
                            cwd=R.ROOT, start_new_session=True)
    R.STARTED.append(proc)
    log_file.close()
    out: dict = {"log": str(log_path), "polls": 0}
    deadline = t0 + max(180.0, n * 0.6e-3)
    last = "no answer"
    while True:
        now = time.perf_counter()
        if proc.poll() is not None:
            out["failed"] = f"exited with {proc.returncode} (log {log_path}):\n{R.tail_of(log_path)}"
            return out
        if now > deadline:
            out["failed"] = f"no full registry within {deadline - t0:.0f} s (last: {last})"
            out["running"] = R.Running("on", proc, port, now - t0, log_path)
            return out
        conn = http.client.HTTPConnection("127.0.0.1", port, timeout=R.fetch_timeout_s(n))
        sent = time.perf_counter()
        try:
            out["polls"] += 1
            status, body, headers = R.http_get(conn, "/eureka/apps", R.JSON_GZIP)
            got = time.perf_counter()
            if status == 200:
                count = R.head_count(body, headers)
                if "first_200_s" not in out:
                    out["first_200_s"] = round(got - t0, 4)
                    out["first_200_instances"] = count
                    out["first_200_fetch_s"] = round(got - sent, 4)
                if count == n:
                    out["full_s"] = round(got - t0, 4)
                    out["full_fetch_s"] = round(got - sent, 4)  # that request alone (builds the document)
                    out["full_wire_bytes"] = len(body)
                    break
                last = f"200 with {count} instances"
            else:
                last = f"HTTP {status}"
        except (OSError, http.client.HTTPException) as e:
            last = type(e).__name__
        finally:
            conn.close()
        time.sleep(0.01)
    out["cpu_s_at_full"] = R.cpu_seconds(proc.pid)
    out["rss_at_full"] = R.rss_bytes(proc.pid)
    line = None
    for _ in range(40):  # the log is written by a thread of its own: give it a moment
        line = parse_restore_line(log_path)
        if line:
            break
        time.sleep(0.05)
    out["log_line"] = line
    try:  # what the server said about its store (a repair after an unclean shutdown, say)
        out["log_store_lines"] = [x.strip()[:300] for x in log_path.read_text(errors="replace").splitlines()
                                  if re.search(r"persist|restor|repair|recover|redb|store\b", x, re.I)][:8]
    except OSError:
        pass
    out["running"] = R.Running("on", proc, port, out["full_s"], log_path)
    return out


def show_restore(n: int, what: str, r: dict) -> None:
    if r.get("failed"):
        log(f"  N={n:,} {what}: FAILED: {r['failed'].splitlines()[0]}")
        return
    ll = r.get("log_line") or {}
    log(f"  N={n:,} {what}: first 200 after {r['first_200_s']:.3f} s ({r['first_200_instances']} instances), "
        f"all {n:,} after {r['full_s']:.3f} s (that fetch {r['full_fetch_s']:.3f} s); log line: "
        + (f"{ll.get('instances')} instances in {ll.get('elapsed_ms')} ms" if ll else "none found")
        + f"; CPU {r['cpu_s_at_full']:.2f} s, RSS {R.mib(r['rss_at_full'])}")


def restore_phase(n: int, cfg, log_dir: Path, data_root: Path, results: dict, failures: list[str]) -> None:
    napps = R.napps_for(n)
    out: dict = {"instances": n, "apps": napps, "restarts": []}
    results["restore"][str(n)] = out
    data_dir = data_root / f"restore-n{n}"
    shutil.rmtree(data_dir, ignore_errors=True)
    data_dir.mkdir(parents=True)
    out["dir"] = str(data_dir)
    srv = None
    try:
        try:
            srv = start("on", cfg, log_dir, f"restore-load-n{n}", [*persist_flags(cfg, data_dir), *QUIET_REGISTRATIONS])
        except BenchError as e:
            out["failed"] = str(e)
            failures.append(f"restore N={n}: {e}")
            log(f"  N={n:,}: FAILED to start with persistence: {str(e).splitlines()[0]}")
            return
        cpu0 = srv.cpu()
        out["load"] = R.load_instances(srv, n, napps, {204})
        out["load"]["durable"] = wait_durable(srv.port, cfg.durable_limit_load(n))
        out["load"]["server_cpu_s"] = round(srv.cpu() - cpu0, 2)
        out["store_loaded"] = dir_size(data_dir)
        out["rss_loaded"] = srv.rss()
        # the first full fetch of the loaded process: building the document, for comparison with
        # the restarted server's first full fetch
        conn = http.client.HTTPConnection("127.0.0.1", srv.port, timeout=R.fetch_timeout_s(n))
        try:
            t0 = time.perf_counter()
            status, body, headers = R.http_get(conn, "/eureka/apps", R.JSON_GZIP)
            out["loaded_first_full_fetch_s"] = round(time.perf_counter() - t0, 3)
            out["loaded_full_instances"] = R.head_count(body, headers)
            del body
        finally:
            conn.close()
        log(f"  N={n:,}: loaded in {out['load']['seconds']:.1f} s, durable {out['load']['durable']['waited_s']:.1f} s "
            f"later; store {out['store_loaded']['bytes']:,} B ({out['store_loaded']['bytes'] / n:,.0f} B/instance, "
            f"{out['store_loaded']['allocated_bytes']:,} B allocated); first full fetch {out['loaded_first_full_fetch_s']:.2f} s")
        out["sigterm"] = stop_timed(srv.proc, signal.SIGTERM)
        srv = None
        out["store_after_sigterm"] = dir_size(data_dir)
        log(f"  N={n:,}: SIGTERM → exit {out['sigterm']['exit']} in {out['sigterm']['seconds']:.2f} s; store "
            f"{out['store_after_sigterm']['bytes']:,} B")
        kill = n in cfg.kill_sizes
        for k in range(cfg.restore_rounds):
            r = timed_start(cfg, n, data_dir, log_dir, f"restore-n{n}-r{k}")
            running = r.pop("running", None)
            out["restarts"].append(r)
            show_restore(n, f"restart {k + 1}/{cfg.restore_rounds} after SIGTERM", r)
            if r.get("failed"):
                failures.append(f"restore N={n} restart {k + 1}: {r['failed'].splitlines()[0]}")
                if running:
                    stop_timed(running.proc, signal.SIGKILL)
                return
            if kill and k == cfg.restore_rounds - 1:
                srv = running
            else:
                r["sigterm"] = stop_timed(running.proc, signal.SIGTERM)
        if kill and srv:
            writes = min(n, cfg.kill_writes)
            R.load_instances(srv, writes, napps, {204})  # re-registers the first ids: the store writes
            durable = wait_durable(srv.port, cfg.durable_limit_load(writes))
            before = dir_size(data_dir)
            killed = stop_timed(srv.proc, signal.SIGKILL)
            srv = None
            r = timed_start(cfg, n, data_dir, log_dir, f"restore-n{n}-after-kill")
            running = r.pop("running", None)
            r.update({"writes_before_kill": writes, "durable_before_kill": durable, "store_before_kill": before,
                      "sigkill": killed})
            out["after_sigkill"] = r
            show_restore(n, f"restart after SIGKILL ({writes:,} re-registrations durable before it)", r)
            if r.get("failed"):
                failures.append(f"restore N={n} after SIGKILL: {r['failed'].splitlines()[0]}")
            if running:
                r["sigterm"] = stop_timed(running.proc, signal.SIGTERM)
            out["store_final"] = dir_size(data_dir)
    except BenchError as e:
        out["failed"] = str(e)
        failures.append(f"restore N={n}: {e}")
        log(f"  N={n:,}: FAILED: {e}")
    finally:
        if srv:
            srv.stop()
        if not cfg.keep_data:
            shutil.rmtree(data_dir, ignore_errors=True)


def baseline_startups(cfg, log_dir: Path, data_root: Path, results: dict) -> None:
    """Start-up time of the same binary without persistence and with an empty directory: what a
    restore's figures include whatever the registry."""
    out: dict = {}
    for mode in MODES:
        times = []
        for k in range(cfg.startup_repeats):
            extra: list[str] = []
            if mode == "on":
                d = data_root / f"empty-{k}"
                shutil.rmtree(d, ignore_errors=True)
                d.mkdir(parents=True)
                extra = persist_flags(cfg, d)
            try:
                srv = start(mode, cfg, log_dir, f"startup-{mode}-{k}", extra)
            except BenchError as e:
                out[mode] = {"failed": str(e).splitlines()[0]}
                break
            times.append(srv.startup_s)
            srv.stop()
        if times:
            out[mode] = {"startup_ms": spread([t * 1000 for t in times])}
    results["startup_empty"] = out
    log("  empty start-up (first 200 on GET /eureka/apps): " + ", ".join(
        f"{m} {v['startup_ms']['median']:.1f} ms" if "startup_ms" in v else f"{m} failed" for m, v in out.items()))


# --------------------------------------------------------------------------------------------
# Report


def fnum(v, digits: int = 2) -> str:
    return "–" if v is None else f"{v:,.{digits}f}"


def fspread(s: dict | None, digits: int = 2) -> str:
    if not s:
        return "–"
    if s["min"] == s["max"]:
        return fnum(s["median"], digits)
    return f"{fnum(s['median'], digits)} ({fnum(s['min'], digits)}–{fnum(s['max'], digits)})"


def write_reports(results: dict, out_md: Path, out_json: Path) -> str:
    out_json.write_text(json.dumps(results, indent=1, ensure_ascii=False) + "\n")
    c, m, b = results["config"], results["machine"], results["binary"]
    md = ["# Persistence: what it costs (issue 22)", "",
          f"Machine: **{m.get('nproc')} CPUs, {m.get('memory_gib')} GiB, {m.get('cpu')}**, Linux {m.get('kernel')}; "
          f"store on {results.get('filesystem', '?')}. Date: {m.get('date')}. CPUs busy with other work just "
          f"before the run: {m.get('cpu_busy_before_run', 0):.0%}. Run took {results.get('elapsed_s', 0) / 60:.1f} min.",
          "",
          f"Binary: `{b.get('path')}` (sha256 {b.get('sha256', '?')[:12]}, built {b.get('built')}), run.py's "
          f"server flags; persistence on = `--heureka.persistence.dir=DIR` (a fresh directory)"
          + (f" and `--heureka.persistence.flush-interval={c['flush_interval']}`" if c.get("flush_interval")
             else ", flush interval at its default") + ".", "",
          f"Produced by `{results['command']}`.", ""]
    if results.get("note"):
        md += [results["note"], ""]
    # -- summary
    md += ["## Summary", "", "| Figure | N | Off | On | On / off |", "|---|--:|--:|--:|--:|"]
    for n, run in results.get("cpu", {}).items():
        for name, wl in run.get("workloads", {}).items():
            s = wl["summary"]
            md.append(f"| {TITLE[name]}: server CPU per request (µs) | {int(n):,} | {fspread(s['off_us'])} | "
                      f"{fspread(s['on_us'])} | **{fspread(s['ratio'], 3)}** |")
    for n, r in results.get("restore", {}).items():
        good = [x for x in r.get("restarts", []) if not x.get("failed")]
        if good:
            full = spread([x["full_s"] for x in good])
            logged = spread([(x.get("log_line") or {}).get("elapsed_ms") for x in good])
            md.append(f"| Restore after SIGTERM: spawn → first full fetch with all N (s) | {int(n):,} | | "
                      f"{fspread(full, 2)} | |")
            md.append(f"| Restore after SIGTERM: the server's \"registry restored\" figure (s) | {int(n):,} | | "
                      f"{fspread(scale(logged, 1e-3), 2)} | |")
        k = r.get("after_sigkill")
        if k and not k.get("failed"):
            md.append(f"| Restore after SIGKILL: spawn → first full fetch with all N (s) | {int(n):,} | | "
                      f"{fnum(k['full_s'])} | |")
    sizes = store_sizes(results)
    for n, st in sizes:
        md.append(f"| Store size per instance (B), everything durable | {n:,} | | {st['bytes'] / n:,.0f} "
                  f"({st['allocated_bytes'] / n:,.0f} allocated) | |")
    md.append("")
    # -- CPU detail
    if results.get("cpu"):
        md += ["## CPU per request, persistence off and on", "",
               (f"Each round: wrk `-t{c['threads']}` for {c['duration']} s, \"paced\": `-c{c['paced_connections']}` "
                f"at about {c['rate']:,} requests/s (a `delay()` of {c['delay_ms']} ms before each request of a "
                f"connection; the same pace for both modes, so both do the same work), \"flat out\": "
                f"`-c{c['flat_connections']}` without pacing, as run.py and ab.py run them (on 2 cores wrk and "
                "the server then compete for the CPUs, and the store's batches are larger)"
                + f"; against one server while the other idles; rounds alternate off, on / on, off "
                f"({c['rounds']} rounds after {c['warmup_runs']} warm-up run(s) of {c['warmup']} s each). "
                "The server's CPU time is counted from the wrk start until the store reports nothing pending, "
                f"plus {c['settle']} s, for both modes alike: the store writes in batches after the requests. "
                "Registration re-registers the N loaded instances in turn (run.py's register.lua in its "
                "re-register mode; the registry stays at N); heartbeats cycle over them (heartbeat.lua). "
                "The ratio is taken within each round (on / off of the same round); median (min–max) of the rounds. "
                "\"wrk window only\" counts the CPU during the wrk run alone, leaving out the store's late batches."),
               "",
               "| Workload | N | Off µs/req | On µs/req | On / off | On / off, wrk window only | req/s off | req/s on "
               "| p99 off ms | p99 on ms | other CPU share |",
               "|---|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|"]
        for n, run in results["cpu"].items():
            for name, wl in run.get("workloads", {}).items():
                s = wl["summary"]
                md.append(f"| {TITLE[name]} | {int(n):,} | {fspread(s['off_us'])} | {fspread(s['on_us'])} | "
                          f"**{fspread(s['ratio'], 3)}** | {fspread(s['ratio_wrk_window'], 3)} | "
                          f"{fnum((s['off_rps'] or {}).get('median'), 0)} | {fnum((s['on_rps'] or {}).get('median'), 0)} | "
                          f"{fnum((s['off_p99_ms'] or {}).get('median'))} | {fnum((s['on_p99_ms'] or {}).get('median'))} | "
                          f"{fspread(scale(s['other_cpu_share'], 100), 0)} % |")
        md += ["", "Per round (persistence on: the requests, the rows the store wrote for them (an instance "
               "changed several times within one flush window is written once), the batches and their total "
               "time, and how long after wrk ended the store still had records pending):", "",
               "| Workload | N | Round | Order | Off µs | On µs | On / off | On: requests | On: records written "
               "| On: batches | On: batch time (ms) | On: pending after wrk (s) |",
               "|---|--:|--:|---|--:|--:|--:|--:|--:|--:|--:|--:|"]
        for n, run in results["cpu"].items():
            for name, wl in run.get("workloads", {}).items():
                for p in wl["paired"]:
                    r_on = p.get("on_stats") or {}
                    md.append(f"| {name} | {int(n):,} | {p['round'] + 1} | {'-'.join(p['order'])} | "
                              f"{fnum(p['off_us'])} | {fnum(p['on_us'])} | {fnum(p['ratio'], 3)} | "
                              f"{fnum(r_on.get('requests'), 0)} | {fnum(r_on.get('records'), 0)} | "
                              f"{fnum(r_on.get('batches'), 0)} | {fnum(ms(r_on.get('batch_seconds')), 1)} | "
                              f"{fnum(r_on.get('pending_wait_s'))} |")
        md += ["", "Bulk loading (setup, one sample each, not interleaved: run.py's loader, 8 connections flat "
               "out, CPU counted until the store had written everything):", "",
               "| N | Off: µs CPU per registration | On: µs CPU per registration | On / off | On: load s | Off: load s "
               "| On: store after load (B/instance) | On: store after the rounds (B/instance) | RSS off / on |",
               "|--:|--:|--:|--:|--:|--:|--:|--:|--:|"]
        for n, run in results["cpu"].items():
            sv = run.get("servers", {})
            off, on = sv.get("off", {}), sv.get("on", {})
            a = (off.get("load") or {}).get("server_cpu_us_per_registration")
            bb = (on.get("load") or {}).get("server_cpu_us_per_registration")
            st0, st1 = on.get("store_loaded"), on.get("store_after_workloads")
            md.append(f"| {int(n):,} | {fnum(a)} | {fnum(bb)} | {fnum(bb / a if a and bb else None, 3)} | "
                      f"{fnum((on.get('load') or {}).get('seconds'), 1)} | {fnum((off.get('load') or {}).get('seconds'), 1)} | "
                      f"{fnum(st0['bytes'] / int(n) if st0 else None, 0)} | {fnum(st1['bytes'] / int(n) if st1 else None, 0)} | "
                      f"{R.mib(off.get('rss_loaded'))} / {R.mib(on.get('rss_loaded'))} |")
        md.append("")
    # -- restore detail
    if results.get("restore"):
        se = results.get("startup_empty", {})
        md += ["## Restore", "",
               "A server with persistence on is loaded with N instances (run.py's loader; registrations not "
               "logged) until the store has nothing pending, then stopped with SIGTERM and started again on the "
               "same directory. Timed from the spawn: the first `GET /eureka/apps` (JSON, gzip; polled every "
               "10 ms) answering 200, and the first answering with all N instances (from its apps__hashcode). "
               "\"That fetch\" is the successful request alone: a request sent while the server restores may wait "
               "for the restore (when the port is open before it ends), and it builds the document, which takes "
               "about as long as the loaded server's own first full fetch (the second table). The log figure is the "
               "server's own \"registry restored\" line: the restore alone. "
               + ("Start-up of the same binary with nothing to restore: "
                  + ", ".join(f"{m} {fspread(v['startup_ms'], 1)} ms" for m, v in se.items() if 'startup_ms' in v)
                  + "." if se else ""), "",
               "| N | Restart | Spawn → first 200 (s) | Spawn → all N (s) | That fetch (s) | Log: instances | Log: elapsed (s) "
               "| CPU at ready (s) | RSS at ready | Shutdown (s) |", "|--:|---|--:|--:|--:|--:|--:|--:|--:|--:|"]
        for n, r in results["restore"].items():
            rows = [(f"{k + 1} after SIGTERM", x) for k, x in enumerate(r.get("restarts", []))]
            if r.get("after_sigkill"):
                rows.append(("after SIGKILL", r["after_sigkill"]))
            for label, x in rows:
                if x.get("failed"):
                    md.append(f"| {int(n):,} | {label} | failed: {x['failed'].splitlines()[0][:120]} | | | | | | | |")
                    continue
                ll = x.get("log_line") or {}
                md.append(f"| {int(n):,} | {label} | {fnum(x.get('first_200_s'), 3)} | {fnum(x.get('full_s'), 3)} | "
                          f"{fnum(x.get('full_fetch_s'), 3)} | {ll.get('instances', '–')} | "
                          f"{fnum(ms(ll.get('elapsed_ms'), 1e-3), 3)} | {fnum(x.get('cpu_s_at_full'))} | "
                          f"{R.mib(x.get('rss_at_full'))} | {fnum((x.get('sigterm') or {}).get('seconds'))} |")
        md += ["", "| N | Load (s) | Store after load (B) | B/instance | allocated B/instance | After SIGTERM (B) "
               "| SIGTERM → exit (s) | Loaded server's first full fetch (s) | RSS loaded |",
               "|--:|--:|--:|--:|--:|--:|--:|--:|--:|"]
        for n, r in results["restore"].items():
            st, st2 = r.get("store_loaded"), r.get("store_after_sigterm")
            if not st:
                md.append(f"| {int(n):,} | failed: {(r.get('failed') or '?').splitlines()[0][:120]} | | | | | | | |")
                continue
            md.append(f"| {int(n):,} | {fnum(r['load']['seconds'], 1)} | {st['bytes']:,} | {st['bytes'] / int(n):,.0f} | "
                      f"{st['allocated_bytes'] / int(n):,.0f} | {st2['bytes']:,} | {fnum(r['sigterm']['seconds'])} | "
                      f"{fnum(r.get('loaded_first_full_fetch_s'))} | {R.mib(r.get('rss_loaded'))} |")
        lines = [(n, x.get("log_line", {}) or {}) for n, r in results["restore"].items() for x in r.get("restarts", [])[:1]]
        lines = [(n, ll["line"]) for n, ll in lines if ll.get("line")]
        if lines:
            md += ["", "The log lines read (first restart at each N):", ""] + [f"* {int(n):,}: `{line}`" for n, line in lines]
        md.append("")
    if results.get("failures"):
        md += ["## Failures", ""] + [f"* {f.splitlines()[0]}" for f in results["failures"]] + [""]
    out_md.write_text("\n".join(md))
    return "\n".join(md)


def scale(s: dict | None, k: float) -> dict | None:
    if not s:
        return None
    return {"median": s["median"] * k, "min": s["min"] * k, "max": s["max"] * k}


def ms(v, k: float = 1000.0):
    return None if v is None else v * k


def store_sizes(results: dict) -> list[tuple[int, dict]]:
    """Store size once everything is durable, right after loading N (fresh directory)."""
    out = {}
    for n, run in results.get("cpu", {}).items():
        st = run.get("servers", {}).get("on", {}).get("store_loaded")
        if st:
            out[int(n)] = st
    for n, r in results.get("restore", {}).items():
        if r.get("store_loaded"):
            out[int(n)] = r["store_loaded"]
    return sorted(out.items())


# --------------------------------------------------------------------------------------------


def parse_args(argv: list[str]):
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--bin", type=Path, help="the Heureka binary (default target/release/heureka, built unless --skip-build)")
    p.add_argument("--skip-build", action="store_true", help="use target/release/heureka as it is")
    p.add_argument("--smoke", action="store_true", help="N=1,000, one round of 2 s (checks it runs)")
    p.add_argument("--phases", default="cpu,restore", help="comma list from cpu,restore (default both)")
    p.add_argument("--cpu-sizes", help="registry sizes of the CPU phase (default 10000,100000; smoke 1000)")
    p.add_argument("--restore-sizes", help="registry sizes restored (default 100000,1000000; smoke 1000)")
    p.add_argument("--kill-sizes", help="restore sizes also restarted after a SIGKILL (default 100000; smoke 1000)")
    p.add_argument("--kill-writes", type=int, default=10000,
                   help="re-registrations made durable just before the SIGKILL (default 10000)")
    p.add_argument("--restore-rounds", type=int, help="restarts after SIGTERM per size (default 3; smoke 1)")
    p.add_argument("--workloads", default=",".join(WORKLOADS), help="comma list from register,heartbeat")
    p.add_argument("--rounds", type=int, help="measured rounds per workload and mode, interleaved (default 3; smoke 1)")
    p.add_argument("--duration", type=int, help="seconds per measured wrk round (default 10; smoke 2)")
    p.add_argument("--warmup", type=int, help="seconds of each warm-up run (default 3; smoke 1)")
    p.add_argument("--warmup-runs", type=int, help="warm-up runs per workload and mode (default 1)")
    p.add_argument("--rate", type=int, default=5000,
                   help="requests/s to pace each run at, roughly (default 5000; wrk's delay() per connection)")
    p.add_argument("--flat-connections", type=int, default=64, help="wrk -c of the flat-out workloads (default 64)")
    p.add_argument("--threads", type=int, default=2, help="wrk threads (default 2)")
    p.add_argument("--flush-interval", help="pass --heureka.persistence.flush-interval=VALUE (default: not passed)")
    p.add_argument("--settle", type=float, help="seconds after the store caught up before reading CPU (default 0.5)")
    p.add_argument("--data-dir", type=Path, help="where the stores go (default a new directory in /tmp)")
    p.add_argument("--keep-data", action="store_true", help="keep the store directories")
    p.add_argument("--quiet-wait", type=float,
                   help="seconds to wait for other processes to leave the CPUs idle first (default 30; smoke 0)")
    p.add_argument("--note", help="a line for the report (say, that the machine was busy)")
    p.add_argument("--out", type=Path, help="output directory (default bench/results; smoke bench/results/smoke)")
    p.add_argument("--report-from", type=Path, metavar="JSON", help="measure nothing: write the report again from a JSON")
    a = p.parse_args(argv)
    smoke = a.smoke
    a.mode = "smoke" if smoke else "full"
    a.phases = [x.strip() for x in a.phases.split(",") if x.strip()]
    for x in a.phases:
        if x not in ("cpu", "restore"):
            p.error(f"unknown phase {x!r}")
    a.workloads = [w.strip() for w in a.workloads.split(",") if w.strip()]
    for w in a.workloads:
        if w not in WORKLOADS:
            p.error(f"unknown workload {w!r}")

    def sizes(v, default, small):
        return [int(x) for x in v.split(",") if x] if v is not None else ([small] if smoke else default)
    a.cpu_sizes = sizes(a.cpu_sizes, [10000, 100000], 1000)
    a.restore_sizes = sizes(a.restore_sizes, [100000, 1000000], 1000)
    a.kill_sizes = sizes(a.kill_sizes, [100000], 1000)
    a.restore_rounds = a.restore_rounds or (1 if smoke else 3)
    a.rounds = a.rounds or (1 if smoke else 3)
    a.duration = a.duration or (2 if smoke else 10)
    a.warmup = a.warmup if a.warmup is not None else (1 if smoke else 3)
    a.warmup_runs = a.warmup_runs if a.warmup_runs is not None else 1
    a.settle = a.settle if a.settle is not None else 0.5
    a.quiet_wait = a.quiet_wait if a.quiet_wait is not None else (0 if smoke else 30)
    # paced: about 10 ms between a connection's requests, so rate/100 connections
    a.delay_ms = 10
    a.paced_connections = max(a.threads, round(a.rate * a.delay_ms / 1000))
    # what run.py's functions read from their cfg
    a.connections = a.flat_connections
    a.idle_wait = 3.0 if smoke else 10.0
    a.wrk_timeout = 10
    a.start_deadline = 180.0
    a.startup_repeats = 1 if smoke else 3
    a.durable_limit = 120.0
    a.durable_limit_load = lambda n: max(120.0, n * 1e-3)
    a.out = (a.out or (R.BENCH / "results" / ("smoke" if smoke else ""))).resolve()
    return a


def checkpoint(results: dict, t_begin: float, out_md: Path, out_json: Path) -> None:
    """The reports so far: a run cut short still leaves what it measured."""
    results["elapsed_s"] = round(time.time() - t_begin, 1)
    write_reports(results, out_md, out_json)


def main(argv: list[str]) -> int:
    cfg = parse_args(argv)
    out_md, out_json = cfg.out / "persistence.md", cfg.out / "persistence.json"
    if cfg.report_from:
        results = json.loads(cfg.report_from.read_text())
        cfg.out.mkdir(parents=True, exist_ok=True)
        print(write_reports(results, out_md, out_json))
        return 0
    if not shutil.which("wrk"):
        print("persistence: wrk not found (Debian/Ubuntu: apt-get install wrk)", file=sys.stderr)
        return 2
    binary = cfg.bin
    if binary is None:
        errors = R.build(["heureka"], cfg.skip_build)
        if errors:
            print(f"persistence: no Heureka binary: {errors['heureka']}", file=sys.stderr)
            return 1
        binary = R.HEUREKA_BIN
    if not (binary.is_file() and os.access(binary, os.X_OK)):
        print(f"persistence: {binary}: not an executable file", file=sys.stderr)
        return 2
    log_dir = R.BENCH / "results" / "logs" / "persistence"
    shutil.rmtree(log_dir, ignore_errors=True)  # logs describe one run
    log_dir.mkdir(parents=True, exist_ok=True)
    cfg.out.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(prefix="heureka-persistence-bench-"))
    data_root = cfg.data_dir.resolve() if cfg.data_dir else tmp / "data"
    data_root.mkdir(parents=True, exist_ok=True)
    t_begin = time.time()
    machine = R.machine_info()
    machine["nproc"] = len(os.sched_getaffinity(0))
    st = binary.stat()
    run_as = tmp / binary.name
    shutil.copy2(binary, run_as)  # a private copy: a rebuild elsewhere cannot change it half-way
    R.RUN_BIN["heureka"] = run_as
    cfg.scripts = {**paced_scripts(tmp, cfg.delay_ms),
                   "register_flat": str(R.WRK_DIR / "register.lua"), "heartbeat_flat": str(R.WRK_DIR / "heartbeat.lua")}
    results: dict = {
        "mode": cfg.mode, "machine": machine, "command": "python3 bench/persistence.py " + shlex.join(argv),
        "note": cfg.note, "filesystem": filesystem_of(data_root),
        "binary": {"path": str(binary), "bytes": st.st_size, "sha256": hashlib.sha256(binary.read_bytes()).hexdigest(),
                   "built": dt.datetime.fromtimestamp(st.st_mtime, dt.timezone.utc).strftime("%Y-%m-%d %H:%M:%S UTC")},
        "config": {"phases": cfg.phases, "cpu_sizes": cfg.cpu_sizes, "restore_sizes": cfg.restore_sizes,
                   "kill_sizes": cfg.kill_sizes, "kill_writes": cfg.kill_writes, "restore_rounds": cfg.restore_rounds,
                   "workloads": cfg.workloads, "rounds": cfg.rounds, "duration": cfg.duration, "warmup": cfg.warmup,
                   "warmup_runs": cfg.warmup_runs, "rate": cfg.rate,
                   "delay_ms": cfg.delay_ms, "threads": cfg.threads,
                   "paced_connections": cfg.paced_connections, "flat_connections": cfg.flat_connections, "settle": cfg.settle,
                   "flush_interval": cfg.flush_interval, "server_flags": R.COMMON_FLAGS},
        "cpu": {}, "restore": {}, "failures": [],
    }
    failures: list[str] = results["failures"]
    log(f"persistence: {binary} (copy {run_as}); phases {cfg.phases}; stores in {data_root} "
        f"({results['filesystem']}); output {out_md}")
    try:
        results["machine"]["cpu_busy_before_run"] = round(R.wait_for_quiet(cfg.quiet_wait), 3)
        if "cpu" in cfg.phases:
            for n in cfg.cpu_sizes:
                log(f"CPU phase, N={n:,}: starting and loading persistence off and on")
                cpu_phase(n, cfg, log_dir, data_root, results, failures)
                checkpoint(results, t_begin, out_md, out_json)
                if not cfg.keep_data:
                    shutil.rmtree(data_root / f"cpu-n{n}", ignore_errors=True)
        if "restore" in cfg.phases:
            log("Restore phase")
            baseline_startups(cfg, log_dir, data_root, results)
            for n in cfg.restore_sizes:
                log(f"Restore phase, N={n:,}")
                restore_phase(n, cfg, log_dir, data_root, results, failures)
                checkpoint(results, t_begin, out_md, out_json)
    except KeyboardInterrupt:
        failures.append("interrupted")
    finally:
        R.stop_all()
        results["elapsed_s"] = round(time.time() - t_begin, 1)
        report = write_reports(results, out_md, out_json)
        if not cfg.keep_data:
            shutil.rmtree(tmp, ignore_errors=True)
    print()
    print(report)
    print(f"Results: {out_md}, {out_json} (logs in {log_dir}); {results['elapsed_s']:.0f} s")
    if failures:
        print("\nWhat could not run:", file=sys.stderr)
        for f in failures:
            print(f"  - {f.splitlines()[0]}", file=sys.stderr)
        return 1
    return 0


def _terminate(signum, frame):  # noqa: ARG001
    raise KeyboardInterrupt(f"signal {signum}")


if __name__ == "__main__":
    signal.signal(signal.SIGTERM, _terminate)
    signal.signal(signal.SIGINT, _terminate)
    try:
        sys.exit(main(sys.argv[1:]))
    finally:
        R.stop_all()
