"""Whether a connected server is still there, and the 2026-07-28 listen stream that brings its news.

A remote server that went away while nothing was asked of it is noticed by a ping after
`KEEP_ALIVE_SECONDS` without a word from it; a listen stream that ends by itself is followed by one ping,
which tells a server that closed the stream (listen again) from one that is gone (the connection is over).
Each sets `lost`, which ends the connection's serving (`upstream/link.py`).

Anything the server sends proves it is there (`Heard`, moved on by every message the transport reads): a
busy server's ping may wait behind the calls it is answering, and a ping that times out while answers
still arrive is not a server gone. Declaring it gone then used to close the connection under every call in
flight ("Connection closed", 230 of 2,000 calls at 200 sessions on one shared server).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import anyio
from mcp import Client, MCPError
from mcp.types import CONNECTION_CLOSED

from .legacy_calls import deliberately
from .sdk_workarounds import Heard

LISTEN_AGAIN_SECONDS = 1.0  # a 2026-07-28 listen stream the server closed is opened again after this
BRIEF_LISTEN_SECONDS = 10.0  # three in a row that end sooner than this after opening: given up until a change
PING_TIMEOUT_SECONDS = 10.0
KEEP_ALIVE_SECONDS = 30.0  # a remote connection pings its server this often


async def keep_alive(client: Client, lost: anyio.Event, heard: Heard) -> None:
    """A remote server that went away while nothing was asked of it is noticed within about twice
    `KEEP_ALIVE_SECONDS` (and connected again), not at the person's next call, which would fail. A server that
    spoke within the last `KEEP_ALIVE_SECONDS` is not pinged."""
    while True:
        quiet = anyio.current_time() - heard.at
        if quiet < KEEP_ALIVE_SECONDS:
            await anyio.sleep(KEEP_ALIVE_SECONDS - quiet)
            continue
        if not await answers_ping(client, heard):
            lost.set()
            return


async def answers_ping(client: Client, heard: Heard) -> bool:
    """Whether the server still answers at all: an error it sends back counts (it may not know `ping`: 2026-07-28
    servers answer "Method not found"), and so does anything else it sends while the ping waits; the SDK's own
    "Connection closed", a transport error or silence does not."""
    asked = anyio.current_time()
    with anyio.move_on_after(PING_TIMEOUT_SECONDS):
        try:
            await deliberately(client.send_ping)
        except MCPError as exc:
            return exc.code != CONNECTION_CLOSED
        except Exception:
            return False
        return True
    return heard.at > asked


class ListenStream:
    """One connection's 2026-07-28 `subscriptions/listen` stream and the resources it filters on.

    Servers of that era push list changes and resource updates only on this stream. The SDK tees each
    event to the message handler, so draining the stream is all it takes. The stream's filter is fixed
    when it opens, so a change of the resources subscribed to re-opens it.
    """

    def __init__(self) -> None:
        self.resources: set[str] = set()
        self._changed = anyio.Event()

    def add(self, uri: str) -> None:
        self.resources.add(uri)
        self._changed.set()

    def discard(self, uri: str) -> None:
        self.resources.discard(uri)
        self._changed.set()

    async def run(
        self,
        client: Client,
        capabilities: dict[str, Any],
        lost: anyio.Event,
        no_updates: Callable[[str], None],
        heard: Heard,
    ) -> None:
        """Listen until the connection ends; `no_updates(reason)` says when live updates are given up."""

        def wants(kind: str) -> bool:
            value = capabilities.get(kind)
            return isinstance(value, dict) and bool(value.get("listChanged"))

        brief = 0  # streams in a row that ended by themselves soon after opening
        while True:
            changed = self._changed = anyio.Event()
            resources = sorted(self.resources)
            opened: float | None = None  # when the stream opened
            if any(wants(kind) for kind in ("tools", "resources", "prompts")) or resources:
                try:
                    async with anyio.create_task_group() as tg:
                        tg.start_soon(_cancel_when, changed, tg.cancel_scope)
                        async with client.listen(
                            tools_list_changed=wants("tools"),
                            prompts_list_changed=wants("prompts"),
                            resources_list_changed=wants("resources"),
                            resource_subscriptions=resources,
                        ) as subscription:
                            opened = anyio.current_time()
                            async for _event in subscription:
                                pass
                        tg.cancel_scope.cancel()
                except Exception as exc:  # a server without listen support still works, just without live updates
                    if opened is None:
                        no_updates(str(exc))
            if opened is not None and not changed.is_set():
                # The stream ended by itself: the server went away (the connection is over, and a remote one
                # is connected again), or it closed the stream (listen again, not in a tight loop).
                if not await answers_ping(client, heard):
                    lost.set()
                    return
                brief = brief + 1 if anyio.current_time() - opened < BRIEF_LISTEN_SECONDS else 0
                if brief < 3:
                    with anyio.move_on_after(LISTEN_AGAIN_SECONDS):
                        await changed.wait()
                    continue
                no_updates("the server keeps closing the listen stream")
            brief = 0
            await changed.wait()


async def _cancel_when(event: anyio.Event, scope: anyio.CancelScope) -> None:
    await event.wait()
    scope.cancel()
