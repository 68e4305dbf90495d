"""A value the person must provide for a server (`${input:ID}`, contract §4 and §6), in a real Chromium.

The server waits with `data-status="needs-input"` and the page shows `form[data-server-input]` with one
`[name=ID]` control (a password field for a secret); Save connects it, and the value never shows in the page.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from playwright.sync_api import Page, expect

from tests.e2e.conftest import login
from tests.support.process import run_webhost, stdio_server

pytestmark = pytest.mark.e2e

VALUE = "sk-e2e-4c8d2b7a19f05e36"


def test_filling_the_form_connects_the_server(tmp_path: Path, page: Page) -> None:
    entry = stdio_server("basic", env={"API_KEY": "${input:api_key}"})
    inputs = [{"type": "promptString", "id": "api_key", "description": "API key for keyed", "password": True}]
    with run_webhost(tmp_path, {"keyed": entry}, inputs=inputs) as host:
        login(page, host)
        card = page.locator('[data-server="keyed"]').first
        expect(card).to_have_attribute("data-status", "needs-input", timeout=30_000)
        form = page.locator('form[data-server-input][data-server="keyed"]')
        field = form.locator('[name="api_key"]')
        expect(field).to_have_attribute("type", "password")
        field.fill(VALUE)
        form.locator('[data-action="save"]').click()
        expect(card).to_have_attribute("data-status", "connected", timeout=30_000)
        expect(form).to_have_count(0)
        expect(card.locator('[data-tool="echo"]')).to_be_visible()

        page.reload()  # stored for this person: connected again, no form
        expect(page.locator('[data-server="keyed"]').first).to_have_attribute(
            "data-status", "connected", timeout=30_000
        )
        expect(page.locator("form[data-server-input]")).to_have_count(0)
        assert VALUE not in page.content()
        assert VALUE not in host.log_path.read_text(errors="replace")
        assert page.console_errors == []  # type: ignore[attr-defined]
