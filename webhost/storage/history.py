"""Each person's call history: every tools/call, resources/read and prompts/get a tab makes, in the database.

A handler hands a finished call to `CallHistory.record` before the call's answer goes out. It encodes the entry
(off the event loop when it is big) as the server answered it (a person's results are theirs: nothing is masked
by value, docs/security.md "Secrets"), bounds it (arguments over `MAX_ARGUMENTS` and results over
`MAX_RESULT` bytes keep a cut copy, marked truncated with the full size), appends it to this process's spool
file (storage/spool.py) and queues it: the answer never waits on the database, and a SIGKILL once the person
has the answer loses nothing (the next start stores what the spool still owes).

One writer task takes the queue in batches: one transaction writes the batch (what arrived within
`GATHER_SECONDS`) and, every `PRUNE_EVERY` rows of a person, keeps their newest `KEEP`. While the database is
down the queue waits and is tried again, with a growing pause (`RETRY_SECONDS`); past `MAX_QUEUED_BYTES` new
entries are dropped and counted, never waited for. At a clean stop the writer writes what is queued, and what it
cannot write stays in the spool. Every query names the person: nobody reads anyone else's history, admins
included.
"""

from __future__ import annotations

import json
import logging
import math
from collections import deque
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

import anyio
import anyio.abc
import sqlalchemy as sa
from sqlalchemy.ext.asyncio import AsyncConnection

from webhost import jsontext
from webhost.jsonsize import size_at_most
from webhost.storage import spool
from webhost.storage.bounded_json import Cut, measured_cuts, shortened
from webhost.storage.db import Storage, metadata
from webhost.storage.portable import fitted
from webhost.storage.transactions import DatabaseUnavailable

logger = logging.getLogger(__name__)

KEEP = 300  # rows per person
MAX_ARGUMENTS = 16 * 1024
MAX_RESULT = 64 * 1024
# Bytes of encoded entries waiting for the writer (a database outage of a busy team's hour, or more); past it a
# new entry is dropped and counted, never waited for.
MAX_QUEUED_BYTES = 64 * 1024 * 1024
BATCH = 500
INLINE = 16 * 1024  # arguments and results up to about this size are encoded on the event loop, bigger ones not
RETRY_SECONDS = (0.5, 1.0, 2.0, 5.0, 10.0, 30.0)  # pauses between tries while the database is down
# The writer gathers what arrives this long after an entry into one transaction: a burst of calls costs
# one commit, and the write stays out of the moments right after each answer.
GATHER_SECONDS = 0.2
PRUNE_EVERY = 25  # rows a person gains between two prunes (their rows stay within KEEP + PRUNE_EVERY)

call_history = sa.Table(
    "call_history",
    metadata,
    sa.Column("id", sa.BigInteger().with_variant(sa.Integer, "sqlite"), primary_key=True, autoincrement=True),
    sa.Column("person_id", sa.String(255), nullable=False),
    sa.Column("started_at", sa.Float, nullable=False),
    sa.Column("server", sa.String(255), nullable=False),
    sa.Column("kind", sa.String(16), nullable=False),
    sa.Column("name", sa.Text, nullable=False),
    sa.Column("arguments", sa.Text, nullable=False),
    sa.Column("arguments_truncated", sa.Boolean, nullable=False),
    sa.Column("result", sa.Text, nullable=False),
    sa.Column("result_bytes", sa.Integer, nullable=False),
    sa.Column("result_truncated", sa.Boolean, nullable=False),
    sa.Column("status", sa.String(16), nullable=False),
    sa.Column("duration_ms", sa.Float, nullable=False),
    sa.Column("tab", sa.String(64), nullable=False),
    sa.Column("call_id", sa.String(200), nullable=False),
    sa.Index("call_history_person", "person_id", "id"),
)

Summary = dict[str, Any]


@dataclass(frozen=True)
class Seen:
    """Which entries a person may see now (webhost.access): those of `servers`, but for the tools of `hidden`."""

    servers: frozenset[str]
    hidden: Mapping[str, frozenset[str]]


def _seen_only(seen: Seen | None) -> list[sa.ColumnElement[bool]]:
    if seen is None:
        return []
    c = call_history.c
    where: list[sa.ColumnElement[bool]] = [c.server.in_(sorted(seen.servers))]
    for server, tools in seen.hidden.items():
        where.append(sa.not_(sa.and_(c.server == server, c.kind == "tool", c.name.in_(sorted(tools)))))
    return where


