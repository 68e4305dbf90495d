"""`webhost.upstream.big_json`: a very long JSON line parsed as `json.loads` parses it, in bounded pieces."""

from __future__ import annotations

import json
import random

import anyio
import pytest

from webhost.upstream import big_json
from webhost.upstream.text_pieces import TextPieces

pytestmark = pytest.mark.anyio


async def test_a_30_mb_result_is_parsed_in_pieces_with_the_event_loop_running_between_them() -> None:
    """`json.loads` of a 30 MB line held the event loop for 40-100 ms (more under load), every other tab with it."""
    text = "0123456789abcdefghijklmnopqrstuvwxyzABCDEF-é\n" * (15_000_000 // 45)
    line = json.dumps(
        {
            "jsonrpc": "2.0",
            "id": 7,
            "result": {"content": [{"type": "text", "text": text}], "structuredContent": {"result": text}},
        }
    )
    ticks = 0
    done = anyio.Event()

    async def other_tab() -> None:
        nonlocal ticks
        while not done.is_set():
            ticks += 1
            await anyio.sleep(0)

    async with anyio.create_task_group() as tg:
        tg.start_soon(other_tab)
        value = await big_json.loads_in_pieces(line)
        done.set()
    assert value == json.loads(line)
    assert ticks >= len(line) // big_json.PIECE  # at least once a piece
    # As it arrives from a server's stdout, in 64 KiB chunks never joined (text_pieces.py).
    chunks = TextPieces([line[at : at + 65536] for at in range(0, len(line), 65536)])
    assert await big_json.loads_in_pieces(chunks) == value


@pytest.mark.parametrize("ascii_only", [True, False])
@pytest.mark.parametrize("arrived_in_chunks", [False, True])
async def test_any_cut_decodes_as_the_whole_does(
    monkeypatch: pytest.MonkeyPatch, ascii_only: bool, arrived_in_chunks: bool
) -> None:
    """Escapes and surrogate pairs cut anywhere (small pieces make every kind of cut happen), in a line that is one
    string or the chunks it arrived in (cut anywhere too)."""
    monkeypatch.setattr(big_json, "PIECE", 997)
    monkeypatch.setattr(big_json, "LONG", 300)
    alphabet = ["a", "é", '"', "\\", "\n", "\u2028", "😀", "\x01", "z", "/", "\t"]
    rng = random.Random(24)
    for _ in range(150):
        text = "".join(rng.choice(alphabet) for _ in range(rng.randint(0, 4000)))
        document = {"a": text, "b": [text[:200], {"c": text[::-1], text[:5]: 1}], "n": 1.5, "t": True}
        line = json.dumps(document, ensure_ascii=ascii_only)
        read: str | TextPieces = line
        if arrived_in_chunks:
            cuts = sorted(rng.sample(range(len(line) + 1), k=min(len(line) + 1, rng.randint(0, 40))))
            read = TextPieces([line[a:b] for a, b in zip([0, *cuts], [*cuts, len(line)], strict=True)])
        assert await big_json.loads_in_pieces(read) == json.loads(line)


async def test_what_json_loads_refuses_is_refused(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(big_json, "LONG", 300)
    for bad in ('{"a": "' + "x" * 3000 + '\x01"}', '{"a": "' + "x" * 3000, '{"a": "' + "x" * 3000 + '"'):
        with pytest.raises(ValueError):
            await big_json.loads_in_pieces(bad)
    lone = json.dumps({"a": "x" * 3000 + "\ud800" + "y" * 3000})  # valid JSON, but no UTF-8 text carries it
    with pytest.raises(ValueError, match="lone surrogate"):
        await big_json.loads_in_pieces(lone)


async def test_the_quotes_of_a_long_line_are_counted_with_the_event_loop_running_between_pieces(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Counting the quotes of a 30 MB line in one call held the event loop for tens of ms, before any piece."""
    line = json.dumps({"jsonrpc": "2.0", "id": 7, "result": {"text": "x" * (8 * big_json.PIECE)}})
    ticks = 0
    at_the_search: list[int] = []
    search = big_json._long_strings

    async def long_strings(text: str) -> list[tuple[int, int]]:
        at_the_search.append(ticks)
        return await search(text)

    monkeypatch.setattr(big_json, "_long_strings", long_strings)
    done = anyio.Event()

    async def other_tab() -> None:
        nonlocal ticks
        while not done.is_set():
            ticks += 1
            await anyio.sleep(0)

    async with anyio.create_task_group() as tg:
        tg.start_soon(other_tab)
        value = await big_json.loads_in_pieces(line)
        done.set()
    assert value == json.loads(line)
    assert at_the_search and at_the_search[0] >= len(line) // big_json.PIECE  # a turn after each piece counted


async def test_a_line_of_very_many_strings_stops_counting_once_past_the_limit() -> None:
    many = json.dumps(["ab"] * (big_json.MAX_QUOTES + 10) + ["x" * (4 * big_json.PIECE)])
    assert await big_json._many_quotes(many)
    assert not await big_json._many_quotes(json.dumps(["ab"] * 10 + ["x" * (4 * big_json.PIECE)]))
    assert await big_json.loads_in_pieces(many) == json.loads(many)
