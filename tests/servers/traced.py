"""Test MCP server that tells what `_meta` its requests carried: webhost's W3C `traceparent` there when
tracing is on (tests/integration/test_traces.py). `python tests/servers/traced.py --http PORT`.
"""

from __future__ import annotations

import argparse
from typing import Any

from _support import add_common_args, serve
from mcp.server import MCPServer
from mcp.server.mcpserver import Context

mcp = MCPServer("traced", title="webhost traced test server", version="1.0.0")


@mcp.tool()
def request_meta(ctx: Context) -> dict[str, Any]:
    """The `_meta` of this tools/call request, as the server received it."""
    return {"meta": dict(ctx.request_context.meta or {})}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    add_common_args(parser)
    serve(mcp, parser.parse_args())


if __name__ == "__main__":
    main()
