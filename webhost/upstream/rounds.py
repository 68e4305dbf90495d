"""2026-07-28 input rounds, seen from outside the SDK: each round of a request, and resuming one elsewhere.

The SDK's MRTR driver answers rounds through the elicitation/sampling/roots callbacks and never shows
the `requestState` it echoes. To let another replica resume a call whose replica stopped, webhost must
write down each round as it arrives: `watching` tells the listener in `round_listener` (a context
variable, set by whoever runs the call) about every `InputRequiredResult` of the request running in this
task, and again when the round's answers go back to the server. The rounds reach it through the seam's
`RoundObservingClient` (`upstream/sdk/client.py`; sdk_workarounds.py, item 4).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from typing import Any

from mcp.types import CreateMessageResult, ElicitResult, InputRequiredResult, InputResponse, ListRootsResult

from .results import to_wire
from .sdk import round_observer

# (the request as {"method", "params"}, the round as {"inputRequests", "requestState"}; None once it was answered)
RoundListener = Callable[[dict[str, Any], dict[str, Any] | None], None]
round_listener: ContextVar[RoundListener | None] = ContextVar("round_listener", default=None)

RESPONSE_TYPES: dict[str, type[ElicitResult] | type[CreateMessageResult] | type[ListRootsResult]] = {
    "elicitation/create": ElicitResult,
    "sampling/createMessage": CreateMessageResult,
    "roots/list": ListRootsResult,
}


@contextmanager
def watching(request: dict[str, Any]) -> Iterator[None]:
    """Report the rounds of `request` (run inside this block) to the current `round_listener`, if any."""
    listener = round_listener.get()
    if listener is None:
        yield
        return

    def seen(result: InputRequiredResult | None) -> None:
        if result is None:
            listener(request, None)
            return
        wire = to_wire(result)
        listener(request, {"inputRequests": wire.get("inputRequests") or {}, "requestState": result.request_state})

    token = round_observer.set(seen)
    try:
        yield
    finally:
        round_observer.reset(token)


def input_responses(requests: dict[str, Any], answers: dict[str, dict[str, Any]]) -> dict[str, InputResponse]:
    """The SDK's typed `inputResponses` for a round's answers (wire dicts), by the kind each key asked."""
    typed: dict[str, InputResponse] = {}
    for key, answer in answers.items():
        asked = requests.get(key)
        kind = asked.get("method") if isinstance(asked, dict) else None
        model = RESPONSE_TYPES.get(str(kind))
        if model is not None:
            typed[key] = model.model_validate(answer)
    return typed
