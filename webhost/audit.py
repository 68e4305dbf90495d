"""Append-only audit log of what apps did and what people decided, in SQLite in the data folder.

Every app-initiated tool call, link, message, model-context update, permission decision and
effective CSP is one row. webhost never updates a row; it deletes only what the retention
settings (`webhost.audit`) say is too old or too many.

The log survives what is written into it: every stored `detail` is valid JSON no larger than the
per-row cap (oversized fields are replaced by `{"truncated": true, "preview": ..., "bytes": N}`),
rows that do not parse are read back marked unreadable, and each app frame and each person (by
their id; a row without a person, by its session) has a write budget beyond which rows are counted
and coalesced into one "rate limited" row. Every row names the person it belongs to (`user_id`,
`user_name`); a database from before that is migrated in place, its old rows keep no person.
A write that fails (disk full, read-only file) raises `AuditUnavailable`, so that callers refuse
what they cannot audit.
"""

from __future__ import annotations

import csv
import io
import json
import logging
import math
import os
import sqlite3
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from webhost.errors import POLICY_REFUSED, PolicyRefused, WebhostError
from webhost.people import Person

logger = logging.getLogger(__name__)

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
    detail TEXT,
    user_id TEXT,
    user_name TEXT
);
CREATE INDEX IF NOT EXISTS audit_server ON audit(server, id);
CREATE INDEX IF NOT EXISTS audit_ts ON audit(ts);
CREATE TABLE IF NOT EXISTS granted_permissions (
    server TEXT NOT NULL,
    permission TEXT NOT NULL,
    granted INTEGER NOT NULL,
    ts REAL NOT NULL,
    PRIMARY KEY (server, permission)
);
"""

# The person columns came later: they are last, so a CSV reader that counts columns keeps working.
COLUMNS = ("id", "ts", "session", "server", "frame", "kind", "decision", "summary", "detail", "user_id", "user_name")
PERSON_COLUMNS = ("user_id", "user_name")
RATE_LIMITED = "audit.rate-limited"
MAX_SUMMARY = 500
MAX_LABEL = 200  # session, server, frame, kind, decision, user_id, user_name
PREVIEW_CHARS = 1024
MAX_DEPTH = 32
COALESCE_SECONDS = 10.0  # at most one "rate limited" row per budget in this time while a flood lasts
QUIET_SECONDS = 1.0  # a budget that dropped nothing for this long has its "rate limited" row written
MAINTENANCE_SECONDS = 60.0
CSV_FORMULA_START = ("=", "+", "-", "@", "\t", "\r")


class AuditUnavailable(WebhostError):
    """The audit log cannot be written (disk full, read-only, corrupt): the action is refused."""

    code = POLICY_REFUSED


@dataclass(frozen=True)
class AuditLimits:
    """How large and how fast the log may grow (`webhost.audit` in the configuration file)."""

    retention_days: float | None = 90.0
    max_rows: int | None = 1_000_000
    max_row_bytes: int = 16 * 1024
    frame_rows_per_second: float = 10.0
    frame_burst: int = 100
    person_rows_per_second: float = 20.0
    person_burst: int = 300
    person_bytes_per_second: float = 64 * 1024
    person_burst_bytes: int = 4 * 1024 * 1024


# -- fitting a detail into the row -------------------------------------------------------------


def _sanitize(value: Any, depth: int = 0) -> Any:
    """Plain JSON values only: non-finite floats and unknown objects become strings; too deep is cut."""
    if isinstance(value, str) or value is None or isinstance(value, bool | int):
        return value
    if isinstance(value, float):
        return value if math.isfinite(value) else str(value)
    if depth >= MAX_DEPTH:
        return {"truncated": True, "preview": "(nested too deeply)", "bytes": None}
    if isinstance(value, dict):
        return {str(k): _sanitize(v, depth + 1) for k, v in value.items()}
    if isinstance(value, list | tuple | set | frozenset):
        return [_sanitize(v, depth + 1) for v in value]
    return str(value)


def _dumps(value: Any) -> str:
    return json.dumps(value, allow_nan=False)


def _utf8_length(text: str) -> int:
    return len(text.encode("utf-8", "surrogatepass"))


def _marker(value: Any, text: str, budget: int) -> dict[str, Any]:
    """What stands in for a field too large to keep: a preview and the size of what was dropped."""
    preview = value if isinstance(value, str) else text
    marker: dict[str, Any] = {"truncated": True, "preview": preview[:PREVIEW_CHARS], "bytes": _utf8_length(preview)}
    cut = min(len(preview), PREVIEW_CHARS)
    while cut > 0 and len(_dumps(marker)) > budget:
        cut //= 2
        marker["preview"] = preview[:cut]
    return marker


def _fit(value: Any, budget: int) -> Any:
    """`value` itself when its JSON fits in `budget` characters, else the same shape with its largest
    fields fitted into equal shares of what is left (descending into objects and arrays), else one marker."""
    text = _dumps(value)
    if len(text) <= budget:
        return value
    if isinstance(value, dict | list) and value:
        keys: list[Any] = list(value) if isinstance(value, dict) else list(range(len(value)))
        overhead = 2 + 2 * (len(keys) - 1) + (sum(len(_dumps(k)) + 2 for k in keys) if isinstance(value, dict) else 0)
        sizes = {k: len(_dumps(value[k])) for k in keys}
        remaining, share = budget - overhead, None
        for index, key in enumerate(sorted(keys, key=lambda k: sizes[k])):
            if sizes[key] * (len(keys) - index) > remaining:  # this and every larger field get equal shares
                share = remaining // (len(keys) - index)
                break
            remaining -= sizes[key]
        if share is not None and share > 0:
            result: Any = dict(value) if isinstance(value, dict) else list(value)
            for key in keys:
                if sizes[key] > share:
                    result[key] = _fit(value[key], share)
            if len(_dumps(result)) <= budget:
                return result
    return _marker(value, text, budget)


def fit_detail(detail: Any, budget: int) -> str:
    """The detail as a JSON document of at most `budget` characters (ASCII, so also bytes); never cut mid-document."""
    try:
        value = _sanitize(detail)
        fitted = _fit(value, budget)
        text = _dumps(fitted)
    except (RecursionError, ValueError, TypeError) as exc:
        text = _dumps({"truncated": True, "preview": f"(not serialisable: {type(exc).__name__})", "bytes": None})
    if len(text) > budget:  # only for absurdly small budgets: the bare marker
        text = _dumps({"truncated": True, "bytes": None})
    return text


def read_detail(raw: Any) -> Any:
    """A stored detail, parsed; a value that does not parse comes back marked, never as an exception."""
    if raw is None or raw == "":
        return None
    if isinstance(raw, bytes):
        raw = raw.decode("utf-8", "replace")
    if not isinstance(raw, str):
        return raw
    try:
        return json.loads(raw, parse_constant=str)
    except (ValueError, RecursionError):
        return {"unreadable": True, "raw": raw[:PREVIEW_CHARS], "bytes": _utf8_length(raw)}


def _cell(value: Any) -> Any:
    """A column value the JSON and CSV exports can always carry."""
    if isinstance(value, bytes):
        return value.decode("utf-8", "replace")
    if isinstance(value, float) and not math.isfinite(value):
        return str(value)
    return value


def csv_safe(value: Any) -> Any:
    """OWASP CSV injection: a cell a spreadsheet would read as a formula is prefixed with a quote."""
    if isinstance(value, str) and value.startswith(CSV_FORMULA_START):
        return "'" + value
    return value


def visible_user(viewer: Person, requested: str | None) -> str | None:
    """Whose rows `viewer` reads: an admin everyone's (or the one person asked for), anyone else their own.

    Returns the `user` filter for `AuditLog.entries`; a member asking for someone else is refused."""
    if viewer.is_admin:
        return requested or None
    if requested and requested != viewer.id:
        raise PolicyRefused("only an admin may read another person's audit entries", {"user": requested})
    return viewer.id


# -- write budgets -----------------------------------------------------------------------------


@dataclass
class _Bucket:
    rate: float
    burst: float
    tokens: float
    updated: float

    def refill(self, now: float) -> None:
        self.tokens = min(self.burst, self.tokens + (now - self.updated) * self.rate)
        self.updated = now

    def full(self) -> bool:
        return self.tokens >= self.burst


@dataclass
class _Budget:
    rows: _Bucket
    size: _Bucket | None
    dropped: int = 0
    kinds: dict[str, int] = field(default_factory=dict)
    first_drop: float = 0.0
    last_drop: float = 0.0
    first_ts: float = 0.0
    last_ts: float = 0.0
    # Whose rows the budget counts (from the row that opened it): its "rate limited" row is theirs too.
    owner: dict[str, str | None] = field(default_factory=dict)


def _secure_file(path: Path) -> None:
    """Create `path` (if absent) readable by its owner only, and tighten it if it exists."""
    flags = os.O_CREAT | os.O_WRONLY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_CLOEXEC", 0)
    try:
        fd = os.open(path, flags, 0o600)
    except OSError as exc:  # read-only or someone else's file, or a symlink: SQLite opens it as it can
        logger.warning("audit log file %s: cannot make it owner-only: %s", path, exc)
        return
    try:
        os.fchmod(fd, 0o600)
    except OSError as exc:
        logger.warning("audit log file %s: cannot make it owner-only: %s", path, exc)
    finally:
        os.close(fd)


class AuditLog:
    def __init__(
        self,
        path: Path,
        limits: AuditLimits | None = None,
        *,
        clock: Callable[[], float] = time.monotonic,
        wall_clock: Callable[[], float] = time.time,
    ) -> None:
        path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
        self.path = path
        self.limits = limits or AuditLimits()
        self._clock = clock
        self._wall_clock = wall_clock
        self._lock = threading.Lock()
        self._budgets: dict[tuple[str, str], _Budget] = {}
        # The database and its WAL and shared-memory files exist, mode 0600, before SQLite opens them.
        for suffix in ("", "-wal", "-shm"):
            _secure_file(path.with_name(path.name + suffix))
        self._db = sqlite3.connect(path, check_same_thread=False, isolation_level=None)
        try:
            self._db.execute("PRAGMA journal_mode=WAL")
            self._db.executescript(SCHEMA)
            self._migrate()
        except sqlite3.Error as exc:  # readable but not writable: reads still work, writes refuse
            logger.error("audit log %s cannot be written: %s", path, exc)
        self._next_maintenance = self._clock() + MAINTENANCE_SECONDS
        try:
            self.apply_retention()
        except AuditUnavailable as exc:
            logger.error("%s", exc.message)

    def _migrate(self) -> None:
        """A database written before rows named their person gets the columns (its old rows stay, with none)."""
        present = {row[1] for row in self._db.execute("PRAGMA table_info(audit)").fetchall()}
        for column in PERSON_COLUMNS:
            if column not in present:
                self._db.execute(f"ALTER TABLE audit ADD COLUMN {column} TEXT")
        self._db.execute("CREATE INDEX IF NOT EXISTS audit_user ON audit(user_id, id)")

    def close(self) -> None:
        with self._lock:
            try:
                self._flush_drops(force=True)
            except AuditUnavailable as exc:
                logger.error("%s", exc.message)
            self._db.close()

    # -- writing ---------------------------------------------------------------------------------

    def record(
        self,
        kind: str,
        *,
        person: Person | None = None,
        session: str | None = None,
        server: str | None = None,
        frame: str | None = None,
        decision: str | None = None,
        summary: str = "",
        detail: dict[str, Any] | None = None,
    ) -> dict[str, Any]:
        """Append one row (or count it against a spent budget); raise AuditUnavailable if it cannot be written."""
        row: dict[str, Any] = {
            "ts": self._wall_clock(),
            "session": _label(session),
            "server": _label(server),
            "frame": _label(frame),
            "kind": _label(kind) or "?",
            "decision": _label(decision),
            "summary": str(summary)[:MAX_SUMMARY],
            "detail": None,
            "user_id": _label(person.id) if person else None,
            "user_name": _label(person.name) if person else None,
        }
        fixed = sum(_utf8_length(v) for v in row.values() if isinstance(v, str)) + 64
        if detail is not None:
            row["detail"] = fit_detail(detail, max(self.limits.max_row_bytes - fixed, 256))
        size = fixed + len(row["detail"] or "")
        now = self._clock()
        with self._lock:
            admitted = self._admit(row, size, now)
            if admitted:
                self._flush_drops(keys=self._keys(row))
                row_id = self._insert(row)
            if now >= self._next_maintenance:
                self._maintain(now)
            if not admitted:
                return {"id": None, **row, "detail": read_detail(row["detail"]), "rateLimited": True}
        return {"id": row_id, **row, "detail": read_detail(row["detail"])}

    def _insert(self, row: dict[str, Any]) -> int | None:
        try:
            cursor = self._db.execute(
                "INSERT INTO audit (ts, session, server, frame, kind, decision, summary, detail, user_id, user_name) "
                "VALUES (:ts, :session, :server, :frame, :kind, :decision, :summary, :detail, :user_id, :user_name)",
                row,
            )
        except sqlite3.Error as exc:
            raise self._unavailable(exc) from None
        return cursor.lastrowid

    def _unavailable(self, exc: sqlite3.Error) -> AuditUnavailable:
        logger.error("audit log %s: write failed: %s", self.path, exc)
        return AuditUnavailable(
            f"the audit log is unavailable (it cannot be written: {exc}); the action was refused", {"reason": str(exc)}
        )

    def _keys(self, row: dict[str, Any]) -> list[tuple[str, str]]:
        """The budgets a row spends: its frame's, and its person's (by id; a row without one, its session's)."""
        keys = []
        if row["frame"]:
            keys.append(("frame", row["frame"]))
        if row["user_id"]:
            keys.append(("person", row["user_id"]))
        elif row["session"]:
            keys.append(("session", row["session"]))
        return keys

    def _budget(self, key: tuple[str, str], now: float, row: dict[str, Any]) -> _Budget:
        budget = self._budgets.get(key)
        if budget is None:
            limits = self.limits
            if key[0] == "frame":
                budget = _Budget(
                    _Bucket(limits.frame_rows_per_second, limits.frame_burst, limits.frame_burst, now), None
                )
            else:
                budget = _Budget(
                    _Bucket(limits.person_rows_per_second, limits.person_burst, limits.person_burst, now),
                    _Bucket(limits.person_bytes_per_second, limits.person_burst_bytes, limits.person_burst_bytes, now),
                )
            budget.owner = {"session": row["session"], "user_id": row["user_id"], "user_name": row["user_name"]}
            self._budgets[key] = budget
        budget.rows.refill(now)
        if budget.size is not None:
            budget.size.refill(now)
        return budget

    def _admit(self, row: dict[str, Any], size: int, now: float) -> bool:
        """Spend one row (and its bytes) from the frame's and the person's budgets, or count it as dropped."""
        budgets = [(key, self._budget(key, now, row)) for key in self._keys(row)]
        for _key, budget in budgets:
            if budget.rows.tokens < 1 or (budget.size is not None and budget.size.tokens < size):
                if not budget.dropped:
                    budget.first_drop, budget.first_ts = now, row["ts"]
                budget.dropped += 1
                budget.last_drop, budget.last_ts = now, row["ts"]
                if row["kind"] in budget.kinds or len(budget.kinds) < 20:
                    budget.kinds[row["kind"]] = budget.kinds.get(row["kind"], 0) + 1
                return False
        for _key, budget in budgets:
            budget.rows.tokens -= 1
            if budget.size is not None:
                budget.size.tokens -= size
        return True

    def _flush_drops(self, *, keys: list[tuple[str, str]] | None = None, force: bool = False) -> None:
        """Write the "rate limited" row of budgets that dropped rows: when the budget admits a row again
        (at most once per COALESCE_SECONDS while a flood lasts), when it went quiet, or at close."""
        now = self._clock()
        for key in list(self._budgets) if keys is None else keys:
            budget = self._budgets.get(key)
            if budget is None or not budget.dropped:
                continue
            due = (
                force
                or now - budget.last_drop >= QUIET_SECONDS
                or (keys is not None and now - budget.first_drop >= COALESCE_SECONDS)
            )
            if not due:
                continue
            kind, name = key
            owner = budget.owner
            self._insert(
                {
                    "ts": budget.last_ts,
                    "session": owner.get("session") if kind != "person" else None,
                    "user_id": owner.get("user_id"),
                    "user_name": owner.get("user_name"),
                    "frame": name if kind == "frame" else None,
                    "server": None,
                    "kind": RATE_LIMITED,
                    "decision": "dropped",
                    "summary": f"rate limited: {budget.dropped} rows dropped",
                    "detail": _dumps(
                        {
                            "dropped": budget.dropped,
                            "kinds": budget.kinds,
                            "budget": "person" if kind == "session" else kind,
                            "from": budget.first_ts,
                            "to": budget.last_ts,
                        }
                    ),
                }
            )
            budget.dropped, budget.kinds = 0, {}

    def _maintain(self, now: float) -> None:
        self._next_maintenance = now + MAINTENANCE_SECONDS
        try:
            self._flush_drops()
            self._prune()
        except AuditUnavailable as exc:
            logger.error("%s", exc.message)
        for key, budget in list(self._budgets.items()):  # forget budgets that are full and owe nothing
            if not budget.dropped and budget.rows.full() and (budget.size is None or budget.size.full()):
                del self._budgets[key]

    def apply_retention(self) -> None:
        """Delete rows older than `retention_days` and beyond the newest `max_rows` (cheap: both use an index)."""
        with self._lock:
            self._prune()

    def _prune(self) -> None:
        limits = self.limits
        try:
            if limits.retention_days is not None:
                cutoff = self._wall_clock() - limits.retention_days * 86400
                self._db.execute("DELETE FROM audit WHERE ts < ?", (cutoff,))
            if limits.max_rows is not None:
                self._db.execute("DELETE FROM audit WHERE id <= (SELECT max(id) FROM audit) - ?", (limits.max_rows,))
        except sqlite3.Error as exc:
            raise self._unavailable(exc) from None

    # -- reading ---------------------------------------------------------------------------------

    def entries(
        self, *, server: str | None = None, user: str | None = None, limit: int = 500, before: int | None = None
    ) -> list[dict[str, Any]]:
        """The newest rows first; `user` keeps only that person's rows (by id)."""
        query = "SELECT " + ", ".join(COLUMNS) + " FROM audit WHERE 1=1"
        args: list[Any] = []
        if user is not None:
            query += " AND user_id = ?"
            args.append(user)
        if server:
            query += " AND server = ?"
            args.append(server)
        if before:
            query += " AND id < ?"
            args.append(before)
        query += " ORDER BY id DESC LIMIT ?"
        args.append(max(1, min(limit, 10_000)))
        with self._lock:
            try:
                rows = self._db.execute(query, args).fetchall()
            except sqlite3.Error as exc:
                raise AuditUnavailable(f"the audit log cannot be read: {exc}", {"reason": str(exc)}) from None
        result = []
        for row in rows:
            entry = {column: _cell(value) for column, value in zip(COLUMNS, row, strict=True)}
            entry["detail"] = read_detail(entry["detail"])
            result.append(entry)
        return result

    def export_csv(self, *, server: str | None = None, user: str | None = None) -> str:
        buffer = io.StringIO()
        writer = csv.writer(buffer)
        writer.writerow(COLUMNS)
        for entry in reversed(self.entries(server=server, user=user, limit=10_000)):
            writer.writerow([csv_safe(json.dumps(entry[c]) if c == "detail" else entry[c]) for c in COLUMNS])
        return buffer.getvalue()

    # Permissions a person granted to a server's apps, remembered across sessions.

    def granted_permissions(self, server: str) -> set[str]:
        with self._lock:
            try:
                rows = self._db.execute(
                    "SELECT permission FROM granted_permissions WHERE server = ? AND granted = 1", (server,)
                ).fetchall()
            except sqlite3.Error as exc:
                raise AuditUnavailable(f"the audit log cannot be read: {exc}", {"reason": str(exc)}) from None
        return {row[0] for row in rows}

    def set_permission(self, server: str, permission: str, granted: bool) -> None:
        with self._lock:
            try:
                self._db.execute(
                    "INSERT INTO granted_permissions (server, permission, granted, ts) VALUES (?, ?, ?, ?) "
                    "ON CONFLICT(server, permission) DO UPDATE SET granted = excluded.granted, ts = excluded.ts",
                    (server, permission, int(granted), self._wall_clock()),
                )
            except sqlite3.Error as exc:
                raise self._unavailable(exc) from None


def _label(value: str | None) -> str | None:
    return None if value is None else str(value)[:MAX_LABEL]
