"""GET /api/health/loop: the event loop's lag and the collector's pauses, measured while an admin asks."""

from __future__ import annotations

import gc
import time
from pathlib import Path

import anyio
import pytest

from tests.support.inprocess import in_process_host, sdk_server
from webhost import loophealth
from webhost.people import Person

pytestmark = pytest.mark.anyio

BOB = Person(id="bob", name="Bob", role="member")


async def test_an_admin_sees_the_lag_a_blocking_call_and_a_full_collection_cause(tmp_path: Path) -> None:
    async with in_process_host(tmp_path, {"basic": sdk_server("basic")}) as host, host.http() as http:

        async def misbehave() -> None:  # in-process, webhost's loop is this one
            # Once the probe runs (its collector timer is installed, and it sleeps a tick with no await before),
            # not after a fixed pause: a busy machine could otherwise answer the request before or after it.
            while not any(isinstance(callback, loophealth._GcTimer) for callback in gc.callbacks):
                await anyio.sleep(0)
            time.sleep(0.06)  # a callback that blocks the loop for 60 ms, while the probe sleeps one tick
            gc.collect()  # and a full pass

        async with anyio.create_task_group() as tg:
            tg.start_soon(misbehave)
            answer = await http.get("/api/health/loop", params={"seconds": 0.4})
        assert answer.status_code == 200
        measured = answer.json()
        assert measured["samples"] >= 1 and measured["tickMs"] == loophealth.TICK * 1000
        assert measured["maxMs"] >= 60 - loophealth.TICK * 1000  # that tick's sleep spanned the 60 ms block
        assert measured["p50Ms"] <= measured["p99Ms"] <= measured["maxMs"]
        assert measured["gc"]["2"]["passes"] >= 1 and measured["gc"]["2"]["maxMs"] > 0
        assert set(measured["gc"]) == {"0", "1", "2"} and len(measured["gcThreshold"]) == 3
    assert loophealth._GcTimer not in {type(callback) for callback in gc.callbacks}  # removed afterwards


async def test_a_member_may_not_measure_the_loop(tmp_path: Path) -> None:
    async with (
        in_process_host(tmp_path, {"basic": sdk_server("basic")}, people=True) as host,
        host.http(person=BOB) as http,
    ):
        refused = await http.get("/api/health/loop", params={"seconds": 0.1})
        assert refused.status_code == 403 and "admin" in refused.json()["error"]


async def test_the_measurement_is_bounded() -> None:
    measured = await loophealth.measure(-5)  # at least one tick, never a negative wait
    assert measured["seconds"] == loophealth.TICK and measured["samples"] >= 1
