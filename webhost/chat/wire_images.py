"""The images inside a request's wire body (either wire): their base64 left out where it would only weigh, and
counted where they cost."""

from __future__ import annotations

from typing import Any


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
    if isinstance(body, list):
        return [without_image_data(item) for item in body]
    if not isinstance(body, dict):
        return body
    found = _image_data(body)
    if found is not None:
        head, data = found
        placeholder = f"[{len(data)} base64 characters]"
        return {**body, "data": placeholder} if not head else {**body, "url": head + placeholder}
    return {key: without_image_data(value) for key, value in body.items()}


def image_count(body: Any) -> int:
    if isinstance(body, list):
        return sum(image_count(item) for item in body)
    if not isinstance(body, dict):
        return 0
    return 1 if _image_data(body) is not None else sum(image_count(value) for value in body.values())
