"""A big result over Streamable HTTP, through webhost's own transport: parsed in pieces as a stdio server's long
line is, and arriving intact.

The SDK's transport validated a response, or an SSE event's data, with one `validate_json` call: 60 ms and more
of the event loop for 30 MB (bench/README.md, "Stop 37"); and it refused any SSE event over 1 MiB, so a result
over a megabyte from a server that answers with a stream never arrived. Both eras of the real test server
(modern answers with JSON, legacy with an SSE stream) over a real socket."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from mcp import Client
from mcp.client import streamable_http
from mcp.types import TextContent

from tests.support.process import PYTHON, SERVERS, http_process
from webhost.config import parse_config
from webhost.upstream import client_factory
from webhost.upstream.client_factory import default_transport
from webhost.upstream.sdk.http_responses import PiecewiseHTTPTransport
from webhost.upstream.stderr import StderrPipe
from webhost.upstream.stdio_lines import BIG_LINE, parse_long_line
from webhost.upstream.text_pieces import TextPieces

pytestmark = pytest.mark.anyio

LINE = "0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ-_0123456789abcdefghijklmnopqrstuv\n"


@pytest.mark.parametrize("era", ["modern", "legacy"])
async def test_a_big_result_over_streamable_http_is_parsed_in_pieces_and_arrives_intact(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, era: str
) -> None:
    # The seam points the SDK's module at its subclass for the whole process: put both back after this test.
    monkeypatch.setattr(streamable_http, "StreamableHTTPTransport", streamable_http.StreamableHTTPTransport)
    monkeypatch.setattr(PiecewiseHTTPTransport, "parse_long", PiecewiseHTTPTransport.parse_long)
    parsed: list[tuple[type, int]] = []

    async def parse_and_count(text: str | TextPieces) -> object:
        parsed.append((type(text), len(text)))
        return await parse_long_line(text)

    monkeypatch.setattr(client_factory, "parse_long_line", parse_and_count)

    size = 3 * BIG_LINE
    args = [PYTHON, str(SERVERS / "basic.py"), "--http", "{port}", *(["--legacy"] if era == "legacy" else [])]
    with http_process(args, log_path=tmp_path / "server.log") as url:
        config = parse_config(json.dumps({"mcpServers": {"remote": {"url": url}}}), "test", {})
        server = config.servers["remote"]
        async with StderrPipe(lambda line: None) as stderr:  # a stdio server's; an HTTP one leaves it unused
            async with Client(default_transport(server, stderr, lambda code: None)) as client:
                small = await client.call_tool("echo", {"text": "small"})
                result = await client.call_tool("big", {"size_bytes": size})
    assert isinstance(small.content[0], TextContent) and small.content[0].text == "small"
    assert isinstance(result.content[0], TextContent)
    assert result.content[0].text == (LINE * (size // len(LINE) + 1))[:size]
    # Only the big result went to the parser in pieces; a JSON body as the chunks it arrived in.
    [(kind, length)] = parsed
    assert length > 2 * size  # the text twice (it has an output schema), its newlines escaped
    assert kind is (TextPieces if era == "modern" else str), "the modern era answers with JSON, legacy with SSE"
