"""An ASGI app served by uvicorn on loopback inside the test's own event loop (a real HTTP server, no process)."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

import anyio
import uvicorn


class _Server(uvicorn.Server):
    """uvicorn's server, telling when its start-up is over (listening, or given up)."""

    def __init__(self, config: uvicorn.Config) -> None:
        super().__init__(config)
        self.up = anyio.Event()

    async def startup(self, sockets: Any = None) -> None:
        try:
            await super().startup(sockets)
        finally:
            self.up.set()


@asynccontextmanager
async def serving(app: Any, port: int, **config: Any) -> AsyncIterator[None]:
    """`app` (what `uvicorn.Config` takes) on 127.0.0.1:`port` until the block ends; `config`: more of its options.

    The block starts once the server listens: an event, not a time limit, so a busy machine only makes it later.
    """
    server = _Server(uvicorn.Config(app, host="127.0.0.1", port=port, log_level="error", **config))

    async def run() -> None:
        try:
            await server.serve()
        except SystemExit:  # uvicorn's way of giving up at start-up (the port is taken)
            pass
        finally:
            server.up.set()

    async with anyio.create_task_group() as tg:
        tg.start_soon(run)
        await server.up.wait()
        if not server.started:
            raise RuntimeError(f"the test HTTP server could not listen on port {port}")
        try:
            yield
        finally:
            server.should_exit = True
