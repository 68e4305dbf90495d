"""Runs one call (a page's or the model's tools/call, resources/read, prompts/get) in its registry and hands
its outcome to the person's history.

The entry is encoded and kept in the history's spool once the outcome is known, before the answer goes out, and
written by the history's own task, so the answer never waits on the database and a SIGKILL after it loses
nothing (webhost/storage/history.py). The workbench (methods/_recorded.py) and
the chat (chat/turn.py) both run their calls through here, so both land in the same history.
"""

from __future__ import annotations

import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any

from webhost.calls import CallRegistry
from webhost.errors import Cancelled, WebhostError
from webhost.storage.history import CallHistory, Finished, Summary


@dataclass(frozen=True)
class Recorder:
    """Where one caller's calls are recorded: whose they are, from which tab (or conversation)."""

    history: CallHistory | None
    person_id: str
    tab: str
    on_stored: Callable[[Summary], None]


async def run_recorded(
    recorder: Recorder,
    calls: CallRegistry,
    kind: str,
    origin: dict[str, Any],
    arguments: dict[str, Any],
    call_id: str,
    action: Callable[[], Awaitable[dict[str, Any]]],
) -> dict[str, Any]:
    started_at = time.time()
    started = time.perf_counter()

    async def keep(outcome: object, status: str) -> None:
        if recorder.history is None:
            return
        await recorder.history.record(
            Finished(
                person_id=recorder.person_id,
                kind=kind,
                server=str(origin["server"]),
                name=str(origin["name"]),
                arguments=arguments,
                outcome=outcome,
                status=status,
                started_at=started_at,
                duration_ms=(time.perf_counter() - started) * 1000,
                tab=recorder.tab,
                call_id=call_id,
                on_stored=recorder.on_stored,
            )
        )

    try:
        result = await calls.run(call_id, origin, action)
    except Cancelled as exc:
        await keep({"error": exc.to_jsonrpc()}, "cancelled")
        raise
    except WebhostError as exc:
        await keep({"error": exc.to_jsonrpc()}, "error")
        raise
    await keep(result, "error" if result.get("isError") is True else "ok")
    return result
