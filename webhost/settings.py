"""Settings: every option of `webhost serve` once, with its default and help text.

Each field is a command-line flag (generated from it in `webhost.cli`) and a `WEBHOST_*` environment
variable; a flag wins over the environment, the environment over the configuration file's
`webhost` key (`dataDir`), and that over the default. README.md's options table lists every field
(tests/unit/test_docs.py checks it).
"""

from __future__ import annotations

import secrets
from pathlib import Path
from typing import Annotated, Any, Literal

from pydantic import Field, field_validator
from pydantic_settings import BaseSettings, NoDecode, SettingsConfigDict

from webhost.storage.urls import database_url_problem

ENV_PREFIX = "WEBHOST_"
Port = Annotated[int, Field(ge=0, le=65535)]


class Settings(BaseSettings):
    """What the command line and the environment decide; the config file decides the servers."""

    model_config = SettingsConfigDict(env_prefix=ENV_PREFIX, env_ignore_empty=True, extra="ignore")

    config: Path | None = Field(
        default=None, description="An mcpServers JSON file. Without one, webhost serves its embedded demo."
    )
    host: str = Field(
        default="127.0.0.1",
        description="Interface the host page and the sandbox listen on. Anything but "
        "loopback also needs --allow-remote.",
    )
    port: Port = Field(default=8700, description="Port of the host page.")
    sandbox_port: Port = Field(default=8701, description="Port of the sandbox proxy that serves MCP Apps.")
    sandbox_domain: str = Field(
        default="localhost", description="Apps are served from <scheme>://<label>.<sandbox-domain>:<port>."
    )
    sandbox_scheme: Literal["http", "https"] = Field(
        default="http", description="Scheme browsers use for the sandbox origins (https behind TLS)."
    )
    sandbox_public_port: Port | None = Field(
        default=None, description="Port browsers use for the sandbox when a proxy maps it. Without it, --sandbox-port."
    )
    public_origins: Annotated[tuple[str, ...], NoDecode] = Field(
        default=(),
        description="An extra origin the page is served on (e.g. https://webhost.example). The "
        "flag is repeatable; the variable takes a comma-separated list.",
        json_schema_extra={"flag": "--public-origin"},
    )
    data_dir: Path = Field(
        default=Path(".webhost-data"),
        description="Folder for the deployment secret and the audit log. Overrides the configuration file's dataDir.",
    )
    database_url: str | None = Field(
        default=None,
        description="Database for people and sessions: a postgresql://USER:PASSWORD@HOST/DATABASE URL (shared "
        "by every replica) or a sqlite+aiosqlite:///PATH URL. Overrides the configuration file's database. Without "
        "either, SQLite in the data folder. Environment only (a URL may hold a password).",
        json_schema_extra={"flag": None},
        repr=False,
    )
    secret: str | None = Field(
        default=None,
        description="The deployment secret (at least 32 characters; signs cookies and sandbox tokens, keys the "
        "stored input values). Every replica of a deployment needs the same one. Without it, the one in the data "
        "folder (created at first start). Environment only.",
        json_schema_extra={"flag": None},
        repr=False,
        min_length=32,
    )
    rotate_secret: bool = Field(
        default=False,
        description="Replace a secret file in the data folder that is too short to be one (webhost refuses to "
        "start on it otherwise): every session cookie, sealed input value, OAuth token and app origin made "
        "with the old secret is lost.",
    )
    secure_cookies: bool = Field(default=False, description="Mark the session cookie Secure (behind TLS).")
    allow_remote: bool = Field(
        default=False, description="Confirm listening on a non-loopback interface (e.g. --host 0.0.0.0)."
    )
    log_level: Literal["debug", "info", "warning", "error"] = Field(default="warning", description="Log level.")
    event_loop: Literal["auto", "uvloop", "asyncio"] = Field(
        default="auto",
        description="The event loop: uvloop (faster: bench/README.md) or Python's own asyncio. auto takes uvloop "
        "when it is installed (it is, with webhost, except on Windows).",
    )
    token: str = Field(
        default_factory=lambda: secrets.token_urlsafe(24),
        description="The access token. Without it, one "
        "is generated and printed as a login URL. Environment only, so it stays out of process listings.",
        json_schema_extra={"flag": None},
    )

    @field_validator("public_origins", mode="before")
    @classmethod
    def _split_origins(cls, value: Any) -> Any:
        if isinstance(value, str):
            value = [part for part in value.split(",") if part.strip()]
        if isinstance(value, list | tuple):
            return tuple(str(origin).strip().rstrip("/") for origin in value)
        return value

    @field_validator("database_url")
    @classmethod
    def _usable_database(cls, value: str | None) -> str | None:
        problem = database_url_problem(value) if value else None
        if problem:
            raise ValueError(problem)
        return value

    @property
    def token_from_env(self) -> bool:
        """Whether the token was given (by WEBHOST_TOKEN) rather than generated."""
        return "token" in self.model_fields_set

    def host_origins(self) -> list[str]:
        """Every origin the page may be loaded from: its own address(es) plus configured ones."""
        names = {self.host} if self.host not in ("0.0.0.0", "::") else {"127.0.0.1"}
        if self.host in ("127.0.0.1", "localhost", "0.0.0.0", "::"):
            names |= {"127.0.0.1", "localhost"}
        elif self.host == "::1":  # IPv6 loopback: browsers reach it as [::1], or as localhost
            names |= {"localhost"}
        origins = [f"http://{url_host(name)}:{self.port}" for name in sorted(names)]
        return origins + [o for o in self.public_origins if o not in origins]

    def sandbox_port_for_browsers(self) -> int:
        return self.sandbox_public_port or self.sandbox_port


def url_host(host: str) -> str:
    """A host as a URL writes it: an IPv6 address in brackets (`[::1]`), anything else as it is."""
    return f"[{host}]" if ":" in host and not host.startswith("[") else host


def flag_for(name: str) -> str | None:
    """The command-line flag of a settings field (None: environment only)."""
    extra = Settings.model_fields[name].json_schema_extra
    if isinstance(extra, dict) and "flag" in extra:
        flag = extra["flag"]
        return flag if isinstance(flag, str) else None
    return "--" + name.replace("_", "-")


def env_for(name: str) -> str:
    """The environment variable of a settings field."""
    return ENV_PREFIX + name.upper()
