#!/usr/bin/env python3
"""What HTTPS costs: Heureka and the Spring Cloud Eureka server, each over plain HTTP and over
HTTPS (TLS 1.3, a PKCS12 key store given with Spring's server.ssl.* keys), in the same run.

    python3 bench/tls.py                   # N=1000, 3 rounds of 5 s per workload: about 7 minutes
    python3 bench/tls.py --rounds 1 --duration 1 --n 100     # a quick look

Four servers run side by side (Heureka plain and HTTPS, Java plain and HTTPS), each loaded with
the same N instances. For each workload (heartbeat, registration, full fetch — wrk with
bench/wrk's scripts on kept-alive connections) every round measures the four in turn, in an
order that rotates from round to round, and takes the server's CPU time per request
(/proc/<pid>/stat) and wrk's throughput, after one unmeasured round (the JVM's warm-up). Ratios are taken within a round (HTTPS/HTTP of one
server; Heureka/Java over HTTPS) and reported as the median with the min-max, so that drift on
a busy machine cancels out. New connections: a client opens fresh TLS 1.3 connections one
after another for the round's duration (connect, handshake, one small GET, close), and the
server's CPU per connection is reported, again beside plain HTTP connections.

Writes bench/results/tls.md and tls.json. Standard library only, plus wrk and openssl.
"""

from __future__ import annotations

import argparse
import http.client
import json
import os
import re
import socket
import ssl
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import run  # noqa: E402  (the main harness: names, bodies, processes, CPU)

PASSWORD = "changeit"
WORKLOADS = ("heartbeat", "register", "full_fetch")
SERVERS = ("heureka-http", "heureka-https", "java-http", "java-https")


def make_certificates(into: Path) -> dict:
    """A CA and a localhost certificate signed by it, as PEM and PKCS12 (alias server)."""
    def openssl(*args: str) -> None:
        subprocess.run(["openssl", *args], cwd=into, check=True, capture_output=True, timeout=60)
    openssl("req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256", "-nodes",
            "-keyout", "ca.key", "-out", "ca.pem", "-days", "30", "-subj", "/CN=bench CA")
    openssl("req", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256", "-nodes",
            "-keyout", "server.key", "-out", "server.csr", "-subj", "/CN=localhost")
    (into / "ext.cnf").write_text("subjectAltName=DNS:localhost,IP:127.0.0.1\n")
    openssl("x509", "-req", "-in", "server.csr", "-CA", "ca.pem", "-CAkey", "ca.key",
            "-CAcreateserial", "-out", "server.pem", "-days", "30", "-extfile", "ext.cnf")
    openssl("pkcs12", "-export", "-in", "server.pem", "-inkey", "server.key", "-name", "server",
            "-out", "server.p12", "-passout", f"pass:{PASSWORD}")
    return {"ca": into / "ca.pem", "p12": into / "server.p12"}


def tls_flags(certs: dict) -> list[str]:
    return [f"--server.ssl.key-store={certs['p12']}", "--server.ssl.key-store-type=PKCS12",
            f"--server.ssl.key-store-password={PASSWORD}", "--server.ssl.key-alias=server"]


