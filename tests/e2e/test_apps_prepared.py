"""Prepared Apps (webhost/static/js/apps/warm-frames.js, docs/security.md "Prepared Apps").

When the person shows a tool whose App may open warm, the page writes the App into its origin's warm
frame ahead, and it boots there up to its `ui/initialize`, which nobody answers until an open of that
App takes the frame. These tests check that a prepared App does nothing before its open (no answer,
no network, no audit row), that its open is a normal one (the App's own policy, the audit row, the
handshake), that it is bound to its App and served once, and that a hostile one cannot use the wait.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any
from urllib.parse import urlsplit

import httpx
import pytest
from playwright.sync_api import Page

from tests.e2e.conftest import bind_page, login
from tests.e2e.test_apps_security import (
    ProbeServer,
    app_log,
    audit,
    call_tool,
    directives,
    inner_iframe,
    open_tool,
    outer,
    wait_until,
)
from tests.e2e.test_apps_warm_frames import probes  # noqa: F401 (a fixture)
from tests.support.process import PYTHON, SERVERS, Webhost, http_process, run_webhost

pytestmark = pytest.mark.e2e

CSP_URI = "ui://apps/csp.html"


@pytest.fixture(scope="module")
def host(tmp_path_factory: pytest.TempPathFactory, probes: tuple[ProbeServer, ProbeServer]) -> Iterator[Webhost]:  # noqa: F811
    tmp = tmp_path_factory.mktemp("apps-prepared")
    allowed, blocked = probes
    argv = [PYTHON, str(SERVERS / "apps.py"), "--http", "{port}"]
    argv += ["--allowed-origin", allowed.origin, "--blocked-origin", blocked.origin]
    with (
        http_process(argv, log_path=tmp / "apps.log") as url,
        run_webhost(tmp, {"apps": {"type": "http", "url": url}}) as webhost,
    ):
        yield webhost


@pytest.fixture
def app_page(page: Page, host: Webhost) -> Page:
    login(page, host)
    page.wait_for_selector('[data-server="apps"][data-status="connected"]', timeout=30_000)
    bind_page(page)
    return page


def prepared(page: Page) -> list[dict[str, Any]]:
    apps: list[dict[str, Any]] = page.evaluate("() => window.__page.apps.debug.preparedApps()")
    return apps


def wait_prepared(page: Page, tool: str, uri: str) -> dict[str, Any]:
    """Show the tool (which asks apps/warm) and wait until its App booted, prepared, to its ui/initialize."""
    open_tool(page, "apps", tool)
    app: dict[str, Any] = wait_until(
        lambda: next((a for a in prepared(page) if a["resourceUri"] == uri and a["booted"]), None),
        message=f"the prepared App of {tool}",
        page=page,
    )
    return app


def trace_methods(page: Page, frame_id: str, direction: str) -> list[str]:
    trace: list[dict[str, Any]] = page.evaluate("(f) => window.__page.apps.debug.trace(f)", frame_id)
    return [str(t["msg"].get("method")) for t in trace if t["dir"] == direction and "method" in t["msg"]]


def test_a_prepared_app_waits_unanswered_and_its_open_is_a_normal_one(
    app_page: Page,
    host: Webhost,
    probes: tuple[ProbeServer, ProbeServer],  # noqa: F811
) -> None:
    page = app_page
    allowed, blocked = probes
    opens_before = len(audit(host, kind="app.open"))
    allowed_before, blocked_before = len(allowed.hits), len(blocked.hits)

    app = wait_prepared(page, "csp_probe", CSP_URI)
    # Booted and asking, but nobody answered: it holds only its ui/initialize, reached no network (its
    # fetches come after the handshake) and nothing was audited as opened.
    assert app["held"] == 1 and app["server"] == "apps"
    page.wait_for_timeout(500)
    assert len(allowed.hits) == allowed_before and len(blocked.hits) == blocked_before
    assert len(audit(host, kind="app.open")) == opens_before
    warm = page.locator("[data-warm-frames] iframe[data-warm-frame]")
    assert warm.count() == 1
    serial = warm.get_attribute("data-warm-frame")

    frame_id = call_tool(page, "apps", "csp_probe")
    frame = outer(page, frame_id)
    assert frame.get_attribute("data-warm-frame") == serial  # the prepared frame itself, moved into place
    assert "webhost/prepared-frame" in trace_methods(page, frame_id, "local")
    # The handshake is a normal one, answered now: initialize in, its answer out, initialized in.
    assert trace_methods(page, frame_id, "in")[:2] == ["ui/initialize", "ui/notifications/initialized"]
    log = app_log(page, frame_id)
    assert "fetch allowed" in log and "reached" in log.split("fetch allowed", 1)[1].splitlines()[0]
    assert "failed" in log.split("fetch blocked", 1)[1].splitlines()[0]
    assert len(blocked.hits) == blocked_before
    # Audited at the open, with the policy the App's document was served under before it.
    row = audit(host, kind="app.open", frame=frame_id)[0]
    app_src = inner_iframe(page, frame_id).get_attribute("src") or ""
    parts = urlsplit(app_src)
    assert parts.path == "/app"
    served = httpx.get(
        f"http://127.0.0.1:{host.sandbox_port}{parts.path}?{parts.query}", headers={"Host": parts.netloc}
    ).headers["content-security-policy"]
    assert {k: v for k, v in directives(served).items() if k != "frame-ancestors"} == {
        k: v for k, v in directives(row["detail"]["csp"]).items() if k != "frame-ancestors"
    }

    # Served once: closed, the frame is gone; the next open is prepared in another frame.
    page.evaluate("(f) => window.__page.apps.close(f, 'test')", frame_id)
    page.locator(f'iframe[data-warm-frame="{serial}"]').wait_for(state="detached")
    wait_until(lambda: any(a["booted"] for a in prepared(page)), message="the next prepared App", page=page)
    second = call_tool(page, "apps", "csp_probe")
    assert outer(page, second).get_attribute("data-warm-frame") not in (None, serial)
    assert "webhost/prepared-frame" in trace_methods(page, second, "local")
    assert "reached" in app_log(page, second)


def test_a_prepared_app_serves_only_its_own_app(app_page: Page) -> None:
    page = app_page
    wait_prepared(page, "csp_probe", CSP_URI)
    # Another App of the same server, shown next: it gets a prepared frame of its own (the first one is
    # dropped, one per origin) and its open never adopts csp_probe's.
    app = wait_prepared(page, "hostile_early", "ui://apps/hostile-early.html")
    assert [a["resourceUri"] for a in prepared(page)] == [app["resourceUri"]]
    # The early App's requests sent before its ui/initialize are held with it, and refused at its open
    # exactly as in any other open (test_apps_security.py: requests before initialize).
    frame_id = call_tool(page, "apps", "hostile_early")
    assert "webhost/prepared-frame" in trace_methods(page, frame_id, "local")
    log = app_log(page, frame_id)
    assert "before initialize tools/call: error" in log
    assert "after initialize ping: ok {}" in log


def test_an_open_the_backend_does_not_confirm_drops_the_prepared_frame(app_page: Page) -> None:
    page = app_page
    wait_prepared(page, "csp_probe", CSP_URI)
    serial = page.locator("[data-warm-frames] iframe[data-warm-frame]").get_attribute("data-warm-frame")
    # The backend confirms a prepared App only when its own read gives the same key (same HTML, policy,
    # permissions and sandbox): here the page asks with a key that is not this App's.
    page.evaluate(
        """() => {
          const rpc = window.__page.rpc;
          const request = Object.getPrototypeOf(rpc).request;
          rpc.request = function (method, params) {
            if (method === "apps/open" && params && params.prepared) params = {...params, prepared: "0".repeat(32)};
            return request.call(this, method, params);
          };
        }"""
    )
    frame_id = call_tool(page, "apps", "csp_probe")
    assert "webhost/prepared-frame" not in trace_methods(page, frame_id, "local")
    assert outer(page, frame_id).get_attribute("data-warm-frame") != serial
    page.locator(f'iframe[data-warm-frame="{serial}"]').wait_for(state="detached")  # dropped, not kept
    assert "reached" in app_log(page, frame_id)


def test_a_prepared_app_that_floods_before_its_open_is_dropped(app_page: Page) -> None:
    page = app_page
    wait_prepared(page, "csp_probe", CSP_URI)
    serial = page.locator("[data-warm-frames] iframe[data-warm-frame]").get_attribute("data-warm-frame")
    # As a hostile App could: many messages from inside the prepared frame before any open.
    proxy = next(f for f in page.frames if "/warm?" in f.url)
    app_frame = proxy.child_frames[0]
    app_frame.evaluate(
        "() => { for (let i = 0; i < 40; i++) parent.postMessage("
        "{jsonrpc: '2.0', method: 'ui/notifications/size-changed', params: {width: 1, height: i}}, '*'); }"
    )
    page.locator(f'iframe[data-warm-frame="{serial}"]').wait_for(state="detached")
    assert prepared(page) == []
    frame_id = call_tool(page, "apps", "csp_probe")  # the open goes on without it
    assert "webhost/prepared-frame" not in trace_methods(page, frame_id, "local")
    assert "reached" in app_log(page, frame_id)


def test_a_prepared_app_not_taken_in_time_is_booted_again_a_few_times_then_left_warm(app_page: Page) -> None:
    page = app_page
    # App SDKs give ui/initialize up after 60 s: webhost boots a waiting App again before that (45 s;
    # 1.5 s here), in a new frame, at most 4 times; then the origin keeps a plain warm frame.
    page.evaluate("() => window.__page.apps.debug.setPreparedMaxAge(1500)")
    first = wait_prepared(page, "csp_probe", CSP_URI)
    renewed = wait_until(
        lambda: next((a for a in prepared(page) if a["renewals"] == 1 and a["booted"]), None),
        message="the App prepared again",
        page=page,
    )
    assert renewed["serial"] != first["serial"]  # a new frame: the old one (and its App) is gone
    assert page.locator(f'iframe[data-warm-frame="{first["serial"]}"]').count() == 0
    wait_until(
        lambda: any(a["renewals"] == 4 for a in prepared(page)), timeout=30, message="the last renewal", page=page
    )
    # Then a plain warm frame, ready, stays for the origin.
    wait_until(
        lambda: prepared(page) == [] and len(page.evaluate("() => window.__page.apps.debug.warmOrigins()")) == 1,
        timeout=30,
        message="a plain warm frame after the renewals",
        page=page,
    )
    frame_id = call_tool(page, "apps", "csp_probe")  # and the open still works (warm, not prepared)
    assert "webhost/prepared-frame" not in trace_methods(page, frame_id, "local")
    assert "reached" in app_log(page, frame_id)
