"""Field-by-field comparison of Eureka documents from two servers (JSON and XML).

Both documents are parsed keeping order (JSON objects as lists of (key, value) pairs, XML
elements with their children in document order), values that differ by nature are replaced
by typed placeholders, applications / instances are sorted by name / instanceId (their order
is hash-map order in the reference), and everything else is compared exactly: the set and
order of keys, JSON value types, element order, attributes, text.
"""
from __future__ import annotations

import difflib
import json
import re
import xml.etree.ElementTree as ET
from dataclasses import dataclass, field
from typing import Any, Iterable, Optional

from .wire import OrderedPairs

LEASE_TIMESTAMPS = ("registrationTimestamp", "lastRenewalTimestamp", "evictionTimestamp", "serviceUpTimestamp")


@dataclass
class Context:
    """What the normaliser needs to know about the scenario."""
    fetched_at_ms: int                              # wall clock when the document was fetched
    client_dirty_timestamps: frozenset = frozenset()  # lastDirtyTimestamps the clients sent
    is_delta: bool = False


@dataclass
class Difference:
    path: str
    what: str
    java: Any = None
    heureka: Any = None

    def __str__(self):
        return f"{self.path}: {self.what}\n      java:    {short(self.java)}\n      heureka: {short(self.heureka)}"


def short(v, n=300):
    s = v if isinstance(v, str) else json.dumps(v, default=str) if not isinstance(v, OrderedPairs) else \
        json.dumps(to_plain(v))
    return s if len(s) <= n else s[:n] + "…"


def type_name(v) -> str:
    if v is None:
        return "null"
    if isinstance(v, bool):
        return "bool"
    if isinstance(v, (int, float)):
        return "number"
    if isinstance(v, str):
        return "string"
    if isinstance(v, (list, tuple)) and not isinstance(v, OrderedPairs):
        return "array"
    return "object"


# ---------------------------------------------------------------------------------------
# Timestamp placeholders
# ---------------------------------------------------------------------------------------
def ts_token(value, ctx: Context, registration: Optional[int] = None, kind: str = "ts") -> str:
    """'0' stays 0 (as given); any other timestamp becomes '<kind:relation>'.

    relation: '=registration' (only checked for lastRenewalTimestamp: equal to the lease's
    registrationTimestamp, i.e. never renewed since the (re-)registration), 'future' (later than the
    fetch: lastRenewalTimestamp = renewal + duration, Eureka's lease quirk) or 'past'.
    (serviceUpTimestamp is set a few ms after registrationTimestamp, so no equality for it.)
    """
    try:
        n = int(value)
    except (TypeError, ValueError):
        return f"<{kind}:not-a-number {value!r}>"
    if n == 0:
        return value
    if registration is not None and n == registration:
        rel = "=registration"
    elif n > ctx.fetched_at_ms + 500:
        rel = "future"
    else:
        rel = "past"
    return f"<{kind}:{rel}>"


def typed(token, original):
    """Keep the JSON type visible in the placeholder (a number shown as a string is a difference)."""
    if token == original:
        return original
    return f"{token}({type_name(original)})"


# ---------------------------------------------------------------------------------------
# JSON
# ---------------------------------------------------------------------------------------
def parse_json(body: bytes):
    return json.loads(body, object_pairs_hook=OrderedPairs)


def _set(pairs: OrderedPairs, key, value):
    for idx, (k, _) in enumerate(pairs):
        if k == key:
            pairs[idx] = (k, value)


def normalise_json(node, ctx: Context, parent_key: str = ""):
    """A normalised deep copy of a parsed (OrderedPairs) document."""
    if isinstance(node, OrderedPairs):
        out = OrderedPairs([(k, normalise_json(v, ctx, k)) for k, v in node])
        keys = out.keys()
        if parent_key == "leaseInfo":
            reg = node.get("registrationTimestamp")
            try:
                reg_n = int(reg) if reg is not None else None
            except (TypeError, ValueError):
                reg_n = None
            for k in LEASE_TIMESTAMPS:
                if k in keys:
                    v = node.get(k)
                    tok = ts_token(v, ctx, reg_n if k == "lastRenewalTimestamp" else None)
                    _set(out, k, typed(tok, v))
        if "instanceId" in keys or "hostName" in keys:      # an instance
            if "lastUpdatedTimestamp" in keys:
                v = node.get("lastUpdatedTimestamp")
                _set(out, "lastUpdatedTimestamp", typed(ts_token(v, ctx, kind="server-ts"), v))
            if "lastDirtyTimestamp" in keys:
                v = node.get("lastDirtyTimestamp")
                if str(v) not in ctx.client_dirty_timestamps:
                    _set(out, "lastDirtyTimestamp", typed(ts_token(v, ctx, kind="server-ts"), v))
        if "versions__delta" in keys and ctx.is_delta:
            v = node.get("versions__delta")
            _set(out, "versions__delta", typed("<delta-version>", v))
        # sort applications by name and instances by instanceId (hash-map order upstream)
        for k, v in list(out):
            if k == "application" and isinstance(v, list) and not isinstance(v, OrderedPairs):
                _set(out, k, sorted(v, key=lambda a: str(a.get("name")) if isinstance(a, OrderedPairs) else ""))
            if k == "instance" and isinstance(v, list) and not isinstance(v, OrderedPairs):
                _set(out, k, sorted(v, key=lambda i: str(i.get("instanceId")) if isinstance(i, OrderedPairs) else ""))
        return out
    if isinstance(node, list):
        return [normalise_json(x, ctx, parent_key) for x in node]
    return node


