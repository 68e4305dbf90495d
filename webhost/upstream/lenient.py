"""Listings that survive one malformed item: each item is validated on its own (sdk_workarounds.py, 5.).

The SDK's own listing is tried first. When its result fails validation, the raw result the
transport kept is read item by item: good items are kept as the SDK would have parsed them, a bad
one becomes a stub with its name (or its place in the list) and `webhost.invalid`, the first
validation error, so the page shows the error on that item and the rest of the list works.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any

from mcp import types
from mcp.client import Client
from mcp.shared.inbound import find_invalid_x_mcp_header
from mcp.types.version import MODERN_PROTOCOL_VERSIONS
from pydantic import BaseModel, ValidationError

from .results import to_wire
from .sdk import absorb_tool_listing
from .sdk_workarounds import RawResult, capture_raw

MAX_ERROR = 300

# list method → (result key, item model, the field naming an item)
LISTINGS: dict[str, tuple[str, type[BaseModel], str]] = {
    "tools/list": ("tools", types.Tool, "name"),
    "resources/list": ("resources", types.Resource, "uri"),
    "resources/templates/list": ("resourceTemplates", types.ResourceTemplate, "uriTemplate"),
    "prompts/list": ("prompts", types.Prompt, "name"),
}


def first_error(exc: ValidationError) -> str:
    errors = exc.errors()
    if not errors:
        return str(exc)[:MAX_ERROR]
    where = ".".join(str(p) for p in errors[0]["loc"])
    return (f"{where}: {errors[0]['msg']}" if where else str(errors[0]["msg"]))[:MAX_ERROR]


@dataclass(frozen=True)
class Listing:
    """One page of a listing as wire dicts: its items (error stubs among them), its next cursor, and the
    server's caching hint for it (2026-07-28, SEP-2549: `{ttlMs, cacheScope}`; None before)."""

    items: list[dict[str, Any]]
    next_cursor: str | None
    cache_hint: dict[str, Any] | None


def cache_hint(raw: object) -> dict[str, Any] | None:
    """A result's `ttlMs` and `cacheScope` (SEP-2549), as the server sent them; None when it sent neither."""
    if not isinstance(raw, dict):
        return None
    hint = {key: raw[key] for key in ("ttlMs", "cacheScope") if key in raw}
    return hint or None


async def lenient_listing(
    client: Client, method: str, cursor: str | None, listing: Callable[[], Awaitable[Any]]
) -> Listing:
    """One page of a listing; malformed items are kept as error stubs, and so are tools the SDK dropped for
    invalid `x-mcp-header` annotations (2026-07-28), with the reason."""
    key, model, _ = LISTINGS[method]
    holder = RawResult()
    token = capture_raw.set(holder)
    try:
        result = await listing()
    except ValidationError:
        raw = holder.raw
        if not isinstance(raw, dict) or not isinstance(raw.get(key), list):
            raise  # the result as a whole is broken, not one item
        items, next_cursor = _item_by_item(client, method, raw, cursor)
        return Listing(_with_dropped(client, method, raw, items), next_cursor, cache_hint(raw))
    finally:
        capture_raw.reset(token)
        holder.release()
    attribute = {"resourceTemplates": "resource_templates"}.get(key, key)
    items = [to_wire(item) for item in getattr(result, attribute)]
    raw = holder.raw
    return Listing(_with_dropped(client, method, raw, items), result.next_cursor, cache_hint(raw))


def _with_dropped(client: Client, method: str, raw: object, items: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """`items` with each tool the SDK drops for an invalid `x-mcp-header` annotation (2026-07-28: clients MUST
    drop them) in its place in the listing, as a stub naming the reason, instead of vanishing."""
    if method != "tools/list" or client.protocol_version not in MODERN_PROTOCOL_VERSIONS or not isinstance(raw, dict):
        return items
    listed = raw.get("tools")
    if not isinstance(listed, list):
        return items
    # `items` follow the raw listing, less the dropped tools (the SDK's listing) or with them (item by item).
    out: list[dict[str, Any]] = []
    rest = iter(items)
    pending = next(rest, None)
    for index, tool in enumerate(listed):
        name = tool.get("name") if isinstance(tool, dict) else None
        reason = find_invalid_x_mcp_header(tool.get("inputSchema")) if isinstance(tool, dict) else None
        if reason is None:
            if pending is not None:
                out.append(pending)
                pending = next(rest, None)
            continue
        label = name if isinstance(name, str) else f"(item {index + 1})"
        why = f"dropped: invalid x-mcp-header annotation ({reason})"[:MAX_ERROR]
        out.append({"name": label, "webhost": {"invalid": why, "dropped": "x-mcp-header"}})
        if pending is not None and pending.get("name") == name and "webhost" not in pending:
            pending = next(rest, None)  # the item-by-item listing kept it: the stub stands in its place
    if pending is not None:
        out.append(pending)
    return out + list(rest)


def _item_by_item(
    client: Client, method: str, raw: dict[str, Any], cursor: str | None
) -> tuple[list[dict[str, Any]], str | None]:
    key, model, naming = LISTINGS[method]
    next_cursor = raw.get("nextCursor") if isinstance(raw.get("nextCursor"), str) else None
    kept: list[BaseModel] = []
    items: list[dict[str, Any]] = []
    for index, item in enumerate(raw[key]):
        try:
            parsed = model.model_validate(item, by_name=False)
        except ValidationError as exc:
            items.append(_stub(item, index, naming, first_error(exc)))
            continue
        kept.append(parsed)
        items.append(to_wire(parsed))
    if method == "tools/list":
        # The output schemas of the good tools, as a normal listing records them (sdk_workarounds.py, 5.).
        listing = types.ListToolsResult(tools=[t for t in kept if isinstance(t, types.Tool)], next_cursor=next_cursor)
        absorb_tool_listing(client, listing, complete=cursor is None and next_cursor is None)
    return items, next_cursor


def _stub(item: object, index: int, naming: str, error: str) -> dict[str, Any]:
    """What the page gets for a malformed item: a name to show (its own when it has one) and the error."""
    fields = item if isinstance(item, dict) else {}
    label = fields.get(naming) if isinstance(fields.get(naming), str) else None
    name = fields.get("name") if isinstance(fields.get("name"), str) else None
    stub: dict[str, Any] = {naming: label or f"(item {index + 1})"}
    if naming != "name":
        stub["name"] = name or label or f"(item {index + 1})"
    return {**stub, "webhost": {"invalid": error}}
