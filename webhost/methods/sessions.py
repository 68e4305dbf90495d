"""Live sessions: list the tabs the caller may see (an admin every tab, a member their own) and end one."""

from __future__ import annotations

from typing import Any

from webhost.directory import describe
from webhost.session import BrowserSession

from . import _params

DEFAULT_REASON = "ended from the Sessions view"


async def list_sessions(session: BrowserSession, params: dict[str, Any]) -> dict[str, Any]:
    tabs = session.directory.visible_to(session.person)
    return {
        "sessions": [{**describe(tab), "current": tab.id == session.id} for tab in tabs],
        "everyone": session.person.is_admin,
    }


async def end_session(session: BrowserSession, params: dict[str, Any]) -> dict[str, Any]:
    """Close one tab's WebSocket with a reason; refused (-32003) for another person's tab unless an admin."""
    target = _params.string(params, "sessionId", max_length=100)
    reason = params.get("reason")
    text = reason.strip()[:200] if isinstance(reason, str) and reason.strip() else DEFAULT_REASON
    ended = session.directory.end(session.person, target, f"{text} (by {session.person.name})")
    return {"sessionId": ended.id, "ended": True}


METHODS = {
    "sessions/list": list_sessions,
    "sessions/end": end_session,
}
