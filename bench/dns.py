#!/usr/bin/env python3
"""What a DNS answer costs Heureka beside a full Eureka fetch of the same registry.

Starts a release heureka (HEUREKA_BIN, else target/release/heureka) with DNS on, registers
10,000 instances in one of two shapes (100 applications of 100 instances, or one application
of 10,000), then asks the same process, one request at a time, for A and SRV answers over UDP
and for the full registry (GET /eureka/apps, JSON, gzip as Eureka's clients ask), and prints the
server's CPU time (user + system, all threads, from /proc) per answer. Standard library only:

    python3 bench/dns.py [--shape 100x100|1x10000] [--queries 20000] [--fetches 200]
"""

from __future__ import annotations

import argparse
import http.client
import json
import os
import random
import socket
import struct
import subprocess
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
HOST = "127.0.0.1"


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind((HOST, 0))
        return probe.getsockname()[1]


def cpu_seconds(pid: int) -> float:
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def question(name: str, qtype: int) -> bytes:
    labels = b"".join(bytes([len(label)]) + label.encode() for label in name.rstrip(".").split("."))
    header = struct.pack(">HHHHHH", random.randrange(65536), 0x0100, 1, 0, 0, 1)
    opt = b"\x00" + struct.pack(">HHIH", 41, 4096, 0, 0)   # EDNS0, 4096 bytes: no truncation
    return header + labels + b"\x00" + struct.pack(">HH", qtype, 1) + opt


def register_all(http_port: int, apps: int, per_app: int) -> None:
    connection = http.client.HTTPConnection(HOST, http_port)
    for a in range(apps):
        for i in range(per_app):
            n = a * per_app + i
            ip = f"10.{n // 65536 % 256}.{n // 256 % 256}.{n % 256}"
            body = json.dumps({"instance": {
                "instanceId": f"i-{n}", "app": f"APP{a}", "hostName": ip, "ipAddr": ip,
                "vipAddress": f"app{a}", "status": "UP", "port": {"$": 8080, "@enabled": "true"},
                "metadata": {"zone": f"zone-{n % 3}", "management.port": "8080"},
                "dataCenterInfo": {"@class": "com.netflix.appinfo.InstanceInfo$DefaultDataCenterInfo",
                                   "name": "MyOwn"}}})
            connection.request("POST", f"/eureka/apps/APP{a}", body,
                               {"Content-Type": "application/json"})
            response = connection.getresponse()
            response.read()
            assert response.status == 204, response.status


def per_dns_answer(pid: int, dns_port: int, apps: int, qtype: int, queries: int) -> float:
    sock = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    sock.settimeout(5)
    names = [(f"app{a}.eureka." if qtype == 1 else f"_app{a}._tcp.eureka.") for a in range(apps)]
    before = cpu_seconds(pid)
    for q in range(queries):
        sock.sendto(question(names[q % apps], qtype), (HOST, dns_port))
        sock.recv(65535)
    return (cpu_seconds(pid) - before) / queries


def per_full_fetch(pid: int, http_port: int, fetches: int) -> tuple[float, int]:
    connection = http.client.HTTPConnection(HOST, http_port)
    size = 0
    before = cpu_seconds(pid)
    for _ in range(fetches):
        connection.request("GET", "/eureka/apps/", headers={
            "Accept": "application/json", "Accept-Encoding": "gzip"})
        response = connection.getresponse()
        size = len(response.read())
    return (cpu_seconds(pid) - before) / fetches, size


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--shape", default="100x100", choices=["100x100", "1x10000"])
    parser.add_argument("--queries", type=int, default=20000)
    parser.add_argument("--fetches", type=int, default=200)
    args = parser.parse_args()
    apps, per_app = map(int, args.shape.split("x"))
    binary = os.environ.get("HEUREKA_BIN", str(REPO / "target" / "release" / "heureka"))
    http_port, dns_port = free_port(), free_port()
    server = subprocess.Popen([
        binary, f"--server.port={http_port}", f"--server.address={HOST}",
        f"--eureka.client.service-url.defaultZone=http://{HOST}:{http_port}/eureka/",
        "--eureka.client.register-with-eureka=false", "--eureka.server.enable-self-preservation=false",
        "--heureka.dns.enabled=true", f"--heureka.dns.port={dns_port}",
        "--heureka.dns.rate-limit=1000000", "--logging.level.root=warn"],
        stdout=subprocess.DEVNULL)
    try:
        for _ in range(100):
            try:
                http.client.HTTPConnection(HOST, http_port, timeout=1).request("GET", "/actuator/health")
                break
            except OSError:
                time.sleep(0.1)
        register_all(http_port, apps, per_app)
        a = per_dns_answer(server.pid, dns_port, apps, 1, args.queries)
        srv = per_dns_answer(server.pid, dns_port, apps, 33, args.queries)
        full, size = per_full_fetch(server.pid, http_port, args.fetches)
        print(f"{apps * per_app} instances as {args.shape}: CPU per answer, server side")
        print(f"  DNS A   (<= 32 records): {a * 1e6:8.1f} us  ({args.queries} queries)")
        print(f"  DNS SRV (<= 32 + glue) : {srv * 1e6:8.1f} us  ({args.queries} queries)")
        print(f"  GET /eureka/apps (gzip, {size} bytes, cached): {full * 1e6:8.1f} us  ({args.fetches} fetches)")
    finally:
        server.terminate()
        server.wait(timeout=30)
    return 0


if __name__ == "__main__":
    sys.exit(main())
