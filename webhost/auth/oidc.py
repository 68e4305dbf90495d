"""OpenID Connect, the relying party's side: discovery, the authorization request (code flow with
PKCE, state and nonce), the code exchange, and the ID token's verification.

authlib provides the protocol pieces (random values, the S256 code challenge, URL building) and its
sibling joserfc the JOSE ones (JWKS, signature and claims); httpx2 (webhost's HTTP client) talks to
the provider. Every failure is an `OidcError` with the HTTP status webhost answers with and one line
a person can act on.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

import httpx2
from authlib.common.security import generate_token
from authlib.common.urls import add_params_to_uri
from authlib.oauth2.rfc7636 import create_s256_code_challenge
from joserfc import jwt
from joserfc.errors import (
    BadSignatureError,
    ExpiredTokenError,
    InvalidClaimError,
    InvalidTokenError,
    JoseError,
    MissingClaimError,
)
from joserfc.jwk import KeySet

# Asymmetric signatures only: "none" and HS* (signed with the client secret) are refused.
ALGORITHMS = ["RS256", "RS384", "RS512", "PS256", "PS384", "PS512", "ES256", "ES384", "ES512", "EdDSA"]
LEEWAY_SECONDS = 60
TIMEOUT_SECONDS = 10.0


class OidcError(Exception):
    def __init__(self, status: int, title: str, message: str) -> None:
        super().__init__(message)
        self.status = status
        self.title = title
        self.message = message


def unreachable(what: str, issuer: str, exc: Exception) -> OidcError:
    reason = type(exc).__name__ if not str(exc) else str(exc)
    return OidcError(
        502,
        "The identity provider is not reachable",
        f'webhost could not {what} at {issuer} ({reason}). Check the "issuer" setting and that '
        "webhost can reach the provider.",
    )


@dataclass(frozen=True)
class AuthorizationRequest:
    url: str
    state: str
    nonce: str
    code_verifier: str


@dataclass(frozen=True)
class Tokens:
    id_token: str
    claims: dict[str, Any]
    refresh_token: str | None = None  # when the provider grants one (scope offline_access, or its own choice)


class RefreshRefused(Exception):
    """The provider refused a refresh token (invalid_grant: the person was removed, or the grant revoked)."""


class OidcClient:
    """One provider: its metadata and keys (fetched on first use, cached), and the flow's steps."""

    def __init__(
        self,
        issuer: str,
        client_id: str,
        client_secret: str | None,
        scopes: tuple[str, ...],
        *,
        clock: Callable[[], float] = time.time,
        http: Callable[[], httpx2.AsyncClient] | None = None,
    ) -> None:
        self.issuer = issuer.rstrip("/")
        self.client_id = client_id
        self.client_secret = client_secret
        self.scopes = scopes
        self.clock = clock
        self.http = http or (lambda: httpx2.AsyncClient(timeout=TIMEOUT_SECONDS, follow_redirects=False))
        self._metadata: dict[str, Any] | None = None
        self._keys: KeySet | None = None

    async def metadata(self) -> dict[str, Any]:
        if self._metadata is None:
            url = self.issuer + "/.well-known/openid-configuration"
            data = await self._get_json(url, "read the provider's discovery document")
            if str(data.get("issuer", "")).rstrip("/") != self.issuer:
                raise OidcError(
                    502,
                    "The identity provider is misconfigured",
                    f"The discovery document at {url} names issuer {data.get('issuer')!r}, not "
                    f'{self.issuer!r}: set "issuer" to the provider\'s exact issuer identifier.',
                )
            for key in ("authorization_endpoint", "token_endpoint", "jwks_uri"):
                if not isinstance(data.get(key), str):
                    raise OidcError(
                        502, "The identity provider is misconfigured", f"The discovery document at {url} has no {key}."
                    )
            self._metadata = data
        return self._metadata

    async def end_session_endpoint(self) -> str | None:
        try:
            endpoint = (await self.metadata()).get("end_session_endpoint")
        except OidcError:
            return None
        return endpoint if isinstance(endpoint, str) else None

    async def authorization_request(self, redirect_uri: str) -> AuthorizationRequest:
        endpoint = (await self.metadata())["authorization_endpoint"]
        state, nonce, verifier = generate_token(32), generate_token(32), generate_token(64)
        url = add_params_to_uri(
            endpoint,
            [
                ("response_type", "code"),
                ("client_id", self.client_id),
                ("redirect_uri", redirect_uri),
                ("scope", " ".join(self.scopes)),
                ("state", state),
                ("nonce", nonce),
                ("code_challenge", create_s256_code_challenge(verifier)),
                ("code_challenge_method", "S256"),
            ],
        )
        return AuthorizationRequest(url=url, state=state, nonce=nonce, code_verifier=verifier)

    async def check_response_issuer(self, iss: str | None) -> None:
        """RFC 9207: the authorization response's `iss` must be this provider's issuer identifier, and a provider
        that advertises `authorization_response_iss_parameter_supported` must send it (a mix-up defence: an
        answer from another provider, carrying a code for it, is refused before the code is spent)."""
        metadata = await self.metadata()
        issuer = str(metadata["issuer"])
        if iss is None:
            if metadata.get("authorization_response_iss_parameter_supported") is True:
                raise OidcError(
                    403,
                    "The sign-in was refused",
                    "The answer does not name the provider that issued it (no iss parameter), though the provider "
                    "always names itself: it may come from another provider (a mix-up). Start again from webhost.",
                )
            return
        if iss != issuer:
            raise OidcError(
                403,
                "The sign-in was refused",
                f"The answer was issued by {iss!r}, not by {issuer!r} (the iss parameter): it comes from another "
                "provider (a mix-up). Start again from webhost.",
            )

    async def _token_request(
        self, metadata: dict[str, Any], form: dict[str, str], doing: str
    ) -> tuple[int, dict[str, Any]]:
        """POST `form` to the token endpoint (client_secret_basic; a public client sends only client_id): the status
        and the JSON body. OidcError when the provider cannot be reached (`doing` says for what)."""
        auth: dict[str, Any] = (
            {"auth": httpx2.BasicAuth(self.client_id, self.client_secret)} if self.client_secret else {}
        )
        try:
            async with self.http() as http:
                response = await http.post(
                    metadata["token_endpoint"], data=form, headers={"accept": "application/json"}, **auth
                )
        except httpx2.HTTPError as exc:
            raise unreachable(doing, self.issuer, exc) from None
        return response.status_code, response_json(response)

    async def exchange(self, code: str, *, redirect_uri: str, code_verifier: str, nonce: str) -> Tokens:
        """Trade the code for tokens, verify the ID token, and add the userinfo claims (same `sub`)."""
        metadata = await self.metadata()
        form = {
            "grant_type": "authorization_code",
            "code": code,
            "redirect_uri": redirect_uri,
            "code_verifier": code_verifier,
            "client_id": self.client_id,
        }
        status, body = await self._token_request(metadata, form, "exchange the sign-in code")
        if status != 200:
            error = str(body.get("error") or f"HTTP {status}")
            if error == "invalid_client" or status == 401:
                raise OidcError(
                    502,
                    "The identity provider refused webhost",
                    "The provider refused webhost's client credentials (invalid_client): check "
                    '"clientId" and "clientSecret" against the client registered there.',
                )
            description = str(body.get("error_description") or "")
            detail = f"{error}: {description}" if description else error
            raise OidcError(
                403 if error == "invalid_grant" else 502,
                "The sign-in could not be completed",
                f"The provider refused the sign-in code ({detail}). Start again from webhost.",
            )
        id_token = body.get("id_token")
        if not isinstance(id_token, str):
            raise OidcError(
                502,
                "The identity provider is misconfigured",
                'The provider\'s token response has no id_token (is "openid" among the scopes?).',
            )
        claims = await self.verify_id_token(id_token, nonce=nonce)
        access_token = body.get("access_token")
        userinfo = metadata.get("userinfo_endpoint")
        if isinstance(access_token, str) and isinstance(userinfo, str):
            extra = await self._userinfo(userinfo, access_token)
            if extra.get("sub") == claims.get("sub"):
                claims = {**extra, **claims}
        refresh_token = body.get("refresh_token")
        return Tokens(
            id_token=id_token,
            claims=claims,
            refresh_token=refresh_token if isinstance(refresh_token, str) else None,
        )

    async def refresh(self, refresh_token: str) -> Tokens:
        """The person as the provider names them now: a refresh-token grant, its ID token verified (without a nonce:
        none was sent) and its userinfo added. RefreshRefused when the provider refuses the token (invalid_grant),
        OidcError when it cannot be reached or answers otherwise (the session keeps what it had, and tries again)."""
        metadata = await self.metadata()
        form = {"grant_type": "refresh_token", "refresh_token": refresh_token, "client_id": self.client_id}
        status, body = await self._token_request(metadata, form, "refresh a session's groups")
        if status != 200:
            error = str(body.get("error") or f"HTTP {status}")
            if error == "invalid_grant":
                raise RefreshRefused(str(body.get("error_description") or error))
            raise OidcError(502, "The identity provider refused a refresh", f"The provider answered {error}.")
        claims: dict[str, Any] = {}
        id_token = body.get("id_token")
        if isinstance(id_token, str):
            claims = await self.verify_id_token(id_token, nonce=None)
        access_token = body.get("access_token")
        userinfo = metadata.get("userinfo_endpoint")
        if isinstance(access_token, str) and isinstance(userinfo, str):
            extra = await self._userinfo(userinfo, access_token)
            if not claims or extra.get("sub") == claims.get("sub"):
                claims = {**extra, **claims}
        rotated = body.get("refresh_token")
        return Tokens(
            id_token=id_token if isinstance(id_token, str) else "",
            claims=claims,
            refresh_token=rotated if isinstance(rotated, str) else None,
        )

    async def verify_id_token(self, id_token: str, *, nonce: str | None) -> dict[str, Any]:
        """Signature (the provider's JWKS, asymmetric algorithms only), issuer, audience, expiry and nonce."""
        try:
            token = await self.decode_jwt(id_token)
        except BadSignatureError:
            raise _bad_token("its signature does not verify with the provider's keys (JWKS)") from None
        except (JoseError, ValueError) as exc:
            raise _bad_token(f"it cannot be read ({exc})") from None
        claims: dict[str, Any] = dict(token.claims)
        registry = jwt.JWTClaimsRegistry(
            now=int(self.clock()),
            leeway=LEEWAY_SECONDS,
            iss={"essential": True, "value": self.issuer},
            sub={"essential": True},
            exp={"essential": True},
            iat={"essential": True},
        )
        try:
            registry.validate(claims)
        except ExpiredTokenError:
            raise _bad_token(
                "it has expired: check that the clocks of webhost and the provider agree (clock skew)"
            ) from None
        except InvalidClaimError as exc:
            if exc.claim in ("iat", "nbf"):
                raise _bad_token(
                    "it is not valid yet: check that the clocks of webhost and the provider agree (clock skew)"
                ) from None
            if exc.claim == "iss":
                raise _bad_token(f"it was issued by {claims.get('iss')!r}, not {self.issuer!r}") from None
            raise _bad_token(f"its {exc.claim!r} claim is not valid") from None
        except MissingClaimError as exc:
            raise _bad_token(f"it lacks a claim ({exc.description})") from None
        except InvalidTokenError:
            raise _bad_token(
                "it is not valid yet: check that the clocks of webhost and the provider agree (clock skew)"
            ) from None
        if str(claims.get("iss", "")).rstrip("/") != self.issuer:
            raise _bad_token(f"it was issued by {claims.get('iss')!r}, not {self.issuer!r}")
        audience = claims.get("aud")
        audiences = audience if isinstance(audience, list) else [audience]
        if self.client_id not in audiences or (len(audiences) > 1 and claims.get("azp") not in (None, self.client_id)):
            raise _bad_token(f"it was issued for another audience ({audience!r}), not for client {self.client_id!r}")
        if nonce is not None and claims.get("nonce") != nonce:  # None: a refresh, which sends no nonce
            raise _bad_token("its nonce does not match this sign-in (a replayed or substituted token)")
        return claims

    async def decode_jwt(self, id_token: str) -> jwt.Token:
        """A JWT of this provider, its signature checked with the provider's keys (fetched once more when they
        may have rotated); its claims are the caller's to check."""
        fresh = self._keys is None
        keys = await self._key_set()
        try:
            return jwt.decode(id_token, keys, algorithms=ALGORITHMS)
        except (JoseError, ValueError):
            if fresh:
                raise
        self._keys = None  # the provider may have rotated its keys: fetch them once more
        return jwt.decode(id_token, await self._key_set(), algorithms=ALGORITHMS)

    async def _key_set(self) -> KeySet:
        if self._keys is None:
            uri = (await self.metadata())["jwks_uri"]
            data = await self._get_json(uri, "read the provider's keys (JWKS)")
            try:
                self._keys = KeySet.import_key_set(data)  # type: ignore[arg-type]
            except (JoseError, ValueError, TypeError, KeyError) as exc:
                raise OidcError(
                    502,
                    "The identity provider is misconfigured",
                    f"The provider's keys at {uri} cannot be read ({exc}).",
                ) from None
        return self._keys

    async def access_token_claims(self, access_token: str) -> dict[str, Any]:
        """The claims the provider's userinfo endpoint gives for an access token ({} when it refuses it)."""
        userinfo = (await self.metadata()).get("userinfo_endpoint")
        return await self._userinfo(userinfo, access_token) if isinstance(userinfo, str) else {}

    async def _userinfo(self, url: str, access_token: str) -> dict[str, Any]:
        try:
            async with self.http() as http:
                response = await http.get(
                    url, headers={"authorization": f"Bearer {access_token}", "accept": "application/json"}
                )
        except httpx2.HTTPError:
            return {}
        return response_json(response) if response.status_code == 200 else {}

    async def _get_json(self, url: str, what: str) -> dict[str, Any]:
        try:
            async with self.http() as http:
                response = await http.get(url, headers={"accept": "application/json"})
        except httpx2.HTTPError as exc:
            raise unreachable(what, self.issuer, exc) from None
        if response.status_code != 200:
            raise OidcError(
                502,
                "The identity provider is not answering",
                f"webhost could not {what}: {url} answered HTTP {response.status_code}.",
            )
        data = response_json(response)
        if not data:
            raise OidcError(
                502,
                "The identity provider is not answering",
                f"webhost could not {what}: {url} did not answer with a JSON object.",
            )
        return data


def _bad_token(why: str) -> OidcError:
    return OidcError(401, "The sign-in was refused", f"The provider's ID token was refused: {why}.")


def response_json(response: httpx2.Response) -> dict[str, Any]:
    try:
        data = response.json()
    except ValueError:
        return {}
    return data if isinstance(data, dict) else {}


def person_claims(
    claims: Mapping[str, Any], *, user_claim: str, name_claim: str, groups_claim: str
) -> tuple[str, str, str | None, tuple[str, ...]] | None:
    """(id, display name, email, groups) from the claims, or None without a user id."""
    user = claims.get(user_claim)
    if not isinstance(user, str | int) or str(user) == "":
        return None
    email = claims.get("email") if isinstance(claims.get("email"), str) else None
    name = next(
        (
            str(v)
            for v in (claims.get(name_claim), email, claims.get("preferred_username"))
            if isinstance(v, str) and v.strip()
        ),
        str(user),
    )
    raw = claims.get(groups_claim)
    groups = (
        tuple(str(g) for g in raw)
        if isinstance(raw, list)
        else (tuple(g.strip() for g in raw.split(",") if g.strip()) if isinstance(raw, str) else ())
    )
    return str(user), name, email, groups
