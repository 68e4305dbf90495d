"""Input requests (elicitation) through the page, in a real Chromium against a live `webhost serve`.

The page is driven only through the contract's attributes (shared/contract.md §4): a pending request is
`[data-elicitation]` with `data-server` and `data-mode` (`form` / `url` / `app`, and `sampling` for a
sampling card); a native form has one control per property (`[name=PROP]`, a multi-select being checkboxes
sharing the name) and `[data-action=accept|decline|cancel]`; an app-rendered request holds an
`iframe[data-app-frame]`. Results are read from `[data-testid="tool-result"]`.

Servers: tests/servers/elicit.py in both eras (`modern` = 2026-07-28 MRTR rounds, `legacy` = server→client
`elicitation/create`), tests/servers/mrtr_raw.py (app-rendered elicitation, byte-exact MRTR), the embedded
demo, and the real npm `@modelcontextprotocol/server-everything` (marked `peers`).
"""

from __future__ import annotations

import contextlib
import json
import re
from collections.abc import Callable, Iterator
from typing import Any

import pytest
from playwright.sync_api import BrowserContext, FrameLocator, Locator, Page, expect

from tests.e2e.conftest import login
from tests.support.process import Webhost, peer_server, peers_installed, run_webhost, stdio_server

pytestmark = pytest.mark.e2e

CONNECT_MS = 30_000
CALL_MS = 15_000
APP_MS = 20_000
ERAS = ["modern", "legacy"]
EXAMPLE_URL = "https://example.com/authorize?from=elicit"


@pytest.fixture(scope="module")
def elicit_hosts(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Callable[[str], Webhost]]:
    """One webhost per era, started on first use: each page then starts one elicit.py, not two."""
    entries: dict[str, dict[str, Any]] = {
        "modern": stdio_server("elicit"),
        "legacy": stdio_server("elicit", "--legacy"),
    }
    hosts: dict[str, Webhost] = {}
    with contextlib.ExitStack() as stack:

        def get(era: str) -> Webhost:
            if era not in hosts:
                hosts[era] = stack.enter_context(
                    run_webhost(tmp_path_factory.mktemp(f"elicit-{era}"), {era: entries[era]})
                )
            return hosts[era]

        yield get


@pytest.fixture(params=ERAS)
def era(request: pytest.FixtureRequest) -> str:
    """The server's name is its era: `modern` (2026-07-28, MRTR rounds) or `legacy` (server→client requests)."""
    return str(request.param)


@pytest.fixture
def elicit(elicit_hosts: Callable[[str], Webhost], era: str) -> Webhost:
    return elicit_hosts(era)


@pytest.fixture(scope="module")
def mrtr(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Webhost]:
    with run_webhost(
        tmp_path_factory.mktemp("mrtr-page"),
        {"mrtr": stdio_server("mrtr_raw")},
        webhost_options={"timeouts": {"appHandshake": 3}},
    ) as running:
        yield running


@pytest.fixture(scope="module")
def demo(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Webhost]:
    with run_webhost(tmp_path_factory.mktemp("elicit-demo"), None) as running:
        yield running


@pytest.fixture(scope="module")
def everything(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Webhost]:
    if not peers_installed():
        pytest.skip("npm peers not installed: run `npm ci` in tests/peers (see shared/reference/peers.md §1)")
    with run_webhost(
        tmp_path_factory.mktemp("everything-page"), {"everything": peer_server("mcp-server-everything", "stdio")}
    ) as running:
        yield running


@pytest.fixture
def offline_example(context: BrowserContext) -> BrowserContext:
    """https://example.com cannot load offline: answer it locally so a consent tab has something to show."""
    context.route("https://example.com/**", lambda route: route.fulfill(status=200, body="example"))
    return context


# ---- helpers ---------------------------------------------------------------------------------------------


def start(page: Page, host: Webhost, server: str) -> None:
    login(page, host)
    expect(page.locator(f'[data-server="{server}"][data-status="connected"]')).to_be_visible(timeout=CONNECT_MS)


def open_tool(page: Page, server: str, tool: str) -> None:
    page.locator(f'[data-server="{server}"] [data-tool="{tool}"]').click(timeout=CONNECT_MS)
    expect(page.locator(f'[data-open-server="{server}"][data-open-tool="{tool}"]')).to_be_visible()


def run_tool(page: Page, server: str, tool: str, **args: str) -> Locator:
    """Open the tool, fill its arguments, call it; returns the (pending) result."""
    open_tool(page, server, tool)
    for name, value in args.items():
        page.locator(f'[name="{name}"]').fill(value)
    page.locator('[data-testid="call-tool"]').click()
    return page.locator('[data-testid="tool-result"]')


