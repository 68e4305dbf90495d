"""A conversation as a file to download (contract §8.1, `[data-action="export"]`): the branch shown, as
Markdown to read or as JSON to process. Tool calls are given with their arguments and the text of their
result; a tool's structured content and an app's own data stay out of the Markdown (the JSON has them)."""

from __future__ import annotations

import re
import time
from typing import Any, Literal

import orjson

Format = Literal["md", "json"]
_UNSAFE_NAME = re.compile(r"[^A-Za-z0-9._ -]+")


def filename(title: str, fmt: Format) -> str:
    stem = " ".join(_UNSAFE_NAME.sub(" ", title).split())[:80] or "conversation"
    return f"{stem}.{fmt}"


def as_json(summary: dict[str, Any], messages: list[dict[str, Any]]) -> str:
    kept = [{key: value for key, value in m.items() if key != "branch"} for m in messages]
    document = {"conversation": summary, "exportedAt": time.time(), "messages": kept}
    return orjson.dumps(document, option=orjson.OPT_INDENT_2).decode()


def as_markdown(summary: dict[str, Any], messages: list[dict[str, Any]]) -> str:
    lines = [f"# {summary.get('title') or 'Conversation'}", ""]
    for message in messages:
        if message.get("role") == "user":
            lines += ["## You", "", str(message.get("text") or ""), ""]
            continue
        model = message.get("model")
        lines += [f"## Assistant ({model})" if model else "## Assistant", ""]
        for part in message.get("parts") or []:
            if part.get("type") == "tool" and isinstance(part.get("call"), dict):
                lines += _call(part["call"])
            elif part.get("text"):
                lines += [str(part["text"]), ""]
        if message.get("status") == "stopped":
            lines += ["*(stopped)*", ""]
        elif message.get("error"):
            lines += [f"*({message['error']})*", ""]
    return "\n".join(lines).rstrip() + "\n"


def _call(call: dict[str, Any]) -> list[str]:
    name = f"{call.get('server')}/{call.get('tool')}" if call.get("server") else str(call.get("modelName"))
    lines = [f"**Tool call** `{name}` ({call.get('status')})", ""]
    if call.get("arguments"):
        lines += [_fenced("json", orjson.dumps(call["arguments"], option=orjson.OPT_INDENT_2).decode())]
    texts = [
        str(block.get("text"))
        for block in ((call.get("result") or {}).get("content") or [])
        if isinstance(block, dict) and block.get("type") == "text"
    ]
    if texts:
        lines += [_fenced("text", "\n".join(texts))]
    if call.get("error"):
        lines += [f"Error: {call['error']}", ""]
    return lines


def _fenced(lang: str, body: str) -> str:
    """A fenced block whose fence is longer than any run of backticks inside it."""
    longest = max((len(run) for run in re.findall(r"`+", body)), default=0)
    fence = "`" * max(3, longest + 1)
    return f"{fence}{lang}\n{body}\n{fence}\n"
