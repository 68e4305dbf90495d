"""Checks that an elicitation `requestedSchema` stays inside MCP's flat, primitive-only subset."""

from __future__ import annotations

import functools
import json
import math
from collections.abc import Iterator
from typing import Any, Literal, TypedDict

import orjson
from jsonschema import Draft202012Validator
from jsonschema.exceptions import SchemaError

# Limits keep a hostile server from making the host render or validate something absurd.
MAX_PROPERTIES = 100
MAX_OPTIONS = 1000
MAX_STRING = 10_000
MAX_JSON_BYTES = 256 * 1024
MAX_DEPTH = 10  # the subset itself needs 6; the rest is slack for tolerated extra keywords
MAX_NODES = 50_000
MAX_SAFE_INTEGER = 2**53 - 1
MAX_CACHED_SCHEMA = 64 * 1024  # characters of JSON: larger schemas are checked each time, not kept

INPUT_TYPES = {"email": "email", "uri": "url", "date": "date", "date-time": "datetime-local"}
FORBIDDEN_KEYWORDS = ("$ref", "$dynamicRef", "$recursiveRef", "$defs", "definitions")
# Never handed to jsonschema: regex keywords because Python's `re` backtracks (ReDoS), identity keywords
# because they could switch the dialect or base URI.
UNHONOURED_KEYWORDS = frozenset({"pattern", "patternProperties", "$schema", "$id", "$anchor"})

_ONE_SUBSCHEMA = (
    "items",
    "not",
    "if",
    "then",
    "else",
    "contains",
    "additionalProperties",
    "propertyNames",
    "unevaluatedItems",
    "unevaluatedProperties",
    "contentSchema",
)
_SUBSCHEMA_LISTS = ("allOf", "anyOf", "oneOf", "prefixItems")
_SUBSCHEMA_MAPS = ("properties", "patternProperties", "dependentSchemas", "$defs", "definitions")

Kind = Literal["string", "number", "integer", "boolean", "select", "multiselect"]


class Option(TypedDict):
    value: str
    label: str


class FieldSpec(TypedDict):
    """Everything the form page needs to render one property; absent constraints are None."""

    name: str
    kind: Kind
    title: str  # the schema's title, falling back to the property name
    description: str | None
    required: bool
    default: Any
    options: list[Option]
    minLength: int | None
    maxLength: int | None
    minimum: int | float | None
    maximum: int | float | None
    minItems: int | None
    maxItems: int | None
    format: str | None  # only the four subset formats; others are tolerated and ignored
    inputType: str | None  # HTML input type for text/number kinds; None for boolean and selects


def _shape_problems(schema: object) -> list[str]:
    """Bounds depth, node count and string sizes iteratively, so nothing here can recurse too far."""
    stack: list[tuple[object, int]] = [(schema, 1)]
    nodes = 0
    while stack:
        value, depth = stack.pop()
        nodes += 1
        if nodes > MAX_NODES:
            return [f"is too large (more than {MAX_NODES} values)"]
        if isinstance(value, str) and len(value) > MAX_STRING:
            return [f"contains a string longer than {MAX_STRING} characters"]
        if isinstance(value, dict | list | tuple) and depth > MAX_DEPTH:
            return [f"is nested deeper than {MAX_DEPTH} levels"]
        if isinstance(value, dict):
            if not all(isinstance(key, str) for key in value):
                return ["contains a key that is not text"]
            stack.extend((item, depth + 1) for pair in value.items() for item in pair)
        elif isinstance(value, list | tuple):
            stack.extend((item, depth + 1) for item in value)
    try:
        size = len(json.dumps(schema, allow_nan=False).encode())
    except (TypeError, ValueError, RecursionError):
        return ["is not plain JSON"]
    return [f"is larger than {MAX_JSON_BYTES // 1024} KiB"] if size > MAX_JSON_BYTES else []


def _subschemas(schema: dict[str, Any]) -> Iterator[dict[str, Any]]:
    """Yields the schema and every nested subschema, looking only at keyword positions (depth is bounded)."""
    yield schema
    for key, value in schema.items():
        if key in _SUBSCHEMA_LISTS and isinstance(value, list):
            value = {str(i): v for i, v in enumerate(value)}
        elif key in _ONE_SUBSCHEMA:
            value = {key: value}
        elif key not in _SUBSCHEMA_MAPS or not isinstance(value, dict):
            continue
        for sub in value.values():
            if isinstance(sub, dict):
                yield from _subschemas(sub)


def validator_schema(schema: dict[str, Any]) -> dict[str, Any]:
    """A copy safe to hand to jsonschema: no regex keywords, no identity keywords, same structure."""
    out: dict[str, Any] = {}
    for key, value in schema.items():
        if key in UNHONOURED_KEYWORDS:
            continue
        if key in _ONE_SUBSCHEMA and isinstance(value, dict):
            out[key] = validator_schema(value)
        elif key in _SUBSCHEMA_LISTS and isinstance(value, list):
            out[key] = [validator_schema(v) if isinstance(v, dict) else v for v in value]
        elif key in _SUBSCHEMA_MAPS and isinstance(value, dict):
            out[key] = {k: validator_schema(v) if isinstance(v, dict) else v for k, v in value.items()}
        else:
            out[key] = value
    return out


