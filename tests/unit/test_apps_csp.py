"""App CSP: source validation (mcp-apps §6.5) and the exact default / template policies (§6.1, §6.2)."""

from __future__ import annotations

import pytest

from webhost.apps.csp import (
    MAX_SOURCES_PER_DIRECTIVE,
    build_policy,
    frame_ancestors_directive,
    is_loopback_host,
    strip_directive,
    validate_source,
)

HOSTS = ["http://127.0.0.1:8700", "http://localhost:8700"]
FA = "frame-ancestors http://127.0.0.1:8700 http://localhost:8700"

DEFAULT = (
    "default-src 'none'; script-src 'self' 'unsafe-inline'; style-src 'self' 'unsafe-inline'; "
    "img-src 'self' data:; media-src 'self' data:; object-src 'none'; connect-src 'none'; "
    "base-uri 'none'; "
    f"form-action 'none'; {FA}"
)


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        ("https://api.example.com", "https://api.example.com"),
        ("wss://rt.example.com", "wss://rt.example.com"),
        ("https://*.cloudflare.com", "https://*.cloudflare.com"),
        ("https://cdn.example.com:8443", "https://cdn.example.com:8443"),
        ("HTTPS://CDN.Example.COM", "https://cdn.example.com"),
        ("https://cdn.example.com/", "https://cdn.example.com"),
        ("https://1.2.3.4", "https://1.2.3.4"),
        ("https://x--y.example", "https://x--y.example"),
        ("http://localhost:3000", "http://localhost:3000"),
        ("http://localhost", "http://localhost"),
        ("ws://localhost:3000", "ws://localhost:3000"),
        ("http://127.0.0.1:9000", "http://127.0.0.1:9000"),
        ("http://127.1.2.3:9000", "http://127.1.2.3:9000"),
        ("http://api.localhost:9000", "http://api.localhost:9000"),
        ("http://*.localhost:9000", "http://*.localhost:9000"),
    ],
)
def test_valid_sources(value: str, expected: str) -> None:
    assert validate_source(value) == (expected, "")


@pytest.mark.parametrize(
    ("value", "reason"),
    [
        ("*", "bare wildcard"),
        ("'self'", "quote"),
        ("'unsafe-eval'", "quote"),
        ('"https://a.com"', "quote"),
        ("https://a.com; script-src *", "semicolon"),
        ("https://a.com,https://b.com", "comma"),
        ("https://a.com https://b.com", "whitespace"),
        ("https://a.com\r\nX-Evil: 1", "control"),
        ("https://a.com\nX-Evil: 1", "control"),
        ("https://a.com\x00", "control"),
        ("https://a.com\t", "whitespace"),
        ("https:", "scheme-only"),
        ("data:", "scheme-only"),
        ("blob:", "scheme-only"),
        ("javascript:", "scheme-only"),
        ("javascript:alert(1)", "form"),
        ("data:text/html,x", "comma"),
        ("ftp://a.com", "scheme 'ftp' not allowed"),
        ("file://a.com", "scheme 'file' not allowed"),
        ("a.com", "form"),
        ("*.a.com", "form"),
        ("//a.com", "form"),
        ("https://", "form"),
        ("https://user@a.com", "userinfo"),
        ("https://user:pw@a.com", "userinfo"),
        ("https://a.com/path", "path"),
        ("https://a.com/path/", "path"),
        ("https://a.com?q=1", "query"),
        ("https://a.com/?q=1", "query"),
        ("https://a.com#frag", "fragment"),
        ("https://[::1]", "IPv6"),
        ("https://[::1]:8080", "IPv6"),
        ("https://a.*.com", "form"),
        ("https://*.*.a.com", "form"),
        ("https://*", "form"),
        ("https://*.com:*", "form"),
        ("https://a.com:*", "form"),
        ("https://a.com:0", "port out of range"),
        ("https://a.com:65536", "port out of range"),
        ("https://a.com:123456", "form"),
        ("https://-a.com", "form"),
        ("https://a-.com", "form"),
        ("https://a_b.com", "form"),
        ("https://exämple.com", "form"),
        ("https://" + "a" * 64 + ".com", "form"),
        ("http://api.example.com", "loopback"),
        ("ws://rt.example.com", "loopback"),
        ("http://*.example.com", "loopback"),
        ("http://0x7f.0.0.1", "loopback"),
        ("http://localhost.evil.com", "loopback"),
        ("", "empty"),
    ],
)
def test_invalid_sources(value: str, reason: str) -> None:
    source, why = validate_source(value)
    assert source is None
    assert reason.lower() in why.lower()


@pytest.mark.parametrize("value", [None, 1, ["https://a.com"], {"a": 1}, True])
def test_non_string_sources(value: object) -> None:
    assert validate_source(value) == (None, "not a string")


