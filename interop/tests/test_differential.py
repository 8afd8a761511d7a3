"""Differential test: the same scripted scenario against the real Spring Cloud Eureka server
(the reference) and against Heureka, compared field for field.

Scenario (raw HTTP, bodies and headers as the real clients send them, tests/data/):
  registrations from a Spring RestClient app, a Jersey3 (Netflix) client, py-eureka-client,
  eureka-js-client (lower-case app in the path), fargo JSON and fargo XML; a heartbeat for most
  of them (each in its client's own style); a status override (OUT_OF_SERVICE) plus a heartbeat
  after it; a metadata update; a cancel.
Then every read endpoint is fetched in JSON (Accept: application/json) and XML (no Accept) from
both servers and compared after normalisation (support/compare.py): timestamps become typed
placeholders that keep their relations (0, =registration, future, past), versions__delta of
deltas is masked, applications/instances are sorted; key order, element order, JSON types and
the key sets are compared exactly.
Finally the status codes (and 400 texts) of edge cases are compared.

Known, accepted differences go into ALLOWED below, each with its reason (mirrored in
docs/compat.md). ``--diff-against=java`` compares the reference with a second reference
server: a self-test of the harness (it must pass with an empty allow-list).
"""
from __future__ import annotations

import json
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Optional

import pytest

from support import compare, wire
from support.compare import Allowed

DATA = Path(__file__).resolve().parent / "data"

# the failure messages carry both sides; the servers' logs stay in the tmp dir
pytestmark = pytest.mark.no_process_logs


# ---------------------------------------------------------------------------------------
# Allow-list: differences that remain on purpose. Each entry: request regex (e.g.
# r"GET /eureka/apps/delta \(json\)"), difference-path regex, reason. Keep it short and
# specific; the lead mirrors it into docs/compat.md.
# ---------------------------------------------------------------------------------------
ALLOWED: list[Allowed] = [
    # 1. Bodies of 404 answers. The reference's servlet container (Spring Boot's /error
    #    controller) turns Jersey's empty 404 into a JSON error document
    #    {"timestamp","status":404,"error":"Not Found","path"}; Netflix's own server sends an empty
    #    body, and so does Heureka. No client reads 404 bodies (Spring's client wraps and ignores
    #    them; py-eureka-client, eureka-js-client and fargo look at the status only).
    Allowed(request=r"^(edge|step) \S+ 404$", path=r"^(body|content-type)$",
            reason="404 body: Spring Boot error JSON in the reference, empty in Heureka/Netflix"),
    # 2. Content-Type of the 400 validation messages. Same text ("Missing hostname", ...); the
    #    reference labels that plain text with the JAX-RS-negotiated type (application/xml when
    #    there is no Accept header), Heureka says text/plain. Clients only look at the status.
    Allowed(request=r"^edge register-\S+ 400$", path=r"^content-type$",
            reason="400 validation text is labelled application/xml|json by the reference, text/plain by Heureka"),
    # 3. Order of the keys inside "metadata" (JSON) / children of <metadata> (XML). The reference
    #    writes them in java.util.HashMap iteration order (hash buckets, neither insertion nor
    #    alphabetical order); every client reads metadata into a map, so the order carries no meaning.
    Allowed(request=r"^GET ", path=r"(\.|/)metadata$", what=r"order differs",
            reason="metadata key order is Java HashMap iteration order in the reference"),
    # 4. leaseInfo.lastRenewalTimestamp (docs/compat.md #2). Eureka shows renewal time + duration
    #    (its lease-expiry bug), Heureka by default the time of the last renewal. The
    #    "legacy-lease" profile (heureka.legacy-lease-expiry=true) must match exactly, so this
    #    entry is limited to the default profile.
    Allowed(request=r"^GET ", path=r"leaseInfo(\.|/)lastRenewalTimestamp$", profile="default",
            reason="compat #2: lastRenewalTimestamp = last renewal, not renewal + duration"),
    # 5. A JSON register body without "app" (docs/compat.md #6). The reference's codec fails to
    #    parse it (400 {"error": "cannot parse request body"}, application/json); Heureka parses it
    #    and reports the validation failure (400 "Missing appName", text/plain). Same status;
    #    clients never send such a body and do not read 400 bodies.
    Allowed(request=r"^edge register-missing-app 400$", path=r"^(body|content-type)$",
            reason="compat #6: missing app is a validation message, not a parse error"),
    # 6. <status> in the XML of the two uncached single-instance reads (docs/compat.md #14). The
    #    reference never sets the request's API version on these resources, so XStream applies
    #    Eureka's V1 rule and writes OUT_OF_SERVICE and UNKNOWN as DOWN (overriddenstatus stays
    #    right). Its JSON and every cached XML read show the real status, and so does Heureka.
    Allowed(request=r"^GET /eureka/(apps/[^/]+/[^/]+|instances/[^/]+) \(xml\)$", path=r"(\.|/)status$",
            reason="compat #14: single-instance XML shows the real status, not V1's DOWN"),
]


