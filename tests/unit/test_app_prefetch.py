"""AppPrefetch: a read made ahead serves one apps/open, and never one the server has called stale."""

from __future__ import annotations

from typing import Any

import anyio
import pytest

from webhost.apps.prefetch import AppPrefetch

pytestmark = pytest.mark.anyio


def reader(log: list[str], value: str, delay: float = 0.0) -> Any:
    async def read() -> tuple[dict[str, Any], Any]:
        log.append(value)
        await anyio.sleep(delay)
        return {"html": value}, None

    return read


async def test_a_read_ahead_serves_one_open() -> None:
    prefetch, log = AppPrefetch(), list[str]()
    assert await prefetch.warm("s", "ui://a", reader(log, "v1"))
    assert await prefetch.warm("s", "ui://a", reader(log, "v2"))  # a fresh read is kept: not read again
    assert log == ["v1"]
    assert await prefetch.take("s", "ui://a") == ({"html": "v1"}, None)
    assert await prefetch.take("s", "ui://a") is None  # the next open reads for itself


async def test_an_open_waits_for_a_read_in_flight() -> None:
    prefetch, log = AppPrefetch(), list[str]()
    async with anyio.create_task_group() as tg:
        tg.start_soon(prefetch.warm, "s", "ui://a", reader(log, "v1", 0.05))
        await anyio.sleep(0.01)
        assert await prefetch.take("s", "ui://a") == ({"html": "v1"}, None)


@pytest.mark.parametrize("uri", [None, "ui://a"])
async def test_invalidation_drops_kept_and_in_flight_reads(uri: str | None) -> None:
    prefetch, log = AppPrefetch(), list[str]()
    await prefetch.warm("s", "ui://a", reader(log, "v1"))
    await prefetch.warm("other", "ui://a", reader(log, "o"))
    prefetch.invalidate("s", uri)
    assert await prefetch.take("s", "ui://a") is None
    assert await prefetch.take("other", "ui://a") is not None
    async with anyio.create_task_group() as tg:
        tg.start_soon(prefetch.warm, "s", "ui://a", reader(log, "v2", 0.05))
        await anyio.sleep(0.01)
        prefetch.invalidate("s", uri)
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
