#!/usr/bin/env python3
"""Interleaved A/B of two Heureka binaries, each against the ceiling in the same run.

A change on a hot path comes with an interleaved A/B: this starts A, B and the ceiling
(bench/baseline) side by side, loads the same N instances into each, and for each workload runs
measured rounds in the order A, B, ceiling (B, A, ceiling in every other round), measuring the
server's CPU time per request and wrk's p99 exactly as bench/run.py does (it imports run.py).
Figures are paired per round: A/ceiling, B/ceiling and B/A of the same round, so that drift on a
busy machine cancels out; each is reported as the median of the rounds, with the min–max.

    python3 bench/ab.py --a /path/to/heureka-old --b /path/to/heureka-new
    python3 bench/ab.py --a OLD --b NEW --sizes 10000 --workloads heartbeat,register --rounds 5
    python3 bench/ab.py --a OLD --b NEW --smoke     # N=100, one round of 1 s (checks it runs)
    python3 bench/ab.py --a OLD --b OLD             # A/A: how large the noise is right now

Writes bench/results/ab/<a-name>-vs-<b-name>.{md,json} (--smoke: bench/results/smoke/ab/, git-
ignored); wrk and server logs go to bench/results/logs/ab/. See bench/README.md ("A/B").
Standard library only.
"""

from __future__ import annotations

import argparse
import datetime as dt
import hashlib
import json
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
import run as R  # noqa: E402  (bench/run.py: build, servers, loading, wrk, /proc helpers)
from run import BenchError, log  # noqa: E402

KEYS = ("a", "b", "baseline")
R.LABEL.update({"a": "A", "b": "B"})
R.SHORT.update({"a": "A", "b": "B"})
DEFAULT_WORKLOADS = ("heartbeat", "full_fetch", "delta_fetch", "register")
# The figures compared, from each round of run.py's run_wrk: (field, title, unit).
FIGURES = (("server_cpu_us_per_req", "CPU per request", "µs"), ("p99_ms", "p99", "ms"))


# --------------------------------------------------------------------------------------------
# Setup: A, B and the ceiling started and loaded with the same N instances, as run.py does.


def snapshot(bins: dict[str, Path], into: Path) -> dict:
    """Private copies of the binaries (a rebuild elsewhere cannot change them half-way), and what
    they were: path, size, build time, sha256."""
    info = {}
    for key, src in bins.items():
        dst = into / f"{key}-{src.name}"
        shutil.copy2(src, dst)
        st = src.stat()
        info[key] = {"path": str(src), "run_as": str(dst), "bytes": st.st_size,
                     "sha256": hashlib.sha256(src.read_bytes()).hexdigest(),
                     "built": dt.datetime.fromtimestamp(st.st_mtime, dt.timezone.utc).strftime("%Y-%m-%d %H:%M:%S UTC")}
    return info


def setup(n: int, cfg, run_bins: dict[str, Path], log_dir: Path, results: dict,
          failures: list[str]) -> dict[str, R.Running]:
    """Starts A and B (run.py's Heureka command line, each its own binary) and the ceiling, and
    loads N instances into each with run.py's setup_server; the ceiling's bodies are the size of
    A's answers (B's where A failed). A and B must answer with documents of the same size."""
    running: dict[str, R.Running] = {}
    per: dict[str, dict] = {}
    for key in ("a", "b"):
        R.RUN_BIN["heureka"] = run_bins[key]
        (log_dir / key).mkdir(parents=True, exist_ok=True)
        res: dict = {"runs": {}, "startup": {}}
        log(f"  {key.upper()}: {run_bins[key]}")
        srv = R.setup_server("heureka", n, cfg, log_dir / key, res, failures)
        per[key] = res["runs"]["heureka"][str(n)]
        if srv:
            srv.key = key
            running[key] = srv
    ref = per["a"] if "payload" in per["a"] else per["b"]
    if "payload" in ref:
        R.RUN_BIN["baseline"] = run_bins["baseline"]
        (log_dir / "baseline").mkdir(parents=True, exist_ok=True)
        res = {"runs": {"heureka": {str(n): ref}}, "startup": {}}
        log("  ceiling")
        srv = R.setup_server("baseline", n, cfg, log_dir / "baseline", res, failures)
        per["baseline"] = res["runs"]["baseline"][str(n)]
        if srv:
            running["baseline"] = srv
    pa, pb = per["a"].get("payload", {}), per["b"].get("payload", {})
    differ = {k: (pa[k], pb[k]) for k in pa if k.endswith("_bytes") and k in pb and pa[k] != pb[k]}
    if differ:
        log(f"  NOTE: A and B answer with documents of different sizes: {differ}")
    results["runs"][str(n)] = {"servers": per, "payload_differs": differ, "workloads": {}}
    return running


