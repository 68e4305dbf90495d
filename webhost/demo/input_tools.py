"""The demo's input-request tools: a two-round form (`register_user`), URL mode and an app-rendered form."""

from __future__ import annotations

import base64
import secrets
from collections.abc import Mapping
from typing import Annotated, Any, Literal

import anyio
from mcp.server import MCPServer
from mcp.server.mcpserver.exceptions import ToolError
from mcp.types import (
    CallToolResult,
    ElicitRequest,
    ElicitRequestFormParams,
    ElicitRequestURLParams,
    ElicitResult,
    ImageContent,
    InputRequiredResult,
    TextContent,
)
from pydantic import Field

from webhost.demo.elicitation import (
    Ctx,
    client_renders_app_elicitation,
    dump_state,
    is_modern,
    legacy_ask,
    load_state,
    require_form,
    require_url,
    schema_problems,
)
from webhost.demo.media import PALETTE, hex_rgb, png
from webhost.demo.sdk_fixes import exact_input_required
from webhost.demo.ui_apps import PICKER_URI

REGISTER_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "name": {"type": "string", "title": "Full name", "minLength": 1, "maxLength": 80},
        "email": {
            "type": "string",
            "title": "Email address",
            "format": "email",
            "description": "We send the confirmation here.",
        },
        "age": {"type": "integer", "title": "Age", "minimum": 0, "maximum": 150},
        "newsletter": {"type": "boolean", "title": "Send me the monthly newsletter", "default": False},
        "plan": {
            "type": "string",
            "title": "Plan",
            "oneOf": [
                {"const": "free", "title": "Free"},
                {"const": "pro", "title": "Pro (€9 a month)"},
                {"const": "team", "title": "Team (€29 a month)"},
            ],
            "default": "free",
        },
        "interests": {
            "type": "array",
            "title": "Interests",
            "description": "Pick up to three.",
            "maxItems": 3,
            "items": {
                "anyOf": [
                    {"const": "tools", "title": "Tools"},
                    {"const": "apps", "title": "MCP Apps"},
                    {"const": "elicitation", "title": "Elicitation"},
                    {"const": "security", "title": "Security"},
                    {"const": "python", "title": "Python"},
                ]
            },
        },
    },
    "required": ["name", "email"],
}

CONFIRM_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {"confirm": {"type": "boolean", "title": "Create the account", "default": True}},
    "required": ["confirm"],
}


def _register_form() -> ElicitRequestFormParams:
    return ElicitRequestFormParams(
        message="Create a demo account. Nothing is stored.", requested_schema=REGISTER_SCHEMA
    )


def _confirm_form(profile: Mapping[str, Any]) -> ElicitRequestFormParams:
    plan = next(
        (o["title"] for o in REGISTER_SCHEMA["properties"]["plan"]["oneOf"] if o["const"] == profile.get("plan")),
        "Free",
    )
    return ElicitRequestFormParams(
        message=f"Create a {plan} account for {profile.get('name')} <{profile.get('email')}>?",
        requested_schema=CONFIRM_SCHEMA,
    )


def _registered(profile: Mapping[str, Any]) -> str:
    interests = ", ".join(profile.get("interests") or []) or "none"
    return (
        f"Registered {profile.get('name')} <{profile.get('email')}> "
        f"on the {profile.get('plan', 'free')} plan "
        f"(age {profile.get('age', 'not given')}, newsletter {'yes' if profile.get('newsletter') else 'no'}, "
        f"interests: {interests}). This is a demo: nothing was stored."
    )


def _not_registered(answer: ElicitResult) -> str:
    """The first question declined or cancelled."""
    return "Registration cancelled." if answer.action == "cancel" else "Registration declined."


def _checked_profile(answer: ElicitResult) -> dict[str, Any]:
    problems = schema_problems(REGISTER_SCHEMA, answer.content)
    if problems:
        raise ToolError("The answer did not match the form (fields: " + ", ".join(problems) + ").")
    profile = dict(answer.content or {})
    profile.setdefault("plan", "free")
    profile.setdefault("newsletter", False)
    return profile


async def _register_legacy(ctx: Ctx) -> str:
    """The same two questions as server→client requests, inside the open tools/call (legacy era)."""
    answer = await legacy_ask(ctx, _register_form())
    if answer.action != "accept":
        return _not_registered(answer)
    profile = _checked_profile(answer)
    confirm = await legacy_ask(ctx, _confirm_form(profile))
    if confirm.action != "accept" or not (confirm.content or {}).get("confirm"):
        return "Registration not confirmed; nothing was created."
    return _registered(profile)


COLOR_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "color": {
            "type": "string",
            "title": "Favourite colour",
            "description": "One of the palette's colours",
            "oneOf": [{"const": value, "title": title} for value, title in PALETTE.items()],
        }
    },
    "required": ["color"],
}


