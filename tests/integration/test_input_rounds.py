"""2026-07-28 input rounds: a server that never stops asking hits the round cap with a clear error."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.support.process import run_webhost, stdio_server

pytestmark = pytest.mark.anyio


async def test_the_round_cap_ends_a_server_that_keeps_asking(tmp_path: Path) -> None:
    with run_webhost(tmp_path, {"elicit": stdio_server("elicit")}, webhost_options={"maxInputRounds": 3}) as host:
        async with host.connect() as ws:
            assert (await ws.wait_connected("elicit"))["era"] == "modern"
            pending = ws.start_request(
                "tools/call", {"server": "elicit", "name": "url_required_loop", "arguments": {}, "callId": "loop"}
            )
            for _ in range(3):
                request = await ws.wait_notification("elicitation/request")
                assert request["mode"] == "url" and request["origin"]["callId"] == "loop"
                await ws.request("elicitation/respond", {"id": request["id"], "action": "accept"})
            response = await ws.wait_response(pending)
            assert response["error"]["code"] == -32000
            assert "kept asking for input" in response["error"]["message"]
            # The session and the server are fine afterwards.
            state = await ws.wait_connected("elicit")
            assert state["status"] == "connected"
