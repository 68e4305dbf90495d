"""Listings that survive one malformed item: each item is validated on its own (sdk_workarounds.py, 5.).

The SDK's own listing is tried first. When its result fails validation, the raw result the
transport kept is read item by item: good items are kept as the SDK would have parsed them, a bad
one becomes a stub with its name (or its place in the list) and `webhost.invalid`, the first
validation error, so the page shows the error on that item and the rest of the list works.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any

from mcp import types
from mcp.client import Client
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


async def lenient_listing(
    client: Client, method: str, cursor: str | None, listing: Callable[[], Awaitable[Any]]
) -> tuple[list[dict[str, Any]], str | None]:
    """One page of a listing as wire dicts, and its next cursor; malformed items are kept as error stubs."""
    key, model, _ = LISTINGS[method]
    holder = RawResult()
    token = capture_raw.set(holder)
    try:
        result = await listing()
    except ValidationError:
        raw = holder.raw
        if not isinstance(raw, dict) or not isinstance(raw.get(key), list):
            raise  # the result as a whole is broken, not one item
        return _item_by_item(client, method, raw, cursor)
    finally:
        capture_raw.reset(token)
        holder.release()
    attribute = {"resourceTemplates": "resource_templates"}.get(key, key)
    return [to_wire(item) for item in getattr(result, attribute)], result.next_cursor


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
