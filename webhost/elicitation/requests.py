"""Turn a server's input request (elicitation or sampling) into a pending request the page can show.

Refusals happen here, before anything is drawn: a schema outside the elicitation subset or a URL
that is not http(s) goes back to the server as a JSON-RPC error and into the activity log. A form
request that names an app (SEP-3118) is shown in that app when both sides negotiated it, and falls
back to the native form, with the reason, whenever the app cannot serve.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from mcp.types import (
    CreateMessageRequestParams,
    ElicitRequestFormParams,
    ElicitRequestParams,
    ElicitRequestURLParams,
    ElicitResult,
    ErrorData,
)

from webhost.errors import Cancelled, WebhostError

from . import subset, urls, validate

if TYPE_CHECKING:
    from webhost.session import BrowserSession
    from webhost.upstream.connection import Connection

INVALID_PARAMS = -32602
UI_EXTENSION = "io.modelcontextprotocol/ui"
Check = tuple[dict[str, Any] | None, list[dict[str, str]]]


async def elicit(
    session: BrowserSession, connection: Connection, params: ElicitRequestParams
) -> ElicitResult | ErrorData:
    if isinstance(params, ElicitRequestURLParams):
        return await _elicit_url(session, connection, params)
    assert isinstance(params, ElicitRequestFormParams)
    return await _elicit_form(session, connection, params)


def server_negotiated_app_elicitation(connection: Connection) -> bool:
    """SEP-3118: the server's UI extension settings carry `elicitation` (ours always do)."""
    extensions = (connection.info.capabilities or {}).get("extensions") or {}
    settings = extensions.get(UI_EXTENSION) if isinstance(extensions, dict) else None
    return isinstance(settings, dict) and isinstance(settings.get("elicitation"), dict)


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
    request_id = session.broker.new_id()
    view: dict[str, Any] = {
        "kind": "elicitation",
        "mode": "form",
        "message": params.message,
        "requestedSchema": schema,
        "fields": subset.describe_fields(schema),
    }
    session.activity(connection.name, direction="in", kind="request", method="elicitation/create",
                     summary=params.message[:200], data={"requestedSchema": schema, "_meta": meta or None})
    frame_id = await _offer_app(session, connection, params, meta, view, request_id)

    def check(answer: dict[str, Any]) -> Check:
        result: Check = validate.validate_result(schema, answer)
        return result

    connection.human_clock.begin()
    try:
        answer = await session.broker.ask(connection.name, view, check, request_id=request_id)
    finally:
        connection.human_clock.end()
        if frame_id is not None:
            session.close_app(frame_id, reason="input request ended")
    return ElicitResult.model_validate(answer)


async def _offer_app(
    session: BrowserSession,
    connection: Connection,
    params: ElicitRequestFormParams,
    meta: dict[str, Any],
    view: dict[str, Any],
    request_id: str,
) -> str | None:
    """Bind a fresh app instance to this one request when negotiated; otherwise leave the native form."""
    ui = meta.get("ui")
    uri = ui.get("resourceUri") if isinstance(ui, dict) else None
    if not isinstance(uri, str):
        return None
    if not server_negotiated_app_elicitation(connection):
        session.activity(connection.name, direction="local", kind="notification", method="elicitation/create",
                         summary="app hint ignored: the server did not negotiate app-rendered elicitation")
        return None
    if not uri.startswith("ui://") or len(uri) <= len("ui://"):
        view["fallbackReason"] = f"the app hint {uri[:200]!r} is not an absolute ui:// URI"
        return None
    from webhost.apps.instances import open_instance

    try:
        instance, descriptor = await open_instance(session, connection, uri, purpose="elicitation",
                                                   input_request_id=request_id)
    except WebhostError as exc:
        view["fallbackReason"] = f"the app could not be loaded: {exc.message}"
        return None
    origin = _origin()
    instance.origin_tool = origin.get("name") if origin.get("method") == "tools/call" else None
    view.update(mode="app", app=descriptor, appTimeoutSeconds=session.host.config.options.app_handshake_timeout,
                request={"method": "elicitation/create",
                         "params": params.model_dump(by_alias=True, exclude_none=True, mode="json")})
    return instance.frame_id


