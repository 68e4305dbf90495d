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
- tool `shapes(owner, shape, tags, team, tree, chain, sizes, moods)`: the schemas people write, for the form:
  nested objects (`$defs`/`$ref`), an optional nullable object, a nullable integer, an enum, a oneOf of two
  shapes, arrays of strings, of objects, of integers (with a default) and of an enum, a recursive tree and a
  self-referencing chain; answered as the arguments received.
- icons: the server and the tool `level` have a `data:` PNG (drawn), `bump` only an https one (never loaded),
  the prompt `paint` a light and a dark one.
- resource `wb://readme` (text/markdown, with raw HTML and a `javascript:` link that must stay text).
- resource `wb://counter` ("count N"); the tool `bump` adds one and sends `notifications/resources/updated`
  to a client that subscribed to it.
- tool `roots`: the client's roots (`roots/list`: a server→client request before 2026-07-28, an input round
  since) as JSON, with how many `notifications/roots/list_changed` the server has received so far.
- the request's `_meta` as the server received it (without the 2026-07-28 envelope's capabilities and client
  info), as JSON: the tool `request_meta`, the prompt `request_meta` and the template `wb://request-meta/{label}`.
"""

from __future__ import annotations

import argparse
import json
import sys
import warnings
from typing import Annotated, Any, Literal

from _support import add_common_args, is_modern, serve
from mcp.server import MCPServer, ServerRequestContext
from mcp.server.mcpserver import Context
from mcp.shared.exceptions import MCPDeprecationWarning
from mcp.types import (
    Completion,
    EmptyResult,
    Icon,
    InputRequiredResult,
    ListRootsRequest,
    ListRootsResult,
    NotificationParams,
    PromptReference,
    RequestParams,
    ResourceTemplateReference,
    SetLevelRequestParams,
    SubscribeRequestParams,
    UnsubscribeRequestParams,
)
from pydantic import BaseModel, Field

warnings.filterwarnings("ignore", category=MCPDeprecationWarning)

COLORS = ["red", "green", "blue", "black", "brown", "white"]
FINISHES = ["matte", "gloss", "satin"]
LEVELS = ["debug", "info", "notice", "warning", "error", "critical", "alert", "emergency"]

# 1×1 PNGs, red and blue.
RED = (
    "data:image/png;base64,iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAIAAACQd1PeAAAADElEQVR4nGO4I2IDAAL8AS3VzMq8AAAAAElFTkSuQmCC"
)
BLUE = (
    "data:image/png;base64,iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAIAAACQd1PeAAAADElEQVR4nGOQs7kDAAGyATf/cv8XAAAAAElFTkSuQmCC"
)

mcp = MCPServer(
    "workbench",
    title="webhost workbench test server",
    version="1.0.0",
    icons=[Icon(src=RED, mime_type="image/png")],
)

state: dict[str, Any] = {"level": "debug", "count": 0, "subscribed": set(), "roots_changed": 0}


@mcp.prompt(
    title="Paint",
    description="Paint something in a colour (completions for both arguments).",
    icons=[Icon(src=RED, theme="light"), Icon(src=BLUE, theme="dark")],
)
def paint(color: str, finish: str = "matte") -> str:
    return f"Paint it {color}, {finish}."


@mcp.resource("wb://colors/{color}", name="color", title="A colour", mime_type="text/plain")
def color_resource(color: str) -> str:
    return f"colour {color}"


README = """# Workbench notes

Some *emphasis*, some **strong** text and `inline code`.

