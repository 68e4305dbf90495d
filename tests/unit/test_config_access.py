"""`webhost.access.budgets` (issue 29, item 4): which daily budget applies to a person, and the file's errors."""

from __future__ import annotations

import json

import pytest

from webhost.config import ConfigError, parse_config
from webhost.config.access import Budgets


def budgets(raw: dict[str, object]) -> Budgets:
    text = json.dumps({"mcpServers": {}, "webhost": {"access": {"budgets": raw}}})
    return parse_config(text, "f.json", {}).options.access.budgets


BUDGETS = budgets(
    {
        "groups": {"staff": {"dailyTokens": 200000}, "interns": {"dailyTokens": 1000}},
        "people": {"Ada@Example.com": {"dailyTokens": 0}, "p-42": {"dailyTokens": 5}},
    }
)


@pytest.mark.parametrize(
    ("person", "email", "groups", "expected"),
    [
        ("p-1", "ada@example.com", ["staff"], 0),  # a person's own entry overrides their groups (email, any case)
        ("p-42", None, ["staff"], 5),  # or by id when there is no email entry
        ("p-2", "bob@example.com", ["interns", "staff"], 200000),  # the largest of their groups'
        ("p-3", "cy@example.com", ["interns"], 1000),
        ("p-4", "di@example.com", ["sales"], 777),  # none of theirs: the default (chat.dailyTokenBudget)
    ],
)
def test_the_budget_of_a_person(person: str, email: str | None, groups: list[str], expected: int) -> None:
    assert BUDGETS.daily_tokens(person, email, groups, 777) == expected


def test_no_budget_anywhere_is_no_limit() -> None:
    assert Budgets().daily_tokens("p", "p@example.com", ["staff"], None) is None


@pytest.mark.parametrize(
    ("access", "message"),
    [
        ({"teams": {}}, "webhost.access.teams: unknown key"),
        ({"servers": {"nowhere": {"groups": ["x"]}}}, 'webhost.access.servers.nowhere: no server "nowhere"'),
        ({"budgets": {"teams": {}}}, "webhost.access.budgets.teams: unknown key"),
        ({"budgets": {"groups": {"x": {"dailyTokens": -1}}}}, "groups.x.dailyTokens: must be an integer, 0 or more"),
        ({"budgets": {"people": {"x": {"daily": 1}}}}, "webhost.access.budgets.people.x.daily: unknown key"),
    ],
)
def test_a_wrong_access_key_or_value_is_one_line(access: dict[str, object], message: str) -> None:
    text = json.dumps({"mcpServers": {}, "webhost": {"access": access}})
    with pytest.raises(ConfigError, match=message.replace(".", r"\.").replace("(", r"\(").replace(")", r"\)")):
        parse_config(text, "f.json", {})
