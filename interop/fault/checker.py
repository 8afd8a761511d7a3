"""The checker: what a run's history must satisfy, and the violations it reports.

THE MODEL
=========
The registry is, per instance, the state a *single* Eureka server would hold if it applied every
acknowledged write of the history in order (protocol spec §6.6-§6.7; the transitions below were
checked against one real Heureka node, interop/fault/README.md):

    state = (present, own, override, status)

    register(own=s)        present; override kept if it was present, else none (a cancel or an
                           expiry drops the override); status = s if s is DOWN or STARTING (the
                           instance's own DOWN/STARTING wins), else OUT_OF_SERVICE if there is an
                           override, else s.
    set-override(OOS)      if present: override, status = OUT_OF_SERVICE (the operator's value is
                           applied at once, even over an own DOWN, until the client re-registers).
                           In the final state, an own DOWN/STARTING under an override may also
                           show as itself (the precedence: own DOWN/STARTING wins).
    remove-override(v)     if present and overridden: no override, status = v, UNKNOWN when `value`
                           is absent (what the Java client and Spring's CANCEL_OVERRIDE send; the
                           client's next heartbeat is then answered 404 and it re-registers). In
                           the final state, UNKNOWN may also have become the own status (the node
                           the client heartbeats may never have shown UNKNOWN).
    cancel                 absent, no override.
    heartbeat              no change.

The overriddenStatus a node reports is OUT_OF_SERVICE with an override, UNKNOWN without.

Ops of one instance are made by one thread, one after another (the client and "its operator",
which writes to any node), so per instance the history is a sequence in program order. An op's
outcome decides how it enters the model:

* ok            - applied, at its place in the sequence.
* failed        - not applied (never sent, or refused: 404 / 4xx).
* indeterminate - maybe applied, at any point after it started (a request held by a SIGSTOPped
                  node is applied when the node continues, after later ops), or never. The checker
                  carries the set of every state reachable that way (a bounded search; an instance
                  with more than MAX_PENDING such writes pending is not checked and is reported as
                  unchecked). Indeterminate ops are counted, never held against the system.

Two legitimate losses are allowed, because a registry keeps its state in memory only:

* A write acknowledged by a node that is then SIGKILLed before it could pass the write on is lost
  with it. An acknowledged write on node N is "durable" once N has had, after the ack, a continuous
  window of ``durable_after`` seconds (default: max(6 s, anti-entropy interval + 1 s), room for
  the replication queue's back-off) during which N and some peer M were both running and not
  paused and the link N->M passed traffic (the nemesis's fault timeline says when). A write whose
  node was killed before it became durable is "at risk" and treated like an indeterminate one
  (counted as "crash-risk").
* An override exists only in the servers' memory, so when every copy of an instance's lease is
  lost (expired on the nodes that heard no heartbeats, then the node that did crashed) the
  override is gone. The client learns this as a heartbeat answered 404; after such a 404 the
  checker also allows the override to be gone (those instances are counted as "override-unsure").

THE PROPERTIES
==============
(1) Final state. After the last fault is healed and the clients have stopped changing anything
    (they keep heartbeating, and re-register on a 404), within the convergence deadline
    (anti-entropy interval x 3 + lease + slack): every *live* instance (its client registered and
    did not cancel, and is still heartbeating) is present on every node with (status,
    overriddenStatus) in the model's final states; every other instance (cancelled, or never
    registered) is absent from every node (its lease has expired if nothing else removed it).
(2) No acknowledged cancel is undone, not even transiently, on a node that has applied it. Whether
    a node has applied a cancel is not inferred from reads (a node may be without the instance
    because it *evicted* it, its copies of the heartbeats having been delayed, or because it never
    learnt the registration the cancel removed; a peer still holding a live copy, not having heard
    of the cancel yet, then legitimately brings it back before the cancel arrives). It is read from
    the node's digest (``GET /eureka/peerreplication/digest``, polled with every registry read):
    the node has applied a cancel when its digest lists the instance as a tombstone
    (``removed: true``) whose ``stamps.removed`` is the cancel's stamp or later and no registration
    is stamped after it. A cancel's stamp is a hybrid logical time whose milliseconds are the
    acking node's wall clock while it handled the request, so "the cancel's or later" is
    ``stamps.removed.ms >= the request's start (wall clock, ms) - CANCEL_STAMP_SLACK_MS`` (every
    node runs on this machine: the clocks agree; an earlier cancel is followed by a registration,
    so it is stamped well before); an eviction's tombstone stamps nothing, so it never qualifies.
    Heureka guarantees that a node holding a cancel's tombstone never shows the instance again
    unless a registration made after the cancel reaches it. So, for a cancel acknowledged at t:
    once a digest read of a node (one incarnation of its process: a restarted node has forgotten
    everything) that started after t shows the cancel applied, no registry read of that node in
    that incarnation that started after that digest read ended may show the instance, up to the
    start of the client's next registration of that instance (a registration made after the
    cancel), and for TOMBSTONE_RETENTION_S after the cancel (the node may then forget it). One
    more registration may be stamped after the cancel: an indeterminate one the client made
    *before* the cancel (a paused node applies it when it continues). A revival is excused as
    that (and counted) only if the instance has such a registration and the node's digest shows a
    registration stamped after the cancel (and before the client's next registration). A
    registration that no op of the history explains (as run.py --self-test forges through a peer
    batch) is not excused, whatever its stamp. Nodes without digest reads (the Java server of a
    mixed cluster; a history recorded before digest reads, rechecked) are not checked: those
    cancels are reported as unchecked (run.py --recheck --infer-cancels applies the old,
    unsound inference from reads alone to such a history, reported as "cancel-undone-inferred").
    A crash-risk cancel needs no exemption: a node whose digest shows the tombstone has it,
    whatever became of the node that acknowledged it. After the final heal every cancelled
    instance is absent everywhere: that is property (1).
(2b) "cancel-undone-after-restart": a restarted node serves no cancelled instance that a peer it
    could reach had applied. (2) is per incarnation, so it says nothing of a node's first reads
    after a restart; but a node, empty or restored from its store (run.py --persistence), merges
    its peers' copies and tombstones by their stamps before its first read whenever a peer
    answers, and serves what it holds alone only when none does. So, for a cancel acknowledged at
    t and a restarted incarnation of node N (incarnation k >= 2: the process the nemesis started
    after N's (k-1)-th kill; its start is taken as the kill fault's scheduled end, before which
    the nemesis does not start it, or the kill itself when unknown): if a digest read of a node
    M != N that started after t and ended before N's start showed the cancel applied (as in
    (2)), M's incarnation went on (no kill of M, no later digest of M without the tombstone)
    until N's first read, and N could reach M throughout its start (from its start to the end of
    its first successful read: N and M running and not paused, the directed link N->M passing;
    the nemesis's timeline says), then no read of N in that incarnation may show the instance, up
    to the start of the client's next registration, within TOMBSTONE_RETENTION_S after the cancel
    and until N's own digest shows the cancel applied (from there on (2) holds N to it). Excused
    (counted, not violations): an indeterminate registration from before the cancel, when N's
    digest shows a registration stamped after the cancel (as in (2)); a stale copy a third node
    could have handed N: a node P != N showed the instance in a read started between N's start
    and N's read, or P's last read started before N's start showed it and no digest of P since
    showed the cancel applied (an empty node's start-up sync registers what its peers hold, and
    a tombstone does not travel in it). When every node holding the tombstone was out of N's
    reach at some moment of its start, N may serve its restored view: that is availability, not
    a violation, and is listed as "restored-unconfirmed" (even if a lagging peer could also
    explain it; only the late registration is excused first). The same check holds without
    --persistence: a node restarted empty holds nothing before its sync, so it can show the
    instance only from a peer's live copy, which is excused.
(3) All nodes hold the same registry: the same instances with the same (status, overriddenStatus)
    and the same apps__hashcode.
(4) Indeterminate ops are reported as such, and never counted either way (see above).

MIXED: one node the real Java (Spring Cloud) Eureka server (run.py --java-jar). Java has no
anti-entropy, retries a cancel/status/override replication for 30 s at most, and its replicated
heartbeats carry registrations (404 -> re-register) and overrides but never an override's removal
or a cancel. So a mixed cluster is held only to: (1') every live instance present on every node
and every other one absent (Java expires a lease after twice its duration); (1'') the status of
live instances no operator ever touched is the model's (the heartbeats' lastDirtyTimestamp make
an older copy re-register). Not checked: overrides, (2), (2b), (3).
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Iterable, Optional

from .history import (CANCEL, FAILED, HEARTBEAT, INDETERMINATE, OK, REGISTER, REMOVE_OVERRIDE,
                      SET_OVERRIDE, WRITE_KINDS, Key, Observation, Op)

UP, DOWN, STARTING, OOS, UNKNOWN = "UP", "DOWN", "STARTING", "OUT_OF_SERVICE", "UNKNOWN"
MAX_PENDING = 8

# (present, own, override, status)
State = tuple
ABSENT: State = (False, None, False, None)


def apply(s: State, op: Op) -> State:
    present, own, override, status = s
    if op.kind == REGISTER:
        new_own = op.own or UP
        override = override if present else False
        if new_own in (DOWN, STARTING):
            st = new_own
        else:
            st = OOS if override else new_own
        return (True, new_own, override, st)
    if op.kind == CANCEL:
        return (False, own, False, None)
    if op.kind == SET_OVERRIDE:
        return (True, own, True, OOS) if present else s
    if op.kind == REMOVE_OVERRIDE:
        if present and override:
            return (True, own, False, op.own or UNKNOWN)
        return s
    return s


def reported(s: State) -> Optional[tuple]:
    """What a node shows for this state: (status, overriddenStatus), or None when absent."""
    if not s[0]:
        return None
    return (s[3], OOS if s[2] else UNKNOWN)


@dataclass
class Model:
    states: set                 # final states reachable
    uncertain: bool = False     # indeterminate writes were involved
    override_unsure: bool = False
    unchecked: str = ""         # why the instance cannot be checked


def model_of(ops: list[Op], at_risk: frozenset = frozenset()) -> Model:
    """Fold one instance's ops (program order) into the set of states it may end in.

    ``at_risk``: seqs of acknowledged writes a crash may have lost (treated as indeterminate)."""
    frontier = {(ABSENT, frozenset())}
    m = Model(set())
    by_seq = {op.seq: op for op in ops}

    def close(front):
        out, todo = set(front), list(front)
        while todo:
            s, pend = todo.pop()
            for q in pend:
                nxt = (apply(s, by_seq[q]), pend - {q})
                if nxt not in out:
                    out.add(nxt)
                    todo.append(nxt)
        return out

    for op in sorted(ops, key=lambda o: o.seq):
        if op.kind in WRITE_KINDS and op.outcome == OK and op.seq not in at_risk:
            frontier = {(apply(s, op), p) for s, p in frontier}
        elif op.kind in WRITE_KINDS and op.outcome in (INDETERMINATE, "", OK):
            m.uncertain = True
            frontier = {(s, p | {op.seq}) for s, p in frontier}
            if any(len(p) > MAX_PENDING for _, p in frontier):
                m.unchecked = f"more than {MAX_PENDING} indeterminate writes pending"
                return m
        elif op.kind == HEARTBEAT and op.outcome == FAILED and op.status == 404:
            # the lease was gone on that node: the override may be gone everywhere (see the doc)
            extra = {((s[0], s[1], False, UNKNOWN), p) for s, p in frontier if s[0] and s[2]}
            if extra:
                m.override_unsure = True
                frontier |= extra
        # a pending (indeterminate) write may take effect at any point after it started
        frontier = close(frontier)
    m.states = {s for s, _ in frontier}
    return m


def by_incarnation(items: Iterable) -> dict:
    """Reads or digest reads grouped by (node, incarnation), each group in start order."""
    grouped: dict = {}
    for item in sorted(items, key=lambda item: item.start):
        grouped.setdefault((item.node, item.incarnation), []).append(item)
    return grouped


def cancel_window(iops: list, idx: int, retention_s: float) -> tuple:
    """For the acknowledged cancel ``iops[idx]``: its stamp's lower bound (ms), when the window
    in which it must hold ends (the client's next registration: run time and wall ms; and the
    tombstone retention), and the registrations that may take effect after it (a paused node
    applies a held request when it continues, stamped then, so legitimately later)."""
    c = iops[idx]
    cancel_ms = int(c.wall_start * 1000) - CANCEL_STAMP_SLACK_MS
    nxt = next((o for o in iops[idx + 1:] if o.kind == REGISTER), None)
    until = nxt.start if nxt else float("inf")
    until_ms = int(nxt.wall_start * 1000) if nxt and nxt.wall_start else float("inf")
    late = [o for o in iops[:idx] if o.kind == REGISTER and o.outcome in (INDETERMINATE, "")]
    return cancel_ms, until, until_ms, late, c.start + retention_s


@dataclass
class Violation:
    prop: str                   # "final-state", "cancel-undone", "cancel-undone-after-restart",
                                # "divergence", "node-unreachable"
    instance: Optional[Key]
    message: str
    history: list = field(default_factory=list)      # Op lines
    observations: list = field(default_factory=list)  # Observation lines

    def render(self) -> str:
        head = f"[{self.prop}] " + (f"{self.instance[0]}/{self.instance[1]}: " if self.instance else "") + self.message
        parts = [head]
        if self.history:
            parts.append("    history:")
            parts += [f"      {h}" for h in self.history]
        if self.observations:
            parts.append("    observations:")
            parts += [f"      {o}" for o in self.observations]
        return "\n".join(parts)

    def to_json(self) -> dict:
        return {"property": self.prop, "instance": list(self.instance) if self.instance else None,
                "message": self.message, "history": self.history, "observations": self.observations}


@dataclass
class Report:
    violations: list
    uncertain: int = 0          # instances whose model involved indeterminate writes
    override_unsure: int = 0
    unchecked: list = field(default_factory=list)    # (key, why)
    cancels_checked: int = 0
    cancels_applied_seen: int = 0   # (cancel, node incarnation) pairs whose digest showed it applied
    cancels_excused: int = 0        # revivals explained by an indeterminate earlier registration
    crash_risk: int = 0         # acknowledged writes a crash may have lost
    restored_checked: int = 0       # (2b): (cancel, restarted node incarnation) pairs held to it
    restored_excused: int = 0       # (2b): served, explained by a stale peer or a late registration
    restored_unconfirmed: list = field(default_factory=list)   # (2b): (key, what): served while cut off


# ---------------------------------------------------------------------------------------------
# Which acknowledged writes a crash may have lost
# ---------------------------------------------------------------------------------------------
@dataclass
class Outage:
    """A fault interval as applied: a process fault on ``node``, or a link fault on (src, dst)."""
    kind: str                   # "kill", "pause", "link"
    start: float
    end: float                  # inf if never healed (a kill: healed once the new process answered reads)
    node: Optional[str] = None
    link: Optional[tuple] = None    # (src name, dst name), traffic from src to dst broken
    restart: Optional[float] = None     # a kill: the earliest the new process can have started (the
                                        # fault's scheduled end; None: unknown, the kill time is used)


def healthy_windows(src: str, dst: str, outages: list[Outage], t0: float, t1: float) -> float:
    """The longest stretch within [t0, t1] in which src could replicate to dst."""
    bad = [(o.start, o.end) for o in outages
           if (o.kind in ("kill", "pause") and o.node in (src, dst)) or (o.kind == "link" and o.link == (src, dst))]
    bad = sorted((max(a, t0), min(b, t1)) for a, b in bad if b > t0 and a < t1)
    best, cur = 0.0, t0
    for a, b in bad:
        if a > cur:
            best = max(best, a - cur)
        cur = max(cur, b)
    return max(best, t1 - cur)


def crash_risk(ops: list[Op], outages: list[Outage], nodes: list[str], durable_after: float) -> frozenset:
    kills = sorted((o for o in outages if o.kind == "kill"), key=lambda o: o.start)
    out = set()
    for op in ops:
        if op.kind not in WRITE_KINDS or op.outcome != OK:
            continue
        for k in kills:
            if k.node != op.node or k.start < op.end:
                continue
            if all(healthy_windows(op.node, m, outages, op.end, k.start) < durable_after
                   for m in nodes if m != op.node):
                out.add(op.seq)
            break           # the first kill after the ack decides
    return frozenset(out)


def ops_by_instance(ops: Iterable[Op]) -> dict:
    out: dict = {}
    for op in ops:
        out.setdefault(op.key, []).append(op)
    return out


def relevant_lines(ops: list[Op], limit: int = 40, around: Optional[tuple] = None) -> list[str]:
    """An instance's writes (and failed/indeterminate heartbeats), newest last, at most ``limit``."""
    keep = [o for o in ops if o.kind != HEARTBEAT or o.outcome != OK]
    if around is not None:
        lo, hi = around
        keep = [o for o in keep if o.kind != HEARTBEAT or lo - 3 <= o.start <= hi + 3]
    keep.sort(key=lambda o: o.seq)
    lines = [o.line() for o in keep]
    if len(lines) > limit:
        lines = [f"... {len(lines) - limit} earlier lines left out"] + lines[-limit:]
    return lines


