"""A script rule's events as the steps of a real streamed answer: OpenAI Chat Completions chunks
(`data: {...}`, `data: [DONE]`) or Anthropic Messages events (`event: X` + `data: {...}`), each with
the quirks of model_script.QUIRKS that real servers show."""

from __future__ import annotations

import json
from typing import Any

from tests.support.model_script import Step, fault_message, sse, steps_before, tools_of

OPENAI_FINISH = {"end": "stop", "tool_calls": "tool_calls", "length": "length"}
ANTHROPIC_STOP = {"end": "end_turn", "tool_calls": "tool_use", "length": "max_tokens"}
ANTHROPIC_ERRORS = {
    400: "invalid_request_error",
    401: "authentication_error",
    403: "permission_error",
    404: "not_found_error",
    429: "rate_limit_error",
    500: "api_error",
    529: "overloaded_error",
}


class ScriptError(ValueError):
    """A script this wire cannot send (told to the test as a 500 answer)."""


def default_stop(events: list[dict[str, Any]]) -> str:
    return "tool_calls" if tools_of(events) else "end"


def openai_steps(events: list[dict[str, Any]], *, model: str, key: str, include_usage: bool) -> list[Step]:
    steps: list[Step] = []
    quirk: str | None = None
    indices: dict[str, int] = {}
    held: dict[str, dict[str, Any]] = {}  # ollama-whole: the calls sent with the finish
    usage: dict[str, Any] | None = None
    stopped = False

    def chunk(delta: dict[str, Any], finish: str | None = None) -> bytes:
        choice = {"index": 0, "delta": delta, "finish_reason": finish}
        return sse(
            {
                "id": "chatcmpl-scripted",
                "object": "chat.completion.chunk",
                "created": 0,
                "model": model,
                "choices": [choice],
            }
        )

    def call_delta(call_id: str, *, first: bool, arguments: object = None, has_args: bool = True) -> dict[str, Any]:
        delta: dict[str, Any] = {}
        if quirk != "no-index":
            delta["index"] = 0 if quirk == "index-zero" else indices[call_id]
        if first or quirk == "llamacpp-repeat-name":
            delta |= {"id": call_id, "type": "function"}
        function: dict[str, Any] = {}
        if first or quirk == "llamacpp-repeat-name":
            function["name"] = names[call_id]
        if has_args:
            function["arguments"] = arguments
        return delta | {"function": function}

    names: dict[str, str] = {}
    steps.append(chunk({"role": "assistant", "content": ""}))
    for event in events:
        steps += steps_before(event)
        if "cut" in event:
            return steps
        if "quirk" in event:
            quirk = event["quirk"]
        elif "raw" in event:
            steps.append(str(event["raw"]).encode())
        elif "text" in event:
            steps.append(chunk({"content": event["text"]}))
        elif "tool" in event:
            tool = event["tool"]
            indices[tool["id"]], names[tool["id"]] = len(indices), tool["name"]
            fragments = [str(fragment) for fragment in tool.get("args", [])]
            whole = "".join(fragments)
            if quirk == "ollama-whole":
                held[tool["id"]] = call_delta(tool["id"], first=True, arguments=whole)
            elif quirk in ("vllm-empty-args", "vllm-no-args"):
                steps.append(
                    chunk(
                        {
                            "tool_calls": [
                                call_delta(tool["id"], first=True, arguments="", has_args=quirk == "vllm-empty-args")
                            ]
                        }
                    )
                )
            elif quirk == "object-args":
                steps.append(chunk({"tool_calls": [call_delta(tool["id"], first=True, arguments=json.loads(whole))]}))
            else:
                steps.append(chunk({"tool_calls": [call_delta(tool["id"], first=True, arguments="")]}))
                steps += [chunk({"tool_calls": [call_delta(tool["id"], first=False, arguments=f)]}) for f in fragments]
        elif "args" in event:
            call_id, fragment = event["args"]["id"], str(event["args"]["fragment"])
            if call_id in held:
                held[call_id]["function"]["arguments"] += fragment
            else:
                steps.append(chunk({"tool_calls": [call_delta(call_id, first=False, arguments=fragment)]}))
        elif "usage" in event:
            usage = event["usage"]
        elif "stop" in event:
            steps.append(_openai_finish(chunk, held, event["stop"]))
            stopped = True
        elif "status" in event:
            error = {"message": fault_message(event, model, key), "type": "server_error", "code": event["status"]}
            return [*steps, sse({"error": error})]
    if not stopped:
        steps.append(_openai_finish(chunk, held, default_stop(events)))
    if usage is not None and include_usage:
        counts = {"prompt_tokens": usage.get("input", 0), "completion_tokens": usage.get("output", 0)}
        counts["total_tokens"] = counts["prompt_tokens"] + counts["completion_tokens"]
        steps.append(
            sse(
                {
                    "id": "chatcmpl-scripted",
                    "object": "chat.completion.chunk",
                    "created": 0,
                    "model": model,
                    "choices": [],
                    "usage": counts,
                }
            )
        )
    return [*steps, b"data: [DONE]\n\n"]


