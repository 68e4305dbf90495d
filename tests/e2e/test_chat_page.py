"""The chat in a real Chromium (contract §8): webhost as a subprocess, our SDK servers over stdio, and the
scripted model endpoint (real SSE over a socket, the official SDKs on webhost's side) in this process.

Each test scripts its own model name (one `models` entry per test), so the module shares one webhost per
policy: `allowing` (the board's tools run without asking) and `asking` (every model call asks).
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from playwright.sync_api import FrameLocator, Locator, Page, expect

from tests.e2e.conftest import bind_page, login
from tests.e2e.test_polish import axe_problems, set_theme
from tests.support.model_endpoint import ModelEndpointServer, running_model_endpoint
from tests.support.process import Webhost, run_webhost, stdio_server

pytestmark = pytest.mark.e2e

CONNECT_MS = 30_000
APP_MS = 20_000
ANSWER_MS = 20_000
MODELS = [
    "text",
    "long",
    "board",
    "message",
    "context",
    "reload",
    "stop",
    "stop-args",
    "retry",
    "asked",
    "denied",
    "elicit",
    "anthropic",
]


@pytest.fixture(scope="module")
def endpoint() -> Iterator[ModelEndpointServer]:
    with running_model_endpoint() as server:
        yield server


def models(endpoint: ModelEndpointServer) -> list[dict[str, Any]]:
    entries = [
        {"id": name, "api": "openai", "model": f"e2e-{name}", "baseUrl": endpoint.openai_base_url, "apiKey": "k-e2e"}
        for name in MODELS
        if name != "anthropic"
    ]
    entries.append(
        {
            "id": "anthropic",
            "api": "anthropic",
            "model": "e2e-anthropic",
            "baseUrl": endpoint.anthropic_base_url,
            "apiKey": "k-e2e",
        }
    )
    entries.append(
        {
            "id": "mine",
            "api": "openai",
            "model": "e2e-mine",
            "baseUrl": endpoint.openai_base_url,
            "apiKey": "${input:llm_key}",
            "name": "My own key",
        }
    )
    return entries


INPUTS = [{"type": "promptString", "id": "llm_key", "description": "Your model key", "password": True}]
SERVERS = {"board": stdio_server("chat_apps"), "elicit": stdio_server("elicit")}


@pytest.fixture(scope="module")
def allowing(tmp_path_factory: pytest.TempPathFactory, endpoint: ModelEndpointServer) -> Iterator[Webhost]:
    options = {"chat": {"models": models(endpoint), "toolCalls": "allow"}}
    with run_webhost(tmp_path_factory.mktemp("chat-allow"), SERVERS, webhost_options=options, inputs=INPUTS) as host:
        yield host


@pytest.fixture(scope="module")
def asking(tmp_path_factory: pytest.TempPathFactory, endpoint: ModelEndpointServer) -> Iterator[Webhost]:
    options = {"chat": {"models": models(endpoint), "toolCalls": "ask"}}
    with run_webhost(tmp_path_factory.mktemp("chat-ask"), SERVERS, webhost_options=options, inputs=INPUTS) as host:
        yield host


# ---- helpers ---------------------------------------------------------------------------------------------------


def open_chat(page: Page, host: Webhost, model: str, servers: tuple[str, ...] = ("board",)) -> Locator:
    login(page, host)
    for server in servers:  # the chat is the landing view: the servers' sidebar is in the workbench, hidden
        expect(page.locator(f'[data-server="{server}"][data-status="connected"]')).to_be_attached(timeout=CONNECT_MS)
    bind_page(page)
    page.locator('[data-action="open-chat"]').click()
    chat = page.locator('[data-testid="chat"]')
    expect(chat).to_be_visible()
    chat.locator('select[name="model"]').select_option(model)
    return chat


def send(chat: Locator, text: str) -> None:
    box = chat.locator('textarea[data-testid="chat-input"]')
    box.fill(text)
    box.press("Enter")


def last_answer(chat: Locator, status: str = "done") -> Locator:
    answer = chat.locator('[data-chat-message][data-role="assistant"]').last
    expect(answer).to_have_attribute("data-status", status, timeout=ANSWER_MS)
    return answer


def board_call(
    endpoint: ModelEndpointServer, model: str, *, title: str = "Q3", then: str = "Shown.", gate: str | None = None
) -> None:
    """The model calls show_board with its arguments in several fragments, then answers `then`. With `gate`, the
    stream holds after the title until the test opens the gate (it waits for what the app saw meanwhile)."""
    events: list[dict[str, Any]] = [{"text": "Opening the board. "}]
    events.append({"tool": {"id": "call_board", "name": "board__show_board", "args": ['{"title": "', title]}})
    if gate is not None:
        events.append({"gate": gate})
    for fragment in ['", "items": ["alpha"', ', "beta"', "]}"]:
        events.append({"args": {"id": "call_board", "fragment": fragment}})
    endpoint.script(
        f"e2e-{model}",
        [
            {"match": "board", "times": 1, "events": [{"pause": 0.15}, *events]},
            {"match": "Tell me more", "events": [{"text": f"More about {title}."}]},
            {"events": [{"text": then}]},
        ],
    )


def app_in(card: Locator) -> FrameLocator:
    frame = card.locator("iframe[data-app-frame]")
    expect(frame).to_have_attribute("data-app-status", "ready", timeout=APP_MS)
    return card.frame_locator("iframe[data-app-frame]").frame_locator("iframe")


def requests_of(endpoint: ModelEndpointServer, model: str) -> list[dict[str, Any]]:
    return [r["body"] for r in endpoint.requests(f"e2e-{model}")]


# ---- tests -----------------------------------------------------------------------------------------------------


def test_with_no_model_configured_the_chat_says_how_to_add_one(
    page: Page, tmp_path_factory: pytest.TempPathFactory
) -> None:
    with run_webhost(tmp_path_factory.mktemp("chat-none"), {"board": stdio_server("chat_apps")}) as host:
        login(page, host)
        expect(page.locator('[data-server="board"][data-status="connected"]')).to_be_visible(timeout=CONNECT_MS)
        page.locator('[data-action="open-chat"]').click()
        setup = page.locator('[data-testid="chat"] [data-testid="chat-setup"]')
        expect(setup).to_be_visible()
        expect(setup).to_contain_text('"models"')
        expect(page.locator('textarea[data-testid="chat-input"]')).to_be_disabled()


def test_an_answer_streams_as_markdown_and_the_conversation_is_kept(
    page: Page, allowing: Webhost, endpoint: ModelEndpointServer
) -> None:
    endpoint.script(
        "e2e-text", [{"events": [{"text": "**Bold** start\n\n"}, {"pause": 0.05}, {"text": "- one\n- two"}]}]
    )
    chat = open_chat(page, allowing, "text")
    box = chat.locator('textarea[data-testid="chat-input"]')
    box.fill("first line")
    box.press("Shift+Enter")
    box.type("second line")
    box.press("Enter")
    mine = chat.locator('[data-chat-message][data-role="user"]').last
    expect(mine.locator(".chat-user-text")).to_have_text("first line\nsecond line")
    answer = last_answer(chat)
    expect(answer.locator("strong")).to_have_text("Bold")
    expect(answer.locator("li")).to_have_text(["one", "two"])
    assert requests_of(endpoint, "text")[-1]["messages"][-1]["content"] == "first line\nsecond line"
    active = chat.locator('[data-conversation][data-active="true"]')
    expect(active).to_contain_text("first line")
    conversation = active.get_attribute("data-conversation")
    assert conversation and re.search(f"kind=chat.*key={re.escape(conversation)}", page.url)
    # A reload opens the same conversation from the address.
    page.reload()
    again = page.locator('[data-testid="chat"]')
    expect(again.locator('[data-chat-message][data-role="assistant"] li')).to_have_text(["one", "two"])
    expect(again.locator(f'[data-conversation="{conversation}"]')).to_have_attribute("data-active", "true")


AT_END = """() => { const w = document.querySelector('.chat-log');
  return w.scrollHeight - w.scrollTop - w.clientHeight < 80; }"""


def test_the_conversation_follows_a_streamed_answer_unless_the_person_scrolled_up(
    page: Page, allowing: Webhost, endpoint: ModelEndpointServer
) -> None:
    lines = [{"text": f"Line {i} of a long answer.\n\n"} for i in range(60)]
    endpoint.script("e2e-long", [{"events": [lines[0], {"pause": 0.05}, *lines[1:]]}])
    chat = open_chat(page, allowing, "long")
    send(chat, "write a lot")
    last_answer(chat)
    page.wait_for_function(AT_END)  # it followed the answer down
    # The person scrolls up to read (with the wheel: a scroll up the page makes itself, as when a frame focuses
    # inside an app, does not stop the following); the next answer does not pull them back down.
    chat.locator(".chat-log").hover()
    page.mouse.wheel(0, -100_000)
    page.wait_for_function("() => document.querySelector('.chat-log').scrollTop === 0")
    send(chat, "again")
    expect(chat.locator('[data-chat-message][data-role="assistant"]')).to_have_count(2)
    last_answer(chat)
    page.evaluate("() => new Promise((done) => requestAnimationFrame(() => requestAnimationFrame(done)))")
    assert page.evaluate("() => document.querySelector('.chat-log').scrollTop") == 0


def test_an_allowed_tool_opens_its_app_at_the_call_and_streams_the_arguments_to_it(
    page: Page, allowing: Webhost, endpoint: ModelEndpointServer
) -> None:
    board_call(endpoint, "board", gate="board-title")
    chat = open_chat(page, allowing, "board")
    send(chat, "show the board")
    card = chat.locator('[data-chat-tool-call][data-tool="show_board"]')
    expect(card).to_have_attribute("data-server", "board")
    app = app_in(card)  # opened while the model is still writing the arguments
    expect(card).to_have_attribute("data-status", "running")
    # Drawn from the partial arguments, once the app is initialized (its handshake is slow on a loaded machine).
    expect(app.locator("#title")).to_have_text("Q3", timeout=ANSWER_MS)
    endpoint.release("board-title")
    expect(app.locator("body")).to_have_attribute("data-results", "1", timeout=ANSWER_MS)
    expect(card).to_have_attribute("data-status", "ok")
    body = app.locator("body")
    expect(body).to_have_attribute("data-inputs", "1")
    log = app.locator("#log").inner_text()
    lines = [line.split(" ", 1)[0] for line in log.splitlines() if line]
    assert "partial" in lines, log  # the app saw the arguments while the model wrote them
    assert lines.index("partial") < lines.index("input") < lines.index("result"), log
    assert lines.count("input") == 1 and "partial" not in lines[lines.index("input") :], log
    expect(app.locator("li")).to_have_text(["alpha", "beta"])
    answer = last_answer(chat)
    expect(answer).to_contain_text("Shown.")


def test_an_app_message_waits_for_consent_then_starts_a_turn(
    page: Page, allowing: Webhost, endpoint: ModelEndpointServer
) -> None:
    board_call(endpoint, "message", title="Roadmap")
    chat = open_chat(page, allowing, "message")
    send(chat, "show the board")
    card = chat.locator('[data-chat-tool-call][data-tool="show_board"]')
    app = app_in(card)
    expect(app.locator("body")).to_have_attribute("data-results", "1", timeout=ANSWER_MS)
    last_answer(chat)
    app.locator("#say").click()
    consent = chat.locator('[data-approval][data-kind="app-message"]')
    expect(consent).to_contain_text("Tell me more about Roadmap")
    consent.locator('[data-action="allow"]').click()
    from_app = chat.locator('[data-chat-message][data-role="user"][data-from-app="board"]')
    expect(from_app).to_contain_text("Tell me more about Roadmap")
    expect(from_app).to_contain_text("Board")  # the app's name
    expect(last_answer(chat)).to_contain_text("More about Roadmap.")
    expect(app.locator("#log")).to_contain_text("message ok")


def test_what_an_app_gives_the_model_is_shown_sent_and_removable(
    page: Page, allowing: Webhost, endpoint: ModelEndpointServer
) -> None:
    board_call(endpoint, "context", title="Sprint")
    chat = open_chat(page, allowing, "context")
    send(chat, "show the board")
    chip = chat.locator('[data-model-context][data-server="board"]')
    expect(chip).to_contain_text("Board Sprint shows 2 items", timeout=ANSWER_MS)
    last_answer(chat)
    send(chat, "what do you see?")
    expect(chat.locator('[data-chat-message][data-role="assistant"]')).to_have_count(2)
    last_answer(chat)
    system = requests_of(endpoint, "context")[-1]["messages"][0]["content"]
    assert "<app-context" in system and "Board Sprint shows 2 items" in system
    # What the model saw: the exact request of that answer.
    chat.locator('[data-chat-message][data-role="assistant"]').last.locator('[data-action="show-request"]').click()
    dialog = page.locator("dialog[data-chat-requests]")
    expect(dialog).to_contain_text("Board Sprint shows 2 items")
    expect(dialog).to_contain_text("board__show_board")
    dialog.locator('[data-action="close"]').click()
    chip.locator('[data-action="remove"]').click()
    expect(chip).to_have_count(0)
    send(chat, "and now?")
    expect(chat.locator('[data-chat-message][data-role="assistant"]')).to_have_count(3)
    last_answer(chat)
    assert "<app-context" not in requests_of(endpoint, "context")[-1]["messages"][0]["content"]


def test_a_reopened_conversation_shows_its_app_again_without_calling_the_tool(
    page: Page, allowing: Webhost, endpoint: ModelEndpointServer
) -> None:
    board_call(endpoint, "reload", title="Kept")
    chat = open_chat(page, allowing, "reload")
    send(chat, "show the board")
    app = app_in(chat.locator('[data-chat-tool-call][data-tool="show_board"]'))
    expect(app.locator("body")).to_have_attribute("data-results", "1", timeout=ANSWER_MS)
    last_answer(chat)
    runs_before = json.loads(
        page.evaluate("""async () => (await window.__page.rpc.request("tools/call",
          {server: "board", name: "calls", arguments: {}, callId: "count-1"})).content[0].text""")
    )
    page.reload()
    chat = page.locator('[data-testid="chat"]')
    card = chat.locator('[data-chat-tool-call][data-tool="show_board"]')
    expect(card).to_have_attribute("data-status", "ok")
    app = app_in(card)
    body = app.locator("body")
    expect(body).to_have_attribute("data-results", "1")
    expect(body).to_have_attribute("data-inputs", "1")
    expect(body).to_have_attribute("data-partials", "0")
    expect(app.locator("li")).to_have_text(["alpha", "beta"])
    bind_page(page)
    runs_after = json.loads(
        page.evaluate("""async () => (await window.__page.rpc.request("tools/call",
          {server: "board", name: "calls", arguments: {}, callId: "count-2"})).content[0].text""")
    )
    assert runs_after["show_board"] == runs_before["show_board"]


def test_stop_ends_the_answer_and_keeps_what_it_streamed(
    page: Page, allowing: Webhost, endpoint: ModelEndpointServer
) -> None:
    events: list[dict[str, Any]] = [{"text": "Thinking slowly. "}]
    events += [{"pause": 0.5}, {"text": "more "}] * 40
    endpoint.script("e2e-stop", [{"events": events}])
    chat = open_chat(page, allowing, "stop")
    send(chat, "take your time")
    streaming = chat.locator('[data-chat-message][data-role="assistant"]').last
    expect(streaming).to_contain_text("Thinking slowly.")
    expect(streaming).to_have_attribute("data-status", "streaming")
    chat.locator('[data-action="stop"]').click()
    answer = last_answer(chat, "stopped")
    expect(answer).to_contain_text("Thinking slowly.")
    expect(answer.locator(".chat-stopped")).to_have_text("Stopped: the answer ends here.")
    expect(chat.locator('[data-action="stop"]')).to_be_disabled()
    # A stopped answer can be asked again: a new version of it, the stopped one kept as the other.
    endpoint.script("e2e-stop", [{"events": [{"text": "All at once."}]}])
    answer.locator('[data-action="regenerate"]').click()
    again = last_answer(chat)
    expect(again).to_contain_text("All at once.")
    expect(again.locator("[data-branch]")).to_have_attribute("data-index", "2")
    again.locator('[data-action="branch-prev"]').click()
    expect(last_answer(chat, "stopped")).to_contain_text("Thinking slowly.")


def test_stop_while_the_model_writes_a_calls_arguments_tells_its_app_cancelled_and_never_gives_it_an_input(
    page: Page, allowing: Webhost, endpoint: ModelEndpointServer
) -> None:
    board_call(endpoint, "stop-args", title="Half", gate="stop-args")
    chat = open_chat(page, allowing, "stop-args")
    send(chat, "show the board")
    card = chat.locator('[data-chat-tool-call][data-tool="show_board"]')
    app = app_in(card)  # opened while the model is still writing the arguments
    expect(app.locator("#title")).to_have_text("Half", timeout=ANSWER_MS)  # drawn from the partial arguments
    chat.locator('[data-action="stop"]').click()
    expect(card).to_have_attribute("data-status", "error", timeout=ANSWER_MS)
    body = app.locator("body")
    expect(body).to_have_attribute("data-cancelled", "1", timeout=ANSWER_MS)
    endpoint.release("stop-args")
    last_answer(chat, "stopped")  # what it streamed is kept (contract §8.1)
    lines = [line.split(" ", 1)[0] for line in app.locator("#log").inner_text().splitlines() if line]
    assert "partial" in lines and lines[-1] == "cancelled", lines
    assert "input" not in lines, lines  # the arguments were never whole: no tool-input, not even an empty one
    expect(body).to_have_attribute("data-inputs", "0")


def test_an_endpoint_error_is_one_line_and_the_answer_can_be_retried(
    page: Page, allowing: Webhost, endpoint: ModelEndpointServer
) -> None:
    endpoint.script(
        "e2e-retry",
        [{"times": 1, "events": [{"status": 429, "retryAfter": 2}]}, {"events": [{"text": "Back again."}]}],
    )
    chat = open_chat(page, allowing, "retry")
    send(chat, "hello")
    failed = last_answer(chat, "error")
    expect(failed.locator(".chat-error")).to_contain_text("try again in 2 s")
    failed.locator('[data-action="retry"]').click()
    expect(last_answer(chat)).to_contain_text("Back again.")
    expect(chat.locator('[data-chat-message][data-role="assistant"]')).to_have_count(1)


def test_an_asked_call_shows_its_arguments_and_its_app_only_after_approval(
    page: Page, asking: Webhost, endpoint: ModelEndpointServer
) -> None:
    board_call(endpoint, "asked", title="Approve me")
    chat = open_chat(page, asking, "asked")
    send(chat, "show the board")
    card = chat.locator('[data-chat-tool-call][data-tool="show_board"]')
    expect(card).to_have_attribute("data-status", "approval", timeout=ANSWER_MS)
    approval = card.locator('[data-approval][data-kind="model-tool-call"]')
    expect(approval).to_contain_text("Approve me")
    expect(card.locator("iframe[data-app-frame]")).to_have_count(0)
    expect(page.locator('[data-approval][data-kind="model-tool-call"]')).to_have_count(1)  # not in the inbox too
    approval.locator('[data-action="allow"]').click()
    app = app_in(card)
    expect(app.locator("body")).to_have_attribute("data-results", "1", timeout=ANSWER_MS)
    expect(app.locator("body")).to_have_attribute("data-partials", "0")
    expect(app.locator("body")).to_have_attribute("data-inputs", "1")
    expect(card).to_have_attribute("data-status", "ok")
    last_answer(chat)


def test_a_denied_call_is_told_to_the_model_and_no_app_renders(
    page: Page, asking: Webhost, endpoint: ModelEndpointServer
) -> None:
    endpoint.script(
        "e2e-denied",
        [
            {
                "match": "look",
                "times": 1,
                "events": [{"tool": {"id": "l1", "name": "board__lookup", "args": ['{"q": "x"}']}}],
            },
            {
                "match": "board",
                "times": 1,
                "events": [
                    {"tool": {"id": "b1", "name": "board__show_board", "args": ['{"title": "No", "items": []}']}}
                ],
            },
            {"events": [{"text": "Understood."}]},
        ],
    )
    chat = open_chat(page, asking, "denied")
    send(chat, "show the board")
    card = chat.locator('[data-chat-tool-call][data-tool="show_board"]')
    card.locator('[data-approval] [data-action="deny"]').click()
    expect(card).to_have_attribute("data-status", "denied")
    expect(last_answer(chat)).to_contain_text("Understood.")
    expect(card.locator("iframe[data-app-frame]")).to_have_count(0)
    tool_messages = [m for m in requests_of(endpoint, "denied")[-1]["messages"] if m["role"] == "tool"]
    assert "denied" in json.dumps(tool_messages[-1])
    # Allow for this conversation: the next call of the same tool runs without asking.
    send(chat, "look it up")
    lookup = chat.locator('[data-chat-tool-call][data-tool="lookup"]')
    lookup.locator('[data-approval] input[name="remember"]').check()
    lookup.locator('[data-approval] [data-action="allow"]').click()
    expect(lookup).to_have_attribute("data-status", "ok")
    last_answer(chat)


def test_an_input_request_caused_by_the_models_call_is_shown_in_the_conversation(
    page: Page, allowing: Webhost, endpoint: ModelEndpointServer
) -> None:
    endpoint.script(
        "e2e-elicit",
        [
            {
                "match": "form",
                "times": 1,
                "events": [{"tool": {"id": "f1", "name": "elicit__form_defaults", "args": ["{}"]}}],
            },
            {"events": [{"text": "Thanks for the answers."}]},
        ],
    )
    chat = open_chat(page, allowing, "elicit")
    send(chat, "fill the form")
    card = chat.locator('[data-chat-tool-call][data-tool="form_defaults"]')
    form = card.locator('form[data-elicitation][data-mode="form"]')
    expect(form).to_be_visible(timeout=ANSWER_MS)
    expect(page.locator("form[data-elicitation]")).to_have_count(1)
    form.locator('[data-action="accept"]').click()
    expect(card).to_have_attribute("data-status", "ok")
    expect(last_answer(chat)).to_contain_text("Thanks for the answers.")


def test_a_persons_own_key_is_asked_for_once(page: Page, asking: Webhost, endpoint: ModelEndpointServer) -> None:
    endpoint.script("e2e-mine", [{"events": [{"text": "Your key works."}]}])
    chat = open_chat(page, asking, "mine")
    form = chat.locator('form[data-server-input][data-model="mine"]')
    expect(form).to_be_visible()
    form.locator('[name="llm_key"]').fill("sk-my-own-key")
    form.locator('[data-action="save"]').click()
    expect(form).to_have_count(0)
    send(chat, "hello")
    expect(last_answer(chat)).to_contain_text("Your key works.")
    assert endpoint.requests("e2e-mine")[-1]["headers"]["authorization"] == "Bearer sk-my-own-key"
    assert "sk-my-own-key" not in page.content()


def test_the_anthropic_wire_streams_too(page: Page, allowing: Webhost, endpoint: ModelEndpointServer) -> None:
    endpoint.script(
        "e2e-anthropic",
        [
            {
                "match": "look",
                "times": 1,
                "events": [{"tool": {"id": "t1", "name": "board__lookup", "args": ['{"q":', ' "zebra"}']}}],
            },
            {"events": [{"text": "Zebra found."}]},
        ],
    )
    chat = open_chat(page, allowing, "anthropic")
    send(chat, "look up zebra")
    expect(chat.locator('[data-chat-tool-call][data-tool="lookup"]')).to_have_attribute("data-status", "ok")
    expect(last_answer(chat)).to_contain_text("Zebra found.")


def test_conversations_are_listed_renamed_and_deleted(
    page: Page, allowing: Webhost, endpoint: ModelEndpointServer
) -> None:
    endpoint.script("e2e-text", [{"events": [{"text": "ok"}]}])
    chat = open_chat(page, allowing, "text")
    send(chat, "a conversation to rename")
    last_answer(chat)
    active = chat.locator('[data-conversation][data-active="true"]')
    conversation = active.get_attribute("data-conversation")
    active.locator('[data-action="rename"]').click()
    active.locator('input[name="title"]').fill("Renamed")
    active.locator('[data-action="save-title"]').click()
    expect(chat.locator(f'[data-conversation="{conversation}"]')).to_contain_text("Renamed")
    chat.locator('[data-action="new-conversation"]').click()
    expect(chat.locator("[data-chat-message]")).to_have_count(0)
    chat.locator(f'[data-conversation="{conversation}"] button').first.click()
    expect(chat.locator("[data-chat-message]")).to_have_count(2)
    chat.locator(f'[data-conversation="{conversation}"] [data-action="delete"]').click()
    chat.locator('[data-action="confirm-delete"]').click()
    expect(chat.locator(f'[data-conversation="{conversation}"]')).to_have_count(0)


def test_the_chat_on_a_phone_in_both_themes_has_no_serious_accessibility_problem(
    page: Page, allowing: Webhost, endpoint: ModelEndpointServer
) -> None:
    board_call(endpoint, "board", title="Phone")
    page.set_viewport_size({"width": 390, "height": 844})
    chat = open_chat(page, allowing, "board")
    send(chat, "show the board")
    app_in(chat.locator('[data-chat-tool-call][data-tool="show_board"]'))
    last_answer(chat)
    width = page.evaluate("() => document.documentElement.scrollWidth")
    assert width <= 390, f"the page is {width} px wide on a 390 px screen"
    problems: list[str] = []
    for theme in ("light", "dark"):
        set_theme(page, theme)
        problems += [f"[{theme}] {p}" for p in axe_problems(page)]
        shots = Path(__file__).resolve().parents[2] / "test-results" / "screenshots"
        shots.mkdir(parents=True, exist_ok=True)
        page.screenshot(path=str(shots / f"chat-phone-{theme}.png"), full_page=True)
    assert not problems, "\n".join(problems)


def test_an_app_in_the_conversation_goes_fullscreen_and_back_and_keeps_running_out_of_view(
    page: Page, allowing: Webhost, endpoint: ModelEndpointServer
) -> None:
    board_call(endpoint, "board", title="Wide")
    chat = open_chat(page, allowing, "board")
    send(chat, "show the board")
    card = chat.locator('[data-chat-tool-call][data-tool="show_board"]')
    app = app_in(card)
    expect(app.locator("body")).to_have_attribute("data-results", "1", timeout=ANSWER_MS)
    stage = card.locator(".wh-app-stage")
    card.locator('[data-app-action="fullscreen"]').click()
    expect(stage).to_have_attribute("data-display-mode", "fullscreen")
    box = stage.bounding_box()
    assert box is not None and box["x"] == 0 and box["y"] == 0
    expect(app.locator("#title")).to_have_text("Wide")  # the same app, not reloaded
    page.keyboard.press("Escape")
    expect(stage).to_have_attribute("data-display-mode", "inline")
    # The person goes to the workbench and back: the app kept running (same instance, same state).
    page.locator('[data-action="open-workbench"]').click()
    page.locator('[data-server="board"] [data-tool="lookup"]').click()
    expect(chat).to_be_hidden()
    expect(page.locator("iframe[data-app-frame]")).to_have_count(0)  # the chat's frame is out of the selectors
    page.locator('[data-action="open-chat"]').click()
    expect(app.locator("body")).to_have_attribute("data-inputs", "1")
    expect(app.locator("#title")).to_have_text("Wide")


def test_a_tab_that_opens_the_conversation_while_the_model_writes_gives_its_app_the_arguments_so_far(
    page: Page, allowing: Webhost, endpoint: ModelEndpointServer
) -> None:
    board_call(endpoint, "board", title="Second tab", gate="second-tab")
    chat = open_chat(page, allowing, "board")
    send(chat, "show the board")
    card = chat.locator('[data-chat-tool-call][data-tool="show_board"]')
    expect(app_in(card).locator("#title")).to_have_text("Second tab")
    conversation = chat.locator('[data-conversation][data-active="true"]').get_attribute("data-conversation")
    other = page.context.new_page()
    other.goto(f"{allowing.base_url}/#kind=chat&key={conversation}")
    other_card = other.locator('[data-testid="chat"] [data-chat-tool-call][data-tool="show_board"]')
    expect(other_card).to_have_attribute("data-status", "running")
    other_app = app_in(other_card)
    expect(other_app.locator("#title")).to_have_text("Second tab")  # from the snapshot's partial arguments
    expect(other_app.locator("body")).to_have_attribute("data-inputs", "0")
    endpoint.release("second-tab")
    for app in (app_in(card), other_app):
        expect(app.locator("body")).to_have_attribute("data-results", "1", timeout=ANSWER_MS)
        expect(app.locator("body")).to_have_attribute("data-inputs", "1")
    other.close()
