"""Values each person provides for `${input:ID}` (contract §6): give, list (never the values), forget.

A value never comes back to a browser: not in a response, not in an error (these name ids only), and
the browser edge masks the person's values in every frame of their tabs. An input only servers and models the
person may not use ask for (webhost.access) is absent for them, as if not declared.
"""

from __future__ import annotations

from typing import Any

from webhost.access_policy import may_use_model
from webhost.errors import InvalidParams
from webhost.session import BrowserSession

MAX_VALUE = 16 * 1024


def _theirs(session: BrowserSession) -> set[str]:
    """The input ids the person may see: those of a server or model they may use, and those nothing uses."""
    config, workspace = session.config, session.workspace
    access, groups = workspace.deps.config.options.access, workspace.person.groups
    used: set[str] = set()
    theirs: set[str] = set()
    for name, server in config.servers.items():
        used.update(server.input_ids)
        if name in workspace.connections:  # the person's servers: their workspace connects no other
            theirs.update(server.input_ids)
    for model in config.options.chat.models:
        used.update(model.input_ids)
        if may_use_model(access, groups, model.id):
            theirs.update(model.input_ids)
    return theirs | {spec.id for spec in config.inputs if spec.id not in used}


def _declared(session: BrowserSession, input_id: object) -> str:
    if not isinstance(input_id, str) or session.config.input_spec(input_id) is None or input_id not in _theirs(session):
        shown = input_id[:64] if isinstance(input_id, str) else None
        raise InvalidParams("no input with this id is declared in the configuration", {"id": shown})
    return input_id


async def list_inputs(session: BrowserSession, params: dict[str, Any]) -> dict[str, Any]:
    config = session.config
    stored = session.workspace.stored_inputs()
    theirs = _theirs(session)
    return {
        "inputs": [
            {
                **spec.public(),
                "stored": spec.id in stored,
                # Only servers the person may use (their workspace has a connection for no other).
                "servers": sorted(
                    name
                    for name, s in config.servers.items()
                    if spec.id in s.input_ids and name in session.workspace.connections
                ),
            }
            for spec in config.inputs
            if spec.id in theirs
        ]
    }


async def set_inputs(session: BrowserSession, params: dict[str, Any]) -> dict[str, Any]:
    raw = params.get("values")
    if not isinstance(raw, dict) or not raw:
        raise InvalidParams("params.values must be an object of input id → string value")
    if params.get("server") is not None:
        session.connection(params)  # a server named must be configured
    values: dict[str, str] = {}
    for input_id, value in raw.items():
        values[_declared(session, input_id)] = value
        if not isinstance(value, str) or not value or len(value) > MAX_VALUE:
            raise InvalidParams(
                f"the value for {input_id!r} must be a non-empty string of at most {MAX_VALUE} characters",
                {"id": input_id},
            )
    started = await session.workspace.set_inputs(values)
    return {"stored": sorted(values), "servers": [c.state() for c in started]}


async def forget_inputs(session: BrowserSession, params: dict[str, Any]) -> dict[str, Any]:
    ids = params.get("ids")
    if not isinstance(ids, list) or not ids:
        raise InvalidParams("params.ids must be a non-empty list of input ids")
    forgotten = sorted({_declared(session, input_id) for input_id in ids})
    await session.workspace.forget_inputs(forgotten)
    return {"forgotten": forgotten}


METHODS = {"inputs/list": list_inputs, "inputs/set": set_inputs, "inputs/forget": forget_inputs}
