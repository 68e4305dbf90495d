"""Test MCP server for input requests in both eras: forms, MRTR rounds, URL mode, -32042, sampling, roots.

Dual-era: on 2026-07-28 every question travels as an `InputRequiredResult` round (MRTR); on a legacy
connection the same question is a server→client request inside the open call. Run it with
`python tests/servers/elicit.py` (stdio), `--http PORT` (Streamable HTTP on 127.0.0.1:PORT/mcp; `--listen
0.0.0.0` for another address) or `--legacy` (refuse `server/discover`, so clients fall back to `initialize`).

`requestState` is NOT sealed by default: every state this server mints is a visible string with
awkward characters (quotes, a backslash, non-ASCII, `+/=`, a tab), and a retry whose state is not
byte-for-byte one the server issued fails with -32602. `--seal` restores the SDK's AES-GCM sealing.

Tool results are JSON text (`{"action": ..., "content": ...}` and the like), so tests can assert on
exactly what the host sent back. Exact input-request params (hostile schemas, `$defs`) reach the
2026-07-28 wire through `_support.exact_input_required` (see there).
"""

from __future__ import annotations

import argparse
import asyncio
import itertools
import json
import warnings
from typing import Annotated, Any

import anyio
from _support import add_common_args, exact_input_required, is_modern, restore_exact_input_requests, serve
from mcp import UrlElicitationRequiredError
from mcp.server import MCPServer
from mcp.server.mcpserver import (
    AcceptedElicitation,
    CancelledElicitation,
    Context,
    DeclinedElicitation,
    Elicit,
    ElicitationResult,
    Resolve,
)
from mcp.server.request_state import RequestStateBoundary
from mcp.shared.exceptions import MCPDeprecationWarning, MCPError
from mcp.shared.message import ServerMessageMetadata
from mcp.types import (
    INVALID_PARAMS,
    MISSING_REQUIRED_CLIENT_CAPABILITY,
    CreateMessageRequest,
    CreateMessageRequestParams,
    CreateMessageResult,
    ElicitRequest,
    ElicitRequestFormParams,
    ElicitRequestURLParams,
    ElicitResult,
    InputRequest,
    InputRequiredResult,
    ListRootsRequest,
    ListRootsResult,
    SamplingMessage,
    TextContent,
)
from pydantic import BaseModel, Field

warnings.filterwarnings("ignore", category=MCPDeprecationWarning)  # sampling and roots are deprecated in 2026

Ctx = Context[Any, Any]

mcp = MCPServer(
    "elicit",
    title="webhost elicitation test server",
    version="1.0.0",
    instructions="Input requests of every kind, in both protocol eras.",
    middleware=[restore_exact_input_requests],
)

# ---- request state: visible, awkward, checked byte for byte ----------------------------------------

STATE_PREFIX = 'elicit v1 ✓ "exact" +/= \\ \t|'
_issued_states: set[str] = set()


def _mint_state(payload: dict[str, Any]) -> str:
    state = STATE_PREFIX + json.dumps(payload, sort_keys=True, ensure_ascii=False)
    _issued_states.add(state)
    return state


def _read_state(ctx: Ctx) -> dict[str, Any] | None:
    """The payload of the echoed state; None on the first round. A mangled echo is -32602."""
    raw = ctx.request_state
    if raw is None:
        return None
    if raw not in _issued_states or not raw.startswith(STATE_PREFIX):
        raise MCPError(code=INVALID_PARAMS, message="requestState was not echoed byte for byte")
    payload = json.loads(raw[len(STATE_PREFIX) :])
    return payload if isinstance(payload, dict) else {}


def _answer(ctx: Ctx, key: str) -> ElicitResult | None:
    value = (ctx.input_responses or {}).get(key)
    return value if isinstance(value, ElicitResult) else None


def _ask(requests: dict[str, InputRequest], payload: dict[str, Any] | None = None) -> InputRequiredResult:
    return exact_input_required(requests, _mint_state(payload or {}))


