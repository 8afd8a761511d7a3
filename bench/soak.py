#!/usr/bin/env python3
"""Soak run (outside CI): many instances heartbeating for a long time, with churn, against one
Heureka node; RSS and CPU are sampled every few seconds and written as a curve.

    python3 bench/soak.py                          # 10,000 instances, 30 minutes
    python3 bench/soak.py --instances 2000 --minutes 5

Every instance heartbeats every 30 s (its lease renewal interval), spread evenly; each second a
share of the instances (--churn, default 1 % a minute) is cancelled and registered again under
a new id, with fresh metadata, so the delta queue, the caches and the registry's maps all turn
over. Writes bench/results/soak.json and soak.md: the samples, and whether the curve is flat
(RSS of the last quarter against the second quarter, after warm-up). Standard library only.
"""

from __future__ import annotations

import argparse
import json
import sys
import threading
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import run as bench  # noqa: E402  (the harness's helpers: build, start, register bodies, /proc)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--instances", type=int, default=10_000)
    parser.add_argument("--minutes", type=float, default=30.0)
    parser.add_argument("--churn", type=float, default=1.0, help="% of instances replaced per minute")
    parser.add_argument("--sample-seconds", type=float, default=5.0)
    parser.add_argument("--skip-build", action="store_true")
    parser.add_argument("--out", type=Path, default=bench.BENCH / "results")
    args = parser.parse_args()

    bench.build(["heureka"], args.skip_build)
    log_dir = args.out / "logs"
    log_dir.mkdir(parents=True, exist_ok=True)
    srv = bench.start_server("heureka", log_dir, "soak")
    try:
        return soak(srv, args)
    finally:
        bench.stop_all()


class Fleet:
    """The instances: id number -> generation (re-registered instances get a new generation)."""

    def __init__(self, n: int, napps: int):
        self.n, self.napps = n, napps
        self.generation = [0] * n
        self.lock = threading.Lock()
        self.errors = 0
        self.requests = 0

    def iid(self, slot: int) -> str:
        return f"{bench.instance_id(slot, self.napps)}-g{self.generation[slot]}"


def request(conn, method: str, path: str, body: bytes | None = None) -> int:
    headers = {"Content-Type": "application/json"} if body else {}
    conn.request(method, path, body=body, headers=headers)
    response = conn.getresponse()
    response.read()
    return response.status


def soak(srv, args) -> int:
    napps = bench.napps_for(args.instances)
    fleet = Fleet(args.instances, napps)
    import http.client

    def connect():
        return http.client.HTTPConnection("127.0.0.1", srv.port, timeout=10)

    conn = connect()
    for slot in range(args.instances):
        register(conn, fleet, slot)
    bench.log(f"soak: {args.instances} instances registered; running {args.minutes} min")

    deadline = time.monotonic() + args.minutes * 60
    stop = threading.Event()
    workers = [threading.Thread(target=heartbeats, args=(srv, fleet, part, 4, stop, connect))
               for part in range(4)]
    workers.append(threading.Thread(target=churn, args=(fleet, args.churn, stop, connect)))
    for worker in workers:
        worker.start()

    samples = []
    started = time.monotonic()
    cpu0 = bench.cpu_seconds(srv.proc.pid) or 0.0
    while time.monotonic() < deadline:
        time.sleep(args.sample_seconds)
        elapsed = time.monotonic() - started
        cpu = (bench.cpu_seconds(srv.proc.pid) or 0.0) - cpu0
        samples.append({"t_s": round(elapsed, 1), "rss_mib": round((bench.rss_bytes(srv.proc.pid) or 0) / 2**20, 2),
                        "cpu_s": round(cpu, 2), "requests": fleet.requests, "errors": fleet.errors})
    stop.set()
    for worker in workers:
        worker.join(timeout=30)
    return report(samples, args)


