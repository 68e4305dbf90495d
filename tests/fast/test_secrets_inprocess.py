"""Secrets from the configuration never reach the browser: everything a tab and a script receive is
searched for the values `${VAR}` expanded into env, headers and URLs (docs/security.md, "Secrets")."""

from __future__ import annotations

import json
import sqlite3
import sys
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import anyio
import pytest

from tests.support.asgi_server import serving
from tests.support.inprocess import SECRET, in_process_host, sdk_server
from tests.support.oauth_as import approve, run_auth_server, run_protected_server
from tests.support.process import free_port, stdio_server
from webhost.apps.origins import derive_key
from webhost.people import Person
from webhost.storage.db import Storage
from webhost.storage.oauth_tokens import OAuthVault
from webhost.storage.urls import database_url

pytestmark = pytest.mark.anyio

SECRETS = {
    "WH_PASS": "pass-SECRET-1",
    "WH_KEY": "key-SECRET-2",
    "WH_ENV": "env-SECRET-3",
    "WH_HDR": "hdr-SECRET-4",
    "WH_NEWLINE": "nl-SECRET-5\n",
    "WH_LITERAL_TOKEN": "literal-SECRET-6",
}


async def _refuse_all(scope: dict[str, Any], receive: Any, send: Any) -> None:
    """A tiny HTTP endpoint that answers every request 401, as a server would without the right key."""
    if scope["type"] != "http":
        return
    await send(
        {
            "type": "http.response.start",
            "status": 401,
            "headers": [(b"content-type", b"application/json"), (b"www-authenticate", b"Bearer")],
        }
    )
    await send({"type": "http.response.body", "body": b'{"error": "unauthorized"}'})


@asynccontextmanager
async def refusing_server() -> AsyncIterator[int]:
    port = free_port()
    async with serving(_refuse_all, port, lifespan="off"):
        yield port


def _leaks(text: str) -> list[str]:
    return [name for name, value in SECRETS.items() if value.strip() in text]


