"""Namespaces (issue 36): one Heureka serves isolated registries to clients that only know a URL.

A namespace ``team-a`` is the whole Eureka API at ``/ns/team-a/eureka``; the unprefixed
``/eureka`` is the namespace ``default``. The clients here are unchanged real clients, each given
its namespace's URL as its only service URL:

* two Spring Boot apps with the same ``spring.application.name`` (``ns-provider``), one in
  ``team-a``, one in ``team-b``, while ``default`` holds an instance of that name too (registered
  by REST, nothing listens on its port): each app's ``DiscoveryClient`` lists only its own
  namespace's instance, and its ``@LoadBalanced`` calls by name reach only that instance (itself);
  each namespace's documents on the server hold exactly its own instances;
* py-eureka-client in ``team-c`` registers there only, discovers only ``team-c``'s instances and
  calls an instance through the namespace (``do_service``);
* with authentication on, a user bound to ``team-a`` reads and writes there, gets 403 with a
  one-line reason in ``team-b`` and in ``default`` (by path and by the ``x-namespace`` header),
  and ``team-b`` is untouched by its refused writes; ``GET /ns`` shows it only ``team-a``;
* ``GET /ns`` lists each namespace with its counts; the ``x-namespace`` header on an unprefixed
  path reaches the same namespace as the path; names are matched ignoring case and shown lower
  case; an invalid name is a 400 with a one-line reason; reading a namespace nobody registered in
  answers an empty registry and does not create it.

One Heureka is shared by the client tests (each namespace belongs to one test), one with
authentication by the access tests, one by the REST-only tests; the listing's exact counts get a
server of their own. Every wait is a bounded poll.
"""
from __future__ import annotations

import json
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

from support import cluster as cl
from support import procs, wire
from support.namespaces import Namespace, listing, request
from support.procs import HOST, wait_until

# The same spring.application.name in every namespace.
APP = "ns-provider"
# Registered by REST in each Spring app's namespace once both apps are registered: an app that
# lists it has fetched after both registrations, so it would list the other namespace's
# instance by then if the server leaked it.
MARKER = "ns-marker"
PY_APP = "ns-py"
DEADLINE = 60.0
CALLS = 20

ADMIN = ("admin", "adm1n-s3cret")
TEAM_A = ("team-a-ci", "t3am-a-s3cret")


def instance_keys(view: cl.View) -> set:
    return set(view.instances)


def register(ns: Namespace, inst: cl.Instance) -> None:
    r = ns.call("POST", f"/apps/{inst.app}", inst.body(), cl.JSON_BODY)
    assert r.status == 204, f"{r.request} in {ns.name} -> {r.status}: {r.text[:300]}"


def assert_one_line_refusal(r: wire.Response, status: int) -> None:
    reason = r.text.strip()
    assert r.status == status, f"{r.request} -> {r.status} (expected {status}): {r.text[:300]}"
    assert reason and "\n" not in reason, f"{r.request}: not a one-line reason: {r.text[:300]!r}"
    print(f"{r.request} -> {r.status}: {reason}")


def default_of(server: procs.RegistryServer) -> cl.View:
    """The unprefixed registry: the namespace ``default``."""
    return Namespace(server).view()


# ---------------------------------------------------------------------------------------
# Spring Boot apps with the same name in two namespaces
# ---------------------------------------------------------------------------------------
@pytest.fixture(scope="module")
def heureka(server_factory) -> procs.RegistryServer:
    return server_factory("heureka")


@pytest.fixture(scope="module")
def default_twin(heureka) -> cl.Instance:
    """An ``ns-provider`` instance in ``default``; no namespaced client may see or call it."""
    twin = cl.new_instance(APP)
    register(Namespace(heureka), twin)
    return twin


class SpringSetup:
    def __init__(self):
        self.apps = {}        # namespace name -> SpringClient
        self.markers = {}     # namespace name -> cl.Instance


