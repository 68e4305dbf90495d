"""Signing in to a protected remote server (contract §6): webhost in-process, its OAuth client (the SDK's
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

from tests.support.clocks import MovedClock
from tests.support.inprocess import AsgiWsClient, InProcessHost, in_process_host
from tests.support.oauth_as import AuthServer, approve, run_auth_server, run_protected_server
from webhost.people import Person

pytestmark = pytest.mark.anyio

ADA = Person(id="ada", name="Ada Lovelace", role="member")
BOB = Person(id="bob", name="Bob Builder", role="member")
# Seconds the test authorization server's tokens live: longer than any test, so a token runs out only on
# webhost's clock, which a test moves past it (`MovedClock`), never on the server's.
TTL = 900


@pytest.fixture(scope="module")
def auth_server() -> Iterator[AuthServer]:
    with run_auth_server("--ttl", "3600") as running:
        yield running


@pytest.fixture(scope="module")
def protected(auth_server: AuthServer, tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    with run_protected_server(auth_server.issuer, tmp_path_factory.mktemp("protected")) as url:
        yield url


@asynccontextmanager
async def host_with(
    tmp_path: Path, url: str, clock: MovedClock | None = None, **entry: Any
) -> AsyncIterator[InProcessHost]:
    async with in_process_host(
        tmp_path, {}, entries={"secure": {"type": "http", "url": url, **entry}}, people=True, clock=clock
    ) as h:
        yield h


async def status_of(tab: AsgiWsClient, status: str, timeout: float = 20) -> dict[str, Any]:
    state: dict[str, Any] = await tab.wait_status("secure", status, timeout=timeout)
    return state


async def reason_with(tab: AsgiWsClient, text: str, timeout: float = 20) -> dict[str, Any]:
    """The server's state once it is auth-required for a reason containing `text`."""
    with anyio.fail_after(timeout):
        while True:
            state = await status_of(tab, "auth-required")
            if text in (state["error"] or ""):
                return state
            await anyio.sleep(0.05)


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


async def test_a_second_tab_and_a_restart_keep_the_sign_in_and_a_second_person_signs_in_separately(
    tmp_path: Path, protected: str
) -> None:
    async with host_with(tmp_path, protected) as host:
        async with host.tab(person=ADA) as tab:
            await status_of(tab, "auth-required")
            await sign_in(host, tab, "ada", ADA)
            await status_of(tab, "connected")
            async with host.tab(person=ADA) as second:
                assert (await status_of(second, "connected"))["signIn"]["signedIn"] is True
            async with host.tab(person=BOB) as bob:
                waiting = await status_of(bob, "auth-required")
                assert waiting["signIn"] == {"signedIn": False, "waiting": True}
                await sign_in(host, bob, "bob", BOB)
                await status_of(bob, "connected")
                assert (await whoami(bob))["subject"] == "bob"
            assert (await whoami(tab))["subject"] == "ada"
    # A new process on the same database and secret: the sealed tokens connect at once.
    async with host_with(tmp_path, protected) as host, host.tab(person=ADA) as tab:
        assert (await status_of(tab, "connected"))["signIn"]["signedIn"] is True
        assert (await whoami(tab))["subject"] == "ada"


async def test_an_expired_token_is_refreshed_once_while_three_calls_run_at_once(
    tmp_path: Path, tmp_path_factory: pytest.TempPathFactory
) -> None:
    with (
        run_auth_server("--ttl", str(TTL)) as short,
        run_protected_server(short.issuer, tmp_path_factory.mktemp("short")) as url,
    ):
        clock = MovedClock()
        async with host_with(tmp_path, url, clock) as host, host.tab(person=ADA) as tab:
            await status_of(tab, "auth-required")
            await sign_in(host, tab, "ada", ADA)
            await status_of(tab, "connected")
            assert short.refreshes() == 0
            clock.move(TTL)  # past webhost's expiry (a little before the token's end), never the server's
            ids = [
                tab.start_request(
                    "tools/call", {"server": "secure", "name": "slow", "arguments": {"seconds": 0.2}, "callId": f"c{i}"}
                )
                for i in range(3)
            ]
            answers = [await tab.wait_response(i) for i in ids]
            assert all(a["result"]["content"][0]["text"] == "slept 0.2 s" for a in answers), answers
            assert short.refreshes() == 1
            assert (await whoami(tab))["subject"] == "ada"
            assert short.refreshes() == 1


