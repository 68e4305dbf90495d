"""The chat's history in a real Chromium (contract §8.1): edit and versions (an app of an earlier version shown
again from what was stored), search over the person's conversations, export, the list's order after a rename,
and titles from the first line. webhost is a subprocess with our SDK board server over stdio; the model is the
scripted endpoint (real SSE over a socket)."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from playwright.sync_api import Locator, Page, expect

from tests.e2e.conftest import bind_page
from tests.e2e.test_chat_page import ANSWER_MS, app_in, board_call, last_answer, open_chat, send
from tests.e2e.test_polish import axe_problems, set_theme
from tests.support.model_endpoint import ModelEndpointServer, running_model_endpoint
from tests.support.process import Webhost, run_webhost, stdio_server

pytestmark = pytest.mark.e2e

MODELS = ["board", "words"]


@pytest.fixture(scope="module")
def endpoint() -> Iterator[ModelEndpointServer]:
    with running_model_endpoint() as server:
        yield server


@pytest.fixture(scope="module")
def host(tmp_path_factory: pytest.TempPathFactory, endpoint: ModelEndpointServer) -> Iterator[Webhost]:
    models = [
        {"id": name, "api": "openai", "model": f"e2e-{name}", "baseUrl": endpoint.openai_base_url, "apiKey": "k"}
        for name in MODELS
    ]
    options = {"chat": {"models": models, "toolCalls": "allow"}}
    servers = {"board": stdio_server("chat_apps")}
    with run_webhost(tmp_path_factory.mktemp("chat-history"), servers, webhost_options=options) as running:
        yield running


def board_runs(page: Page, call_id: str) -> int:
    text = page.evaluate(
        """async (callId) => (await window.__page.rpc.request("tools/call",
          {server: "board", name: "calls", arguments: {}, callId})).content[0].text""",
        call_id,
    )
    runs: dict[str, int] = json.loads(text)
    return runs.get("show_board", 0)


def accessibility_problems(page: Page) -> list[str]:
    """Serious axe-core violations in the light and the dark theme."""
    problems: list[str] = []
    for theme in ("light", "dark"):
        set_theme(page, theme)
        problems += [f"[{theme}] {p}" for p in axe_problems(page)]
    return problems


def users(chat: Locator) -> Locator:
    return chat.locator('[data-chat-message][data-role="user"]')


def test_an_edited_message_is_a_new_version_and_the_old_one_comes_back_with_its_app(
    page: Page, host: Webhost, endpoint: ModelEndpointServer
) -> None:
    board_call(endpoint, "board", title="Kept", then="Just words.")
    chat = open_chat(page, host, "board")
    send(chat, "show the board")
    card = chat.locator('[data-chat-tool-call][data-tool="show_board"]')
    expect(app_in(card).locator("body")).to_have_attribute("data-results", "1", timeout=ANSWER_MS)
    last_answer(chat)
    runs = board_runs(page, "runs-1")
    # Another tab of the person, on the same conversation: it follows the new version as it is made.
    other = page.context.new_page()
    other.goto(page.url)
    elsewhere = other.locator('[data-testid="chat"]')
    expect(
        app_in(elsewhere.locator('[data-chat-tool-call][data-tool="show_board"]')).locator("body")
    ).to_have_attribute("data-results", "1", timeout=ANSWER_MS)

    users(chat).last.locator('[data-action="edit"]').click()
    box = chat.locator('textarea[data-testid="chat-input"]')
    expect(box).to_have_value("show the board")
    box.fill("only words, please")
    box.press("Enter")
    expect(last_answer(chat)).to_contain_text("Just words.")
    expect(users(chat)).to_have_count(1)
    expect(users(chat).last).to_contain_text("only words, please")
    versions = users(chat).last.locator("[data-branch]")
    expect(versions).to_have_attribute("data-index", "2")
    expect(versions).to_have_attribute("data-count", "2")
    expect(card).to_have_count(0)
    expect(users(elsewhere).last.locator("[data-branch]")).to_have_attribute("data-index", "2")
    expect(last_answer(elsewhere)).to_contain_text("Just words.")
    expect(elsewhere.locator('[data-chat-tool-call][data-tool="show_board"]')).to_have_count(0)
    other.close()
    sent = endpoint.requests("e2e-board")[-1]["body"]["messages"]
    assert "show the board" not in json.dumps(sent)  # the model was given the branch shown only

    versions.locator('[data-action="branch-prev"]').click()
    expect(users(chat).last.locator("[data-branch]")).to_have_attribute("data-index", "1")
    expect(users(chat).last).to_contain_text("show the board")
    body = app_in(card).locator("body")
    expect(body).to_have_attribute("data-results", "1")
    expect(app_in(card).locator("li")).to_have_text(["alpha", "beta"])
    # The version shown is kept: a reload shows it again.
    page.reload()
    chat = page.locator('[data-testid="chat"]')
    expect(users(chat).last.locator("[data-branch]")).to_have_attribute("data-index", "1")
    expect(app_in(chat.locator('[data-chat-tool-call][data-tool="show_board"]')).locator("body")).to_have_attribute(
        "data-results", "1"
    )
    bind_page(page)
    assert board_runs(page, "runs-2") == runs  # shown again from what was stored, not run again
    assert not accessibility_problems(page)


def conversation_ids(chat: Locator) -> list[str]:
    return [str(item.get_attribute("data-conversation")) for item in chat.locator("[data-conversation]").all()]


def test_search_export_titles_and_a_rename_that_keeps_the_order(
    page: Page, host: Webhost, endpoint: ModelEndpointServer, tmp_path: Path
) -> None:
    endpoint.script("e2e-words", [{"events": [{"text": "Noted, with `code`."}]}])
    chat = open_chat(page, host, "words")
    send(chat, "# Plan **the** trip\nwith crimson apples and more")
    last_answer(chat)
    apples = chat.locator('[data-conversation][data-active="true"]')
    expect(apples).to_contain_text("Plan the trip")  # the first line, cleaned
    first = str(apples.get_attribute("data-conversation"))
    chat.locator('[data-action="new-conversation"]').click()
    send(chat, "then bananas")
    last_answer(chat)
    second = str(chat.locator('[data-conversation][data-active="true"]').get_attribute("data-conversation"))
    expect(chat.locator("[data-conversation]").first).to_have_attribute("data-conversation", second)
    before = conversation_ids(chat)

    # Renaming the older one is not activity: it keeps its place.
    chat.locator(f'[data-conversation="{first}"] button').first.click()
    active = chat.locator(f'[data-conversation="{first}"][data-active="true"]')
    active.locator('[data-action="rename"]').click()
    active.locator('input[name="title"]').fill("Renamed trip")
    active.locator('[data-action="save-title"]').click()
    expect(chat.locator(f'[data-conversation="{first}"]')).to_contain_text("Renamed trip")
    page.reload()
    chat = page.locator('[data-testid="chat"]')
    expect(chat.locator(f'[data-conversation="{first}"]')).to_contain_text("Renamed trip")
    assert conversation_ids(chat) == before

    # Search: the results are the conversations that have every word, with the words around the match.
    search = chat.locator('input[type="search"][data-testid="chat-search"]')
    search.fill("CRIMSON apples")
    expect(chat.locator("[data-conversation]")).to_have_count(1)
    result = chat.locator(f'[data-conversation="{first}"]')
    expect(result).to_contain_text("Renamed trip")
    expect(result).to_contain_text("with crimson apples and more")
    assert not accessibility_problems(page)
    search.fill("bananas")
    expect(chat.locator("[data-conversation]")).to_have_attribute("data-conversation", second)
    search.fill("nothing like this")
    expect(chat.locator("[data-conversation]")).to_have_count(0)
    search.fill("")
    expect(chat.locator("[data-conversation]")).to_have_count(len(before))

    # Export: the conversation shown, as Markdown and as JSON.
    chat.locator(f'[data-conversation="{first}"] button').first.click()
    active = chat.locator(f'[data-conversation="{first}"][data-active="true"]')
    with page.expect_download() as markdown:
        active.locator('[data-action="export"][data-format="md"]').click()
    assert markdown.value.suggested_filename == "Renamed trip.md"
    text = Path(markdown.value.path()).read_text()
    assert text.startswith("# Renamed trip\n") and "## You" in text and "crimson apples" in text
    assert "Noted, with `code`." in text
    with page.expect_download() as exported:
        active.locator('[data-action="export"][data-format="json"]').click()
    assert exported.value.suggested_filename == "Renamed trip.json"
    document: dict[str, Any] = json.loads(Path(exported.value.path()).read_text())
    assert document["conversation"]["id"] == first
    assert [m["role"] for m in document["messages"]] == ["user", "assistant"]
