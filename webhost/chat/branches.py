"""A conversation's messages as a tree, and the one branch of it shown.

Each message names its parent, the message before it in its branch (None for a first message). Messages
with the same parent are versions of one another (an edited question, a regenerated answer), in the order
they were written (`seq`). The branch shown is the path from a first message to `leaf`; showing another
version of a message shows, below it, the newest version at each later fork.
"""

from __future__ import annotations

from typing import Any

from webhost.chat.transcript import Message


class Branches:
    def __init__(self, leaf: str | None = None) -> None:
        self.leaf = leaf  # None: the newest message's branch
        self._messages: dict[str, Message] = {}
        self._parent: dict[str, str | None] = {}
        self._seq: dict[str, int] = {}
        self._shown: list[Message] | None = None  # the path to `leaf`, until something changes
        self._kids: dict[str | None, list[str]] | None = None  # each message's children, until one is added

    def put(self, message: Message, parent: str | None, seq: int) -> None:
        """A stored message, read back (in `seq` order)."""
        self._messages[message.id] = message
        self._parent[message.id] = parent
        self._seq[message.id] = seq
        self._shown = self._kids = None

    def append(self, message: Message) -> None:
        """A new message after the branch shown, which now ends with it."""
        leaf = self._leaf()
        self.put(message, leaf, max(self._seq.values(), default=0) + 1)
        self.leaf = message.id

    def remove(self, message_id: str) -> None:
        """Forget a message (a failed answer asked again); the branch shown then ends at its parent (or at
        the newest message)."""
        self._messages.pop(message_id, None)
        self._seq.pop(message_id, None)
        parent = self._parent.pop(message_id, None)
        if self.leaf == message_id:
            self.leaf = parent
        self._shown = self._kids = None

    def get(self, message_id: str) -> Message | None:
        return self._messages.get(message_id)

    def seq(self, message_id: str) -> int | None:
        return self._seq.get(message_id)

    def parent(self, message_id: str) -> str | None:
        return self._parent.get(message_id)

    def every(self) -> list[Message]:
        return sorted(self._messages.values(), key=lambda m: self._seq[m.id])

    def shown(self) -> list[Message]:
        if self._shown is None:
            path: list[Message] = []
            at = self._leaf()
            seen: set[str] = set()
            while at is not None and at in self._messages and at not in seen:  # a parent past the rows read ends it
                seen.add(at)
                path.append(self._messages[at])
                at = self._parent.get(at)
            self._shown = path[::-1]
        return list(self._shown)

    def show_before(self, message_id: str) -> None:
        """Show the branch up to this message's parent: the next message appended is a new version of it."""
        self.leaf = self._parent.get(message_id)
        if self.leaf is None:
            self.leaf = ""  # nothing shown (a new version of a first message comes next)
        self._shown = None

    def versions(self, message_id: str) -> dict[str, Any] | None:
        """`{"index", "count"}` (1-based) of a message with other versions, else None."""
        siblings = self._siblings(message_id)
        if len(siblings) < 2:
            return None
        return {"index": siblings.index(message_id) + 1, "count": len(siblings)}

    def show_version(self, message_id: str, index: int) -> bool:
        """Show the branch through version `index` of this message; False when there is no such version."""
        if message_id not in self._messages:
            return False
        siblings = self._siblings(message_id)
        if not 1 <= index <= len(siblings):
            return False
        at = siblings[index - 1]
        children = self._children()
        while children.get(at):
            at = children[at][-1]
        self.leaf = at
        self._shown = None
        return True

    def _leaf(self) -> str | None:
        if self.leaf == "":
            return None
        if self.leaf is not None and self.leaf in self._messages:
            return self.leaf
        return max(self._seq, key=self._seq.__getitem__, default=None)

    def _children(self) -> dict[str | None, list[str]]:
        if self._kids is None:
            self._kids = {}
            for message_id in sorted(self._seq, key=self._seq.__getitem__):
                self._kids.setdefault(self._parent.get(message_id), []).append(message_id)
        return self._kids

    def _siblings(self, message_id: str) -> list[str]:
        return self._children().get(self._parent.get(message_id), [])
