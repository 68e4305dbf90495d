"""What one person's chat is built from (by their workspace): `ChatDeps`."""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass
from typing import Any

import anyio.abc

from webhost.audit import AuditLog
from webhost.call_record import Recorder
from webhost.calls import CallRegistry
from webhost.catalogue import Catalogue
from webhost.config import WebhostOptions
from webhost.elicitation.requests import InputRequests
from webhost.people import Person
from webhost.redact import Redactor
from webhost.storage.conversations import ConversationStore
from webhost.tasks import TaskBook
from webhost.upstream.connection import Connection


@dataclass
class ChatDeps:
    """What one person's chat is built from (by their workspace)."""

    options: WebhostOptions
    person: Person
    store: ConversationStore | None
    audit: AuditLog
    connections: Mapping[str, Connection]
    catalogue: Catalogue
    notify_all: Callable[[str, dict[str, Any]], None]  # to every tab of the person
    task_group: anyio.abc.TaskGroup
    calls: CallRegistry  # the registry the model's calls run in (input requests are attributed through it)
    requests: InputRequests  # where those calls' input requests are asked (every tab of the person)
    recorder: Recorder  # the person's call history
    input_values: Callable[[], Mapping[str, str]]  # the person's `${input:ID}` values (their own API keys)
    redactor: Callable[[], Redactor]  # what "What the model saw" masks: the configuration's secrets and the keys
    replica_id: str | None = None
    lease: float = 10.0
    tasks: TaskBook | None = None  # the person's tasks: a model's call the server runs as one is followed there
    # A call to a server still connecting waits for it (bounded by `timeouts.connect`; workspace/connecting.py).
    until_connected: Callable[[Connection, str], Awaitable[None]] | None = None
