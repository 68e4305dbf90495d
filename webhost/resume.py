"""Taking over a person's calls from a replica that stopped: resume the input rounds, report the rest.

When one of a person's tabs connects, this replica looks for their `live_calls` rows whose replica is
gone (`webhost/journal.py`) and takes each over (a compare-and-set, so two replicas never both do):

- a call waiting on a 2026-07-28 input round is asked again, here: each `inputRequests` entry becomes
  a pending input request for every tab of the person (first answer wins), marked `origin.resumed`;
  the answers retry the original request on this replica's connection with `inputResponses` and the
  stored `requestState`. Later rounds, if the server asks again, are ordinary ones.
- a call that had a legacy server's question open is reported as lost: that question lived in the
  dead replica's session with the server and cannot be asked again.
- a call waiting on a round of a stdio server is reported as interrupted too: the server was a process of
  the replica that stopped (stdio servers are never shared), so its `requestState` means nothing to the
  process this replica runs; asking the person again would only end in "Invalid or expired requestState".
- any other call is reported as interrupted.

Every ending reaches every tab of the person as `calls/outcome` (with the result or the error) and the
activity log. Rows of a replica still within its lease are looked at again when the lease runs out.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable, Mapping
from typing import Any

import anyio
import anyio.abc

from webhost.calls import current_origin
from webhost.elicitation.requests import InputRequests
from webhost.errors import NotConnected, RequestRefused, UpstreamError, WebhostError
from webhost.journal import CallJournal
from webhost.storage.live_calls import LiveCall
from webhost.upstream.connection import Connection

logger = logging.getLogger(__name__)

LOST_QUESTION = "the server's question was lost when webhost restarted; run the call again"
INTERRUPTED = "interrupted: the webhost process running this call stopped (a restart, crash or deploy); run it again"
STDIO_ROUND = (
    "interrupted: the server asking for input ran inside the webhost process that stopped (stdio servers are not "
    "shared), so the question cannot be asked again here; run the call again"
)
UNREADABLE = "interrupted: its input request could not be read back (another deployment secret?); run it again"
Notify = Callable[[str, dict[str, Any]], None]
Activity = Callable[..., None]


class Takeover:
    """One person's side of taking over: run on each tab that connects, one pass at a time."""

    def __init__(
        self,
        *,
        person_id: str,
        journal: CallJournal,
        connections: Mapping[str, Connection],
        requests: InputRequests,
        notify_all: Notify,
        activity: Activity,
        has_tabs: Callable[[], bool],
        connected: Callable[[Connection], Any],
        task_group: anyio.abc.TaskGroup,
    ) -> None:
        self.person_id = person_id
        self.journal = journal
        self.connections = connections
        self.requests = requests
        self.notify_all = notify_all
        self.activity = activity
        self.has_tabs = has_tabs
        self.connected = connected  # awaits the connection's next status change
        self.task_group = task_group
        self._running = False

    def tab_attached(self) -> None:
        if not self._running:
            self._running = True
            self.task_group.start_soon(self._look, name=f"takeover:{self.person_id}")

    async def _look(self) -> None:
        try:
            while self.has_tabs():
                store, me = self.journal.store, self.journal.replica_id
                try:
                    found = await store.orphans(self.person_id, me, time.time(), self.journal.lease)
                except Exception as exc:
                    logger.warning("cannot look for interrupted calls: %s", type(exc).__name__)
                    return
                for call in found.calls:
                    try:
                        claimed = await store.claim(call, self.journal.replica_id)
                    except Exception as exc:
                        logger.warning("cannot take an interrupted call over: %s", type(exc).__name__)
                        continue
                    if claimed:
                        self.task_group.start_soon(self._take, call, name=f"resume:{call.call_id}")
                if found.recheck_in is None:
                    return
                await anyio.sleep(found.recheck_in + 0.2)
        finally:
            self._running = False

    async def _take(self, call: LiveCall) -> None:
        with self.journal.adopted(call):
            if call.round is not None and self._stdio(call.server):
                self._report(call, STDIO_ROUND, reason="interrupted")
                return
            if call.round is not None:
                await self._resume(call, call.round)
                return
            if call.question:
                self._report(call, LOST_QUESTION, reason="question-lost")
            elif call.sealed:
                self._report(call, UNREADABLE, reason="unreadable")
            else:
                self._report(call, INTERRUPTED, reason="interrupted")

    def _stdio(self, server: str) -> bool:
        connection = self.connections.get(server)
        return connection is not None and connection.config.transport == "stdio"

    def _report(self, call: LiveCall, message: str, *, reason: str) -> None:
        summary = f"{call.name}: {message}"
        self.activity(call.server, direction="local", kind="error", method=call.method, summary=summary)
        self.notify_all(
            "calls/outcome",
            {
                **_described(call),
                "interrupted": True,
                "reason": reason,
                "error": {"code": UpstreamError.code, "message": message, "data": {"server": call.server}},
            },
        )

    async def _resume(self, call: LiveCall, round_: dict[str, Any]) -> None:
        """Ask the round's questions again, then retry the request with the answers, here."""
        request = round_.get("request") if isinstance(round_.get("request"), dict) else {}
        origin = {
            "method": call.method,
            "name": call.name,
            "server": call.server,
            "callId": call.call_id,
            "resumed": True,
        }
        token = current_origin.set(origin)
        try:
            connection = await self._connection(call.server)
            if connection.era != "modern":
                raise UpstreamError(
                    f"{call.server} no longer speaks 2026-07-28, so its input request cannot be resumed; "
                    "run the call again",
                    {"server": call.server},
                )
            self.activity(
                call.server,
                direction="local",
                kind="notification",
                method=call.method,
                summary=f"{call.name}: resumed here after the webhost process running it stopped",
            )
            answers = await self._answer(connection, round_.get("inputRequests") or {})
            self.journal.answered(call)
            result = await connection.client.resume(request or {}, round_, answers)
        except WebhostError as exc:
            self.notify_all("calls/outcome", {**_described(call), "resumed": True, "error": exc.to_jsonrpc()})
            return
        finally:
            current_origin.reset(token)
        self.notify_all("calls/outcome", {**_described(call), "resumed": True, "result": result})

    async def _connection(self, server: str) -> Connection:
        connection = self.connections.get(server)
        if connection is None:
            raise NotConnected(f"server {server!r} is no longer configured", {"server": server})
        with anyio.move_on_after(connection.settings.connect_timeout + 5):
            while connection.status in ("connecting", "disconnected", "needs-input"):
                await self.connected(connection)
        if connection.status != "connected":
            raise NotConnected(
                f"server {server!r} is not connected, so its input request cannot be resumed",
                {"server": server, "status": connection.status, "reason": connection.error},
            )
        return connection

    async def _answer(self, connection: Connection, requests: dict[str, Any]) -> dict[str, dict[str, Any]]:
        """Every input request of the round, asked at once (as the SDK's driver does); the first refusal ends it."""
        answers: dict[str, dict[str, Any]] = {}
        refused: list[WebhostError] = []

        async def one(key: str, request: dict[str, Any], scope: anyio.CancelScope) -> None:
            method = request.get("method")
            raw = request.get("params")
            params: dict[str, Any] = raw if isinstance(raw, dict) else {}
            try:
                if method == "elicitation/create":
                    answers[key] = await self.requests.elicit(
                        connection, "url" if params.get("mode") == "url" else "form", params
                    )
                elif method == "sampling/createMessage":
                    answers[key] = await self.requests.sample(connection, params)
                elif method == "roots/list":
                    answers[key] = {"roots": self.requests.list_roots(connection)}
                else:
                    raise RequestRefused(f"webhost cannot answer a {method!r} input request")
            except WebhostError as exc:
                refused.append(exc)
                scope.cancel()

        async with anyio.create_task_group() as tg:
            for key, request in requests.items():
                if isinstance(request, dict):
                    tg.start_soon(one, key, request, tg.cancel_scope)
        if refused:
            raise refused[0]
        return answers


def _described(call: LiveCall) -> dict[str, Any]:
    return {
        "callId": call.call_id,
        "server": call.server,
        "method": call.method,
        "name": call.name,
        "startedAt": call.started_at,
    }
