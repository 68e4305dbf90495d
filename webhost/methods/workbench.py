"""What a developer uses beside calls: completions, the server's log level, ping, resource subscriptions."""

from __future__ import annotations

from typing import Any

from webhost.errors import InvalidParams
from webhost.session import BrowserSession
from webhost.upstream.connection import LOG_LEVELS

from . import _params

MAX_VALUE = 4096


def _strings(value: object, what: str) -> dict[str, str]:
    if value is None:
        return {}
    if not isinstance(value, dict) or not all(isinstance(k, str) and isinstance(v, str) for k, v in value.items()):
        raise InvalidParams(f"params.{what} must be an object of strings")
    return value


async def complete(session: BrowserSession, params: dict[str, Any]) -> dict[str, Any]:
    connection = session.connection(params)
    ref = _params.optional_object(params, "ref")
    kind = ref.get("type")
    if kind == "ref/prompt":
        reference = {"type": kind, "name": _params.string(ref, "name")}
    elif kind == "ref/resource":
        reference = {"type": kind, "uri": _params.string(ref, "uri", max_length=8192)}
    else:
        raise InvalidParams('params.ref.type must be "ref/prompt" or "ref/resource"')
    argument = _params.optional_object(params, "argument")
    name = _params.string(argument, "name")
    value = argument.get("value", "")
    if not isinstance(value, str) or len(value) > MAX_VALUE:
        raise InvalidParams("params.argument.value must be a string")
    context = _params.optional_object(params, "context")
    arguments = _strings(context.get("arguments"), "context.arguments")
    return await connection.client.complete(reference, {"name": name, "value": value}, arguments or None)


async def set_level(session: BrowserSession, params: dict[str, Any]) -> dict[str, Any]:
    connection = session.connection(params)
    level = params.get("level")
    if level not in LOG_LEVELS:
        raise InvalidParams(f"params.level must be one of {', '.join(LOG_LEVELS)}")
    await connection.client.set_log_level(str(level))
    return {}


async def ping(session: BrowserSession, params: dict[str, Any]) -> dict[str, Any]:
    connection = session.connection(params)
    return {"ms": round(await connection.client.ping(), 3)}


async def subscribe(session: BrowserSession, params: dict[str, Any]) -> dict[str, Any]:
    connection = session.connection(params)
    await connection.client.subscribe(_params.string(params, "uri", max_length=8192))
    return {"subscribed": True}


async def unsubscribe(session: BrowserSession, params: dict[str, Any]) -> dict[str, Any]:
    connection = session.connection(params)
    await connection.client.unsubscribe(_params.string(params, "uri", max_length=8192))
    return {"subscribed": False}


METHODS = {
    "completion/complete": complete,
    "logging/setLevel": set_level,
    "servers/ping": ping,
    "resources/subscribe": subscribe,
    "resources/unsubscribe": unsubscribe,
}
