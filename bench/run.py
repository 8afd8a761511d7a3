#!/usr/bin/env python3
"""Heureka benchmark harness: Heureka vs the real Spring Cloud Eureka server vs a trivial server.

One command builds and starts the three servers side by side on this machine, drives identical
wrk loads at them and writes bench/results/{results.json,results.md,results.svg}:

    python3 bench/run.py            # full run (several minutes)
    python3 bench/run.py --smoke    # every workload briefly, for CI

See bench/README.md for what is measured and how. Standard library only.
"""

from __future__ import annotations

import argparse
import datetime as dt
import gzip
import html
import http.client
import json
import math
import os
import platform
import re
import resource
import shutil
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import time
import zlib
from pathlib import Path

BENCH = Path(__file__).resolve().parent
ROOT = BENCH.parent
WRK_DIR = BENCH / "wrk"
JAVA_DIR = ROOT / "interop" / "java"
JAR = JAVA_DIR / "eureka-server" / "target" / "eureka-server.jar"
TARGET_DIR = Path(os.environ.get("CARGO_TARGET_DIR", ROOT / "target"))
HEUREKA_BIN = TARGET_DIR / "release" / "heureka"
BASELINE_BIN = TARGET_DIR / "release" / "heureka-bench-baseline"

SERVERS = ("heureka", "java", "baseline")
LABEL = {"heureka": "Heureka", "java": "Java (Spring Cloud Eureka)", "baseline": "Ceiling"}
SHORT = {"heureka": "Heureka", "java": "Java", "baseline": "Ceiling"}

# The configuration a user of a standalone Spring Cloud Eureka server writes (Spring's own docs:
# hostname localhost and defaultZone pointing at itself, so it has no peers), plus
# self-preservation off. Response cache settings are left at their defaults (read-only cache on).
# Heureka gets the very same keys: it is meant to be a drop-in replacement.
COMMON_FLAGS = [
    "--server.address=127.0.0.1",
    "--eureka.server.enable-self-preservation=false",
    "--eureka.client.register-with-eureka=false",
    "--eureka.client.fetch-registry=false",
    "--eureka.server.wait-time-in-ms-when-sync-empty=0",
    "--eureka.instance.hostname=localhost",
]

# --------------------------------------------------------------------------------------------
# Instance naming: identical to bench/wrk/common.lua (keep the two in sync).

LAST_DIRTY = "1714550399000"


def ip_of(i: int) -> str:
    return f"10.{(i >> 16) & 255}.{(i >> 8) & 255}.{i & 255}"


def instance_id(i: int, napps: int) -> str:
    return f"{ip_of(i)}:bench-app-{i % napps}:8080"


def register_body(iid: str, app_index: int, ip: str, lease_s: int = 90) -> bytes:
    """A register body as a Spring Cloud client (Jackson bean shape) sends it (spec §4.5);
    lease_s is its durationInSecs (Spring's default 90)."""
    vip = f"bench-app-{app_index}"
    app = f"BENCH-APP-{app_index}"
    return (
        '{"instance":{"instanceId":"' + iid + '","app":"' + app + '","appGroupName":null,'
        '"ipAddr":"' + ip + '","sid":"na","homePageUrl":"http://' + ip + ':8080/",'
        '"statusPageUrl":"http://' + ip + ':8080/actuator/info",'
        '"healthCheckUrl":"http://' + ip + ':8080/actuator/health","secureHealthCheckUrl":null,'
        '"vipAddress":"' + vip + '","secureVipAddress":"' + vip + '","countryId":1,'
        '"dataCenterInfo":{"@class":"com.netflix.appinfo.InstanceInfo$DefaultDataCenterInfo",'
        '"name":"MyOwn"},"hostName":"' + ip + '","status":"UP","overriddenStatus":"UNKNOWN",'
        '"leaseInfo":{"renewalIntervalInSecs":30,"durationInSecs":' + str(lease_s) + ',"registrationTimestamp":0,'
        '"lastRenewalTimestamp":0,"evictionTimestamp":0,"serviceUpTimestamp":0},'
        '"isCoordinatingDiscoveryServer":false,"lastUpdatedTimestamp":' + LAST_DIRTY + ','
        '"lastDirtyTimestamp":' + LAST_DIRTY + ',"actionType":null,"asgName":null,'
        '"port":{"$":8080,"@enabled":"true"},"securePort":{"$":443,"@enabled":"false"},'
        '"metadata":{"management.port":"8080"}}}'
    ).encode()


