"""Resources: list, list templates, read."""

from __future__ import annotations

import secrets
from typing import Any

from webhost.session import BrowserSession

from . import _params
from ._recorded import recorded


async def list_resources(session: BrowserSession, params: dict[str, Any]) -> dict[str, Any]:
    connection = session.connection(params)
    resources = await session.catalogue.listing(connection, "resources")
    return {"resources": resources, "cacheHint": connection.cache_hints.get("resources/list")}


async def list_templates(session: BrowserSession, params: dict[str, Any]) -> dict[str, Any]:
    connection = session.connection(params)
    templates = await session.catalogue.listing(connection, "resourceTemplates")
    return {"resourceTemplates": templates, "cacheHint": connection.cache_hints.get("resources/templates/list")}


async def read_resource(session: BrowserSession, params: dict[str, Any]) -> dict[str, Any]:
    connection = session.connection(params)
    uri = _params.string(params, "uri", max_length=8192)
    meta = _params.request_meta(params)
    call_id = params.get("callId") if isinstance(params.get("callId"), str) else "r-" + secrets.token_hex(6)
    origin = {"method": "resources/read", "name": uri, "server": connection.name}
    return await recorded(
        session, "resource", origin, {}, str(call_id), lambda: connection.client.read_resource(uri, meta=meta)
    )


METHODS = {
    "resources/list": list_resources,
    "resources/templates/list": list_templates,
    "resources/read": read_resource,
}
