"""A value over a limit is told the limit (issue 31 item 12): a 100,001-character `systemPrompt` used to be told
it "must be a string", which it was."""

from __future__ import annotations

import json

import pytest

from webhost.config import ConfigError, parse_config

BASIC = {"a": {"command": "x"}}


def message_for(document: dict[str, object]) -> str:
    with pytest.raises(ConfigError) as info:
        parse_config(json.dumps(document), "servers.json", {})
    return str(info.value)


def chat(options: dict[str, object]) -> dict[str, object]:
    return {"mcpServers": BASIC, "webhost": {"chat": options}}


MODEL = {"id": "m", "api": "openai", "model": "gpt", "baseUrl": "http://127.0.0.1:9/v1"}


@pytest.mark.parametrize(
    ("document", "expected"),
    [
        (
            chat({"systemPrompt": "x" * 100_001}),
            "webhost.chat.systemPrompt: must be a string of at most 100000 characters",
        ),
        (
            chat({"models": [{**MODEL, "model": "m" * 201}]}),
            "webhost.chat.models[0].model: must be a non-empty string of at most 200 characters",
        ),
        (chat({"models": [{**MODEL, "id": "-m"}]}), "starting with a letter or digit"),
        (chat({"models": [{**MODEL, "id": "m" * 65}]}), "(at most 64)"),
        ({"mcpServers": {"-a": {"command": "x"}}}, "mcpServers.-a: server names may use letters, digits"),
        ({"mcpServers": {"-a": {"command": "x"}}}, "starting with a letter or digit"),
        (
            {"mcpServers": BASIC, "webhost": {"auth": {"mode": "proxy", "userHeader": "X" * 129}}},
            "webhost.auth.userHeader: must be an HTTP header name (at most 128 characters)",
        ),
    ],
)
def test_a_value_past_its_limit_is_told_the_limit(document: dict[str, object], expected: str) -> None:
    assert expected in message_for(document)


def test_a_system_prompt_at_its_limit_is_taken() -> None:
    config = parse_config(json.dumps(chat({"systemPrompt": "x" * 100_000})), "servers.json", {})
    assert len(config.options.chat.system_prompt) == 100_000


def test_auto_title_is_on_by_default_and_only_true_or_false() -> None:
    assert parse_config(json.dumps(chat({})), "servers.json", {}).options.chat.auto_title is True
    off = parse_config(json.dumps(chat({"autoTitle": False})), "servers.json", {})
    assert off.options.chat.auto_title is False
    assert "webhost.chat.autoTitle: must be true or false" in message_for(chat({"autoTitle": "no"}))
