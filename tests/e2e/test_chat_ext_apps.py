"""The official ext-apps example servers from npm (tests/peers) in the conversation: the model (the scripted
endpoint) calls each one's tool, and its App opens and renders inline in the tool call's card; the ones that
draw from partial input get `tool-input-partial` while the model writes the arguments (issue 22 item 7);
app-only tools are never offered to the model.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
from playwright.sync_api import FrameLocator, Locator, Page, expect

from tests.e2e.test_chat_page import ANSWER_MS, APP_MS, last_answer, open_chat, send
from tests.support.model_endpoint import ModelEndpointServer, running_model_endpoint
from tests.support.process import Webhost, peer_server, run_webhost

pytestmark = [pytest.mark.e2e, pytest.mark.peers]

SERVERS = {
    "vanilla": peer_server("mcp-server-basic-vanillajs", "--stdio"),
    "react": peer_server("mcp-server-basic-react", "--stdio"),
    "debug": peer_server("mcp-server-debug", "--stdio"),
    "threejs": peer_server("mcp-threejs-server", "--stdio"),
}


@pytest.fixture(scope="module")
def endpoint() -> Iterator[ModelEndpointServer]:
    with running_model_endpoint() as server:
        yield server


@pytest.fixture(scope="module")
def host(tmp_path_factory: pytest.TempPathFactory, endpoint: ModelEndpointServer) -> Iterator[Webhost]:
    names = ("vanilla", "react", "debug", "threejs")
    models = [
        {"id": name, "api": "openai", "model": f"ext-{name}", "baseUrl": endpoint.openai_base_url, "apiKey": "k"}
        for name in names
    ]
    options = {"chat": {"models": models, "toolCalls": "allow"}}
    with run_webhost(tmp_path_factory.mktemp("chat-ext-apps"), SERVERS, webhost_options=options) as running:
        yield running


def chat_for(page: Page, host: Webhost, model: str) -> Locator:
    return open_chat(page, host, model, tuple(SERVERS))


def app_of(card: Locator) -> FrameLocator:
    expect(card.locator("iframe[data-app-frame]")).to_have_attribute("data-app-status", "ready", timeout=APP_MS)
    return card.frame_locator("iframe[data-app-frame]").frame_locator("iframe")


def sent_to_app(page: Page, card: Locator) -> list[str]:
    """The methods the page sent this card's App, in order (the bridge's trace)."""
    frame_id = card.locator("iframe[data-app-frame]").get_attribute("data-frame-id")
    trace: list[dict[str, Any]] = page.evaluate("(id) => window.__page.apps.debug.trace(id)", frame_id)
    return [str(t["msg"].get("method")) for t in trace if t["dir"] == "out" and t["msg"].get("method")]


@pytest.mark.parametrize("server", ["vanilla", "react"])
def test_a_basic_example_app_opens_and_renders_in_the_conversation(
    page: Page, host: Webhost, endpoint: ModelEndpointServer, server: str
) -> None:
    endpoint.script(
        f"ext-{server}",
        [
            {
                "match": "time",
                "times": 1,
                "events": [{"tool": {"id": "t1", "name": f"{server}__get-time", "args": ["{}"]}}],
            },
            {"events": [{"text": "That is the time."}]},
        ],
    )
    chat = chat_for(page, host, server)
    send(chat, "what time is it?")
    card = chat.locator(f'[data-chat-tool-call][data-server="{server}"][data-tool="get-time"]')
    app = app_of(card)
    app.get_by_text("Server Time:").wait_for(timeout=ANSWER_MS)
    expect(card).to_have_attribute("data-status", "ok")
    expect(last_answer(chat)).to_contain_text("That is the time.")
    sent = sent_to_app(page, card)
    assert sent.count("ui/notifications/tool-input") == 1 and "ui/notifications/tool-result" in sent


def test_the_debug_example_gets_partial_input_and_its_app_only_tools_are_not_offered(
    page: Page, host: Webhost, endpoint: ModelEndpointServer
) -> None:
    fragments = ['{"contentType": "text", "largeInput": "', "streaming ", "input"]
    endpoint.script(
        "ext-debug",
        [
            {
                "match": "debug",
                "times": 1,
                "events": [
                    {"tool": {"id": "d1", "name": "debug__debug-tool", "args": fragments}},
                    {"gate": "debug-partial"},
                    {"args": {"id": "d1", "fragment": ' for the debug app"}'}},
                ],
            },
            {"events": [{"text": "Debugged."}]},
        ],
    )
    chat = chat_for(page, host, "debug")
    send(chat, "run the debug tool")
    card = chat.locator('[data-chat-tool-call][data-server="debug"][data-tool="debug-tool"]')
    app = app_of(card)
    expect(app.locator("#event-log")).to_contain_text("ontoolinputpartial", timeout=ANSWER_MS)
    endpoint.release("debug-partial")
    expect(card).to_have_attribute("data-status", "ok", timeout=ANSWER_MS)
    expect(last_answer(chat)).to_contain_text("Debugged.")
    sent = sent_to_app(page, card)
    first_input = sent.index("ui/notifications/tool-input")
    assert "ui/notifications/tool-input-partial" in sent[:first_input]
    assert "ui/notifications/tool-input-partial" not in sent[first_input:]
    offered = {t["function"]["name"] for t in endpoint.requests("ext-debug")[0]["body"]["tools"]}
    assert "debug__debug-tool" in offered
    assert not {"debug__debug-refresh", "debug__debug-log"} & offered  # visibility ["app"]


def test_the_threejs_example_opens_while_its_code_streams(
    page: Page, host: Webhost, endpoint: ModelEndpointServer
) -> None:
    code = (
        "const scene = new THREE.Scene();\\nconst camera = new THREE.PerspectiveCamera(75, width / height, 0.1, 1000);"
    )
    endpoint.script(
        "ext-threejs",
        [
            {
                "match": "scene",
                "times": 1,
                "events": [
                    {"tool": {"id": "s1", "name": "threejs__show_threejs_scene", "args": ['{"code": "', code[:30]]}},
                    {"gate": "threejs-partial"},
                    {"args": {"id": "s1", "fragment": code[30:] + '"}'}},
                ],
            },
            {"events": [{"text": "A scene."}]},
        ],
    )
    chat = chat_for(page, host, "threejs")
    send(chat, "draw a scene")
    card = chat.locator('[data-chat-tool-call][data-server="threejs"][data-tool="show_threejs_scene"]')
    app_of(card)
    page.wait_for_function(
        """(id) => (window.__page.apps.debug.trace(id) || []).some(
             (t) => t.dir === "out" && t.msg.method === "ui/notifications/tool-input-partial")""",
        arg=card.locator("iframe[data-app-frame]").get_attribute("data-frame-id"),
        timeout=ANSWER_MS,
    )
    endpoint.release("threejs-partial")
    expect(card).to_have_attribute("data-status", "ok", timeout=ANSWER_MS)
    expect(last_answer(chat)).to_contain_text("A scene.")
