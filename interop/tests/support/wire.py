"""Raw HTTP on 127.0.0.1 with full control over the headers (http.client, no magic).

Requests carry exactly the headers given (plus Host / Content-Length, which http.client
adds); a missing ``Accept`` stays missing, as with py-eureka-client.

``https://`` URLs need ``context``: an ``ssl.SSLContext`` that verifies with the test CA (and may
carry a client certificate), see support/pki.py. Without one an https URL is an error rather
than a request verified against the system's CAs.
"""
from __future__ import annotations

import gzip
import http.client
import json
import ssl
import urllib.parse
from dataclasses import dataclass, field
from typing import Optional


def quote(segment: str, safe: str = "") -> str:
    """Percent-encode one path segment (``:`` becomes ``%3A``, like py-eureka-client)."""
    return urllib.parse.quote(segment, safe=safe)


@dataclass
class Response:
    status: int
    headers: dict            # lower-case names -> value (last one wins)
    body: bytes              # already gunzipped when Content-Encoding: gzip
    content_encoding: Optional[str] = None
    request: str = ""

    @property
    def text(self) -> str:
        return self.body.decode("utf-8", "replace")

    def json(self, ordered: bool = False):
        if ordered:
            return json.loads(self.body, object_pairs_hook=OrderedPairs)
        return json.loads(self.body)

    @property
    def media_type(self) -> str:
        """Content-Type without parameters, lower case ('' if absent)."""
        return self.headers.get("content-type", "").split(";")[0].strip().lower()


class OrderedPairs(list):
    """A JSON object kept as its list of (key, value) pairs, so key order can be compared."""

    def __init__(self, pairs):
        super().__init__(pairs)

    def get(self, key, default=None):
        for k, v in self:
            if k == key:
                return v
        return default

    def keys(self):
        return [k for k, _ in self]


def request(method: str, url: str, headers: Optional[dict] = None, body: Optional[bytes | str] = None,
            timeout: float = 10.0, context: Optional[ssl.SSLContext] = None) -> Response:
    parts = urllib.parse.urlsplit(url)
    assert parts.hostname in ("127.0.0.1", "localhost"), f"tests talk to loopback only, not {url}"
    path = parts.path or "/"
    if parts.query:
        path += "?" + parts.query
    if isinstance(body, str):
        body = body.encode("utf-8")
    hdrs = dict(headers or {})
    if parts.scheme == "https":
        assert context is not None, f"{url}: an https request needs an ssl.SSLContext (support/pki.py)"
        conn = http.client.HTTPSConnection(parts.hostname, parts.port, timeout=timeout, context=context)
    else:
        assert parts.scheme == "http", url
        conn = http.client.HTTPConnection(parts.hostname, parts.port, timeout=timeout)
    try:
        conn.putrequest(method, path, skip_accept_encoding=True)
        for k, v in hdrs.items():
            conn.putheader(k, v)
        if body is not None:
            conn.putheader("Content-Length", str(len(body)))
        elif method in ("PUT", "POST"):
            conn.putheader("Content-Length", "0")
        conn.endheaders(body)
        resp = conn.getresponse()
        raw = resp.read()
        rh = {k.lower(): v for k, v in resp.getheaders()}
        enc = rh.get("content-encoding")
        if enc and "gzip" in enc.lower() and raw:
            raw = gzip.decompress(raw)
        return Response(resp.status, rh, raw, enc, request=f"{method} {path}")
    finally:
        conn.close()


def get(url: str, accept: Optional[str] = None, timeout: float = 10.0, gzip_ok: bool = False,
        headers: Optional[dict] = None, context: Optional[ssl.SSLContext] = None) -> Response:
    h = dict(headers or {})
    if accept:
        h["Accept"] = accept
    if gzip_ok:
        h["Accept-Encoding"] = "gzip"
    return request("GET", url, h, timeout=timeout, context=context)
