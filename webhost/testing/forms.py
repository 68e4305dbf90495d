"""Filling the page's forms from Python values: a tool's arguments and an input request's answer, by the kind
of control the page drew for each property (docs/automation.md, "Nested arguments")."""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from playwright.sync_api import Locator


def css_string(value: str) -> str:
    return json.dumps(value)  # a CSS string literal


def fill_control(scope: Locator, name: str, value: Any, where: str) -> None:
    """Set the control(s) named ``name`` from a Python value, by the kind of control the page drew."""
    controls = scope.locator(f"[name={css_string(name)}]")
    count = controls.count()
    if count == 0:
        names = scope.locator("[name]").evaluate_all("els => [...new Set(els.map(e => e.name))]")
        raise AssertionError(f"{where} has no control named {name!r}; its controls: {names}")
    first = controls.first
    tag = first.evaluate("e => e.tagName.toLowerCase()")
    kind = first.get_attribute("type") or ""
    if tag == "fieldset":  # a nested object or a list of items (docs/automation.md, "Nested arguments")
        _fill_compound(scope, first, name, value, where)
    elif tag == "input" and kind == "checkbox" and count > 1:  # a multi-select: checkboxes sharing the name
        wanted = {str(v) for v in (value if isinstance(value, list | tuple) else [value])}
        for box in controls.all():
            label = box.evaluate("b => (b.closest('label')?.textContent ?? b.value).trim()")
            box.set_checked(label in wanted or (box.get_attribute("value") or "") in wanted)
    elif tag == "input" and kind == "checkbox":
        first.set_checked(bool(value))
    elif tag == "select":
        first.select_option(label=str(value) if not isinstance(value, bool) else json.dumps(value))
    elif isinstance(value, Mapping) or (
        isinstance(value, list | tuple) and "json-editor" in (first.get_attribute("class") or "")
    ):
        first.fill(json.dumps(value))
    elif isinstance(value, list | tuple):
        first.fill("\n".join(str(v) for v in value))
    else:
        first.fill("" if value is None else str(value))


def _fill_compound(scope: Locator, fieldset: Locator, name: str, value: Any, where: str) -> None:
    """An object's properties go to `NAME.key`, a list's items to `NAME[i]` (its items added or removed to fit)."""
    null_box = fieldset.locator(f":scope > label > [data-null-toggle={css_string(name)}]")
    if null_box.count():
        null_box.set_checked(value is None)
        if value is None:
            return
    if fieldset.get_attribute("data-kind") == "array":
        items = fieldset.locator(":scope > .compound-body > .compound-items > li")
        while items.count() > len(value):
            items.last.locator(':scope > [data-action="remove-item"]').click()
        while items.count() < len(value):
            fieldset.locator(':scope > .compound-body > [data-action="add-item"]').click()
        for index, item in enumerate(value):
            fill_control(scope, f"{name}[{index}]", item, where)
        return
    add = fieldset.locator(':scope > .compound-body > [data-action="add-object"]')
    if add.count():
        add.click()
    for key, item in dict(value).items():
        fill_control(scope, f"{name}.{key}", item, where)
