"""Two `webhost serve` replicas sharing one data folder (SQLite, WAL; the same secret and token): when
the one running a person's calls stops, a tab on the other gets its 2026-07-28 input requests back
(answering retries the call there), and its legacy questions and running calls reported, never lost."""

from __future__ import annotations

import json
import signal
import sqlite3
import time
from collections.abc import Iterator
from contextlib import ExitStack, contextmanager
from pathlib import Path
from typing import Any

import anyio
import pytest

from tests.support.process import (
    PYTHON,
    SERVERS,
    Webhost,
    http_process,
    run_webhost,
    start_tool_call,
    stdio_server,
)

pytestmark = pytest.mark.anyio


@contextmanager
def two_replicas(tmp_path: Path, servers: dict[str, Any]) -> Iterator[tuple[Webhost, Webhost]]:
    """Replica A, then B (A has applied the migrations), on one data folder with one token."""
    data_dir, token = tmp_path / "shared-data", "t-shared-replica-token"
    with ExitStack() as stack:
        a = stack.enter_context(run_webhost(tmp_path, json.loads(json.dumps(servers)), data_dir=data_dir, token=token))
        b = stack.enter_context(run_webhost(tmp_path, json.loads(json.dumps(servers)), data_dir=data_dir, token=token))
        yield a, b


@contextmanager
def shared_elicit_server(tmp_path: Path) -> Iterator[str]:
    """tests/servers/elicit.py over Streamable HTTP: one server both replicas talk to (as a remote one would be)."""
    args = [PYTHON, str(SERVERS / "elicit.py"), "--http", "{port}"]
    with http_process(args, log_path=tmp_path / "elicit-http.log") as url:
        yield url


def live_calls(data_dir: Path) -> list[dict[str, Any]]:
    with sqlite3.connect(data_dir / "webhost.sqlite3", timeout=5) as db:
        db.row_factory = sqlite3.Row
        return [dict(row) for row in db.execute("SELECT * FROM live_calls")]


