"""A conversation's messages as webhost keeps them: what the page draws, what the store seals, what the
next request to the model is built from.

A turn is one user message (typed, or sent by an app with `ui/message`) and one assistant message,
whose parts are the model's text and tool calls in the order they came, over every step of the turn
(a step is one request to the model). A tool call keeps the exact MCP tool it ran (`server`,
`tool`), the arguments, its status and its result, bounded.
"""

from __future__ import annotations

import secrets
import time
from dataclasses import asdict, dataclass, field
from typing import Any, Literal

Role = Literal["user", "assistant"]
MessageStatus = Literal["streaming", "done", "stopped", "error", "interrupted"]
# What the page shows of a tool call (contract §8), plus "streaming" while the model writes its arguments.
CallStatus = Literal["streaming", "approval", "running", "ok", "error", "denied"]


def new_id(prefix: str) -> str:
    return f"{prefix}{secrets.token_urlsafe(9)}"


@dataclass
class ToolCall:
    """One tool call of the model, under the name the model saw and the exact tool it stands for."""

    id: str  # webhost's own id (a model's ids repeat across turns on some endpoints)
    model_call_id: str  # the id the model gave it, sent back with its result
    step: int
    model_name: str
    server: str | None  # None: the model named a tool the person does not have
    tool: str | None
    arguments_text: str = ""
    arguments: dict[str, Any] | None = None
    status: CallStatus = "streaming"
    decision: str | None = None  # "allow" / "ask" / "deny": the policy's, before any approval
    result: dict[str, Any] | None = None  # the MCP result, bounded (content, isError, structuredContent)
    error: str | None = None
    resource_uri: str | None = None  # the tool's app (`_meta.ui.resourceUri`), when it has one
    # While the model writes the arguments: the healed object last sent to the app, so a page that opens the
    # conversation meanwhile gives its app the same (the `args` events before its snapshot are not replayed).
    partial: dict[str, Any] | None = None
    started_at: float = field(default_factory=time.time)
    ended_at: float | None = None

    def finish(self, status: CallStatus, *, result: dict[str, Any] | None = None, error: str | None = None) -> None:
        self.partial = None
        self.status = status
        self.result = result
        self.error = error
        self.ended_at = time.time()


@dataclass
class Part:
    """A piece of an assistant message: its text (`text`) or a tool call (`call`)."""

    text: str | None = None
    call: ToolCall | None = None
    step: int = 1


@dataclass
class Message:
    id: str
    role: Role
    text: str = ""  # a user message's text
    parts: list[Part] = field(default_factory=list)  # an assistant message's text and tool calls
    status: MessageStatus = "done"
    error: str | None = None
    retryable: bool = False
    model: str | None = None
    from_app: dict[str, Any] | None = None  # {"server", "name", "instance"} for a message an app sent
    from_prompt: dict[str, Any] | None = None  # {"server", "name"} for a message of an MCP prompt (prompt_run.py)
    attachments: list[dict[str, Any]] = field(
        default_factory=list
    )  # {"id", "name", "kind", "mimeType"} (attachments.py)
    usage: dict[str, int] = field(default_factory=lambda: {"input": 0, "output": 0})
    steps: int = 0
    created_at: float = field(default_factory=time.time)

    def calls(self) -> list[ToolCall]:
        return [part.call for part in self.parts if part.call is not None]

    def call(self, call_id: str) -> ToolCall | None:
        return next((c for c in self.calls() if c.id == call_id), None)

    def add_text(self, text: str, step: int) -> None:
        last = self.parts[-1] if self.parts else None
        if last is not None and last.text is not None and last.step == step:
            last.text += text
        else:
            self.parts.append(Part(text=text, step=step))

    def full_text(self) -> str:
        if self.role == "user":
            return self.text
        return "".join(part.text or "" for part in self.parts)

    def to_json(self) -> dict[str, Any]:
        """The message as the page has it (the store keeps `stored_json`)."""
        data = asdict(self)
        data["parts"] = [
            {"type": "text", "text": p.text, "step": p.step}
            if p.call is None
            else {"type": "tool", "call": call_json(p.call), "step": p.step}
            for p in self.parts
        ]
        return _camel(data)  # type: ignore[no-any-return]

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> Message:
        parts: list[Part] = []
        for raw in data.get("parts") or []:
            if raw.get("type") == "tool" and isinstance(raw.get("call"), dict):
                parts.append(Part(call=_call_from_json(raw["call"]), step=int(raw.get("step") or 1)))
            elif isinstance(raw.get("text"), str):
                parts.append(Part(text=raw["text"], step=int(raw.get("step") or 1)))
        return cls(
            id=str(data["id"]),
            role="assistant" if data.get("role") == "assistant" else "user",
            text=str(data.get("text") or ""),
            parts=parts,
            status=data.get("status", "done"),
            error=data.get("error"),
            retryable=bool(data.get("retryable")),
            model=data.get("model"),
            from_app=data.get("fromApp"),
            from_prompt=data.get("fromPrompt"),
            attachments=list(data.get("attachments") or []),
            usage=dict(data.get("usage") or {"input": 0, "output": 0}),
            steps=int(data.get("steps") or 0),
            created_at=float(data.get("createdAt") or time.time()),
        )


_CALL_FIELDS = {
    "id": "id",
    "modelCallId": "model_call_id",
    "step": "step",
    "modelName": "model_name",
    "server": "server",
    "tool": "tool",
    "argumentsText": "arguments_text",
    "arguments": "arguments",
    "status": "status",
    "decision": "decision",
    "result": "result",
    "error": "error",
    "resourceUri": "resource_uri",
    "partial": "partial",
    "startedAt": "started_at",
    "endedAt": "ended_at",
}


def call_json(call: ToolCall) -> dict[str, Any]:
    """A tool call as the page and the store have it."""
    return _camel(asdict(call))  # type: ignore[no-any-return]


def _call_from_json(data: dict[str, Any]) -> ToolCall:
    values = {name: data[key] for key, name in _CALL_FIELDS.items() if key in data}
    return ToolCall(**values)


def _camel(value: Any) -> Any:
    """snake_case keys of our own dataclasses as the page's camelCase (values, such as results, untouched)."""
    if isinstance(value, dict):
        out: dict[str, Any] = {}
        for key, item in value.items():
            camel = _to_camel(key) if isinstance(key, str) else key
            keep_inner = key in (
                "result",
                "arguments",
                "partial",
                "usage",
                "from_app",
                "from_prompt",
                "attachments",
            )  # values of theirs, as given
            out[camel] = item if keep_inner else _camel(item)
        return out
    if isinstance(value, list):
        return [_camel(v) for v in value]
    return value


def _to_camel(key: str) -> str:
    head, *rest = key.split("_")
    return head + "".join(word.capitalize() for word in rest)
