"""Append-only audit log of what apps did and what people decided, on the shared database (`webhost.storage`).

Every app-initiated tool call, link, message, model-context update, permission decision and
effective CSP is one row. webhost never updates a row; it deletes only what the retention
settings (`webhost.audit`) say is too old or too many.

The log survives what is written into it: every stored `detail` is valid JSON no larger than the
per-row cap (oversized fields are replaced by `{"truncated": true, "preview": ..., "bytes": N}`),
rows that do not parse are read back marked unreadable, and each app frame and each person (by
their id; a row without a person, by its session) has a write budget beyond which rows are counted
and coalesced into one "rate limited" row. Every row names the person it belongs to (`user_id`,
`user_name`). The audit file of 0.1 (`audit.sqlite3` in the data folder) is imported once at start.

Writes never wait on the database on the event loop: rows join one queue in the order they were
recorded, and one writer task stores whatever has queued up in one transaction, on a connection of
its own. `record` waits until its row is stored, so that a write that fails (disk full, read-only
database) raises `AuditUnavailable` and the caller refuses what it cannot audit; `note` (a close,
the outcome of something already done) does not wait: it is kept in this process's spool file
(`storage/spool.py`) before `note` returns, so a SIGKILL does not lose it (the next start stores it), and
while the database is down it waits and is tried again (`RETRY_SECONDS`). Reads wait for the writes queued
before them: a row recorded is a row read. On SQLite the writer's transactions take their turn with the
process's other writes (`storage/transactions.py`).
"""

from __future__ import annotations

import contextlib
import csv
import io
import json
import logging
import math
import re
import time
from collections import deque
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

import anyio
import anyio.abc
import sqlalchemy as sa
from sqlalchemy.ext.asyncio import AsyncConnection

from webhost.audit_rows import cell, csv_safe, dumps, fit_detail, read_detail, utf8_length, visible_user
from webhost.errors import POLICY_REFUSED, WebhostError
from webhost.people import TOKEN_PERSON_ID, Person
from webhost.redact import Redactor
from webhost.storage import audit as store
from webhost.storage.audit import COLUMNS
from webhost.storage.db import Storage
from webhost.storage.spool import Spool, left_over

logger = logging.getLogger(__name__)

__all__ = [
    "COLUMNS",
    "RATE_LIMITED",
    "AuditLimits",
    "AuditLog",
    "AuditUnavailable",
    "fit_detail",
    "open_audit_log",
    "visible_user",
]

LEGACY_FILE = "audit.sqlite3"  # where 0.1 kept an audit database of its own, in the data folder
RATE_LIMITED = "audit.rate-limited"
MAX_SUMMARY = 500
MAX_LABEL = store.LABEL  # session, server, frame, kind, decision, user_id, user_name
COALESCE_SECONDS = 10.0  # at most one "rate limited" row per budget in this time while a flood lasts
QUIET_SECONDS = 1.0  # a budget that dropped nothing for this long has its "rate limited" row written
MAINTENANCE_SECONDS = 60.0
MAX_BATCH = 500  # queued writes per transaction
RETRY_SECONDS = (0.5, 1.0, 2.0, 5.0, 10.0, 30.0)  # pauses between tries of the rows owed while the database is down
MAX_OWED = 10_000  # rows owed in memory; past it the newest wait in the spool alone, for the next start
_UNSTORABLE = re.compile("[\x00\ud800-\udfff]")  # NUL (PostgreSQL refuses it in text) and lone surrogates


class AuditUnavailable(WebhostError):
    """The audit log cannot be written (disk full, read-only, corrupt): the action is refused."""

    code = POLICY_REFUSED
    outage = False  # the database could not be written at all (rather than this row refused): worth a retry


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


@dataclass
class _Job:
    """One write for the writer task, or (`barrier`) a point that a reader waits for."""

    kind: Literal["row", "row-once", "prune", "permission", "barrier"]  # row-once: a spooled row left over
    args: dict[str, Any]
    done: anyio.Event | None  # None: nobody waits, and a failure is logged
    row_id: int | None = None
    error: AuditUnavailable | None = None
    seq: int | None = None  # its line in the spool (a row nobody waits for)


