"""What happened during a run: the clients' operations and the pollers' reads.

Every client request is one ``Op`` (one attempt on one node: a failover is a second op). Its
``outcome`` is what the client learnt:

* ``ok``            - a 2xx answer: the node applied the write.
* ``failed``        - a definite refusal: the request was never sent (connection refused, connect
                      timeout) or the node answered 404 / another 4xx. The write had no effect.
* ``indeterminate`` - the request was (maybe partly) sent and no answer came (read timeout,
                      connection reset, a 5xx): it may have been applied, now or later.

Every poll of a node's full registry is one ``Observation``: which node (and which incarnation of
its process: a SIGKILL and restart starts a new one), when the read started and ended, and what
it held. Every read of a node's digest (``GET /eureka/peerreplication/digest``, Heureka only) is
one ``DigestRead``: per instance, whether the node holds it as a tombstone and the stamps of its
registration and of its last cancel, the evidence that a node has *applied* a cancel (checker.py,
property 2). Times are seconds on a monotonic clock since the start of the run; ops and reads
also carry the wall-clock time (``wall_start``/``wall_end``, seconds since the epoch; 0 in
histories recorded before they were added), which the checker compares with the servers' stamps
(their milliseconds are the wall clock of the node that made the write: every node runs on this
machine, so the clocks agree).
"""
from __future__ import annotations

import itertools
import json
import threading
import time
from dataclasses import asdict, dataclass, field
from typing import Optional

OK = "ok"
FAILED = "failed"
INDETERMINATE = "indeterminate"

# op kinds
REGISTER = "register"           # POST /apps/{app} (status = the client's own status)
HEARTBEAT = "heartbeat"         # PUT /apps/{app}/{id}?status=&lastDirtyTimestamp=
CANCEL = "cancel"               # DELETE /apps/{app}/{id}
SET_OVERRIDE = "set-override"   # PUT .../status?value=OUT_OF_SERVICE&lastDirtyTimestamp=
REMOVE_OVERRIDE = "remove-override"   # DELETE .../status?[value=UP&]lastDirtyTimestamp=
WRITE_KINDS = (REGISTER, CANCEL, SET_OVERRIDE, REMOVE_OVERRIDE)

Key = tuple  # (APP, instanceId)


@dataclass
class Op:
    seq: int                    # global order in which ops were started (per instance: program order)
    actor: str                  # "client" or "operator"
    kind: str
    app: str
    instance_id: str
    node: str
    start: float
    end: float = 0.0
    outcome: str = ""
    status: Optional[int] = None    # HTTP status, if any
    detail: str = ""                # e.g. "status=DOWN", "value=absent", the error
    own: Optional[str] = None       # register: the status sent; remove-override: value (None = absent)
    wall_start: float = 0.0         # wall clock (time.time()) when it started / ended; 0 = not recorded
    wall_end: float = 0.0

    @property
    def key(self) -> Key:
        return (self.app, self.instance_id)

    def line(self) -> str:
        st = "" if self.status is None else f" http={self.status}"
        own = f" own={self.own}" if self.kind == REGISTER else ""
        val = f" value={self.own or 'absent'}" if self.kind == REMOVE_OVERRIDE else ""
        det = f" ({self.detail})" if self.detail else ""
        return (f"#{self.seq:<6} [{self.start:8.3f} .. {self.end:8.3f}] {self.actor:8} {self.kind:15} "
                f"{self.instance_id} @{self.node}{own}{val} -> {self.outcome}{st}{det}")


@dataclass
class Observation:
    node: str
    incarnation: int
    start: float
    end: float
    hashcode: str
    instances: dict             # Key -> (status, overriddenStatus)
    wall_start: float = 0.0
    wall_end: float = 0.0

    def line(self, key: Optional[Key] = None) -> str:
        what = ""
        if key is not None:
            v = self.instances.get(key)
            what = f" {key[1]}: " + (f"{v[0]} (override {v[1]})" if v else "absent")
        return f"read {self.node}#{self.incarnation} [{self.start:8.3f} .. {self.end:8.3f}]{what}"


Stamp = tuple   # (ms, counter, node tag) of a hybrid logical clock, ordered as a tuple


@dataclass(frozen=True)
class DigestEntry:
    removed: bool                   # a tombstone: cancelled or evicted, not registered since
    registration: Optional[Stamp]   # stamps.registration; None when the digest carries no stamps
    cancel: Optional[Stamp]         # stamps.removed: the last cancel this node knows (ZERO: none)


