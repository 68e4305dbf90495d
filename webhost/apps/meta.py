"""Reading MCP Apps metadata from wire dicts: tool `_meta.ui`, the `ui://` resource and its `_meta.ui`."""

from __future__ import annotations

import base64
import binascii
import re
from dataclasses import dataclass, field
from typing import Any

APP_MIME_TYPE = "text/html;profile=mcp-app"
LEGACY_APP_MIME_TYPE = "text/html+mcp"
MAX_HTML_BYTES = 5 * 1024 * 1024
DEFAULT_VISIBILITY: tuple[str, ...] = ("model", "app")

_HTML_START_RE = re.compile(r"^\s*(?:<!--.*?-->\s*)*<(!doctype\s+html|html|head|body)[\s>]", re.I | re.S)


class AppResourceError(Exception):
    """The `ui://` resource cannot be shown as an App; the message says why, for the user."""

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message


@dataclass
class AppResource:
    """An App's HTML and the `_meta.ui` that governs it (content item first, listing second)."""

    html: str
    mime_type: str
    ui_meta: dict[str, Any]
    csp_meta: object | None
    permissions_meta: object | None
    prefers_border: bool | None
    warnings: list[str] = field(default_factory=list)


def _ui_block(meta: object) -> dict[str, Any] | None:
    if not isinstance(meta, dict):
        return None
    ui = meta.get("ui")
    return ui if isinstance(ui, dict) else None


def tool_resource_uri(tool_meta: object) -> str | None:
    """The tool's App URI from its `_meta` dict: `ui.resourceUri`, else flat `ui/resourceUri`.

    Like the ext-apps SDK, the nested key is authoritative when present; a value that is not a
    `ui://` URI means "no UI" (the caller should log it).
    """
    if not isinstance(tool_meta, dict):
        return None
    ui = _ui_block(tool_meta) or {}
    value = ui.get("resourceUri")
    if value is None:
        value = tool_meta.get("ui/resourceUri")
    if isinstance(value, str) and value.startswith("ui://") and len(value) > len("ui://"):
        return value
    return None


def tool_visibility(tool_meta: object) -> list[str]:
    """`_meta.ui.visibility` as a list of "model"/"app" (default both); test it by membership."""
    ui = _ui_block(tool_meta) or {}
    value = ui.get("visibility")
    if isinstance(value, str):
        value = [value]
    if not isinstance(value, list):
        return list(DEFAULT_VISIBILITY)
    seen: list[str] = []
    for item in value:
        if item in DEFAULT_VISIBILITY and item not in seen:
            seen.append(item)
    return seen


def is_model_visible(tool_meta: object) -> bool:
    """Whether the tool may appear in anything model-facing (the manual tool panel hides it otherwise)."""
    return "model" in tool_visibility(tool_meta)


def is_app_callable(tool_meta: object) -> bool:
    """Whether an App may `tools/call` this tool (enforced in the backend, mcp-apps §2)."""
    return "app" in tool_visibility(tool_meta)


def is_app_mime(mime: str | None) -> bool:
    """`text/html` with `profile=mcp-app` (any case, spacing or quoting), or the old `text/html+mcp`."""
    if not mime:
        return False
    kind, *params = (part.strip() for part in mime.split(";"))
    kind = kind.lower()
    if kind == LEGACY_APP_MIME_TYPE:
        return True
    if kind != "text/html":
        return False
    for param in params:
        name, _, value = param.partition("=")
        if name.strip().lower() == "profile" and value.strip().strip('"').strip().lower() == "mcp-app":
            return True
    return False


def _pick(meta: object) -> dict[str, Any] | None:
    """`meta["ui"]`, with flat `ui/*` keys (before ext-apps #131) filling gaps; None when neither."""
    if not isinstance(meta, dict) or not meta:
        return None
    nested = meta.get("ui")
    merged: dict[str, Any] = {
        k[3:]: v for k, v in meta.items() if isinstance(k, str) and k.startswith("ui/") and k != "ui/resourceUri"
    }
    if isinstance(nested, dict):
        merged.update(nested)
    return merged or None


def _item_meta(item: dict[str, Any]) -> object:
    """`_meta`, or `meta` from Python servers that serialise without `by_alias=True`."""
    return item.get("_meta") or item.get("meta")


