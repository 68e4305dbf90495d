"""Turn a server's input request (elicitation, sampling, roots) into a pending request the page can show.

Refusals happen here, before anything is drawn: a schema outside the elicitation subset or a URL
that is not http(s) goes back to the server as a JSON-RPC error and into the activity log. A form
request that names an app (SEP-3118) is shown in that app when both sides negotiated it, and falls
back to the native form, with the reason, whenever the app cannot serve.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from webhost.apps.instances import AppInstances
from webhost.calls import CallRegistry, current_origin
from webhost.config import WebhostOptions
from webhost.errors import Cancelled, RequestRefused, WebhostError
from webhost.upstream.connection import Connection, ElicitMode

from . import subset, urls, validate
from .broker import InputBroker

INVALID_PARAMS = -32602
METHOD_NOT_FOUND = -32601
SAMPLING_DECLINED = -1
# The error a legacy-era (2025-11-25) tools/call fails with when the server first needs URL steps done.
URL_ELICITATION_REQUIRED = -32042
UI_EXTENSION = "io.modelcontextprotocol/ui"
Check = tuple[dict[str, Any] | None, list[dict[str, str]]]
Activity = Callable[..., None]


def server_negotiated_app_elicitation(connection: Connection) -> bool:
    """SEP-3118: the server's UI extension settings carry `elicitation` (ours always do)."""
    extensions = (connection.info.capabilities or {}).get("extensions") or {}
    settings = extensions.get(UI_EXTENSION) if isinstance(extensions, dict) else None
    return isinstance(settings, dict) and isinstance(settings.get("elicitation"), dict)


