"""What a write-behind owes the database, kept in a local file until it is stored: a SIGKILL loses none of it.

A writer that answers before it writes (the call history, the audit log's outcome rows) appends each row here
first, one line written with one `write(2)` to a file of its own in the data folder (`DATA_DIR/spool/`), and
marks the rows settled once their transaction has committed. What the kernel was given survives the process,
whatever kills it; only the machine itself stopping (power, a kernel panic) can lose the last lines, which are
not synced to the disk on every row (that would cost every call a disk flush).

Each file is held under an exclusive `flock` for its process's life, so that another process sharing the data
folder knows whether its owner is still there. At start, `left_over` finds the files whose owner is gone and
gives their unsettled rows back, to be stored by the new process; a file is deleted once they are. A row that
committed just before a SIGKILL, in the instant before its mark was written, is given back too: the writers
look for it before storing it again (`stored_already` in storage/audit.py and storage/history.py).
The file starts again empty whenever nothing in it is owed.

Lines are JSON: `{"n": SEQ, "row": ROW}` for a row, `{"done": [SEQ, ...]}` for rows settled.
"""

from __future__ import annotations

import contextlib
import fcntl
import json
import logging
import os
import secrets
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from webhost.observability.watched import watch_spool

logger = logging.getLogger(__name__)

FOLDER = "spool"
COMPACT_OVER = 256 * 1024  # bytes: a file this large with nothing owed starts again empty


@dataclass(frozen=True)
class LeftOver:
    """The rows a gone process still owed the database, from one of its files (held locked until `forget`)."""

    path: Path
    rows: list[dict[str, Any]]
    _fd: int

    def forget(self) -> None:
        """Its rows are stored: delete the file."""
        with contextlib.suppress(OSError):
            self.path.unlink()
        self.release()

    def release(self) -> None:
        """Its rows could not be stored: leave the file for the next start."""
        with contextlib.suppress(OSError):
            os.close(self._fd)


class Spool:
    """One process's file of rows owed to the database, for one writer (`kind`: "history", "audit")."""

    def __init__(self, data_dir: Path, kind: str) -> None:
        self.folder = data_dir / FOLDER
        self.kind = kind
        self.path: Path | None = None
        self._fd: int | None = None
        self._next = 1
        self._owed: dict[int, bytes] = {}  # each owed row's line, to carry it into a compacted file
        self._size = 0
        self.failed = False  # the file could not be written: rows are kept in memory only (logged once)
        watch_spool(self)  # its depth, for /metrics

    def open(self) -> None:
        """Create this process's file, owner-only, and hold its lock."""
        try:
            self.path, self._fd = self._new_file()
        except OSError as exc:
            self._fail(exc)

    def _new_file(self) -> tuple[Path, int]:
        self.folder.mkdir(parents=True, exist_ok=True, mode=0o700)
        path = self.folder / f"{self.kind}-{secrets.token_hex(8)}.jsonl"
        flags = os.O_CREAT | os.O_EXCL | os.O_WRONLY | os.O_APPEND | getattr(os, "O_CLOEXEC", 0)
        fd = os.open(path, flags | getattr(os, "O_NOFOLLOW", 0), 0o600)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:
            os.close(fd)
            raise
        return path, fd

    def add(self, row: dict[str, Any]) -> int:
        """Keep a row until it is marked settled; its number, for `settled`."""
        seq = self._next
        self._next += 1
        line = _line({"n": seq, "row": row})
        self._owed[seq] = line
        self._append(line)
        return seq

    def settled(self, seqs: list[int]) -> None:
        """These rows are in the database (or never will be): they are no longer owed."""
        seqs = [seq for seq in seqs if self._owed.pop(seq, None) is not None]
        if not seqs:
            return
        if self._size > COMPACT_OVER and self._compact():
            return
        self._append(_line({"done": seqs}))

    def _compact(self) -> bool:
        """A new file with only the rows still owed, then the old one deleted: a kill between the two leaves
        both (rows given back twice, stored once: `stored_already`)."""
        if self._fd is None or self.path is None:
            return False
        try:
            if not self._owed:
                os.ftruncate(self._fd, 0)  # appends go on at the new end
                self._size = 0
                return True
            path, fd = self._new_file()
        except OSError as exc:
            logger.warning("%s: cannot compact %s: %s", self.kind, self.path, exc)
            return False
        old_path, old_fd = self.path, self._fd
        self.path, self._fd, self._size = path, fd, 0
        for line in self._owed.values():
            self._append(line)
        if self._fd is not None:
            with contextlib.suppress(OSError):
                old_path.unlink()
        with contextlib.suppress(OSError):
            os.close(old_fd)
        return True

    @property
    def owed(self) -> int:
        return len(self._owed)

    def close(self) -> None:
        """Stop: the file goes if nothing in it is owed, else it stays for the next start (its lock released)."""
        if self._fd is None:
            return
        if not self._owed and self.path is not None:
            with contextlib.suppress(OSError):
                self.path.unlink()
        with contextlib.suppress(OSError):
            os.close(self._fd)
        self._fd = None

    def _append(self, line: bytes) -> None:
        if self._fd is None:
            return
        try:
            written = os.write(self._fd, line)
            while written < len(line):  # a regular file takes the whole line unless the disk is full
                written += os.write(self._fd, line[written:])
        except OSError as exc:
            self._fail(exc)
            return
        self._size += len(line)

    def _fail(self, exc: OSError) -> None:
        if not self.failed:
            logger.error(
                "%s: cannot keep the rows owed to the database in %s (%s): a SIGKILL would lose them",
                self.kind,
                self.folder,
                exc,
            )
        self.failed = True
        if self._fd is not None:
            with contextlib.suppress(OSError):
                os.close(self._fd)
            self._fd = None


def _line(record: dict[str, Any]) -> bytes:
    return (json.dumps(record, separators=(",", ":"), ensure_ascii=True) + "\n").encode("ascii")


def left_over(data_dir: Path, kind: str) -> Iterator[LeftOver]:
    """The files of `kind` whose process is gone, each with the rows it still owed (oldest first); each is held
    locked until the caller forgets or releases it. A last line cut short by the kill is skipped."""
    folder = data_dir / FOLDER
    try:
        paths = sorted(folder.glob(f"{kind}-*.jsonl"), key=lambda p: p.stat().st_mtime)
    except OSError:
        return
    for path in paths:
        try:
            fd = os.open(path, os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_CLOEXEC", 0))
        except OSError:
            continue
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:  # its process is alive (or another is taking it over right now)
            os.close(fd)
            continue
        try:
            with os.fdopen(os.dup(fd), "rb") as file:
                rows = _owed_rows(file.read())
        except OSError as exc:
            logger.error("%s: cannot read %s: %s", kind, path, exc)
            os.close(fd)
            continue
        yield LeftOver(path, rows, fd)


def _owed_rows(data: bytes) -> list[dict[str, Any]]:
    rows: dict[int, dict[str, Any]] = {}
    for line in data.splitlines():
        try:
            record = json.loads(line)
        except ValueError:
            continue  # the line the kill cut short
        if not isinstance(record, dict):
            continue
        if isinstance(record.get("n"), int) and isinstance(record.get("row"), dict):
            rows[record["n"]] = record["row"]
        elif isinstance(record.get("done"), list):
            for seq in record["done"]:
                if isinstance(seq, int):
                    rows.pop(seq, None)
    return [rows[seq] for seq in sorted(rows)]
