"""Which model the demo's chat talks to: a provider key from the environment, a local Ollama, the small local
model, or none (then the chat shows how to add one).

The order: `OPENAI_API_KEY`, then `ANTHROPIC_API_KEY`, then an Ollama answering on 127.0.0.1:11434 with at
least one model pulled, then the small model of tools/small-model when scripts/install-small-model has put it
in place (it runs as its own process: `small_model_command` gives its command line). Each choice is a
`webhost.chat.models` entry as the contract (§8) writes it.

    python -m webhost.demo.model_choice     # prints the choice as JSON, or `null`
"""

from __future__ import annotations

import http.client
import json
import os
import sys
import urllib.request
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

OPENAI_MODEL = "gpt-5.1"
ANTHROPIC_MODEL = "claude-sonnet-4-5"
OLLAMA_URL = "http://127.0.0.1:11434"
SMALL_MODEL_ID = "smollm2-135m-instruct"
SMALL_MODEL_FILE = "SmolLM2-135M-Instruct.Q4_1.gguf"
# The checkout webhost runs from (an editable install); an installed wheel has no tools/ and so no small model.
ROOT = Path(__file__).resolve().parents[2]

Source = Literal["openai", "anthropic", "ollama", "small-model"]


@dataclass(frozen=True)
class ModelChoice:
    source: Source
    # The `webhost.chat.models` entry. For the small model, `baseUrl` is left out: it is known once the server
    # runs (http://127.0.0.1:PORT/v1 for the PORT given to `small_model_command`).
    entry: dict[str, Any]


@dataclass(frozen=True)
class SmallModel:
    """Where scripts/install-small-model puts the small model and the runtime that serves it."""

    root: Path

    @property
    def server(self) -> Path:
        return self.root / "tools" / "small-model" / "server.mjs"

    @property
    def gguf(self) -> Path:
        return self.root / ".cache" / "small-model" / SMALL_MODEL_FILE

    @property
    def runtime(self) -> Path:
        return self.root / "tools" / "small-model" / "node_modules" / "node-llama-cpp" / "package.json"

    def missing(self) -> list[Path]:
        """What is not in place yet ([] when installed)."""
        return [path for path in (self.server, self.gguf, self.runtime) if not path.is_file()]


def small_model_command(small: SmallModel, port: int) -> list[str]:
    """The command line that serves the small model on 127.0.0.1:PORT (0: any free port, named in its
    ready line `small-model ready http://127.0.0.1:PORT/v1`)."""
    return ["node", str(small.server), "--model", str(small.gguf), "--port", str(port)]


def ollama_model(base_url: str = OLLAMA_URL, timeout: float = 1.0) -> str | None:
    """The first model of an Ollama answering at `base_url`, or None (nothing there, or no model pulled)."""
    # No proxy: an http_proxy in the environment must not carry a look at loopback elsewhere.
    opener = urllib.request.build_opener(urllib.request.ProxyHandler({}))
    for path, key, field in (("/api/tags", "models", "name"), ("/v1/models", "data", "id")):
        try:
            with opener.open(base_url + path, timeout=timeout) as response:
                listing = json.load(response)
        except (OSError, http.client.HTTPException, ValueError):  # refused, timed out, not HTTP, not JSON
            continue
        models = listing.get(key) if isinstance(listing, dict) else None
        if isinstance(models, list):
            names = [m[field] for m in models if isinstance(m, dict) and isinstance(m.get(field), str)]
            if names:
                return str(names[0])
    return None


def choose_model(
    env: Mapping[str, str],
    *,
    ollama_url: str = OLLAMA_URL,
    small_model: SmallModel | None = None,
    timeout: float = 1.0,
) -> ModelChoice | None:
    """The demo's model, in the module's order; None when there is none (the chat then says how to add one)."""
    if env.get("OPENAI_API_KEY"):
        entry = {"id": "openai", "api": "openai", "model": OPENAI_MODEL, "apiKey": "${OPENAI_API_KEY}"}
        return ModelChoice("openai", entry)
    if env.get("ANTHROPIC_API_KEY"):
        entry = {"id": "anthropic", "api": "anthropic", "model": ANTHROPIC_MODEL, "apiKey": "${ANTHROPIC_API_KEY}"}
        return ModelChoice("anthropic", entry)
    name = ollama_model(ollama_url, timeout)
    if name is not None:
        return ModelChoice("ollama", {"id": "ollama", "api": "openai", "model": name, "baseUrl": f"{ollama_url}/v1"})
    small = small_model or SmallModel(ROOT)
    if not small.missing():
        return ModelChoice("small-model", {"id": "local", "api": "openai", "model": SMALL_MODEL_ID})
    return None


def main() -> None:
    choice = choose_model(os.environ)
    json.dump(None if choice is None else {"source": choice.source, "entry": choice.entry}, sys.stdout)
    sys.stdout.write("\n")


if __name__ == "__main__":
    main()
