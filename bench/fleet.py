#!/usr/bin/env python3
"""What the registry's other protocols cost (issue 35): server CPU per answer of Prometheus HTTP SD,
DNS and xDS beside a full Eureka fetch of the same registry, in one run, with the Java server's full
fetch of the same registry and the ceiling serving a body of the same size for scale.

    python3 bench/fleet.py [--n 10000] [--heureka PATH] [--skip-build] [--duration 5] [--no-java]

One Heureka holds n instances over n / 10 applications (10 each) with DNS and xDS on. Measured,
each as the server's CPU (utime+stime from /proc) divided by the answers given:
  * a full Eureka fetch (`GET /eureka/apps`, JSON, gzip as Spring asks and plain), wrk -c8;
  * HTTP SD of every target (`GET /eureka/prometheus/sd`), and of one application (`?app=`), wrk;
    the same with `If-None-Match` (304, what an unchanged registry costs);
  * DNS: A queries for one application each (10 addresses), and SRV, over UDP from two threads;
  * xDS: new ADS streams (interop/go/xds's dump mode, envoyproxy's types) asking Listener, Cluster
    and ClusterLoadAssignment, as gRPC's resolver does, for one application, and for all of them.
Output: bench/results/fleet.json and fleet.md (ratios against Heureka's full fetch).
"""

import argparse
import json
import random
import socket
import struct
import subprocess
import sys
import threading
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import run  # noqa: E402
from doccache import plain_script  # noqa: E402
import regions  # noqa: E402
from regions import instances_in, load, wait_for, wrk_pair  # noqa: E402

RESULTS = run.BENCH / "results"
SD_PATH = "/eureka/prometheus/sd"


class Cfg:
    threads = 2
    connections = 8
    wrk_timeout = 60


def headers_script(name: str, headers: dict) -> Path:
    """A wrk script sending fixed headers (the 304 case sends the ETag it was given)."""
    path = Path(f"/tmp/heureka-fleet-{name}.lua")
    lines = [f'local common = dofile("{run.WRK_DIR}/common.lua")', "done = common.done", 'wrk.method = "GET"']
    lines += [f'wrk.headers["{k}"] = "{v.replace(chr(34), chr(92) + chr(34))}"' for k, v in headers.items()]
    path.write_text("\n".join(lines) + "\n")
    return path


def wrk(srv: run.Running, script: Path, path: str, log_dir: Path, tag: str, duration: int) -> dict:
    run.run_wrk(srv, str(script), path, [], 2, Cfg(), log_dir, f"{tag}-warm")
    res = run.run_wrk(srv, str(script), path, [], duration, Cfg(), log_dir, tag)
    return {k: res.get(k) for k in ("rps", "p50_ms", "p99_ms", "server_cpu_us_per_req", "non2xx",
                                    "socket_errors", "other_cpu_share")}


def sd_etag(port: int, path: str) -> str:
    import http.client
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=60)
    conn.request("GET", path)
    resp = conn.getresponse()
    resp.read()
    etag = resp.getheader("ETag")
    conn.close()
    if resp.status != 200 or not etag:
        raise run.BenchError(f"{path}: HTTP {resp.status}, ETag {etag!r}")
    return etag


# --- DNS: raw queries over UDP (the load, not a client under test) ---------------------------

def dns_query(qid: int, name: str, qtype: int) -> bytes:
    labels = b"".join(bytes([len(p)]) + p.encode() for p in name.rstrip(".").split("."))
    return struct.pack(">HHHHHH", qid, 0x0100, 1, 0, 0, 0) + labels + b"\x00" + struct.pack(">HH", qtype, 1)


def dns_load(srv: run.Running, port: int, names: list[str], qtype: int, seconds: float,
             threads: int = 2) -> dict:
    """Queries from `threads` sockets, one outstanding each, for `seconds`; server CPU per answer."""
    counts, errors = [0] * threads, [0] * threads
    stop = time.perf_counter() + seconds

    def blast(k: int) -> None:
        sock = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        sock.settimeout(2)
        rng = random.Random(k)
        qid = 0
        while time.perf_counter() < stop:
            qid = (qid + 1) & 0xFFFF
            sock.sendto(dns_query(qid, rng.choice(names), qtype), ("127.0.0.1", port))
            try:
                answer = sock.recv(65535)
            except socket.timeout:
                errors[k] += 1
                continue
            rcode = answer[3] & 0x0F
            ancount = struct.unpack(">H", answer[6:8])[0]
            if rcode != 0 or ancount == 0:
                errors[k] += 1
            counts[k] += 1
        sock.close()

    cpu0, t0 = srv.cpu(), time.perf_counter()
    workers = [threading.Thread(target=blast, args=(k,)) for k in range(threads)]
    for w in workers:
        w.start()
    for w in workers:
        w.join()
    elapsed, cpu = time.perf_counter() - t0, (srv.cpu() or 0) - (cpu0 or 0)
    answers = sum(counts)
    return {"answers": answers, "qps": round(answers / elapsed), "errors": sum(errors),
            "server_cpu_us_per_answer": round(cpu * 1e6 / answers, 1) if answers else None}