async def test_a_refused_refresh_token_leads_back_to_sign_in(
    tmp_path: Path, tmp_path_factory: pytest.TempPathFactory
) -> None:
    with (
        run_auth_server("--ttl", str(TTL)) as short,
        run_protected_server(short.issuer, tmp_path_factory.mktemp("refused")) as url,
    ):
        clock = MovedClock()
        async with host_with(tmp_path, url, clock) as host, host.tab(person=ADA) as tab:
            await status_of(tab, "auth-required")
            await sign_in(host, tab, "ada", ADA)
            await status_of(tab, "connected")
            short.refuse_refresh()
            clock.move(TTL)
            call = tab.start_request(
                "tools/call", {"server": "secure", "name": "echo", "arguments": {"text": "hi"}, "callId": "e"}
            )
            waiting = await status_of(tab, "auth-required")
            assert "sign in again" in waiting["error"], waiting
            assert waiting["signIn"]["waiting"] is True
            assert short.refreshes() == 1
            answer = await tab.request("servers/signIn", {"server": "secure"})
            assert answer["url"].startswith(short.issuer + "/auth?")
            await tab.request("tools/cancel", {"callId": "e"})
            assert "error" in await tab.wait_response(call)


async def test_signing_out_of_the_server_revokes_forgets_and_asks_again(
    tmp_path: Path, protected: str, auth_server: AuthServer
) -> None:
    async with host_with(tmp_path, protected) as host, host.tab(person=ADA) as tab:
        await status_of(tab, "auth-required")
        await sign_in(host, tab, "ada", ADA)
        await status_of(tab, "connected")
        revoked = auth_server.stats()["revoked"]
        out = await tab.request("servers/signOut", {"server": "secure"})
        assert out["note"] is None  # the authorization server confirmed the revocation
        assert auth_server.stats()["revoked"] > revoked
        waiting = await status_of(tab, "auth-required")
        assert waiting["signIn"] == {"signedIn": False, "waiting": True}
        async with host.http(person=ADA) as http:
            rows = (await http.get("/api/audit", params={"server": "secure"})).json()["entries"]
        kinds = [(row["kind"], row["decision"], row["user_id"]) for row in rows]
        assert ("server.sign-in", "answered", "ada") in kinds and ("server.sign-out", "signed-out", "ada") in kinds
        assert not any("code=" in json.dumps(row) or "state=" in json.dumps(row) for row in rows)
    async with host_with(tmp_path, protected) as host, host.tab(person=ADA) as tab:
        await status_of(tab, "auth-required")  # nothing was kept


async def test_step_up_asks_for_the_scope_the_server_wants_and_the_call_finishes(
    tmp_path: Path, protected: str
) -> None:
    async with host_with(tmp_path, protected) as host, host.tab(person=ADA) as tab:
        await status_of(tab, "auth-required")
        await sign_in(host, tab, "ada", ADA)
        await status_of(tab, "connected")
        assert (await whoami(tab))["scopes"] == ["mcp:tools"]
        call = tab.start_request(
            "tools/call", {"server": "secure", "name": "admin_action", "arguments": {}, "callId": "a"}
        )
        waiting = await status_of(tab, "auth-required")
        assert waiting["error"] == "this server needs more permissions (scope mcp:tools mcp:admin)"
        answer = await tab.request("servers/signIn", {"server": "secure"})
        assert "mcp%3Aadmin" in answer["url"] or "mcp:admin" in answer["url"]
        back = await approve(answer["url"], "ada")
        async with host.http(person=ADA) as http:
            page = await http.get(back)
            assert page.status_code == 200, page.text
        result = await tab.wait_response(call)
        assert result["result"]["content"][0]["text"] == "admin done with mcp:tools mcp:admin", result
        assert (await status_of(tab, "connected"))["signIn"]["signedIn"] is True


