"""Smoke test of every MCP server webhost ships or tests against: each starts, lists tools and answers, per era.

Each server runs as a real stdio subprocess and is reached with the SDK `mcp.Client`, in `mode="auto"`
(2026-07-28 when the server speaks it) and, where the server has one, `mode="legacy"` (the `initialize`
handshake). An elicitation callback answers every input request from its schema, so the elicitation
tools complete in both eras.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import pytest
from mcp import Client, MCPError, StdioServerParameters
from mcp.client import ClientRequestContext, advertise
from mcp.types import (
    CreateMessageRequestParams,
    CreateMessageResult,
    ElicitRequestFormParams,
    ElicitRequestURLParams,
    ElicitResult,
    ListRootsResult,
    Root,
    TextContent,
)
from pydantic import ValidationError

ROOT = Path(__file__).resolve().parents[2]
SERVERS = ROOT / "tests" / "servers"
MODERN = "2026-07-28"
LEGACY = "2025-11-25"
UI = "io.modelcontextprotocol/ui"
UI_WITH_ELICITATION = advertise(UI, {"mimeTypes": ["text/html;profile=mcp-app"], "elicitation": {}})

pytestmark = pytest.mark.anyio


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


def server(script: str, *args: str) -> StdioServerParameters:
    return StdioServerParameters(command=sys.executable, args=[str(SERVERS / script), *args], cwd=str(ROOT))


def demo() -> StdioServerParameters:
    return StdioServerParameters(command=sys.executable, args=["-m", "webhost.demo.server"], cwd=str(ROOT))


def answer_for(schema: dict[str, Any]) -> dict[str, Any]:
    """A valid answer to a form: each property's default, else its first option, else a plain value."""
    content: dict[str, Any] = {}
    for name, prop in (schema.get("properties") or {}).items():
        if "default" in prop:
            content[name] = prop["default"]
        elif prop.get("oneOf"):
            content[name] = prop["oneOf"][0]["const"]
        elif prop.get("enum"):
            content[name] = prop["enum"][0]
        elif prop.get("type") == "boolean":
            content[name] = True
        elif prop.get("type") in ("integer", "number"):
            content[name] = prop.get("minimum", 1)
        elif prop.get("type") == "array":
            content[name] = []
        elif prop.get("format") == "email":
            content[name] = "ada@example.com"
        elif prop.get("type") == "string":
            content[name] = {"date": "2026-01-02", "date-time": "2026-01-02T03:04:05Z", "uri": "https://x.test/"}.get(
                prop.get("format", ""), "answer"
            )
    return content


class Recorder:
    """Elicitation, sampling and roots callbacks that answer everything and remember what they saw."""

    def __init__(self) -> None:
        self.forms: list[ElicitRequestFormParams] = []
        self.urls: list[ElicitRequestURLParams] = []

    async def elicit(
        self, context: ClientRequestContext, params: ElicitRequestFormParams | ElicitRequestURLParams
    ) -> ElicitResult:
        if isinstance(params, ElicitRequestURLParams):
            self.urls.append(params)
            return ElicitResult(action="accept")
        self.forms.append(params)
        return ElicitResult(action="accept", content=answer_for(params.requested_schema))

    async def sample(self, context: ClientRequestContext, params: CreateMessageRequestParams) -> CreateMessageResult:
        return CreateMessageResult(role="assistant", content=TextContent(type="text", text="hi"), model="smoke")

    async def roots(self, context: ClientRequestContext) -> ListRootsResult:
        return ListRootsResult(roots=[Root.model_validate({"uri": "file:///smoke", "name": "smoke"})])

    def client(self, target: StdioServerParameters, mode: str, **kwargs: Any) -> Client:
        return Client(
            target,
            mode=mode,  # type: ignore[arg-type,unused-ignore]
            elicitation_callback=self.elicit,
            sampling_callback=self.sample,
            list_roots_callback=self.roots,
            extensions=[UI_WITH_ELICITATION],
            read_timeout_seconds=20,
            **kwargs,
        )


