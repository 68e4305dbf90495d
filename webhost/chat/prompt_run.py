"""`/` in the composer (docs/chat.md "Resources and prompts in the composer"): an MCP prompt run into the
conversation.

The prompt is got through the person's own connection with the arguments they gave; its messages become the
conversation's next messages, in order, as the person's and the model's (marked `fromPrompt`), and when the last
is the person's the model answers it, as after a typed message. Text is given as text, an embedded resource's
text as text with its URI, anything else (an image, audio, a link) as one line saying what it was. A prompt the
server refuses (arguments it does not take, a name it does not know) is one line, and nothing is added.
"""

from __future__ import annotations

from typing import Any, Protocol

from webhost.chat.tool_choice import ToolChoice
from webhost.chat.transcript import Message, Part, new_id
from webhost.errors import InvalidParams, WebhostError
from webhost.upstream.connection import Connection

MAX_MESSAGES = 50
MAX_TEXT = 100_000  # characters of one message (as for a typed one: runner.py MAX_TEXT)


class PromptRefused(InvalidParams):
    """A prompt that could not be run: its message is one line for the composer."""


class Poster(Protocol):
    async def post(
        self, conversation_id: str | None, messages: list[Message], model_id: str | None, *, tools: ToolChoice | None
    ) -> dict[str, Any]: ...


def _text(block: object) -> str:
    if not isinstance(block, dict):
        return ""
    kind = block.get("type")
    if kind == "text":
        return str(block.get("text") or "")
    if kind == "resource" and isinstance(block.get("resource"), dict):
        resource = block["resource"]
        if isinstance(resource.get("text"), str):
            return f"[resource {resource.get('uri')}]\n{resource['text']}"
        return f"[a binary resource {resource.get('uri')} ({resource.get('mimeType') or 'unknown type'})]"
    if kind == "resource_link":
        return f"[a link to the resource {block.get('uri')}]"
    return f"[{kind or 'unknown'} content of the prompt, not given to the model]"


def prompt_messages(server: str, name: str, result: dict[str, Any]) -> list[Message]:
    """The conversation's messages for a `prompts/get` result (its empty messages left out)."""
    origin = {"server": server, "name": name}
    out: list[Message] = []
    raw = result.get("messages")
    for item in raw[:MAX_MESSAGES] if isinstance(raw, list) else []:
        if not isinstance(item, dict):
            continue
        content = item.get("content")
        blocks = content if isinstance(content, list) else [content]
        text = "\n\n".join(t for t in (_text(b) for b in blocks) if t)[:MAX_TEXT]
        if not text.strip():
            continue
        if item.get("role") == "assistant":
            out.append(Message(id=new_id("m-"), role="assistant", parts=[Part(text=text)], from_prompt=origin))
        else:
            out.append(Message(id=new_id("m-"), role="user", text=text, from_prompt=origin))
    return out


async def run_prompt(
    chat: Poster,
    connection: Connection,
    name: str,
    arguments: dict[str, str],
    *,
    conversation_id: str | None,
    model_id: str | None,
    tools: ToolChoice | None,
) -> dict[str, Any]:
    """Get the prompt and post its messages into the conversation (a new one without an id)."""
    try:
        result = await connection.client.get_prompt(name, arguments)
    except WebhostError as exc:
        raise PromptRefused(f"The prompt {name} of {connection.name} failed: {exc.message}") from None
    messages = prompt_messages(connection.name, name, result)
    if not messages:
        raise PromptRefused(f"The prompt {name} of {connection.name} gave no messages")
    return await chat.post(conversation_id, messages, model_id, tools=tools)
