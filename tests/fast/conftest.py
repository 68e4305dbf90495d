"""The fast suites: webhost in-process (tests/support/inprocess.py), no browser, and the storage on both
database engines. Tests marked `postgres` need a real PostgreSQL, those marked `peers` the npm identity and
authorization servers (tests/peers/node_modules); `pytest tests/fast -m "not postgres and not peers"` needs
neither."""

from __future__ import annotations

import pytest


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"
