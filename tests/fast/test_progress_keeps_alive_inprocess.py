"""Progress keeps a call alive (issue 25, item 4): each progress note gives the call `timeouts.call` again, up to
`timeouts.maxTotal` in all, in both eras. (The arithmetic itself is tested on an injected clock in
tests/unit/test_injected_clocks.py; here the notes' real spacing is a third of the call timeout.)"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import anyio
import pytest
from mcp.server import MCPServer
from mcp.server.mcpserver import Context

from tests.support.fast import connected_tab, text
from tests.support.process import RpcError

pytestmark = pytest.mark.anyio

ticker = MCPServer("ticker")


@ticker.tool(description="Report progress `notes` times, `every` seconds apart, then answer.")
async def tick(notes: int, every: float, ctx: Context[Any, Any]) -> str:
    for note in range(1, notes + 1):
        await ctx.report_progress(note, notes, f"note {note}")
        await anyio.sleep(every)
    return f"{notes} notes"


ERAS = {"modern": frozenset[str](), "legacy": frozenset({"ticker"})}


@pytest.mark.parametrize("era", list(ERAS))
async def test_a_call_reporting_progress_runs_past_the_call_timeout(tmp_path: Path, era: str) -> None:
    options = {"timeouts": {"call": 1.5, "maxTotal": 600}}
    async with connected_tab(tmp_path, {"ticker": ticker}, webhost_options=options, legacy=ERAS[era]) as tab:
        assert (await tab.wait_connected("ticker"))["era"] == era
        # Six notes half a second apart: three seconds in all, twice the call timeout.
        result = await tab.request(
            "tools/call", {"server": "ticker", "name": "tick", "arguments": {"notes": 6, "every": 0.5}, "callId": "c-1"}
        )
        assert text(result) == "6 notes"
        notes = [n["params"] for n in tab.notifications if n["method"] == "progress"]
        assert [n["progress"] for n in notes] == [1, 2, 3, 4, 5, 6]


@pytest.mark.parametrize("era", list(ERAS))
async def test_progress_stops_counting_at_max_total(tmp_path: Path, era: str) -> None:
    options = {"timeouts": {"call": 1.5, "maxTotal": 2}}
    async with connected_tab(tmp_path, {"ticker": ticker}, webhost_options=options, legacy=ERAS[era]) as tab:
        with pytest.raises(RpcError) as timed_out:
            await tab.request(
                "tools/call",
                {"server": "ticker", "name": "tick", "arguments": {"notes": 400, "every": 0.25}, "callId": "c-1"},
            )
        assert timed_out.value.code == -32001
        assert "ran for timeouts.maxTotal (2 s) while reporting progress" in timed_out.value.message
        assert timed_out.value.data["maxTotalSeconds"] == 2
        assert timed_out.value.data["progressNotes"] >= 1
