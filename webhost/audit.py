"""Append-only audit log of what apps did and what people decided, in SQLite in the data folder.

Every app-initiated tool call, link, message, model-context update, permission decision and
effective CSP is one row. Rows are never updated or deleted by webhost.
"""

from __future__ import annotations

import csv
import io
import json
import sqlite3
import threading
import time
from pathlib import Path
from typing import Any

SCHEMA = """
CREATE TABLE IF NOT EXISTS audit (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    ts REAL NOT NULL,
    session TEXT,
    server TEXT,
    frame TEXT,
    kind TEXT NOT NULL,
    decision TEXT,
    summary TEXT,
    detail TEXT
);
CREATE INDEX IF NOT EXISTS audit_server ON audit(server, id);
CREATE TABLE IF NOT EXISTS granted_permissions (
    server TEXT NOT NULL,
    permission TEXT NOT NULL,
    granted INTEGER NOT NULL,
    ts REAL NOT NULL,
    PRIMARY KEY (server, permission)
);
"""

COLUMNS = ("id", "ts", "session", "server", "frame", "kind", "decision", "summary", "detail")


class AuditLog:
    def __init__(self, path: Path) -> None:
        path.parent.mkdir(parents=True, exist_ok=True)
        self.path = path
        self._lock = threading.Lock()
        self._db = sqlite3.connect(path, check_same_thread=False, isolation_level=None)
        self._db.execute("PRAGMA journal_mode=WAL")
        self._db.executescript(SCHEMA)

    def close(self) -> None:
        with self._lock:
            self._db.close()

    def record(
        self,
        kind: str,
        *,
        session: str | None = None,
        server: str | None = None,
        frame: str | None = None,
        decision: str | None = None,
        summary: str = "",
        detail: dict[str, Any] | None = None,
    ) -> dict[str, Any]:
        row = {"ts": time.time(), "session": session, "server": server, "frame": frame, "kind": kind,
               "decision": decision, "summary": summary[:500],
               "detail": json.dumps(detail, default=str)[:65536] if detail is not None else None}
        with self._lock:
            cursor = self._db.execute(
                "INSERT INTO audit (ts, session, server, frame, kind, decision, summary, detail) "
                "VALUES (:ts, :session, :server, :frame, :kind, :decision, :summary, :detail)", row)
        return {"id": cursor.lastrowid, **row, "detail": detail}

    def entries(
        self, *, server: str | None = None, limit: int = 500, before: int | None = None
    ) -> list[dict[str, Any]]:
        query = "SELECT " + ", ".join(COLUMNS) + " FROM audit WHERE 1=1"
        args: list[Any] = []
        if server:
            query += " AND server = ?"
            args.append(server)
        if before:
            query += " AND id < ?"
            args.append(before)
        query += " ORDER BY id DESC LIMIT ?"
        args.append(max(1, min(limit, 10_000)))
        with self._lock:
            rows = self._db.execute(query, args).fetchall()
        result = []
        for row in rows:
            entry = dict(zip(COLUMNS, row, strict=True))
            entry["detail"] = json.loads(entry["detail"]) if entry["detail"] else None
            result.append(entry)
        return result

    def export_csv(self, *, server: str | None = None) -> str:
        buffer = io.StringIO()
        writer = csv.writer(buffer)
        writer.writerow(COLUMNS)
        for entry in reversed(self.entries(server=server, limit=10_000)):
            writer.writerow([json.dumps(entry[c]) if c == "detail" else entry[c] for c in COLUMNS])
        return buffer.getvalue()

    # Permissions a person granted to a server's apps, remembered across sessions.

    def granted_permissions(self, server: str) -> set[str]:
        with self._lock:
            rows = self._db.execute(
                "SELECT permission FROM granted_permissions WHERE server = ? AND granted = 1", (server,)
            ).fetchall()
        return {row[0] for row in rows}

    def set_permission(self, server: str, permission: str, granted: bool) -> None:
        with self._lock:
            self._db.execute(
                "INSERT INTO granted_permissions (server, permission, granted, ts) VALUES (?, ?, ?, ?) "
                "ON CONFLICT(server, permission) DO UPDATE SET granted = excluded.granted, ts = excluded.ts",
                (server, permission, int(granted), time.time()))
