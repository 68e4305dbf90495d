"""Property-based fuzzing of the app bridge through a real page (hardening, item 9).

An app (the scriptable probe of test_apps_bridge.py, on its real sandbox origin behind the real
proxy) posts what Hypothesis writes: requests for every bridge method with hostile params,
notifications, malformed JSON-RPC, non-objects. Whatever it sends: every request with a usable id
(whatever its method, even one that is not a string) is answered exactly once, the page throws
nothing, the page's own WebSocket still answers, and the servers stay connected. Bounded: a fixed
number of examples, each waited on with a deadline.
"""

from __future__ import annotations

import json
import time
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from playwright.sync_api import Locator, Page

from tests.e2e.test_apps_bridge import app_page, host, open_probe  # noqa: F401  (fixtures)

pytestmark = pytest.mark.e2e

BRIDGE_METHODS = [
    "ui/initialize",
    "tools/call",
    "resources/read",
    "resources/list",
    "resources/templates/list",
    "prompts/list",
    "ui/message",
    "ui/update-model-context",
    "ui/request-display-mode",
    "ui/open-link",
    "ui/download-file",
    "ping",
    "notifications/message",
    "ui/notifications/size-changed",
    "ui/notifications/initialized",
    "notifications/cancelled",
    "ui/notifications/sandbox-ready",
    "sampling/createMessage",
]
leaf = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(-(2**53), 2**53),
    st.floats(allow_nan=False, allow_infinity=False),
    st.text(max_size=30),
)
value = st.recursive(
    leaf,
    lambda inner: st.one_of(st.lists(inner, max_size=3), st.dictionaries(st.text(max_size=8), inner, max_size=3)),
    max_leaves=10,
)
params = st.one_of(
    st.fixed_dictionaries(
        {},
        optional={
            "name": st.sampled_from(["echo_app", "nope", ""]),
            "arguments": st.one_of(st.fixed_dictionaries({"text": st.text(max_size=20)}), value),
            "uri": st.one_of(st.sampled_from(["ui://apps/echo.html", "nope://x"]), st.text(max_size=20)),
            "content": value,
            "role": st.sampled_from(["user", "assistant", "system"]),
            "mode": st.text(max_size=10),
            "url": st.sampled_from(["javascript:alert(1)", "file:///etc/passwd", "http://u:p@example.com/", "x"]),
            "level": leaf,
            "data": value,
            "requestId": leaf,
            "height": leaf,
            "width": leaf,
        },
    ),
    value,
)
request = st.fixed_dictionaries(
    {"jsonrpc": st.just("2.0"), "method": st.sampled_from(BRIDGE_METHODS), "params": params}
)
malformed = st.one_of(
    st.fixed_dictionaries(
        {
            "jsonrpc": st.sampled_from(["2.0", "1.0", None]),
            "method": st.one_of(st.sampled_from(BRIDGE_METHODS), leaf),
            "id": st.one_of(leaf, st.text(min_size=201, max_size=210)),
        }
    ),
    value,
)
message = st.one_of(request, request, malformed)

COLLECT = """() => {
  window.fuzzAnswers = window.fuzzAnswers || {};
  if (!window.fuzzListening) {
    window.fuzzListening = true;
    window.addEventListener("message", (e) => {
      const m = e.data;
      if (e.source === window.parent && m && m.jsonrpc === "2.0" && !("method" in m) && typeof m.id === "string"
          && m.id.startsWith("fz-")) {
        window.fuzzAnswers[m.id] = (window.fuzzAnswers[m.id] || 0) + 1;
      }
    });
  }
}"""


def deny_approvals(page: Page) -> None:
    for button in page.locator('[data-approval] [data-action="deny"]').all():
        if button.is_visible():
            button.click()


def answered(app: Locator, ids: list[str], page: Page, timeout: float = 15.0) -> dict[str, int]:
    deadline = time.monotonic() + timeout
    while True:
        counts: dict[str, int] = app.evaluate(
            "(_el, ids) => Object.fromEntries(ids.map((i) => [i, (window.fuzzAnswers || {})[i] || 0]))", ids
        )
        if all(counts.values()) or time.monotonic() > deadline:
            return counts
        deny_approvals(page)
        time.sleep(0.05)


counter = iter(range(10**9))


@pytest.fixture
def probe(app_page: Page) -> tuple[Page, Locator, list[str]]:  # noqa: F811
    errors: list[str] = []
    app_page.on("pageerror", lambda exc: errors.append(str(exc)))
    _, app = open_probe(app_page)
    app.evaluate("() => window.init()")
    app.evaluate(COLLECT)
    return app_page, app, errors


@settings(
    max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow]
)
@given(messages=st.lists(message, min_size=1, max_size=4))
def test_any_app_messages_get_answers_and_break_nothing(
    probe: tuple[Page, Locator, list[str]], messages: list[Any]
) -> None:
    page, app, errors = probe
    ids: list[str] = []
    for item in messages:
        if (
            isinstance(item, dict)
            and item.get("jsonrpc") == "2.0"
            and isinstance(item.get("method"), str)
            and not item["method"].startswith(("notifications/", "ui/notifications/"))
            and "id" not in item
        ):
            item = {**item, "id": f"fz-{next(counter)}"}
            ids.append(item["id"])
        elif isinstance(item, dict) and item.get("jsonrpc") == "2.0" and "method" in item and "id" in item:
            # A malformed request (a method that is not a string, a notification's or a reserved name, an id of
            # any kind): with an id the app can be answered by, it is answered like any other.
            item = {**item, "id": f"fz-{next(counter)}"}
            ids.append(item["id"])
        app.evaluate("(_el, m) => window.parent.postMessage(m, '*')", json.loads(json.dumps(item)))
        time.sleep(0.03)  # stay under the bridge's per-second message budget (a flood is its own test)
    counts = answered(app, ids, page)
    assert all(n == 1 for n in counts.values()), (counts, messages)
    assert errors == []
    servers = page.evaluate("() => window.__page.rpc.request('servers/list')")["servers"]
    assert {s["name"]: s["status"] for s in servers if s["name"] in ("apps", "second")} == {
        "apps": "connected",
        "second": "connected",
    }
