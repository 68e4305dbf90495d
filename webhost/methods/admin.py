"""The admin view (contract §9): people, their groups and last sign-in, tokens and cost per model and day over a
period, and who may use each server and model. Admins only; no conversation text is ever read here."""

from __future__ import annotations

import datetime as dt
from typing import Any

from webhost.config.chat import ChatOptions
from webhost.errors import InvalidParams, PolicyRefused
from webhost.session import BrowserSession
from webhost.storage.admin_usage import daily_usage, known_people

from .admin_access import who_may_use

DEFAULT_DAYS = 30
MAX_DAYS = 366


def period(params: dict[str, Any], today: dt.date) -> tuple[dt.date, dt.date]:
    """The UTC days asked for (`since`, `until`, both included); by default the last 30 days up to today."""

    def day(key: str, default: dt.date) -> dt.date:
        value = params.get(key)
        if value is None:
            return default
        try:
            return dt.date.fromisoformat(value) if isinstance(value, str) and len(value) == 10 else _bad(key)
        except ValueError:
            return _bad(key)

    until = day("until", today)
    since = day("since", until - dt.timedelta(days=DEFAULT_DAYS - 1))
    if since > until:
        raise InvalidParams("params.since must not be after params.until", {"since": str(since), "until": str(until)})
    if (until - since).days >= MAX_DAYS:
        raise InvalidParams(f"the period may be at most {MAX_DAYS} days", {"since": str(since), "until": str(until)})
    return since, until


def _bad(key: str) -> dt.date:
    raise InvalidParams(f"params.{key} must be a day as YYYY-MM-DD", {key: "invalid"})


def priced(rows: list[dict[str, Any]], chat: ChatOptions) -> list[dict[str, Any]]:
    """Each usage row with its cost in USD where its model has a `price` (None where it has not)."""
    prices = {model.id: model.price for model in chat.models}
    out = []
    for row in rows:
        price = prices.get(row["model"])
        cost = round(price.cost(row["input"], row["output"]), 6) if price is not None else None
        out.append({**row, "cost": cost})
    return out


def with_unlisted(people: list[dict[str, Any]], usage: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Token and proxy mode do not fill `people`: whoever has usage but no row is listed by id, never seen."""
    listed = {p["id"] for p in people}
    unlisted = sorted({u["person"] for u in usage} - listed)
    return people + [
        {"id": pid, "name": pid, "email": None, "role": None, "groups": [], "firstSeen": None, "lastSeen": None}
        for pid in unlisted
    ]


async def overview(session: BrowserSession, params: dict[str, Any]) -> dict[str, Any]:
    if not session.person.is_admin:
        raise PolicyRefused("only an admin may open the admin view", {"method": "admin/overview"})
    since, until = period(params, dt.datetime.now(dt.UTC).date())
    config = session.workspace.deps.config
    storage = session.workspace.chat.store.storage
    usage = await daily_usage(storage, since.isoformat(), until.isoformat())
    return {
        "since": since.isoformat(),
        "until": until.isoformat(),
        "people": with_unlisted(await known_people(storage), usage),
        "usage": priced(usage, config.options.chat),
        "models": [
            {"id": m.id, "label": m.label or m.id, "price": m.price.model_dump() if m.price else None}
            for m in config.options.chat.models
        ],
        "access": who_may_use(config),
    }


METHODS = {"admin/overview": overview}