# --------------------------------------------------------------------------------------------
# One workload: warm-ups, then rounds A, B, ceiling / B, A, ceiling, paired per round.


def spread(vals: list[float]) -> dict | None:
    vals = [v for v in vals if v is not None]
    if not vals:
        return None
    return {"median": round(statistics.median(vals), 4), "min": round(min(vals), 4), "max": round(max(vals), 4),
            "rounds": [round(v, 4) for v in vals]}


def ratio(x, y):
    return x / y if x is not None and y not in (None, 0) else None


def ab_workload(running: dict[str, R.Running], name: str, n: int, cfg, log_dir: Path,
                failures: list[str]) -> dict:
    keys = [k for k in KEYS if k in running]
    rounds: dict[str, dict[int, dict]] = {k: {} for k in keys}
    broken: dict[str, str] = {}
    warmups: dict[str, list[dict]] = {}
    if cfg.warmup > 0:
        for k in keys:  # run.py's warm-up: until the CPU per request is steady
            try:
                R.prepare_fetch(running[k], name, n)
                warmups[k] = R.warm_up(running[k], name, n, cfg, log_dir)
            except BenchError as e:
                broken[k] = str(e)
    for rnd in range(cfg.rounds):
        order = [k for k in (("a", "b", "baseline") if rnd % 2 == 0 else ("b", "a", "baseline")) if k in keys]
        for pos, k in enumerate(order):
            if k in broken:
                continue
            if not running[k].alive():
                broken[k] = f"server died before {name}"
                continue
            try:
                idle = [running[o] for o in keys if o != k]
                first = R.prepare_fetch(running[k], name, n)
                R.wait_until_idle(idle, cfg.idle_wait)
                res = R.run_workload_round(running[k], name, n, cfg, log_dir, rnd, idle=idle)
                if first is not None:
                    res["first_fetch_ms"] = first
                res["position"] = pos
                rounds[k][rnd] = res
            except BenchError as e:
                broken[k] = str(e)
        line = "  ".join(f"{k.upper() if k != 'baseline' else 'C'} {rounds[k][rnd].get('server_cpu_us_per_req', 0):.2f} µs"
                         for k in order if rnd in rounds[k])
        log(f"  N={n} {name} round {rnd + 1}/{cfg.rounds} ({'-'.join('C' if o == 'baseline' else o.upper() for o in order)}): {line}")
    out: dict = {"servers": {}, "paired": [], "summary": {}}
    for k in keys:
        if k in broken:
            out["servers"][k] = {"failed": broken[k]}
            failures.append(f"{R.SHORT[k]} N={n} {name}: {broken[k]}")
            log(f"  {R.SHORT[k]:8} N={n:<6} {name:12} FAILED: {broken[k]}")
            continue
        agg = R.aggregate([rounds[k][r] for r in sorted(rounds[k])])
        agg["warmup"] = warmups.get(k, [])
        why = R.workload_ok(agg) if agg["rounds"] else "no round ran"
        if why:
            agg["failed"] = why
            failures.append(f"{R.SHORT[k]} N={n} {name}: {why}")
        out["servers"][k] = agg
    # Paired per round: each ratio from one round, where A, B and the ceiling ran back to back.
    for rnd in range(cfg.rounds):
        got = {k: rounds[k].get(rnd) for k in keys if k not in broken}
        row: dict = {"round": rnd, "order": [k for k, _ in sorted(((k, r["position"]) for k, r in got.items() if r),
                                                             key=lambda x: x[1])]}
        for k, r in got.items():
            if r:
                row[f"other_cpu_share_{k}"] = r.get("other_cpu_share")
        for field, _, _ in FIGURES:
            a, b, c = ((got.get(k) or {}).get(field) for k in KEYS)
            row[field] = {"a": a, "b": b, "baseline": c,
                          "a_over_c": ratio(a, c), "b_over_c": ratio(b, c), "b_over_a": ratio(b, a)}
        out["paired"].append(row)
    for field, _, _ in FIGURES:
        out["summary"][field] = {
            x: spread([p[field][x] for p in out["paired"]])
            for x in ("a", "b", "baseline", "a_over_c", "b_over_c", "b_over_a")}
    return out


# --------------------------------------------------------------------------------------------
# Reports