class InputRequests:
    """A tab's answers to what its person's servers ask: elicitation (form, URL, app), sampling, roots.

    `route` is told each request's id before it is published, so the request reaches this tab. A
    request that belongs to no single tab (a legacy request while several calls run) is asked
    through an instance with no apps and no calls: it goes to every tab of the person, and the
    first answer wins.
    """

    def __init__(
        self,
        *,
        broker: InputBroker,
        apps: AppInstances | None,
        calls: CallRegistry | None,
        options: WebhostOptions,
        activity: Activity,
        route: Callable[[str], None] = lambda request_id: None,
        roots: Callable[[], list[dict[str, Any]]] = lambda: [],
    ) -> None:
        self.roots = roots  # the person's roots as servers get them (webhost/roots.py)
        self.broker = broker
        self.apps = apps
        self.calls = calls
        self.options = options
        self.activity = activity
        self.route = route

    async def elicit(self, connection: Connection, mode: ElicitMode, params: dict[str, Any]) -> dict[str, Any]:
        if mode == "url":
            return await self._elicit_url(connection, params)
        return await self._elicit_form(connection, params)

    async def _ask(
        self,
        connection: Connection,
        view: dict[str, Any],
        check: Callable[[dict[str, Any]], Check],
        *,
        request_id: str | None = None,
    ) -> dict[str, Any]:
        """Ask the person, attributed to the call that caused it; their time does not count as the server's."""
        request_id = request_id or self.broker.new_id()
        self.route(request_id)
        origin = self.calls.origin_for(connection.name) if self.calls is not None else None
        connection.human_clock.begin()
        try:
            return await self.broker.ask(connection.name, view, check, request_id=request_id, origin=origin)
        finally:
            connection.human_clock.end()

    async def _elicit_form(self, connection: Connection, params: dict[str, Any]) -> dict[str, Any]:
        schema = params.get("requestedSchema")
        raw_message = params.get("message")
        message = raw_message if isinstance(raw_message, str) else ""
        problems = subset.check_requested_schema(schema)
        if problems:
            refusal = (
                "webhost refused the elicitation: the requested schema is outside the allowed subset ("
                + "; ".join(problems[:5])
                + ")"
            )
            self.activity(
                connection.name,
                direction="local",
                kind="error",
                method="elicitation/create",
                summary=refusal,
                data={"requestedSchema": schema},
            )
            raise RequestRefused(refusal, code=INVALID_PARAMS)
        assert isinstance(schema, dict)
        raw_meta = params.get("_meta")
        meta: dict[str, Any] = raw_meta if isinstance(raw_meta, dict) else {}
        request_id = self.broker.new_id()
        view: dict[str, Any] = {
            "kind": "elicitation",
            "mode": "form",
            "message": message,
            "requestedSchema": schema,
            "fields": subset.describe_fields(schema),
        }
        self.activity(
            connection.name,
            direction="in",
            kind="request",
            method="elicitation/create",
            summary=message[:200],
            data={"requestedSchema": schema, "_meta": meta or None},
        )
        await self._offer_app(connection, params, meta, view, request_id)

        def check(answer: dict[str, Any]) -> Check:
            result: Check = validate.validate_result(schema, answer)
            return result

        return await self._ask(connection, view, check, request_id=request_id)

    async def _offer_app(
        self,
        connection: Connection,
        params: dict[str, Any],
        meta: dict[str, Any],
        view: dict[str, Any],
        request_id: str,
    ) -> None:
        """Bind a fresh app instance to this one request when negotiated; otherwise leave the native form."""
        ui = meta.get("ui")
        uri = ui.get("resourceUri") if isinstance(ui, dict) else None
        if not isinstance(uri, str):
            return
        if not server_negotiated_app_elicitation(connection):
            self.activity(
                connection.name,
                direction="local",
                kind="notification",
                method="elicitation/create",
                summary="app hint ignored: the server did not negotiate app-rendered elicitation",
            )
            return
        if not uri.startswith("ui://") or len(uri) <= len("ui://"):
            view["fallbackReason"] = f"the app hint {uri[:200]!r} is not an absolute ui:// URI"
            return
        if self.apps is None:
            view["fallbackReason"] = (
                "it was asked again after the webhost process running its call stopped, and belongs to no tab's app"
                if (current_origin.get() or {}).get("resumed")
                else "the request belongs to no single tab (several calls are running), so no app can be bound to it"
            )
            return
        try:
            _, descriptor = await self.apps.open(
                connection,
                uri,
                purpose="elicitation",
                input_request_id=request_id,
                origin_tools=self._asking_tools(connection),
            )
        except WebhostError as exc:
            view["fallbackReason"] = f"the app could not be loaded: {exc.message}"
            return
        view.update(
            mode="app",
            app=descriptor,
            appTimeoutSeconds=self.options.app_handshake_timeout,
            request={"method": "elicitation/create", "params": params},
        )

    def _asking_tools(self, connection: Connection) -> frozenset[str]:
        """The tool(s) whose call this request belongs to, which the bound app must never re-run.

        Exact when the call is known; otherwise (a legacy request while several calls run on that
        server) every tool in flight there, so the guard never fails open.
        """
        assert self.calls is not None
        origin = self.calls.origin_for(connection.name)
        if origin is not None:
            return frozenset({str(origin["name"])}) if origin.get("method") == "tools/call" else frozenset()
        return frozenset(self.calls.tools_in_flight(connection.name))

    async def _elicit_url(self, connection: Connection, params: dict[str, Any]) -> dict[str, Any]:
        url = str(params.get("url", ""))
        self._refuse_bad_url(connection, url)
        elicitation_id = params.get("elicitationId")
        view = url_view(
            url, str(params.get("message", "")), elicitation_id if isinstance(elicitation_id, str) else None
        )
        self.activity(
            connection.name, direction="in", kind="request", method="elicitation/create", summary=f"URL: {url}"[:300]
        )
        answer = await self._ask(connection, view, _validate_action_only)
        if answer.get("action") == "accept" and elicitation_id:
            self.activity(
                connection.name,
                direction="local",
                kind="notification",
                method="elicitation/create",
                summary=f"consent given; waiting for the server to complete {elicitation_id}",
            )
        return {"action": answer["action"]}

    def _refuse_bad_url(self, connection: Connection, url: str) -> None:
        report = urls.inspect_url(url)
        if report.openable:
            return
        message = "webhost refused the URL elicitation: " + (report.error or "only http and https URLs open")
        self.activity(connection.name, direction="local", kind="error", method="elicitation/create", summary=message)
        raise RequestRefused(message, code=INVALID_PARAMS)

    async def complete_required_urls(self, connection: Connection, data: object, seen: set[str]) -> None:
        """Legacy URL_ELICITATION_REQUIRED: run each URL flow (consent, then wait for completion) for a retry."""
        raw = data.get("elicitations") if isinstance(data, dict) else None
        if not isinstance(raw, list) or not raw:
            raise Cancelled(f"{connection.name} requires a URL step but named none")
        for item in raw:
            url, message, key = _url_step(connection.name, item)
            if key in seen:
                raise Cancelled(
                    f"{connection.name} asked again for the same URL step ({key}); stopping to avoid a loop",
                    {"elicitationId": key},
                )
            seen.add(key)
            try:
                self._refuse_bad_url(connection, url)
            except RequestRefused as refusal:
                raise Cancelled(refusal.message) from None
            assert self.calls is not None  # the URL_ELICITATION_REQUIRED flow runs inside one of this tab's calls
            # Registered from the consent on: a completion that comes before the person consents is kept.
            with self.calls.url_step(connection.name, key) as step:
                consent = await self._ask(connection, url_view(url, message, key), _validate_action_only)
                if consent.get("action") != "accept":
                    raise Cancelled(f"the URL step was {consent.get('action')}d; the call was not retried")
                if step.completed:
                    self.activity(
                        connection.name,
                        direction="local",
                        kind="notification",
                        method="notifications/elicitation/complete",
                        summary=f"{key}: the server completed this URL step before the consent; retrying at once",
                    )
                    continue
                waiting = url_view(
                    url,
                    "Waiting for the server to confirm this step is complete. Choose Done once you "
                    "have finished in the other tab.",
                    key,
                    phase="waiting",
                )
                step.waiting = self.broker.new_id()
                done = await self._ask(connection, waiting, _validate_action_only, request_id=step.waiting)
            if done.get("action") != "accept":
                raise Cancelled("the URL step was cancelled; the call was not retried")

    def url_step_completed(self, server: str, elicitation_id: str) -> bool:
        """notifications/elicitation/complete: the server finished a URL step a call of this tab is at; its waiting
        card ends, or, before the person consented, the call will not wait for it. False: not this tab's step."""
        if self.calls is None:
            return False
        request_id = self.calls.take_url_step(server, elicitation_id)
        if request_id is not None:
            return self.broker.complete(request_id, {"action": "accept"}, "completed")
        return self.calls.complete_url_step_early(server, elicitation_id)

    async def sample(self, connection: Connection, params: dict[str, Any]) -> dict[str, Any]:
        answer = await self._ask(connection, sampling_view(params), validate_sampling_answer)
        if answer.get("action") != "accept":
            raise RequestRefused("The user declined the sampling request", code=SAMPLING_DECLINED)
        return {
            "role": "assistant",
            "content": {"type": "text", "text": answer["content"]["text"]},
            "model": answer.get("model") or "webhost-person",
            "stopReason": "endTurn",
        }

    def list_roots(self, connection: Connection) -> list[dict[str, Any]]:
        """The configuration's, the admin's and the person's roots; `[]` when there are none (webhost advertises
        roots to every server, so it answers)."""
        roots = self.roots()
        self.activity(
            connection.name,
            direction="in",
            kind="request",
            method="roots/list",
            summary=f"{len(roots)} root(s) configured",
            data={"roots": roots},
        )
        return roots


