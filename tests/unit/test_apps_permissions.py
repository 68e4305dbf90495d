"""MCP App permissions → iframe `allow` (mcp-apps §7)."""

from __future__ import annotations

import pytest

from webhost.apps.permissions import (
    allow_attribute,
    effective_permissions,
    grant,
    permissions_from_allow,
    requested_permissions,
    unknown_permissions,
)


def test_object_form() -> None:
    meta: dict[str, object] = {"camera": {}, "microphone": {}, "geolocation": {}, "clipboardWrite": {}}
    assert requested_permissions(meta) == {"camera", "microphone", "geolocation", "clipboardWrite"}


@pytest.mark.parametrize("value", [{}, True, 1, "yes", [], {"x": 1}])
def test_truthy_values_request(value: object) -> None:
    assert requested_permissions({"camera": value}) == {"camera"}


@pytest.mark.parametrize("value", [None, False, 0, "", float("nan")])
def test_falsy_values_do_not_request(value: object) -> None:
    assert requested_permissions({"camera": value}) == set()


def test_aliases_and_unknown() -> None:
    meta = {"clipboard_write": True, "Clipboard-Write": {}, "usb": {}, "Camera": {}}
    assert requested_permissions(meta) == {"clipboardWrite", "camera"}
    assert unknown_permissions(meta) == ["usb"]


def test_list_form() -> None:
    assert requested_permissions(["microphone", "clipboardWrite", "nope", 3]) == {"microphone", "clipboardWrite"}
    assert unknown_permissions(["microphone", "nope"]) == ["nope"]


@pytest.mark.parametrize("meta", [None, "camera", 5])
def test_garbage(meta: object) -> None:
    assert requested_permissions(meta) == set()
    assert unknown_permissions(meta) == []


def test_allow_attribute_order_and_tokens() -> None:
    assert allow_attribute({"clipboardWrite", "geolocation", "microphone", "camera"}) == (
        "camera; microphone; geolocation; clipboard-write"
    )
    assert allow_attribute({"microphone", "clipboardWrite"}) == "microphone; clipboard-write"
    assert allow_attribute(set()) == ""
    assert allow_attribute({"usb", "camera; autoplay"}) == ""


def test_grant_is_intersection() -> None:
    assert grant({"camera", "microphone"}, ["microphone", "geolocation"]) == {"microphone"}
    assert grant({"clipboardWrite"}, ["clipboard-write"]) == {"clipboardWrite"}
    assert grant({"camera"}, []) == set()


def test_effective_and_inverse() -> None:
    assert effective_permissions({"clipboardWrite", "camera"}) == {"camera": {}, "clipboardWrite": {}}
    assert permissions_from_allow("camera; clipboard-write; autoplay") == {"camera", "clipboardWrite"}
    assert permissions_from_allow(allow_attribute({"geolocation"})) == {"geolocation"}