def text(result: Any) -> str:
    return "".join(block.text for block in result.content if isinstance(block, TextContent))


def errors_in(exc: BaseException) -> list[BaseException]:
    """Every exception inside a (possibly nested) exception group."""
    if isinstance(exc, BaseExceptionGroup):
        return [leaf for inner in exc.exceptions for leaf in errors_in(inner)]
    return [exc]


ERAS = [pytest.param("auto", MODERN, id="modern"), pytest.param("legacy", LEGACY, id="legacy")]


@pytest.mark.parametrize(("mode", "version"), ERAS)
async def test_demo_server(mode: str, version: str) -> None:
    calls = Recorder()
    async with calls.client(demo(), mode) as client:
        assert client.protocol_version == version
        assert (client.server_capabilities.extensions or {}).get(UI) == {"elicitation": {}}
        tools = {tool.name: tool for tool in (await client.list_tools()).tools}
        assert (tools["show_dashboard"].meta or {})["ui"]["resourceUri"] == "ui://demo/dashboard.html"
        assert (tools["dashboard_refresh"].meta or {})["ui"]["visibility"] == ["app"]

        weather = await client.call_tool("get_weather", {"city": "Berlin"})
        assert weather.structured_content is not None and weather.structured_content["city"] == "Berlin"
        assert "Berlin" in text(weather)

        picked = await client.call_tool("pick_color", {})
        assert text(picked).startswith("You picked")
        assert (calls.forms[-1].meta or {}).get("ui") == {"resourceUri": "ui://demo/picker.html"}

        registered = await client.call_tool("register_user", {})
        assert text(registered).startswith("Registered"), text(registered)
        assert len(calls.forms) == 3  # the colour, the profile form, the confirmation

        connected = await client.call_tool("connect_account", {"service": "crm"})
        assert text(connected).startswith("Connected")
        assert calls.urls and calls.urls[-1].url.startswith("https://example.com/")
        assert (calls.urls[-1].elicitation_id is not None) is (mode == "legacy")

        picker = await client.read_resource("ui://demo/picker.html")
        assert "appCapabilities" in getattr(picker.contents[0], "text", "")


@pytest.mark.parametrize(
    ("args", "mode", "version"),
    [
        pytest.param((), "auto", MODERN, id="modern"),
        pytest.param((), "legacy", LEGACY, id="legacy"),
        pytest.param(("--legacy",), "auto", LEGACY, id="legacy-flag-auto-falls-back"),
    ],
)
async def test_basic_server(args: tuple[str, ...], mode: str, version: str) -> None:
    async with Recorder().client(server("basic.py", *args), mode) as client:
        assert client.protocol_version == version
        names = {tool.name for tool in (await client.list_tools()).tools}
        assert {"echo", "add", "stats", "slow", "hang", "fail", "rpc_error", "big", "binary"} <= names
        assert text(await client.call_tool("echo", {"text": "hi"})) == "hi"
        assert (await client.call_tool("add", {"a": 2, "b": 3})).structured_content == {"result": 5}
        binary = await client.call_tool("binary", {"image_bytes": 16})
        assert [block.type for block in binary.content] == ["image", "audio", "resource", "text"]
        assert (await client.call_tool("fail", {})).is_error
        with pytest.raises(MCPError) as raised:
            await client.call_tool("rpc_error", {"code": -32010})
        assert raised.value.code == -32010


