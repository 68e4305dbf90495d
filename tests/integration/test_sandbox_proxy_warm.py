"""Warm proxy frames over HTTP: `/warm` (the proxy before any App, under a fixed bootstrap policy) and
`/app` (the App's own document, under the policy of the open's token), bound to one server's origin."""

from __future__ import annotations

import pytest
from starlette.testclient import TestClient

from sandbox_proxy.app import WARM_CSP, create_sandbox_app
from webhost.apps.csp import build_policy
from webhost.apps.origins import sandbox_label
from webhost.apps.proxy_token import issue_proxy_token

SECRET = b"0123456789abcdef0123456789abcdef"
HOSTS = ["http://127.0.0.1:8700"]
LABEL = sandbox_label(SECRET, "weather")
OTHER = sandbox_label(SECRET, "files")
NOW = 1_800_000_000.0
APP_CSP = build_policy({"connectDomains": ["https://api.example.com"]}, frame_ancestors=HOSTS).header


def _client(label: str = LABEL) -> TestClient:
    app = create_sandbox_app(secret=SECRET, domain="localhost", host_origins=HOSTS, clock=lambda: NOW)
    return TestClient(app, base_url=f"http://{label}.localhost:8701")


def _token(label: str = LABEL, csp: str = APP_CSP, allow: str = "") -> str:
    return issue_proxy_token(SECRET, label=label, csp=csp, allow=allow, host_origins=HOSTS, now=NOW)


def test_the_warm_proxy_runs_under_the_bootstrap_policy_whatever_its_token_says() -> None:
    response = _client().get("/warm", params={"p": _token()})
    assert response.status_code == 200
    csp = response.headers["content-security-policy"]
    assert csp == WARM_CSP + "; frame-ancestors http://127.0.0.1:8700"
    assert "api.example.com" not in csp and "unsafe" not in csp
    assert '<meta name="webhost-mode" content="warm">' in response.text
    assert '<script type="module" src="/proxy.js"></script>' in response.text


def test_a_cold_proxy_page_says_so() -> None:
    body = _client().get("/proxy", params={"p": _token()}).text
    assert '<meta name="webhost-mode" content="cold">' in body


def test_the_app_document_carries_the_token_policy_framed_only_by_its_proxy_and_the_host() -> None:
    response = _client().get("/app", params={"p": _token(allow="microphone")})
    assert response.status_code == 200
    csp = response.headers["content-security-policy"]
    # The App's policy as /proxy would serve it, with the proxy's own origin among the ancestors.
    assert csp.startswith(APP_CSP.rsplit("; frame-ancestors", 1)[0])
    assert "connect-src 'self' https://api.example.com;" in csp
    assert csp.endswith("; frame-ancestors 'self' http://127.0.0.1:8700")
    assert csp.count("frame-ancestors") == 1
    assert response.headers["cache-control"] == "no-store"
    assert response.headers["referrer-policy"] == "strict-origin"
    body = response.text
    assert '<meta name="webhost-sandbox" content="allow-scripts allow-same-origin allow-forms">' in body
    assert '<meta name="webhost-allow" content="microphone">' in body
    assert "<script" not in body and "$" not in body


@pytest.mark.parametrize("path", ["/warm", "/app"])
def test_a_token_for_another_server_is_refused_on_this_origin(path: str) -> None:
    # A warm frame of "weather" cannot load "files"' App document, nor become a "files" proxy.
    response = _client(LABEL).get(path, params={"p": _token(label=OTHER)})
    assert response.status_code == 403
    assert "another origin" in response.text
    assert response.headers["content-security-policy"] == "default-src 'none'; frame-ancestors 'none'"


@pytest.mark.parametrize("path", ["/warm", "/app"])
@pytest.mark.parametrize("token", ["", "nonsense", "a.b"])
def test_a_missing_or_forged_token_is_refused(path: str, token: str) -> None:
    response = _client().get(path, params={"p": token})
    assert response.status_code == 403


def test_the_warm_token_webhost_issues_cannot_serve_an_app_proxy() -> None:
    # apps/warm's token names the policy "default-src 'none'": put to /proxy, the proxy script cannot run.
    warm = _token(csp="default-src 'none'")
    csp = _client().get("/proxy", params={"p": warm}).headers["content-security-policy"]
    assert csp == "default-src 'none'; frame-ancestors http://127.0.0.1:8700"
