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
it held. Times are seconds on a monotonic clock since the start of the run.
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

    def line(self, key: Optional[Key] = None) -> str:
        what = ""
        if key is not None:
            v = self.instances.get(key)
            what = f" {key[1]}: " + (f"{v[0]} (override {v[1]})" if v else "absent")
        return f"read {self.node}#{self.incarnation} [{self.start:8.3f} .. {self.end:8.3f}]{what}"


class History:
    """Thread-safe record of a run's ops and observations."""

    def __init__(self, t0: Optional[float] = None):
        self.t0 = time.monotonic() if t0 is None else t0
        self.ops: list[Op] = []
        self.observations: list[Observation] = []
        self._seq = itertools.count(1)
        self._lock = threading.Lock()

    def now(self) -> float:
        return time.monotonic() - self.t0

    def begin(self, actor: str, kind: str, key: Key, node: str, own: Optional[str] = None, detail: str = "") -> Op:
        with self._lock:
            op = Op(next(self._seq), actor, kind, key[0], key[1], node, self.now(), own=own, detail=detail)
            self.ops.append(op)
        return op

    def finish(self, op: Op, outcome: str, status: Optional[int] = None, detail: str = "") -> Op:
        op.end = self.now()
        op.status = status
        if detail:
            op.detail = f"{op.detail}; {detail}" if op.detail else detail
        op.outcome = outcome        # set last: an op with an outcome is complete
        return op

    def observe(self, obs: Observation) -> None:
        with self._lock:
            self.observations.append(obs)

    def snapshot(self) -> tuple[list[Op], list[Observation]]:
        with self._lock:
            return list(self.ops), list(self.observations)

    def dump(self, path) -> None:
        """One JSON object a line: every op, then every observation (instances as lists)."""
        ops, obs = self.snapshot()
        with open(path, "w") as f:
            for op in ops:
                f.write(json.dumps({"type": "op", **asdict(op)}) + "\n")
            for o in obs:
                d = asdict(o)
                d["instances"] = [[k[0], k[1], v[0], v[1]] for k, v in o.instances.items()]
                f.write(json.dumps({"type": "read", **d}) + "\n")


def load(path) -> tuple[list[Op], list[Observation]]:
    """Read back what ``History.dump`` wrote."""
    ops, obs = [], []
    with open(path) as f:
        for line in f:
            d = json.loads(line)
            kind = d.pop("type")
            if kind == "op":
                ops.append(Op(**d))
            else:
                d["instances"] = {(a, i): (st, ov) for a, i, st, ov in d["instances"]}
                obs.append(Observation(**d))
    return ops, obs
