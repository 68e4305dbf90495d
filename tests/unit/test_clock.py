"""Human time is not a timeout: the machine clock pauses while a person is answering."""

from __future__ import annotations

import math
import time

import anyio
import pytest

from webhost.upstream.clock import HumanClock

pytestmark = pytest.mark.anyio


async def test_machine_time_excludes_the_time_a_person_was_asked() -> None:
    clock = HumanClock()
    start, mark = time.monotonic(), clock.total()
    clock.begin()
    await anyio.sleep(0.2)
    clock.end()
    assert clock.total() - mark >= 0.19
    assert clock.machine_time_since(start, mark) < (time.monotonic() - start) - 0.19 + 1e-6


async def test_overlapping_requests_count_once() -> None:
    clock = HumanClock()
    mark = clock.total()
    clock.begin()
    clock.begin()
    await anyio.sleep(0.1)
    clock.end()
    assert clock.waiting
    await anyio.sleep(0.1)
    clock.end()
    assert not clock.waiting
    human = clock.total() - mark
    assert human >= 0.19


async def test_human_time_before_a_request_started_is_not_subtracted_from_it() -> None:
    clock = HumanClock()
    clock.begin()
    await anyio.sleep(0.1)
    start, mark = time.monotonic(), clock.total()
    clock.end()
    await anyio.sleep(0.05)
    assert clock.machine_time_since(start, mark) >= 0.04


async def test_the_wait_ends_after_the_budget_of_machine_time() -> None:
    clock = HumanClock()
    start = time.monotonic()
    with anyio.fail_after(60), clock.deadline(0.1):  # (fail_after only turns a hang into a failure)
        await anyio.sleep_forever()
    assert time.monotonic() - start >= 0.1


async def test_a_deadline_waits_out_the_human_time_without_polling() -> None:
    clock = HumanClock()
    start = time.monotonic()
    async with anyio.create_task_group() as tg:

        async def answer() -> None:
            await anyio.sleep(0.3)
            clock.end()

        with clock.deadline(0.1) as scope:
            # A person is asked once the deadline is armed, with no await between (a busy machine could
            # otherwise spend the whole budget before the question): the armed deadline is suspended.
            clock.begin()
            assert scope.deadline == math.inf
            tg.start_soon(answer)
            await anyio.sleep_forever()
    assert scope.cancelled_caught
    # 0.1 s of machine time plus the 0.3 s a person was answering
    assert time.monotonic() - start >= 0.39


async def test_a_deadline_that_is_not_reached_is_not_caught() -> None:
    clock = HumanClock()
    with clock.deadline(5) as scope:
        await anyio.sleep(0.01)
    assert not scope.cancelled_caught
    assert not clock._deadlines
