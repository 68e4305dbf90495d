"""A configured model endpoint: which wire, which model, where, with which key; and how it is named in errors.

`base_url` is what the provider's SDK takes (for `openai` up to and including `/v1`, for `anthropic`
the origin); None means the provider's own. The key is kept out of `repr` and out of every message.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal
from urllib.parse import urlsplit

from webhost.redact import Redactor, redact_url, url_secrets

Api = Literal["openai", "anthropic"]

DEFAULT_BASE_URL: dict[Api, str] = {
    "openai": "https://api.openai.com/v1",
    "anthropic": "https://api.anthropic.com",
}


@dataclass(frozen=True)
class ModelEndpoint:
    id: str
    api: Api
    model: str
    base_url: str | None
    api_key: str | None = field(repr=False)


def base_url_of(endpoint: ModelEndpoint) -> str:
    return endpoint.base_url or DEFAULT_BASE_URL[endpoint.api]


def is_official_openai(endpoint: ModelEndpoint) -> bool:
    """OpenAI's own API (not a compatible server): it takes `max_completion_tokens`, the others `max_tokens`."""
    return (urlsplit(base_url_of(endpoint)).hostname or "") == "api.openai.com"


def base_url_problem(endpoint: ModelEndpoint) -> str | None:
    """Why the endpoint's baseUrl cannot work, as one line; None when it looks usable."""
    raw = base_url_of(endpoint)
    shown = redact_url(raw)
    try:
        parts = urlsplit(raw)
        parts.port  # noqa: B018 - raises ValueError for a port that is not a number
    except ValueError:
        return f"The baseUrl {shown!r} of model {endpoint.id!r} is not a valid URL."
    if parts.scheme not in ("http", "https"):
        return f"The baseUrl {shown!r} of model {endpoint.id!r} is not an http(s) URL."
    if not parts.hostname:
        return f"The baseUrl {shown!r} of model {endpoint.id!r} has no host."
    path = parts.path.rstrip("/")
    if endpoint.api == "openai" and path.endswith("/chat/completions"):
        return (
            f"The baseUrl {shown!r} of model {endpoint.id!r} names the full endpoint: "
            "for api openai it stops at /v1 (without /chat/completions)."
        )
    if endpoint.api == "anthropic" and (path.endswith("/v1") or path.endswith("/v1/messages")):
        return (
            f"The baseUrl {shown!r} of model {endpoint.id!r} ends in {path[path.rindex('/v1') :]}: "
            "for api anthropic it is the origin (the SDK adds /v1/messages)."
        )
    return None


class Where:
    """An endpoint as errors name it: its URL with userinfo and query values masked, and a redactor for its
    secrets (the API key, and a password or query value in the URL) for any text that leaves."""

    def __init__(self, endpoint: ModelEndpoint) -> None:
        self.endpoint = endpoint
        raw = base_url_of(endpoint)
        self.url = redact_url(raw)
        secrets = url_secrets(raw)
        if endpoint.api_key:
            secrets.add(endpoint.api_key)
        self._redactor = Redactor(secrets)

    def redact(self, text: str) -> str:
        return self._redactor.text(text)


__all__ = ["DEFAULT_BASE_URL", "Api", "ModelEndpoint", "Where", "base_url_of", "base_url_problem", "is_official_openai"]
