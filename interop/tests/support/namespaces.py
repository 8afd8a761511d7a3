"""Namespaces of one Heureka (issue 36, docs/namespaces.md) as its clients are given them.

A namespace ``team-a`` of a Heureka on port P is the whole Eureka API at
``http://127.0.0.1:P/ns/team-a/eureka``: a client needs that URL and nothing else. A
``Namespace`` has the attributes the suite's client apps read from a registry (``base_url`` for
py-eureka-client, ``service_url`` for Spring's defaultZone), so it is passed to
``client_factory`` where a server would be. Plain HTTP only: no suite test needs TLS here.
"""
from __future__ import annotations

import json
from typing import Optional

from . import wire
from .cluster import JSON, View, basic_auth, view_of_doc
from .procs import RegistryServer

# heureka.namespaces.path-prefix, default.
PREFIX = "/ns"


class Namespace:
    """One namespace of ``server``; ``credentials`` (user, password) go on every call. Without a
    name it is the unprefixed ``/eureka``: the namespace ``default`` as today's clients see it."""

    tls = None

    def __init__(self, server: RegistryServer, name: Optional[str] = None,
                 credentials: Optional[tuple[str, str]] = None):
        self.server = server
        self.name = name
        self.credentials = credentials

    def __repr__(self) -> str:
        return f"<namespace {self.name or '(unprefixed)'} of :{self.port}>"

    @property
    def host(self) -> str:
        return self.server.host

    @property
    def port(self) -> int:
        return self.server.port

    @property
    def base_url(self) -> str:
        """Service URL as py-eureka-client takes it (no trailing slash)."""
        prefix = f"{PREFIX}/{self.name}" if self.name is not None else ""
        return f"http://{self.host}:{self.port}{prefix}/eureka"

    @property
    def service_url(self) -> str:
        """Spring's defaultZone form (trailing slash)."""
        return self.base_url + "/"

    def url(self, path: str) -> str:
        return self.base_url + path

    def as_user(self, credentials: Optional[tuple[str, str]]) -> "Namespace":
        return Namespace(self.server, self.name, credentials)

    def call(self, method: str, path: str, body: Optional[str] = None,
             headers: Optional[dict] = None) -> wire.Response:
        """``method`` on ``{base_url}{path}`` with this namespace's credentials, if any."""
        return request(method, self.url(path), self.credentials, body, headers)

    def view(self) -> View:
        """The namespace's full registry (``GET .../apps/``, JSON)."""
        r = self.call("GET", "/apps/", headers=JSON)
        assert r.status == 200, f"{r.request} -> {r.status}: {r.text[:500]}"
        return view_of_doc(r.json())


def request(method: str, url: str, credentials: Optional[tuple[str, str]] = None,
            body: Optional[str] = None, headers: Optional[dict] = None) -> wire.Response:
    h = dict(headers or {})
    if credentials:
        h["Authorization"] = basic_auth(credentials)
    return wire.request(method, url, h, body)


def listing(server: RegistryServer, credentials: Optional[tuple[str, str]] = None) -> dict[str, dict]:
    """``GET /ns``: every namespace the caller may use, by name (each entry as served)."""
    r = request("GET", f"http://{server.host}:{server.port}{PREFIX}", credentials, headers=JSON)
    assert r.status == 200, f"{r.request} -> {r.status}: {r.text[:500]}"
    doc = json.loads(r.body)
    return {entry["name"]: entry for entry in doc["namespaces"]}
