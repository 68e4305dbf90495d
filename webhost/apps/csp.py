"""The Content-Security-Policy of an MCP App, built from validated `_meta.ui.csp` (mcp-apps §6)."""

from __future__ import annotations

import ipaddress
import re
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

MAX_SOURCES_PER_DIRECTIVE = 32

# Declared directive → the keys a server may use for it (current camelCase first, then pre-rename
# snake_case from before ext-apps a446e80; the last two never had a snake form but cost nothing).
DIRECTIVE_KEYS: dict[str, tuple[str, ...]] = {
    "connectDomains": ("connectDomains", "connect_domains"),
    "resourceDomains": ("resourceDomains", "resource_domains"),
    "frameDomains": ("frameDomains", "frame_domains"),
    "baseUriDomains": ("baseUriDomains", "base_uri_domains"),
}

# §6.1 (stable spec) plus the draft's object-src 'none', plus base-uri 'none': base-uri is not covered
# by default-src, and the spec requires base-uri 'self' at most when nothing is declared (§6.2), so an
# undeclared <base href> must never take effect. Exact; tests pin it.
DEFAULT_DIRECTIVES: tuple[str, ...] = (
    "default-src 'none'",
    "script-src 'self' 'unsafe-inline'",
    "style-src 'self' 'unsafe-inline'",
    "img-src 'self' data:",
    "media-src 'self' data:",
    "object-src 'none'",
    "connect-src 'none'",
    "base-uri 'none'",
)

# Added to every policy (the spec lets hosts restrict further). form-action is not covered by
# default-src, so without it an App could POST data to any origin by submitting a form (its sandbox
# has allow-forms); apps that handle submit in script (preventDefault) are unaffected.
EXTRA_DIRECTIVES: tuple[str, ...] = ("form-action 'none'",)

# scheme://host[:port] after lowercasing; the optional "*." wildcard only as the leftmost label.
_LABEL = r"[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?"
_SOURCE_RE = re.compile(rf"^(https|wss|http|ws)://((?:\*\.)?(?:{_LABEL}\.)*{_LABEL})(?::(\d{{1,5}}))?$")
_BAD_CHARS_RE = re.compile(r"[\s;,'\"\x00-\x1f\x7f]")
_SCHEME_ONLY_RE = re.compile(r"^[a-z][a-z0-9+.-]*:$")
_ORIGIN_RE = re.compile(r"^(https?)://(\[[0-9a-f:.]+\]|[^/:\[\]]+)(?::(\d+))?/?$")
_SECURE = {"http": "https", "ws": "wss"}
_DEFAULT_PORT = {"http": 80, "ws": 80, "https": 443, "wss": 443}


@dataclass
class CspPolicy:
    """A built policy: the header value, what was accepted (to echo to the App) and what was not."""

    header: str
    effective: dict[str, list[str]]
    rejected: list[dict[str, str]] = field(default_factory=list)
    is_default: bool = True


def is_loopback_host(host: str) -> bool:
    """`localhost`, `*.localhost` (browsers resolve these to loopback) or an IPv4 in 127.0.0.0/8."""
    if host == "localhost" or host.endswith(".localhost"):
        return True
    try:
        return ipaddress.IPv4Address(host).is_loopback
    except ValueError:
        return False


def validate_source(value: object, *, allow_loopback_http: bool = True) -> tuple[str | None, str]:
    """One declared source → (normalised source, "") when acceptable, else (None, reason).

    http:// and ws:// are accepted only for loopback hosts (and only when `allow_loopback_http`),
    because webhost's own default deployment and its tests run on loopback; elsewhere they would
    let an App talk cleartext past the host's TLS.
    """
    if not isinstance(value, str):
        return None, "not a string"
    if not value:
        return None, "empty"
    if _BAD_CHARS_RE.search(value):
        return None, "contains a quote, semicolon, comma, whitespace or control character"
    source = value.lower()
    if source == "*":
        return None, "bare wildcard"
    if _SCHEME_ONLY_RE.match(source):
        return None, "scheme-only source"
    scheme, sep, rest = source.partition("://")
    if not sep:
        return None, "not of the form scheme://host[:port]"
    if scheme not in _DEFAULT_PORT:
        return None, f"scheme {scheme!r} not allowed"
    if "@" in rest:
        return None, "userinfo not allowed"
    if rest.startswith("["):
        return None, "IPv6 literal not allowed"
    if rest.endswith("/") and rest.count("/") == 1 and not ("?" in rest or "#" in rest):
        # A lone trailing "/" matches every path, i.e. the same as no path: normalise it away.
        rest = rest[:-1]
        source = f"{scheme}://{rest}"
    if any(ch in rest for ch in "/?#"):
        return None, "path, query or fragment not allowed"
    match = _SOURCE_RE.match(source)
    if not match:
        return None, "not of the form scheme://host[:port]"
    host, port = match.group(2), match.group(3)
    if port is not None and not 0 < int(port) < 65536:
        return None, "port out of range"
    if scheme in _SECURE:
        if not allow_loopback_http:
            return None, f"{scheme}:// not allowed (use {_SECURE[scheme]}://)"
        if not is_loopback_host(host.removeprefix("*.")):
            return None, f"{scheme}:// allowed only for loopback hosts (use {_SECURE[scheme]}://)"
    return source, ""


def _origin_parts(origin: str) -> tuple[str, str, int] | None:
    match = _ORIGIN_RE.match(origin.lower())
    if not match:
        return None
    scheme, host, port = match.groups()
    return scheme, host, int(port) if port else _DEFAULT_PORT[scheme]