def check_final(ops: list[Op], live: set, final_views: dict, *, keys: Optional[set] = None,
                at_risk: frozenset = frozenset(), mixed: bool = False) -> Report:
    """Properties (1) and (3) on the nodes' final views ({node: View-like or None}).

    ``mixed`` (one node is the Java server, see MIXED below): presence and absence for every
    instance, the status only of instances no operator ever touched, no property (3)."""
    rep = Report([])
    rep.crash_risk = len(at_risk)
    per = ops_by_instance(ops)
    keys = set(per) | set(live) if keys is None else keys
    for name, v in final_views.items():
        if v is None:
            rep.violations.append(Violation("node-unreachable", None, f"{name} could not be read after the heal"))
    views = {n: v for n, v in final_views.items() if v is not None}
    for key in sorted(keys):
        iops = per.get(key, [])
        m = model_of(iops, at_risk)
        if m.unchecked:
            rep.unchecked.append((key, m.unchecked))
            continue
        rep.uncertain += m.uncertain
        rep.override_unsure += m.override_unsure
        if key in live:
            allowed = {reported(s) for s in m.states if s[0]}
            # UNKNOWN after a removal only lasts until the client's next heartbeat is answered 404
            # and it registers again; a cluster may also settle on the own status without that
            # round trip (the node the client heartbeats never showed UNKNOWN)
            allowed |= {(s[1], UNKNOWN) for s in m.states if s[0] and not s[2] and s[3] == UNKNOWN}
            # an override set over an own DOWN/STARTING shows OUT_OF_SERVICE on one node until the
            # client registers again; a cluster may settle on the precedence (own DOWN wins) instead
            allowed |= {(s[1], OOS) for s in m.states if s[0] and s[2] and s[1] in (DOWN, STARTING)}
            if not allowed:
                allowed = {(UP, UNKNOWN)}
        else:
            allowed = {None}
        seen = {n: v.instances.get(key) for n, v in views.items()}
        if mixed and key in live and any(o.kind in (SET_OVERRIDE, REMOVE_OVERRIDE) for o in iops):
            bad = {n: got for n, got in seen.items() if got is None}     # present is all we ask
        else:
            bad = {n: got for n, got in seen.items() if got not in allowed}
        if bad:
            what = "live" if key in live else "not live (cancelled or never registered)"
            exp = ", ".join(sorted("absent" if a is None else f"{a[0]} (override {a[1]})" for a in allowed))
            got = ", ".join(f"{n}: " + ("absent" if g is None else f"{g[0]} (override {g[1]})")
                            for n, g in sorted(seen.items()))
            tag = " [model involved indeterminate or crash-risk writes]" if m.uncertain else ""
            rep.violations.append(Violation(
                "final-state", key, f"{what}; expected {exp}; got {got}{tag}", relevant_lines(iops)))
    # (3) every node the same
    if len(views) > 1 and not mixed:
        names = sorted(views)
        ref = views[names[0]]
        for n in names[1:]:
            v = views[n]
            if v.hashcode != ref.hashcode or v.instances != ref.instances:
                diff = []
                for k in sorted(set(v.instances) | set(ref.instances)):
                    a, b = ref.instances.get(k), v.instances.get(k)
                    if a != b:
                        diff.append(f"{k[0]}/{k[1]}: {names[0]}={a} {n}={b}")
                rep.violations.append(Violation(
                    "divergence", None,
                    f"{names[0]} and {n} differ: apps__hashcode {ref.hashcode!r} vs {v.hashcode!r}; "
                    f"{len(diff)} instance(s) differ", observations=diff[:20]))
    return rep


