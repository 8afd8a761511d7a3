"""Clusters of registry servers on one host, and the plain-HTTP moves the cluster tests make.

A ``Cluster`` is N nodes (Heureka, the Java reference, or a mix) on 127.0.0.1, each told about
its peers through ``eureka.client.service-url.defaultZone`` exactly as a Spring Cloud user
would do it. Each node lists every peer *and itself* (a node must recognise its own URL), or,
for ``topology="chain"``, only itself and the next node. With ``proxied=True`` every directed
link "node i talks to node j" goes through its own ``FaultProxy`` (support/proxy.py), so a test
can cut, black-hole and heal single links or whole partitions.

How several Java servers form a cluster on one host: Eureka drops a peer URL as "me" when its
host equals the server's own host name, so three 127.0.0.1 URLs would all be "me" and nothing
would be replicated (protocol spec §7.1). Setting ``eureka.server.my-url`` switches that test
to exact string equality with the URL, so each Java node gets its own entry of the list as
``my-url`` and sees the other two as peers. Heureka recognises itself by host and port.

Every wait is a bounded poll with a generous deadline; nothing here measures how long
replication took.
"""
from __future__ import annotations

import base64
import itertools
import json
import ssl
import threading
import time
import xml.etree.ElementTree as ET
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable, Iterable, Optional

from . import procs, wire
from .procs import HOST, DeadlineExceeded, wait_until
from .proxy import FaultProxy

# How long a write may take to show up on another node. Java batches replication for 500 ms;
# the rest is slack for a 2-core CI machine running several JVMs.
REPLICATION_DEADLINE = 30.0
# Heureka's anti-entropy period in the cluster tests (its default is 10 s).
ANTI_ENTROPY_MS = 2000
# After a heal, every node must agree within the anti-entropy interval; this is the slack on top.
HEAL_SLACK = 30.0
# Start-up sync from the peers (Spring's keys): a few quick attempts.
SYNC_RETRIES = 3
SYNC_RETRY_WAIT_MS = 1000
# Lease of the test instances that are not meant to expire during a module (Heureka expires a
# lease after durationInSecs, the Java server after twice that).
LONG_LEASE = 900

EUREKA_SERVER_SECURE_JAR = procs.JAVA_DIR / "eureka-server-secure" / "target" / "eureka-server-secure.jar"

JSON = {"Accept": "application/json"}
JSON_BODY = {"Accept": "application/json", "Content-Type": "application/json"}

def basic_auth(credentials: tuple[str, str]) -> str:
    return "Basic " + base64.b64encode(f"{credentials[0]}:{credentials[1]}".encode()).decode()


def eureka_url(port: int, credentials: Optional[tuple[str, str]] = None, tls: bool = False) -> str:
    """A service URL in Spring's defaultZone form (trailing slash), credentials curl-style;
    ``tls``: ``https://localhost:PORT/eureka/`` (the test certificates' name)."""
    userinfo = f"{credentials[0]}:{credentials[1]}@" if credentials else ""
    if tls:
        return f"https://{userinfo}{procs.TLS_HOST}:{port}/eureka/"
    return f"http://{userinfo}{HOST}:{port}/eureka/"


