"""A mixed cluster: the real Spring Cloud Eureka server and a Heureka node as peers of each other.

This is how a team migrates one node at a time. The Java node (node a) lists itself and the
Heureka node; the Heureka node (node b) lists itself and the Java node: replication runs in both
directions over Eureka's own peer protocol. The Java node runs first and is given a registry;
then the Heureka node joins and must hold that registry before its first read. A Spring Boot
app with the Eureka client starter (interop/java/spring-client) registers with each node and
only that node; each must see the other through its own DiscoveryClient.

``--cluster-kinds=java`` makes node b a second Java server: the same tests on an all-Java
cluster, a self-test of this module.
"""
from __future__ import annotations

from types import SimpleNamespace

import pytest

from support import cluster as cl
from support import procs
from support.cluster import new_instance, view, wait_on_all

DEADLINE = 60.0         # Spring clients fetch every second; slack for four JVMs on two cores
SHORT_LEASE = 3         # the control instance of the heartbeat test (the Spring app's own lease is 3 s too)


@pytest.fixture(scope="module")
def mixed(cluster_factory, client_factory, cluster_kind):
    c = cluster_factory(["java", cluster_kind], start=False, label=f"java+{cluster_kind}")
    java, joiner = c[0], c[1]
    java.start()
    seed_up = new_instance("mx-seed-up")
    seed_out = new_instance("mx-seed-out-of-service")
    cl.register(java, seed_up)
    cl.register(java, seed_out)
    cl.set_status(java, seed_out, "OUT_OF_SERVICE")
    on_java = client_factory("spring", "mx-spring-on-java", java, start=False)
    on_java.start()
    first = cl.start_and_first_read(joiner)
    on_joiner = client_factory("spring", "mx-spring-on-joiner", joiner)
    return SimpleNamespace(java=java, joiner=joiner, first=first, seeds=(seed_up, seed_out),
                           on_java=on_java, on_joiner=on_joiner, nodes=[java, joiner])


def spring_key(client: procs.SpringClient) -> tuple[str, str]:
    return (client.registry_app, client.instance_id)


def lists_up(client: procs.SpringClient):
    """Probe: the node's GET /eureka/apps/ lists the Spring app's instance as UP."""
    return lambda n: view(n).instances.get(spring_key(client), ("",))[0] == "UP"


def test_node_joining_a_running_java_node_holds_its_registry_at_its_first_read(mixed):
    seed_up, seed_out = mixed.seeds
    first = mixed.first
    assert first.instances.get(seed_up.key, (None,))[0] == "UP", f"first read of {mixed.joiner.node_name}:\n{first}"
    assert first.instances.get(seed_out.key) == ("OUT_OF_SERVICE", "OUT_OF_SERVICE"), \
        f"first read of {mixed.joiner.node_name}:\n{first}"


def test_spring_client_registered_on_the_java_node_is_seen_through_the_other_node(mixed):
    me, peer = mixed.on_java, mixed.on_joiner
    wait_on_all([mixed.joiner], f"{me.instance_id} UP", lists_up(me), deadline=DEADLINE)
    procs.wait_until(f"the DiscoveryClient of {peer.proc.name} sees {me.instance_id}",
                     lambda: me.instance_id in [i["instanceId"] for i in peer.instances_of(me.vip)],
                     DEADLINE, logs=[peer.proc, mixed.joiner.proc])


def test_spring_client_registered_on_the_other_node_is_seen_through_the_java_node(mixed):
    me, peer = mixed.on_joiner, mixed.on_java
    wait_on_all([mixed.java], f"{me.instance_id} UP", lists_up(me), deadline=DEADLINE)
    procs.wait_until(f"the DiscoveryClient of {peer.proc.name} sees {me.instance_id}",
                     lambda: me.instance_id in [i["instanceId"] for i in peer.instances_of(me.vip)],
                     DEADLINE, logs=[peer.proc, mixed.java.proc])


@pytest.mark.parametrize("origin", ["java", "joiner"])
def test_cancel_crosses_to_the_other_node(mixed, origin):
    here, there = (mixed.java, mixed.joiner) if origin == "java" else (mixed.joiner, mixed.java)
    inst = new_instance(f"mx-cancel-from-{origin}")
    cl.register(here, inst)
    wait_on_all([there], f"{inst.instance_id} registered", lambda n: view(n).status(inst) == "UP")
    cl.cancel(here, inst)
    wait_on_all([there], f"{inst.instance_id} cancelled", lambda n: not view(n).has(inst))


@pytest.mark.parametrize("origin", ["java", "joiner"])
def test_status_override_and_its_removal_cross_to_the_other_node(mixed, origin):
    here, there = (mixed.java, mixed.joiner) if origin == "java" else (mixed.joiner, mixed.java)
    inst = new_instance(f"mx-status-from-{origin}")
    cl.register(here, inst)
    wait_on_all([there], f"{inst.instance_id} registered", lambda n: view(n).status(inst) == "UP")
    cl.set_status(here, inst, "OUT_OF_SERVICE")
    wait_on_all([there], f"{inst.instance_id} OUT_OF_SERVICE",
                lambda n: view(n).instances.get(inst.key) == ("OUT_OF_SERVICE", "OUT_OF_SERVICE"))
    cl.remove_status_override(here, inst, value="UP")
    wait_on_all([there], f"{inst.instance_id} UP, override removed",
                lambda n: view(n).instances.get(inst.key) == ("UP", "UNKNOWN"))


def test_spring_client_heartbeating_to_one_node_stays_alive_on_the_other(mixed):
    # the Spring app renews every second with a 3 s lease, to its own node only; an unrenewed
    # control instance with the same lease shows that leases do run out on the other node
    for me, there in ((mixed.on_java, mixed.joiner), (mixed.on_joiner, mixed.java)):
        control = new_instance("mx-not-renewed", duration=SHORT_LEASE, renewal=1)
        cl.register(me.server, control)
        wait_on_all([there], f"{control.instance_id} registered", lambda n: view(n).has(control))
        wait_on_all([there], f"{control.instance_id} evicted", lambda n: not view(n).has(control), deadline=DEADLINE)
        assert view(there).instances.get(spring_key(me), ("gone",))[0] == "UP", \
            f"{me.instance_id} (renewing only to {me.server.node_name}) expired on {there.node_name}"


def test_stopped_spring_client_disappears_from_both_nodes(mixed):
    # last: it stops the Java node's Spring app (SIGTERM: the client deregisters from its node)
    me, peer = mixed.on_java, mixed.on_joiner
    procs.wait_until(f"{peer.proc.name} sees {me.instance_id}",
                     lambda: me.instance_id in [i["instanceId"] for i in peer.instances_of(me.vip)],
                     DEADLINE, logs=[peer.proc])
    me.stop()
    wait_on_all(mixed.nodes, f"{me.instance_id} gone", lambda n: not view(n).instances.get(spring_key(me)),
                deadline=DEADLINE)
    procs.wait_until(f"the DiscoveryClient of {peer.proc.name} drops {me.instance_id}",
                     lambda: me.instance_id not in [i["instanceId"] for i in peer.instances_of(me.vip)],
                     DEADLINE, logs=[peer.proc])
