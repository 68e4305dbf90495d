"""Validates an elicitation answer against its requestedSchema in the backend, exactly, never coercing."""

from __future__ import annotations

import copy
import datetime
import functools
import re
from collections.abc import Mapping
from typing import Any

import orjson
from jsonschema import Draft202012Validator, FormatChecker

from .subset import (
    MAX_SAFE_INTEGER,
    FieldSpec,
    cache_key,
    check_requested_schema,
    describe_fields,
    is_integer,
    is_number,
    validator_schema,
)

# A plain dict (not a TypedDict) so callers can mix these with their own {"field", "message"} dicts.
# "field" is the property name, or "" for a problem with the answer as a whole.
FieldError = dict[str, str]

ACTIONS = ("accept", "decline", "cancel")
_EMAIL_LOCAL = frozenset("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789.!#$%&'*+/=?^_`{|}~-")
_LABEL = frozenset("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-")
_SCHEME = re.compile(r"[A-Za-z][A-Za-z0-9+.\-]*", re.ASCII)
_DATE = re.compile(r"([0-9]{4})-([0-9]{2})-([0-9]{2})", re.ASCII)
# RFC 3339 section 5.6; every part is fixed-width or a single digit run, so matching is linear.
_DATE_TIME = re.compile(
    r"([0-9]{4}-[0-9]{2}-[0-9]{2})[Tt]([0-9]{2}):([0-9]{2}):([0-9]{2})(?:\.[0-9]+)?"
    r"(?:[Zz]|[+-]([0-9]{2}):([0-9]{2}))",
    re.ASCII,
)


def is_email(value: object) -> bool:
    """The WHATWG `input type=email` rule, so the page and the backend agree; written without regex."""
    if not isinstance(value, str):
        return True
    local, at, domain = value.partition("@")
    if not at or not local or not domain or len(value) > 254 or not set(local) <= _EMAIL_LOCAL:
        return False
    return all(
        0 < len(label) <= 63 and set(label) <= _LABEL and label[0] != "-" and label[-1] != "-"
        for label in domain.split(".")
    )


def is_absolute_uri(value: object) -> bool:
    """An RFC 3986 scheme, a colon, and something after it, with no spaces or control characters."""
    if not isinstance(value, str):
        return True
    scheme, colon, rest = value.partition(":")
    return bool(colon and rest and _SCHEME.fullmatch(scheme)) and not any(
        ch.isspace() or ord(ch) < 0x20 or ord(ch) == 0x7F for ch in value
    )


def is_date(value: object) -> bool:
    if not isinstance(value, str):
        return True
    match = _DATE.fullmatch(value)
    return match is not None and _real_date(*match.groups())


def is_date_time(value: object) -> bool:
    """RFC 3339 date-time: seconds required, and a `Z` or numeric offset so the moment is unambiguous."""
    if not isinstance(value, str):
        return True
    match = _DATE_TIME.fullmatch(value)
    if match is None or not is_date(match.group(1)):
        return False
    hour, minute, second = (int(match.group(i)) for i in (2, 3, 4))
    off_hour, off_minute = (int(match.group(i) or 0) for i in (5, 6))
    leap_second_ok = second <= 59 or (second == 60 and minute == 59)
    return hour <= 23 and minute <= 59 and leap_second_ok and off_hour <= 23 and off_minute <= 59


def _real_date(year: str, month: str, day: str) -> bool:
    try:
        datetime.date(int(year), int(month), int(day))
    except ValueError:
        return False
    return True


FORMAT_CHECKS = {"email": is_email, "uri": is_absolute_uri, "date": is_date, "date-time": is_date_time}
FORMAT_MESSAGES = {
    "email": "must be an email address",
    "uri": "must be an absolute URI with a scheme, such as https://…",
    "date": "must be a real date written YYYY-MM-DD",
    "date-time": "must be a date and time with seconds and a time-zone offset (RFC 3339)",
}
# Only our four formats: jsonschema's own checkers are lenient or need optional packages.
FORMAT_CHECKER = FormatChecker(formats=())
for _name, _check in FORMAT_CHECKS.items():
    FORMAT_CHECKER.checks(_name)(_check)


def _plural(count: int | float, word: str) -> str:
    return f"{count} {word}" + ("" if count == 1 else "s")