def fmt_spread(s: dict | None, unit_ratio: bool = False) -> str:
    if not s:
        return "–"
    f = (lambda v: f"{v:.3f}") if unit_ratio else (lambda v: R.fmt_num(v))
    if s["min"] == s["max"]:
        return f(s["median"])
    return f"{f(s['median'])} ({f(s['min'])}–{f(s['max'])})"


def summary_rows(results: dict) -> list[list[str]]:
    rows = []
    for n, run in results["runs"].items():
        for name, wl in run["workloads"].items():
            for field, title, unit in FIGURES:
                s = wl["summary"][field]
                rows.append([name, f"{int(n):,}", f"{title} ({unit})", fmt_spread(s["a"]), fmt_spread(s["b"]),
                             fmt_spread(s["baseline"]), fmt_spread(s["a_over_c"], True),
                             fmt_spread(s["b_over_c"], True), fmt_spread(s["b_over_a"], True)])
    return rows


HEAD = ["Workload", "N", "Figure", "A", "B", "Ceiling", "A/Ceiling", "B/Ceiling", "B/A"]


def other_shares(results: dict) -> list[float]:
    return [p[k] for run in results["runs"].values() for wl in run["workloads"].values()
            for p in wl["paired"] for k in p if k.startswith("other_cpu_share_") and p[k] is not None]


def machine_line(results: dict) -> str:
    m = results["machine"]
    shares = other_shares(results)
    share = (f"median {statistics.median(shares):.0%}, worst round {max(shares):.0%}" if shares else "unknown")
    return (f"Machine: **{m['nproc']} CPUs (nproc), {m['memory_gib']} GiB, {m['cpu']}**, Linux {m['kernel']}. "
            f"Date: {m['date']}. CPUs busy with other work just before the run: {m.get('cpu_busy_before_run', 0):.0%}; "
            f"during the measured rounds other work took {share} of the machine's CPU time "
            f"(run.py's `other_cpu_share`; per round below and in the JSON).")


def write_reports(results: dict, out_md: Path, out_json: Path) -> str:
    out_json.write_text(json.dumps(results, indent=1, ensure_ascii=False) + "\n")
    c, bins = results["config"], results["binaries"]
    md = [f"# A/B: {results['names']['a']} vs {results['names']['b']} ({results['mode']} run)", "",
          machine_line(results), "",
          f"* **A**: `{bins['a']['path']}` (sha256 {bins['a']['sha256'][:12]}, built {bins['a']['built']})",
          f"* **B**: `{bins['b']['path']}` (sha256 {bins['b']['sha256'][:12]}, built {bins['b']['built']})",
          f"* **Ceiling**: `{bins['baseline']['path']}` (bench/baseline, bodies the size of A's answers)", "",
          f"Load: run.py's, wrk `-t{c['threads']} -c{c['connections']}`; per workload and server, {c['warmup']} s "
          f"warm-up runs until the CPU per request is steady (at most {c['warmup_runs']}), then {c['rounds']} "
          f"rounds of {c['duration']} s in the order A, B, ceiling (B, A, ceiling in every other round). "
          f"Each ratio is taken within one round, then the median of the rounds is shown with the min–max. "
          f"A figure alone is the median round (min–max). B/A below 1 means B does less work per request.", "",
          f"Produced by `{results['command']}`.", ""]
    if results.get("note"):
        md += [results["note"], ""]
    md += ["| " + " | ".join(HEAD) + " |", "|---|--:|---|--:|--:|--:|--:|--:|--:|"]
    md += ["| " + " | ".join(r) + " |" for r in summary_rows(results)]
    md += ["", "## Rounds", "",
           "| Workload | N | Round | Order | CPU A µs | CPU B µs | CPU ceiling µs | B/A | A/C | B/C "
           "| p99 A ms | p99 B ms | p99 C ms | other CPU share (A, B, C) |",
           "|---|--:|--:|---|--:|--:|--:|--:|--:|--:|--:|--:|--:|---|"]
    for n, run in results["runs"].items():
        for name, wl in run["workloads"].items():
            for p in wl["paired"]:
                cpu, p99 = p["server_cpu_us_per_req"], p["p99_ms"]
                rf = lambda v: "–" if v is None else f"{v:.3f}"  # noqa: E731
                shares = ", ".join("–" if p.get(f"other_cpu_share_{k}") is None else f"{p[f'other_cpu_share_{k}']:.0%}"
                                   for k in KEYS)
                md.append(f"| {name} | {int(n):,} | {p['round'] + 1} | "
                          f"{'-'.join('C' if k == 'baseline' else k.upper() for k in p['order'])} | "
                          f"{R.fmt_num(cpu['a'])} | {R.fmt_num(cpu['b'])} | {R.fmt_num(cpu['baseline'])} | "
                          f"{rf(cpu['b_over_a'])} | {rf(cpu['a_over_c'])} | {rf(cpu['b_over_c'])} | "
                          f"{R.fmt_num(p99['a'])} | {R.fmt_num(p99['b'])} | {R.fmt_num(p99['baseline'])} | {shares} |")
    for n, run in results["runs"].items():
        if run.get("payload_differs"):
            md += ["", f"N={n}: A and B answered with documents of different sizes: `{run['payload_differs']}`"]
    if results["failures"]:
        md += ["", "## Failures", ""] + [f"* {f}" for f in results["failures"]]
    out_md.write_text("\n".join(md) + "\n")
    widths = [max(len(x[i]) for x in [HEAD, *summary_rows(results)]) for i in range(len(HEAD))]
    lines = ["  ".join(c.ljust(w) if i in (0, 2) else c.rjust(w) for i, (c, w) in enumerate(zip(r, widths)))
             for r in [HEAD, *summary_rows(results)]]
    lines.insert(1, "-" * len(lines[0]))
    return machine_line(results).replace("**", "") + "\n\n" + "\n".join(lines)


