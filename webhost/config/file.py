"""The mcpServers configuration file: parse, expand ${VAR}, validate, and fail with one clear message.

The file is the one other MCP tools read (Claude Desktop, VS Code, Cursor, the Inspector), so
server entries and the keys of other tools are read leniently (unknown keys are ignored), and webhost's
own settings live beside `mcpServers` under a `"webhost"` key, where an unknown key is an error (a typo
would otherwise be a setting silently not applied); the keys known there are listed from the models
themselves (`keys.py`). The shapes are pydantic models; `_message` turns pydantic's first error
into the one line a person reads.
"""

from __future__ import annotations

import json
import os
import stat
from collections.abc import Mapping
from pathlib import Path
from typing import Annotated, Any, Literal, get_args
from urllib.parse import urlsplit

from pydantic import (
    AfterValidator,
    AliasPath,
    BaseModel,
    ConfigDict,
    Field,
    PrivateAttr,
    StringConstraints,
    ValidationError,
    ValidationInfo,
    ValidatorFunctionWrapHandler,
    field_validator,
    model_validator,
)
from pydantic_core import ErrorDetails

from webhost.config.access import ACCESS_MESSAGES, AccessOptions
from webhost.config.access_rules import ACCESS_RULES_MESSAGES
from webhost.config.auth import AUTH_MESSAGES, AuthOptions, IdentityProvider, OAuthClient
from webhost.config.chat import CHAT_MESSAGES, ChatOptions, Decision
from webhost.config.keys import unknown_key
from webhost.config.limits import LIMITS_MESSAGES, AuditOptions, Limits
from webhost.config.refs import ERROR as _ERROR
from webhost.config.refs import INPUT_REF as _INPUT_REF
from webhost.config.refs import Expanded
from webhost.config.refs import expand as _expand
from webhost.config.refs import expansions as _expansions
from webhost.config.refs import invalid as _invalid
from webhost.redact import Redactor, redact_url, url_secrets
from webhost.storage.urls import database_url_problem

Transport = Literal["stdio", "http", "sse"]
# Which protocol era webhost speaks to a server: negotiate (`server/discover`, else `initialize`), or one era only.
ProtocolChoice = Literal["auto", "2026-07-28", "legacy"]
Permission = Literal["camera", "microphone", "geolocation", "clipboardWrite"]
CompatFlag = Literal["eval", "wasm", "workers", "blobWorkers", "dataModules"]

_HTTP_TYPES = {"http", "streamable-http", "streamableHttp", "streamable_http"}
_NAME_PATTERN = r"^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$"
_INPUT_ID_PATTERN = r"^[A-Za-z0-9_.-]{1,64}$"


class ConfigError(Exception):
    """A bad configuration file; the message names the file, the entry and the field."""


def _origin(value: str) -> str:
    parts = urlsplit(value.rstrip("/"))
    if parts.scheme not in ("http", "https") or not parts.netloc or parts.path:
        raise ValueError("not an origin")
    return value.rstrip("/")


def _file_uri(value: str) -> str:
    if not value.startswith("file://"):
        raise _invalid("must be a file:// URI")
    return value


Origin = Annotated[str, AfterValidator(_origin)]
Seconds = Annotated[float, Field(strict=True, gt=0, allow_inf_nan=False)]


class _Model(BaseModel):
    model_config = ConfigDict(frozen=True, populate_by_name=True, extra="ignore")


