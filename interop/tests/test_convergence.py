"""Issue 18: writes that anti-entropy used to undo, because it ordered copies by timestamps;
and an instance alive elsewhere evicted where the copies of its heartbeats were lost.

Each test drives real Heureka nodes (peer links through FaultProxy, a node frozen with SIGSTOP
where the story needs one) through one sequence in which a write the client or operator got a
2xx for was lost for good before causal order, and asserts the outcome a causally ordered
registry gives: the acknowledged write wins everywhere.

Why the timestamp-ordered code (05732e3 and before) lost them (``peer_copies.rs``, ``anti_entropy.rs``, ``registry.rs``):

* ``is_newer`` orders two copies by ``(lastDirtyTimestamp, lastUpdatedTimestamp)``. An operator's
  override (set or removal) does not move ``lastDirtyTimestamp``, so it comes down to
  ``lastUpdatedTimestamp``: when *this* server last rewrote its copy. Every adoption (a peer's
  register, anti-entropy's own repair) rewrites the copy and stamps it with the adopter's
  ``now``, so a stale copy that is merely *applied* late looks like the newest write.
* ``Registry::register`` lets the override map win over what the registration carries, for any
  lease, an expired one included; ``StatusUpdate`` and ``DeleteStatusOverride`` answer 404 for an
  expired or evicted lease and are then dropped by the sender (only a heartbeat's 404 is
  repaired), and ``repair_from_peer`` looks up "our override" through the visibility-filtered
  ``instance()``, so on an expired lease it sees none and does not remove it.
* A tombstone loses to any live copy changed after it (``touched_since``), and "changed" is
  again the adopter's clock.

Each failed on every run before causal order (stamped copies merged part by part, tombstones) landed.
"""
from __future__ import annotations

import threading
import time
from typing import Optional

import pytest

from support import cluster as cl
from support.cluster import Heartbeater, Instance, new_instance, view, wait_converged
from support.procs import wait_until

A, B, C = 0, 1, 2
# Anti-entropy every second (the cluster tests use 2 s), so a defect shows within seconds.
AE_MS = 1000
AE_ON = {"heureka.replication.anti-entropy-interval-ms": str(AE_MS)}
AE_OFF = {"heureka.replication.anti-entropy-interval-ms": "0"}
# Anti-entropy leaves alone what changed in the last 2 s (SETTLING_MS); a repair lands within
# settling + one interval, plus a replication round.
AE_ROUND = 2.0 + AE_MS / 1000
# Bounded waits for things that take one replication batch or one anti-entropy round.
STEP_DEADLINE = 15.0
# After the heal: the longest unreachable back-off (5 s), then two anti-entropy rounds.
HEAL_DEADLINE = 5.0 + 2 * AE_ROUND + 3.0
# How long a converged end state must hold: two anti-entropy intervals and their settling.
HOLD = 2 * AE_ROUND

NO_OVERRIDE = "UNKNOWN"
OOS = "OUT_OF_SERVICE"


@pytest.fixture
def fresh_cluster(cluster_factory):
    """A cluster for one test, stopped (and resumed first, if the test left a node frozen)
    when the test ends, so the next test's timings do not share the CPU with it."""
    made = []

    def make(n: int, label: str, **kw) -> cl.Cluster:
        c = cluster_factory(["heureka"] * n, proxied=True, label=label, **kw)
        made.append(c)
        return c

    yield make
    for c in made:
        c.heal()
        for node in c:
            node.proc.thaw()
            node.stop()


# ---------------------------------------------------------------------------------------
# Observations
# ---------------------------------------------------------------------------------------
def shown(node, inst: Instance) -> Optional[tuple[str, str]]:
    """(status, overriddenStatus) of ``inst`` in ``node``'s full registry, None if absent."""
    return view(node).instances.get(inst.key)