def _matches_origin(source: str, origin: tuple[str, str, int]) -> bool:
    """Whether a validated source could let an App reach `origin`; errs towards yes.

    Schemes are ignored (ws:// reaches an http server, and CSP upgrades http to https), and a source
    without a port is taken to cover both default ports.
    """
    _, o_host, o_port = origin
    match = _SOURCE_RE.match(source)
    if not match:
        return False
    host, port = match.group(2), match.group(3)
    host_hit = o_host.endswith(host[1:]) if host.startswith("*.") else host == o_host
    if not host_hit:
        return False
    return o_port in (80, 443) if port is None else int(port) == o_port


def _declared_lists(csp_meta: dict[str, Any], rejected: list[dict[str, str]]) -> dict[str, list[object]]:
    declared: dict[str, list[object]] = {}
    for directive, keys in DIRECTIVE_KEYS.items():
        for key in keys:
            if key not in csp_meta or csp_meta[key] is None:
                continue
            value = csp_meta[key]
            if isinstance(value, str):  # a lone string instead of a list: accept as one entry
                value = [value]
            if not isinstance(value, list):
                rejected.append({"directive": directive, "value": _show(value), "reason": "not a list"})
                continue
            declared.setdefault(directive, []).extend(value)
    return declared


def _show(value: object) -> str:
    text = value if isinstance(value, str) else repr(value)
    return text if len(text) <= 200 else text[:197] + "..."


def validate_csp_meta(
    csp_meta: object, *, host_origins: Iterable[str] = (), allow_loopback_http: bool = True
) -> tuple[dict[str, list[str]] | None, list[dict[str, str]]]:
    """Validated lists keyed by camelCase directive (None when nothing is declared), and rejections."""
    rejected: list[dict[str, str]] = []
    if csp_meta is None:
        return None, rejected
    if not isinstance(csp_meta, dict):
        rejected.append({"directive": "csp", "value": _show(csp_meta), "reason": "not an object"})
        return None, rejected
    declared = _declared_lists(csp_meta, rejected)
    if not declared:
        return None, rejected
    hosts = [parts for parts in (_origin_parts(o) for o in host_origins) if parts]
    accepted: dict[str, list[str]] = {}
    for directive, values in declared.items():
        kept: list[str] = []
        for value in values:
            source, reason = validate_source(value, allow_loopback_http=allow_loopback_http)
            if source is not None and any(_matches_origin(source, h) for h in hosts):
                source, reason = None, "would reach the host page's origin"
            if source is None:
                rejected.append({"directive": directive, "value": _show(value), "reason": reason})
            elif source in kept:
                continue
            elif len(kept) >= MAX_SOURCES_PER_DIRECTIVE:
                rejected.append({"directive": directive, "value": _show(value), "reason": "too many sources"})
            else:
                kept.append(source)
        accepted[directive] = kept
    return accepted, rejected


def _template(lists: dict[str, list[str]]) -> list[str]:
    """§6.2, exactly (with empty lists collapsing to the keyword-only forms)."""

    def join(*parts: str) -> str:
        return " ".join(p for p in parts if p)

    r = " ".join(lists.get("resourceDomains", []))
    c = " ".join(lists.get("connectDomains", []))
    f = " ".join(lists.get("frameDomains", [])) or "'none'"
    b = " ".join(lists.get("baseUriDomains", [])) or "'self'"
    return [
        "default-src 'none'",
        join("script-src 'self' 'unsafe-inline'", r),
        join("style-src 'self' 'unsafe-inline'", r),
        join("connect-src 'self'", c),
        join("img-src 'self' data:", r),
        join("font-src 'self'", r),
        join("media-src 'self' data:", r),
        f"frame-src {f}",
        "object-src 'none'",
        f"base-uri {b}",
    ]


def frame_ancestors_directive(origins: Iterable[str]) -> str:
    """`frame-ancestors` for the host page origins (validated; 'none' when there are none)."""
    kept: list[str] = []
    for origin in origins:
        parts = _origin_parts(origin)
        if parts is None or _BAD_CHARS_RE.search(origin):
            raise ValueError(f"invalid host origin {origin!r}")
        if parts[1].startswith("["):
            continue  # CSP's host-source has no IPv6 literal: such a page frames Apps as http://localhost:PORT
        normal = origin.lower().rstrip("/")
        if normal not in kept:
            kept.append(normal)
    return "frame-ancestors " + (" ".join(kept) or "'none'")


def build_policy(csp_meta: object, *, frame_ancestors: list[str], allow_loopback_http: bool = True) -> CspPolicy:
    """The App's policy: the restrictive default when `csp` declares nothing, else the spec template.

    "Declares nothing" means absent, not an object, or an object with none of the four directive
    keys. An object whose every entry was rejected still gets the template (with empty lists).
    Sources that would reach a host page origin (`frame_ancestors`) are rejected.
    """
    lists, rejected = validate_csp_meta(csp_meta, host_origins=frame_ancestors, allow_loopback_http=allow_loopback_http)
    directives = list(DEFAULT_DIRECTIVES) if lists is None else _template(lists)
    directives += [*EXTRA_DIRECTIVES, frame_ancestors_directive(frame_ancestors)]
    effective = {k: v for k, v in (lists or {}).items() if v}
    return CspPolicy(header="; ".join(directives), effective=effective, rejected=rejected, is_default=lists is None)


def strip_directive(header: str, name: str) -> str:
    """The policy without directive `name` (used by the sandbox to set its own frame-ancestors)."""
    kept = [d.strip() for d in header.split(";") if d.strip() and d.split()[0].lower() != name]
    return "; ".join(kept)