class ServerConfig(_Model):
    name: str
    transport: Transport = Field(validation_alias="type")
    command: str | None = Field(None, validate_default=True)  # ${VAR} expanded; ${user.*}, ${input:*} refused
    args: tuple[str, ...] = ()
    env: Mapping[str, Expanded] = Field(default_factory=dict, repr=False)  # values may be secrets
    cwd: str | None = None
    url: str | None = Field(None, validate_default=True)
    headers: Mapping[str, Expanded] = Field(default_factory=dict, repr=False)
    oauth: OAuthClient | None = None  # remote servers only: the client identity for the MCP authorization flow
    _expanded: frozenset[str] = PrivateAttr(default=frozenset())  # what each ${VAR} became

    @model_validator(mode="wrap")
    @classmethod
    def _remember_expansions(cls, data: Any, handler: ValidatorFunctionWrapHandler, info: ValidationInfo) -> Any:
        model = handler(data)
        if isinstance(data, dict) and isinstance(model, ServerConfig):
            environ: Mapping[str, str] = (info.context or {}).get("environ", {})
            raw = [data.get("url")]
            for key in ("env", "headers"):
                if isinstance(data.get(key), dict):
                    raw += list(data[key].values())
            model._expanded = frozenset(v for text in raw if isinstance(text, str) for v in _expansions(text, environ))
        return model

    @model_validator(mode="before")
    @classmethod
    def _infer_transport(cls, data: Any) -> Any:
        """Entries without "type" are stdio when they have a command, HTTP when they have a URL; keys
        that belong to the other transport are ignored, as other tools do."""
        if not isinstance(data, dict):
            return data
        kind = data.get("type")
        if kind is None:
            if "command" not in data and "url" not in data:
                raise _invalid('needs either "command" (stdio) or "url" (HTTP)')
            kind = "stdio" if "command" in data else "http"
        if kind == "stdio":
            return {k: v for k, v in data.items() if k not in ("url", "headers", "oauth")} | {"type": kind}
        if isinstance(kind, str) and (kind in _HTTP_TYPES or kind == "sse"):
            keep = {k: v for k, v in data.items() if k not in ("command", "args", "env", "cwd")}
            return keep | {"type": "sse" if kind == "sse" else "http"}
        return data | {"type": kind}

    @field_validator("transport", mode="before")
    @classmethod
    def _known_transport(cls, value: Any) -> Any:
        if not isinstance(value, str):
            raise _invalid('must be a string: "stdio", "http" or "sse"')
        if value not in ("stdio", "http", "sse"):
            raise _invalid(f'unknown transport {value!r} (use "stdio", "http" or "sse")')
        return value

    @field_validator("command")
    @classmethod
    def _command_for_stdio(cls, value: str | None, info: ValidationInfo) -> str | None:
        if info.data.get("transport") != "stdio":
            return value
        if value is not None:
            # Expanded as env, headers and url are; a value of one person cannot choose the process everyone's
            # connection runs (nor could it be masked from the page, which names the command).
            if "${user." in value or "${input:" in value:
                raise _invalid("${user.*} and ${input:*} are each person's values: use them in env, not in command")
            value = _expand(value, info)
        if not (value and value.strip()):
            raise _invalid("must be a non-empty string")
        return value

    @field_validator("url")
    @classmethod
    def _url_for_http(cls, value: str | None, info: ValidationInfo) -> str | None:
        if info.data.get("transport") in (None, "stdio"):
            return value
        if value is None:
            raise _invalid("must be a string (an http:// or https:// URL)")
        value = _expand(value, info)
        parts = urlsplit(value)
        if parts.scheme not in ("http", "https") or not parts.netloc:
            raise _invalid("must be an absolute http:// or https:// URL")
        return value

    @property
    def input_ids(self) -> tuple[str, ...]:
        """The `${input:ID}` this entry uses (in `url`, `env` and `headers`), in order of first use."""
        found: dict[str, None] = {}
        for text in (self.url or "", *self.env.values(), *self.headers.values()):
            found.update(dict.fromkeys(_INPUT_REF.findall(text)))
        return tuple(found)

    @property
    def secret_values(self) -> frozenset[str]:
        """The values masked in what webhost builds from this entry (its target, its connect errors, its own
        stderr and log lines): each `${VAR}` and `${input:ID}` expansion, every header value, the URL's
        userinfo and query values, and the OAuth client's secret and key. A literal `env` value is not one
        (write `${VAR}` for a secret), and a value is never masked in what a server sends by itself."""
        return frozenset(
            self._expanded
            | set(self.headers.values())
            | (url_secrets(self.url) if self.url else set())
            | (self.oauth.secret_values if self.oauth is not None else set())
        )

    def redactor(self) -> Redactor:
        return Redactor(self.secret_values)

    def redacted_url(self) -> str | None:
        """The URL as the page may show it: userinfo and query values masked, and no secret elsewhere."""
        return None if self.url is None else self.redactor().text(redact_url(self.url))

    def describe(self) -> str:
        """A short, secret-free description for the page (never env values, headers or URL secrets)."""
        if self.transport == "stdio":
            return f"stdio: {Path(self.command or '').name}"
        return f"{self.transport}: {self.redacted_url()}"


class InputSpec(_Model):
    """One entry of the top-level `"inputs"` list (as mcp.json files have it): a value each person provides."""

    type: Literal["promptString"] = "promptString"
    id: Annotated[str, StringConstraints(pattern=_INPUT_ID_PATTERN)]
    description: str = ""
    password: bool = Field(default=False, strict=True)
    default: str | None = None

    def public(self) -> dict[str, Any]:
        """What the page may show to ask for it (never a value a person gave)."""
        return {
            "id": self.id,
            "description": self.description or self.id,
            "password": self.password,
            "default": None if self.password else self.default,
        }


