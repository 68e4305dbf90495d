"""Fitting a request to the model's context (chat/prompt.py `fit`, issue 28 item 5): the oldest turns are left
out, whole; never the system prompt (with the apps' context) nor the last turn; the system prompt says so."""

from __future__ import annotations

from webhost.chat import tokens
from webhost.chat.prompt import fit, input_budget
from webhost.chat.providers.messages import AssistantMessage, TextBlock, ToolCall, ToolResult, ToolSpec, UserMessage

SYSTEM = 'You help.\n\n<app-context app="Board">the board\'s state</app-context>'
TOOLS = (ToolSpec("board__lookup", "Look things up.", {"type": "object", "properties": {"q": {"type": "string"}}}),)


def user(text: str) -> UserMessage:
    return UserMessage((TextBlock(text),))


def conversation(turns: int, words: int = 200) -> tuple[UserMessage | AssistantMessage | ToolResult, ...]:
    out: list[UserMessage | AssistantMessage | ToolResult] = []
    for n in range(turns):
        out.append(user(f"question {n} " + "word " * words))
        out.append(AssistantMessage("", (ToolCall(f"call_{n}", "board__lookup", '{"q": "x"}'),)))
        out.append(ToolResult(f"call_{n}", (TextBlock("result " * words),)))
        out.append(AssistantMessage(f"answer {n} " + "word " * words))
    return tuple(out)


def test_a_request_that_fits_is_sent_whole() -> None:
    messages = conversation(3)
    assert fit(SYSTEM, messages, TOOLS, context_tokens=100_000, max_tokens=4096) == (SYSTEM, messages)


def test_the_oldest_turns_are_left_out_whole_until_the_rest_fits_and_the_system_prompt_says_so() -> None:
    messages = conversation(20)
    context, answer = 8_000, 1_000
    system, kept = fit(SYSTEM, messages, TOOLS, context_tokens=context, max_tokens=answer)
    assert system.startswith(SYSTEM)  # the system prompt and the apps' context are never cut
    assert tokens.request_tokens(system, kept, TOOLS) <= input_budget(context, answer)
    assert kept[-4:] == messages[-4:]  # the last turn is always sent
    assert isinstance(kept[0], UserMessage)  # whole turns: a tool result never loses its call
    left_out = len(messages) - len(kept)
    assert left_out % 4 == 0 and left_out > 0
    assert f"the {left_out // 4} oldest turns of this conversation ({left_out} messages) were left out" in system
    assert "context of 8000 tokens" in system
    # As many turns as fit are kept: one more would not have.
    assert tokens.request_tokens(system, messages[left_out - 4 :], TOOLS) > input_budget(context, answer)


def test_the_last_turn_is_sent_even_when_it_alone_is_too_long() -> None:
    messages = (*conversation(2), user("huge " * 5_000))
    system, kept = fit(SYSTEM, messages, TOOLS, context_tokens=2_000, max_tokens=500)
    assert kept == (messages[-1],) and "the 2 oldest turns" in system


def test_the_answers_room_never_leaves_less_than_a_quarter_of_the_context() -> None:
    assert input_budget(32_768, 4_096) == 28_672
    assert input_budget(4_096, 4_096) == 1_024