# --------------------------------------------------------------------------------------------


def round_defaults(a, smoke: bool) -> None:
    """The rounds, warm-ups and waits an interleaved run uses unless the command line says
    otherwise (a smoke run: one short round), and the rest of what run.py's functions read from
    their cfg, with run.py's values. bench/allocators.py takes the same."""
    a.rounds = a.rounds or (1 if smoke else 5)
    a.duration = a.duration or (1 if smoke else 5)
    a.warmup = a.warmup if a.warmup is not None else (1 if smoke else 3)
    a.warmup_runs = a.warmup_runs or (1 if smoke else 15)
    a.quiet_wait = a.quiet_wait if a.quiet_wait is not None else (0 if smoke else 30)
    a.warmup_pause = 0 if smoke else 2.0
    a.idle_wait = 3.0 if smoke else 20.0
    a.settle = 0.2 if smoke else 1.0
    a.wrk_timeout = 10
    a.start_deadline = 180.0


def parse_args(argv: list[str]):
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--a", required=True, type=Path, help="the Heureka binary before the change")
    p.add_argument("--b", required=True, type=Path, help="the Heureka binary after the change")
    p.add_argument("--a-name", help="A's name in the output file name (default: the file name of --a)")
    p.add_argument("--b-name", help="B's name in the output file name (default: the file name of --b)")
    p.add_argument("--baseline", type=Path,
                   help="the ceiling's binary (default: cargo build --release -p heureka-bench-baseline here)")
    p.add_argument("--smoke", action="store_true", help="N=100, one round of 1 s, 1 s warm-up (checks it runs)")
    p.add_argument("--sizes", help="registry sizes (default 10000; smoke 100)")
    p.add_argument("--workloads", default=",".join(DEFAULT_WORKLOADS),
                   help=f"comma list (default {','.join(DEFAULT_WORKLOADS)}; also the fetch variants: "
                        f"{','.join(n for n in R.FETCHES if n not in DEFAULT_WORKLOADS)})")
    p.add_argument("--rounds", type=int, help="measured rounds per workload (default 5; smoke 1)")
    p.add_argument("--duration", type=int, help="seconds per measured wrk round (default 5; smoke 1)")
    p.add_argument("--warmup", type=int, help="seconds per warm-up run (default 3; smoke 1)")
    p.add_argument("--warmup-runs", type=int, help="at most this many warm-up runs (default 15; smoke 1)")
    p.add_argument("--threads", type=int, default=2, help="wrk threads (default 2)")
    p.add_argument("--connections", type=int, default=64, help="wrk connections (default 64)")
    p.add_argument("--quiet-wait", type=float,
                   help="seconds to wait for other processes to leave the CPUs idle first (default 30; smoke 0)")
    p.add_argument("--skip-build", action="store_true", help="use target/release/heureka-bench-baseline as it is")
    p.add_argument("--note", help="a line for the report (say, that the machine was busy)")
    p.add_argument("--out", type=Path, help="output directory (default bench/results/ab; smoke bench/results/smoke/ab)")
    a = p.parse_args(argv)
    smoke = a.smoke
    a.mode = "smoke" if smoke else "full"
    a.workloads = [w.strip() for w in a.workloads.split(",") if w.strip()]
    for w in a.workloads:
        if w not in R.WORKLOADS:
            p.error(f"unknown workload {w!r} (known: {', '.join(R.WORKLOADS)})")
    a.workloads = [w for w in R.ALL_WORKLOADS if w in a.workloads]  # run.py's order: registration last
    for key in ("a", "b", "baseline"):
        path = getattr(a, key)
        if path is not None and not (path.is_file() and os.access(path, os.X_OK)):
            p.error(f"--{key} {path}: not an executable file")
    a.sizes = [int(x) for x in a.sizes.split(",")] if a.sizes else ([100] if smoke else [10000])
    round_defaults(a, smoke)
    a.out = (a.out or (R.BENCH / "results" / ("smoke/ab" if smoke else "ab"))).resolve()
    return a


