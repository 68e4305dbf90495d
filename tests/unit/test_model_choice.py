"""The demo's choice of model (webhost/demo/model_choice.py): keys first, then an Ollama on loopback (here a
small HTTP server answering as Ollama does, since no Ollama is installed), then the small local model."""

from __future__ import annotations

import json
import socket
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest

from webhost.demo.model_choice import (
    SMALL_MODEL_ID,
    ModelChoice,
    SmallModel,
    choose_model,
    ollama_model,
    small_model_command,
)
from webhost.testing.host import free_port


def _serve(routes: dict[str, Any]) -> Iterator[str]:
    class Handler(BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            if self.path not in routes:
                self.send_error(404)
                return
            body = json.dumps(routes[self.path]).encode()
            self.send_response(200)
            self.send_header("content-type", "application/json")
            self.send_header("content-length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, format: str, *args: Any) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()
        thread.join()


@pytest.fixture
def ollama() -> Iterator[str]:
    tags = {"models": [{"name": "qwen3:8b", "model": "qwen3:8b"}, {"name": "llama3.2:1b"}]}
    yield from _serve({"/api/tags": tags, "/v1/models": {"data": [{"id": "qwen3:8b"}]}})


@pytest.fixture
def nothing_there() -> str:
    return f"http://127.0.0.1:{free_port()}"


@pytest.fixture
def installed(tmp_path: Path) -> SmallModel:
    small = SmallModel(tmp_path)
    for path in (small.server, small.gguf, small.runtime):
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text("")
    return small


def test_an_openai_key_comes_first(ollama: str, installed: SmallModel) -> None:
    env = {"OPENAI_API_KEY": "sk-1", "ANTHROPIC_API_KEY": "sk-2"}
    choice = choose_model(env, ollama_url=ollama, small_model=installed)
    assert choice == ModelChoice(
        "openai", {"id": "openai", "api": "openai", "model": "gpt-5.1", "apiKey": "${OPENAI_API_KEY}"}
    )


def test_then_an_anthropic_key(ollama: str, installed: SmallModel) -> None:
    choice = choose_model({"OPENAI_API_KEY": "", "ANTHROPIC_API_KEY": "sk-2"}, ollama_url=ollama, small_model=installed)
    assert choice == ModelChoice(
        "anthropic",
        {"id": "anthropic", "api": "anthropic", "model": "claude-sonnet-4-5", "apiKey": "${ANTHROPIC_API_KEY}"},
    )


def test_then_an_ollama_with_its_first_model(ollama: str, installed: SmallModel) -> None:
    choice = choose_model({}, ollama_url=ollama, small_model=installed)
    assert choice == ModelChoice(
        "ollama", {"id": "ollama", "api": "openai", "model": "qwen3:8b", "baseUrl": f"{ollama}/v1"}
    )


def test_an_ollama_without_api_tags_is_asked_on_its_openai_path() -> None:
    for url in _serve({"/v1/models": {"object": "list", "data": [{"id": "phi4"}]}}):
        assert ollama_model(url) == "phi4"


def test_an_ollama_with_no_model_pulled_is_passed_over(installed: SmallModel) -> None:
    for url in _serve({"/api/tags": {"models": []}, "/v1/models": {"data": []}}):
        choice = choose_model({}, ollama_url=url, small_model=installed)
        assert choice == ModelChoice("small-model", {"id": "local", "api": "openai", "model": SMALL_MODEL_ID})


def test_then_the_small_model_when_installed(nothing_there: str, installed: SmallModel) -> None:
    choice = choose_model({}, ollama_url=nothing_there, small_model=installed)
    assert choice == ModelChoice("small-model", {"id": "local", "api": "openai", "model": SMALL_MODEL_ID})
    port = 4321
    assert small_model_command(installed, port) == [
        "node",
        str(installed.server),
        "--model",
        str(installed.gguf),
        "--port",
        "4321",
    ]


def test_else_none(nothing_there: str, installed: SmallModel) -> None:
    installed.gguf.unlink()
    assert installed.missing() == [installed.gguf]
    assert choose_model({}, ollama_url=nothing_there, small_model=installed) is None


def test_something_else_on_the_ollama_port_is_no_ollama(installed: SmallModel) -> None:
    with socket.socket() as listener:
        listener.bind(("127.0.0.1", 0))
        listener.listen()
        url = f"http://127.0.0.1:{listener.getsockname()[1]}"

        def answer_garbage() -> None:
            for _ in range(2):  # one connection per path asked
                connection, _address = listener.accept()
                with connection:
                    connection.recv(1024)
                    connection.sendall(b"not http at all\r\n\r\n")

        thread = threading.Thread(target=answer_garbage, daemon=True)
        thread.start()
        assert ollama_model(url) is None
        thread.join(timeout=10)