class AuditLog:
    def __init__(
        self,
        storage: Storage,
        limits: AuditLimits | None = None,
        *,
        legacy_file: Path | None = None,
        clock: Callable[[], float] = time.monotonic,
        wall_clock: Callable[[], float] = time.time,
        spool: Spool | None = None,
    ) -> None:
        self.storage = storage
        self.limits = limits or AuditLimits()
        self._spool = spool  # where rows nobody waits for outlive the process until stored
        self._legacy_file = legacy_file
        self._clock = clock
        self._wall_clock = wall_clock
        self._reader = store.AuditReader(storage)
        self._budgets: dict[tuple[str, str], _Budget] = {}
        self._queue: deque[_Job] = deque()
        self._wake = anyio.Event()
        self._stopped = anyio.Event()
        self._running = False
        self._closing = False
        self._db: AsyncConnection | None = None  # the writer's own connection
        self._next_maintenance = self._clock() + MAINTENANCE_SECONDS
        # What the rows of one person (None: everyone's) are read with: the configuration's secrets and those
        # people's input values masked in summaries and details (set by the composition root).
        self.mask: Callable[[str | None], Redactor] = lambda user: Redactor()
        self._owed: deque[_Job] = deque()  # rows nobody waits for, not stored because the database was down
        self._retry_at = 0.0
        self._tries = 0

    async def start(self, task_group: anyio.abc.TaskGroup) -> None:
        """Import the 0.1 file (once) and the rows stopped processes still owed, start the writer in
        `task_group`, apply the retention settings."""
        if self._legacy_file is not None:
            async with self.storage.transactions.serialised():
                await store.import_legacy_file(await self._connection(), self._legacy_file, TOKEN_PERSON_ID)
        if self._spool is not None:
            self._spool.open()
            await self._take_over(self._spool.folder.parent)
        self._running = True
        task_group.start_soon(self._run)
        try:
            await self.apply_retention()
        except AuditUnavailable as exc:
            logger.error("%s", exc.message)

    async def close(self) -> None:
        """Store what is still queued (and the "rate limited" rows still owed), then stop the writer."""
        if self._running:
            self._flush_drops(force=True)
            self._closing = True
            self._wake.set()
            await self._stopped.wait()
            self._running = False
        if self._spool is not None:
            self._spool.close()  # what is still owed stays in it, for the next start
        if self._db is not None:
            await self._db.close()
            self._db = None

    @property
    def outage(self) -> bool:
        """Rows wait because the database could not be written (until a write succeeds again)."""
        return self._tries > 0

    async def _take_over(self, data_dir: Path) -> None:
        """Store the rows that processes now gone still owed (their spool files), then forget those files."""
        for left in left_over(data_dir, "audit"):
            rows = [row for row in left.rows if set(row) == _ROW_KEYS]
            error = await self._transaction([_Job("row-once", row, None) for row in rows]) if rows else None
            if error is not None:
                left.release()
                logger.error("audit log: %d rows left by a stopped webhost (%s) wait: %s", len(rows), left.path, error)
                continue
            left.forget()
            if rows:
                logger.warning("audit log: stored %d rows a stopped webhost had not written yet", len(rows))

    # -- writing ---------------------------------------------------------------------------------

    async def record(
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
        """Append one row (or count it against a spent budget) and wait until it is stored; raise
        AuditUnavailable if it cannot be."""
        if not self._running or self._closing:
            raise AuditUnavailable("the audit log is unavailable (it is not open); the action was refused")
        entry, job = self._add(kind, person, session, server, frame, decision, summary, detail, wait=True)
        if job is None:
            return entry
        await self._wait(job)
        return {**entry, "id": job.row_id}

    def note(
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
    ) -> None:
        """Append one row without waiting for it (what it records has happened): a failure is logged."""
        if self._stopped.is_set():
            logger.error("the audit log is closed: %s not recorded", kind)
            return
        self._add(kind, person, session, server, frame, decision, summary, detail, wait=False)

    def _add(
        self,
        kind: str,
        person: Person | None,
        session: str | None,
        server: str | None,
        frame: str | None,
        decision: str | None,
        summary: str,
        detail: dict[str, Any] | None,
        *,
        wait: bool,
    ) -> tuple[dict[str, Any], _Job | None]:
        row: dict[str, Any] = {
            "ts": self._wall_clock(),
            "session": _label(session),
            "server": _label(server),
            "frame": _label(frame),
            "kind": _label(kind) or "?",
            "decision": _label(decision),
            "summary": _storable(str(summary)[:MAX_SUMMARY]),
            "detail": None,
            "user_id": _label(person.id) if person else None,
            "user_name": _label(person.name) if person else None,
        }
        fixed = sum(utf8_length(v) for v in row.values() if isinstance(v, str)) + 64
        if detail is not None:
            row["detail"] = fit_detail(detail, max(self.limits.max_row_bytes - fixed, 256))
        size = fixed + len(row["detail"] or "")
        now = self._clock()
        job = None
        if self._admit(row, size, now):
            self._flush_drops(keys=self._keys(row))
            job = self._enqueue("row", row, wait=wait)
        if now >= self._next_maintenance:
            self._maintain(now)
        entry = {"id": None, **row, "detail": read_detail(row["detail"])}
        return (entry if job is not None else {**entry, "rateLimited": True}), job

    def _enqueue(
        self, kind: Literal["row", "prune", "permission", "barrier"], args: dict[str, Any], *, wait: bool
    ) -> _Job:
        job = _Job(kind, args, anyio.Event() if wait else None)
        if not wait and kind == "row" and self._spool is not None:
            job.seq = self._spool.add(args)  # before `note` returns: a SIGKILL from now on does not lose it
        self._queue.append(job)
        self._wake.set()
        return job

    async def _wait(self, job: _Job) -> None:
        assert job.done is not None
        await job.done.wait()
        if job.error is not None:
            raise job.error

    async def flushed(self) -> None:
        """Wait until every write queued so far has been tried (stored, or failed)."""
        if self._running and not self._stopped.is_set():
            job = self._enqueue("barrier", {}, wait=True)
            assert job.done is not None
            await job.done.wait()

    # -- the writer task ---------------------------------------------------------------------------

    async def _run(self) -> None:
        try:
            while True:
                if self._owed and (self._closing or self._clock() >= self._retry_at):
                    self._queue.extendleft(reversed(self._owed))  # before what came since: in their order
                    self._owed.clear()
                if not self._queue:
                    if self._closing:
                        return
                    self._wake = anyio.Event()
                    with anyio.move_on_after(max(0.0, self._retry_at - self._clock()) if self._owed else math.inf):
                        await self._wake.wait()
                    continue
                batch = [self._queue.popleft() for _ in range(min(MAX_BATCH, len(self._queue)))]
                await self._write(batch)
        finally:
            self._stopped.set()
            for job in self._queue:  # cancelled with writes still queued: nobody may wait forever
                job.error = AuditUnavailable("the audit log was closed before this row was stored")
                if job.done is not None:
                    job.done.set()

    async def _write(self, batch: list[_Job]) -> None:
        jobs = [job for job in batch if job.kind != "barrier"]
        error = await self._transaction(jobs) if jobs else None
        if error is not None:
            if len(jobs) > 1 and not error.outage:  # one bad write must not sink the others: each on its own
                for job in jobs:
                    job.error = await self._transaction([job])
            else:
                for job in jobs:
                    job.error = error
        owed = 0
        for job in batch:
            if job.seq is not None and job.error is not None and job.error.outage:
                owed += self._owe(job)
                continue
            if job.error is not None and job.done is None:
                logger.error("%s (%s not recorded)", job.error.message, job.args.get("kind", job.kind))
            if job.seq is not None and self._spool is not None:
                self._spool.settled([job.seq])
            if job.done is not None:
                job.done.set()
        if owed:
            self._retry_at = self._clock() + RETRY_SECONDS[min(self._tries, len(RETRY_SECONDS) - 1)]
            if self._tries == 0:
                logger.warning("audit log: the database cannot be written; %d rows wait to be tried again", owed)
            self._tries += 1
        elif jobs and all(job.error is None for job in jobs):
            if self._tries:
                logger.warning("audit log: the database is back; the rows that waited are stored")
            self._tries = 0

    def _owe(self, job: _Job) -> int:
        """A row nobody waits for met an outage: tried again later (at a clean stop, once more); it stays in the
        spool meanwhile, so past `MAX_OWED`, or at the stop, it is left for the next start rather than lost."""
        if self._closing and self._tries > 0:
            return 0
        if len(self._owed) >= MAX_OWED:
            return 0
        job.error = None
        self._owed.append(job)
        return 1

    async def _connection(self) -> AsyncConnection:
        """The writer's connection, opened again only if it was lost (a failed statement keeps it)."""
        if self._db is None or self._db.closed or self._db.invalidated:
            self._db = await self.storage.engine.connect()
        return self._db

    async def _transaction(self, jobs: list[_Job]) -> AuditUnavailable | None:
        """Run these writes, in order, in one transaction; the error that stopped it, if one did. The
        writer's connection sits idle between writes, so the database may have dropped it (a PostgreSQL
        restart or failover): then the transaction, which did not commit, is run once more on a new one."""
        async with self.storage.transactions.serialised():
            return await self._transaction_now(jobs)

    async def _transaction_now(self, jobs: list[_Job]) -> AuditUnavailable | None:
        error, lost = await self._attempt(jobs)
        if lost:
            logger.warning("audit log: the database closed the writer's connection; writing on a new one")
            error, _lost = await self._attempt(jobs)
        return error

    async def _attempt(self, jobs: list[_Job]) -> tuple[AuditUnavailable | None, bool]:
        """One try: the error, and whether it was the connection that was lost."""
        try:
            db = await self._connection()
            async with db.begin():
                index = 0
                while index < len(jobs):
                    job = jobs[index]
                    if job.kind == "row":  # a run of rows is one statement
                        end = index + 1
                        while end < len(jobs) and jobs[end].kind == "row":
                            end += 1
                        run = jobs[index:end]
                        ids = await store.insert_rows(db, [queued.args for queued in run])
                        for queued, row_id in zip(run, ids, strict=True):
                            queued.row_id = row_id
                        index = end
                        continue
                    if job.kind == "row-once" and not await store.stored_already(db, job.args):
                        job.row_id = (await store.insert_rows(db, [job.args]))[0]
                    elif job.kind == "prune":
                        await store.prune(db, **job.args)
                    elif job.kind == "permission":
                        await store.set_permission(db, **job.args)
                    index += 1
        except (sa.exc.SQLAlchemyError, OSError) as exc:
            for job in jobs:
                job.row_id = None
            lost = isinstance(exc, sa.exc.DBAPIError) and exc.connection_invalidated
            if lost or (self._db is not None and self._db.invalidated):
                stale, self._db = self._db, None  # the next `_connection` opens a new one
                if stale is not None:
                    with contextlib.suppress(sa.exc.SQLAlchemyError, OSError):
                        await stale.close()
                error = self._unavailable(exc, log=False)
                error.outage = True
                return error, True
            error = self._unavailable(exc)
            error.outage = isinstance(exc, _OUTAGE)
            return error, False
        except Exception as exc:  # a bug here must not end the writer (and every tab with it): refuse, log
            logger.exception("audit log: unexpected error while writing")
            for job in jobs:
                job.row_id = None
            return self._unavailable(exc), False
        return None, False

    def _unavailable(self, exc: BaseException, *, log: bool = True) -> AuditUnavailable:
        reason = str(getattr(exc, "orig", None) or exc).splitlines()[0][:300]
        if log:
            logger.error("audit log: write failed: %s", reason)
        return AuditUnavailable(
            f"the audit log is unavailable (it cannot be written: {reason}); the action was refused",
            {"reason": reason},
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
            self._enqueue(
                "row",
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
                    "detail": dumps(
                        {
                            "dropped": budget.dropped,
                            "kinds": budget.kinds,
                            "budget": "person" if kind == "session" else kind,
                            "from": budget.first_ts,
                            "to": budget.last_ts,
                        }
                    ),
                },
                wait=False,
            )
            budget.dropped, budget.kinds = 0, {}

    def _maintain(self, now: float) -> None:
        self._next_maintenance = now + MAINTENANCE_SECONDS
        self._flush_drops()
        self._enqueue("prune", self._prune_args(), wait=False)
        for key, budget in list(self._budgets.items()):  # forget budgets that are full and owe nothing
            if not budget.dropped and budget.rows.full() and (budget.size is None or budget.size.full()):
                del self._budgets[key]

    async def apply_retention(self) -> None:
        """Delete rows older than `retention_days` and beyond the newest `max_rows` (cheap: both use an index)."""
        if not self._running:
            raise AuditUnavailable("the audit log is unavailable (it is not open)")
        await self._wait(self._enqueue("prune", self._prune_args(), wait=True))

    def _prune_args(self) -> dict[str, Any]:
        limits = self.limits
        cutoff = None if limits.retention_days is None else self._wall_clock() - limits.retention_days * 86400
        return {"before_ts": cutoff, "max_rows": limits.max_rows}

    # -- reading ---------------------------------------------------------------------------------

    async def entries(
        self, *, server: str | None = None, user: str | None = None, limit: int = 500, before: int | None = None
    ) -> list[dict[str, Any]]:
        """The newest rows first; `user` keeps only that person's rows (by id)."""
        await self.flushed()
        try:
            rows = await self._reader.entries(server=server, user=user, limit=max(1, min(limit, 10_000)), before=before)
        except (sa.exc.SQLAlchemyError, OSError) as exc:
            reason = str(getattr(exc, "orig", None) or exc).splitlines()[0][:300]
            raise AuditUnavailable(f"the audit log cannot be read: {reason}", {"reason": reason}) from None
        mask = self.mask(user)
        result = []
        for row in rows:
            entry = {column: cell(row[column]) for column in COLUMNS}
            entry["detail"] = read_detail(entry["detail"])
            if mask:  # what apps and servers wrote; never the names (server, kind, person)
                entry["summary"], entry["detail"] = mask.value(entry["summary"]), mask.value(entry["detail"])
            result.append(entry)
        return result

    async def export_csv(self, *, server: str | None = None, user: str | None = None) -> str:
        buffer = io.StringIO()
        writer = csv.writer(buffer)
        writer.writerow(COLUMNS)
        for entry in reversed(await self.entries(server=server, user=user, limit=10_000)):
            writer.writerow([csv_safe(json.dumps(entry[c]) if c == "detail" else entry[c]) for c in COLUMNS])
        return buffer.getvalue()

    # Permissions a person granted to a server's apps, remembered across their sessions (each person's own).

    async def granted_permissions(self, person_id: str, server: str) -> set[str]:
        await self.flushed()
        try:
            return await self._reader.granted(person_id, server)
        except (sa.exc.SQLAlchemyError, OSError) as exc:
            raise AuditUnavailable(f"the audit log cannot be read: {exc}", {"reason": str(exc)}) from None

    async def set_permission(self, person_id: str, server: str, permission: str, granted: bool) -> None:
        if not self._running or self._closing:
            raise AuditUnavailable("the audit log is unavailable (it is not open)")
        args = {
            "person_id": person_id,
            "server": server,
            "permission": permission,
            "granted": granted,
            "ts": self._wall_clock(),
        }
        await self._wait(self._enqueue("permission", args, wait=True))


@asynccontextmanager
async def open_audit_log(
    storage: Storage,
    limits: AuditLimits | None = None,
    *,
    legacy_file: Path | None = None,
    clock: Callable[[], float] = time.monotonic,
    wall_clock: Callable[[], float] = time.time,
) -> AsyncIterator[AuditLog]:
    """An audit log with its writer running, for as long as the block lasts (closed after it)."""
    async with anyio.create_task_group() as task_group:
        log = AuditLog(storage, limits, legacy_file=legacy_file, clock=clock, wall_clock=wall_clock)
        await log.start(task_group)
        try:
            yield log
        finally:
            await log.close()


# What says the database cannot be written at all (down, unreachable, full, read-only), not that a row is wrong.
_OUTAGE = (sa.exc.OperationalError, sa.exc.InterfaceError, sa.exc.TimeoutError, OSError, TimeoutError)
_ROW_KEYS = {"ts", "session", "server", "frame", "kind", "decision", "summary", "detail", "user_id", "user_name"}


def _storable(text: str) -> str:
    """Text every database stores: NUL and lone surrogates (which no encoder takes) become U+FFFD."""
    return _UNSTORABLE.sub("\ufffd", text)


def _label(value: str | None) -> str | None:
    return None if value is None else _storable(str(value)[:MAX_LABEL])
