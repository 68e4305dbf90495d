"""Browser fixtures for end-to-end tests: sync Playwright on Playwright's Chromium or Debian's.

Choice order (shared/reference/peers.md §5.3): WEBHOST_CHROMIUM, Playwright's own installed build,
/usr/bin/chromium with offline flags; otherwise the tests are skipped with the fixes named.
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from playwright.sync_api import Browser, BrowserContext, Page, Playwright, sync_playwright

from tests.browser import chromium_launch_kwargs
from tests.helpers import Webhost


# Package scope, not session: the sync API keeps an event loop running in this thread while it is
# open, which would break every async test collected after tests/e2e.
@pytest.fixture(scope="package")
def playwright() -> Iterator[Playwright]:
    with sync_playwright() as p:
        yield p


@pytest.fixture(scope="package")
def browser(playwright: Playwright) -> Iterator[Browser]:
    browser = playwright.chromium.launch(headless=True, **chromium_launch_kwargs(playwright))
    yield browser
    browser.close()


@pytest.fixture
def context(browser: Browser) -> Iterator[BrowserContext]:
    context = browser.new_context(viewport={"width": 1400, "height": 1000})
    context.set_default_timeout(15_000)
    yield context
    context.close()


class ConsoleErrors(list[str]):
    """Console errors and uncaught page errors seen during a test."""


@pytest.fixture
def page(context: BrowserContext) -> Iterator[Page]:
    page = context.new_page()
    errors = ConsoleErrors()
    page.on("console", lambda m: errors.append(m.text) if m.type == "error" else None)
    page.on("pageerror", lambda e: errors.append(str(e)))
    page.console_errors = errors  # type: ignore[attr-defined]
    yield page


# The page defines no globals: main.js exports the running page ({rpc, apps, limits}) and importing
# the same module URL again returns that instance. Tests bind it as window.__page for their scripts.
BIND_PAGE_JS = """async () => {
  const main = document.querySelector('script[type="module"][src*="/js/main.js"]');
  window.__page = (await import(main.src)).page;
}"""


def bind_page(page: Page) -> None:
    """Bind window.__page (the running page's rpc and apps) and wait until its socket is open."""
    page.evaluate(BIND_PAGE_JS)
    page.wait_for_function("() => window.__page.rpc.state === 'open'")


def login(page: Page, host: Webhost) -> Page:
    """Open the login URL the way a person does; the cookie is set and the token leaves the address bar."""
    page.goto(f"{host.base_url}/?token={host.token}")
    page.wait_for_url(f"{host.base_url}/")
    return page
