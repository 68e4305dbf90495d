"""Shared plumbing for the SDK-based test servers: command-line flags, era helpers and the MRTR `_meta` fix.

Imported by the sibling scripts (`python tests/servers/NAME.py` puts this directory on `sys.path`).

- `add_common_args` / `serve`: every server takes `--http PORT` (Streamable HTTP on 127.0.0.1:PORT/mcp,
  stdio otherwise) and `--legacy` (refuse `server/discover`, so a client in `mode="auto"` falls back to
  the `initialize` handshake and the server speaks only the legacy era).
- `is_modern(ctx)`: whether this request is on the 2026-07-28 wire (MRTR) or a legacy handshake
  connection (server→client requests).
- `advertise_extensions_on_initialize`: the 2025-11-25 wire model has no `ServerCapabilities.extensions`,
  so the 2.3.0 server drops the extension map from the legacy `InitializeResult`; this middleware puts
  it back.
- `exact_input_required` + `restore_exact_input_requests` (from `webhost.demo.sdk_fixes`): the 2.3.0
  server re-serialises an
  `InputRequiredResult` through the 2026-07-28 wire model, whose `ElicitRequestFormParams` has no `_meta`
  and whose `RequestedSchema` ignores keys beside `type`/`properties`/`required`/`$schema` (protocol.md
  B5.12). The builder stashes the exact params of each input request in the result's `_meta`; the
  middleware, which sees the wire dict after that sieve, puts them back and drops the stash.
"""

from __future__ import annotations

import argparse
from collections.abc import Mapping
from typing import Any

import anyio
from mcp.server import MCPServer, NotificationOptions, ServerRequestContext
from mcp.server.context import CallNext, HandlerResult, ServerMiddleware
from mcp.server.mcpserver import Context
from mcp.server.runner import serve_loop
from mcp.server.stdio import stdio_server
from mcp.shared.exceptions import MCPError
from mcp.types import METHOD_NOT_FOUND, ClientCapabilities
from mcp.types.version import MODERN_PROTOCOL_VERSIONS

# The same SDK workaround the packaged demo server needs (webhost is installed wherever these run).
from webhost.demo.sdk_fixes import exact_input_required, restore_exact_input_requests

__all__ = ["exact_input_required", "restore_exact_input_requests"]

UI_EXTENSION = "io.modelcontextprotocol/ui"
APP_MIME_TYPE = "text/html;profile=mcp-app"

ALL_LIST_CHANGED = NotificationOptions(prompts_changed=True, resources_changed=True, tools_changed=True)


def add_common_args(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--http", type=int, metavar="PORT", help="serve Streamable HTTP on 127.0.0.1:PORT/mcp")
    parser.add_argument(
        "--legacy",
        action="store_true",
        help="legacy era only: refuse server/discover so clients fall back to initialize",
    )


def is_modern(ctx: Context[Any, Any]) -> bool:
    """True on a 2026-07-28 request (answer with InputRequiredResult), False on a legacy connection."""
    return ctx.protocol_version in MODERN_PROTOCOL_VERSIONS


def advertise_extensions_on_initialize(extensions: Mapping[str, dict[str, Any]]) -> ServerMiddleware[Any]:
    """Server middleware putting `capabilities.extensions` back into the legacy `InitializeResult`.

    The 2025-11-25 wire model of `ServerCapabilities` has no `extensions`, so the 2.3.0 server sieves
    the extension map out of the handshake answer (`server/discover` keeps it).
    """

    async def middleware(ctx: ServerRequestContext[Any, Any], call_next: CallNext) -> HandlerResult:
        result = await call_next(ctx)
        if ctx.method == "initialize" and isinstance(result, dict) and isinstance(result.get("capabilities"), dict):
            capabilities = dict(result["capabilities"])
            capabilities.setdefault("extensions", {k: dict(v) for k, v in extensions.items()})
            result = {**result, "capabilities": capabilities}
        return result

    return middleware


async def _refuse_discover(ctx: ServerRequestContext[Any, Any], call_next: CallNext) -> HandlerResult:
    if ctx.method == "server/discover":
        raise MCPError(code=METHOD_NOT_FOUND, message="Method not found", data="server/discover")
    return await call_next(ctx)


def client_wants_app_elicitation(capabilities: ClientCapabilities | None) -> bool:
    """SEP-3118, client side: form elicitation, and the UI extension with the app MIME and `elicitation`."""
    if capabilities is None or capabilities.elicitation is None:
        return False
    elicitation = capabilities.elicitation
    if elicitation.form is None and elicitation.url is not None:
        return False
    settings = (capabilities.extensions or {}).get(UI_EXTENSION)
    if not isinstance(settings, dict):
        return False
    mime_types = settings.get("mimeTypes")
    return isinstance(mime_types, list) and APP_MIME_TYPE in mime_types and "elicitation" in settings


def serve(mcp: MCPServer, args: argparse.Namespace) -> None:
    """Run `mcp` as the flags say: stdio (dual-era, or legacy-only) or Streamable HTTP."""
    if args.legacy:
        mcp.middleware.insert(0, _refuse_discover)
    if args.http is not None:
        mcp.run(transport="streamable-http", host="127.0.0.1", port=args.http, streamable_http_path="/mcp")
        return
    anyio.run(_serve_stdio, mcp, bool(args.legacy))


async def _serve_stdio(mcp: MCPServer, legacy: bool) -> None:
    # The low-level server is private on MCPServer, but it is the only way to (a) advertise
    # listChanged in the legacy InitializeResult and (b) drive the handshake-only loop, which
    # MCPServer.run() does not expose. The stdio loop is otherwise what run() does.
    low = mcp._lowlevel_server  # pyright: ignore[reportPrivateUsage]
    options = low.create_initialization_options(ALL_LIST_CHANGED)
    async with stdio_server() as (read_stream, write_stream):
        if not legacy:
            await low.run(read_stream, write_stream, options)
            return
        async with low.lifespan(low) as lifespan_state:
            await serve_loop(low, read_stream, write_stream, lifespan_state=lifespan_state, init_options=options)
