"""Plumbing for the demo's input requests: era and capability checks, request state, legacy asks, answer checks."""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from jsonschema import Draft202012Validator, FormatChecker
from mcp.server.mcpserver import Context
from mcp.server.mcpserver.exceptions import ToolError
from mcp.shared.exceptions import MCPError
from mcp.shared.message import ServerMessageMetadata
from mcp.types import (
    MISSING_REQUIRED_CLIENT_CAPABILITY,
    ClientCapabilities,
    ElicitRequest,
    ElicitRequestFormParams,
    ElicitResult,
)
from mcp.types.version import MODERN_PROTOCOL_VERSIONS

from webhost.demo.sdk_fixes import UI_EXTENSION
from webhost.demo.ui_apps import APP_MIME_TYPE

Ctx = Context[Any, Any]


def is_modern(ctx: Ctx) -> bool:
    return ctx.protocol_version in MODERN_PROTOCOL_VERSIONS


def load_state(raw: str | None) -> dict[str, Any]:
    """The plaintext request state (MCPServer seals it on the wire and unseals it for the handler)."""
    if not raw:
        return {}
    try:
        value = json.loads(raw)
    except ValueError:
        return {}
    return value if isinstance(value, dict) else {}


def dump_state(value: Mapping[str, Any]) -> str:
    return json.dumps(value, separators=(",", ":"), sort_keys=True)


def _missing_capability(required: dict[str, Any], what: str) -> MCPError:
    return MCPError(
        code=MISSING_REQUIRED_CLIENT_CAPABILITY,
        message=f"This tool needs a client that supports {what}",
        data={"requiredCapabilities": required},
    )


def require_form(ctx: Ctx) -> None:
    capabilities = ctx.client_capabilities
    elicitation = capabilities.elicitation if capabilities else None
    if elicitation is not None and (elicitation.form is not None or elicitation.url is None):
        return
    if is_modern(ctx):
        raise _missing_capability({"elicitation": {"form": {}}}, "form elicitation")
    raise ToolError("This tool asks questions, and the connected client does not support elicitation.")


def require_url(ctx: Ctx) -> None:
    capabilities = ctx.client_capabilities
    elicitation = capabilities.elicitation if capabilities else None
    if elicitation is not None and elicitation.url is not None:
        return
    if is_modern(ctx):
        raise _missing_capability({"elicitation": {"url": {}}}, "URL-mode elicitation")
    raise ToolError("This tool needs URL-mode elicitation, which the connected client does not support.")


def client_renders_app_elicitation(capabilities: ClientCapabilities | None) -> bool:
    """SEP-3118, client side: form elicitation, the UI extension with the app MIME type, and `elicitation`."""
    if capabilities is None or capabilities.elicitation is None:
        return False
    if capabilities.elicitation.form is None and capabilities.elicitation.url is not None:
        return False
    settings = (capabilities.extensions or {}).get(UI_EXTENSION)
    if not isinstance(settings, dict):
        return False
    mime_types = settings.get("mimeTypes")
    return isinstance(mime_types, list) and APP_MIME_TYPE in mime_types and "elicitation" in settings


async def legacy_ask(ctx: Ctx, params: ElicitRequestFormParams) -> ElicitResult:
    """Send one server→client `elicitation/create` (legacy era) with the params exactly as built."""
    result: ElicitResult = await ctx.session.send_request(
        ElicitRequest(params=params),
        ElicitResult,
        metadata=ServerMessageMetadata(related_request_id=ctx.request_id),
    )
    return result


def schema_problems(schema: Mapping[str, Any], content: Mapping[str, Any] | None) -> list[str]:
    """Which fields of an accepted answer break the requested schema (names only, never values)."""
    validator = Draft202012Validator(dict(schema), format_checker=FormatChecker())
    problems = set()
    for error in validator.iter_errors(dict(content or {})):
        problems.add(".".join(str(part) for part in error.absolute_path) or "(the answer as a whole)")
    return sorted(problems)