# ---------------------------------------------------------------------------------------
# Nodes
# ---------------------------------------------------------------------------------------
class NodeMixin:
    """What a cluster node adds to a RegistryServer: a name, peers, optional basic auth."""

    node_name: str
    credentials: Optional[tuple[str, str]]

    def _init_node(self, node_name: str, credentials: Optional[tuple[str, str]]) -> None:
        self.node_name = node_name
        self.credentials = credentials
        self.proc.name = node_name          # one log file per node

    def __repr__(self) -> str:
        return f"<{self.node_name} :{self.port}>"

    def call(self, method: str, path: str, body: Optional[str] = None, headers: Optional[dict] = None,
             auth: bool = True, timeout: float = 10.0) -> wire.Response:
        """``method`` on ``/eureka{path}``, with this node's credentials unless ``auth=False``."""
        h = dict(headers or {})
        if auth and self.credentials:
            h["Authorization"] = basic_auth(self.credentials)
        return wire.request(method, self.url(path), h, body, timeout=timeout, context=self.tls)

    def wait_ready(self) -> None:
        def ready():
            if not self.proc.running():
                raise DeadlineExceeded(f"{self.node_name} exited during startup\n{self.proc.describe_log()}")
            return self.call("GET", "/apps/", headers=JSON, timeout=2).status == 200
        try:
            wait_until(f"{self.node_name} answers GET /eureka/apps/ with 200", ready,
                       self.startup_timeout, interval=0.2, logs=[self.proc])
        except DeadlineExceeded:
            self.proc.kill()
            raise

    def apps_json(self) -> dict:
        r = self.call("GET", "/apps/", headers=JSON)
        assert r.status == 200, f"{self.node_name}: GET /eureka/apps/ -> {r.status}: {r.text[:500]}"
        return r.json()

    def get_instance(self, app: str, instance_id: str) -> Optional[dict]:
        # the single-instance read: never cached, by either server
        r = self.call("GET", f"/apps/{app}/{wire.quote(instance_id)}", headers=JSON)
        if r.status == 404:
            return None
        assert r.status == 200, f"{self.node_name}: GET {app}/{instance_id} -> {r.status}: {r.text[:300]}"
        return r.json()["instance"]


class HeurekaNode(NodeMixin, procs.HeurekaServer):
    def __init__(self, node_name: str, log_dir: Path, port: int, settings: dict,
                 credentials: Optional[tuple[str, str]] = None, tls: Optional[ssl.SSLContext] = None,
                 jvm_args: Optional[list[str]] = None):
        super().__init__(log_dir, port, settings, tls)      # jvm_args: a Java node's only
        self._init_node(node_name, credentials)


class JavaNode(NodeMixin, procs.JavaEurekaServer):
    """The Spring Cloud Eureka server as a cluster member (its peers come from ``settings``)."""

    def __init__(self, node_name: str, log_dir: Path, port: int, settings: dict,
                 credentials: Optional[tuple[str, str]] = None, tls: Optional[ssl.SSLContext] = None,
                 jvm_args: Optional[list[str]] = None):
        self.jar = EUREKA_SERVER_SECURE_JAR if credentials else procs.EUREKA_SERVER_JAR
        super().__init__(log_dir, port, settings, tls, jvm_args)
        self._init_node(node_name, credentials)

    def argv(self) -> list[str]:
        # unlike the lone reference server, no service URL of its own: the cluster's list
        return ["java", "-XX:TieredStopAtLevel=1", *self.jvm_args, "-jar", str(self.jar), f"--server.port={self.port}",
                *self.setting_args()]


Node = NodeMixin   # for annotations: every node is a NodeMixin and a procs.RegistryServer


def node_settings(kind: str, port: int, peer_urls: list[str], self_url: str,
                  credentials: Optional[tuple[str, str]] = None, extra: Optional[dict] = None) -> dict:
    """The settings a user would give a clustered server (Spring's keys), plus fast test timings."""
    s = {
        "eureka.instance.hostname": HOST,
        "eureka.client.service-url.defaultZone": ",".join(peer_urls),
        "eureka.client.register-with-eureka": "true",
        "eureka.client.fetch-registry": "true",
        "eureka.server.registry-sync-retries": str(SYNC_RETRIES),
        "eureka.server.registry-sync-retry-wait-ms": str(SYNC_RETRY_WAIT_MS),
    }
    if credentials:
        s["spring.security.user.name"], s["spring.security.user.password"] = credentials
    if kind == "heureka":
        s["heureka.replication.anti-entropy-interval-ms"] = str(ANTI_ENTROPY_MS)
    else:
        s.update({
            # exact-URL self recognition (see the module doc)
            "eureka.server.my-url": self_url,
            # keep the server's own registration on loopback (instance id 127.0.0.1:eureka-server:port)
            "spring.cloud.client.hostname": HOST,
            "eureka.instance.ip-address": HOST,
            # the start-up sync reads the embedded client's cached registry: keep it fresh, and
            # whole (by default that cache keeps only UP instances, so a restarted Java server
            # would come back without its OUT_OF_SERVICE and DOWN instances)
            "eureka.client.registry-fetch-interval-seconds": "1",
            "eureka.client.filter-only-up-instances": "false",
            # its read-write response cache (Guava) can keep a full-registry payload that was
            # loading while a replicated write invalidated it, until the entry expires (180 s by
            # default): let entries expire after 1 s, so /eureka/apps/ lags by at most that
            "eureka.server.response-cache-auto-expiration-in-seconds": "1",
        })
    s.update(extra or {})
    return s


