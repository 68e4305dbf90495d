"""The requests the rest of webhost makes of one server: typed, timed, audited, each returning MCP wire dicts.

Every request runs over the link's connected SDK client (`link.py`) in the caller's task, with an
activity entry out and one back, the SDK's errors mapped to domain errors (`results.py`), and a
timeout that counts only machine time (`clock.py`: a person answering an input request is off the
clock). Any task may call these: a tab's page action, the takeover of a stopped replica's call, or a
caller on no tab at all.
"""

from __future__ import annotations

import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any, TypeVar, cast

import anyio
from mcp import Client
from mcp.types import (
    LOG_LEVEL_META_KEY,
    CompleteRequest,
    CompleteRequestParams,
    CompleteResult,
    CompletionArgument,
    CompletionContext,
    PromptReference,
    RequestParamsMeta,
    ResourceTemplateReference,
)
from pydantic import BaseModel, ValidationError

from webhost.errors import UpstreamTimeout
from webhost.observability import metrics, tracing

from .legacy_calls import deliberately
from .lenient import lenient_listing
from .link import Link
from .results import map_exception, to_wire
from .rounds import input_responses, watching
from .sdk_workarounds import output_schema_errors
from .task_wire import TaskStarted, task_view

ProgressFn = Callable[[float, float | None, str | None], Awaitable[None]]
T = TypeVar("T")
CACHE_HINT_KEYS = ("ttlMs", "cacheScope")  # SEP-2549, on 2026-07-28 results
LOG_LEVELS = ("debug", "info", "notice", "warning", "error", "critical", "alert", "emergency")


@dataclass(frozen=True)
class Page:
    """One page of a paginated listing, as wire dicts."""

    items: list[dict[str, Any]]
    next_cursor: str | None
    cache_hint: dict[str, Any] | None = None  # the server's `{ttlMs, cacheScope}` for it (SEP-2549)


