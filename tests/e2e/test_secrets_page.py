"""What the page shows of secrets, in a real Chromium (docs/security.md, "Secrets"; issue 24 item 1, issue 25 item 8).

A person's own results are theirs: a tool that answers with the person's own `${input:ID}` value shows it in
the result and in the history, live and after a reload. Names are never masked: a server named like a
configured value keeps `data-server="NAME"` and works. A server's own stderr still masks its secrets.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from playwright.sync_api import expect

from tests.support.process import run_webhost, stdio_server
from webhost.testing.page import WebhostPage

pytestmark = pytest.mark.e2e

VALUE = "sk-e2e-own-9d41c7"


def test_the_persons_own_value_shows_in_their_result_and_history(tmp_path: Path, ui: WebhostPage) -> None:
    entry = stdio_server("basic", env={"API_KEY": "${input:api_key}"})
    inputs = [{"type": "promptString", "id": "api_key", "description": "API key for keyed", "password": True}]
    with run_webhost(tmp_path, {"keyed": entry}, inputs=inputs) as host:
        page = ui.sign_in(host).page
        form = page.locator('form[data-server-input][data-server="keyed"]')
        form.locator('[name="api_key"]').fill(VALUE)
        form.locator('[data-action="save"]').click()
        ui.open_tool("keyed", "echo")
        ui.fill(text=f"mine: {VALUE}")
        result = ui.call("ok")
        expect(result.locator).to_contain_text(f"mine: {VALUE}")  # before: "mine: ***"

        page.reload()
        ui.wait_connected("keyed")
        entries = page.locator('[data-testid="history"] [data-history-entry]')
        expect(entries).to_have_count(1)
        expect(entries.first).to_contain_text(VALUE)  # the arguments, as the person gave them
        entries.first.locator('[data-action="show-result"]').click()
        expect(entries.first.locator('[data-testid="history-result"]')).to_contain_text(f"mine: {VALUE}")
        assert VALUE not in host.log_path.read_text(errors="replace")
        assert ui.console_errors == []


def test_a_server_named_like_a_configured_value_keeps_its_name(tmp_path: Path, ui: WebhostPage) -> None:
    servers = {
        "weather": stdio_server("basic", env={"CITY": "weather", "TOOL": "echo"}),
        "other": stdio_server("basic", env={"NEIGHBOUR": "weather"}),
    }
    with run_webhost(tmp_path, servers) as host:
        page = ui.sign_in(host).page
        ui.wait_connected("weather", "other")  # before: the card was data-server="***" and never matched
        expect(page.locator('[data-server="***"]')).to_have_count(0)
        ui.open_tool("weather", "echo")
        ui.fill(text="weather in the echo")
        result = ui.call("ok")
        expect(result.locator).to_contain_text("weather in the echo")
        assert ui.console_errors == []