def make_node(kind: str, node_name: str, log_dir: Path, port: int, peer_urls: list[str], self_url: str,
              credentials: Optional[tuple[str, str]] = None, extra: Optional[dict] = None,
              tls: Optional[ssl.SSLContext] = None, jvm_args: Optional[list[str]] = None) -> Node:
    settings = node_settings(kind, port, peer_urls, self_url, credentials, extra)
    cls = {"heureka": HeurekaNode, "java": JavaNode}[kind]
    return cls(node_name, log_dir, port, settings, credentials, tls, jvm_args)


class Cluster:
    """N nodes (and, if proxied, one FaultProxy per directed link), not yet started."""

    def __init__(self, kinds: list[str], log_dir: Path, *, proxied: bool = False,
                 credentials: Optional[tuple[str, str]] = None, topology: str = "mesh",
                 extra: Optional[dict] = None, label: str = "",
                 extra_peers: Optional[dict[int, list[str]]] = None,
                 node_extra: Optional[dict[int, dict]] = None,
                 tls: Optional[ssl.SSLContext] = None, java_jvm_args: Optional[list[str]] = None):
        """``extra_peers``: more URLs for a node's list, e.g. a node outside this cluster;
        ``node_extra``: settings for single nodes (by index), on top of ``extra``;
        ``tls``: every node serves HTTPS (its ``server.ssl.*`` keys come with ``extra``), the
        peer URLs are ``https://localhost:PORT/eureka/`` and the suite's own requests use this
        client context; ``java_jvm_args``: JVM options of the Java nodes (``-D...``)."""
        assert topology in ("mesh", "chain"), topology
        self.kinds = list(kinds)
        n = len(kinds)
        self.ports = [procs.free_port() for _ in range(n)]
        self.proxies: dict[tuple[int, int], FaultProxy] = {}
        self.nodes: list[Node] = []
        label = label or (kinds[0] if len(set(kinds)) == 1 else "mixed")
        names = [f"{label}-{chr(ord('a') + i)}" for i in range(n)]
        try:
            for i in range(n):
                for j in self.peers_of(i, topology):
                    if proxied and j != i:
                        self.proxies[(i, j)] = FaultProxy(self.ports[j], f"{names[i]}->{names[j]}").start()
            for i in range(n):
                # itself first (direct), then its peers (through their links)
                urls = [eureka_url(self.link_port(i, j), credentials, bool(tls))
                        for j in [i] + self.peers_of(i, topology)]
                urls += (extra_peers or {}).get(i, [])
                settings = {**(extra or {}), **(node_extra or {}).get(i, {})}
                if topology == "chain" and i > 0 and kinds[i] == "heureka":
                    # Heureka accepts replication only from its peers; in a chain a node is
                    # replicated to by the previous node, which it does not list: it names
                    # that node's address (the tail lists no peer at all).
                    settings.setdefault("heureka.replication.allowed-addresses", HOST)
                self.nodes.append(make_node(kinds[i], names[i], log_dir, self.ports[i], urls,
                                            eureka_url(self.ports[i], credentials, bool(tls)), credentials,
                                            settings, tls, java_jvm_args))
        except BaseException:
            self.close_proxies()
            raise

    def peers_of(self, i: int, topology: str = "mesh") -> list[int]:
        n = len(self.ports)
        if topology == "chain":
            return [i + 1] if i + 1 < n else []
        return [j for j in range(n) if j != i]

    def link_port(self, i: int, j: int) -> int:
        """The port node i uses to reach node j (its proxy's, if there is one)."""
        p = self.proxies.get((i, j))
        return p.port if p else self.ports[j]

    def __getitem__(self, i: int) -> Node:
        return self.nodes[i]

    def __iter__(self):
        return iter(self.nodes)

    def __len__(self) -> int:
        return len(self.nodes)

    def procs(self) -> list:
        return [n.proc for n in self.nodes]

    def start(self) -> "Cluster":
        procs.start_all(self.nodes)
        return self

    def close_proxies(self) -> None:
        for p in self.proxies.values():
            p.close()

    # -- faults ------------------------------------------------------------------------------
    def links_between(self, side_a: Iterable[int], side_b: Iterable[int]) -> list[FaultProxy]:
        a, b = set(side_a), set(side_b)
        return [p for (i, j), p in self.proxies.items() if (i in a and j in b) or (i in b and j in a)]

    def partition(self, side_a: Iterable[int], side_b: Iterable[int]) -> None:
        """Reset every connection between the two sides and every new one, both directions."""
        links = self.links_between(side_a, side_b)
        assert links, "no proxied links between these sides (Cluster(proxied=True)?)"
        for p in links:
            p.partition()

    def black_hole(self, victim: int) -> None:
        """Every peer's link *to* ``victim`` accepts and never answers (a hung peer)."""
        links = [p for (i, j), p in self.proxies.items() if j == victim]
        assert links, "no proxied links to this node (Cluster(proxied=True)?)"
        for p in links:
            p.black_hole()

    def heal(self) -> None:
        for p in self.proxies.values():
            p.pass_through()


