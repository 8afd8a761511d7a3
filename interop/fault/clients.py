"""Clients modelled on real Eureka clients, and the pollers that read every node.

Each instance behaves like a Java/Spring DiscoveryClient (protocol spec §8):

* it registers (``POST /eureka/apps/{APP}``, JSON) with its own status and ``lastDirtyTimestamp``;
* it heartbeats every second (``PUT …?status=&lastDirtyTimestamp=``) to its current node;
* a connection error, a timeout or a 5xx makes it try the next node (up to three nodes per call,
  like RetryableEurekaHttpClient), and the failed node is quarantined for a few seconds for all
  the instances of the same worker (one HTTP client shared by them);
* a heartbeat answered 404 marks it dirty (``lastDirtyTimestamp = now``) and it re-registers with
  its current own status;
* a health check flips some instances DOWN and back UP: a status change bumps
  ``lastDirtyTimestamp`` and re-registers (full POST), as the Java client's replicator does;
* its "operator" sets ``OUT_OF_SERVICE`` (``PUT …/status?value=OUT_OF_SERVICE&lastDirtyTimestamp=``)
  and removes it (``DELETE …/status?lastDirtyTimestamp=``, no ``value``, as the Java client and
  Spring's CANCEL_OVERRIDE send it; sometimes ``value=UP`` while the instance's own status is UP),
  on any node;
* some cancel (``DELETE``) and stop heartbeating; some of those come back later with a fresh
  registration; some join late;
* every so often (like the Java client's session reconnect) an instance moves to a random node.

The instance's ops (client's and operator's) are made by one worker thread, one after another,
so each instance's history is in program order (the checker relies on it). A few workers run
in parallel. After the active phase (``quiesce()``) nothing changes any more: live instances
only heartbeat (and re-register on 404), as a quiet cluster's clients do.
"""
from __future__ import annotations

import http.client
import json
import random
import socket
import threading
import time
from dataclasses import dataclass, field
from typing import Optional

from support import wire
from support.cluster import Instance as WireInstance
from support.procs import HOST

from .history import (CANCEL, FAILED, HEARTBEAT, INDETERMINATE, OK, REGISTER, REMOVE_OVERRIDE,
                      SET_OVERRIDE, DigestEntry, DigestRead, History, Observation)

JSON = {"Accept": "application/json"}
JSON_BODY = {"Accept": "application/json", "Content-Type": "application/json"}

HEARTBEAT_INTERVAL = 1.0
OP_TIMEOUT = 1.5            # every client request (connect + answer)
READ_TIMEOUT = 2.0          # a poller's full-registry read
QUARANTINE = 3.0


@dataclass
class NodeAddr:
    name: str
    port: int


def call(port: int, method: str, path: str, body: Optional[str] = None,
         headers: Optional[dict] = None, timeout: float = OP_TIMEOUT) -> tuple[str, Optional[int], str, bytes]:
    """One HTTP request; returns (outcome, http status, detail, body) with the history's outcomes."""
    conn = http.client.HTTPConnection(HOST, port, timeout=timeout)
    try:
        try:
            conn.connect()
        except OSError as exc:           # refused, connect timeout: nothing was sent
            return FAILED, None, f"connect: {type(exc).__name__}", b""
        try:
            data = body.encode() if body is not None else None
            conn.request(method, path, body=data, headers=dict(headers or {}))
            resp = conn.getresponse()
            raw = resp.read()
        except (OSError, http.client.HTTPException) as exc:    # sent, no (complete) answer
            return INDETERMINATE, None, f"{type(exc).__name__}", b""
        if 200 <= resp.status < 300:
            return OK, resp.status, "", raw
        if resp.status >= 500:
            return INDETERMINATE, resp.status, "5xx", raw
        return FAILED, resp.status, "", raw
    finally:
        conn.close()


