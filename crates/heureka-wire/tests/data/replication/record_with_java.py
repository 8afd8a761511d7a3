#!/usr/bin/env python3
"""Checks our replication bodies against the real Spring Cloud Eureka server and records its own.

Usage (after `mvn -q -B -DskipTests package` in interop/java):

    python3 crates/heureka-wire/tests/data/replication/record_with_java.py

Everything listens on 127.0.0.1. Two halves:

* Java as the receiver: each `ours_*.json` batch (written by our encoder, see
  tests/it/replication.rs) is POSTed to the Java server's /eureka/peerreplication/batch/; the
  status codes of every element and the resulting registry (GET /eureka/apps/{app}, JSON) are
  checked, and the answers are saved as `java_response_*.json`.
* Java as the sender: the Java server is given a second service URL pointing at a recording
  peer run by this script. Registrations, heartbeats, overrides, metadata and cancels made on the
  Java server through its ordinary REST API make it replicate to that peer; each batch it sends
  is saved as `java_batch_*.json`. The peer answers one heartbeat with our encoding of a 404 and
  one with our encoding of a 409 plus a newer copy, and the script checks that the Java server
  re-registers, resp. adopts the copy.

Exits non-zero on the first expectation that fails.
"""
from __future__ import annotations

import gzip
import http.client
import http.server
import json
import socket
import subprocess
import sys
import tempfile
import threading
import time
import urllib.parse
from pathlib import Path

HERE = Path(__file__).resolve().parent
REPO = HERE.parents[4]
JAR = REPO / "interop" / "java" / "eureka-server" / "target" / "eureka-server.jar"
HOST = "127.0.0.1"
ORDERS_ID = "10.0.0.5:orders:8080"


def free_port() -> int:
    with socket.socket() as s:
        s.bind((HOST, 0))
        return s.getsockname()[1]


def request(port, method, path, body=None, headers=None):
    conn = http.client.HTTPConnection(HOST, port, timeout=10)
    try:
        conn.request(method, path, body=body, headers=headers or {})
        resp = conn.getresponse()
        return resp.status, resp.read()
    finally:
        conn.close()


def expect(what, condition, detail=""):
    if not condition:
        sys.exit(f"FAILED: {what}\n{detail}")
    print(f"ok: {what}")


def wait_for(what, probe, timeout=20.0):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        value = probe()
        if value:
            return value
        time.sleep(0.1)
    sys.exit(f"FAILED (timed out): {what}")


class RecordingPeer(http.server.ThreadingHTTPServer):
    """A peer that records every batch and answers 200 to each element, unless told otherwise."""

    def __init__(self, port):
        super().__init__((HOST, port), PeerHandler)
        self.batches: list[tuple[dict, bytes]] = []
        self.lock = threading.Lock()
        self.heartbeat_answer: bytes | None = None

    def batches_with(self, action):
        with self.lock:
            return [b for h, b in self.batches
                    if any(e.get("action") == action for e in json.loads(b)["replicationList"])]


class PeerHandler(http.server.BaseHTTPRequestHandler):
    def log_message(self, *args):
        pass

    def do_GET(self):
        # Start-up sync is off; answer an empty registry should anything ask.
        body = b'{"applications":{"versions__delta":"1","apps__hashcode":"","application":[]}}'
        self.answer(200, body)

    def do_POST(self):
        body = self.read_body()
        if self.headers.get("Content-Encoding") == "gzip":
            body = gzip.decompress(body)
        peer: RecordingPeer = self.server
        elements = json.loads(body)["replicationList"]
        with peer.lock:
            peer.batches.append((dict(self.headers), body))
            answer = None
            if len(elements) == 1 and elements[0]["action"] == "Heartbeat" and peer.heartbeat_answer:
                answer, peer.heartbeat_answer = peer.heartbeat_answer, None
        if answer is None:
            answer = json.dumps({"responseList": [{"statusCode": 200}] * len(elements)},
                                separators=(",", ":")).encode()
        self.answer(200, answer)

    def read_body(self):
        if self.headers.get("Transfer-Encoding", "").lower() != "chunked":
            return self.rfile.read(int(self.headers.get("Content-Length", "0")))
        body = b""
        while True:
            size = int(self.rfile.readline().split(b";")[0], 16)
            if size == 0:
                self.rfile.readline()
                return body
            body += self.rfile.read(size)
            self.rfile.readline()

    def answer(self, status, body):
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)


