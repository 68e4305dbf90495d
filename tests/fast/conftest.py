"""The fast suites: webhost in-process (tests/support/inprocess.py), no subprocess, no browser."""

from __future__ import annotations

import pytest


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"
