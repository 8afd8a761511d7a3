#!/usr/bin/env python3
"""Slowloris against the release binary: what other clients see, and what the server holds.

Starts target/release/heureka on a free port of 127.0.0.1, measures the latency of `GET
/eureka/apps` on a fresh connection while the server is idle, then again while attackers hold
partial request heads, and reads the server's resident memory and open files from /proc.

Scenarios: attackers that just hold their connection (below and above the connection limit),
and attackers that reconnect as soon as they are closed. Outside CI; standard library only.

    python3 bench/slowloris.py [--connections 5000,10000] [--requests 200]
"""

import argparse
import asyncio
import os
import re
import resource
import statistics
import subprocess
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
BINARY = os.path.join(ROOT, "target", "release", "heureka")
PARTIAL_HEAD = b"GET /eureka/apps HTTP/1.1\r\nHost: attacker\r\nX-Slow: "
REQUEST = b"GET /eureka/apps HTTP/1.1\r\nHost: bench\r\nConnection: close\r\n\r\n"


def start_server(args):
    process = subprocess.Popen(
        [BINARY, "--server.port=0", "--server.address=127.0.0.1", *args],
        stdout=subprocess.PIPE,
        text=True,
        env={},
    )
    for line in process.stdout:
        match = re.search(r"address=127\.0\.0\.1:(\d+)", line)
        if match:
            return process, int(match.group(1))
    raise SystemExit("heureka did not start")


def proc_figures(pid):
    with open(f"/proc/{pid}/status") as status:
        rss_kib = int(re.search(r"VmRSS:\s+(\d+)", status.read()).group(1))
    return rss_kib / 1024, len(os.listdir(f"/proc/{pid}/fd"))


async def one_request(port):
    started = time.perf_counter()
    reader, writer = await asyncio.open_connection("127.0.0.1", port)
    writer.write(REQUEST)
    await writer.drain()
    status = await reader.readline()
    await reader.read()
    writer.close()
    if not status.startswith(b"HTTP/1.1 200"):
        raise ConnectionError(f"no answer: {status!r}")  # an OSError
    return time.perf_counter() - started


async def latencies(port, count):
    """Median and 99th percentile of answered requests, and how many were not answered."""
    samples, unanswered = [], 0
    for _ in range(count):
        try:
            samples.append(await one_request(port))
        except OSError:
            unanswered += 1
    samples.sort()
    return statistics.median(samples), samples[int(len(samples) * 0.99) - 1], unanswered


async def hold(port, count):
    """Opens `count` connections with partial heads and keeps them."""
    held = []
    for _ in range(count):
        try:
            reader, writer = await asyncio.open_connection("127.0.0.1", port)
            writer.write(PARTIAL_HEAD)
            held.append((reader, writer))
        except OSError:
            pass
    return held


async def persistent_attacker(port, stop):
    """Reconnects with a new partial head each time the server closes the last one."""
    while not stop.is_set():
        try:
            reader, writer = await asyncio.open_connection("127.0.0.1", port)
            writer.write(PARTIAL_HEAD)
            await reader.read()  # returns when the server closes it
            writer.close()
        except OSError:
            await asyncio.sleep(0.01)


def start_attack(port, attackers, persistent):
    """The attackers run in a process of their own, so that their event loop does not slow
    down the client being measured."""
    mode = "reconnect" if persistent else "hold"
    return subprocess.Popen(
        [sys.executable, os.path.abspath(__file__), "--attack", f"{port},{attackers},{mode}"],
        stdout=subprocess.PIPE,
        text=True,
    )


async def attack(port, attackers, mode):
    if mode == "hold":
        held = await hold(port, attackers)
        print(f"holding {len(held)}", flush=True)
        await asyncio.Event().wait()
    stop = asyncio.Event()
    tasks = [asyncio.create_task(persistent_attacker(port, stop)) for _ in range(attackers)]
    print("reconnecting", flush=True)
    await asyncio.gather(*tasks)


async def scenario(name, server_args, attackers, requests, persistent=False):
    process, port = start_server(server_args)
    attack_process = None
    try:
        await one_request(port)  # warm up
        idle_p50, idle_p99, _ = await latencies(port, requests)
        idle_rss, _ = proc_figures(process.pid)
        attack_process = start_attack(port, attackers, persistent)
        attack_process.stdout.readline()  # the attack is in place
        await asyncio.sleep(2)
        attack_p50, attack_p99, unanswered = await latencies(port, requests)
        rss, open_files = proc_figures(process.pid)
        print(
            f"| {name} | {attackers} | {open_files} | {idle_p50 * 1000:.2f} / {idle_p99 * 1000:.2f} "
            f"| {attack_p50 * 1000:.2f} / {attack_p99 * 1000:.2f} | {attack_p50 / idle_p50:.2f} "
            f"| {attack_p99 / idle_p99:.2f} | {unanswered} | {idle_rss:.1f} | {rss:.1f} |",
            flush=True,
        )
    finally:
        if attack_process:
            attack_process.kill()
            attack_process.wait()
        process.terminate()
        process.wait(timeout=60)


async def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--connections", default="1000,5000,10000")
    parser.add_argument("--requests", type=int, default=200)
    parser.add_argument("--attack", help=argparse.SUPPRESS)
    options = parser.parse_args()
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))
    if options.attack:
        port, attackers, mode = options.attack.split(",")
        return await attack(int(port), int(attackers), mode)
    if not os.path.exists(BINARY):
        raise SystemExit("build it first: cargo build --release -p heureka")
    print(
        "| scenario | attackers | server's open files | idle p50 / p99 ms | under attack p50 / p99 ms "
        "| p50 ratio | p99 ratio | unanswered | idle RSS MiB | RSS under attack MiB |"
    )
    print("|---|---|---|---|---|---|---|---|---|---|")
    for count in [int(c) for c in options.connections.split(",")]:
        await scenario("holding partial heads", [], count, options.requests)
    await scenario(
        "holding, 1,000 over a limit of 1,000",
        ["--server.tomcat.max-connections=1000"],
        2000,
        options.requests,
    )
    await scenario(
        "reconnecting at once when closed, limit 1,000",
        ["--server.tomcat.max-connections=1000"],
        2000,
        options.requests,
        persistent=True,
    )


if __name__ == "__main__":
    sys.exit(asyncio.run(main()))
