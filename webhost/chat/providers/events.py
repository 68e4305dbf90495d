"""What a provider's stream yields: webhost's own events, the same for every wire format.

Order guarantees (both wires, every quirk normalised): for each tool call, one `ToolCallStart`, then
zero or more `ToolArgsDelta`, then exactly one `ToolCallEnd`; every started call is ended before
`Stop`; `Stop` is last; `Usage` comes at most once, just before `Stop`. A tool call's `index` is
its position among this answer's tool calls (0, 1, ... in the order they start), on both wires.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal


@dataclass(frozen=True)
class TextDelta:
    text: str


@dataclass(frozen=True)
class ToolCallStart:
    index: int
    id: str
    name: str


@dataclass(frozen=True)
class ToolArgsDelta:
    index: int
    fragment: str


@dataclass(frozen=True)
class ToolCallEnd:
    index: int
    arguments: str  # the complete arguments JSON text (normalised: "" or missing -> "{}")


@dataclass(frozen=True)
class Usage:
    input_tokens: int
    output_tokens: int


StopReason = Literal["end", "tool_calls", "length", "other"]


@dataclass(frozen=True)
class Stop:
    reason: StopReason


StreamEvent = TextDelta | ToolCallStart | ToolArgsDelta | ToolCallEnd | Usage | Stop

__all__ = ["Stop", "StopReason", "StreamEvent", "TextDelta", "ToolArgsDelta", "ToolCallEnd", "ToolCallStart", "Usage"]