@dataclass
class DigestRead:
    node: str
    incarnation: int
    start: float
    end: float
    wall_start: float
    wall_end: float
    entries: dict               # Key -> DigestEntry

    def line(self, key: Optional[Key] = None) -> str:
        what = ""
        if key is not None:
            e = self.entries.get(key)
            if e is None:
                what = f" {key[1]}: not listed"
            else:
                what = (f" {key[1]}: {'tombstone' if e.removed else 'lease'}, registration "
                        f"{fmt_stamp(e.registration)}, cancel {fmt_stamp(e.cancel)}")
        return f"digest {self.node}#{self.incarnation} [{self.start:8.3f} .. {self.end:8.3f}]{what}"


def fmt_stamp(s: Optional[Stamp]) -> str:
    if s is None:
        return "?"
    return "ZERO" if tuple(s) == (0, 0, 0) else f"[{s[0]} ms, {s[1]}, node {s[2]}]"


class History:
    """Thread-safe record of a run's ops and observations."""

    def __init__(self, t0: Optional[float] = None):
        self.t0 = time.monotonic() if t0 is None else t0
        self.ops: list[Op] = []
        self.observations: list[Observation] = []
        self.digests: list[DigestRead] = []
        self._seq = itertools.count(1)
        self._lock = threading.Lock()

    def now(self) -> float:
        return time.monotonic() - self.t0

    def wall(self) -> float:
        return time.time()

    def begin(self, actor: str, kind: str, key: Key, node: str, own: Optional[str] = None, detail: str = "") -> Op:
        with self._lock:
            op = Op(next(self._seq), actor, kind, key[0], key[1], node, self.now(), own=own, detail=detail,
                    wall_start=self.wall())
            self.ops.append(op)
        return op

    def finish(self, op: Op, outcome: str, status: Optional[int] = None, detail: str = "") -> Op:
        op.end = self.now()
        op.wall_end = self.wall()
        op.status = status
        if detail:
            op.detail = f"{op.detail}; {detail}" if op.detail else detail
        op.outcome = outcome        # set last: an op with an outcome is complete
        return op

    def observe(self, obs: Observation) -> None:
        with self._lock:
            self.observations.append(obs)

    def observe_digest(self, d: DigestRead) -> None:
        with self._lock:
            self.digests.append(d)

    def snapshot(self) -> tuple[list[Op], list[Observation]]:
        with self._lock:
            return list(self.ops), list(self.observations)

    def digest_reads(self) -> list[DigestRead]:
        with self._lock:
            return list(self.digests)

    def dump(self, path) -> None:
        """One JSON object a line: every op, every observation (instances as lists), every digest
        read (entries as [app, id, removed, registration stamp, cancel stamp])."""
        ops, obs = self.snapshot()
        digests = self.digest_reads()
        with open(path, "w") as f:
            for op in ops:
                f.write(json.dumps({"type": "op", **asdict(op)}) + "\n")
            for o in obs:
                d = asdict(o)
                d["instances"] = [[k[0], k[1], v[0], v[1]] for k, v in o.instances.items()]
                f.write(json.dumps({"type": "read", **d}) + "\n")
            for g in digests:
                d = {k: getattr(g, k) for k in ("node", "incarnation", "start", "end", "wall_start", "wall_end")}
                d["entries"] = [[k[0], k[1], e.removed, e.registration, e.cancel] for k, e in g.entries.items()]
                f.write(json.dumps({"type": "digest", **d}) + "\n")


def load(path) -> tuple[list[Op], list[Observation]]:
    """Read back what ``History.dump`` wrote (ops and observations; see ``load_all``)."""
    ops, obs, _ = load_all(path)
    return ops, obs


def load_all(path) -> tuple[list[Op], list[Observation], list[DigestRead]]:
    """Read back what ``History.dump`` wrote; a history recorded before digest reads has none."""
    ops, obs, digests = [], [], []
    with open(path) as f:
        for line in f:
            d = json.loads(line)
            kind = d.pop("type")
            if kind == "op":
                ops.append(Op(**d))
            elif kind == "digest":
                d["entries"] = {(a, i): DigestEntry(rm, None if rg is None else tuple(rg),
                                                    None if cn is None else tuple(cn))
                                for a, i, rm, rg, cn in d["entries"]}
                digests.append(DigestRead(**d))
            else:
                d["instances"] = {(a, i): (st, ov) for a, i, st, ov in d["instances"]}
                obs.append(Observation(**d))
    return ops, obs, digests
