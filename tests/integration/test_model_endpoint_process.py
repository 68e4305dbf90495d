"""The scripted model endpoint as its own process, with a script file: what webhost's subprocess suites
start like the other peers; both wires answer from the file through the adapter."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.support.model_endpoint import model_endpoint_process
from tests.support.process import free_port
from webhost.chat.providers import Api, ModelEndpoint, open_provider
from webhost.chat.providers.events import Stop, StreamEvent, TextDelta, Usage
from webhost.chat.providers.messages import ChatRequest, TextBlock, UserMessage

pytestmark = pytest.mark.anyio


async def test_the_endpoint_process_answers_both_wires_from_its_script_file(tmp_path: Path) -> None:
    script = tmp_path / "script.json"
    script.write_text(
        json.dumps({"local-model": [{"match": "hello", "events": [{"text": "Hi "}, {"text": "there."}]}]}),
        encoding="utf-8",
    )
    request = ChatRequest("local-model", "", (UserMessage((TextBlock("hello"),)),), ())
    with model_endpoint_process(free_port(), script=script, log_path=tmp_path / "endpoint.log") as server:
        answers: dict[str, list[StreamEvent]] = {}
        wires: list[tuple[Api, str]] = [("openai", server.openai_base_url), ("anthropic", server.anthropic_base_url)]
        for api, base_url in wires:
            provider = open_provider(ModelEndpoint("local", api, "local-model", base_url, None))
            try:
                answers[api] = [e async for e in provider.stream(request) if not isinstance(e, Usage)]
            finally:
                await provider.aclose()
        models = server.http.get(f"{server.openai_base_url}/models").json()
        received = server.requests("local-model")
    expected: list[StreamEvent] = [TextDelta("Hi "), TextDelta("there."), Stop("end")]
    assert answers == {"openai": expected, "anthropic": expected}
    assert [model["id"] for model in models["data"]] == ["local-model"]
    assert [r["path"] for r in received] == ["/v1/chat/completions", "/v1/messages"]