async def test_consent_denied_and_a_foreign_state_are_said_in_words_on_the_server_and_the_callback_page(
    tmp_path: Path, protected: str
) -> None:
    async with host_with(tmp_path, protected) as host, host.tab(person=ADA) as tab:
        await status_of(tab, "auth-required")
        page = await sign_in(host, tab, "ada", ADA, deny=True)
        assert "Sign-in to secure did not complete: you declined access at the authorization server" in page
        declined = await reason_with(tab, "declined")
        assert declined["error"].startswith("you declined access at the authorization server"), declined
        assert declined["signIn"]["waiting"] is False
        # Sign in again: a new flow with a new state.
        url = (await tab.request("servers/signIn", {"server": "secure"}))["url"]
        async with host.http(person=ADA) as http:
            forged = await http.get("/oauth/callback", params={"code": "x", "state": "not-the-state"})
        assert forged.status_code == 400 and "state mismatch" in forged.text
        await reason_with(tab, "state mismatch")
        # Bob cannot finish Ada's sign-in with her state.
        back = await approve(url, "ada")
        async with host.http(person=BOB) as http:
            stolen = await http.get(back)
        assert stolen.status_code == 400 and "state mismatch" in stolen.text
        async with host.http(person=ADA) as http:
            assert "Signed in to secure" in (await http.get(back)).text
        await status_of(tab, "connected")


async def test_a_token_endpoint_error_is_said_in_words(
    tmp_path: Path, tmp_path_factory: pytest.TempPathFactory
) -> None:
    with (
        run_auth_server() as broken,
        run_protected_server(broken.issuer, tmp_path_factory.mktemp("broken")) as url,
    ):
        broken.break_token()
        async with host_with(tmp_path, url) as host, host.tab(person=ADA) as tab:
            await status_of(tab, "auth-required")
            page = await sign_in(host, tab, "ada", ADA)
            # The callback page speaks after the code was traded (issue 24 item 5): before, "Signed in to secure".
            assert "Signed in" not in page, page
            assert "Sign-in to secure did not complete: the authorization server" in page, page
            assert "token endpoint refused" in page and "broken on purpose" in page
            state = await reason_with(tab, "token endpoint")
            assert state["error"].startswith("the authorization server's token endpoint refused"), state
            assert "server_error" in state["error"] and state["signIn"]["waiting"] is False


async def test_registration_refused_is_said_in_words(tmp_path: Path, tmp_path_factory: pytest.TempPathFactory) -> None:
    with (
        run_auth_server("--refuse-registration") as closed,
        run_protected_server(closed.issuer, tmp_path_factory.mktemp("closed")) as url,
    ):
        async with host_with(tmp_path, url) as host, host.tab(person=ADA) as tab:
            state = await status_of(tab, "auth-required")
            assert state["error"].startswith("the authorization server refused to register webhost as a client"), state
            assert "registration is closed here" in state["error"]
            with pytest.raises(Exception, match="refused to register"):
                await tab.request("servers/signIn", {"server": "secure"})


async def test_an_authorization_server_without_metadata_or_out_of_reach_is_said_in_words(
    tmp_path: Path, tmp_path_factory: pytest.TempPathFactory, auth_server: AuthServer
) -> None:
    with run_protected_server(auth_server.issuer + "/nowhere", tmp_path_factory.mktemp("nowhere")) as url:
        async with host_with(tmp_path, url) as host, host.tab(person=ADA) as tab:
            state = await status_of(tab, "auth-required")
            assert state["error"].startswith("the server's authorization server publishes no metadata"), state
    with run_protected_server("http://127.0.0.1:9", tmp_path_factory.mktemp("unreachable")) as url:
        async with host_with(tmp_path, url) as host, host.tab(person=ADA) as tab:
            state = await status_of(tab, "auth-required")
            assert state["error"] == (
                "the sign-in failed: webhost could not reach http://127.0.0.1:9 (the authorization server)"
            ), state


async def test_the_callback_reopens_itself_when_the_cross_site_redirect_carried_no_cookie(tmp_path: Path) -> None:
    async with in_process_host(tmp_path, {}) as host, host.http(token=None) as http:
        hop = await http.get("/oauth/callback", params={"code": "c", "state": "s"})
        assert hop.status_code == 200 and 'http-equiv="refresh"' in hop.text
        assert "/oauth/callback?code=c&amp;state=s&amp;webhost_hop=1" in hop.text
        assert (await http.get("/oauth/callback", params={"code": "c", "webhost_hop": "1"})).status_code == 401


