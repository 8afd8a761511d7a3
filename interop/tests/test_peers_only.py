"""Replication only from peers: Heureka's default, where Eureka accepts it from anyone.

The peer endpoints (``/peerreplication/batch``, ``digest``, ``stamped``, ``copies``) and the
single-request form of replication (any write with ``x-netflix-discovery-replication: true``)
are accepted only from the node's peers: the addresses its peer URLs resolve to. Everything
here is on loopback, and on Linux every 127.x.y.z is: the nodes' peers are on 127.0.0.1, and a
forger sends from a socket bound to 127.0.0.2. It is refused 403 with a one-line reason, the
registry is kept, and the node logs a WARN naming 127.0.0.2. ``heureka.replication.peers-only=
false`` restores Eureka's behaviour. The Java peer's side is test_mixed_cluster.py.
"""
from __future__ import annotations

import http.client
import json

import pytest

from support import cluster as cl
from support.cluster import HOST, new_instance, view, wait_on_all
from support.procs import wait_until

FORGER = "127.0.0.2"


def forged(node, method: str, path: str, body: str | None = None, headers: dict | None = None,
           source: str = FORGER) -> tuple[int, str]:
    """``method /eureka{path}`` on ``node`` from a socket bound to ``source``."""
    conn = http.client.HTTPConnection(HOST, node.port, timeout=10, source_address=(source, 0))
    try:
        payload = body.encode() if body is not None else b"" if method in ("POST", "PUT") else None
        conn.request(method, f"/eureka{path}", body=payload, headers=dict(headers or {}))
        resp = conn.getresponse()
        return resp.status, resp.read().decode("utf-8", "replace")
    finally:
        conn.close()


def batch(inst, action: str, **fields) -> str:
    element = {"appName": inst.app, "id": inst.instance_id, "lastDirtyTimestamp": inst.dirty,
               "action": action, **fields}
    return json.dumps({"replicationList": [element]})


def replication_requests(inst) -> list[tuple[str, str, str, str | None, dict]]:
    """(what, method, path, body, headers): every way a peer replicates, aimed at ``inst``."""
    path = f"/apps/{inst.app}/{inst.instance_id}"
    replicated = {**cl.JSON, "x-netflix-discovery-replication": "true"}
    instance_info = json.loads(inst.body())["instance"]
    return [
        ("a cancel batch", "POST", "/peerreplication/batch/", batch(inst, "Cancel"), cl.JSON_BODY),
        ("a status batch", "POST", "/peerreplication/batch/",
         batch(inst, "StatusUpdate", status="OUT_OF_SERVICE"), cl.JSON_BODY),
        ("a register batch", "POST", "/peerreplication/batch/",
         batch(inst, "Register", status="DOWN", instanceInfo={**instance_info, "status": "DOWN"}), cl.JSON_BODY),
        ("the digest", "GET", "/peerreplication/digest", None, cl.JSON),
        ("a stamped batch", "POST", "/peerreplication/stamped", '{"replicationList":[]}', cl.JSON_BODY),
        ("a request for copies", "POST", "/peerreplication/copies", '{"replicationList":[]}', cl.JSON_BODY),
        ("a replicated cancel", "DELETE", path, None, replicated),
        ("a replicated override", "PUT", f"{path}/status?value=OUT_OF_SERVICE&lastDirtyTimestamp={inst.dirty}",
         None, replicated),
        ("a replicated override removal", "DELETE", f"{path}/status?value=UP", None, replicated),
        ("a replicated heartbeat", "PUT", f"{path}?status=DOWN&lastDirtyTimestamp={inst.dirty}", None, replicated),
        ("a replicated metadata change", "PUT", f"{path}/metadata?zone=forged", None, replicated),
        ("a replicated register", "POST", f"/apps/{inst.app}",
         json.dumps({"instance": {**instance_info, "status": "DOWN"}}), {**replicated, **cl.JSON_BODY}),
    ]


@pytest.fixture(scope="module")
def pair(cluster_factory):
    """Two Heureka nodes listing each other (both on 127.0.0.1), the default peers-only."""
    return cluster_factory(["heureka"] * 2, label="peers-only")


@pytest.fixture(scope="module")
def open_pair(cluster_factory):
    return cluster_factory(["heureka"] * 2, label="peers-open",
                           extra={"heureka.replication.peers-only": "false"})


def registered_everywhere(nodes, name: str):
    inst = new_instance(name)
    cl.register(nodes[0], inst)
    wait_on_all(nodes, f"{inst.instance_id} registered and replicated", lambda n: view(n).status(inst) == "UP")
    return inst


def test_a_forged_batch_from_a_non_peer_is_refused(pair):
    a, b = pair
    inst = registered_everywhere(pair, "forged-cancel")
    before = [view(a), view(b)]

    status, reason = forged(a, "POST", "/peerreplication/batch/", batch(inst, "Cancel"), cl.JSON_BODY)

    assert status == 403, f"{status} {reason}"
    assert reason == ("replication is accepted only from this server's peers, and 127.0.0.2 is not one "
                      "(heureka.replication.peers-only)")
    assert [view(a).instances, view(b).instances] == [v.instances for v in before]
    wait_until(f"{a.node_name} logs the refusal at WARN with the sender's address",
               lambda: any("WARN" in line and "127.0.0.2" in line and "peerreplication/batch" in line
                           for line in a.proc.log_text(200_000).splitlines()), 10)


def test_every_kind_of_forged_replication_is_refused_and_the_registry_kept(pair):
    a, b = pair
    inst = registered_everywhere(pair, "forged-all")
    before = [view(a).instances, view(b).instances]
    for node in pair:
        for what, method, path, body, headers in replication_requests(inst):
            status, reason = forged(node, method, path, body, headers)
            assert status == 403, f"{node.node_name}: {what} from {FORGER} -> {status} {reason[:200]}"
            assert "127.0.0.2 is not one" in reason, f"{what}: {reason}"
    assert [view(a).instances, view(b).instances] == before
    # a client's own write, without the header, is no replication: accepted from anywhere
    status, _ = forged(a, "PUT", f"/apps/{inst.app}/{inst.instance_id}?status=UP&lastDirtyTimestamp={inst.dirty}")
    assert status == 200


def test_a_heureka_peer_is_accepted(pair):
    a, b = pair
    inst = registered_everywhere(pair, "peer-accepted")
    cl.set_status(b, inst, "OUT_OF_SERVICE")
    wait_on_all([a], f"{inst.instance_id} OUT_OF_SERVICE replicated from b",
                lambda n: view(n).status(inst) == "OUT_OF_SERVICE")
    cl.cancel(a, inst)
    wait_on_all([b], f"{inst.instance_id} cancel replicated from a", lambda n: not view(n).has(inst))
    # the peers' own exchanges were never refused
    for node in pair:
        refused_peer = [line for line in node.proc.log_text(200_000).splitlines()
                        if "refused replication" in line and "sender=127.0.0.1 " in line]
        assert not refused_peer, f"{node.node_name} refused its peer:\n" + "\n".join(refused_peer)


def test_the_open_switch_accepts_replication_from_anyone_as_eureka_does(open_pair):
    a, b = open_pair
    inst = registered_everywhere(open_pair, "open-switch")
    status, text = forged(a, "POST", "/peerreplication/batch/", batch(inst, "Cancel"), cl.JSON_BODY)
    assert status == 200, f"{status} {text}"
    wait_on_all([a, b], f"{inst.instance_id} cancelled by a batch from {FORGER}", lambda n: not view(n).has(inst))
