"""`webhost check CONFIG`: open every MCP App of the configured servers in headless Chromium and report.

It starts a real `webhost serve` on free ports (webhost.testing.host), signs a headless Chromium in, and for
every server: waits for it, lists its tools, and for each tool with an app (``_meta.ui.resourceUri``) calls it
with its example arguments (the input schema's ``examples`` / ``default``, else none) and watches the app:
whether it reaches ``data-app-status="ready"`` and how long that took, the CSP violations it caused (audit
``app.csp-violation``), the tool calls the backend refused it (audit ``app.tools/call`` refused), the bridge
violations (audit ``app.violation``), the requests it sent before ``ui/notifications/initialized`` (activity:
refused before its ``ui/initialize``, served with a warning after it), the other requests webhost refused it
(audit, decision ``refused``) and the console errors. Code the policy blocks that no ``_meta.ui.csp`` can allow
(eval, inline script) is reported but does not fail the check. Exit status: 0 all good, 1 an app failed, broke a
MUST of the MCP Apps spec, had a request refused or logged an error in the console (or a server did not
connect), 2 a bad configuration (one line on stderr).

Needs the `testing` extra (Playwright) and a Chromium.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from webhost.testing.page import WebhostPage

USAGE_ERROR = 2
# Chromium's own console line for a CSP violation: already a finding of its own (csp_violations / csp_blocked_code).
CSP_CONSOLE_LINE = "Content Security Policy"

# The page's own connection, for what the data attributes do not show (protocol, capabilities, schemas).
PAGE_RPC_JS = """async ([method, params]) => {
  const main = document.querySelector('script[type="module"][src*="/js/main.js"]');
  const page = (await import(main.src)).page;
  for (let i = 0; i < 200 && page.rpc.state !== "open"; i++) await new Promise((r) => setTimeout(r, 50));
  return await page.rpc.request(method, params);
}"""


@dataclass
class AppReport:
    tool: str
    resource_uri: str
    arguments: dict[str, Any]
    app_status: str | None = None
    ready: bool = False
    ready_seconds: float | None = None
    result_status: str | None = None
    csp_violations: list[str] = field(default_factory=list)
    csp_blocked_code: list[str] = field(default_factory=list)
    refused_tool_calls: list[str] = field(default_factory=list)
    bridge_violations: list[str] = field(default_factory=list)
    before_initialized: list[str] = field(default_factory=list)
    refused_requests: list[str] = field(default_factory=list)
    console_errors: list[str] = field(default_factory=list)
    error: str | None = None
    frame_id: str | None = None

    @property
    def app_errors(self) -> list[str]:
        """The console errors that are not Chromium's report of a CSP violation (those are findings of their own)."""
        return [e for e in self.console_errors if CSP_CONSOLE_LINE not in e]

    @property
    def failures(self) -> list[str]:
        """What makes the check fail: not ready, a MUST of the MCP Apps spec broken, a request webhost refused, or
        an error in the console (an app that works does not log one)."""
        found = []
        if not self.ready:
            found.append(f"did not reach ready (data-app-status={self.app_status})")
        if self.csp_violations:
            found.append(f"{len(self.csp_violations)} CSP violation(s): loaded what its _meta.ui.csp does not declare")
        if self.refused_tool_calls:
            found.append(f"{len(self.refused_tool_calls)} tool call(s) refused by visibility or policy")
        if self.bridge_violations:
            found.append(f"{len(self.bridge_violations)} bridge violation(s)")
        if self.refused_requests:
            found.append(f"{len(self.refused_requests)} request(s) refused by webhost")
        if self.app_errors:
            found.append(f"{len(self.app_errors)} error(s) in the console")
        return found


@dataclass
class ServerReport:
    name: str
    status: str | None
    error: str | None = None
    protocol_version: str | None = None
    era: str | None = None
    server_info: dict[str, Any] | None = None
    capabilities: list[str] = field(default_factory=list)
    extensions: list[str] = field(default_factory=list)
    tools: int = 0
    apps: list[AppReport] = field(default_factory=list)


