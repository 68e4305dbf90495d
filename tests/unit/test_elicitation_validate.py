"""Unit tests for webhost.elicitation.validate: backend checks of elicitation answers and results."""

from __future__ import annotations

import copy
import random
from typing import Any

import pytest

from webhost.elicitation.validate import (
    FORMAT_CHECKER,
    FieldError,
    is_absolute_uri,
    is_date,
    is_date_time,
    is_email,
    validate_answer,
    validate_result,
)

SECRET = "SECRET-7f3a"

# The server-everything trigger-elicitation-request form: every field kind, only "name" required.
EVERYTHING: dict[str, Any] = {
    "type": "object",
    "properties": {
        "name": {"title": "String", "type": "string", "description": "Your full, legal name"},
        "check": {"title": "Boolean", "type": "boolean"},
        "firstLine": {"type": "string", "default": "It was a dark and stormy night."},
        "email": {"type": "string", "format": "email"},
        "homepage": {"type": "string", "format": "uri"},
        "birthdate": {"type": "string", "format": "date"},
        "integer": {"type": "integer", "minimum": 1, "maximum": 100, "default": 42},
        "number": {"type": "number", "minimum": 0, "maximum": 1000, "default": 3.14},
        "untitledSingleSelectEnum": {"type": "string", "enum": ["Monica", "Rachel", "Joey"], "default": "Monica"},
        "untitledMultipleSelectEnum": {
            "type": "array",
            "minItems": 1,
            "maxItems": 3,
            "default": ["Guitar"],
            "items": {"type": "string", "enum": ["Guitar", "Piano", "Violin", "Drums", "Bass"]},
        },
        "titledSingleSelectEnum": {
            "type": "string",
            "default": "hero-1",
            "oneOf": [{"const": "hero-1", "title": "Superman"}, {"const": "hero-2", "title": "Green Lantern"}],
        },
        "titledMultipleSelectEnum": {
            "type": "array",
            "minItems": 1,
            "maxItems": 3,
            "default": ["fish-1"],
            "items": {"anyOf": [{"const": "fish-1", "title": "Tuna"}, {"const": "fish-2", "title": "Salmon"}]},
        },
        "legacyTitledEnum": {
            "type": "string",
            "enum": ["pet-1", "pet-2"],
            "enumNames": ["Cats", "Dogs"],
            "default": "pet-1",
        },
        "meeting": {"type": "string", "format": "date-time"},
    },
    "required": ["name"],
}


def form(properties: dict[str, Any], required: list[str] | None = None) -> dict[str, Any]:
    schema: dict[str, Any] = {"type": "object", "properties": properties}
    return schema if required is None else {**schema, "required": required}


def errors_of(schema: dict[str, Any], content: object) -> list[FieldError]:
    values, errors = validate_answer(schema, content)
    assert values is None, "expected the answer to be refused"
    assert errors
    return errors


def message_for(prop: dict[str, Any], value: object) -> str:
    errors = errors_of(form({"f": prop}), {"f": value})
    assert len(errors) == 1 and errors[0]["field"] == "f", errors
    return errors[0]["message"]


def accepted(prop: dict[str, Any], value: object) -> object:
    values, errors = validate_answer(form({"f": prop}), {"f": value})
    assert errors == [] and values is not None
    return values["f"]


def test_a_minimal_answer_to_the_server_everything_form_passes_unchanged() -> None:
    assert validate_answer(EVERYTHING, {"name": "Ann"}) == ({"name": "Ann"}, [])


def test_untouched_optional_fields_stay_absent_even_when_they_have_defaults() -> None:
    values, _ = validate_answer(EVERYTHING, {"name": "Ann"})
    assert values is not None and "firstLine" not in values and "integer" not in values


def test_a_full_answer_to_the_server_everything_form_passes() -> None:
    content = {
        "name": "Ann",
        "check": True,
        "firstLine": "Once",
        "email": "ann@example.com",
        "homepage": "https://ann.example/",
        "birthdate": "1990-02-28",
        "integer": 7,
        "number": 2.5,
        "untitledSingleSelectEnum": "Joey",
        "untitledMultipleSelectEnum": ["Piano", "Bass"],
        "titledSingleSelectEnum": "hero-2",
        "titledMultipleSelectEnum": ["fish-1", "fish-2"],
        "legacyTitledEnum": "pet-2",
        "meeting": "2026-09-25T14:30:00+02:00",
    }
    assert validate_answer(EVERYTHING, content) == (content, [])


def test_the_answer_returned_is_a_new_dict_that_does_not_alias_the_input() -> None:
    content = {"name": "Ann"}
    values, _ = validate_answer(EVERYTHING, content)
    assert values == content and values is not content


