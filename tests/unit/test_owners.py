"""The owners of a session's state, table-tested: calls, the catalogue, the pending-request registry."""

from __future__ import annotations

from typing import Any, cast

import anyio
import pytest

from webhost.calls import CallRegistry, current_origin
from webhost.catalogue import MAX_PAGES, Catalogue
from webhost.errors import Cancelled, InvalidParams, UpstreamError
from webhost.pending import Pending, PendingRegistry
from webhost.upstream.connection import Connection, Page

pytestmark = pytest.mark.anyio


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


# -- calls ------------------------------------------------------------------------------------------


async def test_a_cancelled_call_raises_cancelled_with_its_id_and_ends_once() -> None:
    ended: list[str] = []
    calls = CallRegistry(on_end=ended.append)
    started = anyio.Event()

    async def hang() -> str:
        started.set()
        await anyio.sleep_forever()
        return "never"

    async def run() -> None:
        with pytest.raises(Cancelled) as cancelled:
            await calls.run("c-1", {"method": "tools/call", "name": "hang", "server": "s"}, hang)
        assert cancelled.value.data == {"callId": "c-1"}

    async with anyio.create_task_group() as tg:
        tg.start_soon(run)
        await started.wait()
        with pytest.raises(InvalidParams, match="already running"):
            await calls.run("c-1", {}, hang)
        assert calls.tools_in_flight("s") == {"hang"}
        assert calls.cancel("c-1") is True
    assert ended == ["c-1"]
    assert calls.cancel("c-1") is False and calls.tools_in_flight("s") == set()


async def test_a_call_sees_its_own_origin_and_others_are_attributed_by_elimination() -> None:
    calls = CallRegistry(on_end=lambda _: None)
    seen: dict[str, Any] = {}
    both = anyio.Event()
    release = anyio.Event()

    async def action(key: str) -> None:
        seen[key] = calls.origin_for("s")
        if len(seen) == 2:
            both.set()
        await release.wait()

    cancelled: list[str] = []

    async def run(call_id: str, origin: dict[str, Any], key: str) -> None:
        try:
            await calls.run(call_id, origin, lambda: action(key))
        except Cancelled as exc:
            cancelled.append(str((exc.data or {})["callId"]))

    assert calls.origin_for("s") is None
    async with anyio.create_task_group() as tg:
        tg.start_soon(run, "c-1", {"method": "tools/call", "name": "a", "server": "s"}, "a")
        tg.start_soon(run, "c-2", {"method": "prompts/get", "name": "b", "server": "t"}, "b")
        await both.wait()
        assert current_origin.get() is None  # outside any call
        assert calls.origin_for("s") == {"method": "tools/call", "name": "a", "server": "s", "callId": "c-1"}
        assert calls.origin_for("nowhere") is None
        assert calls.tools_in_flight("t") == set()  # a prompt is not a tool
        calls.cancel_all()
    assert seen["a"]["callId"] == "c-1" and seen["b"]["callId"] == "c-2"
    assert sorted(cancelled) == ["c-1", "c-2"]


async def test_two_calls_on_one_server_leave_a_legacy_request_unattributed() -> None:
    calls = CallRegistry(on_end=lambda _: None)
    running = anyio.Event()
    count = 0

    async def action() -> None:
        nonlocal count
        count += 1
        if count == 2:
            running.set()
        await anyio.sleep_forever()

    async with anyio.create_task_group() as tg:
        for call_id in ("c-1", "c-2"):
            tg.start_soon(calls.run, call_id, {"method": "tools/call", "name": call_id, "server": "s"}, action)
        await running.wait()
        assert calls.origin_for("s") is None
        assert calls.tools_in_flight("s") == {"c-1", "c-2"}
        tg.cancel_scope.cancel()


def test_a_url_step_is_taken_once_and_only_while_it_is_waited_on() -> None:
    calls = CallRegistry(on_end=lambda _: None)
    with calls.url_step("s", "e-1", "in-1"):
        assert calls.take_url_step("s", "e-2") is None
        assert calls.take_url_step("t", "e-1") is None
        assert calls.take_url_step("s", "e-1") == "in-1"
        assert calls.take_url_step("s", "e-1") is None
    with calls.url_step("s", "e-1", "in-2"):
        pass
    assert calls.take_url_step("s", "e-1") is None


def test_a_url_step_completed_before_the_consent_is_marked_and_not_taken() -> None:
    calls = CallRegistry(on_end=lambda _: None)
    with calls.url_step("s", "e-1") as step:
        assert calls.take_url_step("s", "e-1") is None  # no card waits for it yet
        assert calls.complete_url_step_early("t", "e-1") is False
        assert calls.complete_url_step_early("s", "e-1") is True and step.completed
        step.waiting = "in-1"
        assert calls.complete_url_step_early("s", "e-1") is False  # a card waits: it is that card's completion
        assert calls.take_url_step("s", "e-1") == "in-1"
    assert calls.complete_url_step_early("s", "e-1") is False


# -- the catalogue ------------------------------------------------------------------------------------