def _form(message: str, schema: dict[str, Any], meta: dict[str, Any] | None = None) -> ElicitRequest:
    params: dict[str, Any] = {"message": message, "requestedSchema": schema}
    if meta is not None:
        params["_meta"] = meta
    return ElicitRequest(params=ElicitRequestFormParams.model_validate(params))


async def _legacy_elicit(ctx: Ctx, request: ElicitRequest) -> ElicitResult:
    result: ElicitResult = await ctx.session.send_request(
        request, ElicitResult, metadata=ServerMessageMetadata(related_request_id=ctx.request_id)
    )
    return result


def _report(result: ElicitResult | None, **extra: Any) -> str:
    body: dict[str, Any] = {"action": result.action if result else None}
    if result is not None and result.content is not None:
        body["content"] = result.content
    body.update(extra)
    return json.dumps(body, sort_keys=True, ensure_ascii=False)


def _require(ctx: Ctx, capability: str) -> None:
    """Refuse a request the client did not declare the capability for (-32021 on 2026, an error result before)."""
    caps = ctx.client_capabilities
    declared = {
        "form": caps is not None
        and caps.elicitation is not None
        and (caps.elicitation.form is not None or caps.elicitation.url is None),
        "url": caps is not None and caps.elicitation is not None and caps.elicitation.url is not None,
        "sampling": caps is not None and caps.sampling is not None,
        "roots": caps is not None and caps.roots is not None,
    }[capability]
    if declared:
        return
    required = {
        "form": {"elicitation": {"form": {}}},
        "url": {"elicitation": {"url": {}}},
        "sampling": {"sampling": {}},
        "roots": {"roots": {}},
    }[capability]
    if is_modern(ctx):
        raise MCPError(
            code=MISSING_REQUIRED_CLIENT_CAPABILITY,
            message=f"client did not declare {capability}",
            data={"requiredCapabilities": required},
        )
    raise ValueError(f"the client did not declare the {capability} capability")


# ---- schemas -----------------------------------------------------------------------------------------

FULL_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "text": {
            "type": "string",
            "title": "Text",
            "description": "2 to 20 characters",
            "minLength": 2,
            "maxLength": 20,
            "default": "hello",
        },
        "email": {"type": "string", "title": "Email", "format": "email"},
        "website": {"type": "string", "title": "Website", "format": "uri"},
        "birthday": {"type": "string", "title": "Birthday", "format": "date"},
        "meeting": {"type": "string", "title": "Meeting", "format": "date-time"},
        "ratio": {"type": "number", "title": "Ratio", "minimum": 0, "maximum": 1, "default": 0.5},
        "count": {"type": "integer", "title": "Count", "minimum": 1, "maximum": 10, "default": 3},
        "agree": {"type": "boolean", "title": "I agree", "default": False},
        "maybe": {"type": "boolean", "title": "Optional yes/no (no default)"},
        "color": {"type": "string", "title": "Colour", "enum": ["red", "green", "blue"], "default": "green"},
        "size": {
            "type": "string",
            "title": "Size",
            "oneOf": [
                {"const": "s", "title": "Small"},
                {"const": "m", "title": "Medium"},
                {"const": "l", "title": "Large"},
            ],
            "default": "m",
        },
        "legacy_enum": {
            "type": "string",
            "title": "Legacy titled enum",
            "enum": ["x", "y"],
            "enumNames": ["Ex", "Why"],
        },
        "tags": {
            "type": "array",
            "title": "Tags (1-2)",
            "minItems": 1,
            "maxItems": 2,
            "items": {"type": "string", "enum": ["a", "b", "c"]},
            "default": ["a"],
        },
        "toppings": {
            "type": "array",
            "title": "Toppings (up to 3)",
            "maxItems": 3,
            "items": {
                "anyOf": [
                    {"const": "cheese", "title": "Cheese"},
                    {"const": "olives", "title": "Olives"},
                    {"const": "basil", "title": "Basil"},
                    {"const": "chili", "title": "Chili"},
                ]
            },
        },
    },
    "required": ["text", "email", "count", "agree", "color"],
}

