"""The pytest plugin (entry point ``pytest11: webhost``). Opt-in: it only defines fixtures and a marker.

Fixtures:

- ``webhost_factory``: call it with a configuration (dict, path, or None for the embedded demo) to start
  ``webhost serve``; every webhost it started is stopped after the test.
- ``webhost``: one running webhost for the test, configured by ``@pytest.mark.webhost(CONFIG)`` (a dict
  or a path relative to the test file); without the marker, the embedded demo.
- ``webhost_browser``: a headless Chromium with the flags MCP Apps need (module scope).
- ``webhost_context``: a fresh browser context (function scope).
- ``webhost_page``: a WebhostPage signed in to ``webhost``.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import ExitStack
from pathlib import Path
from typing import Any

import pytest
from playwright.sync_api import Browser, BrowserContext, Playwright, sync_playwright

from webhost.testing.browser import NoChromium, launch_chromium
from webhost.testing.host import Config, Webhost, start_webhost
from webhost.testing.page import WebhostPage

WebhostFactory = Callable[..., Webhost]

VIEWPORT = {"width": 1400, "height": 1000}
DEFAULT_TIMEOUT_MS = 15_000


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line(
        "markers",
        "webhost(config): the configuration (dict or path) the `webhost` fixture serves; without it, the embedded demo",
    )


@pytest.fixture
def webhost_factory(tmp_path: Path) -> Iterator[WebhostFactory]:
    """Start `webhost serve` on free ports: ``webhost_factory(config, args=[...], env={...}, token=...)``."""
    with ExitStack() as stack:
        count = 0

        def start(config: Config = None, **options: Any) -> Webhost:
            nonlocal count
            count += 1
            options.setdefault("directory", tmp_path / f"webhost-{count}")
            return stack.enter_context(start_webhost(config, **options))

        yield start


def _marked_config(request: pytest.FixtureRequest) -> Config:
    marker = request.node.get_closest_marker("webhost")
    if marker is None:
        return None
    config = marker.args[0] if marker.args else marker.kwargs.get("config")
    if isinstance(config, str | Path) and not Path(config).is_absolute():
        beside = Path(str(request.node.path)).parent / config
        if beside.exists():
            return beside
    return config  # type: ignore[no-any-return]


@pytest.fixture
def webhost(request: pytest.FixtureRequest, webhost_factory: WebhostFactory) -> Webhost:
    """A running webhost configured by ``@pytest.mark.webhost(CONFIG)`` (else the embedded demo)."""
    return webhost_factory(_marked_config(request))


# Module scope, not session: the sync API keeps an event loop running in this thread while it is open,
# which would break async tests collected after the browser tests.
@pytest.fixture(scope="module")
def webhost_playwright() -> Iterator[Playwright]:
    with sync_playwright() as playwright:
        yield playwright


@pytest.fixture(scope="module")
def webhost_browser(webhost_playwright: Playwright) -> Iterator[Browser]:
    """Headless Chromium: WEBHOST_CHROMIUM, Playwright's own build or /usr/bin/chromium (else skipped)."""
    try:
        browser = launch_chromium(webhost_playwright)
    except NoChromium as exc:
        pytest.skip(str(exc))
    yield browser
    browser.close()


@pytest.fixture
def webhost_context(webhost_browser: Browser) -> Iterator[BrowserContext]:
    context = webhost_browser.new_context(viewport=VIEWPORT)  # type: ignore[arg-type]
    context.set_default_timeout(DEFAULT_TIMEOUT_MS)
    yield context
    context.close()


@pytest.fixture
def webhost_page(webhost_context: BrowserContext, webhost: Webhost) -> WebhostPage:
    """The page object, signed in to ``webhost`` (``.page`` is the Playwright page)."""
    return WebhostPage(webhost_context.new_page(), webhost).sign_in()
