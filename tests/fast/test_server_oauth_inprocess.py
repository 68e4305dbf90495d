"""Signing in to a protected remote server (contract §6), in-process: webhost's OAuth client (the SDK's
`mcp.client.auth`) against a real authorization server (tests/peers/oauth-as.mjs, npm `oidc-provider`)
and an MCP server protected by the SDK's server-side auth (tests/servers/protected.py)."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import anyio
import httpx
import pytest

from tests.support.inprocess import AsgiWsClient, InProcessHost, in_process_host
from tests.support.oauth_as import AuthServer, approve, run_auth_server, run_protected_server
from webhost.people import Person

pytestmark = pytest.mark.anyio

ADA = Person(id="ada", name="Ada Lovelace", role="member")
BOB = Person(id="bob", name="Bob Builder", role="member")


@pytest.fixture(scope="module")
def auth_server() -> Iterator[AuthServer]:
    with run_auth_server("--ttl", "3600") as running:
        yield running


@pytest.fixture(scope="module")
def protected(auth_server: AuthServer, tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    with run_protected_server(auth_server.issuer, tmp_path_factory.mktemp("protected")) as url:
        yield url


@asynccontextmanager
async def host_with(tmp_path: Path, url: str, **entry: Any) -> AsyncIterator[InProcessHost]:
    async with in_process_host(tmp_path, {}, entries={"secure": {"type": "http", "url": url, **entry}}, people=True) as h:
        yield h


async def status_of(tab: AsgiWsClient, status: str, timeout: float = 20) -> dict[str, Any]:
    state: dict[str, Any] = await tab.wait_status("secure", status, timeout=timeout)
    return state


async def sign_in(host: InProcessHost, tab: AsgiWsClient, login: str, person: Person, *, deny: bool = False) -> str:
    """servers/signIn, then the person at the authorization server, then the browser back at the callback."""
    answer = await tab.request("servers/signIn", {"server": "secure"})
    assert answer["url"], answer
    back = await approve(answer["url"], login, deny=deny)
    assert back.startswith("/oauth/callback?"), back
    async with host.http(person=person) as http:
        page = await http.get(back)
    return page.text


async def whoami(tab: AsgiWsClient) -> dict[str, Any]:
    result = await tab.request("tools/call", {"server": "secure", "name": "whoami", "arguments": {}, "callId": "w"})
    answer: dict[str, Any] = json.loads(result["content"][0]["text"])
    return answer


async def test_a_person_signs_in_from_the_page_and_the_connection_finishes_by_itself(
    tmp_path: Path, protected: str, auth_server: AuthServer
) -> None:
    async with host_with(tmp_path, protected) as host, host.tab(person=ADA) as tab:
        waiting = await status_of(tab, "auth-required")
        assert waiting["error"] == "secure asks you to sign in"
        assert waiting["signIn"] == {"signedIn": False, "waiting": True}
        page = await sign_in(host, tab, "ada", ADA)
        assert "Signed in to secure" in page
        connected = await status_of(tab, "connected")
        assert connected["signIn"]["signedIn"] is True
        assert await whoami(tab) == {"subject": "ada", "scopes": ["mcp:tools"]}