@pytest.mark.parametrize(("mode", "version"), ERAS)
async def test_elicit_server(mode: str, version: str) -> None:
    calls = Recorder()
    async with calls.client(server("elicit.py"), mode) as client:
        assert client.protocol_version == version
        await client.list_tools()
        form = await client.call_tool("form_full", {})
        assert '"action": "accept"' in text(form)
        rounds = await client.call_tool("multi_round", {"rounds": 2})
        assert text(rounds).count('"accept"') == 2
        both = await client.call_tool("concurrent", {})
        assert '"first"' in text(both) and '"second"' in text(both)
        await client.call_tool("hostile_schema", {})
        assert "$defs" in calls.forms[-1].requested_schema  # exact params survive both wires
        assert '"accept"' in text(await client.call_tool("url_mode", {}))
        assert "hi" in text(await client.call_tool("sampling", {}))
        assert "file:///smoke" in text(await client.call_tool("roots", {}))


@pytest.mark.parametrize(("mode", "version"), ERAS)
async def test_apps_server(mode: str, version: str) -> None:
    async with Recorder().client(server("apps.py", "--allowed-origin", "http://127.0.0.1:9"), mode) as client:
        assert client.protocol_version == version
        assert UI in (client.server_capabilities.extensions or {})
        tools = {tool.name: tool for tool in (await client.list_tools()).tools}
        assert (tools["app_only_ping"].meta or {})["ui"]["visibility"] == ["app"]
        assert (tools["model_only_ping"].meta or {})["ui"]["visibility"] == ["model"]
        assert tools["legacy_key_app"].meta == {"ui/resourceUri": "ui://apps/legacy-key.html"}
        assert {name for name in tools if name.startswith("hostile_")} >= {"hostile_flood", "hostile_storage"}
        csp = await client.read_resource("ui://apps/csp.html")
        assert (csp.contents[0].meta or {})["ui"]["csp"] == {"connectDomains": ["http://127.0.0.1:9"]}
        assert "bridge probe" in text(await client.call_tool("bridge_probe", {"autorun": False}))


async def test_mrtr_raw_server_modern_only() -> None:
    calls = Recorder()
    async with calls.client(server("mrtr_raw.py"), "auto") as client:
        assert client.protocol_version == MODERN
        assert (client.server_capabilities.extensions or {}).get(UI) == {"elicitation": {}}
        await client.list_tools()
        assert text(await client.call_tool("pick_color", {})).startswith("You picked")
        assert (calls.forms[-1].meta or {}).get("ui") == {"resourceUri": "ui://mrtr/picker.html"}
    with pytest.raises(BaseException) as raised:
        async with calls.client(server("mrtr_raw.py"), "legacy"):
            pass
    assert any(isinstance(e, MCPError) and e.code == -32022 for e in errors_in(raised.value))


@pytest.mark.parametrize("mode", ["auto", "legacy"])
@pytest.mark.parametrize("fault", ["normal", "garbage"])
async def test_faulty_server_that_still_answers(fault: str, mode: str) -> None:
    async with Recorder().client(server("faulty.py", fault), mode) as client:
        assert client.protocol_version == (MODERN if mode == "auto" else LEGACY)
        await client.list_tools()
        assert text(await client.call_tool("echo", {"text": "still fine"})) == "still fine"


async def test_faulty_server_modes_that_fail() -> None:
    calls = Recorder()
    with pytest.raises(BaseException) as raised:
        async with calls.client(server("faulty.py", "no_result_type"), "auto") as client:
            await client.list_tools()
            await client.call_tool("echo", {"text": "x"})
    assert any(isinstance(e, ValidationError) for e in errors_in(raised.value))

    with pytest.raises(BaseException) as raised:
        async with calls.client(server("faulty.py", "exit_at_start"), "auto"):
            pass
    assert any(isinstance(e, MCPError) and e.message == "Connection closed" for e in errors_in(raised.value))

    with pytest.raises(BaseException) as raised:
        async with calls.client(server("faulty.py", "crash_on_call"), "legacy") as client:
            await client.list_tools()
            await client.call_tool("echo", {"text": "x"})
    assert any(isinstance(e, MCPError) and e.message == "Connection closed" for e in errors_in(raised.value))

    async with calls.client(server("faulty.py", "slow_start", "0.5"), "auto") as client:
        assert client.protocol_version == MODERN
