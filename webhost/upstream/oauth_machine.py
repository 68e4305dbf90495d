"""webhost's own client-credentials providers (`"grantType": "client_credentials"`): webhost is the client.

Nobody signs in: the token comes from the client's own credentials (a secret, or a signed JWT). The
providers keep the parts of `PersonOAuth` the connection uses: the flow's failure, and signing out
(which forgets the token, nothing else).
"""

from __future__ import annotations

from collections.abc import AsyncGenerator

import httpx2
from mcp.client.auth.extensions.client_credentials import (
    ClientCredentialsOAuthProvider,
    PrivateKeyJWTOAuthProvider,
    SignedJWTParameters,
)

from webhost.config import ServerConfig

from .oauth_failures import keeping_failure
from .oauth_store import OAuthDeps, TokenRows, expiry_after
from .sdk import ProviderHooks, keep_time, share_lock


class _Tracked(ProviderHooks):
    """The parts of `PersonOAuth` the connection uses, for webhost's own client-credentials providers."""

    failure: BaseException | None = None
    redirect_uri = ""
    _store: TokenRows

    def run_flow(self, request: httpx2.Request) -> AsyncGenerator[httpx2.Request, httpx2.Response]:
        return keeping_failure(super().run_flow(request), self._keep_failure)

    def _keep_failure(self, exc: BaseException) -> None:
        self.failure = exc

    async def sign_out(self) -> str | None:
        async with self.context.lock:
            self.context.clear_tokens()
            await self._store.grants.forget(self._store.person_id, self._store.server)
        return "these are webhost's own client credentials: the token was forgotten, nothing else"


class ClientCredentialsOAuth(_Tracked, ClientCredentialsOAuthProvider):
    pass


class PrivateKeyJWTOAuth(_Tracked, PrivateKeyJWTOAuthProvider):
    pass


def machine_oauth(config: ServerConfig, person_id: str, deps: OAuthDeps) -> ClientCredentialsOAuth | PrivateKeyJWTOAuth:
    """The client-credentials grant (`"grantType": "client_credentials"`): webhost is the client, nobody signs in."""
    settings = config.oauth
    assert config.url is not None and settings is not None and settings.client_id
    store = TokenRows(deps.grants, person_id, config.name)
    scope = " ".join(settings.scopes) or None
    provider: ClientCredentialsOAuth | PrivateKeyJWTOAuth
    if settings.private_key:
        signer = SignedJWTParameters(
            issuer=settings.client_id,
            subject=settings.client_id,
            signing_key=settings.private_key,
            signing_algorithm=settings.signing_algorithm,
        )
        provider = PrivateKeyJWTOAuth(
            config.url, store, settings.client_id, signer.create_assertion_provider(), scope=scope
        )
    else:
        provider = ClientCredentialsOAuth(
            config.url, store, settings.client_id, settings.client_secret or "", scope=scope
        )
    provider._store = store
    store.provider = provider
    keep_time(provider, deps.clock, lambda expires_in: expiry_after(expires_in, deps.clock))
    share_lock(provider, deps.locks.get(person_id, config.name))
    return provider
