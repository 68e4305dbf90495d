"""Who may use what (contract §9): the `webhost.access` rules as read from the file, and the one policy that
decides with them."""

from __future__ import annotations

import json

import pytest

from webhost.access_policy import (
    denied_tools,
    may_use_model,
    may_use_server,
    may_use_tool,
    names_tools,
    usable_servers,
)
from webhost.config import Config, ConfigError, parse_config
from webhost.config.access_rules import AccessRules
from webhost.methods.admin_access import who_may_use

SERVERS = {"payroll": {"command": "p"}, "prod-db": {"command": "d"}, "wiki": {"command": "w"}}
MODELS = [{"id": "claude", "api": "anthropic", "model": "m"}, {"id": "small", "api": "anthropic", "model": "s"}]
RULES = {
    "servers": {
        "payroll": {"groups": ["finance"]},
        "prod-db": {"groups": ["sre"], "tools": {"drop_table": {"groups": []}, "restore": {"groups": ["dba"]}}},
    },
    "models": {"claude": {"groups": ["staff"]}},
}


def config(access: object) -> Config:
    document = {"mcpServers": SERVERS, "webhost": {"access": access, "chat": {"models": MODELS}}}
    return parse_config(json.dumps(document), "servers.json", {})


def error_of(access: object) -> str:
    with pytest.raises(ConfigError) as info:
        config(access)
    return str(info.value)


def test_the_contract_example_is_read() -> None:
    rules = config({"default": "allow", **RULES}).options.access
    assert rules.default == "allow"
    assert rules.servers["payroll"].groups == frozenset({"finance"})
    assert rules.servers["prod-db"].tools["drop_table"].groups == frozenset()
    assert rules.models["claude"].groups == frozenset({"staff"})


def test_no_rules_lets_everyone_use_everything() -> None:
    rules = config({}).options.access
    assert AccessRules.model_validate(rules.model_dump()) == AccessRules()  # the rules part of `webhost.access`
    assert usable_servers(rules, [], SERVERS) == ["payroll", "prod-db", "wiki"]
    assert may_use_model(rules, [], "claude")


def test_a_server_rule_admits_any_one_of_its_groups() -> None:
    rules = config(RULES).options.access
    assert may_use_server(rules, ["finance"], "payroll")
    assert may_use_server(rules, ["staff", "finance"], "payroll")
    assert not may_use_server(rules, ["staff"], "payroll")
    assert not may_use_server(rules, [], "payroll")


def test_default_decides_what_no_rule_names() -> None:
    allow = config({"default": "allow", **RULES}).options.access
    deny = config({"default": "deny", **RULES}).options.access
    assert may_use_server(allow, [], "wiki")
    assert not may_use_server(deny, ["finance", "sre", "staff"], "wiki")
    assert may_use_server(deny, ["finance"], "payroll")
    assert not may_use_model(deny, ["staff"], "small")
    assert may_use_model(deny, ["staff"], "claude")


def test_a_tool_rule_narrows_its_server_and_never_widens_it() -> None:
    rules = config(RULES).options.access
    assert may_use_tool(rules, ["sre"], "prod-db", "query")  # no rule: goes with the server
    assert not may_use_tool(rules, ["sre"], "prod-db", "drop_table")  # an empty list is nobody
    assert not may_use_tool(rules, ["sre"], "prod-db", "restore")
    assert may_use_tool(rules, ["sre", "dba"], "prod-db", "restore")
    assert not may_use_tool(rules, ["dba"], "prod-db", "restore")  # the tool needs the server first


def test_only_a_server_with_tool_rules_names_tools() -> None:
    rules = config(RULES).options.access
    assert names_tools(rules, "prod-db")
    assert not names_tools(rules, "payroll")  # a rule, but of the server only
    assert not names_tools(rules, "wiki")  # no rule at all


def test_denied_tools_are_those_of_usable_servers_whose_rule_the_person_does_not_meet() -> None:
    rules = config(RULES).options.access
    assert denied_tools(rules, ["sre"], ["prod-db", "wiki"]) == {"prod-db": frozenset({"drop_table", "restore"})}
    assert denied_tools(rules, ["sre", "dba"], ["prod-db"]) == {"prod-db": frozenset({"drop_table"})}
    assert denied_tools(rules, ["sre"], ["wiki"]) == {}  # only the servers asked about


def test_many_rules_decide_the_same_as_one() -> None:
    # 200 server rules of 5 tools each, as bench/tool_call.py's `access` row configures them.
    servers = {
        f"s{i}": {"groups": [f"g{i}"], "tools": {f"t{j}": {"groups": [f"g{i}-{j}"]} for j in range(5)}}
        for i in range(200)
    }
    rules = AccessRules.model_validate({"servers": servers})
    assert may_use_tool(rules, ["g7", "g7-3"], "s7", "t3")
    assert not may_use_tool(rules, ["g7", "g8-3"], "s7", "t3")
    assert may_use_tool(rules, ["g7"], "s7", "other")
    assert usable_servers(rules, ["g3", "g150"], servers) == ["s3", "s150"]


def test_a_server_rule_of_tools_only_leaves_the_server_to_default() -> None:
    access = {"default": "deny", "servers": {"wiki": {"tools": {"edit": {"groups": ["editors"]}}}}}
    rules = config(access).options.access
    assert not may_use_server(rules, ["editors"], "wiki")
    assert not may_use_tool(rules, ["editors"], "wiki", "edit")


def test_admins_get_no_exception() -> None:
    # The policy knows nothing of adminGroups: an admin group is one more group, and grants only what rules name.
    rules = config({"default": "deny", **RULES}).options.access
    assert not may_use_server(rules, ["admins"], "payroll")


def test_a_rule_for_an_unknown_server_is_an_error_naming_the_entry() -> None:
    message = error_of({"servers": {"payrol": {"groups": ["finance"]}}})
    assert 'webhost.access.servers.payrol: no server "payrol" in mcpServers' in message


def test_a_rule_for_an_unknown_model_is_an_error_naming_the_entry() -> None:
    message = error_of({"models": {"opus": {"groups": ["staff"]}}})
    assert 'webhost.access.models.opus: no model "opus" in webhost.chat.models' in message


@pytest.mark.parametrize(
    ("access", "expected"),
    [
        ({"default": "maybe"}, 'webhost.access.default: must be "allow" or "deny"'),
        ({"servers": {"payroll": {"groups": "finance"}}}, "webhost.access.servers.payroll.groups: must be a list"),
        ({"models": {"claude": {}}}, "webhost.access.models.claude"),
        ({"servers": {"payroll": {"group": ["x"]}}}, "webhost.access.servers.payroll.group: unknown key"),
    ],
)
def test_a_bad_rule_is_one_clear_line(access: object, expected: str) -> None:
    assert expected in error_of(access)


def test_the_admin_view_is_told_who_may_use_each_server_tool_and_model() -> None:
    seen = who_may_use(config({"default": "deny", **RULES}))
    assert seen["servers"] == {"payroll": ["finance"], "prod-db": ["sre"], "wiki": []}
    assert seen["tools"] == {"prod-db/drop_table": [], "prod-db/restore": ["dba"]}
    assert seen["models"] == {"claude": ["staff"], "small": []}