def test_loopback_http_can_be_disabled() -> None:
    source, why = validate_source("http://localhost:3000", allow_loopback_http=False)
    assert source is None and "https" in why
    assert validate_source("https://localhost:3000", allow_loopback_http=False)[0] == "https://localhost:3000"


@pytest.mark.parametrize(
    ("host", "expected"),
    [
        ("localhost", True),
        ("a.localhost", True),
        ("127.0.0.1", True),
        ("127.255.0.9", True),
        ("128.0.0.1", False),
        ("localhost.com", False),
        ("example.com", False),
        ("0x7f000001", False),
    ],
)
def test_is_loopback_host(host: str, expected: bool) -> None:
    assert is_loopback_host(host) is expected


@pytest.mark.parametrize("meta", [None, {}, {"other": ["https://a.com"]}, {"connectDomains": None}])
def test_default_policy_exact(meta: object) -> None:
    policy = build_policy(meta, frame_ancestors=HOSTS)
    assert policy.header == DEFAULT
    assert policy.is_default
    assert policy.effective == {}
    assert policy.rejected == []


@pytest.mark.parametrize("meta", ["https://a.com", ["https://a.com"], 42])
def test_non_object_csp_gets_default_and_is_reported(meta: object) -> None:
    policy = build_policy(meta, frame_ancestors=HOSTS)
    assert policy.header == DEFAULT and policy.is_default
    assert policy.rejected[0]["directive"] == "csp" and policy.rejected[0]["reason"] == "not an object"


def test_template_exact_all_directives() -> None:
    meta = {
        "connectDomains": ["https://api.example.com", "wss://rt.example.com"],
        "resourceDomains": ["https://cdn.jsdelivr.net", "https://*.cloudflare.com"],
        "frameDomains": ["https://www.youtube.com"],
        "baseUriDomains": ["https://cdn.example.com"],
    }
    policy = build_policy(meta, frame_ancestors=HOSTS)
    r = "https://cdn.jsdelivr.net https://*.cloudflare.com"
    assert policy.header == (
        "default-src 'none'; "
        f"script-src 'self' 'unsafe-inline' {r}; "
        f"style-src 'self' 'unsafe-inline' {r}; "
        "connect-src 'self' https://api.example.com wss://rt.example.com; "
        f"img-src 'self' data: {r}; "
        f"font-src 'self' {r}; "
        f"media-src 'self' data: {r}; "
        "frame-src https://www.youtube.com; "
        "object-src 'none'; "
        "base-uri https://cdn.example.com; "
        f"form-action 'none'; {FA}"
    )
    assert not policy.is_default
    assert policy.rejected == []
    assert policy.effective == {
        "connectDomains": ["https://api.example.com", "wss://rt.example.com"],
        "resourceDomains": ["https://cdn.jsdelivr.net", "https://*.cloudflare.com"],
        "frameDomains": ["https://www.youtube.com"],
        "baseUriDomains": ["https://cdn.example.com"],
    }


def test_template_exact_with_empty_lists() -> None:
    policy = build_policy({"connectDomains": []}, frame_ancestors=HOSTS)
    assert policy.header == (
        "default-src 'none'; script-src 'self' 'unsafe-inline'; style-src 'self' 'unsafe-inline'; "
        "connect-src 'self'; img-src 'self' data:; font-src 'self'; media-src 'self' data:; "
        "frame-src 'none'; object-src 'none'; base-uri 'self'; "
        f"form-action 'none'; {FA}"
    )
    assert not policy.is_default
    assert policy.effective == {}


def test_only_connect_domains() -> None:
    policy = build_policy({"connectDomains": ["https://api.example.com"]}, frame_ancestors=HOSTS)
    assert "connect-src 'self' https://api.example.com;" in policy.header
    assert "script-src 'self' 'unsafe-inline';" in policy.header
    assert "frame-src 'none'" in policy.header and "base-uri 'self'" in policy.header
    assert policy.effective == {"connectDomains": ["https://api.example.com"]}


def test_all_rejected_still_uses_template() -> None:
    policy = build_policy({"connectDomains": ["*", "https:"]}, frame_ancestors=HOSTS)
    assert not policy.is_default
    assert "connect-src 'self';" in policy.header
    assert [r["value"] for r in policy.rejected] == ["*", "https:"]
    assert all(r["directive"] == "connectDomains" for r in policy.rejected)


def test_legacy_snake_case_keys() -> None:
    meta = {"connect_domains": ["https://api.example.com"], "resource_domains": ["https://cdn.example.com"]}
    policy = build_policy(meta, frame_ancestors=HOSTS)
    assert policy.effective == {
        "connectDomains": ["https://api.example.com"],
        "resourceDomains": ["https://cdn.example.com"],
    }
    assert "connect-src 'self' https://api.example.com;" in policy.header


def test_camel_and_snake_merge_and_dedupe() -> None:
    meta = {
        "connectDomains": ["https://a.com", "HTTPS://A.COM", "https://a.com/"],
        "connect_domains": ["https://b.com", "https://a.com"],
    }
    policy = build_policy(meta, frame_ancestors=HOSTS)
    assert policy.effective == {"connectDomains": ["https://a.com", "https://b.com"]}
    assert policy.rejected == []