def ui_meta_for(content: dict[str, Any], listing: dict[str, Any] | None) -> dict[str, Any]:
    """The resource's `_meta.ui`: the content item wins; else the `resources/list` entry; else `{}`.

    Never read from the read result's top level or from the tool (mcp-apps §3).
    """
    return _pick(_item_meta(content)) or _pick(_item_meta(listing or {})) or {}


def _looks_like_html(text: str) -> bool:
    return bool(_HTML_START_RE.match(text[:4096].lstrip("\ufeff")))


def _decode(item: dict[str, Any], uri: str) -> str:
    text = item.get("text")
    if isinstance(text, str):
        if len(text) > MAX_HTML_BYTES or len(text.encode("utf-8")) > MAX_HTML_BYTES:
            raise AppResourceError(f"{uri}: the App's HTML is larger than {MAX_HTML_BYTES // 2**20} MB")
        return text
    blob = item.get("blob")
    if not isinstance(blob, str):
        raise AppResourceError(f"{uri}: the content item has neither text nor a base64 blob")
    if len(blob) * 3 // 4 > MAX_HTML_BYTES + 3:
        raise AppResourceError(f"{uri}: the App's HTML is larger than {MAX_HTML_BYTES // 2**20} MB")
    try:
        raw = base64.b64decode(blob, validate=True)
    except (binascii.Error, ValueError):
        raise AppResourceError(f"{uri}: the blob is not valid base64") from None
    if len(raw) > MAX_HTML_BYTES:
        raise AppResourceError(f"{uri}: the App's HTML is larger than {MAX_HTML_BYTES // 2**20} MB")
    try:
        return raw.decode("utf-8-sig")
    except UnicodeDecodeError:
        raise AppResourceError(f"{uri}: the blob is not UTF-8 text") from None


def extract_app_html(read_result: dict[str, Any], uri: str, listing: dict[str, Any] | None) -> AppResource:
    """The App from a `resources/read` result (a wire dict), or `AppResourceError` saying what is wrong.

    Lenient where real servers differ (first App item wins, `meta` for `_meta`, legacy MIME, flat
    keys, HTML fragments), strict where it matters (MIME type, decodability, size).
    """
    contents = read_result.get("contents") if isinstance(read_result, dict) else None
    items = [c for c in contents if isinstance(c, dict)] if isinstance(contents, list) else []
    if not items:
        raise AppResourceError(f"{uri}: resources/read returned no contents")
    apps = [c for c in items if is_app_mime(c.get("mimeType"))]
    if not apps:
        found = ", ".join(sorted({str(c.get("mimeType")) for c in items}))
        raise AppResourceError(f"{uri}: no content item has MIME type {APP_MIME_TYPE} (found: {found})")
    apps.sort(key=lambda c: c.get("uri") != uri)  # stable: an item for this URI first
    item = apps[0]
    warnings: list[str] = []
    if len(items) > 1:
        warnings.append(f"resources/read returned {len(items)} content items; using the first App item")
    if item.get("uri") not in (None, uri):
        warnings.append(f"the App content item has uri {item.get('uri')!r}, not {uri!r}")
    mime = str(item.get("mimeType"))
    if mime.split(";")[0].strip().lower() == LEGACY_APP_MIME_TYPE:
        warnings.append(f"legacy MIME type {mime!r}; servers should send {APP_MIME_TYPE!r}")
    html = _decode(item, uri)
    if not html.strip():
        raise AppResourceError(f"{uri}: the App's HTML is empty")
    if "\x00" in html:
        raise AppResourceError(f"{uri}: the App's content is binary, not HTML")
    if not _looks_like_html(html):
        if not html.lstrip("\ufeff \t\r\n\f").startswith("<"):
            raise AppResourceError(f"{uri}: the App's content does not look like an HTML document")
        warnings.append("the App's HTML is a fragment, not a complete HTML document")
    ui_meta = ui_meta_for(item, listing)
    if not _pick(_item_meta(item)) and ui_meta:
        warnings.append("_meta.ui taken from the resources/list entry (the content item has none)")
    if "_meta" not in item and isinstance(item.get("meta"), dict):
        warnings.append("content item uses 'meta' instead of '_meta'")
    border = ui_meta.get("prefersBorder")
    return AppResource(
        html=html,
        mime_type=mime,
        ui_meta=ui_meta,
        csp_meta=ui_meta.get("csp"),
        permissions_meta=ui_meta.get("permissions"),
        prefers_border=border if isinstance(border, bool) else None,
        warnings=warnings,
    )