def form_for(page: Page, server: str) -> Locator:
    return page.locator(f'form[data-elicitation][data-mode="form"][data-server="{server}"]')


def result_text(result: Locator, status: str = "ok") -> str:
    expect(result).to_have_attribute("data-status", status, timeout=CALL_MS)
    return "\n".join(result.locator('[data-content-type="text"]').all_inner_texts())


def result_json(result: Locator, status: str = "ok") -> Any:
    return json.loads(result_text(result, status))


def no_console_errors(page: Page) -> None:
    errors = list(page.console_errors)  # type: ignore[attr-defined]
    assert errors == [], errors


# ---- native forms, both eras ------------------------------------------------------------------------------


def test_form_full_every_field_kind(page: Page, elicit: Webhost, era: str) -> None:
    start(page, elicit, era)
    result = run_tool(page, era, "form_full")
    expect(result).to_have_attribute("data-status", "pending")
    form = form_for(page, era)
    expect(form).to_be_visible()
    expect(form).to_contain_text("Fill in every kind of field.")

    # Required fields are marked; optional ones are not.
    for name in ("text", "email", "count", "agree", "color"):
        expect(form.locator(f'[name="{name}"]').first).to_have_attribute("required", "")
    for name in ("website", "birthday", "meeting", "ratio", "maybe", "size", "legacy_enum"):
        expect(form.locator(f'[name="{name}"]')).not_to_have_attribute("required", "")
    # Defaults are pre-filled.
    expect(form.locator('[name="text"]')).to_have_value("hello")
    expect(form.locator('[name="ratio"]')).to_have_value("0.5")
    expect(form.locator('[name="count"]')).to_have_value("3")
    expect(form.locator('[name="agree"]')).not_to_be_checked()
    expect(form.locator('[name="color"]')).to_have_value("green")
    expect(form.locator('[name="size"]')).to_have_value("m")
    expect(form.locator('[name="tags"]')).to_have_count(3)  # a multi-select: checkboxes sharing the name
    expect(form.locator('[name="tags"][value="a"]')).to_be_checked()
    expect(form.locator('[name="tags"][value="b"]')).not_to_be_checked()
    expect(form.locator('[name="toppings"]')).to_have_count(4)
    # Each kind gets the matching control.
    for name, kind in (
        ("email", "email"),
        ("website", "url"),
        ("birthday", "date"),
        ("meeting", "datetime-local"),
        ("ratio", "number"),
        ("count", "number"),
        ("agree", "checkbox"),
        ("maybe", "checkbox"),
    ):
        expect(form.locator(f'[name="{name}"]')).to_have_attribute("type", kind)

    # Bad values are caught on the page, with a message, before anything is sent.
    form.locator('[name="text"]').fill("x")
    form.locator('[name="email"]').fill("not an email")
    form.locator('[name="count"]').fill("11")
    form.locator('[name="ratio"]').fill("1.5")
    for value in ("a", "b", "c"):
        form.locator(f'[name="tags"][value="{value}"]').check()
    form.locator('[data-action="accept"]').click()
    expect(form.locator('[data-field-error="text"]')).to_contain_text("At least 2")
    expect(form.locator('[data-field-error="email"]')).to_be_visible()
    expect(form.locator('[data-field-error="count"]')).to_contain_text("at most 10")
    expect(form.locator('[data-field-error="ratio"]')).to_contain_text("at most 1")
    expect(form.locator('[data-field-error="tags"]')).to_contain_text("at most 2")
    expect(form.locator('[name="email"]')).to_have_attribute("aria-invalid", "true")
    expect(form).not_to_have_attribute("data-answer", re.compile(".*"))
    expect(result).to_have_attribute("data-status", "pending")

    # Every kind typed but `maybe` and `size`: the form sends what it shows, so `size` is sent with the
    # default it shows and `maybe` (no default, shown unset) is not sent.
    form.locator('[name="text"]').fill("typed text")
    form.locator('[name="email"]').fill("ada@example.com")
    form.locator('[name="website"]').fill("https://example.org/home")
    form.locator('[name="birthday"]').fill("1990-05-17")
    form.locator('[name="meeting"]').fill("2030-01-02T10:30:00")
    form.locator('[name="ratio"]').fill("0.25")
    form.locator('[name="count"]').fill("7")
    form.locator('[name="agree"]').check()
    form.locator('[name="color"]').select_option("blue")
    form.locator('[name="legacy_enum"]').select_option(label="Why")
    form.locator('[name="tags"][value="a"]').uncheck()
    form.locator('[name="toppings"][value="cheese"]').check()
    form.locator('[name="toppings"][value="chili"]').check()
    form.locator('[data-action="accept"]').click()
    for name in ("text", "email", "count", "ratio", "tags"):
        expect(form.locator(f'[data-field-error="{name}"]')).to_be_hidden()

    answer = result_json(result)
    assert answer["action"] == "accept"
    content = answer["content"]
    meeting = content.pop("meeting")
    assert re.fullmatch(r"2030-01-02T10:30:00(Z|[+-]\d\d:\d\d)", meeting), meeting
    assert content == {
        "text": "typed text",
        "email": "ada@example.com",
        "website": "https://example.org/home",
        "birthday": "1990-05-17",
        "ratio": 0.25,
        "count": 7,
        "agree": True,
        "color": "blue",
        "legacy_enum": "y",
        "tags": ["b", "c"],
        "toppings": ["cheese", "chili"],
        "size": "m",
    }
    assert type(content["count"]) is int and type(content["agree"]) is bool and type(content["ratio"]) is float
    # Answered: the request's view is gone.
    expect(page.locator("[data-elicitation]")).to_have_count(0)
    no_console_errors(page)


