"""A real PostgreSQL for the tests, no Docker: Debian's `postgresql` binaries, initdb and pg_ctl in a temporary
folder, listening on loopback on a free port, one server per test session, a fresh database per test.

The server refuses to run as root, so as root it runs as the `postgres` system user the package creates
(else `nobody`), the folder handed to it. Password authentication over TCP (scram-sha-256), as a deployment
has it, so the tests see a real password in the URL. Missing binaries are an error that says what to
install (scripts/install-test-deps does), never a skip.
"""

from __future__ import annotations

import contextlib
import glob
import os
import pwd
import secrets
import shutil
import subprocess
import tempfile
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from tests.support.process import free_port

USER = "webhost"


class PostgresMissing(RuntimeError):
    """PostgreSQL's server binaries are not installed."""


def bin_dir() -> Path:
    """Debian keeps initdb and pg_ctl in /usr/lib/postgresql/VERSION/bin (not on PATH); the newest wins."""
    found = sorted(glob.glob("/usr/lib/postgresql/*/bin/initdb"), key=lambda p: int(Path(p).parts[-3]))
    if found:
        return Path(found[-1]).parent
    on_path = shutil.which("initdb")
    if on_path:
        return Path(on_path).resolve().parent
    raise PostgresMissing(
        "PostgreSQL is not installed (no initdb): run scripts/install-test-deps, or apt-get install postgresql"
    )


def _run_as() -> dict[str, Any]:
    """Popen arguments that drop root to an unprivileged user (the server will not start as root)."""
    if os.geteuid() != 0:
        return {}
    for name in ("postgres", "nobody"):
        with contextlib.suppress(KeyError):
            entry = pwd.getpwnam(name)
            return {"user": entry.pw_uid, "group": entry.pw_gid, "extra_groups": []}
    raise PostgresMissing("running as root and there is neither a postgres nor a nobody user to run PostgreSQL as")


@dataclass
class Postgres:
    """A running server: `url(db)` for webhost, `new_database()` for a test of its own."""

    port: int
    password: str
    root: Path
    bin: Path

    def url(self, database: str) -> str:
        return f"postgresql://{USER}:{self.password}@127.0.0.1:{self.port}/{database}"

    def psql(self, sql: str, database: str = "postgres") -> str:
        result = subprocess.run(
            [str(self.bin / "psql"), "-h", "127.0.0.1", "-p", str(self.port), "-U", USER, "-d", database]
            + ["-X", "-q", "-t", "-A", "-v", "ON_ERROR_STOP=1", "-c", sql],
            env={**os.environ, "PGPASSWORD": self.password},
            capture_output=True,
            text=True,
            timeout=30,
            check=False,
        )
        if result.returncode != 0:
            raise RuntimeError(f"psql {sql!r} failed: {result.stderr.strip()}")
        return result.stdout.strip()

    def new_database(self) -> str:
        """A fresh, empty database; its URL (plain postgresql://, as people write it)."""
        name = "t_" + secrets.token_hex(6)
        self.psql(f'CREATE DATABASE "{name}"')
        return self.url(name)


@contextlib.contextmanager
def running_postgres() -> Iterator[Postgres]:
    binaries = bin_dir()
    drop = _run_as()
    root = Path(tempfile.mkdtemp(prefix="webhost-pg-"))
    password = "pw-" + secrets.token_hex(12)
    port = free_port()
    data = root / "data"
    (root / "pwfile").write_text(password + "\n")
    if drop:
        os.chown(root, drop["user"], drop["group"])
        os.chown(root / "pwfile", drop["user"], drop["group"])
    log = root / "server.log"

    def run(*args: str) -> None:
        result = subprocess.run([*args], capture_output=True, text=True, timeout=120, check=False, cwd=root, **drop)
        if result.returncode != 0:
            server_log = log.read_text(errors="replace") if log.exists() else ""
            raise RuntimeError(f"{Path(args[0]).name} failed: {result.stderr.strip()}\n{server_log[-2000:]}")

    run(
        str(binaries / "initdb"),
        "-D",
        str(data),
        "-U",
        USER,
        f"--pwfile={root / 'pwfile'}",
        "--auth-host=scram-sha-256",
        "--auth-local=trust",
        "-E",
        "UTF8",
        "--locale=C",
        "--no-sync",
    )
    # Tests only: no durability wanted (fsync off), the socket in our folder, TCP on loopback only.
    options = f"-c listen_addresses=127.0.0.1 -p {port} -k {root} -c fsync=off -c synchronous_commit=off"
    options += " -c full_page_writes=off -c max_connections=200"
    run(str(binaries / "pg_ctl"), "-D", str(data), "-l", str(log), "-w", "-t", "60", "-o", options, "start")
    try:
        yield Postgres(port=port, password=password, root=root, bin=binaries)
    finally:
        with contextlib.suppress(RuntimeError, subprocess.TimeoutExpired):
            run(str(binaries / "pg_ctl"), "-D", str(data), "-m", "immediate", "-w", "stop")
        shutil.rmtree(root, ignore_errors=True)