@pytest.fixture(scope="module")
def spring(heureka, default_twin, client_factory) -> SpringSetup:
    s = SpringSetup()
    for name in ("team-a", "team-b"):
        app = client_factory("spring", APP, Namespace(heureka, name), start=False)
        app.proc.name = f"spring-{APP}-{name}"      # one log file each
        s.apps[name] = app
    procs.start_all(s.apps.values())
    for name, app in s.apps.items():
        ns = Namespace(heureka, name)
        wait_until(f"{app.instance_id} registered in {name}",
                   lambda ns=ns, app=app: (APP.upper(), app.instance_id) in ns.view().instances,
                   DEADLINE, logs=[app.proc])
    for name, app in s.apps.items():
        s.markers[name] = cl.new_instance(MARKER)
        register(Namespace(heureka, name), s.markers[name])
    for name, app in s.apps.items():
        wait_until(f"{app.proc.name}'s DiscoveryClient lists {MARKER}",
                   lambda app=app: app.instances_of(MARKER), DEADLINE, logs=[app.proc])
    return s


def test_each_namespace_registry_holds_exactly_its_own_instances(heureka, spring, default_twin):
    for name, app in spring.apps.items():
        expected = {(APP.upper(), app.instance_id), spring.markers[name].key}
        assert instance_keys(Namespace(heureka, name).view()) == expected, name
    assert instance_keys(default_of(heureka)) == {default_twin.key}
    assert instance_keys(Namespace(heureka, "default").view()) == {default_twin.key}


@pytest.mark.parametrize("name", ["team-a", "team-b"])
def test_spring_discovery_client_lists_only_its_namespace_instances(spring, name):
    app = spring.apps[name]
    assert [i["instanceId"] for i in app.instances_of(APP)] == [app.instance_id]
    assert [i["instanceId"] for i in app.instances_of(MARKER)] == [spring.markers[name].instance_id]


@pytest.mark.parametrize("name", ["team-a", "team-b"])
def test_spring_load_balanced_calls_reach_only_its_namespace_instance(spring, name):
    app = spring.apps[name]
    r = wire.request("POST", app.local(f"/calls/start?service={APP}&intervalMs=100"),
                     {"Accept": "application/json"}, b"", timeout=10)
    assert r.status == 200, f"POST /calls/start -> {r.status}: {r.text[:300]}"
    summary = wait_until(f"{app.proc.name} made {CALLS} calls to {APP}",
                         lambda: (s := app.get_json("/calls"))["total"] >= CALLS and s,
                         DEADLINE, interval=0.2, logs=[app.proc])
    assert set(summary["targets"]) == {f"{HOST}:{app.port}"}, summary
    assert summary["errors"] == 0, summary


# ---------------------------------------------------------------------------------------
# py-eureka-client in a third namespace
# ---------------------------------------------------------------------------------------
class Whoami:
    """A registered instance that is really there: an HTTP server on its port answering every
    GET with ``{"port": PORT}``."""

    def __init__(self, inst: cl.Instance):
        body = json.dumps({"port": inst.port}).encode()

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args):
                pass

            def do_GET(self):
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

        self.server = ThreadingHTTPServer((HOST, inst.port), Handler)
        self.server.daemon_threads = True
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()


@pytest.fixture(scope="module")
def py_app(heureka, default_twin, client_factory):
    """py-eureka-client in ``team-c``, where an ``ns-provider`` instance (listening) is
    registered first."""
    team_c = Namespace(heureka, "team-c")
    twin_c = cl.new_instance(APP)
    listener = Whoami(twin_c)
    register(team_c, twin_c)
    app = client_factory("python", PY_APP, team_c)
    wait_until(f"{app.instance_id} registered in team-c",
               lambda: (PY_APP.upper(), app.instance_id) in team_c.view().instances, DEADLINE,
               logs=[app.proc])
    yield app, twin_c
    listener.close()


def test_py_client_registers_in_its_namespace_only(heureka, py_app):
    app, _ = py_app
    key = (PY_APP.upper(), app.instance_id)
    assert key in Namespace(heureka, "team-c").view().instances
    for name in ("team-a", "team-b", "default"):
        assert key not in Namespace(heureka, name).view().instances, name
    assert key not in default_of(heureka).instances


