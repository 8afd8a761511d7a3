#!/usr/bin/env python3
"""A change at a large registry: how long until a full fetch shows it, and what a full fetch costs,
for two binaries side by side on the same restored store (issue 37).

    python3 bench/persistence.py --phases restore --restore-sizes 1000000 --restore-rounds 1 \\
        --keep-data --data-dir /tmp/stores --skip-build          # makes /tmp/stores/restore-n1000000
    python3 bench/rebuild.py --store /tmp/stores/restore-n1000000 --a OLD --b NEW --a-name X --b-name Y

Rounds alternate A, B / B, A. Each round starts the binary on the store (persistence on, so it
restores the registry) and waits for its first full fetch; then:

* **propagation**: --samples times, a registration of a new instance, then at once a full fetch
  (JSON, gzip) on a kept-alive connection, timed from the request to the last byte read: the
  fetch right after a change is the one that builds the new document. Next to it, the same fetch
  again of the unchanged document: the transfer and the client's read alone, so the rebuild's
  share shows (`rebuild` = median of the first minus median of the second).
* **fetch CPU**: wrk (-t2 -c4) fetching the full document (JSON, gzip) for --duration seconds
  after a warm-up, the server's CPU time (utime+stime, /proc/PID/stat) per fetch.

Prints and writes bench/results/ab/<a-name>-vs-<b-name>-rebuild.{md,json}, each figure the
median of its rounds with B/A per round. Standard library and wrk only.
"""
from __future__ import annotations

import argparse
import http.client
import json
import os
import re
import socket
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
GZIP_JSON = {"Accept": "application/json", "Accept-Encoding": "gzip"}
TICKS = os.sysconf("SC_CLK_TCK")


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def cpu_seconds(pid: int) -> float:
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / TICKS


def fetch(conn: http.client.HTTPConnection) -> float:
    start = time.perf_counter()
    conn.request("GET", "/eureka/apps", headers=GZIP_JSON)
    response = conn.getresponse()
    response.read()
    if response.status != 200:
        raise RuntimeError(f"full fetch answered {response.status}")
    return time.perf_counter() - start


def start(binary: str, store: str, log: Path) -> tuple[subprocess.Popen, int]:
    port = free_port()
    server = subprocess.Popen(
        [binary, f"--server.port={port}", "--server.address=127.0.0.1",
         "--eureka.client.register-with-eureka=false", "--eureka.client.fetch-registry=false",
         "--eureka.server.wait-time-in-ms-when-sync-empty=0",
         "--eureka.server.enable-self-preservation=false", f"--heureka.persistence.dir={store}",
         "--logging.level.root=warn"],
        stdout=log.open("w"), stderr=subprocess.STDOUT)
    deadline = time.monotonic() + 600
    while time.monotonic() < deadline:
        try:
            fetch(http.client.HTTPConnection("127.0.0.1", port, timeout=600))
            return server, port
        except (OSError, http.client.HTTPException, RuntimeError):
            if server.poll() is not None:
                raise RuntimeError(f"{binary} exited: see {log}")
            time.sleep(0.05)
    server.kill()
    raise RuntimeError(f"{binary} did not answer a full fetch within 600 s")


def register_body(n: int) -> str:
    return json.dumps({"instance": {
        "instanceId": f"rebuild-{os.getpid()}-{n}", "hostName": "h", "app": "REBUILD",
        "ipAddr": "10.0.0.1", "status": "UP", "port": {"$": 8080, "@enabled": "true"},
        "vipAddress": "rebuild", "dataCenterInfo": {
            "@class": "com.netflix.appinfo.InstanceInfo$DefaultDataCenterInfo", "name": "MyOwn"}}})


def propagation(port: int, samples: int, first: int) -> dict:
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=600)
    changed, unchanged = [], []
    for n in range(first, first + samples):
        conn.request("POST", "/eureka/apps/REBUILD", body=register_body(n),
                     headers={"Content-Type": "application/json"})
        response = conn.getresponse()
        response.read()
        if response.status != 204:
            raise RuntimeError(f"registration answered {response.status}")
        changed.append(fetch(conn))
        unchanged.append(fetch(conn))
    visible, transfer = statistics.median(changed), statistics.median(unchanged)
    return {"visible_ms": visible * 1000, "unchanged_fetch_ms": transfer * 1000,
            "rebuild_ms": (visible - transfer) * 1000}


