"""The person's activity entries: what each server did, numbered and timed, with large data cut to a preview."""

from __future__ import annotations

import itertools
import time
from typing import Any

from webhost.jsonsize import size_at_most

MAX_ACTIVITY_DATA = 64 * 1024


class ActivityEntries:
    """Numbers each entry of one workspace and shapes it for the page."""

    def __init__(self) -> None:
        self._ids = itertools.count(1)

    def record(self, server: str, entry: dict[str, Any]) -> dict[str, Any]:
        """The page's row for an entry a connection or a tab reported (`duration_ms`, `data` among its keys)."""
        duration = entry.pop("duration_ms", None)
        data = entry.pop("data", None)
        return {
            "id": next(self._ids),
            "ts": time.time(),
            "server": server,
            **entry,
            "durationMs": None if duration is None else round(duration, 2),
            "data": clip(data),
        }


def short(value: object, limit: int = 200) -> str:
    text = value if isinstance(value, str) else repr(value)
    return text if len(text) <= limit else text[:limit] + "…"


def clip(data: object) -> object:
    """Small data as is; large data as a preview, without encoding a multi-megabyte result twice."""
    if data is None:
        return None
    if size_at_most(data, MAX_ACTIVITY_DATA):
        return data
    return {"truncated": True, "preview": _trimmed(data)}


def _trimmed(value: object, depth: int = 0) -> object:
    """A small copy for display: long strings cut, long lists and deep nesting elided."""
    if isinstance(value, str):
        return value if len(value) <= 300 else value[:300] + f"… ({len(value)} characters)"
    if depth > 6:
        return "…"
    if isinstance(value, dict):
        items = list(value.items())
        trimmed = {str(k): _trimmed(v, depth + 1) for k, v in items[:50]}
        if len(items) > 50:
            trimmed["…"] = f"{len(items) - 50} more keys"
        return trimmed
    if isinstance(value, list | tuple):
        head = [_trimmed(v, depth + 1) for v in value[:20]]
        return head + ([f"… {len(value) - 20} more items"] if len(value) > 20 else [])
    return value
