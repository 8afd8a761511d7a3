#!/usr/bin/env python3
"""Server memory per instance: RSS of a Heureka server before and after N registrations.

Registers N distinct instances exactly as `bench/run.py` does (same bodies, same ids, N/10
apps), then fetches the full registry and the delta once (JSON, gzip), as run.py's
`payload_info` does before it reads the loaded RSS, and reports

    growth per instance = (RSS loaded - RSS idle) / N
    overhead            = growth per instance - payload per instance

where the payload is the full fetch's JSON size per instance. Issue 10's target is an
overhead of at most 1 KB at 100,000 and at 1,000,000 instances.

The loader uses one process per connection (not threads), so Python's GIL does not cap it:
1,000,000 registrations take a couple of minutes on two cores. RSS does not depend on how
busy the machine is, so the figures are comparable between runs on a shared machine.

    python3 bench/memory.py                       # 100k and 1M with target/release/heureka
    python3 bench/memory.py --sizes 100000 --bin path/to/heureka --label mimalloc
    python3 bench/memory.py --wrap "heaptrack -o /tmp/ht" --sizes 100000
"""

from __future__ import annotations

import argparse
import http.client
import json
import multiprocessing
import os
import shlex
import subprocess
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import run  # noqa: E402  (the benchmark's instance naming and bodies, so both load alike)


def load_slice(args: tuple[int, int, int, int, int]) -> int:
    """Registers instances first, first + step, … below n over one keep-alive connection."""
    port, n, napps, first, step = args
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=120)
    headers = {"Content-Type": "application/json"}
    failures = 0
    for i in range(first, n, step):
        a = i % napps
        body = run.register_body(run.instance_id(i, napps), a, run.ip_of(i))
        for attempt in range(2):
            try:
                conn.request("POST", f"/eureka/apps/BENCH-APP-{a}", body=body, headers=headers)
                resp = conn.getresponse()
                resp.read()
                failures += resp.status != 204
                break
            except (OSError, http.client.HTTPException):
                conn.close()
                conn = http.client.HTTPConnection("127.0.0.1", port, timeout=120)
                failures += attempt == 1
    conn.close()
    return failures


def fetch(port: int, path: str) -> tuple[int, bytes, dict]:
    """GET as run.py's payload_info does, on a fresh connection; one retry if it is dropped."""
    for attempt in range(2):
        conn = http.client.HTTPConnection("127.0.0.1", port, timeout=900)
        try:
            return run.http_get(conn, path, run.JSON_GZIP)
        except (OSError, http.client.HTTPException) as e:
            print(f"GET {path}: {type(e).__name__}: {e}", file=sys.stderr, flush=True)
            if attempt == 1:
                raise
        finally:
            conn.close()
    raise AssertionError("unreachable")


def start(argv: list[str], port: int, log_path: Path, env: dict[str, str]) -> subprocess.Popen:
    log = open(log_path, "wb")
    proc = subprocess.Popen(argv, stdout=log, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
                            start_new_session=True, env={**os.environ, **env})
    log.close()
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise SystemExit(f"server exited with {proc.returncode}; log: {log_path}")
        conn = http.client.HTTPConnection("127.0.0.1", port, timeout=2)
        try:
            conn.request("GET", "/eureka/apps")
            resp = conn.getresponse()
            resp.read()
            if resp.status == 200:
                return proc
        except (OSError, http.client.HTTPException):
            pass
        finally:
            conn.close()
        time.sleep(0.01)
    proc.kill()
    raise SystemExit(f"server did not answer within 120 s; log: {log_path}")


def server_pid(proc: subprocess.Popen, wrapped: bool) -> int:
    """The server's own pid: under a wrapper (heaptrack) the server is the wrapper's child."""
    if not wrapped:
        return proc.pid
    for _ in range(100):
        out = subprocess.run(["pgrep", "-P", str(proc.pid)], capture_output=True, text=True).stdout
        kids = [int(p) for p in out.split()]
        for kid in kids:
            exe = Path(f"/proc/{kid}/comm").read_text().strip()
            if exe.startswith("heureka"):
                return kid
        time.sleep(0.1)
    raise SystemExit("cannot find the wrapped server's pid")


