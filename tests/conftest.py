"""Shared pytest configuration: anyio on asyncio for async tests, the two database engines, and the
`postgres` marker on every test that uses the real PostgreSQL (`pytest -m "not postgres"` runs without one)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.support.postgres import Postgres, running_postgres

ENGINES = ["sqlite", pytest.param("postgresql", marks=pytest.mark.postgres)]


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """A test that names the `postgres` fixture needs the server: marked, as the postgresql engine is."""
    for item in items:
        if "postgres" in getattr(item, "fixturenames", ()):
            item.add_marker(pytest.mark.postgres)


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


@pytest.fixture(scope="session")
def postgres() -> Iterator[Postgres]:
    """One real PostgreSQL for the whole test session (started on first use)."""
    with running_postgres() as server:
        yield server


@pytest.fixture(params=ENGINES)
def database_url(request: pytest.FixtureRequest, tmp_path: Path) -> str:
    """A fresh, empty database on each engine: SQLite in tmp_path, or a new database on the shared PostgreSQL."""
    if request.param == "sqlite":
        return f"sqlite+aiosqlite:///{tmp_path / 'engine.sqlite3'}"
    server: Postgres = request.getfixturevalue("postgres")
    return server.new_database()
