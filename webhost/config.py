"""The mcpServers configuration file: parse, expand ${VAR}, validate, and fail with one clear message.

The file is the one other MCP tools read (Claude Desktop, VS Code, Cursor, the Inspector), so
server entries and the keys of other tools are read leniently (unknown keys are ignored), and webhost's
own settings live beside `mcpServers` under a `"webhost"` key, where an unknown key is an error (a typo
would otherwise be a setting silently not applied); the keys known there are listed from the models
themselves (`config_keys.py`). The shapes are pydantic models; `_message` turns pydantic's first error
into the one line a person reads.
"""

from __future__ import annotations

import ipaddress
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

from webhost.config_chat import CHAT_MESSAGES, ChatOptions, Decision
from webhost.config_keys import unknown_key
from webhost.config_refs import ERROR as _ERROR
from webhost.config_refs import INPUT_REF as _INPUT_REF
from webhost.config_refs import Expanded
from webhost.config_refs import expand as _expand
from webhost.config_refs import expansions as _expansions
from webhost.config_refs import invalid as _invalid
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


class IdentityProvider(_Model):
    """`oauth.identityProvider` of an `identity_assertion` entry (SEP-990): where the person's identity is
    exchanged for an ID-JAG (RFC 8693 token exchange). Each key defaults to `webhost.auth`'s (oidc mode)."""

    issuer: str | None = None  # the IdP's issuer (its token endpoint from `/.well-known/openid-configuration`)
    token_endpoint: str | None = Field(None, validation_alias="tokenEndpoint")
    client_id: Expanded | None = Field(None, validation_alias="clientId")
    client_secret: Expanded | None = Field(None, validation_alias="clientSecret", repr=False)
    # The ID token exchanged; default: the signed-in person's own (oidc mode). A fixed one is for a deployment
    # whose every person acts as one identity (and for conformance runs), from the environment.
    subject_token: Expanded | None = Field(None, validation_alias="subjectToken", repr=False)


class OAuthClient(_Model):
    """A server entry's `"oauth"`: how webhost identifies itself to the server's authorization server.

    Without it (or without `clientId`) webhost uses a Client ID Metadata Document when `clientMetadataUrl`
    is given, or its own (`PUBLIC-ORIGIN/oauth/client-metadata.json`, on an https public origin), when the
    authorization server supports them, else dynamic client registration, as the MCP authorization spec orders.
    """

    client_id: str | None = Field(None, validation_alias="clientId")
    client_secret: Expanded | None = Field(None, validation_alias="clientSecret", repr=False)
    scopes: tuple[str, ...] = ()
    client_metadata_url: str | None = Field(None, validation_alias="clientMetadataUrl")
    client_name: str = Field("webhost", validation_alias="clientName")
    # "client_credentials": webhost itself is the client (no person signs in): with clientSecret, or with
    # privateKey (a PEM, RFC 7523 private_key_jwt signed with signingAlgorithm).
    # "identity_assertion": enterprise-managed authorization (SEP-990): the person's identity from the identity
    # provider becomes an ID-JAG (token exchange), which `issuer`'s token endpoint takes (RFC 7523 jwt-bearer)
    # from the confidential client `clientId`/`clientSecret`; nobody is sent to an authorization page.
    grant: Literal["authorization_code", "client_credentials", "identity_assertion"] = Field(
        "authorization_code", validation_alias="grantType"
    )
    private_key: Expanded | None = Field(None, validation_alias="privateKey", repr=False)
    signing_algorithm: str = Field("RS256", validation_alias="signingAlgorithm")
    issuer: str | None = (
        None  # identity_assertion: the MCP authorization server's issuer (configuration, not discovery)
    )
    identity_provider: IdentityProvider | None = Field(None, validation_alias="identityProvider")

    @model_validator(mode="after")
    def _complete(self) -> OAuthClient:
        if self.grant == "identity_assertion":
            for key, value in (("clientId", self.client_id), ("clientSecret", self.client_secret)):
                if not value:
                    raise _invalid(f'"grantType": "identity_assertion" needs "{key}" (a confidential client)')
            parts = urlsplit(self.issuer or "")
            if parts.scheme not in ("http", "https") or not parts.netloc:
                raise _invalid(
                    '"grantType": "identity_assertion" needs "issuer", the authorization server\'s issuer URL'
                )
        return self

    @property
    def secret_values(self) -> set[str]:
        idp = self.identity_provider
        values = {self.client_secret, self.private_key}
        if idp is not None:
            values |= {idp.client_secret, idp.subject_token}
        return {value for value in values if value}


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


