#!/usr/bin/env python3
"""What namespaces cost (issue 36): CPU per heartbeat and per full fetch of a namespace of 100
instances alone on its server, and the same among 100 namespaces of 100 instances each; memory and
idle CPU per empty namespace. The trivial server's heartbeat in the same run gives the scale.

    python3 bench/namespaces.py [--heureka PATH] [--skip-build] [--namespaces 100] [--per-ns 100]
                                [--rounds 5] [--duration 3] [--empty 1000]

Servers, started side by side and measured in interleaved rounds (one order, then the reverse):
  * one:  Heureka, 100 instances in the default namespace, reached as today (/eureka/...);
  * many: Heureka, 100 namespaces (ns-0 .. ns-99) of 100 instances each, reached by path
          (/ns/ns-k/eureka/...): heartbeats cycle over all 10,000; a team's fetch asks one
          namespace (another each round), spread fetches cycle over all the namespaces;
  * wide: Heureka, the same 10,000 instances in the default namespace as 100 applications, whose
          heartbeats those of `many` are compared with;
  * the ceiling (bench/baseline): a trivial hyper server's heartbeat, for scale.
Each figure is the server's CPU (utime+stime from /proc) over the requests wrk sent; ratios are
paired per round (many/one of the same round) and reported as the median with the min-max.
Empty namespaces: RSS and idle CPU of a server declaring --empty namespaces beside one declaring
none, after both are idle.
Output: bench/results/namespaces.json and namespaces.md.
"""

import argparse
import concurrent.futures
import http.client
import json
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import run  # noqa: E402

RESULTS = run.BENCH / "results"
LOG_DIR = Path("/tmp/heureka-namespaces-bench")


class Cfg:
    threads = 2
    connections = 8
    wrk_timeout = 60


def register_all(srv: run.Running, prefixes: list[str], per: int, napps: int, threads: int = 4) -> float:
    """Registers instances 0..per-1 in each namespace prefix, over one connection per thread."""
    jobs = [(prefix, j) for prefix in prefixes for j in range(per)]

    def part(k: int) -> None:
        conn = http.client.HTTPConnection("127.0.0.1", srv.port, timeout=60)
        for prefix, j in jobs[k::threads]:
            app = j % napps
            body = run.register_body(run.instance_id(j, napps), app, run.ip_of(j), run.LOAD_LEASE_S)
            conn.request("POST", f"{prefix}/eureka/apps/BENCH-APP-{app}", body=body,
                         headers={"Content-Type": "application/json"})
            response = conn.getresponse()
            response.read()
            if response.status != 204:
                raise run.BenchError(f"register {prefix} {j}: HTTP {response.status}")
        conn.close()

    t0 = time.perf_counter()
    with concurrent.futures.ThreadPoolExecutor(threads) as pool:
        list(pool.map(part, range(threads)))
    return round(time.perf_counter() - t0, 2)


def wrk(srv: run.Running, mode: str, ns: int, per: int, napps: int, duration: int, tag: str) -> dict:
    args = [mode, str(ns), str(per), str(napps), str(Cfg.threads)]
    return run.run_wrk(srv, "namespaced.lua", "", args, duration, Cfg, LOG_DIR, tag)


def plans(a, napps: int) -> dict:
    """Per workload, the servers it compares (the first two are the ratio's denominator and
    numerator) and what wrk sends each: (server, mode, namespace argument, instances per
    namespace, applications per namespace)."""
    per = a.per_ns
    return {
        # Heartbeats over the same 10,000 instances, in 100 namespaces or in one.
        "heartbeat": [("wide", "heartbeat", 0, a.namespaces * per, a.namespaces),
                      ("many", "heartbeat", a.namespaces, per, napps),
                      ("ceiling", "heartbeat", 0, per, napps)],
        # A team's full fetch of its own namespace, with 99 others beside it, against the same
        # fetch on a server with one namespace: what the dispatch and the per-namespace state add.
        "fetch": [("one", "fetch", 0, per, napps), ("many", "fetch-at", None, per, napps)],
        # Fetches spread over the 100 namespaces' documents against one document repeated: 100
        # distinct answers leave the CPU caches, which one namespace cannot show (it has one
        # full document), so this row is for reference, not what namespaces add.
        "spread": [("one", "fetch", 0, per, napps), ("many", "fetch", a.namespaces, per, napps)],
    }


