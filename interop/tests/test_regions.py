"""Eureka remote regions (issue 34) with real processes: a registry that also serves the
instances of other regions' registries, fetched in the background (docs/regions.md).

Regions of the module: ``us-west`` is a Heureka server, ``eu-central`` the real Spring Cloud
Eureka server; the local region (``us-east-1``) is the registry under test (``--server``,
default Heureka), configured with Spring's keys
(``eureka.server.remote-region-urls-with-name.<region>``, a fetch every second). Instances are
registered with a raw POST (the body a Java client sends) and a lease that outlives the module;
every server keeps its deltas for 15 minutes, so nothing ages out of a delta while the module runs.

* Real clients, each through its own view: a Spring Boot app with
  ``eureka.client.fetch-remote-regions-registry`` (its ``DiscoveryClient``) and py-eureka-client
  with ``remote_regions`` (its ``applications``) discover the regions' instances, and follow an
  instance registered, taken OUT_OF_SERVICE and cancelled in a third region (``ap-east``, a
  Heureka server of theirs), the Spring client without a delta whose hashcode disagrees with its
  copy. Their registry has transparent fallback off, so a client that does not ask for the
  regions would not see them.
* A whitelist (``remote-region-app-whitelist.us-west=APPA``) limits what is served from us-west.
* Reads asking for a region never fetched are refused (403), as Java refuses them.
* Differential: the same region setup on the Java server and on Heureka, after changes in the
  regions (an override, cancels): ``/apps/delta?regions=`` compared field by field (JSON and
  XML) as test_differential compares documents; ``/apps?regions=`` in any order, with an unknown
  region, ``/apps`` without regions (transparent fallback: every region) and a VIP read hold the
  same instances with the same statuses and ``apps__hashcode``; single reads fall back to the
  same region instance; region deltas hash like the full fetch of the same regions, and
  Heureka's delta without regions like its full fetch (on purpose unlike Java's, compat row 11).
* Heureka only: a region fetcher (by its User-Agent) is served the local region only, and two
  Heureka regions fetching each other hold each other's own instances only; the Java server
  behind basic auth as a region, its password in the URL and nowhere shown; ``GET
  /eureka/regions`` and the ``heureka_region_*`` series; a killed region is served while ``stale``, then ``dropped`` after
  ``heureka.regions.stale-after`` (events ``region-stale``, ``region-dropped``, DELETED in the
  delta), and served again once it answers (``region-ready``); ``heureka regions`` (skipped by a
  binary without that subcommand).

Every wait is a bounded poll.
"""
from __future__ import annotations

import http.client
import json
import os
import subprocess
import threading
import time
from dataclasses import dataclass, field
from typing import Optional

import pytest

from support import cluster as cl
from support import compare, procs, wire
from support.procs import HOST, wait_until

LOCAL, WEST, EU = "us-east-1", "us-west", "eu-central"
BOTH = f"{WEST},{EU}"
FETCH_INTERVAL_S = 1
RETENTION_MS = 15 * 60 * 1000
# A region's first fetch, a client's start and first fetches; JVMs on a shared 2-core machine.
READY_DEADLINE = 90.0
# A change in a region reaching the local registry (a fetch every second) and a client (every second).
FOLLOW_DEADLINE = 30.0
STALE_AFTER_S = 6
JSON = {"Accept": "application/json"}
FORMATS = {"json": {"Accept": "application/json", "Accept-Encoding": "gzip"},
           "xml": {"Accept-Encoding": "gzip"}}      # no Accept at all, like py-eureka-client

# Every server of the module keeps its recently changed items long enough for the module.
KEEP_DELTAS = {"eureka.server.retention-time-in-m-s-in-delta-queue": str(RETENTION_MS)}


# ---------------------------------------------------------------------------------------
# Instances and reads
# ---------------------------------------------------------------------------------------
def register(server: procs.RegistryServer, inst: cl.Instance) -> None:
    r = wire.request("POST", server.url(f"/apps/{inst.app}"), cl.JSON_BODY, inst.body())
    assert r.status == 204, f"{server.proc.name}: register {inst.instance_id} -> {r.status}: {r.text[:300]}"


def cancel(server: procs.RegistryServer, inst: cl.Instance) -> None:
    r = wire.request("DELETE", server.url(f"/apps/{inst.app}/{wire.quote(inst.instance_id)}"), JSON)
    assert r.status == 200, f"{server.proc.name}: cancel {inst.instance_id} -> {r.status}: {r.text[:300]}"


def set_status(server: procs.RegistryServer, inst: cl.Instance, value: str) -> None:
    r = wire.request("PUT", server.url(f"/apps/{inst.app}/{wire.quote(inst.instance_id)}/status"
                                       f"?value={value}&lastDirtyTimestamp={inst.dirty}"), JSON)
    assert r.status == 200, f"{server.proc.name}: status {value} on {inst.instance_id} -> {r.status}: {r.text[:300]}"


def get(server: procs.RegistryServer, path: str, headers: Optional[dict] = None) -> wire.Response:
    return wire.get(server.url(path), headers=dict(JSON if headers is None else headers), timeout=10)


def get_doc(server: procs.RegistryServer, path: str) -> dict:
    r = get(server, path)
    assert r.status == 200, f"{server.proc.name}: GET /eureka{path} -> {r.status}: {r.text[:300]}"
    return r.json()


def listed(node, key: str) -> list:
    """A JSON document's list (Eureka writes a single item as an object)."""
    items = node.get(key) or []
    return [items] if isinstance(items, dict) else list(items)


def ids_by_app(doc: dict) -> dict[str, set[str]]:
    """{APP: {instanceId}} of an ``applications`` document (JSON)."""
    return {a["name"]: {i["instanceId"] for i in listed(a, "instance")}
            for a in listed(doc["applications"], "application")}


def instances_of(doc: dict) -> dict[str, dict]:
    """{instanceId: instance} of an ``applications`` document (JSON)."""
    return {i["instanceId"]: i for a in listed(doc["applications"], "application") for i in listed(a, "instance")}


