"""A `webhost serve` process stopped while the model writes an answer (issue 31, items 1 and 2): killed
(SIGKILL), the answer's streamed text is in the database already, at most `SAVE_TEXT_CHARS` or
`SAVE_TEXT_SECONDS` behind what the tab was sent; stopped (SIGTERM, a deploy), the answer is interrupted and
retryable, its text kept, not done. The next process on the same data folder shows it so, with Retry."""

from __future__ import annotations

import signal
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import anyio
import pytest

from tests.support.model_endpoint import ModelEndpointServer, running_model_endpoint
from tests.support.process import Webhost, WsClient, run_webhost
from webhost.app.secret import load_secret
from webhost.apps.origins import derive_key
from webhost.chat.deps import ChatDeps
from webhost.chat.turn import SAVE_TEXT_CHARS
from webhost.people import TOKEN_PERSON_ID
from webhost.storage.conversations import ChatSeal, ConversationStore
from webhost.storage.db import Storage
from webhost.storage.turn_leases import TurnLeaseStore

pytestmark = pytest.mark.anyio

TOKEN = "t-chat-turn-stops"
# More than one `SAVE_TEXT_CHARS` in several deltas, then the answer holds (the model is "still writing").
DELTAS = [f"Line {n}: " + "words " * 60 + "\n" for n in range(12)]
DRAWN = "".join(DELTAS)


@pytest.fixture(scope="module")
def endpoint() -> Iterator[ModelEndpointServer]:
    with running_model_endpoint() as server:
        yield server


def options(endpoint: ModelEndpointServer, model: str) -> dict[str, Any]:
    return {"chat": {"models": [{"id": "m", "api": "openai", "model": model, "baseUrl": endpoint.openai_base_url}]}}


def script_held_answer(endpoint: ModelEndpointServer, model: str) -> None:
    endpoint.script(model, [{"events": [*({"text": d} for d in DELTAS), {"gate": model}, {"text": "never sent"}]}])


async def drawn_answer(tab: WsClient) -> str:
    """Send a message; the conversation once the tab was sent every delta before the held part."""
    sent = await tab.request("chat/send", {"text": "Write a long answer"})
    seen = ""
    while seen != DRAWN:
        event = await tab.wait_notification("chat/event", lambda p: p.get("type") == "text")
        seen += event["delta"]
        assert DRAWN.startswith(seen)
    conversation: str = sent["conversationId"]
    return conversation


async def stored_answer(data_dir: Path, conversation: str) -> dict[str, Any]:
    """The answer as the running process last wrote it, read from its database (opened with its secret); before
    its first save, a streaming answer with no text yet."""
    storage = Storage(f"sqlite+aiosqlite:///{data_dir / 'webhost.sqlite3'}")
    await storage.start()
    try:
        store = ConversationStore(storage, ChatSeal(derive_key(load_secret(data_dir), "chat/v1")))
        messages = await store.messages(TOKEN_PERSON_ID, conversation)
    finally:
        await storage.close()
    if messages[-1].role != "assistant":
        return {"status": "streaming", "parts": []}
    body: dict[str, Any] = messages[-1].body
    return body


async def lease_ran_out(data_dir: Path, conversation: str, lease: float = ChatDeps.lease) -> None:
    """Wait until the killed process's turn lease is no longer live: until then the answer may still be written by
    a live replica as far as any other process can tell, so none declares it interrupted (issue 29 item 4)."""
    storage = Storage(f"sqlite+aiosqlite:///{data_dir / 'webhost.sqlite3'}")
    await storage.start()
    try:
        with anyio.fail_after(lease * 6):
            while await TurnLeaseStore(storage).live(conversation, now=time.time(), lease=lease) is not None:
                await anyio.sleep(0.2)
    finally:
        await storage.close()


def text_of(message: dict[str, Any]) -> str:
    return "".join(p.get("text") or "" for p in message.get("parts", []) if p["type"] == "text")


async def reopened(tmp_path: Path, endpoint: ModelEndpointServer, model: str, data_dir: Path, conversation: str) -> Any:
    """The conversation as the next process on the same data folder shows it."""
    with run_webhost(tmp_path, {}, webhost_options=options(endpoint, model), data_dir=data_dir, token=TOKEN) as host:
        async with host.connect() as tab:
            return await tab.request("chat/open", {"conversationId": conversation})


def stop(host: Webhost, how: signal.Signals) -> None:
    host.proc.send_signal(how)
    host.proc.wait(timeout=60)


async def test_a_killed_process_leaves_the_streamed_text_of_the_answer_interrupted_and_retryable(
    tmp_path: Path, endpoint: ModelEndpointServer
) -> None:
    model, data_dir = "killed-mid-answer", tmp_path / "data"
    script_held_answer(endpoint, model)
    with run_webhost(tmp_path, {}, webhost_options=options(endpoint, model), data_dir=data_dir, token=TOKEN) as host:
        async with host.connect() as tab:
            conversation = await drawn_answer(tab)
            # The step has not ended (the model still writes): what is stored comes from the periodic saves.
            kept = ""
            with anyio.fail_after(30):
                while kept != DRAWN:
                    stored = await stored_answer(data_dir, conversation)
                    kept = text_of(stored)
                    assert stored["status"] == "streaming" and DRAWN.startswith(kept)
                    assert len(DRAWN) - len(kept) <= SAVE_TEXT_CHARS or kept == ""
                    await anyio.sleep(0.05)
            stop(host, signal.SIGKILL)
    endpoint.release(model)
    await lease_ran_out(data_dir, conversation)
    opened = await reopened(tmp_path, endpoint, model, data_dir, conversation)
    answer = opened["messages"][-1]
    assert answer["status"] == "interrupted" and answer["retryable"] is True
    assert text_of(answer) == DRAWN


async def test_a_stopped_process_marks_the_answer_interrupted_and_retryable_with_its_text(
    tmp_path: Path, endpoint: ModelEndpointServer
) -> None:
    model, data_dir = "stopped-mid-answer", tmp_path / "data"
    script_held_answer(endpoint, model)
    with run_webhost(tmp_path, {}, webhost_options=options(endpoint, model), data_dir=data_dir, token=TOKEN) as host:
        async with host.connect() as tab:
            conversation = await drawn_answer(tab)
            stop(host, signal.SIGTERM)
    assert host.proc.returncode == 0
    endpoint.release(model)
    opened = await reopened(tmp_path, endpoint, model, data_dir, conversation)
    answer = opened["messages"][-1]
    assert answer["status"] == "interrupted" and answer["retryable"] is True, answer
    assert "webhost stopped" in answer["error"]
    assert text_of(answer) == DRAWN