async def test_no_secret_reaches_the_browser(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    for name, value in SECRETS.items():
        monkeypatch.setenv(name, value)
    closed = free_port()
    leaky_stdio = "import os, sys; print('starting with key', os.environ['API_KEY'], file=sys.stderr); sys.exit(3)"
    async with refusing_server() as refusing:
        entries = {
            "basic": {"command": "in-process", "env": {"API_KEY": "${WH_ENV}"}},
            "leaky": {"command": sys.executable, "args": ["-c", leaky_stdio], "env": {"API_KEY": "${WH_ENV}"}},
            "closed": {
                "type": "http",
                "url": f"http://user:${{WH_PASS}}@127.0.0.1:{closed}/mcp?key=${{WH_KEY}}",
                "headers": {"Authorization": "Bearer ${WH_HDR}"},
            },
            "refused": {
                "type": "http",
                "url": f"http://127.0.0.1:{refusing}/mcp?key=${{WH_KEY}}&v=2",
                "headers": {"X-Api-Key": "Token literal-SECRET-6"},
            },
            "newline": {
                "type": "http",
                "url": f"http://127.0.0.1:{refusing}/mcp",
                "headers": {"X-Api-Key": "${WH_NEWLINE}"},
            },
        }
        async with in_process_host(tmp_path, {"basic": sdk_server("basic")}, entries=entries) as host:
            async with host.tab() as tab:
                await tab.wait_connected("basic")
                states = {}
                for name in ("leaky", "closed", "refused", "newline"):
                    states[name] = await tab.wait_status(name, "error")
                await tab.request(
                    "tools/call", {"server": "basic", "name": "echo", "arguments": {"text": "hi"}, "callId": "c-1"}
                )
                listing = await tab.request("servers/list")
                received = json.dumps([tab.notifications, listing, states], ensure_ascii=False)
            async with host.http() as http:
                pages = [
                    (await http.get(path)).text for path in ("/", "/api/servers", "/api/audit", "/api/audit?format=csv")
                ]

    assert _leaks(received) == [], received
    assert _leaks("\n".join(pages)) == []
    # The errors still say what went wrong, with the secrets masked.
    assert states["leaky"]["error"] == "the server exited with status 3 (stderr: starting with key ***)"
    assert states["closed"]["target"] == f"http: http://***@127.0.0.1:{closed}/mcp?key=***"
    assert states["closed"]["error"].startswith(f"cannot reach http://***@127.0.0.1:{closed}/mcp?key=***")
    assert states["refused"]["error"] == (
        f"http://127.0.0.1:{refusing}/mcp?key=***&v=*** answered HTTP 401 and offers no sign-in (no OAuth metadata): "
        "check the entry's headers"
    )
    assert "***" in states["newline"]["error"]
    activity = [n["params"]["entry"] for n in tab.notifications if n["method"] == "activity"]
    assert any(e["kind"] == "stderr" and e["summary"] == "starting with key ***" for e in activity), activity


@pytest.mark.peers
async def test_no_oauth_token_reaches_the_browser_a_log_or_the_database_in_the_clear(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    """Access and refresh tokens (first and refreshed ones) stay in webhost: never in what a tab or a script
    receives, never in the log, and sealed in the database."""
    caplog.set_level("DEBUG")
    ada = Person(id="ada", name="Ada Lovelace", role="member")
    seen: list[str] = []
    with run_auth_server("--ttl", "6") as auth, run_protected_server(auth.issuer, tmp_path) as url:
        entries = {"secure": {"type": "http", "url": url}}
        async with in_process_host(tmp_path, {}, entries=entries, people=True) as host:
            vault = OAuthVault(Storage(database_url(None, tmp_path / "data")), derive_key(SECRET, "oauth/v1"))
            async with host.tab(person=ada) as tab:
                await tab.wait_status("secure", "auth-required")
                sign_in = await tab.request("servers/signIn", {"server": "secure"})
                back = await approve(sign_in["url"], "ada")
                async with host.http(person=ada) as http:
                    callback_page = (await http.get(back)).text
                await tab.wait_connected("secure")
                first = await vault.get("ada", "secure", "tokens")
                await anyio.sleep(3.5)  # half the token's life: the next call refreshes it
                for n in range(2):
                    call = {"server": "secure", "name": "whoami", "arguments": {}, "callId": f"w{n}"}
                    await tab.request("tools/call", call)
                second = await vault.get("ada", "secure", "tokens")
                listing = await tab.request("servers/list")
                await tab.request("servers/signOut", {"server": "secure"})
                await tab.wait_status("secure", "auth-required")
                received = json.dumps([tab.notifications, listing, sign_in], ensure_ascii=False)
            async with host.http(person=ada) as http:
                pages = [
                    (await http.get(path)).text for path in ("/", "/api/servers", "/api/audit", "/api/audit?format=csv")
                ]
            await vault.storage.close()
        refreshes = auth.refreshes()
    assert first is not None and second is not None and refreshes == 1
    tokens = {
        first["token"]["access_token"],
        first["token"]["refresh_token"],
        second["token"]["access_token"],
        second["token"]["refresh_token"],
    }
    assert len(tokens) == 4  # the refresh token rotated
    seen = [received, callback_page, *pages, caplog.text]
    database = b"".join(p.read_bytes() for p in (tmp_path / "data").glob("webhost.sqlite3*"))
    for token in tokens:
        assert not any(token in text for text in seen)
        assert token.encode() not in database


async def test_a_persons_own_value_in_their_result_shows_to_them_live_and_in_their_history(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Issue 25 item 8: a person's results are theirs. A tool that answers with the person's own `${input:ID}`
    value (or a configured value, or a short word such as "prod") shows what the server answered, in the live
    result, the activity log and the history, and the history rests as answered; the server's own stderr and
    webhost's error about it still mask that server's secrets (before: `***` in the result and the history,
    and "prod" masked inside "production")."""
    monkeypatch.setenv("WH_ENV", SECRETS["WH_ENV"])
    monkeypatch.setenv("WH_REGION", "prod")
    input_value = "input-SECRET-7"
    env = {"API_KEY": "${WH_ENV}", "OTHER": "${input:api_key}", "REGION": "${WH_REGION}"}
    entries = {"basic": stdio_server("basic", env=env)}
    inputs = [{"type": "promptString", "id": "api_key", "description": "key", "password": True}]
    text = f"{SECRETS['WH_ENV']} and {input_value} in production"
    async with in_process_host(tmp_path, {}, entries=entries, inputs=inputs) as host:
        async with host.tab() as tab:
            await tab.request("inputs/set", {"values": {"api_key": input_value}})
            await tab.wait_connected("basic")
            call = {"server": "basic", "name": "echo", "arguments": {"text": text}, "callId": "c-s"}
            live = await tab.request("tools/call", call)
            added = await tab.wait_notification("history/added", lambda p: p["entry"]["callId"] == "c-s")
            stored = (await tab.request("history/get", {"id": added["entry"]["id"]}))["entry"]
            response = await tab.wait_notification(
                "activity", lambda p: p["entry"]["kind"] == "response" and p["entry"]["method"] == "tools/call"
            )
            # What the server writes to its stderr, and webhost's error quoting what it said, are masked.
            secrets = f"{SECRETS['WH_ENV']} and {input_value}"
            await tab.request(
                "tools/call", {"server": "basic", "name": "stderr", "arguments": {"text": secrets}, "callId": "c-e"}
            )
            line = await tab.wait_notification("activity", lambda p: p["entry"]["kind"] == "stderr")
            refused = await tab.request_raw(
                "tools/call",
                {"server": "basic", "name": "rpc_error", "arguments": {"message": f"bad {input_value}"}, "callId": "r"},
            )
    assert live["content"][0]["text"] == text
    assert stored["result"]["content"][0]["text"] == text and stored["arguments"] == {"text": text}
    assert response["entry"]["data"]["content"][0]["text"] == text
    with sqlite3.connect(tmp_path / "data" / "webhost.sqlite3") as db:
        rows = "\n".join(repr(row) for row in db.execute("SELECT * FROM call_history"))
    assert text in rows
    assert line["entry"]["summary"] == "*** and *** [1/1]"
    assert refused["error"]["message"] == "basic: bad ***"


async def test_what_a_server_sends_is_never_masked_by_value_so_it_learns_no_other_servers_secret(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Issue 24 item 1: a hostile server echoes guesses, in its result (which its own App reads), its log and its
    stderr. Before, each guess that was another server's secret came back as `***`, which confirmed it (a URL
    `api_key`, an `Authorization` value and a URL password in one call). Now it comes back as it was sent,
    while the other server's own target still masks them."""
    for name in ("WH_PASS", "WH_KEY", "WH_HDR"):
        monkeypatch.setenv(name, SECRETS[name])
    closed = free_port()
    entries = {
        "hostile": stdio_server("basic"),
        "other": {
            "type": "http",
            "url": f"http://user:${{WH_PASS}}@127.0.0.1:{closed}/mcp?api_key=${{WH_KEY}}",
            "headers": {"Authorization": "Bearer ${WH_HDR}"},
        },
    }
    guesses = " | ".join([SECRETS["WH_PASS"], SECRETS["WH_KEY"], f"Bearer {SECRETS['WH_HDR']}", "a-wrong-guess"])
    async with in_process_host(tmp_path, {}, entries=entries) as host:
        async with host.tab() as tab:
            await tab.wait_connected("hostile")
            other = await tab.wait_status("other", "error")
            echoed = await tab.request(
                "tools/call", {"server": "hostile", "name": "echo", "arguments": {"text": guesses}, "callId": "g"}
            )
            await tab.request(
                "tools/call", {"server": "hostile", "name": "stderr", "arguments": {"text": guesses}, "callId": "e"}
            )
            line = await tab.wait_notification("activity", lambda p: p["entry"]["kind"] == "stderr")
    assert echoed["content"][0]["text"] == guesses
    assert line["entry"]["summary"] == guesses + " [1/1]"
    assert other["target"] == f"http: http://***@127.0.0.1:{closed}/mcp?api_key=***"
    assert not _leaks(other["error"])


async def test_names_are_never_masked_even_when_a_configured_value_equals_one(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Issue 24 item 1: a server named like an env value (or a `${VAR}` that expands to its name), and a tool
    named like one, keep their names in every frame; before, every frame had `weather` and `echo` masked, so
    the page's `data-server` was `***` and the server could not be used."""
    monkeypatch.setenv("WH_NAME", "weather")
    entries = {
        "weather": {"command": "in-process", "env": {"CITY": "weather", "TOOL": "echo", "SELF": "${WH_NAME}"}},
        "basic": {"command": "in-process", "env": {"NEIGHBOUR": "weather"}},
    }
    servers = {"weather": sdk_server("basic"), "basic": sdk_server("basic")}
    async with in_process_host(tmp_path, servers, entries=entries) as host:
        async with host.tab() as tab:
            await tab.wait_connected("weather")
            listing = await tab.request("servers/list")
            tools = await tab.request("tools/list", {"server": "weather"})
            echoed = await tab.request(
                "tools/call", {"server": "weather", "name": "echo", "arguments": {"text": "weather"}, "callId": "w"}
            )
            statuses = [n["params"]["server"]["name"] for n in tab.notifications if n["method"] == "servers/status"]
            activity = [n["params"]["entry"] for n in tab.notifications if n["method"] == "activity"]
    assert {s["name"] for s in listing["servers"]} == {"weather", "basic"}
    assert "echo" in {t["name"] for t in tools["tools"]}
    assert echoed["content"][0]["text"] == "weather"
    assert "weather" in statuses and "***" not in statuses
    assert {e["server"] for e in activity} <= {"weather", "basic"}
    assert any(e["kind"] == "response" and e["server"] == "weather" for e in activity), activity
