"""`webhost check CONFIG` as a subprocess: a bad configuration, a real ext-apps example, and an app that breaks
its CSP and the visibility rule (tests/servers/check_apps.py). server-debug is not among the peers, so it is not
checked here.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from tests.support.process import PEERS, ROOT, SERVERS, peer_server, peers_installed


def check(tmp_path: Path, config: Any, *args: str, timeout: float = 110) -> subprocess.CompletedProcess[str]:
    path = tmp_path / "servers.json"
    path.write_text(config if isinstance(config, str) else json.dumps(config), encoding="utf-8")
    return subprocess.run(
        [sys.executable, "-m", "webhost", "check", str(path), *args],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=timeout,
    )


@pytest.mark.parametrize(
    ("config", "says"),
    [
        ("{not json", "not JSON"),
        ({"servers": {}}, '"mcpServers"'),
        ({"mcpServers": {"x": {"type": "carrier-pigeon", "url": "http://127.0.0.1:1/mcp"}}}, "x"),
    ],
)
def test_a_bad_configuration_is_one_line_and_exit_2(tmp_path: Path, config: Any, says: str) -> None:
    done = check(tmp_path, config, timeout=60)
    assert done.returncode == 2, done
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1, done.stderr
    assert lines[0].startswith("webhost check: bad configuration:")
    assert says in lines[0]
    assert "Traceback" not in done.stderr


@pytest.mark.e2e
@pytest.mark.peers
def test_the_react_example_app_is_ready_and_clean(tmp_path: Path) -> None:
    if not peers_installed():
        pytest.skip(f"no npm peers in {PEERS}: run scripts/install-test-deps")
    done = check(
        tmp_path,
        {"mcpServers": {"basic-react": peer_server("mcp-server-basic-react", "--stdio")}},
        "--json",
        "--settle",
        "1",
    )
    assert done.returncode == 0, done.stdout + done.stderr
    report = json.loads(done.stdout)
    assert report["ok"] is True
    (server,) = report["servers"]
    assert server["status"] == "connected"
    assert server["era"] == "legacy" and server["protocol_version"] == "2025-11-25"
    assert "tools" in server["capabilities"]
    (app,) = server["apps"]
    assert app["tool"] == "get-time" and app["resource_uri"] == "ui://get-time/mcp-app.html"
    assert app["ready"] is True and 0 < app["ready_seconds"] < 30
    assert app["failures"] == []
    assert app["csp_violations"] == [] and app["refused_tool_calls"] == [] and app["bridge_violations"] == []


@pytest.mark.e2e
@pytest.mark.timeout(150)
def test_an_app_that_breaks_its_csp_and_visibility_fails_the_check(tmp_path: Path) -> None:
    config = {
        "mcpServers": {"check": {"command": sys.executable, "args": [str(SERVERS / "check_apps.py"), "--with-silent"]}}
    }
    done = check(tmp_path, config, "--json", "--timeout", "5", "--settle", "1.5", timeout=140)
    assert done.returncode == 1, done.stdout + done.stderr
    report = json.loads(done.stdout)
    assert report["ok"] is False
    (server,) = report["servers"]
    assert server["era"] == "modern"
    assert "io.modelcontextprotocol/ui" in server["extensions"]
    apps = {a["tool"]: a for a in server["apps"]}
    assert set(apps) == {"good_app", "bad_app", "silent_app"}  # model_only has no app

    good = apps["good_app"]
    assert good["ready"] and good["failures"] == [] and good["arguments"] == {"greeting": "hello"}

    bad = apps["bad_app"]
    assert bad["ready"]
    assert any("http://127.0.0.1:9/pixel.png" in v and "img-src" in v for v in bad["csp_violations"])
    assert bad["refused_tool_calls"] == ["model_only: not visible to apps"]
    refused = ["request before ui/initialize refused: resources/list"]
    assert bad["before_initialized"] == bad["refused_requests"] == refused
    assert any("pixel.png" in e for e in bad["console_errors"])  # Chromium's CSP line: counted as the CSP violation
    assert len(bad["failures"]) == 3 and "1 request(s) refused by webhost" in bad["failures"]

    silent = apps["silent_app"]
    assert silent["ready"] is False and silent["app_status"] == "loading"
    assert 'data-app-status="loading"' in silent["error"]


@pytest.mark.e2e
@pytest.mark.timeout(150)
def test_the_text_report_names_the_findings(tmp_path: Path) -> None:
    config = {"mcpServers": {"check": {"command": sys.executable, "args": [str(SERVERS / "check_apps.py")]}}}
    done = check(tmp_path, config, "--settle", "1.5", timeout=140)
    assert done.returncode == 1, done.stdout + done.stderr
    out = done.stdout
    assert "check (check-apps 1.0.0): connected, protocol 2026-07-28 (modern)" in out
    assert "good_app -> ui://check/good.html: ready in" in out
    assert "CSP violations (undeclared loads): CSP blocked http://127.0.0.1:9/pixel.png (img-src)" in out
    assert "refused tool calls: model_only: not visible to apps" in out
    assert "requests refused: request before ui/initialize refused: resources/list" in out
    assert out.strip().splitlines()[-1].startswith("FAIL: 3 problem(s): check/bad_app:")


@pytest.mark.e2e
@pytest.mark.timeout(150)
def test_an_app_whose_request_was_refused_and_that_logged_an_error_fails_the_check(tmp_path: Path) -> None:
    # Ready, no CSP or visibility problem: only the refused request and the app's own console error say it drew
    # nothing (the ext-apps customer-segmentation App did this when webhost refused its data request).
    server = {"command": sys.executable, "args": [str(SERVERS / "check_apps.py"), "--early-only"]}
    config = {"mcpServers": {"check": server}}
    done = check(tmp_path, config, "--settle", "1.5", timeout=140)
    assert done.returncode == 1, done.stdout + done.stderr
    out = done.stdout
    assert "early_app -> ui://check/early.html: ready in" in out
    assert "requests refused: request before ui/initialize refused: tools/call" in out
    assert "console errors: early_app: could not load its data:" in out
    assert out.strip().splitlines()[-1] == (
        "FAIL: 2 problem(s): check/early_app: 1 request(s) refused by webhost; "
        "check/early_app: 1 error(s) in the console"
    )
