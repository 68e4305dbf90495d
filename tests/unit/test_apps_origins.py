"""Per-server sandbox origins: labels are secret-derived DNS labels; Host parsing is strict."""

from __future__ import annotations

import pytest

from webhost.apps.origins import (
    derive_key,
    is_valid_domain,
    is_valid_label,
    label_from_host,
    sandbox_label,
    sandbox_origin,
    secret_from_text,
)

SECRET = b"0123456789abcdef0123456789abcdef"


def test_label_is_a_stable_dns_label() -> None:
    label = sandbox_label(SECRET, "weather")
    assert label == sandbox_label(SECRET, "weather")
    assert len(label) == 20
    assert label[0].isalpha() and label.isalnum() and label == label.lower()
    assert is_valid_label(label)


def test_label_depends_on_secret_and_server() -> None:
    a = sandbox_label(SECRET, "weather")
    assert a != sandbox_label(SECRET, "files")
    assert a != sandbox_label(b"another-secret-of-enough-bytes!!", "weather")
    # A name cannot smuggle in a chosen label or a dot.
    assert "." not in sandbox_label(SECRET, "evil.example")


def test_label_rejects_empty_name() -> None:
    with pytest.raises(ValueError):
        sandbox_label(SECRET, "")


def test_short_secret_rejected() -> None:
    with pytest.raises(ValueError):
        sandbox_label(b"short", "weather")
    with pytest.raises(ValueError):
        secret_from_text("  short \n")


def test_secret_from_text_strips() -> None:
    assert secret_from_text("  " + SECRET.decode() + "\n") == SECRET


def test_subkeys_differ_by_purpose() -> None:
    assert derive_key(SECRET, "a") != derive_key(SECRET, "b")


@pytest.mark.parametrize(
    ("port", "scheme", "expected"),
    [
        (8701, "http", "http://sabc.localhost:8701"),
        (80, "http", "http://sabc.localhost"),
        (443, "https", "https://sabc.localhost"),
        (443, "http", "http://sabc.localhost:443"),
        (80, "https", "https://sabc.localhost:80"),
    ],
)
def test_sandbox_origin(port: int, scheme: str, expected: str) -> None:
    assert sandbox_origin("sabc", "localhost", port, scheme) == expected


def test_sandbox_origin_multi_label_domain() -> None:
    assert sandbox_origin("sabc", "Apps.Example.com.", 443, "https") == "https://sabc.apps.example.com"


@pytest.mark.parametrize(
    ("label", "domain", "port", "scheme"),
    [
        ("1abc", "localhost", 8701, "http"),
        ("a.b", "localhost", 8701, "http"),
        ("ABC", "localhost", 8701, "http"),
        ("abc", "local host", 8701, "http"),
        ("abc", "", 8701, "http"),
        ("abc", "localhost", 0, "http"),
        ("abc", "localhost", 70000, "http"),
        ("abc", "localhost", 8701, "ftp"),
    ],
)
def test_sandbox_origin_rejects(label: str, domain: str, port: int, scheme: str) -> None:
    with pytest.raises(ValueError):
        sandbox_origin(label, domain, port, scheme)


@pytest.mark.parametrize(
    ("host", "expected"),
    [
        ("sabc.localhost:8701", "sabc"),
        ("sabc.localhost", "sabc"),
        ("SABC.LOCALHOST:8701", "sabc"),
        ("sabc.localhost.:8701", "sabc"),
        ("localhost:8701", None),
        ("127.0.0.1:8701", None),
        ("a.b.localhost:8701", None),
        ("sabc.localhost.evil.com", None),
        ("sabcxlocalhost", None),
        (".localhost", None),
        ("-x.localhost", None),
        ("9abc.localhost", None),
        ("sabc.localhost:abc", None),
        ("[::1]:8701", None),
        ("", None),
        (None, None),
    ],
)
def test_label_from_host(host: str | None, expected: str | None) -> None:
    assert label_from_host(host, "localhost") == expected


def test_label_from_host_deeper_domain() -> None:
    assert label_from_host("sabc.apps.example.com", "apps.example.com") == "sabc"
    assert label_from_host("sabc.example.com", "apps.example.com") is None


def test_round_trip() -> None:
    label = sandbox_label(SECRET, "weather")
    origin = sandbox_origin(label, "localhost", 8701)
    assert label_from_host(origin.removeprefix("http://"), "localhost") == label


def test_is_valid_domain() -> None:
    assert is_valid_domain("localhost") and is_valid_domain("apps.example.com")
    assert not is_valid_domain("apps..example.com") and not is_valid_domain("a_b.com")
