"""Shared pytest configuration: anyio on asyncio for async tests, the two database engines, and the
`postgres` marker on every test that uses the real PostgreSQL (`pytest -m "not postgres"` runs without one)."""

from __future__ import annotations

import asyncio
import asyncio.runners
import logging
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.support.postgres import Postgres, running_postgres

ENGINES = ["sqlite", pytest.param("postgresql", marks=pytest.mark.postgres)]
LEFTOVER_SECONDS = 15.0  # how long a closing event loop waits for the tasks a test left behind

logger = logging.getLogger(__name__)


def _cancel_all_tasks_bounded(loop: asyncio.AbstractEventLoop) -> None:
    """`asyncio.Runner.close` (anyio's test runner) cancels every task left and waits for them all, without bound.
    SQLAlchemy's aiosqlite adapter can leave one that never ends: a connection invalidated in the middle of an
    operation is closed gracefully in a shielded task (`_terminate_graceful_close`) and, when that is cancelled,
    force-closed (`stop()`), after which the driver's thread never answers the shielded close. Under load the
    runner then hung until pytest-timeout failed that test, and "Runner is closed" failed the next one. Here the
    wait is bounded; what is still pending after it is named in the log and left, as a process exit would."""
    pending = asyncio.all_tasks(loop)
    if not pending:
        return
    for task in pending:
        task.cancel()
    done, stuck = loop.run_until_complete(asyncio.wait(pending, timeout=LEFTOVER_SECONDS))
    for task in stuck:
        logger.warning("a task left by the test did not end when cancelled: %r", task)
    for task in done:
        if not task.cancelled() and task.exception() is not None:
            loop.call_exception_handler(
                {
                    "message": "unhandled exception during the runner's shutdown",
                    "exception": task.exception(),
                    "task": task,
                }
            )


asyncio.runners._cancel_all_tasks = _cancel_all_tasks_bounded  # type: ignore[attr-defined]


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
