"""Shared helpers for the fast in-process suites (tests/fast): a tab with its servers connected, result readers."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator, Mapping
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

from mcp.server import MCPServer

from tests.support.inprocess import AsgiWsClient, InProcessHost, in_process_host, sdk_server


@asynccontextmanager
async def connected_host(
    tmp_path: Path,
    servers: Mapping[str, MCPServer],
    *,
    webhost_options: dict[str, Any] | None = None,
    legacy: frozenset[str] = frozenset(),
) -> AsyncIterator[tuple[InProcessHost, AsgiWsClient]]:
    """A host and one tab whose configured servers are all connected."""
    async with (
        in_process_host(tmp_path, servers, webhost_options=webhost_options, legacy=legacy) as host,
        host.tab() as tab,
    ):
        for name in servers:
            await tab.wait_connected(name)
        yield host, tab


@asynccontextmanager
async def connected_tab(
    tmp_path: Path,
    servers: Mapping[str, MCPServer],
    *,
    webhost_options: dict[str, Any] | None = None,
    legacy: frozenset[str] = frozenset(),
) -> AsyncIterator[AsgiWsClient]:
    async with connected_host(tmp_path, servers, webhost_options=webhost_options, legacy=legacy) as (_, tab):
        yield tab


def text(result: dict[str, Any]) -> str:
    """The first text block of a tool result."""
    value: str = result["content"][0]["text"]
    return value


def json_text(result: dict[str, Any]) -> Any:
    """The JSON in the first text block (our test servers answer that way)."""
    return json.loads(text(result))


def error_of(response: dict[str, Any]) -> dict[str, Any]:
    assert "error" in response, response
    error: dict[str, Any] = response["error"]
    return error


def apps_server(name: str = "apps") -> MCPServer:
    """tests/servers/apps.py's fixtures (built per call: that module has no module-level server)."""
    sdk_server("basic")  # puts tests/servers on sys.path
    module = __import__("apps")
    server: MCPServer = module.build_server(name, "http://127.0.0.1:8765", "http://127.0.0.1:8766", "/")
    return server
