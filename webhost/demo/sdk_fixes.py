"""Workarounds for two wire-model gaps of the `mcp` 2.3.0 server that the demo server relies on.

The 2026-07-28 wire model drops `_meta` from the params of an input request (protocol.md B5.12), which
would strip the app hint off `pick_color`'s elicitation. Tools build their `InputRequiredResult` with
`exact_input_required`, which stashes the exact params in the result's `_meta`; the server middleware
`restore_exact_input_requests` runs on the serialised wire dict and puts them back, so
`_meta.ui.resourceUri` reaches the client in both eras. Likewise the 2025-11-25 wire model has no
`ServerCapabilities.extensions`, so `advertise_extensions_on_initialize` puts the UI extension back into
the legacy `InitializeResult`.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from mcp.server import ServerRequestContext
from mcp.server.apps import Apps
from mcp.server.context import CallNext, HandlerResult
from mcp.types import InputRequest, InputRequiredResult

UI_EXTENSION = "io.modelcontextprotocol/ui"
EXACT_PARAMS_META_KEY = "webhost.demo/exactInputRequestParams"


def app_settings() -> dict[str, Any]:
    """The UI extension's settings: this server may ask for input through an app (SEP-3118)."""
    return {"elicitation": {}}


class DemoApps(Apps):
    """MCP Apps, advertised with `{"elicitation": {}}`: this server may ask for input through an app."""

    def settings(self) -> dict[str, Any]:
        return app_settings()


def exact_input_required(
    input_requests: Mapping[str, InputRequest], request_state: str | None = None
) -> InputRequiredResult:
    """An `InputRequiredResult` whose input-request params reach the wire exactly as built (B5.12)."""
    exact = {
        key: request.params.model_dump(by_alias=True, mode="json", exclude_none=True)
        for key, request in input_requests.items()
        if request.params is not None
    }
    return InputRequiredResult(
        input_requests=dict(input_requests), request_state=request_state, _meta={EXACT_PARAMS_META_KEY: exact}
    )


async def restore_exact_input_requests(ctx: ServerRequestContext[Any, Any], call_next: CallNext) -> HandlerResult:
    """Server middleware: re-insert the params the 2026-07-28 wire model sieved out, drop the stash.

    Middleware runs around the runner's serialisation step, so it sees the wire dict: by then
    `inputRequests[key].params._meta` is gone, and the stash in the result `_meta` holds the original.
    """
    result = await call_next(ctx)
    if not isinstance(result, dict) or result.get("resultType") != "input_required":
        return result
    meta = result.get("_meta")
    if not isinstance(meta, dict) or EXACT_PARAMS_META_KEY not in meta:
        return result
    exact = meta[EXACT_PARAMS_META_KEY]
    result["_meta"] = {key: value for key, value in meta.items() if key != EXACT_PARAMS_META_KEY}
    requests = result.get("inputRequests")
    if isinstance(requests, dict) and isinstance(exact, dict):
        for key, params in exact.items():
            if isinstance(requests.get(key), dict):
                requests[key]["params"] = params
    return result


async def advertise_extensions_on_initialize(ctx: ServerRequestContext[Any, Any], call_next: CallNext) -> HandlerResult:
    """Server middleware: keep `capabilities.extensions` in the legacy `InitializeResult`.

    The 2025-11-25 wire model of `ServerCapabilities` has no `extensions` member, so the 2.3.0 server
    sieves it out of the handshake answer; a legacy client would never learn that this server offers
    MCP Apps with app-rendered elicitation. `server/discover` (2026-07-28) keeps it without help.
    """
    result = await call_next(ctx)
    if ctx.method == "initialize" and isinstance(result, dict) and isinstance(result.get("capabilities"), dict):
        capabilities = dict(result["capabilities"])
        capabilities.setdefault("extensions", {UI_EXTENSION: app_settings()})
        result = {**result, "capabilities": capabilities}
    return result
