"""webhost's own client identity (issue 25, item 7): its Client ID Metadata Document (SEP-991), served without a
session and used by default on an https public origin; and enterprise-managed authorization (SEP-990): the
person's identity exchanged at the identity provider for an ID-JAG, then the jwt-bearer grant at the server's
authorization server (tests/support/enterprise_auth.py: real HTTP on loopback)."""

from __future__ import annotations

import time
from pathlib import Path

import pytest

from tests.support.enterprise_auth import CLIENT_ID, ID_JAG_TYPE, ID_TOKEN_TYPE, JWT_BEARER, enterprise, entry
from tests.support.fast import text
from tests.support.inprocess import ORIGIN, in_process_host
from webhost.app.parts import IdTokens
from webhost.auth.signin import IdTokenSeal
from webhost.config import ConfigError, parse_config
from webhost.people import Person
from webhost.storage.db import Storage
from webhost.upstream.oauth import default_client_metadata_url

pytestmark = pytest.mark.anyio


async def test_the_client_metadata_document_is_served_to_anyone(tmp_path: Path) -> None:
    async with in_process_host(tmp_path, {}) as host, host.http(token=None) as http:
        answer = await http.get("/oauth/client-metadata.json")
        assert answer.status_code == 200
        document = answer.json()
        assert document["client_id"] == f"{ORIGIN}/oauth/client-metadata.json"
        assert document["redirect_uris"] == [f"{ORIGIN}/oauth/callback"]
        assert document["token_endpoint_auth_method"] == "none"
        assert set(document["grant_types"]) == {"authorization_code", "refresh_token"}


def test_webhost_s_own_document_is_the_default_on_an_https_public_origin_only() -> None:
    assert default_client_metadata_url("https://webhost.example.com/oauth/callback") == (
        "https://webhost.example.com/oauth/client-metadata.json"
    )
    assert default_client_metadata_url("http://127.0.0.1:8700/oauth/callback") is None


async def test_enterprise_managed_authorization_gets_a_token_without_asking_anyone(tmp_path: Path) -> None:
    async with enterprise() as parties:
        async with (
            in_process_host(tmp_path, {}, entries={"enterprise": entry(parties)}) as host,
            host.tab() as tab,
        ):
            await tab.wait_connected("enterprise")
            called = await tab.request("tools/call", {"server": "enterprise", "name": "whoami", "callId": "w"})
            assert text(called) == "ada"
            assert parties.refused == []
            exchange = parties.exchanges[0]
            assert (exchange["subject_token_type"], exchange["requested_token_type"]) == (ID_TOKEN_TYPE, ID_JAG_TYPE)
            assert (exchange["audience"], exchange["resource"]) == (parties.issuer, parties.mcp_url)
            grant = parties.grants[0]
            assert grant["grant_type"] == JWT_BEARER and grant["client_id"] == CLIENT_ID
            assert not any(n["method"] == "elicitation/request" for n in tab.notifications)  # nobody was asked


async def test_an_identity_provider_that_refuses_says_so(tmp_path: Path) -> None:
    async with enterprise() as parties:
        async with (
            in_process_host(tmp_path, {}, entries={"enterprise": entry(parties, subject_token="not-ada")}) as host,
            host.tab() as tab,
        ):
            state = await tab.wait_status("enterprise", "auth-required")
            assert "the identity provider refused the token exchange (400)" in state["error"]
            assert parties.grants == []  # no ID-JAG, nothing sent to the authorization server


async def test_a_person_s_id_token_is_their_newest_live_web_session_s(tmp_path: Path) -> None:
    storage = Storage(f"sqlite+aiosqlite:///{tmp_path / 'db.sqlite3'}")
    await storage.start()
    seal = IdTokenSeal(b"k" * 32)
    tokens = IdTokens(storage, seal)
    try:
        ada, now = Person(id="ada", name="Ada"), time.time()
        assert await tokens.newest("ada") is None
        for session_id, created, expires, token in (
            ("s1", now - 10, now + 100, "old"),
            ("s2", now, now + 100, "new"),
            ("s3", now + 1, now - 1, "expired"),
        ):
            sealed = seal.seal(session_id, "ada", token)
            await storage.create_session(session_id, ada, now=created, expires_at=expires, sealed_id_token=sealed)
        assert await tokens.newest("ada") == "new"
        assert await IdTokens(storage, IdTokenSeal(b"x" * 32)).newest("ada") is None  # another secret: no token
        await storage.revoke_session("s2", now)
        assert await tokens.newest("ada") == "old"
    finally:
        await storage.close()


@pytest.mark.parametrize(
    ("oauth", "auth", "message"),
    [
        ({"grantType": "identity_assertion", "clientId": "c", "issuer": "https://as"}, None, 'needs "clientSecret"'),
        ({"grantType": "identity_assertion", "clientId": "c", "clientSecret": "s"}, None, 'needs "issuer"'),
        (
            {"grantType": "identity_assertion", "clientId": "c", "clientSecret": "s", "issuer": "https://as"},
            None,
            "needs an identity provider",
        ),
        (
            {
                "grantType": "identity_assertion",
                "clientId": "c",
                "clientSecret": "s",
                "issuer": "https://as",
                "identityProvider": {"tokenEndpoint": "https://idp/token"},
            },
            None,
            'needs webhost.auth in "oidc" mode',
        ),
    ],
)
def test_an_incomplete_identity_assertion_entry_is_a_configuration_error(
    oauth: dict[str, object], auth: object, message: str
) -> None:
    import json

    document = json.dumps({"mcpServers": {"e": {"type": "http", "url": "https://mcp/mcp", "oauth": oauth}}})
    with pytest.raises(ConfigError) as refused:
        parse_config(document, "webhost.json", {})
    assert message in str(refused.value)