class ServerPolicy(_Model):
    """webhost's per-server settings: app tool-call approvals, granted permissions, CSP compat flags."""

    default_decision: Decision = Field(default="allow", validation_alias="appToolCalls")
    tools: Mapping[str, Decision] = Field(default_factory=dict)
    permissions: frozenset[Permission] = frozenset()
    compat: frozenset[CompatFlag] = Field(default=frozenset(), validation_alias="cspCompat")
    open_links: Literal["ask", "allow"] = Field(default="ask", validation_alias="openLinks")
    # The chat (contract §8): the model's tool calls on this server, for all its tools and per tool; None: the
    # chat's own `toolCalls`. And whether the model is given a result's structuredContent (as text).
    model_tool_calls: Decision | None = Field(default=None, validation_alias="modelToolCalls")
    model_tools: Mapping[str, Decision] = Field(default_factory=dict, validation_alias="modelTools")
    model_sees_structured_content: bool = Field(
        default=False, validation_alias="modelSeesStructuredContent", strict=True
    )
    # The era to speak: "auto" probes `server/discover` and falls back to `initialize`; the other two speak one era
    # only (a debugging host should not rely on auto alone: a server that answers both is then tried in each).
    protocol: ProtocolChoice = "auto"

    def decision_for(self, tool: str) -> Decision:
        return self.tools.get(tool, self.default_decision)


class Root(_Model):
    uri: Annotated[str, AfterValidator(_file_uri)]
    name: str | None = None


def _seconds(key: str, default: float) -> Any:
    return Field(default=default, validation_alias=AliasPath("timeouts", key))


def _database(value: str | None) -> str | None:
    if value is not None:
        problem = database_url_problem(value)
        if problem:
            raise _invalid(problem)
    return value


class WebhostOptions(_Model):
    allowed_origins: tuple[Origin, ...] = Field(default=(), validation_alias="allowedOrigins")
    connect_timeout: Seconds = _seconds("connect", 30.0)
    call_timeout: Seconds = _seconds("call", 120.0)
    # A call that reports progress gets `call` more seconds from each note, up to this much in all.
    max_total_timeout: Seconds = _seconds("maxTotal", 3600.0)
    human_timeout: Seconds = _seconds("human", 1800.0)
    app_handshake_timeout: Seconds = _seconds("appHandshake", 15.0)
    idle_timeout: Annotated[float, Field(strict=True, ge=0, allow_inf_nan=False)] = _seconds("idle", 60.0)
    max_input_rounds: int = Field(default=10, validation_alias="maxInputRounds", strict=True, ge=1, le=100)
    roots: tuple[Root, ...] = ()
    data_dir: str | None = Field(default=None, validation_alias="dataDir")
    servers: Mapping[str, ServerPolicy] = Field(default_factory=dict)
    limits: Limits = Limits()
    audit: AuditOptions = AuditOptions()
    auth: AuthOptions = AuthOptions()
    chat: ChatOptions = ChatOptions()
    access: AccessOptions = AccessOptions()
    database: Annotated[Expanded | None, AfterValidator(_database)] = Field(default=None, repr=False)
    # Only so that a "timeouts" that is not an object is an error; the values are the fields above.
    timeouts: Mapping[str, Any] = Field(default_factory=dict, repr=False, exclude=True)

    def policy(self, server: str) -> ServerPolicy:
        return self.servers.get(server, ServerPolicy())


