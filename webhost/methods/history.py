"""The person's call history (webhost/storage/history.py): list, one entry with its result, clear.

Every method reads the asking tab's own person only: a member, or an admin, sees their own calls, and of them
only those of servers and tools their groups allow now (webhost.access): an entry of another is absent.
"""

from __future__ import annotations

from typing import Any

from webhost.access_policy import denied_tools
from webhost.errors import InvalidParams
from webhost.session import BrowserSession
from webhost.storage.history import KEEP, CallHistory, Seen

MAX_ID = 2**63 - 1  # the largest id either engine stores (a 64-bit signed integer)


def _history(session: BrowserSession) -> CallHistory:
    if session.history is None:
        raise InvalidParams("this webhost keeps no call history")
    return session.history


def _seen(session: BrowserSession) -> Seen:
    """The person's servers (their workspace connects no other) less the tools their groups do not allow."""
    workspace = session.workspace
    servers = frozenset(workspace.connections)
    return Seen(servers, denied_tools(workspace.deps.config.options.access, workspace.person.groups, servers))


def _id(params: dict[str, Any], key: str, *, required: bool) -> int | None:
    value = params.get(key)
    if value is None and not required:
        return None
    if isinstance(value, bool) or not isinstance(value, int) or not 1 <= value <= MAX_ID:
        raise InvalidParams(f"params.{key} must be a positive integer up to 2**63 - 1")
    return value


async def list_history(session: BrowserSession, params: dict[str, Any]) -> dict[str, Any]:
    limit = _id(params, "limit", required=False) or KEEP
    entries = await _history(session).list(
        session.person.id, limit=min(limit, KEEP), before=_id(params, "before", required=False), seen=_seen(session)
    )
    return {"entries": entries, "keep": KEEP}


async def get_entry(session: BrowserSession, params: dict[str, Any]) -> dict[str, Any]:
    entry_id = _id(params, "id", required=True)
    assert entry_id is not None
    entry = await _history(session).get(session.person.id, entry_id, seen=_seen(session))
    if entry is None:
        raise InvalidParams("no history entry with this id", {"id": entry_id})
    return {"entry": entry}


async def clear_history(session: BrowserSession, params: dict[str, Any]) -> dict[str, Any]:
    cleared = await _history(session).clear(session.person.id)
    session.workspace.tell_tabs("history/cleared", {})
    return {"cleared": cleared}


METHODS = {"history/list": list_history, "history/get": get_entry, "history/clear": clear_history}