def test_decline_and_cancel_are_distinct(page: Page, elicit: Webhost, era: str) -> None:
    start(page, elicit, era)
    for action in ("decline", "cancel"):
        result = run_tool(page, era, "form_defaults")
        form = form_for(page, era)
        expect(form).to_be_visible()
        expect(form.locator('[name="name"]')).to_have_value("Ada Lovelace")
        form.locator(f'[data-action="{action}"]').click()
        assert result_json(result) == {"action": action}
        expect(page.locator("[data-elicitation]")).to_have_count(0)

    # Accepting the untouched form sends the defaults it shows (and the backend's validation accepts them).
    result = run_tool(page, era, "form_defaults")
    form_for(page, era).locator('[data-action="accept"]').click()
    assert result_json(result) == {
        "action": "accept",
        "content": {"name": "Ada Lovelace", "age": 36, "score": 9.5, "tier": "gold", "subscribed": True},
    }
    no_console_errors(page)


def test_multi_round_through_the_page(page: Page, elicit: Webhost, era: str) -> None:
    start(page, elicit, era)
    result = run_tool(page, era, "multi_round", rounds="3")
    seen: set[str] = set()
    for round_no in (1, 2, 3):
        form = form_for(page, era)
        expect(form).to_have_count(1)
        expect(form).to_contain_text(f"Round {round_no} of 3")
        request_id = form.get_attribute("data-id")
        assert request_id and request_id not in seen  # each round is a new request
        seen.add(request_id)
        form.locator('[name="answer"]').fill(f"answer {round_no}")
        form.locator('[data-action="accept"]').click()
        expect(page.locator(f'[data-elicitation][data-id="{request_id}"]')).to_have_count(0)
    assert result_json(result) == {
        "rounds": 3,
        "answers": [{"action": "accept", "content": {"answer": f"answer {n}"}} for n in (1, 2, 3)],
    }
    no_console_errors(page)


def test_two_requests_at_once(page: Page, elicit: Webhost, era: str) -> None:
    start(page, elicit, era)
    result = run_tool(page, era, "concurrent")
    forms = form_for(page, era)
    expect(forms).to_have_count(2)
    first = forms.filter(has_text="First question")
    second = forms.filter(has_text="Second question")
    expect(second.locator('[name="answer"]')).to_have_attribute("type", "number")
    # Answer the second one first: each is answered on its own.
    second.locator('[name="answer"]').fill("2")
    second.locator('[data-action="accept"]').click()
    expect(first.locator('[data-action="accept"]')).to_be_enabled()  # the other one is still open
    expect(result).to_have_attribute("data-status", "pending")
    first.locator('[name="answer"]').fill("one")
    first.locator('[data-action="accept"]').click()
    assert result_json(result) == {
        "first": {"action": "accept", "content": {"answer": "one"}},
        "second": {"action": "accept", "content": {"answer": 2}},
    }
    expect(page.locator("[data-elicitation]")).to_have_count(0)
    no_console_errors(page)


# ---- URL mode --------------------------------------------------------------------------------------------


