"""Forms for the schemas people write, in a real Chromium against tests/servers/workbench.py `shapes`: nested
objects (`$ref`/`$defs`), a nullable object and integer, an enum, a oneOf of two shapes, arrays of strings and
of objects with add/remove, a recursive tree and a self-referencing chain; the server answers the arguments it
received, which must be what the form showed."""

from __future__ import annotations

import json
import re
from collections.abc import Iterator

import pytest
from playwright.sync_api import Page, expect

from tests.e2e.test_polish import axe_problems
from tests.support.process import Webhost, run_webhost, stdio_server
from webhost.testing.page import WebhostPage

pytestmark = pytest.mark.e2e


@pytest.fixture(scope="module")
def host(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Webhost]:
    with run_webhost(tmp_path_factory.mktemp("forms"), {"workbench": stdio_server("workbench")}) as running:
        yield running


def received(ui: WebhostPage) -> dict[str, object]:
    text = ui.call("ok").locator.locator(".content-text, pre").first.inner_text()
    value: dict[str, object] = json.loads(text)
    return value


def test_nested_objects_arrays_refs_choices_and_nullable_fields_send_what_the_form_shows(
    page: Page, ui: WebhostPage, host: Webhost
) -> None:
    ui.sign_in(host)
    ui.wait_connected("workbench")
    ui.open_tool("workbench", "shapes")
    form = page.locator(".tool-view:not([data-parked]) form.args-form")
    expect(form.locator('fieldset[name="owner"][data-kind="object"]')).to_be_visible()
    # The defaults the form shows: the enum's, the oneOf's first shape; an optional object stays out until filled.
    expect(form.locator('[name="owner.role"]')).to_have_value("dev")
    expect(form.locator('textarea[name="owner.bio"]')).to_be_attached()
    expect(form.locator('[data-null-toggle="owner.address"]')).not_to_be_checked()
    expect(form.locator('select[data-choice="shape"]')).to_have_value("0")

    ui.fill(owner={"name": "Ada", "age": 36, "bio": "line one\nline two", "address": {"street": "Main St"}})
    expect(form.locator('[name="owner.address.city"]')).to_have_value("Berlin")
    form.locator('select[data-choice="shape"]').select_option(label="Square")
    form.locator('[name="shape.side"]').fill("2.5")
    ui.fill(tags=["a", "b"], team=[{"name": "Bo"}, {"name": "Cy", "role": "ops"}, {"name": "Di"}])
    # Remove the middle item: the one below moves up, and its controls' names follow.
    form.locator('fieldset[name="team"] .compound-item').nth(1).locator('[data-action="remove-item"]').click()
    expect(form.locator('[name="team[1].name"]')).to_have_value("Di")
    expect(form.locator('[name="team[2].name"]')).to_have_count(0)
    ui.fill(tree={"label": "root", "children": [{"label": "leaf", "children": [{"label": "deep"}]}]})
    # The chain refers to itself: its `next` is offered on demand, not expanded for ever.
    form.locator('[data-null-toggle="chain"]').set_checked(False)
    form.locator('[name="chain.value"]').fill("first")
    chain_next = form.locator('fieldset[name="chain.next"]')
    expect(chain_next.locator('[name="chain.next.value"]')).to_have_count(0)
    chain_next.locator('[data-null-toggle="chain.next"]').set_checked(False)
    chain_next.locator('[data-action="add-object"]').click()
    form.locator('[name="chain.next.value"]').fill("second")

    got = received(ui)
    assert got["owner"] == {
        "name": "Ada",
        "age": 36,
        "role": "dev",
        "bio": "line one\nline two",
        "address": {"street": "Main St", "city": "Berlin"},
    }
    assert got["shape"] == {"kind": "square", "side": 2.5}
    assert got["tags"] == ["a", "b"]
    assert [m["name"] for m in got["team"]] == ["Bo", "Di"]  # type: ignore[attr-defined]
    assert got["tree"] == {
        "label": "root",
        "children": [{"label": "leaf", "children": [{"label": "deep", "children": []}]}],
    }
    assert got["chain"] == {"value": "first", "next": {"value": "second", "next": None}}

    # History's Edit puts the nested arguments back into the nested form.
    history = page.locator('[data-testid="history"] [data-history-entry]').first
    history.locator('[data-action="edit"]').click()
    expect(form.locator('[name="tree.children[0].children[0].label"]')).to_have_value("deep")
    expect(form.locator('[name="shape.side"]')).to_have_value("2.5")
    expect(form.locator('[name="chain.next.value"]')).to_have_value("second")
    # Setting an optional nullable object back to null sends null.
    form.locator('[data-null-toggle="tree"]').set_checked(True)
    assert received(ui)["tree"] is None
    assert ui.console_errors == []
    assert axe_problems(page) == []  # last: axe's own inline styles are refused by the page's CSP (console errors)


def test_arrays_of_scalars_are_rows_typed_by_their_item_schema(page: Page, ui: WebhostPage, host: Webhost) -> None:
    ui.sign_in(host)
    ui.wait_connected("workbench")
    ui.open_tool("workbench", "shapes")
    form = page.locator(".tool-view:not([data-parked]) form.args-form")
    ui.fill(owner={"name": "Ada"}, shape={"radius": 1})
    # The default list is shown as its rows, one typed control each, and sent as shown.
    expect(form.locator('fieldset[name="sizes"][data-kind="array"]')).to_be_visible()
    expect(form.locator('input[name="sizes[0]"][type="number"]')).to_have_value("2")
    expect(form.locator('input[name="sizes[1]"]')).to_have_value("3")
    expect(form.locator('textarea[name="tags"]')).to_have_count(0)
    assert received(ui)["sizes"] == [2, 3]

    # Rows added and removed: strings keep spaces and may be empty, numbers are numbers, an enum is a select.
    ui.fill(tags=["two words", "", "c"], sizes=[5, 8, 13], moods=["busy", "calm", "busy"])
    expect(form.locator('select[name="moods[2]"]')).to_have_value("busy")
    form.locator('fieldset[name="sizes"] .compound-item').nth(0).locator('[data-action="remove-item"]').click()
    expect(form.locator('[name="sizes[0]"]')).to_have_value("8")
    expect(form.locator('[name="sizes[0]"]')).to_have_accessible_name(re.compile(r"^Sizes 1 "))
    expect(form.locator('[name="sizes[2]"]')).to_have_count(0)
    got = received(ui)
    assert got["tags"] == ["two words", "", "c"]
    assert got["sizes"] == [8, 13]
    assert got["moods"] == ["busy", "calm", "busy"]

    # A number row that does not hold a number is an error on that row, and nothing is sent.
    form.locator('fieldset[name="sizes"] > .compound-body > [data-action="add-item"]').click()
    expect(form.locator('[name="sizes[2]"]')).to_be_focused()
    page.locator('[data-testid="call-tool"]').click()
    expect(form.locator('[data-field-error="sizes[2]"]')).to_contain_text("Required")
    expect(form.locator('[data-field-error="sizes"]')).to_contain_text("Check the items")
    # Removing every row sends the empty list the form shows.
    for _ in range(3):
        form.locator('fieldset[name="sizes"] .compound-item').last.locator('[data-action="remove-item"]').click()
    assert received(ui)["sizes"] == []
    assert ui.console_errors == []
    assert axe_problems(page) == []
