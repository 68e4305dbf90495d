"""SDK results → wire dicts for the page, and SDK/transport exceptions → webhost's domain errors."""

from __future__ import annotations

from typing import Any

import anyio
from mcp import InputRequiredRoundsExceededError, MCPError
from pydantic import BaseModel, ValidationError

from webhost.errors import Cancelled, UpstreamError, WebhostError


def to_wire(model: BaseModel) -> dict[str, Any]:
    """The MCP wire shape: camelCase aliases, `_meta` kept, no nulls the server did not send."""
    return model.model_dump(by_alias=True, exclude_none=True, mode="json")


def map_exception(exc: BaseException, server: str, method: str) -> WebhostError | None:
    """Translate a failure of one upstream request; None means a plain cancellation to re-raise."""
    if isinstance(exc, WebhostError):
        return exc
    if isinstance(exc, anyio.get_cancelled_exc_class()):
        return None
    if isinstance(exc, BaseExceptionGroup) and len(exc.exceptions) == 1:
        return map_exception(exc.exceptions[0], server, method)
    base = {"server": server, "method": method}
    if isinstance(exc, InputRequiredRoundsExceededError):
        return UpstreamError(f"{server} kept asking for input: gave up after too many rounds ({exc})", base)
    if isinstance(exc, MCPError):
        data = {**base, "upstreamCode": exc.code}
        if exc.error.data is not None:
            data["upstreamData"] = exc.error.data
        if exc.code == -32800:
            return Cancelled(f"{server}: the request was cancelled", data)
        return UpstreamError(f"{server}: {exc.error.message}", data)
    if isinstance(exc, ValidationError):
        errors = exc.errors()
        if errors:
            where = ".".join(str(p) for p in errors[0]["loc"])
            detail = f"{where}: {errors[0]['msg']}" if where else errors[0]["msg"]
        else:
            detail = str(exc)
        return UpstreamError(f"{server} sent an invalid result ({detail})", base)
    if isinstance(exc, RuntimeError) and "structured content" in str(exc).lower():
        return UpstreamError(f"{server}: {exc}", base)
    if isinstance(exc, anyio.BrokenResourceError | anyio.ClosedResourceError | anyio.EndOfStream):
        return UpstreamError(f"{server}: the connection to the server was lost", base)
    if isinstance(exc, Exception):
        return UpstreamError(f"{server}: {type(exc).__name__}: {exc}", base)
    return None
