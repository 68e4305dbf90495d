"""The mcpServers configuration file: its model and parsing (`file.py`), with `webhost`'s own sections beside it.

`access.py` and `access_rules.py` (who may use what), `auth.py` (sign-in), `chat.py` (the chat's models),
`limits.py` (limits and the audit log), `refs.py` (`${VAR}` and `${input:…}` references) and `keys.py` (the keys
`webhost` may hold, read from the models). The rest of webhost imports the file's names from here.
"""

from __future__ import annotations

from webhost.config.file import (
    CompatFlag,
    Config,
    ConfigError,
    ProtocolChoice,
    Root,
    ServerConfig,
    ServerPolicy,
    WebhostOptions,
    load_config,
    parse_config,
)

__all__ = [
    "CompatFlag",
    "Config",
    "ConfigError",
    "ProtocolChoice",
    "Root",
    "ServerConfig",
    "ServerPolicy",
    "WebhostOptions",
    "load_config",
    "parse_config",
]
