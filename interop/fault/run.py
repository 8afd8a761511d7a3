#!/usr/bin/env python3
"""Randomized fault runs against a three-node Heureka cluster, checked against a model.

    python3 interop/fault/run.py --seeds 1,2,3 --duration 90
    python3 interop/fault/run.py --seeds 30 --anti-entropy-ms 2000 --json out.json
    python3 interop/fault/run.py --seeds 1 --no-faults          # a calm run: must report nothing
    python3 interop/fault/run.py --seeds 1 --self-test          # must report a resurrected cancel
                                                                # and a push delta lost

Per seed: three nodes in a full mesh, each directed peer link through its own fault proxy;
~60 client instances (clients.py) talk to the nodes directly; pollers read every node twice a
second; a push follower per node (push.py) follows its push stream and checks every delta; the
nemesis (nemesis.py) applies the seed's fault schedule during the active phase
(``--duration``); then everything heals, the clients stop changing things (they keep
heartbeating), and the run waits (bounded) until every node holds what the model says. The
checker (checker.py, which documents the model) then reports violations. Exit status 1 if any
seed has a violation, 2 on an infrastructure error.
"""
from __future__ import annotations

import argparse
import json
import os
import random
import signal
import sys
import tempfile
import time
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Optional

if __package__ in (None, ""):           # run as a script: make ``fault`` importable
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import fault  # noqa: E402,F401 - puts interop/tests on sys.path
from support import procs  # noqa: E402
from support.cluster import Cluster  # noqa: E402

from fault import checker  # noqa: E402
from fault.clients import Clients, NodeAddr, Poller, Workload, make_instances, read_view  # noqa: E402
from fault.history import History  # noqa: E402
from fault.nemesis import Nemesis, schedule  # noqa: E402
from fault import push  # noqa: E402

DEFAULT_BIN = procs.REPO_DIR / "target" / "release" / "heureka"
APPS = ["FZ-ORDERS", "FZ-USERS", "FZ-BILLING", "FZ-SEARCH"]


@dataclass
class Options:
    duration: float = 180.0
    anti_entropy_ms: int = 10000
    lease: int = 8
    eviction_ms: int = 1000
    instances: int = 60
    workers: int = 6
    faults: bool = True
    self_test: bool = False
    log_dir: Optional[Path] = None
    verbose: bool = False
    java_jar: Optional[str] = None
    persistence: bool = False
    namespaces: int = 1         # 2 or 3: the instances split over default, team-a (and team-b)


NAMESPACES = ["default", "team-a", "team-b"]


def base_of(namespace: str) -> str:
    """The Eureka base path a client of ``namespace`` is given (docs/namespaces.md)."""
    return "/eureka" if namespace == "default" else f"/ns/{namespace}/eureka"


@dataclass
class Space:
    """One namespace of a run: its instances and their clients, its pollers and push followers
    (which read only its documents), and its own history, checked against the model on its own."""
    name: str
    insts: list
    history: History
    log_dir: Path
    clients: Optional[Clients] = None
    pollers: list = field(default_factory=list)
    followers: list = field(default_factory=list)

    @property
    def base(self) -> str:
        return base_of(self.name)