class Config(_Model):
    source: str
    servers: Mapping[Annotated[str, StringConstraints(pattern=_NAME_PATTERN)], ServerConfig] = Field(
        validation_alias="mcpServers"
    )
    options: WebhostOptions = Field(default=WebhostOptions(), validation_alias="webhost")
    inputs: tuple[InputSpec, ...] = ()

    @model_validator(mode="after")
    def _inputs_declared(self) -> Config:
        seen: set[str] = set()
        for index, spec in enumerate(self.inputs):
            if spec.id in seen:
                raise _invalid(f"inputs[{index}]: the id {spec.id!r} is declared twice")
            seen.add(spec.id)
        users = [(f"mcpServers.{s.name}", s.input_ids) for s in self.servers.values()]
        users += [(f"webhost.chat.models[{i}]", m.input_ids) for i, m in enumerate(self.options.chat.models)]
        for where, input_ids in users:
            for input_id in input_ids:
                if input_id not in seen:
                    raise _invalid(
                        f"{where}: uses ${{input:{input_id}}}, but no entry of the "
                        f'top-level "inputs" list has "id": "{input_id}"'
                    )
        return self

    @model_validator(mode="after")
    def _identity_providers(self) -> Config:
        """An `identity_assertion` entry exchanges the person's identity at an identity provider: its own
        `identityProvider`, or the one people sign in with (`webhost.auth` in oidc mode)."""
        auth = self.options.auth
        for server in self.servers.values():
            oauth = server.oauth
            if oauth is None or oauth.grant != "identity_assertion":
                continue
            idp = oauth.identity_provider or IdentityProvider.model_validate({})
            if not (idp.token_endpoint or idp.issuer or auth.mode == "oidc"):
                raise _invalid(
                    f'mcpServers.{server.name}.oauth: "identity_assertion" needs an identity provider: '
                    '"identityProvider": {"issuer" or "tokenEndpoint"}, or webhost.auth in "oidc" mode'
                )
            if not (idp.subject_token or auth.mode == "oidc"):
                raise _invalid(
                    f'mcpServers.{server.name}.oauth: "identity_assertion" exchanges the signed-in person\'s ID '
                    'token, so it needs webhost.auth in "oidc" mode (or "identityProvider": {"subjectToken"})'
                )
        return self

    @model_validator(mode="after")
    def _access_names_configured(self) -> Config:
        """A rule for a server or model that is not configured is a typo: it would guard nothing."""
        access = self.options.access
        for name in access.servers:
            if name not in self.servers:
                raise _invalid(f'webhost.access.servers.{name}: no server "{name}" in mcpServers')
        model_ids = {model.id for model in self.options.chat.models}
        for model_id in access.models:
            if model_id not in model_ids:
                raise _invalid(f'webhost.access.models.{model_id}: no model "{model_id}" in webhost.chat.models')
        return self

    def input_spec(self, input_id: str) -> InputSpec | None:
        return next((spec for spec in self.inputs if spec.id == input_id), None)

    @field_validator("servers", mode="before")
    @classmethod
    def _name_entries(cls, value: Any) -> Any:
        if not isinstance(value, dict):
            return value
        return {name: entry | {"name": name} if isinstance(entry, dict) else entry for name, entry in value.items()}

    def redactor(self) -> Redactor:
        """Every server's secret values (`ServerConfig.secret_values`) and the sign-in's and the chat's keys: for
        what no single server owns (the audit export, "What the model saw")."""
        return Redactor(
            [
                *(value for server in self.servers.values() for value in server.secret_values),
                *self.options.auth.secret_values,
                *self.options.chat.secret_values,
            ]
        )


# Messages for pydantic's own errors (wrong type, missing, not one of the choices), by where they
# happen; `*` is any one server name, key or index. An error inside a list or map with no entry of
# its own is reported on the list or map.
_MESSAGES = {
    "mcpServers.*": "each server entry must be an object",
    "mcpServers.*.[key]": "server names may use letters, digits, '.', '_' and '-' (at most 64), "
    "starting with a letter or digit",
    "mcpServers.*.command": "must be a non-empty string",
    "mcpServers.*.args": "must be a list of strings",
    "mcpServers.*.cwd": "must be a string",
    "mcpServers.*.url": "must be a string (an http:// or https:// URL)",
    "mcpServers.*.env": "must be an object of string values",
    "mcpServers.*.env.*": "must be a string",
    "mcpServers.*.headers": "must be an object of string values",
    "mcpServers.*.headers.*": "must be a string",
    "inputs": 'must be a list of {"type": "promptString", "id": "...", "description": "..."}',
    "inputs.*": 'must be an object with "type": "promptString" and an "id"',
    "inputs.*.type": 'only "promptString" inputs are supported',
    "inputs.*.id": "must be a string of letters, digits, '.', '_' and '-' (at most 64)",
    "inputs.*.description": "must be a string",
    "inputs.*.password": "must be true or false",
    "inputs.*.default": "must be a string",
    "webhost": "must be an object",
    "webhost.allowedOrigins": 'must be a list of origins like "https://host.example"',
    "webhost.timeouts": "must be an object of seconds",
    "webhost.timeouts.*": "must be a positive number of seconds",
    "webhost.maxInputRounds": "must be an integer from 1 to 100",
    "webhost.dataDir": "must be a string path",
    "webhost.roots": 'must be a list of {"uri": "file:///...", "name": "..."}',
    "webhost.roots.*": 'must be an object with a string "uri"',
    "webhost.roots.*.uri": "must be a string file:// URI",
    "webhost.roots.*.name": "must be a string",
    "webhost.database": "must be a string URL",
    "webhost.servers": "must be an object keyed by server name",
    "webhost.servers.*": "must be an object",
    "webhost.servers.*.appToolCalls": 'must be "allow", "ask" or "deny"',
    "webhost.servers.*.tools": 'must map tool names to "allow", "ask" or "deny"',
    "webhost.servers.*.permissions": f"must be a list drawn from {sorted(get_args(Permission))}",
    "webhost.servers.*.cspCompat": f"must be a list drawn from {sorted(get_args(CompatFlag))}",
    "webhost.servers.*.openLinks": 'must be "ask" or "allow"',
    "webhost.servers.*.modelToolCalls": 'must be "allow", "ask" or "deny"',
    "webhost.servers.*.modelTools": 'must map tool names to "allow", "ask" or "deny"',
    "webhost.servers.*.modelSeesStructuredContent": "must be true or false",
    "webhost.servers.*.protocol": 'must be "auto", "2026-07-28" or "legacy"',
    **ACCESS_RULES_MESSAGES,
    **AUTH_MESSAGES,
    **LIMITS_MESSAGES,
    **CHAT_MESSAGES,
    **ACCESS_MESSAGES,
}


