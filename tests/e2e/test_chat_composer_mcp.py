"""`@` and `/` in the chat's composer in a real Chromium (contract §8.1): webhost as a subprocess, a real `mcp` SDK
server over stdio (tests/servers/composer.py) and the scripted streaming model endpoint. `@` lists the server's
resources and attaches one (read through the person's connection; the model gets its text, on the OpenAI wire);
a resource the server refuses is one line, what was typed kept. `/` lists its prompts, asks for arguments with
completions (the workbench's form), refuses bad ones in one line, and runs the prompt into the conversation (the
model gets its messages, on the Anthropic wire). Keyboard only; axe finds nothing serious; a phone's width works.
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from playwright.sync_api import Locator, Page, expect

from tests.e2e.test_chat_page import ANSWER_MS, open_chat
from tests.e2e.test_polish import axe_problems, set_theme
from tests.support.model_endpoint import ModelEndpointServer, running_model_endpoint
from tests.support.process import Webhost, run_webhost, stdio_server

pytestmark = pytest.mark.e2e

HANDBOOK = "The team handbook: deploys happen on Tuesdays, never on Fridays."
LIST_MS = 20_000


@pytest.fixture(scope="module")
def endpoint() -> Iterator[ModelEndpointServer]:
    with running_model_endpoint() as server:
        yield server


@pytest.fixture(scope="module")
def host(tmp_path_factory: pytest.TempPathFactory, endpoint: ModelEndpointServer) -> Iterator[Webhost]:
    models = [
        {"id": "mention", "api": "openai", "model": "e2e-mention", "baseUrl": endpoint.openai_base_url},
        {"id": "phone", "api": "openai", "model": "e2e-phone", "baseUrl": endpoint.openai_base_url},
        {"id": "prompt", "api": "anthropic", "model": "e2e-prompt", "baseUrl": endpoint.anthropic_base_url},
    ]
    for model in models:
        model["apiKey"] = "k-e2e"
    options = {"chat": {"models": models, "toolCalls": "allow"}}
    servers = {"composer": stdio_server("composer")}
    with run_webhost(tmp_path_factory.mktemp("chat-composer"), servers, webhost_options=options) as running:
        yield running


def composer_list(chat: Locator) -> Locator:
    return chat.locator('.chat-composer [role="listbox"]')


def test_at_lists_resources_attaches_one_and_the_model_gets_its_text(
    page: Page, host: Webhost, endpoint: ModelEndpointServer
) -> None:
    endpoint.script("e2e-mention", [{"events": [{"text": "On Tuesdays."}]}])
    chat = open_chat(page, host, "mention", servers=("composer",))
    box = chat.locator('textarea[data-testid="chat-input"]')
    box.press_sequentially("When do we deploy? @")
    items = chat.locator('[data-mention-item][data-server="composer"]')
    expect(items).to_have_count(3, timeout=LIST_MS)  # the handbook, the vault, the topics' template
    expect(items.first).to_have_attribute("aria-selected", "true")
    assert axe_problems(page) == []
    box.press("ArrowDown")
    expect(items.nth(1)).to_have_attribute("aria-selected", "true")
    box.press("ArrowUp")
    expect(items.first).to_have_attribute("aria-selected", "true")
    box.press_sequentially("hand")
    expect(items).to_have_count(1)
    expect(items.first).to_have_attribute("data-uri", "notes://handbook")
    expect(box).to_have_attribute("aria-activedescendant", items.first.get_attribute("id") or "")
    box.press("Enter")
    chip = chat.locator('.chat-composer [data-attachment][data-kind="resource"]')
    expect(chip).to_have_count(1)
    expect(chip).to_have_attribute("data-name", "Team handbook")
    expect(chip).to_have_attribute("data-uri", "notes://handbook")
    expect(box).to_have_value("When do we deploy? ")
    expect(composer_list(chat)).to_be_hidden()

    # A resource the server refuses: one line, and what was typed stays.
    box.press_sequentially("@vault")
    expect(items).to_have_count(1)
    box.press("Enter")
    expect(chat.locator(".chat-notice")).to_contain_text("composer refused to give The vault")
    expect(chat.locator(".chat-notice")).to_contain_text("locked for you")
    expect(box).to_have_value("When do we deploy? @vault")
    expect(chip).to_have_count(1)
    # Escape closes the list and keeps the text.
    box.press("Backspace")
    expect(items).to_have_count(1)
    box.press("Escape")
    expect(composer_list(chat)).to_be_hidden()
    expect(box).to_have_value("When do we deploy? @vaul")

    # A resource template: its variables in the workbench's form, with completions; the URI it makes is attached.
    box.fill("When do we deploy? @topic")
    expect(items).to_have_count(1, timeout=LIST_MS)
    expect(items.first).to_have_attribute("data-uri", "notes://topics/{topic}")
    box.press("Enter")
    form = chat.locator('[data-testid="chat-prompt-args"]')
    topic = form.locator('input[name="topic"]')
    expect(topic).to_be_focused()
    topic.press_sequentially("dep")
    expect(form.locator('datalist[data-completions="topic"] option[value="deploys"]')).to_be_attached(timeout=LIST_MS)
    topic.fill("deploys")
    topic.press("Enter")
    expect(form).to_be_hidden()
    expect(chip).to_have_count(2)
    expect(chip.last).to_have_attribute("data-uri", "notes://topics/deploys")
    expect(box).to_have_value("When do we deploy? ")

    box.fill("When do we deploy?")
    box.press("Enter")
    answer = chat.locator('[data-chat-message][data-role="assistant"]').last
    expect(answer).to_have_attribute("data-status", "done", timeout=ANSWER_MS)
    expect(chip).to_have_count(0)
    sent = chat.locator('[data-chat-message][data-role="user"] [data-attachment][data-kind="resource"]')
    expect(sent).to_have_count(2)
    expect(sent.first).to_have_attribute("data-uri", "notes://handbook")
    [request] = [r["body"] for r in endpoint.requests("e2e-mention")]
    handbook = f"[attached resource notes://handbook of the server composer: Team handbook]\n{HANDBOOK}"
    topic_text = "[attached resource notes://topics/deploys of the server composer: notes://topics/deploys]\n"
    topic_text += "Notes on deploys: write them down."
    content = f"{handbook}\n\n{topic_text}\n\nWhen do we deploy?"
    assert request["messages"][-1] == {"role": "user", "content": content}


def test_slash_runs_a_prompt_with_completed_arguments_into_the_conversation(
    page: Page, host: Webhost, endpoint: ModelEndpointServer
) -> None:
    endpoint.script("e2e-prompt", [{"events": [{"text": "Naming is fine."}]}])
    chat = open_chat(page, host, "prompt", servers=("composer",))
    box = chat.locator('textarea[data-testid="chat-input"]')
    box.press_sequentially("/")
    items = chat.locator('[data-slash-item][data-server="composer"]')
    expect(items).to_have_count(2, timeout=LIST_MS)
    box.press_sequentially("rev")
    expect(items).to_have_count(1)
    expect(items.first).to_have_attribute("data-prompt", "review")
    box.press("Enter")
    form = chat.locator('[data-testid="chat-prompt-args"]')
    expect(form).to_be_visible()
    code = form.locator('input[name="code"], textarea[name="code"]')
    expect(code).to_be_focused()
    code.fill("x = 1")
    language = form.locator('input[name="language"]')
    language.press_sequentially("py")
    expect(form.locator('datalist[data-completions="language"] option[value="python"]')).to_be_attached(timeout=LIST_MS)
    assert axe_problems(page) == []

    # Arguments the server refuses: one line in the form; nothing added, the composer's text kept.
    language.fill("cobol")
    language.press("Enter")
    expect(form.locator(".form-error")).to_contain_text("unknown language 'cobol'")
    expect(chat.locator("[data-chat-message]")).to_have_count(0)
    expect(box).to_have_value("/rev")

    language.fill("python")
    form.locator('[data-action="run-prompt"]').click()
    expect(form).to_be_hidden(timeout=ANSWER_MS)  # the conversation is made, then opened
    answer = chat.locator('[data-chat-message][data-role="assistant"]').last
    expect(answer).to_have_attribute("data-status", "done", timeout=ANSWER_MS)
    expect(chat.locator('[data-chat-message][data-from-prompt="composer"]')).to_have_count(3)
    expect(chat.locator('[data-chat-message][data-role="user"]').first).to_contain_text("Review this python code:")
    expect(box).to_have_value("")
    expect(box).to_be_focused()
    [request] = [r["body"] for r in endpoint.requests("e2e-prompt")]
    assert [m["role"] for m in request["messages"]] == ["user", "assistant", "user"]
    assert request["messages"][0]["content"] == [{"type": "text", "text": "Review this python code:\nx = 1"}]
    assert request["messages"][1]["content"] == [{"type": "text", "text": "I will look at naming and errors first."}]

    # Escape leaves the arguments form, and the composer keeps what was typed.
    box.press_sequentially("/review")
    box.press("Enter")
    expect(form).to_be_visible()
    form.locator('input[name="code"], textarea[name="code"]').press("Escape")
    expect(form).to_be_hidden()
    expect(box).to_be_focused()
    expect(box).to_have_value("/review")


@pytest.mark.parametrize("theme", ["light", "dark"])
def test_the_lists_fit_a_phone_and_a_click_chooses(page: Page, host: Webhost, theme: str) -> None:
    page.set_viewport_size({"width": 390, "height": 844})
    chat = open_chat(page, host, "phone", servers=("composer",))
    set_theme(page, theme)
    box = chat.locator('textarea[data-testid="chat-input"]')
    box.press_sequentially("@")
    items = chat.locator("[data-mention-item]")
    expect(items).to_have_count(3, timeout=LIST_MS)
    shown = composer_list(chat).bounding_box()
    assert shown is not None and shown["x"] >= 0 and shown["x"] + shown["width"] <= 390 and shown["y"] >= 0
    assert axe_problems(page) == []
    chat.locator('[data-mention-item][data-uri="notes://handbook"]').click()
    expect(chat.locator('.chat-composer [data-attachment][data-kind="resource"]')).to_have_count(1)
    expect(box).to_be_focused()
    box.press_sequentially("/")
    expect(chat.locator("[data-slash-item]")).to_have_count(2, timeout=LIST_MS)
    chat.locator('[data-slash-item][data-prompt="review"]').click()
    form = chat.locator('[data-testid="chat-prompt-args"]')
    expect(form).to_be_visible()
    box_of_form = form.bounding_box()
    assert box_of_form is not None and box_of_form["x"] + box_of_form["width"] <= 390
    assert axe_problems(page) == []
