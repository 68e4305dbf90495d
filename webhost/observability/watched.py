"""The objects whose state a scrape reads, noted by their owners when they are made (no import of the
metrics library: the storage layer notes its spools here and stays import-light)."""

from __future__ import annotations

import weakref
from typing import Protocol


class OwedRows(Protocol):
    """A spool: rows kept in this process's file until the database has them (storage/spool.py)."""

    kind: str

    @property
    def owed(self) -> int: ...


# Weak: a spool closed and dropped leaves the scrape with it.
SPOOLS: weakref.WeakSet[OwedRows] = weakref.WeakSet()


def watch_spool(spool: OwedRows) -> None:
    SPOOLS.add(spool)


def spool_depths() -> dict[str, int]:
    """Rows owed to the database, by spool kind (`audit`, `history`)."""
    depths: dict[str, int] = {}
    for spool in list(SPOOLS):
        depths[spool.kind] = depths.get(spool.kind, 0) + spool.owed
    return depths