def test_a_missing_required_field_with_a_default_is_filled_from_the_schema() -> None:
    schema = form(
        {
            "n": {"type": "integer", "default": 5},
            "tags": {"type": "array", "items": {"type": "string", "enum": ["a", "b"]}, "default": ["a"]},
        },
        ["n", "tags"],
    )
    values, errors = validate_answer(schema, {})
    assert (values, errors) == ({"n": 5, "tags": ["a"]}, [])
    assert values is not None
    values["tags"].append("b")
    assert schema["properties"]["tags"]["default"] == ["a"], "the default must be copied, not shared"


def test_a_required_false_boolean_default_counts_as_a_default() -> None:
    schema = form({"ok": {"type": "boolean", "default": False}}, ["ok"])
    assert validate_answer(schema, {}) == ({"ok": False}, [])


def test_a_missing_required_field_without_a_default_is_reported() -> None:
    assert errors_of(EVERYTHING, {}) == [{"field": "name", "message": "is required"}]


def test_every_failing_field_is_reported_at_once() -> None:
    errors = errors_of(EVERYTHING, {"email": "nope", "integer": 1000})
    assert [e["field"] for e in errors] == ["name", "email", "integer"]


def test_an_undeclared_key_is_refused_without_naming_it() -> None:
    errors = errors_of(EVERYTHING, {"name": "Ann", SECRET: 1})
    assert errors == [{"field": "", "message": "the answer has 1 field the form does not ask for"}]


def test_a_non_text_key_is_refused_as_undeclared() -> None:
    assert errors_of(EVERYTHING, {"name": "Ann", 1: "x"})[0]["field"] == ""


@pytest.mark.parametrize("content", [None, [], "name=Ann", 3, [("name", "Ann")]])
def test_content_that_is_not_an_object_is_refused(content: object) -> None:
    assert errors_of(EVERYTHING, content) == [{"field": "", "message": "the answer must be an object of field values"}]


def test_an_answer_to_a_schema_outside_the_subset_is_refused() -> None:
    schema = form({"f": {"type": "object"}})
    assert errors_of(schema, {"f": {}})[0]["message"] == "the form's schema is outside the supported subset"


COERCION_TRAPS: list[tuple[str, dict[str, Any], object, str]] = [
    ("number as text for a string", {"type": "string"}, 42, "must be text"),
    ("null for a string", {"type": "string"}, None, "must be text"),
    ("text for a number", {"type": "number"}, "42", "must be a number"),
    ("true for a number", {"type": "number"}, True, "must be a number"),
    ("NaN for a number", {"type": "number"}, float("nan"), "must be a finite number"),
    ("infinity for a number", {"type": "number"}, float("inf"), "must be a finite number"),
    ("text for an integer", {"type": "integer"}, "42", "must be a whole number"),
    ("true for an integer", {"type": "integer"}, True, "must be a whole number"),
    ("fraction for an integer", {"type": "integer"}, 4.5, "must be a whole number"),
    ("2^53 for an integer", {"type": "integer"}, 2**53, "must be between -9007199254740991 and 9007199254740991"),
    ("-2^53 for an integer", {"type": "integer"}, -(2**53), "must be between"),
    ("huge float for an integer", {"type": "integer"}, 1e300, "must be between"),
    ("infinity for an integer", {"type": "integer"}, float("-inf"), "must be a finite number"),
    ("text true for a boolean", {"type": "boolean"}, "true", "must be true or false"),
    ("one for a boolean", {"type": "boolean"}, 1, "must be true or false"),
    ("zero for a boolean", {"type": "boolean"}, 0, "must be true or false"),
    ("null for a boolean", {"type": "boolean"}, None, "must be true or false"),
    ("unknown option", {"type": "string", "enum": ["a", "b"]}, "c", "must be one of the offered choices"),
    (
        "label instead of value",
        {"type": "string", "oneOf": [{"const": "v1", "title": "Vee"}]},
        "Vee",
        "must be one of the offered choices",
    ),
    (
        "legacy label instead of value",
        {"type": "string", "enum": ["p1"], "enumNames": ["Cats"]},
        "Cats",
        "must be one of the offered choices",
    ),
    ("number for a select", {"type": "string", "enum": ["1"]}, 1, "must be one of the offered choices"),
    ("list for a select", {"type": "string", "enum": ["a"]}, ["a"], "must be one of the offered choices"),
    (
        "text for a multiselect",
        {"type": "array", "items": {"type": "string", "enum": ["a"]}},
        "a",
        "must be a list of choices",
    ),
    (
        "unhashable item",
        {"type": "array", "items": {"type": "string", "enum": ["a"]}},
        [{"a": 1}],
        "contains a choice that is not offered",
    ),
    (
        "unknown item",
        {"type": "array", "items": {"anyOf": [{"const": "a", "title": "A"}]}},
        ["A"],
        "contains a choice that is not offered",
    ),
    (
        "repeated item",
        {"type": "array", "items": {"type": "string", "enum": ["a", "b"]}},
        ["a", "a"],
        "must not pick the same choice twice",
    ),
    (
        "too few items",
        {"type": "array", "minItems": 2, "items": {"type": "string", "enum": ["a", "b"]}},
        ["a"],
        "must have at least 2 choices",
    ),
    (
        "too many items",
        {"type": "array", "maxItems": 1, "items": {"type": "string", "enum": ["a", "b"]}},
        ["a", "b"],
        "must have at most 1 choice",
    ),
    (
        "empty list below minItems 1",
        {"type": "array", "minItems": 1, "items": {"type": "string", "enum": ["a"]}},
        [],
        "must have at least 1 choice",
    ),
    ("too short", {"type": "string", "minLength": 3}, "ab", "must be at least 3 characters"),
    ("too long", {"type": "string", "maxLength": 1}, "ab", "must be at most 1 character"),
    ("below minimum", {"type": "number", "minimum": 1.5}, 1, "must be at least 1.5"),
    ("above maximum", {"type": "integer", "maximum": 10}, 11, "must be at most 10"),
]


