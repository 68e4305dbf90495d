"""The conformance floor runs only when asked for (`-m conformance`): it needs tools/conformance/node_modules
(Node 22 and the suite, from scripts/install-test-deps) and takes minutes."""

from __future__ import annotations

import pytest


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line("markers", "conformance: the official MCP conformance suite (tools/conformance)")


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    if "conformance" in (config.getoption("markexpr", "") or ""):
        return
    skip = pytest.mark.skip(reason="the conformance suite runs only with -m conformance")
    for item in items:
        if item.get_closest_marker("conformance") is not None:
            item.add_marker(skip)
