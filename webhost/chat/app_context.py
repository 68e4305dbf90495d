"""What each app open in a conversation last gave the model (`ui/update-model-context`), per app instance.

Last write wins per instance (two views of one server keep two contexts, unlike hosts that key it by
server); the person may remove one, and an app closed or removed from the conversation drops its own.
Each is cut to `maxAppContextChars`, and all of them together to `maxContextChars` per request; the
page says when one was cut.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Any

import orjson

MAX_BLOCKS = 50


@dataclass
class AppContext:
    instance: str  # the tool call whose app sent it (stable across reloads)
    server: str
    app: str  # the app's name as the page shows it (its tool, or the name it gave in ui/initialize)
    text: str
    full_chars: int  # before it was cut to the per-app cap
    updated_at: float = field(default_factory=time.time)

    @property
    def cut(self) -> bool:
        return self.full_chars > len(self.text)

    def to_json(self) -> dict[str, Any]:
        return {
            "instance": self.instance,
            "server": self.server,
            "app": self.app,
            "text": self.text,
            "fullChars": self.full_chars,
            "cut": self.cut,
            "updatedAt": self.updated_at,
        }

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> AppContext:
        return cls(
            instance=str(data["instance"]),
            server=str(data["server"]),
            app=str(data.get("app") or data["server"]),
            text=str(data.get("text") or ""),
            full_chars=int(data.get("fullChars") or 0),
            updated_at=float(data.get("updatedAt") or time.time()),
        )


def context_text(params: dict[str, Any]) -> str:
    """The text of a `ui/update-model-context`: its text blocks, then its structuredContent as JSON."""
    pieces: list[str] = []
    content = params.get("content")
    for block in content[:MAX_BLOCKS] if isinstance(content, list) else []:
        if isinstance(block, dict) and block.get("type") == "text" and isinstance(block.get("text"), str):
            pieces.append(block["text"])
    if params.get("structuredContent") is not None:
        try:
            pieces.append(orjson.dumps(params["structuredContent"]).decode())
        except TypeError:
            pass
    return "\n".join(pieces)


def make_context(instance: str, server: str, app: str, params: dict[str, Any], *, limit: int) -> AppContext:
    text = context_text(params)
    return AppContext(instance=instance, server=server, app=app, text=text[:limit], full_chars=len(text))
