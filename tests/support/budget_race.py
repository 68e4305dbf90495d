"""The budget race of issue 29: many turns of one person at once, each in its own conversation, against the
scripted model endpoint, whose answers wait at a gate until every turn was either refused (before its request)
or is held at the model. Used on one process (SQLite) and on two replicas (PostgreSQL)."""

from __future__ import annotations

from typing import Any, Protocol

import anyio

from tests.support.model_endpoint import ModelEndpointServer

WARM_UP = {"input": 400, "output": 61}  # 461 tokens: with a budget of 1000, 539 are left for the race
ANSWER = {"input": 60, "output": 40}  # what each raced answer reports: less than its reservation, as real ones do
BUDGET = 1000
MAX_TOKENS = 100
REFUSAL = f"Your daily token budget ({BUDGET} tokens) is used up; it starts again at 00:00 UTC."


class Tab(Protocol):
    notifications: list[dict[str, Any]]

    async def request(self, method: str, params: dict[str, Any] | None = None) -> Any: ...


def script(endpoint: ModelEndpointServer, model: str, gate: str) -> None:
    endpoint.script(
        model,
        [
            {"match": "warm-up", "events": [{"text": "warm"}, {"usage": WARM_UP}]},
            {"events": [{"gate": gate}, {"text": "paid answer"}, {"usage": ANSWER}]},
        ],
    )


def finals(tab: Tab, conversations: set[str]) -> dict[str, dict[str, Any]]:
    """The last assistant message each conversation's events left that is no longer streaming."""
    out: dict[str, dict[str, Any]] = {}
    for note in tab.notifications:
        params = note.get("params") or {}
        message = params.get("message")
        if note.get("method") != "chat/event" or params.get("type") != "message" or not isinstance(message, dict):
            continue
        if params.get("conversationId") in conversations and message["role"] == "assistant":
            if message["status"] != "streaming":
                out[params["conversationId"]] = message
    return out


async def until(check: Any, what: str, timeout: float = 60) -> None:
    """Wait for `check()` to be true, looking again after each short pause (bounded)."""
    with anyio.fail_after(timeout):
        while not check():
            await anyio.sleep(0.05)


async def race(endpoint: ModelEndpointServer, model: str, gate: str, tabs: list[Tab], turns: int) -> dict[str, Any]:
    """`turns` sends at once, spread over `tabs`; returns each conversation's final answer and the requests made."""
    sent: list[tuple[Tab, str]] = []

    async def send(tab: Tab, index: int) -> None:
        answer = await tab.request("chat/send", {"text": f"raced question {index}"})
        sent.append((tab, answer["conversationId"]))

    async with anyio.create_task_group() as tg:
        for index in range(turns):
            tg.start_soon(send, tabs[index % len(tabs)], index)

    def settled() -> dict[str, dict[str, Any]]:
        out: dict[str, dict[str, Any]] = {}
        for tab in tabs:
            out.update(finals(tab, {c for t, c in sent if t is tab}))
        return out

    def raced_requests() -> list[dict[str, Any]]:
        return [r for r in endpoint.requests(model) if "raced question" in str(r["body"])]

    # Every turn is decided: refused before its request, or its request is held at the gate.
    await until(lambda: len(settled()) + len(raced_requests()) >= turns, "every turn decided")
    endpoint.release(gate)
    await until(lambda: len(settled()) == turns, "every turn ended")
    return {"answers": settled(), "requests": raced_requests()}