def measure(binary: Path, n: int, procs: int, wrap: list[str], env: dict[str, str],
            log_dir: Path, cpu_rounds: int) -> dict:
    port = run.free_port()
    # The benchmark's flags, plus two: loading a million instances takes longer than a lease's
    # 90 s, so eviction must not run meanwhile, and a log line per registration would make
    # the loader wait on the log. Neither changes what an instance costs to hold.
    argv = [*wrap, str(binary), f"--server.port={port}", *run.COMMON_FLAGS,
            f"--eureka.client.service-url.defaultZone=http://localhost:{port}/eureka/",
            "--eureka.server.eviction-interval-timer-in-ms=86400000", "--logging.level.root=warn"]
    if cpu_rounds:
        # Cached documents expire after 1 s, so every round below re-encodes the whole registry.
        argv.append("--eureka.server.response-cache-auto-expiration-in-seconds=1")
    proc = start(argv, port, log_dir / f"memory-n{n}.log", env)
    pid = server_pid(proc, bool(wrap))
    try:
        time.sleep(0.5)
        idle = run.rss_bytes(pid)
        napps = run.napps_for(n)
        cpu0 = run.cpu_seconds(pid)
        t0 = time.perf_counter()
        with multiprocessing.Pool(procs) as pool:
            failures = sum(pool.map(load_slice, [(port, n, napps, k, procs) for k in range(procs)]))
        load_s = time.perf_counter() - t0
        load_cpu = run.cpu_seconds(pid) - cpu0
        if failures:
            raise SystemExit(f"{failures} registrations failed")
        time.sleep(1.0)
        registered = run.rss_bytes(pid)
        sizes = {}
        cpu0 = run.cpu_seconds(pid)
        for name, path in (("full", "/eureka/apps"), ("delta", "/eureka/apps/delta")):
            status, body, headers = fetch(port, path)
            if status != 200:
                raise SystemExit(f"GET {path}: {status}")
            doc = run.decoded(body, headers)
            sizes[name] = (len(body), len(doc))
            if name == "full" and run.count_instances(doc) != n:
                raise SystemExit("the full fetch does not hold every instance")
        fetch_cpu = run.cpu_seconds(pid) - cpu0
        time.sleep(1.0)
        loaded = run.rss_bytes(pid)
        rounds_cpu = []
        for _ in range(cpu_rounds):
            time.sleep(1.1)
            cpu0 = run.cpu_seconds(pid)
            for path in ("/eureka/apps", "/eureka/apps/delta"):
                fetch(port, path)
            rounds_cpu.append(run.cpu_seconds(pid) - cpu0)
        after_rounds = run.rss_bytes(pid)
    finally:
        if wrap:
            # Killed, not stopped: what is live at that moment is what heaptrack then lists as
            # "leaked", i.e. what holding N instances costs, by call site.
            os.kill(pid, 9)
        proc.terminate()
        try:
            proc.wait(timeout=300 if wrap else 30)
        except subprocess.TimeoutExpired:
            proc.kill()
    payload = sizes["full"][1] / n
    growth = (loaded - idle) / n
    return {
        "instances": n,
        "apps": napps,
        "load_seconds": round(load_s, 1),
        # Server CPU time, which a busy machine inflates less than wall time: compare ratios.
        "cpu_us_per_registration": round(load_cpu / n * 1e6, 2),
        "cpu_ms_first_full_and_delta_fetch": round(fetch_cpu * 1e3, 1),
        # Server CPU of each round: a full and a delta fetch, both re-encoded, sorted.
        "cpu_ms_reencoded_fetch_rounds": sorted(round(c * 1e3, 1) for c in rounds_cpu),
        "rss_after_rounds": after_rounds,
        "rss_idle": idle,
        "rss_registered": registered,
        "rss_loaded": loaded,
        "full_wire_bytes": sizes["full"][0],
        "delta_wire_bytes": sizes["delta"][0],
        "payload_per_instance": round(payload, 1),
        "growth_per_instance_registered": round((registered - idle) / n, 1),
        "growth_per_instance": round(growth, 1),
        "overhead_per_instance": round(growth - payload, 1),
    }


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--sizes", default="100000,1000000")
    p.add_argument("--bin", type=Path, default=run.HEUREKA_BIN)
    p.add_argument("--label", default="heureka")
    p.add_argument("--procs", type=int, default=3, help="loader processes (connections)")
    p.add_argument("--wrap", default="", help="command to run the server under, e.g. heaptrack")
    p.add_argument("--env", action="append", default=[], metavar="KEY=VALUE",
                   help="set in the server's environment, e.g. LD_PRELOAD=/usr/lib/.../libjemalloc.so.2")
    p.add_argument("--cpu-rounds", type=int, default=0,
                   help="after measuring, this many rounds of re-encoded full + delta fetches, "
                        "timed in server CPU (the response cache expires after 1 s for this)")
    p.add_argument("--json", type=Path, help="append the result as one JSON line to this file")
    p.add_argument("--log-dir", type=Path, default=Path("/tmp"))
    a = p.parse_args()
    for n in [int(s) for s in a.sizes.split(",")]:
        env = dict(kv.split("=", 1) for kv in a.env)
        r = measure(a.bin, n, a.procs, shlex.split(a.wrap), env, a.log_dir, a.cpu_rounds)
        r["label"] = a.label
        print(f"{a.label:12} N={n:>9,}: idle {r['rss_idle'] / 2**20:.1f} MiB, registered "
              f"{r['rss_registered'] / 2**20:.1f} MiB, after fetches {r['rss_loaded'] / 2**20:.1f} MiB; "
              f"growth {r['growth_per_instance']:,.0f} B/instance (registry alone "
              f"{r['growth_per_instance_registered']:,.0f}), payload {r['payload_per_instance']:,.0f} B, "
              f"overhead {r['overhead_per_instance']:,.0f} B; loaded in {r['load_seconds']} s, "
              f"{r['cpu_us_per_registration']} µs CPU per registration, "
              f"{r['cpu_ms_first_full_and_delta_fetch']} ms CPU for the fetches"
              + (f"; re-encoded rounds {r['cpu_ms_reencoded_fetch_rounds']} ms CPU, "
                 f"RSS after them {r['rss_after_rounds'] / 2**20:.1f} MiB" if a.cpu_rounds else ""),
              flush=True)
        if a.json:
            with a.json.open("a") as f:
                f.write(json.dumps(r) + "\n")


if __name__ == "__main__":
    main()
