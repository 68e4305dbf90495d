"""tests/deploy run under scripts/test-deploy (a private Docker engine, the image built): the browser fixtures are
tests/e2e's (Debian's Chromium through Playwright, webhost.testing.browser)."""

from __future__ import annotations

from tests.e2e.conftest import browser, context, page, playwright, ui, webhost_browser, webhost_playwright
from webhost.testing.plugin import webhost_context

__all__ = [
    "browser",
    "context",
    "page",
    "playwright",
    "ui",
    "webhost_browser",
    "webhost_context",
    "webhost_playwright",
]