def _openai_finish(chunk: Any, held: dict[str, dict[str, Any]], stop: str) -> bytes:
    finish = OPENAI_FINISH.get(stop, stop)
    if held:  # Ollama: all calls whole, in the chunk that ends the answer
        return bytes(chunk({"tool_calls": list(held.values())}, finish))
    return bytes(chunk({}, finish))


def anthropic_steps(events: list[dict[str, Any]], *, model: str, key: str) -> list[Step]:
    usage: dict[str, Any] = next((event["usage"] for event in reversed(events) if "usage" in event), {})
    start_usage = {
        "input_tokens": usage.get("input", 0),
        "output_tokens": 1,  # a running total, as Anthropic sends it: the adapter must not add it to the final one
        "cache_creation_input_tokens": usage.get("cacheWrite", 0),
        "cache_read_input_tokens": usage.get("cacheRead", 0),
    }
    message: dict[str, Any] = {
        "id": "msg_scripted",
        "type": "message",
        "role": "assistant",
        "model": model,
        "content": [],
        "stop_reason": None,
        "stop_sequence": None,
        "usage": start_usage,
    }
    steps: list[Step] = [
        sse({"type": "message_start", "message": message}, "message_start"),
        sse({"type": "ping"}, "ping"),
    ]
    quirk: str | None = None
    index = -1
    open_block: dict[str, Any] | None = None  # {"kind": "text"} or {"kind": "tool", "id", "held": [...]}

    def close() -> list[Step]:
        nonlocal open_block
        if open_block is None:
            return []
        out: list[Step] = []
        if open_block["kind"] == "tool" and open_block["held"]:
            delta = {"type": "input_json_delta", "partial_json": "".join(open_block["held"])}
            out.append(sse({"type": "content_block_delta", "index": index, "delta": delta}, "content_block_delta"))
        out.append(sse({"type": "content_block_stop", "index": index}, "content_block_stop"))
        open_block = None
        return out

    def start(block: dict[str, Any]) -> bytes:
        return sse({"type": "content_block_start", "index": index, "content_block": block}, "content_block_start")

    def delta(payload: dict[str, Any]) -> bytes:
        return sse({"type": "content_block_delta", "index": index, "delta": payload}, "content_block_delta")

    def fragment(text: str) -> list[Step]:
        assert open_block is not None
        if quirk == "anthropic-buffered":
            open_block["held"].append(text)
            return []
        if quirk == "anthropic-input-in-start":
            return []
        return [delta({"type": "input_json_delta", "partial_json": text})]

    stopped = False
    for event in events:
        steps += steps_before(event)
        if "cut" in event:
            return steps
        if "quirk" in event:
            quirk = event["quirk"]
        elif "raw" in event:
            steps.append(str(event["raw"]).encode())
        elif "text" in event:
            if open_block is None or open_block["kind"] != "text":
                steps += close()
                index += 1
                open_block = {"kind": "text"}
                text_block = {"type": "text", "text": ""}
                steps.append(
                    sse(
                        {"type": "content_block_start", "index": index, "content_block": text_block},
                        "content_block_start",
                    )
                )
            steps.append(delta({"type": "text_delta", "text": event["text"]}))
        elif "tool" in event:
            tool = event["tool"]
            steps += close()
            index += 1
            fragments = [str(f) for f in tool.get("args", [])]
            given = json.loads("".join(fragments) or "{}") if quirk == "anthropic-input-in-start" else {}
            open_block = {"kind": "tool", "id": tool["id"], "held": []}
            steps.append(start({"type": "tool_use", "id": tool["id"], "name": tool["name"], "input": given}))
            if quirk not in ("anthropic-buffered", "anthropic-input-in-start"):
                steps.append(delta({"type": "input_json_delta", "partial_json": ""}))  # as Anthropic starts
            for text in fragments:
                steps += fragment(text)
        elif "args" in event:
            if open_block is None or open_block.get("id") != event["args"]["id"]:
                raise ScriptError("anthropic content blocks cannot interleave: args for a tool block not open")
            steps += fragment(str(event["args"]["fragment"]))
        elif "stop" in event:
            steps += _anthropic_stop(close(), event["stop"], usage)
            stopped = True
        elif "status" in event:
            status = int(event["status"])
            error = {"type": ANTHROPIC_ERRORS.get(status, "api_error"), "message": fault_message(event, model, key)}
            return [*steps, sse({"type": "error", "error": error}, "error")]
    if not stopped:
        steps += _anthropic_stop(close(), default_stop(events), usage)
    return steps


def _anthropic_stop(closing: list[Step], stop: str, usage: dict[str, Any]) -> list[Step]:
    reason = ANTHROPIC_STOP.get(stop, stop)
    delta = {
        "type": "message_delta",
        "delta": {"stop_reason": reason, "stop_sequence": None},
        "usage": {"output_tokens": usage.get("output", 0)},
    }
    return [*closing, sse(delta, "message_delta"), sse({"type": "message_stop"}, "message_stop")]


__all__ = ["ANTHROPIC_ERRORS", "ScriptError", "anthropic_steps", "openai_steps"]
