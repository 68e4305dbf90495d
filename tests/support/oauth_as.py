"""A real OAuth authorization server (tests/peers/oauth-as.mjs, npm `oidc-provider`) and an MCP server it
protects (tests/servers/protected.py, the SDK's server-side auth), for the sign-in-to-servers tests."""

from __future__ import annotations

import contextlib
import subprocess
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx

from tests.support.oidc import through_provider
from tests.support.process import PEERS, PYTHON, ROOT, SERVERS, free_port, http_process


@dataclass
class AuthServer:
    issuer: str
    proc: subprocess.Popen[bytes]

    def stats(self) -> dict[str, Any]:
        stats: dict[str, Any] = httpx.get(f"{self.issuer}/_stats", timeout=5).json()
        return stats

    def refreshes(self) -> int:
        return int(self.stats()["grants"]["refresh_token"])

    def refuse_refresh(self) -> None:
        httpx.post(f"{self.issuer}/_refuse-refresh", timeout=5).raise_for_status()

    def break_token(self, broken: bool = True) -> None:
        httpx.post(f"{self.issuer}/{'_break-token' if broken else '_mend-token'}", timeout=5).raise_for_status()


@contextlib.contextmanager
def run_auth_server(*flags: str) -> Iterator[AuthServer]:
    port = free_port()
    proc = subprocess.Popen(
        ["node", str(PEERS / "oauth-as.mjs"), "--port", str(port), *flags],
        cwd=PEERS,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
    )
    try:
        assert proc.stdout is not None
        # Until it says it is ready, or it ended (the pipe's end): a busy machine only makes it later.
        while proc.stdout.readline().strip() != b"ready":
            if proc.poll() is not None:
                raise RuntimeError("the test authorization server did not start")
        yield AuthServer(f"http://localhost:{port}", proc)
    finally:
        proc.terminate()
        proc.wait(timeout=10)


@contextlib.contextmanager
def run_protected_server(issuer: str, log_dir: Path) -> Iterator[str]:
    """The protected MCP server; yields its URL (http://127.0.0.1:PORT/mcp)."""
    with http_process(
        [PYTHON, str(SERVERS / "protected.py"), "--http", "{port}", "--issuer", issuer],
        cwd=ROOT,
        log_path=log_dir / "protected.log",
    ) as url:
        yield url


async def approve(authorization_url: str, login: str, *, deny: bool = False) -> str:
    """Sign in at the authorization server as `login` (or deny); the path back to webhost's callback."""
    return await through_provider(authorization_url, login, deny=deny)


__all__ = ["AuthServer", "approve", "free_port", "run_auth_server", "run_protected_server"]
