"""Prompts: list and get."""

from __future__ import annotations

import secrets
from typing import Any

from webhost.errors import InvalidParams
from webhost.session import BrowserSession

from . import _params
from ._recorded import recorded


async def list_prompts(session: BrowserSession, params: dict[str, Any]) -> dict[str, Any]:
    connection = session.connection(params)
    prompts = await session.catalogue.listing(connection, "prompts")
    return {"prompts": prompts, "cacheHint": connection.cache_hints.get("prompts/list")}


async def get_prompt(session: BrowserSession, params: dict[str, Any]) -> dict[str, Any]:
    connection = session.connection(params)
    name = _params.string(params, "name")
    arguments = _params.optional_object(params, "arguments")
    if not all(isinstance(v, str) for v in arguments.values()):
        raise InvalidParams("prompt arguments must be strings")
    meta = _params.request_meta(params)
    call_id = params.get("callId") if isinstance(params.get("callId"), str) else "p-" + secrets.token_hex(6)
    origin = {"method": "prompts/get", "name": name, "server": connection.name}
    return await recorded(
        session,
        "prompt",
        origin,
        arguments,
        str(call_id),
        lambda: connection.client.get_prompt(name, arguments, meta=meta),
    )


METHODS = {"prompts/list": list_prompts, "prompts/get": get_prompt}