def main(argv: list[str]) -> int:
    cfg = parse_args(argv)
    if not shutil.which("wrk"):
        print("ab: wrk not found (Debian/Ubuntu: apt-get install wrk)", file=sys.stderr)
        return 2
    names = {"a": cfg.a_name or cfg.a.name, "b": cfg.b_name or cfg.b.name}
    stem = f"{names['a']}-vs-{names['b']}"
    log_dir = R.BENCH / "results" / "logs" / "ab" / stem
    shutil.rmtree(log_dir, ignore_errors=True)  # logs describe one run
    log_dir.mkdir(parents=True, exist_ok=True)
    cfg.out.mkdir(parents=True, exist_ok=True)
    t_begin = time.time()
    machine = R.machine_info()
    machine["nproc"] = len(os.sched_getaffinity(0))
    results: dict = {
        "mode": cfg.mode, "names": names, "machine": machine,
        "command": "python3 bench/ab.py " + shlex.join(argv),
        "note": cfg.note,
        "config": {"workloads": cfg.workloads, "sizes": cfg.sizes, "rounds": cfg.rounds, "duration": cfg.duration,
                   "warmup": cfg.warmup, "warmup_runs": cfg.warmup_runs, "threads": cfg.threads,
                   "connections": cfg.connections, "server_flags": R.COMMON_FLAGS,
                   "order": "A, B, ceiling in even rounds; B, A, ceiling in odd rounds (0-based)"},
        "runs": {}, "failures": [],
    }
    failures: list[str] = results["failures"]
    log(f"A/B {stem}: sizes {cfg.sizes}, workloads {cfg.workloads}, {cfg.rounds} rounds of {cfg.duration} s; "
        f"output {cfg.out}")
    baseline = cfg.baseline
    if baseline is None:
        errors = R.build(["baseline"], cfg.skip_build)
        if errors:
            print(f"ab: the ceiling is unavailable: {errors['baseline']}", file=sys.stderr)
            return 1
        baseline = R.BASELINE_BIN
    bin_dir = Path(tempfile.mkdtemp(prefix="heureka-ab-"))
    try:
        results["binaries"] = snapshot({"a": cfg.a, "b": cfg.b, "baseline": baseline}, bin_dir)
        run_bins = {k: Path(v["run_as"]) for k, v in results["binaries"].items()}
        results["machine"]["cpu_busy_before_run"] = round(R.wait_for_quiet(cfg.quiet_wait), 3)
        for n in cfg.sizes:
            log(f"N={n}: starting and loading A, B and the ceiling")
            running: dict[str, R.Running] = {}
            try:
                running = setup(n, cfg, run_bins, log_dir, results, failures)
                if len(running) < 3:
                    continue
                for name in cfg.workloads:
                    wl = ab_workload(running, name, n, cfg, log_dir, failures)
                    results["runs"][str(n)]["workloads"][name] = wl
                    cpu = wl["summary"]["server_cpu_us_per_req"]
                    log(f"  N={n} {name}: CPU/request A {fmt_spread(cpu['a'])} µs, B {fmt_spread(cpu['b'])} µs, "
                        f"ceiling {fmt_spread(cpu['baseline'])} µs; B/A {fmt_spread(cpu['b_over_a'], True)}")
            finally:
                for srv in running.values():
                    srv.stop()
    except KeyboardInterrupt:
        failures.append("interrupted")
    finally:
        R.stop_all()
        shutil.rmtree(bin_dir, ignore_errors=True)
    results["elapsed_s"] = round(time.time() - t_begin, 1)
    if "binaries" not in results:
        return 1
    out_md, out_json = cfg.out / f"{stem}.md", cfg.out / f"{stem}.json"
    table = write_reports(results, out_md, out_json)
    print()
    print(table)
    print()
    print(f"Results: {out_md}, {out_json} (logs in {log_dir}); {results['elapsed_s']:.0f} s")
    if failures:
        print("\nWhat could not run:", file=sys.stderr)
        for f in failures:
            print(f"  - {f}", file=sys.stderr)
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