def test_url_mode_opens_the_page_only_after_consent(
    page: Page, elicit: Webhost, offline_example: BrowserContext, era: str
) -> None:
    start(page, elicit, era)
    opened: list[Page] = []
    offline_example.on("page", lambda new_page: opened.append(new_page))

    result = run_tool(page, era, "url_mode")
    card = page.locator(f'[data-elicitation][data-mode="url"][data-server="{era}"]')
    expect(card).to_be_visible()
    expect(card).to_contain_text(EXAMPLE_URL)  # the full URL, not a shortened label
    expect(card).to_contain_text("Open this page to authorise the test server.")
    assert opened == []  # nothing opens before consent
    with offline_example.expect_page() as popup_info:
        card.locator('[data-action="accept"]').click()
    popup = popup_info.value
    assert popup.url == EXAMPLE_URL
    assert popup.evaluate("() => window.opener") is None  # noopener
    answer = result_json(result)
    assert answer["action"] == "accept"
    popup.close()

    for action in ("decline", "cancel"):
        before = len(opened)
        result = run_tool(page, era, "url_mode")
        card = page.locator(f'[data-elicitation][data-mode="url"][data-server="{era}"]')
        expect(card).to_be_visible()
        card.locator(f'[data-action="{action}"]').click()
        assert result_json(result)["action"] == action
        assert len(opened) == before  # declining or cancelling opens nothing
    no_console_errors(page)


def test_a_legacy_url_step_the_server_completed_before_the_consent_needs_no_done(
    page: Page, elicit_hosts: Callable[[str], Webhost], offline_example: BrowserContext
) -> None:
    start(page, elicit_hosts("legacy"), "legacy")
    # -32042 naming a URL step, and the server's notifications/elicitation/complete for it at once.
    result = run_tool(page, "legacy", "url_required", complete_after="0", flow="page-early")
    card = page.locator('[data-elicitation][data-mode="url"][data-server="legacy"][data-phase="consent"]')
    expect(card).to_be_visible()
    completed = page.locator(
        '[data-testid="activity-log"] [data-log-entry][data-log-server="legacy"]'
        '[data-method="notifications/elicitation/complete"]'
    )
    completed.first.wait_for(state="attached")  # the completion came while the person had not answered
    with offline_example.expect_page() as popup_info:
        card.locator('[data-action="accept"]').click()
    popup_info.value.close()
    # The call is retried at once: no card waits for a "Done" the server already gave.
    answer = result_json(result)
    assert answer["authorised"] is True and answer["completed"][0].startswith("page-early-")
    assert page.locator('[data-elicitation][data-phase="waiting"]').count() == 0
    no_console_errors(page)


def test_url_mode_emphasises_the_real_host_behind_user_info(page: Page, elicit: Webhost, era: str) -> None:
    start(page, elicit, era)
    deceptive = "https://paypal.com.evil.example@evil.example/login"
    result = run_tool(page, era, "url_mode", url=deceptive)
    card = page.locator(f'[data-elicitation][data-mode="url"][data-server="{era}"]')
    expect(card).to_be_visible()
    shown = card.locator(".url-display code")
    expect(shown).to_have_text(deceptive)  # the full URL, unshortened
    # The emphasis is where the backend's `parts` put the host: after the @, not inside the user name.
    expect(shown.locator("strong.url-host")).to_have_text("evil.example")
    assert shown.evaluate("(el) => el.firstChild.textContent") == "https://paypal.com.evil.example@"
    expect(card.locator(".url-host-line strong")).to_have_text("evil.example")
    expect(card).to_contain_text("user name or password before @")  # the backend's warning
    card.locator('[data-action="decline"]').click()
    assert result_json(result)["action"] == "decline"
    no_console_errors(page)


# ---- the real server-everything from npm --------------------------------------------------------------------


@pytest.mark.peers
def test_everything_form_elicitation(page: Page, everything: Webhost) -> None:
    start(page, everything, "everything")
    # The tool appears only after the server's tools/list_changed (it needs the elicitation capability).
    result = run_tool(page, "everything", "trigger-elicitation-request")
    form = form_for(page, "everything")
    expect(form).to_be_visible()
    expect(form.locator('[name="name"]')).to_have_attribute("required", "")
    form.locator('[data-action="accept"]').click()
    expect(form.locator('[data-field-error="name"]')).to_be_visible()  # the required field, checked first
    form.locator('[name="name"]').fill("Ada Lovelace")
    form.locator('[name="email"]').fill("ada@example.com")
    form.locator('[name="integer"]').fill("7")
    form.locator('[data-action="accept"]').click()
    text = result_text(result)
    assert "User provided the requested information" in text
    assert "- Name: Ada Lovelace" in text
    assert "- Email: ada@example.com" in text
    assert "- Favorite Integer: 7" in text
    raw = json.loads(text.split("Raw result:", 1)[1])
    assert raw["action"] == "accept"
    assert raw["content"]["integer"] == 7 and raw["content"]["name"] == "Ada Lovelace"
    no_console_errors(page)