def main():
    if not JAR.exists():
        sys.exit(f"{JAR} missing: run `mvn -q -B -DskipTests package` in interop/java")
    java_port, peer_port = free_port(), free_port()
    peer = RecordingPeer(peer_port)
    threading.Thread(target=peer.serve_forever, daemon=True).start()
    log = tempfile.NamedTemporaryFile(prefix="java-eureka-", suffix=".log", delete=False)
    # The Java server drops service URLs whose host is its own host name, so it calls itself
    # `localhost` and the recording peer `127.0.0.1`.
    java = subprocess.Popen([
        "java", "-XX:TieredStopAtLevel=1", "-jar", str(JAR),
        f"--server.port={java_port}", f"--server.address={HOST}",
        "--eureka.instance.hostname=localhost",
        f"--eureka.client.service-url.defaultZone=http://localhost:{java_port}/eureka/,"
        f"http://{HOST}:{peer_port}/eureka/",
        "--eureka.server.use-read-only-response-cache=false",
        "--eureka.server.enable-self-preservation=false",
        "--eureka.server.registry-sync-retries=0",
    ], stdout=log, stderr=subprocess.STDOUT, start_new_session=True)
    print(f"java server on {java_port} (log {log.name}), recording peer on {peer_port}")
    try:
        wait_for("java server up", lambda: up(java_port), timeout=120)
        as_receiver(java_port)
        as_sender(java_port, peer)
    finally:
        java.terminate()
        try:
            java.wait(timeout=20)
        except subprocess.TimeoutExpired:
            java.kill()
        peer.shutdown()
    print("all expectations met")


def up(port):
    try:
        return request(port, "GET", "/eureka/apps/", headers={"Accept": "application/json"})[0] == 200
    except OSError:
        return False


def app(port, name):
    status, body = request(port, "GET", f"/eureka/apps/{name}", headers={"Accept": "application/json"})
    if status != 200:
        return None
    instances = json.loads(body)["application"]["instance"]
    return {i["instanceId"]: i for i in instances}


def post_batch(port, name):
    status, body = request(port, "POST", "/eureka/peerreplication/batch/",
                           body=(HERE / name).read_bytes(),
                           headers={"Content-Type": "application/json", "Accept": "application/json"})
    return status, body


def as_receiver(port):
    def replicate(name, expected_codes, saved_as):
        status, body = post_batch(port, name)
        codes = [r["statusCode"] for r in json.loads(body)["responseList"]] if status == 200 else None
        expect(f"{name}: HTTP 200 with element codes {expected_codes}",
               status == 200 and codes == expected_codes, f"HTTP {status}: {body[:500]!r}")
        (HERE / saved_as).write_bytes(body)
        return json.loads(body)

    replicate("ours_register.json", [200, 200], "java_response_register.json")
    orders = app(port, "ORDERS")[ORDERS_ID]
    expect("ORDERS registered as sent", orders["status"] == "UP"
           and orders["lastDirtyTimestamp"] == "1714550399000"
           and orders["metadata"] == {"management.port": "8080"}
           and orders["port"] == {"$": 8080, "@enabled": "true"}, json.dumps(orders))
    billing = app(port, "BILLING_SVC")["i-0abc"]
    expect("BILLING_SVC registered as sent", billing["status"] == "OUT_OF_SERVICE"
           and billing["overriddenStatus"] == "OUT_OF_SERVICE"
           and billing["dataCenterInfo"]["name"] == "Amazon"
           and billing["metadata"]["price$"] == "€5\ttab\r\nnewline"
           and billing["asgName"] == "billing-asg", json.dumps(billing))

    answer = replicate("ours_heartbeats.json", [200, 409, 404, 404, 200], "java_response_heartbeats.json")
    entity = answer["responseList"][1].get("responseEntity")
    expect("the 409 carries the receiver's copy", entity and entity["instanceId"] == ORDERS_ID
           and entity["lastDirtyTimestamp"] == "1714550399000", json.dumps(answer))

    replicate("ours_status.json", [200, 404], "java_response_status.json")
    orders = app(port, "ORDERS")[ORDERS_ID]
    expect("status override applied", orders["status"] == "OUT_OF_SERVICE"
           and orders["overriddenStatus"] == "OUT_OF_SERVICE", json.dumps(orders))

    replicate("ours_delete_override.json", [200], "java_response_delete_override.json")
    orders = app(port, "ORDERS")[ORDERS_ID]
    expect("status override removed", orders["status"] == "UNKNOWN"
           and orders["overriddenStatus"] == "UNKNOWN", json.dumps(orders))

    replicate("ours_cancel.json", [200, 404, 200], "java_response_cancel.json")
    expect("both cancelled", app(port, "ORDERS") is None and app(port, "BILLING_SVC") is None)

    # How the Java receiver treats batches it cannot read (not files of ours; recorded answers
    # only in the output).
    def probe(what, batch, check):
        status, body = request(port, "POST", "/eureka/peerreplication/batch/", body=batch,
                               headers={"Content-Type": "application/json", "Accept": "application/json"})
        expect(f"{what}: HTTP {status} {body[:200]!r}", check(status, body))

    probe("unknown action fails the whole batch",
          b'{"replicationList":[{"appName":"ORDERS","id":"x","action":"Bogus"},'
          b'{"appName":"ORDERS","id":"y","action":"Cancel"}]}',
          lambda s, b: s == 400)
    probe("lower-case action fails the whole batch",
          b'{"replicationList":[{"appName":"ORDERS","id":"x","action":"cancel"}]}',
          lambda s, b: s == 400)
    probe("unknown property fails the whole batch",
          b'{"replicationList":[{"appName":"ORDERS","id":"x","action":"Cancel","extra":1}]}',
          lambda s, b: s == 400)
    probe("missing action is a 500 for that element only",
          b'{"replicationList":[{"appName":"ORDERS","id":"x"},{"appName":"ORDERS","id":"y","action":"Cancel"}]}',
          lambda s, b: s == 200 and [r["statusCode"] for r in json.loads(b)["responseList"]] == [500, 404])
    probe("register without instanceInfo is a 500 for that element",
          b'{"replicationList":[{"appName":"ORDERS","id":"x","action":"Register"}]}',
          lambda s, b: s == 200 and [r["statusCode"] for r in json.loads(b)["responseList"]] == [500])
    probe("string lastDirtyTimestamp is accepted",
          b'{"replicationList":[{"appName":"ORDERS","id":"x","lastDirtyTimestamp":"5","status":"UP","action":"Heartbeat"}]}',
          lambda s, b: s == 200 and [r["statusCode"] for r in json.loads(b)["responseList"]] == [404])


