"""Namespaces in a mixed cluster: the real Spring Cloud Eureka server holds the default namespace.

Node a is the Java server, nodes b and c are Heureka; all three list each other (Eureka's own
peer protocol). Heureka replicates every namespace to its Heureka peers under
``/ns/{name}/eureka``, and to a Java peer only the default namespace (docs/compat.md row 51): a
Java server has no ``/ns/...`` paths. So a default-namespace write on a Heureka node reaches the
Java peer; a ``team-a`` write reaches the other Heureka node's ``team-a`` and appears in no
document of the Java peer; and the Heureka nodes' replication to the Java peer keeps working, with
no failure counted for it, however many ``team-a`` writes there are.
"""
from __future__ import annotations

from types import SimpleNamespace

import pytest

from support import cluster as cl
from support import wire
from support.cluster import JSON, JSON_BODY, new_instance, view, wait_on_all
from support.namespaces import Namespace

TEAM = "team-a"
ABSENCE_WINDOW = 3.0    # a Heureka node's replication batches go out within a second


@pytest.fixture(scope="module")
def mixed(cluster_factory):
    c = cluster_factory(["java", "heureka", "heureka"], label="jns")
    java, b, c_ = c[0], c[1], c[2]
    return SimpleNamespace(java=java, b=b, c=c_, heureka=[b, c_],
                           team_b=Namespace(b, TEAM), team_c=Namespace(c_, TEAM))


def ns_register(ns: Namespace, inst: cl.Instance) -> None:
    r = ns.call("POST", f"/apps/{inst.app}", inst.body(), JSON_BODY)
    assert r.status == 204, f"{ns}: register {inst.instance_id} -> {r.status}: {r.text[:300]}"


def ns_has(ns: Namespace, inst: cl.Instance) -> bool:
    return ns.view().has(inst)


def java_documents_mentioning(java, inst: cl.Instance) -> list[str]:
    """Every document of the Java node that could carry ``inst``, by what it holds: the full
    registry (JSON and XML), the delta, the application, the instance by app and by id, its VIP."""
    found = []
    for path, headers in (("/apps/", JSON), ("/apps/", {"Accept": "application/xml"}), ("/apps/delta", JSON),
                          (f"/apps/{inst.app}", JSON), (f"/vips/{inst.app.lower()}", JSON)):
        r = java.call("GET", path, headers=headers)
        assert r.status in (200, 404), f"{java.node_name}: GET /eureka{path} -> {r.status}: {r.text[:300]}"
        if r.status == 200 and inst.instance_id in r.text:
            found.append(f"GET /eureka{path}")
    for path in (f"/apps/{inst.app}/{wire.quote(inst.instance_id)}", f"/instances/{wire.quote(inst.instance_id)}"):
        r = java.call("GET", path, headers=JSON)
        if r.status != 404:
            found.append(f"GET /eureka{path} -> {r.status}")
    return found


def java_peer(node, java, namespace: str = "") -> dict:
    """``node``'s replication state for the Java peer, from its ``/status`` (JSON) in the
    namespace (default: the unprefixed one); {} when the namespace lists no such peer."""
    url = (Namespace(node, namespace).url("/status") if namespace else node.url("/status"))
    r = wire.request("GET", url, JSON)
    assert r.status == 200, f"{node.node_name}: GET {url} -> {r.status}: {r.text[:300]}"
    return next((p for p in r.json().get("peers", []) if f":{java.port}/" in p["url"]), {})


def test_a_default_namespace_registration_on_a_heureka_node_reaches_the_java_peer(mixed):
    inst = new_instance("jns-default")
    cl.register(mixed.b, inst)
    wait_on_all([mixed.java, mixed.c], f"{inst.instance_id} UP", lambda n: view(n).status(inst) == "UP")


def test_a_team_namespace_registration_reaches_the_other_heureka_node_and_not_the_java_peer(mixed):
    inst = new_instance("jns-team")
    ns_register(mixed.team_b, inst)
    cl.wait_on_all([mixed.c], f"{inst.instance_id} in {TEAM}", lambda n: ns_has(mixed.team_c, inst))
    # the default namespace of both Heureka nodes never holds it either
    assert not any(view(n).has(inst) for n in mixed.heureka)
    # a default-namespace write made after it reaches the Java peer: b has replicated to it since
    marker = new_instance("jns-marker")
    cl.register(mixed.b, marker)
    wait_on_all([mixed.java], f"{marker.instance_id} UP", lambda n: view(n).status(marker) == "UP")
    cl.stays_true(f"no document of {mixed.java.node_name} lists {inst.instance_id}",
                  lambda: not java_documents_mentioning(mixed.java, inst), ABSENCE_WINDOW)


def default_writes_reach_java(mixed, what: str) -> None:
    """A registration on each Heureka node's default namespace, once on the Java peer."""
    made = {n.node_name: new_instance(f"jns-{what}-{n.node_name}") for n in mixed.heureka}
    for n in mixed.heureka:
        cl.register(n, made[n.node_name])
    wait_on_all([mixed.java], f"the {what} default registrations UP",
                lambda n: all(view(n).status(i) == "UP" for i in made.values()))


def test_replication_to_the_java_peer_keeps_working_and_counts_no_failure_after_team_writes(mixed):
    # the failures counted before: the Heureka nodes were up before the Java node answered
    default_writes_reach_java(mixed, "before")
    before = {n.node_name: java_peer(n, mixed.java) for n in mixed.heureka}
    team = [new_instance("jns-team-busy") for _ in range(3)]
    for inst in team:
        ns_register(mixed.team_b, inst)
    ns_register(mixed.team_c, new_instance("jns-team-busy"))
    for inst in team[:2]:
        r = mixed.team_b.call("PUT", f"/apps/{inst.app}/{wire.quote(inst.instance_id)}"
                              f"?status=UP&lastDirtyTimestamp={inst.dirty}", headers=JSON)
        assert r.status == 200, f"heartbeat in {TEAM}: {r.status} {r.text[:200]}"
    r = mixed.team_b.call("DELETE", f"/apps/{team[2].app}/{wire.quote(team[2].instance_id)}", headers=JSON)
    assert r.status == 200, f"cancel in {TEAM}: {r.status} {r.text[:200]}"
    wait_on_all([mixed.c], f"{TEAM}'s writes replicated",
                lambda n: all(ns_has(mixed.team_c, i) for i in team[:2]) and not ns_has(mixed.team_c, team[2]))
    # later default-namespace writes from both Heureka nodes still reach the Java peer
    default_writes_reach_java(mixed, "later")
    for n in mixed.heureka:
        was, peer = before[n.node_name], java_peer(n, mixed.java)
        assert peer.get("up") is True and peer.get("failures") == was.get("failures") \
            and peer.get("lastError") == was.get("lastError"), \
            f"{n.node_name}'s default namespace counted a failure of the Java peer: before {was}, after {peer}"
        assert peer.get("tasksSent", 0) > was.get("tasksSent", 0), f"{n.node_name} sent the Java peer nothing: {peer}"
        team_peer = java_peer(n, mixed.java, TEAM)
        assert team_peer.get("failures", 0) == 0 and team_peer.get("tasksSent", 0) == 0, \
            f"{n.node_name}'s {TEAM} sent to or failed on the Java peer: {team_peer}"
