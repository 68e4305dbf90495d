"""`webhost reload` as an operator runs it, for a running test webhost (its port and data folder)."""

from __future__ import annotations

import subprocess
import sys

from tests.support.process import ROOT, Webhost


def reload_cli(host: Webhost) -> subprocess.CompletedProcess[str]:
    """`webhost reload --port PORT --data-dir DIR`: its status, stdout and stderr."""
    return subprocess.run(
        [sys.executable, "-m", "webhost", "reload", "--port", str(host.port), "--data-dir", str(host.data_dir)],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=120,
    )
