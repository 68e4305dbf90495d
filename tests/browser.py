"""Which Chromium the browser tests launch, and with which flags (shared/reference/peers.md §5.3).

Choice order: WEBHOST_CHROMIUM, Playwright's own installed build, /usr/bin/chromium with offline
flags; otherwise the test is skipped with the fixes named.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pytest
from playwright.sync_api import Playwright

OFFLINE_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
    "--disable-quic",
    "--disable-dev-shm-usage",
    # Playwright's defaults disable ThirdPartyStoragePartitioning, which makes Chromium deny storage to
    # cross-site frames (every sandbox origin is cross-site to the host page). Real browsers partition
    # instead; the last --disable-features wins, so restate Playwright's list without that feature.
    "--disable-features=AvoidUnnecessaryBeforeUnloadCheckSync,DestroyProfileOnBrowserClose,HttpsUpgrades,"
    "HttpsFirstBalancedModeAutoEnable,LensOverlay,MediaRouter,PaintHolding,OptimizationHints,"
    "NetworkTimeServiceQuerying,AimEnabled,PreconnectToSearch",
]


def chromium_launch_kwargs(playwright: Playwright) -> dict[str, Any]:
    override = os.environ.get("WEBHOST_CHROMIUM")
    if override:
        return {"executable_path": override, "args": OFFLINE_ARGS}
    try:
        bundled = Path(playwright.chromium.executable_path)
    except Exception:  # no Playwright browser registry at all
        bundled = Path("/nonexistent")
    if bundled.exists():
        return {"args": OFFLINE_ARGS}
    if Path("/usr/bin/chromium").exists():
        return {"executable_path": "/usr/bin/chromium", "args": OFFLINE_ARGS}
    pytest.skip("No Chromium: run `playwright install chromium` (needs internet) or `apt-get install chromium`, "
                "or set WEBHOST_CHROMIUM")
