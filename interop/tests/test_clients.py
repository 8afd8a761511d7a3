"""The three real clients register, heartbeat and discover each other through the registry.

One registry (``--server``, default heureka) and one process of each client for the whole
module: a Spring Boot app (spring-cloud-starter-netflix-eureka-client, RestClient transport),
py-eureka-client 0.13.3 and eureka-js-client 4.5.0, all heartbeating/fetching every second.
"""
from __future__ import annotations

import pytest

from support.procs import HOST, wait_until

DEADLINE = 40.0     # generous bound for anything that takes a couple of client cycles


@pytest.fixture(scope="module")
def clients(registry, client_factory):
    from support import procs
    spring = client_factory("spring", "spring-interop", registry, metadata={"lang": "java"}, start=False)
    python = client_factory("python", "py-interop", registry, metadata={"team": "interop", "lang": "python"},
                            start=False)
    js = client_factory("js", "js-interop", registry, metadata={"team": "interop", "lang": "js"}, start=False)
    procs.start_all([spring, python, js])
    return {"spring": spring, "python": python, "js": js}


def registered(registry, client):
    """The client's instance as listed by GET /eureka/apps (JSON), or None."""
    for inst in registry.find_instances(client.registry_app):
        if inst.get("instanceId") == client.instance_id:
            return inst
    return None


CLIENT_KINDS = ["spring", "python", "js"]


@pytest.mark.parametrize("kind", CLIENT_KINDS)
def test_client_registers_with_name_status_port_and_metadata(registry, clients, kind):
    c = clients[kind]
    inst = wait_until(f"{kind} client {c.instance_id} listed in GET /eureka/apps",
                      lambda: registered(registry, c), DEADLINE, logs=[c.proc, registry.proc])
    assert inst["app"] == c.registry_app
    assert inst["hostName"] == HOST
    assert inst["ipAddr"] == HOST
    assert inst["status"] == "UP"
    assert inst["port"] == {"$": c.port, "@enabled": "true"}
    assert inst["vipAddress"] == c.vip
    assert inst["metadata"] == c.expected_metadata
    # and the single-instance read agrees
    one = registry.get_instance(c.registry_app, c.instance_id)
    assert one is not None and one["instanceId"] == c.instance_id and one["status"] == "UP"


@pytest.mark.parametrize("kind", CLIENT_KINDS)
def test_client_heartbeats_renew_the_lease_without_reregistering(registry, clients, kind):
    c = clients[kind]
    first = wait_until(f"{kind} instance readable", lambda: registry.get_instance(c.registry_app, c.instance_id),
                       DEADLINE, logs=[c.proc, registry.proc])
    lease0 = first["leaseInfo"]
    seen = [lease0["lastRenewalTimestamp"]]

    def renewed_twice():
        inst = registry.get_instance(c.registry_app, c.instance_id)
        assert inst is not None, "instance disappeared from the registry"
        ts = inst["leaseInfo"]["lastRenewalTimestamp"]
        if ts != seen[-1]:
            seen.append(ts)
        return len(seen) >= 3 and inst
    inst = wait_until(f"{kind}: leaseInfo.lastRenewalTimestamp advances twice (seen {seen})", renewed_twice,
                      DEADLINE, logs=[c.proc, registry.proc])
    assert seen == sorted(seen), f"lastRenewalTimestamp went backwards: {seen}"
    assert inst["status"] == "UP"
    # heartbeats are renewals: a 404 on heartbeat would make the client re-register,
    # which resets registrationTimestamp
    assert inst["leaseInfo"]["registrationTimestamp"] == lease0["registrationTimestamp"], \
        "registrationTimestamp changed: the client re-registered instead of renewing"


def test_spring_discovery_client_sees_python_and_js_instances(clients):
    spring, python, js = clients["spring"], clients["python"], clients["js"]
    for other in (python, js):
        def found():
            got = spring.instances_of(other.vip)
            return got if len(got) == 1 else None
        got = wait_until(f"Spring DiscoveryClient.getInstances({other.vip!r}) returns the {other.kind} instance",
                         found, DEADLINE, logs=[spring.proc, other.proc])[0]
        assert got["instanceId"] == other.instance_id
        assert got["serviceId"] == other.registry_app
        assert got["host"] == HOST
        assert got["port"] == other.port
        assert got["secure"] is False
        assert got["uri"] == f"http://{HOST}:{other.port}"
        assert got["metadata"] == other.expected_metadata
    services = wait_until("Spring DiscoveryClient.getServices() lists all three apps",
                          lambda: (lambda s: s if {"spring-interop", "py-interop", "js-interop"} <= set(s) else None)(
                              spring.services()), DEADLINE, logs=[spring.proc])
    assert {"spring-interop", "py-interop", "js-interop"} <= set(services)