def flatten(by_app: dict[str, set[str]]) -> set[tuple[str, str]]:
    return {(app, iid) for app, ids in by_app.items() for iid in ids}


def expect(*insts: cl.Instance) -> set[tuple[str, str]]:
    return {inst.key for inst in insts}


def serves(server: procs.RegistryServer, path: str, wanted: set, unwanted: set = frozenset()):
    """A probe: ``path`` answers 200 with every (APP, id) of ``wanted`` and none of ``unwanted``."""
    def probe():
        r = get(server, path)
        if r.status != 200:
            return None
        got = flatten(ids_by_app(r.json()))
        return got if wanted <= got and not (unwanted & got) else None
    return probe


def start_as(server: procs.RegistryServer, name: str) -> procs.RegistryServer:
    """Start a server made with ``start=False`` under ``name`` (its log file is named after it)."""
    server.proc.name = name
    return server.start()


def region_settings(kind: str, regions: dict, fallback: bool = True, **extra: str) -> dict:
    """Spring's keys for a local registry of ``kind`` fetching ``regions`` ({name: service URL}),
    in that order, every FETCH_INTERVAL_S."""
    s = {f"eureka.server.remote-region-urls-with-name.{name}": url for name, url in regions.items()}
    s["eureka.server.remote-region-registry-fetch-interval"] = str(FETCH_INTERVAL_S)
    s.update(KEEP_DELTAS)
    if not fallback:
        s["eureka.server.disable-transparent-fallback-to-other-region"] = "true"
    if kind == "java":
        # Java's response cache is invalidated by local changes only: a region's changes would
        # show up only when an entry ages out (180 s by default)
        s["eureka.server.response-cache-auto-expiration-in-seconds"] = "1"
    s.update(extra)
    return s


# ---------------------------------------------------------------------------------------
# The two remote regions, shared by the module
# ---------------------------------------------------------------------------------------
@dataclass
class Remotes:
    west: procs.RegistryServer = None          # us-west: Heureka
    eu: procs.RegistryServer = None            # eu-central: the Java server
    appa: cl.Instance = None
    appb: cl.Instance = None
    west_shared: cl.Instance = None
    eu_app: cl.Instance = None
    eu_shared: cl.Instance = None
    # changed by the differential's scenario only
    west_overridden: cl.Instance = None
    west_cancelled: cl.Instance = None
    eu_cancelled: cl.Instance = None
    changed: bool = False

    @property
    def by_region(self) -> dict:
        return {WEST: self.west, EU: self.eu}

    @property
    def urls(self) -> dict:
        return {name: server.service_url for name, server in self.by_region.items()}

    def west_instances(self) -> list[cl.Instance]:
        gone = [self.west_cancelled] if self.changed else []
        return [i for i in (self.appa, self.appb, self.west_shared, self.west_overridden, self.west_cancelled)
                if i not in gone]

    def eu_instances(self) -> list[cl.Instance]:
        gone = [self.eu_cancelled] if self.changed else []
        return [i for i in (self.eu_app, self.eu_shared, self.eu_cancelled) if i not in gone]


@pytest.fixture(scope="module")
def remotes(server_factory) -> Remotes:
    r = Remotes()
    r.west = server_factory("heureka", settings=dict(KEEP_DELTAS), start=False)
    r.eu = server_factory("java", settings=dict(KEEP_DELTAS), start=False)
    r.west.proc.name, r.eu.proc.name = "region-us-west", "region-eu-central"
    procs.start_all([r.west, r.eu])
    r.appa, r.appb, r.west_shared = cl.new_instance("APPA"), cl.new_instance("APPB"), cl.new_instance("SHARED")
    r.west_overridden, r.west_cancelled = cl.new_instance("WEST-CHANGING"), cl.new_instance("WEST-CHANGING")
    r.eu_app, r.eu_shared, r.eu_cancelled = cl.new_instance("EU-APP"), cl.new_instance("SHARED"), cl.new_instance("EU-GOING")
    for inst in r.west_instances():
        register(r.west, inst)
    for inst in r.eu_instances():
        register(r.eu, inst)
    return r


def remote_keys(r: Remotes) -> set:
    return expect(*r.west_instances(), *r.eu_instances())


# ---------------------------------------------------------------------------------------
# Real clients through their own views
# ---------------------------------------------------------------------------------------
class RegionsPythonClient(procs.PythonClient):
    """interop/clients/py_client.py with py-eureka-client's ``remote_regions``."""

    def __init__(self, *args, remote_regions: list[str], **kw):
        self.remote_regions = list(remote_regions)
        super().__init__(*args, **kw)

    def argv(self) -> list[str]:
        return super().argv() + ["--remote-regions", ",".join(self.remote_regions)]


EAST = "ap-east"           # a third region, the clients' only: the one they see change
CLIENT_REGIONS = f"{WEST},{EU},{EAST}"


@dataclass
class ClientsSetup:
    local: procs.RegistryServer
    east: procs.RegistryServer
    mine: cl.Instance          # an instance of the local region


@pytest.fixture(scope="module")
def clients_local(server_factory, server_kind, remotes) -> ClientsSetup:
    """The local registry the clients use: us-west, eu-central and ap-east (a Heureka server of
    its own, so that the changes made there are no part of the differential's history);
    transparent fallback off."""
    east = start_as(server_factory("heureka", settings=dict(KEEP_DELTAS), start=False), f"region-{EAST}")
    local = server_factory(server_kind, start=False, settings=region_settings(
        server_kind, {**remotes.urls, EAST: east.service_url}, fallback=False))
    start_as(local, f"local-{server_kind}-no-fallback")
    mine = cl.new_instance("SHARED")
    register(local, mine)
    wait_until(f"{local.proc.name} serves both regions' instances", serves(local, f"/apps/?regions={CLIENT_REGIONS}",
               remote_keys(remotes)), READY_DEADLINE, logs=[local.proc])
    return ClientsSetup(local, east, mine)


