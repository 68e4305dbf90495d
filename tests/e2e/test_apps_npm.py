"""The real ext-apps example servers from npm, through the page, over stdio and over Streamable HTTP.

`@modelcontextprotocol/server-basic-vanillajs` (a ~218 KB App) and `@modelcontextprotocol/server-basic-react`
(a ~414 KB React App) each have one tool, `get-time`, whose App draws the time the tool returned. For each
transport one webhost runs with both servers (module-scoped, parametrized); each test calls `get-time`
from the tool form and checks the frame's contract attributes and what the App drew.

    stdio: `mcp-server-basic-… --stdio`        HTTP: `PORT=… mcp-server-basic-…` → http://127.0.0.1:PORT/mcp
"""

from __future__ import annotations

import contextlib
import re
from collections.abc import Iterator
from typing import Any

import pytest
from playwright.sync_api import Page

from tests.e2e.conftest import login
from tests.support.process import PEER_BIN, PEERS, Webhost, http_process, peer_server, peers_installed, run_webhost

BINS = {"vanilla": "mcp-server-basic-vanillajs", "react": "mcp-server-basic-react"}
RESOURCE_URI = "ui://get-time/mcp-app.html"
ISO_TIME = re.compile(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(?:\.\d+)?Z")

pytestmark = [
    pytest.mark.e2e,
    pytest.mark.peers,
    pytest.mark.skipif(
        not peers_installed() or not all((PEER_BIN / b).exists() for b in BINS.values()),
        reason="npm peers not installed: run `npm ci` in tests/peers (needs the ext-apps basic example servers)",
    ),
]


@pytest.fixture(scope="module", params=["stdio", "http"])
def host(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Webhost]:
    transport: str = request.param
    tmp = tmp_path_factory.mktemp(f"apps-npm-{transport}")
    with contextlib.ExitStack() as stack:
        servers: dict[str, Any] = {}
        for name, bin_name in BINS.items():
            if transport == "stdio":
                servers[name] = peer_server(bin_name, "--stdio")
            else:
                url = stack.enter_context(
                    http_process([str(PEER_BIN / bin_name)], cwd=PEERS, log_path=tmp / f"{name}.log")
                )
                servers[name] = {"type": "http", "url": url}
        yield stack.enter_context(run_webhost(tmp, servers))


@pytest.mark.parametrize("server", list(BINS))
def test_get_time_app(page: Page, host: Webhost, server: str) -> None:
    login(page, host)
    page.wait_for_selector(f'[data-server="{server}"][data-status="connected"]', timeout=30_000)
    page.click(f'[data-server="{server}"] [data-tool="get-time"]')
    page.click('[data-testid="call-tool"]')

    frame = page.locator(f'iframe[data-app-frame][data-server="{server}"]')
    frame.and_(page.locator('[data-app-status="ready"]')).wait_for(timeout=30_000)
    assert frame.get_attribute("data-resource-uri") == RESOURCE_URI

    result = page.locator('[data-testid="tool-result"][data-status="ok"]')
    result.wait_for(timeout=30_000)
    match = ISO_TIME.search(result.text_content() or "")
    assert match, result.text_content()
    time_text = match.group(0)

    # The App drew the result it was given: the "Server Time" label and that very time.
    app = page.frame_locator(f'iframe[data-app-frame][data-server="{server}"]').frame_locator("iframe")
    app.get_by_text("Server Time").first.wait_for(timeout=30_000)
    app.get_by_text(time_text).first.wait_for(timeout=10_000)
    assert frame.get_attribute("data-app-status") == "ready"
