"""The browser WebSocket: JSON-RPC 2.0 framing between one tab and its BrowserSession.

Requests are served concurrently (a slow tool call never blocks a resource read); a frame that
is not valid JSON-RPC gets an error response and the socket stays open (`frames.py`). What the tab
is sent goes through a bounded outbox (`outbox.py`); large results are encoded off the event loop
and refused past `webhost.limits.maxResultBytes`. A tab that opened `/ws?parts=1` gets a very large
result in parts, made while they are sent (`response_parts.py`).
"""

from __future__ import annotations

import asyncio
import logging
import secrets
from collections.abc import Callable, Coroutine
from typing import Any

import anyio
from starlette.websockets import WebSocket, WebSocketDisconnect

from webhost import frames, jsontext, response_parts
from webhost.calls import current_tab
from webhost.config.limits import Limits
from webhost.directory import ENDED_CLOSE_CODE
from webhost.errors import (
    INTERNAL_ERROR,
    INVALID_REQUEST,
    METHOD_NOT_FOUND,
    PARSE_ERROR,
    POLICY_REFUSED,
    STOPPING,
    WebhostError,
)
from webhost.jsonsize import size_at_most
from webhost.methods import METHODS
from webhost.outbox import CLOSE_CODE, Outbox
from webhost.pending import Publish
from webhost.session import BrowserSession
from webhost.storage.transactions import DatabaseUnavailable

logger = logging.getLogger(__name__)

MAX_FRAME = 16 * 1024 * 1024
ENCODE_IN_THREAD = 1024 * 1024  # results above this are encoded off the event loop
SessionFactory = Callable[[Publish], BrowserSession]


STOPPING_CLOSE_CODE = 1001  # "going away"
STOPPING_MESSAGE = "webhost is stopping"


class Tabs:
    """The live sockets, so that webhost's shutdown can answer what each tab still waits for."""

    def __init__(self) -> None:
        self._tabs: set[_Tab] = set()
        self.stopping = False

    def add(self, tab: _Tab) -> None:
        self._tabs.add(tab)

    def discard(self, tab: _Tab) -> None:
        self._tabs.discard(tab)

    @property
    def sessions(self) -> list[BrowserSession]:
        return [tab.session for tab in self._tabs]

    async def stop(self, timeout: float) -> None:
        """Answer every request in flight with "webhost is stopping", close each socket, end its session.

        Bounded by `timeout` overall; what is not done by then is left to the server's own shutdown. Sockets that
        open after this call are closed at once with the same reason.
        """
        self.stopping = True
        with anyio.move_on_after(timeout):
            async with anyio.create_task_group() as tg:
                for tab in list(self._tabs):
                    tg.start_soon(tab.stop)


class _Tab:
    """One socket's session, outbox and requests in flight (token → request id and method)."""

    def __init__(self, websocket: WebSocket, session: BrowserSession, outbox: Outbox, scope: anyio.CancelScope) -> None:
        self.websocket = websocket
        self.parts = websocket.query_params.get("parts") == "1"  # the tab reads `response/part` (docs/api.md)
        self.session = session
        self.outbox = outbox
        self.scope = scope
        self.in_flight: dict[int, tuple[Any, str]] = {}
        self._tokens = 0
        self._requests: set[asyncio.Task[None]] = set()
        self.writer_done = anyio.Event()
        self.done = anyio.Event()

    def serve(self, request: Coroutine[Any, Any, None]) -> None:
        """Run one request in an asyncio task of its own. A task group's `start_soon` costs about ten times as
        much per request (~25 µs against ~2.5), on every call; `end_requests` does what the group's exit did."""
        task = asyncio.get_running_loop().create_task(request)
        self._requests.add(task)
        task.add_done_callback(self._request_done)

    def _request_done(self, task: asyncio.Task[None]) -> None:
        self._requests.discard(task)
        if not task.cancelled() and (exc := task.exception()) is not None:
            logger.error("a request's task failed", exc_info=exc)

    async def end_requests(self) -> None:
        """Cancel the requests still running and wait until each has ended."""
        for task in self._requests:
            task.cancel()
        with anyio.CancelScope(shield=True):
            while self._requests:
                await asyncio.wait(set(self._requests))

    def begin(self, request_id: Any, method: str) -> int:
        self._tokens += 1
        self.in_flight[self._tokens] = (request_id, method)
        return self._tokens

    async def stop(self) -> None:
        for request_id, method in self.in_flight.values():
            _post(
                self.outbox,
                {
                    "jsonrpc": "2.0",
                    "id": request_id,
                    "error": {"code": STOPPING, "message": STOPPING_MESSAGE, "data": {"method": method}},
                },
            )
        self.in_flight.clear()
        self.outbox.close()  # the writer sends what is queued, then ends
        with anyio.move_on_after(2):
            await self.writer_done.wait()
        with anyio.move_on_after(1):
            try:
                await self.websocket.close(code=STOPPING_CLOSE_CODE, reason=STOPPING_MESSAGE)
            except Exception:  # the tab may already be gone
                pass
        self.scope.cancel()  # the socket's loop ends its session: calls cancelled, server processes stopped
        await self.done.wait()