def fetch_cpu(server: subprocess.Popen, port: int, duration: int) -> dict:
    wrk = ["wrk", "-t2", "-c4", "-H", "Accept: application/json", "-H", "Accept-Encoding: gzip"]
    url = f"http://127.0.0.1:{port}/eureka/apps"
    subprocess.run([*wrk, "-d3s", url], capture_output=True, check=True)
    before = cpu_seconds(server.pid)
    out = subprocess.run([*wrk, f"-d{duration}s", url], capture_output=True, text=True, check=True).stdout
    used = cpu_seconds(server.pid) - before
    fetches = int(re.search(r"(\d+) requests in", out).group(1))
    return {"fetches": fetches, "cpu_us_per_fetch": used / fetches * 1e6}


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--store", required=True, help="a store directory (persistence.py --keep-data)")
    p.add_argument("--a", required=True)
    p.add_argument("--b", required=True)
    p.add_argument("--a-name", default="a")
    p.add_argument("--b-name", default="b")
    p.add_argument("--rounds", type=int, default=4)
    p.add_argument("--samples", type=int, default=30, help="registrations per round (default 30)")
    p.add_argument("--duration", type=int, default=8, help="seconds of the measured fetch run (default 8)")
    p.add_argument("--out", type=Path, default=ROOT / "bench" / "results" / "ab")
    a = p.parse_args()
    names = {"a": a.a_name, "b": a.b_name}
    bins = {"a": a.a, "b": a.b}
    log_dir = ROOT / "bench" / "results" / "logs" / "rebuild"
    log_dir.mkdir(parents=True, exist_ok=True)
    rounds: list[dict] = []
    sample_base = 0
    for r in range(a.rounds):
        row = {}
        for key in ("a", "b") if r % 2 == 0 else ("b", "a"):
            server, port = start(bins[key], a.store, log_dir / f"{names[key]}-{r}.log")
            try:
                row[key] = {**propagation(port, a.samples, sample_base),
                            **fetch_cpu(server, port, a.duration)}
            finally:
                server.terminate()
                server.wait()
            # The registrations went to the store: the next server restores them too, so
            # each round registers new ids and both binaries see the same registry growth.
            sample_base += a.samples
            print(f"round {r + 1} {names[key]}: visible {row[key]['visible_ms']:.1f} ms "
                  f"(unchanged fetch {row[key]['unchanged_fetch_ms']:.1f} ms), "
                  f"{row[key]['cpu_us_per_fetch']:.0f} µs CPU per fetch", flush=True)
        rounds.append(row)
    figures = ("visible_ms", "unchanged_fetch_ms", "rebuild_ms", "cpu_us_per_fetch")
    summary = {}
    for fig in figures:
        va = [row["a"][fig] for row in rounds]
        vb = [row["b"][fig] for row in rounds]
        ratios = [b / x for x, b in zip(va, vb) if x > 0]
        summary[fig] = {"a": statistics.median(va), "b": statistics.median(vb),
                        "b_over_a": statistics.median(ratios) if ratios else None,
                        "b_over_a_range": [min(ratios), max(ratios)] if ratios else None}
    lines = [f"# A change at a restored registry: {names['a']} vs {names['b']}", "",
             f"Store: `{a.store}`. A: `{a.a}`; B: `{a.b}`. {a.rounds} rounds (A, B / B, A), "
             f"{a.samples} registrations each; fetch CPU from wrk -t2 -c4 over {a.duration} s. "
             f"Produced by `python3 bench/rebuild.py {' '.join(sys.argv[1:])}`.", "",
             "| Figure | A | B | B/A (range) |", "|---|--:|--:|--:|"]
    for fig in figures:
        s = summary[fig]
        rng = s["b_over_a_range"]
        lines.append(f"| {fig} | {s['a']:.1f} | {s['b']:.1f} | {s['b_over_a']:.3f} ({rng[0]:.3f}–{rng[1]:.3f}) |")
    report = "\n".join(lines) + "\n"
    print(report)
    a.out.mkdir(parents=True, exist_ok=True)
    stem = a.out / f"{names['a']}-vs-{names['b']}-rebuild"
    stem.with_suffix(".md").write_text(report)
    stem.with_suffix(".json").write_text(json.dumps({"rounds": rounds, "summary": summary,
                                                      "argv": sys.argv[1:]}, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
