"""Roots: what the person's servers are given (`roots/list`), and editing the admin's and the person's own."""

from __future__ import annotations

from typing import Any

from webhost.errors import InvalidParams, PolicyRefused
from webhost.roots import checked_roots
from webhost.session import BrowserSession


async def get_roots(session: BrowserSession, params: dict[str, Any]) -> dict[str, Any]:
    await session.workspace.roots.loaded()
    return session.workspace.roots.view(admin=session.person.is_admin)


async def set_roots(session: BrowserSession, params: dict[str, Any]) -> dict[str, Any]:
    """Replace the person's own roots (`scope: "mine"`) or, for an admin, everyone's (`"shared"`)."""
    scope = params.get("scope")
    if scope not in ("mine", "shared"):
        raise InvalidParams('params.scope must be "mine" or "shared"')
    items = checked_roots(params.get("roots"))
    roots = session.workspace.roots
    await roots.loaded()
    if scope == "shared":
        if not session.person.is_admin:
            raise PolicyRefused("only an admin may change the roots everyone is given", {"scope": "shared"})
        await roots.host.set_shared(items)
    else:
        await roots.set_mine(items)
    return roots.view(admin=session.person.is_admin)


METHODS = {"roots/get": get_roots, "roots/set": set_roots}
