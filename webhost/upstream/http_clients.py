"""The HTTP clients of webhost's connections to MCP servers (Streamable HTTP and legacy SSE), with one TLS context.

Building an `httpx2.AsyncClient` builds a TLS context, which reads the machine's whole trust store: 40-90 ms in
one turn of the event loop, for every person's every connection to an HTTP server (200 people connecting held
every tab's loop for seconds in all). One context is built the first time and shared: a context is made to be
shared, and it trusts what a new one would (`httpx2.create_ssl_context`: `SSL_CERT_FILE` and `SSL_CERT_DIR`
honoured, else the system's store), as read when webhost first connected over HTTP.
"""

from __future__ import annotations

import ssl
from collections.abc import Callable, Mapping
from functools import cache
from typing import Any

import httpx2

# The SDK's own defaults: a server may hold a response stream open for long.
TIMEOUT = httpx2.Timeout(30.0, read=300.0)


@cache
def shared_ssl_context() -> ssl.SSLContext:
    return httpx2.create_ssl_context()


def mcp_http_client(
    headers: dict[str, str] | None = None,
    timeout: httpx2.Timeout | None = None,
    auth: httpx2.Auth | None = None,
    *,
    event_hooks: Mapping[str, list[Callable[..., Any]]] | None = None,
) -> httpx2.AsyncClient:
    """A client for one connection (the signature of the SDK's `httpx_client_factory`, and event hooks)."""
    return httpx2.AsyncClient(
        headers=headers,
        timeout=timeout or TIMEOUT,
        auth=auth,
        event_hooks=event_hooks,
        verify=shared_ssl_context(),
    )