CANCEL_STAMP_SLACK_MS = 5
"""How much earlier than the cancel request's start (the client's wall clock) the acking node's
reading of the same clock may be: truncation to milliseconds and the order of the two readings."""

TOMBSTONE_RETENTION_S = 300.0
"""Heureka's ``heureka.replication.tombstone-retention-ms`` default (run.py does not change it): a
node forgets a cancel's tombstone this long after applying it, and (2) is checked only until
this long after the cancel."""


def cancel_applied(entry, cancel_ms: int) -> bool:
    """Whether a digest entry shows a cancel stamped at or after ``cancel_ms`` in force: a
    tombstone (``removed``) whose last cancel (``stamps.removed``) is that late, with no
    registration stamped after it. An eviction's tombstone stamps nothing (its ``stamps.removed``
    is the previous cancel's, or ZERO), so it never counts, and neither does a tombstone of an
    earlier cancel."""
    if entry is None or not entry.removed or entry.cancel is None or entry.registration is None:
        return False
    return entry.cancel[0] >= cancel_ms and tuple(entry.registration) < tuple(entry.cancel)


def check_cancels(ops: list[Op], observations: list[Observation], digests: list,
                  retention_s: float = TOMBSTONE_RETENTION_S) -> tuple[list, int, list, dict]:
    """Property (2), from the nodes' digests. Returns (violations, cancels checked,
    [(key, why unchecked)], counters): ``applied_seen`` (pairs of a cancel and a node incarnation
    whose digest showed it applied: the cases actually checked) and ``excused`` (a revival
    explained by an indeterminate registration from before the cancel)."""
    violations, unchecked, checked = [], [], 0
    counters = {"applied_seen": 0, "excused": 0}
    per = ops_by_instance(ops)
    reads = by_incarnation(observations)
    digs = by_incarnation(digests)
    for key, iops in sorted(per.items()):
        iops = sorted(iops, key=lambda o: o.seq)
        for idx, c in enumerate(iops):
            if c.kind != CANCEL or c.outcome != OK:
                continue
            if not digests:
                unchecked.append((key, f"cancel #{c.seq}: no digest reads in the history (recorded before "
                                       "they were added): property (2) not checked"))
                continue
            if not c.wall_start:
                unchecked.append((key, f"cancel #{c.seq}: no wall-clock time recorded"))
                continue
            checked += 1
            cancel_ms, until, until_ms, late, horizon = cancel_window(iops, idx, retention_s)
            for (node, inc), dl in digs.items():
                proof = next((d for d in dl if d.start > c.end and d.end < until and d.start < horizon
                              and cancel_applied(d.entries.get(key), cancel_ms)), None)
                if proof is None:
                    continue
                counters["applied_seen"] += 1
                stamp = tuple(proof.entries[key].cancel)
                for o in reads.get((node, inc), []):
                    if o.start <= proof.end:
                        continue
                    if o.end >= until or o.start >= horizon:
                        break
                    if key not in o.instances:
                        continue
                    if late and any(
                            (e := d.entries.get(key)) is not None and e.registration is not None
                            and stamp < tuple(e.registration) and e.registration[0] < until_ms
                            for d in dl if d.start >= proof.end):
                        counters["excused"] += 1
                        break
                    after = next((d for d in dl if d.start >= o.end), None)
                    violations.append(Violation(
                        "cancel-undone", key,
                        f"cancel acknowledged at {c.end:.3f} by {c.node}; {node} (incarnation {inc}) had "
                        f"applied it (its digest at {proof.start:.3f}: a tombstone with the cancel's stamp), "
                        f"then showed the instance again at {o.start:.3f}, without a registration after the "
                        "cancel" + (" (an earlier indeterminate registration is not in its digest)" if late else ""),
                        relevant_lines(iops, around=(c.start, o.end)),
                        [proof.line(key), o.line(key)] + ([after.line(key)] if after else [])))
                    break
    return violations, checked, unchecked, counters


