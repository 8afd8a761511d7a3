#!/usr/bin/env python3
"""Interleaved A/B of two Heureka binaries on the cluster benchmark (bench/cluster.py).

A change to replication comes with an A/B of what a cluster costs: this runs cluster.py, Heureka
only, alternately on binary A and binary B (A B, then B A, then A B, ...), each run on a fresh
three-node cluster, and pairs the runs of one round so that drift on a busy machine cancels out.
Each figure is reported as the median B/A ratio over the rounds, with the min–max.

    python3 bench/cluster_ab.py --a /path/to/heureka-old --b /path/to/heureka-new
    python3 bench/cluster_ab.py --a OLD --b NEW --rounds 3     # about 4 minutes per run
    python3 bench/cluster_ab.py --a OLD --b NEW --smoke        # cluster.py --smoke (checks it runs)

Writes bench/results/ab/cluster-<a-name>-vs-<b-name>.{md,json} (--smoke: bench/results/smoke/ab/,
git-ignored); each run's own cluster.{md,json} stays in bench/results/logs/cluster-ab/. See
bench/README.md ("A/B"). Standard library only.
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import statistics
import subprocess
import sys
from pathlib import Path

BENCH = Path(__file__).resolve().parent
# (path in cluster.json's servers.heureka, title, unit): the figures replication can change.
FIGURES = (
    (("single_heartbeat", "cpu_us_per_req"), "CPU per heartbeat, lone node", "µs"),
    (("cluster_heartbeat", "cpu_us_per_req"), "CPU per heartbeat, 3 nodes", "µs"),
    (("single_register", "cpu_us_per_req"), "CPU per registration, lone node", "µs"),
    (("cluster_register", "cpu_us_per_req"), "CPU per registration, 3 nodes", "µs"),
    (("propagation", "median_ms"), "register on A -> visible on B, median", "ms"),
    (("propagation", "p99_ms"), "register on A -> visible on B, p99", "ms"),
    (("cluster_replicated_s",), "load replicated to all nodes after the load", "s"),
    (("restart", "{n}", "full_s"), "killed node restarted -> holds the registry", "s"),
    (("faults", "healthy", "heartbeat", "p99_ms"), "heartbeat p99 (wrk), peers healthy", "ms"),
    (("faults", "peer_dead", "heartbeat", "p99_ms"), "heartbeat p99 (wrk), one peer dead", "ms"),
    (("faults", "peer_blackholed", "heartbeat", "p99_ms"), "heartbeat p99 (wrk), one peer black-holed", "ms"),
    (("faults", "healthy", "register", "server_cpu_us_per_req"), "CPU per registration (wrk), peers healthy", "µs"),
    (("faults", "healthy", "register", "p99_ms"), "registration p99 (wrk), peers healthy", "ms"),
)


def log(msg: str) -> None:
    print(f"[{dt.datetime.now():%H:%M:%S}] {msg}", flush=True)


def dig(d, path: tuple, n: int):
    for k in path:
        if not isinstance(d, dict):
            return None
        d = d.get(k.format(n=n))
    return d if isinstance(d, (int, float)) else None


def run_one(label: str, binary: Path, rnd: int, args, out_root: Path) -> dict:
    out = out_root / f"round{rnd}-{label}"
    cmd = [sys.executable, str(BENCH / "cluster.py"), "--servers", "heureka", "--heureka-bin", str(binary),
           "--big", "", "--out", str(out)]
    if args.smoke:
        cmd.append("--smoke")
    else:
        cmd += ["--quiet-wait", str(args.quiet_wait)]
    log(f"round {rnd}: {label} = {binary.name}")
    subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL)
    return json.loads((out / "cluster.json").read_text())


def summarise(runs: list[tuple[dict, dict]], n: int) -> list[dict]:
    rows = []
    for path, title, unit in FIGURES:
        pairs = [(dig(a["servers"].get("heureka", {}), path, n), dig(b["servers"].get("heureka", {}), path, n))
                 for a, b in runs]
        pairs = [(x, y) for x, y in pairs if x is not None and y is not None]
        ratios = [y / x for x, y in pairs if x > 0]
        rows.append({
            "figure": title, "unit": unit, "rounds": len(pairs),
            "a": statistics.median(x for x, _ in pairs) if pairs else None,
            "b": statistics.median(y for _, y in pairs) if pairs else None,
            "ratio": statistics.median(ratios) if ratios else None,
            "min": min(ratios) if ratios else None, "max": max(ratios) if ratios else None,
        })
    return rows


def fmt(v, digits=3):
    return "–" if v is None else f"{v:.{digits}g}" if abs(v) < 1000 else f"{v:,.0f}"


def busy(runs: list[tuple[dict, dict]]) -> str:
    """Other work on the machine during each run's CPU measurements (cluster.py's
    `other_cpu_share`): the median over the runs, and the worst."""
    shares = [share for pair in runs for run in pair
              for w in ("single_heartbeat", "single_register", "cluster_heartbeat", "cluster_register")
              if (share := dig(run["servers"].get("heureka", {}), (w, "other_cpu_share"), 0)) is not None]
    if not shares:
        return "unknown"
    return f"{statistics.median(shares):.0%} median, {max(shares):.0%} worst"


def report(rows: list[dict], args, n: int, machine_busy: str) -> str:
    lines = [
        f"# Cluster A/B: {args.a.name} (A) vs {args.b.name} (B)",
        "",
        f"Run {dt.datetime.now(dt.timezone.utc):%Y-%m-%d %H:%M} UTC by `python3 bench/cluster_ab.py"
        f"{' --smoke' if args.smoke else ''} --rounds {args.rounds}`: bench/cluster.py, Heureka only, "
        f"{n:,} instances, on A and B alternately (A B, B A, ...), a fresh three-node cluster per run. "
        "A and B columns are medians over the rounds; B/A is the median of the per-round ratios "
        f"(min–max). Below 1 is better for B on every figure. Other work on the machine during the "
        f"CPU measurements: {machine_busy}.",
        "",
        "| figure | A | B | **B/A** (min–max) |",
        "|---|--:|--:|--:|",
    ]
    for r in rows:
        lines.append(f"| {r['figure']} ({r['unit']}) | {fmt(r['a'])} | {fmt(r['b'])} | "
                     f"**{fmt(r['ratio'])}** ({fmt(r['min'])}–{fmt(r['max'])}) |")
    return "\n".join(lines) + "\n"


def main(argv: list[str]) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--a", type=Path, required=True, help="the binary before the change")
    p.add_argument("--b", type=Path, required=True, help="the binary after the change")
    p.add_argument("--rounds", type=int, default=3, help="runs of each binary (default 3; smoke 1)")
    p.add_argument("--smoke", action="store_true", help="cluster.py --smoke, one round")
    p.add_argument("--quiet-wait", type=float, default=30, help="cluster.py --quiet-wait per run (default 30)")
    args = p.parse_args(argv)
    if args.smoke:
        args.rounds = 1
    out_root = BENCH / "results" / "logs" / "cluster-ab"
    runs = []
    for rnd in range(1, args.rounds + 1):
        order = [("a", args.a), ("b", args.b)] if rnd % 2 else [("b", args.b), ("a", args.a)]
        got = {label: run_one(label, binary, rnd, args, out_root) for label, binary in order}
        runs.append((got["a"], got["b"]))
    n = runs[0][0]["config"]["n"]
    rows = summarise(runs, n)
    out = BENCH / "results" / ("smoke/ab" if args.smoke else "ab")
    out.mkdir(parents=True, exist_ok=True)
    stem = f"cluster-{args.a.name}-vs-{args.b.name}"
    text = report(rows, args, n, busy(runs))
    (out / f"{stem}.md").write_text(text)
    (out / f"{stem}.json").write_text(json.dumps({"rows": rows, "runs_dir": str(out_root)}, indent=1) + "\n")
    print(text)
    log(f"wrote {out / stem}.md")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
