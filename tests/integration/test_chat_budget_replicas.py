"""Budgets that hold and turns owned in the store, on two `webhost serve` replicas sharing one PostgreSQL
(issue 29, item 4): twenty turns of one person at once, spread over both, end within the budget with no paid
answer shown as an error; a turn streaming on one replica is refused on the other and not declared interrupted
there, until that replica is killed and its lease runs out."""

from __future__ import annotations

import signal
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import anyio
import pytest

from tests.support import budget_race
from tests.support.model_endpoint import ModelEndpointServer, running_model_endpoint
from tests.support.postgres import Postgres
from tests.support.process import RpcError, Webhost, free_port
from tests.support.team import start_replicas
from webhost.people import TOKEN_PERSON_ID

pytestmark = pytest.mark.anyio


@pytest.fixture(scope="module")
def endpoint() -> Iterator[ModelEndpointServer]:
    with running_model_endpoint() as server:
        yield server


@contextmanager
def two_replicas(
    tmp_path: Path, postgres: Postgres, endpoint: ModelEndpointServer, model: str
) -> Iterator[tuple[Webhost, Webhost]]:
    webhost = options(endpoint, model)
    with start_replicas(tmp_path, postgres.new_database(), {}, free_port(), webhost_options=webhost) as started:
        first, second = started[0]
        yield first, second


def options(endpoint: ModelEndpointServer, model: str) -> dict[str, Any]:
    entry = {"id": "m", "api": "openai", "model": model, "baseUrl": endpoint.openai_base_url, "apiKey": "k"}
    return {
        "chat": {"models": [{**entry, "maxTokens": budget_race.MAX_TOKENS}]},
        "access": {"budgets": {"people": {TOKEN_PERSON_ID: {"dailyTokens": budget_race.BUDGET}}}},
    }


async def test_twenty_turns_at_once_on_two_replicas_stay_within_the_budget_and_no_paid_answer_is_an_error(
    tmp_path: Path, postgres: Postgres, endpoint: ModelEndpointServer
) -> None:
    model, gate = "budget-race-two", "budget-race-two-gate"
    budget_race.script(endpoint, model, gate)
    with two_replicas(tmp_path, postgres, endpoint, model) as (first, second):
        async with first.connect() as one, second.connect() as two:
            warm = await one.request("chat/send", {"text": "warm-up"})
            await budget_race.until(lambda: budget_race.finals(one, {warm["conversationId"]}), "the warm-up answer")
            outcome = await budget_race.race(endpoint, model, gate, [one, two], 20)
            usage = await two.request("chat/usage")
    answers = list(outcome["answers"].values())
    paid = [a for a in answers if a["status"] == "done"]
    refused = [a for a in answers if a["status"] == "error"]
    assert len(paid) == len(outcome["requests"]) >= 1  # every request the model answered is a shown answer
    assert all("paid answer" in str(a["parts"]) for a in paid)
    assert len(refused) == 20 - len(paid) and all(a["error"] == budget_race.REFUSAL for a in refused)
    used = sum(row["input"] + row["output"] for row in usage["usage"])
    assert used <= budget_race.BUDGET  # each answer used less than it reserved: the budget is not passed at all


def last_status(opened: dict[str, Any]) -> str:
    status: str = opened["messages"][-1]["status"]
    return status


async def test_a_turn_streaming_on_one_replica_is_refused_on_the_other_and_interrupted_only_after_its_lease(
    tmp_path: Path, postgres: Postgres, endpoint: ModelEndpointServer
) -> None:
    model, gate = "lease-two", "lease-two-gate-never-opened"
    endpoint.script(model, [{"events": [{"text": "half an answer"}, {"gate": gate}, {"text": "never"}]}])
    with two_replicas(tmp_path, postgres, endpoint, model) as (first, second):
        async with first.connect() as one:
            sent = await one.request("chat/send", {"text": "start a long answer"})
            conversation = sent["conversationId"]
            await one.wait_notification(
                "chat/event", lambda p: p.get("type") == "text" and p.get("conversationId") == conversation
            )
            async with second.connect() as two:
                opened = await two.request("chat/open", {"conversationId": conversation})
                assert last_status(opened) == "streaming"  # written on the first replica: not interrupted
                with pytest.raises(RpcError, match="on another replica"):
                    await two.request("chat/send", {"conversationId": conversation, "text": "meanwhile"})
                with pytest.raises(RpcError, match="on another replica"):
                    await two.request("chat/retry", {"conversationId": conversation})
                kill(first)

                async def opened_status() -> str:
                    return last_status(await two.request("chat/open", {"conversationId": conversation}))

                statuses: list[str] = []

                async def interrupted() -> bool:
                    statuses.append(await opened_status())
                    return statuses[-1] == "interrupted"

                await until_async(interrupted, timeout=60)
                assert statuses[0] == "streaming"  # the lease had not run out the moment the first replica died
                retried = await two.request("chat/retry", {"conversationId": conversation})
                assert retried["answerId"]
                await two.request("chat/stop", {"conversationId": conversation})


def kill(replica: Webhost) -> None:
    replica.proc.send_signal(signal.SIGKILL)
    replica.proc.wait(timeout=30)


async def until_async(check: Any, *, timeout: float) -> None:
    with anyio.fail_after(timeout):
        while not await check():
            await anyio.sleep(0.2)
