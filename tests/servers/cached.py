"""Test MCP server for SEP-2549 caching hints and SEP-2243 `x-mcp-header` annotations (issue 25, item 9).

Dual-era like the others (`--legacy` refuses `server/discover`). On 2026-07-28 its results carry caching hints:
`server/discover` 1 h public, `tools/list` 60 s public, `resources/list` 30 s private, `resources/read` 5 s
private, `prompts/list` 0 (the SDK's default); before 2026-07-28 there are none (the fields are not in that era).

- tool `region(region)`: a valid `x-mcp-header` ("Region"); answers the region.
- tool `bad_header(value)`: an invalid `x-mcp-header` (not an RFC 9110 token), which a 2026-07-28 client MUST
  drop from the listing; webhost lists it with the reason.
- resource `cached://note` (text).
"""

from __future__ import annotations

import argparse
import sys
from typing import Annotated, Any

from _support import add_common_args, serve
from mcp.server import MCPServer, ServerRequestContext
from mcp.server.caching import CacheHint
from mcp.server.context import CallNext, HandlerResult
from pydantic import Field

mcp = MCPServer(
    "cached",
    version="1.0.0",
    cache_hints={
        "server/discover": CacheHint(3_600_000, "public"),
        "tools/list": CacheHint(60_000, "public"),
        "resources/list": CacheHint(30_000, "private"),
        "resources/read": CacheHint(5_000, "private"),
    },
)


@mcp.tool(description="Answer the region, which also travels as the Mcp-Param-Region header.")
def region(region: Annotated[str, Field(json_schema_extra={"x-mcp-header": "Region"})]) -> str:
    return f"region {region}"


@mcp.tool(description="A tool whose x-mcp-header annotation is not a valid header name.")
def bad_header(value: Annotated[str, Field(json_schema_extra={"x-mcp-header": "Value"})]) -> str:
    return value


async def spoil_bad_header(ctx: ServerRequestContext[Any, Any], call_next: CallNext) -> HandlerResult:
    """`MCPServer` refuses an invalid annotation at registration, so the listing is spoiled on its way out."""
    result = await call_next(ctx)
    if ctx.method == "tools/list" and isinstance(result, dict):
        for tool in result.get("tools", []):
            if tool.get("name") == "bad_header":
                tool["inputSchema"]["properties"]["value"]["x-mcp-header"] = "not a header!"
    return result


mcp.middleware.append(spoil_bad_header)


@mcp.resource("cached://note", name="note", mime_type="text/plain")
def note() -> str:
    return "a cached note"


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    add_common_args(parser)
    serve(mcp, parser.parse_args())


if __name__ == "__main__":
    sys.exit(main())
