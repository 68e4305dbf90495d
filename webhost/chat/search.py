"""Search over one person's own conversations (contract §8.1, `[data-testid="chat-search"]`).

The messages are sealed at rest, so there is no index at rest: nothing the database, another person or
an admin could read. The index is this object, in the memory of the replica serving the person's
workspace, built from the person's own conversations, opened with their key, at their first search. Each
search first reads the conversations' titles and times (no text) and opens again only those changed since
(by this replica or any other), so results follow every write. It is dropped when the workspace closes
(`forget`). What is searched: titles, the person's messages and the model's text, in every branch (the first
200,000 characters of each conversation); not tool arguments or results.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import anyio

from webhost.storage.conversations import ConversationStore

MAX_QUERY = 200
MAX_RESULTS = 50
SNIPPET_CHARS = 60  # of context either side of the match
READ_AT_ONCE = 50  # conversations whose messages are read and opened together
MAX_INDEXED_CHARS = 200_000  # of one conversation's text kept for search (its first ones): memory stays bounded


@dataclass
class _Indexed:
    title: str
    updated_at: float
    text: str  # the conversation's messages, one a line
    folded: str  # `text` in lower case, searched


class ConversationSearch:
    def __init__(self, store: Callable[[], ConversationStore], person_id: str) -> None:
        self._store = store
        self._person = person_id
        self._indexed: dict[str, _Indexed] = {}
        self._refreshing = anyio.Lock()

    async def search(self, query: str) -> list[dict[str, Any]]:
        """The person's conversations whose title or text has every word of `query`, most recent first."""
        terms = query.lower().split()[:20]
        if not terms:
            return []
        await self._refresh()
        found = []
        for conversation_id, entry in self._indexed.items():
            title = entry.title.lower()
            if all(term in title or term in entry.folded for term in terms):
                found.append((entry.updated_at, conversation_id, entry, terms))
        found.sort(key=lambda item: item[0], reverse=True)
        return [
            {"id": cid, "title": entry.title, "updatedAt": at, "snippet": _snippet(entry, words)}
            for at, cid, entry, words in found[:MAX_RESULTS]
        ]

    def __len__(self) -> int:
        """How many conversations are indexed (in this replica's memory)."""
        return len(self._indexed)

    def forget(self) -> None:
        self._indexed.clear()

    async def _refresh(self) -> None:
        async with self._refreshing:
            store = self._store()
            now = await store.activity(self._person)
            for gone in set(self._indexed) - set(now):
                del self._indexed[gone]
            changed = []
            for conversation_id, (title, updated_at) in now.items():
                entry = self._indexed.get(conversation_id)
                if entry is None or entry.updated_at != updated_at:
                    changed.append(conversation_id)
                else:
                    entry.title = title  # a rename is not activity: the time stays, the title changes
            for at in range(0, len(changed), READ_AT_ONCE):  # a few conversations' messages in memory at a time
                opened = await store.bodies(self._person, changed[at : at + READ_AT_ONCE])
                for conversation_id, bodies in opened.items():
                    title, updated_at = now[conversation_id]
                    text = "\n".join(filter(None, (_text_of(body) for body in bodies)))[:MAX_INDEXED_CHARS]
                    self._indexed[conversation_id] = _Indexed(title, updated_at, text, text.lower())


def _text_of(body: dict[str, Any]) -> str:
    if body.get("role") == "user":
        return str(body.get("text") or "")
    return "".join(str(part.get("text") or "") for part in body.get("parts") or [] if part.get("type") == "text")


def _snippet(entry: _Indexed, terms: list[str]) -> str:
    """Some words around the first match in the text (none when only the title matched)."""
    for term in terms:
        at = entry.folded.find(term)
        if at < 0:
            continue
        if len(entry.folded) != len(entry.text):  # lower() changed the length (rare letters): find it in the text
            match = re.search(re.escape(term), entry.text, re.IGNORECASE)
            if match is None:
                continue
            at = match.start()
        start, end = max(0, at - SNIPPET_CHARS), min(len(entry.text), at + len(term) + SNIPPET_CHARS)
        text = " ".join(entry.text[start:end].split())
        return ("…" if start else "") + text + ("…" if end < len(entry.text) else "")
    return ""