def napps_for(n: int) -> int:
    return max(1, n // 10)


# --------------------------------------------------------------------------------------------
# Small helpers


def log(msg: str) -> None:
    print(f"[bench {time.strftime('%H:%M:%S')}] {msg}", flush=True)


class BenchError(Exception):
    """A workload or a server could not run at all."""


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def rss_bytes(pid: int) -> int | None:
    try:
        with open(f"/proc/{pid}/status") as f:
            for line in f:
                if line.startswith("VmRSS:"):
                    return int(line.split()[1]) * 1024
    except OSError:
        return None
    return None


def cpu_seconds(pid: int) -> float | None:
    """utime + stime of a process, in seconds."""
    try:
        with open(f"/proc/{pid}/stat") as f:
            fields = f.read().rsplit(")", 1)[1].split()
        return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")
    except (OSError, IndexError, ValueError):
        return None


def proc_stat() -> tuple[float, float] | None:
    """(total, busy) CPU seconds of the whole machine so far, from /proc/stat."""
    try:
        with open("/proc/stat") as f:
            v = [int(x) for x in f.readline().split()[1:]]
    except (OSError, ValueError):
        return None
    hz = os.sysconf("SC_CLK_TCK")
    idle = v[3] + (v[4] if len(v) > 4 else 0)
    return sum(v[:8]) / hz, (sum(v[:8]) - idle) / hz


def children_cpu() -> float:
    """CPU seconds of this script's finished children (wrk), user + system."""
    ru = resource.getrusage(resource.RUSAGE_CHILDREN)
    return ru.ru_utime + ru.ru_stime


def http_get(conn: http.client.HTTPConnection, path: str, headers: dict) -> tuple[int, bytes, dict]:
    conn.request("GET", path, headers=headers)
    resp = conn.getresponse()
    body = resp.read()
    return resp.status, body, {k.lower(): v for k, v in resp.getheaders()}


JSON_GZIP = {"Accept": "application/json", "Accept-Encoding": "gzip"}


def http_get_size(conn: http.client.HTTPConnection, path: str, headers: dict) -> tuple[int, int]:
    """A GET whose body is counted and dropped as it arrives (a plain fetch of 1,000,000
    instances is about 1 GB): (status, body bytes)."""
    conn.request("GET", path, headers=headers)
    resp = conn.getresponse()
    size = 0
    while chunk := resp.read(1 << 20):
        size += len(chunk)
    return resp.status, size


def decoded(body: bytes, headers: dict) -> bytes:
    if headers.get("content-encoding", "").lower() == "gzip":
        return gzip.decompress(body)
    return body


def count_instances(doc: bytes) -> int:
    apps = json.loads(doc)["applications"].get("application", [])
    if isinstance(apps, dict):
        apps = [apps]
    total = 0
    for app in apps:
        inst = app.get("instance", [])
        total += 1 if isinstance(inst, dict) else len(inst)
    return total


# --------------------------------------------------------------------------------------------
# Builds


def run_quiet(cmd: list[str], cwd: Path, what: str, timeout: int) -> None:
    log(f"{what}: {' '.join(cmd)}")
    try:
        proc = subprocess.run(cmd, cwd=cwd, capture_output=True, text=True, timeout=timeout)
    except subprocess.TimeoutExpired as e:
        raise BenchError(f"{what} timed out after {timeout}s") from e
    except FileNotFoundError as e:
        raise BenchError(f"{what}: {e}") from e
    if proc.returncode != 0:
        tail = "\n".join((proc.stdout + proc.stderr).strip().splitlines()[-30:])
        raise BenchError(f"{what} failed (exit {proc.returncode}):\n{tail}")


def build(servers: list[str], skip: bool) -> dict[str, str]:
    """Builds what the chosen servers need. Returns {server: error} for the ones that failed."""
    errors: dict[str, str] = {}
    if skip:
        log("--skip-build: using existing binaries")
    if "heureka" in servers and not skip:
        try:
            run_quiet(["cargo", "build", "--release", "-p", "heureka"], ROOT, "build Heureka", 1800)
        except BenchError as e:
            errors["heureka"] = str(e)
    if "baseline" in servers and not skip:
        try:
            run_quiet(["cargo", "build", "--release", "-p", "heureka-bench-baseline"], ROOT, "build ceiling", 1800)
        except BenchError as e:
            errors["baseline"] = str(e)
    if "java" in servers and not JAR.exists():
        try:
            run_quiet(["mvn", "-q", "-B", "-DskipTests", "package"], JAVA_DIR, "build Java server", 1800)
        except BenchError as e:
            errors["java"] = str(e)
    for server, path in (("heureka", HEUREKA_BIN), ("baseline", BASELINE_BIN), ("java", JAR)):
        if server in servers and server not in errors and not path.exists():
            errors[server] = f"{path} does not exist"
    return errors


# --------------------------------------------------------------------------------------------
# Server processes

STARTED: list[subprocess.Popen] = []


class Running:
    def __init__(self, key: str, proc: subprocess.Popen, port: int, startup_s: float, log_path: Path):
        self.key, self.proc, self.port, self.startup_s, self.log_path = key, proc, port, startup_s, log_path

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def rss(self) -> int | None:
        return rss_bytes(self.proc.pid)

    def cpu(self) -> float | None:
        return cpu_seconds(self.proc.pid)

    def alive(self) -> bool:
        return self.proc.poll() is None

    def stop(self) -> None:
        stop_process(self.proc)


def stop_process(proc: subprocess.Popen) -> None:
    if proc.poll() is None:
        proc.send_signal(signal.SIGTERM)
        try:
            proc.wait(timeout=15)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait(timeout=15)
    if proc in STARTED:
        STARTED.remove(proc)


def stop_all() -> None:
    for proc in list(STARTED):
        try:
            stop_process(proc)
        except Exception:  # noqa: BLE001 - best effort at exit
            pass


# The binaries actually run: private copies taken right after the build (see snapshot_binaries), so
# that a rebuild of target/release during the run (someone else's cargo build) cannot change the
# server under test half-way.
RUN_BIN = {"heureka": HEUREKA_BIN, "baseline": BASELINE_BIN}


def snapshot_binaries(servers: list[str], into: Path) -> dict:
    into.mkdir(parents=True, exist_ok=True)
    info = {}
    for key, src in (("heureka", HEUREKA_BIN), ("baseline", BASELINE_BIN)):
        if key in servers and src.exists():
            dst = into / src.name
            shutil.copy2(src, dst)
            RUN_BIN[key] = dst
            st = src.stat()
            info[key] = {"path": str(src), "bytes": st.st_size,
                         "built": dt.datetime.fromtimestamp(st.st_mtime, dt.timezone.utc).strftime("%Y-%m-%d %H:%M:%S UTC")}
    return info


def server_argv(key: str, port: int, extra: list[str]) -> list[str]:
    spring = [f"--server.port={port}", *COMMON_FLAGS,
              f"--eureka.client.service-url.defaultZone=http://localhost:{port}/eureka/"]
    if key == "heureka":
        return [str(RUN_BIN["heureka"]), *spring, *extra]
    if key == "java":
        return ["java", "-jar", str(JAR), *spring, *extra]
    return [str(RUN_BIN["baseline"]), f"--server.port={port}", *extra]


def start_server(key: str, log_dir: Path, tag: str, extra: list[str] | None = None,
                 deadline_s: float = 180.0) -> Running:
    """Spawns a server and polls GET /eureka/apps every 2 ms until the first 200.

    The readiness poll sends no Accept header, i.e. it asks for XML (spec §2.2): a JSON poll would
    make Java's read-only response cache hold an empty JSON registry for up to 30 s.
    """
    port = free_port()
    argv = server_argv(key, port, extra or [])
    log_path = log_dir / f"{key}-{tag}.log"
    log_file = open(log_path, "wb")
    t0 = time.perf_counter()
    proc = subprocess.Popen(argv, stdout=log_file, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
                            cwd=ROOT, start_new_session=True)
    STARTED.append(proc)
    log_file.close()
    last_error = "no answer"
    while True:
        elapsed = time.perf_counter() - t0
        if proc.poll() is not None:
            raise BenchError(f"{LABEL[key]} exited with {proc.returncode} during start-up "
                             f"(log: {log_path}):\n{tail_of(log_path)}")
        if elapsed > deadline_s:
            stop_process(proc)
            raise BenchError(f"{LABEL[key]} gave no 200 on /eureka/apps within {deadline_s:.0f}s "
                             f"(last: {last_error}; log: {log_path})")
        conn = http.client.HTTPConnection("127.0.0.1", port, timeout=2)
        try:
            status, _, _ = http_get(conn, "/eureka/apps", {})
            if status == 200:
                startup = time.perf_counter() - t0
                return Running(key, proc, port, startup, log_path)
            last_error = f"HTTP {status}"
        except (OSError, http.client.HTTPException) as e:
            last_error = type(e).__name__
        finally:
            conn.close()
        time.sleep(0.002)


def tail_of(path: Path, lines: int = 15) -> str:
    try:
        return "\n".join(path.read_text(errors="replace").splitlines()[-lines:])
    except OSError:
        return ""


# --------------------------------------------------------------------------------------------
# Loading N instances (setup, not a measurement): wrk with bench/wrk/load.lua, each thread
# registering its own range of ids over one keep-alive connection.

# The loaded instances hold a one-hour lease, so that none expires while a run at 1,000,000
# instances takes its time (self-preservation is off; a heartbeat round renews only the ids it
# reaches). The lease changes no cost that is measured.
LOAD_LEASE_S = 3600
LOAD_THREADS = 8  # one connection each; more in flight than 4 loads faster on a busy machine


def load_instances(srv: Running, n: int, napps: int, expect: set[int], threads: int = LOAD_THREADS) -> dict:
    """Registers instances 0..n-1 exactly once each; every answer must have a status in expect."""
    threads = max(1, min(threads, n))
    limit_s = int(60 + n / 1000)  # wrk's -d: a bound on a load that stalls (about 20 s per 100k here)
    cmd = ["wrk", f"-t{threads}", f"-c{threads}", f"-d{limit_s}s", "--timeout=60s",
           "-s", str(WRK_DIR / "load.lua"), srv.url,
           "--", str(n), str(napps), str(threads), str(min(expect)), str(LOAD_LEASE_S)]
    t0 = time.perf_counter()
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    done: dict[int, tuple[int, int, int]] = {}
    out: list[str] = []
    for line in proc.stdout:
        out.append(line)
        if line.startswith("@@LOADED "):
            tid, got, bad, first_bad = (int(x) for x in line.split()[1:5])
            done[tid] = (got, bad, first_bad)
            if len(done) == threads:
                elapsed = time.perf_counter() - t0
                proc.send_signal(signal.SIGINT)  # every thread is done; wrk would wait out -d
                break
    else:
        elapsed = time.perf_counter() - t0
    try:
        rest, err = proc.communicate(timeout=30)
    except subprocess.TimeoutExpired:
        proc.kill()
        rest, err = proc.communicate()
    answered = sum(g for g, _, _ in done.values())
    unexpected = sum(b for _, b, _ in done.values())
    if len(done) < threads or answered != n or unexpected:
        statuses = sorted({f for _, b, f in done.values() if b})
        raise BenchError(f"loading {n} instances into {LABEL[srv.key]}: {answered} answered in {elapsed:.0f} s "
                         f"({len(done)} of {threads} wrk threads finished), {unexpected} with a status other "
                         f"than {sorted(expect)} (e.g. {statuses[:5]}): "
                         f"{(''.join(out) + rest + err).strip()[-600:]}")
    return {"instances": n, "apps": napps, "seconds": round(elapsed, 3), "loader": f"wrk load.lua, {threads} connections"}


_INSTANCE_KEY = b'"instanceId"'


def count_instances_streamed(body: bytes, gzipped: bool) -> tuple[int, int]:
    """(instances, uncompressed bytes) of a JSON applications document, without holding it whole
    (a full fetch at 1,000,000 instances is about 1 GB of JSON): counts the "instanceId" keys,
    one per instance in Eureka's JSON, while inflating in pieces."""
    inflate = zlib.decompressobj(16 + zlib.MAX_WBITS) if gzipped else None
    count, size, carry = 0, 0, b""
    step = 1 << 20
    for k in range(0, len(body), step):
        piece = body[k:k + step]
        if inflate:
            piece = inflate.decompress(piece)
        size += len(piece)
        chunk = carry + piece
        count += chunk.count(_INSTANCE_KEY)
        # keep a tail shorter than the key, so that a key split across pieces is counted once
        carry = chunk[-(len(_INSTANCE_KEY) - 1):]
    if inflate:
        tail = inflate.flush()
        size += len(tail)
        count += (carry + tail).count(_INSTANCE_KEY)
    return count, size


def payload_info(srv: Running, n: int, check_count: bool) -> dict:
    """One full and one delta fetch (JSON, gzip): sizes, the time each first fetch took (it builds
    the document), and the instance count as a sanity check."""
    conn = http.client.HTTPConnection("127.0.0.1", srv.port, timeout=fetch_timeout_s(n))
    info: dict = {}
    try:
        for name, path in (("full", "/eureka/apps"), ("delta", "/eureka/apps/delta")):
            t0 = time.perf_counter()
            status, body, headers = http_get(conn, path, JSON_GZIP)
            info[f"{name}_first_fetch_ms"] = round((time.perf_counter() - t0) * 1000, 1)
            if status != 200:
                raise BenchError(f"{LABEL[srv.key]}: GET {path} answered {status}")
            info[f"{name}_wire_bytes"] = len(body)
            info[f"{name}_gzip"] = headers.get("content-encoding", "").lower() == "gzip"
            if check_count and n > 100_000:
                # too big to parse here as a tree: count the instances while inflating
                count, size = count_instances_streamed(body, info[f"{name}_gzip"])
                info[f"{name}_json_bytes"], info[f"{name}_instances"] = size, count
            elif check_count:
                doc = decoded(body, headers)
                info[f"{name}_json_bytes"] = len(doc)
                try:
                    info[f"{name}_instances"] = count_instances(doc)
                except (ValueError, KeyError, TypeError, AttributeError) as e:
                    raise BenchError(f"{LABEL[srv.key]}: GET {path} is not an applications document: {e}")
            del body
    finally:
        conn.close()
    if check_count and info["full_instances"] != n:
        raise BenchError(f"{LABEL[srv.key]}: full fetch holds {info['full_instances']} instances "
                         f"right after loading {n}")
    if check_count:
        info["json_bytes_per_instance"] = round(info["full_json_bytes"] / n, 1)
    return info


def variant_sizes(srv: Running, n: int, variants: list[str]) -> dict:
    """The size of each fetch variant among `variants` (workload names) other than JSON gzip, one
    fetch each, for the ceiling's bodies. After the loaded RSS is read: a plain fetch makes the
    server keep plain runs (about the payload's size) while plain readers come."""
    info: dict = {}
    conn = http.client.HTTPConnection("127.0.0.1", srv.port, timeout=fetch_timeout_s(n))
    try:
        for name in variants:
            if name in JAVA_FETCHES or name not in FETCHES:
                continue
            path = FETCH_PATH[FETCHES[name][0]]
            status, size = http_get_size(conn, path, fetch_headers(name))
            if status != 200:
                raise BenchError(f"{LABEL[srv.key]}: GET {path} ({fetch_title(name)}) answered {status}")
            info[f"{name}_wire_bytes"] = size
    except (OSError, http.client.HTTPException) as e:
        raise BenchError(f"{LABEL[srv.key]}: fetching the variants: {type(e).__name__}: {e}") from e
    finally:
        conn.close()
    return info


def fetch_timeout_s(n: int) -> float:
    """How long one fetch of a whole registry of n instances may take, the first one included
    (which builds the document: seconds at 100,000 instances)."""
    return max(120.0, n * 0.3e-3)


# --------------------------------------------------------------------------------------------
# wrk


def run_wrk(srv: Running, script: str, path: str, args: list[str], duration: int, cfg, log_dir: Path,
            tag: str, idle: list[Running] | None = None, timeout_s: float | None = None,
            connections: int | None = None) -> dict:
    timeout_s = timeout_s or cfg.wrk_timeout
    connections = connections or cfg.connections
    cmd = ["wrk", f"-t{min(cfg.threads, connections)}", f"-c{connections}", f"-d{duration}s", "--latency",
           f"--timeout={timeout_s:.0f}s", "-s", str(WRK_DIR / script), srv.url + path]
    if args:
        cmd += ["--", *args]
    idle = idle or []
    idle0 = [x.cpu() or 0.0 for x in idle]
    cpu0, stat0, kids0 = srv.cpu(), proc_stat(), children_cpu()
    try:
        proc = subprocess.run(cmd, capture_output=True, text=True, timeout=duration + timeout_s + 120)
    except subprocess.TimeoutExpired as e:
        raise BenchError(f"wrk {script} against {LABEL[srv.key]} did not finish") from e
    cpu1, stat1, kids1 = srv.cpu(), proc_stat(), children_cpu()
    idle_cpu = sum((x.cpu() or 0.0) - c for x, c in zip(idle, idle0))
    (log_dir / f"wrk-{srv.key}-{tag}.log").write_text(" ".join(cmd) + "\n\n" + proc.stdout + proc.stderr)
    match = re.search(r"^@@BENCH (\{.*\})$", proc.stdout, re.M)
    if proc.returncode != 0 or not match:
        raise BenchError(f"wrk {script} against {LABEL[srv.key]} failed (exit {proc.returncode}): "
                         f"{(proc.stdout + proc.stderr).strip()[-800:]}")
    raw = json.loads(match.group(1))
    secs = raw["duration_us"] / 1e6
    requests = raw["requests"]
    errs = raw["errors"]
    socket_errors = errs["connect"] + errs["read"] + errs["write"] + errs["timeout"]
    lat = raw["latency_us"]
    result = {
        "requests": requests,
        "connections": connections,
        "seconds": round(secs, 3),
        "rps": round(requests / secs, 1) if secs > 0 else 0.0,
        "non2xx": errs["status"],
        "socket_errors": socket_errors,
        "errors": errs,
        "mb_per_s": round(raw["bytes"] / secs / 1e6, 2) if secs > 0 else 0.0,
        "p50_ms": lat["p50"] / 1000, "p90_ms": lat["p90"] / 1000, "p99_ms": lat["p99"] / 1000,
        "p999_ms": lat["p999"] / 1000, "max_ms": lat["max"] / 1000, "mean_ms": round(lat["mean"] / 1000, 3),
    }
    if cpu0 is not None and cpu1 is not None and requests:
        result["server_cpu_s"] = round(cpu1 - cpu0, 3)
        result["server_cpu_us_per_req"] = round((cpu1 - cpu0) / requests * 1e6, 2)
    result["wrk_cpu_s"] = round(kids1 - kids0, 3)
    if stat0 and stat1 and cpu0 is not None and cpu1 is not None:
        # Share of the machine's CPU time used by anything but this server and wrk: other work
        # on the machine during the run, which skews the figures (0 on a quiet machine).
        total, busy = stat1[0] - stat0[0], stat1[1] - stat0[1]
        if total > 0:
            other = busy - (cpu1 - cpu0) - (kids1 - kids0)
            result["other_cpu_share"] = round(max(0.0, other / total), 3)
            # the part of it that came from the other benchmarked servers, idle meanwhile (a JVM
            # keeps compiling and collecting in the background)
            result["idle_servers_cpu_share"] = round(max(0.0, idle_cpu / total), 3)
    return result


def workload_ok(res: dict) -> str | None:
    """None if the run counts, else why not: no request completed, any non-2xx answer, or a
    majority of broken sockets. For an aggregate (see `aggregate`) each of its rounds is judged
    as well: the medians would otherwise hide a round whose answers were refusals, as at
    b8fac88, when rounds 7 to 9 of a registration run met the registry's size limit and the
    summed counts stayed under half. Every workload here answers every request with a 2xx (a
    refusal is a measurement of something else); wrk's socket errors, a few of which a
    connection closing at the end of a run may give, fail it by majority only."""
    rounds = res.get("rounds")
    for at, one in enumerate(rounds if isinstance(rounds, list) else []):
        why = workload_ok(one)
        if why:
            return f"round {at + 1} of {len(rounds)}: {why}"
    if res["requests"] == 0:
        return "no request completed"
    if res["non2xx"]:
        return f"{res['non2xx']} of {res['requests']} responses were non-2xx"
    if res["socket_errors"] * 2 > res["requests"] + res["socket_errors"]:
        return f"{res['socket_errors']} socket errors for {res['requests']} responses"
    return None


# The fetch workloads: (document, format, encoding). The JSON gzip ones, as Java clients ask,
# run on every server; the other variants on Heureka and the ceiling only (issue 10 compares
# each with the ceiling serving a body of the same size).
FETCHES = {
    "full_fetch": ("full", "json", "gzip"),
    "full_fetch_xml": ("full", "xml", "gzip"),
    "full_fetch_plain": ("full", "json", "plain"),
    "full_fetch_xml_plain": ("full", "xml", "plain"),
    "delta_fetch": ("delta", "json", "gzip"),
    "delta_fetch_xml": ("delta", "xml", "gzip"),
    "delta_fetch_plain": ("delta", "json", "plain"),
    "delta_fetch_xml_plain": ("delta", "xml", "plain"),
}
FETCH_PATH = {"full": "/eureka/apps", "delta": "/eureka/apps/delta"}
JAVA_FETCHES = ("full_fetch", "delta_fetch")


def fetch_title(name: str) -> str:
    doc, fmt, enc = FETCHES[name]
    return f"{doc.capitalize()} fetch ({fmt.upper()}, {enc})"


def fetch_headers(name: str) -> dict:
    _, fmt, enc = FETCHES[name]
    return {"Accept": f"application/{fmt}", **({"Accept-Encoding": "gzip"} if enc == "gzip" else {})}


WORKLOADS = {
    # name: (script, path, args(n, napps, threads, tag))
    "heartbeat": ("heartbeat.lua", "", lambda n, na, th, tag: [str(n), str(na), str(th)]),
    **{name: ("fetch.lua", FETCH_PATH[doc], lambda n, na, th, tag, f=fmt, e=enc: [f, e])
       for name, (doc, fmt, enc) in FETCHES.items()},
    # every run re-registers the N loaded instances in turn, so that the registry holds N all
    # through: a new id per request grew it by about 250,000 a round, to the 2,000,000 of
    # heureka.limits.max-instances within 9 rounds at 100,000, whose registrations were then refused
    "register": ("register.lua", "", lambda n, na, th, tag: [str(na), tag, str(n), str(LOAD_LEASE_S)]),
}


# Everything --workloads can choose from, in the order they run at each N.
ALL_WORKLOADS = ("sync", "heartbeat", *FETCHES, "propagation", "register")


def wrk_timeout_s(name: str, n: int, cfg) -> float:
    """wrk's --timeout: a fetch of a whole registry is ~50 MB of gzip at 1,000,000 instances, and
    64 connections share one loopback, so a fetch answer may take seconds there."""
    if name in FETCHES:
        # a plain answer is ~20 times the gzip one
        return max(cfg.wrk_timeout, n * (30e-6 if FETCHES[name][2] == "gzip" else 150e-6))
    return cfg.wrk_timeout


def wrk_connections(name: str, n: int, cfg) -> int:
    """wrk's -c: --connections, and for a fetch whose answers are large fewer, so that about
    50 MB are in flight at once (a plain fetch of 1,000,000 instances is ~1 GB: 64 of them at
    once would not finish within a round, and nothing could be said per request)."""
    if name not in FETCHES:
        return cfg.connections
    _, fmt, enc = FETCHES[name]
    body = n * (45 if enc == "gzip" else 1000 if fmt == "json" else 1400)  # bytes, roughly
    return max(4, min(cfg.connections, int(cfg.connections * 50e6 / max(body, 1))))


def round_duration_s(name: str, n: int, cfg) -> int:
    """A measured round's length: --duration, and for the fetch workloads N × 20 µs where that is
    longer (20 s at 1,000,000 instances, where one answer can take seconds and a 5 s round would
    hold a few dozen of them, or none)."""
    if name in FETCHES:
        return max(cfg.duration, math.ceil(n * 20e-6))
    return cfg.duration


def run_workload_round(srv: Running, name: str, n: int, cfg, log_dir: Path, rnd: int | None,
                       warm_index: int = 0, idle: list[Running] | None = None) -> dict:
    """One wrk run; rnd None is a warm-up run. Every run gets its own id tag (registration)."""
    script, path, argf = WORKLOADS[name]
    tag = f"w{n}i{warm_index}" if rnd is None else f"m{n}r{rnd}"
    duration = cfg.warmup if rnd is None else round_duration_s(name, n, cfg)
    return run_wrk(srv, script, path, argf(n, napps_for(n), cfg.threads, tag), duration, cfg, log_dir,
                   f"{name}-{n}-" + (f"warmup{warm_index}" if rnd is None else f"r{rnd}"), idle,
                   timeout_s=wrk_timeout_s(name, n, cfg), connections=wrk_connections(name, n, cfg))


def warm_up(srv: Running, name: str, n: int, cfg, log_dir: Path) -> list[dict]:
    """Warm-up runs, with a pause after each, until the server is steady: the server CPU time per
    request of the last 3 runs within 10 % of each other (at most cfg.warmup_runs runs).

    Why so careful: a JVM under full load on 2 cores starves its own JIT compiler threads, so its
    throughput plateaus for a while and jumps after idle moments; Spring's Eureka server needs
    about 40 s of heartbeats with pauses before it reaches its steady rate (2 to 4× its rate in the
    first seconds). A long-running server is past that, so the comparison starts past it too. CPU
    per request is the steadiest signal of it (throughput also moves with scheduling)."""
    seen: list[dict] = []
    for i in range(cfg.warmup_runs):
        res = run_workload_round(srv, name, n, cfg, log_dir, None, i)
        seen.append({"rps": res["rps"], "cpu_us": res.get("server_cpu_us_per_req")})
        last = [x["cpu_us"] or x["rps"] for x in seen[-3:]]
        if len(last) == 3 and (max(last) - min(last)) <= 0.10 * max(last):
            break
        if i + 1 < cfg.warmup_runs:
            time.sleep(cfg.warmup_pause)
    return seen


MEDIAN_FIELDS = ("rps", "mb_per_s", "p50_ms", "p90_ms", "p99_ms", "p999_ms", "max_ms", "mean_ms",
                 "server_cpu_us_per_req", "other_cpu_share", "idle_servers_cpu_share", "first_fetch_ms")


def aggregate(rounds: list[dict]) -> dict:
    """Medians of the per-round figures, sums of the counts; the rounds themselves are kept."""
    agg: dict = {}
    for f in MEDIAN_FIELDS:
        vals = [r[f] for r in rounds if r.get(f) is not None]
        if vals:
            agg[f] = round(statistics.median(vals), 3)
    for f in ("requests", "non2xx", "socket_errors", "seconds"):
        agg[f] = round(sum(r[f] for r in rounds), 3)
    agg["rounds"] = rounds
    return agg


# From this size on, re-registering the N instances before every delta run (warm-ups and rounds
# of four variants) would take most of the benchmark, and at 1,000,000 loading alone takes
# longer than the delta's default retention (3 minutes at ~6,000 registrations a second), so
# the delta would shrink, and be rebuilt, all through a run. Heureka is started with a 2-hour
# retention instead, and its delta keeps the N instances of the initial load through the fetch
# runs (the heartbeat and full-fetch runs before them change no delta item).
LONG_DELTA_N = 100_000
LONG_DELTA_FLAGS = ["--eureka.server.retention-time-in-m-s-in-delta-queue=7200000"]


def prepare_fetch(srv: Running, name: str, n: int) -> float | None:
    """Before a fetch run (warm-up or measured): for the delta, re-registers the N loaded
    instances, so that the delta holds all of them, as right after they registered (after 3
    minutes a server drops changes from its delta, and the figure would depend on how long the
    workloads before took). Then fetches the document once, so that the run measures serving it:
    building it after a change is a figure of its own (returned, in ms; the `first_fetch_ms` of
    each round), and at 1,000,000 instances it takes longer than a whole run."""
    if name not in FETCHES:
        return None
    doc = FETCHES[name][0]
    if doc == "delta" and srv.key != "baseline" and n < LONG_DELTA_N:
        load_instances(srv, n, napps_for(n), {204})
    path = FETCH_PATH[doc]
    conn = http.client.HTTPConnection("127.0.0.1", srv.port, timeout=fetch_timeout_s(n))
    try:
        t0 = time.perf_counter()
        status, _ = http_get_size(conn, path, fetch_headers(name))
        took = round((time.perf_counter() - t0) * 1000, 1)
    except (OSError, http.client.HTTPException) as e:
        raise BenchError(f"{LABEL[srv.key]}: GET {path} before the {name} run: {type(e).__name__}: {e}") from e
    finally:
        conn.close()
    if status != 200:
        raise BenchError(f"{LABEL[srv.key]}: GET {path} before the {name} run answered {status}")
    return took


def wait_until_idle(servers: list[Running], limit_s: float) -> None:
    """Waits (bounded) until the servers not being measured use < 3 % of a core: a JVM that was
    just loaded keeps compiling and collecting for a while, which would steal CPU from the next
    server's round."""
    deadline = time.perf_counter() + limit_s
    while servers and time.perf_counter() < deadline:
        before = [x.cpu() or 0.0 for x in servers]
        time.sleep(0.5)
        used = sum((x.cpu() or 0.0) - b for x, b in zip(servers, before))
        if used < 0.03 * 0.5:
            return


def interleaved(running: dict[str, Running], name: str, n: int, cfg, log_dir: Path, results: dict,
                failures: list[str]) -> None:
    """Runs one workload on every server: a warm-up each (JIT and caches, for everyone alike), then
    cfg.rounds measured rounds that alternate between the servers, in a rotating order, so that
    drift on the machine hits them all alike. Reports the median round."""
    keys = list(running)
    rounds: dict[str, list[dict]] = {k: [] for k in keys}
    broken: dict[str, str] = {}
    warmups: dict[str, list[dict]] = {}
    if cfg.warmup > 0:
        for k in keys:
            try:
                prepare_fetch(running[k], name, n)
                warmups[k] = warm_up(running[k], name, n, cfg, log_dir)
            except BenchError as e:
                broken[k] = str(e)
    for rnd in range(cfg.rounds):
        order = keys[rnd % len(keys):] + keys[:rnd % len(keys)]
        for k in order:
            if k in broken:
                continue
            if not running[k].alive():
                broken[k] = f"server died before {name}"
                continue
            try:
                idle = [running[o] for o in keys if o != k]
                first = prepare_fetch(running[k], name, n)
                wait_until_idle(idle, cfg.idle_wait)
                res = run_workload_round(running[k], name, n, cfg, log_dir, rnd, idle=idle)
                if first is not None:
                    res["first_fetch_ms"] = first
                rounds[k].append(res)
            except BenchError as e:
                broken[k] = str(e)
    for k in keys:
        run = results["runs"][k][str(n)]
        if k in broken:
            run["workloads"][name] = {"failed": broken[k]}
            failures.append(f"{SHORT[k]} N={n} {name}: {broken[k]}")
            log(f"  {SHORT[k]:8} N={n:<6} {name:12} FAILED: {broken[k]}")
            continue
        res = aggregate(rounds[k])
        res["warmup"] = warmups.get(k, [])
        why = workload_ok(res)
        if why:
            res["failed"] = why
            failures.append(f"{SHORT[k]} N={n} {name}: {why}")
        run["workloads"][name] = res
        spread = ""
        if len(rounds[k]) > 1:
            spread = " (rounds " + ", ".join(f"{r['rps']:,.0f}" for r in rounds[k]) + ")"
        warm = f" after {len(res['warmup'])} warm-up runs" if len(res["warmup"]) > 1 else ""
        others = [r.get("other_cpu_share") or 0 for r in rounds[k]]
        if max(others, default=0) > 0.05:
            idle_share = max((r.get("idle_servers_cpu_share") or 0 for r in rounds[k]), default=0)
            warm += (f"; other work took up to {max(others):.0%} of the CPUs "
                     f"(the idle benchmarked servers up to {idle_share:.0%})")
        log(f"  {SHORT[k]:8} N={n:<6} {name:12} {res['rps']:>11,.0f} req/s  p99 {res['p99_ms']:8.2f} ms"
            f"  non-2xx {res['non2xx']}  sock-err {res['socket_errors']}{spread}{warm}"
            + (f"  FAILED: {why}" if why else ""))


# --------------------------------------------------------------------------------------------
# Propagation: register one new instance, then poll GET /eureka/apps until it shows.


HASHCODE = re.compile(rb'"apps__hashcode"\s*:\s*"([^"]*)"')


def head_count(body: bytes, headers: dict) -> int | None:
    """The instance count of a JSON full fetch from its apps__hashcode ("UP_9998_DOWN_2_"), which
    Eureka's JSON puts at the head of the document: only the first bytes are inflated, so this
    is quick even at 1,000,000 instances (a whole inflate there takes seconds)."""
    head = body[:65536]
    if headers.get("content-encoding", "").lower() == "gzip":
        head = zlib.decompressobj(16 + zlib.MAX_WBITS).decompress(head, 8192)
    m = HASHCODE.search(head[:8192])
    if not m:
        return None
    parts = m.group(1).decode().strip("_").split("_")
    return sum(int(c) for c in parts[1::2] if c.isdigit())


def contains_instance(body: bytes, headers: dict, needle: bytes, want_count: int | None) -> bool:
    """Whether a full fetch holds the instance just registered. With the count from before the
    registration known, a document counting one more is the first candidate (nothing else
    registers meanwhile), and only that one is searched whole, after the fact, to confirm; this
    keeps the poll loop fast where inflating every answer would take seconds."""
    if want_count is not None:
        have = head_count(body, headers)
        if have is not None and have < want_count:
            return False
    return needle in decoded(body, headers)


def propagation(srv: Running, n: int, cap_s: float, samples: int, budget_s: float) -> dict:
    napps = napps_for(n)
    results: list[float] = []
    capped = 0
    poll_latencies: list[float] = []
    unchanged_latencies: list[float] = []
    t_start = time.perf_counter()
    for k in range(samples):
        if k and time.perf_counter() - t_start > budget_s:
            break
        a = k % napps
        iid = f"prop{k}-{os.getpid()}:bench-app-{a}:8080"
        ip = f"10.251.{k // 256 % 256}.{k % 256}"
        # a fetch right after a change of the whole registry (the delta run re-registers it)
        # rebuilds the document: tens of seconds at 1,000,000
        reg = http.client.HTTPConnection("127.0.0.1", srv.port, timeout=fetch_timeout_s(n))
        poll = http.client.HTTPConnection("127.0.0.1", srv.port, timeout=fetch_timeout_s(n))
        try:
            poll.connect()  # connected before the clock starts
            status, body, headers = http_get(poll, "/eureka/apps", JSON_GZIP)
            before = head_count(body, headers) if status == 200 else None
            del body
            reg.request("POST", f"/eureka/apps/BENCH-APP-{a}", body=register_body(iid, a, ip),
                        headers={"Content-Type": "application/json"})
            resp = reg.getresponse()
            resp.read()
            t_204 = time.perf_counter()
            if resp.status != 204:
                raise BenchError(f"{LABEL[srv.key]}: propagation register answered {resp.status}")
            needle = f'"{iid}"'.encode()
            seen = None
            while time.perf_counter() - t_204 < cap_s:
                t_send = time.perf_counter()
                status, body, headers = http_get(poll, "/eureka/apps", JSON_GZIP)
                t_recv = time.perf_counter()
                poll_latencies.append(t_recv - t_send)
                if status == 200 and contains_instance(body, headers, needle, before + 1):
                    seen = t_recv - t_204
                    break
                time.sleep(0.001)
            if seen is None:
                capped += 1
                results.append(cap_s)
                break  # a capped sample costs cap_s; one is enough to tell
            results.append(seen)
            # The same fetch again, of a document that has not changed since: what the client's
            # transfer and read cost alone, so that the rebuild's share of `seen` shows.
            t_send = time.perf_counter()
            status, body, headers = http_get(poll, "/eureka/apps", JSON_GZIP)
            unchanged_latencies.append(time.perf_counter() - t_send)
            del body
        except (OSError, http.client.HTTPException) as e:
            raise BenchError(f"{LABEL[srv.key]}: propagation check failed: {type(e).__name__}: {e}") from e
        finally:
            reg.close()
            poll.close()
    out = {
        "samples_ms": [round(x * 1000, 3) for x in results],
        # median_high: with a capped sample among two, say ">= cap" rather than average it away
        "median_ms": round(statistics.median_high(results) * 1000, 3),
        "max_ms": round(max(results) * 1000, 3),
        "capped": capped,
        "cap_ms": cap_s * 1000,
        "poll_fetch_median_ms": round(statistics.median(poll_latencies) * 1000, 3) if poll_latencies else None,
        "unchanged_fetch_median_ms":
            round(statistics.median(unchanged_latencies) * 1000, 3) if unchanged_latencies else None,
    }
    out["median_capped"] = out["median_ms"] >= out["cap_ms"]
    shown = f">= {out['cap_ms']:.0f} ms (cap)" if out["median_capped"] else f"{out['median_ms']:.2f} ms"
    log(f"  {SHORT[srv.key]:8} N={n:<6} propagation  {shown}  (samples {out['samples_ms']}; "
        f"one poll fetch ~{out['poll_fetch_median_ms']} ms, of an unchanged document "
        f"~{out['unchanged_fetch_median_ms']} ms)")
    return out


def prop_cap_s(n: int, cfg) -> float:
    """The propagation deadline: --prop-cap, longer where one poll fetch alone takes long."""
    return max(cfg.prop_cap, n * 100e-6)


# --------------------------------------------------------------------------------------------
# Start-up sync: a second Heureka node, whose only peer is the loaded one, from spawn until its
# own full fetch holds all N instances (it answers 403 until its start-up sync is done).


def sync_from_peer(peer: Running, n: int, cfg, log_dir: Path) -> dict:
    """The configuration is cluster.py's (bench/README.md, "Clusters"): defaultZone the peer, then
    the node itself, fetch-registry on, 5 sync retries 1 s apart. The peer has no peers of its own
    (its defaultZone is itself), so nothing is replicated back to it; its full fetch document is
    already built (loading fetched it), as on a node that has been serving clients.

    Two times from the spawn: `seconds`, to the first 200 on a one-application read (Heureka
    answers every read 403 until its start-up sync is done, and then holds all it synced), and
    `full_fetch_s`, to the end of the first full fetch after that, which must hold all N (it
    builds the new node's document: tens of seconds at 1,000,000)."""
    port = free_port()
    urls = [f"http://127.0.0.1:{peer.port}/eureka/", f"http://127.0.0.1:{port}/eureka/"]
    argv = [str(RUN_BIN["heureka"]), f"--server.port={port}", "--server.address=127.0.0.1",
            "--eureka.instance.hostname=127.0.0.1", f"--eureka.client.service-url.defaultZone={','.join(urls)}",
            "--eureka.client.register-with-eureka=false", "--eureka.client.fetch-registry=true",
            "--eureka.server.enable-self-preservation=false", "--eureka.server.wait-time-in-ms-when-sync-empty=0",
            "--eureka.server.registry-sync-retries=5", "--eureka.server.registry-sync-retry-wait-ms=1000"]
    log_path = log_dir / f"heureka-sync-n{n}.log"
    deadline_s = 60 + 2 * fetch_timeout_s(n)
    statuses: list[list] = []
    with open(log_path, "wb") as log_file:
        log_file.write(("$ " + " ".join(argv) + "\n").encode())
        log_file.flush()
        t0 = time.perf_counter()
        proc = subprocess.Popen(argv, stdout=log_file, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
                                cwd=ROOT, start_new_session=True)
    STARTED.append(proc)
    try:
        while True:
            el = time.perf_counter() - t0
            if proc.poll() is not None:
                raise BenchError(f"the syncing node exited with {proc.returncode} (log {log_path}):\n"
                                 f"{tail_of(log_path)}")
            if el > deadline_s:
                raise BenchError(f"the syncing node answered no read within {deadline_s:.0f} s "
                                 f"(statuses seen: {statuses[-5:]}; log {log_path})")
            conn = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
            try:
                status, _, _ = http_get(conn, "/eureka/apps/BENCH-APP-0", {"Accept": "application/json"})
                seen = [round(time.perf_counter() - t0, 3), status]
                if not statuses or statuses[-1][1] != status:
                    statuses.append(seen)
                if status == 200:
                    ready = seen[0]
                    break
            except (OSError, http.client.HTTPException):
                pass
            finally:
                conn.close()
            time.sleep(0.05)
        rss_ready = rss_bytes(proc.pid)
        conn = http.client.HTTPConnection("127.0.0.1", port, timeout=fetch_timeout_s(n))
        try:
            status, body, headers = http_get(conn, "/eureka/apps", JSON_GZIP)
            full = round(time.perf_counter() - t0, 3)
            count = head_count(body, headers) if status == 200 else None
            del body
        except (OSError, http.client.HTTPException) as e:
            raise BenchError(f"the synced node's full fetch failed: {type(e).__name__}: {e}") from e
        finally:
            conn.close()
        if count != n:
            raise BenchError(f"the synced node's full fetch answered {status} holding {count} of {n} instances "
                             f"(log {log_path})")
        rss = rss_bytes(proc.pid)
    finally:
        stop_process(proc)
    out = {"seconds": ready, "full_fetch_s": full, "rss_ready_bytes": rss_ready, "rss_bytes": rss,
           "statuses_seen": statuses[:20], "argv": argv}
    log(f"  {SHORT[peer.key]:8} N={n:<6} start-up sync from a peer: serving reads after {ready:.2f} s, "
        f"first full fetch holding all {n:,} done at {full:.2f} s (RSS {mib(rss_ready)}, then {mib(rss)}; "
        f"statuses {statuses[:4]})")
    return out


# --------------------------------------------------------------------------------------------
# One server at one registry size


def setup_server(key: str, n: int, cfg, log_dir: Path, results: dict, failures: list[str]) -> Running | None:
    """Starts one server and loads N instances into it; None (and a failure) if that did not work."""
    napps = napps_for(n)
    extra: list[str] = []
    if key == "baseline":
        ref = results["runs"].get("heureka", {}).get(str(n)) or results["runs"].get("java", {}).get(str(n)) or {}
        payload = ref.get("payload", {})
        full = payload.get("full_wire_bytes", 100 * n)
        delta = payload.get("delta_wire_bytes", full)
        extra = [f"--payload-bytes={full}", f"--delta-payload-bytes={delta}"]
        for name, (doc, fmt, enc) in FETCHES.items():
            if f"{name}_wire_bytes" in payload:
                flag = "payload-bytes" if doc == "full" else "delta-payload-bytes"
                extra.append(f"--{flag}.{fmt}.{enc}={payload[f'{name}_wire_bytes']}")
    elif n >= LONG_DELTA_N:
        extra = list(LONG_DELTA_FLAGS)
    run: dict = {"instances": n, "apps": napps, "workloads": {}}
    results["runs"].setdefault(key, {})[str(n)] = run
    try:
        srv = start_server(key, log_dir, f"n{n}", extra, deadline_s=cfg.start_deadline)
    except BenchError as e:
        run["error"] = str(e)
        failures.append(f"{SHORT[key]} N={n}: {e}")
        log(f"  {SHORT[key]:8} FAILED to start: {e}")
        return None
    try:
        run["startup_ms"] = round(srv.startup_s * 1000, 2)
        results["startup"].setdefault(key, []).append(run["startup_ms"])
        run["rss_idle"] = srv.rss()
        log(f"  {SHORT[key]:8} started in {run['startup_ms']:.1f} ms, idle RSS {mib(run['rss_idle'])}")
        run["load"] = load_instances(srv, n, napps, {200} if key == "baseline" else {204})
        run["payload"] = payload_info(srv, n, check_count=key != "baseline")
        time.sleep(cfg.settle)
        run["rss_loaded"] = srv.rss()
        if key != "baseline":
            run["rss_growth_per_instance"] = round((run["rss_loaded"] - run["rss_idle"]) / n, 1)
            run["payload"].update(variant_sizes(srv, n, cfg.workloads))
        log(f"  {SHORT[key]:8} loaded {n} in {run['load']['seconds']:.1f} s; RSS {mib(run['rss_loaded'])}; "
            f"full fetch {run['payload']['full_wire_bytes']:,} B on the wire, first one in "
            f"{run['payload']['full_first_fetch_ms']:,.0f} ms")
        if run["payload"].get("delta_instances", n) < n:
            log(f"  {SHORT[key]:8} WARNING: the delta holds {run['payload']['delta_instances']} of {n} instances "
                f"(loading took longer than the delta's 3-minute retention)")
        if key == "heureka" and "sync" in cfg.workloads:
            try:
                run["sync_from_peer"] = sync_from_peer(srv, n, cfg, log_dir)
            except BenchError as e:
                run["sync_from_peer"] = {"failed": str(e)}
                failures.append(f"{SHORT[key]} N={n} start-up sync: {e}")
                log(f"  {SHORT[key]:8} start-up sync FAILED: {e}")
        return srv
    except BenchError as e:
        run["error"] = str(e)
        failures.append(f"{SHORT[key]} N={n} load: {e}")
        log(f"  {SHORT[key]:8} FAILED: {e}")
        srv.stop()
        return None


def bench_size(keys: list[str], n: int, cfg, log_dir: Path, results: dict, failures: list[str]) -> None:
    """All servers at one registry size: each started and loaded (and left running, idle, while the
    others are measured), then every workload interleaved across them."""
    log(f"N={n}: starting and loading {', '.join(SHORT[k] for k in keys)}")
    running: dict[str, Running] = {}
    try:
        for key in keys:  # Heureka first: the ceiling's payload size is Heureka's
            srv = setup_server(key, n, cfg, log_dir, results, failures)
            if srv:
                running[key] = srv
        if not running:
            return
        for name in ("heartbeat", *FETCHES):
            if name in cfg.workloads:
                chosen = running if name in ("heartbeat", *JAVA_FETCHES) else \
                    {k: v for k, v in running.items() if k != "java"}
                interleaved(chosen, name, n, cfg, log_dir, results, failures)
        for key, srv in running.items():
            if key == "baseline" or "propagation" not in cfg.workloads:
                continue
            try:
                cap = prop_cap_s(n, cfg)
                results["runs"][key][str(n)]["propagation"] = propagation(
                    srv, n, cap, cfg.prop_samples, cap + cfg.prop_budget - cfg.prop_cap)
            except BenchError as e:
                results["runs"][key][str(n)]["propagation"] = {"failed": str(e)}
                failures.append(f"{SHORT[key]} N={n} propagation: {e}")
                log(f"  {SHORT[key]:8} propagation FAILED: {e}")
        # Registration last: it grows every registry by however many requests the server managed.
        if "register" in cfg.workloads:
            interleaved(running, "register", n, cfg, log_dir, results, failures)
        for key, srv in running.items():
            results["runs"][key][str(n)]["rss_end"] = srv.rss()
    finally:
        for srv in running.values():
            srv.stop()


def extra_startups(key: str, want: int, cfg, log_dir: Path, results: dict, failures: list[str]) -> None:
    have = len(results["startup"].get(key, []))
    for k in range(max(0, want - have)):
        try:
            srv = start_server(key, log_dir, f"startup{k}", deadline_s=cfg.start_deadline)
        except BenchError as e:
            failures.append(f"{SHORT[key]} start-up: {e}")
            return
        results["startup"].setdefault(key, []).append(round(srv.startup_s * 1000, 2))
        srv.stop()
    samples = results["startup"].get(key, [])
    if samples:
        log(f"  {SHORT[key]:8} start-up samples (ms): {samples}")


def mib(b: int | None) -> str:
    return "?" if b is None else f"{b / 2**20:.1f} MiB"


# --------------------------------------------------------------------------------------------
# Report: table rows with ratios and targets


def get(results: dict, key: str, n: int, *path):
    cur = results["runs"].get(key, {}).get(str(n))
    for p in path:
        if not isinstance(cur, dict) or "failed" in cur and p != "failed":
            return None
        cur = cur.get(p)
    return cur


def median_startup(results: dict, key: str) -> float | None:
    s = list(results["startup"].get(key) or [])
    if key == "baseline":
        # The ceiling makes its eight answer bodies before it listens: from 100,000 instances
        # that is hundreds of MB of filler (seconds at 1,000,000), not start-up.
        for n, run in results["runs"].get("baseline", {}).items():
            if int(n) >= 100_000 and run.get("startup_ms") in s:
                s.remove(run["startup_ms"])
    return statistics.median(s) if s else None


def build_rows(results: dict, sizes: list[int], extra_sizes: list[int]) -> list[dict]:
    rows: list[dict] = []
    all_sizes = sorted(set(sizes) | set(extra_sizes))
    judged = 10000  # the size the fetch and RSS targets are stated for

    def row(metric, n, unit, better, vals, target=None, check=None, ceiling_ratio=True):
        h, j, c = vals
        r = {"metric": metric, "n": n, "unit": unit, "better": better,
             "heureka": h, "java": j, "baseline": c,
             "h_over_j": (h / j) if h is not None and j not in (None, 0) else None,
             "h_over_c": (h / c) if ceiling_ratio and h is not None and c not in (None, 0) else None,
             # the best ratio to Java any server could show on this machine: the ceiling's
             "c_over_j": (c / j) if ceiling_ratio and c is not None and j not in (None, 0)
             and (unit in ("req/s", "µs") or "latency" in metric) else None,
             "target": target, "pass": None}
        if target and check:
            r["pass"] = check(r)
        rows.append(r)

    # Issue 10's targets, as ratios to the ceiling in the same run: CPU per request and p99.
    ceiling_cpu = {"heartbeat": 1.15, "register": 1.5, **{name: 1.1 for name in FETCHES}}
    ceiling_p99 = {"heartbeat": 1.5, "register": 2.0}

    def at_most_ceiling(factor):
        return (f"≤{factor:g}× ceiling",
                lambda r: None if r["h_over_c"] is None else r["h_over_c"] <= factor)

    for wl, title in (("heartbeat", "Heartbeat"), ("register", "Registration"),
                      *((name, fetch_title(name)) for name in FETCHES)):
        for n in all_sizes:
            vals = tuple(get(results, k, n, "workloads", wl, "rps") for k in SERVERS)
            if all(v is None for v in vals):
                continue
            target = check = None
            if wl == "heartbeat":
                target = "≥10× Java, ≥0.5× ceiling"
                check = lambda r: None if r["h_over_j"] is None or r["h_over_c"] is None else (
                    r["h_over_j"] >= 10 and r["h_over_c"] >= 0.5)
            elif wl == "register":
                target = "≥10× Java"
                check = lambda r: None if r["h_over_j"] is None else r["h_over_j"] >= 10
            elif wl == "full_fetch" and n == judged:
                target = "≥10× Java"
                check = lambda r: None if r["h_over_j"] is None else r["h_over_j"] >= 10
            row(f"{title} throughput", n, "req/s", "higher", vals, target, check)
            lat = tuple(get(results, k, n, "workloads", wl, "p99_ms") for k in SERVERS)
            target = check = None
            if wl == "full_fetch" and n == judged:
                target = "≤0.1× Java"
                check = lambda r: None if r["h_over_j"] is None else r["h_over_j"] <= 0.1
            elif wl in ceiling_p99:
                target, check = at_most_ceiling(ceiling_p99[wl])
            row(f"{title} p99 latency", n, "ms", "lower", lat, target, check)
            cpu = tuple(get(results, k, n, "workloads", wl, "server_cpu_us_per_req") for k in SERVERS)
            row(f"{title} server CPU per request", n, "µs", "lower", cpu, *at_most_ceiling(ceiling_cpu[wl]))

    for n in all_sizes:
        vals = tuple(get(results, k, n, "payload", "full_wire_bytes") for k in ("heureka", "java")) + (None,)
        if any(v is not None for v in vals):
            row("Full fetch body on the wire (gzip)", n, "KiB", "info",
                tuple(None if v is None else v / 1024 for v in vals))
    first = all_sizes[0] if all_sizes else None
    if first is not None:
        row("RSS idle (right after start)", None, "MiB", "lower",
            tuple(None if (v := get(results, k, first, "rss_idle")) is None else v / 2**20 for k in SERVERS))
    for n in all_sizes:
        vals = tuple(None if (v := get(results, k, n, "rss_loaded")) is None else v / 2**20 for k in SERVERS)
        if all(v is None for v in vals):
            continue
        target = check = None
        if n == judged:
            target = "≤0.1× Java"
            check = lambda r: None if r["h_over_j"] is None else r["h_over_j"] <= 0.1
        row(f"RSS with N instances loaded", n, "MiB", "lower", vals, target, check, ceiling_ratio=False)
    for n in all_sizes:
        growth = tuple(get(results, k, n, "rss_growth_per_instance") for k in ("heureka", "java")) + (None,)
        if all(v is None for v in growth):
            continue
        payload = get(results, "heureka", n, "payload", "json_bytes_per_instance")
        target = check = None
        if payload is not None:
            # issue 10: ≤ 1 KB beyond the payload from 100,000 on; the first target below that
            extra = 1024 if n >= 100_000 else 2048
            target = f"< payload + {extra} B (< {payload + extra:,.0f} B)"
            check = lambda r, p=payload + extra: None if r["heureka"] is None else r["heureka"] < p
        row("RSS growth per instance", n, "B", "lower", growth, target, check, ceiling_ratio=False)
        pl = tuple(get(results, k, n, "payload", "json_bytes_per_instance") for k in ("heureka", "java")) + (None,)
        row("Payload per instance (full fetch JSON)", n, "B", "info", pl, ceiling_ratio=False)
    for n in all_sizes:
        vals = tuple(get(results, k, n, "payload", "full_first_fetch_ms") for k in SERVERS)
        if any(v is not None for v in vals):
            row("First full fetch after loading (builds the document)", n, "ms", "lower", vals)
    for n in all_sizes:
        # below LONG_DELTA_N each round's delta is rebuilt after re-registering; above, once, at loading
        vals = tuple(get(results, k, n, "workloads", "delta_fetch", "first_fetch_ms") if n < LONG_DELTA_N
                     else get(results, k, n, "payload", "delta_first_fetch_ms") for k in SERVERS)
        if any(v is not None for v in vals):
            row("First delta fetch of the N instances (builds it)", n, "ms", "lower", vals)
    for n in all_sizes:
        vals = tuple(get(results, k, n, "load", "seconds") for k in SERVERS)
        if any(v is not None for v in vals):
            row("Loading N instances (wrk, setup)", n, "s", "info", vals)
    for n in all_sizes:
        vals = (get(results, "heureka", n, "sync_from_peer", "seconds"), None, None)
        if vals[0] is not None:
            row("Start-up sync: a new node serves reads, all N synced from its peer", n, "s", "lower", vals,
                ceiling_ratio=False)
    row("Start-up to first 200 on /eureka/apps (median)", None, "ms", "lower",
        tuple(median_startup(results, k) for k in SERVERS), "≤100 ms",
        lambda r: None if r["heureka"] is None else r["heureka"] <= 100)
    for n in all_sizes:
        vals = tuple(get(results, k, n, "propagation", "median_ms") for k in ("heureka", "java")) + (None,)
        if all(v is None for v in vals):
            continue
        target = check = None
        if n <= 100_000 or n >= 1_000_000:
            cap = 10 if n <= 100_000 else 50  # issue 10: ≤ 10 ms up to 100,000, ≤ 50 ms at 1,000,000
            target = f"≤{cap} ms"
            check = lambda r, c=cap: None if r["heureka"] is None else r["heureka"] <= c
        row("Propagation register → visible in full fetch", n, "ms", "lower", vals, target, check,
            ceiling_ratio=False)
        for k, col in (("heureka", "heureka"), ("java", "java")):
            if get(results, k, n, "propagation", "median_capped"):
                rows[-1].setdefault("capped", []).append(col)
        unchanged = tuple(get(results, k, n, "propagation", "unchanged_fetch_median_ms")
                          for k in ("heureka", "java")) + (None,)
        if any(v is not None for v in unchanged):
            row("Propagation's client: the same full fetch, document unchanged", n, "ms", "info", unchanged,
                ceiling_ratio=False)
    return rows


def fmt_num(v, unit: str = "") -> str:
    if v is None:
        return "–"
    if isinstance(v, float) and math.isnan(v):
        return "–"
    a = abs(v)
    if unit in ("req/s", "B") or a >= 1000:
        return f"{v:,.0f}"
    if a >= 100:
        return f"{v:.0f}"
    if a >= 10:
        return f"{v:.1f}"
    if a >= 1:
        return f"{v:.2f}"
    return f"{v:.3f}"


def fmt_ratio(v) -> str:
    if v is None:
        return "–"
    if v <= 0:
        return f"{v:.2f}×"
    if v < 0.1:
        return f"1/{1 / v:,.0f}"
    if v >= 100:
        return f"{v:.0f}×"
    if v >= 10:
        return f"{v:.1f}×"
    if v >= 0.1:
        return f"{v:.2f}×"
    return f"{v:.3f}×"


def cell(row: dict, key: str) -> str:
    s = fmt_num(row[key], row["unit"])
    if key in row.get("capped", []):
        s = "≥ " + s + " (cap)"
    return s


def table_markdown(rows: list[dict]) -> str:
    out = ["| Workload | N | Unit | Heureka | Java | Ceiling | Heureka/Java | Heureka/Ceiling | Ceiling/Java | Target | |",
           "|---|--:|---|--:|--:|--:|--:|--:|--:|---|:-:|"]
    for r in rows:
        mark = {True: "✅ pass", False: "❌ FAIL", None: ("n/a" if r["target"] else "")}[r["pass"]]
        n = "" if r["n"] is None else f"{r['n']:,}"
        out.append(f"| {r['metric']} | {n} | {r['unit']} | "
                   f"{cell(r, 'heureka')} | {cell(r, 'java')} | {cell(r, 'baseline')} | "
                   f"{fmt_ratio(r['h_over_j'])} | {fmt_ratio(r['h_over_c'])} | {fmt_ratio(r['c_over_j'])} | "
                   f"{r['target'] or ''} | {mark} |")
    return "\n".join(out)


def table_text(rows: list[dict]) -> str:
    head = ["Workload", "N", "Unit", "Heureka", "Java", "Ceiling", "H/Java", "H/Ceil", "Ceil/Java", "Target", ""]
    body = []
    for r in rows:
        mark = {True: "pass", False: "FAIL", None: ("n/a" if r["target"] else "")}[r["pass"]]
        body.append([r["metric"], "" if r["n"] is None else f"{r['n']:,}", r["unit"], cell(r, "heureka"),
                     cell(r, "java"), cell(r, "baseline"), fmt_ratio(r["h_over_j"]), fmt_ratio(r["h_over_c"]),
                     fmt_ratio(r["c_over_j"]), r["target"] or "", mark])
    widths = [max(len(str(x[i])) for x in [head, *body]) for i in range(len(head))]
    lines = ["  ".join(str(c).ljust(w) if i in (0, 2, 9, 10) else str(c).rjust(w)
                       for i, (c, w) in enumerate(zip(line, widths))) for line in [head, *body]]
    lines.insert(1, "-" * len(lines[0]))
    return "\n".join(lines)


# --------------------------------------------------------------------------------------------
# SVG: horizontal bars on a log scale, one panel per figure, Heureka / Java / ceiling side by side.

COLORS = {"heureka": "#e8590c", "java": "#4263eb", "baseline": "#adb5bd"}


def sizes_run(results: dict) -> list[int]:
    return sorted({int(n) for runs in results["runs"].values() for n in runs})


def growth_series(results: dict) -> list[tuple[str, str, dict]]:
    """The figures whose growth with N the chart shows: (title, unit, {server: [(N, value)]})."""
    sizes = sizes_run(results)

    def series(*path, servers=SERVERS, scale=1.0):
        out = {}
        for k in servers:
            pts = [(n, v * scale) for n in sizes if isinstance(v := get(results, k, n, *path), (int, float)) and v > 0]
            # a figure that could not be measured at some N shows as a cross on the top edge
            lost = [n for n in sizes if failed_at(k, n, path)]
            if pts or lost:
                out[k] = pts
            if lost:
                out.setdefault("failed", []).extend((k, n) for n in lost)
        return out

    def failed_at(k: str, n: int, path) -> bool:
        cur = results["runs"].get(k, {}).get(str(n))
        for p in path[:-1]:
            if not isinstance(cur, dict):
                return False
            if "failed" in cur:
                return True
            cur = cur.get(p)
        return isinstance(cur, dict) and "failed" in cur

    charts = []
    for wl, title in (("heartbeat", "Heartbeat"), ("register", "Registration"),
                      ("full_fetch", "Full fetch"), ("delta_fetch", "Delta fetch")):
        charts.append((f"{title}: server CPU per request", "µs", series("workloads", wl, "server_cpu_us_per_req")))
    for wl, title in (("heartbeat", "Heartbeat"), ("register", "Registration"),
                      ("full_fetch", "Full fetch"), ("delta_fetch", "Delta fetch")):
        charts.append((f"{title}: p99 latency", "ms", series("workloads", wl, "p99_ms")))
    growth = series("rss_growth_per_instance", servers=("heureka", "java"))
    payload = series("payload", "json_bytes_per_instance", servers=("heureka",))
    if payload:
        growth["payload"] = payload["heureka"]
    charts.append(("RSS growth per instance", "B", growth))
    charts.append(("Propagation register → visible", "ms", series("propagation", "median_ms", servers=("heureka", "java"))))
    charts.append(("First full fetch after loading", "ms", series("payload", "full_first_fetch_ms")))
    charts.append(("Start-up sync from a peer", "s", series("sync_from_peer", "seconds", servers=("heureka",))))
    return [c for c in charts if any(c[2].get(k) for k in c[2] if k != "failed") or c[2].get("failed")]


def fmt_tick(v: float) -> str:
    if v >= 1e6:
        return f"{v / 1e6:g}M"
    if v >= 1e3:
        return f"{v / 1e3:g}k"
    return f"{v:g}"


def growth_charts(results: dict, top: float, width: int) -> tuple[list[str], float]:
    """Small log-log charts, one per figure: x is N (registered instances), y the figure, one line
    per server; the dashed grey line in the memory chart is the payload per instance."""
    charts = growth_series(results)
    if not charts:
        return [], 0
    parts: list[str] = []
    cols, ph = 3, 150
    cell_w, cell_h = (width - 20) // cols, ph + 70
    pw = cell_w - 95  # plot area of one chart: room for the y labels left, the last value right
    esc = html.escape
    parts.append(f'<text x="20" y="{top + 14}" font-size="15" font-weight="bold" fill="#212529">How each figure '
                 f'grows with N<tspan font-size="12" font-weight="normal" fill="#868e96" dx="10">log-log: x = '
                 f'instances registered, y = the figure; dashed grey: payload per instance</tspan></text>')
    y0 = top + 30
    sizes = sizes_run(results)
    xlo = 10 ** math.floor(math.log10(min(sizes)))
    xhi = 10 ** math.ceil(math.log10(max(sizes)))
    if xhi <= xlo:
        xhi = xlo * 10
    for i, (title, unit, data) in enumerate(charts):
        cx = 20 + (i % cols) * cell_w + 45
        cy = y0 + (i // cols) * cell_h + 22
        failed = data.pop("failed", [])
        vals = [v for pts in data.values() for _, v in pts] or [1.0]
        ylo = 10 ** math.floor(math.log10(min(vals)))
        yhi = 10 ** math.ceil(math.log10(max(vals)))
        if yhi <= ylo:
            yhi = ylo * 10

        def px(n, lo=xlo, hi=xhi, x0=cx):
            return x0 + pw * (math.log10(n) - math.log10(lo)) / (math.log10(hi) - math.log10(lo))

        def py(v, lo=ylo, hi=yhi, y1=cy):
            return y1 + ph - ph * (math.log10(v) - math.log10(lo)) / (math.log10(hi) - math.log10(lo))

        parts.append(f'<text x="{cx - 40}" y="{cy - 8}" font-size="12" font-weight="bold" fill="#212529">'
                     f'{esc(title)} <tspan font-weight="normal" fill="#868e96">({esc(unit)})</tspan></text>')
        parts.append(f'<rect x="{cx}" y="{cy}" width="{pw}" height="{ph}" fill="none" stroke="#ced4da"/>')
        d = math.log10(xlo)
        while d <= math.log10(xhi) + 1e-9:
            x = px(10 ** d)
            parts.append(f'<line x1="{x:.1f}" y1="{cy}" x2="{x:.1f}" y2="{cy + ph}" stroke="#f1f3f5"/>')
            parts.append(f'<text x="{x:.1f}" y="{cy + ph + 13}" font-size="10" text-anchor="middle" '
                         f'fill="#868e96">{fmt_tick(10 ** d)}</text>')
            d += 1
        d = math.log10(ylo)
        while d <= math.log10(yhi) + 1e-9:
            yy = py(10 ** d)
            parts.append(f'<line x1="{cx}" y1="{yy:.1f}" x2="{cx + pw}" y2="{yy:.1f}" stroke="#f1f3f5"/>')
            parts.append(f'<text x="{cx - 4}" y="{yy + 3:.1f}" font-size="10" text-anchor="end" '
                         f'fill="#868e96">{fmt_tick(10 ** d)}</text>')
            d += 1
        for k, n in failed:
            x, color = px(n), COLORS.get(k, "#868e96")
            parts.append(f'<path d="M{x - 4:.1f},{cy - 4}L{x + 4:.1f},{cy + 4}M{x + 4:.1f},{cy - 4}L{x - 4:.1f},{cy + 4}" '
                         f'stroke="{color}" stroke-width="2"><title>{esc(LABEL.get(k, k))} N={n:,}: failed '
                         f'(results.json says why)</title></path>')
            parts.append(f'<text x="{x - 6:.1f}" y="{cy + 14}" font-size="9" text-anchor="end" fill="{color}">failed</text>')
        label_ys: list[float] = []
        for k, pts in data.items():
            if not pts:
                continue
            color = COLORS.get(k, "#868e96")
            dash = ' stroke-dasharray="4 3"' if k == "payload" else ""
            path = " ".join(f"{'M' if j == 0 else 'L'}{px(n):.1f},{py(v):.1f}" for j, (n, v) in enumerate(pts))
            parts.append(f'<path d="{path}" fill="none" stroke="{color}" stroke-width="2"{dash}/>')
            for n, v in pts:
                parts.append(f'<circle cx="{px(n):.1f}" cy="{py(v):.1f}" r="3" fill="{color}">'
                             f'<title>{esc(LABEL.get(k, k))} N={n:,}: {fmt_num(v, unit)} {esc(unit)}</title></circle>')
            n, v = pts[-1]
            ly = py(v) - 4
            while any(abs(ly - u) < 10 for u in label_ys):  # two lines ending close: keep both readable
                ly += 10
            label_ys.append(ly)
            parts.append(f'<text x="{px(n) + 5:.1f}" y="{ly:.1f}" font-size="9" fill="{color}">'
                         f'{fmt_num(v, unit)}</text>')
    rows = (len(charts) + cols - 1) // cols
    return parts, 30 + rows * cell_h + 10


def svg_report(results: dict, rows: list[dict]) -> str:
    panels = [
        ("Heartbeat throughput", "req/s, higher is better", "Heartbeat throughput"),
        ("Registration throughput", "req/s, higher is better", "Registration throughput"),
        ("Full fetch throughput (JSON, gzip)", "req/s, higher is better", "Full fetch (JSON, gzip) throughput"),
        ("Full fetch p99 latency", "ms, lower is better", "Full fetch (JSON, gzip) p99 latency"),
        ("Delta fetch throughput (JSON, gzip)", "req/s, higher is better", "Delta fetch (JSON, gzip) throughput"),
        ("Heartbeat p99 latency", "ms, lower is better", "Heartbeat p99 latency"),
        ("Resident memory with N instances", "MiB, lower is better", "RSS with N instances loaded"),
        ("Start-up to first 200", "ms, lower is better", "Start-up to first 200 on /eureka/apps (median)"),
        ("Propagation register → visible", "ms, lower is better", "Propagation register → visible in full fetch"),
    ]
    W, left, right = 1040, 110, 220
    plot_w = W - left - right
    bar_h, gap = 14, 10
    parts: list[str] = []
    y = 0

    def text(x, yy, s, size=12, anchor="start", weight="normal", fill="#212529"):
        parts.append(f'<text x="{x:.1f}" y="{yy:.1f}" font-size="{size}" text-anchor="{anchor}" '
                     f'font-weight="{weight}" fill="{fill}">{html.escape(s)}</text>')

    m = results["machine"]
    text(20, 28, "Heureka vs Spring Cloud Eureka (Java) vs a trivial server (ceiling)", 20, weight="bold")
    text(20, 50, f"{results['mode']} run, {m['date']} · {m['cores']} cores · {m['memory_gib']} GiB · {m['cpu']} · "
                 f"wrk -t{results['config']['threads']} -c{results['config']['connections']} "
                 f"-d{results['config']['duration']}s ×{results['config'].get('rounds', 1)} · log scale, same run, same machine", 12, fill="#495057")
    lx = 20
    for k in SERVERS:
        parts.append(f'<rect x="{lx}" y="62" width="14" height="14" fill="{COLORS[k]}"/>')
        text(lx + 20, 74, LABEL[k], 12)
        lx += 230
    grid, grid_h = growth_charts(results, 100, W)
    parts += grid
    y = 100 + grid_h
    for title, subtitle, metric in panels:
        prs = [r for r in rows if r["metric"] == metric]
        prs = [r for r in prs if any(r[k] not in (None, 0) for k in SERVERS)]
        if not prs:
            continue
        vals = [r[k] for r in prs for k in SERVERS if r[k] not in (None, 0) and r[k] > 0]
        lo = 10 ** math.floor(math.log10(min(vals)))
        hi = max(vals) * 4  # room for the value labels right of the longest bar
        if hi <= lo * 10:
            hi = lo * 10
        span = math.log10(hi) - math.log10(lo)

        def xpos(v):
            return left + plot_w * (math.log10(v) - math.log10(lo)) / span

        parts.append(f'<text x="20" y="{y + 14}" font-size="15" font-weight="bold" fill="#212529">'
                     f'{html.escape(title)}<tspan font-size="12" font-weight="normal" fill="#868e96" dx="10">'
                     f'{html.escape(subtitle)}</tspan></text>')
        y += 26
        n_bars = sum(1 for r in prs for k in SERVERS if r[k] not in (None, 0))
        panel_h = n_bars * (bar_h + 2) + len(prs) * gap
        # decade grid
        d = math.log10(lo)
        while d <= math.log10(hi):
            x = xpos(10 ** d)
            parts.append(f'<line x1="{x:.1f}" y1="{y - 4}" x2="{x:.1f}" y2="{y + panel_h}" stroke="#dee2e6"/>')
            text(x, y + panel_h + 13, f"{10 ** d:,.0f}" if d >= 0 else f"{10 ** d:g}", 10, anchor="middle",
                 fill="#868e96")
            d += 1
        for r in prs:
            label = "all N" if r["n"] is None else f"N = {r['n']:,}"
            group_top = y
            for k in SERVERS:
                v = r[k]
                if v in (None, 0):
                    continue
                x1 = xpos(v)
                parts.append(f'<rect x="{left}" y="{y}" width="{max(1.0, x1 - left):.1f}" height="{bar_h}" '
                             f'fill="{COLORS[k]}" rx="2"/>')
                capped = k in r.get("capped", [])
                text(x1 + 4, y + bar_h - 3, ("≥ " if capped else "") + fmt_num(v, r["unit"]) + " " + r["unit"], 10)
                y += bar_h + 2
            text(left - 8, (group_top + y) / 2 + 4, label, 12, anchor="end")
            notes = []
            if r["h_over_j"] is not None:
                notes.append(f"Heureka = {fmt_ratio(r['h_over_j'])} Java")
            if r["h_over_c"] is not None:
                notes.append(f"Heureka = {fmt_ratio(r['h_over_c'])} ceiling")
            if notes:
                mark = {True: "  ✓ target", False: "  ✗ target", None: ""}[r["pass"]]
                color = {True: "#2b8a3e", False: "#c92a2a", None: "#495057"}[r["pass"]]
                notes[-1] += mark
                mid = (group_top + y) / 2 + 4 - 7 * (len(notes) - 1)
                for i, note in enumerate(notes):
                    text(W - right + 10, mid + 14 * i, note, 11, fill=color)
            y += gap
        y += 30
    H = y + 10
    return (f'<svg xmlns="http://www.w3.org/2000/svg" width="{W}" height="{H}" viewBox="0 0 {W} {H}" '
            f'font-family="Helvetica, Arial, sans-serif">\n<rect width="{W}" height="{H}" fill="white"/>\n'
            + "\n".join(parts) + "\n</svg>\n")


# --------------------------------------------------------------------------------------------
# Machine description


def machine_info() -> dict:
    cpu = "unknown"
    try:
        for line in open("/proc/cpuinfo"):
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    mem = None
    try:
        for line in open("/proc/meminfo"):
            if line.startswith("MemTotal:"):
                mem = int(line.split()[1]) * 1024
    except OSError:
        pass

    def version(cmd):
        try:
            p = subprocess.run(cmd, capture_output=True, text=True, timeout=30)
            return (p.stdout + p.stderr).strip().splitlines()[0]
        except (OSError, IndexError, subprocess.TimeoutExpired):
            return None

    commit = version(["git", "-C", str(ROOT), "rev-parse", "--short", "HEAD"])
    dirty = version(["git", "-C", str(ROOT), "status", "--porcelain", "--untracked-files=no"])
    return {
        "cores": os.cpu_count(), "memory_gib": round(mem / 2**30, 1) if mem else None, "cpu": cpu,
        "kernel": platform.release(), "date": dt.datetime.now(dt.timezone.utc).strftime("%Y-%m-%d %H:%M UTC"),
        "rustc": version(["rustc", "-V"]), "java": version(["java", "-version"]),
        "wrk": version(["wrk", "-v"]), "python": platform.python_version(),
        "commit": (commit or "?") + ("-dirty" if dirty else ""),
    }


def cpu_busy(seconds: float = 1.0) -> float:
    """Share of all CPUs busy over a short window, from /proc/stat (0..1)."""
    def snap():
        with open("/proc/stat") as f:
            v = [int(x) for x in f.readline().split()[1:]]
        idle = v[3] + (v[4] if len(v) > 4 else 0)
        return sum(v), idle
    try:
        t0, i0 = snap()
        time.sleep(seconds)
        t1, i1 = snap()
    except OSError:
        return 0.0
    return 0.0 if t1 == t0 else 1 - (i1 - i0) / (t1 - t0)


def wait_for_quiet(limit_s: float, threshold: float = 0.15) -> float:
    """Waits (bounded) until other processes leave the CPUs mostly idle; returns the last reading."""
    deadline = time.time() + limit_s
    busy = cpu_busy()
    while busy > threshold and time.time() < deadline:
        log(f"machine is {busy:.0%} busy with other work; waiting for it to calm down "
            f"(up to {max(0, deadline - time.time()):.0f} s more)")
        time.sleep(4)
        busy = cpu_busy()
    if busy > threshold:
        log(f"WARNING: machine still {busy:.0%} busy before the run; figures will be noisy")
    return busy


def interference(results: dict) -> str:
    shares = [r["other_cpu_share"] for runs in results["runs"].values() for run in runs.values()
              for wl in run.get("workloads", {}).values() for r in wl.get("rounds", [])
              if r.get("other_cpu_share") is not None]
    if not shares:
        return "an unknown share"
    idle = [r.get("idle_servers_cpu_share") or 0 for runs in results["runs"].values() for run in runs.values()
            for wl in run.get("workloads", {}).values() for r in wl.get("rounds", [])]
    return (f"{statistics.median(shares):.0%} (median; worst round {max(shares):.0%}, of which the other "
            f"benchmarked servers, idle meanwhile, at most {max(idle, default=0):.0%})")


def write_reports(results: dict, rows: list[dict], out: Path) -> str:
    results["table"] = rows
    (out / "results.json").write_text(json.dumps(results, indent=1, ensure_ascii=False) + "\n")
    m, c = results["machine"], results["config"]
    md = [f"# Heureka benchmark results ({results['mode']} run)", "",
          f"Machine: **{m['cores']} cores, {m['memory_gib']} GiB, {m['cpu']}**, Linux {m['kernel']}. "
          f"Date: {m['date']}. Commit {m['commit']}.", "",
          f"Tools: {m['wrk']}; {m['rustc']}; {m['java']}. CPUs busy with other work just before the run: "
          f"{m.get('cpu_busy_before_run', 0):.0%}; during the measured rounds, other work took "
          f"{interference(results)} of the CPU time (per round in results.json: `other_cpu_share`).", "",
          f"Load: wrk `-t{c['threads']} -c{c['connections']}`; per workload and server, {c['warmup']} s warm-up runs "
          f"with 2 s pauses until the server's CPU time per request is steady (3 runs in a row within 10 %, "
          f"at most {c.get('warmup_runs_max', 1)} runs), "
          f"then {c.get('rounds', 1)} measured round(s) of {c['duration']} s, alternating between the servers "
          f"(all running, loaded, the idle ones waiting); each figure is the median round. wrk runs on the same "
          f"cores as the server under test. Instances spread over N/10 apps. Everything is measured side by "
          f"side in one run: read the ratios, not the absolute numbers.", "",
          ("Produced by `python3 bench/run.py`; [bench/README.md](../README.md) says what each row means."
           if results["mode"] == "full" else
           "Produced by `python3 bench/run.py --smoke`: figures from 1 s runs are not meaningful."), "",
          table_markdown(rows), "",
          "How to read it:", "",
          "* **Ceiling/Java** is the largest Heureka/Java ratio this machine can show at all (the trivial "
          "server's). Where it is below a target's factor, no server can meet that target here by "
          "throughput; the *server CPU per request* rows compare the work done per request instead, "
          "independently of how wrk and the server share the cores.",
          "* Java's RSS is that of a JVM with default flags (maximum heap ¼ of RAM, no GC forced), so its "
          "growth per instance is mostly noise; Heureka's is (loaded − idle) / N.",
          "* Java's propagation is bounded by its read-only response cache, refreshed every 30 s: any value "
          "from 0 to 30 s, depending on that timer's phase. Heureka's includes one full fetch: the row "
          "after it times the same client's fetch of the unchanged document, so the difference is the "
          "rebuild after the change.",
          ""]
    if results["failures"]:
        md += ["## Failures", ""] + [f"* {f}" for f in results["failures"]] + [""]
    md += ["![results](results.svg)", ""]
    (out / "results.md").write_text("\n".join(md))
    (out / "results.svg").write_text(svg_report(results, rows))
    return table_text(rows)


# --------------------------------------------------------------------------------------------


def parse_args(argv: list[str]):
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--smoke", action="store_true", help="every workload briefly (CI): 100 instances, 1 s runs")
    p.add_argument("--servers", default=",".join(SERVERS), help="comma list from heureka,java,baseline")
    p.add_argument("--sizes", help="registry sizes run on every server (default 1000,10000; smoke 100)")
    p.add_argument("--heureka-sizes", help="extra sizes for Heureka and the ceiling only (default 100000)")
    p.add_argument("--duration", type=int, help="seconds per measured wrk round (default 5; smoke 1)")
    p.add_argument("--rounds", type=int, help="measured rounds per workload and server, interleaved (default 3; smoke 1)")
    p.add_argument("--warmup", type=int, help="seconds per warm-up run (default 3; smoke 1)")
    p.add_argument("--warmup-runs", type=int,
                   help="at most this many warm-up runs, until 3 in a row agree within 10%% (default 15; smoke 1)")
    p.add_argument("--workloads", default=",".join(ALL_WORKLOADS),
                   help=f"comma list of the workloads to run (default all: {','.join(ALL_WORKLOADS)})")
    p.add_argument("--threads", type=int, default=2, help="wrk threads (default 2)")
    p.add_argument("--connections", type=int, default=64, help="wrk connections (default 64)")
    p.add_argument("--prop-cap", type=float, help="propagation deadline in seconds (default 35; smoke 5)")
    p.add_argument("--out", help="output directory (default bench/results, smoke: bench/results/smoke)")
    p.add_argument("--quiet-wait", type=float,
                   help="seconds to wait for other processes to leave the CPUs idle first (default 120; smoke 0)")
    p.add_argument("--skip-build", action="store_true", help="use the binaries and jar as they are")
    p.add_argument("--report-from", type=Path, metavar="JSON",
                   help="measure nothing: write the reports again from a results.json (into --out)")
    a = p.parse_args(argv)
    smoke = a.smoke
    a.mode = "smoke" if smoke else "full"
    a.servers = [s.strip() for s in a.servers.split(",") if s.strip()]
    for s in a.servers:
        if s not in SERVERS:
            p.error(f"unknown server {s!r}")
    a.workloads = [w.strip() for w in a.workloads.split(",") if w.strip()]
    for w in a.workloads:
        if w not in ALL_WORKLOADS:
            p.error(f"unknown workload {w!r} (known: {', '.join(ALL_WORKLOADS)})")
    a.sizes = [int(x) for x in a.sizes.split(",")] if a.sizes else ([100] if smoke else [1000, 10000])
    if a.heureka_sizes is not None:
        a.heureka_sizes = [int(x) for x in a.heureka_sizes.split(",") if x]
    else:
        a.heureka_sizes = [] if smoke else [100000]
    a.duration = a.duration or (1 if smoke else 5)
    a.rounds = a.rounds or (1 if smoke else 3)
    a.warmup = a.warmup if a.warmup is not None else (1 if smoke else 3)
    a.warmup_runs = a.warmup_runs or (1 if smoke else 15)
    a.warmup_pause = 0 if smoke else 2.0
    a.idle_wait = 3.0 if smoke else 20.0
    a.prop_cap = a.prop_cap or (5.0 if smoke else 35.0)
    a.prop_samples = 3 if smoke else 7
    a.prop_budget = a.prop_cap + 5
    a.settle = 0.2 if smoke else 1.0
    a.wrk_timeout = 10
    a.start_deadline = 180.0
    a.startup_repeats = 1 if smoke else 5
    a.quiet_wait = a.quiet_wait if a.quiet_wait is not None else (0 if smoke else 120)
    a.out = Path(a.out) if a.out else (BENCH / "results" / ("smoke" if smoke else ""))
    return a


def heartbeat_guard(out: Path, failures: list[str]) -> None:
    """`guard.py`: the heartbeat's CPU over the trivial server's, within its margin of the
    committed ratio (the regression guard of issue 37)."""
    log("heartbeat regression guard (bench/guard.py)")
    cmd = [sys.executable, str(BENCH / "guard.py"), "--skip-build", "--heureka", str(HEUREKA_BIN)]
    try:
        p = subprocess.run(cmd, capture_output=True, text=True, timeout=300)
    except subprocess.TimeoutExpired:
        failures.append("heartbeat guard: no result within 300 s")
        return
    (out / "logs" / "guard.log").write_text(p.stdout + p.stderr)
    print(p.stdout.strip(), flush=True)
    if p.returncode != 0:
        failures.append(f"heartbeat guard: {(p.stdout + p.stderr).strip().splitlines()[-1]}")


def push_fleet_smoke(out: Path, failures: list[str]) -> None:
    """`push_fleet.py --smoke` (200 push subscribers, 5 writes): does the push benchmark run. Its
    subscriber fleet is Go; without a Go toolchain it is skipped, not failed."""
    go = shutil.which("go") or ("/usr/local/go/bin/go" if os.access("/usr/local/go/bin/go", os.X_OK) else None)
    if go is None:
        log("push fleet smoke skipped: no go toolchain")
        return
    log("push fleet smoke (bench/push_fleet.py --smoke)")
    cmd = [sys.executable, str(BENCH / "push_fleet.py"), "--smoke", "--bin", str(HEUREKA_BIN),
           "--go", go, "--out", str(out)]
    try:
        p = subprocess.run(cmd, capture_output=True, text=True, timeout=300)
    except subprocess.TimeoutExpired:
        failures.append("push fleet smoke: no result within 300 s")
        return
    (out / "logs" / "push-fleet-smoke.log").write_text(p.stdout + p.stderr)
    if p.returncode != 0:
        failures.append(f"push fleet smoke: exit {p.returncode}: {tail_of(out / 'logs' / 'push-fleet-smoke.log')}")


def main(argv: list[str]) -> int:
    cfg = parse_args(argv)
    if cfg.report_from:
        results = json.loads(cfg.report_from.read_text())
        rows = build_rows(results, results["config"]["sizes"], results["config"]["heureka_sizes"])
        cfg.out.mkdir(parents=True, exist_ok=True)
        print(write_reports(results, rows, cfg.out.resolve()))
        return 0
    if not shutil.which("wrk"):
        print("bench: wrk not found (Debian/Ubuntu: apt-get install wrk)", file=sys.stderr)
        return 2
    out = cfg.out.resolve()
    log_dir = out / "logs"
    log_dir.mkdir(parents=True, exist_ok=True)
    for old_log in log_dir.glob("*.log"):  # logs describe one run
        old_log.unlink()
    t_begin = time.time()
    results: dict = {
        "mode": cfg.mode, "machine": machine_info(),
        "config": {"servers": cfg.servers, "workloads": cfg.workloads, "sizes": cfg.sizes, "heureka_sizes": cfg.heureka_sizes,
                   "duration": cfg.duration, "rounds": cfg.rounds, "warmup": cfg.warmup,
                   "warmup_runs_max": cfg.warmup_runs, "warmup_pause_s": cfg.warmup_pause, "threads": cfg.threads,
                   "connections": cfg.connections, "propagation_cap_s": cfg.prop_cap,
                   "server_flags": COMMON_FLAGS},
        "runs": {}, "startup": {}, "failures": [],
    }
    failures: list[str] = results["failures"]
    log(f"{cfg.mode} run; servers {cfg.servers}; sizes {cfg.sizes} + Heureka-only {cfg.heureka_sizes}; "
        f"output {out}")
    errors = build(cfg.servers, cfg.skip_build)
    results["machine"]["cpu_busy_before_run"] = round(wait_for_quiet(cfg.quiet_wait), 3)
    for key, err in errors.items():
        failures.append(f"{SHORT[key]}: build: {err}")
        log(f"{LABEL[key]} unavailable: {err}")
    servers = [s for s in SERVERS if s in cfg.servers and s not in errors]
    bin_dir = Path(tempfile.mkdtemp(prefix="heureka-bench-"))
    results["binaries"] = snapshot_binaries(servers, bin_dir)
    try:
        for n in cfg.sizes:
            bench_size(servers, n, cfg, log_dir, results, failures)
        for n in cfg.heureka_sizes:
            bench_size([k for k in servers if k != "java"], n, cfg, log_dir, results, failures)
        if cfg.startup_repeats > 1:
            log("start-up repeats")
            for key in servers:
                extra_startups(key, cfg.startup_repeats if key != "java" else 3, cfg, log_dir, results, failures)
    except KeyboardInterrupt:
        failures.append("interrupted")
    finally:
        stop_all()
        shutil.rmtree(bin_dir, ignore_errors=True)
    if cfg.smoke and "heureka" in servers and "interrupted" not in failures:
        push_fleet_smoke(out, failures)
        if "baseline" in servers:
            heartbeat_guard(out, failures)
    results["elapsed_s"] = round(time.time() - t_begin, 1)
    rows = build_rows(results, cfg.sizes, cfg.heureka_sizes)
    table = write_reports(results, rows, out)
    print()
    print(table)
    print()
    print(f"Results: {out / 'results.md'}, {out / 'results.json'}, {out / 'results.svg'} "
          f"(logs in {log_dir}); {results['elapsed_s']:.0f} s")
    if failures:
        print("\nWorkloads that could not run:", file=sys.stderr)
        for f in failures:
            print(f"  - {f}", file=sys.stderr)
        return 1
    return 0


def _terminate(signum, frame):  # noqa: ARG001
    raise KeyboardInterrupt(f"signal {signum}")


if __name__ == "__main__":
    # Ctrl-C or a CI timeout's SIGTERM: stop the servers this run started, then exit. (SIGINT is
    # set explicitly: a shell starting us in the background may have left it ignored.)
    signal.signal(signal.SIGTERM, _terminate)
    signal.signal(signal.SIGINT, _terminate)
    try:
        sys.exit(main(sys.argv[1:]))
    finally:
        stop_all()
