"""Runs one page call (tools/call, resources/read, prompts/get) in the tab's registry, into the person's history."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any

from webhost.call_record import Recorder, run_recorded
from webhost.session import BrowserSession


async def recorded(
    session: BrowserSession,
    kind: str,
    origin: dict[str, Any],
    arguments: dict[str, Any],
    call_id: str,
    action: Callable[[], Awaitable[dict[str, Any]]],
) -> dict[str, Any]:
    workspace = session.workspace
    recorder = Recorder(
        history=session.history,
        person_id=session.person.id,
        tab=session.id,
        on_stored=lambda summary: workspace.tell_tabs("history/added", {"entry": summary}),
    )
    return await run_recorded(recorder, session.calls, kind, origin, arguments, call_id, action)
