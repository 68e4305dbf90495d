"""The demo's chat model (scripts/demo → WEBHOST_DEMO_MODEL → the embedded configuration)."""

from __future__ import annotations

import json

import pytest

from webhost.apps.meta import tool_visibility
from webhost.chat.toolset import decision_for
from webhost.config import Config, ConfigError
from webhost.demo.config import DEMO_MODEL_TOOLS, DEMO_MODEL_VARIABLE, SMALL_MODEL_TOOLS, demo_config
from webhost.demo.model_choice import SMALL_MODEL_ID
from webhost.demo.server import mcp as demo_server


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


def small_model_config() -> Config:
    entry = {"id": "local", "api": "openai", "model": SMALL_MODEL_ID, "baseUrl": "http://127.0.0.1:5/v1"}
    return demo_config({DEMO_MODEL_VARIABLE: json.dumps(entry)})


async def model_tools() -> set[str]:
    """The demo server's tools the model may see (app-only ones never), from the server itself."""
    return {t.name for t in await demo_server.list_tools() if "model" in tool_visibility(t.meta)}


@pytest.mark.anyio
async def test_the_small_model_is_offered_only_the_tools_it_can_call() -> None:
    options = small_model_config().options
    offered = {tool for tool in await model_tools() if decision_for(options, "demo", tool) != "deny"}
    assert offered == set(SMALL_MODEL_TOOLS) == {"show_dashboard", "get_weather"}  # plan_trip's form is not among them
    [model] = options.chat.models
    assert (model.context_tokens, model.max_tokens) == (4096, 512)


@pytest.mark.anyio
async def test_every_demo_tool_is_decided_for_the_small_model_and_other_models_get_them_all() -> None:
    assert await model_tools() == set(DEMO_MODEL_TOOLS)  # a new demo tool is decided here, not offered by default
    entry = {"id": "openai", "api": "openai", "model": "gpt-5.1", "apiKey": "${OPENAI_API_KEY}"}
    options = demo_config({DEMO_MODEL_VARIABLE: json.dumps(entry), "OPENAI_API_KEY": "k"}).options
    assert all(decision_for(options, "demo", tool) == "ask" for tool in DEMO_MODEL_TOOLS)
