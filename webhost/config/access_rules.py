"""`webhost.access` rules: which groups may use each server (and tool of it) and each model, and the `default`
for what no rule names (contract §9).

Read with the rest of the file by `file.py`, which checks that every server and model named here is configured;
`webhost/access_policy.py` decides with these rules. docs/admin.md and docs/security.md document the keys.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

Default = Literal["allow", "deny"]


class _Model(BaseModel):
    model_config = ConfigDict(frozen=True, populate_by_name=True, extra="ignore")


class GroupRule(_Model):
    """The groups that may use one tool or model: any one of them is enough; an empty list is nobody."""

    groups: frozenset[str]


class ServerRule(_Model):
    """The groups that may use one server, and rules for single tools of it (which narrow, never widen, the
    server's: a tool needs the server first). With no `groups`, the server itself falls to `default`."""

    groups: frozenset[str] | None = None
    tools: Mapping[str, GroupRule] = Field(default_factory=dict)


class AccessRules(_Model):
    """`webhost.access` without `budgets`: who may use which server, tool and model."""

    default: Default = "allow"
    servers: Mapping[str, ServerRule] = Field(default_factory=dict)
    models: Mapping[str, GroupRule] = Field(default_factory=dict)


ACCESS_RULES_MESSAGES = {
    "webhost.access": "must be an object",
    "webhost.access.default": 'must be "allow" or "deny"',
    "webhost.access.servers": "must be an object keyed by server name",
    "webhost.access.servers.*": 'must be an object like {"groups": ["finance"], "tools": {...}}',
    "webhost.access.servers.*.groups": "must be a list of group names",
    "webhost.access.servers.*.tools": "must be an object keyed by tool name",
    "webhost.access.servers.*.tools.*": 'must be an object like {"groups": ["sre"]}',
    "webhost.access.servers.*.tools.*.groups": "must be a list of group names",
    "webhost.access.models": "must be an object keyed by model id",
    "webhost.access.models.*": 'must be an object like {"groups": ["staff"]}',
    "webhost.access.models.*.groups": "must be a list of group names",
}
