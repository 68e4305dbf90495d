"""The embedded demo configuration: what `webhost serve` runs when no --config is given."""

from __future__ import annotations

import json
import os
import sys

from webhost.config import Config, parse_config


def demo_config_text() -> str:
    """The demo as a configuration file, with this interpreter running the packaged demo server."""
    demo = {"command": sys.executable, "args": ["-m", "webhost.demo.server"]}
    return json.dumps({"mcpServers": {"demo": demo}}, indent=2)


def demo_config() -> Config:
    return parse_config(demo_config_text(), "<embedded demo configuration>", os.environ)
