"""Every script of bench/ that needs no browser and no database runs with `--quick` and exits 0 (issue 31 item
14); the others run in tests/integration/test_bench_quick_services.py. About 45 s of CPU for the nine; 85 s of
wall time at load 3-4, 190 s at load 8-10 on a 2-core machine (sessions.py waits the most: 35-50 s, 11 s of CPU)."""

from __future__ import annotations

import pytest

from tests.support.bench import WITH_BROWSER_OR_DATABASE, WITHOUT_SERVICES, failure, run_quick, scripts


def test_every_bench_script_has_a_smoke_run() -> None:
    listed = set(WITHOUT_SERVICES) | set(WITH_BROWSER_OR_DATABASE)
    assert scripts() == listed
    assert not set(WITHOUT_SERVICES) & set(WITH_BROWSER_OR_DATABASE)


@pytest.mark.timeout(450)
@pytest.mark.parametrize("script", WITHOUT_SERVICES)
def test_bench_script_runs_quick(script: str) -> None:
    done = run_quick(script)
    assert done.returncode == 0, failure(script, done)
    assert "load average" in done.stdout or script == "shim_memory", done.stdout[-2000:]


@pytest.mark.timeout(450)
def test_the_access_row_of_tool_call_runs_quick() -> None:
    # Not among the default rows (it starts a second webhost): asked for by name.
    done = run_quick("tool_call", "--rows", "access")
    assert done.returncode == 0, failure("tool_call", done)
    assert "access rules: echo with 200 rules" in done.stdout, done.stdout[-2000:]
