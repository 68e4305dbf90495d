"""Small readers for browser-supplied params: every value is checked, none is trusted."""

from __future__ import annotations

import json
import re
from typing import Any

from webhost.errors import InvalidParams

MAX_META_BYTES = 16 * 1024
# A `_meta` key's prefix (`labels/`) whose second label is `modelcontextprotocol` or `mcp` is the protocol's own
# (io.modelcontextprotocol/, dev.mcp/); `progressToken` is webhost's (it reports the call's progress).
_RESERVED_PREFIX = re.compile(r"^[^./]+\.(?:modelcontextprotocol|mcp)(?:\.[^/]*)?/", re.IGNORECASE)
_WEBHOST_KEYS = frozenset({"progressToken"})


def string(params: dict[str, Any], key: str, *, max_length: int = 4096) -> str:
    value = params.get(key)
    if not isinstance(value, str) or not value or len(value) > max_length:
        raise InvalidParams(f"params.{key} must be a non-empty string")
    return value


def optional_object(params: dict[str, Any], key: str) -> dict[str, Any]:
    value = params.get(key)
    if value is None:
        return {}
    if not isinstance(value, dict):
        raise InvalidParams(f"params.{key} must be an object")
    return value


def optional_bool(params: dict[str, Any], key: str, *, default: bool) -> bool:
    value = params.get(key)
    if value is None:
        return default
    if not isinstance(value, bool):
        raise InvalidParams(f"params.{key} must be a boolean")
    return value


def request_meta(params: dict[str, Any]) -> dict[str, Any] | None:
    """The page's `_meta` for a request (`tools/call`, `prompts/get`, `resources/read`): an object of at most
    16 KiB, none of its keys the protocol's own nor webhost's; None when not given or empty."""
    value = params.get("_meta")
    if value is None:
        return None
    if not isinstance(value, dict):
        raise InvalidParams("params._meta must be an object")
    reserved = sorted(key for key in value if _RESERVED_PREFIX.match(key) or key in _WEBHOST_KEYS)
    if reserved:
        raise InvalidParams(
            f"params._meta: {', '.join(reserved)} {'is' if len(reserved) == 1 else 'are'} reserved "
            "(the protocol's own keys and progressToken are set by webhost)",
            {"reserved": reserved},
        )
    if len(json.dumps(value, ensure_ascii=False).encode()) > MAX_META_BYTES:
        raise InvalidParams(f"params._meta is larger than {MAX_META_BYTES} bytes")
    return value or None