@dataclass(eq=False)
class Inst:
    app: str
    instance_id: str
    port: int
    rng: random.Random
    node: int                          # index of the current node
    join_at: float                     # run time of the first registration
    health_checked: bool               # flips DOWN/UP now and then
    own: str = "UP"
    dirty: int = 0
    state: str = "waiting"             # waiting | registered | cancelled | gone
    comeback_at: Optional[float] = None
    believes_override: bool = False
    next_reconnect: float = 0.0
    base: str = "/eureka"              # its namespace's Eureka base path (run.py --namespaces)

    @property
    def key(self) -> tuple:
        return (self.app, self.instance_id)

    def path(self, suffix: str = "") -> str:
        return f"{self.base}/apps/{self.app}/{wire.quote(self.instance_id)}{suffix}"

    def bump(self) -> None:
        self.dirty = max(self.dirty + 1, int(time.time() * 1000))

    def body(self, lease: int) -> str:
        w = WireInstance(self.app, self.instance_id, self.port, duration=lease, renewal=1, dirty=self.dirty)
        doc = json.loads(w.body())
        doc["instance"]["status"] = self.own
        return json.dumps(doc)


@dataclass
class Workload:
    """Per-second probabilities of the scripted actions (active phase only)."""
    p_flip: float = 0.03          # health-checked instance: own status DOWN <-> UP
    p_set_override: float = 0.012
    p_remove_override: float = 0.04
    p_cancel: float = 0.006
    p_comeback: float = 0.5       # a cancelled instance registers again later
    p_reconnect: float = 1 / 40   # move to a random node


class Worker(threading.Thread):
    """Owns some instances; every second heartbeats each and maybe runs one scripted action."""

    def __init__(self, name: str, insts: list[Inst], nodes: list[NodeAddr], history: History,
                 lease: int, workload: Workload, rng: random.Random):
        super().__init__(name=name, daemon=True)
        self.insts = insts
        self.nodes = nodes
        self.h = history
        self.lease = lease
        self.w = workload
        self.rng = rng
        self.quarantined: dict[int, float] = {}
        self.stop_event = threading.Event()
        self.quiet = threading.Event()
        self.error: Optional[BaseException] = None

    # -- node choice ---------------------------------------------------------------------------
    def _order(self, inst: Inst) -> list[int]:
        now = time.monotonic()
        bad = {n for n, until in self.quarantined.items() if until > now}
        if len(bad) >= len(self.nodes):
            self.quarantined.clear()
            bad = set()
        others = [n for n in range(len(self.nodes)) if n != inst.node]
        self.rng.shuffle(others)
        order = [inst.node] + others
        return [n for n in order if n not in bad] + [n for n in order if n in bad]

    def _client_call(self, inst: Inst, kind: str, method: str, path: str, body: Optional[str] = None,
                     own: Optional[str] = None, detail: str = ""):
        """A client call with failover: up to three nodes; returns the last (op, body)."""
        last = None
        for n in self._order(inst)[:3]:
            node = self.nodes[n]
            op = self.h.begin("client", kind, inst.key, node.name, own=own, detail=detail)
            outcome, status, det, raw = call(node.port, method, path, body,
                                             JSON_BODY if body is not None else JSON)
            self.h.finish(op, outcome, status, det)
            last = (op, raw)
            if outcome == OK or (outcome == FAILED and status is not None):
                inst.node = n           # it answered: stay with it
                return last
            self.quarantined[n] = time.monotonic() + QUARANTINE
        return last

    # -- client actions ------------------------------------------------------------------------
    def register(self, inst: Inst) -> bool:
        op, _ = self._client_call(inst, REGISTER, "POST", f"{inst.base}/apps/{inst.app}", inst.body(self.lease),
                                  own=inst.own, detail=f"dirty={inst.dirty}")
        return op.outcome == OK

    def heartbeat(self, inst: Inst) -> None:
        op, _ = self._client_call(inst, HEARTBEAT, "PUT",
                                  inst.path(f"?status={inst.own}&lastDirtyTimestamp={inst.dirty}"))
        if op.outcome == FAILED and op.status == 404:
            inst.bump()
            self.register(inst)

    def operator(self, inst: Inst, kind: str, method: str, path: str, detail: str = "",
                 own: Optional[str] = None) -> str:
        """An operator's call: a random node, one more node if it cannot connect."""
        order = list(range(len(self.nodes)))
        self.rng.shuffle(order)
        op = None
        for n in order[:2]:
            node = self.nodes[n]
            op = self.h.begin("operator", kind, inst.key, node.name, own=own, detail=detail)
            outcome, status, det, _ = call(node.port, method, path)
            self.h.finish(op, outcome, status, det)
            if not (outcome == FAILED and status is None):
                break
        return op.outcome

    def scripted(self, inst: Inst, now: float) -> None:
        r, w = inst.rng, self.w
        if inst.health_checked and r.random() < w.p_flip:
            inst.own = "DOWN" if inst.own == "UP" else "UP"
            inst.bump()
            self.register(inst)
        elif not inst.believes_override and r.random() < w.p_set_override:
            out = self.operator(inst, SET_OVERRIDE, "PUT",
                                inst.path(f"/status?value=OUT_OF_SERVICE&lastDirtyTimestamp={inst.dirty}"))
            inst.believes_override = inst.believes_override or out != FAILED
        elif inst.believes_override and r.random() < w.p_remove_override:
            value = "UP" if inst.own == "UP" and r.random() < 0.3 else None
            q = f"value={value}&" if value else ""
            out = self.operator(inst, REMOVE_OVERRIDE, "DELETE",
                                inst.path(f"/status?{q}lastDirtyTimestamp={inst.dirty}"), own=value)
            inst.believes_override = inst.believes_override and out == FAILED
        elif r.random() < w.p_cancel:
            self._client_call(inst, CANCEL, "DELETE", inst.path())
            inst.state = "cancelled"
            inst.believes_override = False
            inst.comeback_at = now + r.uniform(4, 20) if r.random() < w.p_comeback else None
        elif r.random() < w.p_reconnect:
            inst.node = r.randrange(len(self.nodes))

    def step(self, inst: Inst) -> None:
        now = self.h.now()
        quiet = self.quiet.is_set()
        if inst.state == "waiting":
            if now >= inst.join_at and not quiet:
                inst.bump()
                inst.state = "registered"
                self.register(inst)
            return
        if inst.state == "cancelled":
            if inst.comeback_at is not None and now >= inst.comeback_at and not quiet:
                inst.own, inst.comeback_at = "UP", None
                inst.bump()
                inst.state = "registered"
                self.register(inst)
            return
        self.heartbeat(inst)
        if not quiet:
            self.scripted(inst, now)

    def run(self) -> None:
        try:
            next_tick = time.monotonic()
            while not self.stop_event.is_set():
                for inst in self.insts:
                    if self.stop_event.is_set():
                        return
                    self.step(inst)
                next_tick += HEARTBEAT_INTERVAL
                delay = next_tick - time.monotonic()
                if delay < 0:           # fell behind (timeouts): no burst of catch-up beats
                    next_tick, delay = time.monotonic(), 0
                self.stop_event.wait(delay)
        except BaseException as exc:  # noqa: BLE001 - reported by the run
            self.error = exc