def _url_step(server: str, item: object) -> tuple[str, str, str]:
    """(url, message, key) of one entry of a URL_ELICITATION_REQUIRED error's `elicitations`, or Cancelled."""
    if not isinstance(item, dict) or not isinstance(item.get("url"), str) or not isinstance(item.get("message"), str):
        raise Cancelled(f"{server} named a malformed URL step (each needs a url and a message)")
    elicitation_id = item.get("elicitationId")
    key = elicitation_id if isinstance(elicitation_id, str) and elicitation_id else item["url"]
    return item["url"], item["message"], key


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


def _validate_action_only(answer: dict[str, Any]) -> Check:
    action = answer.get("action")
    if action not in ("accept", "decline", "cancel"):
        return None, [{"field": "action", "message": "must be accept, decline or cancel"}]
    return {"action": action}, []


def sampling_view(params: dict[str, Any]) -> dict[str, Any]:
    return {
        "kind": "sampling",
        "mode": "sampling",
        "message": "The server asks for a model reply: write it yourself, let your chosen model answer, or decline.",
        "request": params,
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
    accepted: dict[str, Any] = {"action": "accept", "content": {"text": content["text"]}}
    model = answer.get("model")
    if isinstance(model, str) and 0 < len(model) <= 200:
        accepted["model"] = model  # the person's chosen model wrote it (chat/sample)
    return accepted, []