@pytest.fixture(scope="module")
def spring_client(clients_local, client_factory) -> procs.SpringClient:
    """A Spring Boot app fetching the three regions; its DiscoveryClient logs at DEBUG, where
    it says when a delta's hashcode disagreed with its copy (and it fetched in full)."""
    # Eureka's client refuses to start unless each region it fetches names its zones (they map
    # AWS instances to regions; the instances here are MyOwn and count as the client's region)
    return client_factory("spring", "regions-spring", clients_local.local, settings={
        "eureka.client.fetch-remote-regions-registry": CLIENT_REGIONS,
        **{f"eureka.client.availability-zones.{r}": f"{r}-1a" for r in CLIENT_REGIONS.split(",")},
        "logging.level.com.netflix.discovery.DiscoveryClient": "DEBUG"})


@pytest.fixture(scope="module")
def py_client(clients_local, tracker, log_dir) -> RegionsPythonClient:
    py = tracker.add(RegionsPythonClient("regions-py", clients_local.local, log_dir,
                                         remote_regions=CLIENT_REGIONS.split(",")))
    py.start()
    return py


def spring_sees(spring: procs.SpringClient, vips: list[str]) -> dict[str, set[str]]:
    return {vip: {s["instanceId"] for s in spring.instances_of(vip)} for vip in vips}


def py_sees(py: RegionsPythonClient, apps: list[str]) -> dict[str, dict[str, str]]:
    """{APP: {instanceId: status}} of py-eureka-client's applications."""
    held = py.discovered()
    return {app: {i["instanceId"]: i["status"] for i in held.get(app, [])} for app in apps}


HASH_MISMATCH = "The Reconcile hashcodes do not match"


def test_without_fallback_a_read_without_regions_serves_the_local_region_only(clients_local, remotes):
    """What makes the client tests mean something: their registry hands other regions'
    instances only to a client that asks for the regions."""
    assert ids_by_app(get_doc(clients_local.local, "/apps/")) == {"SHARED": {clients_local.mine.instance_id}}


def test_spring_client_fetching_remote_regions_discovers_their_instances(clients_local, remotes, spring_client):
    want = {"appa": {remotes.appa.instance_id}, "appb": {remotes.appb.instance_id},
            "eu-app": {remotes.eu_app.instance_id},
            "shared": {clients_local.mine.instance_id, remotes.west_shared.instance_id,
                       remotes.eu_shared.instance_id}}
    wait_until(f"{spring_client.proc.name}'s DiscoveryClient sees the instances of {BOTH} and its own region",
               lambda: spring_sees(spring_client, list(want)) == want, FOLLOW_DEADLINE,
               logs=[spring_client.proc, clients_local.local.proc])


def test_py_eureka_client_with_remote_regions_discovers_their_instances(clients_local, remotes, py_client):
    want = {"APPA": {remotes.appa.instance_id}, "APPB": {remotes.appb.instance_id},
            "EU-APP": {remotes.eu_app.instance_id},
            "SHARED": {clients_local.mine.instance_id, remotes.west_shared.instance_id,
                       remotes.eu_shared.instance_id}}
    wait_until(f"{py_client.proc.name}'s applications hold the instances of {BOTH} and its own region",
               lambda: {app: set(ids) for app, ids in py_sees(py_client, list(want)).items()} == want,
               FOLLOW_DEADLINE, logs=[py_client.proc, clients_local.local.proc])


def test_spring_client_follows_a_regions_changes_through_deltas_that_match_its_copy(clients_local, spring_client):
    """An instance registered in ap-east, then taken OUT_OF_SERVICE there (Spring lists UP
    instances only): the client follows both on its delta fetches, each delta's hashcode
    agreeing with the copy it made (no full fetch to reconcile)."""
    late = cl.new_instance("EAST-LATE")
    register(clients_local.east, late)
    wait_until(f"{spring_client.proc.name} discovers {late.instance_id} of {EAST}",
               lambda: spring_sees(spring_client, ["east-late"]) == {"east-late": {late.instance_id}},
               FOLLOW_DEADLINE, logs=[spring_client.proc])
    set_status(clients_local.east, late, "OUT_OF_SERVICE")
    wait_until(f"{spring_client.proc.name} drops {late.instance_id}, OUT_OF_SERVICE in {EAST}",
               lambda: spring_sees(spring_client, ["east-late"]) == {"east-late": set()},
               FOLLOW_DEADLINE, logs=[spring_client.proc])
    log = spring_client.proc.log_text(max_chars=10**8)
    assert "Got delta update with apps hashcode" in log, "the client's DEBUG lines are missing: nothing to check"
    assert HASH_MISMATCH not in log, [line for line in log.splitlines() if HASH_MISMATCH in line][:5]


def test_py_eureka_client_follows_a_regions_changes(clients_local, py_client):
    """Registered, OUT_OF_SERVICE, cancelled in ap-east: py-eureka-client's copy follows."""
    late = cl.new_instance("EAST-PY")
    register(clients_local.east, late)
    for status in ("UP", "OUT_OF_SERVICE"):
        if status != "UP":
            set_status(clients_local.east, late, status)
        wait_until(f"{py_client.proc.name} holds {late.instance_id} {status}",
                   lambda: py_sees(py_client, [late.app]) == {late.app: {late.instance_id: status}},
                   FOLLOW_DEADLINE, logs=[py_client.proc])
    cancel(clients_local.east, late)
    wait_until(f"{py_client.proc.name} no longer holds {late.instance_id}",
               lambda: py_sees(py_client, [late.app]) == {late.app: {}}, FOLLOW_DEADLINE, logs=[py_client.proc])


