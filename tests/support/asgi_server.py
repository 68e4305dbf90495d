"""An ASGI app served by uvicorn on loopback inside the test's own event loop (a real HTTP server, no process)."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

import anyio
import uvicorn


@asynccontextmanager
async def serving(app: Any, port: int, **config: Any) -> AsyncIterator[None]:
    """`app` (what `uvicorn.Config` takes) on 127.0.0.1:`port` until the block ends; `config`: more of its options."""
    server = uvicorn.Server(uvicorn.Config(app, host="127.0.0.1", port=port, log_level="error", **config))
    async with anyio.create_task_group() as tg:
        tg.start_soon(server.serve)
        with anyio.fail_after(10):
            while not server.started:
                await anyio.sleep(0.02)
        try:
            yield
        finally:
            server.should_exit = True