def _check_value(field: FieldSpec, value: object) -> tuple[object, str | None]:
    """Returns the value to send (only integers are normalised, 3.0 → 3) or a message without the value."""
    kind = field["kind"]
    if kind == "boolean":
        return value, None if isinstance(value, bool) else "must be true or false"
    if kind == "string":
        if not isinstance(value, str):
            return value, "must be text"
        if field["minLength"] is not None and len(value) < field["minLength"]:  # len counts code points
            return value, f"must be at least {_plural(field['minLength'], 'character')}"
        if field["maxLength"] is not None and len(value) > field["maxLength"]:
            return value, f"must be at most {_plural(field['maxLength'], 'character')}"
        fmt = field["format"]
        return value, None if fmt is None or FORMAT_CHECKS[fmt](value) else FORMAT_MESSAGES[fmt]
    if kind in ("number", "integer"):
        if not isinstance(value, int | float) or isinstance(value, bool):  # True is not 1 here
            return value, "must be a whole number" if kind == "integer" else "must be a number"
        if not is_number(value):
            return value, "must be a finite number"
        if kind == "integer" and not is_integer(value):
            if isinstance(value, float) and not value.is_integer():
                return value, "must be a whole number"
            return value, f"must be between {-MAX_SAFE_INTEGER} and {MAX_SAFE_INTEGER}"
        number = int(value) if kind == "integer" else value
        if field["minimum"] is not None and number < field["minimum"]:
            return number, f"must be at least {field['minimum']}"
        if field["maximum"] is not None and number > field["maximum"]:
            return number, f"must be at most {field['maximum']}"
        return number, None
    values = {option["value"] for option in field["options"]}
    if kind == "select":
        chosen = isinstance(value, str) and value in values
        return value, None if chosen else "must be one of the offered choices"
    if not isinstance(value, list):
        return value, "must be a list of choices"
    if not all(isinstance(item, str) and item in values for item in value):
        return value, "contains a choice that is not offered"
    if len(set(value)) != len(value):
        return value, "must not pick the same choice twice"
    if field["minItems"] is not None and len(value) < field["minItems"]:
        return value, f"must have at least {_plural(field['minItems'], 'choice')}"
    if field["maxItems"] is not None and len(value) > field["maxItems"]:
        return value, f"must have at most {_plural(field['maxItems'], 'choice')}"
    return value, None


@functools.lru_cache(maxsize=64)
def _validator(schema_json: bytes) -> Draft202012Validator:
    """One validator per schema text (it is reusable, and building it costs more than using it)."""
    return _new_validator(orjson.loads(schema_json))


def _new_validator(schema: dict[str, Any]) -> Draft202012Validator:
    return Draft202012Validator(validator_schema(schema), format_checker=FORMAT_CHECKER)


def _schema_pass(schema: Mapping[str, Any], content: dict[str, Any]) -> list[FieldError]:
    """A full JSON Schema pass, for tolerated extra keywords (const, not, multipleOf, …) only."""
    try:
        key = cache_key(schema)
        validator = _validator(key) if key is not None else _new_validator(dict(schema))
        found = list(validator.iter_errors(content))
    except Exception:  # a malformed extra keyword must not crash the host; refuse the answer instead
        return [{"field": "", "message": "the form's schema could not be applied to the answer"}]
    errors: list[FieldError] = []
    for error in found:
        # Paths name declared properties only (undeclared keys were refused earlier), never values.
        field = str(error.absolute_path[0]) if error.absolute_path else ""
        item: FieldError = {"field": field, "message": f"does not meet the form's {error.validator!r} rule"}
        if item not in errors:
            errors.append(item)
    return errors


Outcome = tuple[dict[str, Any] | None, list[FieldError]]


def validate_answer(schema: Mapping[str, Any], content: object) -> Outcome:
    """Checks accepted `content`; returns it (with defaults filled in for missing required fields) or errors.

    Optional fields the person left out stay absent: filling their defaults would put words in their mouth.
    """
    schema = dict(schema) if isinstance(schema, Mapping) else schema
    if check_requested_schema(schema):
        return None, [{"field": "", "message": "the form's schema is outside the supported subset"}]
    if not isinstance(content, dict):
        return None, [{"field": "", "message": "the answer must be an object of field values"}]
    fields = describe_fields(schema)
    declared = {field["name"] for field in fields}
    errors: list[FieldError] = []
    if extra := sum(1 for key in content if key not in declared):
        # Undeclared keys are submitted data too, so they are counted, not named.
        message = f"the answer has {_plural(extra, 'field')} the form does not ask for"
        errors.append({"field": "", "message": message})
    result: dict[str, Any] = {}
    for field in fields:
        name = field["name"]
        if name in content:
            value = content[name]
        elif field["required"] and field["default"] is not None:
            value = copy.deepcopy(field["default"])
        elif field["required"]:
            errors.append({"field": name, "message": "is required"})
            continue
        else:
            continue
        result[name], problem = _check_value(field, value)
        if problem is not None:
            errors.append({"field": name, "message": problem})
    if errors:
        return None, errors
    # The second pass only runs on an answer that passed, so every array in it is small and unique.
    errors = _schema_pass(schema, result)
    return (None, errors) if errors else (result, [])


def validate_result(schema: Mapping[str, Any], result: object) -> Outcome:
    """Normalises a whole form-mode ElicitResult: decline and cancel lose any content, accept is validated."""
    if not isinstance(result, dict):
        return None, [{"field": "", "message": "the result must be an object"}]
    action = result.get("action")
    if not isinstance(action, str) or action not in ACTIONS:
        return None, [{"field": "action", "message": "must be accept, decline or cancel"}]
    if action != "accept":
        return {"action": action}, []
    # A missing content is an empty answer: fine when nothing is required, or required fields have defaults.
    content = result.get("content")
    values, errors = validate_answer(schema, {} if content is None else content)
    return (None, errors) if values is None else ({"action": "accept", "content": values}, [])