@pytest.mark.parametrize(
    ("prop", "value", "expected"),
    [(p, v, e) for _, p, v, e in COERCION_TRAPS],
    ids=[n for n, _, _, _ in COERCION_TRAPS],
)
def test_a_wrongly_typed_or_out_of_bounds_value_is_refused_without_coercion(
    prop: dict[str, Any], value: object, expected: str
) -> None:
    assert expected in message_for(prop, value)


def test_a_whole_float_is_accepted_for_an_integer_and_sent_as_an_int() -> None:
    value = accepted({"type": "integer"}, 5.0)
    assert value == 5 and isinstance(value, int)


@pytest.mark.parametrize("value", [2**53 - 1, -(2**53 - 1), 0])
def test_integers_at_the_safe_range_limits_are_accepted(value: int) -> None:
    assert accepted({"type": "integer"}, value) == value


def test_an_integer_is_a_valid_number_and_stays_an_int() -> None:
    value = accepted({"type": "number"}, 3)
    assert value == 3 and isinstance(value, int)


@pytest.mark.parametrize("value", [1, 10, 1.0])
def test_bounds_are_inclusive(value: float) -> None:
    assert accepted({"type": "number", "minimum": 1, "maximum": 10}, value) == value


def test_string_lengths_count_code_points_not_utf16_units_or_bytes() -> None:
    assert accepted({"type": "string", "maxLength": 2}, "😀é") == "😀é"
    assert "at least 3" in message_for({"type": "string", "minLength": 3}, "😀😀")


def test_an_empty_string_is_a_value_not_a_missing_field() -> None:
    assert accepted({"type": "string"}, "") == ""
    assert "at least 1 character" in message_for({"type": "string", "minLength": 1}, "")


def test_a_multiselect_may_be_left_empty_when_it_has_no_minimum() -> None:
    assert accepted({"type": "array", "items": {"type": "string", "enum": ["a"]}}, []) == []


@pytest.mark.parametrize("value", ["a@b", "ann.lee+tag@example.co.uk", "x_y@sub-domain.example"])
def test_valid_email_addresses_pass(value: str) -> None:
    assert is_email(value) and accepted({"type": "string", "format": "email"}, value) == value


@pytest.mark.parametrize(
    "value",
    [
        "",
        "ann",
        "@example.com",
        "ann@",
        "a@b@c",
        "ann @x.com",
        "ann@-x.com",
        "ann@x..com",
        "ann@x.com.",
        "ann@exa_mple.com",
        "ånn@x.com",
        "a@" + "b" * 64,
    ],
)
def test_invalid_email_addresses_are_refused(value: str) -> None:
    assert not is_email(value)
    assert message_for({"type": "string", "format": "email"}, value) == "must be an email address"


@pytest.mark.parametrize(
    "value", ["https://example.com", "mailto:a@b.c", "urn:isbn:0451450523", "x+y.z-w:stuff", "https://münchen.de/ä"]
)
def test_absolute_uris_pass(value: str) -> None:
    assert is_absolute_uri(value)