# ---------------------------------------------------------------------------------------
# Whitelist, refusal before the first fetch
# ---------------------------------------------------------------------------------------
def test_a_whitelist_limits_the_apps_served_from_its_region(server_factory, server_kind, remotes):
    local = server_factory(server_kind, start=False, settings=region_settings(
        server_kind, remotes.urls, **{f"eureka.server.remote-region-app-whitelist.{WEST}": "APPA"}))
    start_as(local, f"local-{server_kind}-whitelist")
    eu_keys = expect(*remotes.eu_instances())
    wait_until(f"{local.proc.name} serves {EU}'s instances and APPA from {WEST}",
               serves(local, f"/apps/?regions={BOTH}", eu_keys | expect(remotes.appa)), READY_DEADLINE,
               logs=[local.proc])
    served = flatten(ids_by_app(get_doc(local, f"/apps/?regions={BOTH}")))
    west_served = served & expect(*remotes.west_instances())
    assert west_served == expect(remotes.appa), f"served from {WEST} with whitelist APPA: {sorted(west_served)}"
    assert eu_keys <= served, f"{EU} has no whitelist: every app of it is served; served {sorted(served)}"


def test_reads_asking_for_a_region_never_fetched_are_refused(server_factory, server_kind, remotes):
    """Java's shouldAllowAccess: before every configured region's first successful fetch, a
    read that asks for regions answers 403; a read without regions is served."""
    nowhere = cl.eureka_url(procs.free_port())      # nothing ever listens there
    local = server_factory(server_kind, start=False, settings=region_settings(
        server_kind, {WEST: remotes.west.service_url, "ap-nowhere": nowhere},
        **{"eureka.server.remote-region-connect-timeout-ms": "200"}))
    start_as(local, f"local-{server_kind}-unreachable-region")
    # the reachable region's first fetch is done, so only the unreachable one holds the reads up
    wait_until(f"{local.proc.name} falls back to {WEST}'s APPA", lambda: get(local, "/apps/APPA").status == 200,
               READY_DEADLINE, logs=[local.proc])
    for path in (f"/apps/?regions={WEST}", f"/apps/delta?regions={WEST}"):
        r = get(local, path)
        assert r.status == 403, f"GET /eureka{path} before ap-nowhere's first fetch -> {r.status}: {r.text[:200]}"
    assert get(local, "/apps/").status == 200


# ---------------------------------------------------------------------------------------
# Differential: the Java server and Heureka with the same regions
# ---------------------------------------------------------------------------------------
@dataclass
class Pair:
    java: procs.RegistryServer
    heureka: procs.RegistryServer                  # the Java server again with --diff-against=java
    local: list = field(default_factory=list)     # instances registered on both

    def require_heureka(self) -> None:
        if self.heureka.kind != "heureka":
            pytest.skip("Heureka's own behaviour (--diff-against=java)")

    @property
    def servers(self):
        return {"java": self.java, "heureka": self.heureka}


@pytest.fixture(scope="module")
def pair(request, server_factory, remotes) -> Pair:
    """Java and Heureka, each fetching us-west and eu-central, with the same local instances;
    then, in the regions: an override, and a cancel in each; both have followed every change.
    ``--diff-against=java``: a second Java server in Heureka's place (a self-test)."""
    other = request.config.getoption("--diff-against")
    java = server_factory("java", settings=region_settings("java", remotes.urls), start=False)
    heureka = server_factory(other, settings=region_settings(other, remotes.urls), start=False)
    java.proc.name, heureka.proc.name = "local-java", f"local-{other}"
    procs.start_all([java, heureka])
    p = Pair(java, heureka, [cl.new_instance("LOCAL-APP"), cl.new_instance("SHARED")])
    for server in (java, heureka):
        for inst in p.local:
            register(server, inst)
    everything = expect(*p.local) | remote_keys(remotes)
    for server in (java, heureka):
        wait_until(f"{server.proc.name} serves every region", serves(server, f"/apps/?regions={BOTH}", everything),
                   READY_DEADLINE, logs=[server.proc])
    if not remotes.changed:
        set_status(remotes.west, remotes.west_overridden, "OUT_OF_SERVICE")
        cancel(remotes.west, remotes.west_cancelled)
        cancel(remotes.eu, remotes.eu_cancelled)
        remotes.changed = True
    gone = expect(remotes.west_cancelled, remotes.eu_cancelled)
    for server in (java, heureka):
        for path in (f"/apps/?regions={BOTH}", "/apps/"):
            wait_until(f"{server.proc.name} follows the regions' changes on {path}",
                       lambda: serves(server, path, expect(*p.local) | remote_keys(remotes), gone)()
                       and status_of(server, path, remotes.west_overridden) == "OUT_OF_SERVICE",
                       FOLLOW_DEADLINE, logs=[server.proc])
        wait_until(f"{server.proc.name}'s region delta has the cancels",
                   lambda: gone <= flatten(ids_by_app(get_doc(server, f"/apps/delta?regions={BOTH}"))),
                   FOLLOW_DEADLINE, logs=[server.proc])
    return p


def status_of(server, path: str, inst: cl.Instance) -> Optional[str]:
    found = instances_of(get_doc(server, path)).get(inst.instance_id)
    return found["status"] if found else None


# Documents compared field by field (remote instances in them carry the actionType the region
# gave them in both servers' answers)
DELTA_DOCS = [
    (f"/apps/delta?regions={BOTH}", True),
    (f"/apps/delta?regions={EU}", True),
]
# Documents compared by their hash and their instances
FULL_DOCS = [
    f"/apps/?regions={BOTH}",
    f"/apps/?regions={EU},{WEST}",              # any order, the same document
    f"/apps/?regions={WEST}",
    f"/apps/?regions={WEST},ap-unknown",        # an unknown region is ignored
    "/apps/",                                    # transparent fallback: every region
    "/vips/shared",
]
# Single reads that fall back to a region
SINGLE_READS = [
    "/apps/EU-APP",                              # an app only a region has
    "/apps/APPA/{appa}",                         # its instance, found in the region
    "/instances/{eu_app}",
]