def describe(st: Optional[tuple[str, str]]) -> str:
    if st is None:
        return "no instance"
    status, override = st
    if override in (None, NO_OVERRIDE):
        return f"{status} (no override)"
    return f"{status} (override {override})"


def lease_lapsed(node, inst: Instance) -> bool:
    """The node still lists the instance but no longer serves it alone: its lease expired and
    was not evicted (the single-instance read hides expired leases, the full registry not)."""
    return node.get_instance(inst.app, inst.instance_id) is None and view(node).has(inst)


def last_updated(node, inst: Instance) -> int:
    """``lastUpdatedTimestamp`` of ``inst`` in ``node``'s full registry (0 if absent)."""
    for i in node.instances():
        if (str(i["app"]).upper(), i["instanceId"]) == inst.key:
            return int(i.get("lastUpdatedTimestamp", 0))
    return 0


def link_stats(node, to_port: int) -> dict:
    """``node``'s replication state for the peer it reaches on ``to_port`` (GET /eureka/status)."""
    r = node.call("GET", "/status", headers=cl.JSON)
    assert r.status == 200, f"{node.node_name}: GET /eureka/status -> {r.status}: {r.text[:300]}"
    for peer in r.json().get("peers", []):
        if f":{to_port}/" in peer["url"]:
            return peer
    raise AssertionError(f"{node.node_name} lists no peer on port {to_port}: {r.text[:500]}")


def all_show(c: cl.Cluster, inst: Instance, expected: Optional[tuple[str, str]], what: str,
             deadline: float = HEAL_DEADLINE, hold: float = HOLD) -> None:
    """Every node shows ``expected`` for ``inst`` within ``deadline`` and keeps showing it for
    ``hold`` seconds; else an assertion naming each node that shows something else."""
    last: dict[str, Optional[tuple[str, str]]] = {}

    def probe() -> bool:
        last.clear()
        for n in c:
            last[n.node_name] = shown(n, inst)
        return all(st == expected for st in last.values())

    def wrong() -> str:
        return "; ".join(f"node {name} shows {describe(st)}" for name, st in last.items() if st != expected)

    end = time.monotonic() + deadline
    while not probe():
        if time.monotonic() >= end:
            raise AssertionError(f"{wrong()} — {what} (still so {deadline:.0f} s after the heal; "
                                 f"expected {describe(expected)} everywhere)")
        time.sleep(0.3)
    end = time.monotonic() + hold
    while time.monotonic() < end:
        time.sleep(0.3)
        assert probe(), f"{wrong()} — {what} (after every node had agreed on {describe(expected)})"