def test_the_test_server_refuses_without_a_token(protected: str) -> None:
    refused = httpx.post(protected, json={"jsonrpc": "2.0", "id": 1, "method": "ping"}, timeout=5)
    assert refused.status_code == 401 and "resource_metadata=" in refused.headers["www-authenticate"]


async def test_two_replicas_on_one_database_share_a_rotated_refresh_token_without_a_new_sign_in(
    tmp_path: Path, tmp_path_factory: pytest.TempPathFactory, database_url: str
) -> None:
    """Replicas A and B, both running, each with Ada's tokens in memory. A refreshes (the authorization
    server rotates the refresh token, and answers a second use of the old one by revoking the grant);
    then B's token runs out: B takes what A stored instead of spending the old refresh token, and neither
    asks Ada to sign in again. A third replica started afterwards connects with the stored tokens too."""
    entry: dict[str, dict[str, Any]] = {"secure": {"type": "http"}}
    with (
        run_auth_server("--ttl", str(TTL)) as short,
        run_protected_server(short.issuer, tmp_path_factory.mktemp("rotating")) as url,
    ):
        entry["secure"]["url"] = url
        clock = MovedClock()  # both replicas' (as their machines' clocks agree)
        people: dict[str, Any] = {"entries": entry, "people": True, "database_url": database_url, "clock": clock}
        async with in_process_host(tmp_path, {}, **people) as a, a.tab(person=ADA) as on_a:
            await status_of(on_a, "auth-required")
            await sign_in(a, on_a, "ada", ADA)
            await status_of(on_a, "connected")
            async with in_process_host(tmp_path, {}, **people) as b, b.tab(person=ADA) as on_b:
                assert (await status_of(on_b, "connected"))["signIn"]["signedIn"] is True
                assert (await whoami(on_b))["subject"] == "ada"  # B holds the first tokens now
                clock.move(TTL)  # both copies of the first token are past webhost's expiry now
                assert (await whoami(on_a))["subject"] == "ada"
                assert short.refreshes() == 1  # A refreshed, and stored the rotated token first
                assert (await whoami(on_b))["subject"] == "ada"  # B's copy ran out: it took A's
                assert short.refreshes() == 1
                assert (await whoami(on_a))["subject"] == "ada"  # the grant A holds was not revoked
                for tab in (on_a, on_b):  # nobody was asked to sign in again
                    assert (await status_of(tab, "connected", timeout=1))["signIn"]["signedIn"] is True
        async with in_process_host(tmp_path, {}, **people) as c, c.tab(person=ADA) as on_c:
            assert (await status_of(on_c, "connected"))["signIn"]["signedIn"] is True
            assert (await whoami(on_c))["subject"] == "ada"


async def test_a_server_that_never_asks_for_a_sign_in_costs_no_token_lookup_per_request(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from tests.support.process import PYTHON, SERVERS, http_process
    from webhost.storage.oauth_tokens import OAuthVault

    lookups: list[str] = []
    get = OAuthVault.get

    async def counted(self: OAuthVault, person_id: str, server: str, kind: Any) -> dict[str, Any] | None:
        lookups.append(kind)
        return await get(self, person_id, server, kind)

    monkeypatch.setattr(OAuthVault, "get", counted)
    argv = [PYTHON, str(SERVERS / "basic.py"), "--http", "{port}"]
    with http_process(argv, log_path=tmp_path / "basic.log") as url:
        async with host_with(tmp_path, url) as host, host.tab() as tab:
            await status_of(tab, "connected")
            before = len(lookups)  # what connecting read (the stored sign-in, once, if any)
            for i in range(10):
                result = await tab.request(
                    "tools/call", {"server": "secure", "name": "echo", "arguments": {"text": "x"}, "callId": f"c{i}"}
                )
                assert result["content"][0]["text"].endswith("x")
    # No sign-in asked: no lookup of stored tokens under the refresh lock for each request.
    assert len(lookups) == before
