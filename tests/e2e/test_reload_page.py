"""`webhost reload` seen from the page (issue 29 item 5): in a real Chromium, a server removed from the file
disappears from the open page and a server added appears, without reloading the page (`servers/changed`); a model
added to the file appears in the open chat's model choice, and a chosen model removed gives way to one still
there, said in the chat (`chat/models`)."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import pytest
from playwright.sync_api import Page, expect

from tests.e2e.conftest import login
from tests.support.process import Webhost, run_webhost, stdio_server
from tests.support.reload import reload_cli

pytestmark = pytest.mark.e2e

CONNECT_MS = 30_000


@pytest.fixture
def host(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Webhost]:
    servers: dict[str, Any] = {"basic": stdio_server("basic"), "payroll": stdio_server("basic")}
    with run_webhost(tmp_path_factory.mktemp("reload-page"), servers) as running:
        yield running


def test_the_open_page_drops_a_removed_server_and_shows_an_added_one(page: Page, host: Webhost) -> None:
    login(page, host)
    payroll = page.locator('[data-server="payroll"]')
    expect(payroll).to_have_attribute("data-status", "connected", timeout=CONNECT_MS)
    payroll.locator('[data-tool="echo"]').click()  # its tool is open in the workbench
    expect(page.locator('[data-testid="call-tool"]')).to_be_visible()
    page.evaluate("() => { window.__sameDocument = true; }")  # gone if the page reloads

    assert host.config_path is not None
    document = json.loads(host.config_path.read_text())
    document["mcpServers"]["extra"] = document["mcpServers"].pop("payroll")
    host.config_path.write_text(json.dumps(document))
    done = reload_cli(host)
    assert done.returncode == 0, done.stderr

    expect(page.locator('[data-server="payroll"]')).to_have_count(0)
    expect(page.locator('[data-server="extra"]')).to_have_attribute("data-status", "connected", timeout=CONNECT_MS)
    expect(page.locator('[data-server="basic"]')).to_have_attribute("data-status", "connected")
    assert page.evaluate("() => window.__sameDocument === true")
    errors = list(page.console_errors)  # type: ignore[attr-defined]
    assert errors == [], errors


# Never asked: the model choice is what is checked (port 9 is discard).
FREE = {"id": "free", "api": "openai", "model": "local", "baseUrl": "http://127.0.0.1:9/v1"}
BIG = {"id": "big", "api": "openai", "model": "big-1", "baseUrl": "http://127.0.0.1:9/v1"}


@pytest.fixture
def chat_host(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Webhost]:
    servers: dict[str, Any] = {"basic": stdio_server("basic")}
    options = {"chat": {"models": [FREE]}}
    with run_webhost(tmp_path_factory.mktemp("reload-models"), servers, webhost_options=options) as running:
        yield running


def reload_with_models(host: Webhost, models: list[dict[str, Any]]) -> None:
    assert host.config_path is not None
    document = json.loads(host.config_path.read_text())
    document["webhost"]["chat"]["models"] = models
    host.config_path.write_text(json.dumps(document))
    done = reload_cli(host)
    assert done.returncode == 0, done.stderr


def test_the_open_chat_shows_an_added_model_and_leaves_a_removed_one(page: Page, chat_host: Webhost) -> None:
    login(page, chat_host)
    page.locator('[data-action="open-chat"]').click()
    chat = page.locator('[data-testid="chat"]')
    model = chat.locator('select[name="model"]')
    expect(model).to_have_value("free")
    page.evaluate("() => { window.__sameDocument = true; }")  # gone if the page reloads

    reload_with_models(chat_host, [FREE, BIG])
    expect(model.locator('option[value="big"]')).to_have_count(1)
    expect(model).to_have_value("free")  # the choice made stays while it is offered
    model.select_option("big")

    reload_with_models(chat_host, [FREE])
    expect(model.locator("option")).to_have_count(1)
    expect(model).to_have_value("free")
    expect(chat.locator(".chat-notice")).to_contain_text("big is no longer available to you")
    expect(chat.locator('textarea[data-testid="chat-input"]')).to_be_enabled()
    assert page.evaluate("() => window.__sameDocument === true")
    errors = list(page.console_errors)  # type: ignore[attr-defined]
    assert errors == [], errors