# Differences that remain on purpose, each with its reason; both are normalised away below (in
# both documents) rather than allowed by path, so that nothing else on those paths can hide.
#
# 1. An application left without instances by a region's delta (here EU-GOING, whose one
#    instance was cancelled in eu-central). Java applies the region's delta to its copy and
#    keeps the emptied application in it, so its documents list {"name": "EU-GOING",
#    "instance": []} until its next full fetch of that region (which a matching hash never
#    asks for); Heureka leaves it out, as both servers leave out a local application whose last
#    instance went. No client counts an application without instances (the hash counts
#    instances by status).
# 2. leaseInfo.evictionTimestamp of a DELETED item in a region delta. Java passes on the
#    region's own delta item (its evictionTimestamp is the cancel's time); Heureka computes
#    region deltas by diffing its views (contract) and sends the instance as it last held it
#    (0). Clients remove a DELETED instance by its id.
def without_empty_apps_json(node):
    if isinstance(node, wire.OrderedPairs):
        out = wire.OrderedPairs([(k, without_empty_apps_json(v)) for k, v in node])
        for idx, (k, v) in enumerate(out):
            if k == "application" and isinstance(v, list) and not isinstance(v, wire.OrderedPairs):
                out[idx] = (k, [a for a in v if not (isinstance(a, wire.OrderedPairs) and a.get("instance") == [])])
        if out.get("actionType") == "DELETED" and isinstance(out.get("leaseInfo"), wire.OrderedPairs):
            lease = out.get("leaseInfo")
            for idx, (k, _) in enumerate(lease):
                if k == "evictionTimestamp":
                    lease[idx] = (k, "<deleted: not compared>")
        return out
    if isinstance(node, list):
        return [without_empty_apps_json(x) for x in node]
    return node


def without_empty_apps_xml(node: compare.XNode) -> compare.XNode:
    kids = [without_empty_apps_xml(c) for c in node.children
            if not (c.tag == "application" and not any(g.tag == "instance" for g in c.children))]
    out = compare.XNode(node.tag, node.attrs, node.text, kids)
    if node.tag == "instance" and out.child_text("actionType") == "DELETED":
        for c in out.children:
            if c.tag == "leaseInfo":
                for g in c.children:
                    if g.tag == "evictionTimestamp":
                        g.text = "<deleted: not compared>"
    return out


def fetch_both(pair: Pair, path: str, headers: dict) -> dict:
    out = {}
    for kind, server in pair.servers.items():
        now = int(time.time() * 1000)
        out[kind] = (wire.get(server.url(path), headers=headers, timeout=10), now)
    return out


def dirty_timestamps(pair: Pair, remotes: Remotes) -> frozenset:
    insts = pair.local + remotes.west_instances() + remotes.eu_instances() + [remotes.west_cancelled,
                                                                             remotes.eu_cancelled]
    return frozenset(str(i.dirty) for i in insts)


def assert_document_matches_java(pair: Pair, remotes: Remotes, path: str, is_delta: bool, fmt: str) -> None:
    """Field by field, as test_differential compares documents (support/compare.py)."""
    path = resolve(path, remotes)
    got = fetch_both(pair, path, FORMATS[fmt])
    (r, r_at), (g, g_at) = got["java"], got["heureka"]
    assert r.status == 200, f"the Java server answered {r.status} to GET /eureka{path}: {r.text[:300]}"
    assert g.status == 200, f"Heureka answered {g.status} to GET /eureka{path}: {g.text[:300]}"
    dirty = dirty_timestamps(pair, remotes)
    ctx_r, ctx_g = compare.Context(r_at, dirty, is_delta), compare.Context(g_at, dirty, is_delta)
    if fmt == "json":
        a = without_empty_apps_json(compare.normalise_json(compare.parse_json(r.body), ctx_r))
        b = without_empty_apps_json(compare.normalise_json(compare.parse_json(g.body), ctx_g))
        diffs, a_text, b_text = compare.diff_json(a, b), compare.pretty_json(a), compare.pretty_json(b)
    else:
        a = without_empty_apps_xml(compare.normalise_xml(compare.parse_xml(r.body), ctx_r))
        b = without_empty_apps_xml(compare.normalise_xml(compare.parse_xml(g.body), ctx_g))
        diffs, a_text, b_text = compare.diff_xml(a, b), compare.pretty_xml(a), compare.pretty_xml(b)
    if diffs:
        pytest.fail(compare.report(f"GET /eureka{path} ({fmt})", diffs, a_text, b_text), pytrace=False)


def resolve(path: str, remotes: Remotes) -> str:
    return path.format(appa=wire.quote(remotes.appa.instance_id), eu_app=wire.quote(remotes.eu_app.instance_id))


@pytest.mark.no_process_logs       # the failure message carries both documents
@pytest.mark.parametrize("fmt", list(FORMATS))
@pytest.mark.parametrize("path,is_delta", DELTA_DOCS, ids=[p for p, _ in DELTA_DOCS])
def test_region_delta_matches_java(pair, remotes, path, is_delta, fmt):
    assert_document_matches_java(pair, remotes, path, is_delta, fmt)


def served_by_both(pair: Pair, path: str) -> dict:
    """{kind: (apps__hashcode, {APP: {id: status}})} of an applications document (JSON); an
    application without instances counts as absent (note 1 above)."""
    out = {}
    for kind, server in pair.servers.items():
        doc = get_doc(server, path)["applications"]
        apps = {a["name"]: {i["instanceId"]: i["status"] for i in listed(a, "instance")}
                for a in listed(doc, "application")}
        out[kind] = (doc["apps__hashcode"], {app: ids for app, ids in apps.items() if ids})
    return out


@pytest.mark.parametrize("path", FULL_DOCS)
def test_region_full_document_has_javas_instances_and_hash(pair, path):
    both = served_by_both(pair, path)
    assert both["heureka"] == both["java"], f"GET /eureka{path}: java {both['java']}\nheureka {both['heureka']}"


