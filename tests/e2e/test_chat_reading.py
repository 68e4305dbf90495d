"""Reading an answer (issue 28 item 6, contract §8.1): markdown tables as `table`, code blocks as `pre[data-lang]`
with a Copy button, task lists as disabled checkboxes, in the streamed answer and in the stored one after a
reload, with nothing of the model's text ever parsed as HTML; a 200-row table grows row by row while it
streams. Chromium, the scripted model endpoint (tests/support/model_endpoint.py), light and dark with axe."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
from playwright.sync_api import Locator, Page, expect

from tests.e2e.test_chat_page import last_answer, open_chat, send
from tests.e2e.test_polish import axe_problems, set_theme
from tests.support.model_endpoint import ModelEndpointServer, running_model_endpoint
from tests.support.process import Webhost, run_webhost, stdio_server

pytestmark = pytest.mark.e2e

HOSTILE = '<img src=x onerror="window.__pwned=1">'
CODE = "print('<script>window.__pwned=2</script>')\nx = 1 < 2"
RICH = (
    "Here is the plan:\n"
    "| Name | Count | Note |\n"
    "|:--|--:|:-:|\n"
    f"| alpha | 1 | {HOSTILE} |\n"
    "| beta \\| gamma | 2 | **bold** |\n"
    "\n"
    f"```python\n{CODE}\n```\n"
    "\n"
    "- [x] tables drawn\n"
    "- [ ] copy tested\n"
    "- plain item\n"
    "\n"
    "[a link](javascript:window.__pwned=3) and <b>not bold</b>"
)
ROWS = 200


def pieces(text: str, size: int) -> list[dict[str, Any]]:
    """The text in small pieces, cut anywhere (in a row, a cell, the fence), as a model streams it."""
    return [{"text": text[at : at + size]} for at in range(0, len(text), size)]


@pytest.fixture(scope="module")
def endpoint() -> Iterator[ModelEndpointServer]:
    with running_model_endpoint() as server:
        yield server


@pytest.fixture(scope="module")
def host(tmp_path_factory: pytest.TempPathFactory, endpoint: ModelEndpointServer) -> Iterator[Webhost]:
    models = [
        {"id": name, "api": "openai", "model": f"e2e-{name}", "baseUrl": endpoint.openai_base_url, "apiKey": "k"}
        for name in ("rich", "rows")
    ]
    options = {"chat": {"models": models, "toolCalls": "allow"}}
    servers = {"board": stdio_server("chat_apps")}
    with run_webhost(tmp_path_factory.mktemp("chat-reading"), servers, webhost_options=options) as running:
        yield running


def assert_rich(answer: Locator) -> None:
    table = answer.locator("table")
    expect(table).to_have_count(1)
    expect(table.locator("th")).to_have_text(["Name", "Count", "Note"])
    expect(table.locator("tbody tr")).to_have_count(2)
    expect(table.locator("tbody tr").first.locator("td")).to_have_text(["alpha", "1", HOSTILE])
    expect(table.locator("tbody tr").last.locator("td").first).to_have_text("beta | gamma")
    expect(table.locator("tbody tr").last.locator("td strong")).to_have_text("bold")
    expect(table.locator('th[data-align="right"]')).to_have_text("Count")
    code = answer.locator('pre[data-lang="python"]')
    expect(code).to_have_count(1)
    expect(code.locator(".md-lang")).to_have_text("python")
    expect(code.locator("code")).to_have_text(CODE)
    expect(code.locator('[data-action="copy"]')).to_be_visible()
    done, todo = answer.locator('li[data-task="done"]'), answer.locator('li[data-task="open"]')
    expect(done).to_have_text("tables drawn")
    expect(done.locator('input[type="checkbox"]')).to_be_checked()
    expect(done.locator('input[type="checkbox"]')).to_be_disabled()
    expect(todo.locator('input[type="checkbox"]')).not_to_be_checked()
    expect(todo.locator('input[type="checkbox"]')).to_be_disabled()
    expect(answer.locator("li:not([data-task])")).to_have_text("plain item")
    # Nothing of the model's text became markup: no image, script, bold or javascript: link.
    expect(answer.locator("img, script, b, a[href^='javascript']")).to_have_count(0)
    expect(answer.locator("[data-markdown] p").last).to_contain_text("<b>not bold</b>")


def test_tables_code_and_task_lists_render_streamed_and_stored_with_nothing_parsed_as_html(
    page: Page, host: Webhost, endpoint: ModelEndpointServer
) -> None:
    endpoint.script("e2e-rich", [{"events": pieces(RICH, 7)}])
    page.context.grant_permissions(["clipboard-read", "clipboard-write"])
    chat = open_chat(page, host, "rich", servers=())
    send(chat, "show me the plan")
    assert_rich(last_answer(chat))
    copy = last_answer(chat).locator('pre[data-lang="python"] [data-action="copy"]')
    copy.click()
    expect(copy).to_have_attribute("data-copied", "true")
    assert page.evaluate("() => navigator.clipboard.readText()") == CODE
    # The stored answer, drawn whole after a reload, is the same.
    page.reload()
    assert_rich(last_answer(page.locator('[data-testid="chat"]')))
    assert page.evaluate("() => window.__pwned") is None
    problems: list[str] = []
    for theme in ("light", "dark"):
        set_theme(page, theme)
        problems += [f"[{theme}] {p}" for p in axe_problems(page)]
    assert not problems, "\n".join(problems)


def test_a_streamed_table_of_200_rows_grows_row_by_row(
    page: Page, host: Webhost, endpoint: ModelEndpointServer
) -> None:
    """The rows drawn stay the same nodes while later ones arrive (each is drawn once, not the table each frame);
    the table is drawn whole once, when the blank line after it settles it."""
    head = "Rows:\n| # | Square |\n|---|---|\n"
    rows = [f"| {i} | {i * i} |\n" for i in range(ROWS)]
    events = [
        *pieces(head + "".join(rows[:100]), 9),
        {"gate": "half"},
        *pieces("".join(rows[100:]), 9),
        {"gate": "all"},
        {"text": "\nThat is all."},
    ]
    endpoint.script("e2e-rows", [{"events": events}])
    chat = open_chat(page, host, "rows", servers=())
    send(chat, "two hundred rows")
    answer = chat.locator('[data-chat-message][data-role="assistant"]').last
    table_rows = answer.locator("table tbody tr")
    expect(table_rows).to_have_count(100)
    table_rows.first.evaluate("(row) => { row.dataset.marked = 'before the second half'; }")
    endpoint.release("half")
    expect(table_rows).to_have_count(ROWS)
    expect(table_rows.last.locator("td")).to_have_text([str(ROWS - 1), str((ROWS - 1) ** 2)])
    expect(table_rows.first).to_have_attribute("data-marked", "before the second half")  # not drawn again
    endpoint.release("all")
    done = last_answer(chat)
    expect(done.locator("table")).to_have_count(1)
    expect(done.locator("table tbody tr")).to_have_count(ROWS)
    expect(done.locator("[data-markdown] p").last).to_have_text("That is all.")
