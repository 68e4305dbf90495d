"""A team deployment on loopback, no Docker: one PostgreSQL (tests/support/postgres.py), N `webhost serve`
replicas sharing its database, the token and one deployment secret (WEBHOST_SECRET), and Debian's nginx
in front, configured with the shipped `deploy/webhost.conf.template` (rendered here exactly as the nginx
images' envsubst renders it), so the tests check the file a deployment uses.

The browser sees one origin, `http://127.0.0.1:PORT` (nginx), and the apps' origins
`http://<label>.localhost:PORT` (nginx's wildcard server block): one port for both, as one 443 is for a
TLS deployment. Each replica is told that origin (`--public-origin`) and that sandbox port
(`--sandbox-public-port`).
"""

from __future__ import annotations

import contextlib
import dataclasses
import json
import os
import pwd
import re
import secrets
import shutil
import subprocess
import tempfile
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import httpx

from tests.support.postgres import Postgres
from tests.support.process import ROOT, Webhost, free_port, run_webhost

TEMPLATE = ROOT / "deploy" / "webhost.conf.template"
_PLACEHOLDER = re.compile(r"\$\{(WEBHOST_[A-Z_]+)\}")

ACCEPTED_SOCKET = re.compile(r'"WebSocket /ws(?:\?[^"]*)?" \[accepted\]')


class NginxMissing(RuntimeError):
    """Debian's nginx is not installed."""


def nginx_binary() -> str:
    found = shutil.which("nginx") or ("/usr/sbin/nginx" if Path("/usr/sbin/nginx").exists() else None)
    if found is None:
        raise NginxMissing("nginx is not installed: run scripts/install-test-deps, or apt-get install nginx")
    return found


def render_template(values: dict[str, str], template: Path = TEMPLATE) -> str:
    """The template with its ${WEBHOST_*} names filled in (envsubst's rule: nginx's own $names stay);
    a name with no value is an error, so the template and its users cannot drift apart."""
    text = template.read_text(encoding="utf-8")
    wanted = set(_PLACEHOLDER.findall(text))
    if wanted != set(values):
        raise ValueError(f"the template wants {sorted(wanted)}, given {sorted(values)}")
    return _PLACEHOLDER.sub(lambda match: values[match.group(1)], text)


@dataclass
class Nginx:
    proc: subprocess.Popen[bytes]
    port: int
    root: Path

    def upstreams(self, uri: str = "/ws") -> dict[str, int]:
        """How many finished requests for `uri` each upstream answered (nginx logs a WebSocket when it closes)."""
        path = self.root / "access.log"
        counts: dict[str, int] = {}
        for line in path.read_text(errors="replace").splitlines() if path.exists() else []:
            parts = line.split()
            if len(parts) >= 4 and parts[1] == uri and parts[3].startswith("upstream="):
                upstream = parts[3].removeprefix("upstream=")
                counts[upstream] = counts.get(upstream, 0) + 1
        return counts

    def error_log(self) -> str:
        path = self.root / "error.log"
        return path.read_text(errors="replace") if path.exists() else ""