class ServerClient:
    """The typed requests of one server, over its link."""

    def __init__(self, link: Link) -> None:
        self.link = link

    async def list_tools(self, cursor: str | None = None) -> Page:
        return await self._list(
            "tools/list", cursor, lambda c: c.list_tools(cursor=cursor, cache_mode="refresh", meta=self._meta())
        )

    async def list_resources(self, cursor: str | None = None, *, timeout: float | None = None) -> Page:
        return await self._list(
            "resources/list",
            cursor,
            lambda c: c.list_resources(cursor=cursor, cache_mode="refresh", meta=self._meta()),
            timeout=timeout,
        )

    async def list_resource_templates(self, cursor: str | None = None) -> Page:
        return await self._list(
            "resources/templates/list",
            cursor,
            lambda c: c.list_resource_templates(cursor=cursor, cache_mode="refresh", meta=self._meta()),
        )

    async def list_prompts(self, cursor: str | None = None) -> Page:
        return await self._list(
            "prompts/list", cursor, lambda c: c.list_prompts(cursor=cursor, cache_mode="refresh", meta=self._meta())
        )

    async def _list(
        self,
        method: str,
        cursor: str | None,
        listing: Callable[[Client], Awaitable[Any]],
        *,
        timeout: float | None = None,
    ) -> Page:
        """One page; a malformed item is an error stub in it, not a failed list (upstream/lenient.py)."""
        page = await self.request(
            method, method, lambda c: lenient_listing(c, method, cursor, lambda: listing(c)), timeout=timeout
        )
        if cursor is None:
            self.link.cache_hints[method] = page.cache_hint
        return Page(page.items, page.next_cursor, page.cache_hint)

    async def call_tool(
        self,
        name: str,
        arguments: dict[str, Any],
        *,
        on_progress: ProgressFn | None = None,
        meta: dict[str, Any] | None = None,
        summary: str | None = None,
        data: dict[str, Any] | None = None,
    ) -> dict[str, Any]:
        schema_errors: list[str] = []
        token = output_schema_errors.set(schema_errors)
        alive = _KeepAlive(self.link)

        async def progressed(progress: float, total: float | None, message: str | None) -> None:
            alive.progressed()  # progress keeps the call alive (timeouts.maxTotal)
            if on_progress is not None:
                await on_progress(progress, total, message)

        try:
            with watching({"method": "tools/call", "params": {"name": name, "arguments": arguments}}):
                result: dict[str, Any] = await self.request(
                    "tools/call",
                    summary or name,
                    lambda c: _task_or_wire(
                        c.call_tool(
                            name,
                            arguments,
                            progress_callback=progressed,
                            meta=self._meta(meta),
                        )
                    ),
                    data={"arguments": arguments, **_meta_data(meta), **(data or {})},
                    alive=alive,
                    tool=name,
                )
        finally:
            output_schema_errors.reset(token)
        if schema_errors:
            # Kept and shown, with the SDK's message beside it (sdk_workarounds.py, 6.).
            result = {**result, "webhost": {"outputSchemaError": schema_errors[-1]}}
        return result

    async def read_resource(
        self, uri: str, *, summary: str | None = None, meta: dict[str, Any] | None = None
    ) -> dict[str, Any]:
        with watching({"method": "resources/read", "params": {"uri": uri}}):
            result = await self.request(
                "resources/read",
                summary or uri,
                lambda c: _wire(c.read_resource(uri, cache_mode="bypass", meta=self._meta(meta))),
                data=_meta_data(meta) or None,
            )
        if self.link.era != "modern":  # the SDK's defaults, not the server's: caching hints are 2026-07-28's
            result = {key: value for key, value in result.items() if key not in CACHE_HINT_KEYS}
        return result

    async def get_prompt(
        self, name: str, arguments: dict[str, str], *, meta: dict[str, Any] | None = None
    ) -> dict[str, Any]:
        with watching({"method": "prompts/get", "params": {"name": name, "arguments": arguments}}):
            result = await self.request(
                "prompts/get",
                name,
                lambda c: _wire(c.get_prompt(name, arguments, meta=self._meta(meta))),
                data={"arguments": arguments, **_meta_data(meta)},
            )
        return result

    async def resume(
        self, request: dict[str, Any], round_: dict[str, Any], answers: dict[str, dict[str, Any]]
    ) -> dict[str, Any]:
        """Retry a request another replica left waiting on an input round: `answers` (wire dicts, by key) to
        the round's `inputRequests`, its `requestState` echoed as stored. Later rounds go through the callbacks."""
        method = str(request.get("method"))
        params = request.get("params") or {}
        requests = round_.get("inputRequests") or {}
        state = round_.get("requestState")
        responses = input_responses(requests if isinstance(requests, dict) else {}, answers)
        state = state if isinstance(state, str) else None
        name = str(params.get("name") or params.get("uri") or "")
        arguments = params.get("arguments") if isinstance(params.get("arguments"), dict) else {}

        meta = self._meta()

        def send(c: Client) -> Awaitable[BaseModel]:
            if method == "tools/call":
                return c.call_tool(name, arguments, input_responses=responses, request_state=state, meta=meta)
            if method == "prompts/get":
                return c.get_prompt(name, arguments, input_responses=responses, request_state=state, meta=meta)
            if method == "resources/read":
                return c.read_resource(name, input_responses=responses, request_state=state, meta=meta)
            raise ValueError(f"{method} has no input rounds")

        with watching({"method": method, "params": params}):
            result = await self.request(
                method, f"{name} (resumed)", lambda c: _wire(send(c)), data={"resumed": True, "arguments": arguments}
            )
        return result

    async def complete(
        self, ref: dict[str, Any], argument: dict[str, str], context_arguments: dict[str, str] | None = None
    ) -> dict[str, Any]:
        """`completion/complete` for a prompt (`{"type": "ref/prompt", "name"}`) or a template (`ref/resource`)."""
        try:
            reference: PromptReference | ResourceTemplateReference = (
                PromptReference.model_validate(ref)
                if ref.get("type") == "ref/prompt"
                else ResourceTemplateReference.model_validate(ref)
            )
        except ValidationError as exc:
            raise map_exception(exc, self.link.name, "completion/complete") or exc from None
        result = await self.request(
            "completion/complete",
            str(ref.get("name") or ref.get("uri")),
            lambda c: _wire(
                c.session.send_request(
                    CompleteRequest(
                        params=CompleteRequestParams(
                            ref=reference,
                            argument=CompletionArgument(**argument),
                            context=CompletionContext(arguments=context_arguments) if context_arguments else None,
                            _meta=self._meta(),
                        )
                    ),
                    CompleteResult,
                )
            ),
        )
        return result

    async def subscribe(self, uri: str) -> None:
        """Updates of one resource: `resources/subscribe` before 2026-07-28, the listen stream's filter since."""
        if self.link.era == "modern":
            self.link.connected_client()  # raises NotConnected, as a request would
            self.link.listen.add(uri)
            self.link.log(
                direction="local",
                kind="notification",
                method="subscriptions/listen",
                summary=f"listening for updates of {uri}",
            )
            return
        await self.request("resources/subscribe", uri, lambda c: deliberately(lambda: c.subscribe_resource(uri)))

    async def unsubscribe(self, uri: str) -> None:
        if self.link.era == "modern":
            self.link.listen.discard(uri)
            return
        await self.request("resources/unsubscribe", uri, lambda c: deliberately(lambda: c.unsubscribe_resource(uri)))

    async def set_log_level(self, level: str) -> None:
        """The level of the server's `notifications/message` for this person: `logging/setLevel` before
        2026-07-28; since, it travels with each request (`_meta`, SEP-2575), so it is only kept here."""
        if level not in LOG_LEVELS:
            raise ValueError(f"unknown log level {level!r}")
        link = self.link
        if link.era == "modern":
            link.connected_client()  # raises NotConnected, as a request would
            link.log_level = level
            link.log(
                direction="local",
                kind="notification",
                method="logging/setLevel",
                summary=f"log level {level}: sent with each request (_meta {LOG_LEVEL_META_KEY})",
            )
            return
        await self.request("logging/setLevel", level, lambda c: deliberately(lambda: c.set_logging_level(level)))  # type: ignore[arg-type]
        link.log_level = level

    def _meta(self, extra: dict[str, Any] | None = None) -> RequestParamsMeta | None:
        """A request's `_meta`: the page's (`extra`) and, on 2026-07-28, the person's log level for this server."""
        level = self.link.request_log_level()
        meta = extra if level is None else {**(extra or {}), LOG_LEVEL_META_KEY: level}
        return cast("RequestParamsMeta | None", meta)

    async def roots_changed(self) -> None:
        """Tell the server its roots changed: `notifications/roots/list_changed` before 2026-07-28; since, roots are
        asked per request (input rounds), so there is nothing to send and the next request gets the new list."""
        link = self.link
        if link.status != "connected" or link.era is None:
            return
        if link.era == "modern":
            link.log(
                direction="local",
                kind="notification",
                method="notifications/roots/list_changed",
                summary="roots changed: 2026-07-28 asks for them per request, so nothing is sent",
            )
            return
        try:
            client = link.connected_client()
            await deliberately(client.send_roots_list_changed)
        except Exception as exc:  # the connection ending as it is sent: its own status says so
            link.log(direction="local", kind="error", method="notifications/roots/list_changed", summary=str(exc))
            return
        link.log(
            direction="out", kind="notification", method="notifications/roots/list_changed", summary="roots changed"
        )

    async def ping(self) -> float:
        """Round-trip time in milliseconds."""
        started = time.monotonic()
        await self.request("ping", "ping", lambda c: deliberately(c.send_ping))
        return (time.monotonic() - started) * 1000

    # -- the one place a request runs ---------------------------------------------------------

    async def request(
        self,
        method: str,
        summary: str,
        call: Callable[[Client], Awaitable[T]],
        *,
        timeout: float | None = None,
        data: dict[str, Any] | None = None,
        alive: _KeepAlive | None = None,
        tool: str = "",
    ) -> T:
        """Run one upstream request with activity entries, error mapping and a human-aware timeout (which the
        request's progress pushes back, through `alive`)."""
        link = self.link
        client = link.connected_client()
        limit = link.settings.call_timeout if timeout is None else timeout
        link.log(direction="out", kind="request", method=method, summary=summary, data=data)
        started = time.monotonic()
        try:
            # One cancel scope whose deadline pauses while a person is asked (HumanClock): no task, no polling.
            with link.human_clock.deadline(limit) as scope, tracing.mcp_span(link.name, method, tool):
                if alive is not None:
                    alive.scope = scope
                result = await call(client)
            if scope.cancelled_caught:
                raise _timed_out(link, method, limit, alive)
        except BaseException as exc:
            elapsed = (time.monotonic() - started) * 1000
            mapped = map_exception(exc, link.name, method)
            outcome = "cancelled" if mapped is None else "timeout" if isinstance(mapped, UpstreamTimeout) else "failed"
            metrics.mcp_request_ended(link.name, method, tool, outcome, elapsed / 1000)
            if mapped is not None:  # webhost's words may quote the failure: the server's own secrets masked
                mapped.message = link.config.redactor().text(mapped.message)
            if mapped is None:  # cancelled (the person's Cancel, a closed tab, webhost stopping): not a failure
                link.log(direction="local", kind="cancelled", method=method, summary="cancelled", duration_ms=elapsed)
                raise
            link.log(
                direction="in",
                kind="error",
                method=method,
                summary=mapped.message,
                duration_ms=elapsed,
                data=mapped.data,
            )
            raise mapped from exc
        elapsed = (time.monotonic() - started) * 1000
        failed = isinstance(result, dict) and result.get("isError") is True
        metrics.mcp_request_ended(link.name, method, tool, "error" if failed else "ok", elapsed / 1000)
        link.log(
            direction="in",
            kind="response",
            method=method,
            summary=summary,
            duration_ms=elapsed,
            data=result if isinstance(result, dict) else _loggable(result),
        )
        return result