@dataclass
class Finished:
    """One call as the handler saw it end: the result (or `{"error": …}`) as it was, not yet encoded."""

    person_id: str
    kind: str
    server: str
    name: str
    arguments: dict[str, Any]
    outcome: object
    status: str  # "ok" (the server answered; isError still counts as "error"), "error", "cancelled"
    started_at: float
    duration_ms: float
    tab: str
    call_id: str
    on_stored: Callable[[Summary], None] | None = None  # told the stored summary (the person's tabs)


@dataclass(eq=False)
class _Owed:
    """One encoded entry waiting for the writer."""

    person_id: str
    row: dict[str, Any]
    size: int
    seq: int | None  # its line in the spool
    on_stored: Callable[[Summary], None] | None


class CallHistory:
    """The queue, its writer task (`start`, by the composition root) and the reads."""

    def __init__(self, storage: Storage, *, keep: spool.Spool | None = None) -> None:
        self.storage = storage
        self.spool = keep  # where queued entries outlive the process (None: in memory only)
        self._queue: deque[_Owed] = deque()
        self._bytes = 0
        self._wake = anyio.Event()
        self._hurry = anyio.Event()  # a full batch, or stopping: write without gathering
        self.dropped = 0
        self.written = 0
        self.outage: str | None = None  # why the database cannot be written, while it cannot
        self.idle = anyio.Event()  # set whenever the queue has been written out (tests wait on it)
        self.idle.set()
        self._stopping = False
        self._stopped = anyio.Event()
        self._since_prune: dict[str, int] = {}  # rows written per person since their last prune

    async def record(self, entry: Finished) -> None:
        """Encode the entry, keep it in the spool and queue it: when this returns, a SIGKILL no longer loses it."""
        if size_at_most(entry.outcome, INLINE) and size_at_most(entry.arguments, INLINE):
            arguments, result = _bounded_call(entry)
        else:
            arguments, result = await anyio.to_thread.run_sync(_bounded_call, entry)
        # What was cut away is measured here, a piece at a time with the loop running between pieces: in the worker
        # thread it held the interpreter's lock, and every tab's event loop with it (bounded_json.py).
        arguments_bytes = arguments.length(await measured_cuts(arguments.cuts))
        result_bytes = result.length(await measured_cuts(result.cuts))
        row = _row(entry, arguments.text, arguments_bytes, result.text, result_bytes)
        size = len(row["arguments"]) + len(row["result"]) + 256
        if self._bytes + size > MAX_QUEUED_BYTES:
            self.dropped += 1
            if self.dropped in (1, 10, 100) or self.dropped % 1000 == 0:
                logger.warning(
                    "call history: %d MiB wait for the database (%s); %d entries dropped so far",
                    self._bytes >> 20,
                    self.outage or "it is behind",
                    self.dropped,
                )
            return
        seq = self.spool.add(row) if self.spool is not None else None
        self._queue.append(_Owed(entry.person_id, row, size, seq, entry.on_stored))
        self._bytes += size
        if self.idle.is_set():
            self.idle = anyio.Event()
        self._wake.set()
        if len(self._queue) >= BATCH:
            self._hurry.set()

    def start(self, task_group: anyio.abc.TaskGroup) -> None:
        """Open the spool, then write in the background: first what processes that are gone still owed."""
        if self.spool is not None:
            self.spool.open()
        task_group.start_soon(self.run, name="history-writer")

    async def run(self) -> None:
        """Write what is queued, in batches, until `stop`."""
        try:
            if self.spool is not None:
                await self._take_over(self.spool.folder.parent)
            await self._write_queue()
        finally:
            self.idle.set()
            self._stopped.set()
            if self.spool is not None:
                self.spool.close()

    async def _write_queue(self) -> None:
        tries = 0
        while True:
            if not self._queue:
                self.idle.set()
                if self._stopping:
                    return
                self._wake = anyio.Event()
                await self._wake.wait()
                continue
            if not self._stopping and len(self._queue) < BATCH:
                with anyio.move_on_after(GATHER_SECONDS):
                    await self._hurry.wait()
            self._hurry = anyio.Event()
            batch = [self._queue[i] for i in range(min(BATCH, len(self._queue)))]
            try:
                await self._write(batch)
            except DatabaseUnavailable as exc:
                if self.outage is None:
                    logger.warning("call history: %s; %d entries wait to be written", exc, len(self._queue))
                self.outage = exc.reason
                if self._stopping:
                    return  # what is queued stays in the spool for the next start
                with anyio.move_on_after(RETRY_SECONDS[min(tries, len(RETRY_SECONDS) - 1)]):
                    await self._hurry.wait()
                tries += 1
                continue
            except Exception:  # one bad entry must not hold up the others, nor end the writer
                logger.exception("call history: a batch of %d entries failed; writing them one by one", len(batch))
                for owed in batch:
                    try:
                        await self._write([owed])
                    except DatabaseUnavailable:
                        break
                    except Exception:
                        logger.exception("call history: an entry of %s could not be written", owed.person_id)
                        self._done([owed])
                continue
            if self.outage is not None:
                logger.warning("call history: the database is back; the entries that waited are written")
            self.outage, tries = None, 0

    async def stop(self, timeout: float = 5.0) -> None:
        """Stop taking entries, and give the writer `timeout` seconds to write what is queued (what it cannot
        write stays in the spool)."""
        self._stopping = True
        self._hurry.set()
        self._wake.set()
        with anyio.move_on_after(timeout):
            await self._stopped.wait()

    async def _write(self, batch: list[_Owed]) -> None:
        for owed in batch:
            self._since_prune[owed.person_id] = self._since_prune.get(owed.person_id, PRUNE_EVERY) + 1
        due = [person for person, count in self._since_prune.items() if count >= PRUNE_EVERY]

        async def work(db: AsyncConnection) -> list[int]:
            # One cached statement for the whole batch ("insertmanyvalues"), ids in the rows' order.
            inserted = await db.execute(_INSERT, [owed.row for owed in batch])
            ids = [int(row_id) for row_id in inserted.scalars()]
            for person_id in due:
                await db.execute(_prune(person_id))
            return ids

        try:
            ids = await self.storage.write(work)
        except BaseException:
            for owed in batch:  # not written: counted again when the batch is tried again
                self._since_prune[owed.person_id] -= 1
            raise
        for person_id in due:
            self._since_prune[person_id] = 0
        self._done(batch)
        self.written += len(batch)
        for owed, row_id in zip(batch, ids, strict=True):
            if owed.on_stored is not None:
                owed.on_stored(_summary({**owed.row, "id": row_id}))

    def _done(self, batch: list[_Owed]) -> None:
        """These entries left the queue (stored, or refused for good)."""
        for owed in batch:
            if self._queue and self._queue[0] is owed:
                self._queue.popleft()
            else:
                self._queue.remove(owed)
            self._bytes -= owed.size
        if self.spool is not None:
            self.spool.settled([owed.seq for owed in batch if owed.seq is not None])

    async def _take_over(self, data_dir: Any) -> None:
        """Store the entries that processes now gone still owed (their spool files), then forget those files."""
        for left in spool.left_over(data_dir, self.spool.kind if self.spool else "history"):
            rows = [row for row in left.rows if _is_row(row)]
            try:
                for start in range(0, len(rows), BATCH):
                    chunk = rows[start : start + BATCH]

                    async def work(db: AsyncConnection, chunk: list[dict[str, Any]] = chunk) -> None:
                        fresh = [row for row in chunk if not await _stored_already(db, row)]
                        if fresh:
                            await db.execute(call_history.insert(), fresh)

                    await self.storage.write(work)
            except Exception as exc:
                left.release()
                logger.error(
                    "call history: %d entries left by a stopped webhost (%s) wait: %s", len(rows), left.path, exc
                )
                continue
            for row in rows:
                self._since_prune[row["person_id"]] = PRUNE_EVERY  # pruned with their next entry
            left.forget()
            if rows:
                logger.warning("call history: stored %d entries a stopped webhost had not written yet", len(rows))

    # -- reads, always of one person ---------------------------------------------------------------

    async def list(
        self, person_id: str, *, limit: int = KEEP, before: int | None = None, seen: Seen | None = None
    ) -> list[Summary]:
        """The person's newest entries (older than `before` when given), newest first, without results; with
        `seen`, only those it lets through, chosen before the limit (so a page is full when the entries are)."""
        columns = [c for c in call_history.c if c.name != "result"]
        query = sa.select(*columns).where(call_history.c.person_id == person_id, *_seen_only(seen))
        if before is not None:
            query = query.where(call_history.c.id < before)
        query = query.order_by(call_history.c.id.desc()).limit(limit)
        async with self.storage.read() as db:
            rows = (await db.execute(query)).mappings().all()
        return [_summary(row) for row in rows]

    async def get(self, person_id: str, entry_id: int, *, seen: Seen | None = None) -> Summary | None:
        """One of the person's entries with its result (a cut one as `preview` text); None if not theirs (or,
        with `seen`, not one it lets through)."""
        query = sa.select(call_history).where(
            call_history.c.person_id == person_id, call_history.c.id == entry_id, *_seen_only(seen)
        )
        async with self.storage.read() as db:
            row = (await db.execute(query)).mappings().first()
        if row is None:
            return None
        summary = _summary(row)
        if row["result_truncated"]:
            summary["preview"] = row["result"]
        else:
            summary["result"] = _loads(row["result"])
        return summary

    async def clear(self, person_id: str) -> int:
        async def work(db: AsyncConnection) -> int:
            deleted = await db.execute(call_history.delete().where(call_history.c.person_id == person_id))
            return int(deleted.rowcount or 0)

        return await self.storage.write(work)


