"""MCP Apps metadata: tool `_meta.ui`, MIME matching, `_meta.ui` location, and resource extraction."""

from __future__ import annotations

import base64
from typing import Any

import pytest

from webhost.apps.meta import (
    MAX_HTML_BYTES,
    AppResourceError,
    extract_app_html,
    is_app_callable,
    is_app_mime,
    is_model_visible,
    tool_resource_uri,
    tool_visibility,
    ui_meta_for,
)

URI = "ui://get-time/mcp-app.html"
MIME = "text/html;profile=mcp-app"
DOC = "<!DOCTYPE html><html><head></head><body>hi</body></html>"


@pytest.mark.parametrize(
    ("meta", "expected"),
    [
        ({"ui": {"resourceUri": URI}}, URI),
        ({"ui/resourceUri": URI}, URI),
        ({"ui": {"resourceUri": URI}, "ui/resourceUri": "ui://other"}, URI),
        ({"ui": {"visibility": ["app"]}, "ui/resourceUri": URI}, URI),
        ({"ui": {"resourceUri": "https://evil.example/app.html"}}, None),
        ({"ui": {"resourceUri": "https://x"}, "ui/resourceUri": URI}, None),  # nested is authoritative
        ({"ui/resourceUri": "file:///etc/passwd"}, None),
        ({"ui": {"resourceUri": "ui://"}}, None),
        ({"ui": {"resourceUri": 5}}, None),
        ({"ui": "ui://x"}, None),
        ({}, None),
        (None, None),
        ("ui://x", None),
    ],
)
def test_tool_resource_uri(meta: object, expected: str | None) -> None:
    assert tool_resource_uri(meta) == expected


@pytest.mark.parametrize(
    ("meta", "expected"),
    [
        (None, ["model", "app"]),
        ({}, ["model", "app"]),
        ({"ui": {}}, ["model", "app"]),
        ({"ui": {"visibility": ["app"]}}, ["app"]),
        ({"ui": {"visibility": ["model"]}}, ["model"]),
        ({"ui": {"visibility": ["app", "model"]}}, ["app", "model"]),
        ({"ui": {"visibility": ["app", "app", "robot"]}}, ["app"]),
        ({"ui": {"visibility": []}}, []),
        ({"ui": {"visibility": "app"}}, ["app"]),
        ({"ui": {"visibility": 3}}, ["model", "app"]),
    ],
)
def test_tool_visibility(meta: object, expected: list[str]) -> None:
    assert tool_visibility(meta) == expected


def test_visibility_membership_helpers() -> None:
    app_only = {"ui": {"visibility": ["app"]}}
    assert is_app_callable(app_only) and not is_model_visible(app_only)
    model_only = {"ui": {"visibility": ["model"]}}
    assert is_model_visible(model_only) and not is_app_callable(model_only)
    assert is_model_visible(None) and is_app_callable(None)


@pytest.mark.parametrize(
    ("mime", "expected"),
    [
        ("text/html;profile=mcp-app", True),
        ("text/html; profile=mcp-app", True),
        ("TEXT/HTML ; Profile = MCP-App", True),
        ('text/html;profile="mcp-app"', True),
        ("text/html;charset=utf-8;profile=mcp-app", True),
        ("text/html+mcp", True),
        ("Text/HTML+MCP", True),
        ("text/html", False),
        ("text/html;profile=other", False),
        ("text/plain;profile=mcp-app", False),
        ("text/html;profile=mcp-app-x", False),
        ("application/json", False),
        ("", False),
        (None, False),
    ],
)
def test_is_app_mime(mime: str | None, expected: bool) -> None:
    assert is_app_mime(mime) is expected


CSP = {"connectDomains": ["https://a.example"]}


def test_ui_meta_content_wins() -> None:
    content = {"_meta": {"ui": {"csp": CSP}}}
    listing = {"_meta": {"ui": {"prefersBorder": True}}}
    assert ui_meta_for(content, listing) == {"csp": CSP}


def test_ui_meta_listing_fallback() -> None:
    listing = {"_meta": {"ui": {"prefersBorder": True}}}
    assert ui_meta_for({}, listing) == {"prefersBorder": True}
    assert ui_meta_for({"_meta": {}}, listing) == {"prefersBorder": True}
    assert ui_meta_for({"_meta": {"ui": {}}}, listing) == {"prefersBorder": True}


def test_ui_meta_meta_alias_and_flat_keys() -> None:
    assert ui_meta_for({"meta": {"ui": {"csp": CSP}}}, None) == {"csp": CSP}
    flat = {"_meta": {"ui/csp": CSP, "ui/prefersBorder": False, "ui/resourceUri": URI, "other": 1}}
    assert ui_meta_for(flat, None) == {"csp": CSP, "prefersBorder": False}
    mixed = {"_meta": {"ui": {"prefersBorder": True}, "ui/prefersBorder": False, "ui/csp": CSP}}
    assert ui_meta_for(mixed, None) == {"prefersBorder": True, "csp": CSP}


def test_ui_meta_nothing() -> None:
    assert ui_meta_for({}, None) == {}
    assert ui_meta_for({"_meta": None}, {"_meta": "x"}) == {}


