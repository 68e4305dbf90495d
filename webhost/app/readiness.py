"""Whether this replica can serve people now, for a load balancer: its database answers and its audit log writes.

`GET /healthz` says the process is alive (a container's health check restarts what does not answer). A balancer
needs more: a replica whose database is down answers `/healthz` but can neither sign anyone in, nor read their
input values, nor audit what apps do, so people sent there find nothing working. `GET /healthz?ready=1` answers
503 then, with the reason in words (nothing about the database's address or password), so the balancer sends
people to another replica until this one is ready again. The answer is kept `CACHE_SECONDS`: probes from many
balancers, or from anyone (the route needs no credentials), cost the database at most one query a second.
"""

from __future__ import annotations

import logging

import anyio
import sqlalchemy as sa

from webhost.audit import AuditLog
from webhost.storage.db import Storage
from webhost.storage.transactions import DatabaseUnavailable

logger = logging.getLogger(__name__)

CACHE_SECONDS = 1.0
PROBE_TIMEOUT = 2.0


class Readiness:
    def __init__(self, storage: Storage, audit: AuditLog) -> None:
        self.storage = storage
        self.audit = audit
        self._checked_at = -float("inf")
        self._problem: str | None = None
        self._lock = anyio.Lock()

    async def problem(self) -> str | None:
        """Why this replica is not ready (one line), or None when it is."""
        async with self._lock:  # concurrent probes share one query
            now = anyio.current_time()
            if now - self._checked_at >= CACHE_SECONDS:
                problem = await self._check()
                if problem is not None and problem != self._problem:
                    logger.warning("not ready: %s", problem)
                self._problem, self._checked_at = problem, anyio.current_time()
            return self._problem

    async def _check(self) -> str | None:
        try:
            with anyio.fail_after(PROBE_TIMEOUT):
                async with self.storage.read() as db:
                    await db.execute(sa.text("SELECT 1"))
        except DatabaseUnavailable:
            return "the database cannot be reached"
        except TimeoutError:
            return f"the database did not answer within {PROBE_TIMEOUT:g} s"
        if self.audit.outage:
            return "the audit log cannot be written"
        return None