# --- xDS: grpc-go's own xDS client, driven by interop/go/xds -------------------------------------

def xds_tool() -> Path:
    tool = run.ROOT / "interop" / "go" / "xds" / "bin" / "xds"
    subprocess.run(["go", "build", "-o", "bin/xds", "."], cwd=tool.parent.parent, check=True)
    return tool


def xds_load(srv: run.Running, xds_port: int, names: list[str], rounds: int, log_dir: Path, tag: str) -> dict:
    """`rounds` fresh ADS streams (a new connection each), each asking Listener, Cluster and
    ClusterLoadAssignment for `names` and ACKing them, as gRPC's resolver does: the server's
    CPU per stream's answers."""
    cpu0, t0 = srv.cpu(), time.perf_counter()
    proc = subprocess.run([str(xds_tool()), "dump", "-server", f"127.0.0.1:{xds_port}",
                           "-rounds", str(rounds), *names],
                          capture_output=True, text=True, timeout=600)
    elapsed, cpu = time.perf_counter() - t0, (srv.cpu() or 0) - (cpu0 or 0)
    (log_dir / f"xds-{tag}.log").write_text(proc.stdout + proc.stderr)
    if proc.returncode != 0:
        raise run.BenchError(f"xds dump failed: {(proc.stdout + proc.stderr)[-800:]}")
    return {"subscriptions": rounds, "seconds": round(elapsed, 2),
            "server_cpu_us_per_subscription": round(cpu * 1e6 / rounds, 1)}