class BadConfig(Exception):
    pass


def read_config(path: Path) -> dict[str, Any]:
    """The configuration's shape, checked enough to say what is wrong in one line (webhost serve checks the rest)."""
    try:
        document = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise BadConfig(f"{path}: no such file") from None
    except (OSError, UnicodeDecodeError) as exc:
        raise BadConfig(f"{path}: cannot read: {exc}") from None
    except json.JSONDecodeError as exc:
        raise BadConfig(f"{path}: not JSON: {exc.msg} at line {exc.lineno} column {exc.colno}") from None
    servers = document.get("mcpServers") if isinstance(document, dict) else None
    if not isinstance(servers, dict) or not servers:
        raise BadConfig(f'{path}: needs an "mcpServers" object with at least one server')
    return dict(document)


def example_arguments(schema: Any) -> dict[str, Any]:
    """Arguments from the input schema: its first ``examples`` entry, else each property's example or default."""
    if not isinstance(schema, dict):
        return {}
    examples = schema.get("examples")
    if isinstance(examples, list) and examples and isinstance(examples[0], dict):
        return dict(examples[0])
    arguments: dict[str, Any] = {}
    properties = schema.get("properties")
    for name, prop in properties.items() if isinstance(properties, dict) else []:
        if not isinstance(prop, dict):
            continue
        if isinstance(prop.get("examples"), list) and prop["examples"]:
            arguments[name] = prop["examples"][0]
        elif "example" in prop:
            arguments[name] = prop["example"]
        elif "default" in prop:
            arguments[name] = prop["default"]
    return arguments


def run(config_path: Path, *, settle: float, app_timeout: float) -> list[ServerReport]:
    from playwright.sync_api import sync_playwright

    from webhost.testing.browser import launch_chromium
    from webhost.testing.host import start_webhost
    from webhost.testing.page import WebhostPage

    document = read_config(config_path)
    reports: list[ServerReport] = []
    with start_webhost(config_path.resolve()) as host, sync_playwright() as playwright:
        browser = launch_chromium(playwright)
        try:
            context = browser.new_context(viewport={"width": 1400, "height": 1000})
            context.set_default_timeout(15_000)
            ui = WebhostPage(context.new_page(), host).sign_in()

            def fresh_page() -> WebhostPage:
                # One page per app: its console errors and activity are that app's alone.
                page = WebhostPage(context.new_page(), host)
                page.page.goto(f"{host.base_url}/")
                return page

            for name in document["mcpServers"]:
                reports.append(check_server(ui, fresh_page, name, settle=settle, app_timeout=app_timeout))
            audit = host.audit()
        finally:
            browser.close()
    attach_audit(reports, audit)
    return reports


def check_server(
    ui: WebhostPage, fresh_page: Callable[[], WebhostPage], name: str, *, settle: float, app_timeout: float
) -> ServerReport:
    try:
        ui.wait_connected(name)
    except AssertionError as exc:
        return ServerReport(name, ui.server_status(name), error=str(exc))
    rpc = ui.page.evaluate
    state = next(s for s in rpc(PAGE_RPC_JS, ["servers/list", {}])["servers"] if s["name"] == name)
    caps = state.get("capabilities") or {}
    report = ServerReport(
        name,
        state.get("status"),
        protocol_version=state.get("protocolVersion"),
        era=state.get("era"),
        server_info=state.get("serverInfo"),
        capabilities=sorted(k for k in caps if k != "extensions"),
        extensions=sorted((caps.get("extensions") or {}).keys()),
    )
    tools = rpc(PAGE_RPC_JS, ["tools/list", {"server": name}])["tools"]
    report.tools = len(tools)
    for tool in tools:
        uri = (tool.get("webhost") or {}).get("resourceUri")
        if uri:
            app_page = fresh_page()
            try:
                report.apps.append(check_app(app_page, name, tool, uri, settle=settle, app_timeout=app_timeout))
            finally:
                app_page.page.close()
    return report


