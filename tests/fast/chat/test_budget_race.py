"""Budgets that hold on one process (SQLite): twenty turns of one person at once, 539 tokens left, end within
the budget; every answer that reached the model is shown, and only turns refused before their request are
errors, each saying so in one line (issue 29, item 4)."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.support import budget_race
from tests.support.inprocess import in_process_host
from tests.support.model_endpoint import ModelEndpointServer
from webhost.people import TOKEN_PERSON_ID

pytestmark = pytest.mark.anyio


async def test_twenty_turns_at_once_stay_within_the_budget_and_no_paid_answer_is_an_error(
    tmp_path: Path, model_endpoint: ModelEndpointServer
) -> None:
    model, gate = "budget-race-one", "budget-race-one-gate"
    budget_race.script(model_endpoint, model, gate)
    options = {
        "chat": {
            "models": [
                {
                    "id": "m",
                    "api": "openai",
                    "model": model,
                    "baseUrl": model_endpoint.openai_base_url,
                    "apiKey": "k",
                    "maxTokens": budget_race.MAX_TOKENS,
                }
            ],
            "dailyTokenBudget": 10,  # the default, overridden by the person's own entry below
        },
        "access": {"budgets": {"people": {TOKEN_PERSON_ID: {"dailyTokens": budget_race.BUDGET}}}},
    }
    async with in_process_host(tmp_path, {}, webhost_options=options) as host, host.tab() as tab:
        warm = await tab.request("chat/send", {"text": "warm-up"})
        await budget_race.until(lambda: budget_race.finals(tab, {warm["conversationId"]}), "the warm-up answer")
        outcome = await budget_race.race(model_endpoint, model, gate, [tab], 20)
        usage = await tab.request("chat/usage")
    answers = list(outcome["answers"].values())
    paid = [a for a in answers if a["status"] == "done"]
    refused = [a for a in answers if a["status"] == "error"]
    assert len(paid) == len(outcome["requests"]) >= 1  # every request the model answered is a shown answer
    assert all(a["parts"] and "paid answer" in str(a["parts"]) for a in paid)
    assert len(refused) == 20 - len(paid) and all(a["error"] == budget_race.REFUSAL for a in refused)
    used = sum(row["input"] + row["output"] for row in usage["usage"])
    assert used <= budget_race.BUDGET  # each answer used less than it reserved: the budget is not passed at all
