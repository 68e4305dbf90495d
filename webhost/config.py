"""The mcpServers configuration file: parse, expand ${VAR}, validate, and fail with one clear message.

The file is the one other MCP tools read (Claude Desktop, VS Code, Cursor, the Inspector), so
server entries are read leniently (unknown keys are ignored) and webhost's own settings live
beside `mcpServers` under a `"webhost"` key.
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal
from urllib.parse import urlsplit

Transport = Literal["stdio", "http", "sse"]
Decision = Literal["allow", "ask", "deny"]

_HTTP_TYPES = {"http", "streamable-http", "streamableHttp", "streamable_http"}
_VAR = re.compile(r"\$\{([A-Za-z_][A-Za-z0-9_]*)(?::-([^}]*))?\}")
_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$")
_PERMISSIONS = {"camera", "microphone", "geolocation", "clipboardWrite"}
_COMPAT_FLAGS = {"eval", "wasm", "workers"}


class ConfigError(Exception):
    """A bad configuration file; the message names the file, the entry and the field."""


@dataclass(frozen=True)
class ServerConfig:
    name: str
    transport: Transport
    command: str | None = None
    args: tuple[str, ...] = ()
    env: Mapping[str, str] = field(default_factory=dict)
    cwd: str | None = None
    url: str | None = None
    headers: Mapping[str, str] = field(default_factory=dict)

    def describe(self) -> str:
        """A short, secret-free description for the page (never env values or headers)."""
        if self.transport == "stdio":
            return f"stdio: {Path(self.command or '').name}"
        return f"{self.transport}: {self.url}"


@dataclass(frozen=True)
class ServerPolicy:
    """webhost's per-server settings: app tool-call approvals, granted permissions, CSP compat flags."""

    default_decision: Decision = "allow"
    tools: Mapping[str, Decision] = field(default_factory=dict)
    permissions: frozenset[str] = frozenset()
    compat: frozenset[str] = frozenset()
    open_links: Literal["ask", "allow"] = "ask"

    def decision_for(self, tool: str) -> Decision:
        return self.tools.get(tool, self.default_decision)


@dataclass(frozen=True)
class Root:
    uri: str
    name: str | None = None


@dataclass(frozen=True)
class WebhostOptions:
    allowed_origins: tuple[str, ...] = ()
    connect_timeout: float = 30.0
    call_timeout: float = 120.0
    human_timeout: float = 1800.0
    app_handshake_timeout: float = 15.0
    max_input_rounds: int = 10
    roots: tuple[Root, ...] = ()
    data_dir: str | None = None
    servers: Mapping[str, ServerPolicy] = field(default_factory=dict)

    def policy(self, server: str) -> ServerPolicy:
        return self.servers.get(server, ServerPolicy())


@dataclass(frozen=True)
class Config:
    source: str
    servers: Mapping[str, ServerConfig]
    options: WebhostOptions = field(default_factory=WebhostOptions)


def load_config(path: Path, environ: Mapping[str, str] | None = None) -> Config:
    """Read and validate a configuration file; raise ConfigError with one clear message."""
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise ConfigError(f"{path}: file not found") from None
    except (OSError, UnicodeDecodeError) as exc:
        raise ConfigError(f"{path}: cannot read the file ({exc})") from None
    return parse_config(text, str(path), os.environ if environ is None else environ)


def parse_config(text: str, source: str, environ: Mapping[str, str]) -> Config:
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        raise ConfigError(f"{source}: invalid JSON at line {exc.lineno}, column {exc.colno}: {exc.msg}") from None
    if not isinstance(data, dict):
        raise ConfigError(f"{source}: the top level must be a JSON object with an \"mcpServers\" key")
    raw_servers = data.get("mcpServers")
    if raw_servers is None:
        raise ConfigError(f"{source}: missing \"mcpServers\" (an object mapping server names to entries)")
    if not isinstance(raw_servers, dict):
        raise ConfigError(f"{source}: \"mcpServers\" must be an object mapping server names to entries")
    servers: dict[str, ServerConfig] = {}
    for name, entry in raw_servers.items():
        servers[name] = _parse_server(source, name, entry, environ)
    options = _parse_options(source, data.get("webhost", {}), servers)
    return Config(source=source, servers=servers, options=options)


