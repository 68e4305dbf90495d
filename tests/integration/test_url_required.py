"""Legacy-era URL elicitation: -32042 (URL elicitation required) runs the URL step, then retries once."""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

import pytest

from tests.support.process import WsClient, connected, json_result, run_webhost, start_tool_call, stdio_server

pytestmark = pytest.mark.anyio


@pytest.fixture(scope="module")
def host(tmp_path_factory: pytest.TempPathFactory) -> Any:
    with run_webhost(tmp_path_factory.mktemp("url"), {"elicit": stdio_server("elicit", "--legacy")}) as running:
        yield running


@pytest.fixture(scope="module")
async def ws(host: Any) -> AsyncIterator[WsClient]:
    async with connected(host, "elicit") as client:
        yield client


def start(ws: WsClient, tool: str, call_id: str, arguments: dict[str, Any] | None = None) -> int:
    return start_tool_call(ws, "elicit", tool, call_id, arguments)


result_text = json_result


async def test_legacy_url_required_error_runs_the_url_step_then_retries(ws: WsClient) -> None:
    pending = start(ws, "url_required", "c14", {"complete_after": 0.3})
    consent = await ws.wait_notification("elicitation/request")
    assert consent["mode"] == "url" and consent["phase"] == "consent"
    await ws.request("elicitation/respond", {"id": consent["id"], "action": "accept"})
    waiting = await ws.wait_notification("elicitation/request")
    assert waiting["phase"] == "waiting"
    resolved = await ws.wait_notification("elicitation/resolved", lambda p: p["id"] == waiting["id"])
    assert resolved["outcome"] == "completed"
    assert (await result_text(ws, pending))["authorised"] is True


async def test_a_url_step_asked_again_stops_with_a_clear_error(ws: WsClient) -> None:
    pending = start(ws, "url_required_loop", "c15")
    consent = await ws.wait_notification("elicitation/request")
    await ws.request("elicitation/respond", {"id": consent["id"], "action": "accept"})
    waiting = await ws.wait_notification("elicitation/request")
    await ws.request("elicitation/respond", {"id": waiting["id"], "action": "accept"})  # "Done"
    response = await ws.wait_response(pending)
    assert "asked again for the same URL step" in response["error"]["message"]
