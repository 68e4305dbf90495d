"""The HTTP routes and the access gate in-process: health, login, cookie, Host and Origin checks, exports."""

from __future__ import annotations

import csv
import io
import json
from pathlib import Path

import pytest

from tests.support.fast import connected_host
from tests.support.inprocess import ORIGIN, TOKEN, AsgiWsClient, in_process_host, sdk_server
from tests.support.postgres import Postgres
from webhost.app import readiness
from webhost.auth import COOKIE_NAME

pytestmark = pytest.mark.anyio


async def test_healthz_needs_no_credentials_and_everything_else_does(tmp_path: Path) -> None:
    async with in_process_host(tmp_path, {}) as host, host.http(token=None) as http:
        health = await http.get("/healthz")
        assert health.status_code == 200 and health.json() == {"status": "ok"}
        for path in ("/", "/api/servers", "/api/audit", "/static/app.js", "/nowhere"):
            refused = await http.get(path)
            assert refused.status_code == 401, path
            assert refused.headers["www-authenticate"] == 'Bearer realm="webhost"'
            assert refused.json() == {
                "error": "Authentication required: open the login URL webhost printed.",
                "status": 401,
            }
        page = await http.get("/", headers={"accept": "text/html"})
        assert page.status_code == 401 and page.headers["content-type"].startswith("text/html")
        assert "<h1>401</h1>" in page.text
        wrong = await http.get("/api/servers", headers={"authorization": "Bearer not-the-token"})
        assert wrong.status_code == 401


async def test_a_foreign_host_is_421_and_a_foreign_origin_403_before_any_credential(tmp_path: Path) -> None:
    async with in_process_host(tmp_path, {}) as host, host.http() as http:
        rebound = await http.get("/api/servers", headers={"host": "evil.example:8700"})
        assert rebound.status_code == 421 and "Host check" in rebound.json()["error"]
        assert (await http.get("/healthz", headers={"host": "evil.example"})).status_code == 421
        cross = await http.get("/api/servers", headers={"origin": "https://evil.example"})
        assert cross.status_code == 403 and "Origin check" in cross.json()["error"]
        same = await http.get("/api/servers", headers={"origin": ORIGIN + "/"})
        assert same.status_code == 200


async def test_an_allowed_origin_from_the_config_is_accepted(tmp_path: Path) -> None:
    options = {"allowedOrigins": ["https://webhost.example.org"]}
    async with in_process_host(tmp_path, {}, webhost_options=options) as host, host.http() as http:
        response = await http.get(
            "/api/servers", headers={"origin": "https://webhost.example.org", "host": "webhost.example.org"}
        )
        assert response.status_code == 200


async def test_the_login_url_sets_the_session_cookie_and_redirects_without_the_token(tmp_path: Path) -> None:
    async with in_process_host(tmp_path, {}) as host, host.http(token=None) as http:
        login = await http.get("/", params={"token": TOKEN, "view": "logs"})
        assert login.status_code == 303
        assert login.headers["location"] == "/?view=logs"
        assert login.headers["cache-control"] == "no-store" and login.headers["referrer-policy"] == "no-referrer"
        cookie = login.headers["set-cookie"]
        assert cookie.startswith(f"{COOKIE_NAME}=") and "HttpOnly" in cookie and "SameSite=Strict" in cookie
        assert TOKEN not in cookie
        value = cookie.split(";")[0].split("=", 1)[1]
        page = await http.get("/", headers={"cookie": f"{COOKIE_NAME}={value}"})
        assert page.status_code == 200 and "text/html" in page.headers["content-type"]
        assert page.headers["x-frame-options"] == "DENY"
        assert "frame-ancestors 'none'" in page.headers["content-security-policy"]
        assert (await http.get("/", params={"token": TOKEN})).headers["location"] == "/"
        bad = await http.get("/", params={"token": "guess"})
        assert bad.status_code == 401 and bad.json()["error"] == "Invalid token."
        assert (await http.get("/api/servers", headers={"cookie": f"{COOKIE_NAME}=forged"})).status_code == 401
        assert (await http.get("/api/servers", headers={"cookie": 'x="\\'})).status_code == 401


