"""The sandbox proxy over HTTP: headers of the proxy page, token and Host checks, and 404s."""

from __future__ import annotations

import html
import re

import pytest
from starlette.testclient import TestClient

from sandbox_proxy.app import create_sandbox_app
from webhost.apps.csp import build_policy
from webhost.apps.origins import sandbox_label
from webhost.apps.proxy_token import ProxyConfig, issue_proxy_token, sign_proxy_config

SECRET = b"0123456789abcdef0123456789abcdef"
HOSTS = ["http://127.0.0.1:8700", "http://localhost:8700"]
LABEL = sandbox_label(SECRET, "weather")
OTHER = sandbox_label(SECRET, "files")
NOW = 1_800_000_000.0


def _client(host_origins: list[str] = HOSTS, label: str = LABEL) -> TestClient:
    app = create_sandbox_app(secret=SECRET, domain="localhost", host_origins=host_origins, clock=lambda: NOW)
    return TestClient(app, base_url=f"http://{label}.localhost:8701")


def _token(label: str = LABEL, **kw: object) -> str:
    policy = build_policy({"connectDomains": ["https://api.example.com"]}, frame_ancestors=HOSTS)
    args: dict[str, object] = {
        "label": label,
        "csp": policy.header,
        "allow": "microphone",
        "host_origins": HOSTS,
        "now": NOW,
    }
    args.update(kw)
    return issue_proxy_token(SECRET, **args)  # type: ignore[arg-type]


def test_proxy_page_headers() -> None:
    response = _client().get("/proxy", params={"p": _token()})
    assert response.status_code == 200
    assert response.headers["content-type"] == "text/html; charset=utf-8"
    csp = response.headers["content-security-policy"]
    assert csp.startswith("default-src 'none'; script-src 'self' 'unsafe-inline';")
    assert "connect-src 'self' https://api.example.com;" in csp
    assert csp.endswith("; frame-ancestors http://127.0.0.1:8700 http://localhost:8700")
    assert csp.count("frame-ancestors") == 1
    assert response.headers["cache-control"] == "no-store"
    assert response.headers["x-content-type-options"] == "nosniff"
    assert response.headers["referrer-policy"] == "strict-origin"
    assert "x-frame-options" not in response.headers


def test_proxy_page_embeds_config_for_the_script() -> None:
    body = _client().get("/proxy", params={"p": _token()}).text
    assert '<meta name="webhost-host-origins" content="http://127.0.0.1:8700 http://localhost:8700">' in body
    assert '<meta name="webhost-allow" content="microphone">' in body
    assert '<meta name="webhost-sandbox" content="allow-scripts allow-same-origin allow-forms">' in body
    assert '<script type="module" src="/proxy.js"></script>' in body
    # No inline script: the page works under any script-src that has 'self'.
    assert re.findall(r"<script(?![^>]*\bsrc=)", body) == []
    assert "$" not in body


def test_default_policy_page() -> None:
    token = _token(csp=build_policy(None, frame_ancestors=HOSTS).header)
    csp = _client().get("/proxy", params={"p": token}).headers["content-security-policy"]
    assert "connect-src 'none'" in csp and "script-src 'self'" in csp


def test_frame_ancestors_limited_to_configured_origins() -> None:
    token = _token(host_origins=["http://127.0.0.1:8700", "http://evil.test"])
    response = _client().get("/proxy", params={"p": token})
    assert response.headers["content-security-policy"].endswith("frame-ancestors http://127.0.0.1:8700")
    assert 'content="http://127.0.0.1:8700"' in response.text
    assert "evil.test" not in response.text


def test_token_frame_ancestors_never_used() -> None:
    csp = "default-src 'none'; script-src 'self'; frame-ancestors *"
    token = sign_proxy_config(
        SECRET, ProxyConfig(LABEL, csp, "", "allow-scripts", ("http://127.0.0.1:8700",), int(NOW) + 60)
    )
    response = _client().get("/proxy", params={"p": token})
    assert response.headers["content-security-policy"] == (
        "default-src 'none'; script-src 'self'; frame-ancestors http://127.0.0.1:8700"
    )


def test_no_allowed_host_origin() -> None:
    token = _token(host_origins=["http://evil.test"])
    assert _client().get("/proxy", params={"p": token}).status_code == 403