class Server:
    """One running server: its process, port and whether it speaks TLS."""

    def __init__(self, name: str, log_dir: Path, certs: dict):
        self.name, self.tls = name, name.endswith("https")
        key = name.split("-")[0]
        self.port = run.free_port()
        argv = run.server_argv(key, self.port, tls_flags(certs) if self.tls else [])
        self.log = log_dir / f"{name}.log"
        with open(self.log, "wb") as out:
            self.proc = subprocess.Popen(argv, stdout=out, stderr=subprocess.STDOUT,
                                         stdin=subprocess.DEVNULL, cwd=run.ROOT, start_new_session=True)
        run.STARTED.append(self.proc)
        self.context = ssl.create_default_context(cafile=str(certs["ca"]))
        self.wait_ready()

    @property
    def url(self) -> str:
        return f"{'https' if self.tls else 'http'}://localhost:{self.port}"

    def connection(self) -> http.client.HTTPConnection:
        if self.tls:
            return http.client.HTTPSConnection("localhost", self.port, context=self.context, timeout=30)
        return http.client.HTTPConnection("localhost", self.port, timeout=30)

    def wait_ready(self, limit_s: float = 180) -> None:
        deadline = time.monotonic() + limit_s
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise run.BenchError(f"{self.name} exited:\n{run.tail_of(self.log)}")
            try:
                conn = self.connection()
                conn.request("GET", "/eureka/apps")
                if conn.getresponse().status == 200:
                    return
            except (OSError, http.client.HTTPException):
                pass
            time.sleep(0.05)
        raise run.BenchError(f"{self.name} not ready within {limit_s} s")

    def cpu(self) -> float:
        return run.cpu_seconds(self.proc.pid) or 0.0

    def load(self, n: int, napps: int) -> None:
        conn = self.connection()
        for i in range(n):
            app = i % napps
            body = run.register_body(run.instance_id(i, napps), app, run.ip_of(i))
            conn.request("POST", f"/eureka/apps/BENCH-APP-{app}", body=body,
                         headers={"Content-Type": "application/json"})
            response = conn.getresponse()
            response.read()
            if response.status not in (200, 204):
                raise run.BenchError(f"{self.name}: registration {i} answered {response.status}")
        conn.close()


def wrk(server: Server, workload: str, n: int, napps: int, duration: int, connections: int) -> dict:
    script = {"heartbeat": "heartbeat.lua", "register": "register.lua", "full_fetch": "fetch.lua"}[workload]
    args, path = [str(n), str(napps), "2"], ""
    if workload == "full_fetch":
        args, path = ["json", "gzip"], "/eureka/apps"
    cmd = ["wrk", "-t2", f"-c{connections}", f"-d{duration}s", "-s",
           str(run.ROOT / "bench" / "wrk" / script), server.url + path, "--", *args]
    before = server.cpu()
    out = subprocess.run(cmd, capture_output=True, text=True, timeout=duration + 120)
    cpu = server.cpu() - before
    requests = re.search(r"(\d+) requests in", out.stdout)
    bad = re.search(r"Non-2xx or 3xx responses: (\d+)", out.stdout)
    errors = re.search(r"Socket errors: (.*)", out.stdout)
    if out.returncode != 0 or not requests:
        raise run.BenchError(f"wrk {workload} on {server.name} failed:\n{out.stdout}\n{out.stderr}")
    count = int(requests.group(1))
    return {"requests": count, "per_s": count / duration, "cpu_us": cpu / max(count, 1) * 1e6,
            "non_2xx": int(bad.group(1)) if bad else 0, "socket_errors": errors.group(1) if errors else ""}


def new_connections(server: Server, duration: int) -> dict:
    """Fresh connections one after another: connect (and handshake), GET the small status
    document, close."""
    before, count = server.cpu(), 0
    end = time.monotonic() + duration
    while time.monotonic() < end:
        conn = server.connection()
        conn.request("GET", "/eureka/status", headers={"Connection": "close"})
        conn.getresponse().read()
        conn.close()
        count += 1
    cpu = server.cpu() - before
    return {"requests": count, "per_s": count / duration, "cpu_us": cpu / max(count, 1) * 1e6}


