"""Property-based fuzzing of the page's WebSocket API (hardening, item 9).

Hypothesis writes frames a page (or anything that got a socket) could send: well-formed requests
for every method with hostile params, malformed JSON-RPC, garbage text. Whatever arrives, every
frame with an id gets exactly one answer, no answer is an internal error (a traceback in
disguise), the socket stays open and every server stays connected. Bounded: a fixed number of
examples, each with a deadline, against one in-process host.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import anyio
import anyio.from_thread
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from mcp.server import MCPServer

from tests.support.inprocess import AsgiWsClient, in_process_host
from webhost.methods import METHODS

target = MCPServer("target")


@target.tool()
def echo(text: str = "") -> str:
    return text


@target.tool()
def fail(message: str = "no") -> str:
    raise ValueError(message)


@target.resource("fuzz://note")
def note() -> str:
    return "a note"


@target.prompt()
def greet(name: str = "you") -> str:
    return f"Hello {name}"


SERVERS = ("target", "nope", "")
KEYS = (
    "server",
    "name",
    "callId",
    "arguments",
    "uri",
    "tool",
    "frameId",
    "method",
    "params",
    "id",
    "action",
    "content",
    "reason",
    "decision",
    "remember",
    "permission",
    "granted",
    "limit",
    "kind",
    "detail",
)

json_leaf = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(-(2**70), 2**70),
    st.floats(allow_nan=False, allow_infinity=False),
    st.text(max_size=40),
)
json_value = st.recursive(
    json_leaf,
    lambda inner: st.one_of(st.lists(inner, max_size=4), st.dictionaries(st.text(max_size=8), inner, max_size=4)),
    max_leaves=12,
)
names = st.sampled_from(["echo", "fail", "fuzz://note", "greet", "f-nope", "c-1", "show", "accept"])
param_value = st.one_of(json_value, st.sampled_from(SERVERS), names)
# Mostly plausible params (the right server, real names, an arguments object), with hostile extras.
params = st.fixed_dictionaries(
    {"server": st.one_of(st.just("target"), st.just("target"), st.sampled_from(SERVERS), json_leaf)},
    optional={
        "name": st.one_of(names, json_leaf),
        "arguments": st.one_of(
            st.dictionaries(st.sampled_from(["text", "message", "name", "x"]), json_value, max_size=3), json_value
        ),
        "uri": st.one_of(names, st.text(max_size=20)),
        **dict.fromkeys(KEYS[4:], param_value),
    },
)
methods = st.sampled_from(sorted(METHODS))
request = st.fixed_dictionaries({"jsonrpc": st.just("2.0"), "method": methods, "params": params})
malformed = st.one_of(
    st.fixed_dictionaries(
        {
            "jsonrpc": st.sampled_from(["1.0", "2.0", None]),
            "method": st.one_of(methods, st.text(max_size=20), json_leaf),
            "params": st.one_of(params, json_value),
        }
    ),
    json_value,
)
garbage = st.one_of(st.text(max_size=60), st.sampled_from(["{", "[1,", '{"jsonrpc":"2.0","id":', "NaN", "\x00"]))
frame = st.one_of(request, malformed, garbage)


@pytest.fixture(scope="module")
def fuzz_tab(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[anyio.from_thread.BlockingPortal, Any]]:
    tmp_path: Path = tmp_path_factory.mktemp("fuzz")
    with anyio.from_thread.start_blocking_portal() as portal:
        host_cm = portal.wrap_async_context_manager(in_process_host(tmp_path, {"target": target}))
        with host_cm as host:
            tab_cm = portal.wrap_async_context_manager(host.tab())
            with tab_cm as tab:
                portal.call(tab.wait_connected, "target")
                yield portal, tab


async def exchange(tab: AsgiWsClient, frames: list[object], first_id: int) -> None:
    sent: list[int] = []
    for n, item in enumerate(frames):
        if isinstance(item, dict) and item.get("jsonrpc") == "2.0" and isinstance(item.get("method"), str):
            request_id = first_id + n
            item = {**item, "id": request_id}
            calls = ("tools/call", "resources/read", "prompts/get")
            if item["method"] in calls and isinstance(item.get("params"), dict):
                item["params"] = {**item["params"], "callId": f"fz-{request_id}"}
            sent.append(request_id)
        await tab.send_raw(item if isinstance(item, str) else json.dumps(item))
    for request_id in sent:
        response = await tab.wait_response(request_id)
        assert ("result" in response) != ("error" in response), response
        if "error" in response:
            assert not str(response["error"].get("message", "")).startswith("internal error"), response
    states = (await tab.request("servers/list"))["servers"]
    # Only a frame that asked for it may leave the server anything but connected, and never in error.
    asked = any(isinstance(f, dict) and f.get("method") in ("servers/disconnect", "servers/reconnect") for f in frames)
    assert [s["status"] for s in states] == ["connected"] or (asked and states[0]["status"] != "error"), states
    if states[0]["status"] != "connected":
        await tab.request("servers/reconnect", {"server": "target"})
        await tab.wait_connected("target")
    assert tab.close_code is None and not tab.app_done.is_set()


counter = iter(range(1_000_000, 10**9, 100))


@settings(
    max_examples=300, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow]
)
@given(frames=st.lists(frame, min_size=1, max_size=5))
def test_any_frames_get_answers_and_break_nothing(
    fuzz_tab: tuple[anyio.from_thread.BlockingPortal, Any], frames: list[object]
) -> None:
    portal, tab = fuzz_tab
    portal.call(exchange, tab, frames, next(counter))