DEFAULTS_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "name": {"type": "string", "title": "Name", "default": "Ada Lovelace"},
        "age": {"type": "integer", "title": "Age", "default": 36},
        "score": {"type": "number", "title": "Score", "default": 9.5},
        "tier": {"type": "string", "title": "Tier", "enum": ["basic", "gold"], "default": "gold"},
        "subscribed": {"type": "boolean", "title": "Subscribed", "default": True},
    },
    "required": [],
}

HOSTILE_SCHEMA: dict[str, Any] = {
    "$schema": "https://json-schema.org/draft/2020-12/schema",
    "type": "object",
    "$defs": {"Address": {"type": "object", "properties": {"street": {"type": "string"}}}},
    "properties": {
        "plain": {"type": "string", "title": "A normal field beside the odd ones"},
        "address": {"$ref": "#/$defs/Address", "title": "A $ref to an object"},
        "nested": {
            "type": "object",
            "title": "A nested object",
            "properties": {"inner": {"type": "string"}},
        },
        "people": {
            "type": "array",
            "title": "An array of objects",
            "items": {"type": "object", "properties": {"name": {"type": "string"}}},
        },
        "redos": {
            "type": "string",
            "title": "pattern with catastrophic backtracking",
            "pattern": "^(a+)+$",
        },
        "unknown": {"type": "string", "title": "Unknown keywords", "x-widget": "slider", "contentEncoding": "base64"},
        "script": {
            "type": "string",
            "title": "<img src=x onerror=alert(1)>",
            "description": "<script>alert(1)</script>",
        },
    },
    "required": ["plain", "address"],
    "additionalProperties": False,
}

ANSWER_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {"answer": {"type": "string", "title": "Your answer"}},
    "required": ["answer"],
}


# ---- forms -------------------------------------------------------------------------------------------


async def _single_form(ctx: Ctx, key: str, request: ElicitRequest) -> str | InputRequiredResult:
    _require(ctx, "form")
    if not is_modern(ctx):
        return _report(await _legacy_elicit(ctx, request))
    state = _read_state(ctx)
    answer = _answer(ctx, key)
    if state is None or answer is None:
        return _ask({key: request}, {"tool": key})
    return _report(answer)


@mcp.tool(
    title="Form: the whole schema subset",
    description="One form with every property kind of the elicitation schema subset; returns what came back.",
    structured_output=False,
)
async def form_full(ctx: Ctx) -> str | InputRequiredResult:
    return await _single_form(ctx, "form_full", _form("Fill in every kind of field.", FULL_SCHEMA))


@mcp.tool(
    title="Form: defaults only",
    description="Five primitives, each with a default, nothing required (SEP-1034; accept to send defaults).",
    structured_output=False,
)
async def form_defaults(ctx: Ctx) -> str | InputRequiredResult:
    return await _single_form(ctx, "form_defaults", _form("Check the defaults and submit.", DEFAULTS_SCHEMA))


@mcp.tool(
    title="Form: hostile schema",
    description="Outside the subset: a $ref with $defs, a nested object, an array of objects, a ReDoS "
    "pattern, unknown keywords and markup in titles. The host must not crash.",
    structured_output=False,
)
async def hostile_schema(ctx: Ctx) -> str | InputRequiredResult:
    return await _single_form(ctx, "hostile_schema", _form("A schema no host should trust.", HOSTILE_SCHEMA))


@mcp.tool(
    title="Form: app-rendered hint",
    description="A form whose params carry _meta.ui.resourceUri (sent whatever the client negotiated; the "
    "host must ignore it unless it negotiated app-rendered elicitation).",
    structured_output=False,
)
async def app_hint(ctx: Ctx, resource_uri: str = "ui://elicit/not-served.html") -> str | InputRequiredResult:
    request = _form("A form with an app hint.", ANSWER_SCHEMA, meta={"ui": {"resourceUri": resource_uri}})
    return await _single_form(ctx, "app_hint", request)


# ---- several rounds, several questions -----------------------------------------------------------------


