"""A conversation's title written by the model after its first answer (docs/chat.md "Titles").

One short request (no tools, a few tokens) with the first message and the answer; its first line, cleaned
as a typed title is (titles.py), replaces the title the conversation got from its first line. Only while
that title is still the one it started with: a rename by the person wins, on any replica (the store's
conditional update). `chat.autoTitle: false` turns it off; a failure leaves the first line's title.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import Protocol

from webhost.chat import sampling
from webhost.chat.budget import PersonBudget, estimate
from webhost.chat.conversation import ActiveConversation
from webhost.chat.deps import ChatDeps
from webhost.chat.endpoints import Providers
from webhost.chat.providers.errors import ProviderError
from webhost.chat.providers.messages import ChatRequest, TextBlock, UserMessage
from webhost.chat.titles import first_line_title
from webhost.config import WebhostOptions
from webhost.config.chat import ChatModel
from webhost.errors import WebhostError
from webhost.storage.conversations import ConversationStore

logger = logging.getLogger(__name__)

TITLE_TOKENS = 64  # room for a few words (and a reasoning model's short preamble)
QUOTED_CHARS = 2000  # of the first message and of the answer, given to the model
SYSTEM = "You write short titles for conversations."
ASK = (
    "Write a title of at most six words for this conversation. Answer with the title only: "
    "no quotes, no punctuation at the end.\n\n<message>\n{question}\n</message>\n\n<answer>\n{answer}\n</answer>"
)


class TitleOwner(Protocol):
    options: WebhostOptions
    providers: Providers

    @property
    def store(self) -> ConversationStore: ...
    @property
    def budget(self) -> PersonBudget: ...

    deps: ChatDeps


def wants_title(active: ActiveConversation, auto_title: bool) -> str | None:
    """The title to replace, when the branch shown is a first message and its finished answer, still titled
    by its first line; else None."""
    shown = active.messages
    if not auto_title or len(shown) != 2 or shown[0].role != "user" or shown[1].status != "done":
        return None
    started = first_line_title(shown[0].text)
    return started if active.title == started and shown[1].full_text().strip() else None


def title_request(model: ChatModel, question: str, answer: str) -> ChatRequest:
    text = ASK.format(question=question[:QUOTED_CHARS], answer=answer[:QUOTED_CHARS])
    return ChatRequest(
        model=model.model,
        system=SYSTEM,
        messages=(UserMessage(content=(TextBlock(text),)),),
        tools=(),
        max_tokens=min(model.max_tokens, TITLE_TOKENS),
    )


def cleaned(text: str) -> str:
    """The model's first line as a title (quotes and a final full stop dropped), or "" for none."""
    title = first_line_title(text.strip().strip("\"'“”«»").strip())
    title = title.strip("\"'“”«»").rstrip(".")
    return "" if title == "New conversation" else title


async def write_title(
    owner: TitleOwner, active: ActiveConversation, model: ChatModel, told: Callable[[], None]
) -> str | None:
    """Ask the model for the title and keep it (None: not asked, failed, or renamed meanwhile). Runs after the
    turn, in the person's task group: nothing of it may end that group (a title is a nicety)."""
    try:
        return await _write_title(owner, active, model, told)
    except Exception:
        logger.exception("chat: writing a conversation's title failed")
        return None


async def _write_title(
    owner: TitleOwner, active: ActiveConversation, model: ChatModel, told: Callable[[], None]
) -> str | None:
    started = wants_title(active, owner.options.chat.auto_title)
    if started is None:
        return None
    question, answer = active.messages[0].text, active.messages[1].full_text()
    request = title_request(model, question, answer)
    try:
        provider = owner.providers.get(model, owner.deps.input_values())
        cost = estimate(provider.wire_body(request)) + request.max_tokens
        async with owner.budget.step(cost, model.id, active.conversation_id) as used:
            text, used.input, used.output = await sampling.answer(provider, request)
    except (ProviderError, WebhostError) as exc:
        logger.info("chat: no title from the model for a conversation: %s", getattr(exc, "message", exc))
        return None
    title = cleaned(text)
    kept = bool(title) and await owner.store.update(
        owner.deps.person.id, active.conversation_id, title=title, title_was=started
    )  # False: renamed (or deleted) meanwhile, and the person's title stays
    if kept:
        active.title = title
    told()  # also when not kept: the person's tabs (and tests) learn that the title is settled
    return title if kept else None
