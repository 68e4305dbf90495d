"""MCP App permissions (`_meta.ui.permissions`) → the iframe `allow` attribute (mcp-apps §7)."""

from __future__ import annotations

import math
from collections.abc import Iterable
from typing import Any

# Canonical order of the spec's permission names and their Permissions-Policy feature tokens.
ALLOW_TOKENS: dict[str, str] = {
    "camera": "camera",
    "microphone": "microphone",
    "geolocation": "geolocation",
    "clipboardWrite": "clipboard-write",
}
PERMISSIONS: tuple[str, ...] = tuple(ALLOW_TOKENS)

# Spellings seen on the wire (clipboard_write, clipboard-write, ...) fold to the spec's names.
_BY_KEY: dict[str, str] = {name.lower(): name for name in ALLOW_TOKENS}


def _canonical(name: object) -> str | None:
    if not isinstance(name, str):
        return None
    return _BY_KEY.get(name.replace("-", "").replace("_", "").lower())


def _truthy(value: Any) -> bool:
    """JavaScript truthiness: `{}` (the current form) and `true` (before ext-apps #158) both count."""
    if value is None or value is False:
        return False
    if isinstance(value, int | float) and not isinstance(value, bool):
        return value != 0 and not (isinstance(value, float) and math.isnan(value))
    return not (isinstance(value, str) and value == "")


def requested_permissions(meta: object) -> set[str]:
    """The permission names an App asks for, from `_meta.ui.permissions`.

    Accepts the object form (`{"camera": {}}`; any truthy value means requested) and, leniently, a
    list of names. Unknown names are ignored.
    """
    names: Iterable[object]
    if isinstance(meta, dict):
        names = [key for key, value in meta.items() if _truthy(value)]
    elif isinstance(meta, list | tuple):
        names = meta
    else:
        return set()
    return {c for c in (_canonical(n) for n in names) if c is not None}


def unknown_permissions(meta: object) -> list[str]:
    """Requested names webhost does not know (for a log line; they are never granted)."""
    if isinstance(meta, dict):
        names = [k for k, v in meta.items() if _truthy(v)]
    elif isinstance(meta, list | tuple):
        names = list(meta)
    else:
        return []
    return [str(n) for n in names if _canonical(n) is None]


def grant(requested: set[str], approved: Iterable[str]) -> set[str]:
    """What an App actually gets: what it asked for, limited to what an admin or the user approved."""
    allowed = {c for c in (_canonical(a) for a in approved) if c is not None}
    return {p for p in requested if p in allowed}


def allow_attribute(granted: Iterable[str]) -> str:
    """The `allow` attribute for granted names, canonical order, e.g. "camera; clipboard-write"."""
    names = {c for c in (_canonical(g) for g in granted) if c is not None}
    return "; ".join(ALLOW_TOKENS[p] for p in PERMISSIONS if p in names)


def effective_permissions(granted: Iterable[str]) -> dict[str, dict[str, Any]]:
    """The granted set as echoed in `hostCapabilities.sandbox.permissions` (`{"camera": {}}`)."""
    names = {c for c in (_canonical(g) for g in granted) if c is not None}
    return {p: {} for p in PERMISSIONS if p in names}


def permissions_from_allow(allow: str) -> set[str]:
    """The inverse of `allow_attribute`, ignoring any token it would not produce."""
    by_token = {token: name for name, token in ALLOW_TOKENS.items()}
    return {by_token[t.strip()] for t in allow.split(";") if t.strip() in by_token}