@mcp.tool(
    title="Several rounds",
    description="Ask `rounds` questions one after another (2026: one InputRequiredResult per round, the "
    "state carrying earlier answers).",
    structured_output=False,
)
async def multi_round(ctx: Ctx, rounds: Annotated[int, Field(ge=1, le=20)] = 3) -> str | InputRequiredResult:
    _require(ctx, "form")
    if not is_modern(ctx):
        answers: list[Any] = []
        for index in range(1, rounds + 1):
            result = await _legacy_elicit(ctx, _form(f"Round {index} of {rounds}", ANSWER_SCHEMA))
            answers.append({"action": result.action, "content": result.content})
        return json.dumps({"rounds": rounds, "answers": answers}, sort_keys=True)
    state = _read_state(ctx) or {"round": 0, "answers": []}
    round_no: int = state["round"]
    answers = list(state["answers"])
    if round_no > 0:
        answer = _answer(ctx, f"round_{round_no}")
        if answer is None:  # missing response: ask the same round again
            return _ask({f"round_{round_no}": _form(f"Round {round_no} of {rounds}", ANSWER_SCHEMA)}, state)
        answers.append({"action": answer.action, "content": answer.content})
    if round_no >= rounds:
        return json.dumps({"rounds": rounds, "answers": answers}, sort_keys=True)
    nxt = round_no + 1
    return _ask({f"round_{nxt}": _form(f"Round {nxt} of {rounds}", ANSWER_SCHEMA)}, {"round": nxt, "answers": answers})


@mcp.tool(
    title="State-only rounds",
    description='2026: answer `polls` times with an InputRequiredResult holding only requestState ("not '
    'done yet"), then complete. Legacy: just completes.',
    structured_output=False,
)
async def state_only(ctx: Ctx, polls: Annotated[int, Field(ge=1, le=20)] = 2) -> str | InputRequiredResult:
    if not is_modern(ctx):
        return json.dumps({"polls": 0})
    state = _read_state(ctx) or {"polls": 0}
    if state["polls"] >= polls:
        return json.dumps({"polls": state["polls"]})
    return InputRequiredResult(request_state=_mint_state({"polls": state["polls"] + 1}))


@mcp.tool(
    title="Two questions at once",
    description="2026: one round with two input requests (keys `first` and `second`). Legacy: two "
    "concurrent elicitation/create requests.",
    structured_output=False,
)
async def concurrent(ctx: Ctx) -> str | InputRequiredResult:
    _require(ctx, "form")
    first = _form("First question", ANSWER_SCHEMA)
    second = _form("Second question", {**ANSWER_SCHEMA, "properties": {"answer": {"type": "integer"}}})
    if not is_modern(ctx):
        results: dict[str, ElicitResult] = {}

        async def ask(key: str, request: ElicitRequest) -> None:
            results[key] = await _legacy_elicit(ctx, request)

        async with anyio.create_task_group() as tg:
            tg.start_soon(ask, "first", first)
            tg.start_soon(ask, "second", second)
        return json.dumps({k: json.loads(_report(v)) for k, v in sorted(results.items())}, sort_keys=True)
    state = _read_state(ctx)
    one, two = _answer(ctx, "first"), _answer(ctx, "second")
    if state is None or one is None or two is None:
        return _ask({"first": first, "second": second}, {"tool": "concurrent"})
    return json.dumps({"first": json.loads(_report(one)), "second": json.loads(_report(two))}, sort_keys=True)


# ---- URL mode and -32042 --------------------------------------------------------------------------------

_ids = itertools.count(1)
_completed: set[str] = set()
_background: set[asyncio.Task[None]] = set()


@mcp.tool(
    title="URL mode",
    description="Ask for consent to open a URL (legacy: elicitationId, then notifications/elicitation/complete).",
    structured_output=False,
)
async def url_mode(ctx: Ctx, url: str = "https://example.com/authorize?from=elicit") -> str | InputRequiredResult:
    _require(ctx, "url")
    message = "Open this page to authorise the test server."
    if not is_modern(ctx):
        elicitation_id = f"url-{next(_ids)}"
        result = await ctx.elicit_url(message, url, elicitation_id=elicitation_id)
        if result.action == "accept":
            await ctx.session.send_elicit_complete(elicitation_id, related_request_id=ctx.request_id)
        return json.dumps({"action": result.action, "elicitationId": elicitation_id})
    state = _read_state(ctx)
    answer = _answer(ctx, "authorise")
    if state is None or answer is None:
        ask = ElicitRequest(params=ElicitRequestURLParams(message=message, url=url))
        return _ask({"authorise": ask}, {"tool": "url_mode"})
    return json.dumps({"action": answer.action, "content": answer.content})


