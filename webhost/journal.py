"""The replica's journal: which calls run here, and what each waits on, kept in the database.

Each running page call gets a `live_calls` row when it starts and loses it when it ends; while it waits
on a 2026-07-28 input round the row holds that round (sealed), and while a legacy server's question
is open the row says so. If this replica dies, another one finds the rows (`webhost/resume.py`):
rounds are asked again there, the rest are reported as interrupted.

Writes never hold up a call: they are queued and applied in order by one task, a batch per
transaction. What is queued waits `SETTLE_SECONDS` before it is written, so a call that ends sooner
(most calls, and a round a person or an App answers within it) costs no write at all. A
replica that stops cleanly keeps the rows of calls waiting on a person (the next replica asks again)
and releases its heartbeat row, so they are free at once; a killed one stops beating, and its rows
are free once its lease has run out.
"""

from __future__ import annotations

import itertools
import logging
import secrets
import time
from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager, contextmanager, nullcontext
from dataclasses import dataclass
from typing import Any

import anyio
import anyio.abc

from webhost.storage.live_calls import LiveCall, LiveCallStore, Write
from webhost.upstream.rounds import round_listener

logger = logging.getLogger(__name__)

HEARTBEAT_SECONDS = 2.0
# A change younger than this is not in the database yet: if the replica dies then, the page only sees
# its connection lost (that call is not reported interrupted, that question not asked again), and no
# call or round answered sooner pays a write.
SETTLE_SECONDS = 1.0
LEASE_SECONDS = 10.0  # a replica silent this long is gone: another one takes its calls over
PRUNE_AFTER_SECONDS = 7 * 24 * 3600

CallHook = Callable[[str | None, dict[str, Any]], AbstractContextManager[None]]


@dataclass(eq=False)
class Entry:
    """One call this replica runs, as the journal knows it."""

    id: str
    person_id: str
    tab: str | None
    call_id: str
    waiting_round: bool = False
    question: bool = False


