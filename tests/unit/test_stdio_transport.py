"""The stdio transport's line splitter: same lines as the SDK's reader, with linear work."""

from __future__ import annotations

import json
import random

from mcp.shared.message import SessionMessage

from webhost.upstream.stdio_lines import BIG_LINE, LineSplitter, parse_line
from webhost.upstream.text_pieces import TextPieces

CHUNK = 64 * 1024


def sdk_split(chunks: list[str]) -> list[str]:
    """The SDK stdio_client's algorithm (quadratic in one line's length), as the reference for the lines."""
    out: list[str] = []
    buffer = ""
    for chunk in chunks:
        lines = (buffer + chunk).split("\n")
        buffer = lines.pop()
        out.extend(lines)
    return out


def split(chunks: list[str]) -> tuple[list[str], LineSplitter]:
    splitter = LineSplitter()
    out: list[str] = []
    for chunk in chunks:
        out.extend(str(line) for line in splitter.feed(chunk))
    return out, splitter


def chunked(text: str, size: int) -> list[str]:
    return [text[i : i + size] for i in range(0, len(text), size)]


def test_same_lines_as_the_sdk_for_any_chunking() -> None:
    rng = random.Random(1234)
    alphabet = 'ab{}"\r\n\n\né€😀 '
    for _ in range(300):
        text = "".join(rng.choice(alphabet) for _ in range(rng.randint(0, 200)))
        cuts = sorted(rng.sample(range(len(text) + 1), k=min(len(text) + 1, rng.randint(0, 12))))
        chunks = [text[a:b] for a, b in zip([0, *cuts], [*cuts, len(text)], strict=True)]
        assert split(chunks)[0] == sdk_split(chunks), chunks


def test_unfinished_line_is_kept_until_its_newline() -> None:
    splitter = LineSplitter()
    assert splitter.feed("abc") == []
    assert splitter.feed("def") == []
    assert splitter.feed("g\nh") == ["abcdefg"]
    assert splitter.feed("\n\n") == ["h", ""]
    assert splitter.feed("") == []


def test_one_huge_line_is_searched_once_and_not_joined() -> None:
    line = "x" * (21 * 1024 * 1024)
    splitter = LineSplitter()
    lines = [out for chunk in chunked(line + "\n", CHUNK) for out in splitter.feed(chunk)]
    assert splitter.fed == len(line) + 1
    # Nothing is searched twice: the SDK's algorithm searches ~len²/(2·CHUNK) characters here (~3.5 G).
    assert splitter.scanned == splitter.fed
    # Its chunks come as they arrived: joining 21 MB was one long turn of the event loop (bench/README.md).
    [pieces] = lines
    assert isinstance(pieces, TextPieces) and str(pieces) == line
    assert splitter.copied <= CHUNK  # only the slice before the newline


def test_a_line_just_under_the_big_size_is_joined_and_one_at_it_is_not() -> None:
    for size, joined in ((BIG_LINE - 1, True), (BIG_LINE, False)):
        splitter = LineSplitter()
        text = "y" * size
        lines = [out for chunk in chunked(text + "\nz", 1000) for out in splitter.feed(chunk)]
        assert [str(line) for line in lines] == [text]
        assert isinstance(lines[0], str) is joined


def test_work_is_linear_for_many_lines_of_every_size() -> None:
    rng = random.Random(99)
    text = "".join("y" * rng.choice((0, 1, 10, 1000, 70_000, 300_000)) + "\n" for _ in range(400))
    for size, sample in ((1, text[:5000]), (7, text[:500_000]), (4096, text), (CHUNK, text)):
        lines, splitter = split(chunked(sample, size))
        assert lines == sample.split("\n")[:-1]
        assert splitter.scanned == splitter.fed == len(sample)
        assert splitter.copied <= 2 * splitter.fed


def test_parse_errors_are_values() -> None:
    assert isinstance(parse_line('{"jsonrpc":"2.0","id":1,"result":{}}'), SessionMessage)
    for garbage in ("this line is not JSON", "{not json", "[]", '{"hello": "world"}', ""):
        assert isinstance(parse_line(garbage), ValueError)


def test_a_big_line_parses_to_what_pydantic_parses_it_to() -> None:
    from mcp.types import jsonrpc_message_adapter

    data = "QUJD" * (BIG_LINE // 4)
    for result in (
        {"content": [{"type": "image", "data": data, "mimeType": "image/png"}], "isError": False},
        {"content": [{"type": "text", "text": data + "é😀\u2028"}], "structuredContent": {"n": 2**70, "f": 1.5}},
    ):
        line = json.dumps({"jsonrpc": "2.0", "id": 7, "result": result})
        assert len(line) >= BIG_LINE
        parsed = parse_line(line)
        assert isinstance(parsed, SessionMessage)
        assert parsed.message == jsonrpc_message_adapter.validate_json(line, by_name=False)


def test_a_big_line_pydantic_would_refuse_is_refused_as_it_would_be() -> None:
    padding = "x" * BIG_LINE
    lone = '{"jsonrpc":"2.0","id":7,"result":{"text":"' + padding + '\\ud800"}}'
    not_a_message = '{"jsonrpc":"2.0","id":7,"resultt":{"text":"' + padding + '"}}'
    for line in (lone, not_a_message):
        assert isinstance(parse_line(line), ValueError)
    paired = '{"jsonrpc":"2.0","id":7,"result":{"text":"' + padding + '\\ud83d\\ude00"}}'
    parsed = parse_line(paired)
    assert isinstance(parsed, SessionMessage) and parsed.message.result["text"].endswith("😀")  # type: ignore[union-attr]
