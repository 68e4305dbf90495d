"""The loop `webhost serve` runs on: uvloop's, resolving host names as asyncio does (webhost/event_loop.py)."""

from __future__ import annotations

import asyncio
import socket
import sys
import threading
from typing import Any

import pytest
import uvloop

from webhost.event_loop import LoopUnavailable, event_loop_factory


def test_auto_and_uvloop_make_a_uvloop_loop_and_asyncio_makes_none() -> None:
    for choice in ("auto", "uvloop"):
        factory = event_loop_factory(choice)
        assert factory is not None
        loop = factory()
        try:
            assert isinstance(loop, uvloop.Loop)
        finally:
            loop.close()
    assert event_loop_factory("asyncio") is None


@pytest.fixture
def lookups(monkeypatch: pytest.MonkeyPatch) -> list[tuple[Any, ...]]:
    """Each call of the C library's resolver from now on: (in the main thread?, its arguments...)."""
    seen: list[tuple[Any, ...]] = []
    real = socket.getaddrinfo

    def recording(*args: Any) -> Any:
        seen.append((threading.current_thread() is threading.main_thread(), *args))
        return real(*args)

    monkeypatch.setattr(socket, "getaddrinfo", recording)
    return seen


def test_names_are_resolved_by_the_c_library_in_a_worker_thread(lookups: list[tuple[Any, ...]]) -> None:
    """Not by libuv's resolver, which failed now and then to resolve `localhost` here (the module's docstring)."""
    factory = event_loop_factory("uvloop")
    assert factory is not None
    with asyncio.Runner(loop_factory=factory) as runner:
        infos = runner.run(_resolve())
    assert lookups == [(False, "localhost", 8700, 0, socket.SOCK_STREAM, 0, 0)]
    assert infos and all(info[4][1] == 8700 for info in infos)


async def _resolve() -> list[Any]:
    return await asyncio.get_running_loop().getaddrinfo("localhost", 8700, type=socket.SOCK_STREAM)


def test_without_uvloop_auto_is_asyncio_and_uvloop_is_refused(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "uvloop", None)  # `import uvloop` raises ImportError
    assert event_loop_factory("auto") is None
    with pytest.raises(LoopUnavailable, match="uvloop is not installed"):
        event_loop_factory("uvloop")


def test_a_connection_by_name_resolves_it_so_and_one_by_address_does_not(lookups: list[tuple[Any, ...]]) -> None:
    async def connect_twice() -> list[bytes]:
        async def greet(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
            writer.write(b"hi")
            await writer.drain()
            writer.close()

        server = await asyncio.start_server(greet, "127.0.0.1", 0)
        port = server.sockets[0].getsockname()[1]
        lookups.clear()  # the server's own bind
        got = []
        async with server:
            for host in ("localhost", "127.0.0.1"):
                reader, writer = await asyncio.open_connection(host, port)  # the loop's create_connection
                got.append(await reader.read())
                writer.close()
        return got

    factory = event_loop_factory("uvloop")
    assert factory is not None
    with asyncio.Runner(loop_factory=factory) as runner:
        assert runner.run(connect_twice()) == [b"hi", b"hi"]
    assert [(main, host) for main, host, *_ in lookups] == [(False, "localhost")]
