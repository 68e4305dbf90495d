"""`PersonRoots.load` runs beside the first connections: a page or server asking early is not given an empty list."""

from __future__ import annotations

import anyio
import pytest

from webhost.roots import HostRoots, PersonRoots, RootItem

pytestmark = pytest.mark.anyio


class _HeldStore(HostRoots):
    """The person's stored roots arrive only when the test lets them (a database busy with other work)."""

    def __init__(self, stored: list[RootItem] | Exception) -> None:
        super().__init__([])
        self.stored = stored
        self.release = anyio.Event()

    async def mine(self, person_id: str) -> list[RootItem]:
        await self.release.wait()
        if isinstance(self.stored, Exception):
            raise self.stored
        return self.stored


async def test_an_early_question_waits_for_the_first_read_and_servers_are_told_of_what_it_found() -> None:
    host = _HeldStore([{"uri": "file:///kept"}])
    changes: list[str] = []
    roots = PersonRoots(host, "p", lambda: changes.append("changed"))
    answers: list[list[RootItem]] = []

    async def ask() -> None:
        await roots.loaded()
        answers.append(roots.view(admin=False)["mine"])

    async with anyio.create_task_group() as tg:
        tg.start_soon(roots.load)
        tg.start_soon(ask)
        await anyio.wait_all_tasks_blocked()
        assert answers == []  # not answered with the empty list it has before the read
        host.release.set()
    assert answers == [[{"uri": "file:///kept"}]]
    assert changes == ["changed"]


async def test_a_read_that_fails_still_lets_questions_through_with_the_configured_roots() -> None:
    host = _HeldStore(OSError("database is locked"))
    changes: list[str] = []
    roots = PersonRoots(host, "p", lambda: changes.append("changed"))
    host.release.set()
    await roots.load()
    with anyio.fail_after(5):
        await roots.loaded()
    assert roots.effective() == []
    assert changes == []
