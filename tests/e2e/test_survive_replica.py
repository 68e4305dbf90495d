"""In the browser: the replica holding the page dies; the page shows the connection notice, and on the
other replica (same data folder, same token) the person finds their 2026-07-28 input request asked
again (answering it gives the tool's result there) and their running call reported as interrupted."""

from __future__ import annotations

import signal
import time
from pathlib import Path
from typing import Any

from playwright.sync_api import Page, expect

from tests.e2e.conftest import login
from tests.integration.test_survive_replica import live_calls, shared_elicit_server, two_replicas
from tests.support.process import stdio_server
from webhost.testing.page import WebhostPage


def test_the_page_on_another_replica_resumes_the_question_and_reports_the_interrupted_call(
    tmp_path: Path, page: Page, ui: WebhostPage
) -> None:
    with shared_elicit_server(tmp_path) as url:
        servers = {"elicit": {"type": "http", "url": url}, "basic": stdio_server("basic")}
        with two_replicas(tmp_path, servers) as (a, b):
            login(page, a)
            ui.open_tool("basic", "hang")
            page.locator('[data-testid="call-tool"]').click()
            expect(page.locator('[data-testid="tool-result"]')).to_have_attribute("data-status", "pending")
            ui.open_tool("elicit", "form_defaults")
            page.locator('[data-testid="call-tool"]').click()
            asked = ui.elicitation("elicit", "form")
            expect(asked.locator).not_to_have_attribute("data-resumed", "true")
            # Both calls are written down (the journal writes in the background) before A dies.
            deadline = time.monotonic() + 20
            while not _recorded(live_calls(a.data_dir)):
                assert time.monotonic() < deadline, live_calls(a.data_dir)
                time.sleep(0.05)

            a.proc.send_signal(signal.SIGKILL)
            a.proc.wait(timeout=20)
            banner = page.locator('[data-testid="connection-banner"]')
            expect(banner).to_be_visible()
            expect(banner).to_contain_text("Disconnected from webhost")
            expect(page.locator("html")).not_to_have_attribute("data-connection", "open")

            login(page, b)
            again = ui.elicitation("elicit", "form", timeout=30_000)
            expect(again.locator).to_have_attribute("data-resumed", "true")
            expect(again.locator.locator("[data-resumed-note]")).to_be_visible()
            expect(again.locator).to_contain_text("form_defaults")

            # The interrupted call is shown in its tool's result area when that tool is opened.
            ui.open_tool("basic", "hang")
            hung = page.locator('[data-testid="tool-result"]')
            expect(hung).to_have_attribute("data-interrupted", "true")
            expect(hung).to_have_attribute("data-status", "error")
            expect(hung).to_contain_text("interrupted: the webhost process running this call stopped")

            ui.open_tool("elicit", "form_defaults")
            again.accept()
            done = page.locator('[data-testid="tool-result"]')
            expect(done).to_have_attribute("data-resumed", "true")
            expect(done).to_have_attribute("data-status", "ok")
            expect(done).to_contain_text("Ada Lovelace")
            log = page.locator('[data-testid="activity-log"]')
            expect(log).to_contain_text("resumed here after the webhost process running it stopped")
            expect(log).to_contain_text("hang: interrupted")
            expect(banner).to_be_hidden()


def _recorded(rows: list[dict[str, Any]]) -> bool:
    """The running call and the one waiting on its input round, as rows of replica A."""
    return sorted((r["name"], r["sealed_round"] is not None) for r in rows) == [
        ("form_defaults", True),
        ("hang", False),
    ]