def _color_form(ctx: Ctx) -> ElicitRequestFormParams:
    """The colour question; carries the app hint only when the client negotiated app-rendered elicitation."""
    params: dict[str, Any] = {
        "message": "Pick the colour for your demo profile.",
        "requestedSchema": COLOR_SCHEMA,
    }
    if client_renders_app_elicitation(ctx.client_capabilities):
        params["_meta"] = {"ui": {"resourceUri": PICKER_URI}}
    return ElicitRequestFormParams.model_validate(params)


def _picked(answer: ElicitResult) -> CallToolResult:
    if answer.action != "accept":
        return CallToolResult(content=[TextContent(type="text", text=f"No colour picked ({answer.action}).")])
    problems = schema_problems(COLOR_SCHEMA, answer.content)
    if problems:
        raise ToolError("The answer did not match the question (fields: " + ", ".join(problems) + ").")
    color = str((answer.content or {})["color"])
    rgb = hex_rgb(color)
    swatch = png(48, 48, lambda _x, _y: rgb)
    return CallToolResult(
        content=[
            TextContent(type="text", text=f"You picked {PALETTE[color]} ({color})."),
            ImageContent(type="image", data=_b64(swatch), mime_type="image/png"),
        ]
    )


def _b64(data: bytes) -> str:
    return base64.b64encode(data).decode("ascii")


def register_input_tools(mcp: MCPServer[Any]) -> None:
    """Register `register_user`, `connect_account` and `pick_color` on `mcp`, in that order."""

    @mcp.tool(
        title="Register a user",
        description="Asks for your details in a form (text, email, number, yes/no, a plan and interests), then "
        "asks you to confirm: two rounds of input.",
        structured_output=False,
    )
    async def register_user(ctx: Ctx) -> str | InputRequiredResult:
        require_form(ctx)
        if not is_modern(ctx):
            return await _register_legacy(ctx)
        state = load_state(ctx.request_state)
        responses = ctx.input_responses or {}
        if state.get("step") == "confirm":
            confirm = responses.get("confirm")
            profile = state.get("profile") or {}
            if not isinstance(confirm, ElicitResult):
                return exact_input_required(
                    {"confirm": ElicitRequest(params=_confirm_form(profile))}, ctx.request_state
                )
            if confirm.action != "accept" or not (confirm.content or {}).get("confirm"):
                return "Registration not confirmed; nothing was created."
            return _registered(profile)

        answer = responses.get("profile")
        if not isinstance(answer, ElicitResult):
            return exact_input_required(
                {"profile": ElicitRequest(params=_register_form())}, dump_state({"step": "profile"})
            )
        if answer.action != "accept":
            return _not_registered(answer)
        profile = _checked_profile(answer)
        return exact_input_required(
            {"confirm": ElicitRequest(params=_confirm_form(profile))},
            dump_state({"step": "confirm", "profile": profile}),
        )

    @mcp.tool(
        title="Connect an account",
        description="Asks you to open a web page out of band (URL-mode input request), as an OAuth sign-in "
        "would. The page is example.com; nothing is connected.",
        structured_output=False,
    )
    async def connect_account(
        ctx: Ctx,
        service: Annotated[Literal["calendar", "storage", "crm"], Field(description="What to connect")] = "calendar",
    ) -> str | InputRequiredResult:
        require_url(ctx)
        if not is_modern(ctx):
            elicitation_id = f"demo-connect-{secrets.token_hex(6)}"
            url = f"https://example.com/?connect={service}&elicitation={elicitation_id}"
            result = await ctx.elicit_url(
                f"Sign in to the demo {service} service to connect it.", url, elicitation_id=elicitation_id
            )
            if result.action != "accept":
                return f"Connection {result.action}d; nothing was connected."
            await anyio.sleep(0.5)  # the out-of-band step "finishes"
            await ctx.session.send_elicit_complete(elicitation_id, related_request_id=ctx.request_id)
            return f"Connected the demo {service} service (simulated; elicitation {elicitation_id} completed)."

        state = load_state(ctx.request_state)
        answer = (ctx.input_responses or {}).get("sign_in")
        if not isinstance(answer, ElicitResult) or "connection" not in state:
            connection = secrets.token_hex(6)
            url = f"https://example.com/?connect={service}&connection={connection}"
            ask = ElicitRequestURLParams(message=f"Sign in to the demo {service} service to connect it.", url=url)
            return exact_input_required({"sign_in": ElicitRequest(params=ask)}, dump_state({"connection": connection}))
        if answer.action != "accept":
            return f"Connection {answer.action}d; nothing was connected."
        return f"Connected the demo {service} service (simulated; connection {state['connection']})."

    @mcp.tool(
        title="Pick a colour",
        description="Asks for a colour. Hosts that support app-rendered elicitation show a colour-picker app; "
        "others show an ordinary form with the same question.",
    )
    async def pick_color(ctx: Ctx) -> CallToolResult | InputRequiredResult:
        require_form(ctx)
        if not is_modern(ctx):
            return _picked(await legacy_ask(ctx, _color_form(ctx)))
        answer = (ctx.input_responses or {}).get("color")
        if not isinstance(answer, ElicitResult):
            return exact_input_required({"color": ElicitRequest(params=_color_form(ctx))}, dump_state({"ask": "color"}))
        return _picked(answer)