_INSERT = call_history.insert().returning(call_history.c.id, sort_by_parameter_order=True)


@dataclass(frozen=True)
class _Bounded:
    """A value's JSON with its long strings cut (`text`), and what was cut away, not yet measured."""

    text: str
    cuts: list[Cut]

    def length(self, cut: int) -> int:
        """The whole value's JSON length, given the JSON length of what was cut."""
        return len(self.text) + cut


def _bounded(value: object, window: int) -> _Bounded:
    """The value as JSON text (the caller cuts it to `window`), and what was cut away before encoding.

    Long strings are cut to twice the window first (webhost/storage/bounded_json.py): the window's
    text is the same, and a big result is not encoded whole once more."""
    value, cuts = shortened(value, 2 * window)
    try:
        return _Bounded(jsontext.dumps(value), cuts)
    except (ValueError, TypeError, RecursionError):
        return _Bounded(json.dumps({"unencodable": repr(value)[:MAX_RESULT]}), [])


def _bounded_call(entry: Finished) -> tuple[_Bounded, _Bounded]:
    return _bounded(entry.arguments, MAX_ARGUMENTS), _bounded(entry.outcome, MAX_RESULT)


def _row(entry: Finished, arguments: str, arguments_bytes: int, result: str, result_bytes: int) -> dict[str, Any]:
    row = {
        "person_id": entry.person_id,
        "started_at": entry.started_at,
        "server": entry.server,
        "kind": entry.kind,
        "name": entry.name,
        "arguments": arguments[:MAX_ARGUMENTS],
        "arguments_truncated": arguments_bytes > MAX_ARGUMENTS,
        "result": result[:MAX_RESULT],
        "result_bytes": result_bytes,
        "result_truncated": result_bytes > MAX_RESULT,
        "status": entry.status,
        "duration_ms": round(entry.duration_ms, 3),
        "tab": entry.tab,
        "call_id": entry.call_id,
    }
    # What a page or a server chose, made storable on both engines (the JSON columns are already ASCII-safe).
    return fitted(call_history, row, ("server", "name", "status", "tab", "call_id"))


