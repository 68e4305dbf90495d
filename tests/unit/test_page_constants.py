"""The generated JS constants match what the backend's constants produce today."""

from __future__ import annotations

from typing import get_args

from webhost import errors, page_constants
from webhost.apps import instances, permissions, policy, proxy_token
from webhost.config import CompatFlag


def test_generated_files_match_the_python_constants() -> None:
    for path, expected in page_constants.outputs().items():
        assert path.read_text(encoding="utf-8") == expected, (
            f"{path.name} is stale or was edited by hand: run `python -m webhost.page_constants`"
        )


def test_constants_come_from_the_backend_modules() -> None:
    values = page_constants.page_constants()
    assert values["ERRORS"]["INVALID_PARAMS"] == errors.INVALID_PARAMS
    assert values["ERRORS"]["CANCELLED"] == errors.CANCELLED
    assert values["PERMISSION_TOKENS"] == permissions.ALLOW_TOKENS
    assert set(values["SANDBOX_TOKENS"]) == proxy_token.INNER_SANDBOX_TOKENS
    assert values["APP_MAX_IN_FLIGHT"] == instances.MAX_IN_FLIGHT
    assert values["APP_MAX_MESSAGES"] == instances.MAX_MESSAGES
    assert values["APP_MESSAGES_MAX_BYTES"] == instances.MAX_MESSAGES_BYTES
    assert values["APP_RELAYED_METHODS"] == list(policy.HANDLERS)
    assert values["CSP_COMPAT_FLAGS"] == list(get_args(CompatFlag))


def test_every_error_code_is_distinct() -> None:
    codes = list(page_constants.page_constants()["ERRORS"].values())
    assert len(codes) == len(set(codes))