async def _complete_later(ctx: Ctx, elicitation_id: str, delay: float) -> None:
    await asyncio.sleep(delay)
    _completed.add(elicitation_id)
    await ctx.session.send_elicit_complete(elicitation_id)  # standalone channel: the request has ended


@mcp.tool(
    title="URL required (-32042)",
    description="Legacy: fail with -32042 naming a URL elicitation, send notifications/elicitation/complete "
    "a moment later, and succeed on the retry. 2026 (no -32042): a URL-mode input request instead.",
    structured_output=False,
)
async def url_required(ctx: Ctx, complete_after: float = 0.5, flow: str = "auth") -> str | InputRequiredResult:
    if is_modern(ctx):
        return await url_mode(ctx, "https://example.com/authorize?from=url_required")
    done = sorted(e for e in _completed if e.startswith(f"{flow}-"))
    if done:
        return json.dumps({"authorised": True, "completed": done})
    elicitation_id = f"{flow}-{next(_ids)}"
    task = asyncio.get_running_loop().create_task(_complete_later(ctx, elicitation_id, complete_after))
    _background.add(task)
    task.add_done_callback(_background.discard)
    raise UrlElicitationRequiredError(
        [
            ElicitRequestURLParams(
                message="Authorise the test server first.",
                url=f"https://example.com/authorize?elicitation={elicitation_id}",
                elicitation_id=elicitation_id,
            )
        ]
    )


@mcp.tool(
    title="URL required, forever",
    description="Legacy: -32042 with the same elicitationId on every call (a host needs a loop guard). 2026: a "
    "URL-mode input request every round (the client's round cap must stop it).",
    structured_output=False,
)
async def url_required_loop(ctx: Ctx) -> str | InputRequiredResult:
    if is_modern(ctx):
        ask = ElicitRequest(params=ElicitRequestURLParams(message="Again.", url="https://example.com/loop"))
        return _ask({"authorise": ask}, {"tool": "url_required_loop"})
    raise UrlElicitationRequiredError(
        [
            ElicitRequestURLParams(
                message="Authorise again (this never completes).",
                url="https://example.com/authorize?elicitation=loop-1",
                elicitation_id="loop-1",
            )
        ]
    )


# ---- sampling and roots ------------------------------------------------------------------------------------


@mcp.tool(
    title="Sampling",
    description="Ask the client's model for a completion (deprecated in 2026-07-28, still supported).",
    structured_output=False,
)
async def sampling(ctx: Ctx, prompt: str = "Say hello in one word.") -> str | InputRequiredResult:
    _require(ctx, "sampling")
    params = CreateMessageRequestParams(
        messages=[SamplingMessage(role="user", content=TextContent(type="text", text=prompt))], max_tokens=64
    )
    if not is_modern(ctx):
        reply: CreateMessageResult = await ctx.session.send_request(
            CreateMessageRequest(params=params),
            CreateMessageResult,
            metadata=ServerMessageMetadata(related_request_id=ctx.request_id),
        )
        return json.dumps(reply.model_dump(mode="json", by_alias=True, exclude_none=True), sort_keys=True)
    state = _read_state(ctx)
    answer = (ctx.input_responses or {}).get("sample")
    if state is None or answer is None:
        return _ask({"sample": CreateMessageRequest(params=params)}, {"tool": "sampling"})
    return json.dumps(answer.model_dump(mode="json", by_alias=True, exclude_none=True), sort_keys=True)


