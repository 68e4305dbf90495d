"""Runs one page call (tools/call, resources/read, prompts/get) and hands its outcome to the person's history.

The entry is queued once the outcome is known and written by the history's own task, so the answer
reaches the tab without waiting on the database (webhost/storage/history.py).
"""

from __future__ import annotations

import time
from collections.abc import Awaitable, Callable
from typing import Any

from webhost.errors import Cancelled, WebhostError
from webhost.session import BrowserSession
from webhost.storage.history import Finished


async def recorded(
    session: BrowserSession,
    kind: str,
    origin: dict[str, Any],
    arguments: dict[str, Any],
    call_id: str,
    action: Callable[[], Awaitable[dict[str, Any]]],
) -> dict[str, Any]:
    started_at = time.time()
    started = time.perf_counter()

    def keep(outcome: object, status: str) -> None:
        if session.history is None:
            return
        session.history.record(
            Finished(
                person_id=session.person.id,
                kind=kind,
                server=str(origin["server"]),
                name=str(origin["name"]),
                arguments=arguments,
                outcome=outcome,
                status=status,
                started_at=started_at,
                duration_ms=(time.perf_counter() - started) * 1000,
                tab=session.id,
                call_id=call_id,
                redactor=session.workspace.input_redactor,
                on_stored=lambda summary: session.workspace.tell_tabs("history/added", {"entry": summary}),
            )
        )

    try:
        result = await session.calls.run(call_id, origin, action)
    except Cancelled as exc:
        keep({"error": exc.to_jsonrpc()}, "cancelled")
        raise
    except WebhostError as exc:
        keep({"error": exc.to_jsonrpc()}, "error")
        raise
    keep(result, "error" if result.get("isError") is True else "ok")
    return result