- one
- two with a [safe link](https://example.com/docs)
- three with a [bad link](javascript:alert(1))

<script>window.__markdownRan = true</script><b>raw html stays text</b>

```
code block
```
"""


@mcp.resource("wb://readme", name="readme", title="Readme", mime_type="text/markdown")
def readme() -> str:
    return README


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


async def roots_changed(ctx: Any, params: NotificationParams) -> None:
    state["roots_changed"] += 1


_low.add_notification_handler("notifications/roots/list_changed", NotificationParams, roots_changed)


@mcp.tool(title="Level", description="The log level the client last set.", icons=[Icon(src=RED)])
def level() -> str:
    return str(state["level"])


@mcp.tool(title="Log each level", description="One notifications/message per level at or above the set one.")
async def log_each(ctx: Context) -> str:
    sent = LEVELS[LEVELS.index(state["level"]) :]
    for name in sent:
        await ctx.log(name, f"a {name} message")  # type: ignore[arg-type]
    return ", ".join(sent)


@mcp.tool(
    title="Bump",
    description="Add one to wb://counter and tell subscribers it changed.",
    icons=[Icon(src="https://icons.example/bump.png")],
)
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


class Address(BaseModel):
    street: str
    city: str = "Berlin"


class Owner(BaseModel):
    name: str
    age: int | None = None
    role: Literal["dev", "ops"] = "dev"
    bio: Annotated[str, Field(json_schema_extra={"format": "textarea"})] = ""
    address: Address | None = None


class Circle(BaseModel):
    kind: Literal["circle"] = "circle"
    radius: float


class Square(BaseModel):
    kind: Literal["square"] = "square"
    side: float


class Node(BaseModel):
    label: str
    children: list[Node] = []


class Chain(BaseModel):
    value: str
    next: Chain | None = None


@mcp.tool(title="Shapes", description="Nested objects, arrays, $ref, oneOf, nullable: answers the arguments it got.")
def shapes(
    owner: Owner,
    shape: Circle | Square,
    tags: list[str] = [],  # noqa: B006 (a schema default, never mutated)
    team: list[Owner] = [],  # noqa: B006
    tree: Node | None = None,
    chain: Chain | None = None,
    sizes: list[int] = [2, 3],  # noqa: B006
    moods: list[Literal["calm", "busy", "odd"]] = [],  # noqa: B006
) -> str:
    received = {
        "owner": owner.model_dump(mode="json"),
        "shape": shape.model_dump(mode="json"),
        "tags": tags,
        "team": [member.model_dump(mode="json") for member in team],
        "tree": None if tree is None else tree.model_dump(mode="json"),
        "chain": None if chain is None else chain.model_dump(mode="json"),
        "sizes": sizes,
        "moods": moods,
    }
    return json.dumps(received)


@mcp.tool(title="Roots", description="The client's roots, and how many roots list_changed arrived.")
async def roots(ctx: Context) -> str | InputRequiredResult:
    if is_modern(ctx):
        answer = (ctx.input_responses or {}).get("roots")
        if not isinstance(answer, ListRootsResult):
            return InputRequiredResult(input_requests={"roots": ListRootsRequest()})
        listed = answer
    else:
        listed = await ctx.session.list_roots()  # type: ignore[attr-defined]
    items = [{"uri": str(r.uri), "name": r.name} for r in listed.roots]
    return json.dumps({"roots": items, "listChanged": state["roots_changed"]})


ENVELOPE = ("io.modelcontextprotocol/clientCapabilities", "io.modelcontextprotocol/clientInfo")


def _received_meta(ctx: Context) -> str:
    meta = dict(ctx.request_context.meta or {})
    return json.dumps({key: value for key, value in meta.items() if key not in ENVELOPE}, sort_keys=True)


@mcp.tool(title="Request _meta", description="The _meta this request carried, as JSON.")
def request_meta(ctx: Context) -> str:
    return _received_meta(ctx)


@mcp.prompt(name="request_meta", description="The _meta this request carried, as JSON.")
def request_meta_prompt(ctx: Context) -> str:
    return _received_meta(ctx)


@mcp.resource("wb://request-meta/{label}", name="request-meta", mime_type="application/json")
def request_meta_resource(label: str, ctx: Context) -> str:
    return _received_meta(ctx)


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    add_common_args(parser)
    serve(mcp, parser.parse_args())


if __name__ == "__main__":
    sys.exit(main())
