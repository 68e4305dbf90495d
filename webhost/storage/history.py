"""Each person's call history: every tools/call, resources/read and prompts/get a tab makes, in the database.

A handler hands a finished call to `CallHistory.record`, which only queues it: the call's answer
never waits on the database. One writer task takes the queue in batches, and off the event loop
encodes each entry as the server answered it (a person's results are theirs: nothing is masked by
value, docs/security.md "Secrets"), and bounds it: arguments over `MAX_ARGUMENTS` and results over
`MAX_RESULT` bytes keep a cut copy, marked truncated with the full size. Then one transaction writes
the batch (what arrived within `GATHER_SECONDS`) and, every `PRUNE_EVERY` rows of a person, keeps
their newest `KEEP`. Every query names the person: nobody reads
anyone else's history, admins included.
"""

from __future__ import annotations

import json
import logging
import math
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import anyio
import sqlalchemy as sa
from anyio.streams.memory import MemoryObjectReceiveStream, MemoryObjectSendStream

from webhost import jsontext
from webhost.storage.bounded_json import shortened
from webhost.storage.db import Storage, metadata
from webhost.storage.portable import fitted

logger = logging.getLogger(__name__)

KEEP = 300  # rows per person
MAX_ARGUMENTS = 16 * 1024
MAX_RESULT = 64 * 1024
QUEUE = 1000  # entries waiting for the writer; past it an entry is dropped (and counted), never waited for
BATCH = 100
# The writer gathers what arrives this long after an entry into one transaction: a burst of calls costs
# one commit, and the write stays out of the moments right after each answer.
GATHER_SECONDS = 0.2
PRUNE_EVERY = 25  # rows a person gains between two prunes (their rows stay within KEEP + PRUNE_EVERY)
KINDS = ("tool", "resource", "prompt")

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


class CallHistory:
    """The queue, its writer task (`run`, started by the composition root) and the reads."""

    def __init__(self, storage: Storage) -> None:
        self.storage = storage
        self._send: MemoryObjectSendStream[Finished]
        self._receive: MemoryObjectReceiveStream[Finished]
        self._send, self._receive = anyio.create_memory_object_stream[Finished](QUEUE)
        self.dropped = 0
        self.idle = anyio.Event()  # set whenever the queue has been written out (tests wait on it)
        self.idle.set()
        self._stopped = anyio.Event()
        self._since_prune: dict[str, int] = {}  # rows written per person since their last prune

    def record(self, entry: Finished) -> None:
        try:
            self._send.send_nowait(entry)
            if self.idle.is_set():
                self.idle = anyio.Event()
        except anyio.WouldBlock:
            self.dropped += 1
            logger.warning("call history: the writer is behind, %d entries dropped so far", self.dropped)
        except anyio.ClosedResourceError:
            pass  # webhost is stopping

    async def run(self) -> None:
        """Write what is queued, in batches, until `stop`."""
        try:
            async with self._receive:
                async for first in self._receive:
                    batch = [first]
                    with anyio.move_on_after(GATHER_SECONDS):
                        try:
                            while len(batch) < BATCH:
                                batch.append(await self._receive.receive())
                        except anyio.EndOfStream:
                            pass  # stopping: write what came
                    while len(batch) < BATCH:
                        try:
                            batch.append(self._receive.receive_nowait())
                        except (anyio.WouldBlock, anyio.EndOfStream):
                            break
                    try:
                        await self._write(batch)
                    except Exception:  # a full disk must not end the writer, nor reach a call
                        logger.exception("call history: %d entries could not be written", len(batch))
                    if self._receive.statistics().current_buffer_used == 0:
                        self.idle.set()
        finally:
            self.idle.set()
            self._stopped.set()

    async def stop(self, timeout: float = 5.0) -> None:
        """Stop taking entries, and give the writer `timeout` seconds to write what is queued."""
        self._send.close()
        with anyio.move_on_after(timeout):
            await self._stopped.wait()

    async def _write(self, batch: list[Finished]) -> None:
        rows = await anyio.to_thread.run_sync(lambda: [self._row(entry) for entry in batch])
        for entry in batch:
            self._since_prune[entry.person_id] = self._since_prune.get(entry.person_id, PRUNE_EVERY) + 1
        due = [person for person, count in self._since_prune.items() if count >= PRUNE_EVERY]
        async with self.storage.engine.begin() as db:
            # One cached statement for the whole batch ("insertmanyvalues"), ids in the rows' order.
            inserted = await db.execute(_INSERT, rows)
            ids = [int(row_id) for row_id in inserted.scalars()]
            for person_id in due:
                await db.execute(_prune(person_id))
                self._since_prune[person_id] = 0
        for entry, row, row_id in zip(batch, rows, ids, strict=True):
            if entry.on_stored is not None:
                entry.on_stored(_summary({**row, "id": row_id}))

    def _row(self, entry: Finished) -> dict[str, Any]:
        arguments, arguments_bytes = self._bounded(entry.arguments, MAX_ARGUMENTS)
        result, result_bytes = self._bounded(entry.outcome, MAX_RESULT)
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

    def _bounded(self, value: object, window: int) -> tuple[str, int]:
        """The value as JSON text, and its length (the caller cuts it to `window`).

        Long strings are cut to twice the window first (webhost/storage/bounded_json.py): the window's
        text is the same, and a big result is not encoded whole once more."""
        value, removed = shortened(value, 2 * window)
        try:
            text = jsontext.dumps(value)
        except (ValueError, TypeError, RecursionError):
            text = json.dumps({"unencodable": repr(value)[:MAX_RESULT]})
        return text, len(text) + removed

    # -- reads, always of one person ---------------------------------------------------------------

    async def list(self, person_id: str, *, limit: int = KEEP, before: int | None = None) -> list[Summary]:
        """The person's newest entries (older than `before` when given), newest first, without results."""
        columns = [c for c in call_history.c if c.name != "result"]
        query = sa.select(*columns).where(call_history.c.person_id == person_id)
        if before is not None:
            query = query.where(call_history.c.id < before)
        query = query.order_by(call_history.c.id.desc()).limit(limit)
        async with self.storage.engine.connect() as db:
            rows = (await db.execute(query)).mappings().all()
        return [_summary(row) for row in rows]

    async def get(self, person_id: str, entry_id: int) -> Summary | None:
        """One of the person's entries with its result (a cut one as `preview` text); None if not theirs."""
        query = sa.select(call_history).where(call_history.c.person_id == person_id, call_history.c.id == entry_id)
        async with self.storage.engine.connect() as db:
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
        async with self.storage.engine.begin() as db:
            deleted = await db.execute(call_history.delete().where(call_history.c.person_id == person_id))
        return int(deleted.rowcount or 0)


_INSERT = call_history.insert().returning(call_history.c.id, sort_by_parameter_order=True)


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