@contextlib.contextmanager
def run_nginx(page_servers: list[int], sandbox_servers: list[int], *, port: int | None = None) -> Iterator[Nginx]:
    """nginx in the foreground (`daemon off`) in a temporary prefix, listening on 127.0.0.1:`port`."""
    binary = nginx_binary()
    port = port or free_port()
    root = Path(tempfile.mkdtemp(prefix="webhost-nginx-"))
    root.chmod(0o755)  # its workers run as nobody when we are root
    temp = root / "temp"
    for name in ("body", "proxy", "fastcgi", "uwsgi", "scgi"):
        (temp / name).mkdir(parents=True)
        if os.geteuid() == 0:
            nobody = pwd.getpwnam("nobody")
            os.chown(temp / name, nobody.pw_uid, nobody.pw_gid)
    site = render_template(
        {
            "WEBHOST_LISTEN": f"127.0.0.1:{port}",
            "WEBHOST_PAGE_HOST": "127.0.0.1 localhost",
            "WEBHOST_SANDBOX_DOMAIN": "localhost",
            "WEBHOST_PAGE_SERVERS": " ".join(f"server 127.0.0.1:{p};" for p in page_servers),
            "WEBHOST_SANDBOX_SERVERS": " ".join(f"server 127.0.0.1:{p};" for p in sandbox_servers),
        }
    )
    (root / "webhost.conf").write_text(site)
    # The main file is the test's (a deployment's is the nginx image's own); the site is the shipped one.
    (root / "nginx.conf").write_text(
        f"""daemon off;
worker_processes 1;
pid {root}/nginx.pid;
error_log {root}/error.log notice;
events {{ worker_connections 1024; }}
http {{
    log_format team '$request_method $uri $status upstream=$upstream_addr';
    access_log {root}/access.log team;
    client_body_temp_path {temp}/body;
    proxy_temp_path {temp}/proxy;
    fastcgi_temp_path {temp}/fastcgi;
    uwsgi_temp_path {temp}/uwsgi;
    scgi_temp_path {temp}/scgi;
    include {root}/webhost.conf;
}}
"""
    )
    proc = subprocess.Popen(
        [binary, "-p", str(root), "-c", str(root / "nginx.conf"), "-e", str(root / "error.log")],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    nginx = Nginx(proc, port, root)
    try:
        deadline = time.monotonic() + 20
        while True:
            if proc.poll() is not None:
                raise RuntimeError(f"nginx exited ({proc.returncode}):\n{nginx.error_log()}")
            try:
                httpx.get(f"http://127.0.0.1:{port}/healthz", timeout=1)
                break
            except httpx.HTTPError:
                if time.monotonic() > deadline:
                    raise TimeoutError(f"nginx did not answer:\n{nginx.error_log()}") from None
                time.sleep(0.05)
        yield nginx
    finally:
        if proc.poll() is None:
            proc.terminate()
            try:
                proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait(timeout=5)
        shutil.rmtree(root, ignore_errors=True)


@dataclass
class Team:
    """Replicas behind nginx. `front` is a Webhost whose address is nginx's (for WsClient and the page object)."""

    replicas: list[Webhost]
    nginx: Nginx
    token: str
    secret: str
    database_url: str
    postgres: Postgres

    def sql(self, query: str) -> list[list[str]]:
        """Rows of a query on the team's database (psql's unaligned output: one list of cells per row)."""
        database = urlsplit(self.database_url).path.lstrip("/")
        text = self.postgres.psql(query, database=database)
        return [line.split("|") for line in text.splitlines() if line]

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.nginx.port}"

    @property
    def front(self) -> Webhost:
        return dataclasses.replace(self.replicas[0], port=self.nginx.port, sandbox_port=self.nginx.port)

    def accepted_sockets(self) -> list[int]:
        """How many WebSockets each replica has accepted (uvicorn logs each one at info level, with its query:
        the page opens `/ws?parts=1`)."""
        return [len(ACCEPTED_SOCKET.findall(replica.log())) for replica in self.replicas]

    def alive(self) -> list[Webhost]:
        return [replica for replica in self.replicas if replica.proc.poll() is None]


@contextlib.contextmanager
def start_replicas(
    tmp_path: Path,
    database_url: str,
    servers: dict[str, Any] | None,
    port: int,
    *,
    replicas: int = 2,
    webhost_options: dict[str, Any] | None = None,
    env: dict[str, str] | None = None,
    log_level: str = "info",
) -> Iterator[tuple[list[Webhost], str, str]]:
    """`replicas` webhosts on one database with one token and secret, told that the public origin and the
    sandbox are on `port` (nginx's); yields them, the token and the secret."""
    token = "t-team-" + secrets.token_urlsafe(16)
    secret = secrets.token_hex(32)
    shared_env = {"WEBHOST_DATABASE_URL": database_url, "WEBHOST_SECRET": secret, "WEBHOST_TOKEN": token, **(env or {})}
    extra = [
        "--public-origin",
        f"http://127.0.0.1:{port}",
        "--public-origin",
        f"http://localhost:{port}",
        "--sandbox-public-port",
        str(port),
        "--log-level",
        log_level,
    ]
    for index in range(replicas):
        (tmp_path / f"replica-{index}").mkdir(parents=True, exist_ok=True)
    with contextlib.ExitStack() as stack:
        started = [
            stack.enter_context(
                run_webhost(
                    tmp_path / f"replica-{index}",
                    _copy(servers),
                    webhost_options=webhost_options,
                    extra_args=extra,
                    env=shared_env,
                )
            )
            for index in range(replicas)
        ]
        yield [dataclasses.replace(replica, token=token) for replica in started], token, secret


@contextlib.contextmanager
def run_team(
    tmp_path: Path,
    postgres: Postgres,
    servers: dict[str, Any] | None,
    *,
    replicas: int = 2,
    webhost_options: dict[str, Any] | None = None,
    env: dict[str, str] | None = None,
    port: int | None = None,
) -> Iterator[Team]:
    """PostgreSQL (a fresh database on the shared server), `replicas` webhosts on it, and nginx in front
    on `port` (free by default)."""
    database_url = postgres.new_database()
    port = port or free_port()
    with (
        start_replicas(
            tmp_path, database_url, servers, port, replicas=replicas, webhost_options=webhost_options, env=env
        ) as (started, token, secret),
        run_nginx([r.port for r in started], [r.sandbox_port for r in started], port=port) as nginx,
    ):
        yield Team(started, nginx, token, secret, database_url, postgres)


def _copy(servers: dict[str, Any] | None) -> dict[str, Any] | None:
    """run_webhost adds its marker to the entries it is given: each replica gets entries of its own."""
    return None if servers is None else json.loads(json.dumps(servers))