def restarts(outages: list[Outage]) -> dict:
    """Per node, its kills in the order applied: incarnation k (k >= 2) of a node is the process
    the nemesis started after its (k-1)-th kill."""
    out: dict = {}
    for o in sorted((o for o in outages if o.kind == "kill"), key=lambda o: o.start):
        out.setdefault(o.node, []).append(o)
    return out


def blocked(src: str, dst: str, outages: list[Outage], t0: float, t1: float, skip=None) -> Optional[Outage]:
    """The first outage (other than ``skip``) that kept src from reaching dst at some moment of
    [t0, t1]: a kill or pause of either node, or the directed link src->dst broken."""
    for o in sorted(outages, key=lambda o: o.start):
        if o is skip or o.end < t0 or o.start > t1:
            continue
        if (o.kind in ("kill", "pause") and o.node in (src, dst)) or (o.kind == "link" and o.link == (src, dst)):
            return o
    return None


def check_restored(ops: list[Op], observations: list[Observation], digests: list, outages: list[Outage],
                   retention_s: float = TOMBSTONE_RETENTION_S) -> tuple[list, dict, list]:
    """Property (2b), a restarted node serving a cancelled instance its peers had applied (see the
    docstring). Returns (violations, counters, [(key, what)] restored-unconfirmed): ``checked``
    (pairs of a cancel and a restarted node incarnation that could reach a node holding its
    tombstone throughout its start) and ``excused`` (served, but a peer still showed the instance
    live, or an indeterminate earlier registration is stamped after the cancel)."""
    violations, unconfirmed = [], []
    counters = {"checked": 0, "excused": 0}
    if not digests:
        return violations, counters, unconfirmed
    per = ops_by_instance(ops)
    kills = restarts(outages)
    reads = by_incarnation(observations)
    reads_by_node: dict = {}
    for o in sorted(observations, key=lambda o: o.start):
        reads_by_node.setdefault(o.node, []).append(o)
    digs = by_incarnation(digests)
    for key, iops in sorted(per.items()):
        iops = sorted(iops, key=lambda o: o.seq)
        for idx, c in enumerate(iops):
            if c.kind != CANCEL or c.outcome != OK or not c.wall_start:
                continue
            cancel_ms, until, until_ms, late, horizon = cancel_window(iops, idx, retention_s)
            # every (node, incarnation) whose digest showed the cancel applied, and the first proof
            proofs = {}
            for (m, minc), dl in digs.items():
                proof = next((d for d in dl if d.start > c.end and d.end < until and d.start < horizon
                              and cancel_applied(d.entries.get(key), cancel_ms)), None)
                if proof is not None:
                    proofs[(m, minc)] = proof
            if not proofs:
                continue
            for (node, inc), rl in reads.items():
                if inc < 2 or len(kills.get(node, [])) < inc - 1:
                    continue        # the first process, or a restart the nemesis did not make
                kill = kills[node][inc - 2]
                t_s = kill.restart if kill.restart is not None else kill.start
                first = rl[0]
                if first.start >= until or first.start >= horizon:
                    continue
                # the nodes that held the tombstone when this process started, in an incarnation
                # that went on running (and kept it) until its first read
                holders = []
                for (m, minc), proof in proofs.items():
                    if m == node or proof.end > t_s:
                        continue
                    if any(k.start >= proof.start and k.start <= first.end for k in kills.get(m, [])):
                        continue
                    if any(d.start > proof.end and d.start <= first.end
                           and not cancel_applied(d.entries.get(key), cancel_ms) for d in digs[(m, minc)]):
                        continue
                    holders.append((m, proof))
                if not holders:
                    continue
                reachable = [(m, p) for m, p in holders if blocked(node, m, outages, t_s, first.end, skip=kill) is None]
                # from its own proof on, the node is held to the cancel by property (2)
                own = next((d for d in digs.get((node, inc), []) if d.start > c.end
                            and cancel_applied(d.entries.get(key), cancel_ms)), None)
                stop = min(until, horizon, own.end if own else float("inf"))
                shown = next((o for o in rl if o.start < stop and key in o.instances), None)
                if shown is None:
                    counters["checked"] += bool(reachable)
                    continue
                stamp = min(tuple(p.entries[key].cancel) for _, p in holders)
                if late and any((e := d.entries.get(key)) is not None and e.registration is not None
                                and stamp < tuple(e.registration) and e.registration[0] < until_ms
                                for d in digs.get((node, inc), [])):
                    counters["excused"] += 1
                    continue
                if not reachable:
                    why = "; ".join(f"{m}: {describe(blocked(node, m, outages, t_s, first.end, skip=kill))}"
                                    for m, _ in holders)
                    unconfirmed.append((key, f"cancel #{c.seq} acknowledged at {c.end:.3f}: {node} "
                                             f"(incarnation {inc}, restarted from {t_s:.3f}) showed it at "
                                             f"{shown.start:.3f}, cut off during its start from every node "
                                             f"holding the tombstone ({why})"))
                    continue
                counters["checked"] += 1
                if stale_source(key, node, t_s, shown.start, reads_by_node, digs, cancel_ms) is not None:
                    counters["excused"] += 1
                    continue
                held = "; ".join(f"{m} (its digest at {p.start:.3f})" for m, p in holders)
                m, p = reachable[0]
                after = next((d for d in digs.get((node, inc), []) if d.start >= shown.end), None)
                violations.append(Violation(
                    "cancel-undone-after-restart", key,
                    f"cancel acknowledged at {c.end:.3f} by {c.node}; {held} had applied it before {node} "
                    f"restarted (incarnation {inc}, from {t_s:.3f}); {node} could reach "
                    f"{', '.join(m for m, _ in reachable)} throughout its start (up to its first read at "
                    f"{first.start:.3f}), yet showed the instance at {shown.start:.3f}, without a registration "
                    "after the cancel or a peer still showing it live",
                    relevant_lines(iops, around=(c.start, shown.end)),
                    [p.line(key)] + ([first.line(key)] if first is not shown else [])
                    + [shown.line(key)] + ([after.line(key)] if after else [])))
    return violations, counters, unconfirmed