class AuditOptions(_Model):
    """`webhost.audit`: how long the audit log keeps rows and how fast apps and people may add them."""

    retention_days: float | None = Field(
        default=90.0, validation_alias="retentionDays", strict=True, gt=0, allow_inf_nan=False
    )
    max_rows: int | None = Field(default=1_000_000, validation_alias="maxRows", strict=True, ge=1000)
    max_row_bytes: int = Field(default=16 * 1024, validation_alias="maxRowBytes", strict=True, ge=1024, le=1024 * 1024)
    frame_rows_per_second: float = Field(
        default=10.0, validation_alias="frameRowsPerSecond", strict=True, gt=0, allow_inf_nan=False
    )
    frame_burst: int = Field(default=100, validation_alias="frameBurst", strict=True, ge=1)
    person_rows_per_second: float = Field(
        default=20.0, validation_alias="personRowsPerSecond", strict=True, gt=0, allow_inf_nan=False
    )
    person_burst: int = Field(default=300, validation_alias="personBurst", strict=True, ge=1)
    person_bytes_per_second: float = Field(
        default=64 * 1024, validation_alias="personBytesPerSecond", strict=True, gt=0, allow_inf_nan=False
    )
    person_burst_bytes: int = Field(
        default=4 * 1024 * 1024, validation_alias="personBurstBytes", strict=True, ge=1024 * 1024
    )


def _seconds(key: str, default: float) -> Any:
    return Field(default=default, validation_alias=AliasPath("timeouts", key))


MiB = 1024 * 1024
GiB = 1024 * MiB


class Limits(_Model):
    """How much one tab may be sent: a result's encoded size, and what may queue for a tab that reads slowly."""

    max_result_bytes: int = Field(
        default=32 * MiB, validation_alias="maxResultBytes", strict=True, ge=64 * 1024, le=GiB
    )
    max_queued_bytes: int = Field(default=64 * MiB, validation_alias="maxQueuedBytes", strict=True, ge=MiB, le=4 * GiB)


AuthMode = Literal["token", "oidc", "proxy"]
_HEADER_PATTERN = r"^[A-Za-z0-9!#$%&'*+.^_`|~-]{1,128}$"


def _network(value: str) -> str:
    try:
        ipaddress.ip_network(value, strict=False)
    except ValueError:
        raise _invalid(f'{value!r} is not an IP address or CIDR (like "127.0.0.1/32" or "10.0.0.0/8")') from None
    return value


