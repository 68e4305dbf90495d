"""The `webhost` options the test hosts (process.py `run_webhost`, inprocess.py `in_process_host`) start with."""

from __future__ import annotations

from typing import Any


def scripted_chat(options: dict[str, Any]) -> dict[str, Any]:
    """Titles by the model off unless the test asks for them (`chat.autoTitle`): the scripted model endpoint's
    rules and the requests a test counts are then the conversation's only (no title request after an answer)."""
    chat = options.get("chat")
    if not isinstance(chat, dict) or "autoTitle" in chat:
        return options
    return {**options, "chat": {**chat, "autoTitle": False}}