def _prune(person_id: str) -> sa.Delete:
    """Delete the person's rows older than their newest KEEP."""
    newest = (
        sa.select(call_history.c.id)
        .where(call_history.c.person_id == person_id)
        .order_by(call_history.c.id.desc())
        .limit(1)
        .offset(KEEP - 1)
        .scalar_subquery()
    )
    return call_history.delete().where(call_history.c.person_id == person_id, call_history.c.id < newest)


async def _stored_already(db: AsyncConnection, row: dict[str, Any]) -> bool:
    """Whether this very entry is stored (a spooled one whose commit came just before a SIGKILL, before the spool
    heard of it): same person, start, tab and call id."""
    same = sa.select(call_history.c.id).where(
        call_history.c.person_id == row["person_id"],
        call_history.c.started_at == row["started_at"],
        call_history.c.tab.is_not_distinct_from(row["tab"]),
        call_history.c.call_id.is_not_distinct_from(row["call_id"]),
    )
    return (await db.execute(same.limit(1))).first() is not None


def _is_row(row: dict[str, Any]) -> bool:
    """A spooled row this version can insert (every column, nothing else)."""
    return set(row) == _ROW_COLUMNS


_ROW_COLUMNS = {column.name for column in call_history.c if column.name != "id"}


def _loads(text: str) -> object:
    try:
        return json.loads(text)
    except ValueError:
        return None


def _summary(row: Any) -> Summary:
    """What the page gets for an entry: everything but the result (arguments decoded unless cut)."""
    truncated = bool(row["arguments_truncated"])
    duration = float(row["duration_ms"])
    return {
        "id": int(row["id"]),
        "startedAt": float(row["started_at"]),
        "server": row["server"],
        "kind": row["kind"],
        "name": row["name"],
        "arguments": None if truncated else _loads(row["arguments"]),
        "argumentsTruncated": truncated,
        "status": row["status"],
        "durationMs": duration if math.isfinite(duration) else None,
        "resultBytes": int(row["result_bytes"]),
        "resultTruncated": bool(row["result_truncated"]),
        "tab": row["tab"],
        "callId": row["call_id"],
    }