def _fail(source: str, where: str, message: str) -> ConfigError:
    return ConfigError(f"{source}: {where}: {message}")


def _parse_server(source: str, name: str, entry: object, environ: Mapping[str, str]) -> ServerConfig:
    where = f"mcpServers.{name}"
    if not _NAME.match(name):
        raise _fail(source, where, "server names may use letters, digits, '.', '_' and '-' (at most 64)")
    if not isinstance(entry, dict):
        raise _fail(source, where, "each server entry must be an object")
    kind = entry.get("type")
    if kind is not None and not isinstance(kind, str):
        raise _fail(source, f"{where}.type", "must be a string: \"stdio\", \"http\" or \"sse\"")
    if kind is None:
        kind = "stdio" if "command" in entry else "http" if "url" in entry else None
        if kind is None:
            raise _fail(source, where, "needs either \"command\" (stdio) or \"url\" (HTTP)")
    if kind == "stdio":
        return _parse_stdio(source, where, name, entry, environ)
    if kind in _HTTP_TYPES or kind == "sse":
        transport: Transport = "sse" if kind == "sse" else "http"
        return _parse_http(source, where, name, transport, entry, environ)
    raise _fail(source, f"{where}.type", f"unknown transport {kind!r} (use \"stdio\", \"http\" or \"sse\")")


def _parse_stdio(
    source: str, where: str, name: str, entry: dict[str, Any], environ: Mapping[str, str]
) -> ServerConfig:
    command = entry.get("command")
    if not isinstance(command, str) or not command.strip():
        raise _fail(source, f"{where}.command", "must be a non-empty string")
    args = entry.get("args", [])
    if not isinstance(args, list) or not all(isinstance(a, str) for a in args):
        raise _fail(source, f"{where}.args", "must be a list of strings")
    cwd = entry.get("cwd")
    if cwd is not None and not isinstance(cwd, str):
        raise _fail(source, f"{where}.cwd", "must be a string")
    env = _string_map(source, f"{where}.env", entry.get("env", {}), environ)
    return ServerConfig(name=name, transport="stdio", command=command, args=tuple(args), env=env, cwd=cwd)


def _parse_http(
    source: str, where: str, name: str, transport: Transport, entry: dict[str, Any], environ: Mapping[str, str]
) -> ServerConfig:
    url = entry.get("url")
    if not isinstance(url, str):
        raise _fail(source, f"{where}.url", "must be a string (an http:// or https:// URL)")
    url = _expand(source, f"{where}.url", url, environ)
    parts = urlsplit(url)
    if parts.scheme not in ("http", "https") or not parts.netloc:
        raise _fail(source, f"{where}.url", "must be an absolute http:// or https:// URL")
    headers = _string_map(source, f"{where}.headers", entry.get("headers", {}), environ)
    return ServerConfig(name=name, transport=transport, url=url, headers=headers)


def _string_map(source: str, where: str, value: object, environ: Mapping[str, str]) -> dict[str, str]:
    if not isinstance(value, dict):
        raise _fail(source, where, "must be an object of string values")
    result: dict[str, str] = {}
    for key, item in value.items():
        if not isinstance(item, str):
            raise _fail(source, f"{where}.{key}", "must be a string")
        result[key] = _expand(source, f"{where}.{key}", item, environ)
    return result


def _expand(source: str, where: str, value: str, environ: Mapping[str, str]) -> str:
    """Expand ${VAR} and ${VAR:-default} from the environment; an unset VAR without default is an error."""

    def substitute(match: re.Match[str]) -> str:
        var, default = match.group(1), match.group(2)
        if var in environ:
            return environ[var]
        if default is not None:
            return default
        raise _fail(source, where, f"environment variable {var} is not set")

    return _VAR.sub(substitute, value)


