"""When a connection is tried again by itself (`Connection._retry_delay`, upstream/link.py)."""

from __future__ import annotations

import json
from typing import Any

from webhost.config import ServerConfig, parse_config
from webhost.upstream.connection import RECONNECT_DELAYS, Connection, ConnectionSettings


def entry(document: dict[str, Any]) -> ServerConfig:
    return parse_config(json.dumps({"mcpServers": {"s": document}}), "test", {}).servers["s"]


def connection(document: dict[str, Any]) -> Connection:
    settings = ConnectionSettings(connect_timeout=5, call_timeout=5, max_input_rounds=5)
    return Connection(entry(document), events=None, settings=settings)  # type: ignore[arg-type]


def test_a_remote_connection_that_was_up_is_tried_again_with_back_off_until_the_last_delay() -> None:
    remote = connection({"type": "http", "url": "http://127.0.0.1:9/mcp"})
    delays = [remote._retry_delay(was_up=True)]
    delays += [remote._retry_delay(was_up=False) for _ in range(len(RECONNECT_DELAYS))]
    assert delays == [*RECONNECT_DELAYS, None]
    assert remote._retry_delay(was_up=False) is None  # it stays in error: the person reconnects it
    # Connected again in between: the back-off starts over.
    assert remote._retry_delay(was_up=True) == RECONNECT_DELAYS[0]


def test_a_connection_that_never_came_up_or_a_stdio_one_is_not_tried_again_by_itself() -> None:
    assert connection({"type": "http", "url": "http://127.0.0.1:9/mcp"})._retry_delay(was_up=False) is None
    assert connection({"command": "python3", "args": ["server.py"]})._retry_delay(was_up=True) is None
    assert connection({"type": "sse", "url": "http://127.0.0.1:9/sse"})._retry_delay(was_up=True) == RECONNECT_DELAYS[0]
