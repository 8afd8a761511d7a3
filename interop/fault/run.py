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
                "errors": self.errors, "log_dir": self.log_dir}


def node_extra(opts: Options) -> dict:
    return {
        **push.NODE_SETTINGS,
        "heureka.replication.anti-entropy-interval-ms": str(opts.anti_entropy_ms),
        "eureka.server.enable-self-preservation": "false",
        "eureka.server.eviction-interval-timer-in-ms": str(opts.eviction_ms),
    }


def self_test_resurrect(cluster, clients: Clients, history: History, log) -> None:
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
    out = call(node.port, "POST", "/eureka/peerreplication/batch/", json.dumps(batch), JSON_BODY)
    log(f"self-test: cancelled {inst.instance_id}, then a peer batch registered it on {node.node_name}: {out[:2]}")


def run_seed(seed: int, binary: str, opts: Options, log=print) -> SeedResult:
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
    log(f"=== seed {seed}: {'mixed (fz-c is Java), ' if opts.java_jar else ''}{'persistence, ' if opts.persistence else ''}{opts.duration:.0f}s, anti-entropy {opts.anti_entropy_ms} ms, lease {opts.lease}s, "
        f"{opts.instances} instances, {len(faults)} faults, logs {log_dir}")
    for f in faults:
        log(f"  fault {f.describe(names)}")

    history = None
    clients = None
    pollers: list[Poller] = []
    followers: list[push.PushFollower] = []
    nemesis = None
    try:
        cluster.start()
        history = History()
        addrs = [NodeAddr(n.node_name, n.port) for n in cluster.nodes]
        nemesis = Nemesis(cluster, faults, history.now, log if opts.verbose else (lambda s: None))
        # the Java node of a mixed cluster has no digest (and is not checked for property 2)
        pollers = [Poller(a, history, (lambda i=i: nemesis.incarnation(i)), digest=kinds[i] == "heureka")
                   for i, a in enumerate(addrs)]
        clients = Clients(insts, addrs, history, opts.lease, opts.workers, client_rng, Workload())
        # every Heureka node's push stream, followed and checked (the Java node has none)
        push_rng = random.Random(rng.getrandbits(64))
        followers = [push.PushFollower(a, history.now, random.Random(push_rng.getrandbits(64)),
                                       lose_one=opts.self_test and i == 0)
                     for i, a in enumerate(addrs) if kinds[i] == "heureka"]
        for p in pollers:
            p.start()
        for f in followers:
            f.start()
        clients.start()
        nemesis.start()

        # the active phase: the nemesis's schedule runs on its own clock; wait for its end
        end_active = opts.duration
        self_tested = False
        while history.now() < end_active:
            time.sleep(min(1.0, max(0.05, end_active - history.now())))
            if opts.self_test and not self_tested and history.now() >= end_active / 2:
                self_tested = True
                self_test_resurrect(cluster, clients, history, log)
            if clients.errors():
                raise RuntimeError(f"client thread failed: {clients.errors()[0]!r}")

        clients.quiesce()
        nemesis.heal_all()
        heal_at = history.now()
        log(f"  healed at {heal_at:.1f}s")

        # convergence: every node readable, all the same, all as the model says
        mixed = bool(opts.java_jar)
        lease_s = opts.lease * (2 if mixed else 1)      # Java expires after twice the duration
        deadline = 3 * opts.anti_entropy_ms / 1000 + lease_s + 2 * opts.eviction_ms / 1000 + 15
        res.converge_deadline_s = deadline
        final: dict = {}
        rep = None
        outages = with_restarts(nemesis.outages(), faults)
        durable_after = max(6.0, opts.anti_entropy_ms / 1000 + 1.0)
        while True:
            final = {a.name: read_view(a.port) for a in addrs}
            ops, _ = history.snapshot()
            at_risk = checker.crash_risk(ops, outages, names, durable_after)
            rep = checker.check_final(ops, clients.live(), final, keys=clients.keys(), at_risk=at_risk,
                                      mixed=mixed)
            if not rep.violations:
                res.convergence_s = round(history.now() - heal_at, 2)
                break
            if history.now() - heal_at > deadline:
                break
            time.sleep(0.5)
        clients.stop()
        for p in pollers:
            p.stop()
        # the final check on a stable history (clients stopped)
        ops, observations = history.snapshot()
        final = {a.name: read_view(a.port) for a in addrs}
        at_risk = checker.crash_risk(ops, outages, names, durable_after)
        digests = history.digest_reads()
        rep = checker.check(ops, observations, clients.live(), final, keys=clients.keys(), at_risk=at_risk,
                            mixed=mixed, digests=digests, outages=outages)
        res.crash_risk = rep.crash_risk
        res.violations = rep.violations + push.violations(followers)
        res.push = push.summary(followers)
        for f in followers:
            f.stop()
        res.uncertain, res.override_unsure = rep.uncertain, rep.override_unsure
        res.unchecked, res.cancels_checked = rep.unchecked, rep.cancels_checked
        res.cancels_applied_seen, res.cancels_excused = rep.cancels_applied_seen, rep.cancels_excused
        res.restored_checked, res.restored_excused = rep.restored_checked, rep.restored_excused
        res.restored_unconfirmed = rep.restored_unconfirmed
        res.reads = len(observations)
        res.digest_reads = len(digests)
        res.errors += nemesis.errors
        c = Counter(op.outcome for op in ops)
        kinds_c = Counter(op.kind for op in ops)
        res.ops = {"total": len(ops), "ok": c["ok"], "failed": c["failed"], "indeterminate": c["indeterminate"],
                   **{f"kind:{k}": v for k, v in sorted(kinds_c.items())},
                   "failed_404": sum(1 for o in ops if o.outcome == "failed" and o.status == 404)}
        history.dump(log_dir / "history.jsonl")
        save_meta(log_dir / "meta.json", clients, outages, final, durable_after, mixed)
    except BaseException as exc:
        res.errors.append(f"{type(exc).__name__}: {exc}")
        raise
    finally:
        if clients is not None:
            clients.stop()
        for p in pollers:
            p.stop_event.set()
        for f in followers:
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


