"""The SDK's deprecated client calls that webhost makes on purpose, without their warnings.

The SDK marks `ping`, `logging/setLevel`, `resources/subscribe`, `resources/unsubscribe` and
`notifications/roots/list_changed` with `MCPDeprecationWarning` (they are gone or deprecated as of 2026-07-28,
SEP-2577). webhost sends them only to servers of an earlier era (and pings any server to tell whether it is still
there), where they are the protocol, so the warnings would only fill webhost's log. Each is silenced around that
call alone: the SDK warns when the call is made, before its coroutine runs, so the filter is in place for no await
and hides no warning from anywhere else.
"""

from __future__ import annotations

import warnings
from collections.abc import Awaitable, Callable
from typing import TypeVar

from mcp.shared.exceptions import MCPDeprecationWarning

T = TypeVar("T")


def deliberately(call: Callable[[], Awaitable[T]]) -> Awaitable[T]:
    """`call()`, a deprecated SDK call webhost makes on purpose, with its deprecation warning silenced."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", MCPDeprecationWarning)
        return call()