def make_instances(rng: random.Random, n: int, apps: list[str], n_nodes: int, duration: float,
                   base_port: int = 30000) -> list[Inst]:
    out = []
    for i in range(n):
        app = apps[i % len(apps)]
        port = base_port + i
        late = rng.random() < 0.15
        out.append(Inst(app=app, instance_id=f"{HOST}:{app.lower()}:{port}", port=port,
                        rng=random.Random(rng.getrandbits(64)), node=rng.randrange(n_nodes),
                        join_at=rng.uniform(8, max(9, duration * 0.6)) if late else 0.0,
                        health_checked=rng.random() < 0.4))
    return out


class Clients:
    def __init__(self, insts: list[Inst], nodes: list[NodeAddr], history: History, lease: int,
                 workers: int, rng: random.Random, workload: Optional[Workload] = None):
        self.insts = insts
        self.workers = [Worker(f"client-{w}", insts[w::workers], nodes, history, lease,
                               workload or Workload(), random.Random(rng.getrandbits(64)))
                        for w in range(workers)]

    def start(self) -> None:
        for w in self.workers:
            w.start()

    def quiesce(self) -> None:
        for w in self.workers:
            w.quiet.set()

    def stop(self) -> None:
        for w in self.workers:
            w.stop_event.set()
        for w in self.workers:
            w.join(OP_TIMEOUT * 4 + 5)

    def errors(self) -> list:
        return [w.error for w in self.workers if w.error is not None]

    def live(self) -> set:
        """Instances whose clients are registered and heartbeating."""
        return {i.key for i in self.insts if i.state == "registered"}

    def keys(self) -> set:
        return {i.key for i in self.insts}


