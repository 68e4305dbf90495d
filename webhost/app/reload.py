"""`webhost reload` (or SIGHUP): re-read the configuration file without a restart.

New and changed servers, models and access rules apply to new requests (and each live workspace follows them:
app/follow.py); removed servers stop for everyone. A bad file is refused with one line and the running
configuration is kept. What only a start reads (auth, database, data folder, allowed origins, limits, ports)
is named in the outcome as needing a restart, and keeps its running value.

The outcome of each reload is one line, logged and written beside the pid file for the CLI (app/pidfile.py).
"""

from __future__ import annotations

import logging
from pathlib import Path

from webhost.app.follow import Follow
from webhost.config import Config, ConfigError, load_config

logger = logging.getLogger(__name__)

# Read once at start: a change to these is reported, and applies at the next start.
AT_START = ("auth", "database", "data_dir", "allowed_origins", "limits", "audit")


class Reloader:
    def __init__(self, path: Path | None, follow: Follow) -> None:
        self.path = path
        self.follow = follow

    async def reload(self) -> tuple[bool, str]:
        """(applied, one line saying what happened)."""
        if self.path is None:
            return (
                False,
                "refused: webhost runs the embedded demo configuration (no --config), so there is no file to re-read",
            )
        try:
            config = load_config(self.path)
        except ConfigError as exc:
            line = " ".join(str(exc).split())
            logger.warning("reload refused, the running configuration is kept: %s", line)
            return False, f"refused, the running configuration is kept: {line}"
        running = self.follow.host.config
        line = describe(running, config)
        await self.follow.reload(config)
        logger.warning("reloaded %s: %s", self.path, line)
        return True, f"reloaded {self.path}: {line}"


def describe(before: Config, after: Config) -> str:
    """What a reload changes, in one line."""
    added = [n for n in after.servers if n not in before.servers]
    removed = [n for n in before.servers if n not in after.servers]
    changed = [n for n in after.servers if n in before.servers and after.servers[n] != before.servers[n]]
    parts = [f"{len(after.servers)} server(s)"]
    for verb, names in (("added", added), ("removed", removed), ("changed", changed)):
        if names:
            parts.append(f"{verb} {', '.join(names)}")
    if after.options.access != before.options.access:
        parts.append("access rules changed")
    if after.options.chat != before.options.chat:
        parts.append("chat settings changed")
    restart = [k for k in AT_START if getattr(after.options, k) != getattr(before.options, k)]
    if restart:
        parts.append(f"needs a restart to apply: {', '.join(restart)}")
    return "; ".join(parts)