def is_number(value: object) -> bool:
    """Not a bool, not NaN or infinity (an int is always finite, and isfinite overflows on huge ones)."""
    return (
        isinstance(value, int | float)
        and not isinstance(value, bool)
        and (isinstance(value, int) or math.isfinite(value))
    )


def is_integer(value: object) -> bool:
    """Whole JSON numbers count (3.0 is an integer in JSON Schema), within the exact-double range."""
    if not is_number(value) or (isinstance(value, float) and not value.is_integer()):
        return False
    return abs(value) <= MAX_SAFE_INTEGER  # type: ignore[arg-type]


def _count(prop: dict[str, Any], key: str, problems: list[str]) -> int | None:
    if (value := prop.get(key)) is None or (is_integer(value) and value >= 0):
        return None if value is None else int(value)
    problems.append(f"{key} must be a non-negative integer")
    return None


def _bound(prop: dict[str, Any], key: str, problems: list[str]) -> int | float | None:
    if (value := prop.get(key)) is None or is_number(value):
        return value
    problems.append(f"{key} must be a finite number")
    return None


def _options(prop: dict[str, Any], titled: str, problems: list[str]) -> list[Option]:
    """Reads titled `oneOf`/`anyOf` lists of {const, title} if present, else `enum` (+ `enumNames`)."""
    raw = prop.get(titled if titled in prop else "enum")
    if not isinstance(raw, list) or not raw or len(raw) > MAX_OPTIONS:
        problems.append(f"must list between 1 and {MAX_OPTIONS} options")
        return []
    if titled in prop:
        if not all(isinstance(entry, dict) and isinstance(entry.get("const"), str) for entry in raw):
            problems.append(f"every {titled} option must be an object with a text const")
            return []
        labels = [e["title"] if isinstance(e.get("title"), str) else e["const"] for e in raw]
        raw = [entry["const"] for entry in raw]
    elif not all(isinstance(value, str) for value in raw):
        problems.append("enum options must be text")
        return []
    else:
        names = prop.get("enumNames")
        names_ok = isinstance(names, list) and all(isinstance(n, str) for n in names)
        if names is not None and not names_ok:
            problems.append("enumNames must be a list of text")
        # Legacy labels apply only when they line up one-to-one; otherwise the value is the label.
        labels = names if isinstance(names, list) and names_ok and len(names) == len(raw) else raw
    if len(set(raw)) != len(raw):
        problems.append("options must not repeat")
    return [{"value": value, "label": label} for value, label in zip(raw, labels, strict=True)]


def _text(prop: dict[str, Any], key: str, problems: list[str]) -> str | None:
    if (value := prop.get(key)) is None or isinstance(value, str):
        return value
    problems.append(f"{key} must be text")
    return None


def _kind(prop: dict[str, Any], problems: list[str]) -> Kind | None:
    kind = prop.get("type")
    if kind == "string" or (kind is None and ("enum" in prop or "oneOf" in prop)):
        return "select" if "enum" in prop or "oneOf" in prop else "string"
    if kind in ("number", "integer", "boolean"):
        return kind  # type: ignore[no-any-return]
    if kind == "array":
        items = prop["items"] if isinstance(prop.get("items"), dict) else {}
        if items.get("type") == "object" or "properties" in items:
            problems.append("lists of objects are not supported")
        elif "anyOf" in items or ("enum" in items and items.get("type") == "string"):
            return "multiselect"
        else:
            problems.append('a list must offer fixed options (items.anyOf, or items.enum of type "string")')
    elif kind == "object" or "properties" in prop:
        problems.append("nested objects are not supported")
    elif kind is None:
        problems.append("has no type")
    else:
        problems.append("type must be one of string, number, integer, boolean or array")
    return None


def _default_problem(spec: FieldSpec) -> str | None:
    default, kind, values = spec["default"], spec["kind"], {o["value"] for o in spec["options"]}
    fits, shape = {
        "string": (isinstance(default, str), "text"),
        "number": (is_number(default), "a number"),
        "integer": (is_integer(default), "a whole number"),
        "boolean": (isinstance(default, bool), "true or false"),
        "select": (isinstance(default, str) and default in values, "one of the options"),
        "multiselect": (
            isinstance(default, list)
            and all(isinstance(d, str) and d in values for d in default)
            and len(set(default)) == len(default),
            "a list of distinct options",
        ),
    }[kind]
    return None if default is None or fits else f"default must be {shape}"