# ---------------------------------------------------------------------------------------------
# Reading the nodes
# ---------------------------------------------------------------------------------------------
@dataclass(frozen=True)
class View:
    hashcode: str
    instances: dict


def parse_view(raw: bytes) -> View:
    doc = json.loads(raw)
    apps = doc["applications"].get("application") or []
    if isinstance(apps, dict):
        apps = [apps]
    out = {}
    for app in apps:
        insts = app.get("instance") or []
        if isinstance(insts, dict):
            insts = [insts]
        for i in insts:
            out[(str(i["app"]).upper(), i["instanceId"])] = (
                i.get("status"), i.get("overriddenStatus", i.get("overriddenstatus")))
    return View(str(doc["applications"].get("apps__hashcode", "")), out)


def read_view(port: int, timeout: float = READ_TIMEOUT, base: str = "/eureka") -> Optional[View]:
    """A node's full registry (of the namespace whose Eureka base path is ``base``)."""
    outcome, status, _, raw = call(port, "GET", f"{base}/apps/", headers=JSON, timeout=timeout)
    if outcome != OK or status != 200:
        return None
    try:
        return parse_view(raw)
    except (ValueError, KeyError, TypeError):
        return None


def parse_digest(raw: bytes) -> dict:
    """``{"digest":[…]}`` (crates/heureka-wire/src/digest.rs) as {Key: DigestEntry}. Stamps are
    ``[ms, counter, node]``; an entry without ``stamps`` (an older Heureka) has None for both."""
    doc = json.loads(raw)
    out = {}
    for e in doc["digest"]:
        stamps = e.get("stamps") or None
        reg = tuple(stamps["registration"]) if stamps else None
        cancel = tuple(stamps["removed"]) if stamps else None
        out[(str(e["app"]).upper(), e["id"])] = DigestEntry(bool(e["removed"]), reg, cancel)
    return out


def read_digest(port: int, timeout: float = READ_TIMEOUT, base: str = "/eureka") -> Optional[dict]:
    outcome, status, _, raw = call(port, "GET", f"{base}/peerreplication/digest", headers=JSON,
                                   timeout=timeout)
    if outcome != OK or status != 200:
        return None
    try:
        return parse_digest(raw)
    except (ValueError, KeyError, TypeError):
        return None


class Poller(threading.Thread):
    """Reads one node's full registry every ``interval`` s and records each read; with ``digest``
    (a Heureka node) also its digest, right after each registry read. ``base``: the Eureka base
    path of the namespace it reads (``/ns/{name}/eureka``; ``/eureka`` is the default one)."""

    def __init__(self, node: NodeAddr, history: History, incarnation, interval: float = 0.5,
                 digest: bool = True, base: str = "/eureka"):
        super().__init__(name=f"poll-{node.name}{base}", daemon=True)
        self.node = node
        self.base = base
        self.h = history
        self.incarnation = incarnation      # callable: the node's current incarnation
        self.interval = interval
        self.digest = digest
        self.stop_event = threading.Event()
        self.reads = 0
        self.failures = 0
        self.digest_reads = 0
        self.digest_failures = 0

    def run(self) -> None:
        next_tick = time.monotonic()
        while not self.stop_event.is_set():
            inc = self.incarnation()
            start, wall_start = self.h.now(), self.h.wall()
            v = read_view(self.node.port, base=self.base)
            end, wall_end = self.h.now(), self.h.wall()
            if v is None:
                self.failures += 1
            elif inc == self.incarnation():
                self.reads += 1
                self.h.observe(Observation(self.node.name, inc, start, end, v.hashcode, v.instances,
                                           wall_start, wall_end))
            if self.digest and not self.stop_event.is_set():
                inc = self.incarnation()
                start, wall_start = self.h.now(), self.h.wall()
                d = read_digest(self.node.port, base=self.base)
                end, wall_end = self.h.now(), self.h.wall()
                if d is None:
                    self.digest_failures += 1
                elif inc == self.incarnation():
                    self.digest_reads += 1
                    self.h.observe_digest(DigestRead(self.node.name, inc, start, end, wall_start, wall_end, d))
            next_tick += self.interval
            delay = next_tick - time.monotonic()
            if delay < 0:
                next_tick, delay = time.monotonic(), 0
            self.stop_event.wait(delay)

    def stop(self) -> None:
        self.stop_event.set()
        self.join(READ_TIMEOUT + 5)
