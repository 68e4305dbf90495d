"""A person the access rules keep from a server reaches nothing of it, by any way in (contract §9).

Walks EVERY WebSocket method of the registry (`webhost.methods.METHODS`: a method added later is walked too) and
every HTTP route of the app (its own route table), as a member whose groups do not include the one the rule
names. Each request is sent twice: naming the hidden server's things (`ledger`, `ledger_balance`, ...) and
naming things no configuration has (`nowhere`, ...). The recording server (tests/servers/recording.py), which
notes every request it receives, must receive none, and the two answers must be the same once the names are
taken out (no oracle), with no other mention of the hidden server in any answer or notification.
"""

from __future__ import annotations

import json
import re
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import httpx
import pytest
from fastapi import FastAPI
from fastapi.routing import APIRoute, APIWebSocketRoute
from starlette.routing import Mount

from tests.support.inprocess import ORIGIN, AsgiWsClient, in_process_host, sdk_server
from tests.support.oidc import run_provider, through_provider
from webhost.auth.signin import SESSION_COOKIE
from webhost.config import ServerConfig
from webhost.methods import METHODS

pytestmark = pytest.mark.anyio

HIDDEN = "ledger"  # the recording server, for the finance group only
UNKNOWN = "nowhere"  # configured nowhere
OPTIONS: dict[str, Any] = {
    "auth": {
        "mode": "proxy",
        "userHeader": "X-Forwarded-Email",
        "groupsHeader": "X-Forwarded-Groups",
        "trustedProxies": ["127.0.0.1/32"],
    },
    "access": {"servers": {HIDDEN: {"groups": ["finance"]}}},
}
INPUTS = [{"type": "promptString", "id": "ledger_key", "description": "ledger_key for the ledger", "password": True}]
MEMBER: dict[str, Any] = {"x-forwarded-email": "bob@example.com", "x-forwarded-groups": "staff"}
FINANCE: dict[str, Any] = {"x-forwarded-email": "fay@example.com", "x-forwarded-groups": "finance"}
PROXY = ("127.0.0.1", 1)


def generic(s: str) -> dict[str, Any]:
    """What any method gets: every key a handler reads a server's thing from, naming `s`'s."""
    return {
        "server": s,
        "name": f"{s}_balance",
        "tool": f"{s}_balance",
        "uri": f"{s}://summary",
        "arguments": {"account": "main"},
        "callId": f"walk-{s}",
        "id": f"{s}-task",
        "frameId": f"{s}-frame",
        "conversationId": f"{s}-conversation",
        "messageId": f"{s}-message",
        "requestId": f"{s}-request",
        "text": f"use {s}_balance",
        "level": "debug",
    }


# Methods whose handlers read something other than the generic keys to name a server's thing.
SPECIFIC: dict[str, Callable[[str], dict[str, Any]]] = {
    "prompts/get": lambda s: {"server": s, "name": f"{s}_prompt", "arguments": {}},
    "completion/complete": lambda s: {
        "server": s,
        "ref": {"type": "ref/prompt", "name": f"{s}_prompt"},
        "argument": {"name": "account", "value": "m"},
    },
    "history/get": lambda s: {"id": 1},
    "inputs/set": lambda s: {"server": s, "values": {f"{s}_key": "secret-value"}},
    "inputs/forget": lambda s: {"ids": [f"{s}_key"]},
    "chat/tools/set": lambda s: {"conversationId": f"{s}-conversation", "tools": {"servers": {s: True}}},
    "apps/request": lambda s: {"frameId": f"{s}-frame", "method": "tools/call", "params": {"name": f"{s}_balance"}},
    "tasks/list": lambda s: {"server": s},
    "audit/list": lambda s: {"server": s},
}
# Methods that end what the walk stands on (the tab's own session): walked last.
LAST = ("sessions/end", "history/clear")


def params_for(method: str, s: str) -> dict[str, Any]:
    return SPECIFIC[method](s) if method in SPECIFIC else generic(s)


def without_names(value: object, name: str) -> str:
    """The answer as text with the names asked about taken out (what may differ between the two askings)."""
    return json.dumps(value, sort_keys=True).replace(name, "NAME")


def recording() -> list[tuple[str, Any]]:
    sdk_server("recording")
    received: list[tuple[str, Any]] = sys.modules["recording"].RECEIVED
    received.clear()
    return received


def fastapi_of(app: Any) -> FastAPI:
    layer = app
    for _ in range(10):
        if isinstance(layer, FastAPI):
            return layer
        layer = getattr(layer, "app", None)
    raise AssertionError("no FastAPI app inside the host's wrappers")


async def answer(tab: AsgiWsClient, method: str, s: str) -> dict[str, Any]:
    response = await tab.request_raw(method, params_for(method, s))
    return {"error": response["error"]} if "error" in response else {"result": response["result"]}


