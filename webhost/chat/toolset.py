"""The tools a turn offers the model: the person's connected servers' tools whose `visibility` includes
"model", minus those the policy denies, each under its model-facing name (naming.py).

The decision for the model's call of one tool is `webhost.servers.NAME.modelTools.TOOL`, else
`webhost.servers.NAME.modelToolCalls`, else `webhost.chat.toolCalls` (contract §8). A denied tool is
not offered. The listing is the catalogue's (dropped on `list_changed`, connect and disconnect), so the
set is fresh for each request to the model.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from typing import Any

import anyio

from webhost.access_policy import may_use_tool
from webhost.apps.meta import tool_resource_uri, tool_visibility
from webhost.catalogue import Catalogue
from webhost.chat.naming import ToolNames, ToolRef
from webhost.chat.providers.messages import ToolSpec
from webhost.config import WebhostOptions
from webhost.config.chat import Decision
from webhost.errors import WebhostError
from webhost.upstream.connection import Connection

logger = logging.getLogger(__name__)
MAX_DESCRIPTION = 4000


def decision_for(options: WebhostOptions, server: str, tool: str) -> Decision:
    policy = options.servers.get(server)
    if policy is not None:
        if tool in policy.model_tools:
            return policy.model_tools[tool]
        if policy.model_tool_calls is not None:
            return policy.model_tool_calls
    return options.chat.tool_calls


@dataclass(frozen=True)
class OfferedTool:
    ref: ToolRef
    name: str  # as the model sees it
    decision: Decision
    resource_uri: str | None
    spec: ToolSpec
    tool: dict[str, Any]  # the listing entry, as the server sent it


class ToolSet:
    """The offered tools of one request, looked up by the name the model used."""

    def __init__(self, tools: list[OfferedTool]) -> None:
        self._by_name = {t.name: t for t in tools}

    def all(self) -> tuple[OfferedTool, ...]:
        return tuple(self._by_name.values())

    def only(self, keep: Callable[[ToolRef], bool]) -> ToolSet:
        """The tools `keep` lets through (a conversation's choice, tool_choice.py), under the same names."""
        return ToolSet([t for t in self._by_name.values() if keep(t.ref)])

    def specs(self) -> tuple[ToolSpec, ...]:
        return tuple(t.spec for t in self._by_name.values())

    def get(self, name: str) -> OfferedTool | None:
        return self._by_name.get(name)

    def __len__(self) -> int:
        return len(self._by_name)


async def offered_tools(
    connections: Mapping[str, Connection], catalogue: Catalogue, options: WebhostOptions, groups: Iterable[str]
) -> ToolSet:
    listings: dict[str, list[dict[str, Any]]] = {}

    async def list_one(connection: Connection) -> None:
        try:
            listings[connection.name] = await catalogue.listing(connection, "tools", refresh=False)
        except WebhostError as exc:  # that server's tools are left out of this request; the others are given
            logger.info("chat: the tools of %s could not be listed: %s", connection.name, exc.message)

    connected = [c for c in connections.values() if c.status == "connected"]
    for connection in connected:  # cached, as they mostly are: no await between the person's send and the request
        cached = catalogue.cached(connection.name, "tools")
        if cached is not None:
            listings[connection.name] = cached
    missing = [c for c in connected if c.name not in listings]
    if missing:
        async with anyio.create_task_group() as tg:
            for connection in missing:
                tg.start_soon(list_one, connection)
    candidates: list[tuple[ToolRef, dict[str, Any], Decision]] = []
    for server in sorted(listings):
        for tool in listings[server]:
            name = tool.get("name")
            if not isinstance(name, str) or (tool.get("webhost") or {}).get("invalid"):
                continue
            if "model" not in tool_visibility(tool.get("_meta")):
                continue  # app-only: never offered to the model (SEP-1865)
            if not may_use_tool(options.access, groups, server, name):
                continue  # the person's groups do not allow it (webhost.access): absent, as for the person
            decision = decision_for(options, server, name)
            if decision != "deny":
                candidates.append((ToolRef(server, name), tool, decision))
    names = ToolNames(ref for ref, _, _ in candidates)
    offered = [
        OfferedTool(
            ref=ref,
            name=names.name(ref),
            decision=decision,
            resource_uri=tool_resource_uri(tool.get("_meta")),
            spec=ToolSpec(
                name=names.name(ref),
                description=_description(tool),
                input_schema=_schema(tool.get("inputSchema")),
            ),
            tool=tool,
        )
        for ref, tool, decision in candidates
    ]
    return ToolSet(offered)


def _description(tool: dict[str, Any]) -> str:
    text = tool.get("description") or tool.get("title") or tool.get("name") or ""
    return str(text)[:MAX_DESCRIPTION]


def _schema(schema: object) -> dict[str, Any]:
    """The tool's input schema as both APIs take it: an object schema (an empty one when it has none)."""
    if not isinstance(schema, dict):
        return {"type": "object", "properties": {}}
    if schema.get("type") != "object":
        return {**schema, "type": "object"}
    return dict(schema)