def check_app(
    ui: WebhostPage, server: str, tool: dict[str, Any], uri: str, *, settle: float, app_timeout: float
) -> AppReport:
    arguments = example_arguments(tool.get("inputSchema"))
    report = AppReport(tool["name"], uri, arguments)
    try:
        ui.open_tool(server, tool["name"])
        page = ui.page
        raw = page.locator(".raw-toggle-input")
        if arguments and raw.count():
            if not raw.is_checked():
                raw.check()
            page.locator('[data-testid="raw-json"]').fill(json.dumps(arguments))
        app = ui.app(server, uri)
        start = time.monotonic()
        page.locator('[data-testid="call-tool"]').click()
        try:
            app.wait_ready(timeout=app_timeout * 1000)
            report.ready = True
            report.ready_seconds = round(time.monotonic() - start, 2)
        except AssertionError as exc:
            report.error = str(exc)
        report.app_status = app.status
        report.frame_id = app.frame.get_attribute("data-frame-id") if report.app_status else None
        # Watch the running app for a while: what it loads and calls after ready is reported too.
        page.wait_for_timeout(settle * 1000)
        if page.locator('[data-testid="tool-result"]').count():
            report.result_status = ui.result().status
    except AssertionError as exc:
        report.error = str(exc)
    report.console_errors = list(dict.fromkeys(ui.console_errors))
    lifecycle = ui.log_entries(server, method="app/lifecycle")
    report.before_initialized, report.refused_requests = early_requests([e.summary for e in lifecycle])
    return report


def early_requests(lifecycle: list[str]) -> tuple[list[str], list[str]]:
    """From a frame's lifecycle lines: its requests sent before ui/notifications/initialized, and those of them the
    bridge refused (sent before ui/initialize; after it they are served with a warning: static/js/apps/inbound.js)."""
    early = [line for line in lifecycle if line.startswith("request before ")]
    return early, [line for line in early if line.startswith("request before ui/initialize refused")]


def attach_audit(reports: list[ServerReport], audit: list[dict[str, Any]]) -> None:
    for server in reports:
        for app in server.apps:
            frame = app.frame_id
            if not frame:
                continue
            mine = [e for e in audit if e.get("frame") == frame]
            for entry in (e for e in mine if e.get("kind") == "app.csp-violation"):
                # A URL is a load its _meta.ui.csp could have declared; eval / inline cannot be declared
                # there at all (the spec's policy forbids them), so those are reported but do not fail.
                target = str(_detail(entry).get("blockedURI", ""))
                loads = ":" in target and target not in ("eval", "inline", "wasm-eval", "trusted-types-sink")
                (app.csp_violations if loads else app.csp_blocked_code).append(str(entry.get("summary")))
            app.bridge_violations = [str(e.get("summary")) for e in mine if e.get("kind") == "app.violation"]
            app.refused_tool_calls = [
                str(e.get("summary"))
                for e in mine
                if e.get("kind") == "app.tools/call" and e.get("decision") == "refused"
            ]
            # Every other request the backend refused (an unsupported method, a link it may not open, ...).
            app.refused_requests += [
                f"{str(e.get('kind')).removeprefix('app.')}: {e.get('summary')}"
                for e in mine
                if e.get("decision") == "refused" and e.get("kind") != "app.tools/call"
            ]


def _detail(entry: dict[str, Any]) -> dict[str, Any]:
    detail = entry.get("detail")
    if isinstance(detail, str):
        try:
            detail = json.loads(detail)
        except json.JSONDecodeError:
            return {}
    return detail if isinstance(detail, dict) else {}


def failed(reports: list[ServerReport]) -> bool:
    return any(s.status != "connected" or any(a.failures for a in s.apps) for s in reports)


def as_json(config: Path, reports: list[ServerReport]) -> dict[str, Any]:
    servers = []
    for s in reports:
        entry = asdict(s)
        entry["apps"] = [{**asdict(a), "failures": a.failures} for a in s.apps]
        servers.append(entry)
    return {"config": str(config), "ok": not failed(reports), "servers": servers}