def stale_source(key: Key, node: str, t_s: float, before: float, reads_by_node: dict, digs: dict,
                 cancel_ms: int) -> Optional[Observation]:
    """A read of a peer of ``node`` showing the instance live that could have handed ``node`` a
    stale copy: one started between ``node``'s restart and ``before``, or the peer's last read
    started before the restart if it showed the instance and no digest of the peer showed the
    cancel applied between that read and the restart."""
    for p, rl in reads_by_node.items():
        if p == node:
            continue
        hit = next((q for q in rl if t_s <= q.start < before and key in q.instances), None)
        if hit is not None:
            return hit
        last = next((q for q in reversed(rl) if q.start < t_s), None)
        if last is None or key not in last.instances:
            continue
        if any(d.start > last.end and d.end <= t_s and cancel_applied(d.entries.get(key), cancel_ms)
               for (n, _), dl in digs.items() if n == p for d in dl):
            continue
        return last
    return None


def describe(o: Optional[Outage]) -> str:
    if o is None:
        return "reachable"
    what = f"link {o.link[0]}->{o.link[1]} broken" if o.kind == "link" else f"{o.kind} of {o.node}"
    return f"{what} {o.start:.3f}..{o.end:.3f}"


def check_cancels_inferred(ops: list[Op], observations: list[Observation],
                           at_risk: frozenset = frozenset()) -> tuple[list, int, list]:
    """The old inference of (2) from reads alone, for histories without digest reads (run.py
    --recheck --infer-cancels): once a node was read without the instance after the ack, a later
    read showing it is reported as "cancel-undone-inferred". Unsound (see the docstring above:
    a node that evicted the instance, or never learnt the registration the cancel removed, is
    absent without having applied the cancel), so it is never part of a normal check."""
    violations, unchecked, checked = [], [], 0
    per = ops_by_instance(ops)
    by_node: dict = {}
    for o in sorted(observations, key=lambda o: o.start):
        by_node.setdefault((o.node, o.incarnation), []).append(o)
    for key, iops in per.items():
        iops = sorted(iops, key=lambda o: o.seq)
        for idx, c in enumerate(iops):
            if c.kind != CANCEL or c.outcome != OK:
                continue
            if any(o.kind == REGISTER and o.outcome in (INDETERMINATE, "") and o.seq < c.seq for o in iops):
                unchecked.append((key, f"cancel #{c.seq}: an earlier registration is indeterminate"))
                continue
            if c.seq in at_risk:
                unchecked.append((key, f"cancel #{c.seq}: its node was killed before it was durable"))
                continue
            checked += 1
            nxt = next((o for o in iops[idx + 1:] if o.kind == REGISTER), None)
            until = nxt.start if nxt else float("inf")
            for (node, inc), obs in by_node.items():
                gone: Optional[Observation] = None
                for o in obs:
                    if o.end >= until:
                        break
                    if gone is None:
                        if o.start > c.end and key not in o.instances:
                            gone = o
                    elif key in o.instances:
                        violations.append(Violation(
                            "cancel-undone-inferred", key,
                            f"cancel acknowledged at {c.end:.3f} by {c.node}; {node} (incarnation {inc}) "
                            f"no longer had it at {gone.start:.3f}, then had it again at {o.start:.3f} "
                            "(inferred from reads alone: may be an eviction or a registration it never had)",
                            relevant_lines(iops, around=(c.start, o.end)),
                            [gone.line(key), o.line(key)]))
                        break
    return violations, checked, unchecked


