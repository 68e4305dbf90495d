"""The person's chat, built for their workspace: the model's calls run on the person's connections, in the
routes' chat registry (their input requests go to every tab, shown in the conversation), into the person's
history, with the person's values as the keys of models that take the person's own (contract §8)."""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping
from typing import Any

import anyio.abc

from webhost.call_record import Recorder
from webhost.catalogue import Catalogue
from webhost.chat.deps import ChatDeps
from webhost.chat.runner import Chat
from webhost.people import Person
from webhost.redact import Redactor
from webhost.tasks import TaskBook
from webhost.upstream.connection import Connection

from .deps import HostDeps
from .routes import CHAT_TAB, InputRoutes
from .values import InputValues


def person_chat(
    deps: HostDeps,
    person: Person,
    *,
    connections: Mapping[str, Connection],
    catalogue: Catalogue,
    routes: InputRoutes,
    values: InputValues,
    tell_all: Callable[[str, dict[str, Any]], None],
    task_group: anyio.abc.TaskGroup,
    tasks: TaskBook | None = None,
    until_connected: Callable[[Connection, str], Awaitable[None]] | None = None,
) -> Chat:
    keys = [m.key_input for m in deps.config.options.chat.models if m.key_input is not None]

    def secrets() -> Redactor:
        """What "What the model saw" never shows: the configuration's secrets and the person's own API keys
        (their other values are theirs to see, as in their results)."""
        return deps.config.redactor().with_values(values.values[k] for k in keys if k in values.values)

    return Chat(
        ChatDeps(
            options=deps.config.options,
            person=person,
            store=deps.conversations,
            audit=deps.audit,
            connections=connections,
            catalogue=catalogue,
            notify_all=tell_all,
            task_group=task_group,
            calls=routes.chat_calls,
            requests=routes.chat,
            recorder=Recorder(
                history=deps.history,
                person_id=person.id,
                tab=CHAT_TAB,
                on_stored=lambda summary: tell_all("history/added", {"entry": summary}),
            ),
            input_values=lambda: values.values,
            redactor=secrets,
            replica_id=deps.journal.replica_id if deps.journal is not None else None,
            tasks=tasks,
            until_connected=until_connected,
        )
    )
