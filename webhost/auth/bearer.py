"""Scripts' access tokens in oidc mode: whether the provider issued one for webhost, and whose it is.

A token the provider issued to another client (another application's, or a `client_credentials` token) must
not let its holder in, though the provider's userinfo endpoint would answer for it. So:

- a JWT access token is verified as an ID token is (the provider's JWKS, asymmetric algorithms only), with
  its issuer, its expiry, and an audience that names webhost (`clientId` among `aud`, or, for a token
  that names no audience, as `azp` or `client_id`); an ID token (it carries a `nonce` or a hash of the
  code) is not an access token;
- an opaque one is asked about at the provider's token introspection endpoint (RFC 7662, with webhost's
  client credentials): it must be active, unexpired, from the issuer, and for `clientId` (among its
  audiences, or, without one, its `client_id`);
- without either (an opaque token and no `introspection_endpoint`), no access token is accepted.

The person's claims then come from the userinfo endpoint when its `sub` is the token's, else from the
token itself. A token is believed until it expires, and never longer than the caller caches it.
"""

from __future__ import annotations

import base64
import json
from dataclasses import dataclass
from typing import Any

import httpx2
from joserfc.errors import JoseError

from webhost.auth.oidc import LEEWAY_SECONDS, OidcClient, OidcError, response_json, unreachable

# Claims only an ID token carries: a token with one is never taken as an access token.
ID_TOKEN_CLAIMS = ("nonce", "at_hash", "c_hash")


@dataclass(frozen=True)
class AccessToken:
    claims: dict[str, Any]  # the person's (userinfo's when it agrees on `sub`)
    expires_at: float | None  # when the provider says it ends


async def verify_access_token(client: OidcClient, token: str) -> AccessToken | None:
    """The token's person and end when the provider issued it for webhost and it is live; None otherwise."""
    if _is_jwt(token):
        return await _verified_jwt(client, token)
    endpoint = (await client.metadata()).get("introspection_endpoint")
    if not isinstance(endpoint, str):
        raise OidcError(
            401,
            "Access token not accepted",
            "webhost cannot tell whom this access token was issued for: it is not a JWT and the identity "
            "provider offers no token introspection (introspection_endpoint). Scripts use WEBHOST_TOKEN instead.",
        )
    return await _introspected(client, endpoint, token)


def _is_jwt(token: str) -> bool:
    parts = token.split(".")
    if len(parts) != 3:
        return False
    try:
        header = json.loads(base64.urlsafe_b64decode(parts[0] + "=" * (-len(parts[0]) % 4)))
    except ValueError:
        return False
    return isinstance(header, dict) and "alg" in header


async def _verified_jwt(client: OidcClient, token: str) -> AccessToken | None:
    try:
        claims: dict[str, Any] = dict((await client.decode_jwt(token)).claims)
    except (JoseError, ValueError):
        return None  # a signature that does not verify with the provider's keys, or not a JWT after all
    now = client.clock()
    expires = claims.get("exp")
    if not isinstance(expires, int | float) or expires + LEEWAY_SECONDS < now:
        return None
    not_before = claims.get("nbf")
    if isinstance(not_before, int | float) and not_before - LEEWAY_SECONDS > now:
        return None
    if str(claims.get("iss", "")).rstrip("/") != client.issuer or any(k in claims for k in ID_TOKEN_CLAIMS):
        return None
    if not _for(client.client_id, claims.get("aud"), claims.get("azp"), claims.get("client_id")):
        return None
    return await _with_userinfo(client, token, claims, float(expires))


async def _introspected(client: OidcClient, endpoint: str, token: str) -> AccessToken | None:
    form = {"token": token, "token_type_hint": "access_token"}
    auth: dict[str, Any] = {}
    if client.client_secret:
        auth["auth"] = httpx2.BasicAuth(client.client_id, client.client_secret)
    else:
        form["client_id"] = client.client_id
    try:
        async with client.http() as http:
            response = await http.post(endpoint, data=form, headers={"accept": "application/json"}, **auth)
    except httpx2.HTTPError as exc:
        raise unreachable("ask the provider about an access token (introspection)", client.issuer, exc) from None
    if response.status_code != 200:
        raise OidcError(
            502,
            "The identity provider refused webhost",
            f'The provider\'s token introspection answered HTTP {response.status_code}: check "clientId" and '
            '"clientSecret" (webhost introspects with its own client credentials).',
        )
    claims = response_json(response)
    expires = claims.get("exp")
    if claims.get("active") is not True or claims.get("token_type") == "refresh_token":
        return None
    if isinstance(expires, int | float) and expires + LEEWAY_SECONDS < client.clock():
        return None
    if "iss" in claims and str(claims["iss"]).rstrip("/") != client.issuer:
        return None
    if not _for(client.client_id, claims.get("aud"), claims.get("client_id")):
        return None
    return await _with_userinfo(client, token, claims, float(expires) if isinstance(expires, int | float) else None)


def _for(client_id: str, audience: object, *parties: object) -> bool:
    """Whether a token is for webhost: its audiences include webhost's client (a token webhost's client got
    for another API is that API's, RFC 9068); a token that names no audience, when it was issued to webhost's
    client (`azp`, `client_id`)."""
    audiences = [a for a in (audience if isinstance(audience, list) else [audience]) if a]
    return client_id in audiences if audiences else client_id in parties


async def _with_userinfo(
    client: OidcClient, token: str, claims: dict[str, Any], expires_at: float | None
) -> AccessToken | None:
    subject = claims.get("sub")
    if not isinstance(subject, str) or not subject:
        return None  # a token of no person (client_credentials): nobody to let in
    profile = await client.access_token_claims(token)
    person = {**claims, **profile} if profile.get("sub") == subject else claims
    return AccessToken(claims=person, expires_at=expires_at)