def _origin() -> dict[str, Any]:
    from .broker import current_origin

    return current_origin.get() or {}


async def _elicit_url(
    session: BrowserSession, connection: Connection, params: ElicitRequestURLParams
) -> ElicitResult | ErrorData:
    refusal = _url_refusal(session, connection, params.url)
    if refusal is not None:
        return refusal
    view = url_view(params.url, params.message, params.elicitation_id)
    session.activity(connection.name, direction="in", kind="request", method="elicitation/create",
                     summary=f"URL: {params.url}"[:300])
    connection.human_clock.begin()
    try:
        answer = await session.broker.ask(connection.name, view, _validate_action_only)
    finally:
        connection.human_clock.end()
    if answer.get("action") == "accept" and params.elicitation_id:
        session.activity(connection.name, direction="local", kind="notification", method="elicitation/create",
                         summary=f"consent given; waiting for the server to complete {params.elicitation_id}")
    return ElicitResult(action=answer["action"])


def _url_refusal(session: BrowserSession, connection: Connection, url: str) -> ErrorData | None:
    report = urls.inspect_url(url)
    if report.openable:
        return None
    message = "webhost refused the URL elicitation: " + (report.error or "only http and https URLs open")
    session.activity(connection.name, direction="local", kind="error", method="elicitation/create", summary=message)
    return ErrorData(code=INVALID_PARAMS, message=message)


def url_view(url: str, message: str, elicitation_id: str | None, *, phase: str = "consent") -> dict[str, Any]:
    report = urls.inspect_url(url)
    return {
        "kind": "elicitation",
        "mode": "url",
        "phase": phase,
        "message": message,
        "url": report.url,
        "host": report.host_unicode or report.host,
        "parts": urls.highlight_parts(url),
        "warnings": list(report.warnings),
        "elicitationId": elicitation_id,
    }


async def complete_required_urls(session: BrowserSession, connection: Connection, data: object,
                                 seen: set[str]) -> None:
    """Legacy -32042: run each URL flow (consent, then wait for completion), so the call can be retried."""
    raw = data.get("elicitations") if isinstance(data, dict) else None
    if not isinstance(raw, list) or not raw:
        raise Cancelled(f"{connection.name} requires a URL step but named none")
    for item in raw:
        params = ElicitRequestURLParams.model_validate(item)
        key = params.elicitation_id or params.url
        if key in seen:
            raise Cancelled(f"{connection.name} asked again for the same URL step ({key}); stopping to avoid a loop",
                            {"elicitationId": key})
        seen.add(key)
        if (refusal := _url_refusal(session, connection, params.url)) is not None:
            raise Cancelled(refusal.message)
        connection.human_clock.begin()
        try:
            consent = await session.broker.ask(connection.name, url_view(params.url, params.message, key),
                                               _validate_action_only)
            if consent.get("action") != "accept":
                raise Cancelled(f"the URL step was {consent.get('action')}d; the call was not retried")
            waiting = url_view(params.url, "Waiting for the server to confirm this step is complete. Choose "
                                           "Done once you have finished in the other tab.", key, phase="waiting")
            request_id = session.broker.new_id()
            session.url_elicitations[(connection.name, key)] = request_id
            done = await session.broker.ask(connection.name, waiting, _validate_action_only, request_id=request_id)
            if done.get("action") != "accept":
                raise Cancelled("the URL step was cancelled; the call was not retried")
        finally:
            connection.human_clock.end()
            session.url_elicitations.pop((connection.name, key), None)


def _validate_action_only(answer: dict[str, Any]) -> Check:
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


def validate_sampling_answer(answer: dict[str, Any]) -> Check:
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
