"""Reading one frame from the page: JSON that a server can be sent, or an error naming the problem.

Whatever the text is, the answer is a request or a JSON-RPC error, never an exception: nesting too
deep for the parser, integers past Python's digit limit, `NaN`/`Infinity` (not JSON, and silently
`null` on the way to a server), and lone UTF-16 surrogates (which no server transport can encode)
are each refused by name.
"""

from __future__ import annotations

import json
import re
from typing import Any

import orjson

from webhost.errors import INVALID_PARAMS, INVALID_REQUEST, PARSE_ERROR

Request = tuple[Any, str, dict[str, Any]]
# An escaped surrogate in the text; only then is the parsed value walked for a lone one.
_ESCAPED_SURROGATE = re.compile(r"\\u[dD][89a-fA-F][0-9a-fA-F]{2}")
_LONG_DIGITS = re.compile(r"[0-9]{19}")
_SURROGATE = re.compile(r"[\ud800-\udfff]")


class _NotJson(ValueError):
    pass


def _refuse_constant(name: str) -> Any:
    raise _NotJson(f"{name} is not a JSON value")


def parse(text: str) -> Request | dict[str, Any]:
    """The (id, method, params) of a JSON-RPC 2.0 request, or the error frame to answer with."""
    # orjson first (about 5x faster on a small frame). It refuses everything refused here (NaN and
    # infinities, lone surrogates, deep nesting), and those texts go the standard library's way below,
    # which names the problem; a text with 19 digits in a row (an integer orjson might read as a float)
    # goes that way too.
    if not _LONG_DIGITS.search(text):
        try:
            fast = orjson.loads(text)
        except orjson.JSONDecodeError:
            pass
        else:
            return _as_request(fast)
    try:
        frame = json.loads(text, parse_constant=_refuse_constant)
    except json.JSONDecodeError as exc:
        return error(None, PARSE_ERROR, f"parse error: {exc.msg}")
    except _NotJson as exc:
        return error(None, PARSE_ERROR, f"parse error: {exc}")
    except RecursionError:
        return error(None, PARSE_ERROR, "parse error: the frame is nested too deeply")
    except ValueError as exc:  # e.g. an integer longer than the interpreter's digit limit
        return error(None, PARSE_ERROR, f"parse error: {exc}")
    request = _as_request(frame)
    if isinstance(request, tuple) and _ESCAPED_SURROGATE.search(text) and has_lone_surrogate(request[2]):
        return error(request[0], INVALID_PARAMS, "params contain a lone UTF-16 surrogate (not valid Unicode text)")
    return request


def _as_request(frame: object) -> Request | dict[str, Any]:
    if not isinstance(frame, dict):
        return error(None, INVALID_REQUEST, "a frame must be a JSON-RPC 2.0 request object")
    request_id = frame.get("id")
    if request_id is not None and not isinstance(request_id, str | int) or isinstance(request_id, bool):
        return error(None, INVALID_REQUEST, "id must be a string or an integer")
    method = frame.get("method")
    if frame.get("jsonrpc") != "2.0" or not isinstance(method, str):
        return error(request_id, INVALID_REQUEST, 'not a JSON-RPC 2.0 request (jsonrpc "2.0" and a method)')
    params = frame.get("params", {})
    if params is None:
        params = {}
    if not isinstance(params, dict):
        return error(request_id, INVALID_REQUEST, "params must be an object")
    return request_id, method, params


def has_lone_surrogate(value: object) -> bool:
    """Whether any string in a parsed value (keys too) holds a surrogate code point: only a lone one survives a
    JSON parser, and no UTF-8 text can carry it. An ASCII string (a long base64 one) is passed over unread."""
    stack = [value]
    while stack:
        item = stack.pop()
        if isinstance(item, str):
            if not item.isascii() and _SURROGATE.search(item):
                return True
        elif isinstance(item, dict):
            stack.extend(item.keys())
            stack.extend(item.values())
        elif isinstance(item, list):
            stack.extend(item)
    return False


def error(request_id: Any, code: int, message: str) -> dict[str, Any]:
    return {"jsonrpc": "2.0", "id": request_id, "error": {"code": code, "message": message}}