@pytest.mark.parametrize(
    "value",
    [
        "example.com",
        "/relative/path",
        "//host/x",
        ":nothing",
        "1http://x",
        "https:",
        "https://exa mple.com",
        "https://x.com/\n",
        "ht tp://x",
    ],
)
def test_relative_or_malformed_uris_are_refused(value: str) -> None:
    assert not is_absolute_uri(value)
    assert "absolute URI" in message_for({"type": "string", "format": "uri"}, value)


@pytest.mark.parametrize("value", ["2024-02-29", "1999-12-31", "0001-01-01"])
def test_real_dates_pass(value: str) -> None:
    assert is_date(value)


@pytest.mark.parametrize(
    "value",
    [
        "2023-02-29",
        "2024-13-01",
        "2024-00-10",
        "2024-1-5",
        "24-01-05",
        "2024/01/05",
        "2024-01-05T00:00:00Z",
        "２０２４-01-05",
        "2024-01-05\n",
        "",
    ],
)
def test_impossible_or_misformatted_dates_are_refused(value: str) -> None:
    assert not is_date(value)
    assert "YYYY-MM-DD" in message_for({"type": "string", "format": "date"}, value)


@pytest.mark.parametrize(
    "value",
    [
        "2026-09-25T14:30:00Z",
        "2026-09-25T14:30:00+02:00",
        "2026-09-25t14:30:00z",
        "2026-09-25T14:30:00.123456-05:30",
        "2016-12-31T23:59:60Z",
    ],
)
def test_rfc3339_date_times_with_an_offset_pass(value: str) -> None:
    assert is_date_time(value)


@pytest.mark.parametrize(
    "value",
    [
        "2026-09-25T14:30:00",
        "2026-09-25T14:30Z",
        "2026-09-25 14:30:00Z",
        "2026-02-30T10:00:00Z",
        "2026-09-25T24:00:00Z",
        "2026-09-25T12:60:00Z",
        "2026-09-25T12:00:00+24:00",
        "2026-09-25T12:00:00+0200",
        "2026-09-25T12:30:60Z",
        "2026-09-25T12:00:00.Z",
        "2026-09-25T12:00:00Z\n",
    ],
)
def test_date_times_without_an_offset_or_out_of_range_are_refused(value: str) -> None:
    assert not is_date_time(value)
    assert "time-zone offset" in message_for({"type": "string", "format": "date-time"}, value)


def test_the_format_checker_knows_exactly_the_four_subset_formats() -> None:
    assert set(FORMAT_CHECKER.checkers) == {"email", "uri", "date", "date-time"}


LEAKY_ANSWERS: list[tuple[dict[str, Any], object]] = [
    ({"type": "string", "maxLength": 3}, SECRET),
    ({"type": "string", "minLength": 50}, SECRET),
    ({"type": "string", "format": "email"}, SECRET),
    ({"type": "string", "format": "uri"}, SECRET),
    ({"type": "string", "format": "date"}, SECRET),
    ({"type": "string", "format": "date-time"}, SECRET),
    ({"type": "number"}, SECRET),
    ({"type": "integer"}, SECRET),
    ({"type": "boolean"}, SECRET),
    ({"type": "string", "enum": ["a"]}, SECRET),
    ({"type": "array", "items": {"type": "string", "enum": ["a"]}}, [SECRET]),
    ({"type": "array", "items": {"type": "string", "enum": ["a"]}}, SECRET),
    ({"type": "string", "not": {"const": SECRET}}, SECRET),
    ({"type": "integer", "maximum": 10}, 7_777_777),
    ({"type": "number", "minimum": 0}, -31337.5),
]


@pytest.mark.parametrize(("prop", "value"), LEAKY_ANSWERS)
def test_error_messages_never_echo_the_submitted_value(prop: dict[str, Any], value: object) -> None:
    message = message_for(prop, value)
    assert SECRET not in message and "7777777" not in message and "31337" not in message


def test_an_extra_keyword_like_const_is_honoured_by_the_json_schema_pass() -> None:
    prop = {"type": "string", "const": "yes"}
    assert accepted(prop, "yes") == "yes"
    assert message_for(prop, "no") == "does not meet the form's 'const' rule"


def test_an_extra_keyword_like_multiple_of_is_honoured_by_the_json_schema_pass() -> None:
    assert message_for({"type": "number", "multipleOf": 0.5}, 0.3) == "does not meet the form's 'multipleOf' rule"


def test_a_top_level_extra_keyword_reports_against_the_whole_answer() -> None:
    schema = {**form({"a": {"type": "string"}, "b": {"type": "string"}}), "minProperties": 1}
    assert errors_of(schema, {}) == [{"field": "", "message": "does not meet the form's 'minProperties' rule"}]


