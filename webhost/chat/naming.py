"""The names the model sees for the person's tools: unique across servers, valid for both providers, stable.

OpenAI and Anthropic both take tool names matching `^[a-zA-Z0-9_-]{1,64}$`. A tool is offered as
`SERVER__TOOL` when that is such a name and no other tool of the set has it; otherwise (a `.` in a
name, more than 64 characters, a clash) as a cut, cleaned name with a short hash of the exact pair, so
the same tool keeps the same name from one request to the next, and every name maps back exactly.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Iterable
from dataclasses import dataclass

MAX_NAME = 64
SEPARATOR = "__"
_VALID = re.compile(r"^[A-Za-z0-9_-]{1,64}$")
_UNSAFE = re.compile(r"[^A-Za-z0-9_-]+")


@dataclass(frozen=True)
class ToolRef:
    server: str
    tool: str


def _hashed(ref: ToolRef) -> str:
    digest = hashlib.sha256(f"{ref.server}\0{ref.tool}".encode()).hexdigest()[:8]
    base = _UNSAFE.sub("_", f"{ref.server}{SEPARATOR}{ref.tool}").strip("_") or "tool"
    return f"{base[: MAX_NAME - 9]}_{digest}"


class ToolNames:
    """Both ways between the model's names and (server, tool), for one set of tools."""

    def __init__(self, refs: Iterable[ToolRef]) -> None:
        unique = list(dict.fromkeys(refs))
        plain: dict[str, list[ToolRef]] = {}
        for ref in unique:
            plain.setdefault(f"{ref.server}{SEPARATOR}{ref.tool}", []).append(ref)
        self._by_name: dict[str, ToolRef] = {}
        self._by_ref: dict[ToolRef, str] = {}
        for ref in unique:
            name = f"{ref.server}{SEPARATOR}{ref.tool}"
            if not _VALID.match(name) or len(plain[name]) > 1:
                name = _hashed(ref)
            self._by_name[name] = ref
            self._by_ref[ref] = name

    def name(self, ref: ToolRef) -> str:
        return self._by_ref[ref]

    def ref(self, name: str) -> ToolRef | None:
        """The tool a name the model used stands for (None: no tool of this set has it)."""
        return self._by_name.get(name)

    def __len__(self) -> int:
        return len(self._by_name)
