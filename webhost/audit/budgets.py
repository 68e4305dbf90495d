"""The audit log's write budgets: each app frame and each person (by id; a row without a person, by its session)
may add rows at a set rate with a burst; rows past it are counted, and coalesced into one "rate limited" row."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from webhost.audit.rows import dumps

RATE_LIMITED = "audit.rate-limited"
COALESCE_SECONDS = 10.0  # at most one "rate limited" row per budget in this time while a flood lasts
QUIET_SECONDS = 1.0  # a budget that dropped nothing for this long has its "rate limited" row written


@dataclass(frozen=True)
class AuditLimits:
    """How large and how fast the log may grow (`webhost.audit` in the configuration file)."""

    retention_days: float | None = 90.0
    max_rows: int | None = 1_000_000
    max_row_bytes: int = 16 * 1024
    frame_rows_per_second: float = 10.0
    frame_burst: int = 100
    person_rows_per_second: float = 20.0
    person_burst: int = 300
    person_bytes_per_second: float = 64 * 1024
    person_burst_bytes: int = 4 * 1024 * 1024


@dataclass
class _Bucket:
    rate: float
    burst: float
    tokens: float
    updated: float

    def refill(self, now: float) -> None:
        self.tokens = min(self.burst, self.tokens + (now - self.updated) * self.rate)
        self.updated = now

    def full(self) -> bool:
        return self.tokens >= self.burst


@dataclass
class _Budget:
    rows: _Bucket
    size: _Bucket | None
    dropped: int = 0
    kinds: dict[str, int] = field(default_factory=dict)
    first_drop: float = 0.0
    last_drop: float = 0.0
    first_ts: float = 0.0
    last_ts: float = 0.0
    # Whose rows the budget counts (from the row that opened it): its "rate limited" row is theirs too.
    owner: dict[str, str | None] = field(default_factory=dict)


class Budgets:
    """The budgets of the frames and people that wrote lately (`limits` read at each new budget: the log's own)."""

    def __init__(self, limits: Callable[[], AuditLimits], clock: Callable[[], float]) -> None:
        self._limits = limits
        self._clock = clock
        self._budgets: dict[tuple[str, str], _Budget] = {}

    @staticmethod
    def keys(row: dict[str, Any]) -> list[tuple[str, str]]:
        """The budgets a row spends: its frame's, and its person's (by id; a row without one, its session's)."""
        keys = []
        if row["frame"]:
            keys.append(("frame", row["frame"]))
        if row["user_id"]:
            keys.append(("person", row["user_id"]))
        elif row["session"]:
            keys.append(("session", row["session"]))
        return keys

    def _budget(self, key: tuple[str, str], now: float, row: dict[str, Any]) -> _Budget:
        budget = self._budgets.get(key)
        if budget is None:
            limits = self._limits()
            if key[0] == "frame":
                budget = _Budget(
                    _Bucket(limits.frame_rows_per_second, limits.frame_burst, limits.frame_burst, now), None
                )
            else:
                budget = _Budget(
                    _Bucket(limits.person_rows_per_second, limits.person_burst, limits.person_burst, now),
                    _Bucket(limits.person_bytes_per_second, limits.person_burst_bytes, limits.person_burst_bytes, now),
                )
            budget.owner = {"session": row["session"], "user_id": row["user_id"], "user_name": row["user_name"]}
            self._budgets[key] = budget
        budget.rows.refill(now)
        if budget.size is not None:
            budget.size.refill(now)
        return budget

    def admit(self, row: dict[str, Any], size: int, now: float) -> bool:
        """Spend one row (and its bytes) from the frame's and the person's budgets, or count it as dropped."""
        budgets = [(key, self._budget(key, now, row)) for key in self.keys(row)]
        for _key, budget in budgets:
            if budget.rows.tokens < 1 or (budget.size is not None and budget.size.tokens < size):
                if not budget.dropped:
                    budget.first_drop, budget.first_ts = now, row["ts"]
                budget.dropped += 1
                budget.last_drop, budget.last_ts = now, row["ts"]
                if row["kind"] in budget.kinds or len(budget.kinds) < 20:
                    budget.kinds[row["kind"]] = budget.kinds.get(row["kind"], 0) + 1
                return False
        for _key, budget in budgets:
            budget.rows.tokens -= 1
            if budget.size is not None:
                budget.size.tokens -= size
        return True

    def drops(self, *, keys: list[tuple[str, str]] | None = None, force: bool = False) -> list[dict[str, Any]]:
        """The "rate limited" rows of budgets that dropped rows, to write now: when the budget admits a row again
        (at most once per COALESCE_SECONDS while a flood lasts), when it went quiet, or at close."""
        now = self._clock()
        rows = []
        for key in list(self._budgets) if keys is None else keys:
            budget = self._budgets.get(key)
            if budget is None or not budget.dropped:
                continue
            due = (
                force
                or now - budget.last_drop >= QUIET_SECONDS
                or (keys is not None and now - budget.first_drop >= COALESCE_SECONDS)
            )
            if not due:
                continue
            kind, name = key
            owner = budget.owner
            rows.append(
                {
                    "ts": budget.last_ts,
                    "session": owner.get("session") if kind != "person" else None,
                    "user_id": owner.get("user_id"),
                    "user_name": owner.get("user_name"),
                    "frame": name if kind == "frame" else None,
                    "server": None,
                    "kind": RATE_LIMITED,
                    "decision": "dropped",
                    "summary": f"rate limited: {budget.dropped} rows dropped",
                    "detail": dumps(
                        {
                            "dropped": budget.dropped,
                            "kinds": budget.kinds,
                            "budget": "person" if kind == "session" else kind,
                            "from": budget.first_ts,
                            "to": budget.last_ts,
                        }
                    ),
                }
            )
            budget.dropped, budget.kinds = 0, {}
        return rows

    def forget_full(self) -> None:
        """Forget budgets that are full and owe nothing (a quiet frame or person costs no memory)."""
        for key, budget in list(self._budgets.items()):
            if not budget.dropped and budget.rows.full() and (budget.size is None or budget.size.full()):
                del self._budgets[key]