async def until(check: Any, what: str, timeout: float = 20) -> Any:
    """Wait for `check()` to return something truthy (the journal writes in the background)."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        value = check()
        if value:
            return value
        await anyio.sleep(0.05)
    raise AssertionError(f"timed out waiting for {what}; live_calls rows: {what}")


def kill(host: Webhost, how: signal.Signals) -> None:
    host.proc.send_signal(how)
    host.proc.wait(timeout=20)


@pytest.mark.parametrize("how", [signal.SIGKILL, signal.SIGTERM], ids=["killed", "stopped"])
async def test_a_pending_round_is_asked_again_on_the_other_replica_and_the_answer_retries_the_call_there(
    tmp_path: Path, how: signal.Signals
) -> None:
    with (
        shared_elicit_server(tmp_path) as url,
        two_replicas(tmp_path, {"elicit": {"type": "http", "url": url}}) as (
            a,
            b,
        ),
    ):
        async with a.connect() as ws_a:
            assert (await ws_a.wait_connected("elicit"))["era"] == "modern"
            pending = start_tool_call(ws_a, "elicit", "multi_round", "call-1", {"rounds": 2})
            first = await ws_a.wait_notification("elicitation/request")
            assert first["message"] == "Round 1 of 2" and "resumed" not in first["origin"]
            round_1 = await until(
                lambda: [r["round_at"] for r in live_calls(a.data_dir) if r["sealed_round"] is not None], "round 1"
            )
            await ws_a.request(
                "elicitation/respond", {"id": first["id"], "action": "accept", "content": {"answer": "one"}}
            )
            second = await ws_a.wait_notification("elicitation/request")
            assert second["message"] == "Round 2 of 2"
            rows = await until(
                lambda: [r for r in live_calls(a.data_dir) if r["round_at"] not in (None, *round_1)], "round 2"
            )
            assert rows[0]["call_id"] == "call-1" and rows[0]["name"] == "multi_round"
            # The round's requestState and the arguments are sealed: nothing of them is readable at rest.
            stored = (a.data_dir / "webhost.sqlite3").read_bytes() + (a.data_dir / "webhost.sqlite3-wal").read_bytes()
            assert b"elicit v1" not in stored and b"Round 2 of 2" not in stored
            kill(a, how)
            if how == signal.SIGTERM:
                stopped = await ws_a.wait_response(pending)
                assert stopped["error"]["message"] == "webhost is stopping"

        async with b.connect() as ws_b:
            again = await ws_b.wait_notification("elicitation/request")
            assert again["message"] == "Round 2 of 2"
            assert again["server"] == "elicit" and again["mode"] == "form"
            assert again["origin"] == {
                "method": "tools/call",
                "name": "multi_round",
                "server": "elicit",
                "callId": "call-1",
                "resumed": True,
            }
            empty = {"id": again["id"], "action": "accept", "content": {}}
            late = await ws_b.request_raw("elicitation/respond", empty)
            assert late["error"]["code"] == -32602  # validated here as any request: "answer" is required
            await ws_b.request(
                "elicitation/respond", {"id": again["id"], "action": "accept", "content": {"answer": "two"}}
            )
            outcome = await ws_b.wait_notification("calls/outcome")
            assert outcome["callId"] == "call-1" and outcome["resumed"] is True
            body = json.loads(outcome["result"]["content"][0]["text"])
            # The first answer went to A, the second through B: the server got both, in one call.
            assert body == {
                "rounds": 2,
                "answers": [
                    {"action": "accept", "content": {"answer": "one"}},
                    {"action": "accept", "content": {"answer": "two"}},
                ],
            }
            await until(lambda: not live_calls(b.data_dir), "the resumed call's row to go")
            # The server's requestState (opaque, its own secret) never reached either tab.
            assert "elicit v1" not in json.dumps([ws_a.notifications, ws_b.notifications, outcome])
            summaries = [n["params"]["entry"]["summary"] for n in ws_b.notifications if n["method"] == "activity"]
            assert any("resumed here after the webhost process running it stopped" in s for s in summaries)


async def test_a_legacy_question_is_reported_lost_and_a_running_call_interrupted(tmp_path: Path) -> None:
    servers = {"legacy": stdio_server("elicit", "--legacy"), "basic": stdio_server("basic")}
    with two_replicas(tmp_path, servers) as (a, b):
        async with a.connect() as ws_a:
            assert (await ws_a.wait_connected("legacy"))["era"] == "legacy"
            await ws_a.wait_connected("basic")
            start_tool_call(ws_a, "legacy", "form_defaults", "asks")
            await ws_a.wait_notification("elicitation/request")
            start_tool_call(ws_a, "basic", "hang", "hangs")
            await until(
                lambda: {r["call_id"]: r["question"] for r in live_calls(a.data_dir)} == {"asks": 1, "hangs": 0},
                "both calls recorded, the legacy one with its question",
            )
            kill(a, signal.SIGKILL)

        async with b.connect() as ws_b:
            lost = await ws_b.wait_notification("calls/outcome", lambda p: p["callId"] == "asks")
            assert lost["interrupted"] is True and lost["reason"] == "question-lost"
            assert lost["error"]["message"] == (
                "the server's question was lost when webhost restarted; run the call again"
            )
            assert (lost["server"], lost["method"], lost["name"]) == ("legacy", "tools/call", "form_defaults")
            hung = await ws_b.wait_notification("calls/outcome", lambda p: p["callId"] == "hangs")
            assert hung["interrupted"] is True and hung["reason"] == "interrupted"
            assert hung["error"]["message"].startswith("interrupted: the webhost process running this call stopped")
            assert (hung["server"], hung["name"]) == ("basic", "hang")
            entries = [n["params"]["entry"] for n in ws_b.notifications if n["method"] == "activity"]
            assert any(
                e["kind"] == "error" and "form_defaults: the server's question was lost" in e["summary"]
                for e in entries
            )
            assert any(e["kind"] == "error" and e["summary"].startswith("hang: interrupted") for e in entries)
            await until(lambda: not live_calls(b.data_dir), "the reported rows to go")
        # Reported once: another tab later finds nothing left to report.
        async with b.connect() as again:
            await again.wait_connected("basic")
            assert not [n for n in again.notifications if n["method"] == "calls/outcome"]


async def test_a_resumed_prompt_and_read_go_to_every_tab_of_the_person_and_the_first_answer_wins(
    tmp_path: Path,
) -> None:
    with (
        shared_elicit_server(tmp_path) as url,
        two_replicas(tmp_path, {"elicit": {"type": "http", "url": url}}) as (
            a,
            b,
        ),
    ):
        async with a.connect() as ws_a:
            await ws_a.wait_connected("elicit")
            ws_a.start_request("prompts/get", {"server": "elicit", "name": "ask_then_greet", "callId": "p-1"})
            ws_a.start_request("resources/read", {"server": "elicit", "uri": "elicit://guarded/plan", "callId": "r-1"})
            for _ in range(2):
                await ws_a.wait_notification("elicitation/request")
            await until(
                lambda: (
                    sorted(r["call_id"] for r in live_calls(a.data_dir) if r["sealed_round"] is not None)
                    == ["p-1", "r-1"]
                ),
                "both rounds",
            )
            kill(a, signal.SIGTERM)  # a clean stop releases them: no lease to wait for

        async with b.connect() as one, b.connect() as two:
            asked: dict[str, dict[str, Any]] = {}
            for tab in (one, two):
                for _ in range(2):
                    request = await tab.wait_notification("elicitation/request")
                    assert request["origin"]["resumed"] is True
                    asked.setdefault(request["origin"]["callId"], request)
            prompt, read = asked["p-1"], asked["r-1"]
            assert prompt["message"] == "Whom should the greeting address?"
            assert read["origin"]["method"] == "resources/read" and read["origin"]["name"] == "elicit://guarded/plan"

            await one.request("elicitation/respond", {"id": prompt["id"], "action": "decline"})
            late = await two.request_raw("elicitation/respond", {"id": prompt["id"], "action": "accept", "content": {}})
            assert late["error"]["code"] == -32602  # the first answer won
            await two.request("elicitation/respond", {"id": read["id"], "action": "accept", "content": {"ok": True}})

            for tab in (one, two):  # both tabs hear how each ended
                greeted = await tab.wait_notification("calls/outcome", lambda p: p["callId"] == "p-1")
                assert greeted["method"] == "prompts/get" and greeted["resumed"] is True
                assert greeted["result"]["messages"][0]["content"]["text"] == "Write a greeting for decline."
                shown = await tab.wait_notification("calls/outcome", lambda p: p["callId"] == "r-1")
                assert shown["result"]["contents"][0]["text"] == "The guarded document plan."
            await until(lambda: not live_calls(b.data_dir), "the rows to go")


async def test_a_pending_round_of_a_stdio_server_is_reported_interrupted_not_asked_again(tmp_path: Path) -> None:
    """A stdio server lives and dies with its replica: its round used to be asked again on the other replica, and
    the answer then failed with "Invalid or expired requestState" (7 of 7; issue 24)."""
    with two_replicas(tmp_path, {"elicit": stdio_server("elicit")}) as (a, b):
        async with a.connect() as ws_a:
            assert (await ws_a.wait_connected("elicit"))["era"] == "modern"
            start_tool_call(ws_a, "elicit", "multi_round", "call-1", {"rounds": 2})
            await ws_a.wait_notification("elicitation/request")
            await until(lambda: [r for r in live_calls(a.data_dir) if r["sealed_round"] is not None], "the round")
            kill(a, signal.SIGKILL)

        async with b.connect() as ws_b:
            outcome = await ws_b.wait_notification("calls/outcome", lambda p: p["callId"] == "call-1")
            assert outcome["interrupted"] is True and outcome["reason"] == "interrupted"
            assert "stdio servers are not shared" in outcome["error"]["message"]
            assert (outcome["server"], outcome["name"]) == ("elicit", "multi_round")
            await until(lambda: not live_calls(b.data_dir), "the reported row to go")
            # Nobody was asked for nothing: the outcome came, and no question before it.
            assert not [n for n in ws_b.notifications if n["method"] == "elicitation/request"]
