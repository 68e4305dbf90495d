"""The access policy: tokens compared in constant time, cookie derived (never the token), hosts and origins."""

from __future__ import annotations

from webhost.auth import AccessPolicy
from webhost.settings import Settings


def policy() -> AccessPolicy:
    settings = Settings(token="tok", port=8700)
    return AccessPolicy("tok", b"s" * 32, settings.host_origins() + ["https://webhost.example.com"])


def test_the_cookie_is_derived_from_the_token_and_the_secret_not_the_token_itself() -> None:
    access = policy()
    assert access.cookie_value != "tok" and access.cookie_ok(access.cookie_value)
    other = AccessPolicy("tok", b"t" * 32, [])
    assert not access.cookie_ok(other.cookie_value)
    assert "HttpOnly" in access.session_cookie() and "SameSite=Strict" in access.session_cookie()


def test_only_the_hosts_own_names_pass_the_host_check() -> None:
    access = policy()
    assert access.host_ok("127.0.0.1:8700") and access.host_ok("localhost:8700")
    assert access.host_ok("webhost.example.com")
    assert not access.host_ok("127.0.0.1:8701") and not access.host_ok("evil.example:8700")
    assert not access.host_ok(None)


def test_an_absent_origin_is_allowed_a_foreign_one_is_not() -> None:
    access = policy()
    assert access.origin_ok(None) and access.origin_ok("http://127.0.0.1:8700")
    assert access.origin_ok("https://webhost.example.com/")
    assert not access.origin_ok("null") and not access.origin_ok("http://x.localhost:8701")


def test_binding_every_interface_still_accepts_only_loopback_names_unless_configured() -> None:
    settings = Settings(host="0.0.0.0", port=8700, public_origins=("https://team.example",))
    assert settings.host_origins() == ["http://127.0.0.1:8700", "http://localhost:8700", "https://team.example"]