def test_py_client_discovers_only_its_namespace_instances(py_app):
    app, twin_c = py_app
    # its copy holds its own registration too: fetched after everything here was registered
    copy = wait_until(f"{app.proc.name} discovers {APP} and itself",
                      lambda: (d := app.discovered()).get(APP.upper()) and d.get(PY_APP.upper()) and d,
                      DEADLINE, logs=[app.proc])
    assert set(copy) == {APP.upper(), PY_APP.upper()}
    assert [i["instanceId"] for i in app.lookup(APP.upper())] == [twin_c.instance_id]


def test_py_client_calls_an_instance_found_in_its_namespace(py_app):
    # do_service resolves the name in its copy of team-c's registry; the only ns-provider
    # there answers with its own port (the Spring apps of that name answer otherwise)
    app, twin_c = py_app
    answer = wait_until(f"{app.proc.name} calls {APP}", lambda: app.walk(APP), DEADLINE,
                        logs=[app.proc])
    assert answer["response"] == {"port": twin_c.port}, answer


# ---------------------------------------------------------------------------------------
# A user bound to a namespace
# ---------------------------------------------------------------------------------------
class SecuredSetup:
    def __init__(self, server: procs.RegistryServer):
        self.server = server
        self.b_instance = cl.new_instance("NS-TEAM-B-APP")

    def ns(self, name: str, credentials: tuple[str, str]) -> Namespace:
        return Namespace(self.server, name, credentials)


@pytest.fixture(scope="module")
def secured(tracker, log_dir) -> SecuredSetup:
    """A Heureka with authentication: the admin (spring.security.user) may do everything, the
    user ``team-a-ci`` reads and registers in ``team-a`` only. The admin registered one instance
    in ``team-a`` and one in ``team-b``."""
    server = tracker.add(procs.HeurekaServer(log_dir, settings={
        "spring.security.user.name": ADMIN[0],
        "spring.security.user.password": ADMIN[1],
        "heureka.security.users[0].name": TEAM_A[0],
        "heureka.security.users[0].password": TEAM_A[1],
        "heureka.security.users[0].roles": "read,register",
        "heureka.security.users[0].namespaces": "team-a",
    }))
    server.proc.name = "heureka-secured"
    # Not server.start(): its readiness poll reads /eureka/apps without credentials.
    server.proc.argv = server.argv()
    server.proc.start()
    wait_until("the secured heureka's readiness probe answers 200",
               lambda: wire.get(f"http://{HOST}:{server.port}/actuator/health/readiness").status == 200,
               30.0, logs=[server.proc])
    s = SecuredSetup(server)
    register(s.ns("team-a", ADMIN), cl.new_instance("NS-TEAM-A-APP"))
    register(s.ns("team-b", ADMIN), s.b_instance)
    return s


def test_a_bound_user_registers_renews_and_reads_in_its_namespace(secured):
    team_a = secured.ns("team-a", TEAM_A)
    inst = cl.new_instance("NS-TEAM-A-OWN")
    register(team_a, inst)
    r = team_a.call("PUT", f"/apps/{inst.app}/{wire.quote(inst.instance_id)}?status=UP"
                           f"&lastDirtyTimestamp={inst.dirty}", headers=cl.JSON)
    assert r.status == 200, f"{r.request} -> {r.status}: {r.text[:300]}"
    assert inst.key in team_a.view().instances