def _parse_options(source: str, raw: object, servers: Mapping[str, ServerConfig]) -> WebhostOptions:
    where = "webhost"
    if not isinstance(raw, dict):
        raise _fail(source, where, "must be an object")
    origins = raw.get("allowedOrigins", [])
    if not isinstance(origins, list) or not all(isinstance(o, str) and _is_origin(o) for o in origins):
        raise _fail(source, f"{where}.allowedOrigins", "must be a list of origins like \"https://host.example\"")
    timeouts = raw.get("timeouts", {})
    if not isinstance(timeouts, dict):
        raise _fail(source, f"{where}.timeouts", "must be an object of seconds")
    seconds = {}
    for key, default in (("connect", 30.0), ("call", 120.0), ("human", 1800.0), ("appHandshake", 15.0)):
        value = timeouts.get(key, default)
        if isinstance(value, bool) or not isinstance(value, int | float) or value <= 0:
            raise _fail(source, f"{where}.timeouts.{key}", "must be a positive number of seconds")
        seconds[key] = float(value)
    rounds = raw.get("maxInputRounds", 10)
    if isinstance(rounds, bool) or not isinstance(rounds, int) or not 1 <= rounds <= 100:
        raise _fail(source, f"{where}.maxInputRounds", "must be an integer from 1 to 100")
    data_dir = raw.get("dataDir")
    if data_dir is not None and not isinstance(data_dir, str):
        raise _fail(source, f"{where}.dataDir", "must be a string path")
    return WebhostOptions(
        allowed_origins=tuple(o.rstrip("/") for o in origins),
        connect_timeout=seconds["connect"],
        call_timeout=seconds["call"],
        human_timeout=seconds["human"],
        app_handshake_timeout=seconds["appHandshake"],
        max_input_rounds=rounds,
        roots=_parse_roots(source, raw.get("roots", [])),
        data_dir=data_dir,
        servers=_parse_policies(source, raw.get("servers", {}), servers),
    )


def _is_origin(value: str) -> bool:
    parts = urlsplit(value.rstrip("/"))
    return parts.scheme in ("http", "https") and bool(parts.netloc) and not parts.path


def _parse_roots(source: str, raw: object) -> tuple[Root, ...]:
    if not isinstance(raw, list):
        raise _fail(source, "webhost.roots", "must be a list of {\"uri\": \"file:///...\", \"name\": \"...\"}")
    roots = []
    for index, item in enumerate(raw):
        where = f"webhost.roots[{index}]"
        if not isinstance(item, dict) or not isinstance(item.get("uri"), str):
            raise _fail(source, where, "must be an object with a string \"uri\"")
        if not item["uri"].startswith("file://"):
            raise _fail(source, f"{where}.uri", "must be a file:// URI")
        name = item.get("name")
        if name is not None and not isinstance(name, str):
            raise _fail(source, f"{where}.name", "must be a string")
        roots.append(Root(uri=item["uri"], name=name))
    return tuple(roots)


def _parse_policies(source: str, raw: object, servers: Mapping[str, ServerConfig]) -> dict[str, ServerPolicy]:
    if not isinstance(raw, dict):
        raise _fail(source, "webhost.servers", "must be an object keyed by server name")
    policies = {}
    for name, item in raw.items():
        where = f"webhost.servers.{name}"
        if name not in servers:
            raise _fail(source, where, "names a server that is not in mcpServers")
        if not isinstance(item, dict):
            raise _fail(source, where, "must be an object")
        default = item.get("appToolCalls", "allow")
        if default not in ("allow", "ask", "deny"):
            raise _fail(source, f"{where}.appToolCalls", "must be \"allow\", \"ask\" or \"deny\"")
        tools = item.get("tools", {})
        if not isinstance(tools, dict) or not all(v in ("allow", "ask", "deny") for v in tools.values()):
            raise _fail(source, f"{where}.tools", "must map tool names to \"allow\", \"ask\" or \"deny\"")
        permissions = item.get("permissions", [])
        if not isinstance(permissions, list) or not set(permissions) <= _PERMISSIONS:
            raise _fail(source, f"{where}.permissions", f"must be a list drawn from {sorted(_PERMISSIONS)}")
        compat = item.get("cspCompat", [])
        if not isinstance(compat, list) or not set(compat) <= _COMPAT_FLAGS:
            raise _fail(source, f"{where}.cspCompat", f"must be a list drawn from {sorted(_COMPAT_FLAGS)}")
        open_links = item.get("openLinks", "ask")
        if open_links not in ("ask", "allow"):
            raise _fail(source, f"{where}.openLinks", "must be \"ask\" or \"allow\"")
        policies[name] = ServerPolicy(
            default_decision=default,
            tools=dict(tools),
            permissions=frozenset(permissions),
            compat=frozenset(compat),
            open_links=open_links,
        )
    return policies