def register(conn, fleet: Fleet, slot: int) -> None:
    iid = fleet.iid(slot)
    body = bench.register_body(iid, slot % fleet.napps, bench.ip_of(slot))
    status = request(conn, "POST", f"/eureka/apps/BENCH-APP-{slot % fleet.napps}", body)
    fleet.requests += 1
    if status != 204:
        fleet.errors += 1


def heartbeats(srv, fleet: Fleet, part: int, parts: int, stop: threading.Event, connect) -> None:
    """Renews this worker's share of the fleet, each instance once per 30 s, evenly spread."""
    conn = connect()
    slots = list(range(part, fleet.n, parts))
    gap = 30.0 / max(1, len(slots))
    next_at = time.monotonic()
    while not stop.is_set():
        for slot in slots:
            if stop.is_set():
                return
            with fleet.lock:
                path = f"/eureka/apps/BENCH-APP-{slot % fleet.napps}/{fleet.iid(slot)}"
            try:
                status = request(conn, "PUT", path)
            except OSError:
                conn = connect()
                status = 0
            fleet.requests += 1
            if status not in (200, 404):
                fleet.errors += 1
            next_at += gap
            pause = next_at - time.monotonic()
            if pause > 0:
                time.sleep(pause)


def churn(fleet: Fleet, percent_per_minute: float, stop: threading.Event, connect) -> None:
    """Each second, cancels a share of the instances and registers them under a new id."""
    conn = connect()
    per_second = fleet.n * percent_per_minute / 100 / 60
    owed = 0.0
    slot = 0
    while not stop.wait(1.0):
        owed += per_second
        while owed >= 1:
            owed -= 1
            slot = (slot + 7919) % fleet.n
            with fleet.lock:
                old = fleet.iid(slot)
                fleet.generation[slot] += 1
            try:
                request(conn, "DELETE", f"/eureka/apps/BENCH-APP-{slot % fleet.napps}/{old}")
                register(conn, fleet, slot)
            except OSError:
                conn = connect()
                fleet.errors += 1


def report(samples: list[dict], args) -> int:
    args.out.mkdir(parents=True, exist_ok=True)
    quarter = max(1, len(samples) // 4)
    second = samples[quarter:2 * quarter] or samples
    last = samples[-quarter:] or samples
    mean = lambda rows: sum(r["rss_mib"] for r in rows) / len(rows)  # noqa: E731
    ratio = mean(last) / mean(second) if samples else float("nan")
    flat = ratio < 1.10
    cpu_per_request_us = (samples[-1]["cpu_s"] / max(1, samples[-1]["requests"]) * 1e6) if samples else None
    result = {"instances": args.instances, "minutes": args.minutes, "churn_percent_per_minute": args.churn,
              "rss_last_quarter_over_second_quarter": round(ratio, 3), "flat": flat,
              "cpu_us_per_request": cpu_per_request_us and round(cpu_per_request_us, 1), "samples": samples}
    (args.out / "soak.json").write_text(json.dumps(result, indent=1))
    lines = [f"# Soak: {args.instances} instances, {args.minutes} min, churn {args.churn} %/min", "",
             f"RSS last quarter / second quarter: **{ratio:.3f}** ({'flat' if flat else 'growing'}); "
             f"CPU per request: {cpu_per_request_us and round(cpu_per_request_us, 1)} µs; "
             f"errors: {samples[-1]['errors'] if samples else '—'} of {samples[-1]['requests'] if samples else '—'}", "",
             "| t (s) | RSS (MiB) | CPU (s) | requests |", "|---|---|---|---|"]
    step = max(1, len(samples) // 40)
    lines += [f"| {s['t_s']} | {s['rss_mib']} | {s['cpu_s']} | {s['requests']} |" for s in samples[::step]]
    (args.out / "soak.md").write_text("\n".join(lines) + "\n")
    print("\n".join(lines[:3]))
    return 0 if samples and samples[-1]["errors"] == 0 else 1


if __name__ == "__main__":
    sys.exit(main())
