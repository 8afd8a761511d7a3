"""A cluster whose peer links fail: partitions, heals and a hung peer.

Three nodes of one kind; every directed peer link (node i's connection to node j) goes through
its own fault-injecting proxy (support/proxy.py), so the test decides which links work. Clients
(the test's plain HTTP) talk to the nodes directly and are never cut off.

Eureka is AP: through a partition both sides keep taking registrations and serving reads, and
the registries converge after the heal. Java Eureka converges through its retry queues (a
replication task is retried until it expires: a registration after the instance's renewal
interval, other writes after 30 s) and through heartbeats (a heartbeat the peer does not know
is answered 404 and the sender re-registers). Heureka adds anti-entropy: writes that no retry
and no heartbeat will carry are repaired within the anti-entropy interval (heureka_only test).
"""
from __future__ import annotations

import pytest

from support import cluster as cl
from support.cluster import Heartbeater, new_instance, view, wait_converged, wait_on_all

A, B, C = 0, 1, 2
MINORITY, MAJORITY = [A], [B, C]
HEAL_DEADLINE = cl.ANTI_ENTROPY_MS / 1000 + cl.HEAL_SLACK
# a request that waited for a hung peer would run into this; none is measured otherwise
CLIENT_TIMEOUT = 5.0


@pytest.fixture(scope="module")
def cluster(cluster_factory, cluster_kind):
    c = cluster_factory([cluster_kind] * 3, proxied=True)
    yield c
    c.heal()


@pytest.fixture(scope="module")
def heartbeaters():
    made: list[Heartbeater] = []
    yield made
    for h in made:
        h.stop()


def has_all(*insts):
    return lambda v: all(v.has(i) for i in insts)


@pytest.fixture(scope="module")
def partitioned(cluster, heartbeaters):
    """Node a cut off from b and c; then writes on both sides. Returns the instances."""
    doomed = new_instance("pt-cancelled-in-minority")
    flipped = new_instance("pt-overridden-in-majority")
    for inst in (doomed, flipped):
        cl.register(cluster[A], inst)
    wait_converged(cluster, "instances registered before the partition", has_all(doomed, flipped))

    cluster.partition(MINORITY, MAJORITY)
    # clients keep heartbeating to "their" node, as real ones do
    lonely = new_instance("pt-registered-in-minority", renewal=1)
    crowd = new_instance("pt-registered-in-majority", renewal=1)
    cl.register(cluster[A], lonely)
    cl.register(cluster[B], crowd)
    heartbeaters.append(Heartbeater(cluster[A], [lonely], interval=1).start())
    heartbeaters.append(Heartbeater(cluster[B], [crowd], interval=1).start())
    cl.cancel(cluster[A], doomed)
    cl.set_status(cluster[B], flipped, "OUT_OF_SERVICE")
    return {"lonely": lonely, "crowd": crowd, "doomed": doomed, "flipped": flipped}


def test_both_sides_of_a_partition_accept_registrations_and_serve_reads(cluster, partitioned):
    p = partitioned
    # the majority side replicates among itself
    wait_on_all([cluster[B], cluster[C]], "the majority side's writes",
                lambda n: view(n).status(p["crowd"]) == "UP" and view(n).status(p["flipped"]) == "OUT_OF_SERVICE")
    # the minority side serves what was written to it
    v = view(cluster[A])
    assert v.status(p["lonely"]) == "UP" and not v.has(p["doomed"]), v
    # and the partition is real: neither side has seen the other's writes
    assert not v.has(p["crowd"]) and v.status(p["flipped"]) == "UP", v
    for n in (cluster[B], cluster[C]):
        w = view(n)
        assert not w.has(p["lonely"]) and w.has(p["doomed"]), (n, w)


def test_after_the_partition_heals_every_node_holds_the_same_registry(cluster, partitioned):
    p = partitioned
    cluster.heal()
    common = wait_converged(
        cluster, "writes of both sides of the partition everywhere",
        lambda v: v.status(p["lonely"]) == "UP" and v.status(p["crowd"]) == "UP"
        and v.status(p["flipped"]) == "OUT_OF_SERVICE" and not v.has(p["doomed"]),
        deadline=HEAL_DEADLINE)
    assert common.instances[p["flipped"].key] == ("OUT_OF_SERVICE", "OUT_OF_SERVICE"), common


def test_black_holed_peer_does_not_break_client_requests(cluster, heartbeaters):
    cluster.black_hole(C)      # c's peers reach it through links that accept and never answer
    during = []
    try:
        for k in range(10):
            inst = new_instance(f"pt-during-black-hole-{k}")
            during.append(inst)
            r = cluster[A].call("POST", f"/apps/{inst.app}", inst.body(), cl.JSON_BODY, timeout=CLIENT_TIMEOUT)
            assert r.status == 204, r
            assert cl.heartbeat(cluster[A], inst, timeout=CLIENT_TIMEOUT) == 200
            for node in (cluster[A], cluster[B]):
                r = node.call("GET", "/apps/", headers=cl.JSON, timeout=CLIENT_TIMEOUT)
                assert r.status == 200, r
        cl.set_status(cluster[A], during[0], "OUT_OF_SERVICE")
        cl.cancel(cluster[A], during[1])
        # the hung peer does not hold up replication to the healthy one
        wait_on_all([cluster[B]], "writes of the black-hole period on the healthy peer",
                    lambda n: all(view(n).has(i) for i in during[2:]) and not view(n).has(during[1])
                    and view(n).status(during[0]) == "OUT_OF_SERVICE")
    finally:
        cluster.heal()
    heartbeaters.append(Heartbeater(cluster[A], during[2:], interval=1).start())
    wait_on_all(cluster, "the hung peer caught up after the heal",
                lambda n: all(view(n).has(i) for i in during[2:]) and not view(n).has(during[1])
                and view(n).status(during[0]) == "OUT_OF_SERVICE", deadline=HEAL_DEADLINE)


@pytest.mark.heureka_only(java="Java only retries a registration until the instance's renewal interval "
                               "(1 s here) and has no anti-entropy: without heartbeats it never converges")
def test_writes_missed_during_a_partition_are_repaired_without_heartbeats(cluster):
    gone = new_instance("pt-ae-cancelled")
    cl.register(cluster[B], gone)
    wait_on_all(cluster, f"{gone.instance_id} registered before the second partition", lambda n: view(n).has(gone))
    cluster.partition(MINORITY, MAJORITY)
    try:
        # registered on the minority side by a client that then goes quiet (no heartbeats);
        # renewalIntervalInSecs=1 makes a Java peer queue drop the registration after 1 s
        quiet = new_instance("pt-ae-quiet", renewal=1)
        cl.register(cluster[A], quiet)
        cl.cancel(cluster[C], gone)
        wait_on_all([cluster[B]], f"{gone.instance_id} cancelled on the majority side",
                    lambda n: not view(n).has(gone))
        # hold the partition well past those retries
        cl.stays_true(f"the partition hides {quiet.instance_id} from the majority side",
                      lambda: not view(cluster[B]).has(quiet) and view(cluster[A]).has(quiet), window=3)
    finally:
        cluster.heal()
    wait_converged(cluster, f"{quiet.instance_id} everywhere and {gone.instance_id} nowhere, "
                            f"within the anti-entropy interval ({cl.ANTI_ENTROPY_MS} ms) after the heal",
                   lambda v: v.status(quiet) == "UP" and not v.has(gone), deadline=HEAL_DEADLINE)
