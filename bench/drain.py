#!/usr/bin/env python3
"""How long `heureka drain` takes to confirm, with N consumers fetching as Eureka clients do.

    python3 bench/drain.py                          # N = 10, 50, 200; fetch every 30 s; 3 drains each
    python3 bench/drain.py --consumers 10 --interval 5 --rounds 2
    python3 bench/drain.py --bin target/release/heureka

One Heureka node (the release binary, built unless --bin names one). N consumers, each a thread
connecting from its own loopback address (127.0.0.2, .3, …: the node tells them apart as it
tells apart hosts), fetch the full registry once, then the delta every --interval seconds (30:
Spring's `registry-fetch-interval-seconds`), each at its own phase. A drain is then run on a
fresh instance, timed from its start to its exit 0 (every consumer confirmed). The expected
figure is about one fetch interval (the slowest consumer's next fetch): the ratio to the interval
is printed. The Java server has no drain, so there is no column for it. Results:
bench/results/drain.md. Standard library only.
"""
from __future__ import annotations

import argparse
import json
import random
import socket
import statistics
import subprocess
import threading
import time
import urllib.request
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
HOST = "127.0.0.1"


def free_port() -> int:
    with socket.socket() as s:
        s.bind((HOST, 0))
        return s.getsockname()[1]


def request(port: int, method: str, path: str, body: bytes | None = None, source: str | None = None) -> int:
    """One HTTP/1.1 request from `source`; returns the status."""
    with socket.create_connection((HOST, port), timeout=10,
                                  source_address=(source, 0) if source else None) as s:
        head = (f"{method} /eureka{path} HTTP/1.1\r\nHost: {HOST}\r\nAccept: application/json\r\n"
                f"User-Agent: bench-consumer\r\nConnection: close\r\n")
        if body is not None:
            head += f"Content-Type: application/json\r\nContent-Length: {len(body)}\r\n"
        s.sendall(head.encode() + b"\r\n" + (body or b""))
        data = b""
        while chunk := s.recv(65536):
            data += chunk
    return int(data.split(b" ", 2)[1])


def consumer(port: int, source: str, interval: float, stop: threading.Event):
    request(port, "GET", "/apps", source=source)
    stop.wait(random.uniform(0, interval))
    while not stop.is_set():
        request(port, "GET", "/apps/delta", source=source)
        stop.wait(interval)


def register(port: int, app: str, iid: str):
    body = json.dumps({"instance": {
        "instanceId": iid, "hostName": HOST, "app": app, "ipAddr": HOST, "status": "UP",
        "port": {"$": 9, "@enabled": "true"}, "vipAddress": app.lower(),
        "dataCenterInfo": {"@class": "com.netflix.appinfo.InstanceInfo$DefaultDataCenterInfo", "name": "MyOwn"},
        "leaseInfo": {"renewalIntervalInSecs": 30, "durationInSecs": 600}}}).encode()
    assert request(port, "POST", f"/apps/{app}", body) == 204


def listed(port: int) -> int:
    with urllib.request.urlopen(f"http://{HOST}:{port}/eureka/consumers", timeout=5) as r:
        return len(json.load(r)["consumers"])


def run(binary: str, n: int, interval: float, rounds: int) -> list[float]:
    port = free_port()
    server = subprocess.Popen([binary, f"--server.port={port}", f"--server.address={HOST}",
                               "--eureka.client.register-with-eureka=false",
                               "--eureka.client.fetch-registry=false",
                               f"--heureka.consumers.active-within={int(interval * 3)}s"],
                              stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    stop = threading.Event()
    try:
        for _ in range(100):
            try:
                if listed(port) >= 0:
                    break
            except OSError:
                time.sleep(0.1)
        for i in range(n):
            source = f"127.0.{1 + i // 250}.{2 + i % 250}"
            threading.Thread(target=consumer, args=(port, source, interval, stop), daemon=True).start()
        deadline = time.monotonic() + 60
        while listed(port) < n and time.monotonic() < deadline:
            time.sleep(0.2)
        times = []
        for r in range(rounds):
            iid = f"target-{r}"
            register(port, "TARGET", iid)
            started = time.monotonic()
            done = subprocess.run([binary, "drain", "TARGET", iid, "--timeout", str(int(interval * 4)),
                                   "--eureka", f"http://{HOST}:{port}/eureka/"],
                                  capture_output=True, text=True)
            took = time.monotonic() - started
            assert done.returncode == 0, done.stdout + done.stderr
            confirmed = done.stdout.count("confirmed") - done.stdout.count("NOT CONFIRMED")
            assert confirmed == n, done.stdout
            times.append(took)
            print(f"  N={n} interval={interval:g}s drain {r + 1}/{rounds}: {took:.1f} s ({confirmed} confirmed)")
        return times
    finally:
        stop.set()
        server.terminate()
        server.wait()


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--bin", help="heureka binary (default: build target/release/heureka)")
    ap.add_argument("--consumers", default="10,50,200", help="comma list of N")
    ap.add_argument("--interval", type=float, default=30.0, help="each consumer's fetch interval, s")
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--out", default=str(REPO / "bench/results/drain.md"))
    a = ap.parse_args()
    binary = a.bin
    if not binary:
        subprocess.run(["cargo", "build", "--release", "-q", "-p", "heureka"], cwd=REPO, check=True)
        binary = str(REPO / "target/release/heureka")
    rows = []
    for n in [int(x) for x in a.consumers.split(",") if x]:
        times = run(binary, n, a.interval, a.rounds)
        rows.append((n, statistics.median(times), max(times)))
    lines = [
        "# Drain: time to confirmation",
        "",
        f"`python3 bench/drain.py --consumers {a.consumers} --interval {a.interval:g} --rounds {a.rounds}`, "
        f"{time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}. One Heureka node; each consumer fetches "
        f"the delta every {a.interval:g} s from its own loopback address, at its own phase; "
        "a drain is timed from its start to its exit 0 (all consumers confirmed).",
        "",
        "| consumers | median (s) | max (s) | median / fetch interval |",
        "|---:|---:|---:|---:|",
    ]
    for n, median, worst in rows:
        lines.append(f"| {n} | {median:.1f} | {worst:.1f} | {median / a.interval:.2f} |")
    lines += ["", "A drain waits for the slowest consumer's next fetch: about one fetch interval, "
              "whatever the number of consumers. The Java server has no drain."]
    Path(a.out).write_text("\n".join(lines) + "\n")
    print("\n".join(lines))


if __name__ == "__main__":
    main()