async def serve_websocket(
    websocket: WebSocket,
    new_session: SessionFactory,
    end_session: Callable[[BrowserSession], None],
    tabs: Tabs,
    limits: Limits,
) -> None:
    """Serve one tab: a session for its lifetime, requests in, responses and notifications out."""
    await websocket.accept()
    if tabs.stopping:
        await websocket.close(code=STOPPING_CLOSE_CODE, reason=STOPPING_MESSAGE)
        return
    outbox = Outbox(max_bytes=limits.max_queued_bytes)

    def notify(method: str, params: dict[str, Any]) -> None:
        if method == "activity" and "entry" in params:
            _post_entry(outbox, params["entry"])
            return
        _post(outbox, {"jsonrpc": "2.0", "method": method, "params": params}, method=method)

    session = new_session(notify)
    tab: _Tab | None = None
    try:
        async with anyio.create_task_group() as tg:
            tab = _Tab(websocket, session, outbox, tg.cancel_scope)
            tabs.add(tab)
            tg.start_soon(_write_loop, websocket, outbox, tab.writer_done)
            tg.start_soon(_close_on_overflow, websocket, outbox, tg.cancel_scope)
            tg.start_soon(_close_when_ended, websocket, session, tg.cancel_scope)
            try:
                await _read_loop(websocket, tab, limits)
            finally:
                try:
                    # A tab that went away (a reload) leaves its tool calls running for the person's next tab;
                    # one ended on purpose, or by webhost stopping, takes them with it.
                    await session.close(leave_calls=not tabs.stopping and not session.ended.is_set())
                finally:
                    await tab.end_requests()  # the requests' tasks are not the group's: ended here, always
                    tg.cancel_scope.cancel()
    finally:
        end_session(session)
        if tab is not None:
            tabs.discard(tab)
            tab.done.set()
        outbox.close()


def _post(outbox: Outbox, message: dict[str, Any], *, method: str | None = None) -> None:
    text = _encoded(outbox, message)
    if text is not None:
        outbox.post(text, method=method)


def _encoded(outbox: Outbox, message: dict[str, Any]) -> str | None:
    try:
        return jsontext.dumps(message)
    except (ValueError, RecursionError):
        # A value JSON cannot carry (NaN from a server): send it as an error rather than drop the reply.
        if "id" in message:
            _post(outbox, _not_encodable(message["id"]))
        return None


def _post_entry(outbox: Outbox, entry: dict[str, Any]) -> None:
    """One activity entry, encoded now (later changes to the data it shares with a result cannot reach it)
    and sent in the next coalesced `activity` frame; one that JSON cannot carry is dropped, as before."""
    try:
        text = jsontext.dumps(entry)
    except (ValueError, RecursionError):
        return
    outbox.post_entry(text)


async def _write_loop(websocket: WebSocket, outbox: Outbox, done: anyio.Event) -> None:
    try:
        await outbox.drain(websocket.send_text)
    except Exception:  # the tab went away; the read loop ends the session
        return
    finally:
        done.set()


async def _close_on_overflow(websocket: WebSocket, outbox: Outbox, scope: anyio.CancelScope) -> None:
    """A tab that stopped reading is closed with the reason, and its session ends."""
    await outbox.overflowed.wait()
    logger.warning("closing a tab that is not reading: %d bytes were queued for it", outbox.max_bytes)
    scope.cancel()
    with anyio.move_on_after(2, shield=True):
        try:
            await websocket.close(code=CLOSE_CODE, reason="the tab was not reading what webhost sent")
        except Exception:
            pass


async def _close_when_ended(websocket: WebSocket, session: BrowserSession, scope: anyio.CancelScope) -> None:
    """A tab someone ended (`sessions/end`) is closed with the reason, and its session ends."""
    await session.ended.wait()
    scope.cancel()
    with anyio.move_on_after(2, shield=True):
        try:
            await websocket.close(code=ENDED_CLOSE_CODE, reason=session.end_reason)
        except Exception:
            pass


async def _read_loop(websocket: WebSocket, tab: _Tab, limits: Limits) -> None:
    outbox = tab.outbox
    while True:
        try:
            message = await websocket.receive()
        except WebSocketDisconnect:
            return
        if message["type"] == "websocket.disconnect":
            return
        text = message.get("text")
        if text is None:
            raw = message.get("bytes") or b""
            try:
                text = raw.decode("utf-8")
            except UnicodeDecodeError:
                _post(outbox, frames.error(None, PARSE_ERROR, "frames must be UTF-8 JSON"))
                continue
        if len(text) > MAX_FRAME:
            _post(outbox, frames.error(None, INVALID_REQUEST, f"frame larger than {MAX_FRAME} characters"))
            continue
        request = frames.parse(text)
        if isinstance(request, dict):
            _post(outbox, request)
            continue
        tab.serve(_handle(tab, limits, *request))


