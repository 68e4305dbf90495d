"""Keeping each live workspace in step with its person's groups and with the configuration, without a restart.

- A person's groups change at the identity provider: in oidc mode the session refresh finds it
  (webhost/auth/refresh.py; here `run` refreshes the people in use every tick, and `changed` is told), in proxy
  mode the groups header of their next request does (`seen`, the gate's hook for every admitted request). Their
  workspace then drops the servers they lost and opens the ones they gained (`Workspace.follow`), and the audit
  log records `access.changed` (person; groups, servers and models gained and lost).
- `webhost reload` (SIGHUP): `reload` puts the new configuration in place for new workspaces and requests, and
  every live workspace follows it (removed servers stop for everyone; changed ones restart).
"""

from __future__ import annotations

import logging
from dataclasses import replace
from typing import Any

import anyio

from webhost.access_policy import may_use_model, usable_servers
from webhost.app.state import HostState
from webhost.auth.refresh import GroupRefresh
from webhost.config import Config
from webhost.people import TOKEN_PERSON, TOKEN_PERSON_ID, Person
from webhost.storage.session_refresh import SessionRefreshes

logger = logging.getLogger(__name__)

ENDED_AT_PROVIDER = "Your session has ended at the identity provider. Sign in again."


def refresh_tick(seconds: float) -> float:
    """How often the refresh loop looks for sessions due: a quarter of the interval, within [0.05 s, 1 min]."""
    return min(max(seconds / 4, 0.05), 60.0)


class Follow:
    def __init__(
        self,
        host: HostState,
        *,
        record_seen: bool,
        refresher: GroupRefresh | None = None,
        people: SessionRefreshes | None = None,
    ) -> None:
        self.host = host
        self.record_seen = record_seen  # proxy mode: the header is the provider's word, recorded where it changes
        self.refresher = refresher
        self.people = people
        self._lock = anyio.Lock()  # one change at a time: a refresh and a reload never interleave on a workspace
        self._groups: dict[str, tuple[str, ...]] = {}  # proxy mode: the groups each person last came with
        if refresher is not None:
            refresher.on_change = self.changed
            refresher.on_end = self.ended

    # -- the person's groups ------------------------------------------------------------------

    def seen(self, person: Person) -> None:
        """The gate admitted a request of `person`, named as the provider (or its proxy) names them now."""
        if person.id == TOKEN_PERSON_ID or self.host.task_group is None:
            return
        before = self._groups.get(person.id)
        self._groups[person.id] = person.groups
        if self.record_seen and before is not None and set(before) != set(person.groups):
            self.record(replace(person, groups=before), person)
        workspace = self.host.workspaces.get(person.id)
        if workspace is not None and not workspace.closed and workspace.person != person:
            self.host.task_group.start_soon(self.apply, person)

    async def changed(self, before: Person, after: Person) -> None:
        """A session refresh found the person changed at the provider (this replica refreshed it). The request that
        refreshed it (the gate's lookup) does not wait for their connections to close: that runs beside it."""
        self.record(before, after)
        if self.host.task_group is not None:
            self.host.task_group.start_soon(self.apply, after)

    async def ended(self, person: Person) -> None:
        """The provider refused to refresh the person's session: their sessions ended, so do their tabs."""
        for tab in self.host.directory.visible_to(TOKEN_PERSON):
            if tab.person.id == person.id:
                tab.end(ENDED_AT_PROVIDER)

    async def apply(self, person: Person) -> None:
        """The person's workspace here (if open) follows their groups as they are now."""
        async with self._lock:
            workspace = self.host.workspaces.get(person.id)
            if workspace is not None and not workspace.closed and workspace.person != person:
                await workspace.follow(person, self.host.deps)

    def record(self, before: Person, after: Person) -> None:
        """`access.changed`: what the person gained and lost (groups, and the servers and models they give)."""
        if set(before.groups) == set(after.groups) and before.role == after.role:
            return
        then, now = self._reach(before), self._reach(after)
        gained = {k: sorted(set(now[k]) - set(then[k])) for k in now}
        lost = {k: sorted(set(then[k]) - set(now[k])) for k in now}
        if before.role != after.role:
            gained["role"], lost["role"] = [after.role], [before.role]
        summary = "; ".join(
            f"{verb} {kind} {', '.join(names)}"
            for verb, side in (("gained", gained), ("lost", lost))
            for kind, names in side.items()
            if names
        )
        self.host.audit.note(
            "access.changed",
            person=after,
            decision="changed",
            summary=summary,
            detail={"gained": gained, "lost": lost},
        )

    def _reach(self, person: Person) -> dict[str, list[Any]]:
        config = self.host.config
        rules = config.options.access
        return {
            "groups": list(person.groups),
            "servers": usable_servers(rules, person.groups, config.servers),
            "models": [m.id for m in config.options.chat.models if may_use_model(rules, person.groups, m.id)],
        }

    async def run(self, tick: float) -> None:
        """oidc mode: every `tick`, refresh the people with a workspace here whose session is due, and follow what
        another replica's refresh wrote (`people`)."""
        assert self.refresher is not None and self.people is not None
        while True:
            await anyio.sleep(tick)
            for person_id, workspace in list(self.host.workspaces.items()):
                if workspace.closed or person_id == TOKEN_PERSON_ID:
                    continue
                try:
                    if await self.refresher.refresh(workspace.person) is None:
                        continue
                    stored = await self.people.person(person_id)
                except Exception as exc:  # the database or the provider is down: tried again next tick
                    logger.warning("could not refresh the groups of %s: %s", person_id, type(exc).__name__)
                    continue
                if stored is not None:
                    await self.apply(stored)

    # -- the configuration ----------------------------------------------------------------------

    async def reload(self, config: Config) -> None:
        """The new configuration for new workspaces and requests; every live workspace follows it now."""
        async with self._lock:
            self.host.config = config
            self.host.deps = replace(self.host.deps, config=config)
            for workspace in list(self.host.workspaces.values()):
                if not workspace.closed:
                    await workspace.follow(workspace.person, self.host.deps)
