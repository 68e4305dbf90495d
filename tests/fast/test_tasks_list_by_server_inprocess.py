"""`tasks/list {server}` lists that server's tasks only (issue 31 item 11): it used to list every server's, with
the named server's own `tasks/list` beside them. tests/servers/tasks.py, twice, in process."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.support.fast import connected_tab, text
from tests.support.inprocess import sdk_server

pytestmark = pytest.mark.anyio


async def test_tasks_list_with_a_server_lists_that_server_s_tasks_only(tmp_path: Path) -> None:
    sdk_server("basic")  # puts tests/servers on sys.path
    servers = {"first": sdk_server("tasks"), "second": sdk_server("tasks")}
    async with connected_tab(tmp_path, servers) as tab:
        for name in servers:
            await tab.wait_connected(name)
            call = {"server": name, "name": "long_job", "arguments": {"steps": 1}, "callId": f"c-{name}"}
            assert text(await tab.request("tools/call", call)) == "done after 1 steps"
        every = (await tab.request("tasks/list"))["tasks"]
        assert sorted(t["server"] for t in every) == ["first", "second"]
        for name in servers:
            listed = await tab.request("tasks/list", {"server": name})
            assert [(t["server"], t["callId"]) for t in listed["tasks"]] == [(name, f"c-{name}")]
            assert "serverTasks" in listed
