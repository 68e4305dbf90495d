"""The input-request broker: shown once, answered once, validated, released, bound to its app."""

from __future__ import annotations

from typing import Any

import anyio
import pytest

from webhost.elicitation.broker import InputBroker, current_origin
from webhost.errors import InvalidParams

pytestmark = pytest.mark.anyio


def accept_only_yes(answer: dict[str, Any]) -> tuple[dict[str, Any] | None, list[dict[str, str]]]:
    if answer.get("action") == "accept" and answer.get("content") != {"ok": True}:
        return None, [{"field": "ok", "message": "must be true"}]
    return {k: v for k, v in answer.items() if k in ("action", "content")}, []


class Recorder:
    def __init__(self) -> None:
        self.events: list[tuple[str, dict[str, Any]]] = []

    def __call__(self, method: str, params: dict[str, Any]) -> None:
        self.events.append((method, dict(params)))

    def requests(self) -> list[dict[str, Any]]:
        return [p for m, p in self.events if m == "elicitation/request"]


async def ask_in_background(
    broker: InputBroker, view: dict[str, Any], box: list[dict[str, Any]], tg: anyio.abc.TaskGroup
) -> None:
    async def run() -> None:
        box.append(await broker.ask("srv", view, accept_only_yes))

    tg.start_soon(run)
    await anyio.wait_all_tasks_blocked()  # the asking task has published its request and waits


async def test_an_answer_is_validated_delivered_once_and_the_view_resolved() -> None:
    events = Recorder()
    broker = InputBroker(events, human_timeout=5)
    box: list[dict[str, Any]] = []
    async with anyio.create_task_group() as tg:
        await ask_in_background(broker, {"mode": "form"}, box, tg)
        request = events.requests()[0]
        with pytest.raises(InvalidParams) as invalid:
            broker.respond(request["id"], {"action": "accept", "content": {"ok": False}})
        assert invalid.value.data == {"id": request["id"], "errors": [{"field": "ok", "message": "must be true"}]}
        broker.respond(request["id"], {"action": "accept", "content": {"ok": True}})
        with pytest.raises(InvalidParams, match="already answered"):
            broker.respond(request["id"], {"action": "decline"})
    assert box == [{"action": "accept", "content": {"ok": True}}]
    assert ("elicitation/resolved", {"id": request["id"], "outcome": "accept"}) in events.events


async def test_a_person_who_never_answers_gets_cancel_after_the_human_timeout() -> None:
    events = Recorder()
    broker = InputBroker(events, human_timeout=0.05)
    assert await broker.ask("srv", {"mode": "form"}, accept_only_yes) == {"action": "cancel"}
    assert events.events[-1][1]["outcome"] == "timeout"


async def test_release_cancels_only_the_matching_requests() -> None:
    events = Recorder()
    broker = InputBroker(events, human_timeout=5)
    results: list[dict[str, Any]] = []
    async with anyio.create_task_group() as tg:
        for call_id in ("a", "b"):
            token = current_origin.set({"callId": call_id})
            await ask_in_background(broker, {"mode": "form"}, results, tg)
            current_origin.reset(token)
        assert broker.release(lambda p: (p.origin or {}).get("callId") == "a") == 1
        await anyio.wait_all_tasks_blocked()  # the released task has its answer
        assert results == [{"action": "cancel"}]
        remaining = [r for r in events.requests() if r["origin"] == {"callId": "b"}][0]
        broker.respond(remaining["id"], {"action": "decline"})
    assert results[-1] == {"action": "decline"}


async def test_an_app_bound_request_accepts_only_its_frame_and_falls_back_on_a_bad_answer() -> None:
    events = Recorder()
    closed: list[str] = []
    broker = InputBroker(events, human_timeout=5, leave_app=lambda frame, reason: closed.append(frame))
    box: list[dict[str, Any]] = []
    async with anyio.create_task_group() as tg:
        await ask_in_background(broker, {"mode": "app", "app": {"frameId": "f-1"}}, box, tg)
        request_id = events.requests()[0]["id"]
        with pytest.raises(InvalidParams, match="another app instance"):
            broker.respond(request_id, {"action": "accept", "content": {"ok": True}}, frame_id="f-2")
        with pytest.raises(InvalidParams, match="another app instance"):
            broker.respond(request_id, {"action": "accept", "content": {"ok": True}})
        with pytest.raises(InvalidParams, match="does not match"):
            broker.respond(request_id, {"action": "accept", "content": {"ok": "yes"}}, frame_id="f-1")
        assert closed == ["f-1"]
        fallback = events.requests()[-1]
        assert fallback["mode"] == "form" and fallback["app"] is None and "did not match" in fallback["fallbackReason"]
        with pytest.raises(InvalidParams, match="not shown in an app"):
            broker.respond(request_id, {"action": "decline"}, frame_id="f-1")
        broker.respond(request_id, {"action": "accept", "content": {"ok": True}})
    assert box == [{"action": "accept", "content": {"ok": True}}]
