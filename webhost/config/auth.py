"""Sign-in in the configuration file: how people get into webhost (`webhost.auth`, contract §5: a token, an
OpenID provider, or a trusted proxy's header), and how webhost signs in to a remote server (a server entry's
`"oauth"`).

Read with the rest of the file by `file.py` (same rules: `${VAR}` expanded from the environment, one clear
line for a bad value). docs/deploy.md and docs/security.md document the keys.
"""

from __future__ import annotations

import ipaddress
from typing import Annotated, Literal
from urllib.parse import urlsplit

from pydantic import AfterValidator, BaseModel, ConfigDict, Field, StringConstraints, model_validator

from webhost.config.refs import Expanded, invalid


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
                    raise invalid(f'"grantType": "identity_assertion" needs "{key}" (a confidential client)')
            parts = urlsplit(self.issuer or "")
            if parts.scheme not in ("http", "https") or not parts.netloc:
                raise invalid(
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


AuthMode = Literal["token", "oidc", "proxy"]
_HEADER_PATTERN = r"^[A-Za-z0-9!#$%&'*+.^_`|~-]{1,128}$"


def _network(value: str) -> str:
    try:
        ipaddress.ip_network(value, strict=False)
    except ValueError:
        raise invalid(f'{value!r} is not an IP address or CIDR (like "127.0.0.1/32" or "10.0.0.0/8")') from None
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
    # How often a session's groups are read again from the provider (oidc: the refresh token; docs/admin.md).
    refresh_minutes: float = Field(
        default=5.0, validation_alias="refreshMinutes", strict=False, gt=0, le=24 * 60, allow_inf_nan=False
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
                    raise invalid(f'mode "oidc" needs "{key}"')
            parts = urlsplit(self.issuer or "")
            if parts.scheme not in ("http", "https") or not parts.netloc or parts.query or parts.fragment:
                raise invalid('"issuer" must be an absolute https:// URL (the provider\'s issuer identifier)')
            if "openid" not in self.scopes:
                raise invalid('"scopes" must include "openid"')
        if self.mode == "proxy":
            if not self.user_header:
                raise invalid('mode "proxy" needs "userHeader" (the header the proxy puts the person in)')
            if not self.trusted_proxies:
                raise invalid('mode "proxy" needs "trustedProxies" (the proxy\'s addresses or CIDRs)')
        return self

    @property
    def secret_values(self) -> frozenset[str]:
        return frozenset({self.client_secret} if self.client_secret else set())


# Messages for pydantic's own errors under `webhost.auth` and a server entry's `"oauth"` (file.py's table).
AUTH_MESSAGES = {
    "mcpServers.*.oauth.grantType": 'must be "authorization_code", "client_credentials" or "identity_assertion"',
    "mcpServers.*.oauth.issuer": "must be a string (the authorization server's issuer URL)",
    "mcpServers.*.oauth.identityProvider": 'must be an object ("issuer", "tokenEndpoint", "clientId", ...)',
    "mcpServers.*.oauth.identityProvider.*": "must be a string",
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
    "webhost.auth.refreshMinutes": "must be a positive number of minutes (at most a day)",
    "webhost.auth.userHeader": "must be an HTTP header name (at most 128 characters)",
    "webhost.auth.groupsHeader": "must be an HTTP header name (at most 128 characters)",
    "webhost.auth.trustedProxies": "must be a list of IP addresses or CIDRs",
    "webhost.auth.admins": "must be a list of person ids or emails",
    "webhost.auth.adminGroups": "must be a list of group names",
}
