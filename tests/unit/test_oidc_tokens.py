"""The ID token checks (webhost.auth.oidc): signature against the provider's JWKS, issuer, audience,
expiry and nonce, with tokens made here (a provider would not sign the bad ones for us)."""

from __future__ import annotations

import json
import time
from typing import Any

import httpx2
import pytest
from joserfc import jwt
from joserfc.jwk import KeySet, OctKey, RSAKey

from webhost.auth.oidc import OidcClient, OidcError
from webhost.config import ConfigError, parse_config

ISSUER = "https://id.example.test"
KEY = RSAKey.generate_key(2048, parameters={"kid": "k1", "alg": "RS256", "use": "sig"})
OTHER_KEY = RSAKey.generate_key(2048, parameters={"kid": "k1", "alg": "RS256", "use": "sig"})


def client() -> OidcClient:
    metadata = {
        "issuer": ISSUER,
        "authorization_endpoint": f"{ISSUER}/auth",
        "token_endpoint": f"{ISSUER}/token",
        "jwks_uri": f"{ISSUER}/jwks",
    }
    jwks = KeySet([KEY]).as_dict(private=False)

    def handler(request: httpx2.Request) -> httpx2.Response:
        body = metadata if request.url.path.endswith("openid-configuration") else jwks
        return httpx2.Response(200, content=json.dumps(body), headers={"content-type": "application/json"})

    return OidcClient(
        ISSUER, "webhost", "s", ("openid",), http=lambda: httpx2.AsyncClient(transport=httpx2.MockTransport(handler))
    )


def token(key: RSAKey = KEY, **claims: Any) -> str:
    now = int(time.time())
    body = {"iss": ISSUER, "sub": "ada", "aud": "webhost", "iat": now, "exp": now + 300, "nonce": "n1", **claims}
    return jwt.encode({"alg": "RS256", "kid": "k1"}, body, key)


@pytest.mark.anyio
@pytest.mark.parametrize(
    ("made", "reason"),
    [
        (lambda: token(aud="another-app"), "another audience"),
        (lambda: token(OTHER_KEY), "signature does not verify"),
        (lambda: token(nonce="n2"), "nonce does not match"),
        (lambda: token(iss="https://evil.example.test"), "issued by"),
        (lambda: token(exp=int(time.time()) - 600), "clock skew"),
        (lambda: token(iat=int(time.time()) + 3600), "clock skew"),
        (
            lambda: jwt.encode(
                {"alg": "HS256"},
                {"iss": ISSUER, "sub": "a", "aud": "webhost", "nonce": "n1"},
                OctKey.import_key("s" * 32),
            ),
            "refused",
        ),
    ],
)
async def test_bad_id_tokens_are_refused_with_the_reason(made: Any, reason: str) -> None:
    with pytest.raises(OidcError) as caught:
        await client().verify_id_token(made(), nonce="n1")
    assert caught.value.status == 401 and reason in caught.value.message


@pytest.mark.anyio
async def test_a_good_id_token_gives_its_claims() -> None:
    claims = await client().verify_id_token(token(name="Ada"), nonce="n1")
    assert claims["sub"] == "ada" and claims["name"] == "Ada"


@pytest.mark.parametrize(
    ("auth", "message"),
    [
        ({"mode": "oidc", "clientId": "c"}, 'webhost.auth: mode "oidc" needs "issuer"'),
        ({"mode": "oidc", "issuer": "ftp://x", "clientId": "c"}, "absolute https:// URL"),
        ({"mode": "oidc", "issuer": "https://x", "clientId": "c", "scopes": ["email"]}, 'must include "openid"'),
        ({"mode": "oidc", "issuer": "https://x", "clientId": "c", "sessionHours": 0}, "webhost.auth.sessionHours"),
        ({"mode": "proxy", "trustedProxies": ["10.0.0.0/8"]}, 'needs "userHeader"'),
        ({"mode": "proxy", "userHeader": "X-User"}, 'needs "trustedProxies"'),
        ({"mode": "proxy", "userHeader": "X-User", "trustedProxies": ["nope"]}, "webhost.auth.trustedProxies[0]"),
        ({"mode": "ldap"}, 'webhost.auth.mode: must be "token", "oidc" or "proxy"'),
    ],
)
def test_auth_settings_are_checked_with_one_line(auth: dict[str, Any], message: str) -> None:
    with pytest.raises(ConfigError) as caught:
        parse_config(json.dumps({"mcpServers": {}, "webhost": {"auth": auth}}), "f.json", {})
    assert message in str(caught.value) and "\n" not in str(caught.value)


def test_postgresql_and_sqlite_are_accepted_and_other_databases_refused_in_one_line() -> None:
    with pytest.raises(ConfigError, match="must be a postgresql://") as caught:
        parse_config(json.dumps({"mcpServers": {}, "webhost": {"database": "mysql://u:pw@db/w"}}), "f.json", {})
    assert "\n" not in str(caught.value) and "pw" not in str(caught.value)
    for url in ("postgresql://u:pw@db/w", "postgres://u@db:5432/w?sslmode=require"):
        parsed = parse_config(json.dumps({"mcpServers": {}, "webhost": {"database": url}}), "f.json", {})
        assert parsed.options.database == url
    auth = {"mode": "oidc", "issuer": "https://i", "clientId": "c", "clientSecret": "${S}"}
    config = parse_config(
        json.dumps({"mcpServers": {}, "webhost": {"database": "sqlite+aiosqlite:///x.db", "auth": auth}}),
        "f.json",
        {"S": "a-long-client-secret"},
    )
    assert config.options.database == "sqlite+aiosqlite:///x.db"
    assert config.redactor().text("a-long-client-secret") != "a-long-client-secret"
