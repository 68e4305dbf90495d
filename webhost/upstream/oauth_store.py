"""Where one person's OAuth state for a server lives: the sealed rows, the host's refresh locks, the expiry.

`TokenRows` is the SDK's `TokenStorage` on the person's sealed rows (`storage/oauth_tokens.py`), plus what
the SDK does not persist: the expiry, the discovered metadata and the authorization server, so that a
restart refreshes instead of asking again. `OAuthDeps` is what every person's OAuth shares.
"""

from __future__ import annotations

import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any, Protocol
from weakref import WeakValueDictionary

import anyio
from mcp.client.auth import OAuthClientProvider
from mcp.shared.auth import OAuthClientInformationFull, OAuthToken
from pydantic import ValidationError

from webhost.config.auth import AuthOptions
from webhost.storage.oauth_tokens import Kind

from .sign_ins import ServerSignIns

EXPIRY_MARGIN_S = 5.0  # refresh a little before the token ends, so a request never carries a dying one
Clock = Callable[[], float]  # seconds since the epoch: `time.time`, or a test's clock it moves by hand


class GrantStore(Protocol):
    """Where one person's sealed OAuth rows live (storage/oauth_tokens.py's `OAuthVault`, or memory)."""

    async def get(self, person_id: str, server: str, kind: Kind) -> dict[str, Any] | None: ...
    async def put(self, person_id: str, server: str, kind: Kind, value: dict[str, Any]) -> None: ...
    async def forget(self, person_id: str, server: str, kinds: tuple[Kind, ...] = ("tokens",)) -> None: ...


class MemoryGrants:
    """A GrantStore without a database (tests, and a host started without storage)."""

    def __init__(self) -> None:
        self.rows: dict[tuple[str, str, str], dict[str, Any]] = {}

    async def get(self, person_id: str, server: str, kind: Kind) -> dict[str, Any] | None:
        return self.rows.get((person_id, server, kind))

    async def put(self, person_id: str, server: str, kind: Kind, value: dict[str, Any]) -> None:
        self.rows[(person_id, server, kind)] = value

    async def forget(self, person_id: str, server: str, kinds: tuple[Kind, ...] = ("tokens",)) -> None:
        for kind in kinds:
            self.rows.pop((person_id, server, kind), None)


class RefreshLocks:
    """One lock per (person, server) for the whole host: the SDK's flow (and its refresh) runs under it."""

    def __init__(self) -> None:
        self._locks: WeakValueDictionary[tuple[str, str], anyio.Lock] = WeakValueDictionary()

    def get(self, person_id: str, server: str) -> anyio.Lock:
        lock = self._locks.get((person_id, server))
        if lock is None:
            lock = anyio.Lock()
            self._locks[(person_id, server)] = lock
        return lock


@dataclass(frozen=True)
class OAuthDeps:
    """What every person's OAuth shares (built once by the composition root)."""

    grants: GrantStore
    sign_ins: ServerSignIns
    locks: RefreshLocks
    clock: Clock = time.time  # what token expiry is computed and checked on
    # Enterprise-managed authorization (SEP-990): a person's ID token from their web session (oidc mode), and
    # the identity provider people sign in with (`webhost.auth`), which an entry's `identityProvider` defaults to.
    id_tokens: Callable[[str], Awaitable[str | None]] | None = None
    auth: AuthOptions | None = None


def expiry_after(expires_in: int | None, now: Clock) -> float | None:
    """When webhost counts a token given `expires_in` seconds ago as ended: a little before its end, so its
    own check refreshes before the token dies (for short-lived tokens, at half their life). None: no expiry."""
    if expires_in is None:
        return None
    life = int(expires_in)
    return now() + life - (min(EXPIRY_MARGIN_S, life / 2) if life else 0.0)


class TokenRows:
    """The SDK's `TokenStorage` on the person's sealed rows, plus what the SDK does not persist."""

    def __init__(self, grants: GrantStore, person_id: str, server: str) -> None:
        self.grants, self.person_id, self.server = grants, person_id, server
        self.provider: OAuthClientProvider | None = None

    async def get_tokens(self) -> OAuthToken | None:
        row = await self.grants.get(self.person_id, self.server, "tokens")
        try:
            return OAuthToken.model_validate(row["token"]) if row else None
        except (ValidationError, KeyError):
            return None

    async def set_tokens(self, tokens: OAuthToken) -> None:
        provider = self.provider
        assert provider is not None
        context = provider.context  # its expiry was just set from expires_in (`expiry_after`)
        row: dict[str, Any] = {
            "token": tokens.model_dump(mode="json", exclude_none=True),
            "expiresAt": context.token_expiry_time,
            "authServer": context.auth_server_url,
            "oauthMetadata": _dump(context.oauth_metadata),
            "resourceMetadata": _dump(context.protected_resource_metadata),
        }
        await self.grants.put(self.person_id, self.server, "tokens", row)

    async def get_client_info(self) -> OAuthClientInformationFull | None:
        row = await self.grants.get(self.person_id, self.server, "client")
        try:
            return OAuthClientInformationFull.model_validate(row) if row else None
        except ValidationError:
            return None

    async def set_client_info(self, client_info: OAuthClientInformationFull) -> None:
        await self.grants.put(self.person_id, self.server, "client", client_info.model_dump(mode="json"))

    async def extras(self) -> dict[str, Any]:
        return await self.grants.get(self.person_id, self.server, "tokens") or {}

    async def stored(self) -> tuple[OAuthToken | None, float | None]:
        """The tokens in the database now (another replica may have stored newer ones), with their expiry."""
        row = await self.grants.get(self.person_id, self.server, "tokens")
        try:
            tokens = OAuthToken.model_validate(row["token"]) if row else None
        except (ValidationError, KeyError):
            return None, None
        expires = row.get("expiresAt") if row else None
        return tokens, float(expires) if isinstance(expires, int | float) else None


def _dump(model: Any) -> dict[str, Any] | None:
    return None if model is None else dict(model.model_dump(mode="json", exclude_none=True))