def save_meta(path: Path, clients: Clients, outages, final: dict, durable_after: float, mixed: bool) -> None:
    """What --recheck needs besides history.jsonl."""
    path.write_text(json.dumps({
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
    if a.java_jar and not Path(a.java_jar).exists():
        ap.error(f"--java-jar {a.java_jar} not found (mvn -q -B -DskipTests package in interop/java)")
    binary = Path(a.bin).resolve()
    if not binary.exists():
        ap.error(f"heureka binary {binary} not found (--bin or HEUREKA_BIN)")
    opts = Options(duration=a.duration, anti_entropy_ms=a.anti_entropy_ms, lease=a.lease, instances=a.instances,
                   faults=not a.no_faults, self_test=a.self_test,
                   log_dir=Path(a.log_dir) if a.log_dir else Path(tempfile.mkdtemp(prefix="heureka-fault-")),
                   verbose=a.verbose, java_jar=a.java_jar, persistence=a.persistence)
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
          f"seeds={len(results)} violating={[r.seed for r in bad]} "
          f"violations={sum(len(r.violations) for r in results)} "
          f"by-property={dict(Counter(v.prop for r in results for v in r.violations))} "
          f"restored-unconfirmed={sum(len(r.restored_unconfirmed) for r in results)} "
          f"convergence={('%.1f..%.1fs' % (min(conv), max(conv))) if conv else '-'} "
          f"not-converged={[r.seed for r in results if r.convergence_s is None]}", flush=True)
    if a.json:
        Path(a.json).write_text(json.dumps({"binary": str(binary), "anti_entropy_ms": opts.anti_entropy_ms,
                                            "duration": opts.duration, "faults": opts.faults,
                                            "seeds": [r.to_json() for r in results]}, indent=1))
    if infra:
        return 2
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
