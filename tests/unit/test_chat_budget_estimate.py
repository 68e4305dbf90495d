"""What a request is held at against the person's daily budget (chat/budget.py `estimate`): its JSON's size, and
each image at the flat `IMAGE_TOKENS`, never its base64 (a 3 MB image held at about a million tokens was refused by
every daily budget, on either wire)."""

from __future__ import annotations

import base64
import os

import orjson

from webhost.chat.budget import CHARS_PER_TOKEN, IMAGE_TOKENS, estimate
from webhost.chat.providers.anthropic_body import anthropic_body
from webhost.chat.providers.messages import ChatRequest, ImageBlock, TextBlock, UserMessage
from webhost.chat.providers.openai_body import openai_body
from webhost.chat.wire_images import masked_and_counted

PHOTO = ImageBlock(base64.b64encode(os.urandom(3_000_000)).decode(), "image/jpeg")
ASK = TextBlock("what is in these? " * 50)


def bodies(*blocks: TextBlock | ImageBlock) -> list[dict[str, object]]:
    request = ChatRequest("m", "be brief", (UserMessage(tuple(blocks)),), (), 100)
    return [openai_body(request, official=False), dict(anthropic_body(request))]


def test_an_image_is_held_at_its_flat_cost_not_its_base64_on_both_wires() -> None:
    for with_images, text_only in zip(bodies(ASK, PHOTO, PHOTO), bodies(ASK), strict=True):
        masked, images = masked_and_counted(with_images)
        assert images == 2
        held = estimate(with_images)
        assert estimate(text_only) < held < estimate(text_only) + 2 * IMAGE_TOKENS + 100
        assert "base64 characters]" in orjson.dumps(masked).decode()


def test_text_is_held_by_its_json_size_as_before() -> None:
    for body in bodies(ASK):
        assert masked_and_counted(body)[1] == 0
        assert estimate(body) == len(orjson.dumps(body)) // CHARS_PER_TOKEN + 1