class FakeConnection:
    """A connection whose client serves lists in pages of two; counts the requests."""

    def __init__(self, name: str = "s", *, tools: int = 5, endless: bool = False) -> None:
        self.name = name
        self.tools = [{"name": f"t{i}"} for i in range(tools)]
        self.resources = [{"uri": "a://1"}]
        self.requests: list[tuple[str, str | None]] = []
        self.endless = endless
        self.broken = False
        self.client = self  # a connection's requests are on its `client`; the fake answers them itself

    def _page(self, kind: str, items: list[dict[str, Any]], cursor: str | None) -> Page:
        self.requests.append((kind, cursor))
        if self.endless:
            return Page([{"name": f"p{len(self.requests)}"}], "more")
        start = int(cursor or 0)
        following = start + 2
        return Page(items[start:following], str(following) if following < len(items) else None)

    async def list_tools(self, cursor: str | None = None) -> Page:
        return self._page("tools", self.tools, cursor)

    async def list_resources(self, cursor: str | None = None, *, timeout: float | None = None) -> Page:
        if self.broken:
            raise UpstreamError("gone")
        return self._page("resources", self.resources, cursor)

    async def list_resource_templates(self, cursor: str | None = None) -> Page:
        return self._page("resourceTemplates", [{"uriTemplate": "a://{x}"}], cursor)

    async def list_prompts(self, cursor: str | None = None) -> Page:
        return self._page("prompts", [], cursor)


def conn(fake: FakeConnection) -> Connection:
    return cast(Connection, fake)


async def test_a_listing_follows_every_page_and_is_bounded() -> None:
    fake = FakeConnection(tools=5)
    tools = await Catalogue().listing(conn(fake), "tools")
    assert [t["name"] for t in tools] == ["t0", "t1", "t2", "t3", "t4"]
    assert fake.requests == [("tools", None), ("tools", "2"), ("tools", "4")]
    endless = FakeConnection(endless=True)
    assert len(await Catalogue().listing(conn(endless), "tools")) == MAX_PAGES


async def test_the_cache_answers_until_the_server_says_its_list_changed() -> None:
    fake = FakeConnection(tools=1)
    catalogue = Catalogue()
    for kind in ("tools", "resources", "resourceTemplates", "prompts"):
        await catalogue.listing(conn(fake), kind)
    fake.requests.clear()
    assert await catalogue.tool(conn(fake), "t0") == {"name": "t0"}
    assert fake.requests == []  # from the cache
    fake.tools.append({"name": "new"})
    assert await catalogue.tool(conn(fake), "new") == {"name": "new"}  # unknown: listed again
    assert await catalogue.tool(conn(fake), "missing") is None
    fake.requests.clear()
    catalogue.changed("s", "resources")  # resources and templates, not tools
    catalogue.changed("s", "no-such-list")
    await catalogue.listing(conn(fake), "tools", refresh=False)
    await catalogue.listing(conn(fake), "resources", refresh=False)
    await catalogue.listing(conn(fake), "resourceTemplates", refresh=False)
    await catalogue.listing(conn(fake), "prompts", refresh=False)
    assert [kind for kind, _ in fake.requests] == ["resources", "resourceTemplates"]
    fake.requests.clear()
    catalogue.forget("s")
    await catalogue.listing(conn(fake), "prompts", refresh=False)
    assert fake.requests == [("prompts", None)]


async def test_a_resource_entry_is_best_effort() -> None:
    fake = FakeConnection()
    catalogue = Catalogue()
    assert await catalogue.resource_entry(conn(fake), "a://1") == {"uri": "a://1"}  # listed on demand
    fake.requests.clear()
    assert await catalogue.resource_entry(conn(fake), "a://1") == {"uri": "a://1"}  # now cached
    assert fake.requests == []
    assert await catalogue.resource_entry(conn(fake), "a://2") is None
    fake.broken = True
    assert await catalogue.resource_entry(conn(fake), "a://3") is None  # an error is no entry, never a failure
    assert await catalogue.resource_entry(conn(fake), "a://1") == {"uri": "a://1"}


# -- the pending-request registry -----------------------------------------------------------------


async def test_a_pending_request_is_published_decided_once_and_its_end_always_published() -> None:
    published: list[tuple[str, dict[str, Any]]] = []
    registry: PendingRegistry[Pending] = PendingRegistry(
        lambda m, p: published.append((m, p)), notification="thing", timeout=30
    )
    pending = Pending(PendingRegistry.new_id("x-"), "s", {"id": "view"})
    async with anyio.create_task_group() as tg:
        tg.start_soon(registry.wait, pending)
        await anyio.wait_all_tasks_blocked()
        assert registry.get(pending.id) is pending and registry.views() == [{"id": "view"}]
        assert list(registry) == [pending]
        registry.publish(pending)
        pending.finish("accept")
        pending.finish("decline")  # decided once
    assert pending.outcome == "accept" and registry.get(pending.id) is None
    assert published == [
        ("thing/request", {"id": "view"}),
        ("thing/request", {"id": "view"}),
        ("thing/resolved", {"id": pending.id, "outcome": "accept"}),
    ]
    registry.publish(pending)  # no longer open: nothing sent
    assert len(published) == 3


async def test_a_pending_request_times_out_and_release_picks_by_predicate() -> None:
    published: list[tuple[str, dict[str, Any]]] = []
    registry: PendingRegistry[Pending] = PendingRegistry(
        lambda m, p: published.append((m, p)), notification="thing", timeout=0.05
    )
    timed = Pending("p-1", "s", {})
    await registry.wait(timed)
    assert timed.outcome == "timeout" and published[-1] == ("thing/resolved", {"id": "p-1", "outcome": "timeout"})

    registry.timeout = 30
    mine, other = Pending("p-2", "a", {}), Pending("p-3", "b", {})
    async with anyio.create_task_group() as tg:
        tg.start_soon(registry.wait, mine)
        tg.start_soon(registry.wait, other)
        await anyio.wait_all_tasks_blocked()
        assert registry.release(lambda p: p.server == "a", outcome="gone") == 1
        await anyio.wait_all_tasks_blocked()
        assert registry.get("p-3") is other
        assert registry.release() == 1
    assert (mine.outcome, other.outcome) == ("gone", "released")
    assert registry.release() == 0
