"""Signing in to a remote server that needs it (contract §6): the authorization URL to open, and signing out."""

from __future__ import annotations

from typing import Any

from webhost.session import BrowserSession


async def sign_in(session: BrowserSession, params: dict[str, Any]) -> dict[str, Any]:
    """`{"url"}` to open in a new window (the page opens it from the click); `{"url": null}` when signed in."""
    connection = session.connection(params)
    url = await session.workspace.sign_in(connection)
    return {"url": url, "server": connection.state()}


async def sign_out(session: BrowserSession, params: dict[str, Any]) -> dict[str, Any]:
    """Forget this person's tokens for the server (revoked where the server supports it)."""
    connection = session.connection(params)
    note = await session.workspace.sign_out_of(connection)
    await session.audit.record(
        "server.sign-out",
        person=session.person,
        session=session.id,
        server=connection.name,
        decision="signed-out",
        summary=note or "tokens forgotten and revoked",
    )
    return {"server": connection.state(), "note": note}


METHODS = {"servers/signIn": sign_in, "servers/signOut": sign_out}
