"""Warm proxy frames (webhost/static/js/apps/warm-frames.js, docs/security.md "Warm proxy frames").

The page keeps one sandbox proxy per server origin loaded before the click. These tests wait until a
warm frame is ready, so the open below is warm for certain, and check what must hold: the App's own
document runs under the App's policy (the declared origin is reached, the undeclared one blocked),
a warm frame serves only its own server's origin, and it serves one App: after the App closed, its
frame is gone and the next open takes another.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from typing import Any
from urllib.parse import urlsplit

import httpx
import pytest
from playwright.sync_api import Frame, Page

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
from tests.support.process import PYTHON, SERVERS, Webhost, http_process, run_webhost

pytestmark = pytest.mark.e2e


@pytest.fixture(scope="module")
def probes() -> Iterator[tuple[ProbeServer, ProbeServer]]:
    allowed, blocked = ProbeServer(), ProbeServer()
    yield allowed, blocked
    allowed.close()
    blocked.close()


@pytest.fixture(scope="module")
def host(tmp_path_factory: pytest.TempPathFactory, probes: tuple[ProbeServer, ProbeServer]) -> Iterator[Webhost]:
    tmp = tmp_path_factory.mktemp("apps-warm")
    allowed, blocked = probes
    apps_py = [PYTHON, str(SERVERS / "apps.py"), "--http", "{port}"]
    with contextlib.ExitStack() as stack:

        def serve(name: str, argv: list[str]) -> dict[str, Any]:
            url = stack.enter_context(http_process(argv, log_path=tmp / f"{name}.log"))
            return {"type": "http", "url": url}

        servers = {
            "apps": serve("apps", [*apps_py, "--allowed-origin", allowed.origin, "--blocked-origin", blocked.origin]),
            "second": serve("second", [*apps_py, "--name", "second"]),
        }
        yield stack.enter_context(run_webhost(tmp, servers))


@pytest.fixture
def app_page(page: Page, host: Webhost) -> Page:
    login(page, host)
    for name in ("apps", "second"):
        page.wait_for_selector(f'[data-server="{name}"][data-status="connected"]', timeout=30_000)
    bind_page(page)
    # These tests are about the warm proxy frame itself, before any App is in it: Apps prepared ahead
    # (which fill the warm frame before the click) are tested in test_apps_prepared.py.
    page.evaluate("() => window.__page.apps.debug.setPreparing(false)")
    return page


def origin_of(page: Page, server: str) -> str:
    """The server's sandbox origin, from an apps/open made (and closed) by the test itself."""
    descriptor = open_descriptor(page, server)
    return str(descriptor["origin"])


def open_descriptor(page: Page, server: str, tool: str = "csp_probe") -> dict[str, Any]:
    descriptor: dict[str, Any] = page.evaluate(
        "async ([server, tool]) => { const d = await window.__page.rpc.request('apps/open', {server, tool}); "
        "await window.__page.rpc.request('apps/close', {frameId: d.frameId}); return d; }",
        [server, tool],
    )
    return descriptor


def wait_warm(page: Page, server: str, tool: str, origin: str) -> str:
    """Show the tool (which asks apps/warm) and wait for a ready warm frame on `origin`; its serial."""
    open_tool(page, server, tool)
    page.wait_for_function("(o) => window.__page.apps.debug.warmOrigins().includes(o)", arg=origin)
    serial: str = page.evaluate(
        "(o) => [...document.querySelectorAll('iframe[data-warm-frame]')]"
        ".find((f) => new URL(f.src).origin === o && !f.hasAttribute('data-app-frame')).dataset.warmFrame",
        origin,
    )
    return serial


def warm_proxy(page: Page, origin: str) -> Frame:
    return next(f for f in page.frames if f.url.startswith(origin + "/warm?"))


