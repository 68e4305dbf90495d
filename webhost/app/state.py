"""The composition root's state: what every workspace shares, each person's workspace, the live tabs."""

from __future__ import annotations

from dataclasses import dataclass, field

import anyio.abc

from webhost.audit import AuditLog
from webhost.config import Config
from webhost.directory import SessionDirectory
from webhost.pending import Publish
from webhost.people import Person
from webhost.redact import Redactor
from webhost.session import BrowserSession
from webhost.settings import Settings
from webhost.workspace import HostDeps, Workspace
from webhost.ws import Tabs


@dataclass
class HostState:
    """What every workspace shares, each person's workspace, the live tabs."""

    settings: Settings
    config: Config
    audit: AuditLog
    deps: HostDeps
    sessions: set[BrowserSession] = field(default_factory=set)
    workspaces: dict[str, Workspace] = field(default_factory=dict)
    directory: SessionDirectory = field(default_factory=SessionDirectory)
    task_group: anyio.abc.TaskGroup | None = None
    tabs: Tabs = field(default_factory=Tabs)

    def new_session(
        self, person: Person, notify: Publish, sign_in: str | None = None, origin: str | None = None
    ) -> BrowserSession:
        """A tab of this person, on their workspace (opened with their first tab, shared by the rest);
        `origin` is the page's origin the tab came in on (the OAuth callback URL is on it)."""
        assert self.task_group is not None, "the lifespan starts before any tab"
        workspace = self.workspaces.get(person.id)
        if workspace is None or workspace.closed:
            workspace = Workspace(self.deps, person, self.task_group, origin=origin)
            self.workspaces[person.id] = workspace
        session = BrowserSession(workspace, notify, self.directory, sign_in=sign_in)
        self.sessions.add(session)
        return session

    def input_redactor(self, people: set[str] | None) -> Redactor:
        """Masks the input values of these people (None: everyone's) whose workspace is open in this process."""
        if people is not None and len(people) == 1:  # every frame of a tab: one lookup
            workspace = self.workspaces.get(next(iter(people)))
            return workspace.input_redactor if workspace is not None else Redactor()
        workspaces = [w for w in self.workspaces.values() if people is None or w.person.id in people]
        return Redactor(value for w in workspaces for value in w.input_redactor.values)

    def end_session(self, session: BrowserSession) -> None:
        self.sessions.discard(session)
        session.workspace.detach(session, on_idle=self._forget_workspace)

    def _forget_workspace(self, workspace: Workspace) -> None:
        if self.workspaces.get(workspace.person.id) is workspace:
            del self.workspaces[workspace.person.id]

    async def close(self) -> None:
        for session in list(self.sessions):
            await session.close()
        for workspace in list(self.workspaces.values()):
            await workspace.close(shutting_down=True)  # webhost stops: a turn being written is interrupted
        self.workspaces.clear()
