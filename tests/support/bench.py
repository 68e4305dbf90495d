"""Run a script of bench/ with `--quick`: a smoke run (a few iterations, tiny sizes) that must exit 0.

The figures a script prints are never checked: they depend on the machine. What is checked is that every
script still starts, talks to webhost and to its servers, and finishes (issue 31 item 14: one stopped with an
ImportError and nobody saw it)."""

from __future__ import annotations

import os
import subprocess

from tests.support.process import PYTHON, ROOT

BENCH = ROOT / "bench"

# Where each script's smoke run lives: the first stage has no browser and no PostgreSQL or nginx.
WITHOUT_SERVICES = (
    "big_result",
    "big_stall",
    "call_phases",
    "elicitation",
    "relay_floor",
    "sessions",
    "shim_memory",
    "startup",
    "tool_call",
)
"""tests/fast/test_bench_quick.py"""
WITH_BROWSER_OR_DATABASE = (
    "admin_view",
    "app_isolation",
    "app_ready",
    "app_tool_call",
    "chat",
    "page_call",
    "replicas",
)
"""tests/integration/test_bench_quick_services.py: headless Chromium, or PostgreSQL and nginx (replicas)"""

# The bound on one smoke run, far above what one takes (5-70 s on a loaded 2-core machine): it turns a hang into
# a failure. The tests' own pytest-timeout marks sit above it.
BOUND = 400.0


def scripts() -> set[str]:
    return {path.stem for path in BENCH.glob("*.py") if not path.name.startswith("_")}


def run_quick(script: str, *args: str) -> subprocess.CompletedProcess[str]:
    """`python bench/SCRIPT.py --quick [ARGS]`, as a person runs it, with no WEBHOST_* setting of the caller's."""
    env = {name: value for name, value in os.environ.items() if not name.startswith("WEBHOST_")}
    return subprocess.run(
        [PYTHON, str(BENCH / f"{script}.py"), "--quick", *args],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=BOUND,
        check=False,
    )


def failure(script: str, done: subprocess.CompletedProcess[str]) -> str:
    return f"bench/{script}.py --quick exited {done.returncode}:\n{done.stdout[-3000:]}\n{done.stderr[-3000:]}"
