"""`webhost.outbox.Outbox`: activity entries coalesced into one frame, in posting order, never held long."""

from __future__ import annotations

import json

import anyio
import pytest

from webhost.outbox import BATCH_WINDOW, Outbox

pytestmark = pytest.mark.anyio


async def test_entries_go_in_one_frame_just_before_the_frame_posted_after_them() -> None:
    outbox = Outbox(max_bytes=1 << 20)
    sent: list[str] = []

    async def send(text: str) -> None:
        sent.append(text)

    async with anyio.create_task_group() as tg:
        tg.start_soon(outbox.drain, send)
        outbox.post_entry('{"n":1}')
        outbox.post_entry('{"n":2}')
        outbox.post('{"jsonrpc":"2.0","id":1,"result":{}}')
        await anyio.sleep(BATCH_WINDOW * 3)  # the batch's timer was cancelled: nothing else comes
        outbox.close()
    assert [json.loads(t).get("method", "response") for t in sent] == ["activity", "response"]
    assert json.loads(sent[0])["params"]["entries"] == [{"n": 1}, {"n": 2}]


async def test_an_entry_with_nothing_after_it_is_sent_once_its_window_is_over() -> None:
    outbox = Outbox(max_bytes=1 << 20)
    sent: list[tuple[float, str]] = []

    async def send(text: str) -> None:
        sent.append((anyio.current_time(), text))

    async with anyio.create_task_group() as tg:
        tg.start_soon(outbox.drain, send)
        await anyio.sleep(0)
        posted = anyio.current_time()
        outbox.post_entry('{"n":1}')
        with anyio.fail_after(2):
            while not sent:
                await anyio.sleep(0.005)
        outbox.close()
    at, text = sent[0]
    assert json.loads(text)["params"]["entries"] == [{"n": 1}]
    assert at - posted >= BATCH_WINDOW * 0.9  # held for company, then sent by the timer
