"""The parts every workspace shares, built once from the settings and the secret, and their lifespan.

The database is opened in every mode (it keeps each person's input values); around it, the audit log,
the replica's call journal, each person's call history and conversations, each with a sub-key of the deployment
secret where it seals something; the sandbox (one origin per server); the redactor for the audit
export.
"""

from __future__ import annotations

import time
from collections.abc import AsyncIterator, Callable
from contextlib import AbstractAsyncContextManager, asynccontextmanager
from dataclasses import dataclass
from typing import Any

import anyio
import anyio.abc

from webhost.app.state import HostState
from webhost.apps.instances import Sandbox
from webhost.apps.origins import derive_key
from webhost.audit import LEGACY_FILE, AuditLimits, AuditLog
from webhost.auth.signin import IdTokenSeal
from webhost.config import Config
from webhost.journal import CallJournal
from webhost.redact import Redactor
from webhost.roots import HostRoots
from webhost.settings import Settings
from webhost.storage import upload_spool
from webhost.storage.conversations import ChatSeal, ConversationStore
from webhost.storage.db import Storage
from webhost.storage.history import CallHistory
from webhost.storage.inputs import InputVault
from webhost.storage.live_calls import LiveCallStore, RoundSeal
from webhost.storage.oauth_tokens import OAuthVault
from webhost.storage.people import SeenPeople
from webhost.storage.roots import RootsStore
from webhost.storage.spool import Spool
from webhost.storage.urls import database_url
from webhost.upstream.client_factory import TransportFactory
from webhost.upstream.oauth import OAuthDeps, RefreshLocks
from webhost.upstream.sign_ins import ServerSignIns
from webhost.workspace import HostDeps


@dataclass(frozen=True)
class Parts:
    """What every workspace and tab of this host shares."""

    storage: Storage
    audit: AuditLog
    journal: CallJournal
    history: CallHistory
    people: SeenPeople  # everyone the gate lets in, noted and written in the background
    redactor: Redactor  # the configuration's secrets, the deployment secret and the database password (audit export)
    deps: HostDeps  # handed to each person's workspace
    host_origins: tuple[str, ...]  # the page's origins: the settings' and the configured allowedOrigins


def build_parts(
    settings: Settings,
    config: Config,
    secret: bytes,
    transport_factory: TransportFactory,
    clock: Callable[[], float] = time.time,
) -> Parts:
    host_origins = tuple(settings.host_origins() + list(config.options.allowed_origins))
    storage = Storage(database_url(settings.database_url or config.options.database, settings.data_dir))
    audit = AuditLog(
        storage,
        AuditLimits(**config.options.audit.model_dump()),
        legacy_file=settings.data_dir / LEGACY_FILE,
        spool=Spool(settings.data_dir, "audit"),  # an outcome row survives a SIGKILL once noted
    )
    # The calls this process runs, written down so another replica sharing the database can take them over.
    journal = CallJournal(LiveCallStore(storage, RoundSeal(derive_key(secret, "live-calls/v1"))))
    # The audit export never holds the deployment secret or the database password either.
    redactor = config.redactor().with_values(value for value in (settings.secret, storage.password) if value)
    history = CallHistory(storage, keep=Spool(settings.data_dir, "history"))
    deps = HostDeps(
        config=config,
        audit=audit,
        sandbox=sandbox(settings, secret, host_origins),
        transport_factory=transport_factory,
        vault=InputVault(storage, derive_key(secret, "inputs/v1")),
        roots=HostRoots(config.options.roots, RootsStore(storage)),
        journal=journal,
        oauth=OAuthDeps(
            OAuthVault(storage, derive_key(secret, "oauth/v1")),
            ServerSignIns(),
            RefreshLocks(),
            # Enterprise-managed authorization (SEP-990): the person's ID token, from their web session.
            id_tokens=IdTokens(storage, IdTokenSeal(derive_key(secret, "id-token/v1"))).newest,
            auth=config.options.auth if config.options.auth.mode == "oidc" else None,
            clock=clock,  # token expiry on the app's clock (a test moves it instead of sleeping)
        ),
        public_origin=next((o for o in settings.public_origins), None),
        history=history,
        # Each person's conversations with the model (contract §8), sealed under their own sub-key; the files
        # people attach are spooled, sealed, in the data folder while they come.
        conversations=ConversationStore(
            storage, ChatSeal(derive_key(secret, "chat/v1")), temp_dir=settings.data_dir / upload_spool.FOLDER
        ),
    )
    return Parts(storage, audit, journal, history, SeenPeople(storage, clock=clock), redactor, deps, host_origins)


def sandbox(settings: Settings, secret: bytes, host_origins: tuple[str, ...]) -> Sandbox:
    """The sandbox origins the Apps run on, one per server, as browsers reach them."""
    return Sandbox(
        secret=secret,
        domain=settings.sandbox_domain,
        port=settings.sandbox_port_for_browsers(),
        scheme=settings.sandbox_scheme,
        host_origins=host_origins,
    )


def lifespan(
    parts: Parts, host: HostState, also: Callable[[anyio.abc.TaskGroup], None] | None = None
) -> Callable[[Any], AbstractAsyncContextManager[None]]:
    """Starts the parts before the first request and stops them after the last tab, in order (`also`: what
    else runs beside them, such as the session refresh of oidc mode)."""

    @asynccontextmanager
    async def running(app: Any) -> AsyncIterator[None]:
        await parts.storage.start()  # applies the migrations
        if parts.deps.conversations is not None:
            await parts.deps.conversations.seal_clear_titles()  # titles a previous version wrote (migration 0014)
        async with anyio.create_task_group() as task_group:  # where the workspaces' connections live
            host.task_group = task_group
            await parts.journal.start(task_group)
            await parts.audit.start(task_group)  # its writer; imports the audit file of 0.1 once
            parts.history.start(task_group)  # writes each person's calls, off the calls' path
            parts.people.start(task_group)  # writes who came in, off their requests' path
            if also is not None:
                also(task_group)
            try:
                yield
            finally:
                parts.journal.stopping = True  # calls waiting on a person stay recorded for the next replica
                await host.close()
                await parts.journal.close()
                await parts.history.stop()
                await parts.people.stop()
                await parts.audit.close()  # after the tabs: their last rows are stored too
                await parts.storage.close()
                task_group.cancel_scope.cancel()

    return running


@dataclass(frozen=True)
class IdTokens:
    """A person's ID token from their newest live web session, unsealed (enterprise-managed authorization)."""

    storage: Storage
    seal: IdTokenSeal

    async def newest(self, person_id: str) -> str | None:
        found = await self.storage.sealed_id_token_of(person_id, time.time())
        return None if found is None else self.seal.open_hashed(found[0], person_id, found[1])