def measure(a) -> dict:
    napps = max(1, a.per_ns // 10)
    servers = {
        "one": run.start_server("heureka", LOG_DIR, "one"),
        "many": run.start_server("heureka", LOG_DIR, "many", [f"--heureka.namespaces.max={a.namespaces}"]),
        "wide": run.start_server("heureka", LOG_DIR, "wide"),
        "ceiling": run.start_server("baseline", LOG_DIR, "ceiling"),
    }
    out: dict = {"namespaces": a.namespaces, "per_ns": a.per_ns, "apps_per_ns": napps,
                 "heureka_bin": str(run.RUN_BIN["heureka"]),
                 "load_before": open("/proc/loadavg").read().split()[:3]}
    out["load_one_s"] = register_all(servers["one"], [""], a.per_ns, napps)
    out["load_many_s"] = register_all(servers["many"], [f"/ns/ns-{k}" for k in range(a.namespaces)],
                                      a.per_ns, napps)
    # The same 10,000 instances in one namespace, as 100 applications of 100 instances each.
    out["load_wide_s"] = register_all(servers["wide"], [""], a.namespaces * a.per_ns, a.namespaces)
    rounds: dict = {}
    for workload, plan in plans(a, napps).items():
        def send(key, mode, ns, per, apps, seconds, tag, r=0):
            # fetch-at names one namespace per round, so no single document is favoured.
            ns = (r * 37) % a.namespaces if ns is None else ns
            return wrk(servers[key], mode, ns, per, apps, seconds, tag)
        for key, mode, ns, per, apps in plan:  # warm-up: caches built, code paths hot
            send(key, mode, ns, per, apps, 1, f"{workload}-{key}-warm")
        for r in range(a.rounds):
            order = plan if r % 2 == 0 else list(reversed(plan))
            for key, mode, ns, per, apps in order:
                res = send(key, mode, ns, per, apps, a.duration, f"{workload}-{key}-{r}", r)
                if res["non2xx"] or res["socket_errors"]:
                    raise run.BenchError(f"{workload} on {key}: {res['non2xx']} non-2xx, "
                                         f"{res['socket_errors']} socket errors")
                rounds.setdefault(f"{workload}_{key}", []).append(res)
        base, other = plan[0][0], plan[1][0]
        low = [r["server_cpu_us_per_req"] for r in rounds[f"{workload}_{base}"]]
        high = [r["server_cpu_us_per_req"] for r in rounds[f"{workload}_{other}"]]
        ratios = [h / lo for h, lo in zip(high, low)]
        out[workload] = {
            "base": base, "other": other,
            "base_us": statistics.median(low), "other_us": statistics.median(high),
            "ratio": round(statistics.median(ratios), 3),
            "min": round(min(ratios), 3), "max": round(max(ratios), 3),
            "other_cpu_share": max(r.get("other_cpu_share", 0) for r in rounds[f"{workload}_{other}"]),
        }
    ceiling = [r["server_cpu_us_per_req"] for r in rounds["heartbeat_ceiling"]]
    out["heartbeat"]["ceiling_us"] = statistics.median(ceiling)
    for key in ("one", "many", "wide"):
        out[f"rss_{key}_mib"] = round(servers[key].rss() / 2**20, 1)
    for srv in servers.values():
        run.stop_process(srv.proc)
    out["empty"] = empty_namespaces(a.empty)
    return out


def empty_namespaces(count: int) -> dict:
    """RSS and idle CPU of `count` declared, empty namespaces: a server declaring them beside one
    declaring none, both idle for 10 s after start-up."""
    names = ",".join(f"ns-{k}" for k in range(count))
    bare = run.start_server("heureka", LOG_DIR, "bare")
    declared = run.start_server("heureka", LOG_DIR, "declared", [
        f"--heureka.namespaces.max={count}", f"--heureka.namespaces.declared={names}"])
    time.sleep(2)
    cpu0 = {k: s.cpu() for k, s in (("bare", bare), ("declared", declared))}
    time.sleep(10)
    cpu1 = {k: s.cpu() for k, s in (("bare", bare), ("declared", declared))}
    rss = {"bare": bare.rss(), "declared": declared.rss()}
    for srv in (bare, declared):
        run.stop_process(srv.proc)
    idle_ms = {k: (cpu1[k] - cpu0[k]) * 1000 / 10 for k in cpu0}
    return {
        "count": count,
        "rss_bare_mib": round(rss["bare"] / 2**20, 1),
        "rss_declared_mib": round(rss["declared"] / 2**20, 1),
        "kib_per_namespace": round((rss["declared"] - rss["bare"]) / count / 1024, 1),
        "idle_cpu_ms_per_s_bare": round(idle_ms["bare"], 2),
        "idle_cpu_ms_per_s_declared": round(idle_ms["declared"], 2),
        "idle_cpu_us_per_s_per_namespace": round((idle_ms["declared"] - idle_ms["bare"]) * 1000 / count, 2),
    }


def report(out: dict) -> str:
    hb, fe, sp, em = out["heartbeat"], out["fetch"], out["spread"], out["empty"]

    def row(name: str, w: dict, ceiling: str = "") -> str:
        return (f"| {name} | {w['base_us']:.1f} | {w['other_us']:.1f} | **{w['ratio']:.3f}** "
                f"({w['min']:.3f}–{w['max']:.3f}) | {ceiling} |")

    n, per = out["namespaces"], out["per_ns"]
    lines = [
        "# Namespaces: what they cost",
        "",
        f"Three Heurekas side by side: `one` holds {per} instances in the default namespace, `many` "
        f"{n} namespaces of {per} instances each reached by `/ns/ns-k/eureka`, `wide` the same "
        f"{n * per} instances in the default namespace as {n} applications of {per}. Server CPU per "
        "request, interleaved rounds, median (min–max of the per-round ratio). Load average before: "
        f"{' '.join(out['load_before'])}. `python3 bench/namespaces.py`.",
        "",
        "| request | without namespaces (µs) | with namespaces (µs) | ratio | trivial server (µs) |",
        "|---|---|---|---|---|",
        row(f"heartbeat: one of {n * per} instances in {n} namespaces / in one (`many` / `wide`)", hb,
            f"{hb['ceiling_us']:.1f}"),
        row(f"full fetch of a team's namespace among {n} / of the only one (`many` / `one`)", fe),
        row(f"for reference: full fetches spread over the {n} namespaces / one repeated "
            "(`many` / `one`)", sp),
        "",
        "Fetches are JSON with gzip, as Spring asks. The first two rows are what namespaces add. "
        f"The third adds what {n} distinct cached answers cost the CPU caches against one answer "
        "repeated; one namespace has a single full document, so it has no like-for-like row.",
        "",
        f"RSS: one {out['rss_one_mib']} MiB, many {out['rss_many_mib']} MiB, wide {out['rss_wide_mib']} MiB.",
        "",
        f"Empty namespaces: {em['count']} declared cost {em['kib_per_namespace']} KiB of RSS each "
        f"({em['rss_bare_mib']} MiB without, {em['rss_declared_mib']} MiB with) and "
        f"{em['idle_cpu_us_per_s_per_namespace']} µs of CPU per second each while idle "
        f"({em['idle_cpu_ms_per_s_bare']} ms/s without, {em['idle_cpu_ms_per_s_declared']} ms/s with).",
        "",
    ]
    return "\n".join(lines)


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--heureka", help="the Heureka binary (default: build it)")
    p.add_argument("--skip-build", action="store_true")
    p.add_argument("--namespaces", type=int, default=100)
    p.add_argument("--per-ns", type=int, default=100)
    p.add_argument("--rounds", type=int, default=5)
    p.add_argument("--duration", type=int, default=3)
    p.add_argument("--empty", type=int, default=1000)
    a = p.parse_args()
    LOG_DIR.mkdir(exist_ok=True)
    errors = run.build(["heureka", "baseline"], a.skip_build or bool(a.heureka))
    if errors:
        print(errors, file=sys.stderr)
        return 1
    if a.heureka:
        run.RUN_BIN["heureka"] = Path(a.heureka)
    try:
        out = measure(a)
    finally:
        run.stop_all()
    (RESULTS / "namespaces.json").write_text(json.dumps(out, indent=2) + "\n")
    text = report(out)
    (RESULTS / "namespaces.md").write_text(text)
    print(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
