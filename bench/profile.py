#!/usr/bin/env python3
"""Profiles Heureka under one of the benchmark's loads with `perf` (CPU-clock sampling, DWARF
call graphs), and writes the hottest functions as text.

    python3 bench/profile.py                              # heartbeat register full_fetch regen at N=10,000
    python3 bench/profile.py --n 100000 regen             # one workload, another size

Workloads: heartbeat, register, the fetches (full_fetch, delta_fetch and their variants such as
full_fetch_plain or delta_fetch_xml: the wrk loads of run.py), and regen:
register one instance, then fetch GET /eureka/apps (JSON, gzip) until it shows, over and over,
which is the cost of re-encoding the registry after a change (what the propagation figure
measures). Output in bench/results/profiles/ (git-ignored): perf-WORKLOAD-N.data, plus
WORKLOAD-N.self.txt (by own time) and WORKLOAD-N.children.txt (inclusive time, Heureka frames).
perf's numbers include wrk's effect on the shared CPUs only indirectly: only the server
process is sampled. Needs perf (linux-perf); software events suffice, no hardware counters.

`--flamegraph` also draws WORKLOAD-N.svg (needs inferno: `cargo install inferno`), and `--out DIR`
writes everything but the perf data elsewhere (bench/results/flamegraphs/ holds the committed
ones).
"""

from __future__ import annotations

import argparse
import shutil
import subprocess
import sys
import time
import types
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import run  # noqa: E402  (the harness: server start, loading, wrk)

OUT = run.BENCH / "results" / "profiles"
WORKLOADS = ("heartbeat", "register", *run.FETCHES, "regen")


def perf_record(pid: int, data: Path) -> subprocess.Popen:
    return subprocess.Popen(
        ["perf", "record", "-e", "cpu-clock", "-F", "999", "--call-graph", "dwarf,16384", "-o", str(data),
         "-p", str(pid)], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)


def perf_reports(data: Path, stem: Path) -> None:
    def report(args: list[str]) -> str:
        p = subprocess.run(["perf", "report", "-i", str(data), "--stdio", "-g", "none", *args],
                           capture_output=True, text=True, timeout=600)
        lines = [ln.rstrip()[:220] for ln in p.stdout.splitlines() if ln.strip() and not ln.startswith("#")]
        return "\n".join(lines)

    self_txt = report(["--no-children", "--sort", "dso,symbol", "--percent-limit", "0.3"])
    stem.with_suffix(".self.txt").write_text(self_txt + "\n")
    children = report(["--children", "--sort", "symbol", "--percent-limit", "1"])
    keep = [ln for ln in children.splitlines()
            if "heureka" in ln or "miniz" in ln or "flate" in ln or "malloc" in ln or "memmove" in ln
            or "clear_page" in ln or "serde" in ln]
    stem.with_suffix(".children.txt").write_text("\n".join(keep) + "\n")
    print(f"\n== {stem.name}: top functions by own time (all: {stem.with_suffix('.self.txt')})")
    print("\n".join(self_txt.splitlines()[:25]))


def flamegraph(data: Path, svg: Path, title: str) -> None:
    """perf script | inferno-collapse-perf | inferno-flamegraph > svg."""
    script = subprocess.run(["perf", "script", "-i", str(data)], capture_output=True, timeout=1800)
    folded = subprocess.run(["inferno-collapse-perf"], input=script.stdout, capture_output=True, timeout=600)
    graph = subprocess.run(["inferno-flamegraph", "--title", title, "--width", "1400"], input=folded.stdout,
                           capture_output=True, timeout=600)
    if graph.returncode != 0:
        raise RuntimeError(f"inferno-flamegraph failed: {graph.stderr.decode()[:500]}")
    svg.write_bytes(graph.stdout)
    print(f"flamegraph: {svg}")


def main(argv: list[str]) -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("workloads", nargs="*", metavar="WORKLOAD",
                   help=f"any of {', '.join(WORKLOADS)} (default: heartbeat register full_fetch regen)")
    p.add_argument("--n", type=int, default=10000, help="instances loaded first (default 10000)")
    p.add_argument("--seconds", type=int, default=8, help="seconds per profiled run (default 8)")
    p.add_argument("--skip-build", action="store_true")
    p.add_argument("--out", type=Path, default=OUT, help="where the text summaries and flamegraphs go")
    p.add_argument("--flamegraph", action="store_true", help="also draw WORKLOAD-N.svg (needs inferno)")
    a = p.parse_args(argv)
    a.workloads = a.workloads or ["heartbeat", "register", "full_fetch", "regen"]
    for w in a.workloads:
        if w not in WORKLOADS:
            p.error(f"unknown workload {w!r}")
    if not shutil.which("perf") or not shutil.which("wrk"):
        print("profile: needs perf and wrk on PATH", file=sys.stderr)
        return 2
    if a.flamegraph and not (shutil.which("inferno-collapse-perf") and shutil.which("inferno-flamegraph")):
        print("profile: --flamegraph needs inferno on PATH (cargo install inferno)", file=sys.stderr)
        return 2
    errors = run.build(["heureka"], a.skip_build)
    if errors:
        print(errors["heureka"], file=sys.stderr)
        return 1
    OUT.mkdir(parents=True, exist_ok=True)
    a.out.mkdir(parents=True, exist_ok=True)
    cfg = types.SimpleNamespace(threads=2, connections=64, wrk_timeout=10, warmup=1, duration=a.seconds)
    # registration last: it grows the registry for everything after it
    order = sorted(set(a.workloads), key=lambda w: (w == "register", WORKLOADS.index(w)))
    srv = run.start_server("heureka", OUT, f"profile-{a.n}")
    try:
        run.load_instances(srv, a.n, run.napps_for(a.n), {204})
        run.payload_info(srv, a.n, check_count=True)
        for wl in order:
            data = OUT / f"perf-{wl}-{a.n}.data"
            if wl != "regen":
                run.run_workload_round(srv, wl, a.n, cfg, OUT, None)  # warm-up, not recorded
            rec = perf_record(srv.proc.pid, data)
            time.sleep(0.5)  # perf attached
            try:
                if wl == "regen":
                    run.propagation(srv, a.n, cap_s=10, samples=10_000, budget_s=a.seconds)
                else:
                    res = run.run_workload_round(srv, wl, a.n, cfg, OUT, 0)
                    run.log(f"{wl}: {res['rps']:,.0f} req/s under perf, "
                            f"{res.get('server_cpu_us_per_req')} µs server CPU per request")
            finally:
                rec.send_signal(2)
                rec.wait(timeout=120)
            perf_reports(data, a.out / f"{wl}-{a.n}")
            if a.flamegraph:
                flamegraph(data, a.out / f"{wl}-{a.n}.svg", f"Heureka {wl} at N={a.n:,} (perf cpu-clock)")
    finally:
        srv.stop()
        run.stop_all()
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
