"""Groups from a signing-in proxy's header (contract §9, proxy mode) through the real nginx in front of two replicas
on one PostgreSQL (tests/support/team.py, with the shipped deploy/webhost.conf.template): whichever replica nginx
sends a person to, they see a group's server exactly while their proxy says they are in that group, request by
request; a groups header sent twice passes through nginx and is refused there with 400, never folded."""

from __future__ import annotations

import socket
from collections.abc import Iterator

import httpx
import pytest

from tests.support.postgres import Postgres
from tests.support.process import WAIT, stdio_server
from tests.support.team import Team, run_team

EMAIL, GROUPS = "X-Forwarded-Email", "X-Forwarded-Groups"
OPTIONS = {
    # nginx is the trusted proxy: it connects to the replicas from loopback.
    "auth": {"mode": "proxy", "userHeader": EMAIL, "groupsHeader": GROUPS, "trustedProxies": ["127.0.0.1/32"]},
    "access": {"servers": {"payroll": {"groups": ["finance"]}}},
}
# Enough people that nginx's sticky hash sends some to each replica (the chance that 64 all land on one is 2^-63).
PEOPLE = 64


@pytest.fixture(scope="module")
def team(tmp_path_factory: pytest.TempPathFactory, postgres: Postgres) -> Iterator[Team]:
    servers = {"basic": stdio_server("basic"), "payroll": stdio_server("basic")}
    with run_team(tmp_path_factory.mktemp("proxy-team"), postgres, servers, webhost_options=OPTIONS) as running:
        yield running


def usable(client: httpx.Client, email: str, groups: str) -> list[str]:
    answer = client.get("/api/servers", headers={EMAIL: email, GROUPS: groups})
    assert answer.status_code == 200, answer.text
    return sorted(server["name"] for server in answer.json()["servers"])


def test_a_group_server_is_seen_exactly_while_the_proxy_says_so_on_every_replica(team: Team) -> None:
    replicas = {f"127.0.0.1:{replica.port}" for replica in team.replicas}
    with httpx.Client(base_url=team.base_url, timeout=WAIT) as client:
        for n in range(PEOPLE):
            email = f"person{n}@example.com"
            assert usable(client, email, "staff, finance") == ["basic", "payroll"], email
            assert usable(client, email, "staff") == ["basic"], email  # left the group: gone at the next request
            assert usable(client, email, "finance") == ["basic", "payroll"], email  # back again
            if set(team.nginx.upstreams("/api/servers")) == replicas:
                break
    # nginx logs each request's replica: both answered, each deciding from the header it was passed.
    assert set(team.nginx.upstreams("/api/servers")) == replicas, team.nginx.upstreams("/api/servers")


def raw_get(port: int, path: str, headers: list[tuple[str, str]]) -> tuple[int, bytes]:
    """One HTTP/1.1 GET to nginx with exactly these header lines (an HTTP client would fold a repeated one)."""
    lines = [f"GET {path} HTTP/1.1", *(f"{name}: {value}" for name, value in headers), "Connection: close", "", ""]
    with socket.create_connection(("127.0.0.1", port), timeout=WAIT) as sock:
        sock.sendall("\r\n".join(lines).encode())
        answer = b""
        while chunk := sock.recv(65536):
            answer += chunk
    head, _, body = answer.partition(b"\r\n\r\n")
    return int(head.split(b" ", 2)[1]), body


def test_a_groups_header_sent_twice_through_nginx_is_refused(team: Team) -> None:
    host = ("Host", f"127.0.0.1:{team.nginx.port}")
    who = (EMAIL, "mallory@example.com")
    status, body = raw_get(team.nginx.port, "/api/servers", [host, who, (GROUPS, "staff"), (GROUPS, "finance")])
    assert status == 400 and b"more than once" in body, (status, body)
    assert raw_get(team.nginx.port, "/api/servers", [host, who, (GROUPS, "staff")])[0] == 200
