"""The live tabs: who has which tab open, and ending one (an admin's any, a member's only their own).

The composition root builds one `SessionDirectory` and hands it to every tab; a tab enters it when it
opens and leaves when it closes. Handlers ask it, never the host: it answers only with what the asking
person may see, and refuses (-32003) what they may not do, without saying whether someone else's tab exists.
"""

from __future__ import annotations

from typing import Protocol

from webhost.errors import InvalidParams, PolicyRefused
from webhost.people import Person

ENDED_CLOSE_CODE = 4001  # the WebSocket close code of a tab someone ended; its reason says who and why
MAX_REASON_BYTES = 120  # a WebSocket close reason is at most 123 bytes of UTF-8


class LiveTab(Protocol):
    """What the directory needs of a tab: whose it is, since when, what it is connected to, how to end it."""

    @property
    def id(self) -> str: ...

    @property
    def person(self) -> Person: ...

    @property
    def started(self) -> float: ...

    @property
    def sign_in(self) -> str | None: ...

    def servers_connected(self) -> list[str]: ...

    def end(self, reason: str) -> None: ...


class SessionDirectory:
    def __init__(self) -> None:
        self._tabs: dict[str, LiveTab] = {}

    def add(self, tab: LiveTab) -> None:
        self._tabs[tab.id] = tab

    def remove(self, tab: LiveTab) -> None:
        if self._tabs.get(tab.id) is tab:
            del self._tabs[tab.id]

    def __len__(self) -> int:
        return len(self._tabs)

    def visible_to(self, viewer: Person) -> list[LiveTab]:
        """Every live tab for an admin; a member's own tabs for a member. Oldest first."""
        tabs = [t for t in self._tabs.values() if viewer.is_admin or t.person.id == viewer.id]
        return sorted(tabs, key=lambda t: (t.started, t.id))

    def end(self, viewer: Person, session_id: str, reason: str) -> LiveTab:
        """End one tab (its WebSocket closes with `reason`): an admin any tab, a member only their own."""
        tab = self._tabs.get(session_id)
        if not viewer.is_admin and (tab is None or tab.person.id != viewer.id):
            raise PolicyRefused("only an admin may end another person's session", {"sessionId": session_id})
        if tab is None:
            raise InvalidParams("no such live session", {"sessionId": session_id})
        tab.end(reason.encode("utf-8")[:MAX_REASON_BYTES].decode("utf-8", "ignore"))
        return tab

    def end_sign_in(self, sign_in: str, reason: str) -> int:
        """Signing out ends every tab opened with that web session (a revoked session keeps no socket)."""
        ended = [tab for tab in self._tabs.values() if tab.sign_in == sign_in]
        for tab in ended:
            tab.end(reason)
        return len(ended)


def describe(tab: LiveTab) -> dict[str, object]:
    """One row of `sessions/list`: the tab, its person (id, name, role), when it opened, its connected servers."""
    person = tab.person
    return {
        "sessionId": tab.id,
        "user": {"id": person.id, "name": person.name, "role": person.role},
        "started": tab.started,
        "servers": tab.servers_connected(),
    }
