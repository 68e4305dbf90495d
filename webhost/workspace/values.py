"""The values one person gives for their servers' entries: `${input:ID}` (kept sealed) and `${user.*}`.

The `${input:ID}` values are read from the vault when the workspace opens and never sent to a tab by
webhost; every value given in the workspace's life is masked in the audit rows shown of the person, even
once it was forgotten (`redactor`), and each is a secret of the connection it fills (masked in that
server's target, errors, stderr and log lines). A server that answers with one in a result shows it to
its owner: a person's results are theirs. `expand_for` fills them in an entry, with the person's
`${user.id}`, `${user.email}` and `${user.name}`.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping

import anyio

from webhost.config import Config, ServerConfig
from webhost.people import Person
from webhost.redact import Redactor
from webhost.storage.inputs import InputVault

logger = logging.getLogger(__name__)

USER_FIELDS = ("user.id", "user.email", "user.name")


class InputValues:
    """One person's `${input:ID}` values, as the vault has them (in memory only without a vault)."""

    def __init__(self, config: Config, vault: InputVault | None, person: Person) -> None:
        self._config = config
        self._vault = vault
        self._person = person
        self.values: dict[str, str] = {}
        self.loaded = anyio.Event()  # set once the first read is done (or failed): servers wait for it
        self._seen: set[str] = set()  # every value given in this workspace's life (masked even once forgotten)
        self.redactor = Redactor()

    def follow(self, config: Config, person: Person) -> None:
        """A reloaded configuration (its inputs and entries), or the person with their groups as they are now."""
        self._config, self._person = config, person

    async def load(self) -> None:
        """The first read, when the workspace opens."""
        try:
            await self.read()
        finally:
            self.loaded.set()

    async def read(self) -> None:
        """The person's values as the database has them now (another webhost process may have changed them)."""
        if self._vault is None or not self._config.inputs:
            return
        try:
            values = await self._vault.values(self._person.id)
        except Exception as exc:  # the database is unreadable: the servers wait, as if nothing were stored
            logger.warning("cannot read the stored input values of %s: %s", self._person.id, type(exc).__name__)
            return
        self.values = {}
        self._remember(values)

    def _remember(self, values: Mapping[str, str]) -> None:
        self.values.update(values)
        self._seen.update(values.values())
        self.redactor = Redactor(self._seen)

    def missing(self, server: str) -> list[str]:
        return [i for i in self._config.servers[server].input_ids if i not in self.values]

    async def store(self, values: Mapping[str, str]) -> None:
        await self.loaded.wait()
        if self._vault is not None:
            await self._vault.store(self._person.id, dict(values))
        self._remember(values)

    async def forget(self, input_ids: list[str]) -> None:
        await self.loaded.wait()
        if self._vault is not None:
            await self._vault.forget(self._person.id, input_ids)
        for input_id in input_ids:
            self.values.pop(input_id, None)


def expand_for(config: ServerConfig, person: Person, inputs: Mapping[str, str] | None = None) -> ServerConfig:
    """The entry as this person's connection uses it: `${user.id}`, `${user.email}`, `${user.name}` and the
    person's `${input:ID}` values filled in (an input without a value is left as written)."""
    values = person.expansions() | {f"input:{key}": value for key, value in (inputs or {}).items()}

    def fill(text: str) -> str:
        for key in (*USER_FIELDS, *(f"input:{i}" for i in config.input_ids)):
            if key in values:
                text = text.replace("${" + key + "}", values[key])
        return text

    if not any(
        "${user." in text or "${input:" in text
        for text in (config.url or "", *config.env.values(), *config.headers.values())
    ):
        return config
    expanded = config.model_copy(
        update={
            "url": fill(config.url) if config.url else config.url,
            "env": {k: fill(v) for k, v in config.env.items()},
            "headers": {k: fill(v) for k, v in config.headers.items()},
        }
    )
    # The person's values are secrets of this connection too (masked in its errors and its description).
    expanded._expanded = config._expanded | {values[f"input:{i}"] for i in config.input_ids if f"input:{i}" in values}
    return expanded
