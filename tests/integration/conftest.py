"""Integration tests share one event loop per module, so a module can keep one browser session open."""

from __future__ import annotations

import pytest


@pytest.fixture(scope="module")
def anyio_backend() -> str:
    return "asyncio"
