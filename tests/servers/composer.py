"""Test MCP server for the chat's composer (`@` resources, `/` prompts; tests/e2e/test_chat_composer_mcp.py).

- resources `notes://handbook` (text) and `notes://vault` (the server refuses to read it: an error);
- template `notes://topics/{topic}`, with completions for `topic`;
- prompt `review(code, language)`: two messages (the person's request, the start of the model's answer, then the
  person's again); `language` has completions, and a language it does not know is refused with an error;
- prompt `standup()`, without arguments: one message of the person.
"""

from __future__ import annotations

import argparse
from typing import Any

from _support import add_common_args, serve
from mcp.server import MCPServer
from mcp.shared.exceptions import MCPError
from mcp.types import Completion, PromptReference, ResourceTemplateReference

HANDBOOK = "The team handbook: deploys happen on Tuesdays, never on Fridays."
LANGUAGES = ["python", "rust", "go"]
TOPICS = ["deploys", "reviews", "oncall"]

mcp = MCPServer("composer", title="webhost composer test server", version="1.0.0")


@mcp.resource("notes://handbook", name="handbook", title="Team handbook", mime_type="text/plain")
def handbook() -> str:
    return HANDBOOK


@mcp.resource("notes://vault", name="vault", title="The vault", mime_type="text/plain")
def vault() -> str:
    raise MCPError(code=-32002, message="the vault is locked for you")


@mcp.resource("notes://topics/{topic}", name="topic", title="A topic", mime_type="text/plain")
def topic(topic: str) -> str:
    return f"Notes on {topic}: write them down."


@mcp.prompt(title="Code review", description="Review a piece of code in a language.")
def review(code: str, language: str) -> list[dict[str, Any]]:
    if language not in LANGUAGES:
        # An MCPError reaches the client as it is (other exceptions become "Error rendering prompt review").
        raise MCPError(code=-32602, message=f"unknown language {language!r}: choose one of {', '.join(LANGUAGES)}")
    return [
        {"role": "user", "content": {"type": "text", "text": f"Review this {language} code:\n{code}"}},
        {"role": "assistant", "content": {"type": "text", "text": "I will look at naming and errors first."}},
        {"role": "user", "content": {"type": "text", "text": "Go on, be brief."}},
    ]


@mcp.prompt(title="Stand-up", description="Write the stand-up note.")
def standup() -> str:
    return "Write my stand-up note for today."


@mcp.completion()
async def complete(ref: PromptReference | ResourceTemplateReference, argument: Any, context: Any) -> Completion:
    choices = LANGUAGES if argument.name == "language" else TOPICS if argument.name == "topic" else []
    values = [c for c in choices if c.startswith(argument.value)]
    return Completion(values=values, total=len(values), has_more=False)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    add_common_args(parser)
    serve(mcp, parser.parse_args())


if __name__ == "__main__":
    main()
