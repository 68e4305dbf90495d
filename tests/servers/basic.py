"""Test MCP server covering the core primitives: tools of every result kind, resources, templates, prompts.

Dual-era (an `MCPServer` answers `server/discover` on 2026-07-28 and `initialize` on the legacy era, as
the client opens). Run it with `python tests/servers/basic.py` (stdio), `--http PORT` (Streamable HTTP
on 127.0.0.1:PORT/mcp) or `--legacy` (refuses `server/discover`, so clients fall back to `initialize`).

Environment: `BIG_BLOB_BYTES` sizes the `basic://big-blob` resource (default 2 MiB).
"""

from __future__ import annotations

import argparse
import base64
import io
import math
import os
import secrets
import struct
import sys
import warnings
import wave
from typing import Annotated, Any, Literal

import anyio
from _support import add_common_args, is_modern, serve
from mcp.server import MCPServer
from mcp.server.mcpserver import Context
from mcp.shared.exceptions import MCPDeprecationWarning, MCPError
from mcp.types import (
    AudioContent,
    BlobResourceContents,
    ContentBlock,
    EmbeddedResource,
    ImageContent,
    TextContent,
)
from pydantic import BaseModel, Field

# Logging (notifications/message) is deprecated in 2026-07-28 but still part of what a host must show.
warnings.filterwarnings("ignore", category=MCPDeprecationWarning)

mcp = MCPServer(
    "basic",
    title="webhost basic test server",
    version="1.0.0",
    instructions="Core MCP primitives for webhost's tests: tools, resources, templates and prompts.",
)


class Stats(BaseModel):
    """Summary statistics of a list of numbers."""

    count: int
    minimum: float
    maximum: float
    mean: float


@mcp.tool(title="Echo", description="Return the text unchanged.")
def echo(text: str) -> str:
    return text


@mcp.tool(title="Add", description="Add two integers (structured result {'result': a + b}).")
def add(a: int, b: int) -> int:
    return a + b


@mcp.tool(title="Statistics", description="Structured output: count, min, max and mean of the numbers.")
def stats(numbers: Annotated[list[float], Field(min_length=1)]) -> Stats:
    return Stats(
        count=len(numbers),
        minimum=min(numbers),
        maximum=max(numbers),
        mean=sum(numbers) / len(numbers),
    )


@mcp.tool(title="Slow", description="Report progress `steps` times, sleeping `delay` seconds between steps.")
async def slow(ctx: Context, steps: Annotated[int, Field(ge=1, le=1000)] = 5, delay: float = 0.2) -> str:
    for step in range(1, steps + 1):
        await anyio.sleep(delay)
        await ctx.report_progress(step, steps, f"step {step} of {steps}")
    return f"done after {steps} steps"


@mcp.tool(title="Hang", description="Never return (until cancelled).")
async def hang() -> str:
    await anyio.sleep_forever()
    return "unreachable"


@mcp.tool(title="Fail", description="Raise an ordinary exception: the result has isError: true.")
def fail(message: str = "this tool always fails") -> str:
    raise ValueError(message)


@mcp.tool(title="JSON-RPC error", description="Raise MCPError: the call fails with a JSON-RPC error.")
def rpc_error(code: int = -32000, message: str = "custom JSON-RPC error from basic.rpc_error") -> str:
    raise MCPError(code=code, message=message, data={"tool": "rpc_error"})