def _inspect_property(name: str, prop: object, required: bool) -> tuple[FieldSpec | None, list[str]]:
    if not isinstance(prop, dict):
        return None, ["must be a schema object"]
    problems: list[str] = []
    kind = _kind(prop, problems)
    title, description = _text(prop, "title", problems), _text(prop, "description", problems)
    if kind is None:
        return None, problems
    fmt = prop.get("format") if kind == "string" and str(prop.get("format")) in INPUT_TYPES else None
    spec: FieldSpec = {
        "name": name,
        "kind": kind,
        "title": title or name,
        "description": description,
        "required": required,
        "default": prop.get("default"),
        "options": [],
        "minLength": None,
        "maxLength": None,
        "minimum": None,
        "maximum": None,
        "minItems": None,
        "maxItems": None,
        "format": fmt,
        "inputType": INPUT_TYPES.get(fmt or "", "text") if kind == "string" else None,
    }
    low, high = "minLength", "maxLength"
    if kind == "string":
        spec["minLength"], spec["maxLength"] = _count(prop, low, problems), _count(prop, high, problems)
    elif kind in ("number", "integer"):
        low, high, spec["inputType"] = "minimum", "maximum", "number"
        spec["minimum"], spec["maximum"] = _bound(prop, low, problems), _bound(prop, high, problems)
    elif kind == "select":
        spec["options"] = _options(prop, "oneOf", problems)
    elif kind == "multiselect":
        low, high = "minItems", "maxItems"
        spec["options"] = _options(prop["items"], "anyOf", problems)
        spec["minItems"], spec["maxItems"] = _count(prop, low, problems), _count(prop, high, problems)
        if spec["minItems"] is not None and spec["options"] and spec["minItems"] > len(spec["options"]):
            problems.append("minItems is more than the number of options")
    lo, hi = spec.get(low), spec.get(high)
    if isinstance(lo, int | float) and isinstance(hi, int | float) and lo > hi:
        problems.append(f"{low} is greater than {high}")
    if (problem := _default_problem(spec)) is not None:
        problems.append(problem)
    elif kind == "integer" and spec["default"] is not None:
        spec["default"] = int(spec["default"])
    return (None if problems else spec), problems


def check_requested_schema(schema: object) -> list[str]:
    """Lists every reason the schema is outside the subset; an empty list means it can be rendered.

    Checked once per schema text (a server asks with the same form again and again, and each answer is
    checked against it again), for schemas up to `MAX_CACHED_SCHEMA` characters."""
    text = cache_key(schema)
    return list(_checked(text)) if text is not None else _check_requested_schema(schema)


def cache_key(schema: object) -> bytes | None:
    """The schema's exact JSON (orjson's), when it is small enough to be a cache key.

    Only a schema whose JSON gives it back exactly: none where orjson refuses (keys that are not text,
    integers past 64 bits, lone surrogates) and none with a `null` (orjson writes NaN as `null` too)."""
    try:
        text = orjson.dumps(schema)
    except (orjson.JSONEncodeError, TypeError, OverflowError):
        return None
    return text if len(text) <= MAX_CACHED_SCHEMA and b"null" not in text else None


@functools.lru_cache(maxsize=128)
def _checked(text: bytes) -> tuple[str, ...]:
    return tuple(_check_requested_schema(orjson.loads(text)))


def _check_requested_schema(schema: object) -> list[str]:
    if not isinstance(schema, dict):
        return ["the schema must be a JSON object"]
    if problems := [f"the schema {p}" for p in _shape_problems(schema)]:
        return problems
    if schema.get("type") != "object":
        problems.append('the schema must have type "object"')
    properties = schema.get("properties")
    if not isinstance(properties, dict):
        return [*problems, "the schema has no properties map"]
    if len(properties) > MAX_PROPERTIES:
        return [*problems, f"the schema has more than {MAX_PROPERTIES} properties"]
    problems += [
        f"the schema uses {key}, which is not supported"
        for sub in _subschemas(schema)
        for key in FORBIDDEN_KEYWORDS
        if key in sub
    ]
    required = schema.get("required", [])
    if not isinstance(required, list) or not all(isinstance(r, str) for r in required):
        problems.append("required must be a list of property names")
    else:
        problems += [f"required names {r[:60]!r}, which is not a property" for r in required if r not in properties]
    for name, prop in properties.items():
        if name == "":
            problems.append("property names must not be empty")
        _, found = _inspect_property(name, prop, False)
        problems += [f"property {name[:60]!r}: {p}" for p in found]
    if not problems and (problem := _metaschema_problem(json.dumps(validator_schema(schema), sort_keys=True))):
        problems.append(problem)
    return problems


@functools.lru_cache(maxsize=64)
def _metaschema_problem(schema_json: str) -> str | None:
    """Checks tolerated extra keywords against the 2020-12 metaschema; cached, as it costs milliseconds."""
    try:
        Draft202012Validator.check_schema(json.loads(schema_json))
    except SchemaError as error:
        where = "/".join(str(p) for p in error.absolute_path) or "the top level"
        return f"the schema is not valid JSON Schema (the {error.validator!r} rule at {where})"
    return None


def describe_fields(schema: object) -> list[FieldSpec]:
    """Describes each renderable property in schema order; call check_requested_schema first."""
    if not isinstance(schema, dict) or not isinstance(schema.get("properties"), dict):
        return []
    required = schema.get("required")
    names = {r for r in required if isinstance(r, str)} if isinstance(required, list) else set()
    pairs = ((n, p) for n, p in schema["properties"].items() if isinstance(n, str))
    specs = (_inspect_property(name, prop, name in names)[0] for name, prop in pairs)
    return [spec for spec in specs if spec is not None]
