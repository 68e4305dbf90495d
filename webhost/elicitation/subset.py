"""Checks that an elicitation `requestedSchema` stays inside MCP's flat, primitive-only subset."""

from __future__ import annotations

import json
import math
from collections.abc import Iterator
from typing import Any, Literal, TypedDict

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

INPUT_TYPES = {"email": "email", "uri": "url", "date": "date", "date-time": "datetime-local"}
FORBIDDEN_KEYWORDS = ("$ref", "$dynamicRef", "$recursiveRef", "$defs", "definitions")
# Keywords whose values are regular expressions: Python's `re` backtracks, so they are never honoured.
REGEX_KEYWORDS = frozenset({"pattern", "patternProperties"})
# Identity keywords could make jsonschema treat the schema as another dialect or base URI.
IDENTITY_KEYWORDS = frozenset({"$schema", "$id", "$anchor", "$dynamicAnchor", "$vocabulary"})

_ONE_SUBSCHEMA = ("items", "not", "if", "then", "else", "contains", "additionalProperties",
                  "propertyNames", "unevaluatedItems", "unevaluatedProperties", "contentSchema")
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
        if isinstance(value, dict | list) and depth > MAX_DEPTH:
            return [f"is nested deeper than {MAX_DEPTH} levels"]
        if isinstance(value, dict):
            if not all(isinstance(key, str) for key in value):
                return ["contains a key that is not text"]
            stack.extend((item, depth + 1) for pair in value.items() for item in pair)
        elif isinstance(value, list):
            stack.extend((item, depth + 1) for item in value)
    try:
        size = len(json.dumps(schema, allow_nan=False).encode())
    except (TypeError, ValueError):
        return ["is not plain JSON"]
    return [f"is larger than {MAX_JSON_BYTES // 1024} KiB"] if size > MAX_JSON_BYTES else []


def _subschemas(schema: dict[str, Any]) -> Iterator[dict[str, Any]]:
    """Yields the schema and every nested subschema, looking only at keyword positions."""
    yield schema
    for key in _ONE_SUBSCHEMA:
        if isinstance(schema.get(key), dict):
            yield from _subschemas(schema[key])
    for key in _SUBSCHEMA_LISTS:
        if isinstance(schema.get(key), list):
            for sub in schema[key]:
                if isinstance(sub, dict):
                    yield from _subschemas(sub)
    for key in _SUBSCHEMA_MAPS:
        if isinstance(schema.get(key), dict):
            for sub in schema[key].values():
                if isinstance(sub, dict):
                    yield from _subschemas(sub)


def validator_schema(schema: dict[str, Any]) -> dict[str, Any]:
    """A copy safe to hand to jsonschema: no regex keywords, no identity keywords, same structure."""
    out: dict[str, Any] = {}
    for key, value in schema.items():
        if key in REGEX_KEYWORDS or key in IDENTITY_KEYWORDS:
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
    return isinstance(value, int | float) and not isinstance(value, bool) and math.isfinite(value)


def is_integer(value: object) -> bool:
    """Whole JSON numbers count (3.0 is an integer in JSON Schema), within the exact-double range."""
    if not is_number(value) or (isinstance(value, float) and not value.is_integer()):
        return False
    return abs(value) <= MAX_SAFE_INTEGER  # type: ignore[arg-type]


def _count(prop: dict[str, Any], key: str, problems: list[str]) -> int | None:
    value = prop.get(key)
    if value is None:
        return None
    if is_integer(value) and value >= 0:
        return int(value)
    problems.append(f"{key} must be a non-negative integer")
    return None


def _bound(prop: dict[str, Any], key: str, problems: list[str]) -> int | float | None:
    value = prop.get(key)
    if value is None or is_number(value):
        return value
    problems.append(f"{key} must be a finite number")
    return None


def _options(prop: dict[str, Any], titled: str, problems: list[str]) -> list[Option]:
    """Reads titled `oneOf`/`anyOf` lists of {const, title} if present, else `enum` (+ `enumNames`)."""
    titled_key = titled if titled in prop else None
    raw = prop.get(titled_key) if titled_key else prop.get("enum")
    if not isinstance(raw, list) or not raw:
        problems.append("must list at least one option")
        return []
    if len(raw) > MAX_OPTIONS:
        problems.append(f"offers more than {MAX_OPTIONS} options")
        return []
    options: list[Option] = []
    if titled_key:
        for entry in raw:
            if not isinstance(entry, dict) or not isinstance(entry.get("const"), str):
                problems.append(f"every {titled_key} option must be an object with a text const")
                return []
            title, value = entry.get("title"), entry["const"]
            options.append({"value": value, "label": title if isinstance(title, str) else value})
    else:
        if not all(isinstance(v, str) for v in raw):
            problems.append("enum options must be text")
            return []
        names = prop.get("enumNames")
        names_ok = isinstance(names, list) and all(isinstance(n, str) for n in names)
        if names is not None and not names_ok:
            problems.append("enumNames must be a list of text")
        # Legacy labels apply only when they line up one-to-one; otherwise the value is the label.
        labels: list[str] = names if isinstance(names, list) and names_ok and len(names) == len(raw) else raw
        options = [{"value": v, "label": label} for v, label in zip(raw, labels, strict=True)]
    if len({o["value"] for o in options}) != len(options):
        problems.append("options must not repeat")
    return options


