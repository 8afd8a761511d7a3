"""A three-node cluster: every write on one node reaches the others, and nodes survive crashes.

Three servers of one kind (``--cluster-kinds``, default heureka; ``java`` runs the same tests
against a cluster of real Spring Cloud Eureka servers) on 127.0.0.1, each listing all three in
``eureka.client.service-url.defaultZone`` as a Spring Cloud user would (support/cluster.py).
The tests write with plain HTTP, as a Java client does, each to one node, and read every node's
``GET /eureka/apps/`` (or the never-cached single-instance read). Each test uses its own
instances, so they share one cluster; the crash and restart tests come last because they
take a node down.
"""
from __future__ import annotations

import pytest

from support import cluster as cl
from support.cluster import Heartbeater, new_instance, view, wait_converged, wait_on_all
from support.procs import wait_until

# short leases for the expiry test: Heureka expires after durationInSecs, the Java server after
# twice that; renewals every 0.5 s keep well inside either
SHORT_LEASE = 4
EXPIRY_DEADLINE = 60.0


@pytest.fixture(scope="module")
def cluster(cluster_factory, cluster_kind):
    return cluster_factory([cluster_kind] * 3)


def others(cluster, i: int) -> list:
    return [n for k, n in enumerate(cluster) if k != i]


def shows(inst, status="UP", override=None):
    """Probe: the node lists ``inst`` with ``status`` (and ``override``, if given)."""
    def probe(node):
        v = view(node).instances.get(inst.key)
        return v is not None and v[0] == status and (override is None or v[1] == override)
    return probe


def lacks(inst):
    return lambda node: not view(node).has(inst)


def test_registration_on_one_node_is_visible_on_the_others(cluster):
    inst = new_instance("cl-register", metadata={"team": "cluster", "zone": "z1"})
    cl.register(cluster[0], inst)
    wait_on_all(others(cluster, 0), f"{inst.instance_id} UP", shows(inst))
    for node in others(cluster, 0):
        copy = node.get_instance(inst.app, inst.instance_id)
        assert copy["port"]["$"] == inst.port, (node, copy)
        assert copy["metadata"] == inst.metadata, (node, copy)
        assert copy["vipAddress"] == inst.app.lower(), (node, copy)
        assert copy["leaseInfo"]["durationInSecs"] == inst.duration, (node, copy)


def test_heartbeat_on_one_node_renews_the_lease_on_the_others(cluster):
    inst = new_instance("cl-heartbeat")
    cl.register(cluster[0], inst)
    wait_on_all(others(cluster, 0), f"{inst.instance_id} registered", shows(inst))
    before = {n.node_name: n.get_instance(inst.app, inst.instance_id)["leaseInfo"]["lastRenewalTimestamp"]
              for n in others(cluster, 0)}
    assert cl.heartbeat(cluster[0], inst) == 200
    wait_on_all(others(cluster, 0), f"lastRenewalTimestamp of {inst.instance_id} moved past {before}",
                lambda n: n.get_instance(inst.app, inst.instance_id)["leaseInfo"]["lastRenewalTimestamp"]
                > before[n.node_name])


def test_cancel_on_one_node_removes_the_instance_everywhere(cluster):
    inst = new_instance("cl-cancel")
    cl.register(cluster[0], inst)
    wait_on_all(cluster, f"{inst.instance_id} registered", shows(inst))
    cl.cancel(cluster[1], inst)
    wait_on_all(cluster, f"{inst.instance_id} gone", lacks(inst))


def test_status_override_on_one_node_is_visible_on_the_others(cluster):
    inst = new_instance("cl-override")
    cl.register(cluster[0], inst)
    wait_on_all(cluster, f"{inst.instance_id} registered", shows(inst))
    cl.set_status(cluster[2], inst, "OUT_OF_SERVICE")
    wait_on_all(cluster, f"{inst.instance_id} OUT_OF_SERVICE by override",
                shows(inst, "OUT_OF_SERVICE", override="OUT_OF_SERVICE"))


def test_status_override_removal_on_one_node_is_visible_on_the_others(cluster):
    inst = new_instance("cl-override-removed")
    cl.register(cluster[0], inst)
    cl.set_status(cluster[0], inst, "OUT_OF_SERVICE")
    wait_on_all(cluster, f"{inst.instance_id} OUT_OF_SERVICE", shows(inst, "OUT_OF_SERVICE", "OUT_OF_SERVICE"))
    cl.remove_status_override(cluster[1], inst, value="UP")
    wait_on_all(cluster, f"{inst.instance_id} UP again, no override", shows(inst, "UP", override="UNKNOWN"))