# ---------------------------------------------------------------------------------------
# Instances and the writes the tests make (plain HTTP, Eureka's JSON, as a Java client sends it)
# ---------------------------------------------------------------------------------------
_serial = itertools.count(1)


@dataclass
class Instance:
    app: str
    instance_id: str
    port: int
    duration: int = LONG_LEASE       # leaseInfo.durationInSecs
    renewal: int = 30                # leaseInfo.renewalIntervalInSecs
    metadata: dict = field(default_factory=dict)
    dirty: int = field(default_factory=lambda: int(time.time() * 1000))   # lastDirtyTimestamp

    @property
    def key(self) -> tuple[str, str]:
        return (self.app, self.instance_id)

    def body(self) -> str:
        doc = {"instance": {
            "instanceId": self.instance_id,
            "hostName": HOST,
            "app": self.app,
            "ipAddr": HOST,
            "status": "UP",
            "overriddenstatus": "UNKNOWN",
            "port": {"$": self.port, "@enabled": "true"},
            "securePort": {"$": 443, "@enabled": "false"},
            "countryId": 1,
            "dataCenterInfo": {"@class": "com.netflix.appinfo.InstanceInfo$DefaultDataCenterInfo", "name": "MyOwn"},
            "leaseInfo": {"renewalIntervalInSecs": self.renewal, "durationInSecs": self.duration},
            "metadata": dict(self.metadata) or {"@class": "java.util.Collections$EmptyMap"},
            "homePageUrl": f"http://{HOST}:{self.port}/",
            "statusPageUrl": f"http://{HOST}:{self.port}/info",
            "healthCheckUrl": f"http://{HOST}:{self.port}/health",
            "vipAddress": self.app.lower(),
            "secureVipAddress": self.app.lower(),
            "isCoordinatingDiscoveryServer": "false",
            "lastUpdatedTimestamp": str(self.dirty),
            "lastDirtyTimestamp": str(self.dirty),
        }}
        return json.dumps(doc)


def new_instance(app: str, **kw) -> Instance:
    """A fresh instance with an id no other test uses (APP in upper case, as servers store it)."""
    n = next(_serial)
    port = 20000 + n
    return Instance(app.upper(), f"{HOST}:{app.lower()}:{port}", port, **kw)


def _path(inst: Instance, suffix: str = "") -> str:
    return f"/apps/{inst.app}/{wire.quote(inst.instance_id)}{suffix}"


