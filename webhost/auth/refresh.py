"""oidc mode: a person's groups follow the directory. Every `webhost.auth.refreshMinutes` (default 5) the newest
session of a person in use is refreshed at the provider with the refresh token it keeps (sealed,
`storage/session_refresh.py`), and the groups and role the provider names now are written to `people`, which
every request's session lookup reads. What changed is handed on (`on_change`: the audit row `access.changed`,
and the person's workspace drops what they lost: webhost/app/follow.py).

Of several replicas one refreshes a session (a conditional update claims it); the others read the new groups
from `people`. The provider refusing the token (invalid_grant: the person was removed, or their grant revoked)
ends the person's sessions; the provider not answering keeps the groups they had, tried again next time.
A provider that grants no refresh token (webhost asks for `offline_access` only if the scopes name it) leaves
the groups of the sign-in until the session ends (`sessionHours`), as before.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Awaitable, Callable

from webhost.auth.oidc import OidcClient, OidcError, RefreshRefused, person_claims
from webhost.auth.proxy import role_for
from webhost.auth.signin import IdTokenSeal, OidcSettings
from webhost.people import Person
from webhost.storage.session_refresh import SessionRefreshes

logger = logging.getLogger(__name__)

Changed = Callable[[Person, Person], Awaitable[None]]
Ended = Callable[[Person], Awaitable[None]]


class GroupRefresh:
    def __init__(
        self,
        client: OidcClient,
        store: SessionRefreshes,
        seal: IdTokenSeal,
        settings: OidcSettings,
        *,
        seconds: float,
        clock: Callable[[], float] = time.time,
    ) -> None:
        self.client = client
        self.store = store
        self.seal = seal
        self.settings = settings
        self.seconds = seconds
        self.clock = clock
        self.on_change: Changed | None = None  # set by the app (webhost/app/follow.py)
        self.on_end: Ended | None = None

    def due(self, refreshed_at: float | None) -> bool:
        """Whether a session last refreshed then is due again (None: it keeps no refresh token)."""
        return refreshed_at is not None and self.clock() - refreshed_at >= self.seconds

    async def refresh(self, person: Person) -> Person | None:
        """The person as the provider names them now when their newest session was due and this replica took it;
        else `person` as given. None: the provider refused the refresh, and the person's sessions ended."""
        now = self.clock()
        due = await self.store.due(person.id, before=now - self.seconds, now=now)
        if due is None or not await self.store.claim(due, now):
            return person
        before = await self.store.person(person.id) or person  # as every replica knows them until now
        token = self.seal.open_hashed(due.id_hash, person.id, due.sealed_refresh_token)
        if token is None:  # sealed under another secret: the session keeps the groups it has
            return person
        try:
            tokens = await self.client.refresh(token)
        except RefreshRefused as exc:
            logger.info("the identity provider refused to refresh %s's session (%s): it ends", person.id, exc)
            await self.store.end(person.id, now)
            if self.on_end is not None:
                await self.on_end(person)
            return None
        except OidcError as exc:
            logger.warning("could not refresh the groups of %s: %s", person.id, exc.message)
            return person
        found = person_claims(
            tokens.claims,
            user_claim=self.settings.user_claim,
            name_claim=self.settings.name_claim,
            groups_claim=self.settings.groups_claim,
        )
        if found is None or found[0] != person.id:
            logger.warning("the identity provider's refresh for %s named someone else: ignored", person.id)
            return person
        person_id, name, email, groups = found
        role = role_for(person_id, email, groups, self.settings.admins, self.settings.admin_groups)
        now_person = Person(id=person_id, name=name, email=email, role=role, groups=groups)
        rotated = tokens.refresh_token
        sealed = self.seal.seal_hashed(due.id_hash, person.id, rotated) if rotated else None
        await self.store.store(due.id_hash, sealed, now_person, now)
        if now_person != before and self.on_change is not None:
            await self.on_change(before, now_person)
        return now_person
