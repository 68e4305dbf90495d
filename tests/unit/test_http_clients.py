"""`webhost.upstream.http_clients`: every HTTP connection to an MCP server shares one TLS context."""

from __future__ import annotations

import ssl

import httpx2
import pytest

from webhost.upstream import http_clients


def test_the_trust_store_is_read_once_for_every_connection(monkeypatch: pytest.MonkeyPatch) -> None:
    # Each new context read the whole trust store: 40-90 ms in one turn of the event loop, per connection.
    made: list[ssl.SSLContext] = []
    create = httpx2.create_ssl_context

    def counted() -> ssl.SSLContext:
        made.append(create())
        return made[-1]

    monkeypatch.setattr(httpx2, "create_ssl_context", counted)
    http_clients.shared_ssl_context.cache_clear()
    try:
        clients = [http_clients.mcp_http_client({"x-entry": str(n)}) for n in range(3)]
        assert len(made) == 1
        assert all(client.headers["x-entry"] == str(n) for n, client in enumerate(clients))
        assert clients[0].timeout == httpx2.Timeout(30.0, read=300.0)  # the SDK's own defaults
    finally:
        http_clients.shared_ssl_context.cache_clear()