class _KeepAlive:
    """A call's progress notes push its timeout back (`HumanClock.progressed`): each gives it the call timeout
    again, machine time only, up to `timeouts.maxTotal` in all."""

    def __init__(self, link: Link) -> None:
        self.link = link
        self.scope: anyio.CancelScope | None = None
        self.notes = 0
        self.budget = link.settings.call_timeout

    def progressed(self) -> None:
        self.notes += 1
        if self.scope is not None:
            settings = self.link.settings
            clock = self.link.human_clock
            clock.progressed(self.scope, settings.call_timeout, max(settings.max_total_timeout, settings.call_timeout))
            self.budget = clock.budget(self.scope) or self.budget


def _timed_out(link: Link, method: str, limit: float, alive: _KeepAlive | None) -> UpstreamTimeout:
    data: dict[str, Any] = {"server": link.name, "timeoutSeconds": limit}
    if alive is None or alive.notes == 0:
        return UpstreamTimeout(f"{link.name}: {method} timed out after {limit:g} s", data)
    data |= {"progressNotes": alive.notes, "ranSeconds": round(alive.budget, 3)}
    if alive.budget >= link.settings.max_total_timeout:
        reason = f"ran for timeouts.maxTotal ({link.settings.max_total_timeout:g} s) while reporting progress"
        data["maxTotalSeconds"] = link.settings.max_total_timeout
    else:
        reason = f"timed out after {limit:g} s without progress ({alive.notes} progress notes before)"
    return UpstreamTimeout(f"{link.name}: {method} {reason}", data)


def _meta_data(meta: dict[str, Any] | None) -> dict[str, Any]:
    """The page's request `_meta`, for the activity entry of the request that carries it."""
    return {"_meta": meta} if meta else {}


async def _task_or_wire(pending: Awaitable[BaseModel]) -> dict[str, Any]:
    """A `tools/call` answer as a wire dict, or `{"task": Task}` when the server made it a task (2026-07-28)."""
    try:
        return to_wire(await pending)
    except TaskStarted as started:
        return {"task": task_view(started.task, "modern")}


async def _wire(pending: Awaitable[BaseModel]) -> dict[str, Any]:
    """The awaited SDK result as a wire dict, dumped once (the activity entry and the caller share it)."""
    return to_wire(await pending)


def _loggable(result: object) -> object:
    """What the activity log shows of a response (the session clips large ones to a preview)."""
    if isinstance(result, BaseModel):
        return to_wire(result)
    return None
