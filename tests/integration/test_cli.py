"""`webhost serve` as a user runs it: clear refusals, no tracebacks, the demo with no configuration."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from tests.helpers import ROOT, run_webhost


def serve(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "webhost", "serve", *args], cwd=ROOT, capture_output=True,
                          text=True, timeout=30)


def test_a_bad_configuration_file_exits_non_zero_with_one_clear_line(tmp_path: Path) -> None:
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps({"mcpServers": {"w": {"type": "http", "url": 5}}}))
    result = serve("--config", str(bad))
    assert result.returncode == 2
    assert "Traceback" not in result.stderr
    assert result.stderr.strip() == f"webhost: configuration error: {bad}: mcpServers.w.url: must be a string " \
                                     "(an http:// or https:// URL)"


def test_invalid_json_reports_line_and_column(tmp_path: Path) -> None:
    bad = tmp_path / "bad.json"
    bad.write_text('{"mcpServers": {\n "a": {"command": "x"\n}')
    result = serve("--config", str(bad))
    assert result.returncode == 2 and "line 3, column" in result.stderr and "Traceback" not in result.stderr


def test_binding_to_every_interface_needs_an_explicit_flag() -> None:
    result = serve("--host", "0.0.0.0")
    assert result.returncode == 2
    assert "--allow-remote" in result.stderr


def test_python_dash_m_and_the_console_script_are_the_same_program() -> None:
    module = subprocess.run([sys.executable, "-m", "webhost", "--help"], capture_output=True, text=True, timeout=30)
    script = Path(sys.executable).with_name("webhost")
    console = subprocess.run([str(script), "--help"], capture_output=True, text=True, timeout=30)
    assert module.returncode == console.returncode == 0
    assert "serve" in module.stdout and "serve" in console.stdout


def test_serve_without_config_runs_the_embedded_demo(tmp_path: Path) -> None:
    with run_webhost(tmp_path, None) as host:
        with host.http() as client:
            servers = client.get("/api/servers").json()["servers"]
    assert [s["name"] for s in servers] == ["demo"]


def test_a_generated_token_is_printed_as_a_login_url(tmp_path: Path) -> None:
    with run_webhost(tmp_path, {}, env={"WEBHOST_TOKEN": ""}) as host:
        log = host.log()
    assert "?token=" in log and f"http://127.0.0.1:{host.port}/?token=" in log
