"""How `webhost reload` finds a running `webhost serve` and hears back from it.

`serve` writes `webhost-PORT.pid` in its data folder (one per port, so replicas sharing a folder each have
theirs) and removes it when it stops. `webhost reload` sends that process SIGHUP; the process re-reads its
configuration and writes the outcome to `webhost-PORT.reload` (a JSON object: a number that counts the
reloads of this process, whether it applied, and the one line), which the CLI waits for and prints.
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass
from pathlib import Path


def pid_path(data_dir: Path, port: int) -> Path:
    return data_dir / f"webhost-{port}.pid"


def outcome_path(data_dir: Path, port: int) -> Path:
    return data_dir / f"webhost-{port}.reload"


@dataclass(frozen=True)
class Outcome:
    pid: int
    count: int
    applied: bool
    line: str


class PidFile:
    """The running process's pid file and its reload outcomes."""

    def __init__(self, data_dir: Path, port: int) -> None:
        self.pid = pid_path(data_dir, port)
        self.outcome = outcome_path(data_dir, port)
        self.count = 0

    def write(self) -> None:
        _replace(self.pid, f"{os.getpid()}\n")
        self.outcome.unlink(missing_ok=True)

    def remove(self) -> None:
        try:
            if read_pid(self.pid) == os.getpid():  # not another process's, started on the port since
                self.pid.unlink(missing_ok=True)
        except OSError:
            pass
        self.outcome.unlink(missing_ok=True)

    def reloaded(self, applied: bool, line: str) -> None:
        self.count += 1
        body = {"pid": os.getpid(), "count": self.count, "applied": applied, "line": line}
        _replace(self.outcome, json.dumps(body) + "\n")


def read_pid(path: Path) -> int | None:
    try:
        text = path.read_text(encoding="utf-8").strip()
    except FileNotFoundError:
        return None
    return int(text) if text.isdigit() else None


def read_outcome(path: Path) -> Outcome | None:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
        return Outcome(int(data["pid"]), int(data["count"]), bool(data["applied"]), str(data["line"]))
    except (FileNotFoundError, ValueError, KeyError, TypeError):
        return None


def _replace(path: Path, text: str) -> None:
    """Written whole or not at all: a reader never sees half a file."""
    temporary = path.with_name(path.name + f".{os.getpid()}.tmp")
    temporary.write_text(text, encoding="utf-8")
    os.replace(temporary, path)
