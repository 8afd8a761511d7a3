#!/usr/bin/env python3
"""Read-cache figures for issue 10: plain full fetch and delta fetch at one registry size,
Heureka against the ceiling (bench/baseline) in the same run. Standard library only; reuses
run.py's server start-up, loading and wrk helpers.

    python3 bench/doccache.py --n 100000 [--heureka PATH] [--skip-build]

Per server: wrk JSON full fetch without gzip (-c8: 100k bodies are ~95 MB each), and the
gzip delta holding all N instances (-c64, as run.py's delta workload, re-registered first);
then single reads right after one registration (the cost a change puts on the next reader).
"""

import argparse
import http.client
import json
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import run  # noqa: E402


class Cfg:
    threads = 2
    connections = 64
    wrk_timeout = 30


def plain_script() -> Path:
    path = Path("/tmp/heureka-fetch-plain.lua")
    path.write_text(f'local common = dofile("{run.WRK_DIR}/common.lua")\n'
                    'done = common.done\nwrk.method = "GET"\n'
                    'wrk.headers["Accept"] = "application/json"\n')
    return path


def wrk(srv, script, path, connections, duration, log_dir, tag):
    cfg = Cfg()
    cfg.connections = connections
    res = run.run_wrk(srv, str(script), path, [], duration, cfg, log_dir, tag)
    return {k: res.get(k) for k in ("rps", "p50_ms", "p99_ms", "server_cpu_us_per_req",
                                    "non2xx", "socket_errors", "other_cpu_share")}


def after_change(srv, n, napps, path, headers, samples):
    """Register one new instance, then time one read: what the change costs the next reader."""
    times = []
    for k in range(samples):
        conn = http.client.HTTPConnection("127.0.0.1", srv.port, timeout=60)
        iid = f"doccache-{k}-{time.time_ns()}"
        body = run.register_body(iid, 0, "10.9.9.9")
        conn.request("POST", "/eureka/apps/BENCH-APP-0", body=body,
                     headers={"Content-Type": "application/json"})
        resp = conn.getresponse()
        resp.read()
        assert resp.status == 204, resp.status
        t0 = time.perf_counter()
        status, data, _ = run.http_get(conn, path, headers)
        times.append((time.perf_counter() - t0) * 1000)
        assert status == 200
        conn.close()
    return {"median_ms": round(statistics.median(times), 1), "max_ms": round(max(times), 1)}


def main() -> int:
    p = argparse.ArgumentParser()
    p.add_argument("--n", type=int, default=100000)
    p.add_argument("--heureka", help="heureka binary (default target/release/heureka)")
    p.add_argument("--duration", type=int, default=5, help="seconds of the plain full fetch run")
    p.add_argument("--delta-duration", type=int, default=15,
                   help="seconds of the delta run: it includes the first build after the "
                        "re-registration, which alone can take seconds at 100,000")
    p.add_argument("--skip-build", action="store_true")
    p.add_argument("--out", default="/tmp/doccache-bench.json")
    a = p.parse_args()
    errors = run.build(["heureka", "baseline"], a.skip_build)
    if errors:
        print(errors, file=sys.stderr)
        return 1
    if a.heureka:
        run.RUN_BIN["heureka"] = a.heureka
    log_dir = Path("/tmp/doccache-logs")
    log_dir.mkdir(exist_ok=True)
    n, napps = a.n, run.napps_for(a.n)
    out = {"n": n, "heureka_bin": str(run.RUN_BIN["heureka"])}
    try:
        h = run.start_server("heureka", log_dir, "doccache")
        run.load_instances(h, n, napps, {204})
        conn = http.client.HTTPConnection("127.0.0.1", h.port, timeout=60)
        _, plain, _ = run.http_get(conn, "/eureka/apps", {"Accept": "application/json"})
        _, gz, _ = run.http_get(conn, "/eureka/apps/delta",
                                {"Accept": "application/json", "Accept-Encoding": "gzip"})
        conn.close()
        out["plain_full_bytes"], out["gzip_delta_bytes"] = len(plain), len(gz)
        out["load_before"] = open("/proc/loadavg").read().split()[:3]
        script = plain_script()
        wrk(h, script, "/eureka/apps", 8, 2, log_dir, "plain-warm")
        out["heureka_plain_full"] = wrk(h, script, "/eureka/apps", 8, a.duration, log_dir, "plain")
        out["heureka_plain_full_after_change"] = after_change(
            h, n, napps, "/eureka/apps", {"Accept": "application/json"}, 7)
        out["heureka_gzip_full_after_change"] = after_change(
            h, n, napps, "/eureka/apps", {"Accept": "application/json", "Accept-Encoding": "gzip"}, 7)
        run.load_instances(h, n, napps, {204})
        out["heureka_delta"] = wrk(h, "fetch.lua", "/eureka/apps/delta", 64, a.delta_duration, log_dir,
                                  "delta")
        out["heureka_delta_after_change"] = after_change(
            h, n, napps, "/eureka/apps/delta", {"Accept": "application/json", "Accept-Encoding": "gzip"}, 5)
        h.stop()
        c = run.start_server("baseline", log_dir, "doccache",
                             [f"--payload-bytes={len(plain)}", f"--delta-payload-bytes={len(gz)}"])
        wrk(c, script, "/eureka/apps", 8, 2, log_dir, "c-plain-warm")
        out["ceiling_plain_full"] = wrk(c, script, "/eureka/apps", 8, a.duration, log_dir, "c-plain")
        out["ceiling_delta"] = wrk(c, "fetch.lua", "/eureka/apps/delta", 64, a.delta_duration, log_dir,
                                  "c-delta")
        c.stop()
        out["load_after"] = open("/proc/loadavg").read().split()[:3]
    finally:
        run.stop_all()
    for kind in ("plain_full", "delta"):
        hh, cc = out[f"heureka_{kind}"], out[f"ceiling_{kind}"]
        if hh.get("server_cpu_us_per_req") and cc.get("server_cpu_us_per_req"):
            out[f"{kind}_cpu_ratio"] = round(hh["server_cpu_us_per_req"] / cc["server_cpu_us_per_req"], 2)
        if hh.get("p99_ms") and cc.get("p99_ms"):
            out[f"{kind}_p99_ratio"] = round(hh["p99_ms"] / cc["p99_ms"], 2)
    Path(a.out).write_text(json.dumps(out, indent=2))
    print(json.dumps(out, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
