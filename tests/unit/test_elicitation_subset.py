"""Unit tests for webhost.elicitation.subset: the requestedSchema subset check and field descriptions."""

from __future__ import annotations

import copy
import random
from typing import Any

import pytest

from webhost.elicitation.subset import (
    MAX_OPTIONS,
    MAX_PROPERTIES,
    MAX_STRING,
    FieldSpec,
    check_requested_schema,
    describe_fields,
    validator_schema,
)

# The shape server-everything's trigger-elicitation-request tool sends: every kind, one required field.
EVERYTHING: dict[str, Any] = {
    "type": "object",
    "properties": {
        "name": {"title": "String", "type": "string", "description": "Your full, legal name"},
        "check": {"title": "Boolean", "type": "boolean", "description": "Agree to the terms"},
        "firstLine": {"title": "String with default", "type": "string", "default": "It was a dark night."},
        "email": {"title": "Email", "type": "string", "format": "email"},
        "homepage": {"type": "string", "format": "uri", "title": "Homepage"},
        "birthdate": {"title": "Birthdate", "type": "string", "format": "date"},
        "integer": {"title": "Integer", "type": "integer", "minimum": 1, "maximum": 100, "default": 42},
        "number": {"title": "Number", "type": "number", "minimum": 0, "maximum": 1000, "default": 3.14},
        "untitledSingleSelectEnum": {
            "type": "string",
            "title": "Friend",
            "enum": ["Monica", "Rachel", "Joey"],
            "default": "Monica",
        },
        "untitledMultipleSelectEnum": {
            "type": "array",
            "title": "Instruments",
            "minItems": 1,
            "maxItems": 3,
            "items": {"type": "string", "enum": ["Guitar", "Piano", "Violin", "Drums", "Bass"]},
            "default": ["Guitar"],
        },
        "titledSingleSelectEnum": {
            "type": "string",
            "title": "Hero",
            "oneOf": [{"const": "hero-1", "title": "Superman"}, {"const": "hero-2", "title": "Green Lantern"}],
            "default": "hero-1",
        },
        "titledMultipleSelectEnum": {
            "type": "array",
            "title": "Fish",
            "minItems": 1,
            "maxItems": 3,
            "items": {"anyOf": [{"const": "fish-1", "title": "Tuna"}, {"const": "fish-2", "title": "Salmon"}]},
            "default": ["fish-1"],
        },
        "legacyTitledEnum": {
            "type": "string",
            "title": "Pet",
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
    if required is not None:
        schema["required"] = required
    return schema


def one_field(prop: dict[str, Any], required: bool = False) -> FieldSpec:
    fields = describe_fields(form({"f": prop}, ["f"] if required else None))
    assert len(fields) == 1
    return fields[0]


def test_the_server_everything_schema_is_inside_the_subset() -> None:
    assert check_requested_schema(EVERYTHING) == []


def test_the_server_everything_schema_describes_every_field_in_order_with_its_kind() -> None:
    kinds = {f["name"]: f["kind"] for f in describe_fields(EVERYTHING)}
    assert list(kinds) == list(EVERYTHING["properties"])
    assert kinds == {
        "name": "string",
        "check": "boolean",
        "firstLine": "string",
        "email": "string",
        "homepage": "string",
        "birthdate": "string",
        "integer": "integer",
        "number": "number",
        "untitledSingleSelectEnum": "select",
        "untitledMultipleSelectEnum": "multiselect",
        "titledSingleSelectEnum": "select",
        "titledMultipleSelectEnum": "multiselect",
        "legacyTitledEnum": "select",
        "meeting": "string",
    }


def test_only_the_fields_named_in_required_are_marked_required() -> None:
    required = [f["name"] for f in describe_fields(EVERYTHING) if f["required"]]
    assert required == ["name"]


def test_a_field_description_carries_every_key_the_page_needs() -> None:
    field = one_field({"type": "string", "title": "Name", "description": "Help", "minLength": 2, "maxLength": 9})
    assert field == {
        "name": "f",
        "kind": "string",
        "title": "Name",
        "description": "Help",
        "required": False,
        "default": None,
        "options": [],
        "minLength": 2,
        "maxLength": 9,
        "minimum": None,
        "maximum": None,
        "minItems": None,
        "maxItems": None,
        "format": None,
        "inputType": "text",
    }


def test_the_title_falls_back_to_the_property_name() -> None:
    assert one_field({"type": "string"})["title"] == "f"


@pytest.mark.parametrize(
    ("fmt", "input_type"),
    [("email", "email"), ("uri", "url"), ("date", "date"), ("date-time", "datetime-local")],
)
def test_each_string_format_maps_to_its_html_input_type(fmt: str, input_type: str) -> None:
    field = one_field({"type": "string", "format": fmt})
    assert (field["format"], field["inputType"]) == (fmt, input_type)


def test_an_unknown_string_format_is_tolerated_and_rendered_as_plain_text() -> None:
    prop = {"type": "string", "format": "uuid"}
    assert check_requested_schema(form({"f": prop})) == []
    assert (one_field(prop)["format"], one_field(prop)["inputType"]) == (None, "text")


@pytest.mark.parametrize("kind", ["number", "integer"])
def test_numbers_and_integers_render_as_number_inputs_with_their_bounds(kind: str) -> None:
    field = one_field({"type": kind, "minimum": -5, "maximum": 5, "default": 1})
    assert (field["kind"], field["inputType"], field["minimum"], field["maximum"]) == (kind, "number", -5, 5)
    assert field["default"] == 1


def test_an_integer_default_written_as_a_whole_float_is_given_as_an_int() -> None:
    field = one_field({"type": "integer", "default": 3.0})
    assert field["default"] == 3 and isinstance(field["default"], int)


def test_a_boolean_has_no_text_input_type_and_keeps_a_false_default() -> None:
    field = one_field({"type": "boolean", "default": False}, required=True)
    assert (field["kind"], field["inputType"], field["default"], field["required"]) == ("boolean", None, False, True)


def test_an_untitled_enum_uses_each_value_as_its_label() -> None:
    field = one_field({"type": "string", "enum": ["a", "b"]})
    assert field["options"] == [{"value": "a", "label": "a"}, {"value": "b", "label": "b"}]


def test_a_titled_one_of_uses_const_as_value_and_title_as_label() -> None:
    field = one_field({"type": "string", "oneOf": [{"const": "x1", "title": "Ex"}, {"const": "y1"}]})
    assert field["options"] == [{"value": "x1", "label": "Ex"}, {"value": "y1", "label": "y1"}]


def test_legacy_enum_names_label_the_options_when_the_lengths_match() -> None:
    field = one_field({"type": "string", "enum": ["p1", "p2"], "enumNames": ["Cats", "Dogs"]})
    assert [o["label"] for o in field["options"]] == ["Cats", "Dogs"]


def test_legacy_enum_names_of_a_different_length_fall_back_to_the_values() -> None:
    prop = {"type": "string", "enum": ["p1", "p2"], "enumNames": ["Cats"]}
    assert check_requested_schema(form({"f": prop})) == []
    assert [o["label"] for o in one_field(prop)["options"]] == ["p1", "p2"]


def test_an_enum_without_a_type_is_still_read_as_a_single_select() -> None:
    prop = {"enum": ["a", "b"]}
    assert check_requested_schema(form({"f": prop})) == []
    assert one_field(prop)["kind"] == "select"


def test_an_untitled_multiselect_reads_its_options_and_item_count_bounds() -> None:
    field = one_field(EVERYTHING["properties"]["untitledMultipleSelectEnum"])
    assert (field["kind"], field["minItems"], field["maxItems"], field["default"]) == ("multiselect", 1, 3, ["Guitar"])
    assert [o["value"] for o in field["options"]] == ["Guitar", "Piano", "Violin", "Drums", "Bass"]


def test_a_titled_multiselect_labels_its_options_from_any_of() -> None:
    field = one_field(EVERYTHING["properties"]["titledMultipleSelectEnum"])
    assert field["options"] == [{"value": "fish-1", "label": "Tuna"}, {"value": "fish-2", "label": "Salmon"}]


def test_an_empty_form_is_allowed_for_a_plain_confirmation() -> None:
    assert check_requested_schema(form({})) == []
    assert describe_fields(form({})) == []


def test_titles_descriptions_and_a_dollar_schema_are_allowed() -> None:
    schema = {
        **form({"f": {"type": "string"}}),
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "title": "Form",
        "description": "About the form",
    }
    assert check_requested_schema(schema) == []


def test_a_pattern_is_tolerated_but_stripped_before_any_validator_sees_it() -> None:
    schema = form({"f": {"type": "string", "pattern": "(a+)+$"}})
    assert check_requested_schema(schema) == []
    assert "pattern" not in validator_schema(schema)["properties"]["f"]


def test_a_property_named_like_a_keyword_survives_the_validator_copy() -> None:
    schema = form({"pattern": {"type": "string"}, "$id": {"type": "string"}})
    assert check_requested_schema(schema) == []
    assert set(validator_schema(schema)["properties"]) == {"pattern", "$id"}


def test_unknown_extra_keywords_are_tolerated() -> None:
    schema = form(
        {"f": {"type": "string", "x-widget": "textarea", "examples": ["e"]}, "n": {"type": "number", "multipleOf": 0.5}}
    )
    assert check_requested_schema(schema) == []


def test_a_malformed_extra_keyword_is_refused_as_invalid_json_schema() -> None:
    problems = check_requested_schema(form({"n": {"type": "number", "multipleOf": "half"}}))
    assert len(problems) == 1 and "not valid JSON Schema" in problems[0]


def deep(levels: int) -> dict[str, Any]:
    node: dict[str, Any] = {"type": "string"}
    for _ in range(levels):
        node = {"not": node}
    return form({"f": {"type": "string", "allOf": [node]}})


def cyclic() -> dict[str, Any]:
    prop: dict[str, Any] = {"type": "string"}
    prop["not"] = prop
    return form({"f": prop})


REFUSALS: list[tuple[str, object, str]] = [
    ("not an object", ["type", "object"], "must be a JSON object"),
    ("no type", {"properties": {}}, 'type "object"'),
    ("wrong top type", {"type": "array", "properties": {}}, 'type "object"'),
    ("no properties map", {"type": "object"}, "no properties map"),
    ("properties is a list", {"type": "object", "properties": [{"type": "string"}]}, "no properties map"),
    ("nested object", form({"f": {"type": "object", "properties": {"g": {"type": "string"}}}}), "nested objects"),
    ("untyped nested object", form({"f": {"properties": {"g": {"type": "string"}}}}), "nested objects"),
    ("property $ref", form({"f": {"$ref": "#/$defs/x"}}), "$ref"),
    ("top-level $defs", {**form({"f": {"type": "string"}}), "$defs": {"x": {"type": "string"}}}, "$defs"),
    ("draft-07 definitions", {**form({"f": {"type": "string"}}), "definitions": {}}, "definitions"),
    ("$ref inside items", form({"f": {"type": "array", "items": {"$ref": "#/x", "anyOf": []}}}), "$ref"),
    ("$dynamicRef", form({"f": {"type": "string", "allOf": [{"$dynamicRef": "#x"}]}}), "$dynamicRef"),
    ("array of objects", form({"f": {"type": "array", "items": {"type": "object"}}}), "lists of objects"),
    ("array without items", form({"f": {"type": "array"}}), "fixed options"),
    ("free-text array", form({"f": {"type": "array", "items": {"type": "string"}}}), "fixed options"),
    ("array of numbers", form({"f": {"type": "array", "items": {"type": "number", "enum": [1]}}}), "fixed options"),
    ("unknown type", form({"f": {"type": "file"}}), "type must be one of"),
    ("null type", form({"f": {"type": "null"}}), "type must be one of"),
    ("type list", form({"f": {"type": ["string", "null"]}}), "type must be one of"),
    ("untyped optional", form({"f": {"anyOf": [{"type": "string"}, {"type": "null"}]}}), "has no type"),
    ("property not an object", form({"f": "string"}), "must be a schema object"),
    ("property is true", form({"f": True}), "must be a schema object"),
    ("required not a list", {**form({"f": {"type": "string"}}), "required": "f"}, "required must be a list"),
    ("required non-text", {**form({"f": {"type": "string"}}), "required": [1]}, "required must be a list"),
    ("required unknown", form({"f": {"type": "string"}}, ["g"]), "which is not a property"),
    ("empty property name", form({"": {"type": "string"}}), "must not be empty"),
    ("non-text property name", {"type": "object", "properties": {1: {"type": "string"}}}, "not text"),
    ("title not text", form({"f": {"type": "string", "title": 5}}), "title must be text"),
    ("description not text", form({"f": {"type": "string", "description": ["x"]}}), "description must be text"),
    (
        "too many properties",
        form({f"p{i}": {"type": "string"} for i in range(MAX_PROPERTIES + 1)}),
        "more than 100 properties",
    ),
    (
        "too many options",
        form({"f": {"type": "string", "enum": [str(i) for i in range(MAX_OPTIONS + 1)]}}),
        "between 1 and 1000 options",
    ),
    ("long string", form({"f": {"type": "string", "description": "x" * (MAX_STRING + 1)}}), "longer than"),
    ("long property name", form({"x" * (MAX_STRING + 1): {"type": "string"}}), "longer than"),
    ("huge schema", form({f"p{i}": {"type": "string", "description": "d" * 9000} for i in range(30)}), "KiB"),
    ("too deep", deep(20), "nested deeper"),
    ("cyclic", cyclic(), "nested deeper"),
    ("not JSON", form({"f": {"type": "string", "default": {1, 2}}}), "not plain JSON"),
    ("NaN bound", form({"f": {"type": "number", "minimum": float("nan")}}), "not plain JSON"),
    (
        "minLength above maxLength",
        form({"f": {"type": "string", "minLength": 5, "maxLength": 2}}),
        "minLength is greater than maxLength",
    ),
    (
        "minimum above maximum",
        form({"f": {"type": "number", "minimum": 5, "maximum": 2}}),
        "minimum is greater than maximum",
    ),
    (
        "minItems above maxItems",
        form({"f": {"type": "array", "minItems": 3, "maxItems": 1, "items": {"type": "string", "enum": list("abc")}}}),
        "minItems is greater than maxItems",
    ),
    (
        "minItems above option count",
        form({"f": {"type": "array", "minItems": 3, "items": {"type": "string", "enum": ["a", "b"]}}}),
        "more than the number of options",
    ),
    ("negative minLength", form({"f": {"type": "string", "minLength": -1}}), "non-negative integer"),
    ("fractional maxLength", form({"f": {"type": "string", "maxLength": 2.5}}), "non-negative integer"),
    (
        "boolean maxItems",
        form({"f": {"type": "array", "maxItems": True, "items": {"type": "string", "enum": ["a"]}}}),
        "non-negative integer",
    ),
    ("text minimum", form({"f": {"type": "number", "minimum": "0"}}), "finite number"),
    ("boolean maximum", form({"f": {"type": "integer", "maximum": False}}), "finite number"),
    ("empty enum", form({"f": {"type": "string", "enum": []}}), "between 1 and"),
    ("numeric enum", form({"f": {"type": "string", "enum": ["a", 1]}}), "enum options must be text"),
    ("repeated enum", form({"f": {"type": "string", "enum": ["a", "a"]}}), "must not repeat"),
    ("repeated const", form({"f": {"type": "string", "oneOf": [{"const": "a"}, {"const": "a"}]}}), "must not repeat"),
    ("oneOf without const", form({"f": {"type": "string", "oneOf": [{"title": "A"}]}}), "text const"),
    ("anyOf of schemas", form({"f": {"type": "array", "items": {"anyOf": [{"type": "string"}]}}}), "text const"),
    (
        "enumNames not text",
        form({"f": {"type": "string", "enum": ["a"], "enumNames": [1]}}),
        "enumNames must be a list of text",
    ),
    ("string default not text", form({"f": {"type": "string", "default": 5}}), "default must be text"),
    ("number default text", form({"f": {"type": "number", "default": "5"}}), "default must be a number"),
    ("integer default fractional", form({"f": {"type": "integer", "default": 1.5}}), "whole number"),
    ("integer default bool", form({"f": {"type": "integer", "default": True}}), "whole number"),
    ("boolean default text", form({"f": {"type": "boolean", "default": "true"}}), "true or false"),
    (
        "select default not an option",
        form({"f": {"type": "string", "enum": ["a"], "default": "b"}}),
        "one of the options",
    ),
    (
        "select default unhashable",
        form({"f": {"type": "string", "enum": ["a"], "default": ["a"]}}),
        "one of the options",
    ),
    (
        "multiselect default not a list",
        form({"f": {"type": "array", "items": {"type": "string", "enum": ["a"]}, "default": "a"}}),
        "distinct options",
    ),
    (
        "multiselect default repeats",
        form({"f": {"type": "array", "items": {"type": "string", "enum": ["a"]}, "default": ["a", "a"]}}),
        "distinct options",
    ),
    (
        "multiselect default unknown",
        form({"f": {"type": "array", "items": {"type": "string", "enum": ["a"]}, "default": ["z"]}}),
        "distinct options",
    ),
]


@pytest.mark.parametrize(("schema", "expected"), [(s, e) for _, s, e in REFUSALS], ids=[n for n, _, _ in REFUSALS])
def test_a_schema_outside_the_subset_is_refused_with_a_readable_reason(schema: object, expected: str) -> None:
    problems = check_requested_schema(schema)
    assert problems, "expected a refusal"
    assert any(expected in p for p in problems), problems


@pytest.mark.parametrize(("schema", "_expected"), [(s, e) for _, s, e in REFUSALS], ids=[n for n, _, _ in REFUSALS])
def test_describe_fields_never_raises_and_leaves_out_unrenderable_properties(schema: object, _expected: str) -> None:
    for field in describe_fields(schema):
        assert field["kind"] in ("string", "number", "integer", "boolean", "select", "multiselect")


def test_problems_name_the_property_they_are_about() -> None:
    problems = check_requested_schema(form({"age": {"type": "number", "minimum": "x"}}))
    assert problems == ["property 'age': minimum must be a finite number"]


def test_every_problem_in_a_schema_is_reported_not_just_the_first() -> None:
    problems = check_requested_schema(form({"a": {"type": "object"}, "b": {"type": "file"}}, ["zz"]))
    assert len(problems) == 3


def test_check_does_not_modify_the_schema() -> None:
    schema = copy.deepcopy(EVERYTHING)
    check_requested_schema(schema)
    describe_fields(schema)
    assert schema == EVERYTHING


@pytest.mark.parametrize("garbage", [None, 1, "x", [], (), {"type": "object", "properties": None}, object()])
def test_garbage_is_refused_and_described_as_no_fields(garbage: object) -> None:
    assert check_requested_schema(garbage) != []
    assert describe_fields(garbage) == []


KEYWORD_POOL: list[tuple[str, list[object]]] = [
    ("type", ["string", "number", "integer", "boolean", "array", "object", "null", None, 3, ["string"]]),
    ("enum", [["a", "b"], [], [1], "a", None, [{"x": 1}]]),
    ("oneOf", [[{"const": "a", "title": "A"}], [{}], "x", [[]]]),
    ("items", [{"type": "string", "enum": ["a"]}, {"anyOf": [{"const": "a"}]}, {"type": "object"}, [], "x"]),
    ("minLength", [0, 3, -1, 2.5, "3", None, True]),
    ("maxLength", [0, 1, 10**30, float("inf")]),
    ("minimum", [0, -1.5, "x", [], 10**400]),
    ("maximum", [0, 1e308, None]),
    ("minItems", [0, 1, 5, -2]),
    ("maxItems", [0, 2, "2"]),
    ("default", [None, "a", 1, 1.0, True, ["a"], [["a"]], {"a": 1}]),
    ("format", ["email", "uri", "date", "date-time", "regex", 5, ["email"], {"x": 1}]),
    ("enumNames", [["A"], [1], "A"]),
    ("title", ["T", 5, None]),
    ("pattern", ["(a+)+$", "[", 5]),
]


def test_random_property_shapes_never_crash_either_function() -> None:
    rng = random.Random(20260925)
    for _ in range(3000):
        prop = {key: rng.choice(values) for key, values in KEYWORD_POOL if rng.random() < 0.4}
        schema = form({"f": prop}, rng.choice([None, ["f"], ["g"]]))
        problems = check_requested_schema(schema)
        fields = describe_fields(schema)
        assert isinstance(problems, list) and all(isinstance(p, str) for p in problems)
        if not problems:
            assert len(fields) == 1


def test_a_schema_checked_again_gives_the_same_answer_from_the_cache() -> None:
    from webhost.elicitation.subset import _checked, check_requested_schema

    bad = {"type": "object", "properties": {"f": {"type": "string", "minLength": -1}}}
    first = check_requested_schema(bad)
    assert first
    first.append("changed by a caller")
    hits = _checked.cache_info().hits
    assert check_requested_schema(bad) == first[:-1]  # a new list each time, the cached reasons intact
    assert _checked.cache_info().hits == hits + 1
    # Not cached where the JSON text would not give the schema back exactly (a key that is not text).
    assert check_requested_schema({"type": "object", "properties": {1: {"type": "string"}}})