@pytest.mark.peers
def test_everything_url_elicitation(page: Page, everything: Webhost, offline_example: BrowserContext) -> None:
    start(page, everything, "everything")
    url = "https://example.com/peer-consent?step=1"
    result = run_tool(page, "everything", "trigger-url-elicitation", url=url, message="Open the peer page")
    card = page.locator('[data-elicitation][data-mode="url"][data-server="everything"]')
    expect(card).to_be_visible()
    expect(card).to_contain_text(url)
    expect(card).to_contain_text("Open the peer page")
    with offline_example.expect_page() as popup_info:
        card.locator('[data-action="accept"]').click()
    assert popup_info.value.url == url
    text = result_text(result)
    assert "User completed the URL elicitation flow" in text
    assert url in text
    no_console_errors(page)


@pytest.mark.peers
def test_everything_sampling_request(page: Page, everything: Webhost) -> None:
    start(page, everything, "everything")
    result = run_tool(page, "everything", "trigger-sampling-request", prompt="Name a colour")
    card = page.locator('[data-elicitation][data-mode="sampling"][data-server="everything"]')
    expect(card).to_be_visible()
    expect(card).to_contain_text("Name a colour")
    expect(card).to_contain_text("You are a helpful test server.")
    card.locator('[name="text"]').fill("Cerulean, written by a person.")
    card.locator('[data-action="accept"]').click()
    text = result_text(result)
    assert "LLM sampling result" in text
    assert "Cerulean, written by a person." in text
    no_console_errors(page)


# ---- app-rendered elicitation (mrtr_raw.py) -----------------------------------------------------------------


def app_card(page: Page, server: str) -> Locator:
    return page.locator(f'[data-elicitation][data-mode="app"][data-server="{server}"]')


def app_inner(page: Page) -> FrameLocator:
    return page.frame_locator('[data-elicitation][data-mode="app"] iframe[data-app-frame]').frame_locator("iframe")


def test_app_rendered_picker_answers(page: Page, mrtr: Webhost) -> None:
    start(page, mrtr, "mrtr")
    result = run_tool(page, "mrtr", "pick_color")
    card = app_card(page, "mrtr")
    expect(card).to_be_visible()
    frame = card.locator("iframe[data-app-frame]")
    expect(frame).to_have_attribute("data-app-status", "ready", timeout=APP_MS)
    expect(frame).to_have_attribute("data-server", "mrtr")
    expect(frame).to_have_attribute("data-resource-uri", "ui://mrtr/picker.html")
    # The host's own Decline/Cancel stay available whatever the app draws.
    expect(card.locator('[data-action="decline"]')).to_be_visible()
    app = app_inner(page)
    app.locator('button[data-value="#16a34a"]').click()
    assert result_text(result) == "You picked Fern (#16a34a)."
    expect(page.locator("[data-elicitation]")).to_have_count(0)
    no_console_errors(page)


def test_host_decline_on_an_app_rendered_request(page: Page, mrtr: Webhost) -> None:
    """The host-owned Decline on the app's card answers for the person (and names the bound frame)."""
    start(page, mrtr, "mrtr")
    result = run_tool(page, "mrtr", "pick_color")
    card = app_card(page, "mrtr")
    expect(card.locator("iframe[data-app-frame]")).to_have_attribute("data-app-status", "ready", timeout=APP_MS)
    card.locator('[data-action="decline"]').click()
    assert result_text(result) == "No colour picked (decline)."
    expect(page.locator("[data-elicitation]")).to_have_count(0)
    expect(page.locator("iframe[data-app-frame]")).to_have_count(0)  # the instance is torn down
    no_console_errors(page)


def answer_fallback_form(page: Page, result: Locator, reason: str) -> None:
    """The native form replaced the app for the same request, with the reason shown; answering it works."""
    form = form_for(page, "mrtr")
    expect(form).to_be_visible(timeout=APP_MS)
    expect(form.locator('[data-testid="fallback-reason"]')).to_contain_text(reason)
    expect(app_card(page, "mrtr")).to_have_count(0)
    form.locator('[name="color"]').select_option(label="Cobalt")
    form.locator('[data-action="accept"]').click()
    assert result_text(result) == "You picked Cobalt (#2563eb)."