# ---------------------------------------------------------------------------------------
# 1. A lost override removal
# ---------------------------------------------------------------------------------------
def test_an_acknowledged_override_removal_is_not_undone_by_a_node_whose_lease_had_lapsed(fresh_cluster):
    # Two nodes; the client heartbeats on A, the operator works on A. Eviction runs every 60 s
    # (Eureka's default), so a lease that lapses stays listed (expired, not evicted) for a while.
    # Anti-entropy runs on both (A's cannot reach B while A->B is cut; B's does the damage).
    #  1. Register with a 2 s lease, heartbeat on A; set OUT_OF_SERVICE on A; both agree.
    #  2. Cut A->B: B hears no more heartbeats, and its lease lapses. B keeps its override map
    #     entry (a cancel, an eviction, or a removal that finds the lease live would drop it).
    #     B->A stays open, so B's anti-entropy sees A.
    #  3. Remove the override on A (200). The DeleteStatusOverride for B waits in A's queue.
    #  4. B's anti-entropy sees A's copy as newer (same dirty timestamp, later lastUpdated) and
    #     repairs from it: repair_from_peer looks for our override through instance(), which
    #     hides the lapsed lease, so it removes nothing; register() then lets B's override map
    #     win over A's copy (UP, no override). B's copy: OUT_OF_SERVICE, stamped B's "now".
    #     Its fresh lease lapses again 2 s later (still no heartbeats): we wait for that.
    #  5. Heal. A's queued DeleteStatusOverride reaches B's lapsed lease: 404, which the
    #     dispatcher only logs; the heartbeat behind it renews B's lease. B's anti-entropy now
    #     finds its own copy newer than A's and pushes Register + StatusUpdate: A is
    #     OUT_OF_SERVICE again, and so is every node for good, though the removal was acked.
    c = fresh_cluster(2, "s1", extra={**AE_ON, "eureka.server.eviction-interval-timer-in-ms": "60000"})
    x = new_instance("conv-removal", duration=2, renewal=1)
    cl.register(c[A], x)
    beats = Heartbeater(c[A], [x], interval=0.5).start()
    try:
        cl.set_status(c[A], x, OOS)
        wait_converged(c, f"{x.instance_id} OUT_OF_SERVICE by override everywhere",
                       lambda v: v.instances.get(x.key) == (OOS, OOS))

        c.proxies[(A, B)].partition()
        wait_until(f"{x.instance_id}'s lease lapsed on {c[B].node_name} (listed, not served)",
                   lambda: lease_lapsed(c[B], x), STEP_DEADLINE)

        removed_at = int(time.time() * 1000)
        cl.remove_status_override(c[A], x)
        assert shown(c[A], x) == ("UP", NO_OVERRIDE), describe(shown(c[A], x))
        # B has taken its news of the removal from A (rewritten its copy, or agrees with A)...
        wait_until(f"{c[B].node_name} acted on A's copy after the removal",
                   lambda: last_updated(c[B], x) > removed_at or shown(c[B], x) == shown(c[A], x),
                   STEP_DEADLINE)
        # ...and, still without heartbeats, its lease has lapsed again.
        wait_until(f"{x.instance_id}'s lease lapsed again on {c[B].node_name}",
                   lambda: lease_lapsed(c[B], x), STEP_DEADLINE)

        c.heal()
        all_show(c, x, ("UP", NO_OVERRIDE),
                 f"after the override removal was acked at {c[A].node_name}")
    finally:
        beats.stop()


# ---------------------------------------------------------------------------------------
# 2. A lost override set
# ---------------------------------------------------------------------------------------
def test_an_acknowledged_override_set_is_not_undone_by_a_stale_peer_registration(fresh_cluster):
    # Three nodes: the operator works on A, the client heartbeats on C (2 s lease), B loses the
    # lease. Anti-entropy is on only at B (A and C run without it: a node that sees the
    # operator's write early would repair the gap before the stale copy arrives, and the
    # defect is about what anti-entropy does with the copy, not about who runs it).
    #  1. Isolate B (every link to and from it cut): no heartbeats reach it, it evicts the
    #     lease (and with it any override), and its anti-entropy cannot pull the lease back.
    #  2. Cut A->C, so C does not hear of the override; reopen A->B.
    #  3. Set OUT_OF_SERVICE on A (200). C gets nothing yet; B answers the StatusUpdate 404
    #     (no lease), which the dispatcher only logs: B will never hear of it again.
    #  4. Reopen B<->C. C's queued heartbeat gets 404 at B, C re-registers its copy there:
    #     UP, no override (or B's anti-entropy pulls the same copy from C). B stamps it "now",
    #     later than the override on A.
    #  5. Reopen B->A. B's anti-entropy finds its copy newer than A's (same dirty timestamp,
    #     later lastUpdated) and pushes Register + DeleteStatusOverride: A drops the override.
    #  6. Heal all. A's StatusUpdate for C, built from A's registry as it is now, says UP.
    #     The instance is UP on every node while the operator believes it drained.
    c = fresh_cluster(3, "s2", extra=AE_ON, node_extra={A: AE_OFF, C: AE_OFF})
    x = new_instance("conv-set", duration=2, renewal=1)
    cl.register(c[C], x)
    beats = Heartbeater(c[C], [x], interval=0.5).start()
    try:
        wait_converged(c, f"{x.instance_id} registered everywhere", lambda v: v.status(x) == "UP")

        c.partition([B], [A, C])
        wait_until(f"{c[B].node_name} evicted {x.instance_id}", lambda: not view(c[B]).has(x), STEP_DEADLINE)

        c.proxies[(A, C)].partition()
        c.proxies[(A, B)].pass_through()
        to_b = c.link_port(A, B)
        idle = wait_until(f"{c[A].node_name}'s queue for {c[B].node_name} is empty",
                          lambda: (lambda s: s if s["queueDepth"] == 0 else None)(link_stats(c[A], to_b)),
                          STEP_DEADLINE)
        sent = idle["tasksSent"]
        cl.set_status(c[A], x, OOS)
        wait_until(f"{c[A].node_name} delivered the override to {c[B].node_name}",
                   lambda: (lambda s: s["tasksSent"] > sent and s["queueDepth"] == 0)(link_stats(c[A], to_b)),
                   STEP_DEADLINE)

        c.proxies[(C, B)].pass_through()
        c.proxies[(B, C)].pass_through()
        wait_until(f"{c[B].node_name} has {x.instance_id} again", lambda: view(c[B]).has(x), STEP_DEADLINE)

        c.proxies[(B, A)].pass_through()
        wait_until(f"{c[A].node_name} and {c[B].node_name} agree on {x.instance_id}",
                   lambda: shown(c[A], x) == shown(c[B], x), STEP_DEADLINE)

        c.heal()
        all_show(c, x, (OOS, OOS), f"after OUT_OF_SERVICE was set (200) at {c[A].node_name}")
    finally:
        beats.stop()


