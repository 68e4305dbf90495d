"""Answers to pending input requests (elicitation, sampling). The broker validates before release."""

from __future__ import annotations

from typing import Any

from webhost.errors import InvalidParams
from webhost.session import BrowserSession

from . import _params


def _own_request_id(session: BrowserSession, params: dict[str, Any]) -> str:
    """The id of an input request this tab was asked (or every tab of its person was); others' look unknown."""
    request_id = _params.string(params, "id", max_length=200)
    if not session.asked_here(request_id):
        raise InvalidParams("this input request is unknown or was already answered", {"id": request_id})
    return request_id


async def respond(session: BrowserSession, params: dict[str, Any]) -> dict[str, Any]:
    request_id = _own_request_id(session, params)
    answer = {k: v for k, v in params.items() if k in ("action", "content", "model")}
    frame_id = params.get("frameId")
    session.inputs.respond(request_id, answer, frame_id=frame_id if isinstance(frame_id, str) else None)
    return {}


async def fall_back(session: BrowserSession, params: dict[str, Any]) -> dict[str, Any]:
    """The page reports that the bound app cannot serve (load, handshake, capability, timeout)."""
    request_id = _own_request_id(session, params)
    reason = params.get("reason")
    text = reason[:300] if isinstance(reason, str) and reason else "the app could not serve this request"
    pending = session.inputs.get(request_id)
    if pending is not None:
        session.activity(
            pending.server,
            direction="local",
            kind="notification",
            method="elicitation/fallback",
            summary=f"native form instead of the app: {text}",
        )
    return {"fellBack": session.inputs.fall_back(request_id, text)}


METHODS = {"elicitation/respond": respond, "elicitation/fallback": fall_back}