def _matches(pattern: str, loc: tuple[int | str, ...]) -> bool:
    parts = pattern.split(".")
    return len(parts) == len(loc) and all(p in ("*", str(part)) for p, part in zip(parts, loc, strict=True))


def _where(loc: tuple[int | str, ...]) -> str:
    where = ""
    for part in loc:
        if part == "[key]":
            continue
        where += f"[{part}]" if isinstance(part, int) else f".{part}" if where else str(part)
    return where


def _message(error: ErrorDetails) -> tuple[str, str]:
    """Where an error is (`mcpServers.a.env.K`) and what a person should read about it."""
    loc = tuple(error["loc"])
    if error["type"] == _ERROR:
        return _where(loc), str((error.get("ctx") or {})["message"])
    for end in range(len(loc), 0, -1):
        message = next((m for p, m in _MESSAGES.items() if _matches(p, loc[:end])), None)
        if message is not None:
            return _where(loc[:end]), message
    return _where(loc), error["msg"]


def load_config(path: Path, environ: Mapping[str, str] | None = None) -> Config:
    """Read and validate a configuration file; raise ConfigError with one clear message."""
    try:
        mode = path.stat().st_mode
    except FileNotFoundError:
        raise ConfigError(f"{path}: file not found") from None
    except OSError as exc:
        raise ConfigError(f"{path}: cannot read the file ({exc.strerror or exc})") from None
    # Checked before opening: reading a FIFO or a device would block or never end.
    if not stat.S_ISREG(mode):
        kind = "a directory" if stat.S_ISDIR(mode) else "not a regular file"
        raise ConfigError(f"{path}: cannot read the file ({kind})")
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise ConfigError(f"{path}: cannot read the file ({exc})") from None
    return parse_config(text, str(path), os.environ if environ is None else environ)


def parse_config(text: str, source: str, environ: Mapping[str, str]) -> Config:
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        raise ConfigError(f"{source}: invalid JSON at line {exc.lineno}, column {exc.colno}: {exc.msg}") from None
    except RecursionError:
        raise ConfigError(f"{source}: invalid JSON: nested too deeply") from None
    except ValueError:  # the one other failure: an integer literal longer than Python's digit limit
        raise ConfigError(f"{source}: invalid JSON: a number has too many digits") from None
    if not isinstance(data, dict):
        raise ConfigError(f'{source}: the top level must be a JSON object with an "mcpServers" key')
    if data.get("mcpServers") is None:
        raise ConfigError(f'{source}: missing "mcpServers" (an object mapping server names to entries)')
    if not isinstance(data["mcpServers"], dict):
        raise ConfigError(f'{source}: "mcpServers" must be an object mapping server names to entries')
    unknown = unknown_key(WebhostOptions, data.get("webhost"), "webhost")
    if unknown is not None:
        raise ConfigError(f"{source}: {unknown}")
    try:
        config = Config.model_validate({**data, "source": source}, context={"environ": environ})
    except ValidationError as exc:
        where, message = _message(exc.errors()[0])
        raise ConfigError(f"{source}: {where}: {message}" if where else f"{source}: {message}") from None
    except RecursionError:
        raise ConfigError(f"{source}: nested too deeply") from None
    for name in config.options.servers:
        if name not in config.servers:
            raise ConfigError(f"{source}: webhost.servers.{name}: names a server that is not in mcpServers")
    return config