# ---------------------------------------------------------------------------------------
# 3. A resurrected cancel
# ---------------------------------------------------------------------------------------
class Resurrections:
    """Watches every node from a cancel's acknowledgement on: once a node that held the
    instance has dropped it, it must never show it again. One polling thread per node, so a
    frozen node (whose reads wait until it resumes) leaves no gap in watching the others."""

    def __init__(self, c: cl.Cluster, inst: Instance, acked_at: str, holders: list):
        """``holders``: the nodes that held the instance when the cancel was acked."""
        self.c, self.inst, self.acked_at = c, inst, acked_at
        self.started = 0.0
        self.held = {n.node_name for n in holders}
        self.dropped: dict[str, float] = {}
        self.seen_again: list[str] = []
        self._stop = threading.Event()
        self._threads = [threading.Thread(target=self._watch, args=(n,), daemon=True,
                                          name=f"watch-{n.node_name}") for n in c]

    def start(self) -> "Resurrections":
        self.started = time.monotonic()
        for t in self._threads:
            t.start()
        return self

    def stop(self) -> None:
        self._stop.set()
        for t in self._threads:
            if t.is_alive():
                t.join(15)

    def _watch(self, node) -> None:
        name = node.node_name
        while not self._stop.is_set():
            try:
                has = view(node).has(self.inst)
            except Exception:   # noqa: BLE001 - no answer is no sighting
                has = None
            t = time.monotonic() - self.started
            if has:
                self.held.add(name)
            if has is False and name in self.held:
                self.dropped.setdefault(name, t)
            elif has and name in self.dropped and len(self.seen_again) < 10:
                self.seen_again.append(
                    f"node {name} shows {self.inst.instance_id} again {t:.1f} s after the cancel was "
                    f"acked at {self.acked_at} (it had dropped it at {self.dropped[name]:.1f} s)")
                return
            self._stop.wait(0.1)

    def has_dropped(self, node) -> bool:
        return node.node_name in self.dropped

    def check(self) -> None:
        if self.seen_again:
            raise AssertionError("; ".join(self.seen_again))


