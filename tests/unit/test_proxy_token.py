"""Signed proxy tokens: round trip, tampering, expiry, malformed input, and unsafe values."""

from __future__ import annotations

from dataclasses import replace

import pytest

from webhost.apps import proxy_token
from webhost.apps.proxy_token import (
    DEFAULT_INNER_SANDBOX,
    ProxyConfig,
    ProxyTokenError,
    issue_proxy_token,
    proxy_url,
    sign_proxy_config,
    verify_proxy_config,
)

SECRET = b"0123456789abcdef0123456789abcdef"
NOW = 1_800_000_000.0
CONFIG = ProxyConfig(
    label="sabcdefghij234567abc",
    csp="default-src 'none'; connect-src 'self' https://api.example.com",
    allow="microphone; clipboard-write",
    sandbox=DEFAULT_INNER_SANDBOX,
    host_origins=("http://127.0.0.1:8700", "http://localhost:8700"),
    exp=int(NOW) + 60,
)


def _payload(token: str) -> dict[str, object]:
    """The body a token carries, read without checking it (it is signed, not encrypted)."""
    _valid, decoded = proxy_token._serializer(b"x" * 32).loads_unsafe(token)  # any key: not checked
    assert isinstance(decoded, dict)
    return decoded


def _forge(body: object, secret: bytes = SECRET) -> str:
    """Sign an arbitrary body with the real key (to reach the checks after the signature)."""
    return proxy_token._serializer(secret).dumps(body)


def test_round_trip() -> None:
    token = sign_proxy_config(SECRET, CONFIG)
    assert set(token) <= set("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_.")
    assert verify_proxy_config(SECRET, token, now=NOW) == CONFIG
    assert _payload(token)["label"] == CONFIG.label


def test_issue_helper_and_url() -> None:
    token = issue_proxy_token(
        SECRET, label=CONFIG.label, csp=CONFIG.csp, host_origins=["http://127.0.0.1:8700"], ttl=30, now=NOW
    )
    config = verify_proxy_config(SECRET, token, now=NOW)
    assert config.exp == int(NOW) + 30 and config.allow == "" and config.sandbox == DEFAULT_INNER_SANDBOX
    assert proxy_url("http://s.localhost:8701", token) == f"http://s.localhost:8701/proxy?p={token}"


def test_expired() -> None:
    token = sign_proxy_config(SECRET, CONFIG)
    with pytest.raises(ProxyTokenError, match="expired"):
        verify_proxy_config(SECRET, token, now=CONFIG.exp)
    with pytest.raises(ProxyTokenError, match="expired"):
        verify_proxy_config(SECRET, token, now=CONFIG.exp + 1000)


def test_wrong_secret() -> None:
    token = sign_proxy_config(SECRET, CONFIG)
    with pytest.raises(ProxyTokenError, match="bad signature"):
        verify_proxy_config(b"another-secret-of-enough-bytes!!", token, now=NOW)


def test_tampered_payload() -> None:
    token = sign_proxy_config(SECRET, CONFIG)
    body = _payload(token)
    body["csp"] = "default-src *"
    payload = _forge(body).rsplit(".", 1)[0]  # the changed body with the original signature
    with pytest.raises(ProxyTokenError, match="bad signature"):
        verify_proxy_config(SECRET, payload + "." + token.rsplit(".", 1)[1], now=NOW)


def test_tampered_signature() -> None:
    token = sign_proxy_config(SECRET, CONFIG)
    payload, sig = token.rsplit(".", 1)
    flipped = ("A" if sig[0] != "A" else "B") + sig[1:]
    with pytest.raises(ProxyTokenError):
        verify_proxy_config(SECRET, payload + "." + flipped, now=NOW)


@pytest.mark.parametrize(
    "token",
    ["", ".", "abc", "a.b.c", "a.b", "!!!.???", "a b.c", "x" * 70000 + ".y", "eyJ9.", ".eyJ9"],
)
def test_malformed(token: str) -> None:
    with pytest.raises(ProxyTokenError):
        verify_proxy_config(SECRET, token, now=NOW)


def _body(**changes: object) -> dict[str, object]:
    body: dict[str, object] = {
        "v": 1,
        "label": CONFIG.label,
        "csp": CONFIG.csp,
        "allow": CONFIG.allow,
        "sandbox": CONFIG.sandbox,
        "hosts": list(CONFIG.host_origins),
        "exp": CONFIG.exp,
    }
    body.update(changes)
    return body


@pytest.mark.parametrize(
    "changes",
    [
        {"v": 2},
        {"label": 5},
        {"hosts": "http://127.0.0.1:8700"},
        {"hosts": [1]},
        {"exp": "soon"},
        {"exp": True},
        {"exp": 1.5e12},
        {"label": "Not A Label"},
        {"csp": "default-src 'none'\r\nSet-Cookie: a=b"},
        {"csp": ""},
        {"allow": "camera; <script>"},
        {"sandbox": "allow-scripts allow-top-navigation"},
        {"sandbox": "allow-scripts allow-popups"},
        {"sandbox": ""},
        {"hosts": []},
        {"hosts": ["javascript:alert(1)"]},
        {"hosts": ['http://a.test" onload="x']},
    ],
)
def test_signed_but_invalid_fields(changes: dict[str, object]) -> None:
    with pytest.raises(ProxyTokenError):
        verify_proxy_config(SECRET, _forge(_body(**changes)), now=NOW)


def test_forge_helper_accepts_valid_body() -> None:
    assert verify_proxy_config(SECRET, _forge(_body()), now=NOW) == CONFIG


def test_non_object_payload() -> None:
    with pytest.raises(ProxyTokenError, match="version"):
        verify_proxy_config(SECRET, _forge([1, 2]), now=NOW)


@pytest.mark.parametrize(
    "changes",
    [
        {"label": "bad label"},
        {"csp": "a\nb"},
        {"sandbox": "allow-scripts allow-modals"},
        {"host_origins": ()},
        {"allow": "camera;microphone"},
    ],
)
def test_sign_refuses_unsafe_values(changes: dict[str, object]) -> None:
    with pytest.raises(ProxyTokenError):
        sign_proxy_config(SECRET, replace(CONFIG, **changes))  # type: ignore[arg-type]
