"""Push followers for the fault runs: one per node, following its push stream (docs/push.md) as a
push client does, checked as it goes and at the end.

A follower holds a copy of the registry: a ``snapshot`` replaces it, a ``delta`` patches it
(ADDED and MODIFIED set the instance, DELETED removes it), and after every delta the copy's
``apps__hashcode`` must equal the delta's, which is the registry's right after that write on that
node. So a delta missed, sent twice or out of order, or a resume that skips or repeats one, shows
as a mismatch the moment it happens. On a broken stream (a node killed, paused past the read
timeout, or restarted) it reconnects with ``Last-Event-ID``, as EventSource does, and counts
whether the node resumed it (deltas, no snapshot) or started it again (a snapshot). It also
drops its own stream now and then (after a seeded random number of deltas), so that resuming is
exercised under the writes, not only across the nemesis's kills and pauses. At the end,
with the cluster converged and the clients stopped, its copy must equal the node's registry.

Violations: ``push-hashcode`` (a delta left the copy differing from the node's registry at that
delta) and ``push-diverged`` (the copy differs from the node's registry at the end).
"""
from __future__ import annotations

import http.client
import json
import random
import threading
import time
from collections import Counter
from typing import Optional

from fault import checker
from fault.clients import HOST, NodeAddr, read_view

# A stream quiet for longer than this is taken as broken: the node's keep-alive comes every 15 s
# by default and every 2 s in these runs (``NODE_SETTINGS``).
READ_TIMEOUT_S = 6.0
RECONNECT_S = 0.3
NODE_SETTINGS = {"heureka.push.keep-alive-interval": "2s"}


def hashcode(statuses) -> str:
    """Eureka's ``apps__hashcode``: ``STATUS_count_`` per status present, by status name."""
    counts = Counter(statuses)
    return "".join(f"{status}_{counts[status]}_" for status in sorted(counts))


def instances_of(doc: dict):
    apps = doc["applications"].get("application") or []
    for app in apps if isinstance(apps, list) else [apps]:
        insts = app.get("instance") or []
        for inst in insts if isinstance(insts, list) else [insts]:
            yield (str(inst["app"]).upper(), inst["instanceId"]), inst


class PushFollower(threading.Thread):
    def __init__(self, node: NodeAddr, now, rng: random.Random, lose_one: bool = False,
                 base: str = "/eureka", namespace: str = ""):
        super().__init__(name=f"push-{node.name}{base}", daemon=True)
        self.node = node
        self.base = base                    # the followed namespace's Eureka base path
        # the node's name in reports, with the namespace when the run has several
        self.label = f"{node.name} (namespace {namespace})" if namespace else node.name
        self.now = now                      # the history's clock, for the violation's time
        self.rng = rng                      # when to drop its own stream
        # --self-test: the sixth delta is not applied, as if lost: the check must see it
        self.lose_one = lose_one
        self.copy: dict = {}                # (app, id) -> status
        self.seen: set = set()              # every (app, id) the copy ever held (run.py --namespaces)
        self.last_id: Optional[str] = None
        self.lock = threading.Lock()
        self.stop_event = threading.Event()
        self.snapshots = 0
        self.deltas = 0
        self.resumed = 0                    # reconnects the node resumed (no snapshot)
        self.connects = 0
        self.mismatches: list[str] = []

    # -- the stream ------------------------------------------------------------------------
    def run(self) -> None:
        while not self.stop_event.is_set():
            try:
                self.follow_once()
            except (OSError, http.client.HTTPException, ValueError):
                pass
            self.stop_event.wait(RECONNECT_S)

    def follow_once(self) -> None:
        conn = http.client.HTTPConnection(HOST, self.node.port, timeout=READ_TIMEOUT_S)
        try:
            headers = {"Accept": "text/event-stream"}
            if self.last_id:
                headers["Last-Event-ID"] = self.last_id
            conn.request("GET", f"{self.base}/push", headers=headers)
            resp = conn.getresponse()
            if resp.status != 200:
                resp.read()
                return
            self.connects += 1
            first = True
            drop_after = self.deltas + self.rng.randint(5, 40)
            event, data, ident = None, [], None
            while not self.stop_event.is_set():
                line = resp.fp.readline()
                if not line:
                    return
                line = line.decode().rstrip("\n")
                if line == "":
                    if event is not None:
                        if first and event == "delta":
                            self.resumed += 1
                        first = False
                        self.apply(event, ident, "".join(data))
                        if self.deltas >= drop_after:
                            return          # the client's own cut: reconnect and resume
                    event, data, ident = None, [], None
                elif line.startswith(":"):
                    continue
                elif line.startswith("event: "):
                    event = line[7:]
                elif line.startswith("id: "):
                    ident = line[4:]
                elif line.startswith("data: "):
                    data.append(line[6:])
        finally:
            conn.close()

    def apply(self, event: str, ident: Optional[str], data: str) -> None:
        doc = json.loads(data)
        with self.lock:
            if event == "snapshot":
                self.snapshots += 1
                self.copy = {key: inst["status"] for key, inst in instances_of(doc)}
                self.seen.update(self.copy)
            elif event == "delta":
                self.deltas += 1
                lost = self.lose_one and self.deltas == 6
                for key, inst in instances_of(doc) if not lost else ():
                    if inst.get("actionType") == "DELETED":
                        self.copy.pop(key, None)
                    else:
                        self.copy[key] = inst["status"]
                        self.seen.add(key)
                expected = doc["applications"].get("apps__hashcode", "")
                ours = hashcode(self.copy.values())
                if ours != expected:
                    self.mismatches.append(
                        f"at {self.now():.1f}s delta {ident}: the copy hashes {ours!r}, the node's registry "
                        f"after that write {expected!r}")
                    # start again from a snapshot, as a client would
                    self.last_id = None
                    raise ValueError("hashcode mismatch")
            self.last_id = ident

    def stop(self) -> None:
        self.stop_event.set()

    # -- the final check -------------------------------------------------------------------
    def differs_from_node(self) -> Optional[str]:
        view = read_view(self.node.port, base=self.base)
        if view is None:
            return "the node's registry could not be read"
        theirs = {key: status for key, (status, _) in view.instances.items()}
        with self.lock:
            ours = dict(self.copy)
        if ours == theirs:
            return None
        missing = sorted(set(theirs) - set(ours))[:5]
        extra = sorted(set(ours) - set(theirs))[:5]
        wrong = sorted(k for k in set(ours) & set(theirs) if ours[k] != theirs[k])[:5]
        return f"missing {missing}, extra {extra}, other status {wrong}"


def violations(followers: list[PushFollower], deadline_s: float = 15.0) -> list[checker.Violation]:
    """The mismatches seen, and each copy that still differs from its node's registry once the
    cluster has converged (waiting, bounded, for deltas in flight)."""
    out = [checker.Violation("push-hashcode", None, f"{f.label}: {m}")
           for f in followers for m in f.mismatches]
    end = time.monotonic() + deadline_s
    for f in followers:
        diff = f.differs_from_node()
        while diff is not None and time.monotonic() < end:
            time.sleep(0.2)
            diff = f.differs_from_node()
        if diff is not None:
            out.append(checker.Violation("push-diverged", None, f"{f.label}: the follower's copy: {diff}"))
    return out


def summary(followers: list[PushFollower]) -> str:
    return "; ".join(f"{f.label}: {f.connects} streams ({f.resumed} resumed), {f.snapshots} snapshots, "
                     f"{f.deltas} deltas" for f in followers)
