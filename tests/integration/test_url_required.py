"""Legacy-era URL elicitation: -32042 (URL elicitation required) runs the URL step, then retries once."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from typing import Any

import pytest

from tests.helpers import WsClient, run_webhost, stdio_server

pytestmark = pytest.mark.anyio


@pytest.fixture(scope="module")
def host(tmp_path_factory: pytest.TempPathFactory) -> Any:
    with run_webhost(tmp_path_factory.mktemp("url"), {"elicit": stdio_server("elicit", "--legacy")}) as running:
        yield running


@pytest.fixture(scope="module")
def anyio_backend() -> str:
    return "asyncio"


@pytest.fixture(scope="module")
async def ws(host: Any) -> AsyncIterator[WsClient]:
    async with host.connect() as client:
        await client.wait_connected("elicit")
        yield client


def start(ws: WsClient, tool: str, call_id: str, arguments: dict[str, Any] | None = None) -> int:
    return ws.start_request("tools/call", {"server": "elicit", "name": tool, "arguments": arguments or {},
                                           "callId": call_id})


async def result_text(ws: WsClient, request_id: int, timeout: float = 20) -> Any:
    response = await ws.wait_response(request_id, timeout=timeout)
    assert "result" in response, response
    return json.loads(response["result"]["content"][0]["text"])


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