def _list(items: list[str]) -> str:
    return "none" if not items else "; ".join(items)


def as_text(config: Path, reports: list[ServerReport]) -> str:
    lines = [f"webhost check {config}"]
    for s in reports:
        if s.status != "connected":
            lines.append(f"\n{s.name}: {s.status or 'missing'}: {s.error}")
            continue
        info = s.server_info or {}
        who = f"{info.get('name', '?')} {info.get('version', '')}".strip()
        lines.append(f"\n{s.name} ({who}): connected, protocol {s.protocol_version} ({s.era})")
        lines.append(
            f"  capabilities: {', '.join(s.capabilities) or 'none'}; extensions: {', '.join(s.extensions) or 'none'}"
        )
        lines.append(f"  tools: {s.tools}, with an app: {len(s.apps)}")
        for a in s.apps:
            outcome = f"ready in {a.ready_seconds:.2f} s" if a.ready else f"NOT READY ({a.app_status})"
            lines.append(f"  - {a.tool} -> {a.resource_uri}: {outcome}")
            lines.append(f"      arguments: {json.dumps(a.arguments)}; tool result: {a.result_status}")
            lines.append(f"      CSP violations (undeclared loads): {_list(a.csp_violations)}")
            lines.append(f"      blocked by the CSP, not declarable (eval, inline): {_list(a.csp_blocked_code)}")
            lines.append(f"      refused tool calls: {_list(a.refused_tool_calls)}")
            lines.append(f"      bridge violations: {_list(a.bridge_violations)}")
            lines.append(f"      requests before initialized: {_list(a.before_initialized)}")
            lines.append(f"      requests refused: {_list(a.refused_requests)}")
            lines.append(f"      console errors: {_list(a.console_errors)}")
            if a.error and not a.ready:
                lines.append("      " + a.error.replace("\n", "\n      "))
    problems = [f"{s.name}: not connected" for s in reports if s.status != "connected"]
    problems += [f"{s.name}/{a.tool}: {f}" for s in reports for a in s.apps for f in a.failures]
    apps = sum(len(s.apps) for s in reports)
    lines.append("")
    lines.append(
        f"FAIL: {len(problems)} problem(s): " + "; ".join(problems)
        if problems
        else f"OK: {apps} app(s) checked, all ready, no violations"
    )
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="webhost check", description=__doc__.split("\n\n")[0])
    parser.add_argument("config", type=Path, help="the configuration file (mcp.json format)")
    parser.add_argument("--json", action="store_true", help="print the report as JSON")
    parser.add_argument(
        "--settle", type=float, default=2.0, help="seconds to watch each app after it is ready (default 2)"
    )
    parser.add_argument("--timeout", type=float, default=30.0, help="seconds each app has to reach ready (default 30)")
    args = parser.parse_args(argv)
    try:
        read_config(args.config)
    except BadConfig as exc:
        print(f"webhost check: bad configuration: {exc}", file=sys.stderr)
        return USAGE_ERROR
    try:
        from webhost.testing.host import WebhostFailed
    except ImportError as exc:  # pragma: no cover - the extra is missing
        print(f'webhost check: needs the testing extra (pip install "webhost[testing]"): {exc}', file=sys.stderr)
        return USAGE_ERROR
    try:
        reports = run(args.config, settle=args.settle, app_timeout=args.timeout)
    except WebhostFailed as exc:
        log = str(exc)
        line = next((ln for ln in log.splitlines() if "configuration error" in ln), None)
        if line:
            print(f"webhost check: bad configuration: {line.split('configuration error: ', 1)[-1]}", file=sys.stderr)
            return USAGE_ERROR
        print(f"webhost check: {log}", file=sys.stderr)
        return 1
    print(json.dumps(as_json(args.config, reports), indent=2) if args.json else as_text(args.config, reports))
    return 1 if failed(reports) else 0
