"""Enterprise-managed authorization (SEP-990, `"grantType": "identity_assertion"`) for one person and one server.

Nobody is sent to an authorization page. When the server answers 401, the person's identity (the ID token of
their web session, oidc mode) is exchanged at the identity provider's token endpoint for an Identity Assertion
Authorization Grant (RFC 8693 token exchange, `requested_token_type` id-jag, `audience` the MCP authorization
server's issuer, `resource` the server): leg 1, webhost's. The SDK's `IdentityAssertionOAuthProvider` then
presents it to the configured issuer's token endpoint (RFC 7523 jwt-bearer, the confidential client's own
credentials): leg 2. The issuer is configuration, not discovery (the SDK's trust model): the server is never
asked where to send the grant. Tokens persist in the person's sealed rows, as every other flow's.
"""

from __future__ import annotations

from collections.abc import AsyncGenerator, Callable
from typing import Any

import httpx2
from mcp.client.auth import OAuthFlowError, OAuthTokenError
from mcp.client.auth.extensions.identity_assertion import IdentityAssertionOAuthProvider
from mcp.shared.auth import OAuthToken

from webhost.config import ServerConfig
from webhost.config.auth import IdentityProvider

from .oauth_failures import keeping_failure
from .oauth_store import OAuthDeps, TokenRows, expiry_after

TOKEN_EXCHANGE = "urn:ietf:params:oauth:grant-type:token-exchange"
ID_TOKEN_TYPE = "urn:ietf:params:oauth:token-type:id_token"
ID_JAG_TYPE = "urn:ietf:params:oauth:token-type:id-jag"
TIMEOUT = httpx2.Timeout(15.0)


class _Context:
    """What the connection reads of a provider (`context.server_url`, `context.current_tokens`)."""

    def __init__(self, server_url: str, store: TokenRows) -> None:
        self.server_url = server_url
        self.current_tokens: OAuthToken | None = None
        self._store = store

    def clear_tokens(self) -> None:
        self.current_tokens = None


class _Remembered(TokenRows):
    """The person's token rows, telling the provider's context what they hold."""

    context: _Context | None = None
    expires: Callable[[int | None], float | None] = staticmethod(lambda expires_in: None)

    async def get_tokens(self) -> OAuthToken | None:
        tokens = await super().get_tokens()
        if self.context is not None:
            self.context.current_tokens = tokens
        return tokens

    async def set_tokens(self, tokens: OAuthToken) -> None:
        # No discovered metadata to keep beside them (the issuer is configuration): the token and its end.
        row = {"token": tokens.model_dump(mode="json", exclude_none=True), "expiresAt": self.expires(tokens.expires_in)}
        await self.grants.put(self.person_id, self.server, "tokens", row)
        if self.context is not None:
            self.context.current_tokens = tokens


class IdentityAssertionOAuth(IdentityAssertionOAuthProvider):
    """The SDK's leg-2 provider, with webhost's leg 1 as its assertion provider and the parts of `PersonOAuth`
    the connection uses (the flow's failure, signing out)."""

    redirect_uri = ""

    def __init__(self, config: ServerConfig, person_id: str, deps: OAuthDeps) -> None:
        settings = config.oauth
        assert config.url is not None and settings is not None
        assert settings.client_id and settings.client_secret and settings.issuer
        self.rows = _Remembered(deps.grants, person_id, config.name)
        self.rows.expires = lambda expires_in: expiry_after(expires_in, deps.clock)
        super().__init__(
            config.url,
            self.rows,
            settings.client_id,
            settings.client_secret,
            settings.issuer,
            self.exchange,
            scope=" ".join(settings.scopes) or None,
            token_endpoint_auth_method="client_secret_basic",
        )
        self.context = _Context(config.url, self.rows)
        self.rows.context = self.context
        self.person_id = person_id
        self.server = config.name
        self.deps = deps
        self.idp = settings.identity_provider or IdentityProvider.model_validate({})
        self.failure: BaseException | None = None

    def async_auth_flow(self, request: httpx2.Request) -> AsyncGenerator[httpx2.Request, httpx2.Response]:
        return keeping_failure(super().async_auth_flow(request), self._keep_failure)

    def _keep_failure(self, exc: BaseException) -> None:
        self.failure = exc

    async def sign_out(self) -> str | None:
        self.context.clear_tokens()
        await self.rows.grants.forget(self.person_id, self.server)
        return (
            "enterprise-managed: the token was forgotten here; the next request asks the identity provider again "
            "(sign out of webhost to end that)"
        )

    # -- leg 1: the person's identity for an ID-JAG, at the identity provider ---------------------------

    async def exchange(self, audience: str, resource: str) -> str:
        """Leg 1 (the SDK's `assertion_provider`): the ID-JAG for `audience` (the issuer) and `resource`."""
        subject = await self.subject_token()
        endpoint = await self.idp_token_endpoint()
        client_id = self.idp.client_id or (self.deps.auth.client_id if self.deps.auth else None)
        secret = self.idp.client_secret or (self.deps.auth.client_secret if self.deps.auth else None)
        data = {
            "grant_type": TOKEN_EXCHANGE,
            "subject_token": subject,
            "subject_token_type": ID_TOKEN_TYPE,
            "requested_token_type": ID_JAG_TYPE,
            "audience": audience,
            "resource": resource,
        }
        if client_id and not secret:
            data["client_id"] = client_id  # a public client names itself in the body
        async with httpx2.AsyncClient(timeout=TIMEOUT) as http:
            if client_id and secret:
                answer = await http.post(endpoint, data=data, auth=httpx2.BasicAuth(client_id, secret))
            else:
                answer = await http.post(endpoint, data=data)
        body = _json(answer)
        if answer.status_code != 200:
            reason = body.get("error_description") or body.get("error") or answer.text[:200]
            raise OAuthTokenError(f"the identity provider refused the token exchange ({answer.status_code}): {reason}")
        token = body.get("access_token")
        if not isinstance(token, str) or body.get("issued_token_type") not in (ID_JAG_TYPE, None):
            raise OAuthTokenError("the identity provider's token exchange did not issue an ID-JAG")
        return token

    async def subject_token(self) -> str:
        if self.idp.subject_token:
            return self.idp.subject_token
        found = await self.deps.id_tokens(self.person_id) if self.deps.id_tokens is not None else None
        if not found:
            raise OAuthFlowError(
                "enterprise-managed authorization needs your identity provider's ID token: sign in to webhost again"
            )
        return found

    async def idp_token_endpoint(self) -> str:
        if self.idp.token_endpoint:
            return self.idp.token_endpoint
        issuer = self.idp.issuer or (self.deps.auth.issuer if self.deps.auth else None)
        if not issuer:
            raise OAuthFlowError("no identity provider is configured for enterprise-managed authorization")
        url = issuer.rstrip("/") + "/.well-known/openid-configuration"
        async with httpx2.AsyncClient(timeout=TIMEOUT) as http:
            answer = await http.get(url)
        endpoint = _json(answer).get("token_endpoint") if answer.status_code == 200 else None
        if not isinstance(endpoint, str):
            raise OAuthFlowError(f"the identity provider publishes no token endpoint at {url}")
        return endpoint


def _json(response: httpx2.Response) -> dict[str, Any]:
    try:
        body = response.json()
    except ValueError:
        return {}
    return body if isinstance(body, dict) else {}
