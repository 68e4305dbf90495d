"""The demo's chat model (scripts/demo → WEBHOST_DEMO_MODEL → the embedded configuration)."""

from __future__ import annotations

import json

import pytest

from webhost.config import ConfigError
from webhost.demo.config import DEMO_MODEL_VARIABLE, demo_config


def test_without_a_model_the_demo_has_no_chat_model() -> None:
    assert demo_config({}).options.chat.models == ()


def test_the_chosen_model_is_the_demos_chat_model_asking_before_each_tool_call() -> None:
    entry = {"id": "local", "api": "openai", "model": "smollm2-135m-instruct", "baseUrl": "http://127.0.0.1:5/v1"}
    config = demo_config({DEMO_MODEL_VARIABLE: json.dumps(entry)})
    [model] = config.options.chat.models
    assert (model.id, model.api, model.base_url) == ("local", "openai", "http://127.0.0.1:5/v1")
    assert config.options.chat.tool_calls == "ask"


def test_a_provider_key_comes_from_the_environment_and_is_a_secret() -> None:
    entry = {"id": "openai", "api": "openai", "model": "gpt-5.1", "apiKey": "${OPENAI_API_KEY}"}
    config = demo_config({DEMO_MODEL_VARIABLE: json.dumps(entry), "OPENAI_API_KEY": "sk-demo-secret"})
    assert config.options.chat.models[0].api_key == "sk-demo-secret"
    assert config.redactor().text("key sk-demo-secret") == "key ***"


def test_a_broken_variable_is_one_line() -> None:
    with pytest.raises(ConfigError, match="WEBHOST_DEMO_MODEL: not JSON"):
        demo_config({DEMO_MODEL_VARIABLE: "{oops"})
