"""`ProviderError`: one clear line for the conversation when a model endpoint fails.

The line never holds the API key (every message is redacted with the endpoint's secrets before it is
built into an error) and never a traceback; `kind` lets the page and the loop tell the cases apart,
`retryable` says whether trying the same request again can help.
"""

from __future__ import annotations

import math
import time
from email.utils import parsedate_to_datetime
from typing import Literal

ErrorKind = Literal[
    "auth",
    "forbidden",
    "not-found",
    "rate-limited",
    "server",
    "unreachable",
    "interrupted",
    "bad-request",
    "bad-url",
    "other",
]

RETRYABLE: frozenset[ErrorKind] = frozenset({"rate-limited", "server", "unreachable", "interrupted"})


class ProviderError(Exception):
    """A model endpoint's failure, as one line for the person (no key, no traceback)."""

    message: str
    kind: ErrorKind
    status: int | None
    retry_after: float | None
    retryable: bool

    def __init__(
        self,
        message: str,
        kind: ErrorKind,
        *,
        status: int | None = None,
        retry_after: float | None = None,
        retryable: bool | None = None,
    ) -> None:
        super().__init__(message)
        self.message = message
        self.kind = kind
        self.status = status
        self.retry_after = retry_after
        self.retryable = kind in RETRYABLE if retryable is None else retryable

    def __repr__(self) -> str:
        return f"ProviderError({self.message!r}, kind={self.kind!r}, status={self.status!r})"


def parse_retry_after(value: str | None, *, now: float | None = None) -> float | None:
    """Seconds to wait from a `retry-after` header: a number of seconds or an HTTP date; None when absent
    or unreadable. A date in the past is 0."""
    if not value or not value.strip():
        return None
    text = value.strip()
    try:
        seconds = float(text)
    except ValueError:
        try:
            when = parsedate_to_datetime(text)
        except (TypeError, ValueError, IndexError):
            return None
        seconds = when.timestamp() - (time.time() if now is None else now)
    if math.isnan(seconds) or math.isinf(seconds):
        return None
    return max(0.0, seconds)


def retry_after_of(headers: dict[str, str]) -> float | None:
    """The wait a 429 (or 503) asks for: OpenAI's `retry-after-ms` first, then the standard `retry-after`."""
    lowered = {name.lower(): value for name, value in headers.items()}
    millis = parse_retry_after(lowered.get("retry-after-ms"))
    if millis is not None:
        return millis / 1000
    return parse_retry_after(lowered.get("retry-after"))


def wait_phrase(seconds: float) -> str:
    """`try again in 3 s` (whole seconds, rounded up; at least 1)."""
    return f"try again in {max(1, math.ceil(seconds))} s"


__all__ = ["RETRYABLE", "ErrorKind", "ProviderError", "parse_retry_after", "retry_after_of", "wait_phrase"]