def test_single_string_accepted_as_list() -> None:
    policy = build_policy({"connectDomains": "https://a.com"}, frame_ancestors=HOSTS)
    assert policy.effective == {"connectDomains": ["https://a.com"]}


def test_non_list_value_reported() -> None:
    policy = build_policy({"connectDomains": {"x": 1}}, frame_ancestors=HOSTS)
    assert policy.rejected == [{"directive": "connectDomains", "value": "{'x': 1}", "reason": "not a list"}]


def test_cap_per_directive() -> None:
    sources = [f"https://h{i}.example.com" for i in range(MAX_SOURCES_PER_DIRECTIVE + 3)]
    policy = build_policy({"resourceDomains": sources}, frame_ancestors=HOSTS)
    assert len(policy.effective["resourceDomains"]) == MAX_SOURCES_PER_DIRECTIVE
    assert [r["reason"] for r in policy.rejected] == ["too many sources"] * 3


def test_rejected_values_are_truncated() -> None:
    policy = build_policy({"connectDomains": ["https://a.com/" + "x" * 500]}, frame_ancestors=HOSTS)
    assert len(policy.rejected[0]["value"]) == 200


@pytest.mark.parametrize(
    "value",
    [
        "https://a.com; script-src 'unsafe-eval'",
        "https://a.com\r\nSet-Cookie: x=1",
        "https://a.com\nContent-Security-Policy: default-src *",
        "'unsafe-eval'",
        "'unsafe-inline'",
        "'nonce-abc'",
        "'sha256-abc'",
        "*",
        "data:",
        "blob:",
        "https://a.com 'unsafe-eval'",
        "https://a.com,'unsafe-eval'",
        "https://a.com\u2028x",
        "https://a.com\x0bx",
    ],
)
def test_header_injection_attempts(value: str) -> None:
    for key in ("connectDomains", "resourceDomains", "frameDomains", "baseUriDomains"):
        policy = build_policy({key: [value]}, frame_ancestors=HOSTS)
        assert policy.effective == {}
        assert len(policy.rejected) == 1
        assert "\r" not in policy.header and "\n" not in policy.header
        assert "unsafe-eval" not in policy.header
        assert "*" not in policy.header.replace("frame-ancestors", "")
        assert "blob:" not in policy.header and "Set-Cookie" not in policy.header


def test_host_origins_cannot_be_declared() -> None:
    meta = {
        "connectDomains": [
            "http://127.0.0.1:8700",
            "ws://127.0.0.1:8700",
            "http://localhost:8700",
            "http://127.0.0.1:8701",
            "http://localhost",
        ]
    }
    policy = build_policy(meta, frame_ancestors=HOSTS)
    assert policy.effective == {"connectDomains": ["http://127.0.0.1:8701", "http://localhost"]}
    assert [r["reason"] for r in policy.rejected] == ["would reach the host page's origin"] * 3


def test_wildcard_covering_host_origin_rejected() -> None:
    policy = build_policy(
        {"connectDomains": ["https://*.example.com", "https://*.other.com"]},
        frame_ancestors=["https://webhost.example.com"],
    )
    assert policy.effective == {"connectDomains": ["https://*.other.com"]}
    assert policy.rejected[0]["value"] == "https://*.example.com"
    assert policy.header.endswith("frame-ancestors https://webhost.example.com")


def test_frame_ancestors() -> None:
    assert frame_ancestors_directive([]) == "frame-ancestors 'none'"
    assert frame_ancestors_directive(["HTTP://A.test:1/", "http://a.test:1"]) == "frame-ancestors http://a.test:1"
    for bad in ["*", "http://a.test; script-src *", "javascript:x", "http://a.test/path"]:
        with pytest.raises(ValueError):
            frame_ancestors_directive([bad])


def test_strip_directive() -> None:
    header = build_policy(None, frame_ancestors=HOSTS).header
    stripped = strip_directive(header, "frame-ancestors")
    assert "frame-ancestors" not in stripped
    assert stripped + "; " + FA == header


@pytest.mark.parametrize(
    "meta",
    [
        None,
        {},
        {"connectDomains": []},
        {"resourceDomains": ["https://cdn.example.com"]},
        {"baseUriDomains": ["javascript:", "*"]},
    ],
    ids=["absent", "empty", "template", "resources", "rejected-base"],
)
def test_every_policy_restricts_base_uri(meta: object) -> None:
    """<base href> must never take effect unless declared: base-uri is not covered by default-src."""
    header = build_policy(meta, frame_ancestors=HOSTS).header
    base = [d.strip() for d in header.split(";") if d.strip().startswith("base-uri")]
    assert base in (["base-uri 'none'"], ["base-uri 'self'"]), header
