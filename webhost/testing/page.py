"""A small, typed page object over webhost's stable data attributes (shared/contract.md §4).

Every method waits on the attribute that says the page is ready (never a sleep), and every failure is an
AssertionError that says what was on the page instead: the current ``data-status``, the visible error text.
"""

from __future__ import annotations

import json
import re
import time
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Protocol

from playwright.sync_api import Error as PlaywrightError
from playwright.sync_api import FrameLocator, Locator, Page

from webhost.testing.forms import css_string, fill_control


class Host(Protocol):
    """What signing in needs from a running webhost (webhost.testing.Webhost has it)."""

    @property
    def base_url(self) -> str: ...

    @property
    def token(self) -> str: ...


CONNECT_MS = 30_000
CALL_MS = 30_000
APP_MS = 30_000
APPEAR_MS = 15_000

RESULT = '[data-testid="tool-result"]'
LOG_ENTRY = '[data-testid="activity-log"] [data-log-entry]'


def _text(locator: Locator, limit: int = 500) -> str:
    """The visible text of the first match, shortened, or '' when there is none."""
    try:
        if locator.count() == 0:
            return ""
        text = " ".join(locator.first.inner_text(timeout=1_000).split())
    except PlaywrightError:
        return ""
    return text if len(text) <= limit else text[: limit - 1] + "…"


@dataclass(frozen=True)
class ToolResult:
    """The settled result of the open tool's last call: ``status`` is ``ok`` or ``error``."""

    status: str
    text: str
    locator: Locator = field(repr=False, compare=False)
    """The result element, for further assertions (``expect(result.locator).to_contain_text(...)``)."""
    call_id: str | None = None

    @property
    def ok(self) -> bool:
        return self.status == "ok"


@dataclass(frozen=True)
class LogEntry:
    """One ``[data-log-entry]`` of the activity log."""

    server: str
    method: str
    kind: str
    direction: str
    summary: str


class App:
    """An MCP App's outer frame (``iframe[data-app-frame]``) in the open tool or input request."""

    def __init__(self, owner: WebhostPage, server: str, resource_uri: str | None = None) -> None:
        self._owner = owner
        self.server = server
        selector = f"iframe[data-app-frame][data-server={css_string(server)}]"
        if resource_uri:
            selector += f"[data-resource-uri={css_string(resource_uri)}]"
        self.selector = selector
        self.frame: Locator = owner.page.locator(selector).last
        """The outer (sandbox proxy) frame element."""

    @property
    def status(self) -> str | None:
        """``loading`` / ``ready`` / ``error``, or None while there is no frame."""
        if self._owner.page.locator(self.selector).count() == 0:
            return None
        return self.frame.get_attribute("data-app-status")

    @property
    def content(self) -> FrameLocator:
        """The app's own document: the inner frame inside the sandbox proxy."""
        return self._owner.page.frame_locator(self.selector).last.frame_locator("iframe")

    def wait_ready(self, timeout: float = APP_MS) -> float:
        """Wait for ``data-app-status="ready"``; return the seconds it took from this call."""
        start = time.monotonic()
        selector = json.dumps(self.selector)
        try:
            self._owner.page.wait_for_function(
                f"""() => {{
                  const all = document.querySelectorAll({selector});
                  const f = all[all.length - 1];
                  return f && (f.dataset.appStatus === "ready" || f.dataset.appStatus === "error");
                }}""",
                timeout=timeout,
            )
        except PlaywrightError:
            pass
        status = self.status
        if status != "ready":
            raise AssertionError(
                self._describe(f"app of {self.server!r} did not reach ready within {timeout / 1000:.0f} s", status)
            )
        return time.monotonic() - start

    def _describe(self, what: str, status: str | None) -> str:
        page = self._owner.page
        parts = [
            f"{what}: " + ("no iframe[data-app-frame] on the page" if status is None else f'data-app-status="{status}"')
        ]
        error = _text(page.locator("[data-app-error]"))
        if error:
            parts.append(f"the app panel says: {error}")
        problems = [e for e in self._owner.log_entries(self.server) if e.kind == "error"]
        if problems:
            parts.append("activity errors: " + "; ".join(f"{e.method} {e.summary}" for e in problems[-5:]))
        if self._owner.console_errors:
            parts.append("console errors: " + "; ".join(self._owner.console_errors[-5:]))
        return "\n  ".join(parts)


