"""How many tokens a request takes, estimated without a network call and without a tokenizer's files
(docs/chat.md "A context that fits the model").

Every model has its own tokenizer, and the exact ones need files webhost would have to download (tiktoken
fetches its encodings on first use), so webhost estimates: one token per 2.5 ASCII characters and two per
other character, plus a few tokens of framing per message, tool call and tool, and a flat 1,000 per image.
Measured against a real tokenizer (tests/fast/test_chat_token_estimate.py: a small model's own count), it is
1.0 to 2 times the real count: it errs high, so a request it lets through fits. (GPT-style tokenizers with
larger vocabularies count fewer tokens still: the estimate stays on the safe side for them.)
"""

from __future__ import annotations

import json
import math

from webhost.chat.providers.messages import (
    AssistantMessage,
    Block,
    ImageBlock,
    Message,
    ToolResult,
    ToolSpec,
    UserMessage,
)

ASCII_CHARS_PER_TOKEN = 2.5  # English prose runs about 4 a token, code and JSON about 2.6 (a small vocabulary)
OTHER_CHAR_TOKENS = 2  # Cyrillic, CJK, emoji: 1 to 1.5 tokens each in a small vocabulary
MESSAGE_TOKENS = 4  # the role and delimiters around each message
TOOL_TOKENS = 8  # a tool's or a call's framing (names, type, braces)
IMAGE_TOKENS = 1000


def text_tokens(text: str) -> int:
    ascii_chars = len(text.encode("ascii", "ignore"))
    return math.ceil(ascii_chars / ASCII_CHARS_PER_TOKEN) + OTHER_CHAR_TOKENS * (len(text) - ascii_chars)


def _blocks(blocks: tuple[Block, ...]) -> int:
    return sum(IMAGE_TOKENS if isinstance(b, ImageBlock) else text_tokens(b.text) for b in blocks if b is not None)


def message_tokens(message: Message) -> int:
    if isinstance(message, UserMessage):
        return MESSAGE_TOKENS + _blocks(message.content)
    if isinstance(message, AssistantMessage):
        calls = sum(TOOL_TOKENS + text_tokens(c.name) + text_tokens(c.arguments) for c in message.tool_calls)
        return MESSAGE_TOKENS + text_tokens(message.text) + calls
    if isinstance(message, ToolResult):
        return MESSAGE_TOKENS + text_tokens(message.tool_call_id) + _blocks(message.content)
    return MESSAGE_TOKENS  # pragma: no cover - the union is closed


def tools_tokens(tools: tuple[ToolSpec, ...]) -> int:
    return sum(
        TOOL_TOKENS + text_tokens(t.name) + text_tokens(t.description) + text_tokens(json.dumps(t.input_schema))
        for t in tools
    )


def request_tokens(system: str, messages: tuple[Message, ...], tools: tuple[ToolSpec, ...]) -> int:
    """The estimated input tokens of a request of these parts."""
    return MESSAGE_TOKENS + text_tokens(system) + sum(message_tokens(m) for m in messages) + tools_tokens(tools)