def spaces_of(opts: Options, insts: list, log_dir: Path) -> list[Space]:
    """The run's namespaces. One: every instance in ``default`` (``/eureka``), the history in the
    seed's directory, as before namespaces. Several: the instances dealt out in blocks of one per
    app, so every namespace holds every app name (the same names, other instances), each with a
    history (and ``meta.json``) in ``ns-{name}/`` of the seed's directory, all on one clock."""
    if opts.namespaces == 1:
        return [Space("default", insts, History(), log_dir)]
    t0 = time.monotonic()
    names = NAMESPACES[:opts.namespaces]
    spaces = [Space(n, [], History(t0=t0), log_dir / f"ns-{n}") for n in names]
    for i, inst in enumerate(insts):
        sp = spaces[(i // len(APPS)) % len(spaces)]
        inst.base = sp.base
        sp.insts.append(inst)
    for sp in spaces:
        sp.log_dir.mkdir(parents=True, exist_ok=True)
    return spaces


@dataclass
class SeedResult:
    seed: int
    schedule: list = field(default_factory=list)
    ops: dict = field(default_factory=dict)
    convergence_s: Optional[float] = None
    converge_deadline_s: float = 0.0
    violations: list = field(default_factory=list)
    uncertain: int = 0
    override_unsure: int = 0
    unchecked: list = field(default_factory=list)
    cancels_checked: int = 0
    cancels_applied_seen: int = 0
    cancels_excused: int = 0
    restored_checked: int = 0
    restored_excused: int = 0
    restored_unconfirmed: list = field(default_factory=list)
    crossings_checked: int = 0      # --namespaces: documents checked for other namespaces' instances
    namespaces: list = field(default_factory=list)
    crash_risk: int = 0
    reads: int = 0
    digest_reads: int = 0
    push: str = ""
    errors: list = field(default_factory=list)
    log_dir: str = ""

    def to_json(self) -> dict:
        return {"seed": self.seed, "schedule": self.schedule, "ops": self.ops,
                "convergence_s": self.convergence_s, "convergence_deadline_s": self.converge_deadline_s,
                "violations": [v.to_json() for v in self.violations],
                "instances_with_indeterminate_writes": self.uncertain,
                "override_unsure": self.override_unsure,
                "unchecked": [[list(k), why] for k, why in self.unchecked],
                "cancels_checked": self.cancels_checked, "cancels_applied_seen": self.cancels_applied_seen,
                "cancels_excused": self.cancels_excused, "restored_checked": self.restored_checked,
                "restored_excused": self.restored_excused,
                "restored_unconfirmed": [[list(k), what] for k, what in self.restored_unconfirmed],
                "crash_risk_writes": self.crash_risk, "reads": self.reads,
                "digest_reads": self.digest_reads, "push": self.push,
                "namespaces": self.namespaces, "crossings_checked": self.crossings_checked,
                "errors": self.errors, "log_dir": self.log_dir}


def node_extra(opts: Options) -> dict:
    return {
        **push.NODE_SETTINGS,
        "heureka.replication.anti-entropy-interval-ms": str(opts.anti_entropy_ms),
        "eureka.server.enable-self-preservation": "false",
        "eureka.server.eviction-interval-timer-in-ms": str(opts.eviction_ms),
    }


def self_test_resurrect(cluster, clients: Clients, history: History, log, base: str = "/eureka") -> None:
    """Cancel a live instance for real, then, once node 0's digest shows the cancel applied, put
    it back on node 0 behind the checker's back (a peer replication batch registering it, as a
    peer would): the checker must report the cancel undone.

    Node 0 takes the batch, as Heureka takes a Java peer's unstamped registration with a newer
    ``lastDirtyTimestamp``, and stamps it now, so its digest shows a registration later than the
    cancel. That is no excuse under property (2): only a registration the history holds (the
    client's next one, or an indeterminate one from before the cancel) may bring the instance
    back, and this one is in no history. So the self-test checks the checker end to end (digest
    reads, wall clocks against stamps, the reads after), not the server, which does what a
    server must with a newer registration."""
    from fault.clients import JSON_BODY, call
    victims = [i for i in clients.insts if i.state == "registered"]
    if not victims:
        log("self-test: no registered instance to cancel")
        return
    inst = victims[0]
    w = next(w for w in clients.workers if inst in w.insts)
    # take it away from its worker first, so its client does not heartbeat it back
    w.insts = [i for i in w.insts if i is not inst]
    op, _ = w._client_call(inst, "cancel", "DELETE", inst.path())
    inst.state = "cancelled"
    node = cluster.nodes[0]
    acked = op.end
    inst.bump()             # a newer copy than anything the cluster has seen: no rule may refuse it
    body = json.loads(inst.body(30))["instance"]
    batch = {"replicationList": [{"appName": inst.app, "id": inst.instance_id,
                                  "lastDirtyTimestamp": inst.dirty, "overriddenStatus": "UNKNOWN",
                                  "status": "UP", "instanceInfo": body, "action": "Register"}]}
    if op.outcome != "ok":
        log(f"self-test: the cancel of {inst.instance_id} was not acknowledged ({op.line()}): nothing to undo")
        return
    # wait (bounded) until a digest read of node 0 that started after the ack shows it applied
    cancel_ms = int(op.wall_start * 1000) - checker.CANCEL_STAMP_SLACK_MS
    deadline = time.monotonic() + 30
    applied = False
    while time.monotonic() < deadline and not applied:
        applied = any(d.node == node.node_name and d.start > acked
                      and checker.cancel_applied(d.entries.get(inst.key), cancel_ms)
                      for d in history.digest_reads())
        if not applied:
            time.sleep(0.2)
    if not applied:
        log(f"self-test: {node.node_name}'s digest never showed the cancel of {inst.instance_id} applied")
    # Accepted as a peer's: the nodes' peers are on 127.0.0.1, where this process is too.
    out = call(node.port, "POST", f"{base}/peerreplication/batch/", json.dumps(batch), JSON_BODY)
    log(f"self-test: cancelled {inst.instance_id}, then a peer batch registered it on {node.node_name}: {out[:2]}")


def self_test_cross(cluster, spaces: list[Space], log) -> None:
    """--self-test with --namespaces: register one of the second namespace's live instances in
    the first namespace on node 0, behind the checker's back (a client registration no history
    holds): property (5) must report it crossed."""
    from fault.clients import JSON_BODY, call
    victims = [i for i in spaces[1].insts if i.state == "registered"]
    if not victims:
        log("self-test: no registered instance to cross namespaces with")
        return
    inst = victims[0]
    # a short lease: it expires unrenewed well before the convergence deadline
    out = call(cluster.nodes[0].port, "POST", f"{spaces[0].base}/apps/{inst.app}", inst.body(3), JSON_BODY)
    log(f"self-test: {spaces[1].name}'s {inst.instance_id} registered in {spaces[0].name} on "
        f"{cluster.nodes[0].node_name}: {out[:2]}")


def run_seed(seed: int, binary: str, opts: Options, log=print) -> SeedResult:
    if not 1 <= opts.namespaces <= len(NAMESPACES) or (opts.namespaces > 1 and opts.java_jar):
        raise ValueError(f"namespaces: 1 to {len(NAMESPACES)}, and 1 with a Java node (it holds the default one only)")
    res = SeedResult(seed)
    rng = random.Random(seed)
    base = opts.log_dir or Path(tempfile.mkdtemp(prefix="heureka-fault-"))
    log_dir = Path(base) / f"seed-{seed}"
    log_dir.mkdir(parents=True, exist_ok=True)
    res.log_dir = str(log_dir)
    os.environ["HEUREKA_BIN"] = str(binary)

    faults = schedule(random.Random(rng.getrandbits(64)), opts.duration) if opts.faults else []
    insts = make_instances(random.Random(rng.getrandbits(64)), opts.instances, APPS, 3, opts.duration)
    client_rng = random.Random(rng.getrandbits(64))
    kinds = ["heureka"] * 3
    if opts.java_jar:
        kinds[2] = "java"
    # --persistence: each Heureka node keeps its registry in a directory of its own, which its
    # restart after a kill finds again (it restores, then merges with its peers by the stamps)
    stores = {i: {"heureka.persistence.dir": str(log_dir / f"store-{i}")}
              for i, kind in enumerate(kinds) if opts.persistence and kind == "heureka"}
    cluster = Cluster(kinds, log_dir, proxied=True, extra=node_extra(opts), node_extra=stores, label="fz")
    if opts.java_jar:
        cluster.nodes[2].jar = Path(opts.java_jar)      # JavaNode.argv() reads it at each start
    names = [n.node_name for n in cluster.nodes]
    spread = f"{opts.namespaces} namespaces ({', '.join(NAMESPACES[:opts.namespaces])}), " if opts.namespaces > 1 else ""
    log(f"=== seed {seed}: {spread}{'mixed (fz-c is Java), ' if opts.java_jar else ''}{'persistence, ' if opts.persistence else ''}{opts.duration:.0f}s, anti-entropy {opts.anti_entropy_ms} ms, lease {opts.lease}s, "
        f"{opts.instances} instances, {len(faults)} faults, logs {log_dir}")
    for f in faults:
        log(f"  fault {f.describe(names)}")

    spaces: list[Space] = []
    nemesis = None
    try:
        cluster.start()
        spaces = spaces_of(opts, insts, log_dir)
        clock = spaces[0].history
        addrs = [NodeAddr(n.node_name, n.port) for n in cluster.nodes]
        nemesis = Nemesis(cluster, faults, clock.now, log if opts.verbose else (lambda s: None))
        many = len(spaces) > 1
        workers = max(1, opts.workers // len(spaces))
        push_rng = random.Random(rng.getrandbits(64))
        for sp in spaces:
            # the Java node of a mixed cluster has no digest (and is not checked for property 2)
            sp.pollers = [Poller(a, sp.history, (lambda i=i: nemesis.incarnation(i)), digest=kinds[i] == "heureka",
                                 base=sp.base)
                          for i, a in enumerate(addrs)]
            sp.clients = Clients(sp.insts, addrs, sp.history, opts.lease, workers,
                                 random.Random(client_rng.getrandbits(64)) if many else client_rng, Workload())
            # every Heureka node's push stream, followed and checked (the Java node has none)
            sp.followers = [push.PushFollower(a, clock.now, random.Random(push_rng.getrandbits(64)),
                                              lose_one=opts.self_test and i == 0 and sp is spaces[0],
                                              base=sp.base, namespace=sp.name if many else "")
                            for i, a in enumerate(addrs) if kinds[i] == "heureka"]
        for sp in spaces:
            for p in sp.pollers:
                p.start()
            for f in sp.followers:
                f.start()
        for sp in spaces:
            sp.clients.start()
        nemesis.start()

        # the active phase: the nemesis's schedule runs on its own clock; wait for its end
        end_active = opts.duration
        self_tested = False
        while clock.now() < end_active:
            time.sleep(min(1.0, max(0.05, end_active - clock.now())))
            if opts.self_test and not self_tested and clock.now() >= end_active / 2:
                self_tested = True
                self_test_resurrect(cluster, spaces[0].clients, spaces[0].history, log, spaces[0].base)
                if many:
                    self_test_cross(cluster, spaces, log)
            errors = [e for sp in spaces for e in sp.clients.errors()]
            if errors:
                raise RuntimeError(f"client thread failed: {errors[0]!r}")

        for sp in spaces:
            sp.clients.quiesce()
        nemesis.heal_all()
        heal_at = clock.now()
        log(f"  healed at {heal_at:.1f}s")

        # convergence: every node readable, all the same, all as the model says, in every namespace
        mixed = bool(opts.java_jar)
        lease_s = opts.lease * (2 if mixed else 1)      # Java expires after twice the duration
        deadline = 3 * opts.anti_entropy_ms / 1000 + lease_s + 2 * opts.eviction_ms / 1000 + 15
        res.converge_deadline_s = deadline
        outages = with_restarts(nemesis.outages(), faults)
        durable_after = max(6.0, opts.anti_entropy_ms / 1000 + 1.0)
        owners = {i.key: sp.name for sp in spaces for i in sp.insts}
        # each node registers itself in the default namespace (eureka.client.register-with-eureka)
        owners.update({("HEUREKA", f"{procs.HOST}:heureka:{a.port}"): "default" for a in addrs})
        while True:
            converged = True
            for sp in spaces:
                final = {a.name: read_view(a.port, base=sp.base) for a in addrs}
                ops, _ = sp.history.snapshot()
                at_risk = checker.crash_risk(ops, outages, names, durable_after)
                rep = checker.check_final(ops, sp.clients.live(), final, keys=sp.clients.keys(), at_risk=at_risk,
                                          mixed=mixed)
                crossed = checker.check_isolation(sp.name, owners, [], [], final) if many else []
                converged = converged and not rep.violations and not crossed
            if converged:
                res.convergence_s = round(clock.now() - heal_at, 2)
                break
            if clock.now() - heal_at > deadline:
                break
            time.sleep(0.5)
        for sp in spaces:
            sp.clients.stop()
        for sp in spaces:
            for p in sp.pollers:
                p.stop()
        # the final check on a stable history (clients stopped), each namespace on its own
        totals: Counter = Counter()
        all_ops = []
        pushes = []
        for sp in spaces:
            ops, observations = sp.history.snapshot()
            final = {a.name: read_view(a.port, base=sp.base) for a in addrs}
            at_risk = checker.crash_risk(ops, outages, names, durable_after)
            digests = sp.history.digest_reads()
            rep = checker.check(ops, observations, sp.clients.live(), final, keys=sp.clients.keys(),
                                at_risk=at_risk, mixed=mixed, digests=digests, outages=outages)
            found = rep.violations + push.violations(sp.followers)
            if many:
                found += checker.check_isolation(sp.name, owners, observations, digests, final,
                                                 {f.label: set(f.seen) for f in sp.followers})
                res.crossings_checked += len(observations) + len(digests) + len(final) + len(sp.followers)
                for v in found:
                    v.message = f"namespace {sp.name}: {v.message}"
            res.violations += found
            pushes.append(push.summary(sp.followers))
            for f in sp.followers:
                f.stop()
            totals.update(crash_risk=rep.crash_risk, uncertain=rep.uncertain, override_unsure=rep.override_unsure,
                          cancels_checked=rep.cancels_checked, cancels_applied_seen=rep.cancels_applied_seen,
                          cancels_excused=rep.cancels_excused, restored_checked=rep.restored_checked,
                          restored_excused=rep.restored_excused, reads=len(observations),
                          digest_reads=len(digests))
            res.unchecked += rep.unchecked
            res.restored_unconfirmed += rep.restored_unconfirmed
            all_ops += ops
            res.namespaces.append({"name": sp.name, "base": sp.base, "instances": len(sp.insts),
                                   "live": len(sp.clients.live()), "ops": len(ops),
                                   "violations": len(found), "reads": len(observations)})
            sp.history.dump(sp.log_dir / "history.jsonl")
            save_meta(sp.log_dir / "meta.json", sp.clients, outages, final, durable_after, mixed,
                      namespace=sp.name, owners=owners if many else None)
        res.crash_risk, res.uncertain, res.override_unsure = (totals["crash_risk"], totals["uncertain"],
                                                              totals["override_unsure"])
        res.cancels_checked, res.cancels_applied_seen = totals["cancels_checked"], totals["cancels_applied_seen"]
        res.cancels_excused = totals["cancels_excused"]
        res.restored_checked, res.restored_excused = totals["restored_checked"], totals["restored_excused"]
        res.reads, res.digest_reads = totals["reads"], totals["digest_reads"]
        res.push = "; ".join(pushes)
        res.errors += nemesis.errors
        c = Counter(op.outcome for op in all_ops)
        kinds_c = Counter(op.kind for op in all_ops)
        res.ops = {"total": len(all_ops), "ok": c["ok"], "failed": c["failed"], "indeterminate": c["indeterminate"],
                   **{f"kind:{k}": v for k, v in sorted(kinds_c.items())},
                   "failed_404": sum(1 for o in all_ops if o.outcome == "failed" and o.status == 404)}
    except BaseException as exc:
        res.errors.append(f"{type(exc).__name__}: {exc}")
        raise
    finally:
        for sp in spaces:
            if sp.clients is not None:
                sp.clients.stop()
            for p in sp.pollers:
                p.stop_event.set()
            for f in sp.followers:
                f.stop()
        if nemesis is not None:
            nemesis.stop_event.set()
        for n in cluster.nodes:
            try:
                n.proc.send_signal(signal.SIGCONT)
            finally:
                n.proc.kill()
        cluster.close_proxies()
        res.schedule = [f.to_json(names) for f in faults]
    report_seed(res, faults, names, log)
    return res


def with_restarts(outages: list, faults: list) -> list:
    """The nemesis's outages, each kill with the earliest its restart can have begun: the fault's
    scheduled end (the nemesis waits for it before starting the node again). Property (2b) needs
    it: the outage's end is when the new process already answered reads."""
    for o in outages:
        if o.kind != "kill":
            continue
        f = next((f for f in faults if f.kind == "kill" and f.applied == o.start and f.healed is not None), None)
        if f is not None:
            o.restart = max(f.end, o.start)
    return outages


def save_meta(path: Path, clients: Clients, outages, final: dict, durable_after: float, mixed: bool,
              namespace: str = "default", owners: Optional[dict] = None) -> None:
    """What --recheck needs besides history.jsonl (with --namespaces: the namespace's and every
    instance's namespace, for property (5))."""
    path.write_text(json.dumps({
        "namespace": namespace,
        "owners": None if owners is None else sorted([k[0], k[1], ns] for k, ns in owners.items()),
        "live": sorted(list(k) for k in clients.live()), "keys": sorted(list(k) for k in clients.keys()),
        "outages": [{"kind": o.kind, "start": o.start, "end": None if o.end == float("inf") else o.end,
                     "node": o.node, "link": list(o.link) if o.link else None, "restart": o.restart}
                    for o in outages],
        "final": {n: None if v is None else {"hashcode": v.hashcode,
                                             "instances": [[k[0], k[1], st, ov] for k, (st, ov) in v.instances.items()]}
                  for n, v in final.items()},
        "durable_after": durable_after, "mixed": mixed,
        "tombstone_retention_s": checker.TOMBSTONE_RETENTION_S}))


def recheck(seed_dir: Path, infer_cancels: bool = False) -> int:
    """Run the checker again on a finished seed's history.jsonl and meta.json (e.g. after changing
    it). A history recorded before digest reads has property (2) unchecked, or with
    ``infer_cancels`` inferred from reads alone (unsound: "cancel-undone-inferred")."""
    from fault.clients import View
    from fault.history import load_all
    ops, observations, digests = load_all(seed_dir / "history.jsonl")
    meta = json.loads((seed_dir / "meta.json").read_text())
    outages = [checker.Outage(o["kind"], o["start"], float("inf") if o["end"] is None else o["end"],
                              o["node"], tuple(o["link"]) if o["link"] else None, o.get("restart"))
               for o in meta["outages"]]
    final = {n: None if v is None else View(v["hashcode"], {(a, i): (st, ov) for a, i, st, ov in v["instances"]})
             for n, v in meta["final"].items()}
    names = sorted(final)
    at_risk = checker.crash_risk(ops, outages, names, meta["durable_after"])
    rep = checker.check(ops, observations, {tuple(k) for k in meta["live"]}, final,
                        keys={tuple(k) for k in meta["keys"]}, at_risk=at_risk, mixed=meta["mixed"],
                        digests=digests, infer_cancels=infer_cancels,
                        retention_s=meta.get("tombstone_retention_s", checker.TOMBSTONE_RETENTION_S),
                        outages=outages)
    if meta.get("owners"):
        owners = {(a, i): ns for a, i, ns in meta["owners"]}
        rep.violations += checker.check_isolation(meta["namespace"], owners, observations, digests, final)
    no_digest = not digests and not meta["mixed"]
    print(f"{seed_dir}: {len(rep.violations)} violation(s); crash-risk writes {rep.crash_risk}; "
          f"digest reads {len(digests)}; cancels checked {rep.cancels_checked} (seen applied "
          f"{rep.cancels_applied_seen}, excused {rep.cancels_excused}); after a restart (2b): checked "
          f"{rep.restored_checked}, excused {rep.restored_excused}, restored-unconfirmed "
          f"{len(rep.restored_unconfirmed)}; unchecked {len(rep.unchecked)}"
          + ("; no digest reads: property (2) " + ("inferred from reads (unsound)" if infer_cancels
                                                   else "unchecked") if no_digest else ""))
    for k, what in rep.restored_unconfirmed:
        print(f"    restored-unconfirmed {k[0]}/{k[1]}: {what}")
    for v in rep.violations:
        print("    " + v.render().replace("\n", "\n    "))
    return 1 if rep.violations else 0


def report_seed(res: SeedResult, faults, names, log) -> None:
    o = res.ops
    log(f"--- seed {res.seed}: ops {o.get('total', 0)} (ok {o.get('ok', 0)}, failed {o.get('failed', 0)} "
        f"[404: {o.get('failed_404', 0)}], indeterminate {o.get('indeterminate', 0)}); "
        + ", ".join(f"{k[5:]} {v}" for k, v in o.items() if k.startswith("kind:")))
    applied = sum(1 for f in faults if f.applied is not None)
    for ns in res.namespaces if len(res.namespaces) > 1 else ():
        log(f"    namespace {ns['name']} ({ns['base']}): {ns['instances']} instances ({ns['live']} live at the end), "
            f"ops {ns['ops']}, reads {ns['reads']}, violations {ns['violations']}")
    if res.crossings_checked:
        log(f"    documents checked for other namespaces' instances: {res.crossings_checked}")
    log(f"    faults applied {applied}/{len(faults)}; reads {res.reads} (digest {res.digest_reads}); "
        f"cancels checked {res.cancels_checked} (seen applied on a node {res.cancels_applied_seen}, "
        f"revivals excused {res.cancels_excused}); "
        f"after a restart (2b): checked {res.restored_checked}, excused {res.restored_excused}, "
        f"restored-unconfirmed {len(res.restored_unconfirmed)}; "
        f"instances with indeterminate/crash-risk writes {res.uncertain} (crash-risk writes {res.crash_risk}); "
        f"override-unsure {res.override_unsure}; "
        f"unchecked {len(res.unchecked)}")
    if res.push:
        log(f"    push followers: {res.push}")
    conv = (f"{res.convergence_s:.1f}s after the heal" if res.convergence_s is not None
            else f"NOT within {res.converge_deadline_s:.0f}s")
    log(f"    convergence: {conv}")
    for e in res.errors:
        log(f"    error: {e}")
    for k, what in res.restored_unconfirmed:
        log(f"    restored-unconfirmed {k[0]}/{k[1]}: {what}")
    log(f"    violations: {len(res.violations)}")
    for v in res.violations:
        log("    " + v.render().replace("\n", "\n    "))


def parse_seeds(text: str) -> list[int]:
    if "," in text or "-" in text[1:]:
        out = []
        for part in text.split(","):
            part = part.strip()
            if "-" in part[1:]:
                a, b = part.split("-", 1)
                out += list(range(int(a), int(b) + 1))
            elif part:
                out.append(int(part))
        return out
    return list(range(1, int(text) + 1))


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--seeds", default="3", help="'1,2,3', '5-9', '7,' (seed 7 alone), or N (= 1..N); default 3")
    ap.add_argument("--duration", type=float, default=180.0, help="active phase per seed, seconds (default 180)")
    ap.add_argument("--anti-entropy-ms", type=int, default=10000, help="heureka.replication.anti-entropy-interval-ms")
    ap.add_argument("--lease", type=int, default=8, help="instances' lease duration, seconds (default 8)")
    ap.add_argument("--instances", type=int, default=60)
    ap.add_argument("--bin", default=os.environ.get("HEUREKA_BIN", str(DEFAULT_BIN)), help="the heureka binary")
    ap.add_argument("--java-jar", default=None,
                    help="node c is the Spring Cloud Eureka server from this jar (interop/java/eureka-server/"
                         "target/eureka-server.jar); checked against the weaker model (checker.py, MIXED)")
    ap.add_argument("--namespaces", type=int, default=1,
                    help="2 or 3: the instances split over the namespaces default (/eureka), team-a "
                         "(/ns/team-a/eureka) and team-b, each checked on its own, and nothing may cross "
                         "(property 5); default 1")
    ap.add_argument("--no-faults", action="store_true", help="nemesis off (a calm run: must pass)")
    ap.add_argument("--persistence", action="store_true",
                    help="each Heureka node keeps its registry on disk (heureka.persistence.dir) and restores it "
                         "when the nemesis restarts it")
    ap.add_argument("--self-test", action="store_true",
                    help="resurrect a cancelled instance behind the checker's back: must be reported")
    ap.add_argument("--json", default=None, help="write a machine-readable report here")
    ap.add_argument("--log-dir", default=None, help="node logs and history.jsonl (default: a temp dir)")
    ap.add_argument("-v", "--verbose", action="store_true", help="print each fault as it is applied")
    ap.add_argument("--recheck", default=None, metavar="SEED_DIR",
                    help="only run the checker again on a finished seed's log dir (history.jsonl, meta.json)")
    ap.add_argument("--infer-cancels", action="store_true",
                    help="with --recheck of a history without digest reads: infer property (2) from reads "
                         "alone (unsound: an eviction looks like a cancel; reported as cancel-undone-inferred)")
    a = ap.parse_args(argv)
    if a.recheck:
        return recheck(Path(a.recheck), a.infer_cancels)
    if not 1 <= a.namespaces <= len(NAMESPACES) or (a.namespaces > 1 and a.java_jar):
        ap.error(f"--namespaces: 1 to {len(NAMESPACES)}, and 1 with --java-jar (a Java peer holds the default "
                 "namespace only)")
    if a.java_jar and not Path(a.java_jar).exists():
        ap.error(f"--java-jar {a.java_jar} not found (mvn -q -B -DskipTests package in interop/java)")
    binary = Path(a.bin).resolve()
    if not binary.exists():
        ap.error(f"heureka binary {binary} not found (--bin or HEUREKA_BIN)")
    opts = Options(duration=a.duration, anti_entropy_ms=a.anti_entropy_ms, lease=a.lease, instances=a.instances,
                   faults=not a.no_faults, self_test=a.self_test,
                   log_dir=Path(a.log_dir) if a.log_dir else Path(tempfile.mkdtemp(prefix="heureka-fault-")),
                   verbose=a.verbose, java_jar=a.java_jar, persistence=a.persistence, namespaces=a.namespaces)
    # SIGTERM unwinds like Ctrl-C, so every process is cleaned up
    def on_term(*_):
        raise KeyboardInterrupt()
    signal.signal(signal.SIGTERM, on_term)
    seeds = parse_seeds(a.seeds)
    print(f"heureka fault runs: binary {binary}, seeds {seeds}, logs {opts.log_dir}", flush=True)
    results: list[SeedResult] = []
    infra = False
    for s in seeds:
        try:
            results.append(run_seed(s, str(binary), opts, log=lambda m: print(m, flush=True)))
        except KeyboardInterrupt:
            print("interrupted", flush=True)
            infra = True
            break
        except Exception as exc:  # noqa: BLE001
            print(f"seed {s}: infrastructure error: {type(exc).__name__}: {exc}", flush=True)
            infra = True
    bad = [r for r in results if r.violations]
    conv = [r.convergence_s for r in results if r.convergence_s is not None]
    print(f"SUMMARY binary={binary.name} anti-entropy={opts.anti_entropy_ms}ms duration={opts.duration:.0f}s "
          f"namespaces={opts.namespaces} "
          f"seeds={len(results)} violating={[r.seed for r in bad]} "
          f"violations={sum(len(r.violations) for r in results)} "
          f"by-property={dict(Counter(v.prop for r in results for v in r.violations))} "
          f"restored-unconfirmed={sum(len(r.restored_unconfirmed) for r in results)} "
          f"convergence={('%.1f..%.1fs' % (min(conv), max(conv))) if conv else '-'} "
          f"not-converged={[r.seed for r in results if r.convergence_s is None]}", flush=True)
    if a.json:
        Path(a.json).write_text(json.dumps({"binary": str(binary), "anti_entropy_ms": opts.anti_entropy_ms,
                                            "duration": opts.duration, "faults": opts.faults,
                                            "namespaces": opts.namespaces,
                                            "seeds": [r.to_json() for r in results]}, indent=1))
    if infra:
        return 2
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