def register(node: Node, inst: Instance) -> None:
    r = node.call("POST", f"/apps/{inst.app}", inst.body(), JSON_BODY)
    assert r.status == 204, f"{node.node_name}: register {inst.instance_id} -> {r.status}: {r.text[:300]}"


def heartbeat(node: Node, inst: Instance, timeout: float = 10.0) -> int:
    return node.call("PUT", _path(inst, f"?status=UP&lastDirtyTimestamp={inst.dirty}"),
                     headers=JSON, timeout=timeout).status


def cancel(node: Node, inst: Instance, must_exist: bool = True) -> None:
    r = node.call("DELETE", _path(inst), headers=JSON)
    assert r.status == 200 or (not must_exist and r.status == 404), \
        f"{node.node_name}: cancel {inst.instance_id} -> {r.status}: {r.text[:300]}"


def set_status(node: Node, inst: Instance, value: str) -> None:
    r = node.call("PUT", _path(inst, f"/status?value={value}&lastDirtyTimestamp={inst.dirty}"), headers=JSON)
    assert r.status == 200, f"{node.node_name}: status {value} on {inst.instance_id} -> {r.status}: {r.text[:300]}"


def remove_status_override(node: Node, inst: Instance, value: str = "UP") -> None:
    r = node.call("DELETE", _path(inst, f"/status?value={value}&lastDirtyTimestamp={inst.dirty}"), headers=JSON)
    assert r.status == 200, f"{node.node_name}: remove override on {inst.instance_id} -> {r.status}: {r.text[:300]}"


def put_metadata(node: Node, inst: Instance, **entries: str) -> None:
    query = "&".join(f"{wire.quote(k)}={wire.quote(v)}" for k, v in entries.items())
    r = node.call("PUT", _path(inst, f"/metadata?{query}"), headers=JSON)
    assert r.status == 200, f"{node.node_name}: metadata on {inst.instance_id} -> {r.status}: {r.text[:300]}"


class Heartbeater:
    """Renews some instances on one node every ``interval`` s from a daemon thread (a client's job).

    Records every answer that is not 200, so a test can tell "kept alive" from "kept trying".
    """

    def __init__(self, node: Node, instances: list[Instance], interval: float = 0.5):
        self.node = node
        self.instances = list(instances)
        self.interval = interval
        self.failures: list[str] = []
        self.beats = 0
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True, name=f"heartbeats->{node.node_name}")

    def start(self) -> "Heartbeater":
        self._thread.start()
        return self

    def _run(self) -> None:
        while not self._stop.is_set():
            for inst in self.instances:
                try:
                    status = heartbeat(self.node, inst)
                    if status != 200:
                        self.failures.append(f"{inst.instance_id}: {status}")
                    self.beats += 1
                except OSError as exc:
                    self.failures.append(f"{inst.instance_id}: {type(exc).__name__}: {exc}")
            self._stop.wait(self.interval)

    def stop(self) -> None:
        self._stop.set()
        self._thread.join(15)


# ---------------------------------------------------------------------------------------
# What a node holds, and waiting for nodes to agree
# ---------------------------------------------------------------------------------------
@dataclass(frozen=True)
class View:
    """A node's full registry as compared across nodes: the reconcile hash and, per instance,
    status and overridden status (``GET /eureka/apps/``, JSON)."""

    hashcode: str
    instances: dict      # (APP, instanceId) -> (status, overriddenStatus)

    def status(self, inst: Instance) -> Optional[str]:
        v = self.instances.get(inst.key)
        return v[0] if v else None

    def has(self, inst: Instance) -> bool:
        return inst.key in self.instances

    def __str__(self) -> str:
        lines = [f"apps__hashcode={self.hashcode!r}"]
        for (app, iid), (st, ov) in sorted(self.instances.items()):
            lines.append(f"  {app}/{iid}: {st} (override {ov})")
        return "\n".join(lines)


