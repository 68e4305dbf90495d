"""The person's daily token budget, held step by step: before each request to the model a step reserves what it
may cost (`estimate` of its input plus `maxTokens`), after it the step is settled to what the provider reported
(webhost/storage/budgets.py says why that holds across turns, tabs and replicas).

Which budget is the person's is `webhost.access.budgets` (config/access.py) over `chat.dailyTokenBudget`.
A step is refused only before its request; what the model answered is never taken back as an error.
"""

from __future__ import annotations

import time
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass
from typing import Any

import anyio
import orjson

from webhost.chat.wire_images import masked_and_counted
from webhost.config import WebhostOptions
from webhost.errors import PolicyRefused
from webhost.people import Person
from webhost.storage.budgets import BudgetStore, Hold, Refused, Usage
from webhost.storage.db import Storage

CHARS_PER_TOKEN = 4  # a rough, generous count of a request's input tokens from its JSON (no tokenizer per model)
# What an image is held at: providers bill an image by its pixels, not its base64 (Anthropic scales down an image
# of more than about 1,600 tokens; OpenAI's high detail costs at most about 1,100), so a 3 MB photo is not the
# million tokens of its base64 that no daily budget could hold.
IMAGE_TOKENS = 1_600


class BudgetRefused(PolicyRefused):
    """The person's budget for the day is used up; `line` says so to them."""

    def __init__(self, line: str) -> None:
        super().__init__(line)
        self.line = line


@dataclass
class StepUsage:
    """What one request reported (the caller fills it in when the provider says)."""

    input: int = 0
    output: int = 0


def estimate(body: dict[str, Any]) -> int:
    """The input tokens of a request, estimated from the size of its wire body, each image at `IMAGE_TOKENS`."""
    masked, images = masked_and_counted(body)
    return len(orjson.dumps(masked)) // CHARS_PER_TOKEN + 1 + IMAGE_TOKENS * images


def refusal_line(budget: int) -> str:
    return f"Your daily token budget ({budget} tokens) is used up; it starts again at 00:00 UTC."


def today() -> str:
    return time.strftime("%Y-%m-%d", time.gmtime())


class PersonBudget:
    def __init__(self, options: WebhostOptions, person: Person, storage: Storage, replica_id: str, lease: float):
        self.options = options
        self.person = person
        self.store = BudgetStore(storage)
        self.replica_id = replica_id
        self.lease = lease

    @property
    def daily_tokens(self) -> int | None:
        person = self.person
        default = self.options.chat.daily_token_budget
        return self.options.access.budgets.daily_tokens(person.id, person.email, person.groups, default)

    async def reserve(self, tokens: int) -> Hold:
        """Hold `tokens` of today's budget for one step, or raise `BudgetRefused` (before the request)."""
        budget, day = self.daily_tokens, today()
        if budget is None:
            return Hold(None, self.person.id, day, tokens)
        held = await self.store.reserve(
            self.person.id, day, tokens, budget, replica_id=self.replica_id, now=time.time(), lease=self.lease
        )
        if isinstance(held, Refused):
            raise BudgetRefused(refusal_line(budget))
        return held

    async def settle(self, hold: Hold, model_id: str, conversation_id: str, tokens_in: int, tokens_out: int) -> None:
        await self.store.settle(hold, Usage(model_id, conversation_id, tokens_in, tokens_out))

    @asynccontextmanager
    async def step(self, tokens: int, model_id: str, conversation_id: str) -> AsyncIterator[StepUsage]:
        """Reserve `tokens` for one request, and settle to the usage it reported however the request ended."""
        hold, used = await self.reserve(tokens), StepUsage()
        try:
            yield used
        finally:
            with anyio.CancelScope(shield=True):
                await self.settle(hold, model_id, conversation_id, used.input, used.output)
