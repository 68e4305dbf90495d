"""Admin-only CSP compatibility flags (`cspCompat`) and the UI extension the client advertises."""

from __future__ import annotations

import pytest

from webhost.apps.csp import build_policy
from webhost.apps.instances import _with_compat
from webhost.config import ServerPolicy
from webhost.upstream.client_factory import UI_EXTENSION_SETTINGS

HOSTS = ["http://127.0.0.1:8700"]
DECLARED = {"resourceDomains": ["https://cdn.example.com", "https://*.cloudflare.com"]}


def directives(header: str) -> dict[str, list[str]]:
    out: dict[str, list[str]] = {}
    for part in header.split(";"):
        words = part.split()
        if words:
            out[words[0]] = words[1:]
    return out


def compat_header(meta: object, *flags: str) -> dict[str, list[str]]:
    policy = build_policy(meta, frame_ancestors=HOSTS)
    return directives(_with_compat(policy.header, frozenset(flags), policy.effective.get("resourceDomains")))


def test_workers_flag_includes_the_declared_resource_domains_in_worker_src() -> None:
    d = compat_header(DECLARED, "workers")
    assert d["worker-src"] == ["'self'", "blob:", "https://cdn.example.com", "https://*.cloudflare.com"]
    assert "blob:" in d["script-src"]


def test_workers_flag_without_declared_domains() -> None:
    assert compat_header(None, "workers")["worker-src"] == ["'self'", "blob:"]


def test_blob_workers_allows_blob_workers_only() -> None:
    d = compat_header(DECLARED, "blobWorkers")
    assert d["worker-src"] == ["'self'", "blob:"]
    assert "blob:" not in d["script-src"] and "data:" not in d["script-src"]


def test_data_modules_allows_data_scripts_only() -> None:
    d = compat_header(None, "dataModules")
    assert d["script-src"] == ["'self'", "'unsafe-inline'", "data:"]
    assert "worker-src" not in d


def test_the_pdf_viewer_flags_together() -> None:
    d = compat_header(DECLARED, "blobWorkers", "dataModules", "wasm")
    assert d["worker-src"] == ["'self'", "blob:"]
    assert {"data:", "'wasm-unsafe-eval'"} <= set(d["script-src"])


def test_no_flags_no_change() -> None:
    policy = build_policy(DECLARED, frame_ancestors=HOSTS)
    assert _with_compat(policy.header, frozenset(), ["https://cdn.example.com"]) == policy.header


def test_config_accepts_only_the_known_flags() -> None:
    policy = ServerPolicy.model_validate({"cspCompat": ["blobWorkers", "dataModules"]})
    assert policy.compat == {"blobWorkers", "dataModules"}
    with pytest.raises(ValueError, match="cspCompat|literal"):
        ServerPolicy.model_validate({"cspCompat": ["blob:"]})


def test_the_ui_extension_advertises_both_app_mime_types() -> None:
    assert UI_EXTENSION_SETTINGS["mimeTypes"] == ["text/html;profile=mcp-app", "text/html+mcp"]
    assert UI_EXTENSION_SETTINGS["elicitation"] == {}
