"""A header sent twice to a real `webhost serve` (issue 31 item 8), written byte for byte on a socket: HTTP clients
fold or refuse repeated headers, a client that poses as someone does not. Uvicorn passes both copies on, and
webhost refuses the request with 400 whichever copy a proxy in front would have added."""

from __future__ import annotations

import socket
from collections.abc import Iterator

import pytest

from tests.support.process import WAIT, Webhost, run_webhost, stdio_server

PROXY = {
    "auth": {
        "mode": "proxy",
        "userHeader": "X-Forwarded-Email",
        "groupsHeader": "X-Forwarded-Groups",
        "trustedProxies": ["127.0.0.1/32"],
        "admins": ["ada@example.com"],
        "adminGroups": ["ops"],
    }
}


@pytest.fixture(scope="module")
def host(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Webhost]:
    options = PROXY
    with run_webhost(
        tmp_path_factory.mktemp("repeated"), {"basic": stdio_server("basic")}, webhost_options=options
    ) as running:
        yield running


def raw_get(host: Webhost, path: str, headers: list[tuple[str, str]]) -> tuple[int, bytes]:
    """One HTTP/1.1 GET with exactly these header lines; the status and the body."""
    lines = [f"GET {path} HTTP/1.1", *(f"{name}: {value}" for name, value in headers), "Connection: close", "", ""]
    with socket.create_connection(("127.0.0.1", host.port), timeout=WAIT) as sock:
        sock.sendall("\r\n".join(lines).encode())
        answer = b""
        while chunk := sock.recv(65536):
            answer += chunk
    head, _, body = answer.partition(b"\r\n\r\n")
    return int(head.split(b" ", 2)[1]), body


@pytest.mark.parametrize(
    "identity",
    [
        [("X-Forwarded-Email", "bob@example.com"), ("X-Forwarded-Email", "ada@example.com")],
        [("X-Forwarded-Email", "bob@example.com"), ("x-forwarded-email", "ada@example.com")],
        [("X-Forwarded-Email", "bob@example.com"), ("X-Forwarded-Groups", "staff"), ("X-Forwarded-Groups", "ops")],
    ],
)
def test_a_repeated_identity_or_groups_header_is_refused(host: Webhost, identity: list[tuple[str, str]]) -> None:
    ours = ("Host", f"127.0.0.1:{host.port}")
    status, body = raw_get(host, "/api/servers", [ours, *identity])
    assert status == 400 and b"more than once" in body, body
    once = {name.lower(): value for name, value in identity}  # each header once: let in
    assert raw_get(host, "/api/servers", [ours, *once.items()])[0] == 200


def test_a_repeated_host_is_refused(host: Webhost) -> None:
    ours = ("Host", f"127.0.0.1:{host.port}")
    person = ("X-Forwarded-Email", "bob@example.com")
    for hosts in ([ours, ours], [ours, ("Host", "evil.example")], [("Host", "evil.example"), ours]):
        status, body = raw_get(host, "/api/servers", [*hosts, person])
        assert status == 400 and b"more than one Host" in body, (hosts, body)
    assert raw_get(host, "/api/servers", [ours, person])[0] == 200
