"""Prompts: list and get."""

from __future__ import annotations

import secrets
from typing import TYPE_CHECKING, Any

from webhost.errors import InvalidParams
from webhost.upstream.results import to_wire

from . import _params

if TYPE_CHECKING:
    from webhost.session import BrowserSession


async def list_prompts(session: BrowserSession, params: dict[str, Any]) -> dict[str, Any]:
    connection = session.connection(params)
    result = await connection.request(
        "prompts/list", "prompts/list", lambda c: c.list_prompts(cache_mode="refresh"),
        timeout=session.host.config.options.call_timeout,
    )
    return {"prompts": [to_wire(p) for p in result.prompts]}


async def get_prompt(session: BrowserSession, params: dict[str, Any]) -> dict[str, Any]:
    connection = session.connection(params)
    name = _params.string(params, "name")
    arguments = _params.optional_object(params, "arguments")
    if not all(isinstance(v, str) for v in arguments.values()):
        raise InvalidParams("prompt arguments must be strings")

    async def run() -> dict[str, Any]:
        result = await connection.request(
            "prompts/get", name, lambda c: c.get_prompt(name, arguments),
            timeout=session.host.config.options.call_timeout, data={"arguments": arguments},
        )
        return to_wire(result)

    call_id = params.get("callId") if isinstance(params.get("callId"), str) else "p-" + secrets.token_hex(6)
    origin = {"method": "prompts/get", "name": name, "server": connection.name}
    result: dict[str, Any] = await session.tracked_call(str(call_id), origin, run)
    return result


METHODS = {"prompts/list": list_prompts, "prompts/get": get_prompt}