class Elicitation:
    """A pending input request (``[data-elicitation]``): a native form, a URL, an app or a sampling request."""

    def __init__(self, owner: WebhostPage, locator: Locator) -> None:
        self._owner = owner
        request_id = locator.get_attribute("data-id")
        # Bound to this request: a follow-up request (a second round) is a new Elicitation.
        self.locator = (
            owner.page.locator(f"[data-elicitation][data-id={css_string(request_id)}]") if request_id else locator
        )

    @property
    def mode(self) -> str | None:
        return self.locator.get_attribute("data-mode")

    @property
    def server(self) -> str | None:
        return self.locator.get_attribute("data-server")

    @property
    def text(self) -> str:
        return _text(self.locator, 2_000)

    def fill(self, values: Mapping[str, Any]) -> Elicitation:
        """Fill the form's controls, one per property (``[name="PROP"]``)."""
        for name, value in values.items():
            fill_control(self.locator, name, value, f"input request of {self.server!r}")
        return self

    def answer(self, values: Mapping[str, Any] | None = None) -> None:
        """Fill ``values`` and accept; waits until the request has left the page."""
        self.fill(values or {})
        self._press("accept")

    def accept(self) -> None:
        self._press("accept")

    def decline(self) -> None:
        self._press("decline")

    def cancel(self) -> None:
        self._press("cancel")

    def _press(self, action: str) -> None:
        button = self.locator.locator(f'[data-action="{action}"]')
        if button.count() == 0:
            raise AssertionError(
                f"the {self.mode} input request of {self.server!r} has no {action} button; it shows: {self.text}"
            )
        button.first.click()
        try:
            self.locator.wait_for(state="detached", timeout=APPEAR_MS)
        except PlaywrightError:
            raise AssertionError(
                f"the input request of {self.server!r} stayed after {action}; it shows: {self.text}"
            ) from None


class Approvals:
    """The pending requests for the user's approval (``[data-approval]``); allow/deny answer the first.

    Identical requests from one app frame share one card (``data-count``): allow/deny decide its oldest
    request, ``allow_all`` every request on it; ``count`` counts cards.
    """

    def __init__(self, owner: WebhostPage, kind: str | None) -> None:
        self._owner = owner
        self.selector = "[data-approval]" + (f"[data-kind={css_string(kind)}]" if kind else "")
        self.locator = owner.page.locator(self.selector)

    def count(self) -> int:
        return self.locator.count()

    def kinds(self) -> list[str]:
        return [k or "" for k in (el.get_attribute("data-kind") for el in self.locator.all())]

    @property
    def text(self) -> str:
        return _text(self.locator, 2_000)

    def allow(self) -> None:
        self._press("allow")

    def deny(self) -> None:
        self._press("deny")

    def allow_all(self) -> None:
        """Allow every request on the first card (identical requests from one app share it)."""
        several = int(self.locator.first.get_attribute("data-count") or "1") > 1
        self._press("allow-all" if several else "allow")

    def _press(self, action: str) -> None:
        first = self.locator.first
        before = self.count()
        decided = first.get_attribute("data-id") or ""  # the request a button decides (the card's oldest)
        first.locator(f'[data-action="{action}"]').click()
        try:
            self._owner.page.wait_for_function(
                """([sel, n, id]) => document.querySelectorAll(sel).length < n
                  || ![...document.querySelectorAll(sel)].some((e) => e.dataset.id === id)""",
                arg=[self.selector, before, decided],
                timeout=APPEAR_MS,
            )
        except PlaywrightError:
            raise AssertionError(f"the approval stayed after {action}; it shows: {self.text}") from None