def item(**extra: Any) -> dict[str, Any]:
    return {"uri": URI, "mimeType": MIME, "text": DOC, **extra}


def test_extract_text() -> None:
    app = extract_app_html({"contents": [item(_meta={"ui": {"csp": CSP, "prefersBorder": True}})]}, URI, None)
    assert app.html == DOC
    assert app.mime_type == MIME
    assert app.csp_meta == CSP
    assert app.permissions_meta is None
    assert app.prefers_border is True
    assert app.warnings == []


def test_extract_blob_and_listing_meta() -> None:
    blob = base64.b64encode(("\ufeff" + DOC).encode("utf-8")).decode()
    content = {"uri": URI, "mimeType": MIME, "blob": blob}
    listing = {"uri": URI, "_meta": {"ui": {"permissions": {"camera": {}}, "prefersBorder": "yes"}}}
    app = extract_app_html({"contents": [content]}, URI, listing)
    assert app.html == DOC
    assert app.permissions_meta == {"camera": {}}
    assert app.prefers_border is None
    assert any("resources/list" in w for w in app.warnings)


def test_extract_picks_first_app_item_and_warns() -> None:
    other = {"uri": URI, "mimeType": "text/plain", "text": "fallback"}
    second = item(text="<html><body>second</body></html>")
    app = extract_app_html({"contents": [other, item(), second]}, URI, None)
    assert app.html == DOC
    assert any("3 content items" in w for w in app.warnings)


def test_extract_prefers_item_for_the_uri() -> None:
    elsewhere = item(uri="ui://else", text="<html>else</html>")
    app = extract_app_html({"contents": [elsewhere, item()]}, URI, None)
    assert app.html == DOC


def test_extract_warnings_for_legacy_forms() -> None:
    content = {
        "uri": "ui://else",
        "mimeType": "text/html+mcp",
        "text": "<div>fragment</div>",
        "meta": {"ui": {"csp": CSP}},
    }
    app = extract_app_html({"contents": [content]}, URI, None)
    assert app.csp_meta == CSP
    text = " ".join(app.warnings)
    assert "legacy MIME" in text and "fragment" in text and "'meta'" in text and "ui://else" in text


@pytest.mark.parametrize(
    ("result", "message"),
    [
        ({}, "no contents"),
        ({"contents": []}, "no contents"),
        ({"contents": "x"}, "no contents"),
        ({"contents": [{"uri": URI, "mimeType": "text/html", "text": DOC}]}, "MIME type"),
        ({"contents": [{"uri": URI, "text": DOC}]}, "MIME type"),
        ({"contents": [{"uri": URI, "mimeType": MIME}]}, "neither text nor"),
        ({"contents": [{"uri": URI, "mimeType": MIME, "blob": "!!!not base64"}]}, "not valid base64"),
        (
            {"contents": [{"uri": URI, "mimeType": MIME, "blob": base64.b64encode(b"\xff\xfe<html>").decode()}]},
            "not UTF-8",
        ),
        ({"contents": [item(text="   ")]}, "empty"),
        ({"contents": [item(text='{"json": true}')]}, "does not look like an HTML document"),
        ({"contents": [item(text="just words")]}, "does not look like an HTML document"),
        ({"contents": [item(text="<html>\x00</html>")]}, "binary"),
    ],
)
def test_extract_errors(result: dict[str, Any], message: str) -> None:
    with pytest.raises(AppResourceError) as info:
        extract_app_html(result, URI, None)
    assert message in info.value.message
    assert URI in str(info.value)


def test_extract_too_large_text_and_blob() -> None:
    big = "<html>" + "x" * MAX_HTML_BYTES + "</html>"
    with pytest.raises(AppResourceError, match="larger than 5 MB"):
        extract_app_html({"contents": [item(text=big)]}, URI, None)
    blob = base64.b64encode(big.encode()).decode()
    with pytest.raises(AppResourceError, match="larger than 5 MB"):
        extract_app_html({"contents": [{"uri": URI, "mimeType": MIME, "blob": blob}]}, URI, None)
    # Multi-byte characters count as bytes, not characters.
    wide = "<html>" + "é" * (MAX_HTML_BYTES // 2 + 10) + "</html>"
    with pytest.raises(AppResourceError, match="larger than 5 MB"):
        extract_app_html({"contents": [item(text=wide)]}, URI, None)


def test_extract_just_under_limit() -> None:
    html = "<!doctype html><html>" + "x" * (MAX_HTML_BYTES - 100) + "</html>"
    assert extract_app_html({"contents": [item(text=html)]}, URI, None).html == html


@pytest.mark.parametrize(
    "html",
    [
        "<!doctype html><html></html>",
        "\n  <!DOCTYPE HTML>\n<html lang='en'>",
        "<!-- built by vite --><!doctype html><html>",
        "<html><body>x</body></html>",
        "<head><title>x</title></head>",
        "<body>x</body>",
    ],
)
def test_complete_documents_have_no_fragment_warning(html: str) -> None:
    app = extract_app_html({"contents": [item(text=html)]}, URI, None)
    assert not any("fragment" in w for w in app.warnings)