def test_python_client_discovers_spring_and_js_instances(clients):
    spring, python, js = clients["spring"], clients["python"], clients["js"]
    for other in (spring, js):
        def found():
            apps = python.discovered()
            insts = [i for i in apps.get(other.registry_app, []) if i["instanceId"] == other.instance_id]
            return insts[0] if insts else None
        inst = wait_until(f"py-eureka-client's applications contain {other.registry_app}/{other.instance_id}",
                          found, DEADLINE, logs=[python.proc, other.proc])
        assert inst["hostName"] == HOST
        assert inst["ipAddr"] == HOST
        assert inst["port"] == other.port and inst["portEnabled"] is True
        assert inst["status"] == "UP"
        assert inst["vipAddress"] == other.vip
        assert inst["metadata"] == other.expected_metadata
        # get_application() finds it too
        assert other.instance_id in [i["instanceId"] for i in python.lookup(other.registry_app)]
    # walk_nodes/do_service: the Python client calls the JS app and the Spring app at the
    # host:port it found in the registry
    r = wait_until("py-eureka-client do_service(JS-INTEROP, /whoami) reaches the JS app",
                   lambda: python.walk(js.registry_app, "/whoami"), DEADLINE, logs=[python.proc])
    assert r["response"]["instanceId"] == js.instance_id
    r = wait_until("py-eureka-client do_service(SPRING-INTEROP, /services) reaches the Spring app",
                   lambda: python.walk(spring.registry_app, "/services"), DEADLINE, logs=[python.proc])
    assert "py-interop" in r["response"], r   # what Spring's DiscoveryClient.getServices() returned


def test_js_client_discovers_spring_and_python_instances(clients):
    spring, python, js = clients["spring"], clients["python"], clients["js"]
    for other in (spring, python):
        def found():
            insts = [i for i in js.lookup(other.registry_app) if i.get("instanceId") == other.instance_id]
            return insts[0] if insts else None
        inst = wait_until(f"eureka-js-client getInstancesByAppId({other.registry_app!r}) returns {other.instance_id}",
                          found, DEADLINE, logs=[js.proc, other.proc])
        assert inst["app"] == other.registry_app
        assert inst["hostName"] == HOST
        assert inst["ipAddr"] == HOST
        assert inst["port"] == {"$": other.port, "@enabled": "true"}
        assert inst["status"] == "UP"
        assert inst["metadata"] == other.expected_metadata
        by_vip = js.lookup_vip(other.vip)
        assert other.instance_id in [i.get("instanceId") for i in by_vip], \
            f"getInstancesByVipAddress({other.vip!r}) = {by_vip}"


# Runs last in this module: it takes the JS instance out of service and brings it back.
def test_out_of_service_override_reaches_all_clients_and_can_be_removed(registry, clients):
    """An operator's OUT_OF_SERVICE override (PUT .../status) hides the JS instance from the
    Spring and JS clients (they keep UP instances only) and shows up as OUT_OF_SERVICE in the
    Python client's registry copy, despite the JS client's UP heartbeats. Removing the override
    (DELETE .../status) makes the next heartbeat 404, the JS client re-registers and is UP again."""
    from support import wire
    spring, python, js = clients["spring"], clients["python"], clients["js"]
    logs = [spring.proc, python.proc, js.proc, registry.proc]
    wait_until("Spring sees the JS instance before the override",
               lambda: [i["instanceId"] for i in spring.instances_of(js.vip)] == [js.instance_id], DEADLINE, logs=logs)
    inst_url = registry.url(f"/apps/{js.registry_app}/{wire.quote(js.instance_id)}")
    r = wire.request("PUT", inst_url + "/status?value=OUT_OF_SERVICE", {"Content-Type": "application/json"})
    assert r.status == 200, f"status override -> {r.status} {r.text}"
    try:
        wait_until("Spring DiscoveryClient no longer returns the OUT_OF_SERVICE JS instance",
                   lambda: spring.instances_of(js.vip) == [], DEADLINE, logs=logs)
        wait_until("py-eureka-client's registry copy shows the JS instance OUT_OF_SERVICE",
                   lambda: [i["status"] for i in python.lookup(js.registry_app)] == ["OUT_OF_SERVICE"],
                   DEADLINE, logs=logs)
        wait_until("eureka-js-client's own cache drops its OUT_OF_SERVICE instance",
                   lambda: js.lookup(js.registry_app) == [], DEADLINE, logs=logs)
        # the JS client keeps heartbeating UP; the override must stick
        inst = registry.get_instance(js.registry_app, js.instance_id)
        assert inst["status"] == "OUT_OF_SERVICE" and inst["overriddenStatus"] == "OUT_OF_SERVICE", inst
    finally:
        r = wire.request("DELETE", inst_url + "/status", {"Content-Type": "application/json"})
    assert r.status == 200, f"delete status override -> {r.status} {r.text}"
    wait_until("JS instance UP again (its heartbeat got 404 and it re-registered)",
               lambda: (registry.get_instance(js.registry_app, js.instance_id) or {}).get("status") == "UP",
               DEADLINE, logs=logs)
    wait_until("Spring sees the JS instance again",
               lambda: [i["instanceId"] for i in spring.instances_of(js.vip)] == [js.instance_id], DEADLINE, logs=logs)
