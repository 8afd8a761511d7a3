#!/usr/bin/env python3
"""Ten thousand event-stream attempts against the release binary, and what the API does meanwhile.

Three processes: the server; the flood (this script with --role flood), 10,000 attackers that
each open `GET /eureka/events` from one of 100 loopback addresses (127.0.1.1-100), hold the
stream while it lasts and open another as soon as it is refused or closed (a loop of curl);
and the prober (this script), which measures heartbeats, full fetches and
`/actuator/health/liveness`, each on a fresh connection, first on the idle server and then
while the flood holds, and samples the server's resident memory from /proc.

The flood is ready once every attacker holds a stream or has been refused at least once, or
60 s after it began, whichever comes first (before issue 19 nothing is refused, and the
attackers fill the connection table instead: the cap lets them).

    python3 bench/stream_flood.py [--binary target/release/heureka] [--old /work/ab-bins/heureka-9bf8cb3]
        [--attempts 10000] [--rounds 100] [--out bench/results/stream-flood.md]

`run()` is what interop/tests/test_stream_flood.py calls. Standard library only.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import re
import resource
import signal
import socket
import statistics
import subprocess
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SOURCE_ADDRESSES = [f"127.0.1.{n}" for n in range(1, 101)]
STREAM_REQUEST = b"GET /eureka/events HTTP/1.1\r\nHost: flood\r\nAccept: text/event-stream\r\n\r\n"
APPS = 20
INSTANCES_PER_APP = 10
PROBE_TIMEOUT = 5.0
READY_AT_MOST = 60.0


def raise_open_file_limit():
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def start_server(binary: str, args: list[str]):
    port = free_port()
    process = subprocess.Popen(
        [binary, f"--server.port={port}", "--server.address=127.0.0.1",
         f"--eureka.client.service-url.defaultZone=http://127.0.0.1:{port}/eureka/",
         "--eureka.client.register-with-eureka=false",
         "--eureka.server.enable-self-preservation=false", *args],
        stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, env={},
    )
    for line in process.stdout:
        if "heureka is serving" in line:
            break
    else:
        raise SystemExit(f"{binary} did not start")
    # Keep reading its log, so it never blocks on a full pipe.
    import threading
    threading.Thread(target=lambda: [None for _ in process.stdout], daemon=True).start()
    return process, port


def rss_mib(pid: int) -> float:
    with open(f"/proc/{pid}/status") as status:
        return int(re.search(r"VmRSS:\s+(\d+)", status.read()).group(1)) / 1024


# ---------------------------------------------------------------- the prober's requests

def body_of(app: str, n: int) -> bytes:
    instance = {
        "instance": {
            "instanceId": f"{app.lower()}-{n}", "app": app, "hostName": f"host-{n}",
            "ipAddr": f"10.0.{n // 250}.{n % 250}", "status": "UP",
            "port": {"$": 8080, "@enabled": "true"},
            "securePort": {"$": 443, "@enabled": "false"},
            "dataCenterInfo": {"@class": "com.netflix.appinfo.InstanceInfo$DefaultDataCenterInfo",
                               "name": "MyOwn"},
            "vipAddress": app.lower(), "metadata": {"zone": "a"},
        }
    }
    return json.dumps(instance).encode()


async def exchange(port: int, request: bytes) -> int:
    """One request on a fresh connection; its status once the whole answer is read."""
    reader, writer = await asyncio.open_connection("127.0.0.1", port)
    try:
        writer.write(request)
        await writer.drain()
        status_line = await reader.readline()
        await reader.read()  # Connection: close: the answer ends with the connection
        return int(status_line.split()[1])
    finally:
        writer.close()


def request(method: str, path: str, body: bytes = b"", extra: str = "") -> bytes:
    head = (f"{method} {path} HTTP/1.1\r\nHost: probe\r\nConnection: close\r\n{extra}"
            f"Content-Length: {len(body)}\r\n\r\n")
    return head.encode() + body


PROBES = {
    "heartbeat": request("PUT", "/eureka/apps/APP-0/app-0-0"),
    "full fetch": request("GET", "/eureka/apps", extra="Accept: application/json\r\n"),
    "liveness": request("GET", "/actuator/health/liveness"),
}


async def register_all(port: int):
    for a in range(APPS):
        app = f"APP-{a}"
        for n in range(INSTANCES_PER_APP):
            body = body_of(app, n)
            body = body.replace(f'"{app.lower()}-{n}"'.encode(), f'"app-{a}-{n}"'.encode())
            status = await exchange(port, request(
                "POST", f"/eureka/apps/{app}", body, "Content-Type: application/json\r\n"))
            assert status == 204, status


async def probe_rounds(port: int, rounds: int) -> dict:
    """`rounds` rounds of the three probes, each round's three at once; latency in ms, or None
    when a probe got no answer within PROBE_TIMEOUT."""
    results = {name: [] for name in PROBES}

    async def one(name):
        started = time.perf_counter()
        try:
            status = await asyncio.wait_for(exchange(port, PROBES[name]), PROBE_TIMEOUT)
        except (asyncio.TimeoutError, OSError, ValueError, IndexError):
            results[name].append(None)
            return
        results[name].append((time.perf_counter() - started) * 1000 if status == 200 else None)

    for _ in range(rounds):
        await asyncio.gather(*(one(name) for name in PROBES))
    return results


def summary(latencies: list) -> dict:
    answered = sorted(x for x in latencies if x is not None)
    if not answered:
        return {"answered": 0, "of": len(latencies), "p50": None, "p99": None}
    p99 = answered[min(len(answered) - 1, int(round(0.99 * (len(answered) - 1))))]
    return {"answered": len(answered), "of": len(latencies),
            "p50": statistics.median(answered), "p99": p99}


# ---------------------------------------------------------------- the flood (its own process)

async def flood(port: int, attempts: int, retry_delay: float):
    stats = {"attempts": 0, "accepted": 0, "refused_429": 0, "refused_and_closed": 0,
             "other_status": 0, "closed_unanswered": 0, "errors": 0,
             "streams_ended_by_server": 0, "holding": 0}
    settled = set()
    first_done = 0
    ready = asyncio.Event()
    stop = asyncio.Event()

    def resolved():
        nonlocal first_done
        first_done += 1

    def settle(i):
        settled.add(i)
        if len(settled) >= attempts:
            ready.set()

    async def attacker(i: int):
        source = SOURCE_ADDRESSES[i % len(SOURCE_ADDRESSES)]
        first = True
        while not stop.is_set():
            writer = None
            try:
                stats["attempts"] += 1
                reader, writer = await asyncio.open_connection(
                    "127.0.0.1", port, local_addr=(source, 0))
                writer.write(STREAM_REQUEST)
                await writer.drain()
                status_line = await reader.readline()
                status = int(status_line.split()[1]) if status_line else 0
                if first:
                    first = False
                    resolved()
                if status == 200:
                    stats["accepted"] += 1
                    stats["holding"] += 1
                    settle(i)
                    try:
                        while await reader.read(65536):
                            pass
                        stats["streams_ended_by_server"] += 1
                    finally:
                        stats["holding"] -= 1
                        settled.discard(i)
                elif status == 429:
                    stats["refused_429"] += 1
                    settle(i)
                    # The server closes a refused attempt: reading ends.
                    await asyncio.wait_for(reader.read(), 10)
                    stats["refused_and_closed"] += 1
                else:
                    # 0: closed before any answer (closed for room at max-connections).
                    stats["closed_unanswered" if status == 0 else "other_status"] += 1
            except (OSError, asyncio.TimeoutError, ValueError, IndexError):
                stats["errors"] += 1
                if first:
                    first = False
                    resolved()
            finally:
                if writer is not None:
                    writer.close()
            await asyncio.sleep(retry_delay)

    loop = asyncio.get_running_loop()
    loop.add_signal_handler(signal.SIGTERM, stop.set)
    began = time.monotonic()
    tasks = []
    for i in range(attempts):
        tasks.append(asyncio.create_task(attacker(i)))
        if i % 200 == 199:
            await asyncio.sleep(0)  # let the first connect while the rest are created
    try:
        await asyncio.wait_for(ready.wait(), READY_AT_MOST)
    except asyncio.TimeoutError:
        pass
    print(json.dumps({"ready_after_s": round(time.monotonic() - began, 1),
                      "first_attempts_resolved": first_done, **stats}), flush=True)
    await stop.wait()
    for task in tasks:
        task.cancel()
    await asyncio.gather(*tasks, return_exceptions=True)
    print(json.dumps(stats), flush=True)


def flood_main(args):
    raise_open_file_limit()
    asyncio.run(flood(args.port, args.attempts, args.retry_delay))


# ---------------------------------------------------------------- one binary, idle then flooded

def run(binary: str, attempts: int = 10_000, rounds: int = 100, server_args=(),
        retry_delay: float = 0.5) -> dict:
    raise_open_file_limit()
    server, port = start_server(binary, list(server_args))
    figures = {"binary": binary, "attempts": attempts}
    flooder = None
    try:
        asyncio.run(register_all(port))
        figures["idle_rss_mib"] = rss_mib(server.pid)
        figures["idle"] = {k: summary(v) for k, v in asyncio.run(probe_rounds(port, rounds)).items()}
        flooder = subprocess.Popen(
            [sys.executable, os.path.abspath(__file__), "--role", "flood", "--port", str(port),
             "--attempts", str(attempts), "--retry-delay", str(retry_delay)],
            stdout=subprocess.PIPE, text=True)
        figures["flood_at_ready"] = json.loads(flooder.stdout.readline())
        peak = [rss_mib(server.pid)]

        async def probe_and_sample():
            async def sample():
                while True:
                    peak.append(rss_mib(server.pid))
                    await asyncio.sleep(0.25)
            sampler = asyncio.create_task(sample())
            try:
                return await probe_rounds(port, rounds)
            finally:
                sampler.cancel()

        flooded = asyncio.run(probe_and_sample())
        figures["flood"] = {k: summary(v) for k, v in flooded.items()}
        figures["flood_peak_rss_mib"] = max(peak)
        figures["server_alive"] = server.poll() is None
        flooder.send_signal(signal.SIGTERM)
        figures["flood_at_end"] = json.loads(flooder.stdout.readline())
        flooder.wait(timeout=60)
    finally:
        if flooder is not None and flooder.poll() is None:
            flooder.kill()
        server.kill()
        server.wait()
    return figures


def fmt(x):
    return "-" if x is None else f"{x:.1f}"


def report(runs: list[dict], rounds: int) -> str:
    attempts = runs[0]["attempts"]
    lines = ["# Event-stream flood (issue 19)", "",
             "`python3 bench/stream_flood.py`: a server with 200 instances in 20 apps; "
             f"{rounds} rounds (fewer against the old binary, see each run) of three probes (heartbeat `PUT`, full fetch `GET /eureka/apps` "
             "as JSON, `GET /actuator/health/liveness`), each on a fresh connection, the three of "
             f"a round at once, {PROBE_TIMEOUT:.0f} s timeout; first idle, then while {attempts:,} "
             "attackers in another process each open `GET /eureka/events` from one of 100 "
             "loopback addresses, hold it while it lasts and retry 0.5 s after a refusal or "
             "close. Default settings (`heureka.events.max-streams` 256, `-per-client` 8, "
             "`server.tomcat.max-connections` 8192). 2 shared cores; client and server in "
             "separate processes. Latencies in ms.", ""]
    for run_ in runs:
        lines += [f"## `{run_['binary']}`", "",
                  "| probe | idle answered | idle p50 | idle p99 | flood answered | flood p50 | flood p99 |",
                  "|---|---|---|---|---|---|---|"]
        for name in PROBES:
            i, f = run_["idle"][name], run_["flood"][name]
            lines.append(f"| {name} | {i['answered']}/{i['of']} | {fmt(i['p50'])} | {fmt(i['p99'])} "
                         f"| {f['answered']}/{f['of']} | {fmt(f['p50'])} | {fmt(f['p99'])} |")
        lines += ["", f"RSS: idle {run_['idle_rss_mib']:.1f} MiB, peak during the flood "
                      f"{run_['flood_peak_rss_mib']:.1f} MiB.", "",
                  f"Flood when probing began: `{json.dumps(run_['flood_at_ready'])}`", "",
                  f"Flood at the end: `{json.dumps(run_['flood_at_end'])}`", ""]
    return "\n".join(lines)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--role", default="bench", choices=["bench", "flood"])
    parser.add_argument("--port", type=int)
    parser.add_argument("--attempts", type=int, default=10_000)
    parser.add_argument("--retry-delay", type=float, default=0.5)
    parser.add_argument("--rounds", type=int, default=100)
    parser.add_argument("--old-rounds", type=int, default=10,
                        help="rounds against --old, whose probes may each wait the full timeout")
    parser.add_argument("--binary", default=os.path.join(ROOT, "target", "release", "heureka"))
    parser.add_argument("--old", help="a binary from before issue 19, run the same way")
    parser.add_argument("--out", help="write the figures as markdown here")
    args = parser.parse_args()
    if args.role == "flood":
        return flood_main(args)
    runs = [run(args.binary, args.attempts, args.rounds, retry_delay=args.retry_delay)]
    if args.old:
        runs.append(run(args.old, args.attempts, args.old_rounds, retry_delay=args.retry_delay))
    print(json.dumps(runs, indent=1))
    text = report(runs, args.rounds)
    print(text)
    if args.out:
        with open(args.out, "w") as out:
            out.write(text)


if __name__ == "__main__":
    main()
