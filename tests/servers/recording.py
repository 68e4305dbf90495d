"""Test MCP server that records every request it receives (`RECEIVED`, method and params), for the access tests:
a person the rules keep from it must reach nothing of it (tests/fast/test_access_walk.py).

Its tools, resource and prompt have names no other test server uses (`ledger_*`), so a response that mentions
one of them has revealed this server. `python tests/servers/recording.py [--http PORT]`; with `--http`, each
request is also printed on stderr.
"""

from __future__ import annotations

import argparse
import sys
from typing import Any

from _support import add_common_args, serve
from mcp.server import MCPServer, ServerRequestContext
from mcp.server.context import CallNext, HandlerResult

RECEIVED: list[tuple[str, Any]] = []  # (method, params) of every request, in the order received


async def _record(ctx: ServerRequestContext[Any, Any], call_next: CallNext) -> HandlerResult:
    RECEIVED.append((ctx.method, ctx.params))
    if __name__ == "__main__":
        print(f"recording: {ctx.method}", file=sys.stderr, flush=True)
    return await call_next(ctx)


mcp = MCPServer("recording", title="webhost recording test server", version="1.0.0", middleware=[_record])


@mcp.tool()
def ledger_balance(account: str = "main") -> str:
    """The balance of a ledger account (a fixed answer)."""
    return f"ledger_balance {account}: 42"


@mcp.tool()
def ledger_close(account: str = "main") -> str:
    """Close a ledger account (nothing happens)."""
    return f"ledger_close {account}: closed"


@mcp.resource("ledger://summary", name="ledger_summary")
def ledger_summary() -> str:
    return "ledger_summary: all accounts balanced"


@mcp.prompt(name="ledger_prompt")
def ledger_prompt(account: str = "main") -> str:
    return f"ledger_prompt for {account}"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    add_common_args(parser)
    serve(mcp, parser.parse_args())


if __name__ == "__main__":
    main()
