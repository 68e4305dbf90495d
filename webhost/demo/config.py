"""The embedded demo configuration: what `webhost serve` runs when no --config is given.

`WEBHOST_DEMO_MODEL` (a `webhost.chat.models` entry as JSON; scripts/demo sets it from
webhost/demo/model_choice.py) gives the demo's chat a model; without it the chat says how to add one.

The small local model (SmolLM2-135M) is offered only the tools it can call: its server holds each call to the
shape of the tool's schema by a grammar, but not to bounds, lengths or nested objects, so a form like
`plan_trip` failed its validation (the demo's first impression at c4f1242). Its entry also gets the context its
server runs with (`contextTokens`) and answers short enough to leave room in it.
"""

from __future__ import annotations

import json
import os
import sys
from collections.abc import Mapping
from typing import Any

from webhost.config import Config, ConfigError, parse_config
from webhost.demo.model_choice import SMALL_MODEL_ID

DEMO_MODEL_VARIABLE = "WEBHOST_DEMO_MODEL"
# Every tool of the demo server the model may see (tests/unit/test_demo_model.py checks it against the server),
# and those of them the small model can call: an app with one optional choice, a city with a unit.
DEMO_MODEL_TOOLS = (
    "show_dashboard",
    "get_weather",
    "count_slowly",
    "generate_image",
    "play_tone",
    "plan_trip",
    "divide",
    "register_user",
    "connect_account",
    "pick_color",
)
SMALL_MODEL_TOOLS = ("show_dashboard", "get_weather")
SMALL_MODEL_CONTEXT = {"contextTokens": 4096, "maxTokens": 512}  # tools/small-model/server.mjs's --context


def _chat(entry: dict[str, Any]) -> tuple[dict[str, Any], dict[str, Any]]:
    """`webhost.chat` and `webhost.servers` for the demo's model."""
    if entry.get("model") != SMALL_MODEL_ID:
        return {"models": [entry], "toolCalls": "ask"}, {}
    denied = {tool: "deny" for tool in DEMO_MODEL_TOOLS if tool not in SMALL_MODEL_TOOLS}
    return {"models": [{**SMALL_MODEL_CONTEXT, **entry}], "toolCalls": "ask"}, {"demo": {"modelTools": denied}}


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
        if not isinstance(entry, dict):
            raise ConfigError(f"{DEMO_MODEL_VARIABLE}: not a JSON object (a webhost.chat.models entry)")
        chat, servers = _chat(entry)
        document["webhost"] = {"chat": chat, **({"servers": servers} if servers else {})}
    return json.dumps(document, indent=2)


def demo_config(environ: Mapping[str, str] | None = None) -> Config:
    env = os.environ if environ is None else environ
    return parse_config(demo_config_text(env), "<embedded demo configuration>", env)
