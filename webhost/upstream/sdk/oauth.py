"""The SDK OAuth providers' private steps, under names webhost overrides, and the context they keep.

The SDK's `OAuthClientProvider` (and its client-credentials subclasses) is an `httpx2.Auth` whose flow
calls its own private steps: webhost persists more, counts and guards refreshes, and adds a lock-free
fast path around the flow (`upstream/oauth.py`). `ProviderHooks` maps each of those private steps to a
public name with the SDK's behaviour as its default, so `upstream/oauth.py` overrides the public names
and never names a private member (`sdk_workarounds.py` items 8 to 10).
"""

from __future__ import annotations

from collections.abc import AsyncGenerator, Callable
from dataclasses import fields
from typing import TYPE_CHECKING

import anyio
import httpx2
from mcp.client.auth import OAuthClientProvider
from mcp.client.auth.oauth2 import OAuthContext
from mcp.shared.auth import OAuthToken

__all__ = ["ProviderHooks", "keep_time", "share_lock"]

Flow = AsyncGenerator[httpx2.Request, httpx2.Response]
Expiry = Callable[[int | None], float | None]  # a token's `expires_in` → when webhost counts it as ended

if TYPE_CHECKING:
    _Provider = OAuthClientProvider
else:
    _Provider = object  # a mixin: the SDK provider class comes after it in the subclass's bases


class ProviderHooks(_Provider):
    """Put first in the bases of a webhost provider, before an SDK provider class.

    Needs: around the SDK's own flow, webhost's persistence of what the SDK does not store (the expiry,
    the discovered metadata, a pre-registered client), refreshes counted and a rotated refresh token taken
    from another replica, a lock-free fast path with a valid token, and the flow's failure kept for the
    connection to show.
    Private: overrides `OAuthClientProvider._initialize`, `_refresh_token`, `_handle_refresh_response` and
    `_auth_flow`; reads `_initialized`; calls `_add_auth_header`.
    Public hook that would replace it: token-store hooks on the provider (load and save the whole state,
    not only tokens and client information; told of each refresh and its answer), a lock-free fast path
    for a request with a valid token in the SDK itself, and the flow's failure raised to the caller of the
    request rather than swallowed by the transport.
    """

    # -- the names webhost overrides; each defaults to the SDK's own step ------------------------------

    @property
    def loaded(self) -> bool:
        """Whether the stored tokens and client information were read (the SDK's `_initialized`)."""
        return self._initialized

    async def load_stored(self) -> None:
        """Read the stored tokens and client information (the SDK's `_initialize`)."""
        await super()._initialize()

    async def refresh_request(self) -> httpx2.Request:
        """The refresh-token request to send (the SDK's `_refresh_token`)."""
        return await super()._refresh_token()

    async def refresh_answered(self, response: httpx2.Response) -> bool:
        """Take the token endpoint's answer to a refresh; whether it gave tokens (`_handle_refresh_response`)."""
        return await super()._handle_refresh_response(response)

    def run_flow(self, request: httpx2.Request) -> Flow:
        """The authorization flow around one request (the SDK's `_auth_flow`, which `async_auth_flow` drives)."""
        return super()._auth_flow(request)

    def add_bearer(self, request: httpx2.Request) -> None:
        """Put the current access token on the request (the SDK's `_add_auth_header`)."""
        self._add_auth_header(request)

    # -- the SDK's private steps, routed to the names above ------------------------------------------

    async def _initialize(self) -> None:
        await self.load_stored()

    async def _refresh_token(self) -> httpx2.Request:
        return await self.refresh_request()

    async def _handle_refresh_response(self, response: httpx2.Response) -> bool:
        return await self.refresh_answered(response)

    def _auth_flow(self, request: httpx2.Request) -> Flow:
        return self.run_flow(request)


def share_lock(provider: OAuthClientProvider, lock: anyio.Lock) -> None:
    """Make the provider's flow run under `lock` (one per person and server for the whole host).

    Needs: one refresh at a time for a (person, server) across that person's connections and tabs, so a
    rotating refresh token is spent once (`upstream/oauth.py: RefreshLocks`).
    Uses: replaces the provider's `context.lock`, a public field the SDK creates per provider and treats as
    its own.
    Public hook that would replace it: a `lock` argument on the provider, or token-store hooks that own the
    refresh (with a lock-free fast path for a valid token).
    """
    provider.context.lock = lock


class _TimedContext(OAuthContext):
    """`OAuthContext` whose token expiry is computed and checked on an injected clock."""

    def __init__(self, base: OAuthContext, now: Callable[[], float], expires_at: Expiry) -> None:
        super().__init__(**{field.name: getattr(base, field.name) for field in fields(base)})
        self.now = now
        self.expires_at = expires_at

    def update_token_expiry(self, token: OAuthToken) -> None:
        self.token_expiry_time = self.expires_at(token.expires_in)

    def is_token_valid(self) -> bool:
        tokens = self.current_tokens
        return bool(
            tokens and tokens.access_token and (not self.token_expiry_time or self.now() <= self.token_expiry_time)
        )


def keep_time(provider: OAuthClientProvider, now: Callable[[], float], expires_at: Expiry) -> None:
    """Compute and check the provider's token expiry with `expires_at` and `now` instead of the wall clock.

    Needs: the expiry webhost wants (a little before the token's end, so a request never carries a dying
    token) and a clock that tests can move instead of waiting for a token to run out (`upstream/oauth.py`).
    Uses: replaces the provider's `context` with one overriding the public `update_token_expiry` and
    `is_token_valid`, which the SDK's private steps call (on a token answer, a refresh, and each request).
    Call it right after the provider is built, before anything holds its context.
    Public hook that would replace it: a clock and an expiry margin on the provider (or token-store hooks
    that own the expiry).
    """
    provider.context = _TimedContext(provider.context, now, expires_at)