def ratio_stats(values: list[float]) -> dict:
    return {"median": statistics.median(values), "min": min(values), "max": max(values)}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--n", type=int, default=1000, help="instances loaded into each server")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--duration", type=int, default=5, help="seconds per measurement")
    parser.add_argument("--connections", type=int, default=16)
    parser.add_argument("--out", default=str(run.ROOT / "bench" / "results"))
    args = parser.parse_args()
    if not run.HEUREKA_BIN.exists() or not run.JAR.exists():
        print("needs target/release/heureka and the interop Java server jar (bench/run.py builds both)")
        return 2
    run.RUN_BIN["heureka"] = run.HEUREKA_BIN
    napps = run.napps_for(args.n)
    work = Path(tempfile.mkdtemp(prefix="heureka-bench-tls-"))
    certs = make_certificates(work)
    results: dict = {"n": args.n, "rounds": args.rounds, "duration_s": args.duration,
                     "connections": args.connections, "measured": {}}
    try:
        servers = {name: Server(name, work, certs) for name in SERVERS}
        for server in servers.values():
            server.load(args.n, napps)
        for workload in (*WORKLOADS, "new_connections"):
            rows = results["measured"].setdefault(workload, [])
            # One unmeasured round first: the JVM compiles its hot paths during it.
            for rnd in range(-1, args.rounds):
                order = list(SERVERS[rnd % 4:] + SERVERS[:rnd % 4])
                measured = {}
                for name in order:
                    server = servers[name]
                    if workload == "new_connections":
                        measured[name] = new_connections(server, args.duration)
                    else:
                        measured[name] = wrk(server, workload, args.n, napps, args.duration, args.connections)
                if rnd >= 0:
                    rows.append(measured)
                run.log(f"{workload} round {rnd + 1 if rnd >= 0 else 'warm-up'}: " + ", ".join(
                    f"{k} {v['cpu_us']:.1f} µs/req {v['per_s']:.0f}/s" for k, v in measured.items()))
    finally:
        run.stop_all()
    report(results, Path(args.out))
    return 0


def report(results: dict, out: Path) -> None:
    lines = ["# HTTPS against plain HTTP, Heureka beside the Java server", "",
             f"N = {results['n']} instances in each server; {results['rounds']} interleaved rounds of "
             f"{results['duration_s']} s per workload; wrk with {results['connections']} kept-alive "
             "connections (new connections: one client, one connection after another). "
             "Produced by `python3 bench/tls.py`; figures per round in `tls.json`. Ratios are taken "
             "within a round; median (min–max).", "",
             "| workload | Heureka HTTPS/HTTP CPU per request | Java HTTPS/HTTP CPU per request | "
             "HTTPS: Heureka/Java CPU per request | HTTPS: Heureka/Java requests per second | "
             "Heureka HTTPS CPU per request | Java HTTPS CPU per request |",
             "|---|---|---|---|---|---|---|"]
    summary = {}
    for workload, rows in results["measured"].items():
        def ratios(a: str, b: str, field: str) -> dict:
            return ratio_stats([row[a][field] / row[b][field] for row in rows])
        entry = {
            "heureka_https_over_http_cpu": ratios("heureka-https", "heureka-http", "cpu_us"),
            "java_https_over_http_cpu": ratios("java-https", "java-http", "cpu_us"),
            "https_heureka_over_java_cpu": ratios("heureka-https", "java-https", "cpu_us"),
            "https_heureka_over_java_rate": ratios("heureka-https", "java-https", "per_s"),
            "heureka_https_cpu_us": statistics.median(r["heureka-https"]["cpu_us"] for r in rows),
            "java_https_cpu_us": statistics.median(r["java-https"]["cpu_us"] for r in rows),
        }
        summary[workload] = entry
        fmt = lambda r: f"{r['median']:.3g} ({r['min']:.3g}–{r['max']:.3g})"  # noqa: E731
        lines.append(f"| {workload.replace('_', ' ')} | {fmt(entry['heureka_https_over_http_cpu'])} | "
                     f"{fmt(entry['java_https_over_http_cpu'])} | {fmt(entry['https_heureka_over_java_cpu'])} | "
                     f"{fmt(entry['https_heureka_over_java_rate'])} | {entry['heureka_https_cpu_us']:.1f} µs | "
                     f"{entry['java_https_cpu_us']:.1f} µs |")
    load = os.getloadavg()
    lines += ["", f"Machine: {os.cpu_count()} CPUs; load average at the end {load[0]:.1f}. Other work "
              "was running on the machine (a CI run); the ratios within a round are what to read, "
              "not the absolute figures."]
    results["summary"] = summary
    out.mkdir(parents=True, exist_ok=True)
    (out / "tls.md").write_text("\n".join(lines) + "\n")
    (out / "tls.json").write_text(json.dumps(results, indent=1) + "\n")
    print("\n".join(lines))


if __name__ == "__main__":
    sys.exit(main())
