"""A new conversation's title: the cleaned first line of its first message (not the whole message as typed)."""

from __future__ import annotations

import re

TITLE_CHARS = 60
_MARKUP = re.compile(r"^(?:#{1,6}\s+|>\s*|[-*+]\s+|\d+[.)]\s+)+")  # a heading, quote or list item's marker
_EMPHASIS = re.compile(r"(\*+|__|`+|~~)")  # bold, italics, code, strikethrough (a single _ stays: snake_case)


def first_line_title(text: str) -> str:
    """The first line with words in it, without markdown markers, on one line, cut at a word past 60 characters."""
    line = next((line for line in text.splitlines() if line.strip(" \t`*_#>-")), "")
    line = _EMPHASIS.sub("", _MARKUP.sub("", line.strip()))
    line = " ".join(line.split())
    if len(line) <= TITLE_CHARS:
        return line or "New conversation"
    cut = line[:TITLE_CHARS].rsplit(" ", 1)[0] if " " in line[:TITLE_CHARS] else line[:TITLE_CHARS]
    return cut.rstrip(",.;:") + "…"
