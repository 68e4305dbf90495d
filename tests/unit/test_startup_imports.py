"""`webhost --help` and a bad setting or configuration answer before the heavy imports: the SDK and its
generated types, FastAPI and Starlette, SQLAlchemy and Alembic, uvicorn, Playwright (seconds of CPU that a
person asking for help or fixing a typo should not pay; bench/startup.py measures it).

One fresh interpreter runs every case in turn through `webhost.cli.main`, noting after each one which heavy
packages `sys.modules` holds: the first case that pulls one in is named.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

HEAVY = [
    "mcp",
    "mcp_types",
    "fastapi",
    "starlette",
    "sqlalchemy",
    "alembic",
    "uvicorn",
    "playwright",
    "opentelemetry",
    "prometheus_client",
    "openai",
    "anthropic",
]
# The model SDKs: about 2.7 s of CPU between them, loaded only when a model of their wire is first used.
MODEL_SDKS = ["openai", "anthropic"]

APP_THEN_WIRES = """
import json, sys
def loaded():
    return sorted(name for name in json.loads(sys.argv[1]) if name in sys.modules)
seen = []
import webhost.app
from webhost.chat.providers import ModelEndpoint, open_provider
seen.append(loaded())
open_provider(ModelEndpoint("m", "openai", "gpt", "http://127.0.0.1:9/v1", None))
seen.append(loaded())
open_provider(ModelEndpoint("c", "anthropic", "claude", "http://127.0.0.1:9", None))
seen.append(loaded())
print(json.dumps(seen))
"""

RUN_CASES = """
import contextlib, io, json, sys
from webhost.cli import main

heavy, cases = json.loads(sys.argv[1])
seen = []
for args in cases:
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        try:
            code = main(args)
        except SystemExit as exc:
            code = exc.code
    loaded = sorted({name.split(".")[0] for name in sys.modules} & set(heavy))
    seen.append({"args": args, "code": code, "out": out.getvalue(), "err": err.getvalue(), "heavy": loaded})
print(json.dumps(seen))
"""


def test_help_and_configuration_errors_answer_without_the_heavy_imports(tmp_path: Path) -> None:
    bad_json = tmp_path / "bad.json"
    bad_json.write_text("{bad", encoding="utf-8")
    bad_field = tmp_path / "field.json"
    bad_field.write_text(json.dumps({"mcpServers": {"x": {"command": 5}}}), encoding="utf-8")
    cases = [
        ["--help"],
        ["serve", "--help"],
        ["check", "--help"],
        ["serve", "--port", "eighty"],
        ["serve", "--config", str(bad_json)],
        ["serve", "--config", str(bad_field)],
        ["check", str(bad_json)],
    ]
    env = {name: value for name, value in os.environ.items() if not name.startswith("WEBHOST_")}
    done = subprocess.run(
        [sys.executable, "-c", RUN_CASES, json.dumps([HEAVY, cases])],
        capture_output=True,
        text=True,
        env=env,
        check=True,
        timeout=120,
    )
    seen = json.loads(done.stdout)
    assert [case["args"] for case in seen] == cases
    for case in seen:
        assert case["heavy"] == [], f"webhost {' '.join(case['args'])} imported {case['heavy']}"
    helps, errors = seen[:3], seen[3:]
    assert [case["code"] for case in helps] == [0, 0, 0]
    assert "serve" in helps[0]["out"] and "--config" in helps[1]["out"] and "--settle" in helps[2]["out"]
    assert [case["code"] for case in errors] == [2, 2, 2, 2]
    assert "--port" in errors[0]["err"]
    assert "configuration error" in errors[1]["err"] and "invalid JSON" in errors[1]["err"]
    assert "mcpServers.x.command" in errors[2]["err"]
    assert "bad configuration" in errors[3]["err"]
    assert all("Traceback" not in case["err"] for case in seen)


BUILD_APP = """
import json, sys
from pathlib import Path
from webhost.app import create_app
from webhost.demo.config import demo_config
from webhost.settings import Settings

create_app(Settings(data_dir=Path(sys.argv[1])), demo_config(), secret=b"s" * 32)
print(json.dumps(sorted(name for name in sys.modules if name.startswith("opentelemetry"))))
"""


def test_without_an_otlp_endpoint_the_host_app_imports_no_tracing_sdk(tmp_path: Path) -> None:
    """Tracing off: the app is built with the OpenTelemetry API only (the SDK imports it too), never the SDK,
    its exporter or the FastAPI instrumentation (webhost[otel], webhost/observability/otel.py)."""
    env = {name: value for name, value in os.environ.items() if not name.startswith(("WEBHOST_", "OTEL_"))}
    done = subprocess.run(
        [sys.executable, "-c", BUILD_APP, str(tmp_path)],
        capture_output=True,
        text=True,
        env=env,
        check=True,
        timeout=120,
    )
    loaded = json.loads(done.stdout.splitlines()[-1])
    assert "opentelemetry.trace" in loaded  # webhost's spans go through the API, a no-op while off
    assert not [name for name in loaded if name.startswith(("opentelemetry.sdk", "opentelemetry.exporter"))]
    assert not [name for name in loaded if name.startswith("opentelemetry.instrumentation")]


def test_the_app_imports_no_model_sdk_until_a_model_of_its_wire_is_used() -> None:
    """Issue 31 item 13: `import webhost.app` loaded both model SDKs (2.7 of its 3.1 s of CPU) with no model
    configured; each now comes with the first provider of its wire."""
    done = subprocess.run(
        [sys.executable, "-c", APP_THEN_WIRES, json.dumps(MODEL_SDKS)],
        capture_output=True,
        text=True,
        check=True,
        timeout=120,
    )
    assert json.loads(done.stdout) == [[], ["openai"], ["anthropic", "openai"]]


STARTED_WITH_A_MODEL = """
import json, sys, time
from pathlib import Path
from starlette.testclient import TestClient
from webhost.app import create_app
from webhost.config.file import parse_config
from webhost.settings import Settings

model = {"id": "c", "api": "anthropic", "model": "claude", "baseUrl": "http://127.0.0.1:9"}
config = parse_config(json.dumps({"mcpServers": {}, "webhost": {"chat": {"models": [model]}}}), "<test>", {})
app = create_app(Settings(data_dir=Path(sys.argv[1])), config, secret=b"s" * 32)
seen = []
with TestClient(app):  # its lifespan runs: webhost is up
    seen.append(sorted(name for name in ("openai", "anthropic") if name in sys.modules))
    deadline = time.monotonic() + 60  # the import in the background: awaited, bounded
    while "anthropic" not in sys.modules and time.monotonic() < deadline:
        time.sleep(0.05)
    seen.append(sorted(name for name in ("openai", "anthropic") if name in sys.modules))
print(json.dumps(seen))
"""


def test_a_configured_models_wire_is_imported_once_webhost_is_up(tmp_path: Path) -> None:
    """Off the start-up path, but before the first answer: the first message after a start does not wait the
    SDK's import (bench/chat.py row 2's first answer: 563 ms to the first token before, about 35 after)."""
    done = subprocess.run(
        [sys.executable, "-c", STARTED_WITH_A_MODEL, str(tmp_path)],
        capture_output=True,
        text=True,
        check=True,
        timeout=120,
    )
    at_start, later = json.loads(done.stdout.splitlines()[-1])
    assert "openai" not in at_start and "openai" not in later  # only the configured wire
    assert later == ["anthropic"]
