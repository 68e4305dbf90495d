"""The browser WebSocket: JSON-RPC 2.0 framing between one tab and its BrowserSession.

Requests are served concurrently (a slow tool call never blocks a resource read); a frame that
is not valid JSON-RPC gets an error response and the socket stays open (`frames.py`). What the tab
is sent goes through a bounded outbox (`outbox.py`); large results are encoded off the event loop
and refused past `webhost.limits.maxResultBytes`.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Callable
from typing import Any

import anyio
import anyio.abc
from starlette.websockets import WebSocket, WebSocketDisconnect

from webhost import frames
from webhost.config import Limits
from webhost.directory import ENDED_CLOSE_CODE
from webhost.errors import INVALID_REQUEST, METHOD_NOT_FOUND, PARSE_ERROR, UPSTREAM_ERROR, WebhostError
from webhost.jsonsize import size_at_most
from webhost.methods import METHODS
from webhost.outbox import CLOSE_CODE, Outbox
from webhost.pending import Publish
from webhost.session import BrowserSession

logger = logging.getLogger(__name__)

MAX_FRAME = 16 * 1024 * 1024
ENCODE_IN_THREAD = 1024 * 1024  # results above this are encoded off the event loop
SessionFactory = Callable[[Publish], BrowserSession]


async def serve_websocket(
    websocket: WebSocket, new_session: SessionFactory, end_session: Callable[[BrowserSession], None], limits: Limits
) -> None:
    """Serve one tab: a session for its lifetime, requests in, responses and notifications out."""
    await websocket.accept()
    outbox = Outbox(max_bytes=limits.max_queued_bytes)

    def notify(method: str, params: dict[str, Any]) -> None:
        _post(outbox, {"jsonrpc": "2.0", "method": method, "params": params}, method=method)

    session = new_session(notify)
    try:
        async with anyio.create_task_group() as tg:
            tg.start_soon(_write_loop, websocket, outbox)
            tg.start_soon(_close_on_overflow, websocket, outbox, tg.cancel_scope)
            tg.start_soon(_close_when_ended, websocket, session, tg.cancel_scope)
            try:
                await _read_loop(websocket, session, tg, outbox, limits)
            finally:
                await session.close()
                tg.cancel_scope.cancel()
    finally:
        end_session(session)
        outbox.close()


def _post(outbox: Outbox, message: dict[str, Any], *, method: str | None = None) -> None:
    try:
        text = json.dumps(message, separators=(",", ":"), allow_nan=False)
    except (ValueError, RecursionError):
        # A value JSON cannot carry (NaN from a server): send it as an error rather than drop the reply.
        if "id" in message:
            _post(outbox, frames.error(message["id"], UPSTREAM_ERROR, "the result could not be encoded as JSON"))
        return
    outbox.post(text, method=method)


async def _write_loop(websocket: WebSocket, outbox: Outbox) -> None:
    try:
        await outbox.drain(websocket.send_text)
    except Exception:  # the tab went away; the read loop ends the session
        return


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


async def _read_loop(
    websocket: WebSocket, session: BrowserSession, tg: anyio.abc.TaskGroup, outbox: Outbox, limits: Limits
) -> None:
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
        tg.start_soon(_handle, session, outbox, limits, *request)


async def _handle(
    session: BrowserSession, outbox: Outbox, limits: Limits, request_id: Any, method: str, params: dict[str, Any]
) -> None:
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
    except Exception as exc:  # a bug must answer the request, not kill the socket
        logger.exception("method %s failed", method)
        response = frames.error(request_id, UPSTREAM_ERROR, f"internal error: {type(exc).__name__}: {exc}")
    else:
        response = {"jsonrpc": "2.0", "id": request_id, "result": result}
    if request_id is None:
        return
    if "result" in response and not size_at_most(response["result"], min(ENCODE_IN_THREAD, limits.max_result_bytes)):
        await _post_large(outbox, response, limits)
        return
    _post(outbox, response)


async def _post_large(outbox: Outbox, response: dict[str, Any], limits: Limits) -> None:
    """Encode a big result in a worker thread (every other tab keeps its event loop), within the cap."""
    try:
        text = await anyio.to_thread.run_sync(lambda: json.dumps(response, separators=(",", ":"), allow_nan=False))
    except (ValueError, RecursionError):
        _post(outbox, frames.error(response["id"], UPSTREAM_ERROR, "the result could not be encoded as JSON"))
        return
    if len(text) > limits.max_result_bytes:
        _post(outbox, frames.error(
            response["id"], UPSTREAM_ERROR,
            f"the result is too large to send ({_size(len(text))}; the limit is {_size(limits.max_result_bytes)}, "
            "webhost.limits.maxResultBytes)"))
        return
    outbox.post(text)


def _size(count: int) -> str:
    return f"{count / (1024 * 1024):.1f} MiB" if count >= 1024 * 1024 else f"{count / 1024:.0f} KiB"
