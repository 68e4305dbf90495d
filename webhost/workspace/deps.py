"""What every workspace of one host shares (built once by the composition root), and what it needs of a tab."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Protocol

from webhost.apps.instances import Sandbox
from webhost.audit import AuditLog
from webhost.calls import CallRegistry
from webhost.config import Config
from webhost.elicitation.requests import InputRequests
from webhost.journal import CallJournal
from webhost.roots import HostRoots
from webhost.storage.conversations import ConversationStore
from webhost.storage.history import CallHistory
from webhost.storage.inputs import InputVault
from webhost.upstream.client_factory import TransportFactory, default_transport
from webhost.upstream.oauth import OAuthDeps


@dataclass(frozen=True)
class HostDeps:
    """What every workspace and tab of one host shares (built once by the composition root)."""

    config: Config
    audit: AuditLog
    sandbox: Sandbox
    transport_factory: TransportFactory = default_transport
    vault: InputVault | None = None  # where each person's `${input:ID}` values are kept (None: in memory only)
    journal: CallJournal | None = None  # the replica's record of its running calls (None: nothing survives it)
    oauth: OAuthDeps | None = None  # sign-in to remote servers (None: remote servers get no OAuth)
    public_origin: str | None = None  # the page's configured public origin (the OAuth callback's), if any
    history: CallHistory | None = None  # each person's calls, in the database (None: not kept)
    conversations: ConversationStore | None = None  # each person's chat (None: the chat is unavailable)
    roots: HostRoots | None = None  # the roots servers are given (None: the configuration's, and in memory)


class Tab(Protocol):
    """What the workspace needs of a tab: to tell it things, and to let it answer its own requests."""

    id: str
    calls: CallRegistry
    requests: InputRequests

    def notify(self, method: str, params: dict[str, Any]) -> None: ...