def as_sender(port, peer):
    instance = json.loads((HERE / "ours_register.json").read_bytes())["replicationList"][0]["instanceInfo"]
    path = f"/eureka/apps/ORDERS/{urllib.parse.quote(ORDERS_ID)}"
    json_headers = {"Content-Type": "application/json", "Accept": "application/json"}

    def next_batch(action, seen, saved_as=None):
        batch = wait_for(f"java replicates a {action}",
                         lambda: (peer.batches_with(action)[seen:] or [None])[0])
        if saved_as:
            (HERE / saved_as).write_bytes(batch)
        return json.loads(batch)["replicationList"]

    status, _ = request(port, "POST", "/eureka/apps/ORDERS", body=json.dumps({"instance": instance}),
                        headers=json_headers)
    expect("register on the java server: 204", status == 204)
    elements = next_batch("Register", 0, "java_batch_register.json")
    expect("Register carries the instance", elements[0]["instanceInfo"]["instanceId"] == ORDERS_ID)

    peer.heartbeat_answer = (HERE / "ours_response_not_found.json").read_bytes()
    expect("heartbeat on the java server: 200", request(port, "PUT", path)[0] == 200)
    next_batch("Heartbeat", 0, "java_batch_heartbeat.json")
    elements = next_batch("Register", 1)
    expect("our 404 answer makes java re-register the instance",
           elements[0]["action"] == "Register" and elements[0]["instanceInfo"]["instanceId"] == ORDERS_ID)

    peer.heartbeat_answer = (HERE / "ours_response_conflict.json").read_bytes()
    expect("second heartbeat: 200", request(port, "PUT", path)[0] == 200)
    next_batch("Heartbeat", 1)
    adopted = wait_for("java adopts the copy in our 409 answer",
                       lambda: (lambda i: i if i and i["metadata"].get("adopted") == "from-peer" else None)(
                           (app(port, "ORDERS") or {}).get(ORDERS_ID)))
    expect("adopted copy keeps the peer's status, override and dirty timestamp",
           adopted["status"] == "OUT_OF_SERVICE" and adopted["overriddenStatus"] == "OUT_OF_SERVICE"
           and adopted["lastDirtyTimestamp"] == "1714550404000", json.dumps(adopted))
    time.sleep(1.5)
    expect("an adopted copy is not replicated back", len(peer.batches_with("Register")) == 2)

    expect("status override on the java server: 200",
           request(port, "PUT", path + "/status?value=DOWN")[0] == 200)
    next_batch("StatusUpdate", 0, "java_batch_status_update.json")
    expect("heartbeat under an override: 200", request(port, "PUT", path)[0] == 200)
    elements = next_batch("Heartbeat", 2, "java_batch_heartbeat_override.json")
    expect("a heartbeat carries the sender's override", elements[0].get("overriddenStatus") == "DOWN")
    expect("override removal on the java server: 200", request(port, "DELETE", path + "/status")[0] == 200)
    next_batch("DeleteStatusOverride", 0, "java_batch_delete_override.json")
    expect("metadata update on the java server: 200",
           request(port, "PUT", path + "/metadata?zone=z1")[0] == 200)
    elements = next_batch("Register", 2, "java_batch_metadata.json")
    expect("a metadata change is replicated as Register", elements[0]["instanceInfo"]["metadata"].get("zone") == "z1")
    expect("cancel on the java server: 200", request(port, "DELETE", path)[0] == 200)
    next_batch("Cancel", 0, "java_batch_cancel.json")

    with peer.lock:
        headers = peer.batches[0][0]
    print("headers of a java batch:", json.dumps(headers))


if __name__ == "__main__":
    main()