def _label(item) -> str:
    if isinstance(item, OrderedPairs):
        for k in ("instanceId", "name"):
            v = item.get(k)
            if v is not None:
                return f"[{v}]"
    return ""


def diff_json(a, b, path: str = "$") -> list[Difference]:
    out: list[Difference] = []
    ta, tb = type_name(a), type_name(b)
    if ta != tb:
        out.append(Difference(path, f"JSON type differs ({ta} vs {tb})", a, b))
        return out
    if isinstance(a, OrderedPairs):
        ka, kb = a.keys(), b.keys()
        missing = [k for k in ka if k not in kb]
        extra = [k for k in kb if k not in ka]
        if missing:
            out.append(Difference(path, f"keys missing in heureka: {missing}", ka, kb))
        if extra:
            out.append(Difference(path, f"extra keys in heureka: {extra}", ka, kb))
        common_a = [k for k in ka if k in kb]
        common_b = [k for k in kb if k in ka]
        if common_a != common_b:
            out.append(Difference(path, "key order differs", ka, kb))
        for k in common_a:
            out.extend(diff_json(a.get(k), b.get(k), f"{path}.{k}"))
        return out
    if isinstance(a, list):
        la, lb = [_label(x) for x in a], [_label(x) for x in b]
        if len(a) != len(b) or (any(la) and la != lb):
            out.append(Difference(path, f"array differs: {len(a)} items {la} vs {len(b)} items {lb}",
                                  la or len(a), lb or len(b)))
            if any(la):   # compare the items both have, by label
                idx_b = {l: i for i, l in enumerate(lb)}
                for i, l in enumerate(la):
                    if l in idx_b:
                        out.extend(diff_json(a[i], b[idx_b[l]], f"{path}{l}"))
                return out
        for i, (x, y) in enumerate(zip(a, b)):
            out.extend(diff_json(x, y, f"{path}{_label(x) or f'[{i}]'}"))
        return out
    if a != b:
        out.append(Difference(path, "value differs", a, b))
    return out


def to_plain(node):
    if isinstance(node, OrderedPairs):
        return {k: to_plain(v) for k, v in node}
    if isinstance(node, list):
        return [to_plain(x) for x in node]
    return node


def pretty_json(node) -> str:
    return json.dumps(to_plain(node), indent=1, ensure_ascii=False)


# ---------------------------------------------------------------------------------------
# XML
# ---------------------------------------------------------------------------------------
@dataclass
class XNode:
    tag: str
    attrs: list                     # [(name, value)] in document order
    text: Optional[str]             # leaf text ('' for an empty element); None when it has children
    children: list = field(default_factory=list)

    def child_text(self, tag) -> Optional[str]:
        for c in self.children:
            if c.tag == tag:
                return c.text
        return None


def parse_xml(body: bytes) -> XNode:
    root = ET.fromstring(body)

    def conv(e) -> XNode:
        kids = [conv(c) for c in e]
        text = None if kids else (e.text or "")
        if kids and e.text and e.text.strip():
            text = e.text.strip()     # mixed content: should not happen
        return XNode(e.tag, list(e.attrib.items()), text, kids)
    return conv(root)


def normalise_xml(n: XNode, ctx: Context, parent: str = "") -> XNode:
    kids = [normalise_xml(c, ctx, n.tag) for c in n.children]
    out = XNode(n.tag, list(n.attrs), n.text, kids)
    if n.tag == "leaseInfo":
        reg = out.child_text("registrationTimestamp")
        try:
            reg_n = int(reg) if reg is not None else None
        except ValueError:
            reg_n = None
        for c in out.children:
            if c.tag in LEASE_TIMESTAMPS and c.text is not None:
                c.text = str(ts_token(c.text, ctx, reg_n if c.tag == "lastRenewalTimestamp" else None))
    if n.tag == "instance":
        for c in out.children:
            if c.tag == "lastUpdatedTimestamp" and c.text:
                c.text = str(ts_token(c.text, ctx, kind="server-ts"))
            if c.tag == "lastDirtyTimestamp" and c.text and c.text not in ctx.client_dirty_timestamps:
                c.text = str(ts_token(c.text, ctx, kind="server-ts"))
    if n.tag == "applications" and ctx.is_delta:
        for c in out.children:
            if c.tag == "versions__delta":
                c.text = "<delta-version>"
    # sort applications by name, instances by id; keep everything else in place
    for tag, key in (("application", "name"), ("instance", "instanceId")):
        idx = [i for i, c in enumerate(out.children) if c.tag == tag]
        if idx:
            items = sorted((out.children[i] for i in idx), key=lambda c: c.child_text(key) or "")
            for i, item in zip(idx, items):
                out.children[i] = item
    return out


