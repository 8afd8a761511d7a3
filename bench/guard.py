#!/usr/bin/env python3
"""The regression guard on the heartbeat (issue 37): Heureka's server CPU per heartbeat over the
trivial server's (bench/baseline), both measured in the same run, must stay within a margin of the
committed figure (bench/results/guard.json). `bench/run.py --smoke` runs it, so CI fails when a
change makes heartbeats dearer relative to the physical limit of the machine it runs on.

    python3 bench/guard.py [--heureka PATH] [--skip-build] [--rounds 7] [--duration 2]
    python3 bench/guard.py --commit      # measure and write the figure as the new reference
    python3 bench/guard.py --repeat 10   # the guard's own spread: 10 runs, each printed

A ratio rather than a time: the trivial server pays the machine's cost of a request (the kernel's
sockets, hyper's parsing and writing, the scheduler) and wrk's load on the same cores, so what a
loaded or slower machine adds to both largely cancels. The rounds are interleaved (one order, then
the reverse) and the ratio is the median of the per-round ratios.
"""

import argparse
import json
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import run  # noqa: E402

REFERENCE = run.BENCH / "results" / "guard.json"
LOG_DIR = Path("/tmp/heureka-guard")
INSTANCES = 1000
# Over the committed ratio by more than this fails. bench/results/guard.md says how it was chosen:
# the spread of repeated runs on an idle and on a loaded machine, and in CI.
MARGIN = 0.20
# How long a run waits for the machine's other work (a server of an earlier benchmark shutting
# down, a build) to leave the CPUs idle before measuring.
QUIET_WAIT_S = 30


class Cfg:
    threads = 2
    connections = 8
    wrk_timeout = 10


def measure(rounds: int, duration: int) -> dict:
    """One guard run: both servers started, loaded and warmed, then `rounds` interleaved rounds."""
    busy = run.wait_for_quiet(QUIET_WAIT_S)
    servers = {key: run.start_server(key, LOG_DIR, "guard") for key in ("heureka", "baseline")}
    try:
        napps = run.napps_for(INSTANCES)
        for srv in servers.values():
            run.load_instances(srv, INSTANCES, napps, {200} if srv.key == "baseline" else {204})
        args = [str(INSTANCES), str(napps), str(Cfg.threads)]
        for key, srv in servers.items():  # warm-up: connections, caches and code paths hot
            run.run_wrk(srv, "heartbeat.lua", "", args, 1, Cfg, LOG_DIR, f"{key}-warm")
        cpu: dict[str, list[float]] = {key: [] for key in servers}
        for r in range(rounds):
            order = list(servers) if r % 2 == 0 else list(reversed(servers))
            for key in order:
                res = run.run_wrk(servers[key], "heartbeat.lua", "", args, duration, Cfg, LOG_DIR, f"{key}-{r}")
                if res["non2xx"] or res["socket_errors"] or "server_cpu_us_per_req" not in res:
                    raise run.BenchError(f"heartbeats on {key}: {res['non2xx']} non-2xx, "
                                         f"{res['socket_errors']} socket errors")
                cpu[key].append(res["server_cpu_us_per_req"])
    finally:
        for srv in servers.values():
            run.stop_process(srv.proc)
    ratios = [h / b for h, b in zip(cpu["heureka"], cpu["baseline"])]
    return {
        "ratio": round(statistics.median(ratios), 3),
        "min": round(min(ratios), 3), "max": round(max(ratios), 3),
        "heureka_us": statistics.median(cpu["heureka"]),
        "baseline_us": statistics.median(cpu["baseline"]),
        "load": open("/proc/loadavg").read().split()[0],
        "busy_before": round(busy, 2),
    }


def line(result: dict) -> str:
    return (f"heartbeat CPU {result['heureka_us']:.1f} µs / trivial server {result['baseline_us']:.1f} µs "
            f"= {result['ratio']:.3f} (rounds {result['min']:.3f}-{result['max']:.3f}, load {result['load']})")


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--heureka", help="the Heureka binary (default: build it)")
    p.add_argument("--skip-build", action="store_true")
    p.add_argument("--rounds", type=int, default=7)
    p.add_argument("--duration", type=int, default=2)
    p.add_argument("--repeat", type=int, default=1, help="run the guard this many times, each printed")
    p.add_argument("--commit", action="store_true", help="write the measured ratio as the reference")
    a = p.parse_args()
    LOG_DIR.mkdir(exist_ok=True)
    errors = run.build(["heureka", "baseline"], a.skip_build or bool(a.heureka))
    if errors:
        print(errors, file=sys.stderr)
        return 1
    if a.heureka:
        run.RUN_BIN["heureka"] = Path(a.heureka)
    results = []
    try:
        for _ in range(a.repeat):
            results.append(measure(a.rounds, a.duration))
            print(f"guard: {line(results[-1])}", flush=True)
    finally:
        run.stop_all()
    result = results[-1] if a.repeat == 1 else {**results[-1], "ratio": statistics.median(r["ratio"] for r in results)}
    if a.commit:
        reference = {"ratio": result["ratio"], "instances": INSTANCES, "rounds": a.rounds,
                     "duration_s": a.duration, "measured": time.strftime("%Y-%m-%d"),
                     "runs": [r["ratio"] for r in results]}
        REFERENCE.write_text(json.dumps(reference, indent=2) + "\n")
        print(f"guard: reference written: {result['ratio']:.3f}")
        return 0
    reference = json.loads(REFERENCE.read_text())["ratio"]
    limit = reference * (1 + MARGIN)
    if a.repeat > 1:
        print(f"guard: {a.repeat} runs: ratios {[r['ratio'] for r in results]}, reference {reference:.3f}")
        return 0
    if result["ratio"] > limit:
        print(f"guard: FAILED: heartbeat CPU is {result['ratio']:.3f}× the trivial server's, over "
              f"{limit:.3f} (the committed {reference:.3f} + {MARGIN:.0%}); a change made heartbeats "
              "dearer, or the reference in bench/results/guard.json is out of date", file=sys.stderr)
        return 1
    print(f"guard: passed: {result['ratio']:.3f} ≤ {limit:.3f} (committed {reference:.3f} + {MARGIN:.0%})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
