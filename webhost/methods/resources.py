"""Resources: list, list templates, read."""

from __future__ import annotations

import secrets
from typing import TYPE_CHECKING, Any

from webhost.upstream.results import to_wire

from . import _params

if TYPE_CHECKING:
    from webhost.session import BrowserSession


async def list_resources(session: BrowserSession, params: dict[str, Any]) -> dict[str, Any]:
    connection = session.connection(params)
    result = await connection.request(
        "resources/list", "resources/list", lambda c: c.list_resources(cache_mode="refresh"),
        timeout=session.host.config.options.call_timeout,
    )
    resources = [to_wire(r) for r in result.resources]
    connection.resources = {r["uri"]: r for r in resources}
    return {"resources": resources}


async def list_templates(session: BrowserSession, params: dict[str, Any]) -> dict[str, Any]:
    connection = session.connection(params)
    result = await connection.request(
        "resources/templates/list", "resources/templates/list",
        lambda c: c.list_resource_templates(cache_mode="refresh"),
        timeout=session.host.config.options.call_timeout,
    )
    return {"resourceTemplates": [to_wire(t) for t in result.resource_templates]}


async def read_resource(session: BrowserSession, params: dict[str, Any]) -> dict[str, Any]:
    connection = session.connection(params)
    uri = _params.string(params, "uri", max_length=8192)

    async def run() -> dict[str, Any]:
        result = await connection.request(
            "resources/read", uri, lambda c: c.read_resource(uri, cache_mode="bypass"),
            timeout=session.host.config.options.call_timeout,
        )
        return to_wire(result)

    call_id = params.get("callId") if isinstance(params.get("callId"), str) else "r-" + secrets.token_hex(6)
    origin = {"method": "resources/read", "name": uri, "server": connection.name}
    result: dict[str, Any] = await session.tracked_call(str(call_id), origin, run)
    return result


METHODS = {
    "resources/list": list_resources,
    "resources/templates/list": list_templates,
    "resources/read": read_resource,
}