# ---------------------------------------------------------------------------------------
# Bodies and headers as recorded from the real clients
# ---------------------------------------------------------------------------------------
def data(name: str) -> str:
    return (DATA / name).read_text().strip()


def jersey3_second_instance() -> str:
    """jersey3.json, re-keyed as a second DEMO-CLIENT instance (host-b, port 8081)."""
    doc = json.loads(data("jersey3.json"))
    inst = doc["instance"]
    inst["instanceId"] = "host-b:demo-client:8081"
    inst["hostName"] = "host-b"
    inst["port"]["$"] = 8081
    for k in ("homePageUrl", "statusPageUrl", "healthCheckUrl"):
        inst[k] = inst[k].replace("host-a:8080", "host-b:8081")
    return json.dumps(doc, separators=(",", ":"))


def fargo_xml_second_instance() -> str:
    return data("fargo_xml.xml").replace("go-probe-1", "go-probe-2")


SPRING_DIRTY = "1796008391555"     # lastDirtyTimestamp in spring_restclient.json
JERSEY_DIRTY = "1796008392009"     # jersey3.json
PY_DIRTY = "1796007824248"         # python.json
CLIENT_DIRTY = frozenset({SPRING_DIRTY, JERSEY_DIRTY, PY_DIRTY})

# request headers per client (clients.md §1-§4); http.client adds Host and Content-Length
H_SPRING = {"Accept": "application/json", "Content-Type": "application/json", "Accept-Encoding": "gzip"}
H_JERSEY = {"Accept": "application/json", "Content-Type": "application/json", "Accept-Encoding": "gzip"}
H_PY = {"Content-Type": "application/json", "Accept-Encoding": "gzip, deflate", "Connection": "close"}
H_PY_PUT = {"Accept-Encoding": "gzip, deflate", "Connection": "close"}
H_JS = {"accept": "application/json", "content-type": "application/json", "accept-encoding": "gzip, deflate"}
H_JS_PUT = {"accept-encoding": "gzip, deflate"}
H_GO_JSON = {"User-Agent": "Go-http-client/1.1", "Accept": "application/json",
             "Content-Type": "application/json", "Accept-Encoding": "gzip"}
H_GO_XML = {"User-Agent": "Go-http-client/1.1", "Accept": "application/xml",
            "Content-Type": "application/xml", "Accept-Encoding": "gzip"}

SPRING_ID = "host-a:demo-client:8080"
JERSEY_ID = "host-b:demo-client:8081"
PY_ID = "127.0.0.1:py-probe:9090"
PY_ID_ENC = "127.0.0.1%3Apy-probe%3A9090"    # py-eureka-client percent-encodes ':'


@dataclass
class Step:
    id: str
    method: str
    path: str                       # below /eureka
    headers: dict
    body: Optional[str] = None
    expect: Optional[int] = None    # what the reference answers (checked, proves the step is real)


