"""The admin view's method (`admin/overview`, contract §9) in-process: the page's WebSocket, the real database
(SQLite in the data folder, seeded as sign-ins and turns leave it), people chosen per tab."""

from __future__ import annotations

import datetime as dt
import json
from pathlib import Path

import pytest

from tests.support.inprocess import SECRET, in_process_host, sdk_server
from tests.support.process import RpcError
from webhost.apps.origins import derive_key
from webhost.people import Person
from webhost.storage.conversations import ChatSeal, ConversationStore
from webhost.storage.db import Storage

pytestmark = pytest.mark.anyio

ADA = Person(id="ada", name="Ada", email="ada@example.com", role="admin", groups=("webhost-admins",))
BOB = Person(id="bob", name="Bob", email="bob@example.com", role="member", groups=("finance", "staff"))
TODAY = dt.datetime.now(dt.UTC).date()
MODELS = {
    "chat": {
        "models": [
            {"id": "big", "api": "openai", "model": "big-1", "price": {"input": 3, "output": 15}},
            {"id": "free", "api": "openai", "model": "local"},
        ]
    }
}


def day(days_ago: int) -> str:
    return (TODAY - dt.timedelta(days=days_ago)).isoformat()


async def seed(tmp_path: Path) -> None:
    """Two people who signed in, and their tokens on three days (one outside the default 30)."""
    storage = Storage(f"sqlite+aiosqlite:///{tmp_path / 'data' / 'webhost.sqlite3'}")
    await storage.start()
    try:
        await storage.save_person(ADA, 1_000.0)
        await storage.save_person(BOB, 2_000.0)
        store = ConversationStore(storage, ChatSeal(derive_key(SECRET, "chat/v1")))
        await store.add_usage("bob", day(0), "big", "c1", 1_000_000, 200_000)
        await store.add_usage("bob", day(0), "big", "c2", 500_000, 0)
        await store.add_usage("bob", day(2), "free", "c1", 40, 60)
        await store.add_usage("ada", day(40), "big", "c3", 7, 7)
        await store.add_usage("carl", day(1), "free", "c4", 1, 1)  # proxy mode: no `people` row
    finally:
        await storage.close()


async def test_an_admin_sees_everyone_their_tokens_and_cost_and_a_member_is_refused(tmp_path: Path) -> None:
    await seed(tmp_path)
    async with in_process_host(tmp_path, {"basic": sdk_server("basic")}, people=True, webhost_options=MODELS) as host:
        async with host.tab(person=ADA) as ada, host.tab(person=BOB) as bob:
            seen = await ada.request("admin/overview")
            with pytest.raises(RpcError) as refused:
                await bob.request("admin/overview")
    assert refused.value.code == -32003  # as other admin-only requests (roots/set shared, audit of others)
    assert seen["since"] == day(29) and seen["until"] == day(0)
    people = {p["id"]: p for p in seen["people"]}
    assert people["bob"]["groups"] == ["finance", "staff"] and people["bob"]["lastSeen"] >= 2_000.0
    assert people["ada"]["role"] == "admin"
    assert people["carl"]["lastSeen"] is None and people["carl"]["groups"] == []
    usage = sorted((u["person"], u["day"], u["model"], u["input"], u["output"], u["cost"]) for u in seen["usage"])
    # Bob's two conversations of today add up; $3 and $15 per million: 1.5M in + 0.2M out = 4.5 + 3.0.
    assert usage == [
        ("bob", day(2), "free", 40, 60, None),
        ("bob", day(0), "big", 1_500_000, 200_000, 7.5),
        ("carl", day(1), "free", 1, 1, None),
    ]
    assert seen["access"] == {
        "servers": {"basic": "everyone"},
        "tools": {},
        "models": {"big": "everyone", "free": "everyone"},
    }
    assert [m["price"] for m in seen["models"]] == [{"input": 3.0, "output": 15.0}, None]
    assert "c1" not in json.dumps(seen)  # no conversation, let alone its text


async def test_the_period_chooses_the_days_and_a_bad_one_is_refused(tmp_path: Path) -> None:
    await seed(tmp_path)
    async with in_process_host(tmp_path, {"basic": sdk_server("basic")}, people=True, webhost_options=MODELS) as host:
        async with host.tab(person=ADA) as ada:
            old = await ada.request("admin/overview", {"since": day(45), "until": day(35)})
            recent = await ada.request("admin/overview", {"since": day(2), "until": day(1)})
            errors = []
            for params in ({"since": "yesterday"}, {"since": day(1), "until": day(2)}, {"since": day(400)}):
                with pytest.raises(RpcError) as error:
                    await ada.request("admin/overview", params)
                errors.append((error.value.code, str(error.value)))
    assert [(u["person"], u["day"], u["cost"]) for u in old["usage"]] == [("ada", day(40), round(7 * 18 / 1e6, 6))]
    assert [(u["person"], u["day"]) for u in recent["usage"]] == [("bob", day(2)), ("carl", day(1))]
    assert [code for code, _ in errors] == [-32602] * 3
    assert "YYYY-MM-DD" in errors[0][1] and "after" in errors[1][1] and "366 days" in errors[2][1]
