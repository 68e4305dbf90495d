"""The images inside a request's wire body (either wire): their base64 left out where it would only weigh, and
counted where they cost."""

from __future__ import annotations

from typing import Any

from webhost.chat.providers.streamed_images import placeholder_length


def _image_data(node: dict[str, Any]) -> tuple[str, str] | None:
    """An image's (prefix, base64) if this object is one: anthropic's base64 source or openai's `data:` URL."""
    if node.get("type") == "base64" and isinstance(node.get("data"), str):  # anthropic's image source
        return "", node["data"]
    url = node.get("url")
    if isinstance(url, str) and url.startswith("data:") and "," in url:  # openai's image_url
        head, data = url.split(",", 1)
        return head + ",", data
    return None


def without_image_data(body: Any) -> Any:
    """A request body as "What the model saw" keeps it: each image's base64 replaced by its length (the
    image is the attachment's or the tool result's, kept there; a copy per request would weigh megabytes)."""
    return _masked(body, [])


def masked_and_counted(body: Any) -> tuple[Any, int]:
    """`without_image_data(body)` and how many images it left out, in one walk."""
    lengths: list[int] = []
    return _masked(body, lengths), len(lengths)


def _masked(body: Any, lengths: list[int]) -> Any:
    if isinstance(body, list):
        return [_masked(item, lengths) for item in body]
    if not isinstance(body, dict):
        return body
    found = _image_data(body)
    if found is None:
        return {key: _masked(value, lengths) for key, value in body.items()}
    head, data = found
    length = placeholder_length(data)  # an attached image's, written as the request is sent
    lengths.append(len(data) if length is None else length)
    placeholder = f"[{lengths[-1]} base64 characters]"
    return {**body, "data": placeholder} if not head else {**body, "url": head + placeholder}
