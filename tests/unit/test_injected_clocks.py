"""The clocks are injected: human time (`HumanClock`) and OAuth token expiry move when a test moves them, with no
waiting on wall time."""

from __future__ import annotations

import json
from typing import Any

import anyio
import httpx2
import pytest
from mcp.shared.auth import OAuthToken

from webhost.config import ServerConfig, parse_config
from webhost.upstream.clock import HumanClock
from webhost.upstream.oauth import MemoryGrants, OAuthDeps, PersonOAuth, RefreshLocks, machine_oauth
from webhost.upstream.sign_ins import ServerSignIns

pytestmark = pytest.mark.anyio

URL = "http://127.0.0.1:9/mcp"
CALLBACK = "http://127.0.0.1:8700/oauth/callback"


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


class Clock:
    """Seconds that pass only when the test says so."""

    def __init__(self, now: float = 1000.0) -> None:
        self.now = now

    def __call__(self) -> float:
        return self.now

    def move(self, seconds: float) -> None:
        self.now += seconds


class NoView:
    def needs_sign_in(self, url: str, reason: str) -> None:
        raise AssertionError("nobody is asked to sign in here")

    def sign_in_noticed(self, reason: str) -> None: ...
    def sign_in_over(self) -> None: ...


def entry(document: dict[str, Any]) -> ServerConfig:
    return parse_config(json.dumps({"mcpServers": {"secure": document}}), "test", {}).servers["secure"]


# -- human time -----------------------------------------------------------------------------------


def test_human_time_is_what_the_clock_moved_while_someone_was_asked_counted_once_when_asks_overlap() -> None:
    clock = Clock()
    human = HumanClock(clock)
    start, mark = clock(), human.total()
    clock.move(1)
    human.begin()
    clock.move(2)
    human.begin()  # a second question while the first is open
    clock.move(3)
    human.end()
    assert human.waiting
    clock.move(4)
    human.end()
    assert not human.waiting
    clock.move(5)
    assert human.total() - mark == 9
    assert human.machine_time_since(start, mark) == 6


async def test_a_deadline_is_suspended_while_a_person_answers_and_rearmed_with_what_is_left() -> None:
    clock = Clock()
    human = HumanClock(clock)
    with human.deadline(10) as scope:
        clock.move(2)
        human.begin()
        assert scope.deadline == float("inf")
        clock.move(100)  # the person took their time: none of it counts
        before = anyio.current_time()
        human.end()
        after = anyio.current_time()
        assert before + 8 <= scope.deadline <= after + 8
    assert not scope.cancelled_caught


async def test_progress_gives_a_request_its_budget_again_up_to_the_maximum_in_all() -> None:
    clock = Clock()
    human = HumanClock(clock)
    with human.deadline(10) as scope:
        clock.move(8)  # 8 of its 10 s used: a progress note gives it 10 more from now, 18 in all
        before = anyio.current_time()
        human.progressed(scope, 10, 25)
        after = anyio.current_time()
        assert human.budget(scope) == 18
        assert before + 10 <= scope.deadline <= after + 10
        clock.move(12)  # 20 used: 10 more would be 30, past the maximum of 25, so 5 are left
        before = anyio.current_time()
        human.progressed(scope, 10, 25)
        after = anyio.current_time()
        assert human.budget(scope) == 25
        assert before + 5 <= scope.deadline <= after + 5
        # A note while a person answers grows the budget; the deadline stays suspended until they are done.
        human.begin()
        human.progressed(scope, 10, 25)
        assert scope.deadline == float("inf")
        human.end()
        # Never less than it had: a note when the budget is already past now + 10 leaves it.
        human.progressed(scope, 1, 25)
        assert human.budget(scope) == 25
    assert not scope.cancelled_caught
    assert human.budget(scope) is None  # gone with its request


# -- token expiry ---------------------------------------------------------------------------------