def measure(a) -> dict:
    n, napps = a.n, max(1, a.n // 10)
    log_dir = Path("/tmp/fleet-bench-logs")
    log_dir.mkdir(exist_ok=True)
    dns_port, xds_port = run.free_port(), run.free_port()
    out: dict = {"n": n, "apps": napps, "heureka_bin": str(run.RUN_BIN["heureka"]),
                 "load_before": open("/proc/loadavg").read().split()[:3]}
    heureka = run.start_server("heureka", log_dir, "fleet", [
        "--heureka.dns.enabled=true", f"--heureka.dns.port={dns_port}",
        "--heureka.xds.enabled=true", f"--heureka.xds.port={xds_port}"])
    out["load_s"] = load(heureka, "fleet", n, napps)
    wait_for(f"{n} instances", lambda: instances_in(heureka.port, "/eureka/apps") == n)
    servers = {"heureka": heureka}
    if not a.no_java:
        servers["java"] = run.start_server("java", log_dir, "fleet")
        load(servers["java"], "fleet", n, napps)
        wait_for(f"java: {n} instances", lambda: instances_in(servers["java"].port, "/eureka/apps") == n, 300)
    for key, srv in servers.items():
        out[f"{key}_full"] = wrk_pair(srv, "/eureka/apps", log_dir, f"{key}-full", a.duration)
    plain = plain_script()
    one_app = f"{SD_PATH}?app=BENCH-APP-7"
    out["sd_all"] = wrk(heureka, plain, SD_PATH, log_dir, "sd-all", a.duration)
    out["sd_one_app"] = wrk(heureka, plain, one_app, log_dir, "sd-one", a.duration)
    out["sd_all_304"] = wrk(heureka, headers_script("sd-304", {"If-None-Match": sd_etag(heureka.port, SD_PATH)}),
                            SD_PATH, log_dir, "sd-304", a.duration)
    names = [f"bench-app-{i}.eureka." for i in range(napps)]
    out["dns_a"] = dns_load(heureka, dns_port, names, 1, a.duration)
    out["dns_srv"] = dns_load(heureka, dns_port, [f"_bench-app-{i}._tcp.eureka." for i in range(napps)],
                              33, a.duration)
    if not a.no_xds:
        out["xds_one"] = xds_load(heureka, xds_port, ["bench-app-7"], a.xds_rounds, log_dir, "one")
        out["xds_all"] = xds_load(heureka, xds_port, [f"bench-app-{i}" for i in range(napps)],
                                  max(1, a.xds_rounds // 20), log_dir, "all")
    out["ceiling"] = ceiling(heureka.port, log_dir, a.duration)
    out["load_after"] = open("/proc/loadavg").read().split()[:3]
    return out


def ceiling(port: int, log_dir: Path, duration: int) -> dict:
    """The ceiling serving bodies of the sizes of Heureka's full fetch, plain and gzip."""
    import http.client
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=60)
    _, body, hdrs = run.http_get(conn, "/eureka/apps", {"Accept": "application/json"})
    _, gz, _ = run.http_get(conn, "/eureka/apps", {"Accept": "application/json", "Accept-Encoding": "gzip"})
    conn.close()
    return regions.ceiling(len(run.decoded(body, hdrs)), len(gz), log_dir, duration)


def ratio(a, b):
    return (round(a / b, 3) if a / b >= 0.01 else round(a / b, 5)) if a and b else None


def report(out: dict) -> str:
    full = out["heureka_full"]["gzip"]["server_cpu_us_per_req"]
    full_plain = out["heureka_full"]["plain"]["server_cpu_us_per_req"]
    rows = []

    def row(label, cpu, rate):
        rows.append(f"| {label} | {rate:,} | {cpu} | {ratio(cpu, full)} | {ratio(cpu, full_plain)} |")

    for key, label in (("heureka_full", "Heureka full fetch"), ("java_full", "Java full fetch"),
                       ("ceiling", "Ceiling, same body")):
        if key in out:
            for enc in ("gzip", "plain"):
                r = out[key][enc]
                row(f"{label}, {enc}", r["server_cpu_us_per_req"], r["rps"])
    for key, label in (("sd_all", f"HTTP SD, all {out['n']:,} targets"), ("sd_one_app", "HTTP SD, one application"),
                       ("sd_all_304", "HTTP SD, all targets, unchanged (304)")):
        row(label, out[key]["server_cpu_us_per_req"], out[key]["rps"])
    for key, label in (("dns_a", "DNS A, one application (10 addresses)"), ("dns_srv", "DNS SRV, one application")):
        row(label, out[key]["server_cpu_us_per_answer"], out[key]["qps"])
    for key, label in (("xds_one", "xDS, a new stream's Listener, Cluster and endpoints of one application"),
                       ("xds_all", f"xDS, the same for all {out['apps']:,} applications")):
        if key in out:
            x = out[key]
            rate = round(x["subscriptions"] / x["seconds"]) if x["seconds"] else 0
            row(label, x["server_cpu_us_per_subscription"], rate)
    return "\n".join([
        "# What the other protocols cost",
        "",
        f"`python3 bench/fleet.py --n {out['n']}`: one registry of {out['n']:,} instances over "
        f"{out['apps']:,} applications (10 each), every protocol on. CPU is the server's (utime+stime) per "
        "answer, against Heureka's full fetch of the same registry gzipped (what a Spring client asks) and "
        "plain (what the HTTP SD answer is: Prometheus asks no gzip). "
        f"Load average before {' '.join(out['load_before'])}, after {' '.join(out['load_after'])}.",
        "",
        "| answer | per second | server CPU µs/answer | vs full fetch, gzip | vs full fetch, plain |",
        "|---|---:|---:|---:|---:|",
        *rows,
        "",
    ])


def main() -> int:
    p = argparse.ArgumentParser()
    p.add_argument("--n", type=int, default=10000, help="instances")
    p.add_argument("--heureka", help="heureka binary (default target/release/heureka)")
    p.add_argument("--duration", type=int, default=5, help="seconds of each load run")
    p.add_argument("--xds-rounds", type=int, default=400,
                   help="ADS streams asking for one application (a twentieth as many ask for all)")
    p.add_argument("--no-java", action="store_true")
    p.add_argument("--no-xds", action="store_true")
    p.add_argument("--skip-build", action="store_true")
    a = p.parse_args()
    errors = run.build(["heureka", "baseline"] + ([] if a.no_java else ["java"]), a.skip_build)
    if errors:
        print(errors, file=sys.stderr)
        return 1
    if a.heureka:
        run.RUN_BIN["heureka"] = Path(a.heureka)
    try:
        out = measure(a)
    finally:
        run.stop_all()
    RESULTS.mkdir(exist_ok=True)
    (RESULTS / "fleet.json").write_text(json.dumps(out, indent=2) + "\n")
    text = report(out)
    (RESULTS / "fleet.md").write_text(text)
    print(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