def test_app_that_never_initializes_falls_back_after_the_handshake_timeout(page: Page, mrtr: Webhost) -> None:
    start(page, mrtr, "mrtr")
    result = run_tool(page, "mrtr", "pick_never_init")
    frame = app_card(page, "mrtr").locator("iframe[data-app-frame]")
    expect(frame).to_have_attribute("data-resource-uri", "ui://mrtr/never-init.html")
    expect(frame).to_have_attribute("data-app-status", "loading")
    answer_fallback_form(page, result, "did not initialize within 3 s")


@pytest.mark.parametrize(
    ("tool", "reason"),
    [
        ("pick_no_capability", "appCapabilities.elicitation"),
        ("pick_bad_answer", "did not match the requested schema"),
    ],
)
def test_app_that_cannot_serve_falls_back_to_the_form(page: Page, mrtr: Webhost, tool: str, reason: str) -> None:
    start(page, mrtr, "mrtr")
    result = run_tool(page, "mrtr", tool)
    # The schema-violating answer never reaches the server: the result is the form's answer, not an error.
    answer_fallback_form(page, result, reason)


def test_missing_app_resource_shows_the_form_directly(page: Page, mrtr: Webhost) -> None:
    start(page, mrtr, "mrtr")
    result = run_tool(page, "mrtr", "pick_missing_resource")
    form = form_for(page, "mrtr")
    expect(form).to_be_visible()
    expect(app_card(page, "mrtr")).to_have_count(0)
    expect(page.locator("iframe[data-app-frame]")).to_have_count(0)
    form.locator('[name="color"]').select_option("#e11d48")
    form.locator('[data-action="accept"]').click()
    assert result_text(result) == "You picked Raspberry (#e11d48)."


# ---- the embedded demo --------------------------------------------------------------------------------------


def test_demo_register_user_two_rounds(page: Page, demo: Webhost) -> None:
    start(page, demo, "demo")
    result = run_tool(page, "demo", "register_user")
    form = form_for(page, "demo")
    expect(form).to_be_visible()
    expect(form.locator('[name="plan"]')).to_have_value("free")
    form.locator('[name="name"]').fill("Grace Hopper")
    form.locator('[name="email"]').fill("grace@example.com")
    form.locator('[name="age"]').fill("85")
    form.locator('[name="plan"]').select_option("pro")
    form.locator('[name="interests"][value="apps"]').check()
    form.locator('[name="interests"][value="security"]').check()
    form.locator('[data-action="accept"]').click()
    # Second round: confirm.
    confirm = form_for(page, "demo")
    expect(confirm).to_contain_text("Grace Hopper")
    expect(confirm.locator('[name="confirm"]')).to_be_checked()
    confirm.locator('[data-action="accept"]').click()
    text = result_text(result)
    assert "Registered Grace Hopper <grace@example.com> on the pro plan" in text
    assert "age 85" in text and "interests: apps, security" in text
    no_console_errors(page)


def test_demo_connect_account_url(page: Page, demo: Webhost, offline_example: BrowserContext) -> None:
    start(page, demo, "demo")
    result = run_tool(page, "demo", "connect_account")
    card = page.locator('[data-elicitation][data-mode="url"][data-server="demo"]')
    expect(card).to_be_visible()
    expect(card).to_contain_text("https://example.com/?connect=calendar&connection=")
    with offline_example.expect_page() as popup_info:
        card.locator('[data-action="accept"]').click()
    assert popup_info.value.url.startswith("https://example.com/?connect=calendar&connection=")
    assert "Connected the demo calendar service" in result_text(result)
    no_console_errors(page)


def test_demo_pick_color_in_its_app(page: Page, demo: Webhost) -> None:
    start(page, demo, "demo")
    result = run_tool(page, "demo", "pick_color")
    frame = app_card(page, "demo").locator("iframe[data-app-frame]")
    expect(frame).to_have_attribute("data-app-status", "ready", timeout=APP_MS)
    expect(frame).to_have_attribute("data-resource-uri", "ui://demo/picker.html")
    app = app_inner(page)
    app.locator('.swatch[data-value="#0891b2"]').click()
    app.locator('[data-action="accept"]').click()
    assert "You picked Lagoon (#0891b2)." in result_text(result)
    expect(page.locator("[data-elicitation]")).to_have_count(0)
    no_console_errors(page)