def _text(prop: dict[str, Any], key: str, problems: list[str]) -> str | None:
    value = prop.get(key)
    if value is not None and not isinstance(value, str):
        problems.append(f"{key} must be text")
        return None
    return value


def _kind(prop: dict[str, Any], problems: list[str]) -> Kind | None:
    kind = prop.get("type")
    if kind == "string" or (kind is None and ("enum" in prop or "oneOf" in prop)):
        return "select" if ("enum" in prop or "oneOf" in prop) else "string"
    if kind in ("number", "integer", "boolean"):
        return kind  # type: ignore[no-any-return]
    if kind == "array":
        items = prop.get("items")
        if isinstance(items, dict) and (items.get("type") == "object" or "properties" in items):
            problems.append("lists of objects are not supported")
        elif not isinstance(items, dict) or not ("enum" in items or "anyOf" in items):
            problems.append("a list must offer fixed text options (items.enum or items.anyOf)")
        elif "enum" in items and items.get("type") != "string":
            problems.append('a list of enum options needs items.type "string"')
        else:
            return "multiselect"
    elif kind == "object" or "properties" in prop:
        problems.append("nested objects are not supported")
    elif kind is None:
        problems.append("has no type")
    else:
        problems.append("type must be one of string, number, integer, boolean or array")
    return None


def _default_problem(spec: FieldSpec) -> str | None:
    default, kind, values = spec["default"], spec["kind"], {o["value"] for o in spec["options"]}
    if default is None:
        return None
    if kind == "string" and not isinstance(default, str):
        return "default must be text"
    if kind == "number" and not is_number(default):
        return "default must be a number"
    if kind == "integer" and not is_integer(default):
        return "default must be a whole number"
    if kind == "boolean" and not isinstance(default, bool):
        return "default must be true or false"
    if kind == "select" and not (isinstance(default, str) and default in values):
        return "default must be one of the options"
    if kind == "multiselect" and not (
        isinstance(default, list) and all(isinstance(d, str) and d in values for d in default)
        and len(set(default)) == len(default)
    ):
        return "default must be a list of distinct options"
    return None


def _inspect_property(name: str, prop: object, required: bool) -> tuple[FieldSpec | None, list[str]]:
    if not isinstance(prop, dict):
        return None, ["must be a schema object"]
    problems: list[str] = []
    kind = _kind(prop, problems)
    title, description = _text(prop, "title", problems), _text(prop, "description", problems)
    if kind is None:
        return None, problems
    fmt = prop.get("format") if kind == "string" and prop.get("format") in INPUT_TYPES else None
    spec: FieldSpec = {
        "name": name, "kind": kind, "title": title or name, "description": description,
        "required": required, "default": prop.get("default"), "options": [],
        "minLength": None, "maxLength": None, "minimum": None, "maximum": None,
        "minItems": None, "maxItems": None, "format": fmt,
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


def _label(name: object) -> str:
    text = str(name)
    return repr(text if len(text) <= 60 else text[:60] + "…")


def check_requested_schema(schema: object) -> list[str]:
    """Lists every reason the schema is outside the subset; an empty list means it can be rendered."""
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
    for sub in _subschemas(schema):
        problems += [f"the schema uses {key}, which is not supported" for key in FORBIDDEN_KEYWORDS
                     if key in sub]
    required = schema.get("required", [])
    if not isinstance(required, list) or not all(isinstance(r, str) for r in required):
        problems.append("required must be a list of property names")
    else:
        problems += [f"required names {_label(r)}, which is not a property"
                     for r in required if r not in properties]
    for name, prop in properties.items():
        if name == "":
            problems.append("property names must not be empty")
        _, found = _inspect_property(name, prop, False)
        problems += [f"property {_label(name)}: {p}" for p in found]
    if not problems:
        try:
            Draft202012Validator.check_schema(validator_schema(schema))
        except SchemaError as error:
            where = "/".join(str(p) for p in error.absolute_path) or "the top level"
            problems.append(f"the schema is not valid JSON Schema (the {error.validator!r} rule at {where})")
    return problems


def describe_fields(schema: object) -> list[FieldSpec]:
    """Describes each renderable property in schema order; call check_requested_schema first."""
    if not isinstance(schema, dict) or not isinstance(schema.get("properties"), dict):
        return []
    required = schema.get("required")
    names = {r for r in required if isinstance(r, str)} if isinstance(required, list) else set()
    fields = []
    for name, prop in schema["properties"].items():
        spec, _ = _inspect_property(name, prop, name in names) if isinstance(name, str) else (None, [])
        if spec is not None:
            fields.append(spec)
    return fields