def check(ops: list[Op], observations: list[Observation], live: set, final_views: dict,
          keys: Optional[set] = None, at_risk: frozenset = frozenset(), mixed: bool = False,
          digests: Optional[list] = None, infer_cancels: bool = False,
          retention_s: float = TOMBSTONE_RETENTION_S, outages: Optional[list] = None) -> Report:
    """Every property. ``digests``: the digest reads (None or empty: a history recorded before
    them, where (2) is reported unchecked, or with ``infer_cancels`` inferred from reads).
    ``outages``: the nemesis's faults as applied (None: (2b) not checked; without kills it has
    nothing to check)."""
    # an op without an outcome (its thread was stopped mid-request) counts as indeterminate
    rep = check_final(ops, live, final_views, keys=keys, at_risk=at_risk, mixed=mixed)
    if mixed:
        return rep
    if not digests and infer_cancels:
        v, n, unchecked = check_cancels_inferred(ops, observations, at_risk)
    else:
        v, n, unchecked, counters = check_cancels(ops, observations, digests or [], retention_s)
        rep.cancels_applied_seen = counters["applied_seen"]
        rep.cancels_excused = counters["excused"]
        if outages is not None:
            v2, counters2, rep.restored_unconfirmed = check_restored(ops, observations, digests or [], outages,
                                                                     retention_s)
            v = v + v2
            rep.restored_checked, rep.restored_excused = counters2["checked"], counters2["excused"]
    rep.violations = v + rep.violations
    rep.cancels_checked = n
    rep.unchecked += unchecked
    return rep


