"""Tasks (issue 25, item 1), through the page's WebSocket against tests/servers/tasks.py in process, in both
eras: a tool that needs a task runs as one and the call answers with its end; the person's tasks are listed,
followed (status, its message, the result or error) and cancelled; a task outlives the tab that started it."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from mcp.server import MCPServer

from tests.support.fast import connected_tab, error_of, text
from tests.support.inprocess import AsgiWsClient, in_process_host, sdk_server
from tests.support.process import start_tool_call

pytestmark = pytest.mark.anyio

ERAS = {"modern": frozenset[str](), "legacy": frozenset({"tasks"})}


def tasks_server() -> dict[str, MCPServer[Any]]:
    sdk_server("basic")  # puts tests/servers on sys.path
    return {"tasks": sdk_server("tasks")}


async def changed(tab: AsgiWsClient, status: str, tool: str | None = None) -> dict[str, Any]:
    note = await tab.wait_notification(
        "tasks/changed", lambda p: p["task"]["status"] == status and tool in (None, p["task"]["tool"])
    )
    task: dict[str, Any] = note["task"]
    return task


@pytest.mark.parametrize("era", list(ERAS))
async def test_a_tool_that_needs_a_task_runs_as_one_and_the_call_answers_with_its_end(tmp_path: Path, era: str) -> None:
    async with connected_tab(tmp_path, tasks_server(), legacy=ERAS[era]) as tab:
        state = await tab.wait_connected("tasks")
        assert state["era"] == era
        if era == "modern":  # advertised on every request: the grid shows it
            assert "io.modelcontextprotocol/tasks" in state["clientCapabilities"]["extensions"]
        result = await tab.request(
            "tools/call", {"server": "tasks", "name": "long_job", "arguments": {"steps": 3}, "callId": "c-1"}
        )
        assert text(result) == "done after 3 steps"
        assert result["webhost"]["task"]["status"] == "completed"
        working = await changed(tab, "working")
        assert working["tool"] == "long_job" and working["callId"] == "c-1"
        done = await changed(tab, "completed")
        assert done["statusMessage"] == "done after 3 steps"  # the server's own words, as each poll saw them
        listed = (await tab.request("tasks/list"))["tasks"]
        assert [(t["tool"], t["status"], t["task"]["era"]) for t in listed] == [("long_job", "completed", era)]
        full = (await tab.request("tasks/get", {"id": listed[0]["id"]}))["task"]
        assert full["result"]["content"][0]["text"] == "done after 3 steps" and full["error"] is None
        # The call's progress said it became a task.
        progress = await tab.wait_notification("progress", lambda p: p["callId"] == "c-1")
        assert "running as task" in progress["message"]
        if era == "legacy":  # the server's status notifications reached the activity log
            await tab.wait_notification("activity", lambda p: p["entry"]["method"] == "notifications/tasks/status")


@pytest.mark.parametrize("era", list(ERAS))
async def test_a_failed_task_fails_the_call_with_the_task_s_error(tmp_path: Path, era: str) -> None:
    async with connected_tab(tmp_path, tasks_server(), legacy=ERAS[era]) as tab:
        response = await tab.request_raw(
            "tools/call",
            {"server": "tasks", "name": "long_job", "arguments": {"steps": 1, "fail": True}, "callId": "c-f"},
        )
        error = error_of(response)
        assert "the job failed on purpose" in error["message"]
        assert error["data"]["task"]["status"] == "failed"
        listed = (await tab.request("tasks/list"))["tasks"]
        full = (await tab.request("tasks/get", {"id": listed[0]["id"]}))["task"]
        assert full["status"] == "failed" and "failed on purpose" in full["error"]["message"]


@pytest.mark.parametrize("era", list(ERAS))
async def test_a_task_is_cancelled_from_the_tasks_list_or_by_cancelling_its_call(tmp_path: Path, era: str) -> None:
    async with connected_tab(tmp_path, tasks_server(), legacy=ERAS[era]) as tab:
        call = start_tool_call(tab, "tasks", "wait_job", "c-w", {"label": f"cancel-{era}"})
        working = await changed(tab, "working", "wait_job")
        cancelled = await tab.request("tasks/cancel", {"id": working["id"]})
        assert cancelled["task"]["id"] == working["id"]
        await changed(tab, "cancelled", "wait_job")
        answer = error_of(await tab.wait_response(call))
        assert answer["code"] == -32800 and answer["data"]["task"]["status"] == "cancelled"

        call = start_tool_call(tab, "tasks", "wait_job", "c-w2", {"label": f"cancel-call-{era}"})
        second = await tab.wait_notification("tasks/changed", lambda p: p["task"]["callId"] == "c-w2")
        assert (await tab.request("tools/cancel", {"callId": "c-w2"}))["cancelled"] is True
        await tab.wait_notification(
            "tasks/changed", lambda p: p["task"]["id"] == second["task"]["id"] and p["task"]["status"] == "cancelled"
        )
        assert error_of(await tab.wait_response(call))["code"] == -32800


@pytest.mark.parametrize("era", list(ERAS))
async def test_a_task_outlives_the_tab_that_started_it(tmp_path: Path, era: str) -> None:
    label = f"reload-{era}"
    async with in_process_host(tmp_path, tasks_server(), legacy=ERAS[era]) as host:
        async with host.tab() as first:  # closed at the end of this block (a reload): its call ends, not the task
            await first.wait_connected("tasks")
            start_tool_call(first, "tasks", "wait_job", "c-r", {"label": label})
            working = await changed(first, "working", "wait_job")
        async with host.tab() as second:
            listed = (await second.request("tasks/list"))["tasks"]
            assert [(t["id"], t["status"]) for t in listed] == [(working["id"], "working")]
            await second.request(
                "tools/call", {"server": "tasks", "name": "release", "arguments": {"label": label}, "callId": "r"}
            )
            done = await changed(second, "completed", "wait_job")
            assert done["id"] == working["id"] and done["hasResult"] is True
            full = (await second.request("tasks/get", {"id": working["id"]}))["task"]
            assert full["result"]["content"][0]["text"] == f"released {label}"


async def test_an_optional_task_is_asked_for_only_when_the_caller_wants_one_before_2026(tmp_path: Path) -> None:
    async with connected_tab(tmp_path, tasks_server(), legacy=ERAS["legacy"]) as tab:
        plain = await tab.request(
            "tools/call", {"server": "tasks", "name": "maybe_job", "arguments": {"text": "a"}, "callId": "p"}
        )
        assert text(plain) == "maybe a" and "task" not in plain.get("webhost", {})
        tasked = await tab.request(
            "tools/call",
            {"server": "tasks", "name": "maybe_job", "arguments": {"text": "b"}, "callId": "t", "asTask": True},
        )
        assert text(tasked) == "maybe b" and tasked["webhost"]["task"]["status"] == "completed"
        listed = await tab.request("tasks/list", {"server": "tasks"})
        assert [t["tool"] for t in listed["tasks"]] == ["maybe_job"]
        assert any(t["status"] == "completed" for t in listed["serverTasks"])  # the server's own tasks/list


@pytest.mark.parametrize("era", list(ERAS))
async def test_the_chat_s_model_calls_a_task_tool_and_gets_the_task_s_result(tmp_path: Path, era: str) -> None:
    from tests.fast.test_chat_inprocess import calls_of, chat_options, final, text_of
    from tests.support.model_endpoint import running_model_endpoint

    with running_model_endpoint() as endpoint:
        script = f"task-{era}"
        endpoint.script(
            script,
            [
                {
                    "match": "Run",
                    "times": 1,
                    "events": [{"tool": {"id": "call_1", "name": "tasks__long_job", "args": ['{"steps": 2}']}}],
                },
                {"events": [{"text": "The job is done."}]},
            ],
        )
        options = chat_options(endpoint, script, toolCalls="allow")
        async with in_process_host(tmp_path, tasks_server(), webhost_options=options, legacy=ERAS[era]) as host:
            async with host.tab() as tab:
                await tab.wait_connected("tasks")
                sent = await tab.request("chat/send", {"text": "Run the long job"})
                answer = await final(tab, sent["conversationId"])
                assert answer["status"] == "done" and text_of(answer) == "The job is done."
                [call] = calls_of(answer)
                assert (call["tool"], call["status"]) == ("long_job", "ok")
                done = await changed(tab, "completed", "long_job")
                assert done["hasResult"] is True and done["server"] == "tasks"
                second = endpoint.requests(script)[-1]["body"]["messages"]
                tool_message = next(m for m in second if m["role"] == "tool")
                assert "done after 2 steps" in str(tool_message["content"])


@pytest.mark.parametrize("era", list(ERAS))
async def test_stopping_the_chat_s_turn_cancels_the_task_its_call_waits_for(tmp_path: Path, era: str) -> None:
    from tests.fast.test_chat_inprocess import calls_of, chat_options, final
    from tests.support.model_endpoint import running_model_endpoint

    with running_model_endpoint() as endpoint:
        script = f"stop-task-{era}"
        call = {"id": "call_1", "name": "tasks__wait_job", "args": [f'{{"label": "stop-{era}"}}']}
        endpoint.script(script, [{"events": [{"tool": call}]}])
        options = chat_options(endpoint, script, toolCalls="allow")
        async with in_process_host(tmp_path, tasks_server(), webhost_options=options, legacy=ERAS[era]) as host:
            async with host.tab() as tab:
                await tab.wait_connected("tasks")
                sent = await tab.request("chat/send", {"text": "Wait for the job"})
                working = await changed(tab, "working", "wait_job")
                assert (await tab.request("chat/stop", {"conversationId": sent["conversationId"]}))["stopped"]
                cancelled = await changed(tab, "cancelled", "wait_job")
                assert cancelled["id"] == working["id"]
                answer = await final(tab, sent["conversationId"])
                [stopped] = calls_of(answer)
                assert stopped["status"] == "error"


async def test_a_task_s_progress_before_2026_reaches_the_tasks_list(tmp_path: Path) -> None:
    async with connected_tab(tmp_path, tasks_server(), legacy=ERAS["legacy"]) as tab:
        result = await tab.request(
            "tools/call", {"server": "tasks", "name": "long_job", "arguments": {"steps": 2}, "callId": "c-p"}
        )
        assert text(result) == "done after 2 steps"
        note = await tab.wait_notification(
            "tasks/changed", lambda p: (p["task"]["progress"] or {}).get("progress") == 2
        )
        assert note["task"]["progress"] == {"progress": 2, "total": 2, "message": "step 2 of 2"}
        [listed] = (await tab.request("tasks/list"))["tasks"]
        assert listed["progress"]["progress"] == 2


@pytest.mark.parametrize("era", list(ERAS))
async def test_a_task_that_needs_input_asks_the_person_and_goes_on(tmp_path: Path, era: str) -> None:
    async with connected_tab(tmp_path, tasks_server(), legacy=ERAS[era]) as tab:
        call = start_tool_call(tab, "tasks", "ask_job", "c-a", {})
        asking = await changed(tab, "input_required", "ask_job")
        assert asking["statusMessage"] == "waiting for a name"
        request = await tab.wait_notification("elicitation/request")
        assert request["server"] == "tasks" and request["message"] == "Whom should the job greet?"
        answer = {"id": request["id"], "action": "accept", "content": {"name": "Ada"}}
        assert await tab.request("elicitation/respond", answer) == {}
        result = (await tab.wait_response(call))["result"]
        assert text(result) == "hello Ada" and result["webhost"]["task"]["status"] == "completed"
        await changed(tab, "completed", "ask_job")


@pytest.mark.parametrize("era", list(ERAS))
async def test_an_app_s_call_of_a_task_tool_gets_the_task_s_result(tmp_path: Path, era: str) -> None:
    async with connected_tab(tmp_path, tasks_server(), legacy=ERAS[era]) as tab:
        frame = (await tab.request("apps/open", {"server": "tasks", "tool": "job_board"}))["frameId"]
        params = {"name": "long_job", "arguments": {"steps": 2}}
        result = await tab.request("apps/request", {"frameId": frame, "method": "tools/call", "params": params})
        assert text(result) == "done after 2 steps" and result["webhost"]["task"]["status"] == "completed"
        done = await changed(tab, "completed", "long_job")
        assert done["callId"] is None and done["hasResult"] is True
