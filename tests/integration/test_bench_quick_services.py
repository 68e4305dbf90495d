"""The scripts of bench/ that drive headless Chromium, or PostgreSQL and nginx (replicas.py), run with `--quick`
and exit 0 (issue 31 item 14; the others run in tests/fast/test_bench_quick.py). About 136 s of wall time
for the six on a 2-core machine at load ~9, most of it chat.py and page_call.py (~40 s each)."""

from __future__ import annotations

import pytest

from tests.support.bench import WITH_BROWSER_OR_DATABASE, failure, run_quick


@pytest.mark.timeout(450)
@pytest.mark.parametrize("script", WITH_BROWSER_OR_DATABASE)
def test_bench_script_runs_quick(script: str) -> None:
    done = run_quick(script)
    assert done.returncode == 0, failure(script, done)
    assert "load average" in done.stdout, done.stdout[-2000:]
