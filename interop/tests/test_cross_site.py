"""Writes a web page cannot forge through its visitor's browser (issue 19).

A page on another site can make a browser send, without a CORS preflight, a POST whose body is
``text/plain``, ``application/x-www-form-urlencoded``, ``multipart/form-data`` or untyped, and
every request it sends carries the page's ``Origin``. The matrix below sends each of these to
each write endpoint of a Heureka server, with authentication off and on (with valid
credentials, as a browser that stored them would send), and checks each is refused with a 4xx
and leaves the registry exactly as it was: the full ``GET /eureka/apps`` JSON (and so
``apps__hashcode``) is compared before and after every request.

Then the other side: a write from the server's own origin (the dashboard's) and one from an
origin listed in ``heureka.security.allowed-origins`` are accepted.

Heureka only: the Java server has no such check (docs/compat.md rows 7 and 7a).
"""
from __future__ import annotations

import base64
import json
from pathlib import Path

import pytest

from support import procs, wire
from support.cluster import HeurekaNode, new_instance
from support.procs import wait_until

CREDS = ("ops", "xsite-pw")
ALLOWED = "http://ops-console.example:8080"
FOREIGN = "http://evil.example"

# Column -> (Content-Type or None for none, Origin or None). Body-less endpoints take only the
# origin columns: a type is irrelevant where no body is read.
ATTACKS = {
    "text/plain": ("text/plain;charset=UTF-8", None),
    "form": ("application/x-www-form-urlencoded", None),
    "multipart": ("multipart/form-data; boundary=xsite", None),
    "no type": (None, None),
    "foreign Origin": ("application/json", FOREIGN),
    "Origin null": ("application/json", "null"),
}
BODY_ONLY = {"text/plain", "form", "multipart", "no type"}

_RESULTS: dict[tuple[str, str], list[str]] = {}


def _auth_header() -> dict:
    token = base64.b64encode(f"{CREDS[0]}:{CREDS[1]}".encode()).decode()
    return {"Authorization": f"Basic {token}"}


def _start(tracker, log_dir, mode: str):
    # The test sends the replication forms from 127.0.0.1 as a peer would, so that their cells
    # show what the body type and the Origin alone get (a non-peer is refused before either:
    # test_peers_only.py).
    settings = {"heureka.security.allowed-origins": ALLOWED,
                "heureka.replication.allowed-addresses": "127.0.0.1"}
    credentials = None
    if mode == "auth on":
        credentials = CREDS
        settings.update({"spring.security.user.name": CREDS[0], "spring.security.user.password": CREDS[1]})
    # A cluster node of one: it waits for readiness with its credentials.
    srv = tracker.add(HeurekaNode(f"heureka-{mode.replace(' ', '-')}", log_dir, procs.free_port(), settings,
                                  credentials=credentials))
    srv.start()
    srv.auth = _auth_header() if credentials else {}
    srv.mode = mode
    return srv


@pytest.fixture(scope="module")
def open_server(tracker, log_dir):
    return _start(tracker, log_dir, "auth off")


@pytest.fixture(scope="module")
def secured_server(tracker, log_dir):
    return _start(tracker, log_dir, "auth on")


MODES = {"auth off": "open_server", "auth on": "secured_server"}


@pytest.fixture(params=list(MODES))
def server(request):
    # Function-level, so the tests run in the order written and the matrix prints last.
    return request.getfixturevalue(MODES[request.param])


def call(srv, method: str, path: str, headers: dict | None = None, body: str | None = None):
    return wire.request(method, srv.url(path), {**srv.auth, **(headers or {})}, body)


def registry(srv) -> tuple[str, str]:
    """The full registry as JSON, and its apps__hashcode."""
    r = call(srv, "GET", "/apps", {"Accept": "application/json"})
    assert r.status == 200, f"GET /apps -> {r.status}"
    return r.text, r.json()["applications"]["apps__hashcode"]


def register(srv, inst) -> None:
    r = call(srv, "POST", f"/apps/{inst.app}", {"Content-Type": "application/json"}, inst.body())
    assert r.status == 204, f"register {inst.instance_id} -> {r.status}: {r.text}"


def _instance_path(inst, suffix: str = "") -> str:
    return f"/apps/{inst.app}/{wire.quote(inst.instance_id)}{suffix}"


