"""The admin view in Chromium (contract §9): people signed in with the real OpenID provider (tests/peers), their
groups from its claims, tokens and cost per model from the database, the chart with its table; a member never
sees the control. Light and dark themes without serious axe violations."""

from __future__ import annotations

import datetime as dt
from collections.abc import Iterator
from pathlib import Path

import pytest
import sqlalchemy as sa
from playwright.sync_api import Browser, BrowserContext, expect

from tests.e2e.test_polish import axe_problems, set_theme
from tests.e2e.test_sign_in import sign_in
from tests.support.oidc import run_provider
from tests.support.process import Webhost, free_port, run_webhost, stdio_server
from webhost.storage.conversations import chat_usage
from webhost.storage.db import people

pytestmark = pytest.mark.e2e

MODELS = [
    {
        "id": "big",
        "api": "openai",
        "model": "big-1",
        "baseUrl": "http://127.0.0.1:9/v1",
        "price": {"input": 3, "output": 15},
    },
    {"id": "free", "api": "openai", "model": "local", "baseUrl": "http://127.0.0.1:9/v1"},
]


@pytest.fixture(scope="module")
def admin_host(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Webhost, Path]]:
    port = free_port()
    folder = tmp_path_factory.mktemp("admin")
    with run_provider([f"http://127.0.0.1:{port}"]) as provider:
        options = {**provider.options(), "chat": {"models": MODELS}}
        with run_webhost(
            folder, {"basic": stdio_server("basic")}, webhost_options=options, port=port, data_dir=folder / "data"
        ) as host:
            yield host, folder / "data" / "webhost.sqlite3"


def add_tokens(database: Path, email: str, model: str, input_tokens: int, output_tokens: int) -> None:
    """What a turn of this person would have counted today (the chat itself is tested in tests/fast); with
    SQLAlchemy's synchronous engine, as Playwright's sync API already runs an event loop here."""
    engine = sa.create_engine(f"sqlite:///{database}")
    try:
        with engine.begin() as db:
            person_id = db.execute(sa.select(people.c.id).where(people.c.email == email)).scalar_one()
            today = dt.datetime.now(dt.UTC).date().isoformat()
            db.execute(
                chat_usage.insert().values(
                    person_id=person_id,
                    day=today,
                    model_id=model,
                    conversation_id="c1",
                    input_tokens=input_tokens,
                    output_tokens=output_tokens,
                )
            )
    finally:
        engine.dispose()


def test_an_admin_sees_people_tokens_and_cost_and_a_member_sees_no_admin_view(
    browser: Browser, admin_host: tuple[Webhost, Path]
) -> None:
    host, database = admin_host
    contexts: list[BrowserContext] = [browser.new_context(viewport={"width": 1400, "height": 1000}) for _ in range(2)]
    try:
        bob = sign_in(contexts[1].new_page(), host, "bob")
        expect(bob.locator("[data-user]")).to_have_attribute("data-role", "member")
        expect(bob.locator('[data-server="basic"]')).to_have_attribute("data-status", "connected")
        expect(bob.locator('[data-action="open-admin"]')).to_be_hidden()
        ada = sign_in(contexts[0].new_page(), host, "ada")
        add_tokens(database, "bob@example.com", "big", 1_000_000, 200_000)
        add_tokens(database, "bob@example.com", "free", 40, 60)

        ada.locator('[data-action="open-admin"]').click()
        view = ada.locator('[data-testid="admin"]')
        expect(view).to_have_attribute("aria-busy", "false")
        bob_row = view.locator('[data-person="bob@example.com"]')
        expect(bob_row).to_have_attribute("data-groups", "staff")
        expect(view.locator('[data-person="ada@example.com"]')).to_have_attribute("data-groups", "webhost-admins staff")
        expect(bob_row.locator('[data-usage][data-model="big"]')).to_have_attribute("data-tokens", "1200000")
        expect(bob_row.locator('[data-usage][data-model="big"]')).to_contain_text("$6.00")  # 1M x $3 + 0.2M x $15
        expect(bob_row.locator('[data-usage][data-model="free"]')).to_have_attribute("data-tokens", "100")
        expect(view.locator('[data-access="model"][data-name="big"]')).to_contain_text("everyone")
        expect(view.locator("svg.admin-chart rect")).to_have_count(30)
        expect(view.locator('[data-testid="sessions-view"] [data-session-id]')).to_have_count(2)

        problems = []
        for theme in ("light", "dark"):
            set_theme(ada, theme)
            problems += [f"[{theme}] {p}" for p in axe_problems(ada)]
        assert problems == []
    finally:
        for context in contexts:
            context.close()
