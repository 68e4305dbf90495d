"""An audit row's values as the log keeps and shows them: a detail fitted under the row cap as valid JSON, read
back without ever raising, cells the exports can carry (and a spreadsheet cannot run), and whose rows a viewer reads.

The log (`webhost.audit.log`) uses these for every row.
"""

from __future__ import annotations

import json
import math
import re
from typing import Any

from webhost.errors import PolicyRefused
from webhost.people import Person
from webhost.storage.audit import LABEL

PREVIEW_CHARS = 1024
MAX_DEPTH = 32
CSV_FORMULA_START = ("=", "+", "-", "@", "\t", "\r")
MAX_SUMMARY = 500
MAX_LABEL = LABEL  # session, server, frame, kind, decision, user_id, user_name
_UNSTORABLE = re.compile("[\x00\ud800-\udfff]")  # NUL (PostgreSQL refuses it in text) and lone surrogates


# -- fitting a detail into the row -------------------------------------------------------------


def _sanitize(value: Any, depth: int = 0) -> Any:
    """Plain JSON values only: non-finite floats and unknown objects become strings; too deep is cut."""
    if isinstance(value, str) or value is None or isinstance(value, bool | int):
        return value
    if isinstance(value, float):
        return value if math.isfinite(value) else str(value)
    if depth >= MAX_DEPTH:
        return {"truncated": True, "preview": "(nested too deeply)", "bytes": None}
    if isinstance(value, dict):
        return {str(k): _sanitize(v, depth + 1) for k, v in value.items()}
    if isinstance(value, list | tuple | set | frozenset):
        return [_sanitize(v, depth + 1) for v in value]
    return str(value)


def dumps(value: Any) -> str:
    return json.dumps(value, allow_nan=False)


def utf8_length(text: str) -> int:
    return len(text.encode("utf-8", "surrogatepass"))


def _marker(value: Any, text: str, budget: int) -> dict[str, Any]:
    """What stands in for a field too large to keep: a preview and the size of what was dropped."""
    preview = value if isinstance(value, str) else text
    marker: dict[str, Any] = {"truncated": True, "preview": preview[:PREVIEW_CHARS], "bytes": utf8_length(preview)}
    cut = min(len(preview), PREVIEW_CHARS)
    while cut > 0 and len(dumps(marker)) > budget:
        cut //= 2
        marker["preview"] = preview[:cut]
    return marker


def _fit(value: Any, budget: int) -> Any:
    """`value` itself when its JSON fits in `budget` characters, else the same shape with its largest
    fields fitted into equal shares of what is left (descending into objects and arrays), else one marker."""
    text = dumps(value)
    if len(text) <= budget:
        return value
    if isinstance(value, dict | list) and value:
        keys: list[Any] = list(value) if isinstance(value, dict) else list(range(len(value)))
        overhead = 2 + 2 * (len(keys) - 1) + (sum(len(dumps(k)) + 2 for k in keys) if isinstance(value, dict) else 0)
        sizes = {k: len(dumps(value[k])) for k in keys}
        remaining, share = budget - overhead, None
        for index, key in enumerate(sorted(keys, key=lambda k: sizes[k])):
            if sizes[key] * (len(keys) - index) > remaining:  # this and every larger field get equal shares
                share = remaining // (len(keys) - index)
                break
            remaining -= sizes[key]
        if share is not None and share > 0:
            result: Any = dict(value) if isinstance(value, dict) else list(value)
            for key in keys:
                if sizes[key] > share:
                    result[key] = _fit(value[key], share)
            if len(dumps(result)) <= budget:
                return result
    return _marker(value, text, budget)


def fit_detail(detail: Any, budget: int) -> str:
    """The detail as a JSON document of at most `budget` characters (ASCII, so also bytes); never cut mid-document."""
    try:
        value = _sanitize(detail)
        fitted = _fit(value, budget)
        text = dumps(fitted)
    except (RecursionError, ValueError, TypeError) as exc:
        text = dumps({"truncated": True, "preview": f"(not serialisable: {type(exc).__name__})", "bytes": None})
    if len(text) > budget:  # only for absurdly small budgets: the bare marker
        text = dumps({"truncated": True, "bytes": None})
    return text


def read_detail(raw: Any) -> Any:
    """A stored detail, parsed; a value that does not parse comes back marked, never as an exception."""
    if raw is None or raw == "":
        return None
    if isinstance(raw, bytes):
        raw = raw.decode("utf-8", "replace")
    if not isinstance(raw, str):
        return raw
    try:
        return json.loads(raw, parse_constant=str)
    except (ValueError, RecursionError):
        return {"unreadable": True, "raw": raw[:PREVIEW_CHARS], "bytes": utf8_length(raw)}


def cell(value: Any) -> Any:
    """A column value the JSON and CSV exports can always carry."""
    if isinstance(value, bytes):
        return value.decode("utf-8", "replace")
    if isinstance(value, float) and not math.isfinite(value):
        return str(value)
    return value


def csv_safe(value: Any) -> Any:
    """OWASP CSV injection: a cell a spreadsheet would read as a formula is prefixed with a quote."""
    if isinstance(value, str) and value.startswith(CSV_FORMULA_START):
        return "'" + value
    return value


def visible_user(viewer: Person, requested: str | None) -> str | None:
    """Whose rows `viewer` reads: an admin everyone's (or the one person asked for), anyone else their own.

    Returns the `user` filter for `AuditLog.entries`; a member asking for someone else is refused."""
    if viewer.is_admin:
        return requested or None
    if requested and requested != viewer.id:
        raise PolicyRefused("only an admin may read another person's audit entries", {"user": requested})
    return viewer.id


def storable(text: str) -> str:
    """Text every database stores: NUL and lone surrogates (which no encoder takes) become U+FFFD."""
    return _UNSTORABLE.sub("\ufffd", text)


def label(value: str | None) -> str | None:
    return None if value is None else storable(str(value)[:MAX_LABEL])