class CallJournal:
    def __init__(
        self,
        store: LiveCallStore,
        *,
        replica_id: str | None = None,
        heartbeat: float = HEARTBEAT_SECONDS,
        lease: float = LEASE_SECONDS,
        settle: float = SETTLE_SECONDS,
    ) -> None:
        self.store = store
        self.replica_id = replica_id or "r-" + secrets.token_urlsafe(9)
        # A call's row id: random once per journal, counted after (a random draw per call is a system call).
        self._row_prefix = "lc-" + secrets.token_urlsafe(9) + "-"
        self._row_numbers = itertools.count(1)
        self.heartbeat = heartbeat
        self.lease = lease
        self.settle = settle
        self.stopping = False  # set when the replica stops cleanly (before the tabs' calls are cancelled)
        self._entries: dict[tuple[str, str | None, str], Entry] = {}
        self._queue: list[Write] = []
        self._wake = anyio.Event()  # something is queued
        self._urgent = anyio.Event()  # write what is queued now (a flush), not after the settle time
        self._idle = anyio.Event()
        self._idle.set()

    # -- lifetime ---------------------------------------------------------------------------------

    async def start(self, task_group: anyio.abc.TaskGroup) -> None:
        """Beat once (so this replica is alive before any tab can connect), then keep beating and writing."""
        await self._beat()
        try:
            await self.store.prune(time.time(), older_than=PRUNE_AFTER_SECONDS)
        except Exception as exc:
            logger.warning("cannot prune old live calls: %s", type(exc).__name__)
        task_group.start_soon(self._beat_forever, name="journal-heartbeat")
        task_group.start_soon(self._write_forever, name="journal-writer")

    async def close(self) -> None:
        """A clean stop: write what is queued, then give this replica's calls up to any other replica."""
        self.stopping = True
        await self.flush()
        try:
            await self.store.release(self.replica_id)
        except Exception as exc:
            logger.warning("cannot release this replica's calls: %s", type(exc).__name__)

    async def flush(self) -> None:
        while self._queue or not self._idle.is_set():
            self._urgent.set()
            await self._idle.wait()
            if self._queue:
                await anyio.sleep(0)

    # -- what the calls tell it -------------------------------------------------------------------

    def hook(self, person_id: str) -> CallHook:
        """For `CallRegistry`: record each call of this person while it runs."""

        def record(tab: str | None, origin: dict[str, Any]) -> AbstractContextManager[None]:
            return self.running(person_id, tab, origin)

        return record

    @contextmanager
    def running(self, person_id: str, tab: str | None, origin: dict[str, Any]) -> Iterator[None]:
        entry = Entry(self._row_prefix + str(next(self._row_numbers)), person_id, tab, str(origin.get("callId", "")))
        self._post(
            Write(
                "insert",
                entry.id,
                {
                    "replica_id": self.replica_id,
                    "person_id": person_id,
                    "server": str(origin.get("server", "")),
                    "method": str(origin.get("method", "")),
                    "name": str(origin.get("name") or origin.get("uri") or ""),
                    "call_id": entry.call_id,
                    "tab_id": tab,
                    "started_at": time.time(),
                    "question": False,
                },
            )
        )
        with self._tracked(entry):
            yield

    @contextmanager
    def adopted(self, call: LiveCall) -> Iterator[None]:
        """A call taken over from a replica that is gone (its row, now ours): tracked like our own from here."""
        entry = Entry(call.id, call.person_id, None, call.call_id, waiting_round=call.round is not None)
        with self._tracked(entry):
            yield

    @contextmanager
    def _tracked(self, entry: Entry) -> Iterator[None]:
        key = (entry.person_id, entry.tab, entry.call_id)
        self._entries[key] = entry
        token = round_listener.set(lambda request, round_: self._round(entry, request, round_))
        try:
            yield
        finally:
            round_listener.reset(token)
            if self._entries.get(key) is entry:
                del self._entries[key]
            # A delete for a row never written folds away with its insert in the batch (`_coalesced`).
            if not (self.stopping and (entry.waiting_round or entry.question)):
                self._post(Write("delete", entry.id, {}))

    def answered(self, call: LiveCall) -> None:
        """The resumed round was answered here: it no longer waits on anyone."""
        for entry in self._entries.values():
            if entry.id == call.id:
                self._round(entry, {}, None)

    def question(self, person_id: str, tab: str | None, call_id: str | None) -> AbstractContextManager[None]:
        """A legacy server's question is open during this call (it cannot survive this replica)."""
        entry = self._entries.get((person_id, tab, call_id or ""))
        return nullcontext() if entry is None else self._question(entry)

    @contextmanager
    def _question(self, entry: Entry) -> Iterator[None]:
        if entry.question:
            yield
            return
        entry.question = True
        self._post(Write("update", entry.id, {"question": True}))
        try:
            yield
        finally:
            if not self.stopping:
                entry.question = False
                self._post(Write("update", entry.id, {"question": False}))

    def _round(self, entry: Entry, request: dict[str, Any], round_: dict[str, Any] | None) -> None:
        if self.stopping:
            return  # the round stays as written: the next replica asks it again
        if round_ is None:
            entry.waiting_round = False
            self._post(Write("update", entry.id, {"sealed_round": None, "round_at": None}))
            return
        entry.waiting_round = True
        sealed = self.store.sealed_round(entry.person_id, entry.id, {"request": request, **round_})
        self._post(Write("update", entry.id, {"sealed_round": sealed, "round_at": time.time()}))

    # -- the writer and the heartbeat ---------------------------------------------------------------

    def _post(self, write: Write) -> None:
        self._queue.append(write)
        self._idle = anyio.Event() if self._idle.is_set() else self._idle
        self._wake.set()

    async def _write_forever(self) -> None:
        while True:
            await self._wake.wait()
            if not self._urgent.is_set():
                with anyio.move_on_after(self.settle):
                    await self._urgent.wait()
            self._wake = anyio.Event()
            self._urgent = anyio.Event()
            batch, self._queue = _coalesced(self._queue), []
            try:
                if batch:
                    await self.store.apply(batch)
            except Exception as exc:  # the database is unavailable: the calls go on, unrecorded
                logger.warning("cannot record %d live call change(s): %s", len(batch), type(exc).__name__)
            if not self._queue:
                self._idle.set()

    async def _beat_forever(self) -> None:
        while True:
            await anyio.sleep(self.heartbeat)
            if not self.stopping:
                await self._beat()

    async def _beat(self) -> None:
        try:
            await self.store.beat(self.replica_id, time.time())
        except Exception as exc:
            logger.warning("cannot record this replica's heartbeat: %s", type(exc).__name__)


def _coalesced(writes: list[Write]) -> list[Write]:
    """One write per row for the batch: nothing for a call that started and ended within it, only the
    delete for one that ended, and a row's inserts and updates folded into one in their order."""
    folded: dict[str, Write] = {}
    for write in writes:
        before = folded.get(write.row_id)
        if write.kind == "delete":
            if before is not None and before.kind == "insert":
                del folded[write.row_id]  # never written: nothing to write, nothing to delete
            else:
                folded[write.row_id] = write
        elif before is None or before.kind == "delete":
            folded[write.row_id] = write
        else:  # an update after the row's insert or update: the later values win
            folded[write.row_id] = Write(before.kind, write.row_id, {**before.values, **write.values})
    return list(folded.values())