def refused_requests(s: SecuredSetup) -> dict:
    """What ``team-a-ci`` may not do: (method, url, body, headers, the namespace refused) by name."""
    b, newcomer = s.b_instance, cl.new_instance("NS-INTRUDER")
    team_b, default = s.ns("team-b", None), s.ns("default", None)
    unprefixed = s.server.url
    b_path = f"/apps/{b.app}/{wire.quote(b.instance_id)}"
    return {
        "read team-b": ("GET", team_b.url("/apps/"), None, cl.JSON, "team-b"),
        "register in team-b": ("POST", team_b.url(f"/apps/{newcomer.app}"), newcomer.body(), cl.JSON_BODY,
                               "team-b"),
        "cancel in team-b": ("DELETE", team_b.url(b_path), None, cl.JSON, "team-b"),
        "renew in team-b": ("PUT", team_b.url(f"{b_path}?status=UP&lastDirtyTimestamp={b.dirty}"), None, cl.JSON,
                            "team-b"),
        "read default": ("GET", unprefixed("/apps/"), None, cl.JSON, "default"),
        "read default by its prefix": ("GET", default.url("/apps/"), None, cl.JSON, "default"),
        "register in default": ("POST", unprefixed(f"/apps/{newcomer.app}"), newcomer.body(), cl.JSON_BODY,
                                "default"),
        "read team-b by x-namespace": ("GET", unprefixed("/apps/"), None, {**cl.JSON, "x-namespace": "team-b"},
                                       "team-b"),
        "cancel in team-b by x-namespace": ("DELETE", unprefixed(b_path), None,
                                            {**cl.JSON, "x-namespace": "team-b"}, "team-b"),
    }


REFUSED = ["read team-b", "register in team-b", "cancel in team-b", "renew in team-b",
           "read default", "read default by its prefix", "register in default",
           "read team-b by x-namespace", "cancel in team-b by x-namespace"]


@pytest.mark.parametrize("what", REFUSED)
def test_a_bound_user_gets_403_with_a_reason_outside_its_namespace(secured, what):
    method, url, body, headers, namespace = refused_requests(secured)[what]
    r = request(method, url, TEAM_A, body, headers)
    assert_one_line_refusal(r, 403)
    # refused for the namespace, not for a role the user lacks
    assert namespace in r.text, f"{r.request}: the reason names no namespace {namespace!r}: {r.text!r}"


def test_another_namespace_is_intact_after_a_bound_user_s_refused_writes(secured):
    team_b = secured.ns("team-b", ADMIN)
    before = team_b.view()
    for what in REFUSED:
        method, url, body, headers, _ = refused_requests(secured)[what]
        request(method, url, TEAM_A, body, headers)
    after = team_b.view()
    assert after.instances == before.instances == {secured.b_instance.key: ("UP", "UNKNOWN")}


def test_the_listing_shows_a_bound_user_only_its_namespaces(secured):
    assert set(listing(secured.server, TEAM_A)) == {"team-a"}
    assert set(listing(secured.server, ADMIN)) == {"default", "team-a", "team-b"}


# ---------------------------------------------------------------------------------------
# Listing, header, names (REST only)
# ---------------------------------------------------------------------------------------
@pytest.fixture(scope="module")
def plain(server_factory) -> procs.RegistryServer:
    server = server_factory("heureka")
    server.proc.name = "heureka-plain"
    return server


def test_the_listing_counts_applications_and_instances_of_each_namespace(server_factory):
    server = server_factory("heureka")
    register(Namespace(server), cl.new_instance("NS-LISTED"))
    team_x = Namespace(server, "team-x")
    for app in ("NS-ONE", "NS-ONE", "NS-TWO"):
        register(team_x, cl.new_instance(app))
    counted = ("name", "applications", "instances", "selfPreservation")
    listed = {name: {key: entry[key] for key in counted} for name, entry in listing(server).items()}
    assert listed == {
        "default": {"name": "default", "applications": 1, "instances": 1, "selfPreservation": False},
        "team-x": {"name": "team-x", "applications": 2, "instances": 3, "selfPreservation": False},
    }
    for entry in listing(server).values():   # the renewal numbers behind selfPreservation
        assert isinstance(entry["renewsLastMin"], int) and isinstance(entry["renewsThreshold"], int), entry