async def _handle(tab: _Tab, limits: Limits, request_id: Any, method: str, params: dict[str, Any]) -> None:
    token = None if request_id is None else tab.begin(request_id, method)
    in_tab = current_tab.set(tab.session.id)  # what this request causes upstream is this tab's (its activity)
    try:
        await _answer(tab, limits, token, request_id, method, params)
    finally:
        current_tab.reset(in_tab)
        if token is not None:
            tab.in_flight.pop(token, None)


async def _answer(
    tab: _Tab, limits: Limits, token: int | None, request_id: Any, method: str, params: dict[str, Any]
) -> None:
    session, outbox = tab.session, tab.outbox
    handler = METHODS.get(method)
    if handler is None:
        if request_id is not None:
            _post(outbox, frames.error(request_id, METHOD_NOT_FOUND, f"unknown method {method!r}"))
        return
    try:
        result = await handler(session, params)
    except WebhostError as exc:
        response = {"jsonrpc": "2.0", "id": request_id, "error": exc.to_jsonrpc()}
    except anyio.get_cancelled_exc_class():
        raise
    except DatabaseUnavailable as exc:  # webhost's own failure, said plainly: no traceback, no reference
        logger.warning("%s: %s", method, exc)
        response = frames.error(request_id, INTERNAL_ERROR, str(exc))
        response["error"]["data"] = {"reason": exc.reason}
    except Exception:  # a bug must answer the request, not kill the socket
        response = _internal_error(request_id, method)
    else:
        response = {"jsonrpc": "2.0", "id": request_id, "result": result}
    if request_id is None:
        return
    if token not in tab.in_flight:
        return  # already answered: webhost is stopping
    if "result" in response and not size_at_most(response["result"], min(ENCODE_IN_THREAD, limits.max_result_bytes)):
        if tab.parts and not size_at_most(response["result"], response_parts.STREAM_OVER):
            await _post_parts(tab, response, limits)
        else:
            await _post_large(outbox, response, limits)
        return
    text = _encoded(outbox, response)
    if text is not None:
        await outbox.send_response(text)


async def _post_parts(tab: _Tab, response: dict[str, Any], limits: Limits) -> None:
    """A very large result in parts, made as the writer sends them: its size measured first, within the cap."""
    try:
        chars = await response_parts.measured(response)
    except (ValueError, RecursionError):
        _post(tab.outbox, _not_encodable(response["id"]))
        return
    if chars > limits.max_result_bytes:
        _post(tab.outbox, _too_large(response["id"], chars, limits))
        return
    tab.outbox.post_stream(response_parts.part_frames(response["id"], response, chars), chars)


async def _post_large(outbox: Outbox, response: dict[str, Any], limits: Limits) -> None:
    """Encode a big result in a worker thread (every other tab keeps its event loop), within the cap."""
    try:
        text = await anyio.to_thread.run_sync(lambda: jsontext.dumps(response))
    except (ValueError, RecursionError):
        _post(outbox, _not_encodable(response["id"]))
        return
    if len(text) > limits.max_result_bytes:
        _post(outbox, _too_large(response["id"], len(text), limits))
        return
    outbox.post(text)


def _internal_error(request_id: Any, method: str) -> dict[str, Any]:
    """A bug in webhost, answered without its details: the tab gets a reference, the log the traceback with it
    (call from the `except` block that caught it)."""
    ref = secrets.token_hex(4)
    logger.exception("method %s failed (ref %s)", method, ref)
    response = frames.error(request_id, INTERNAL_ERROR, f"internal error (ref {ref})")
    response["error"]["data"] = {"ref": ref}
    return response


def _not_encodable(request_id: Any) -> dict[str, Any]:
    """A result JSON cannot carry (a NaN a server sent): webhost could not send it, so the failure is its own."""
    return frames.error(request_id, INTERNAL_ERROR, "the result could not be encoded as JSON")


def _too_large(request_id: Any, chars: int, limits: Limits) -> dict[str, Any]:
    """A result past the configured cap: refused by webhost's limit, not failed by the server."""
    return frames.error(
        request_id,
        POLICY_REFUSED,
        f"the result is too large to send ({_size(chars)}; the limit is {_size(limits.max_result_bytes)}, "
        "webhost.limits.maxResultBytes)",
    )


def _size(count: int) -> str:
    return f"{count / (1024 * 1024):.1f} MiB" if count >= 1024 * 1024 else f"{count / 1024:.0f} KiB"
