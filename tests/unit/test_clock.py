"""Human time is not a timeout: the machine clock pauses while a person is answering."""

from __future__ import annotations

import time

import anyio
import pytest

from webhost.upstream.clock import HumanClock

pytestmark = pytest.mark.anyio


async def test_machine_time_excludes_the_intervals_a_person_was_asked() -> None:
    clock = HumanClock()
    start = time.monotonic()
    clock.begin()
    await anyio.sleep(0.2)
    clock.end()
    assert clock.machine_time_since(start) < 0.1
    assert clock.human_time_since(start) >= 0.19


async def test_overlapping_requests_count_once() -> None:
    clock = HumanClock()
    start = time.monotonic()
    clock.begin()
    clock.begin()
    await anyio.sleep(0.1)
    clock.end()
    assert clock.waiting
    await anyio.sleep(0.1)
    clock.end()
    assert not clock.waiting
    assert clock.human_time_since(start) >= 0.19


async def test_the_wait_ends_after_the_budget_of_machine_time() -> None:
    clock = HumanClock()
    start = time.monotonic()
    with anyio.fail_after(2):
        await clock.wait_machine_time(start, 0.1)
    assert time.monotonic() - start >= 0.1
