"""Which keys the configuration's `webhost` object may hold, read from its pydantic models, and the first one it
does not know.

A key under `webhost` that no model field reads is a typo (`appPolicies` for `servers`) or a setting of another
version: either way a person believes something is set that is not, so it is refused with the key and the keys
known there. The keys come from the models' fields (their JSON names, `AliasPath`s such as `timeouts.connect`
included), so a field added to a model is known at once. Keys outside `webhost` (server entries, other tools'
settings) are not looked at: other tools read the same file.
"""

from __future__ import annotations

import types
from collections.abc import Mapping
from typing import Annotated, Any, Union, get_args, get_origin

from pydantic import AliasChoices, AliasPath, BaseModel
from pydantic.fields import FieldInfo

MAX_LISTED = 30  # known keys named in the message


def unknown_key(model: type[BaseModel], data: Any, where: str) -> str | None:
    """`where.KEY: unknown key (...)` for the first key of `data` (raw JSON read by `model`) that `model`, or a
    model nested in it, does not read; None when every key is known or `data` is not an object (pydantic says
    what is wrong with it then)."""
    if not isinstance(data, dict):
        return None
    known: dict[str, list[FieldInfo]] = {}
    inner: dict[str, set[str]] = {}  # a key read only through AliasPaths (`timeouts`): the keys inside it
    for name, field in model.model_fields.items():
        for path in _paths(name, field):
            known.setdefault(path[0], []).append(field)
            if len(path) == 2:
                inner.setdefault(path[0], set()).add(path[1])
    for key, value in data.items():
        if key not in known:
            return f"{where}.{key}: {_unknown(model)}"
        if key in inner:
            if isinstance(value, dict):
                for sub in value:
                    if sub not in inner[key]:
                        listed = ", ".join(sorted(inner[key]))
                        return f"{where}.{key}.{sub}: unknown key (known here: {listed})"
            continue
        for field in known[key]:
            found = _nested(field.annotation, value, f"{where}.{key}")
            if found is not None:
                return found
    return None


def _paths(name: str, field: FieldInfo) -> list[tuple[str, ...]]:
    """The JSON paths a field is read from: its alias (or aliases, or alias path), and its own name."""
    alias = field.validation_alias
    choices = alias.choices if isinstance(alias, AliasChoices) else [alias] if alias is not None else []
    paths: list[tuple[str, ...]] = [(name,)] if field.alias is None else [(field.alias,), (name,)]
    for choice in choices:
        if isinstance(choice, AliasPath):
            paths.append(tuple(str(part) for part in choice.path))
        elif isinstance(choice, str):
            paths.append((choice,))
    return paths


def _nested(annotation: Any, value: Any, where: str) -> str | None:
    """Look inside `value` with the models its annotation names (a model, a map of them, a list of them)."""
    for kind, inner in _shapes(annotation):
        if kind == "model" and isinstance(value, dict):
            return unknown_key(inner, value, where)
        if kind == "map" and isinstance(value, dict):
            for key, item in value.items():
                found = unknown_key(inner, item, f"{where}.{key}")
                if found is not None:
                    return found
            return None
        if kind == "list" and isinstance(value, list):
            for index, item in enumerate(value):
                found = unknown_key(inner, item, f"{where}[{index}]")
                if found is not None:
                    return found
            return None
    return None


def _shapes(annotation: Any) -> list[tuple[str, type[BaseModel]]]:
    """The models an annotation holds: ("model", M), ("map", M) for a mapping of M, ("list", M) for a sequence."""
    origin = get_origin(annotation)
    if origin is Annotated:
        return _shapes(get_args(annotation)[0])
    if origin is Union or isinstance(annotation, types.UnionType):
        return [shape for arg in get_args(annotation) for shape in _shapes(arg)]
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        return [("model", annotation)]
    args = get_args(annotation)
    if origin is not None and isinstance(origin, type) and args:
        if issubclass(origin, Mapping) and len(args) == 2:
            return [("map", model) for kind, model in _shapes(args[1]) if kind == "model"]
        if issubclass(origin, tuple | list | frozenset | set):
            return [("list", model) for kind, model in _shapes(args[0]) if kind == "model"]
    return []


def _unknown(model: type[BaseModel]) -> str:
    """The message for a key `model` does not read, naming the keys it does (their JSON names)."""
    names = sorted({_json_name(name, field) for name, field in model.model_fields.items()} - {""})
    listed = ", ".join(names[:MAX_LISTED]) + (", ..." if len(names) > MAX_LISTED else "")
    return f"unknown key (known here: {listed})"


def _json_name(name: str, field: FieldInfo) -> str:
    alias = field.validation_alias
    if isinstance(alias, str):
        return alias
    if isinstance(alias, AliasPath):
        return str(alias.path[0])
    return field.alias or name