SCENARIO = [
    Step("register-spring-restclient", "POST", "/apps/DEMO-CLIENT", H_SPRING, data("spring_restclient.json"), 204),
    Step("register-jersey3", "POST", "/apps/DEMO-CLIENT", H_JERSEY, jersey3_second_instance(), 204),
    Step("register-python", "POST", "/apps/PY-PROBE", H_PY, data("python.json"), 204),
    Step("register-js-lowercase-app", "POST", "/apps/js-probe", H_JS, data("js.json"), 204),
    Step("register-fargo-json", "POST", "/apps/GO-PROBE", H_GO_JSON, data("fargo_json.json"), 204),
    Step("register-fargo-xml", "POST", "/apps/GO-PROBE", H_GO_XML, fargo_xml_second_instance(), 204),
    # heartbeats, each as its client sends it
    Step("heartbeat-spring-restclient", "PUT", f"/apps/DEMO-CLIENT/{SPRING_ID}?status=UP&lastDirtyTimestamp={SPRING_DIRTY}",
         {"Accept": "application/json", "Content-Type": "application/json", "Accept-Encoding": "gzip"}, None, 200),
    Step("heartbeat-jersey3-body-{}", "PUT", f"/apps/DEMO-CLIENT/{JERSEY_ID}?status=UP&lastDirtyTimestamp={JERSEY_DIRTY}",
         H_JERSEY, "{}", 200),
    Step("heartbeat-python", "PUT", f"/apps/PY-PROBE/{PY_ID_ENC}?status=UP&lastDirtyTimestamp={PY_DIRTY}",
         H_PY_PUT, None, 200),
    Step("heartbeat-js-no-query", "PUT", "/apps/js-probe/js-probe-1", H_JS_PUT, None, 200),
    Step("heartbeat-fargo-no-query", "PUT", "/apps/GO-PROBE/go-probe-1", {"User-Agent": "Go-http-client/1.1"}, None, 200),
    # operator status override, then the client keeps heartbeating as UP
    Step("status-override-out-of-service", "PUT",
         f"/apps/DEMO-CLIENT/{JERSEY_ID}/status?value=OUT_OF_SERVICE&lastDirtyTimestamp={JERSEY_DIRTY}",
         H_JERSEY, "{}", 200),
    Step("heartbeat-after-override", "PUT", f"/apps/DEMO-CLIENT/{JERSEY_ID}?status=UP&lastDirtyTimestamp={JERSEY_DIRTY}",
         H_JERSEY, "{}", 200),
    # override on another instance, then removed again (Spring's CANCEL_OVERRIDE path): the
    # status becomes UNKNOWN and the next heartbeat is told to re-register (404)
    Step("status-override-python", "PUT",
         f"/apps/PY-PROBE/{PY_ID_ENC}/status?value=OUT_OF_SERVICE&lastDirtyTimestamp={PY_DIRTY}", H_PY_PUT, None, 200),
    Step("delete-status-override-python", "DELETE",
         f"/apps/PY-PROBE/{PY_ID_ENC}/status?lastDirtyTimestamp={PY_DIRTY}", H_PY_PUT, None, 200),
    Step("heartbeat-after-override-removed", "PUT",
         f"/apps/PY-PROBE/{PY_ID_ENC}?status=UP&lastDirtyTimestamp={PY_DIRTY}", H_PY_PUT, None, 404),
    # metadata update (fargo's AddMetadataString; merges into the stored instance)
    Step("metadata-update", "PUT", "/apps/JS-PROBE/js-probe-1/metadata?k1=v1&team=changed",
         {"User-Agent": "Go-http-client/1.1"}, None, 200),
    # cancel
    Step("cancel-fargo-json", "DELETE", "/apps/GO-PROBE/go-probe-1", {"User-Agent": "Go-http-client/1.1"}, None, 200),
]

# documents fetched from the empty registry, before the scenario
EMPTY_FETCHES = [
    ("/apps/", False),
    ("/apps/delta", True),
    ("/vips/demo-client", False),
]