class WebhostPage:
    """webhost's page, signed in, driven through the contract's data attributes.

    ``page`` is the Playwright page; ``console_errors`` collects console errors and uncaught page errors.
    """

    def __init__(self, page: Page, host: Host | None = None) -> None:
        self.page = page
        self.host = host
        self.console_errors: list[str] = []
        self._view: Locator | None = None
        page.on("console", lambda m: self.console_errors.append(m.text) if m.type == "error" else None)
        page.on("pageerror", lambda e: self.console_errors.append(str(e)))

    # ---- getting in, servers ----------------------------------------------------------------------

    def sign_in(self, host: Host | None = None) -> WebhostPage:
        """Open ``/?token=…`` and wait until the token has left the address bar."""
        host = host or self.host
        if host is None:
            raise ValueError("sign_in needs a Webhost")
        self.host = host
        self.page.goto(f"{host.base_url}/?token={host.token}")
        self.page.wait_for_url(f"{host.base_url}/")
        return self

    def server(self, name: str) -> Locator:
        """The server's card (``[data-server="NAME"][data-status]``)."""
        return self.page.locator(f"[data-server={css_string(name)}][data-status]").first

    def server_status(self, name: str) -> str | None:
        card = self.page.locator(f"[data-server={css_string(name)}][data-status]")
        return card.first.get_attribute("data-status") if card.count() else None

    def wait_connected(self, *names: str, timeout: float = CONNECT_MS) -> None:
        """Wait until each server's card says ``connected``; fail with its status and error text."""
        for name in names:
            selector = json.dumps(f"[data-server={css_string(name)}][data-status]")
            try:
                self.page.wait_for_function(
                    f"""() => {{ const s = document.querySelector({selector})?.dataset.status;
                      return s === "connected" || s === "error" || s === "auth-required"; }}""",
                    timeout=timeout,
                )
            except PlaywrightError:
                pass
            status = self.server_status(name)
            if status != "connected":
                shown = "no such server on the page" if status is None else f'data-status="{status}"'
                error = _text(self.page.locator(f'[data-server={css_string(name)}] [data-testid="server-error"]'))
                raise AssertionError(
                    f"server {name!r} is not connected: {shown}" + (f"; it says: {error}" if error else "")
                )

    def open_workbench(self) -> None:
        """Show the workbench (servers, activity log) when the page shows the chat: with a model configured the
        chat is the landing view, and the servers' tools are a click away."""
        if self.page.evaluate("() => document.body.dataset.view === 'chat'"):
            self.page.locator('[data-action="open-workbench"]').click()
            self.page.wait_for_function("() => document.body.dataset.view === 'workbench'", timeout=APPEAR_MS)

    # ---- tools --------------------------------------------------------------------------------------

    def open_tool(self, server: str, tool: str) -> Locator:
        """Wait for the server, click its tool, and return the open tool's view."""
        self.wait_connected(server)
        item = self.page.locator(f"[data-server={css_string(server)}] [data-tool={css_string(tool)}]")
        try:
            item.first.wait_for(state="attached", timeout=APPEAR_MS)  # the list loads after connecting
        except PlaywrightError:
            pass
        if item.count() == 0:
            tools = self.page.locator(f"[data-server={css_string(server)}] [data-tool]").evaluate_all(
                "els => els.map(e => e.dataset.tool)"
            )
            raise AssertionError(f"server {server!r} has no tool {tool!r}; its tools: {tools}")
        self.open_workbench()
        item.first.click()
        view = self.page.locator(f"[data-open-server={css_string(server)}][data-open-tool={css_string(tool)}]")
        try:
            view.wait_for(state="visible", timeout=APPEAR_MS)
        except PlaywrightError:
            raise AssertionError(f"clicked {server}/{tool} but its view did not open") from None
        self._view = view
        return view

    def fill(self, **args: Any) -> WebhostPage:
        """Fill the open tool's arguments (``[name="ARG"]``) from Python values of any schema kind."""
        for name, value in args.items():
            fill_control(self._view or self.page.locator("body"), name, value, "the open tool's form")
        return self

    def call(self, expect: str | None = None, timeout: float = CALL_MS) -> ToolResult:
        """Press call, wait until the new result is no longer pending, and return it.

        With ``expect="ok"`` (or ``"error"``) a different outcome fails with the result's text.
        """
        previous = self.page.locator(RESULT)
        old_id = previous.first.get_attribute("data-call-id") if previous.count() else None
        submit = self.page.locator('[data-testid="call-tool"]')
        submit.click()
        field_errors = self.page.locator("[data-field-error]:visible").filter(has_text=re.compile(r"\S"))
        try:
            self.page.wait_for_function(
                """([sel, old]) => {
                  const r = document.querySelector(sel);
                  const bad = [...document.querySelectorAll("[data-field-error]")];
                  if (bad.some((e) => e.offsetParent && e.textContent.trim())) return true;
                  return r && r.dataset.callId !== old && r.dataset.status !== "pending";
                }""",
                arg=[RESULT, old_id],
                timeout=timeout,
            )
        except PlaywrightError:
            pass
        result = self.page.locator(RESULT)
        new_id = result.first.get_attribute("data-call-id") if result.count() else None
        if new_id is None or new_id == old_id:
            if field_errors.count():
                raise AssertionError(
                    "the call was not sent, the form has errors: "
                    + "; ".join(f"{e.get_attribute('data-field-error')}: {_text(e)}" for e in field_errors.all())
                )
            raise AssertionError('pressing call produced no new [data-testid="tool-result"]')
        return self._settled(expect, timeout)

    def settled_result(self, expect: str | None = None, timeout: float = CALL_MS) -> ToolResult:
        """The open tool's last result once it is no longer pending (after an input request was answered, the
        call goes on: its result comes later). With ``expect``, a different outcome fails with its text."""
        try:
            self.page.wait_for_function(
                """(sel) => { const r = document.querySelector(sel); return r && r.dataset.status !== "pending"; }""",
                arg=RESULT,
                timeout=timeout,
            )
        except PlaywrightError:
            pass
        return self._settled(expect, timeout)

    def _settled(self, expect: str | None, timeout: float) -> ToolResult:
        settled = self.result()
        if settled.status == "pending":
            raise AssertionError(f"the call was still pending after {timeout / 1000:.0f} s: {settled.text}")
        if expect is not None and settled.status != expect:
            raise AssertionError(
                f'the tool result has data-status="{settled.status}", expected "{expect}"; it says: {settled.text}'
            )
        return settled

    def result(self) -> ToolResult:
        """The open tool's last result as it is now (status ``pending`` / ``ok`` / ``error``, and its text)."""
        result = self.page.locator(RESULT)
        if result.count() == 0:
            raise AssertionError('the open tool has no result yet (no [data-testid="tool-result"])')
        first = result.first
        return ToolResult(
            status=first.get_attribute("data-status") or "",
            text=_text(first, 10_000),
            call_id=first.get_attribute("data-call-id"),
            locator=first,
        )

    # ---- apps, input requests, approvals, activity ------------------------------------------------

    def app(self, server: str, resource_uri: str | None = None) -> App:
        """The app frame of ``server`` in the open view (see App.wait_ready, App.content)."""
        return App(self, server, resource_uri)

    def elicitation(
        self, server: str | None = None, mode: str | None = None, timeout: float = APPEAR_MS
    ) -> Elicitation:
        """Wait for a pending input request (of ``server``, in ``mode``) and return it."""
        selector = (
            "[data-elicitation]"
            + (f"[data-server={css_string(server)}]" if server else "")
            + (f"[data-mode={css_string(mode)}]" if mode else "")
        )
        locator = self.page.locator(selector).first
        try:
            locator.wait_for(state="visible", timeout=timeout)
        except PlaywrightError:
            others = self.page.locator("[data-elicitation]").evaluate_all(
                "els => els.map(e => `${e.dataset.server}/${e.dataset.mode}`)"
            )
            status = ""
            if self.page.locator(RESULT).count():
                r = self.result()
                status = f'; the tool result has data-status="{r.status}": {r.text}'
            raise AssertionError(
                f"no input request {selector} appeared within {timeout / 1000:.0f} s "
                f"(pending: {others or 'none'}){status}"
            ) from None
        return Elicitation(self, locator)

    def approvals(self, kind: str | None = None, timeout: float = APPEAR_MS) -> Approvals:
        """Wait for at least one pending approval (of ``kind``: ``tool-call``, ``open-link``) and return them."""
        found = Approvals(self, kind)
        try:
            found.locator.first.wait_for(state="visible", timeout=timeout)
        except PlaywrightError:
            raise AssertionError(
                f"no approval{' of kind ' + kind if kind else ''} appeared within {timeout / 1000:.0f} s"
            ) from None
        return found

    def log_entries(
        self, server: str | None = None, method: str | None = None, kind: str | None = None
    ) -> list[LogEntry]:
        """The activity log's entries (``[data-log-entry]``), oldest first, optionally filtered."""
        selector = (
            LOG_ENTRY
            + (f"[data-log-server={css_string(server)}]" if server else "")
            + (f"[data-method={css_string(method)}]" if method else "")
            + (f"[data-kind={css_string(kind)}]" if kind else "")
        )
        rows: list[dict[str, str]] = self.page.locator(selector).evaluate_all(
            """els => els.map(e => ({server: e.dataset.logServer ?? "", method: e.dataset.method ?? "",
                 kind: e.dataset.kind ?? "", direction: e.dataset.direction ?? "",
                 summary: (e.querySelector(".log-summary")?.textContent ?? "").replace(/\\s+/g, " ").trim()}))"""
        )
        return [LogEntry(**row) for row in rows]
