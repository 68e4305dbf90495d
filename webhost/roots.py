"""The roots servers are given (`roots/list`): the configuration's, an admin's for everyone, each person's own.

webhost advertises `roots: {listChanged: true}` to every server, so it always answers `roots/list`: the
configuration's `webhost.roots`, then the roots an admin set in the page for everyone, then the person's own,
each URI once (an empty list when there are none). The admin's and each person's are kept in the database
(`storage/roots.py`); a change is told to the person's servers (`notifications/roots/list_changed` before
2026-07-28; since, roots are asked per request, so the next request gets the new list).
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterable
from typing import Any
from urllib.parse import urlsplit

import anyio

from webhost.config import Root
from webhost.errors import InvalidParams
from webhost.storage.roots import SHARED, RootsStore

logger = logging.getLogger(__name__)

MAX_ROOTS = 100
MAX_URI = 4096
MAX_NAME = 200

RootItem = dict[str, Any]  # {"uri": "file:///…", "name"?: "…"}, as `roots/list` answers it


def checked_roots(value: object, where: str = "params.roots") -> list[RootItem]:
    """A list of roots from the page, each `{uri: "file://…", name?}` (a URI once); else `InvalidParams`."""
    if not isinstance(value, list) or len(value) > MAX_ROOTS:
        raise InvalidParams(f"{where} must be a list of at most {MAX_ROOTS} roots")
    items: list[RootItem] = []
    seen: set[str] = set()
    for index, item in enumerate(value):
        at = f"{where}[{index}]"
        if not isinstance(item, dict):
            raise InvalidParams(f'{at} must be an object {{"uri": "file:///…", "name": "…"}}')
        uri, name = item.get("uri"), item.get("name")
        if not isinstance(uri, str) or len(uri) > MAX_URI or not uri.startswith("file://"):
            raise InvalidParams(f"{at}.uri must be a file:// URI")
        if urlsplit(uri).scheme != "file":
            raise InvalidParams(f"{at}.uri must be a file:// URI")
        if name is not None and (not isinstance(name, str) or len(name) > MAX_NAME):
            raise InvalidParams(f"{at}.name must be a string of at most {MAX_NAME} characters")
        if uri in seen:
            raise InvalidParams(f"{at}.uri: {uri} is listed twice")
        seen.add(uri)
        items.append({"uri": uri, **({"name": name} if name else {})})
    return items


def _merged(*lists: Iterable[RootItem]) -> list[RootItem]:
    out: dict[str, RootItem] = {}
    for items in lists:
        for item in items:
            out.setdefault(item["uri"], item)
    return list(out.values())


class HostRoots:
    """The roots every person is given (the configuration's, the admin's) and where each person's are kept.

    Without a store (tests, a host without its database) they live in this process only.
    """

    def __init__(self, configured: Iterable[Root], store: RootsStore | None = None) -> None:
        self.configured: list[RootItem] = [{"uri": r.uri, **({"name": r.name} if r.name else {})} for r in configured]
        self.shared: list[RootItem] = []
        self._store = store
        self._memory: dict[str, list[RootItem]] = {}
        self._listeners: set[Callable[[], None]] = set()

    async def load_shared(self) -> None:
        """Read the admin's roots again (another replica may have changed them)."""
        if self._store is not None:
            self.shared = await self._store.get(SHARED)

    async def set_shared(self, items: list[RootItem]) -> None:
        if self._store is not None:
            await self._store.put(SHARED, items)
        self.shared = items
        for listener in list(self._listeners):
            listener()

    async def mine(self, person_id: str) -> list[RootItem]:
        if self._store is None:
            return list(self._memory.get(person_id, []))
        return await self._store.get(person_id)

    async def set_mine(self, person_id: str, items: list[RootItem]) -> None:
        if self._store is None:
            self._memory[person_id] = items
        else:
            await self._store.put(person_id, items)

    def listen(self, listener: Callable[[], None]) -> Callable[[], None]:
        """Be told when the admin's roots change; returns what stops it."""
        self._listeners.add(listener)
        return lambda: self._listeners.discard(listener)


class PersonRoots:
    """One person's roots as their servers get them; `changed` is called when the list they get changes."""

    def __init__(self, host: HostRoots, person_id: str, changed: Callable[[], None]) -> None:
        self.host = host
        self.person_id = person_id
        self.mine: list[RootItem] = []
        self._changed = changed
        self._stop = host.listen(changed)
        self._loaded = anyio.Event()

    async def load(self) -> None:
        """The first read, when the workspace opens; a database that cannot be read leaves the configured roots.

        The read runs beside the first connections, so a server may already have been given the configured roots
        alone: when stored ones arrive, it is told the list changed."""
        try:
            await self.host.load_shared()
            self.mine = await self.host.mine(self.person_id)
        except Exception as exc:  # the storage's errors, whatever the engine: the workspace goes on
            logger.warning("cannot read the stored roots of %s: %s", self.person_id, exc)
        finally:
            self._loaded.set()
        if self.mine or self.host.shared:
            self._changed()

    async def loaded(self) -> None:
        """Wait for the first read, so that a page asking early is not shown (or made to overwrite) an empty list."""
        await self._loaded.wait()

    def effective(self) -> list[RootItem]:
        """What `roots/list` answers: the configuration's, the admin's, the person's own (each URI once)."""
        return _merged(self.host.configured, self.host.shared, self.mine)

    def view(self, *, admin: bool) -> dict[str, Any]:
        return {
            "configured": self.host.configured,
            "shared": self.host.shared,
            "mine": self.mine,
            "effective": self.effective(),
            "canEditShared": admin,
        }

    async def set_mine(self, items: list[RootItem]) -> None:
        await self.host.set_mine(self.person_id, items)
        self.mine = items
        self._changed()

    def close(self) -> None:
        self._stop()
