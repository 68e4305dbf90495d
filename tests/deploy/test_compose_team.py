"""docker-compose.team.yml as docs/deploy.md runs it (`docker compose -f docker-compose.team.yml up -d`), with
tests/deploy/team.override.yml swapping in self-signed TLS files and the test's servers.json: PostgreSQL, two
replicas, nginx on https://webhost.localhost (published on 127.0.0.1:443) and https://<label>.apps.localhost.

Two people sign in through a signing-in proxy's header (proxy mode: the browser context sends X-Forwarded-Email,
as oauth2-proxy in front of nginx would), call a tool, open an App, and have a chat turn with the scripted model
endpoint (a service on the stack's network). Then the replica holding a person's WebSocket is `docker kill`ed
while their call to tests/servers/elicit.py (over HTTP, another service: both replicas reach the same server, as
a remote one would be) waits on their second answer: the page reconnects through nginx to the other replica,
still signed in, the question is asked again there and answering it finishes the call with both answers; the
conversation is still there."""

from __future__ import annotations

import json
import re
import secrets
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest
from playwright.sync_api import Browser, BrowserContext, Locator, Page, expect

from tests.deploy.engine import container_logs, docker, wait_for, wait_healthy
from tests.deploy.stack import Stack, stack_up
from webhost.testing.page import WebhostPage

pytestmark = pytest.mark.deploy

PAGE = "https://webhost.localhost"
MODEL = "e2e-deploy"
MODEL_URL = "http://model:9000/v1"  # the override's `model` service
ELICIT_URL = "http://elicit:9001/mcp"  # the override's `elicit` service: one server both replicas reach
SCRIPTED = {"id": "scripted", "api": "openai", "model": MODEL, "baseUrl": MODEL_URL, "apiKey": "k"}
ANSWER = "Hello from the scripted model, through nginx."
ACCEPTED_SOCKET = re.compile(r'"WebSocket /ws(?:\?[^"]*)?" \[accepted\]')
RECONNECT_MS = 30_000
# webhost/journal.py: a SIGKILLed replica's calls are taken over once its heartbeat is 10 s old.
RESUME_MS = 45_000
REPLICAS = ("webhost-1", "webhost-2")


def make_tls(folder: Path) -> Path:
    """A self-signed certificate for the page's name and the apps' wildcard, readable by nginx (uid 101)."""
    folder.mkdir()
    subprocess.run(
        [
            "openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "2", "-subj", "/CN=webhost.localhost",
            "-addext", "subjectAltName=DNS:webhost.localhost,DNS:*.apps.localhost",
            "-keyout", str(folder / "privkey.pem"), "-out", str(folder / "fullchain.pem"),
        ],
        check=True, capture_output=True, timeout=60,
    )  # fmt: skip
    folder.chmod(0o755)
    for name in ("privkey.pem", "fullchain.pem"):
        (folder / name).chmod(0o644)
    return folder


def servers_json() -> dict[str, object]:
    return {
        "mcpServers": {
            "demo": {"command": "python", "args": ["-m", "webhost.demo.server"]},
            "elicit": {"type": "http", "url": ELICIT_URL},
        },
        "webhost": {
            # nginx reaches the replicas from the stack's network: one of Docker's default address pools.
            "auth": {
                "mode": "proxy",
                "userHeader": "X-Forwarded-Email",
                "trustedProxies": ["172.16.0.0/12", "192.168.0.0/16", "10.0.0.0/8"],
            },
            "chat": {"models": [SCRIPTED]},
        },
    }


@pytest.fixture(scope="module")
def team(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Stack]:
    folder = tmp_path_factory.mktemp("team")
    folder.chmod(0o755)
    servers = folder / "servers.json"
    servers.write_text(json.dumps(servers_json()))
    script = folder / "script.json"
    script.write_text(json.dumps({MODEL: [{"events": [{"text": ANSWER}]}]}))
    for path in (servers, script):
        path.chmod(0o644)
    env = {
        "WEBHOST_PAGE_HOST": "webhost.localhost",
        "WEBHOST_SANDBOX_DOMAIN": "apps.localhost",
        "WEBHOST_BIND_ADDRESS": "127.0.0.1",
        "POSTGRES_PASSWORD": secrets.token_hex(24),
        "WEBHOST_SECRET": secrets.token_hex(32),
        "WEBHOST_TOKEN": secrets.token_hex(24),
        "WEBHOST_TEST_TLS": str(make_tls(folder / "tls")),
        "WEBHOST_TEST_SERVERS": str(servers),
        "WEBHOST_TEST_MODEL_SCRIPT": str(script),
    }
    with stack_up("webhost-team", ["docker-compose.team.yml", "tests/deploy/team.override.yml"], env) as stack:
        wait_healthy(stack.container("nginx"))
        yield stack


def person(browser: Browser, email: str) -> BrowserContext:
    """A browser behind the signing-in proxy: every request carries the person's identity header."""
    return browser.new_context(ignore_https_errors=True, extra_http_headers={"X-Forwarded-Email": email})


def open_page(context: BrowserContext) -> WebhostPage:
    ui = WebhostPage(context.new_page())
    ui.page.goto(f"{PAGE}/")
    ui.wait_connected("demo")
    return ui


def sockets(stack: Stack) -> list[int]:
    """How many WebSockets each replica accepted (uvicorn logs each at info, on stderr)."""
    return [len(ACCEPTED_SOCKET.findall(container_logs(stack.container(name)))) for name in REPLICAS]


def sql(stack: Stack, query: str) -> str:
    return docker("exec", stack.container("postgres"), "psql", "-U", "webhost", "-d", "webhost", "-Atc", query)


