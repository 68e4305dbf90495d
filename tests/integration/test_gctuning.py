"""`webhost serve` freezes what start-up made and enlarges the young generation (in a process of its own:
a frozen object is never collected, so the test process is left as it is)."""

from __future__ import annotations

import json
import subprocess
import sys

from webhost import gctuning


def test_tune_freezes_start_up_and_sets_the_thresholds() -> None:
    script = (
        "import gc, json, webhost.app, webhost.gctuning as t; before = gc.get_freeze_count(); t.tune(); "
        "print(json.dumps([before, gc.get_freeze_count(), gc.get_threshold(), gc.isenabled()]))"
    )
    out = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, check=True, timeout=120)
    before, frozen, threshold, enabled = json.loads(out.stdout)
    assert before == 0 and frozen > 10_000  # the modules, classes and schemas webhost.app imports
    assert threshold == [gctuning.GEN0, gctuning.GEN1, gctuning.GEN2] and enabled  # collection still runs