async def test_api_servers_lists_names_and_transports_only(tmp_path: Path) -> None:
    entries = {"basic": {"command": "in-process", "env": {"SECRET": "hunter2"}}}
    async with in_process_host(tmp_path, {"basic": sdk_server("basic")}, entries=entries) as host, host.http() as http:
        response = await http.get("/api/servers")
        assert response.json() == {"servers": [{"name": "basic", "transport": "stdio"}]}
        assert "hunter2" not in response.text


async def test_api_audit_exports_json_and_csv(tmp_path: Path) -> None:
    async with connected_host(tmp_path, {"basic": sdk_server("basic")}) as (host, tab), host.http() as http:
        await tab.request("apps/permission", {"server": "basic", "permission": "camera", "granted": True})
        await tab.request("apps/permission", {"server": "basic", "permission": "microphone", "granted": False})
        entries = (await http.get("/api/audit")).json()["entries"]
        assert [(e["kind"], e["decision"], e["summary"]) for e in entries] == [
            ("app.permission", "revoked", "microphone"),
            ("app.permission", "granted", "camera"),
        ]
        assert (await http.get("/api/audit", params={"server": "other"})).json() == {"entries": []}
        exported = await http.get("/api/audit", params={"format": "csv"})
        assert exported.headers["content-type"].startswith("text/csv")
        assert "attachment" in exported.headers["content-disposition"]
        rows = list(csv.DictReader(io.StringIO(exported.text)))
        assert [r["summary"] for r in rows] == ["camera", "microphone"]  # oldest first
        assert json.loads(rows[0]["detail"]) is None


async def test_the_websocket_needs_credentials_and_our_origin(tmp_path: Path) -> None:
    async with in_process_host(tmp_path, {}) as host:
        bad: list[dict[str, str | None]] = [
            {"authorization": ""},
            {"origin": "https://evil.example"},
            {"host": "evil.example"},
        ]
        for headers in bad:
            tab = AsgiWsClient(host.app, headers=headers)
            with pytest.raises(ConnectionRefusedError):
                await tab.__aenter__()
            assert tab.accepted is False and tab.close_code == 1008


async def test_readiness_says_a_replica_without_its_database_is_unavailable(
    tmp_path: Path, postgres: Postgres, monkeypatch: pytest.MonkeyPatch
) -> None:
    """`/healthz` said ok while the database was down, so a balancer kept sending people to a replica that could
    neither audit nor sign anyone in (issue 24); `/healthz?ready=1` is the probe for a balancer."""
    monkeypatch.setattr(readiness, "CACHE_SECONDS", 0.0)
    url = postgres.new_database()
    name = url.rsplit("/", 1)[1]
    async with in_process_host(tmp_path, {}, database_url=url) as host, host.http(token=None) as http:
        ready = await http.get("/healthz", params={"ready": "1"})
        assert ready.status_code == 200 and ready.json() == {"status": "ready"}
        postgres.psql(f'ALTER DATABASE "{name}" ALLOW_CONNECTIONS false')
        postgres.psql(f"SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = '{name}'")
        try:
            down = await http.get("/healthz", params={"ready": "1"})
            assert down.status_code == 503
            assert down.json() == {"status": "unavailable", "reason": "the database cannot be reached"}
            assert name not in down.text and postgres.password not in down.text
            alive = await http.get("/healthz")  # liveness: the process answers, whatever its database does
            assert alive.status_code == 200 and alive.json() == {"status": "ok"}
        finally:
            postgres.psql(f'ALTER DATABASE "{name}" ALLOW_CONNECTIONS true')
        assert (await http.get("/healthz", params={"ready": "1"})).json() == {"status": "ready"}