def test_an_app_opens_warm_under_its_own_policy_and_its_frame_is_never_reused(
    app_page: Page, host: Webhost, probes: tuple[ProbeServer, ProbeServer]
) -> None:
    page = app_page
    allowed, blocked = probes
    origin = origin_of(page, "apps")
    serial = wait_warm(page, "apps", "csp_probe", origin)
    blocked_before = len(blocked.hits)

    frame_id = call_tool(page, "apps", "csp_probe")
    frame = outer(page, frame_id)
    assert frame.get_attribute("data-warm-frame") == serial  # the warm frame, not a new one
    assert urlsplit(frame.get_attribute("src") or "").path == "/warm"
    app_src = inner_iframe(page, frame_id).get_attribute("src") or ""
    assert urlsplit(app_src).path == "/app" and app_src.startswith(origin + "/app?p=")

    # The App's policy holds in its document, as in a cold frame.
    log = app_log(page, frame_id)
    assert f"fetch allowed {allowed.origin}/: reached" in log
    assert f"fetch blocked {blocked.origin}/: failed" in log
    assert f"violation connect-src {blocked.origin}" in log
    assert len(blocked.hits) == blocked_before
    # What the sandbox serves for the App's document is the audited policy (frame-ancestors adds the proxy).
    parts = urlsplit(app_src)
    served = httpx.get(
        f"http://127.0.0.1:{host.sandbox_port}{parts.path}?{parts.query}", headers={"Host": parts.netloc}
    ).headers["content-security-policy"]
    audited = audit(host, kind="app.open", frame=frame_id)[0]["detail"]["csp"]
    assert {k: v for k, v in directives(served).items() if k != "frame-ancestors"} == {
        k: v for k, v in directives(audited).items() if k != "frame-ancestors"
    }
    ancestors = directives(served)["frame-ancestors"]
    assert ancestors[0] == "'self'" and host.base_url in ancestors

    # Closed: the frame is gone from the page, never handed out again; the next open takes another.
    page.evaluate("(f) => window.__page.apps.close(f, 'test')", frame_id)
    page.locator(f'iframe[data-warm-frame="{serial}"]').wait_for(state="detached")
    page.locator("[data-app-panel] iframe[data-app-frame]").wait_for(state="detached")
    again = wait_warm(page, "apps", "csp_probe", origin)
    assert again != serial
    second_id = call_tool(page, "apps", "csp_probe")
    assert outer(page, second_id).get_attribute("data-warm-frame") == again
    assert "reached" in app_log(page, second_id)


def test_a_warm_frame_serves_only_its_own_servers_origin(app_page: Page) -> None:
    page = app_page
    apps_origin, second_origin = origin_of(page, "apps"), origin_of(page, "second")
    assert apps_origin != second_origin
    wait_warm(page, "apps", "csp_probe", apps_origin)
    refusals: list[str] = []
    page.on("console", lambda m: refusals.append(m.text) if "sandbox proxy refused" in m.text else None)

    # The page hands "second"'s App to "apps"' warm proxy (as a compromised page script could): refused,
    # nothing loads in it. (The sandbox listener would refuse the token on this Host too:
    # tests/integration/test_sandbox_proxy_warm.py.)
    other = open_descriptor(page, "second")
    page.evaluate(
        """([origin, d]) => {
          const f = [...document.querySelectorAll("iframe[data-warm-frame]")]
            .find((x) => new URL(x.src).origin === origin);
          const post = (method, params) => f.contentWindow.postMessage({jsonrpc: "2.0", method, params}, origin);
          post("ui/notifications/sandbox-webhost-app-document", {appUrl: d.appUrl, sandbox: d.sandbox});
          post("ui/notifications/sandbox-resource-ready", {html: d.html, sandbox: d.sandbox, appUrl: d.appUrl});
        }""",
        [apps_origin, other],
    )
    wait_until(lambda: len(refusals) >= 2, message="the warm proxy's refusals", page=page)
    assert "not this origin's /app" in refusals[0]
    assert "for another app document" in refusals[1]
    proxy = warm_proxy(page, apps_origin)
    assert proxy.child_frames == []

    # Spent: not even its own server's App is taken in after that.
    own = open_descriptor(page, "apps")
    page.evaluate(
        """([origin, d]) => {
          const f = [...document.querySelectorAll("iframe[data-warm-frame]")]
            .find((x) => new URL(x.src).origin === origin);
          f.contentWindow.postMessage({jsonrpc: "2.0", method: "ui/notifications/sandbox-resource-ready",
            params: {html: d.html, sandbox: d.sandbox, appUrl: d.appUrl}}, origin);
        }""",
        [apps_origin, own],
    )
    wait_until(lambda: len(refusals) >= 3, message="the spent proxy's refusal", page=page)
    assert "second sandbox-resource-ready ignored" in refusals[2]
    assert proxy.child_frames == []

    # "second"'s own open takes a frame of its own origin; "apps"' frames are not offered to it.
    wait_warm(page, "second", "csp_probe", second_origin)
    frame_id = call_tool(page, "second", "csp_probe")
    src = outer(page, frame_id).get_attribute("src") or ""
    assert src.startswith(second_origin + "/warm?")
    assert app_log(page, frame_id)
