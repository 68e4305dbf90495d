"""The embedded demo configuration: what `webhost serve` runs when no --config is given.

`WEBHOST_DEMO_MODEL` (a `webhost.chat.models` entry as JSON; scripts/demo sets it from
webhost/demo/model_choice.py) gives the demo's chat a model; without it the chat says how to add one.
"""

from __future__ import annotations

import json
import os
import sys
from collections.abc import Mapping
from typing import Any

from webhost.config import Config, ConfigError, parse_config

DEMO_MODEL_VARIABLE = "WEBHOST_DEMO_MODEL"


def demo_config_text(environ: Mapping[str, str] | None = None) -> str:
    """The demo as a configuration file, with this interpreter running the packaged demo server."""
    demo = {"command": sys.executable, "args": ["-m", "webhost.demo.server"]}
    document: dict[str, Any] = {"mcpServers": {"demo": demo}}
    model = (os.environ if environ is None else environ).get(DEMO_MODEL_VARIABLE)
    if model:
        try:
            entry = json.loads(model)
        except ValueError:
            raise ConfigError(f"{DEMO_MODEL_VARIABLE}: not JSON (a webhost.chat.models entry)") from None
        document["webhost"] = {"chat": {"models": [entry], "toolCalls": "ask"}}
    return json.dumps(document, indent=2)


def demo_config(environ: Mapping[str, str] | None = None) -> Config:
    env = os.environ if environ is None else environ
    return parse_config(demo_config_text(env), "<embedded demo configuration>", env)
