"""The browser-facing JSON-RPC methods: the dispatch table, nothing else."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any

from webhost.session import BrowserSession

from . import (
    admin,
    apps,
    chat,
    chat_composer,
    chat_tools,
    history,
    inputs,
    person_inputs,
    prompts,
    resources,
    roots,
    server_sign_in,
    servers,
    sessions,
    tasks,
    tools,
    workbench,
)

Handler = Callable[[BrowserSession, dict[str, Any]], Awaitable[Any]]

METHODS: dict[str, Handler] = {
    **servers.METHODS,
    **server_sign_in.METHODS,
    **tools.METHODS,
    **resources.METHODS,
    **prompts.METHODS,
    **roots.METHODS,
    **inputs.METHODS,
    **person_inputs.METHODS,
    **apps.METHODS,
    **sessions.METHODS,
    **tasks.METHODS,
    **workbench.METHODS,
    **history.METHODS,
    **chat.METHODS,
    **chat_tools.METHODS,
    **chat_composer.METHODS,
    **admin.METHODS,
}