# documents fetched after the scenario, each in JSON and XML
FETCHES = [
    ("/apps/", False),
    ("/apps", False),            # eureka-js-client / fargo style, no trailing slash
    ("/v2/apps/", False),        # Netflix WAR layout (eureka-js-client's default servicePath)
    ("/apps/delta", True),
    ("/apps/DEMO-CLIENT", False),
    ("/apps/PY-PROBE", False),
    ("/apps/JS-PROBE", False),
    ("/apps/GO-PROBE", False),
    (f"/apps/DEMO-CLIENT/{SPRING_ID}", False),
    (f"/apps/DEMO-CLIENT/{JERSEY_ID}", False),
    (f"/apps/PY-PROBE/{PY_ID_ENC}", False),
    ("/apps/JS-PROBE/js-probe-1", False),
    ("/apps/GO-PROBE/go-probe-2", False),
    (f"/instances/{SPRING_ID}", False),
    ("/vips/demo-client", False),
    ("/vips/py-probe", False),
    ("/vips/js-probe", False),
    ("/vips/no-such-vip", False),
    ("/svips/demo-client", False),
]
FORMATS = {"json": {"Accept": "application/json", "Accept-Encoding": "gzip"},
           "xml": {"Accept-Encoding": "gzip"}}     # no Accept at all, like py-eureka-client


def _missing(field_name: str) -> str:
    doc = json.loads(data("python.json"))
    del doc["instance"][field_name]
    return json.dumps(doc)


def _with(**changes) -> str:
    doc = json.loads(data("python.json"))
    doc["instance"].update(changes)
    return json.dumps(doc)


def _dc_without_name() -> str:
    doc = json.loads(data("python.json"))
    del doc["instance"]["dataCenterInfo"]["name"]
    return json.dumps(doc)


def _without_any_id() -> str:
    doc = json.loads(data("python.json"))
    del doc["instance"]["instanceId"]
    del doc["instance"]["hostName"]
    return json.dumps(doc)


EDGE_CASES = [
    Step("renew-unknown-app", "PUT", "/apps/NO-SUCH-APP/nope-1?status=UP&lastDirtyTimestamp=1", H_SPRING, None, 404),
    Step("renew-unknown-instance", "PUT", "/apps/DEMO-CLIENT/nope-1?status=UP&lastDirtyTimestamp=1", H_SPRING, None, 404),
    Step("cancel-unknown", "DELETE", "/apps/DEMO-CLIENT/nope-1", H_SPRING, None, 404),
    Step("cancel-already-cancelled", "DELETE", "/apps/GO-PROBE/go-probe-1", H_SPRING, None, 404),
    Step("status-override-unknown", "PUT", "/apps/DEMO-CLIENT/nope-1/status?value=OUT_OF_SERVICE&lastDirtyTimestamp=1",
         H_SPRING, None, 404),
    Step("get-unknown-app-json", "GET", "/apps/NO-SUCH-APP", {"Accept": "application/json"}, None, 404),
    Step("get-unknown-app-xml", "GET", "/apps/NO-SUCH-APP", {}, None, 404),
    Step("get-unknown-instance", "GET", "/apps/DEMO-CLIENT/nope-1", {"Accept": "application/json"}, None, 404),
    Step("get-instance-of-unknown-app", "GET", "/apps/NO-SUCH-APP/nope-1", {"Accept": "application/json"}, None, 404),
    Step("get-cancelled-instance", "GET", "/apps/GO-PROBE/go-probe-1", {"Accept": "application/json"}, None, 404),
    Step("renew-with-older-dirty-timestamp", "PUT",
         f"/apps/DEMO-CLIENT/{SPRING_ID}?status=UP&lastDirtyTimestamp={int(SPRING_DIRTY) - 1}", H_SPRING, None, 200),
    Step("renew-with-newer-dirty-timestamp", "PUT",
         f"/apps/DEMO-CLIENT/{SPRING_ID}?status=UP&lastDirtyTimestamp={int(SPRING_DIRTY) + 1}", H_SPRING, None, 404),
    Step("register-missing-instanceId-and-hostName", "POST", "/apps/PY-PROBE", H_PY, _without_any_id(), 400),
    Step("register-missing-hostName", "POST", "/apps/PY-PROBE", H_PY, _missing("hostName"), 400),
    Step("register-missing-ipAddr", "POST", "/apps/PY-PROBE", H_PY, _missing("ipAddr"), 400),
    Step("register-missing-app", "POST", "/apps/PY-PROBE", H_PY, _missing("app"), 400),
    Step("register-missing-dataCenterInfo", "POST", "/apps/PY-PROBE", H_PY, _missing("dataCenterInfo"), 400),
    Step("register-dataCenterInfo-without-name", "POST", "/apps/PY-PROBE", H_PY, _dc_without_name(), 400),
    Step("register-mismatched-app-name", "POST", "/apps/PY-PROBE", H_PY, _with(app="OTHER-APP"), 400),
]


