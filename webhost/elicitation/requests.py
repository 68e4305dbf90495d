"""Turn a server's input request (elicitation or sampling) into a pending request the page can show.

Refusals happen here, before anything is drawn: a schema outside the elicitation subset or a URL
that is not http(s) goes back to the server as a JSON-RPC error and into the activity log.
"""

from __future__ import annotations

import dataclasses
from typing import TYPE_CHECKING, Any

from mcp.types import (
    CreateMessageRequestParams,
    ElicitRequestFormParams,
    ElicitRequestParams,
    ElicitRequestURLParams,
    ElicitResult,
    ErrorData,
)

from . import subset, urls, validate

if TYPE_CHECKING:
    from webhost.session import BrowserSession
    from webhost.upstream.connection import Connection

INVALID_PARAMS = -32602


async def elicit(
    session: BrowserSession, connection: Connection, params: ElicitRequestParams
) -> ElicitResult | ErrorData:
    if isinstance(params, ElicitRequestURLParams):
        return await _elicit_url(session, connection, params)
    assert isinstance(params, ElicitRequestFormParams)
    return await _elicit_form(session, connection, params)


async def _elicit_form(
    session: BrowserSession, connection: Connection, params: ElicitRequestFormParams
) -> ElicitResult | ErrorData:
    schema: Any = params.requested_schema
    if hasattr(schema, "model_dump"):
        schema = schema.model_dump(by_alias=True, exclude_none=True)
    problems = subset.check_requested_schema(schema)
    if problems:
        message = "webhost refused the elicitation: the requested schema is outside the allowed subset (" + \
            "; ".join(problems[:5]) + ")"
        session.activity(connection.name, direction="local", kind="error", method="elicitation/create",
                         summary=message, data={"requestedSchema": schema})
        return ErrorData(code=INVALID_PARAMS, message=message)
    meta = _meta_dict(params.meta)
    view = {
        "kind": "elicitation",
        "mode": "form",
        "message": params.message,
        "requestedSchema": schema,
        "fields": subset.describe_fields(schema),
        "meta": meta or None,
    }
    session.activity(connection.name, direction="in", kind="request", method="elicitation/create",
                     summary=params.message[:200], data={"requestedSchema": schema})

    def check(answer: dict[str, Any]) -> tuple[dict[str, Any] | None, list[dict[str, str]]]:
        result: tuple[dict[str, Any] | None, list[dict[str, str]]] = validate.validate_result(schema, answer)
        return result

    connection.human_clock.begin()
    try:
        answer = await session.broker.ask(connection.name, view, check)
    finally:
        connection.human_clock.end()
    return ElicitResult.model_validate(answer)


async def _elicit_url(
    session: BrowserSession, connection: Connection, params: ElicitRequestURLParams
) -> ElicitResult | ErrorData:
    report = _as_dict(urls.inspect_url(params.url))
    if not report.get("openable"):
        message = f"webhost refused the URL elicitation: {report.get('error') or 'only http and https URLs open'}"
        session.activity(connection.name, direction="local", kind="error", method="elicitation/create",
                         summary=message)
        return ErrorData(code=INVALID_PARAMS, message=message)
    view = {
        "kind": "elicitation",
        "mode": "url",
        "message": params.message,
        "url": params.url,
        "host": report.get("host_unicode") or report.get("host"),
        "parts": _as_dict(urls.highlight_parts(params.url)),
        "warnings": list(report.get("warnings") or []),
        "elicitationId": params.elicitation_id,
    }
    session.activity(connection.name, direction="in", kind="request", method="elicitation/create",
                     summary=f"URL: {params.url}"[:300])
    connection.human_clock.begin()
    try:
        answer = await session.broker.ask(connection.name, view, _validate_action_only)
    finally:
        connection.human_clock.end()
    if answer.get("action") == "accept" and params.elicitation_id:
        session.url_elicitations[(connection.name, params.elicitation_id)] = str(view.get("id", ""))
    return ElicitResult(action=answer["action"])


def _validate_action_only(answer: dict[str, Any]) -> tuple[dict[str, Any] | None, list[dict[str, str]]]:
    action = answer.get("action")
    if action not in ("accept", "decline", "cancel"):
        return None, [{"field": "action", "message": "must be accept, decline or cancel"}]
    return {"action": action}, []


def sampling_view(params: CreateMessageRequestParams) -> dict[str, Any]:
    return {
        "kind": "sampling",
        "mode": "sampling",
        "message": "The server asks for a model reply. webhost has no model: write the reply yourself or decline.",
        "request": params.model_dump(by_alias=True, exclude_none=True, mode="json"),
    }


def validate_sampling_answer(answer: dict[str, Any]) -> tuple[dict[str, Any] | None, list[dict[str, str]]]:
    action = answer.get("action")
    if action in ("decline", "cancel"):
        return {"action": action}, []
    content = answer.get("content")
    if action != "accept" or not isinstance(content, dict) or not isinstance(content.get("text"), str):
        return None, [{"field": "text", "message": "write a reply (text) or decline"}]
    if len(content["text"]) > 100_000:
        return None, [{"field": "text", "message": "must be at most 100000 characters"}]
    return {"action": "accept", "content": {"text": content["text"]}}, []


def _meta_dict(meta: object) -> dict[str, Any]:
    if meta is None:
        return {}
    dump = getattr(meta, "model_dump", None)
    if callable(dump):
        dumped = dump(by_alias=True, exclude_none=True)
        return dumped if isinstance(dumped, dict) else {}
    return dict(meta) if isinstance(meta, dict) else {}


def _as_dict(value: object) -> dict[str, Any]:
    if isinstance(value, dict):
        return value
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return dataclasses.asdict(value)
    return dict(vars(value))