class AuthOptions(_Model):
    """`webhost.auth`: how people get in (contract §5). One shape for the three modes; `_complete`
    checks that each mode has what it needs."""

    mode: AuthMode = "token"
    issuer: Expanded | None = None
    client_id: Expanded | None = Field(default=None, validation_alias="clientId")
    client_secret: Expanded | None = Field(default=None, validation_alias="clientSecret", repr=False)
    scopes: tuple[str, ...] = ("openid", "email", "profile")
    user_claim: str = Field(default="sub", validation_alias="userClaim")
    name_claim: str = Field(default="name", validation_alias="nameClaim")
    groups_claim: str = Field(default="groups", validation_alias="groupsClaim")
    session_hours: float = Field(
        default=12.0, validation_alias="sessionHours", strict=True, gt=0, le=24 * 366, allow_inf_nan=False
    )
    user_header: Annotated[str, StringConstraints(pattern=_HEADER_PATTERN)] | None = Field(
        default=None, validation_alias="userHeader"
    )
    groups_header: Annotated[str, StringConstraints(pattern=_HEADER_PATTERN)] | None = Field(
        default=None, validation_alias="groupsHeader"
    )
    trusted_proxies: tuple[Annotated[str, AfterValidator(_network)], ...] = Field(
        default=(), validation_alias="trustedProxies"
    )
    admins: frozenset[str] = frozenset()
    admin_groups: frozenset[str] = Field(default=frozenset(), validation_alias="adminGroups")

    @model_validator(mode="after")
    def _complete(self) -> AuthOptions:
        if self.mode == "oidc":
            for key, value in (("issuer", self.issuer), ("clientId", self.client_id)):
                if not value:
                    raise _invalid(f'mode "oidc" needs "{key}"')
            parts = urlsplit(self.issuer or "")
            if parts.scheme not in ("http", "https") or not parts.netloc or parts.query or parts.fragment:
                raise _invalid('"issuer" must be an absolute https:// URL (the provider\'s issuer identifier)')
            if "openid" not in self.scopes:
                raise _invalid('"scopes" must include "openid"')
        if self.mode == "proxy":
            if not self.user_header:
                raise _invalid('mode "proxy" needs "userHeader" (the header the proxy puts the person in)')
            if not self.trusted_proxies:
                raise _invalid('mode "proxy" needs "trustedProxies" (the proxy\'s addresses or CIDRs)')
        return self

    @property
    def secret_values(self) -> frozenset[str]:
        return frozenset({self.client_secret} if self.client_secret else set())


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
    "mcpServers.*.[key]": "server names may use letters, digits, '.', '_' and '-' (at most 64)",
    "mcpServers.*.command": "must be a non-empty string",
    "mcpServers.*.args": "must be a list of strings",
    "mcpServers.*.cwd": "must be a string",
    "mcpServers.*.url": "must be a string (an http:// or https:// URL)",
    "mcpServers.*.env": "must be an object of string values",
    "mcpServers.*.env.*": "must be a string",
    "mcpServers.*.headers": "must be an object of string values",
    "mcpServers.*.headers.*": "must be a string",
    "mcpServers.*.oauth.grantType": 'must be "authorization_code", "client_credentials" or "identity_assertion"',
    "mcpServers.*.oauth.issuer": "must be a string (the authorization server's issuer URL)",
    "mcpServers.*.oauth.identityProvider": 'must be an object ("issuer", "tokenEndpoint", "clientId", ...)',
    "mcpServers.*.oauth.identityProvider.*": "must be a string",
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
    "webhost.audit": "must be an object",
    "webhost.audit.retentionDays": "must be a positive number of days, or null to keep rows forever",
    "webhost.audit.maxRows": "must be an integer of at least 1000, or null for no limit",
    "webhost.audit.maxRowBytes": "must be an integer from 1024 to 1048576",
    "webhost.audit.frameRowsPerSecond": "must be a positive number",
    "webhost.audit.frameBurst": "must be a positive integer",
    "webhost.audit.personRowsPerSecond": "must be a positive number",
    "webhost.audit.personBurst": "must be a positive integer",
    "webhost.audit.personBytesPerSecond": "must be a positive number",
    "webhost.audit.personBurstBytes": "must be an integer of at least 1048576",
    "webhost.auth": 'must be an object with "mode": "token", "oidc" or "proxy"',
    "webhost.auth.mode": 'must be "token", "oidc" or "proxy"',
    "webhost.auth.issuer": "must be a string (the provider's issuer URL)",
    "webhost.auth.clientId": "must be a string",
    "webhost.auth.clientSecret": 'must be a string (usually "${VARIABLE}")',
    "webhost.auth.scopes": "must be a list of strings",
    "webhost.auth.userClaim": "must be a string (a claim name)",
    "webhost.auth.nameClaim": "must be a string (a claim name)",
    "webhost.auth.groupsClaim": "must be a string (a claim name)",
    "webhost.auth.sessionHours": "must be a positive number of hours (at most a year)",
    "webhost.auth.userHeader": "must be an HTTP header name",
    "webhost.auth.groupsHeader": "must be an HTTP header name",
    "webhost.auth.trustedProxies": "must be a list of IP addresses or CIDRs",
    "webhost.auth.admins": "must be a list of person ids or emails",
    "webhost.auth.adminGroups": "must be a list of group names",
    "webhost.database": "must be a string URL",
    "webhost.limits": 'must be an object, like {"maxResultBytes": 33554432}',
    "webhost.limits.maxResultBytes": f"must be an integer number of bytes from 65536 to {GiB} (1 GiB)",
    "webhost.limits.maxQueuedBytes": f"must be an integer number of bytes from 1048576 to {4 * GiB} (4 GiB)",
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
    **CHAT_MESSAGES,
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
