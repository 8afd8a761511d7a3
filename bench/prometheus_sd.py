#!/usr/bin/env python3
"""What a Prometheus HTTP SD answer costs the server, beside a full Eureka fetch of the same
registry (issue 35). Standard library only; reuses run.py's start-up and loading.

    python3 bench/prometheus_sd.py --n 10000 [--rounds 40]

One heureka (the release binary under $CARGO_TARGET_DIR) holding N instances (run.py's, in
N/10 applications). Server CPU (utime + stime from /proc) is read around each workload:

* after a change: ROUNDS times, one registration then one read; the CPU of ROUNDS bare
  registrations is subtracted, leaving what the read cost when its body had to be built;
* unchanged: ROUNDS reads with nothing changed in between (the kept body);
* 304: ROUNDS SD reads with If-None-Match naming the current ETag.

Reads: the full fetch in JSON without gzip, the same with gzip, and the SD answer without
and with gzip (as Prometheus asks). CPU is
counted in clock ticks (10 ms), so each figure is a mean over ROUNDS.
"""

import argparse
import http.client
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import run  # noqa: E402

READS = {
    "full fetch, JSON": ("/eureka/apps", {"Accept": "application/json"}),
    "full fetch, JSON gzip": ("/eureka/apps", {"Accept": "application/json",
                                               "Accept-Encoding": "gzip"}),
    "Prometheus SD": ("/eureka/prometheus/sd", {}),
    "Prometheus SD, gzip": ("/eureka/prometheus/sd", {"Accept-Encoding": "gzip"}),
}


def get(conn, path, headers):
    status, body, response_headers = run.http_get(conn, path, headers)
    assert status in (200, 304), (path, status)
    return body, response_headers


def register(conn, k):
    iid = f"sd-bench-{k}-{time.time_ns()}"
    conn.request("POST", "/eureka/apps/BENCH-APP-0", body=run.register_body(iid, 0, "10.9.9.9"),
                 headers={"Content-Type": "application/json"})
    response = conn.getresponse()
    response.read()
    assert response.status == 204, response.status


def cpu_ms_per_round(srv, rounds, step):
    conn = http.client.HTTPConnection("127.0.0.1", srv.port, timeout=120)
    before = srv.cpu()
    for k in range(rounds):
        step(conn, k)
    return (srv.cpu() - before) * 1000 / rounds


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--n", type=int, default=10000)
    parser.add_argument("--rounds", type=int, default=40)
    args = parser.parse_args()
    log_dir = Path("/tmp/heureka-bench-prometheus-sd")
    log_dir.mkdir(parents=True, exist_ok=True)
    srv = run.start_server("heureka", log_dir, "sd")
    try:
        run.load_instances(srv, args.n, run.napps_for(args.n), {204})
        conn = http.client.HTTPConnection("127.0.0.1", srv.port, timeout=120)
        sizes = {name: len(get(conn, path, headers)[0]) for name, (path, headers) in READS.items()}
        writes = cpu_ms_per_round(srv, args.rounds, register)
        print(f"{args.n} instances; a registration alone: {writes:.2f} ms CPU")
        print(f"{'read':<24}{'bytes':>12}{'after a change':>16}{'unchanged':>12}")
        for name, (path, headers) in READS.items():
            changed = cpu_ms_per_round(
                srv, args.rounds, lambda c, k: (register(c, k), get(c, path, headers)))
            unchanged = cpu_ms_per_round(srv, args.rounds, lambda c, k: get(c, path, headers))
            print(f"{name:<24}{sizes[name]:>12,}{changed - writes:>13.2f} ms{unchanged:>9.2f} ms")
        etag = get(conn, READS["Prometheus SD"][0], {})[1]["etag"]
        not_modified = cpu_ms_per_round(
            srv, args.rounds,
            lambda c, k: get(c, "/eureka/prometheus/sd", {"If-None-Match": etag}))
        print(f"{'Prometheus SD, 304':<24}{0:>12}{'':>16}{not_modified:>9.2f} ms")
    finally:
        srv.stop()


if __name__ == "__main__":
    main()