def test_metadata_update_on_one_node_is_visible_on_the_others(cluster):
    inst = new_instance("cl-metadata", metadata={"team": "cluster"})
    cl.register(cluster[0], inst)
    wait_on_all(cluster, f"{inst.instance_id} registered", shows(inst))
    cl.put_metadata(cluster[1], inst, version="2", team="changed")
    want = {"team": "changed", "version": "2"}
    wait_on_all(cluster, f"metadata of {inst.instance_id} == {want}",
                lambda n: n.get_instance(inst.app, inst.instance_id)["metadata"] == want)


def test_instance_heartbeating_to_one_node_stays_alive_on_every_node(cluster):
    kept = new_instance("cl-kept-alive", duration=SHORT_LEASE, renewal=1)
    control = new_instance("cl-not-renewed", duration=SHORT_LEASE, renewal=1)
    beats = Heartbeater(cluster[0], [kept], interval=0.5)
    # kept first: had its renewals not reached a node, it would expire there before the control
    cl.register(cluster[0], kept)
    beats.start()
    try:
        cl.register(cluster[0], control)
        wait_on_all(cluster, "both instances registered", lambda n: view(n).has(kept) and view(n).has(control))
        # the control's lease runs out unrenewed: once every node has evicted it, every node
        # has also seen the kept instance's registration lease run out, had it not been renewed
        wait_on_all(cluster, f"{control.instance_id} evicted (lease {SHORT_LEASE}s, not renewed)",
                    lacks(control), deadline=EXPIRY_DEADLINE)
        for node in cluster:
            assert view(node).status(kept) == "UP", f"{kept.instance_id} expired on {node.node_name}"
    finally:
        beats.stop()
        # not left to expire under the tests that follow (and no new failure if this one failed)
        cl.cancel(cluster[0], kept, must_exist=False)
    assert not beats.failures, f"heartbeats to {cluster[0].node_name} failed: {beats.failures[:5]}"


def test_status_names_the_other_nodes_as_replicas(cluster):
    for i, node in enumerate(cluster):
        peers = {cl.eureka_url(cluster.ports[j]) for j in range(len(cluster)) if j != i}
        wait_until(f"{node.node_name}: GET /eureka/status lists {sorted(peers)} as registered and available replicas",
                   lambda node=node, peers=peers: cl.status_replicas(node)
                   == {"registered": peers, "available": peers, "unavailable": set()},
                   cl.REPLICATION_DEADLINE)


# -- a node crashes, then comes back ---------------------------------------------------------
@pytest.fixture(scope="module")
def crashed(cluster):
    """Instances registered on every node (one with an override set on the victim), all
    replicated; then the victim (node c) is SIGKILLed and one more instance is registered on a
    survivor. Returns (victim index, instances)."""
    victim = 2
    insts = []
    for i, node in enumerate(cluster):
        inst = new_instance(f"cl-crash-{i}")
        cl.register(node, inst)
        insts.append(inst)
    cl.set_status(cluster[victim], insts[victim], "OUT_OF_SERVICE")
    wait_converged(cluster, "crash-test instances everywhere",
                   lambda v: all(v.has(i) for i in insts) and v.status(insts[victim]) == "OUT_OF_SERVICE")
    cluster[victim].proc.kill()
    late = new_instance("cl-after-crash")
    cl.register(cluster[0], late)
    insts.append(late)
    return victim, insts


def test_sigkill_of_a_node_loses_no_registration_on_the_survivors(cluster, crashed):
    victim, insts = crashed
    survivors = others(cluster, victim)
    # replication between the survivors still works (and time has passed since the kill)
    wait_on_all(survivors, f"{insts[-1].instance_id} registered after the crash", shows(insts[-1]))
    common = wait_converged(survivors, "the survivors agree", lambda v: all(v.has(i) for i in insts))
    assert common.status(insts[victim]) == "OUT_OF_SERVICE", common


def test_restarted_node_holds_the_whole_registry_before_its_first_read(cluster, crashed):
    victim, insts = crashed
    survivors = others(cluster, victim)
    wait_on_all(survivors, f"{insts[-1].instance_id} registered after the crash", shows(insts[-1]))
    before = wait_converged(survivors, "the survivors agree", lambda v: all(v.has(i) for i in insts))
    first = cl.restart_and_first_read(cluster[victim])
    missing = {k: v for k, v in before.instances.items() if first.instances.get(k) != v}
    assert not missing, (f"the first GET /eureka/apps/ of restarted {cluster[victim].node_name} lacks or "
                         f"differs in {missing}\nfirst read:\n{first}\nsurvivors:\n{before}")
    wait_converged(cluster, "all three agree again after the restart", lambda v: all(v.has(i) for i in insts))
