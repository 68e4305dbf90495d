"""The browser WebSocket: JSON-RPC 2.0 framing between one tab and its BrowserSession.

Requests are served concurrently (a slow tool call never blocks a resource read); a frame that
is not valid JSON-RPC gets an error response and the socket stays open.
"""

from __future__ import annotations

import json
import logging
import math
from collections.abc import Callable
from typing import Any

import anyio
import anyio.abc
from anyio.streams.memory import MemoryObjectReceiveStream
from starlette.websockets import WebSocket, WebSocketDisconnect

from webhost.errors import (
    INVALID_REQUEST,
    METHOD_NOT_FOUND,
    PARSE_ERROR,
    UPSTREAM_ERROR,
    WebhostError,
)
from webhost.methods import METHODS
from webhost.pending import Publish
from webhost.session import BrowserSession

logger = logging.getLogger(__name__)

MAX_FRAME = 16 * 1024 * 1024


SessionFactory = Callable[[Publish], BrowserSession]


async def serve_websocket(websocket: WebSocket, new_session: SessionFactory, sessions: set[BrowserSession]) -> None:
    """Serve one tab: a session for its lifetime, requests in, responses and notifications out."""
    await websocket.accept()
    outbox_send, outbox_receive = anyio.create_memory_object_stream[str](math.inf)

    def notify(method: str, params: dict[str, Any]) -> None:
        _post(outbox_send, {"jsonrpc": "2.0", "method": method, "params": params})

    session = new_session(notify)
    sessions.add(session)
    try:
        async with anyio.create_task_group() as tg:
            tg.start_soon(_write_loop, websocket, outbox_receive)
            session.start(tg)
            try:
                await _read_loop(websocket, session, tg, outbox_send)
            finally:
                await session.close()
                tg.cancel_scope.cancel()
    finally:
        sessions.discard(session)
        outbox_send.close()


def _post(outbox: Any, message: dict[str, Any]) -> None:
    try:
        outbox.send_nowait(json.dumps(message, separators=(",", ":"), allow_nan=False))
    except (anyio.ClosedResourceError, anyio.BrokenResourceError):
        pass
    except ValueError:
        # A value JSON cannot carry (NaN from a server): send it as an error rather than drop the reply.
        if "id" in message:
            _post(outbox, _error(message["id"], UPSTREAM_ERROR, "the result could not be encoded as JSON"))


async def _write_loop(websocket: WebSocket, outbox: MemoryObjectReceiveStream[str]) -> None:
    async with outbox:
        async for text in outbox:
            try:
                await websocket.send_text(text)
            except Exception:  # the tab went away; the read loop ends the session
                return


async def _read_loop(
    websocket: WebSocket, session: BrowserSession, tg: anyio.abc.TaskGroup, outbox: Any
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
                _post(outbox, _error(None, PARSE_ERROR, "frames must be UTF-8 JSON"))
                continue
        if len(text) > MAX_FRAME:
            _post(outbox, _error(None, INVALID_REQUEST, f"frame larger than {MAX_FRAME} bytes"))
            continue
        try:
            frame = json.loads(text)
        except json.JSONDecodeError as exc:
            _post(outbox, _error(None, PARSE_ERROR, f"parse error: {exc.msg}"))
            continue
        request = _as_request(frame)
        if isinstance(request, dict) and "error" in request:
            _post(outbox, request)
            continue
        assert isinstance(request, tuple)
        tg.start_soon(_handle, session, outbox, *request)


def _as_request(frame: object) -> tuple[Any, str, dict[str, Any]] | dict[str, Any]:
    if not isinstance(frame, dict):
        return _error(None, INVALID_REQUEST, "a frame must be a JSON-RPC 2.0 request object")
    request_id = frame.get("id")
    if request_id is not None and not isinstance(request_id, str | int) or isinstance(request_id, bool):
        return _error(None, INVALID_REQUEST, "id must be a string or a number")
    method = frame.get("method")
    if frame.get("jsonrpc") != "2.0" or not isinstance(method, str):
        return _error(request_id, INVALID_REQUEST, "not a JSON-RPC 2.0 request (jsonrpc \"2.0\" and a method)")
    params = frame.get("params", {})
    if params is None:
        params = {}
    if not isinstance(params, dict):
        return _error(request_id, INVALID_REQUEST, "params must be an object")
    return request_id, method, params


async def _handle(session: BrowserSession, outbox: Any, request_id: Any, method: str, params: dict[str, Any]) -> None:
    handler = METHODS.get(method)
    if handler is None:
        if request_id is not None:
            _post(outbox, _error(request_id, METHOD_NOT_FOUND, f"unknown method {method!r}"))
        return
    try:
        result = await handler(session, params)
    except WebhostError as exc:
        response = {"jsonrpc": "2.0", "id": request_id, "error": exc.to_jsonrpc()}
    except anyio.get_cancelled_exc_class():
        raise
    except Exception as exc:  # a bug must answer the request, not kill the socket
        logger.exception("method %s failed", method)
        response = _error(request_id, UPSTREAM_ERROR, f"internal error: {type(exc).__name__}: {exc}")
    else:
        response = {"jsonrpc": "2.0", "id": request_id, "result": result}
    if request_id is not None:
        _post(outbox, response)


def _error(request_id: Any, code: int, message: str) -> dict[str, Any]:
    return {"jsonrpc": "2.0", "id": request_id, "error": {"code": code, "message": message}}