def test_the_access_log_names_a_namespaced_request_by_the_path_its_client_sent(server_factory):
    server = server_factory("heureka", settings={"heureka.access-log": "true"})
    ns = Namespace(server, "team-log")
    inst = cl.new_instance("NS-LOGGED")
    register(ns, inst)
    instance_path = f"/apps/{inst.app}/{wire.quote(inst.instance_id)}"
    # The heartbeat is answered past the router, the instance read by it: both log alike.
    renewal = ns.call("PUT", f"{instance_path}?status=UP&lastDirtyTimestamp={inst.dirty}")
    assert renewal.status == 200, f"{renewal.request} -> {renewal.status}: {renewal.text[:300]}"
    read = ns.call("GET", instance_path, headers=cl.JSON)
    assert read.status == 200, f"{read.request} -> {read.status}: {read.text[:300]}"
    sent = f"/ns/team-log/eureka{instance_path}"
    wanted = [f'access method="PUT" uri={sent}?status=UP', f'access method="GET" uri={sent} status=200']

    def logged():
        text = server.proc.log_path.read_text(errors="replace")
        return text if all(w in text for w in wanted) else None

    text = wait_until("both requests are in the access log", logged, 10.0, logs=[server.proc])
    assert f"uri=/eureka{instance_path}" not in text, "a line lost the namespace"


def test_a_registration_with_the_x_namespace_header_lands_in_that_namespace(plain):
    inst = cl.new_instance("NS-BY-HEADER")
    r = wire.request("POST", plain.url(f"/apps/{inst.app}"), {**cl.JSON_BODY, "x-namespace": "team-h"},
                     inst.body())
    assert r.status == 204, f"{r.request} -> {r.status}: {r.text[:300]}"
    assert instance_keys(Namespace(plain, "team-h").view()) == {inst.key}
    assert inst.key not in default_of(plain).instances


def test_a_read_with_the_x_namespace_header_serves_that_namespace(plain):
    inst = cl.new_instance("NS-READ-BY-HEADER")
    register(Namespace(plain, "team-r"), inst)
    r = wire.get(plain.url("/apps/"), headers={**cl.JSON, "x-namespace": "team-r"})
    assert r.status == 200, f"{r.request} -> {r.status}: {r.text[:300]}"
    assert instance_keys(cl.view_of_doc(r.json())) == {inst.key}


def test_a_namespace_name_is_matched_ignoring_case_and_shown_lower_case(plain):
    inst = cl.new_instance("NS-CASE")
    register(Namespace(plain, "Team-Case"), inst)
    assert instance_keys(Namespace(plain, "team-case").view()) == {inst.key}
    assert instance_keys(Namespace(plain, "TEAM-CASE").view()) == {inst.key}
    names = set(listing(plain))
    assert "team-case" in names and "Team-Case" not in names, names


@pytest.mark.parametrize("name", ["-team", "_team", "team!a", "t" * 64],
                         ids=["starts-with-hyphen", "starts-with-underscore", "has-bang", "64-chars"])
def test_an_invalid_namespace_name_is_a_400_with_a_reason(plain, name):
    inst = cl.new_instance("NS-INVALID")
    ns = Namespace(plain, name)
    assert_one_line_refusal(ns.call("POST", f"/apps/{inst.app}", inst.body(), cl.JSON_BODY), 400)
    assert_one_line_refusal(ns.call("GET", "/apps/", headers=cl.JSON), 400)


def test_a_63_character_name_is_valid(plain):
    inst = cl.new_instance("NS-LONG-NAME")
    ns = Namespace(plain, "t" * 63)
    register(ns, inst)
    assert instance_keys(ns.view()) == {inst.key}


def test_a_namespace_nobody_registered_in_reads_as_an_empty_registry_and_is_not_created(plain):
    ns = Namespace(plain, "team-nobody")
    assert instance_keys(ns.view()) == set()
    inst = cl.new_instance("NS-NOBODY")
    r = ns.call("PUT", f"/apps/{inst.app}/{wire.quote(inst.instance_id)}?status=UP"
                       f"&lastDirtyTimestamp={inst.dirty}", headers=cl.JSON)
    assert r.status == 404, f"a renewal there: {r.request} -> {r.status}: {r.text[:300]}"
    assert "team-nobody" not in listing(plain)
