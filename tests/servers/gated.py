"""Test MCP server whose calls end when the test says: `wait_at_gate` runs until `open_gate` is called.

A call that waits on the test, not on a clock: a test can reload a page, close a tab or restart something
while the call is certainly still running, and then let it end. Dual-era like the other SDK servers; run it
with `python tests/servers/gated.py` (stdio), `--http PORT` or `--legacy`.
"""

from __future__ import annotations

import argparse
from typing import Annotated

import anyio
from _support import add_common_args, serve
from mcp.server import MCPServer
from mcp.server.mcpserver import Context
from pydantic import Field

mcp = MCPServer(
    "gated",
    title="webhost gated test server",
    version="1.0.0",
    instructions="Calls that end when the test opens their gate.",
)

# One gate per name, for the life of the server process (a test opens it once).
_gates: dict[str, anyio.Event] = {}


def _gate(name: str) -> anyio.Event:
    return _gates.setdefault(name, anyio.Event())


@mcp.tool(title="Wait at a gate", description="Report progress once, then wait until `open_gate` opens `gate`.")
async def wait_at_gate(ctx: Context, gate: Annotated[str, Field(min_length=1, max_length=100)] = "g") -> str:
    await ctx.report_progress(1, 2, f"waiting at gate {gate}")
    await _gate(gate).wait()
    return f"passed gate {gate}"


@mcp.tool(title="Open a gate", description="Let every call waiting at `gate` (and every later one) through.")
def open_gate(gate: Annotated[str, Field(min_length=1, max_length=100)] = "g") -> str:
    _gate(gate).set()
    return f"opened gate {gate}"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    add_common_args(parser)
    serve(mcp, parser.parse_args())


if __name__ == "__main__":
    main()
