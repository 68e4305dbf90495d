"""The SQLite database file and its WAL and shared-memory files: created owner-only before SQLite opens them."""

from __future__ import annotations

import logging
import os
from pathlib import Path

logger = logging.getLogger(__name__)


def owner_only(database: Path) -> None:
    """Create (if absent) or tighten the database's three files to mode 0600, so neither the audit log nor
    the sessions are ever readable by others, not even between SQLite's creating a file and a chmod."""
    for suffix in ("", "-wal", "-shm"):
        _secure_file(database.with_name(database.name + suffix))


def _secure_file(path: Path) -> None:
    flags = os.O_CREAT | os.O_WRONLY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_CLOEXEC", 0)
    try:
        fd = os.open(path, flags, 0o600)
    except OSError as exc:  # read-only or someone else's file, or a symlink: SQLite opens it as it can
        logger.warning("database file %s: cannot make it owner-only: %s", path, exc)
        return
    try:
        os.fchmod(fd, 0o600)
    except OSError as exc:
        logger.warning("database file %s: cannot make it owner-only: %s", path, exc)
    finally:
        os.close(fd)
