"""Settings: every runtime option of `webhost serve` once, with its default and help text."""

from __future__ import annotations

import secrets
from pathlib import Path

from pydantic import BaseModel, Field


class Settings(BaseModel):
    """What the command line (and environment) decide; the config file decides the servers."""

    host: str = Field("127.0.0.1", description="Interface the host page listens on (loopback by default).")
    port: int = Field(8700, description="Port of the host page.")
    sandbox_port: int = Field(8701, description="Port of the sandbox proxy that serves MCP Apps.")
    sandbox_domain: str = Field(
        "localhost", description="Apps are served from http://<label>.<sandbox-domain>:<sandbox-port>."
    )
    sandbox_scheme: str = Field("http", description="Scheme of the sandbox origins (https behind TLS).")
    sandbox_public_port: int | None = Field(
        None, description="Port browsers use to reach the sandbox when a proxy maps it (default: sandbox_port)."
    )
    token: str = Field(default_factory=lambda: secrets.token_urlsafe(24), description="Access token.")
    token_from_env: bool = Field(False, description="Whether the token came from WEBHOST_TOKEN.")
    data_dir: Path = Field(Path(".webhost-data"), description="Folder for the audit log and the secret.")
    public_origins: tuple[str, ...] = Field(
        (), description="Extra origins the host page is reached on (a reverse proxy's https origin)."
    )
    secure_cookies: bool = Field(False, description="Mark the session cookie Secure (behind TLS).")

    def host_origins(self) -> list[str]:
        """Every origin the page may be loaded from: its own address(es) plus configured ones."""
        names = {self.host} if self.host not in ("0.0.0.0", "::") else {"127.0.0.1"}
        if self.host in ("127.0.0.1", "localhost", "0.0.0.0", "::"):
            names |= {"127.0.0.1", "localhost"}
        origins = [f"http://{name}:{self.port}" for name in sorted(names)]
        return origins + [o for o in self.public_origins if o not in origins]

    def sandbox_port_for_browsers(self) -> int:
        return self.sandbox_public_port or self.sandbox_port
