"""Roots (issue 25, item 5): webhost advertises roots to every server, so it answers `roots/list` (`[]` when
there are none); an admin's roots (for everyone) and each person's own are edited from the page and kept in the
database; a change is told to the servers (`notifications/roots/list_changed` before 2026-07-28). The tool
`roots` of tests/servers/workbench.py answers the roots it got and how many list_changed it received."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import anyio
import pytest
from mcp.server import MCPServer

from tests.support.fast import connected_tab, json_text
from tests.support.inprocess import AsgiWsClient, in_process_host, sdk_server
from tests.support.process import RpcError
from webhost.people import Person

pytestmark = pytest.mark.anyio

ERAS = {"modern": frozenset[str](), "legacy": frozenset({"workbench"})}
ADA = Person(id="ada", name="Ada", role="admin")
BO = Person(id="bo", name="Bo", role="member")
CONFIGURED = {"roots": [{"uri": "file:///srv/project", "name": "project"}]}


def workbench() -> dict[str, MCPServer[Any]]:
    return {"workbench": sdk_server("workbench")}


async def roots_of(tab: AsgiWsClient) -> dict[str, Any]:
    result: dict[str, Any] = json_text(
        await tab.request("tools/call", {"server": "workbench", "name": "roots", "callId": "r"})
    )
    return result


@pytest.mark.parametrize("era", list(ERAS))
async def test_no_roots_is_an_empty_list_not_an_error(tmp_path: Path, era: str) -> None:
    async with connected_tab(tmp_path, workbench(), legacy=ERAS[era]) as tab:
        assert (await roots_of(tab))["roots"] == []
        view = await tab.request("roots/get")
        assert view == {"configured": [], "shared": [], "mine": [], "effective": [], "canEditShared": True}


@pytest.mark.parametrize("era", list(ERAS))
async def test_a_person_s_own_roots_join_the_configured_ones_and_the_server_is_told(tmp_path: Path, era: str) -> None:
    async with connected_tab(tmp_path, workbench(), legacy=ERAS[era], webhost_options=CONFIGURED) as tab:
        assert (await roots_of(tab))["roots"] == [{"uri": "file:///srv/project", "name": "project"}]
        changed_before = (await roots_of(tab))["listChanged"]
        view = await tab.request(
            "roots/set", {"scope": "mine", "roots": [{"uri": "file:///home/ada/notes", "name": "notes"}]}
        )
        assert view["mine"] == [{"uri": "file:///home/ada/notes", "name": "notes"}]
        assert [r["uri"] for r in view["effective"]] == ["file:///srv/project", "file:///home/ada/notes"]
        told = await tab.wait_notification("roots/changed")
        assert told["roots"]["effective"] == view["effective"]
        sent = await tab.wait_notification(
            "activity", lambda p: p["entry"]["method"] == "notifications/roots/list_changed"
        )
        got = await roots_of(tab)
        assert [r["uri"] for r in got["roots"]] == ["file:///srv/project", "file:///home/ada/notes"]
        if era == "legacy":
            assert sent["entry"]["direction"] == "out"
            with anyio.fail_after(10):  # the notification and the next call race to the server: a few calls at most
                while got["listChanged"] == changed_before:
                    got = await roots_of(tab)
            assert got["listChanged"] == changed_before + 1
        else:  # 2026-07-28 has no such notification: roots are asked per request, as just now
            assert sent["entry"]["direction"] == "local"


async def test_an_admin_s_roots_reach_everyone_and_a_member_may_change_only_their_own(tmp_path: Path) -> None:
    async with (
        in_process_host(tmp_path, workbench(), people=True) as host,
        host.tab(person=ADA) as ada,
        host.tab(person=BO) as bo,
    ):
        await ada.wait_connected("workbench")
        await bo.wait_connected("workbench")
        with pytest.raises(RpcError) as refused:
            await bo.request("roots/set", {"scope": "shared", "roots": [{"uri": "file:///all"}]})
        assert refused.value.code == -32003
        assert (await bo.request("roots/get"))["canEditShared"] is False
        await bo.request("roots/set", {"scope": "mine", "roots": [{"uri": "file:///home/bo"}]})
        await ada.request("roots/set", {"scope": "shared", "roots": [{"uri": "file:///team", "name": "team"}]})
        told = await bo.wait_notification("roots/changed", lambda p: p["roots"]["shared"])
        assert [r["uri"] for r in told["roots"]["effective"]] == ["file:///team", "file:///home/bo"]
        assert [r["uri"] for r in (await roots_of(bo))["roots"]] == ["file:///team", "file:///home/bo"]
        assert [r["uri"] for r in (await roots_of(ada))["roots"]] == ["file:///team"]  # not Bo's own


async def test_roots_are_kept_in_the_database(tmp_path: Path) -> None:
    async with in_process_host(tmp_path, workbench()) as host, host.tab() as tab:
        await tab.request("roots/set", {"scope": "mine", "roots": [{"uri": "file:///kept"}]})
        await tab.request("roots/set", {"scope": "shared", "roots": [{"uri": "file:///shared", "name": "s"}]})
    async with in_process_host(tmp_path, workbench()) as host, host.tab() as tab:
        await tab.wait_connected("workbench")
        view = await tab.request("roots/get")
        assert view["mine"] == [{"uri": "file:///kept"}]
        assert view["shared"] == [{"uri": "file:///shared", "name": "s"}]


@pytest.mark.parametrize(
    "roots",
    [
        "file:///x",
        [{"uri": "https://example.com"}],
        [{"uri": "file:///x"}, {"uri": "file:///x"}],
        [{"uri": "file:///x", "name": 3}],
        [{"uri": f"file:///{n}"} for n in range(101)],
    ],
)
async def test_bad_roots_are_refused_and_nothing_changes(tmp_path: Path, roots: Any) -> None:
    async with connected_tab(tmp_path, workbench()) as tab:
        with pytest.raises(RpcError) as refused:
            await tab.request("roots/set", {"scope": "mine", "roots": roots})
        assert refused.value.code == -32602
        assert (await tab.request("roots/get"))["mine"] == []