def view_of_doc(doc: dict) -> View:
    apps = doc["applications"].get("application") or []
    if isinstance(apps, dict):
        apps = [apps]
    out = {}
    for app in apps:
        insts = app.get("instance") or []
        if isinstance(insts, dict):
            insts = [insts]
        for i in insts:
            out[(str(i["app"]).upper(), i["instanceId"])] = (i.get("status"), i.get("overriddenStatus",
                                                                               i.get("overriddenstatus")))
    return View(str(doc["applications"].get("apps__hashcode", "")), out)


def view(node: Node) -> View:
    return view_of_doc(node.apps_json())


def wait_converged(nodes: list[Node], what: str, where: Callable[[View], bool] = lambda v: True,
                   deadline: float = REPLICATION_DEADLINE) -> View:
    """Wait until every node shows the same View (hash, instances, statuses) and ``where`` holds."""
    nodes = list(nodes)
    last: dict = {}

    def agreed():
        last.clear()
        for n in nodes:
            last[n.node_name] = view(n)
        views = list(last.values())
        return views[0] if all(v == views[0] for v in views) and where(views[0]) else None

    try:
        return wait_until(f"every node ({', '.join(n.node_name for n in nodes)}) holds the same registry: {what}",
                          agreed, deadline, interval=0.3)
    except DeadlineExceeded as exc:
        shown = "\n".join(f"--- {name}:\n{v}" for name, v in last.items())
        raise DeadlineExceeded(f"{exc}\nlast views:\n{shown}") from None


def wait_on_all(nodes: list[Node], what: str, probe: Callable[[Node], object],
                deadline: float = REPLICATION_DEADLINE) -> None:
    """Wait until ``probe(node)`` is truthy on every node (one shared deadline)."""
    nodes = list(nodes)
    end = time.monotonic() + deadline
    for n in nodes:
        wait_until(f"{what} on {n.node_name}", lambda n=n: probe(n), max(0.5, end - time.monotonic()),
                   interval=0.3)


def stays_true(what: str, probe: Callable[[], bool], window: float, interval: float = 0.3) -> None:
    """``probe`` holds at every poll for ``window`` seconds (a bounded negative check)."""
    end = time.monotonic() + window
    while True:
        assert probe(), f"no longer true: {what}"
        if time.monotonic() >= end:
            return
        time.sleep(interval)


def status_replicas(node: Node) -> dict:
    """``GET /eureka/status`` (XML, as the Netflix server writes StatusInfo): the replica lists."""
    r = node.call("GET", "/status")
    assert r.status == 200, f"{node.node_name}: GET /eureka/status -> {r.status}: {r.text[:300]}"
    root = ET.fromstring(r.body)
    stats = root.find("applicationStats")
    assert stats is not None, f"{node.node_name}: no applicationStats in /eureka/status:\n{r.text[:1000]}"

    def urls(tag: str) -> set[str]:
        text = stats.findtext(tag) or ""
        return {u.strip() for u in text.split(",") if u.strip()}
    return {"registered": urls("registered-replicas"), "available": urls("available-replicas"),
            "unavailable": urls("unavailable-replicas")}


def restart_and_first_read(node: Node) -> View:
    """SIGKILL ``node``, start it again on the same port and return its first read (below)."""
    node.proc.kill()
    return start_and_first_read(node)


def start_and_first_read(node: Node) -> View:
    """Start ``node`` and return what its *first* successful ``GET /eureka/apps/`` answered.

    Polls from the moment the process starts; before that first 200 the node may refuse
    connections or answer anything else (a 403 while it syncs, say)."""
    node.proc.argv = node.argv()
    node.proc.start()
    first: list[View] = []

    def answered():
        if not node.proc.running():
            raise DeadlineExceeded(f"{node.node_name} exited during start-up\n{node.proc.describe_log()}")
        r = node.call("GET", "/apps/", headers=JSON, timeout=5)
        if r.status != 200:
            return False
        first.append(view_of_doc(r.json()))
        return True

    wait_until(f"{node.node_name} answers GET /eureka/apps/", answered, node.startup_timeout,
               interval=0.05, logs=[node.proc])
    return first[0]