def endpoints(victim, newcomer):
    """Each write endpoint: (name, method, path, body or None). Every one would change the
    registry if accepted: register adds ``newcomer``, the rest change or remove ``victim``."""
    batch = {"replicationList": [{"appName": victim.app, "id": victim.instance_id,
                                  "lastDirtyTimestamp": victim.dirty, "action": "Cancel"}]}
    stamped = {"replicationList": [{"appName": victim.app, "id": victim.instance_id, "action": "Cancel",
                                    "stamps": {}}]}
    return [
        ("register", "POST", f"/apps/{newcomer.app}", newcomer.body()),
        ("peer batch", "POST", "/peerreplication/batch", json.dumps(batch)),
        ("stamped", "POST", "/peerreplication/stamped", json.dumps(stamped)),
        ("status PUT", "PUT", _instance_path(victim, f"/status?value=OUT_OF_SERVICE&lastDirtyTimestamp={victim.dirty}"), None),
        ("override DELETE", "DELETE", _instance_path(victim, "/status?value=DOWN"), None),
        ("metadata PUT", "PUT", _instance_path(victim, "/metadata?owner=mallory"), None),
        ("heartbeat PUT", "PUT", _instance_path(victim, "?status=DOWN"), None),
        ("cancel DELETE", "DELETE", _instance_path(victim), None),
    ]


def test_every_forgeable_write_is_refused_and_changes_nothing(server):
    victim = new_instance("xsite-victim")
    newcomer = new_instance("xsite-newcomer")
    register(server, victim)
    # An override to delete, so that the DELETE …/status row has something to undo.
    r = call(server, "PUT", _instance_path(victim, "/status?value=OUT_OF_SERVICE"))
    assert r.status == 200
    before = registry(server)
    failures = []
    for name, method, path, body in endpoints(victim, newcomer):
        for column, (content_type, origin) in ATTACKS.items():
            if column in BODY_ONLY and body is None:
                _RESULTS.setdefault((server.mode, name), []).append("-")
                continue
            headers = {}
            if content_type is not None and body is not None:
                headers["Content-Type"] = content_type
            if origin is not None:
                headers["Origin"] = origin
            r = call(server, method, path, headers, body)
            _RESULTS.setdefault((server.mode, name), []).append(str(r.status))
            after = registry(server)
            if not 400 <= r.status < 500:
                failures.append(f"{name} × {column}: {r.status} {r.text[:120]!r}")
            if after != before:
                failures.append(f"{name} × {column}: the registry changed ({before[1]} -> {after[1]})")
    assert not failures, "\n".join(failures)


def test_the_servers_own_origin_may_write(server):
    inst = new_instance("xsite-own")
    own = {"Origin": f"http://127.0.0.1:{server.port}", "Content-Type": "application/json"}
    r = call(server, "POST", f"/apps/{inst.app}", own, inst.body())
    assert r.status == 204, r.text
    r = call(server, "PUT", _instance_path(inst, "/status?value=OUT_OF_SERVICE"), {"Origin": own["Origin"]})
    assert r.status == 200, r.text
    r = call(server, "DELETE", _instance_path(inst), {"Origin": own["Origin"]})
    assert r.status == 200, r.text
    assert inst.instance_id not in registry(server)[0]


def test_an_allowed_origin_may_write(server):
    inst = new_instance("xsite-allowed")
    allowed = {"Origin": ALLOWED, "Sec-Fetch-Site": "cross-site", "Content-Type": "application/json"}
    r = call(server, "POST", f"/apps/{inst.app}", allowed, inst.body())
    assert r.status == 204, r.text
    assert inst.instance_id in registry(server)[0]
    r = call(server, "DELETE", _instance_path(inst), {"Origin": ALLOWED})
    assert r.status == 200, r.text
    assert inst.instance_id not in registry(server)[0]


def test_a_refusal_is_logged_once_at_info_with_method_path_and_the_quoted_origin(open_server):
    marker = new_instance("xsite-log").instance_id
    origin = f'http://evil.example/"{marker}'
    r = call(open_server, "DELETE", f"/apps/XSITE-LOG/{wire.quote(marker)}", {"Origin": origin})
    assert r.status == 403

    def logged():
        lines = [line for line in Path(open_server.proc.log_path).read_text(errors="replace").splitlines()
                 if "refused cross-site write (403)" in line and marker in line]
        return lines or None

    lines = wait_until("the refusal is logged", logged, 10.0, logs=[open_server.proc])
    assert len(lines) == 1, lines
    line = lines[0]
    assert "INFO" in line and 'method=DELETE' in line, line
    assert f'path="/eureka/apps/XSITE-LOG/{wire.quote(marker)}"' in line, line
    assert f'origin="http://evil.example/\\"{marker}"' in line, line


def test_print_the_matrix(capsys):
    """The table of the closing note: the status of each cell (``-``: no body to type)."""
    if not _RESULTS:
        pytest.skip("the matrix did not run")
    columns = list(ATTACKS)
    width = max(len(name) for _, name in _RESULTS) + 2
    lines = ["", f"{'mode':<9}{'endpoint':<{width}}" + "".join(f"{c:>16}" for c in columns)]
    for (mode, name), cells in _RESULTS.items():
        lines.append(f"{mode:<9}{name:<{width}}" + "".join(f"{c:>16}" for c in cells))
    with capsys.disabled():
        print("\n".join(lines))
