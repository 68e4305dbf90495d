"""Small readers for browser-supplied params: every value is checked, none is trusted."""

from __future__ import annotations

from typing import Any

from webhost.errors import InvalidParams


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
