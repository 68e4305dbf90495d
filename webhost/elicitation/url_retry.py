"""A tool call on a legacy server that may answer URL_ELICITATION_REQUIRED (-32042): the URL steps it names are
run (consent, then the server's completion) and the call is made again, once per step (a step asked for again
stops the call: requests.py's loop guard). The workbench's calls and the model's go through this one loop."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import TypeVar

from webhost.errors import WebhostError
from webhost.upstream.connection import Connection

from .requests import URL_ELICITATION_REQUIRED, InputRequests

T = TypeVar("T")


async def call_with_url_steps(call: Callable[[], Awaitable[T]], requests: InputRequests, connection: Connection) -> T:
    seen: set[str] = set()
    while True:
        try:
            return await call()
        except WebhostError as exc:
            data = exc.data or {}
            if data.get("upstreamCode") != URL_ELICITATION_REQUIRED:
                raise
            await requests.complete_required_urls(connection, data.get("upstreamData"), seen)