# ---------------------------------------------------------------------------------------
# Running the scenario
# ---------------------------------------------------------------------------------------
@dataclass
class Fetched:
    response: wire.Response
    fetched_at_ms: int


@dataclass
class Run:
    kind: str
    steps: dict = field(default_factory=dict)      # id -> Response
    docs: dict = field(default_factory=dict)       # (path, fmt) -> Fetched
    edges: dict = field(default_factory=dict)      # id -> Response


def send(server, step: Step) -> wire.Response:
    return wire.request(step.method, server.url(step.path), step.headers, step.body)


def run_scenario(server) -> Run:
    run = Run(server.kind)
    for path, _ in EMPTY_FETCHES:
        for fmt, headers in FORMATS.items():
            now = int(time.time() * 1000)
            run.docs[("empty:" + path, fmt)] = Fetched(wire.get(server.url(path), headers=headers), now)
    for step in SCENARIO:
        run.steps[step.id] = send(server, step)
    for path, _ in FETCHES:
        for fmt, headers in FORMATS.items():
            now = int(time.time() * 1000)
            run.docs[(path, fmt)] = Fetched(wire.get(server.url(path), headers=headers), now)
    for step in EDGE_CASES:
        run.edges[step.id] = send(server, step)
    return run


# Heureka configurations the scenario is compared in (test ids start with the profile name)
PROFILES = {
    "default": {},                                             # what users get out of the box
    "legacy-lease": {"heureka.legacy-lease-expiry": "true"},   # docs/compat.md #2: Eureka's lease arithmetic
}


@pytest.fixture(scope="module")
def reference_run(server_factory) -> Run:
    return run_scenario(server_factory("java"))


@pytest.fixture(scope="module", params=list(PROFILES))
def runs(request, server_factory, reference_run):
    other_kind = request.config.getoption("--diff-against")
    profile = request.param
    if other_kind != "heureka" and profile != "default":
        pytest.skip("profiles are Heureka settings")
    other = server_factory(other_kind, settings=PROFILES[profile] if other_kind == "heureka" else None)
    return reference_run, run_scenario(other), profile


def describe(resp: wire.Response) -> str:
    return (f"{resp.status} content-type={resp.headers.get('content-type')!r} "
            f"content-encoding={resp.content_encoding!r} body={resp.text[:300]!r}")


def normalise_error_body(resp: wire.Response) -> str:
    """Body text; a Spring Boot error document ({"timestamp":…,"status":…,"error":…,"path":…},
    what the reference's servlet container renders for Jersey's empty 404s) gets its timestamp masked."""
    text = resp.text.strip()
    if resp.media_type == "application/json" and text.startswith("{"):
        try:
            doc = compare.parse_json(resp.body)
        except ValueError:
            return text
        if isinstance(doc, wire.OrderedPairs) and "timestamp" in doc.keys():
            doc = wire.OrderedPairs([(k, "<timestamp>" if k == "timestamp" else v) for k, v in doc])
            return json.dumps(compare.to_plain(doc))
    return text


def compare_simple(title: str, ref: wire.Response, got: wire.Response, step: Step, profile: str):
    """Status, body text and media type of a write / edge-case request."""
    assert ref.status == step.expect, \
        f"the REFERENCE server answered {ref.status} to {title}, the scenario expects {step.expect}: {describe(ref)}"
    diffs = []
    if got.status != ref.status:
        diffs.append(compare.Difference("status", f"status: java {ref.status}, heureka {got.status}"))
    if normalise_error_body(ref) != normalise_error_body(got):
        diffs.append(compare.Difference("body", f"body: java {ref.text[:300]!r}, heureka {got.text[:300]!r}"))
    if ref.body and ref.media_type != got.media_type:
        diffs.append(compare.Difference("content-type",
                                        f"content-type: java {ref.media_type!r}, heureka {got.media_type!r}"))
    remaining, _ = compare.split_allowed(f"{title} {ref.status}", diffs, ALLOWED, profile)
    if remaining:
        pytest.fail(f"[heureka profile {profile}] {title}: {step.method} /eureka{step.path}\n"
                    + "\n".join(f"  - {d.what}" for d in remaining)
                    + f"\n  java:    {describe(ref)}\n  heureka: {describe(got)}", pytrace=False)


