"""Groups that follow the directory (issue 29 item 2, contract §9): a person removed from a group at the identity
provider loses its server at the next session refresh, without a restart and without signing in again: their
open connection to it is closed, their running call on it cancelled, their stored OAuth token for it kept but
unusable, the page told (`servers/changed`), and the audit log has `access.changed`. Access comes back the same
way. oidc mode against the real test provider (its refresh tokens, its test-only groups endpoint); proxy mode
by the groups header of the next request."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import anyio
import httpx
import pytest

from tests.support.fast import error_of
from tests.support.inprocess import ORIGIN, SECRET, InProcessHost, in_process_host, sdk_server
from tests.support.oidc import Provider, remove_person, run_provider, set_groups, through_provider
from tests.support.process import WAIT, RpcError
from webhost.apps.origins import derive_key
from webhost.auth.signin import SESSION_COOKIE
from webhost.storage.db import Storage
from webhost.storage.oauth_tokens import OAuthVault
from webhost.storage.urls import database_url

pytestmark = pytest.mark.anyio

ACCESS = {"servers": {"payroll": {"groups": ["finance"]}}}
TOKENS = {"token": {"access_token": "at-payroll", "refresh_token": "rt-payroll"}, "expiresAt": 1_790_000_000.0}
HANG = {"server": "payroll", "name": "hang", "arguments": {}, "callId": "c-hang"}


@pytest.fixture(scope="module")
def provider() -> Iterator[Provider]:
    with run_provider([ORIGIN]) as running:
        yield running


def two_servers(tmp_path: Path, options: dict[str, Any]) -> Any:
    servers = {"basic": sdk_server("basic"), "payroll": sdk_server("basic")}
    return in_process_host(tmp_path, servers, webhost_options=options)


def browser_of(host: InProcessHost) -> httpx.AsyncClient:
    return host.http(token=None, headers={"accept": "text/html"})


async def sign_in(browser: httpx.AsyncClient, login: str) -> str:
    """The person signed in at the provider: the cookie header of their web session."""
    start = await browser.get("/")
    assert start.status_code == 303, start.text
    back = await through_provider(start.headers["location"], login)
    assert (await browser.get(back)).status_code == 200
    return f"{SESSION_COOKIE}={browser.cookies[SESSION_COOKIE]}"


async def names(tab: Any) -> list[str]:
    return [s["name"] for s in (await tab.request("servers/list"))["servers"]]


async def access_changes(browser: httpx.AsyncClient) -> list[dict[str, Any]]:
    response = await browser.get("/api/audit", headers={"accept": "application/json"})
    assert response.status_code == 200, response.text
    return [e for e in response.json()["entries"] if e["kind"] == "access.changed"]


@pytest.mark.peers
async def test_a_person_removed_from_a_group_loses_the_server_at_the_next_refresh(
    tmp_path: Path, provider: Provider
) -> None:
    await set_groups(provider.issuer, "bob", ["staff", "finance"])
    # A refresh every 0.3 s: the test waits for what it causes, never for the time.
    options = {**provider.options(refreshMinutes=0.005), "access": ACCESS}
    async with two_servers(tmp_path, options) as host, browser_of(host) as browser:
        cookie = await sign_in(browser, "bob")
        storage = Storage(database_url(None, tmp_path / "data"))
        await storage.start()
        try:
            vault = OAuthVault(storage, derive_key(SECRET, "oauth/v1"))
            await vault.put("bob", "payroll", "tokens", TOKENS)  # signed in to payroll before
            async with host.tab(authorization=None, cookie=cookie) as tab:
                await tab.wait_connected("payroll")
                running = tab.start_request("tools/call", HANG)
                await tab.wait_notification("activity", lambda p: p["entry"]["summary"] == "hang")

                await set_groups(provider.issuer, "bob", ["staff"])  # the directory admin removes him from finance
                changed = await tab.wait_notification("servers/changed")
                assert changed == {"servers": ["basic"]}
                cancelled = error_of(await tab.wait_response(running))
                assert cancelled["code"] == -32800 and cancelled["data"] == {"callId": "c-hang"}
                assert await names(tab) == ["basic"]
                # Every request naming it gets the unknown-name answer, the sign-in to it too: the token is unusable.
                for method in ("tools/list", "servers/signIn", "servers/reconnect"):
                    with pytest.raises(RpcError) as refused:
                        await tab.request(method, {"server": "payroll"})
                    with pytest.raises(RpcError) as unknown:
                        await tab.request(method, {"server": "nowhere"})
                    assert refused.value.code == unknown.value.code, method
                assert await vault.get("bob", "payroll", "tokens") == TOKENS  # kept for when access returns

                [row] = await access_changes(browser)
                assert row["user_id"] == "bob" and row["decision"] == "changed"
                assert row["detail"]["lost"] == {"groups": ["finance"], "servers": ["payroll"], "models": []}
                assert row["detail"]["gained"] == {"groups": [], "servers": [], "models": []}

                await set_groups(provider.issuer, "bob", ["staff", "finance"])  # and back
                assert (await tab.wait_notification("servers/changed")) == {"servers": ["basic", "payroll"]}
                await tab.wait_connected("payroll")
                assert await vault.get("bob", "payroll", "tokens") == TOKENS
            rows = await access_changes(browser)
            assert rows[0]["detail"]["gained"]["servers"] == ["payroll"]  # newest first
        finally:
            await storage.close()


@pytest.mark.peers
async def test_a_refresh_that_changes_nothing_leaves_the_connections_and_the_audit_alone(
    tmp_path: Path, provider: Provider
) -> None:
    await set_groups(provider.issuer, "carol", ["finance"])
    options = {**provider.options(refreshMinutes=0.005), "access": ACCESS}
    async with two_servers(tmp_path, options) as host, browser_of(host) as browser:
        cookie = await sign_in(browser, "carol")
        async with host.tab(authorization=None, cookie=cookie) as tab:
            await tab.wait_connected("payroll")
            # A call that outlives several refreshes (each 0.3 s) finishes: nothing was dropped under it.
            slow = {"steps": 4, "delay": 0.3}
            result = await tab.request(
                "tools/call", {"server": "payroll", "name": "slow", "arguments": slow, "callId": "c-slow"}
            )
            assert result["content"][0]["text"] == "done after 4 steps"
            assert not [n for n in tab.notifications if n.get("method") == "servers/changed"]
        assert await access_changes(browser) == []


@pytest.mark.peers
async def test_a_person_removed_from_the_directory_loses_their_session_at_the_next_refresh(
    tmp_path: Path, provider: Provider
) -> None:
    options = {**provider.options(refreshMinutes=0.005), "access": ACCESS}
    async with two_servers(tmp_path, options) as host, browser_of(host) as browser:
        cookie = await sign_in(browser, "dave")
        async with host.tab(authorization=None, cookie=cookie) as tab:
            await tab.wait_connected("basic")
            await remove_person(provider.issuer, "dave")  # the refresh is now invalid_grant
            with anyio.fail_after(WAIT):
                await tab.closed.wait()
            assert "ended at the identity provider" in str(tab.close_reason)
        async with host.http(token=None, headers={"cookie": cookie}) as api:
            refused = await api.get("/api/servers")
        assert refused.status_code == 401 and "session has ended" in refused.json()["error"]


PROXY = {
    "auth": {
        "mode": "proxy",
        "userHeader": "X-Forwarded-Email",
        "groupsHeader": "X-Forwarded-Groups",
        "trustedProxies": ["127.0.0.1/32"],
    },
    "access": ACCESS,
}


async def test_proxy_mode_follows_the_groups_header_of_the_next_request(tmp_path: Path) -> None:
    finance = {"x-forwarded-email": "fay@example.com", "x-forwarded-groups": "staff,finance"}
    staff = {**finance, "x-forwarded-groups": "staff"}
    async with (
        two_servers(tmp_path, PROXY) as host,
        host.tab(authorization=None, client=("127.0.0.1", 1), **finance) as tab,
    ):
        await tab.wait_connected("payroll")
        running = tab.start_request("tools/call", HANG)
        await tab.wait_notification("activity", lambda p: p["entry"]["summary"] == "hang")
        async with host.http(token=None, headers=staff, client=("127.0.0.1", 1)) as api:
            assert [s["name"] for s in (await api.get("/api/servers")).json()["servers"]] == ["basic"]
            assert (await tab.wait_notification("servers/changed")) == {"servers": ["basic"]}
            assert error_of(await tab.wait_response(running))["code"] == -32800
            assert await names(tab) == ["basic"]
            rows = [e for e in (await api.get("/api/audit")).json()["entries"] if e["kind"] == "access.changed"]
        assert [r["detail"]["lost"]["servers"] for r in rows] == [["payroll"]]
        assert rows[0]["user_id"] == "fay@example.com"


MODELS = [
    {"id": "big", "api": "openai", "model": "big-1", "baseUrl": "http://127.0.0.1:9/v1"},
    {"id": "free", "api": "openai", "model": "local", "baseUrl": "http://127.0.0.1:9/v1"},
]


async def test_the_tabs_are_told_the_models_when_a_group_change_changes_them_and_only_then(tmp_path: Path) -> None:
    # finance gives payroll, modellers give the big model: each change below moves one of them only.
    access = {**ACCESS, "models": {"big": {"groups": ["modellers"]}}}
    options = {**PROXY, "access": access, "chat": {"models": MODELS}}
    everything = {"x-forwarded-email": "mo@example.com", "x-forwarded-groups": "finance,modellers"}
    no_payroll = {**everything, "x-forwarded-groups": "modellers"}
    no_big = {**everything, "x-forwarded-groups": ""}
    async with (
        two_servers(tmp_path, options) as host,
        host.tab(authorization=None, client=("127.0.0.1", 1), **everything) as tab,
    ):
        assert [m["id"] for m in (await tab.request("chat/info"))["models"]] == ["big", "free"]
        async with host.http(token=None, headers=no_payroll, client=("127.0.0.1", 1)) as api:
            assert (await api.get("/api/servers")).status_code == 200
        assert (await tab.wait_notification("servers/changed")) == {"servers": ["basic"]}
        async with host.http(token=None, headers=no_big, client=("127.0.0.1", 1)) as api:
            assert (await api.get("/api/servers")).status_code == 200
        told = await tab.wait_notification("chat/models")
        # What `chat/info` answers now; and the server-only change before it told the tabs nothing of models.
        assert told == await tab.request("chat/info")
        assert [m["id"] for m in told["models"]] == ["free"] and told["defaultModel"] == "free"
        assert not [n for n in tab.notifications if n.get("method") in ("chat/models", "servers/changed")]
