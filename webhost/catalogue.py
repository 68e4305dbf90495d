"""What each server offers (tools, resources, templates, prompts): listed across every page, cached per server.

The page handlers and the app policy both read through here, so an app's call is judged against
the same listing the person sees. A cached list is dropped when its server says it changed
(`notifications/*/list_changed`) and when the connection is restarted.

It is also where a tool the person may not use (a per-tool rule of `webhost.access`, decided by
access_policy.py) leaves: the cache keeps the server's whole list, and every answer is cut to what the person's
groups allow when it is asked (groups and rules may change while the list is cached). So the tools page, the
search, the chat's picker and tool list, and an app's `tools/call` never see such a tool, and a call naming it
is answered as for a tool the server does not have (`unknown_tool`).
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Iterable
from typing import Any

from webhost.access_policy import may_use_tool, names_tools
from webhost.config.access_rules import AccessRules
from webhost.errors import InvalidParams, WebhostError
from webhost.upstream.connection import Connection, Page

MAX_PAGES = 50  # a bound on pagination, against a server that never stops paging
Lister = Callable[[Connection, str | None], Awaitable[Page]]

LISTS: dict[str, Lister] = {
    "tools": lambda c, cursor: c.client.list_tools(cursor),
    "resources": lambda c, cursor: c.client.list_resources(cursor),
    "resourceTemplates": lambda c, cursor: c.client.list_resource_templates(cursor),
    "prompts": lambda c, cursor: c.client.list_prompts(cursor),
}
# The list a `notifications/<kind>/list_changed` invalidates.
CHANGED = {"tools": ("tools",), "resources": ("resources", "resourceTemplates"), "prompts": ("prompts",)}


class Catalogue:
    def __init__(
        self,
        rules: Callable[[], AccessRules] = AccessRules,
        groups: Callable[[], Iterable[str]] = tuple,
    ) -> None:
        """`rules` and `groups`: the access rules and the person's groups as they are now (asked at each answer)."""
        self._lists: dict[tuple[str, str], list[dict[str, Any]]] = {}
        self._rules = rules
        self._groups = groups

    def allows(self, server: str, tool: str) -> bool:
        """May the person use this tool of this server (one of theirs)? The one policy decides."""
        return may_use_tool(self._rules(), self._groups(), server, tool)

    def _usable(self, server: str, kind: str, items: list[dict[str, Any]]) -> list[dict[str, Any]]:
        rules = self._rules()
        if kind != "tools" or not names_tools(rules, server):
            return items  # the common case: no rule names a tool of this server, nothing to cut
        groups = tuple(self._groups())
        return [t for t in items if may_use_tool(rules, groups, server, str(t.get("name")))]

    async def listing(self, connection: Connection, kind: str, *, refresh: bool = True) -> list[dict[str, Any]]:
        """Every item of one list (all pages) the person may use; `refresh=False` answers from the cache when it
        has the list."""
        return self._usable(connection.name, kind, await self._listing(connection, kind, refresh=refresh))

    async def _listing(self, connection: Connection, kind: str, *, refresh: bool) -> list[dict[str, Any]]:
        """The server's whole list, as cached."""
        key = (connection.name, kind)
        if not refresh and key in self._lists:
            return self._lists[key]
        items: list[dict[str, Any]] = []
        cursor: str | None = None
        for _page in range(MAX_PAGES):
            page = await LISTS[kind](connection, cursor)
            items.extend(page.items)
            cursor = page.next_cursor
            if not cursor:
                break
        self._lists[key] = items
        return items

    def cached(self, server: str, kind: str) -> list[dict[str, Any]] | None:
        """The list as cached, cut to what the person may use (None: not listed since it last changed), without
        asking the server."""
        items = self._lists.get((server, kind))
        return None if items is None else self._usable(server, kind, items)

    async def tool(self, connection: Connection, name: str) -> dict[str, Any] | None:
        """The tool as last listed, listing again when it is not known (new, or the list changed); None for a
        tool the person may not use, without listing (as for one the server does not have)."""
        if not self.allows(connection.name, name):
            return None
        for refresh in (False, True):
            tools = await self._listing(connection, "tools", refresh=refresh)
            for tool in tools:
                if tool.get("name") == name:
                    return tool
        return None

    async def check_call(self, connection: Connection, name: str) -> None:
        """Refuse a call of a tool the person may not use, before anything is sent, with the very error a tool
        the server does not list gets: where a rule names tools of this server, every name is checked against
        the listing, so that neither the answer nor its wording tells a hidden tool from a missing one. Where
        none does, the server answers for its own tools, as without rules."""
        if not names_tools(self._rules(), connection.name):
            return
        if await self.tool(connection, name) is None:
            raise unknown_tool(connection.name, name)

    def dropped(self, server: str, name: str) -> str | None:
        """Why the cached listing has `name` only as a stub for a tool the SDK dropped (2026-07-28: an invalid
        `x-mcp-header`, which clients MUST NOT call), else None. Only the cache: a call lists nothing."""
        for tool in self._lists.get((server, "tools"), []):
            marks = tool.get("webhost")
            if (
                tool.get("name") == name
                and isinstance(marks, dict)
                and marks.get("dropped")
                and self.allows(server, name)
            ):
                return str(marks.get("invalid") or marks["dropped"])
        return None

    async def resource_entry(self, connection: Connection, uri: str) -> dict[str, Any] | None:
        """The listing entry of a resource (the fallback home of `_meta.ui`); best effort, bounded, never raises."""
        key = (connection.name, "resources")
        entry = _by_uri(self._lists.get(key, []), uri)
        if entry is not None:
            return entry
        try:
            page = await connection.client.list_resources(timeout=10)
        except WebhostError:
            return None
        known = {r.get("uri"): r for r in self._lists.get(key, [])}
        known.update({r.get("uri"): r for r in page.items})
        self._lists[key] = list(known.values())
        return _by_uri(page.items, uri)

    def changed(self, server: str, kind: str) -> None:
        for name in CHANGED.get(kind, ()):
            self._lists.pop((server, name), None)

    def forget(self, server: str) -> None:
        for key in [k for k in self._lists if k[0] == server]:
            del self._lists[key]


def unknown_tool(server: str, name: str) -> InvalidParams:
    """The one answer to a call of a tool the server does not list, or that the person may not use."""
    return InvalidParams(f"{server} has no tool named {name!r}", {"tool": name})


def _by_uri(resources: list[dict[str, Any]], uri: str) -> dict[str, Any] | None:
    return next((r for r in resources if r.get("uri") == uri), None)