@pytest.mark.parametrize("step", SCENARIO, ids=[s.id for s in SCENARIO])
def test_scenario_step_answers_like_reference(runs, step):
    ref, other, profile = runs
    compare_simple(f"step {step.id}", ref.steps[step.id], other.steps[step.id], step, profile)


@pytest.mark.parametrize("step", EDGE_CASES, ids=[s.id for s in EDGE_CASES])
def test_edge_case_status_like_reference(runs, step):
    ref, other, profile = runs
    compare_simple(f"edge {step.id}", ref.edges[step.id], other.edges[step.id], step, profile)


DOC_CASES = ([("empty:" + path, is_delta, fmt) for path, is_delta in EMPTY_FETCHES for fmt in FORMATS]
             + [(path, is_delta, fmt) for path, is_delta in FETCHES for fmt in FORMATS])


@pytest.mark.parametrize("path,is_delta,fmt", DOC_CASES, ids=[f"{p}-{f}" for p, _, f in DOC_CASES])
def test_document_matches_reference(runs, path, is_delta, fmt):
    ref_run, other_run, profile = runs
    ref, got = ref_run.docs[(path, fmt)], other_run.docs[(path, fmt)]
    title = (f"GET /eureka{path[len('empty:'):]} ({fmt}, empty registry)" if path.startswith("empty:")
             else f"GET /eureka{path} ({fmt})")
    r, g = ref.response, got.response
    assert r.status == 200, f"the REFERENCE answered {describe(r)} to {title}"
    diffs: list[compare.Difference] = []
    if g.status != r.status:
        diffs.append(compare.Difference("HTTP status", "differs", r.status, g.status))
    if r.media_type != g.media_type:
        diffs.append(compare.Difference("Content-Type", "differs", r.media_type, g.media_type))
    if (r.content_encoding or "") != (g.content_encoding or ""):
        diffs.append(compare.Difference("Content-Encoding", "differs (request had Accept-Encoding: gzip)",
                                        r.content_encoding, g.content_encoding))
    a_text = b_text = ""
    if g.status == 200:
        ctx_r = compare.Context(ref.fetched_at_ms, CLIENT_DIRTY, is_delta)
        ctx_g = compare.Context(got.fetched_at_ms, CLIENT_DIRTY, is_delta)
        if fmt == "json":
            a = compare.normalise_json(compare.parse_json(r.body), ctx_r)
            try:
                b = compare.normalise_json(compare.parse_json(g.body), ctx_g)
            except ValueError as exc:
                diffs.append(compare.Difference("body", f"heureka's body is not JSON: {exc}", r.text[:200], g.text[:200]))
                b = None
            if b is not None:
                diffs.extend(compare.diff_json(a, b))
                a_text, b_text = compare.pretty_json(a), compare.pretty_json(b)
        else:
            a = compare.normalise_xml(compare.parse_xml(r.body), ctx_r)
            try:
                b = compare.normalise_xml(compare.parse_xml(g.body), ctx_g)
            except Exception as exc:  # noqa: BLE001 - ParseError
                diffs.append(compare.Difference("body", f"heureka's body is not XML: {exc}", r.text[:200], g.text[:200]))
                b = None
            if b is not None:
                diffs.extend(compare.diff_xml(a, b))
                a_text, b_text = compare.pretty_xml(a), compare.pretty_xml(b)
            # XStream writes no XML declaration; a client could not care less, but report it
            if r.text.lstrip().startswith("<?xml") != g.text.lstrip().startswith("<?xml"):
                diffs.append(compare.Difference("body", "XML declaration present in one only",
                                                r.text[:40], g.text[:40]))
    remaining, tolerated = compare.split_allowed(title, diffs, ALLOWED, profile)
    if remaining:
        pytest.fail(compare.report(f"[heureka profile {profile}] {title}", remaining, a_text, b_text, tolerated),
                    pytrace=False)