async def test_a_token_counts_as_ended_a_little_early_on_the_injected_clock_and_its_row_says_when() -> None:
    clock = Clock()
    deps = OAuthDeps(MemoryGrants(), ServerSignIns(), RefreshLocks(), clock=clock)
    provider = PersonOAuth(entry({"type": "http", "url": URL}), "ada", CALLBACK, deps, NoView())
    context = provider.context
    for expires_in, valid_for in ((6, 3.0), (3600, 3595.0)):  # half the life of a short token, else 5 s early
        token = OAuthToken(access_token="a", token_type="Bearer", expires_in=expires_in, refresh_token="r")
        context.current_tokens = token
        context.update_token_expiry(token)  # as the SDK does on a token answer
        await context.storage.set_tokens(token)
        assert context.is_token_valid()
        row = await deps.grants.get("ada", "secure", "tokens")
        assert row is not None and row["expiresAt"] == clock() + valid_for
        clock.move(valid_for)
        assert context.is_token_valid()
        clock.move(0.001)
        assert not context.is_token_valid()
    token = OAuthToken(access_token="a", token_type="Bearer")  # no expires_in: no expiry
    context.update_token_expiry(token)
    assert context.token_expiry_time is None and context.is_token_valid()


async def test_the_flow_sends_a_valid_token_at_once_and_refreshes_once_the_clock_passed_its_expiry() -> None:
    clock = Clock()
    grants = MemoryGrants()
    deps = OAuthDeps(grants, ServerSignIns(), RefreshLocks(), clock=clock)
    token = {"access_token": "a1", "token_type": "Bearer", "expires_in": 6, "refresh_token": "r1"}
    await grants.put("ada", "secure", "tokens", {"token": token, "expiresAt": clock() + 3})
    await grants.put("ada", "secure", "client", {"client_id": "webhost-1", "redirect_uris": [CALLBACK]})

    async def first_request_sent(provider: PersonOAuth) -> httpx2.Request:
        flow = provider.async_auth_flow(httpx2.Request("POST", URL))
        try:
            return await flow.__anext__()
        finally:
            await flow.aclose()

    provider = PersonOAuth(entry({"type": "http", "url": URL}), "ada", CALLBACK, deps, NoView())
    clock.move(3)
    sent = await first_request_sent(provider)
    assert (sent.url.path, sent.headers["Authorization"]) == ("/mcp", "Bearer a1")
    assert provider.refreshes == 0
    clock.move(0.001)
    sent = await first_request_sent(provider)
    assert sent.url.path == "/token" and b"grant_type=refresh_token" in sent.content
    assert provider.refreshes == 1


async def test_webhosts_own_client_credentials_keep_time_on_the_injected_clock_and_run_the_sdks_flow() -> None:
    clock = Clock()
    deps = OAuthDeps(MemoryGrants(), ServerSignIns(), RefreshLocks(), clock=clock)
    config = entry({"type": "http", "url": URL, "oauth": {"grantType": "client_credentials", "clientId": "bot"}})
    provider = machine_oauth(config, "ada", deps)
    token = OAuthToken(access_token="m", token_type="Bearer", expires_in=60)
    provider.context.current_tokens = token
    provider.context.update_token_expiry(token)
    assert provider.context.token_expiry_time == clock() + 55
    assert provider.context.lock is deps.locks.get("ada", "secure")  # one lock per (person, server) for the host
    provider.context.current_tokens = None
    request = httpx2.Request("POST", URL)
    flow = provider.async_auth_flow(request)  # the SDK's flow, through webhost's hooks (upstream/sdk/oauth.py)
    try:
        assert await flow.__anext__() is request
        assert provider.loaded and provider.context.client_info is not None  # the SDK's own loading ran
        discovery = await flow.asend(httpx2.Response(401, request=request))
        assert discovery.url.path.startswith("/.well-known/oauth-protected-resource")
    finally:
        await flow.aclose()
