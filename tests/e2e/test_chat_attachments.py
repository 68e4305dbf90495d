"""Attachments in the composer in a real Chromium (contract §8.1): a PNG and a PDF made by the test, chosen
with the file input, sent to webhost in chunks, refused for a model without vision (one line, the text kept),
then sent to one with vision: the scripted endpoint gets the image as an image part and the PDF's text."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from playwright.sync_api import Page, expect

from tests.e2e.test_chat_page import ANSWER_MS, SERVERS, open_chat
from tests.fast.chat.test_attachments import pdf
from tests.support.images import png
from tests.support.model_endpoint import ModelEndpointServer, running_model_endpoint
from tests.support.process import Webhost, run_webhost

pytestmark = pytest.mark.e2e

UPLOAD_MS = 20_000


@pytest.fixture(scope="module")
def endpoint() -> Iterator[ModelEndpointServer]:
    with running_model_endpoint() as server:
        yield server


@pytest.fixture(scope="module")
def host(tmp_path_factory: pytest.TempPathFactory, endpoint: ModelEndpointServer) -> Iterator[Webhost]:
    base = {"api": "openai", "baseUrl": endpoint.openai_base_url, "apiKey": "k-e2e"}
    models = [
        {"id": "blind", "model": "e2e-blind", **base},
        {"id": "eyes", "model": "e2e-eyes", "vision": True, **base},
    ]
    options = {"chat": {"models": models, "toolCalls": "allow"}}
    with run_webhost(tmp_path_factory.mktemp("chat-attach"), SERVERS, webhost_options=options) as running:
        yield running


def test_files_attach_are_refused_for_a_model_without_vision_and_reach_one_with_it(
    page: Page, host: Webhost, endpoint: ModelEndpointServer, tmp_path: Path
) -> None:
    endpoint.script("e2e-eyes", [{"events": [{"text": "A red square and a report."}]}])
    (tmp_path / "red.png").write_bytes(png(48, 48))
    (tmp_path / "report.pdf").write_bytes(pdf("Quarterly figures rose"))
    (tmp_path / "extra.txt").write_text("not this one")
    chat = open_chat(page, host, "blind", servers=("board",))
    chat.locator('input[type="file"][data-testid="chat-attach"]').set_input_files(
        [tmp_path / "red.png", tmp_path / "report.pdf", tmp_path / "extra.txt"]
    )
    attached = chat.locator(".chat-composer [data-attachment]")
    expect(attached).to_have_count(3, timeout=UPLOAD_MS)
    expect(attached.and_(chat.locator('[data-name="red.png"]'))).to_have_attribute("data-kind", "image")
    expect(attached.and_(chat.locator('[data-name="report.pdf"]'))).to_have_attribute("data-kind", "text")
    attached.and_(chat.locator('[data-name="extra.txt"]')).locator('[data-action="remove"]').click()
    expect(attached).to_have_count(2)

    box = chat.locator('textarea[data-testid="chat-input"]')
    box.fill("What is in these?")
    box.press("Enter")
    expect(chat.locator(".chat-notice")).to_contain_text("blind does not take images: remove red.png")
    expect(box).to_have_value("What is in these?")
    expect(attached).to_have_count(2)
    expect(chat.locator("[data-chat-message]")).to_have_count(0)

    chat.locator('select[name="model"]').select_option("eyes")
    box.press("Enter")
    answer = chat.locator('[data-chat-message][data-role="assistant"]').last
    expect(answer).to_have_attribute("data-status", "done", timeout=ANSWER_MS)
    expect(attached).to_have_count(0)
    [request] = [r["body"] for r in endpoint.requests("e2e-eyes")]
    parts = request["messages"][-1]["content"]
    assert [p["type"] for p in parts] == ["text", "image_url", "text", "text"]
    assert parts[1]["image_url"]["url"].startswith("data:image/png;base64,iVBOR")
    assert parts[2]["text"] == "[attached file report.pdf]\nQuarterly figures rose"
    assert parts[3]["text"] == "What is in these?"
    # The sent message lists its attachments, also after a reload (they are kept with the conversation).
    page.reload()
    mine = page.locator('[data-testid="chat"] [data-chat-message][data-role="user"] [data-attachment]')
    expect(mine).to_have_count(2, timeout=ANSWER_MS)
    expect(mine.first).to_have_attribute("data-name", "red.png")
    expect(mine.first).to_have_attribute("data-kind", "image")