@pytest.mark.parametrize("path", SINGLE_READS)
def test_single_read_falls_back_to_the_region_like_java(pair, remotes, path):
    path = resolve(path, remotes)
    found = {}
    for kind, server in pair.servers.items():
        r = get(server, path)
        assert r.status == 200, f"{kind}: GET /eureka{path} -> {r.status}: {r.text[:300]}"
        doc = r.json()
        insts = [doc["instance"]] if "instance" in doc else listed(doc["application"], "instance")
        found[kind] = sorted((i["app"], i["instanceId"], i["status"]) for i in insts)
    assert found["heureka"] == found["java"], f"GET /eureka{path}: {found}"


@pytest.mark.parametrize("regions", [BOTH, WEST, EU])
def test_region_delta_hashes_like_the_full_fetch_of_the_same_regions(pair, regions):
    """What a client checks after applying a delta: its hash is the hash of the full document."""
    for kind, server in pair.servers.items():
        full = get_doc(server, f"/apps/?regions={regions}")["applications"]["apps__hashcode"]
        delta = get_doc(server, f"/apps/delta?regions={regions}")["applications"]["apps__hashcode"]
        assert delta == full, f"{kind}: delta?regions={regions} hash {delta}, full {full}"


def test_delta_without_regions_hashes_like_the_full_fetch_without_regions(pair):
    """On purpose unlike Java (contract: Java's delta hashes local + remote apps absent locally,
    its full fetch every region): Heureka's delta without regions covers what /apps covers."""
    pair.require_heureka()
    full = get_doc(pair.heureka, "/apps/")["applications"]["apps__hashcode"]
    delta = get_doc(pair.heureka, "/apps/delta")["applications"]["apps__hashcode"]
    assert delta == full


# ---------------------------------------------------------------------------------------
# Heureka's own: GET /eureka/regions, stale and dropped regions, events, the CLI
# ---------------------------------------------------------------------------------------
def regions_doc(server) -> dict:
    r = get(server, "/regions")
    assert r.status == 200, f"GET /eureka/regions -> {r.status}: {r.text[:300]}"
    return r.json()


def region_view(server, name: str) -> dict:
    views = [v for v in regions_doc(server)["regions"] if v["name"] == name]
    assert len(views) == 1, f"{name} in {regions_doc(server)}"
    return views[0]


def test_regions_read_lists_each_region_ready_with_its_counts(pair, remotes):
    pair.require_heureka()
    doc = regions_doc(pair.heureka)
    assert doc["region"] == LOCAL and doc["fallback"] is True, doc
    assert sorted(v["name"] for v in doc["regions"]) == sorted([WEST, EU]), doc
    for view in doc["regions"]:
        region = remotes.by_region[view["name"]]
        own = ids_by_app(get_doc(region, "/apps/"))
        assert view["url"] == region.service_url, view
        assert view["state"] == "ready", view
        assert (view["applications"], view["instances"]) == (len(own), sum(map(len, own.values()))), (view, own)
        assert view["lastSuccess"] is not None and view["error"] is None, view
        assert view["fetches"]["full"] >= 1 and view["fetches"]["failures"] == 0, view


@pytest.mark.parametrize("agent", ["Java-EurekaClient-RemoteRegion/2.0.4", "Heureka-RemoteRegion/0.1.0"])
def test_a_region_fetcher_is_served_the_local_region_only(pair, agent):
    """A region's view is its own instances, never the copies transparent fallback re-exports
    (two regions fetching each other would hand each other's instances back and forth)."""
    pair.require_heureka()
    mine = {inst.key for inst in pair.local}
    for path in ("/apps/", "/apps/delta"):
        fetcher = flatten(ids_by_app(get(pair.heureka, path, {**JSON, "User-Agent": agent}).json()))
        anyone = flatten(ids_by_app(get(pair.heureka, path, {**JSON, "User-Agent": "Java-EurekaClient/2.0.4"}).json()))
        assert fetcher == mine, f"{path} as {agent}: {sorted(fetcher)}"
        assert anyone > mine, f"{path} as a client: every region (fallback) {sorted(anyone)}"


def test_two_regions_fetching_each_other_hold_each_others_own_instances(server_factory):
    a_port, b_port = procs.free_port(), procs.free_port()
    a = server_factory("heureka", port=a_port, start=False, settings=region_settings(
        "heureka", {"region-b": cl.eureka_url(b_port)}, **{"eureka.client.region": "region-a"}))
    b = server_factory("heureka", port=b_port, start=False, settings=region_settings(
        "heureka", {"region-a": cl.eureka_url(a_port)}, **{"eureka.client.region": "region-b"}))
    a.proc.name, b.proc.name = "loop-region-a", "loop-region-b"
    procs.start_all([a, b])
    in_a, in_b = cl.new_instance("LOOP-APP"), cl.new_instance("LOOP-APP")
    register(a, in_a)
    register(b, in_b)
    def fetches(server, other) -> int:
        return sum(region_view(server, other)["fetches"][k] for k in ("full", "delta"))
    for server, other in ((a, "region-b"), (b, "region-a")):
        wait_until(f"{server.proc.name} serves both", serves(server, f"/apps/?regions={other}", expect(in_a, in_b)),
                   FOLLOW_DEADLINE, logs=[a.proc, b.proc])
    for server, other in ((a, "region-b"), (b, "region-a")):
        # a few more fetches, each after the other side held a copy: a re-exported one would be back
        start = fetches(server, other)
        wait_until(f"{server.proc.name}: three more fetches of {other}", lambda: fetches(server, other) >= start + 3,
                   FOLLOW_DEADLINE)
    assert region_view(a, "region-b")["instances"] == 1, region_view(a, "region-b")
    assert region_view(b, "region-a")["instances"] == 1, region_view(b, "region-a")


def prometheus_samples(server) -> dict[str, float]:
    """``name{labels}`` -> value of the server's /actuator/prometheus (labels as written)."""
    text = wire.get(f"http://{HOST}:{server.port}/actuator/prometheus", timeout=10).text
    out = {}
    for line in text.splitlines():
        if line and not line.startswith("#"):
            key, _, value = line.rpartition(" ")
            out[key] = float(value)
    return out


