"""The login's session cookie is Secure whenever the page is served over https (docs/security.md)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import httpx
import pytest

from tests.support.inprocess import HOST, ORIGIN, SECRET, TOKEN
from webhost.app import create_app
from webhost.config import load_config
from webhost.settings import Settings

pytestmark = pytest.mark.anyio


async def _login_cookie(tmp_path: Path, **settings: Any) -> str:
    path = tmp_path / "webhost.json"
    path.write_text(json.dumps({"mcpServers": {}}), encoding="utf-8")
    app = create_app(Settings(token=TOKEN, data_dir=tmp_path / "data", **settings), load_config(path), secret=SECRET)
    async with httpx.AsyncClient(transport=httpx.ASGITransport(app=app), base_url=ORIGIN) as client:
        response = await client.get(f"/?token={TOKEN}", headers={"host": HOST})
    assert response.status_code == 303 and response.headers["location"] == "/"
    return response.headers["set-cookie"]


@pytest.mark.parametrize(
    "settings",
    [
        {"public_origins": ("https://webhost.example",)},
        {"public_origins": ("http://intranet.example:8700", "HTTPS://webhost.example")},
        {"sandbox_scheme": "https", "sandbox_domain": "apps.example"},
        {"secure_cookies": True},
    ],
    ids=["https-public-origin", "one-https-origin-of-two", "https-sandbox", "flag"],
)
async def test_the_cookie_is_secure_behind_https(tmp_path: Path, settings: dict[str, Any]) -> None:
    cookie = await _login_cookie(tmp_path, **settings)
    assert "; Secure" in cookie and "HttpOnly" in cookie and "SameSite=Strict" in cookie


async def test_the_cookie_is_not_secure_on_plain_http(tmp_path: Path) -> None:
    cookie = await _login_cookie(tmp_path, public_origins=("http://intranet.example:8700",))
    assert "Secure" not in cookie and "HttpOnly" in cookie
