"""Servers: list them, reconnect or disconnect one. Never a command, URL or environment from the browser."""

from __future__ import annotations

from typing import Any

from webhost import __version__
from webhost.session import BrowserSession


async def session_info(session: BrowserSession, params: dict[str, Any]) -> dict[str, Any]:
    sandbox = session.sandbox
    options = session.options
    return {
        "version": __version__,
        "sessionId": session.id,
        "sandbox": {"domain": sandbox.domain, "port": sandbox.port, "scheme": sandbox.scheme},
        "pending": session.pending(),
        "user": session.person.public(),
        "limits": {
            "humanTimeoutSeconds": options.human_timeout,
            "callTimeoutSeconds": options.call_timeout,
            "appHandshakeTimeoutSeconds": options.app_handshake_timeout,
        },
    }


async def list_servers(session: BrowserSession, params: dict[str, Any]) -> dict[str, Any]:
    return {"servers": [c.state() for c in session.connections.values()]}


async def reconnect(session: BrowserSession, params: dict[str, Any]) -> dict[str, Any]:
    connection = session.connection(params)
    await session.reconnect(connection)
    return {"server": connection.state()}


async def disconnect(session: BrowserSession, params: dict[str, Any]) -> dict[str, Any]:
    connection = session.connection(params)
    await session.disconnect(connection)
    return {"server": connection.state()}


METHODS = {
    "session/info": session_info,
    "servers/list": list_servers,
    "servers/reconnect": reconnect,
    "servers/disconnect": disconnect,
}
