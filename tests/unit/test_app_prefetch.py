"""AppPrefetch: a read made ahead serves one apps/open, and never one the server has called stale."""

from __future__ import annotations

from typing import Any

import anyio
import pytest

from webhost.apps.prefetch import AppPrefetch

pytestmark = pytest.mark.anyio


def reader(log: list[str], value: str, gate: anyio.Event | None = None) -> Any:
    """A read of `value`; with a gate, it stays in flight until the gate is set."""

    async def read() -> tuple[dict[str, Any], Any]:
        log.append(value)
        if gate is not None:
            await gate.wait()
        return {"html": value}, None

    return read


async def open_once_blocked(gate: anyio.Event) -> None:
    """Ends a gated read once every other task waits (the open that should wait for it, among them)."""
    await anyio.wait_all_tasks_blocked()
    gate.set()


async def test_a_read_ahead_serves_one_open() -> None:
    prefetch, log = AppPrefetch(), list[str]()
    assert await prefetch.warm("s", "ui://a", reader(log, "v1"))
    assert await prefetch.warm("s", "ui://a", reader(log, "v2"))  # a fresh read is kept: not read again
    assert log == ["v1"]
    assert await prefetch.take("s", "ui://a") == ({"html": "v1"}, None)
    assert await prefetch.take("s", "ui://a") is None  # the next open reads for itself


async def test_an_open_waits_for_a_read_in_flight() -> None:
    prefetch, log = AppPrefetch(), list[str]()
    gate = anyio.Event()
    async with anyio.create_task_group() as tg:
        tg.start_soon(prefetch.warm, "s", "ui://a", reader(log, "v1", gate))
        await anyio.wait_all_tasks_blocked()  # the read is in flight
        tg.start_soon(open_once_blocked, gate)
        assert await prefetch.take("s", "ui://a") == ({"html": "v1"}, None)  # (None, had it not waited)


@pytest.mark.parametrize("uri", [None, "ui://a"])
async def test_invalidation_drops_kept_and_in_flight_reads(uri: str | None) -> None:
    prefetch, log = AppPrefetch(), list[str]()
    await prefetch.warm("s", "ui://a", reader(log, "v1"))
    await prefetch.warm("other", "ui://a", reader(log, "o"))
    prefetch.invalidate("s", uri)
    assert await prefetch.take("s", "ui://a") is None
    assert await prefetch.take("other", "ui://a") is not None
    gate = anyio.Event()
    async with anyio.create_task_group() as tg:
        tg.start_soon(prefetch.warm, "s", "ui://a", reader(log, "v2", gate))
        await anyio.wait_all_tasks_blocked()  # the read is in flight
        prefetch.invalidate("s", uri)
        gate.set()
    assert log[-1] == "v2"
    assert await prefetch.take("s", "ui://a") is None


async def test_another_uri_is_kept_when_one_is_updated() -> None:
    prefetch, log = AppPrefetch(), list[str]()
    await prefetch.warm("s", "ui://a", reader(log, "a"))
    await prefetch.warm("s", "ui://b", reader(log, "b"))
    prefetch.invalidate("s", "ui://a")
    assert await prefetch.take("s", "ui://b") == ({"html": "b"}, None)


async def test_a_failed_read_keeps_nothing() -> None:
    prefetch = AppPrefetch()

    async def fail() -> tuple[dict[str, Any], Any]:
        raise RuntimeError("down")

    assert not await prefetch.warm("s", "ui://a", fail)
    assert len(prefetch) == 0
