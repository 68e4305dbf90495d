"""`webhost.outbox.Outbox`: activity entries coalesced into one frame, in posting order, never held long."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Iterator

import anyio
import pytest

from webhost.outbox import BATCH_WINDOW, Outbox

pytestmark = pytest.mark.anyio


async def _sent_for(post: str, method: str | None) -> list[str]:
    outbox = Outbox(max_bytes=1 << 20)
    sent: list[str] = []

    async def send(text: str) -> None:
        sent.append(text)

    async with anyio.create_task_group() as tg:
        tg.start_soon(outbox.drain, send)
        outbox.post_entry('{"n":1}')
        outbox.post_entry('{"n":2}')
        outbox.post(post, method=method)
        assert outbox._batch_timer is None  # the batch went with the frame: its timer was cancelled
        outbox.close()
    return sent


async def test_held_entries_go_in_one_frame_just_before_a_notification_posted_after_them() -> None:
    sent = await _sent_for('{"jsonrpc":"2.0","method":"list/changed","params":{}}', "list/changed")
    assert [json.loads(t).get("method") for t in sent] == ["activity", "list/changed"]
    assert json.loads(sent[0])["params"]["entries"] == [{"n": 1}, {"n": 2}]


async def test_a_response_goes_ahead_of_the_held_entries_and_they_follow_it_at_once() -> None:
    sent = await _sent_for('{"jsonrpc":"2.0","id":1,"result":{}}', None)
    assert [json.loads(t).get("method", "response") for t in sent] == ["response", "activity"]
    assert json.loads(sent[1])["params"]["entries"] == [{"n": 1}, {"n": 2}]


async def test_an_entry_with_nothing_after_it_is_sent_once_its_window_is_over() -> None:
    outbox = Outbox(max_bytes=1 << 20)
    sent: list[tuple[float, str]] = []
    first = anyio.Event()

    async def send(text: str) -> None:
        sent.append((anyio.current_time(), text))
        first.set()

    async with anyio.create_task_group() as tg:
        tg.start_soon(outbox.drain, send)
        await anyio.wait_all_tasks_blocked()  # the writer waits for frames
        posted = anyio.current_time()
        outbox.post_entry('{"n":1}')
        await first.wait()
        outbox.close()
    at, text = sent[0]
    assert json.loads(text)["params"]["entries"] == [{"n": 1}]
    assert at - posted >= BATCH_WINDOW * 0.9  # held for company, then sent by the timer


async def test_a_response_in_parts_is_sent_back_to_back_each_part_made_when_its_turn_comes() -> None:
    outbox = Outbox(max_bytes=1 << 20)
    sent: list[str] = []
    made: list[str] = []

    def parts() -> Iterator[str]:
        for n in range(3):
            made.append(f"part{n}")
            yield f'{{"n":{n}}}'

    async def send(text: str) -> None:
        if text.startswith('{"n"'):
            assert len(made) == len(sent) + 1  # part n is made only once part n-1 is sent
        sent.append(text)

    async with anyio.create_task_group() as tg:
        tg.start_soon(outbox.drain, send)
        outbox.post_entry('{"entry":1}')
        outbox.post_stream(parts(), chars=100_000)
        assert made == []  # nothing is made when it is posted
        assert outbox._bytes >= 100_000  # it counts against the budget until it is sent (the entry too)
        outbox.post('{"jsonrpc":"2.0","method":"list/changed","params":{}}', method="list/changed")
        await anyio.wait_all_tasks_blocked()  # the writer sent everything and waits for more
        assert outbox._bytes == 0
        outbox.close()
    assert [json.loads(t).get("n", json.loads(t).get("method")) for t in sent] == [0, 1, 2, "activity", "list/changed"]


async def test_a_response_is_sent_from_its_own_task_when_nothing_waits_and_queued_behind_what_does() -> None:
    outbox = Outbox(max_bytes=1 << 20)
    sent: list[tuple[str, str]] = []
    release = anyio.Event()

    async def send(text: str) -> None:
        task = asyncio.current_task()
        sent.append((json.loads(text).get("method") or str(json.loads(text)["id"]), task.get_name() if task else ""))
        if '"slow"' in text:
            await release.wait()

    async with anyio.create_task_group() as tg:
        tg.start_soon(outbox.drain, send, name="writer")
        await anyio.wait_all_tasks_blocked()  # the writer runs and waits for frames
        outbox.post_entry('{"entry":1}')
        asyncio.current_task().set_name("request")  # type: ignore[union-attr]
        await outbox.send_response('{"jsonrpc":"2.0","id":1,"result":{}}')
        await anyio.wait_all_tasks_blocked()  # the writer sent the entries that followed it
        # While the writer is sending a notification, a response waits for it, in order.
        outbox.post('{"jsonrpc":"2.0","method":"slow","params":{}}', method="slow")
        await anyio.wait_all_tasks_blocked()  # the writer is in the middle of sending it
        tg.start_soon(outbox.send_response, '{"jsonrpc":"2.0","id":2,"result":{}}')
        await anyio.wait_all_tasks_blocked()  # the response was queued behind it
        release.set()
        await anyio.wait_all_tasks_blocked()  # the writer sent it
        outbox.close()
    assert sent == [("1", "request"), ("activity", "writer"), ("slow", "writer"), ("2", "writer")]


async def test_a_response_in_parts_lets_everything_else_run_between_two_parts() -> None:
    """A socket that takes each part at once (a fast reader on loopback) never suspends the writer: a 30 MB
    result's parts used to be made and sent in one step of the event loop, which every other tab waited on."""
    outbox = Outbox(max_bytes=1 << 30)
    sent: list[str] = []
    seen: list[int] = []  # how many parts were sent, each time another task got to run meanwhile

    async def send(text: str) -> None:
        sent.append(text)  # never suspends

    def parts() -> Iterator[str]:
        for index in range(60):
            yield f'{{"part":{index}}}'

    async def other_tab() -> None:
        while len(sent) < 60:
            seen.append(len(sent))
            await anyio.sleep(0)

    async with anyio.create_task_group() as tg:
        tg.start_soon(outbox.drain, send)
        outbox.post_stream(parts(), chars=600)
        tg.start_soon(other_tab)
        with anyio.fail_after(10):
            while len(sent) < 60:
                await anyio.sleep(0)
        outbox.close()
    assert len(sent) == 60
    assert len({count for count in seen if 0 < count < 60}) >= 50  # it ran between (nearly) every two parts