def test_two_people_sign_in_call_a_tool_open_an_app_and_chat(team: Stack, browser: Browser) -> None:
    ada, grace = person(browser, "ada@example.com"), person(browser, "grace@example.com")
    try:
        for context, name in ((ada, "ada@example.com"), (grace, "grace@example.com")):
            ui = open_page(context)
            expect(ui.page.locator("[data-user]")).to_contain_text(name)
            ui.open_tool("demo", "divide")
            ui.fill(a=3, b=4)
            assert "0.75" in ui.call(expect="ok").text

        ui = WebhostPage(ada.pages[0])
        ui.open_tool("demo", "show_dashboard")
        ui.call(expect="ok")
        app = ui.app("demo")
        app.wait_ready()
        assert ".apps.localhost/" in (app.frame.get_attribute("src") or "")

        # The answer's paragraph: the message's own text also holds its buttons and a hidden "Stopped" notice.
        expect(chat_turn(grace.pages[0]).get_by_text(ANSWER, exact=True)).to_be_visible()
    finally:
        ada.close()
        grace.close()


def test_a_replica_killed_while_a_question_waits_the_person_moves_and_nothing_is_lost(
    team: Stack, browser: Browser
) -> None:
    context = person(browser, "lin@example.com")
    try:
        before = sockets(team)
        ui = open_page(context)
        page = ui.page
        opened = [now - then for now, then in zip(sockets(team), before, strict=True)]
        assert sorted(opened) == [0, 1], f"the page's one socket went to one replica: {opened}"
        holder, other = REPLICAS[opened.index(1)], REPLICAS[opened.index(0)]
        chat_turn(page)

        # The question comes from `elicit`, an HTTP server both replicas reach (a stdio server would be each
        # replica's own process: its question dies with the killed one). Round 1 is answered before the kill.
        ui.open_tool("elicit", "multi_round")
        ui.fill(rounds=2)
        page.locator('[data-testid="call-tool"]').click()
        first = ui.elicitation("elicit", "form")
        expect(first.locator).to_contain_text("Round 1 of 2")
        round_1 = wait_for(
            "round 1 in live_calls", lambda: waiting_round(team), seconds=20, detail=lambda: rounds(team)
        )
        first.answer({"answer": "one"})
        expect(ui.elicitation("elicit", "form").locator).to_contain_text("Round 2 of 2")
        # The waiting question is in the shared database (the journal writes it once it is a second old).
        wait_for(
            "round 2 in live_calls",
            lambda: True if waiting_round(team) not in (None, round_1) else None,
            seconds=20,
            detail=lambda: rounds(team),
        )
        other_before = sockets(team)[REPLICAS.index(other)]
        docker("kill", team.container(holder))

        # The page reconnects through nginx to the replica left, still signed in.
        wait_for(
            f"the page reconnected to {other}",
            lambda: True if sockets(team)[REPLICAS.index(other)] > other_before else None,
            seconds=RECONNECT_MS / 1000,
            detail=lambda: team.logs(other, "nginx"),
        )
        expect(page.locator("html")).to_have_attribute("data-connection", "open", timeout=RECONNECT_MS)
        expect(page.locator("[data-user]")).to_contain_text("lin@example.com")

        # Round 2 is asked again there; answering it finishes the call on the other replica, with both answers.
        again = ui.elicitation("elicit", "form", timeout=RESUME_MS)
        expect(again.locator).to_have_attribute("data-resumed", "true")
        expect(again.locator).to_contain_text("Round 2 of 2")
        ui.open_tool("elicit", "multi_round")
        again.answer({"answer": "two"})
        # Until the resumed call's outcome arrives, the tool's result is the page's own call, which ended in an
        # error when its socket closed: the resumed one is awaited, then read.
        resumed = page.locator('[data-testid="tool-result"][data-resumed="true"]')
        expect(resumed).to_have_attribute("data-status", "ok", timeout=RESUME_MS)
        result = ui.settled_result(expect="ok")
        assert "Resumed here after the webhost process running this call stopped." in result.text
        text = "\n".join(result.locator.locator('[data-content-type="text"]').all_inner_texts())
        assert json.loads(text) == {
            "rounds": 2,
            "answers": [
                {"action": "accept", "content": {"answer": "one"}},
                {"action": "accept", "content": {"answer": "two"}},
            ],
        }

        # The conversation written before the kill is still there.
        page.reload()
        page.locator('[data-action="open-chat"]').click()
        # Its title is the model's (chat.autoTitle), so the question is looked for inside it.
        page.locator('[data-testid="chat"] [data-conversation]').first.click()
        question = page.locator('[data-testid="chat"] [data-chat-message][data-role="user"]').first
        expect(question).to_contain_text("hello")
    finally:
        context.close()


def waiting_round(stack: Stack) -> str | None:
    """When the waiting question of the one live call was recorded, once it is (None before)."""
    found = sql(stack, "SELECT round_at FROM live_calls WHERE name = 'multi_round' AND sealed_round IS NOT NULL")
    return found or None


def rounds(stack: Stack) -> str:
    return sql(stack, "SELECT name, round_at, sealed_round IS NOT NULL FROM live_calls")


def chat_turn(page: Page) -> Locator:
    """Open the chat, pick the scripted model, say hello; the model's answer once it is done."""
    page.locator('[data-action="open-chat"]').click()
    chat = page.locator('[data-testid="chat"]')
    expect(chat).to_be_visible()
    chat.locator('select[name="model"]').select_option("scripted")
    box = chat.locator('textarea[data-testid="chat-input"]')
    box.fill("hello")
    box.press("Enter")
    answer = chat.locator('[data-chat-message][data-role="assistant"]').last
    expect(answer).to_have_attribute("data-status", "done", timeout=30_000)
    return answer
