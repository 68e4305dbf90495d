"""A pipe for a stdio server's stderr: the child writes to it, each line goes to the activity log."""

from __future__ import annotations

import asyncio
import os
from collections import deque
from collections.abc import Callable
from types import TracebackType
from typing import IO

MAX_LINE = 2000


class StderrPipe:
    """Async context: `errlog` is handed to the child; lines are read until the child closes its end."""

    def __init__(self, on_line: Callable[[str], None], *, keep: int = 20) -> None:
        self._on_line = on_line
        self._tail: deque[str] = deque(maxlen=keep)
        self._read_fd, write_fd = os.pipe()
        self.errlog: IO[str] = os.fdopen(write_fd, "w", encoding="utf-8", errors="replace")
        self._task: asyncio.Task[None] | None = None

    def tail(self) -> list[str]:
        return list(self._tail)

    async def __aenter__(self) -> StderrPipe:
        self._task = asyncio.get_running_loop().create_task(self._pump())
        return self

    def release_write_end(self) -> None:
        """Close our copy of the write end once the child holds its own, so EOF follows the child's exit."""
        if not self.errlog.closed:
            self.errlog.close()

    async def __aexit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.release_write_end()
        if self._task is not None:
            try:
                await asyncio.wait_for(asyncio.shield(self._task), 2)
            except (TimeoutError, asyncio.CancelledError):
                self._task.cancel()

    async def _pump(self) -> None:
        loop = asyncio.get_running_loop()
        reader = asyncio.StreamReader(limit=1 << 20)
        transport, _ = await loop.connect_read_pipe(
            lambda: asyncio.StreamReaderProtocol(reader), os.fdopen(self._read_fd, "rb", buffering=0)
        )
        try:
            while True:
                try:
                    raw = await reader.readline()
                except ValueError:  # a line over the limit: skip it rather than stall the child
                    continue
                if not raw:
                    return
                line = raw.decode("utf-8", errors="replace").rstrip("\r\n")
                if len(line) > MAX_LINE:
                    line = line[:MAX_LINE] + "…"
                if line.strip():
                    self._tail.append(line)
                    self._on_line(line)
        finally:
            transport.close()