def http_paths(app: FastAPI) -> list[tuple[str, str]]:
    """(method, path) of every HTTP route; a path parameter and the static mount get a name of the server."""
    walked: list[tuple[str, str]] = []
    for route in app.routes:
        if isinstance(route, APIWebSocketRoute):
            assert route.path == "/ws"  # the one socket: walked method by method above
            continue
        if isinstance(route, Mount):
            walked.append(("GET", route.path + "/NAME.js"))
            continue
        assert isinstance(route, APIRoute), f"a route of an unknown kind: {route!r}"
        path = route.path
        for param in route.param_convertors:
            path = path.replace("{" + param + "}", "NAME")
        walked.extend((verb, path) for verb in sorted(route.methods or ()) if verb != "HEAD")
    return walked


async def walk_socket(tab: AsgiWsClient) -> None:
    """Every method of the registry, naming the hidden server's things and then unknown ones: the same answer."""
    await tab.wait_connected("basic")
    assert set(SPECIFIC) <= set(METHODS), "SPECIFIC names a method the registry no longer has"
    for method in sorted(METHODS, key=lambda m: (m in LAST, m)):
        hidden = await answer(tab, method, HIDDEN)
        unknown = await answer(tab, method, UNKNOWN)
        assert without_names(hidden, HIDDEN) == without_names(unknown, UNKNOWN), method
    for notification in tab.notifications:
        assert HIDDEN not in json.dumps(notification), notification


async def walk_http(api: httpx.AsyncClient, app: FastAPI) -> None:
    """Every route of the app (signing out last), naming the hidden server's things and then unknown ones."""
    for verb, path in sorted(http_paths(app), key=lambda route: "sign-out" in route[1]):
        seen = []
        # Signing out ends the session the walk stands on: asked once (the second asking would be a stranger's).
        for name in (HIDDEN,) if "sign-out" in path else (HIDDEN, UNKNOWN):
            query = {"server": name, "name": f"{name}_balance", "uri": f"{name}://summary"}
            response = await api.request(verb, path.replace("NAME", name), params=query)
            # A sign-in's redirect carries a fresh state each time: the rest of it must be the same.
            location = re.sub(r"(state|nonce|code_challenge)=[^&]+", r"\1=S", response.headers.get("location", ""))
            seen.append((response.status_code, location.replace(name, "NAME"), response.text.replace(name, "NAME")))
        assert seen[0] == seen[-1], (verb, path)
        assert HIDDEN not in json.dumps(seen[0]), (verb, path)


def host_of(tmp_path: Path, options: dict[str, Any], connects: list[ServerConfig]) -> Any:
    servers = {"basic": sdk_server("basic"), HIDDEN: sdk_server("recording")}
    entries = {HIDDEN: {"command": "in-process", "env": {"KEY": "${input:ledger_key}"}}}
    return in_process_host(
        tmp_path, servers, entries=entries, webhost_options=options, inputs=INPUTS, connects=connects
    )


async def test_every_method_and_route_reaches_and_reveals_nothing_of_a_server_the_person_may_not_use(
    tmp_path: Path,
) -> None:
    received = recording()
    connects: list[ServerConfig] = []
    async with host_of(tmp_path, OPTIONS, connects) as web:
        async with web.tab(authorization=None, client=PROXY, **MEMBER) as tab:
            await walk_socket(tab)
        async with web.http(token=None, headers=MEMBER, client=PROXY) as api:
            await walk_http(api, fastapi_of(web.app))
        assert received == [], received
        assert HIDDEN not in {c.name for c in connects}

        # The same server, for a person of the group: the recording server records, so the silence above counts.
        async with web.tab(authorization=None, client=PROXY, **FINANCE) as fay:
            await fay.request("inputs/set", {"values": {"ledger_key": "k"}})
            await fay.wait_connected(HIDDEN)
            await fay.request("tools/list", {"server": HIDDEN})
        assert "tools/list" in {method for method, _ in received}


@pytest.mark.peers
async def test_the_same_walk_signed_in_through_the_openid_provider(tmp_path: Path) -> None:
    """oidc mode has routes of its own (/auth/*): bob (staff) signed in through the real provider walks them too."""
    received = recording()
    connects: list[ServerConfig] = []
    with run_provider([ORIGIN]) as provider:
        options = {**provider.options(), "access": OPTIONS["access"]}
        async with host_of(tmp_path, options, connects) as web:
            async with web.http(token=None, headers={"accept": "text/html"}) as browser:
                start = await browser.get("/")
                assert start.status_code == 303, start.text
                signed_in = await browser.get(await through_provider(start.headers["location"], "bob"))
                assert signed_in.status_code == 200, signed_in.text
                cookie = f"{SESSION_COOKIE}={browser.cookies[SESSION_COOKIE]}"
                async with web.tab(authorization=None, cookie=cookie) as tab:
                    assert (await tab.request("session/info"))["user"]["id"] == "bob"
                    await walk_socket(tab)
                await walk_http(browser, fastapi_of(web.app))
    assert received == [], received
    assert HIDDEN not in {c.name for c in connects}