@mcp.tool(title="Big result", description="Return about `size_bytes` bytes of text.")
def big(size_bytes: Annotated[int, Field(ge=0, le=64 * 1024 * 1024)] = 1_000_000) -> str:
    line = "0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ-_0123456789abcdefghijklmnopqrstuv\n"
    return (line * (size_bytes // len(line) + 1))[:size_bytes]


def _wav(seconds: float = 0.25, frequency: float = 440.0, rate: int = 8000) -> bytes:
    buffer = io.BytesIO()
    with wave.open(buffer, "wb") as out:
        out.setnchannels(1)
        out.setsampwidth(1)
        out.setframerate(rate)
        frames = bytes(
            int(128 + 100 * math.sin(2 * math.pi * frequency * i / rate)) for i in range(int(rate * seconds))
        )
        out.writeframes(frames)
    return buffer.getvalue()


@mcp.tool(
    title="Binary content",
    description="Image content of `image_bytes` random bytes, a short WAV, and an embedded blob resource.",
)
def binary(
    image_bytes: Annotated[int, Field(ge=0, le=16 * 1024 * 1024)] = 1024,
    blob_bytes: Annotated[int, Field(ge=0, le=16 * 1024 * 1024)] = 256,
) -> list[ContentBlock]:
    return [
        ImageContent(
            type="image",
            data=base64.b64encode(secrets.token_bytes(image_bytes)).decode(),
            mime_type="image/png",
        ),
        AudioContent(type="audio", data=base64.b64encode(_wav()).decode(), mime_type="audio/wav"),
        EmbeddedResource(
            type="resource",
            resource=BlobResourceContents(
                uri="basic://embedded-blob",
                mime_type="application/octet-stream",
                blob=base64.b64encode(secrets.token_bytes(blob_bytes)).decode(),
            ),
        ),
        TextContent(type="text", text=f"{image_bytes} image bytes, {blob_bytes} blob bytes"),
    ]


LogLevel = Literal["debug", "info", "notice", "warning", "error", "critical", "alert", "emergency"]


@mcp.tool(
    title="Log",
    description="Send notifications/message at `level` (on 2026-07-28 only when the request opted in to logging).",
)
async def log(ctx: Context, message: str = "hello from basic.log", level: LogLevel = "info") -> str:
    await ctx.log(level, message, logger_name="basic")
    return f"logged {level}: {message}"


_dynamic_count = 0


@mcp.tool(title="Add a tool", description="Register a new tool at runtime and announce tools/list_changed.")
async def add_tool(ctx: Context, name: str = "") -> str:
    global _dynamic_count
    _dynamic_count += 1
    tool_name = name or f"dynamic_{_dynamic_count}"

    def dynamic(text: str = "") -> str:
        return f"{tool_name}: {text}"

    mcp.add_tool(dynamic, name=tool_name, title=f"Dynamic {tool_name}", description="Added at runtime by add_tool.")
    if is_modern(ctx):
        await ctx.notify_tools_changed()  # reaches subscriptions/listen streams
    else:
        await ctx.session.send_tool_list_changed()
    return f"added tool {tool_name}"


@mcp.tool(title="Write to stderr", description="Write `lines` lines of `text` to the server's stderr.")
def stderr(text: str = "hello from basic.stderr", lines: Annotated[int, Field(ge=1, le=10_000)] = 1) -> str:
    for index in range(lines):
        print(f"{text} [{index + 1}/{lines}]", file=sys.stderr, flush=True)
    return f"wrote {lines} line(s) to stderr"


@mcp.resource("basic://text", name="text", title="Plain text", mime_type="text/plain", description="A text resource")
def text_resource() -> str:
    return "Hello from the basic test server.\nSecond line.\n"


@mcp.resource("basic://blob", name="blob", title="Bytes 0-255", mime_type="application/octet-stream")
def blob_resource() -> bytes:
    return bytes(range(256))


@mcp.resource(
    "basic://big-blob",
    name="big-blob",
    title="Big blob",
    mime_type="application/octet-stream",
    description="BIG_BLOB_BYTES (default 2 MiB) of pseudo-random bytes",
)
def big_blob_resource() -> bytes:
    size = int(os.environ.get("BIG_BLOB_BYTES", str(2 * 1024 * 1024)))
    return bytes((i * 7919) % 251 for i in range(size))


@mcp.resource("basic://png", name="png", title="A 2x2 PNG", mime_type="image/png")
def png_resource() -> bytes:
    return _png_2x2()


def _png_2x2() -> bytes:
    import zlib

    def chunk(kind: bytes, data: bytes) -> bytes:
        return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data) & 0xFFFFFFFF)

    rows = b"\x00\xff\x00\x00\x00\x00\xff" + b"\x00\x00\x00\xff\xff\xff\xff"
    return (
        b"\x89PNG\r\n\x1a\n"
        + chunk(b"IHDR", struct.pack(">IIBBBBB", 2, 2, 8, 2, 0, 0, 0))
        + chunk(b"IDAT", zlib.compress(rows))
        + chunk(b"IEND", b"")
    )


@mcp.resource(
    "basic://items/{item_id}",
    name="item",
    title="Item by id",
    mime_type="application/json",
    description="A JSON document for any item id",
)
def item_template(item_id: str) -> str:
    return f'{{"id": "{item_id}", "name": "Item {item_id}"}}'


@mcp.prompt(title="Greeting", description="Greet someone by name.")
def greet(name: str) -> str:
    return f"Please write a short, warm greeting for {name}."


@mcp.prompt(title="Summarise", description="Summarise a text in a given style.")
def summarize(text: str, style: str = "short") -> list[dict[str, Any]]:
    return [
        {
            "role": "user",
            "content": {"type": "text", "text": f"Summarise this in a {style} style:\n\n{text}"},
        },
        {"role": "assistant", "content": {"type": "text", "text": "Sure - here is the summary:"}},
    ]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    add_common_args(parser)
    serve(mcp, parser.parse_args())


if __name__ == "__main__":
    main()
