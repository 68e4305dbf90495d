"""The pytest plugin (webhost.testing.plugin) as a server author uses it, run by pytester in a subprocess.

One inner run against real `webhost serve` processes: the embedded demo (an app and a two-round input request)
and tests/servers/basic.py given through the marker; one inner test fails on purpose, and its message must
name what was on the page.
"""

from __future__ import annotations

import importlib.metadata
import os
import tomllib

import pytest

from tests.support.process import ROOT, SERVERS

pytest_plugins = ["pytester"]

INNER = """
import sys
import pytest
from webhost.testing import WebhostPage

def test_demo_app_reaches_ready(webhost_page: WebhostPage) -> None:
    webhost_page.open_tool("demo", "show_dashboard")
    webhost_page.call(expect="ok")
    app = webhost_page.app("demo")
    app.wait_ready()
    assert app.status == "ready"
    assert webhost_page.console_errors == []

def test_demo_input_request(webhost_page: WebhostPage) -> None:
    webhost_page.open_tool("demo", "register_user")
    webhost_page.page.locator('[data-testid="call-tool"]').click()
    webhost_page.elicitation("demo", "form").answer({"name": "Ada", "email": "ada@example.com", "age": 36})
    webhost_page.elicitation("demo", "form").answer({"confirm": True})
    assert "Ada" in webhost_page.settled_result(expect="ok").text

BASIC = {"mcpServers": {"basic": {"command": sys.executable, "args": [BASIC_PY]}}}

@pytest.mark.webhost(BASIC)
def test_fails_and_says_what_the_page_shows(webhost_page: WebhostPage) -> None:
    webhost_page.open_tool("basic", "fail")
    webhost_page.fill(message="it broke on purpose")
    webhost_page.call(expect="ok")
"""


def test_the_entry_point_names_the_plugin() -> None:
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    assert project["entry-points"]["pytest11"] == {"webhost": "webhost.testing.plugin"}
    assert set(project["optional-dependencies"]["testing"]) >= {"pytest>=8", "playwright>=1.45"}


@pytest.mark.e2e
@pytest.mark.timeout(180)
def test_a_server_authors_tests_pass_and_a_failure_names_the_page(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> None:
    pytester.makepyfile(test_mine=INNER.replace("BASIC_PY", repr(str(SERVERS / "basic.py"))))
    # This worktree's webhost, not whichever one the venv's editable install points at.
    monkeypatch.setenv("PYTHONPATH", str(ROOT) + os.pathsep + os.environ.get("PYTHONPATH", ""))
    # Installed (pip install webhost[testing]) the entry point loads the plugin; from a bare checkout, -p does.
    installed = any(ep.value == "webhost.testing.plugin" for ep in importlib.metadata.entry_points(group="pytest11"))
    load = [] if installed else ["-p", "webhost.testing.plugin"]
    result = pytester.runpytest_subprocess(*load, "-p", "no:cacheprovider", "-q", timeout=170)
    result.assert_outcomes(passed=2, failed=1)
    text = result.stdout.str()
    assert "test_fails_and_says_what_the_page_shows" in text
    assert 'the tool result has data-status="error", expected "ok"; it says:' in text
    assert "Error executing tool fail" in text