def test_region_metrics_count_what_each_region_serves(pair, remotes):
    pair.require_heureka()
    samples = prometheus_samples(pair.heureka)

    def sample(name: str, **labels: str) -> Optional[float]:
        for key, value in samples.items():
            if key.startswith(name + "{") and all(f'{k}="{v}"' in key for k, v in labels.items()):
                return value
        return None
    for name, region in remotes.by_region.items():
        own = ids_by_app(get_doc(region, "/apps/"))
        assert sample("heureka_region_instances", region=name) == sum(map(len, own.values())), samples
        assert sample("heureka_region_state", region=name, state="ready") == 1, samples
        assert sample("heureka_region_state", region=name, state="stale") == 0, samples
        assert sample("heureka_region_lag_seconds", region=name) is not None, samples
        assert sample("heureka_region_fetches_total", region=name, kind="full", outcome="ok") >= 1, samples


SECRET = ("reader", "s3cret-region")


def test_a_region_behind_basic_auth_is_fetched_with_the_urls_credentials_never_shown(tracker, log_dir,
                                                                                    server_factory):
    """The Java server behind Spring Security as a region, its URL carrying user:password@:
    fetched with Basic auth; the password appears nowhere the server shows the region."""
    port = procs.free_port()
    region = tracker.add(cl.JavaNode("region-eu-secure", log_dir, port, {
        "spring.security.user.name": SECRET[0], "spring.security.user.password": SECRET[1],
        "eureka.client.service-url.defaultZone": cl.eureka_url(port, SECRET)}, credentials=SECRET))
    region.start()
    inst = cl.new_instance("SECURE-APP")
    cl.register(region, inst)
    local = server_factory("heureka", start=False, settings=region_settings(
        "heureka", {"eu-secure": cl.eureka_url(port, SECRET)}))
    start_as(local, "local-heureka-secure-region")
    wait_until("the secured region's instance served", serves(local, "/apps/?regions=eu-secure", expect(inst)),
               READY_DEADLINE, logs=[local.proc, region.proc])
    shown = {"GET /eureka/regions": get(local, "/regions").text,
             "GET /actuator/prometheus": wire.get(f"http://{HOST}:{local.port}/actuator/prometheus", timeout=10).text,
             # the server's own lines: not the command line the harness wrote first
             "its log": "\n".join(line for line in local.proc.log_text(max_chars=10**7).splitlines()
                                  if not line.startswith(("$ ", "== ")))}
    assert region_view(local, "eu-secure")["url"] == cl.eureka_url(port), shown["GET /eureka/regions"]
    assert "eu-secure" in shown["GET /actuator/prometheus"]
    assert cl.eureka_url(port) in shown["its log"], "the log names the region's URL without its credentials"
    for where, text in shown.items():
        assert SECRET[1] not in text, f"the region's password in {where}"


class Events:
    """``GET /eureka/events`` of one server, read from a thread."""

    def __init__(self, server):
        self.events: list[dict] = []
        self._lock = threading.Lock()
        self._conn = http.client.HTTPConnection(HOST, server.port, timeout=120)
        self._conn.request("GET", "/eureka/events", headers={"Accept": "text/event-stream"})
        resp = self._conn.getresponse()
        assert resp.status == 200, f"GET /eureka/events -> {resp.status}"
        threading.Thread(target=self._read, args=(resp,), daemon=True).start()

    def _read(self, resp) -> None:
        try:
            for raw in resp:
                line = raw.decode("utf-8", "replace").rstrip("\r\n")
                if line.startswith("data:"):
                    try:
                        event = json.loads(line[5:].strip())
                    except ValueError:
                        continue
                    with self._lock:
                        self.events.append(event)
        except (OSError, ValueError, http.client.HTTPException):
            return

    def about(self, kind: str, region: str) -> list[dict]:
        """Events of type ``kind`` that name ``region``."""
        with self._lock:
            return [e for e in self.events if e.get("type") == kind and region in json.dumps(e)]

    def close(self) -> None:
        try:
            self._conn.sock and self._conn.sock.close()
        except OSError:
            pass


DOOMED = "ap-south"


@dataclass
class Doomed:
    region: procs.RegistryServer
    local: procs.RegistryServer
    inst: cl.Instance
    events: Events = None


@pytest.fixture(scope="module")
def doomed(server_factory) -> Doomed:
    """A Heureka region that the tests kill, and a Heureka registry fetching it with a short
    ``heureka.regions.stale-after``; its event stream read from the start."""
    region = start_as(server_factory("heureka", settings=dict(KEEP_DELTAS), start=False), f"region-{DOOMED}")
    inst = cl.new_instance("SOUTH-APP")
    register(region, inst)
    local = server_factory("heureka", start=False, settings=region_settings("heureka", {DOOMED: region.service_url}, **{
        "heureka.regions.stale-after": f"{STALE_AFTER_S}s",
        "eureka.server.remote-region-connect-timeout-ms": "300",
        "eureka.server.remote-region-read-timeout-ms": "1000"}))
    start_as(local, f"local-heureka-{DOOMED}")
    d = Doomed(region, local, inst)
    wait_until(f"{local.proc.name} serves {DOOMED}", serves(local, f"/apps/?regions={DOOMED}", expect(inst)),
               READY_DEADLINE, logs=[local.proc])
    d.events = Events(local)
    yield d
    d.events.close()


def state_of(d: Doomed) -> str:
    return region_view(d.local, DOOMED)["state"]


def is_served(d: Doomed) -> bool:
    return d.inst.key in flatten(ids_by_app(get_doc(d.local, f"/apps/?regions={DOOMED}")))


