"""Who may use each server and model, as the admin view shows it: the groups `webhost.access` names
(access_policy.py decides with the same rules), "everyone" where no rule names it and `default` is `allow`,
and no one (`[]`) where `default` is `deny`; and each tool a rule names (`SERVER/TOOL`), with its own groups (which
narrow its server's: a person needs both).
"""

from __future__ import annotations

from typing import Literal

from webhost.config import Config

Everyone = Literal["everyone"]
EVERYONE: Everyone = "everyone"


def who_may_use(config: Config) -> dict[str, dict[str, list[str] | Everyone]]:
    """For each server, tool named by a rule, and model: the groups that may use it, or "everyone"."""
    rules = config.options.access
    unnamed: list[str] | Everyone = EVERYONE if rules.default == "allow" else []
    servers: dict[str, list[str] | Everyone] = {}
    for name in config.servers:
        rule = rules.servers.get(name)
        servers[name] = unnamed if rule is None or rule.groups is None else sorted(rule.groups)
    tools: dict[str, list[str] | Everyone] = {
        f"{server}/{tool}": sorted(tool_rule.groups)
        for server, rule in rules.servers.items()
        for tool, tool_rule in rule.tools.items()
    }
    models: dict[str, list[str] | Everyone] = {}
    for model in config.options.chat.models:
        model_rule = rules.models.get(model.id)
        models[model.id] = unnamed if model_rule is None else sorted(model_rule.groups)
    return {"servers": servers, "tools": tools, "models": models}