def test_a_pattern_is_not_honoured_so_a_catastrophic_regex_cannot_stall_the_host() -> None:
    # With a backtracking engine this input takes longer than the test timeout; here it is ignored.
    prop = {"type": "string", "pattern": "^(a+)+$"}
    assert accepted(prop, "a" * 64 + "!") == "a" * 64 + "!"


def test_validating_does_not_modify_the_schema_or_the_content() -> None:
    schema, content = copy.deepcopy(EVERYTHING), {"name": "Ann", "integer": 5.0}
    validate_answer(schema, content)
    assert schema == EVERYTHING and content == {"name": "Ann", "integer": 5.0}


@pytest.mark.parametrize("action", ["decline", "cancel"])
def test_decline_and_cancel_pass_through_with_any_content_stripped(action: str) -> None:
    assert validate_result(EVERYTHING, {"action": action, "content": {"name": SECRET}}) == ({"action": action}, [])


@pytest.mark.parametrize(
    "result",
    [{"action": "ACCEPT"}, {"action": "ok"}, {}, {"action": None}, {"action": ["accept"]}, {"action": {"x": 1}}],
)
def test_an_unknown_action_is_refused(result: dict[str, Any]) -> None:
    assert validate_result(EVERYTHING, result) == (
        None,
        [{"field": "action", "message": "must be accept, decline or cancel"}],
    )


@pytest.mark.parametrize("result", [None, "accept", ["accept"], 1])
def test_a_result_that_is_not_an_object_is_refused(result: object) -> None:
    values, errors = validate_result(EVERYTHING, result)
    assert values is None and errors[0]["field"] == ""


def test_a_valid_accept_is_normalised_to_action_and_content_only() -> None:
    result = {"action": "accept", "content": {"name": "Ann"}, "_meta": {"x": 1}}
    assert validate_result(EVERYTHING, result) == ({"action": "accept", "content": {"name": "Ann"}}, [])


def test_an_accept_with_invalid_content_returns_the_field_errors() -> None:
    values, errors = validate_result(EVERYTHING, {"action": "accept", "content": {"name": 5}})
    assert values is None and errors == [{"field": "name", "message": "must be text"}]


@pytest.mark.parametrize("result", [{"action": "accept"}, {"action": "accept", "content": None}])
def test_an_accept_without_content_is_invalid_when_a_required_field_has_no_default(result: dict[str, Any]) -> None:
    assert validate_result(EVERYTHING, result) == (None, [{"field": "name", "message": "is required"}])


def test_an_accept_without_content_is_filled_when_every_required_field_has_a_default() -> None:
    schema = form({"ok": {"type": "boolean", "default": True}, "note": {"type": "string", "default": "n"}}, ["ok"])
    assert validate_result(schema, {"action": "accept"}) == ({"action": "accept", "content": {"ok": True}}, [])


def test_an_accept_without_content_is_an_empty_answer_when_nothing_is_required() -> None:
    schema = form({"note": {"type": "string"}})
    assert validate_result(schema, {"action": "accept"}) == ({"action": "accept", "content": {}}, [])
    assert validate_result(form({}), {"action": "accept"}) == ({"action": "accept", "content": {}}, [])


@pytest.mark.parametrize("content", ["Ann", ["Ann"], 0, True])
def test_an_accept_whose_content_is_not_an_object_is_refused(content: object) -> None:
    values, errors = validate_result(EVERYTHING, {"action": "accept", "content": content})
    assert values is None and errors[0]["message"] == "the answer must be an object of field values"


VALUE_POOL: list[object] = [
    None,
    True,
    False,
    0,
    1,
    -1,
    2.5,
    2**60,
    float("nan"),
    "",
    "a",
    "Guitar",
    "hero-1",
    "ann@example.com",
    "2024-01-01",
    "2026-09-25T10:00:00Z",
    [],
    ["Guitar"],
    ["x", 1],
    {"a": 1},
    [["Guitar"]],
    SECRET,
]


def test_random_answers_never_crash_and_accepted_ones_only_hold_declared_fields() -> None:
    rng = random.Random(3118)
    names = [*EVERYTHING["properties"], "extra"]
    for _ in range(1500):
        content = {name: rng.choice(VALUE_POOL) for name in names if rng.random() < 0.3}
        values, errors = validate_answer(EVERYTHING, content)
        assert (values is None) == bool(errors)
        assert all(SECRET not in e["message"] for e in errors)
        if values is not None:
            assert set(values) <= set(EVERYTHING["properties"]) and "name" in values
