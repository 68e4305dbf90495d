"""Values each person provides (`${input:ID}`, contract §6) in-process: wait, give, connect, forget, keep."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from tests.support.inprocess import in_process_host, sdk_server
from tests.support.process import RpcError
from webhost.config import ServerConfig
from webhost.people import Person

pytestmark = pytest.mark.anyio

SECRET_VALUE = "sk-live-7f3a9c1e5b2d4f60"
OTHER_VALUE = "sk-other-0a1b2c3d4e5f6789"
INPUTS = [{"type": "promptString", "id": "api_key", "description": "Your API key for keyed", "password": True}]
ENTRIES = {"keyed": {"command": "in-process", "env": {"API_KEY": "${input:api_key}", "MODE": "test"}}}
ADA = Person(id="ada@example.com", name="Ada", role="member")
BOB = Person(id="bob@example.com", name="Bob", role="member")


def servers() -> dict[str, Any]:
    return {"keyed": sdk_server("basic"), "plain": sdk_server("basic")}


def host(
    tmp_path: Path, connects: list[ServerConfig] | None = None, *, people: bool = False, database_url: str | None = None
) -> Any:
    return in_process_host(
        tmp_path, servers(), entries=ENTRIES, inputs=INPUTS, connects=connects, people=people, database_url=database_url
    )


def keyed(connects: list[ServerConfig]) -> list[ServerConfig]:
    return [c for c in connects if c.name == "keyed"]


async def test_a_server_waits_for_its_input_then_connects_with_the_value(tmp_path: Path) -> None:
    connects: list[ServerConfig] = []
    async with host(tmp_path, connects) as h, h.tab() as tab:
        await tab.wait_connected("plain")
        state = await tab.wait_status("keyed", "needs-input")
        assert state["inputs"] == [
            {"id": "api_key", "description": "Your API key for keyed", "password": True, "default": None}
        ]
        assert keyed(connects) == []
        listed = await tab.request("inputs/list")
        assert listed["inputs"] == [
            {
                "id": "api_key",
                "description": "Your API key for keyed",
                "password": True,
                "default": None,
                "stored": False,
                "servers": ["keyed"],
            }
        ]

        answer = await tab.request("inputs/set", {"server": "keyed", "values": {"api_key": SECRET_VALUE}})
        assert answer["stored"] == ["api_key"] and [s["name"] for s in answer["servers"]] == ["keyed"]
        await tab.wait_connected("keyed")
        assert [c.env["API_KEY"] for c in keyed(connects)] == [SECRET_VALUE]
        assert keyed(connects)[0].env["MODE"] == "test"
        assert (await tab.request("inputs/list"))["inputs"][0]["stored"] is True

        # A server that answers with the value shows it to its owner, whose result it is (issue 25 item 8):
        # tests/fast/test_secrets_inprocess.py::test_a_persons_own_value_in_their_result_shows_to_them_live_and_in_\
        # their_history. Here nothing answers with it, so nothing webhost sends holds it.
        await tab.request("servers/reconnect", {"server": "keyed"})
        await tab.wait_connected("keyed")
        with pytest.raises(RpcError) as refused:
            await tab.request("inputs/set", {"values": {"nope": SECRET_VALUE}})
        assert SECRET_VALUE not in str(refused.value.data) + str(refused.value.message)
        everything = "\n".join(tab.received)
        assert "keyed" in everything and SECRET_VALUE not in everything
    database = (tmp_path / "data" / "webhost.sqlite3").read_bytes()
    wal = tmp_path / "data" / "webhost.sqlite3-wal"
    assert SECRET_VALUE.encode() not in database + (wal.read_bytes() if wal.exists() else b"")


async def test_values_survive_a_restart_and_forget_makes_the_server_wait_again(
    tmp_path: Path, database_url: str
) -> None:
    async with host(tmp_path, database_url=database_url) as h, h.tab() as tab:
        await tab.wait_status("keyed", "needs-input")
        await tab.request("inputs/set", {"values": {"api_key": SECRET_VALUE}})
        await tab.wait_connected("keyed")

    connects: list[ServerConfig] = []
    async with host(tmp_path, connects, database_url=database_url) as h, h.tab() as tab:  # a restart of webhost
        await tab.wait_connected("keyed")
        assert [c.env["API_KEY"] for c in keyed(connects)] == [SECRET_VALUE]
        assert await tab.request("inputs/forget", {"ids": ["api_key"]}) == {"forgotten": ["api_key"]}
        assert (await tab.request("inputs/list"))["inputs"][0]["stored"] is False
        await tab.wait_connected("keyed")  # the running connection stays until it reconnects
        await tab.request("servers/reconnect", {"server": "keyed"})
        await tab.wait_status("keyed", "needs-input")
        assert SECRET_VALUE not in "\n".join(tab.received)

    async with host(tmp_path, database_url=database_url) as h, h.tab() as tab:
        await tab.wait_status("keyed", "needs-input")


async def test_each_person_is_asked_separately_and_never_gets_another_ones_value(tmp_path: Path) -> None:
    connects: list[ServerConfig] = []
    async with host(tmp_path, connects, people=True) as h, h.tab(person=ADA) as ada, h.tab(person=BOB) as bob:
        await ada.wait_status("keyed", "needs-input")
        await bob.wait_status("keyed", "needs-input")
        await ada.request("inputs/set", {"values": {"api_key": SECRET_VALUE}})
        await ada.wait_connected("keyed")
        assert (await bob.wait_status("keyed", "needs-input"))["inputs"][0]["id"] == "api_key"
        assert (await bob.request("inputs/list"))["inputs"][0]["stored"] is False

        await bob.request("inputs/set", {"values": {"api_key": OTHER_VALUE}})
        await bob.wait_connected("keyed")
        assert sorted(c.env["API_KEY"] for c in keyed(connects)) == sorted([SECRET_VALUE, OTHER_VALUE])
        assert SECRET_VALUE not in "\n".join(bob.received)
        assert OTHER_VALUE not in "\n".join(ada.received)
        assert SECRET_VALUE not in "\n".join(ada.received)


async def test_bad_requests_name_ids_only(tmp_path: Path) -> None:
    async with host(tmp_path) as h, h.tab() as tab:
        await tab.wait_status("keyed", "needs-input")
        bad: list[dict[str, Any]] = [
            {},
            {"values": {}},
            {"values": {"api_key": ""}},
            {"values": {"api_key": 5}},
            {"server": "nope", "values": {"api_key": SECRET_VALUE}},
        ]
        for params in bad:
            with pytest.raises(RpcError):
                await tab.request("inputs/set", params)
        with pytest.raises(RpcError):
            await tab.request("inputs/forget", {"ids": ["nope"]})
        assert (await tab.request("servers/list"))["servers"][0]["status"] == "needs-input"
        assert SECRET_VALUE not in "\n".join(tab.received)
