"""Answers to pending input requests (elicitation, sampling). The broker validates before release."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from . import _params

if TYPE_CHECKING:
    from webhost.session import BrowserSession


async def respond(session: BrowserSession, params: dict[str, Any]) -> dict[str, Any]:
    request_id = _params.string(params, "id", max_length=200)
    answer = {k: v for k, v in params.items() if k in ("action", "content")}
    session.broker.respond(request_id, answer)
    return {}


METHODS = {"elicitation/respond": respond}
