"""`webhost check` without a browser: the configuration it accepts, the example arguments it calls a tool with,
how the audit becomes each app's findings, what fails the check, and the report in text and JSON. (The browser
run itself: tests/e2e/test_check.py.)"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from webhost import check
from webhost.check import AppReport, BadConfig, ServerReport


@pytest.mark.parametrize(
    ("text", "message"),
    [
        (None, "no such file"),
        ("{not json", "not JSON: Expecting property name enclosed in double quotes at line 1 column 2"),
        ("[]", 'needs an "mcpServers" object with at least one server'),
        ('{"mcpServers": {}}', 'needs an "mcpServers" object with at least one server'),
        ('{"mcpServers": []}', 'needs an "mcpServers" object with at least one server'),
        (b"\xff\xfe", "cannot read"),
    ],
    ids=["missing", "not-json", "not-an-object", "no-servers", "servers-not-an-object", "not-utf8"],
)
def test_a_configuration_it_cannot_use_is_one_line(tmp_path: Path, text: str | bytes | None, message: str) -> None:
    path = tmp_path / "servers.json"
    if isinstance(text, bytes):
        path.write_bytes(text)
    elif text is not None:
        path.write_text(text, encoding="utf-8")
    with pytest.raises(BadConfig) as caught:
        check.read_config(path)
    assert str(caught.value).startswith(f"{path}: ") and message in str(caught.value)


def test_a_configuration_with_servers_is_read(tmp_path: Path) -> None:
    path = tmp_path / "servers.json"
    document = {"mcpServers": {"demo": {"command": "demo"}}, "webhost": {"timeouts": {"call": 5}}}
    path.write_text(json.dumps(document), encoding="utf-8")
    assert check.read_config(path) == document


@pytest.mark.parametrize(
    ("schema", "arguments"),
    [
        (None, {}),
        ({"examples": [{"city": "Oslo"}], "properties": {"city": {"default": "Rome"}}}, {"city": "Oslo"}),
        (
            {
                "properties": {
                    "a": {"examples": [1, 2]},
                    "b": {"example": "x"},
                    "c": {"default": True},
                    "d": {"type": "string"},
                    "e": "not a schema",
                }
            },
            {"a": 1, "b": "x", "c": True},
        ),
        ({"examples": [], "properties": {"a": {"examples": [], "default": 3}}}, {"a": 3}),
        ({"examples": ["not an object"], "properties": []}, {}),
    ],
    ids=["no-schema", "schema-example-wins", "per-property", "empty-examples", "odd-shapes"],
)
def test_a_tool_is_called_with_the_examples_its_schema_gives(schema: Any, arguments: dict[str, Any]) -> None:
    assert check.example_arguments(schema) == arguments


def app(**fields: Any) -> AppReport:
    return AppReport(**{"tool": "show", "resource_uri": "ui://demo/show.html", "arguments": {}, **fields})


def test_the_audit_becomes_each_apps_findings() -> None:
    frame, other = app(frame_id="f-1", ready=True), app(frame_id=None)
    reports = [ServerReport("demo", "connected", apps=[frame, other])]
    audit: list[dict[str, Any]] = [
        {
            "frame": "f-1",
            "kind": "app.csp-violation",
            "summary": "img https://cdn.example/x.png",
            "detail": {"blockedURI": "https://cdn.example/x.png"},
        },
        {"frame": "f-1", "kind": "app.csp-violation", "summary": "eval", "detail": json.dumps({"blockedURI": "eval"})},
        {"frame": "f-1", "kind": "app.csp-violation", "summary": "odd detail", "detail": "{not json"},
        {"frame": "f-1", "kind": "app.violation", "summary": "bypassed its sandbox proxy"},
        {"frame": "f-1", "kind": "app.tools/call", "decision": "refused", "summary": "secret_tool"},
        {"frame": "f-1", "kind": "app.tools/call", "decision": "allowed", "summary": "fine_tool"},
        {"frame": "f-1", "kind": "app.refused", "decision": "refused", "summary": "unsupported method sampling/x"},
        {"frame": "f-1", "kind": "app.open-link", "decision": "refused", "summary": "refused scheme javascript:"},
        {"frame": "f-1", "kind": "app.open-link", "decision": "deny", "summary": "https://example.com/"},
        {"frame": "f-2", "kind": "app.violation", "summary": "another frame's"},
    ]
    check.attach_audit(reports, audit)
    assert frame.csp_violations == ["img https://cdn.example/x.png"]  # a load its _meta.ui.csp could declare
    assert frame.csp_blocked_code == ["eval", "odd detail"]  # reported, never a failure
    assert frame.bridge_violations == ["bypassed its sandbox proxy"]
    assert frame.refused_tool_calls == ["secret_tool"]
    # Refused by webhost, not denied by the person.
    assert frame.refused_requests == ["refused: unsupported method sampling/x", "open-link: refused scheme javascript:"]
    assert frame.failures == [
        "1 CSP violation(s): loaded what its _meta.ui.csp does not declare",
        "1 tool call(s) refused by visibility or policy",
        "1 bridge violation(s)",
        "2 request(s) refused by webhost",
    ]
    assert other.failures == ["did not reach ready (data-app-status=None)"]  # no frame: nothing attached
    assert other.csp_violations == other.bridge_violations == []


def test_a_server_that_did_not_connect_or_an_app_that_broke_fails_the_check() -> None:
    good = ServerReport("demo", "connected", apps=[app(ready=True, frame_id="f-1")])
    assert not check.failed([good])
    assert check.failed([good, ServerReport("gone", "error", error="spawn failed")])
    assert check.failed([ServerReport("demo", "connected", apps=[app(ready=False)])])


def test_early_requests_are_read_from_the_frames_lifecycle() -> None:
    lifecycle = [
        "initialized",
        "request before ui/initialize refused: tools/call",
        "request before ui/notifications/initialized served: resources/list",
    ]
    assert check.early_requests(lifecycle) == (lifecycle[1:], [lifecycle[1]])


def test_a_request_webhost_refused_or_an_error_in_the_console_fails_the_check() -> None:
    # The ext-apps customer-segmentation App when its data request was refused: ready, no violation, but it drew
    # an empty chart and said why in the console.
    refused = "request before ui/initialize refused: tools/call"
    empty_chart = app(
        ready=True,
        frame_id="f-1",
        before_initialized=[refused],
        refused_requests=[refused],
        console_errors=["[APP] Failed to fetch data: tools/call refused"],
    )
    assert empty_chart.failures == ["1 request(s) refused by webhost", "1 error(s) in the console"]
    assert check.failed([ServerReport("demo", "connected", apps=[empty_chart])])
    # Served with a warning, and Chromium's own line for a blocked eval (a finding of its own): not failures.
    fine = app(
        ready=True,
        frame_id="f-2",
        before_initialized=["request before ui/notifications/initialized served: tools/call"],
        csp_blocked_code=["CSP blocked eval (script-src)"],
        console_errors=["Evaluating a string as JavaScript violates the following Content Security Policy directive"],
    )
    assert fine.failures == [] and not check.failed([ServerReport("demo", "connected", apps=[fine])])


def test_the_report_in_text_names_every_finding_and_the_verdict(tmp_path: Path) -> None:
    config = tmp_path / "servers.json"
    ready = app(
        ready=True,
        ready_seconds=0.42,
        arguments={"city": "Oslo"},
        result_status="ok",
        csp_blocked_code=["eval"],
        console_errors=["Refused to evaluate a string: it violates the following Content Security Policy directive"],
    )
    noisy = app(
        tool="noisy",
        ready=True,
        ready_seconds=0.5,
        refused_requests=["request before ui/initialize refused: tools/call"],
        console_errors=["TypeError: x"],
    )
    broken = app(tool="broken", app_status="error", error="the app did not load\nat line 2", before_initialized=["x"])
    reports = [
        ServerReport(
            "demo",
            "connected",
            protocol_version="2026-07-28",
            era="modern",
            server_info={"name": "demo-server", "version": "1.0"},
            capabilities=["tools"],
            tools=3,
            apps=[ready, broken, noisy],
        ),
        ServerReport("gone", None, error="not in the list"),
    ]
    text = check.as_text(config, reports)
    assert text.startswith(f"webhost check {config}")
    assert "demo (demo-server 1.0): connected, protocol 2026-07-28 (modern)" in text
    assert "capabilities: tools; extensions: none" in text and "tools: 3, with an app: 3" in text
    assert "- show -> ui://demo/show.html: ready in 0.42 s" in text
    assert 'arguments: {"city": "Oslo"}; tool result: ok' in text
    assert "blocked by the CSP, not declarable (eval, inline): eval" in text and "console errors: TypeError: x" in text
    assert "requests refused: request before ui/initialize refused: tools/call" in text
    assert "- broken -> ui://demo/show.html: NOT READY (error)" in text
    assert "      the app did not load\n      at line 2" in text  # the error, indented under its app
    assert "gone: missing: not in the list" in text
    assert text.endswith(
        "FAIL: 4 problem(s): gone: not connected; demo/broken: did not reach ready (data-app-status=error); "
        "demo/noisy: 1 request(s) refused by webhost; demo/noisy: 1 error(s) in the console"
    )
    passing = check.as_text(config, [ServerReport("demo", "connected", apps=[ready])])
    assert passing.endswith("OK: 1 app(s) checked, all ready, no violations")


def test_the_report_in_json_carries_each_apps_failures(tmp_path: Path) -> None:
    config = tmp_path / "servers.json"
    reports = [ServerReport("demo", "connected", apps=[app(ready=False, app_status="loading")])]
    document = check.as_json(config, reports)
    json.dumps(document)  # what --json prints
    assert document["config"] == str(config) and document["ok"] is False
    (server,) = document["servers"]
    assert server["name"] == "demo" and server["status"] == "connected"
    assert server["apps"][0]["failures"] == ["did not reach ready (data-app-status=loading)"]


def test_a_bad_configuration_is_status_2_before_any_browser(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "servers.json"
    path.write_text('{"mcpServers": {}}', encoding="utf-8")
    assert check.main([str(path)]) == 2
    err = capsys.readouterr().err.strip()
    assert err == f'webhost check: bad configuration: {path}: needs an "mcpServers" object with at least one server'
