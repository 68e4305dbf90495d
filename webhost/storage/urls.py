"""Which database URLs this version of webhost can use (import-light: config and settings check with it)."""

from __future__ import annotations

from pathlib import Path

SQLITE_PREFIX = "sqlite+aiosqlite://"
DEFAULT_FILE = "webhost.sqlite3"


def database_url_problem(url: str) -> str | None:
    """Why `url` cannot be used (one line), or None when it can."""
    scheme = url.split("://", 1)[0].lower() if "://" in url else ""
    if scheme == "sqlite+aiosqlite":
        return None
    if scheme.startswith("postgres"):
        return (
            "PostgreSQL support is not in this version of webhost; leave it out (SQLite in the data "
            "folder) or use a sqlite+aiosqlite:///PATH URL"
        )
    return "must be a sqlite+aiosqlite:///PATH URL (PostgreSQL support is not in this version of webhost)"


def database_url(configured: str | None, data_dir: Path) -> str:
    """The URL to open: the configured one, else SQLite in the data folder."""
    if configured:
        problem = database_url_problem(configured)
        if problem:
            raise ValueError(problem)
        return configured
    return f"{SQLITE_PREFIX}/{(data_dir / DEFAULT_FILE).resolve()}"
