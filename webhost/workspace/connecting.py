"""A call made while its server is still connecting waits for the connection, as the page does, rather than
failing at once with "not connected" (-32002): many people opening webhost at once send their first calls
while their connections open. The wait is bounded by the server's `timeouts.connect`."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any

import anyio

from webhost.errors import NotConnected
from webhost.upstream.connection import Connection

Activity = Callable[..., None]  # (server, **entry): a line in the person's activity log


async def until_connected(
    connection: Connection, status_changed: Callable[[], Awaitable[None]], activity: Activity, what: str
) -> None:
    """Return at once unless the server is connecting; then once it is connected. `NotConnected`, saying why, if it
    failed to connect meanwhile or is still connecting after `timeouts.connect`. `what` names the call."""
    if connection.status != "connecting":
        return
    bound = connection.settings.connect_timeout
    activity(
        connection.name,
        direction="local",
        kind="notification",
        method="tools/call",
        summary=f"{what}: waiting for {connection.name} to finish connecting (at most {bound:g} s)",
    )
    with anyio.move_on_after(bound):
        while connection.status == "connecting":
            await status_changed()
    status = _status(connection)  # as it is now, after the waits
    if status == "connected":
        return
    data: dict[str, Any] = {"server": connection.name, "status": status, "reason": connection.error}
    if status == "connecting":
        raise NotConnected(
            f"server {connection.name!r} was still connecting after {bound:g} s (timeouts.connect), so {what} "
            "was not sent; try again once it is connected",
            data,
        )
    why = f": {connection.error}" if connection.error else f" (it is {status})"
    raise NotConnected(f"server {connection.name!r} did not connect{why}, so {what} was not sent", data)


def _status(connection: Connection) -> str:
    return connection.status
