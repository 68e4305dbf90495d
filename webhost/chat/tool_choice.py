"""What the model may use in one conversation (contract §8.1 `[data-testid="chat-tools"]`): the servers the
person checked, minus the tools they unchecked. Kept in the conversation's sealed settings (`toolChoice`);
a conversation without one offers `webhost.chat.defaultServers` (all connected servers when that is unset).

The choice only narrows what toolset.py offers (the policy's denials and app-only tools stay out), and a call
of a tool that was not offered is refused by the turn like any unknown name: the backend holds the line, not
the page.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from webhost.chat.naming import ToolRef
from webhost.chat.toolset import ToolSet
from webhost.errors import InvalidParams

SETTINGS_KEY = "toolChoice"
MAX_NAMES = 2000
MAX_NAME = 300


def _key(server: str, tool: str) -> str:
    return f"{server}\n{tool}"


@dataclass(frozen=True)
class ToolChoice:
    servers: frozenset[str] | None  # None: every connected server
    tools_off: frozenset[str]  # "server\ntool" of the checked servers' tools the person unchecked

    def allows(self, ref: ToolRef) -> bool:
        in_server = self.servers is None or ref.server in self.servers
        return in_server and _key(ref.server, ref.tool) not in self.tools_off

    def to_json(self) -> dict[str, Any]:
        return {
            "servers": None if self.servers is None else sorted(self.servers),
            "toolsOff": [{"server": k.split("\n", 1)[0], "tool": k.split("\n", 1)[1]} for k in sorted(self.tools_off)],
        }

    @classmethod
    def default(cls, default_servers: Iterable[str] | None) -> ToolChoice:
        return cls(None if default_servers is None else frozenset(default_servers), frozenset())

    @classmethod
    def of_settings(cls, settings: dict[str, Any], default_servers: Iterable[str] | None) -> ToolChoice:
        """The stored choice (written by `parse`, so trusted), else the configured default."""
        stored = settings.get(SETTINGS_KEY)
        if not isinstance(stored, dict):
            return cls.default(default_servers)
        try:
            return cls.parse(stored)
        except InvalidParams:
            return cls.default(default_servers)

    @classmethod
    def parse(cls, value: object) -> ToolChoice:
        """A choice as the page sends it: `{"servers": [NAME, ...] | null, "toolsOff": [{"server", "tool"}]}`."""
        if not isinstance(value, dict):
            raise InvalidParams("params.tools must be an object")
        servers = value.get("servers")
        if servers is not None and not (isinstance(servers, list) and all(_name(s) for s in servers)):
            raise InvalidParams("params.tools.servers must be a list of server names, or null")
        off = value.get("toolsOff", [])
        if not isinstance(off, list) or len(off) > MAX_NAMES:
            raise InvalidParams("params.tools.toolsOff must be a list of {server, tool}")
        keys: set[str] = set()
        for item in off:
            if not (isinstance(item, dict) and _name(item.get("server")) and _name(item.get("tool"))):
                raise InvalidParams("params.tools.toolsOff must be a list of {server, tool}")
            keys.add(_key(item["server"], item["tool"]))
        return cls(None if servers is None else frozenset(servers), frozenset(keys))


def _name(value: object) -> bool:
    return isinstance(value, str) and 0 < len(value) <= MAX_NAME


def picker(tools: ToolSet, choice: ToolChoice, connected: Iterable[str]) -> dict[str, Any]:
    """For the page: each connected server with the tools the model may be offered, and what is checked."""
    by_server: dict[str, list[dict[str, Any]]] = {name: [] for name in sorted(connected)}
    for offered in tools.all():
        entries = by_server.setdefault(offered.ref.server, [])
        title = offered.tool.get("title") or (offered.tool.get("annotations") or {}).get("title")
        entries.append(
            {
                "name": offered.ref.tool,
                "title": title if isinstance(title, str) else None,
                "checked": _key(offered.ref.server, offered.ref.tool) not in choice.tools_off,
            }
        )
    return {
        "servers": [
            {"name": name, "checked": choice.servers is None or name in choice.servers, "tools": entries}
            for name, entries in by_server.items()
        ],
        "choice": choice.to_json(),
    }
