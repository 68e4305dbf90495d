"""Test MCP server for the workbench's protocol extras: completions, logging levels, resource subscriptions.

Dual-era like the others (`--legacy` refuses `server/discover`). `ping`, `logging/setLevel` and
`resources/subscribe` exist on the legacy era only: the 2026-07-28 vocabulary has none of them (the SDK's
server answers -32601), and moved resource subscriptions to `subscriptions/listen`.

- prompt `paint(color, finish)` and template `wb://colors/{color}`: `completion/complete` offers the
  colours (and finishes) starting with what was typed.
- `logging/setLevel` is remembered; the tool `level` returns it, `log_each` sends one message per level
  at or above it.
- tool `lines(text, note, body)`: multi-line strings (a default with newlines, `x-multiline`,
  `format: "textarea"`), answered as each argument's lines.
- resource `wb://counter` ("count N"); the tool `bump` adds one and sends `notifications/resources/updated`
  to a client that subscribed to it.
"""

from __future__ import annotations

import argparse
import json
import sys
import warnings
from typing import Annotated, Any

from _support import add_common_args, serve
from mcp.server import MCPServer, ServerRequestContext
from mcp.server.mcpserver import Context
from mcp.shared.exceptions import MCPDeprecationWarning
from mcp.types import (
    Completion,
    EmptyResult,
    PromptReference,
    RequestParams,
    ResourceTemplateReference,
    SetLevelRequestParams,
    SubscribeRequestParams,
    UnsubscribeRequestParams,
)
from pydantic import Field

warnings.filterwarnings("ignore", category=MCPDeprecationWarning)

COLORS = ["red", "green", "blue", "black", "brown", "white"]
FINISHES = ["matte", "gloss", "satin"]
LEVELS = ["debug", "info", "notice", "warning", "error", "critical", "alert", "emergency"]

mcp = MCPServer("workbench", title="webhost workbench test server", version="1.0.0")

state: dict[str, Any] = {"level": "debug", "count": 0, "subscribed": set()}


@mcp.prompt(title="Paint", description="Paint something in a colour (completions for both arguments).")
def paint(color: str, finish: str = "matte") -> str:
    return f"Paint it {color}, {finish}."


@mcp.resource("wb://colors/{color}", name="color", title="A colour", mime_type="text/plain")
def color_resource(color: str) -> str:
    return f"colour {color}"


@mcp.resource("wb://counter", name="counter", title="Counter", mime_type="text/plain")
def counter() -> str:
    return f"count {state['count']}"


@mcp.completion()
async def complete(ref: PromptReference | ResourceTemplateReference, argument: Any, context: Any) -> Completion:
    choices = FINISHES if argument.name == "finish" else COLORS
    values = [c for c in choices if c.startswith(argument.value)]
    return Completion(values=values, total=len(values), has_more=False)


async def set_level(ctx: ServerRequestContext[Any, Any], params: SetLevelRequestParams) -> EmptyResult:
    state["level"] = params.level
    return EmptyResult()


async def subscribe(ctx: ServerRequestContext[Any, Any], params: SubscribeRequestParams) -> EmptyResult:
    state["subscribed"].add(str(params.uri))
    return EmptyResult()


async def unsubscribe(ctx: ServerRequestContext[Any, Any], params: UnsubscribeRequestParams) -> EmptyResult:
    state["subscribed"].discard(str(params.uri))
    return EmptyResult()


async def ping(ctx: ServerRequestContext[Any, Any], params: RequestParams) -> EmptyResult:
    return EmptyResult()


_low = mcp._lowlevel_server  # pyright: ignore[reportPrivateUsage]
_low.add_request_handler("ping", RequestParams, ping)
_low.add_request_handler("logging/setLevel", SetLevelRequestParams, set_level)
_low.add_request_handler("resources/subscribe", SubscribeRequestParams, subscribe)
_low.add_request_handler("resources/unsubscribe", UnsubscribeRequestParams, unsubscribe)


@mcp.tool(title="Level", description="The log level the client last set.")
def level() -> str:
    return str(state["level"])


@mcp.tool(title="Log each level", description="One notifications/message per level at or above the set one.")
async def log_each(ctx: Context) -> str:
    sent = LEVELS[LEVELS.index(state["level"]) :]
    for name in sent:
        await ctx.log(name, f"a {name} message")  # type: ignore[arg-type]
    return ", ".join(sent)


@mcp.tool(title="Bump", description="Add one to wb://counter and tell subscribers it changed.")
async def bump(ctx: Context) -> str:
    state["count"] += 1
    if "wb://counter" in state["subscribed"]:
        await ctx.session.send_resource_updated("wb://counter")  # type: ignore[attr-defined]
    await ctx.notify_resource_updated("wb://counter")
    return f"count {state['count']}"


@mcp.tool(title="Lines", description="Multi-line strings: return each argument's lines as JSON.")
def lines(
    text: str = "first line\nsecond line",
    note: Annotated[str, Field(json_schema_extra={"x-multiline": True})] = "",
    body: Annotated[str, Field(json_schema_extra={"format": "textarea"})] = "",
) -> str:
    return json.dumps({"text": text.split("\n"), "note": note.split("\n"), "body": body.split("\n")})


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    add_common_args(parser)
    serve(mcp, parser.parse_args())


if __name__ == "__main__":
    sys.exit(main())
