"""Chat-first (issue 28, item 1) in a real Chromium: with a model configured the chat is the landing view and the
conversation gets the screen; the workbench (servers, activity log) is a click away and works as before; the
address is followed in an open tab. One webhost with a model (the scripted endpoint), one without.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
from playwright.sync_api import FloatRect, Locator, Page, expect

from tests.e2e.conftest import login
from tests.e2e.test_chat_page import ANSWER_MS, app_in, board_call, last_answer, send
from tests.e2e.test_polish import SHOTS, axe_problems, set_theme
from tests.support.model_endpoint import ModelEndpointServer, running_model_endpoint
from tests.support.process import Webhost, run_webhost, stdio_server
from webhost.testing import WebhostPage

pytestmark = pytest.mark.e2e

CONNECT_MS = 30_000
SERVERS = {"board": stdio_server("chat_apps")}


@pytest.fixture(scope="module")
def endpoint() -> Iterator[ModelEndpointServer]:
    with running_model_endpoint() as server:
        yield server


@pytest.fixture(scope="module")
def host(tmp_path_factory: pytest.TempPathFactory, endpoint: ModelEndpointServer) -> Iterator[Webhost]:
    model = {"id": "layout", "api": "openai", "model": "e2e-layout", "baseUrl": endpoint.openai_base_url, "apiKey": "k"}
    # lookup asks (the approval's keyboard test); the board's other tools run without asking.
    options = {
        "chat": {"models": [model], "toolCalls": "allow"},
        "servers": {"board": {"modelTools": {"lookup": "ask"}}},
    }
    with run_webhost(tmp_path_factory.mktemp("chat-layout"), dict(SERVERS), webhost_options=options) as running:
        yield running


def landed(page: Page, host: Webhost) -> Locator:
    login(page, host)
    expect(page.locator('[data-server="board"][data-status="connected"]')).to_be_attached(timeout=CONNECT_MS)
    chat = page.locator('[data-testid="chat"]')
    expect(chat).to_be_visible()
    return chat


def box(locator: Locator) -> FloatRect:
    found = locator.bounding_box()
    assert found is not None, f"{locator} is not drawn"
    return found


def test_with_a_model_the_chat_is_the_landing_view_and_the_workbench_is_a_click_away(page: Page, host: Webhost) -> None:
    chat = landed(page, host)
    expect(page.locator('[data-action="open-chat"]')).to_have_attribute("aria-current", "page")
    # In the chat: no servers' sidebar, no activity log unless asked for.
    expect(page.locator('[data-server="board"][data-status]')).to_be_hidden()
    log = page.locator('[data-testid="activity-log"]')
    expect(log).to_be_hidden()
    activity = page.locator('[data-action="toggle-activity"]')
    activity.click()
    expect(log).to_be_visible()
    expect(activity).to_have_attribute("aria-pressed", "true")
    activity.click()
    expect(log).to_be_hidden()
    # The workbench, as it was: the servers, their tools, the activity log.
    page.locator('[data-action="open-workbench"]').click()
    expect(chat).to_be_hidden()
    expect(log).to_be_visible()
    expect(page.locator('[data-action="toggle-activity"]')).to_be_hidden()
    page.locator('[data-server="board"] [data-tool="lookup"]').click()
    expect(page.locator('[data-open-server="board"][data-open-tool="lookup"]')).to_be_visible()
    page.locator('[data-action="open-chat"]').click()
    expect(chat).to_be_visible()


def test_without_a_model_the_landing_view_stays_the_workbench(page: Page, tmp_path: Any) -> None:
    with run_webhost(tmp_path, dict(SERVERS)) as plain:
        login(page, plain)
        expect(page.locator('[data-server="board"][data-status="connected"]')).to_be_visible(timeout=CONNECT_MS)
        expect(page.locator(".welcome")).to_be_visible()
        expect(page.locator('[data-testid="activity-log"]')).to_be_visible()
        expect(page.locator('[data-testid="chat"]')).to_have_count(0)


def test_going_to_a_chat_address_in_an_open_tab_opens_it(
    page: Page, host: Webhost, endpoint: ModelEndpointServer
) -> None:
    endpoint.script("e2e-layout", [{"events": [{"text": "Noted."}]}])
    chat = landed(page, host)
    send(chat, "remember this")
    last_answer(chat)
    active = chat.locator('[data-conversation][data-active="true"]')
    conversation = active.get_attribute("data-conversation")
    assert conversation
    page.locator('[data-action="open-workbench"]').click()
    expect(chat).to_be_hidden()
    page.evaluate("() => { location.hash = '#kind=chat'; }")
    expect(chat).to_be_visible()
    page.evaluate("() => { location.hash = '#kind=audit'; }")
    expect(chat).to_be_hidden()
    page.evaluate("(id) => { location.hash = `#kind=chat&key=${id}`; }", conversation)
    expect(chat.locator(f'[data-conversation="{conversation}"]')).to_have_attribute("data-active", "true")
    expect(chat.locator("[data-chat-message]")).to_have_count(2)


@pytest.mark.parametrize(("width", "height"), [(1440, 900), (390, 844)])
def test_the_conversation_gets_the_screen_and_the_composer_covers_nothing(
    page: Page, host: Webhost, endpoint: ModelEndpointServer, width: int, height: int
) -> None:
    page.set_viewport_size({"width": width, "height": height})
    board_call(endpoint, "layout", title="Layout", then="\n\n".join(f"Line {n} of the answer." for n in range(40)))
    chat = landed(page, host)
    send(chat, "show the board")
    app_in(chat.locator('[data-chat-tool-call][data-tool="show_board"]'))
    answer = last_answer(chat)
    expect(answer).to_contain_text("Line 39 of the answer.")
    messages, composer = box(chat.locator(".chat-log")), box(chat.locator(".chat-composer"))
    # The messages take the screen: at 1440x900 they had about 765x430 px beside the servers and above the log.
    print(f"{width}x{height}: the messages get {messages['width']:.0f}x{messages['height']:.0f} px")
    assert messages["width"] >= width * (0.7 if width > 900 else 0.9)
    assert messages["height"] >= height * 0.55
    # The composer sits below the messages, never over them (what scrolls is the messages, above it).
    assert messages["y"] + messages["height"] <= composer["y"] + 0.5
    assert composer["y"] + composer["height"] <= height + 0.5
    page.wait_for_function("""() => { const w = document.querySelector('.chat-log');
      return w.scrollHeight - w.scrollTop - w.clientHeight < 2; }""")
    last_line = box(answer.get_by_text("Line 39 of the answer."))
    assert last_line["y"] + last_line["height"] <= composer["y"] + 0.5
    problems: list[str] = []
    for theme in ("light", "dark"):
        set_theme(page, theme)
        problems += [f"[{width}x{height} {theme}] {p}" for p in axe_problems(page)]
        SHOTS.mkdir(parents=True, exist_ok=True)
        page.screenshot(path=str(SHOTS / f"chat-layout-{width}x{height}-{theme}.png"))
    assert not problems, "\n".join(problems)


def test_on_a_phone_the_conversations_are_a_drawer(page: Page, host: Webhost, endpoint: ModelEndpointServer) -> None:
    page.set_viewport_size({"width": 390, "height": 844})
    endpoint.script("e2e-layout", [{"events": [{"text": "Kept."}]}])
    chat = landed(page, host)
    send(chat, "a conversation for the drawer")
    last_answer(chat)
    conversation = chat.locator('[data-conversation][data-active="true"]').get_attribute("data-conversation")
    conversations = chat.locator("#chat-conversations")
    expect(conversations).to_be_hidden()  # not 900 px above the chat: out of the way until asked for
    toggle = chat.locator('[data-action="toggle-conversations"]')
    toggle.click()
    expect(conversations).to_be_visible()
    expect(toggle).to_have_attribute("aria-expanded", "true")
    drawer = box(conversations)
    assert drawer["y"] < 844 and drawer["x"] == 0
    problems = [f"[drawer] {p}" for p in axe_problems(page)]
    page.screenshot(path=str(SHOTS / "chat-layout-390x844-drawer.png"))
    page.keyboard.press("Escape")
    expect(conversations).to_be_hidden()
    expect(toggle).to_be_focused()
    toggle.click()
    chat.locator('[data-action="new-conversation"]').click()
    expect(conversations).to_be_hidden()  # choosing closes the drawer
    expect(chat.locator("[data-chat-message]")).to_have_count(0)
    toggle.click()
    chat.locator(f'[data-conversation="{conversation}"] button').first.click()
    expect(conversations).to_be_hidden()
    expect(chat.locator("[data-chat-message]")).to_have_count(2, timeout=ANSWER_MS)
    assert not problems, "\n".join(problems)


def test_the_tools_picker_narrows_what_the_model_is_offered_and_is_kept_with_the_conversation(
    page: Page, host: Webhost, endpoint: ModelEndpointServer
) -> None:
    endpoint.script("e2e-layout", [{"events": [{"text": "Without the board."}]}])
    chat = landed(page, host)
    picker = chat.locator('[data-testid="chat-tools"]')
    picker.locator("summary").click()
    server = picker.locator('input[type="checkbox"][data-server]')
    expect(server).to_have_count(1)  # one per connected server
    expect(server).to_have_attribute("data-server", "board")
    expect(picker.locator('[data-tool="lookup"]')).to_be_checked()
    picker.locator('[data-tool="show_board"]').uncheck()
    expect(picker.locator("summary")).not_to_have_text("Tools")  # the count follows
    send(chat, "no apps please")
    last_answer(chat)
    names = {t["function"]["name"] for t in endpoint.requests("e2e-layout")[-1]["body"]["tools"]}
    assert "board__lookup" in names and "board__show_board" not in names
    # The choice went with the first message and is the conversation's: a reload shows it.
    page.reload()
    picker = page.locator('[data-testid="chat"] [data-testid="chat-tools"]')
    picker.locator("summary").click()
    expect(picker.locator('[data-tool="show_board"]')).not_to_be_checked()
    picker.locator('input[data-server="board"]').uncheck()
    expect(picker.locator('[data-tool="lookup"]')).to_be_disabled()
    problems = axe_problems(page)
    page.screenshot(path=str(SHOTS / "chat-layout-tools-picker.png"))
    send(page.locator('[data-testid="chat"]'), "and now?")
    expect(page.locator('[data-chat-message][data-role="assistant"]')).to_have_count(2, timeout=ANSWER_MS)
    last_answer(page.locator('[data-testid="chat"]'))
    assert not endpoint.requests("e2e-layout")[-1]["body"].get("tools")
    assert not problems, "\n".join(problems)


def lookup_twice(endpoint: ModelEndpointServer) -> None:
    """The model looks a word up (the approval), and once that is decided, again (a second approval)."""
    call = [{"tool": {"id": "l1", "name": "board__lookup", "args": ['{"q": "first"}']}}]
    again = [{"tool": {"id": "l2", "name": "board__lookup", "args": ['{"q": "second"}']}}]
    endpoint.script(
        "e2e-layout",
        [
            {"match": "look it up", "times": 1, "events": call},
            {"match": "denied", "times": 1, "events": again},
            {"events": [{"text": "Done."}]},
        ],
    )


def test_an_approval_takes_focus_enter_allows_escape_denies_and_both_are_announced(
    page: Page, host: Webhost, endpoint: ModelEndpointServer
) -> None:
    lookup_twice(endpoint)
    chat = landed(page, host)
    send(chat, "look it up")
    first = chat.locator('[data-chat-tool-call][data-tool="lookup"]').first
    expect(first).to_have_attribute("data-status", "approval", timeout=ANSWER_MS)
    approval = first.locator('[data-approval][data-kind="model-tool-call"]')
    expect(approval).to_be_focused()  # no Tab needed to reach it
    announcer = page.locator('[data-testid="approval-announcer"]')
    page.keyboard.press("Escape")
    expect(first).to_have_attribute("data-status", "denied")
    expect(announcer).to_have_attribute("aria-live", "assertive")
    expect(announcer).to_have_text("Denied: board's request.")
    # The denial goes back to the model (the turn goes on, Escape did not stop it); it asks again: Enter allows.
    second = chat.locator('[data-chat-tool-call][data-tool="lookup"]').nth(1)
    expect(second).to_have_attribute("data-status", "approval", timeout=ANSWER_MS)
    expect(second.locator("[data-approval]")).to_be_focused()
    page.keyboard.press("Enter")
    expect(second).to_have_attribute("data-status", "ok")
    expect(announcer).to_have_text("Allowed: board's request.")
    expect(last_answer(chat)).to_contain_text("Done.")


def test_an_approval_does_not_take_focus_from_someone_writing(
    page: Page, host: Webhost, endpoint: ModelEndpointServer
) -> None:
    # The call waits at a gate until the person has started writing: a card shown to an empty composer takes focus.
    call = [{"gate": "written"}, {"tool": {"id": "l1", "name": "board__lookup", "args": ['{"q": "first"}']}}]
    endpoint.script(
        "e2e-layout",
        [{"match": "look it up", "times": 1, "events": call}, {"events": [{"text": "Done."}]}],
    )
    chat = landed(page, host)
    send(chat, "look it up")
    box = chat.locator('textarea[data-testid="chat-input"]')
    box.type("a next question")
    endpoint.release("written")
    card = chat.locator('[data-chat-tool-call][data-tool="lookup"]').first
    expect(card).to_have_attribute("data-status", "approval", timeout=ANSWER_MS)
    expect(card.locator("[data-approval]")).to_be_visible()
    expect(box).to_be_focused()
    expect(box).to_have_value("a next question")
    card.locator('[data-action="deny"]').click()
    expect(card).to_have_attribute("data-status", "denied")


def test_the_testing_kit_opens_the_workbench_for_a_tool_when_the_page_lands_in_the_chat(
    page: Page, host: Webhost
) -> None:
    kit = WebhostPage(page, host).sign_in()
    expect(page.locator('[data-testid="chat"]')).to_be_visible()
    kit.open_tool("board", "lookup")
    result = kit.fill(q="kit").call(expect="ok")
    assert "kit: a word in the test dictionary" in result.text
