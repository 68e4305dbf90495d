"""docker-compose.yml as its header says to run it (`WEBHOST_TOKEN=… docker compose up`): the embedded demo on
the host's loopback (8700 the page, 8701 the apps' origins <label>.localhost:8701), in Chromium: /healthz, sign
in with the token, call a tool, open an App, answer an input request."""

from __future__ import annotations

import secrets
from collections.abc import Iterator
from dataclasses import dataclass

import httpx
import pytest
from playwright.sync_api import Page

from tests.deploy.engine import wait_healthy
from tests.deploy.stack import Stack, stack_up
from webhost.testing.page import WebhostPage

pytestmark = pytest.mark.deploy

BASE_URL = "http://127.0.0.1:8700"


@dataclass(frozen=True)
class Published:
    base_url: str
    token: str


@pytest.fixture(scope="module")
def single() -> Iterator[tuple[Stack, Published]]:
    token = secrets.token_hex(24)
    with stack_up("webhost-single", ["docker-compose.yml"], {"WEBHOST_TOKEN": token}) as stack:
        wait_healthy(stack.container("webhost"))
        yield stack, Published(BASE_URL, token)


def test_healthz_on_the_published_loopback_port(single: tuple[Stack, Published]) -> None:
    _, published = single
    answer = httpx.get(f"{published.base_url}/healthz", timeout=10)
    assert answer.status_code == 200
    assert httpx.get(f"{published.base_url}/", timeout=10).status_code == 401


def test_sign_in_call_a_tool_open_an_app_answer_an_input_request(
    single: tuple[Stack, Published], ui: WebhostPage, page: Page
) -> None:
    stack, published = single
    ui.sign_in(published)
    ui.wait_connected("demo")

    ui.open_tool("demo", "divide")
    ui.fill(a=1, b=4)
    assert "0.25" in ui.call(expect="ok").text

    ui.open_tool("demo", "show_dashboard")
    ui.call(expect="ok")
    app = ui.app("demo")
    app.wait_ready()
    assert ".localhost:8701/" in (app.frame.get_attribute("src") or ""), stack.logs()

    ui.open_tool("demo", "register_user")
    page.locator('[data-testid="call-tool"]').click()
    ui.elicitation("demo", "form").answer({"name": "Grace Hopper", "email": "grace@example.com", "age": 85})
    ui.elicitation("demo", "form").accept()  # the second round: confirm
    assert "Registered Grace Hopper <grace@example.com>" in ui.settled_result(expect="ok").text
    assert page.console_errors == []  # type: ignore[attr-defined]
