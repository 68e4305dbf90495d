"""The provider for a configured model and a person: the model's entry with the key filled in, kept open
for the next turn (one HTTP client per model and key, closed with the person's chat).

A key given as `${input:ID}` is the person's own (contract §8): until they give it, the model answers
with a line saying so, and the page shows the form. The key is never in a message, an event or a log.
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping

from webhost.chat.providers import ModelEndpoint, Provider, open_provider
from webhost.config.chat import ChatModel
from webhost.config.refs import INPUT_REF
from webhost.errors import ChatUnavailable


def endpoint_for(model: ChatModel, values: Mapping[str, str]) -> ModelEndpoint:
    key = model.api_key
    if key is not None:
        missing = [i for i in model.input_ids if i not in values]
        if missing:
            raise ChatUnavailable(
                f"{model.label or model.id} needs your own API key: add it above the message box",
                {"model": model.id, "keyInput": missing[0]},
            )
        key = INPUT_REF.sub(lambda m: values[m.group(1)], key)
    return ModelEndpoint(id=model.id, api=model.api, model=model.model, base_url=model.base_url, api_key=key or None)


class Providers:
    def __init__(self) -> None:
        self._open: dict[tuple[str, str], Provider] = {}
        self._retired: list[Provider] = []  # replaced when the person changed their key: closed with the rest

    def get(self, model: ChatModel, values: Mapping[str, str]) -> Provider:
        endpoint = endpoint_for(model, values)
        fingerprint = hashlib.sha256((endpoint.api_key or "").encode()).hexdigest()
        key = (model.id, fingerprint)
        provider = self._open.get(key)
        if provider is None:
            stale = [k for k in self._open if k[0] == model.id]  # the person changed their key
            self._retired += [self._open.pop(old) for old in stale]
            provider = self._open[key] = open_provider(endpoint)
        return provider

    async def close(self) -> None:
        providers = [*self._open.values(), *self._retired]
        self._open, self._retired = {}, []
        for provider in providers:
            await provider.aclose()