def test_a_killed_region_is_served_while_stale_then_dropped(doomed):
    assert state_of(doomed) == "ready"
    doomed.region.kill()
    killed = time.monotonic()
    # stale: fetches fail, the last view is still served
    wait_until(f"{DOOMED} stale and still served", lambda: state_of(doomed) == "stale" and is_served(doomed),
               STALE_AFTER_S, interval=0.2, logs=[doomed.local.proc])
    wait_until(f"a region-stale event about {DOOMED}", lambda: doomed.events.about("region-stale", DOOMED), 10)
    wait_until(f"{DOOMED} dropped", lambda: state_of(doomed) == "dropped", STALE_AFTER_S + 15, interval=0.2,
               logs=[doomed.local.proc])
    assert time.monotonic() - killed >= STALE_AFTER_S - 1.5, "dropped before stale-after had passed"
    assert not is_served(doomed)
    wait_until(f"a region-dropped event about {DOOMED}", lambda: doomed.events.about("region-dropped", DOOMED), 10)


def ensure_dropped(d: Doomed) -> None:
    if d.region.proc.running():
        d.region.kill()
    wait_until(f"{DOOMED} dropped", lambda: state_of(d) == "dropped", STALE_AFTER_S + 20, interval=0.2,
               logs=[d.local.proc])


def test_a_dropped_regions_instances_are_deleted_in_the_region_delta(doomed):
    ensure_dropped(doomed)
    delta = get_doc(doomed.local, f"/apps/delta?regions={DOOMED}")
    found = instances_of(delta).get(doomed.inst.instance_id)
    assert found is not None and found.get("actionType") == "DELETED", json.dumps(delta)[:2000]
    full = get_doc(doomed.local, f"/apps/?regions={DOOMED}")["applications"]["apps__hashcode"]
    assert delta["applications"]["apps__hashcode"] == full


def test_a_dropped_region_that_answers_again_is_served_again(doomed):
    ensure_dropped(doomed)
    doomed.region.start()           # the same port, empty: the instance registers again
    register(doomed.region, doomed.inst)
    wait_until(f"{DOOMED} ready and served again", lambda: state_of(doomed) == "ready" and is_served(doomed),
               FOLLOW_DEADLINE, interval=0.2, logs=[doomed.local.proc])
    wait_until(f"a region-ready event about {DOOMED}", lambda: doomed.events.about("region-ready", DOOMED), 10)


def cli_binary() -> str:
    """The ``heureka`` the CLI test runs: HEUREKA_CLI_BIN when the CLI is built apart from the
    server under test, else the server's binary."""
    return os.environ.get("HEUREKA_CLI_BIN") or str(procs.HeurekaServer.binary())


def cli_has_regions() -> bool:
    """Whether the binary knows the subcommand (one that does not prints the server's help)."""
    run = subprocess.run([cli_binary(), "regions", "--help"], capture_output=True,
                         text=True, timeout=30, cwd=procs.INTEROP_DIR)
    return run.returncode == 0 and "Usage: heureka regions" in run.stdout


def test_cli_regions_prints_each_region_with_its_state(pair, remotes):
    pair.require_heureka()
    if not cli_has_regions():
        pytest.skip(f"{cli_binary()} has no `regions` subcommand (the CLI side of issue 34 is not in it; "
                    f"HEUREKA_CLI_BIN names a binary that has it)")
    env = {k: v for k, v in os.environ.items() if not k.upper().startswith("EUREKA_")}
    run = subprocess.run([cli_binary(), "regions", "--eureka", pair.heureka.service_url],
                         capture_output=True, text=True, timeout=60, env=env)
    assert run.returncode == 0, f"rc={run.returncode}\n{run.stdout}\n{run.stderr}"
    rows = [line.split() for line in run.stdout.splitlines() if line.strip()]
    assert rows[0][:4] == ["REGION", "STATE", "APPS", "INSTANCES"], run.stdout
    body = {row[0]: row for row in rows[1:]}
    assert sorted(body) == sorted([WEST, EU]), run.stdout
    for name, row in body.items():
        own = ids_by_app(get_doc(remotes.by_region[name], "/apps/"))
        assert row[1:4] == ["ready", str(len(own)), str(sum(map(len, own.values())))], run.stdout
        assert row[-1] == remotes.by_region[name].service_url, run.stdout


# the full documents and the fallback single reads, field by field against Java
FULL_DOCS = [
    (f"/apps/?regions={BOTH}", False),
    (f"/apps/?regions={EU},{WEST}", False),
    (f"/apps/?regions={WEST}", False),
    (f"/apps/?regions={WEST},ap-unknown", False),
    ("/apps/", False),
    ("/apps/EU-APP", False),
    ("/apps/APPA/{appa}", False),
    ("/instances/{eu_app}", False),
    ("/vips/shared", False),
]


@pytest.mark.no_process_logs
@pytest.mark.parametrize("fmt", list(FORMATS))
@pytest.mark.parametrize("path,is_delta", FULL_DOCS, ids=[p for p, _ in FULL_DOCS])
def test_region_document_matches_java(pair, remotes, path, is_delta, fmt):
    assert_document_matches_java(pair, remotes, path, is_delta, fmt)


def test_remote_instances_are_served_as_the_region_serves_them(pair, remotes):
    """Every field, in order, as the region's own registry has it (JSON)."""
    served = compare.parse_json(get(pair.heureka, f"/apps/?regions={BOTH}").body)
    mine = {inst.instance_id for inst in pair.local}
    by_id = {}
    for app in served.get("applications").get("application"):
        for inst in app.get("instance"):
            by_id[inst.get("instanceId")] = inst
    for name, region in remotes.by_region.items():
        own = compare.parse_json(get(region, "/apps/").body)
        for app in own.get("applications").get("application"):
            for inst in app.get("instance"):
                iid = inst.get("instanceId")
                assert iid not in mine
                assert compare.to_plain(by_id.get(iid)) == compare.to_plain(inst), \
                    f"{iid} from {name}: served {compare.short(by_id.get(iid), 2000)}\n" \
                    f"the region has {compare.short(inst, 2000)}"
                assert list(by_id[iid].keys()) == list(inst.keys()), f"{iid}: key order"