def _xlabel(n: XNode) -> str:
    for k in ("instanceId", "name"):
        v = n.child_text(k)
        if v is not None and n.tag in ("instance", "application"):
            return f"[{v}]"
    return ""


def diff_xml(a: XNode, b: XNode, path: str = "") -> list[Difference]:
    out: list[Difference] = []
    here = f"{path}/{a.tag}{_xlabel(a)}"
    if a.tag != b.tag:
        return [Difference(path or "/", "element differs", a.tag, b.tag)]
    if a.attrs != b.attrs:
        out.append(Difference(here, "attributes differ", a.attrs, b.attrs))
    if (a.text is None) != (b.text is None):
        out.append(Difference(here, "leaf vs element with children",
                              a.text if a.text is not None else [c.tag for c in a.children],
                              b.text if b.text is not None else [c.tag for c in b.children]))
        return out
    if a.text is not None:
        if a.text != b.text:
            out.append(Difference(here, "text differs", a.text, b.text))
        return out
    ta = [c.tag + _xlabel(c) for c in a.children]
    tb = [c.tag + _xlabel(c) for c in b.children]
    if ta != tb:
        missing = [t for t in ta if t not in tb]
        extra = [t for t in tb if t not in ta]
        what = []
        if missing:
            what.append(f"missing in heureka: {missing}")
        if extra:
            what.append(f"extra in heureka: {extra}")
        if not missing and not extra:
            what.append("child element order differs")
        out.append(Difference(here, "; ".join(what), ta, tb))
        # compare the children both have (first occurrence of each tag+label)
        bmap = {}
        for c in b.children:
            bmap.setdefault(c.tag + _xlabel(c), c)
        seen = set()
        for c in a.children:
            key = c.tag + _xlabel(c)
            if key in bmap and key not in seen:
                seen.add(key)
                out.extend(diff_xml(c, bmap[key], here))
        return out
    for x, y in zip(a.children, b.children):
        out.extend(diff_xml(x, y, here))
    return out


def pretty_xml(n: XNode, indent: int = 0) -> str:
    pad = "  " * indent
    attrs = "".join(f' {k}="{v}"' for k, v in n.attrs)
    if n.text is not None:
        return f"{pad}<{n.tag}{attrs}>{n.text}</{n.tag}>"
    inner = "\n".join(pretty_xml(c, indent + 1) for c in n.children)
    return f"{pad}<{n.tag}{attrs}>\n{inner}\n{pad}</{n.tag}>"


# ---------------------------------------------------------------------------------------
# Allow-list and report
# ---------------------------------------------------------------------------------------
@dataclass
class Allowed:
    """A known, accepted difference: request regex + difference-path regex (+ optional regexes
    for the difference's description and for the Heureka profile it applies to)."""
    request: str
    path: str
    reason: str
    what: str = ".*"
    profile: str = ".*"

    def matches(self, request: str, d: Difference, profile: str = "default") -> bool:
        return bool(re.search(self.request, request) and re.search(self.path, d.path)
                    and re.search(self.what, d.what) and re.fullmatch(self.profile, profile))


def split_allowed(request: str, diffs: Iterable[Difference], allow: Iterable[Allowed], profile: str = "default"):
    remaining, tolerated = [], []
    for d in diffs:
        rule = next((a for a in allow if a.matches(request, d, profile)), None)
        (tolerated if rule else remaining).append((d, rule))
    return [d for d, _ in remaining], tolerated


def unified(a_text: str, b_text: str, max_lines: int = 250) -> str:
    lines = list(difflib.unified_diff(a_text.splitlines(), b_text.splitlines(),
                                      fromfile="java (reference)", tofile="heureka", lineterm="", n=3))
    if len(lines) > max_lines:
        lines = lines[:max_lines] + [f"… ({len(lines) - max_lines} more diff lines)"]
    return "\n".join(lines)


def report(title: str, diffs: list[Difference], a_text: str = "", b_text: str = "",
           tolerated: list = ()) -> str:
    out = [f"=== {title}: {len(diffs)} difference(s) ==="]
    out += [f"  - {d}" for d in diffs]
    if tolerated:
        out.append(f"  ({len(tolerated)} allow-listed difference(s) not listed; the unified diff still shows them: "
                   + "; ".join(sorted({rule.reason for _, rule in tolerated})) + ")")
    if a_text or b_text:
        out.append("--- normalised documents, unified diff (java → heureka) ---")
        out.append(unified(a_text, b_text) or "(normalised texts are equal; the difference is in types/order)")
    return "\n".join(out)
