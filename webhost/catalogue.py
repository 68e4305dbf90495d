"""What each server offers (tools, resources, templates, prompts): listed across every page, cached per server.

The page handlers and the app policy both read through here, so an app's call is judged against
the same listing the person sees. A cached list is dropped when its server says it changed
(`notifications/*/list_changed`) and when the connection is restarted.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any

from webhost.errors import WebhostError
from webhost.upstream.connection import Connection, Page

MAX_PAGES = 50  # a bound on pagination, against a server that never stops paging
Lister = Callable[[Connection, str | None], Awaitable[Page]]

LISTS: dict[str, Lister] = {
    "tools": lambda c, cursor: c.list_tools(cursor),
    "resources": lambda c, cursor: c.list_resources(cursor),
    "resourceTemplates": lambda c, cursor: c.list_resource_templates(cursor),
    "prompts": lambda c, cursor: c.list_prompts(cursor),
}
# The list a `notifications/<kind>/list_changed` invalidates.
CHANGED = {"tools": ("tools",), "resources": ("resources", "resourceTemplates"), "prompts": ("prompts",)}


class Catalogue:
    def __init__(self) -> None:
        self._lists: dict[tuple[str, str], list[dict[str, Any]]] = {}

    async def listing(self, connection: Connection, kind: str, *, refresh: bool = True) -> list[dict[str, Any]]:
        """Every item of one list (all pages); `refresh=False` answers from the cache when it has the list."""
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
        """The list as cached (None: not listed since it last changed), without asking the server."""
        return self._lists.get((server, kind))

    async def tool(self, connection: Connection, name: str) -> dict[str, Any] | None:
        """The tool as last listed, listing again when it is not known (new, or the list changed)."""
        for refresh in (False, True):
            tools = await self.listing(connection, "tools", refresh=refresh)
            for tool in tools:
                if tool.get("name") == name:
                    return tool
        return None

    def dropped(self, server: str, name: str) -> str | None:
        """Why the cached listing has `name` only as a stub for a tool the SDK dropped (2026-07-28: an invalid
        `x-mcp-header`, which clients MUST NOT call), else None. Only the cache: a call lists nothing."""
        for tool in self._lists.get((server, "tools"), []):
            marks = tool.get("webhost")
            if tool.get("name") == name and isinstance(marks, dict) and marks.get("dropped"):
                return str(marks.get("invalid") or marks["dropped"])
        return None

    async def resource_entry(self, connection: Connection, uri: str) -> dict[str, Any] | None:
        """The listing entry of a resource (the fallback home of `_meta.ui`); best effort, bounded, never raises."""
        key = (connection.name, "resources")
        entry = _by_uri(self._lists.get(key, []), uri)
        if entry is not None:
            return entry
        try:
            page = await connection.list_resources(timeout=10)
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


def _by_uri(resources: list[dict[str, Any]], uri: str) -> dict[str, Any] | None:
    return next((r for r in resources if r.get("uri") == uri), None)
