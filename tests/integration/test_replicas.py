"""Replicas on one PostgreSQL behind nginx, without a browser (tests/support/team.py): a person signed in
(oidc) through nginx is signed in on every replica, and signing out on one signs out on all; a database
webhost cannot use stops `webhost serve` with one line and status 2, the password masked."""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from tests.support.oidc import Provider, run_provider, through_provider
from tests.support.postgres import Postgres
from tests.support.process import ROOT, free_port, stdio_server
from tests.support.team import Team, nginx_binary, render_template, run_team
from webhost.auth.signin import SESSION_COOKIE

pytestmark = pytest.mark.anyio


@pytest.fixture(scope="module")
def port() -> int:
    return free_port()


@pytest.fixture(scope="module")
def provider(port: int) -> Iterator[Provider]:
    with run_provider([f"http://127.0.0.1:{port}"]) as running:
        yield running


@pytest.fixture(scope="module")
def team(tmp_path_factory: pytest.TempPathFactory, postgres: Postgres, provider: Provider, port: int) -> Iterator[Team]:
    servers = {"basic": stdio_server("basic")}
    path = tmp_path_factory.mktemp("oidc-team")
    with run_team(path, postgres, servers, webhost_options=provider.options(), port=port) as running:
        yield running


def with_cookie(base_url: str, cookie: str) -> httpx.AsyncClient:
    return httpx.AsyncClient(base_url=base_url, headers={"cookie": f"{SESSION_COOKIE}={cookie}"}, timeout=10)


async def test_signed_in_through_nginx_is_signed_in_on_every_replica_and_signing_out_ends_it_on_all(
    team: Team,
) -> None:
    async with httpx.AsyncClient(base_url=team.base_url, headers={"accept": "text/html"}, timeout=10) as browser:
        start = await browser.get("/")
        assert start.status_code == 303, start.text
        back = await through_provider(start.headers["location"], "bob", origin=team.base_url)
        done = await browser.get(back)
        assert done.status_code in (200, 303), done.text
        cookie = browser.cookies[SESSION_COOKIE]

    for replica in team.replicas:  # each replica directly, nginx left out: the session is in the database
        host = f"127.0.0.1:{team.nginx.port}"  # the public origin's Host, as nginx passes it
        async with with_cookie(replica.base_url, cookie) as client:
            servers = await client.get("/api/servers", headers={"host": host})
            assert servers.status_code == 200, (replica.port, servers.text)

    first, second = team.replicas
    async with with_cookie(second.base_url, cookie) as client:
        out = await client.post(
            "/auth/sign-out",
            headers={"host": f"127.0.0.1:{team.nginx.port}", "origin": "null", "sec-fetch-site": "same-origin"},
        )
        assert out.status_code in (200, 303), out.text
    async with with_cookie(first.base_url, cookie) as client:
        refused = await client.get("/api/servers", headers={"host": f"127.0.0.1:{team.nginx.port}"})
        assert refused.status_code == 401, refused.text


def test_a_wrong_database_password_stops_serve_with_one_line_and_status_2(tmp_path: Path, postgres: Postgres) -> None:
    url = postgres.new_database().replace(postgres.password, "the-wrong-password-0815")
    env = {**os.environ, "WEBHOST_DATABASE_URL": url, "WEBHOST_TOKEN": "t-" + "x" * 24}
    result = subprocess.run(
        [sys.executable, "-m", "webhost", "serve", "--port", str(free_port()), "--sandbox-port", str(free_port())]
        + ["--data-dir", str(tmp_path / "data")],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert result.returncode == 2, result.stdout + result.stderr
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1, result.stderr
    assert lines[0].startswith("webhost: database postgresql+asyncpg://webhost:***@127.0.0.1:")
    assert "password authentication failed" in lines[0]
    assert "the-wrong-password-0815" not in result.stdout + result.stderr


def test_the_shipped_tls_configuration_is_one_nginx_accepts(tmp_path: Path) -> None:
    """deploy/tls.conf with the template listening "ssl", as docker-compose.team.yml combines them, passes `nginx -t`
    (with a self-signed certificate for the page's name and the sandbox wildcard)."""
    tls = tmp_path / "tls"
    tls.mkdir()
    subprocess.run(
        ["openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "1", "-subj", "/CN=webhost.example.com"]
        + ["-addext", "subjectAltName=DNS:webhost.example.com,DNS:*.apps.example.com"]
        + ["-keyout", str(tls / "privkey.pem"), "-out", str(tls / "fullchain.pem")],
        check=True,
        capture_output=True,
        timeout=60,
    )
    site = render_template(
        {
            "WEBHOST_LISTEN": f"127.0.0.1:{free_port()} ssl",
            "WEBHOST_PAGE_HOST": "webhost.example.com",
            "WEBHOST_SANDBOX_DOMAIN": "apps.example.com",
            "WEBHOST_PAGE_SERVERS": "server 127.0.0.1:8700; server 127.0.0.1:8710;",
            "WEBHOST_SANDBOX_SERVERS": "server 127.0.0.1:8701; server 127.0.0.1:8711;",
        }
    )
    tls_conf = (ROOT / "deploy" / "tls.conf").read_text().replace("/etc/nginx/tls", str(tls))
    tls_conf = tls_conf.replace("listen 8080", f"listen 127.0.0.1:{free_port()}")
    (tmp_path / "tls.conf").write_text(tls_conf)
    (tmp_path / "webhost.conf").write_text(site)
    (tmp_path / "nginx.conf").write_text(
        f"pid {tmp_path}/nginx.pid;\nerror_log {tmp_path}/error.log;\nevents {{}}\n"
        f"http {{ access_log off; include {tmp_path}/tls.conf; include {tmp_path}/webhost.conf; }}\n"
    )
    result = subprocess.run(
        [
            nginx_binary(),
            "-t",
            "-p",
            str(tmp_path),
            "-c",
            str(tmp_path / "nginx.conf"),
            "-e",
            str(tmp_path / "error.log"),
        ],
        capture_output=True,
        text=True,
        timeout=30,
        check=False,
    )
    assert result.returncode == 0, result.stderr
    assert "test is successful" in result.stderr
