"""Basic auth on every node: replication still works, and a peer without credentials is refused.

Two nodes of one kind, each with spring.security.user.name/password, listing each other with
the credentials in the URL (``http://user:pass@host:port/eureka/``) as Spring Cloud's
documentation tells users to. For Java that is interop/java/eureka-server-secure: the reference
server with Spring Security's basic auth on every path and CSRF off for /eureka/**.

Outside that cluster: an open node (no auth) and an "intruder" node that lists the open node
and a secured node, the latter *without* credentials. What the intruder replicates reaches the
open node and never a secured one.
"""
from __future__ import annotations

import json

import pytest

from support import cluster as cl
from support.cluster import new_instance, view, wait_on_all

CREDS = ("peer", "s3cret-pw")
WRONG = ("peer", "not-the-password")


@pytest.fixture(scope="module")
def secured(cluster_factory, cluster_kind):
    return cluster_factory([cluster_kind] * 2, credentials=CREDS, label=f"{cluster_kind}-auth")


@pytest.fixture(scope="module")
def outsiders(cluster_factory, cluster_kind, secured):
    """(open node, intruder): the intruder lists the open node and secured[0] without credentials."""
    c = cluster_factory([cluster_kind] * 2, label=f"{cluster_kind}-outsider",
                        extra_peers={1: [cl.eureka_url(secured.ports[0])]})
    return c[0], c[1]


def shows(inst, status="UP"):
    return lambda n: view(n).status(inst) == status


def test_replication_works_with_basic_auth_on_every_node(secured):
    a, b = secured
    inst = new_instance("auth-replicated")
    cl.register(a, inst)
    wait_on_all([b], f"{inst.instance_id} replicated with credentials", shows(inst))
    cl.set_status(b, inst, "OUT_OF_SERVICE")
    wait_on_all([a], f"{inst.instance_id} OUT_OF_SERVICE replicated back", shows(inst, "OUT_OF_SERVICE"))
    cl.cancel(a, inst)
    wait_on_all([b], f"{inst.instance_id} cancel replicated", lambda n: not view(n).has(inst))


def _replication_requests(inst) -> list[tuple[str, str, str, dict]]:
    """What a peer sends: the batch, and the single-request form (replication header)."""
    batch = {"replicationList": [{"appName": inst.app, "id": inst.instance_id, "lastDirtyTimestamp": inst.dirty,
                                  "status": "UP", "instanceInfo": json.loads(inst.body())["instance"],
                                  "action": "Register"}]}
    return [
        ("POST", "/peerreplication/batch/", json.dumps(batch), dict(cl.JSON_BODY)),
        ("POST", f"/apps/{inst.app}", inst.body(), {**cl.JSON_BODY, "x-netflix-discovery-replication": "true"}),
    ]


@pytest.mark.parametrize("credentials", [None, WRONG], ids=["no-credentials", "wrong-password"])
def test_secured_nodes_refuse_replication_without_the_right_credentials(secured, credentials):
    inst = new_instance("auth-forged")
    for node in secured:
        for method, path, body, headers in _replication_requests(inst):
            if credentials:
                headers["Authorization"] = cl.basic_auth(credentials)
            r = node.call(method, path, body, headers, auth=False)
            assert r.status == 401, f"{node.node_name}: {method} {path} with {credentials} -> {r.status} {r.text[:200]}"
        r = node.call("GET", "/apps/", headers=cl.JSON, auth=False)
        assert r.status == 401, f"{node.node_name}: unauthenticated GET /eureka/apps/ -> {r.status}"
    for node in secured:
        assert not view(node).has(inst), f"{node.node_name} took a write without credentials"


def test_a_peer_without_credentials_is_refused(secured, outsiders):
    open_node, intruder = outsiders
    inst = new_instance("auth-from-intruder")
    cl.register(intruder, inst)
    # the intruder replicates: the open node gets it ...
    wait_on_all([open_node], f"{inst.instance_id} replicated by the intruder to the open node", shows(inst))
    # ... and the secured one, which the intruder lists without credentials, never does
    cl.stays_true(f"{inst.instance_id} absent from the secured nodes",
                  lambda: not any(view(n).has(inst) for n in secured), window=5)