# ---------------------------------------------------------------------------------------------
# (5) Namespaces (run.py --namespaces): nothing crosses from one namespace into another
# ---------------------------------------------------------------------------------------------
def check_isolation(namespace: str, owners: dict, observations: list[Observation], digests: list,
                    final_views: dict, copies: Optional[dict] = None) -> list[Violation]:
    """Property (5), "crossed-namespace": every document a node served for ``namespace`` (each
    registry read, each digest read, the final views, and every instance a push follower's copy
    ever held: ``copies`` {label: keys}) lists only instances whose clients registered them in
    ``namespace``. ``owners`` maps every instance the run's clients made, in any namespace, to
    its namespace; an instance of another namespace, or one no client made, is a violation (one
    per instance and node, with the first document that showed it and how many did)."""
    sightings: dict = {}            # (key, where) -> [first line, count]

    def saw(key, where: str, line: str) -> None:
        if owners.get(key) == namespace:
            return
        s = sightings.setdefault((key, where), [line, 0])
        s[1] += 1

    for o in observations:
        for key in o.instances:
            saw(key, o.node, o.line(key))
    for d in digests:
        for key in d.entries:
            saw(key, d.node, d.line(key))
    for node, v in final_views.items():
        for key in (v.instances if v is not None else ()):
            saw(key, node, f"final read of {node}: {key[1]}: {v.instances[key]}")
    for label, keys in (copies or {}).items():
        for key in keys:
            saw(key, f"push {label}", f"the push follower of {label} held {key[1]}")
    out = []
    for (key, where), (line, count) in sorted(sightings.items()):
        home = owners.get(key)
        whose = f"an instance of namespace {home}" if home else "an instance no client made"
        out.append(Violation("crossed-namespace", key,
                             f"{whose} in namespace {namespace}'s documents on {where} ({count} document(s))",
                             observations=[line]))
    return out