def test_unconfigured_listener_trusts_token_origins() -> None:
    response = _client(host_origins=[]).get("/proxy", params={"p": _token()})
    assert response.status_code == 200
    assert response.headers["content-security-policy"].endswith(
        "frame-ancestors http://127.0.0.1:8700 http://localhost:8700"
    )


def test_wrong_label_refused() -> None:
    response = _client(label=OTHER).get("/proxy", params={"p": _token()})
    assert response.status_code == 403
    assert "x-frame-options" not in response.headers
    assert response.headers["content-security-policy"] == "default-src 'none'; frame-ancestors 'none'"


@pytest.mark.parametrize("host", ["localhost:8701", "127.0.0.1:8701", f"{LABEL}.evil.test:8701", "a.b.localhost"])
def test_not_a_sandbox_host(host: str) -> None:
    response = _client().get("/proxy", params={"p": _token()}, headers={"host": host})
    assert response.status_code == 404


def test_tampered_token_refused() -> None:
    token = _token()
    payload, sig = token.rsplit(".", 1)
    tampered = payload[:-2] + ("AA" if payload[-2:] != "AA" else "BB") + "." + sig
    assert _client().get("/proxy", params={"p": tampered}).status_code == 403


def test_expired_token_refused() -> None:
    token = _token(now=NOW - 1000, ttl=60)
    response = _client().get("/proxy", params={"p": token})
    assert response.status_code == 403
    assert "expired" in response.text


@pytest.mark.parametrize("params", [{}, {"p": ""}, {"p": "garbage"}, {"q": "x"}])
def test_missing_or_garbage_token(params: dict[str, str]) -> None:
    assert _client().get("/proxy", params=params).status_code == 403


def test_token_from_other_secret() -> None:
    token = issue_proxy_token(
        b"another-secret-of-enough-bytes!!", label=LABEL, csp="default-src 'none'", host_origins=HOSTS, now=NOW
    )
    assert _client().get("/proxy", params={"p": token}).status_code == 403


def test_script() -> None:
    response = _client().get("/proxy.js")
    assert response.status_code == 200
    assert response.headers["content-type"] == "text/javascript; charset=utf-8"
    assert response.headers["cache-control"] == "no-store"
    assert response.headers["x-content-type-options"] == "nosniff"
    assert "sandbox-proxy-ready" in response.text
    assert "x-frame-options" not in response.headers


def test_constants_module_the_script_imports() -> None:
    assert 'from "./constants.js"' in _client().get("/proxy.js").text
    response = _client().get("/constants.js")
    assert response.status_code == 200
    assert response.headers["content-type"] == "text/javascript; charset=utf-8"
    assert response.headers["cross-origin-resource-policy"] == "same-origin"
    assert '"clipboardWrite": "clipboard-write"' in response.text


def test_healthz_on_any_host() -> None:
    for host in [f"{LABEL}.localhost:8701", "127.0.0.1:8701"]:
        response = _client().get("/healthz", headers={"host": host})
        assert response.status_code == 200 and response.json() == {"status": "ok"}


@pytest.mark.parametrize("path", ["/", "/proxy/", "/proxy.html", "/static/proxy.js", "/sandbox.html", "/..%2fapp.py"])
def test_everything_else_404(path: str) -> None:
    response = _client().get(path)
    assert response.status_code == 404
    assert response.headers["content-security-policy"] == "default-src 'none'; frame-ancestors 'none'"
    assert "x-frame-options" not in response.headers


def test_wrong_method() -> None:
    response = _client().post("/proxy", params={"p": _token()})
    assert response.status_code == 405
    assert "x-frame-options" not in response.headers


def test_head_allowed() -> None:
    assert _client().head("/proxy", params={"p": _token()}).status_code == 200


def test_values_escaped_in_page() -> None:
    # Values are validated in the token, but the page escapes them all the same.
    token = _token(allow="camera; microphone")
    body = _client().get("/proxy", params={"p": token}).text
    assert html.escape("camera; microphone") in body


def test_bad_configured_origin_fails_at_startup() -> None:
    with pytest.raises(ValueError):
        create_sandbox_app(secret=SECRET, domain="localhost", host_origins=["http://a.test; script-src *"])
