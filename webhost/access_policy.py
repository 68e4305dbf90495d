"""The one place that decides who may use what (contract §9): given a person's groups and the `webhost.access`
rules, may they use a server, a tool of it, a model. Pure and synchronous, so every path (the workspace's
connections, the catalogue, the chat, app calls) asks the same question the same way and gets the same answer.

A rule names the groups that may use a thing; any one of the person's groups is enough. What no rule names
falls to `default`. A tool rule narrows its server's: a tool of a server the person may not use is never usable.
Admins get no exception here: they use what their own groups allow.
"""

from __future__ import annotations

from collections.abc import Iterable

from webhost.config.access_rules import AccessRules

Groups = tuple[str, ...] | list[str] | frozenset[str] | set[str]


def _held(groups: Iterable[str]) -> Groups:
    """The groups as a collection read more than once (the person's are a tuple already: no copy on each call)."""
    return groups if isinstance(groups, tuple | list | frozenset | set) else tuple(groups)


def _allowed(rule_groups: frozenset[str] | None, groups: Iterable[str], rules: AccessRules) -> bool:
    if rule_groups is None:
        return rules.default == "allow"
    return not rule_groups.isdisjoint(groups)


def may_use_server(rules: AccessRules, groups: Iterable[str], server: str) -> bool:
    rule = rules.servers.get(server)
    return _allowed(rule.groups if rule else None, groups, rules)


def may_use_tool(rules: AccessRules, groups: Iterable[str], server: str, tool: str) -> bool:
    held = _held(groups)
    rule = rules.servers.get(server)
    if not _allowed(rule.groups if rule else None, held, rules):
        return False
    tool_rule = rule.tools.get(tool) if rule else None
    # A tool no rule names goes with its server, which the person may already use.
    return tool_rule is None or not tool_rule.groups.isdisjoint(held)


def may_use_model(rules: AccessRules, groups: Iterable[str], model: str) -> bool:
    rule = rules.models.get(model)
    return _allowed(rule.groups if rule else None, groups, rules)


def usable_servers(rules: AccessRules, groups: Iterable[str], servers: Iterable[str]) -> list[str]:
    """The servers of `servers` the person may use, in the order given."""
    held = _held(groups)
    return [name for name in servers if may_use_server(rules, held, name)]


def names_tools(rules: AccessRules, server: str) -> bool:
    """Whether any rule names a tool of `server`: only then can a call of a name the person cannot see be one
    they may not use, so only then must such a call be answered here rather than by the server (no oracle)."""
    rule = rules.servers.get(server)
    return rule is not None and bool(rule.tools)


def denied_tools(rules: AccessRules, groups: Iterable[str], servers: Iterable[str]) -> dict[str, frozenset[str]]:
    """Of the servers the person may use, those with tools named by a rule they do not meet, and those tools."""
    held = frozenset(groups)
    denied: dict[str, frozenset[str]] = {}
    for server in servers:
        rule = rules.servers.get(server)
        if rule is None or not rule.tools:
            continue
        names = frozenset(tool for tool, tool_rule in rule.tools.items() if tool_rule.groups.isdisjoint(held))
        if names:
            denied[server] = names
    return denied
