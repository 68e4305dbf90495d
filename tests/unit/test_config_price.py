"""`webhost.chat.models[].price` (docs/chat.md): USD per million tokens, read into the admin view's cost."""

from __future__ import annotations

import json

import pytest

from webhost.config import Config, ConfigError, parse_config


def models(*entries: dict[str, object]) -> str:
    return json.dumps({"mcpServers": {}, "webhost": {"chat": {"models": list(entries)}}})


def model(**extra: object) -> dict[str, object]:
    return {"id": "big", "api": "openai", "model": "big-1", **extra}


def test_a_price_is_read_and_costs_by_the_million() -> None:
    config = parse_config(models(model(price={"input": 3, "output": 15.5}), {**model(), "id": "free"}), "w.json", {})
    assert isinstance(config, Config)
    priced, free = config.options.chat.models
    assert priced.price is not None and free.price is None
    assert priced.price.cost(1_000_000, 2_000_000) == 3 + 31.0
    assert priced.price.cost(0, 0) == 0


@pytest.mark.parametrize(
    ("price", "place"),
    [
        ("cheap", "webhost.chat.models[0].price"),
        ({"input": 3}, "webhost.chat.models[0].price.output"),
        ({"input": -1, "output": 1}, "webhost.chat.models[0].price.input"),
        ({"input": 1, "output": "2"}, "webhost.chat.models[0].price.output"),
    ],
)
def test_a_bad_price_is_one_line_naming_its_place(price: object, place: str) -> None:
    with pytest.raises(ConfigError) as info:
        parse_config(models(model(price=price)), "w.json", {})
    message = str(info.value)
    assert "\n" not in message and place in message and "USD" in message, message
