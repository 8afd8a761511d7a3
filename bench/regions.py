#!/usr/bin/env python3
"""Full fetches that merge remote regions (issue 34): what `GET /eureka/apps?regions=a,b` costs a
server whose two remote regions hold 10,000 instances each (and 10,000 of its own), against a
server holding all 30,000 itself answering a plain `GET /eureka/apps`, the Java server set up as
the first, and the ceiling serving a body of the same size, in one run. Standard library only;
reuses run.py's start-up and wrk helpers.

    python3 bench/regions.py [--n 10000] [--heureka PATH] [--skip-build] [--duration 5]

Per server: wrk JSON full fetches, gzip as a Spring client asks and plain (-c8); then the time of
the first read after a change, local (one registration on the server read) and remote (one
registration in a remote region, once the reading server has fetched it): what a change costs the
next reader. The two remote regions are Heureka servers. Every instance id is distinct; the
applications (n / 10 of them) have the same names in every region, as a service deployed in
several regions does, so the merged document holds as many applications as the local-only one.
Output: bench/results/regions.json and regions.md (ratios against the local-only fetch).
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
from doccache import plain_script  # noqa: E402

RESULTS = run.BENCH / "results"
REGIONS = ("region-a", "region-b")


class Cfg:
    threads = 2
    connections = 8
    wrk_timeout = 60


def register(port: int, prefix: str, i: int, napps: int, conn=None) -> None:
    own = conn or http.client.HTTPConnection("127.0.0.1", port, timeout=60)
    ip = run.ip_of(i)
    app = i % napps
    body = run.register_body(f"{prefix}-{ip}:bench-app-{app}:8080", app, ip, run.LOAD_LEASE_S)
    own.request("POST", f"/eureka/apps/BENCH-APP-{app}", body=body,
                headers={"Content-Type": "application/json"})
    resp = own.getresponse()
    resp.read()
    if resp.status != 204:
        raise run.BenchError(f"registering {prefix}-{i} on :{port}: HTTP {resp.status}")
    if conn is None:
        own.close()


def load(srv: run.Running, prefix: str, n: int, napps: int, threads: int = 4) -> float:
    """Registers n instances whose ids start with prefix, over one keep-alive connection per thread."""
    def part(k: int) -> None:
        conn = http.client.HTTPConnection("127.0.0.1", srv.port, timeout=60)
        for i in range(k, n, threads):
            register(srv.port, prefix, i, napps, conn)
        conn.close()
    t0 = time.perf_counter()
    with concurrent.futures.ThreadPoolExecutor(threads) as pool:
        list(pool.map(part, range(threads)))
    return round(time.perf_counter() - t0, 2)


def fetch(port: int, path: str, headers: dict | None = None) -> tuple[int, bytes]:
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=120)
    try:
        status, body, hdrs = run.http_get(conn, path, {"Accept": "application/json", **(headers or {})})
        return status, run.decoded(body, hdrs)
    finally:
        conn.close()


def instances_in(port: int, path: str) -> int:
    status, body = fetch(port, path)
    return run.count_instances(body) if status == 200 else -1


def wait_for(what: str, check, limit_s: float = 180.0) -> float:
    t0 = time.perf_counter()
    while not check():
        if time.perf_counter() - t0 > limit_s:
            raise run.BenchError(f"{what}: not within {limit_s:.0f} s")
        time.sleep(0.2)
    return round(time.perf_counter() - t0, 2)


def first_read_after(port: int, path: str, change, seen, samples: int) -> dict:
    """Makes a change, waits until the reading server shows it (seen), then times one read."""
    times = []
    for k in range(samples):
        change(k)
        wait_for("the change to show", lambda: seen(k), 120)
        conn = http.client.HTTPConnection("127.0.0.1", port, timeout=120)
        t0 = time.perf_counter()
        status, _, _ = run.http_get(conn, path, {"Accept": "application/json", "Accept-Encoding": "gzip"})
        times.append((time.perf_counter() - t0) * 1000)
        conn.close()
        if status != 200:
            raise run.BenchError(f"{path}: HTTP {status}")
    return {"median_ms": round(statistics.median(times), 2), "max_ms": round(max(times), 2),
            "samples": samples}


# The delta queue's retention: short, so that the instances loaded for the run have left every
# delta (the local one and the regions') before the deltas are measured, as in a registry whose
# instances registered minutes ago.
RETENTION_MS = 15000
RETENTION = [f"--eureka.server.retention-time-in-m-s-in-delta-queue={RETENTION_MS}",
             "--eureka.server.delta-retention-timer-interval-in-ms=1000"]


def region_args(remotes: list[run.Running], interval_s: int) -> list[str]:
    args = [f"--eureka.server.remote-region-urls-with-name.{name}=http://127.0.0.1:{r.port}/eureka/"
            for name, r in zip(REGIONS, remotes)]
    return args + [f"--eureka.server.remote-region-registry-fetch-interval={interval_s}"]


def wrk_pair(srv: run.Running, path: str, log_dir: Path, tag: str, duration: int) -> dict:
    cfg = Cfg()
    out = {}
    for name, script, args in (("gzip", "fetch.lua", ["json", "gzip"]), ("plain", str(plain_script()), [])):
        run.run_wrk(srv, script, path, args, 2, cfg, log_dir, f"{tag}-{name}-warm")
        res = run.run_wrk(srv, script, path, args, duration, cfg, log_dir, f"{tag}-{name}")
        out[name] = {k: res.get(k) for k in ("rps", "p50_ms", "p99_ms", "server_cpu_us_per_req",
                                             "non2xx", "socket_errors", "other_cpu_share")}
    return out


def measure(a) -> dict:
    n, napps = a.n, max(1, a.n // 10)
    total = 3 * n
    merged = "/eureka/apps?regions=" + ",".join(REGIONS)
    log_dir = Path("/tmp/regions-bench-logs")
    log_dir.mkdir(exist_ok=True)
    out: dict = {"n_per_region": n, "apps": napps, "heureka_bin": str(run.RUN_BIN["heureka"]),
                 "load_before": open("/proc/loadavg").read().split()[:3]}
    remotes = [run.start_server("heureka", log_dir, name, RETENTION) for name in REGIONS]
    for name, remote in zip(REGIONS, remotes):
        out[f"load_{name}_s"] = load(remote, name, n, napps)
    servers = {
        "heureka-regions": run.start_server("heureka", log_dir, "local",
                                            region_args(remotes, a.interval) + RETENTION),
        "heureka-local-only": run.start_server("heureka", log_dir, "local-only", RETENTION),
    }
    load(servers["heureka-regions"], "local", n, napps)
    load(servers["heureka-local-only"], "only", total, napps)
    if not a.no_java:
        servers["java-regions"] = run.start_server("java", log_dir, "java",
                                                   region_args(remotes, a.interval) + RETENTION)
        load(servers["java-regions"], "local", n, napps)
    paths = {key: (merged if key.endswith("-regions") else "/eureka/apps") for key in servers}
    for key, srv in servers.items():
        out[f"{key}_ready_s"] = wait_for(f"{key} serving {total} instances",
                                         lambda s=srv, p=paths[key]: instances_in(s.port, p) == total, 300)
    for key in ("heureka-regions", "heureka-local-only"):
        delta = paths[key].replace("/apps", "/apps/delta")
        out[f"{key}_delta_emptied_s"] = wait_for(
            f"{key}: the loaded instances out of its delta",
            lambda p=servers[key].port, d=delta: instances_in(p, d) == 0, 120)
    _, body = fetch(servers["heureka-regions"].port, merged)
    out["merged_plain_bytes"] = len(body)
    conn = http.client.HTTPConnection("127.0.0.1", servers["heureka-regions"].port, timeout=120)
    _, gz, _ = run.http_get(conn, merged, {"Accept": "application/json", "Accept-Encoding": "gzip"})
    conn.close()
    out["merged_gzip_bytes"] = len(gz)
    for key, srv in servers.items():
        out[key] = wrk_pair(srv, paths[key], log_dir, key, a.duration)
    out["ceiling"] = ceiling(len(body), len(gz), log_dir, a.duration)
    for key in ("heureka-regions", "heureka-local-only"):
        srv = servers[key]
        for doc, read in (("full", paths[key]), ("delta", paths[key].replace("/apps", "/apps/delta"))):
            count = {"k": instances_in(srv.port, paths[key])}

            def change(k, srv=srv, key=key, doc=doc):
                register(srv.port, f"after-{doc}-{key}", k, napps)
                count["k"] += 1

            suffix = "" if doc == "full" else "_delta"
            out[f"{key}_first_read_after_local_change{suffix}"] = first_read_after(
                srv.port, read, change,
                lambda k, s=srv, p=paths[key]: instances_in(s.port, p) == count["k"], a.samples)
    srv, remote = servers["heureka-regions"], remotes[0]
    count = {"k": instances_in(srv.port, merged)}

    def remote_change(k):
        register(remote.port, "after-remote", k, napps)
        count["k"] += 1

    out["heureka-regions_first_read_after_remote_change"] = first_read_after(
        srv.port, merged, remote_change, lambda k: instances_in(srv.port, merged) == count["k"], a.samples)
    out["load_after"] = open("/proc/loadavg").read().split()[:3]
    return out


def ceiling(plain_bytes: int, gzip_bytes: int, log_dir: Path, duration: int) -> dict:
    c = run.start_server("baseline", log_dir, "regions", [f"--payload-bytes.json.plain={plain_bytes}",
                                                           f"--payload-bytes.json.gzip={gzip_bytes}"])
    try:
        return wrk_pair(c, "/eureka/apps", log_dir, "ceiling", duration)
    finally:
        c.stop()


def ratio(a, b):
    return round(a / b, 2) if a and b else None


def report(out: dict) -> str:
    rows = []
    base = out["heureka-local-only"]
    for key, label in (("heureka-regions", f"Heureka, {out['n_per_region']:,} local + 2 regions"),
                       ("heureka-local-only", f"Heureka, {3 * out['n_per_region']:,} local"),
                       ("java-regions", f"Java, {out['n_per_region']:,} local + 2 regions"),
                       ("ceiling", "Ceiling, same body")):
        if key not in out:
            continue
        for enc in ("gzip", "plain"):
            r = out[key][enc]
            rows.append(f"| {label} | {enc} | {r['rps']:,} | {r['p99_ms']} | {r['server_cpu_us_per_req']} | "
                        f"{ratio(r['server_cpu_us_per_req'], base[enc]['server_cpu_us_per_req'])} |")
    lines = [
        "# Full fetches merging remote regions",
        "",
        f"`python3 bench/regions.py --n {out['n_per_region']}`: two remote regions (Heureka servers) of "
        f"{out['n_per_region']:,} instances each over {out['apps']:,} applications; the reading server holds "
        f"{out['n_per_region']:,} of its own and answers `GET /eureka/apps?regions=region-a,region-b` "
        f"({out['merged_plain_bytes']:,} bytes of JSON), against a server holding all {3 * out['n_per_region']:,} "
        "answering `GET /eureka/apps`. wrk, 8 connections, JSON; CPU is the server's (utime+stime) per request. "
        f"Load average before {' '.join(out['load_before'])}, after {' '.join(out['load_after'])}.",
        "",
        "| server | encoding | requests/s | p99 ms | server CPU µs/request | CPU vs local-only |",
        "|---|---|---:|---:|---:|---:|",
        *rows,
        "",
        "First read after a change (gzip JSON; the change made, then waited for until the server shows it):",
        "",
        "| server, document, change | samples | median ms | max ms |",
        "|---|---|---:|---:|",
    ]
    for key, what in (("heureka-regions_first_read_after_local_change", "Heureka with regions, full, local registration"),
                      ("heureka-regions_first_read_after_remote_change", "Heureka with regions, full, remote registration"),
                      ("heureka-local-only_first_read_after_local_change", "Heureka local-only, full, registration"),
                      ("heureka-regions_first_read_after_local_change_delta", "Heureka with regions, delta, local registration"),
                      ("heureka-local-only_first_read_after_local_change_delta", "Heureka local-only, delta, registration")):
        r = out[key]
        lines.append(f"| {what} | {r['samples']} samples | {r['median_ms']} | {r['max_ms']} |")
    return "\n".join(lines) + "\n"


def main() -> int:
    p = argparse.ArgumentParser()
    p.add_argument("--n", type=int, default=10000, help="instances per region (and held locally)")
    p.add_argument("--heureka", help="heureka binary (default target/release/heureka)")
    p.add_argument("--duration", type=int, default=5, help="seconds of each wrk run")
    p.add_argument("--interval", type=int, default=2, help="remote-region-registry-fetch-interval, s")
    p.add_argument("--samples", type=int, default=5, help="first reads after a change, per kind")
    p.add_argument("--no-java", action="store_true")
    p.add_argument("--skip-build", action="store_true")
    p.add_argument("--out", default=str(RESULTS / "regions.json"))
    a = p.parse_args()
    servers = ["heureka", "baseline"] + ([] if a.no_java else ["java"])
    errors = run.build(servers, a.skip_build)
    if errors:
        print(errors, file=sys.stderr)
        return 1
    if a.heureka:
        run.RUN_BIN["heureka"] = Path(a.heureka)
    try:
        out = measure(a)
    finally:
        run.stop_all()
    Path(a.out).write_text(json.dumps(out, indent=2) + "\n")
    md = report(out)
    Path(a.out).with_suffix(".md").write_text(md)
    print(md)
    return 0


if __name__ == "__main__":
    sys.exit(main())
