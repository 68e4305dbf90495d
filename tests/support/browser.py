"""Which Chromium the browser tests launch, and with which flags: the logic lives in the package
(webhost.testing.browser, shared/reference/peers.md §5.3); here a missing Chromium skips the test.
"""

from __future__ import annotations

from typing import Any

import pytest
from playwright.sync_api import Playwright

from webhost.testing.browser import OFFLINE_ARGS, NoChromium
from webhost.testing.browser import chromium_launch_kwargs as _launch_kwargs

__all__ = ["OFFLINE_ARGS", "chromium_launch_kwargs"]


def chromium_launch_kwargs(playwright: Playwright) -> dict[str, Any]:
    try:
        return _launch_kwargs(playwright)
    except NoChromium as exc:
        pytest.skip(str(exc))
