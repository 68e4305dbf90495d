"""Browser fixtures for end-to-end tests, from the package's pytest plugin (webhost.testing.plugin).

Chromium choice (shared/reference/peers.md §5.3, webhost.testing.browser): WEBHOST_CHROMIUM, Playwright's
own installed build, /usr/bin/chromium with offline flags; otherwise the tests are skipped with the fixes named.
`page` is a plain Playwright page (with `page.console_errors`); `ui` is the plugin's page object over it.
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from playwright.sync_api import Browser, BrowserContext, Page, Playwright, sync_playwright

from tests.support.browser import chromium_launch_kwargs
from webhost.testing.page import Host, WebhostPage
from webhost.testing.plugin import webhost_context

__all__ = ["webhost_context"]  # the plugin's fixture, used as is


# Package scope (the plugin's are module-scoped), not session: the sync API keeps an event loop running in
# this thread while it is open, which would break every async test collected after tests/e2e.
@pytest.fixture(scope="package")
def webhost_playwright() -> Iterator[Playwright]:
    with sync_playwright() as p:
        yield p


@pytest.fixture(scope="package")
def webhost_browser(webhost_playwright: Playwright) -> Iterator[Browser]:
    browser = webhost_playwright.chromium.launch(headless=True, **chromium_launch_kwargs(webhost_playwright))
    yield browser
    browser.close()


@pytest.fixture(scope="package")
def playwright(webhost_playwright: Playwright) -> Playwright:
    return webhost_playwright


@pytest.fixture(scope="package")
def browser(webhost_browser: Browser) -> Browser:
    return webhost_browser


@pytest.fixture
def context(webhost_context: BrowserContext) -> BrowserContext:
    return webhost_context


@pytest.fixture
def ui(context: BrowserContext) -> WebhostPage:
    """The plugin's page object on a new page (not signed in yet: `ui.sign_in(host)`)."""
    return WebhostPage(context.new_page())


@pytest.fixture
def page(ui: WebhostPage) -> Page:
    """The page object's Playwright page; `page.console_errors` lists console and uncaught page errors."""
    ui.page.console_errors = ui.console_errors  # type: ignore[attr-defined]
    return ui.page


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


def login(page: Page, host: Host) -> Page:
    """Open the login URL the way a person does; the cookie is set and the token leaves the address bar."""
    page.goto(f"{host.base_url}/?token={host.token}")
    page.wait_for_url(f"{host.base_url}/")
    return page
