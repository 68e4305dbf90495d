"""Which Chromium to launch for webhost, and with which flags.

Choice order: ``WEBHOST_CHROMIUM`` (a path to a Chromium binary), Playwright's own installed build, Debian's
``/usr/bin/chromium``. Every choice gets the same flags: offline-friendly, and with third-party storage
partitioning left on, which MCP Apps on webhost's sandbox origins need (see ``OFFLINE_ARGS``).
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from playwright.sync_api import Browser, Playwright

DEBIAN_CHROMIUM = "/usr/bin/chromium"

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

NO_CHROMIUM = (
    "No Chromium: run `playwright install chromium` (needs internet) or `apt-get install chromium`, "
    "or set WEBHOST_CHROMIUM to a Chromium binary"
)


class NoChromium(RuntimeError):
    """No usable Chromium on this machine; the message names the fixes."""


def chromium_launch_kwargs(playwright: Playwright) -> dict[str, Any]:
    """Keyword arguments for ``playwright.chromium.launch``; raises NoChromium when there is none."""
    override = os.environ.get("WEBHOST_CHROMIUM")
    if override:
        return {"executable_path": override, "args": list(OFFLINE_ARGS)}
    try:
        bundled = Path(playwright.chromium.executable_path)
    except Exception:  # no Playwright browser registry at all
        bundled = Path("/nonexistent")
    if bundled.exists():
        return {"args": list(OFFLINE_ARGS)}
    if Path(DEBIAN_CHROMIUM).exists():
        return {"executable_path": DEBIAN_CHROMIUM, "args": list(OFFLINE_ARGS)}
    raise NoChromium(NO_CHROMIUM)


def launch_chromium(playwright: Playwright, *, headless: bool = True) -> Browser:
    """Launch the chosen Chromium with webhost's flags."""
    return playwright.chromium.launch(headless=headless, **chromium_launch_kwargs(playwright))