@mcp.tool(
    title="Roots",
    description="Ask the client for its roots (deprecated in 2026-07-28, still supported).",
    structured_output=False,
)
async def roots(ctx: Ctx) -> str | InputRequiredResult:
    _require(ctx, "roots")
    if not is_modern(ctx):
        listed: ListRootsResult = await ctx.session.send_request(
            ListRootsRequest(), ListRootsResult, metadata=ServerMessageMetadata(related_request_id=ctx.request_id)
        )
        return json.dumps([str(root.uri) for root in listed.roots])
    state = _read_state(ctx)
    answer = (ctx.input_responses or {}).get("roots")
    if state is None or not isinstance(answer, ListRootsResult):
        return _ask({"roots": ListRootsRequest()}, {"tool": "roots"})
    return json.dumps([str(root.uri) for root in answer.roots])


# ---- the SDK's own dual-era way: Resolve ---------------------------------------------------------------------


class Confirm(BaseModel):
    ok: bool = Field(description="Go ahead?")


async def ask_confirm() -> Elicit[Confirm]:
    return Elicit("Really do it?", Confirm)


@mcp.tool(
    title="Resolve-based confirm",
    description="Uses the SDK's Resolve/Elicit (both eras; -32021 on 2026 when the client has no form elicitation).",
)
async def resolve_confirm(confirm: Annotated[ElicitationResult[Confirm], Resolve(ask_confirm)]) -> str:
    match confirm:
        case AcceptedElicitation(data=Confirm(ok=True)):
            return "confirmed"
        case AcceptedElicitation():
            return "not confirmed"
        case DeclinedElicitation():
            return "declined"
        case CancelledElicitation():
            return "cancelled"
    return "unknown"


# ---- MRTR on prompts/get and resources/read ------------------------------------------------------------------


@mcp.prompt(title="Greeting that asks first", description="Asks for a name before rendering (elicitation).")
async def ask_then_greet(ctx: Ctx) -> str | InputRequiredResult:
    request = _form("Whom should the greeting address?", ANSWER_SCHEMA)
    if not is_modern(ctx):
        result = await _legacy_elicit(ctx, request)
        who = (result.content or {}).get("answer", "nobody") if result.action == "accept" else result.action
        return f"Write a greeting for {who}."
    state = _read_state(ctx)
    answer = _answer(ctx, "who")
    if state is None or answer is None:
        return _ask({"who": request}, {"prompt": "ask_then_greet"})
    who = (answer.content or {}).get("answer", "nobody") if answer.action == "accept" else answer.action
    return f"Write a greeting for {who}."


@mcp.resource(
    "elicit://guarded/{name}",
    name="guarded",
    title="Guarded document",
    description="Asks for confirmation before it can be read (elicitation on resources/read).",
    mime_type="text/plain",
)
async def guarded(name: str, ctx: Ctx) -> str | InputRequiredResult:
    request = _form(
        f"Show the guarded document {name!r}?",
        {"type": "object", "properties": Confirm.model_json_schema()["properties"], "required": ["ok"]},
    )
    if not is_modern(ctx):
        result = await _legacy_elicit(ctx, request)
        allowed = result.action == "accept" and (result.content or {}).get("ok") is True
    else:
        state = _read_state(ctx)
        answer = _answer(ctx, "confirm")
        if state is None or answer is None:
            return _ask({"confirm": request}, {"resource": name})
        allowed = answer.action == "accept" and (answer.content or {}).get("ok") is True
    return f"The guarded document {name}." if allowed else "Not shown."


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    add_common_args(parser)
    parser.add_argument("--seal", action="store_true", help="seal requestState with the SDK's AES-GCM boundary")
    parser.add_argument(
        "--listen",
        metavar="HOST",
        help="with --http: listen on HOST instead of 127.0.0.1 (0.0.0.0: every interface, any Host header, as a "
        "container reached by its compose service name needs; tests/deploy)",
    )
    args = parser.parse_args()
    if not args.seal:
        mcp.middleware[:] = [m for m in mcp.middleware if not isinstance(m, RequestStateBoundary)]
    if args.listen is not None and args.http is not None and not args.legacy:
        # The SDK checks Host (DNS rebinding) only on a loopback address; elsewhere the network is the boundary.
        mcp.run(transport="streamable-http", host=args.listen, port=args.http, streamable_http_path="/mcp")
        return
    serve(mcp, args)


if __name__ == "__main__":
    main()
