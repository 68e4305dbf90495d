"""Signing one person in to and out of their remote servers (the OAuth flow itself is `upstream/oauth.py`'s)."""

from __future__ import annotations

from collections.abc import Awaitable, Callable

import anyio

from webhost.errors import NotConnected
from webhost.upstream.connection import Connection


class ServerSignIn:
    """`servers/signIn` and `servers/signOut` for one person's connections."""

    def __init__(
        self,
        *,
        connect_timeout: float,
        reconnect: Callable[[Connection], Awaitable[None]],
        restart: Callable[[Connection], None],
        forget: Callable[[Connection], None],
    ) -> None:
        self._connect_timeout = connect_timeout
        self._reconnect = reconnect  # stop, forget what the server offered, start with the person's values
        self._restart = restart  # start (again) with the person's values
        self._forget = forget  # drop what the server offered and asked

    async def sign_in(self, connection: Connection) -> str | None:
        """The authorization URL for the person to open (None: already signed in and connected).

        When no sign-in is waiting (a failed or expired one, or a sign-out), the connection is started
        again: the server's 401 begins a new flow, whose URL comes back here (bounded by the connect timeout).
        """
        if not connection.uses_oauth():
            raise NotConnected(f"server {connection.name!r} does not use sign-in", {"server": connection.name})
        state = connection.sign_in
        if state.url is not None:
            return state.url
        if connection.status == "connected":
            return None
        changed = state.changed
        if connection.status != "connecting":
            await self._reconnect(connection)
        with anyio.move_on_after(self._connect_timeout):
            while state.url is None and connection.status == "connecting":
                await changed.wait()
                changed = state.changed
        if state.url is not None:
            return state.url
        status: str = connection.status  # moved while we waited
        if status == "connected":
            return None
        raise NotConnected(
            f"{connection.name}: {connection.error or 'the sign-in could not start'}",
            {"server": connection.name, "status": connection.status, "reason": connection.error},
        )

    async def sign_out(self, connection: Connection) -> str | None:
        """Forget the person's tokens for this server (revoked where supported); it then asks for sign-in again."""
        provider = connection.sign_in.provider
        if provider is None:
            raise NotConnected(f"server {connection.name!r} does not use sign-in", {"server": connection.name})
        await connection.stop()
        note = await provider.sign_out()
        self._forget(connection)
        self._restart(connection)
        return note
