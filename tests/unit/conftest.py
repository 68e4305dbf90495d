"""The quick loop: leaves, in-process, with no PostgreSQL, no Node and no browser (`pytest tests/unit`).

A test that needs the real database engines belongs in tests/fast (marked `postgres` there); these two
overrides make a test that asks for one here fail at once with where it goes, rather than start a server.
"""

from __future__ import annotations

import pytest

ELSEWHERE = "tests/unit runs without PostgreSQL: a test on both database engines belongs in tests/fast"


@pytest.fixture
def postgres() -> None:
    pytest.fail(ELSEWHERE)


@pytest.fixture
def database_url() -> None:
    pytest.fail(ELSEWHERE)