def test_an_acknowledged_cancel_is_not_resurrected_by_a_late_peer_batch(fresh_cluster):
    # Three nodes. Peers wait up to 10 s for a batch's answer (peer-node-read-timeout-ms), so
    # a batch sent to a frozen node is still read and applied when it resumes.
    #  1. Freeze A (SIGSTOP, and wait until every thread has stopped). Register on C: B gets the
    #     Register at once; C's batch for A sits unread in A's socket while C waits for the answer.
    #  2. Cut B->A, so that B's cancel cannot overtake that batch (both would be waiting in A).
    #  3. Cancel on B (200). C drops the instance; B's Cancel for A waits in B's queue.
    #  4. Resume A after a pause. It applies C's old batch: a Register, stamped A's "now".
    #  5. A's anti-entropy compares its copy with B's and C's tombstones: the copy was "changed"
    #     after the removal (touched_since, on A's clock), so A pushes Register to B and C (and
    #     C's anti-entropy pulls it too): the cancelled instance is back on the nodes that had
    #     dropped it. Only when the link heals does B's Cancel take it away again.
    c = fresh_cluster(3, "s3", extra={**AE_ON, "eureka.server.peer-node-read-timeout-ms": "10000"})
    x = new_instance("conv-cancel")
    watch = Resurrections(c, x, c[B].node_name, holders=[c[B], c[C]])
    c[A].proc.freeze()
    try:
        cl.register(c[C], x)
        wait_until(f"{c[B].node_name} has {x.instance_id}", lambda: view(c[B]).has(x), STEP_DEADLINE)
        # C has taken the Register off its queue for A (and built the batch in the same breath):
        # the cancel can no longer turn it into nothing.
        to_a = c.link_port(C, A)
        wait_until(f"{c[C].node_name} sent its batch to the frozen {c[A].node_name}",
                   lambda: link_stats(c[C], to_a)["queueDepth"] == 0, STEP_DEADLINE)
        c.proxies[(B, A)].partition()
        cl.cancel(c[B], x)
        watch.start()
        wait_until(f"{c[C].node_name} dropped {x.instance_id}", lambda: watch.has_dropped(c[C]), STEP_DEADLINE)
        time.sleep(2.0)              # A stays frozen a little longer, its peer's batch unread
        c[A].proc.thaw()
        # B->A stays cut for three anti-entropy rounds after A resumed.
        until = time.monotonic() + 3 * AE_ROUND
        while time.monotonic() < until and not watch.seen_again:
            time.sleep(0.2)
        watch.check()
        c.heal()
        all_show(c, x, None, f"after the cancel was acked at {c[B].node_name}")
        watch.check()
    finally:
        c[A].proc.thaw()
        watch.stop()


# ---------------------------------------------------------------------------------------
# 4. No eviction of an instance that is alive elsewhere
# ---------------------------------------------------------------------------------------
def test_an_instance_alive_elsewhere_is_not_evicted_where_its_heartbeat_copies_are_lost(fresh_cluster):
    # Two nodes, eviction every second, self-preservation off. The client heartbeats on A
    # (5 s lease); A's link to B is cut, so none of A's copies of those heartbeats reach B,
    # but B still reads A's digest. B must keep the instance: A's later renewals count for
    # B's lease (anti-entropy), where before B evicted it 5 s after the cut.
    c = fresh_cluster(2, "s4", extra={**AE_ON, "eureka.server.eviction-interval-timer-in-ms": "1000",
                                      "eureka.server.enable-self-preservation": "false"})
    x = new_instance("conv-alive", duration=5, renewal=1)
    cl.register(c[A], x)
    beats = Heartbeater(c[A], [x], interval=0.5).start()
    try:
        wait_converged(c, f"{x.instance_id} on both nodes", lambda v: v.has(x))
        c.proxies[(A, B)].partition()
        cl.stays_true(f"{c[B].node_name} keeps {x.instance_id}, which heartbeats on {c[A].node_name}",
                      lambda: view(c[B]).has(x), window=4 * 5.0)
    finally:
        beats.stop()
