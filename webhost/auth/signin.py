"""OIDC mode's web sessions: starting a sign-in, finishing it on /auth/callback, signing out.

The browser holds two cookies, both signed (itsdangerous, with a key derived from the deployment
secret) and HttpOnly:

- `webhost_sign_in` (SameSite=Lax, Path=/auth/callback, 10 minutes): the state of a sign-in in
  progress. Lax, because the provider's redirect back is a cross-site navigation.
- `webhost_session` (SameSite=Strict): the session id. The callback sets it on a page that then
  navigates to `/` itself (a same-site navigation, so the Strict cookie goes with it).

The database keeps the hash of each (session ids and states are never stored in the clear): a
session outlives a restart, ends after `sessionHours`, and is revoked on sign-out; a state is used
once, so a replayed callback is refused. The ID token, which sign-out hands back to the provider as
`id_token_hint` and which names the person (name, email), is kept sealed (`IdTokenSeal`).
"""

from __future__ import annotations

import hashlib
import secrets
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Protocol
from urllib.parse import urlencode

from itsdangerous import BadSignature, SignatureExpired, URLSafeTimedSerializer
from starlette.responses import HTMLResponse, RedirectResponse, Response

from webhost.auth.bearer import verify_access_token
from webhost.auth.oidc import OidcClient, OidcError, Tokens, person_claims
from webhost.auth.pages import NO_STORE, page_html, problem_page
from webhost.auth.proxy import role_for
from webhost.people import Person
from webhost.storage.db import SignIn, Storage
from webhost.storage.envelope import Envelope

SESSION_COOKIE = "webhost_session"
STATE_COOKIE = "webhost_sign_in"
CALLBACK_PATH = "/auth/callback"
SIGNED_OUT_PATH = "/auth/signed-out"
SIGN_IN_SECONDS = 600
BEARER_CACHE_SECONDS = 60
MAX_CACHED_BEARERS = 1000


@dataclass(frozen=True)
class OidcSettings:
    user_claim: str = "sub"
    name_claim: str = "name"
    groups_claim: str = "groups"
    admins: frozenset[str] = frozenset()
    admin_groups: frozenset[str] = frozenset()
    session_hours: float = 12.0


class Refresher(Protocol):
    """What re-reads a person's groups as their session falls due (auth/refresh.py `GroupRefresh`)."""

    def due(self, refreshed_at: float | None) -> bool: ...

    async def refresh(self, person: Person) -> Person | None: ...


class Tampered(Exception):
    """A session cookie whose signature does not verify."""


class IdTokenSeal:
    """A session's ID token sealed with AES-GCM under its own key (`derive_key(secret, "id-token/v1")`), with the
    session's id hash and the person's id as associated data: moved to another session or person, it does not open."""

    def __init__(self, key: bytes, label: bytes = b"id-token") -> None:
        self._envelope = Envelope(key)
        self._label = label  # what is sealed (the refresh token has its own key and label: refresh_token_seal)

    def seal(self, session_id: str, person_id: str, id_token: str) -> bytes:
        return self.seal_hashed(_id_hash(session_id), person_id, id_token)

    def seal_hashed(self, id_hash: str, person_id: str, id_token: str) -> bytes:
        return self._envelope.seal(id_token.encode(), _bound(id_hash, person_id, self._label))

    def open(self, session_id: str, person_id: str, sealed: bytes | None) -> str | None:
        return self.open_hashed(_id_hash(session_id), person_id, sealed)

    def open_hashed(self, id_hash: str, person_id: str, sealed: bytes | None) -> str | None:
        """`open` for a session known by its stored id hash (a person's newest session, read from the table)."""
        plain = self._envelope.open(sealed, _bound(id_hash, person_id, self._label))
        try:
            return None if plain is None else plain.decode()
        except UnicodeDecodeError:  # a row that was tampered with
            return None


def _id_hash(session_id: str) -> str:
    return hashlib.sha256(session_id.encode()).hexdigest()  # as web_sessions.id_hash keeps it


def _bound(id_hash: str, person_id: str, label: bytes = b"id-token") -> bytes:
    return label + b"\x00" + id_hash.encode() + b"\x00" + person_id.encode()


def refresh_token_seal(key: bytes) -> IdTokenSeal:
    """The seal of a session's refresh token (`derive_key(secret, "refresh-token/v1")`), bound as the ID token's."""
    return IdTokenSeal(key, b"refresh-token")


class OidcSignIn:
    def __init__(
        self,
        client: OidcClient,
        storage: Storage,
        key: bytes,
        settings: OidcSettings,
        *,
        secure_cookies: bool,
        id_token_key: bytes,
        refresh_token_key: bytes | None = None,
        clock: Callable[[], float] = time.time,
    ) -> None:
        self.client = client
        self._id_tokens = IdTokenSeal(id_token_key)
        self._refresh_tokens = refresh_token_seal(refresh_token_key) if refresh_token_key is not None else None
        # Re-reads a person's groups every refreshMinutes (auth/refresh.py); set by the app.
        self.refresher: Refresher | None = None
        self.storage = storage
        self.settings = settings
        self.secure = secure_cookies
        self.clock = clock
        self._sessions = URLSafeTimedSerializer(key, salt="webhost/session-cookie")
        self._states = URLSafeTimedSerializer(key, salt="webhost/sign-in-state")
        self._bearers: dict[str, tuple[float, Person | None]] = {}  # sha256(access token) → (until, person)

    @property
    def session_seconds(self) -> int:
        return int(self.settings.session_hours * 3600)

    # -- the session cookie ------------------------------------------------------------------------

    async def person(self, cookie: str) -> Person | None:
        """The person of a session cookie; None when the session ended (expired, revoked, unknown).
        Raises Tampered when the cookie was not signed by this deployment."""
        session_id = self._session_id(cookie)
        if session_id is None:
            return None
        session = await self.storage.session(session_id, self.clock())
        if session is None:
            return None
        if self.refresher is not None and self.refresher.due(session.refreshed_at):
            return await self.refresher.refresh(session.person)  # None: the provider refused, the session ended
        return session.person

    async def person_for_access_token(self, access_token: str) -> Person | None:
        """A script's `Authorization: Bearer` with an access token the provider issued for webhost's client: the
        person it names (`webhost.auth.bearer`). The answer is kept for a minute at most, and never past the
        token's end, so scripts do not hammer the provider."""
        key = hashlib.sha256(access_token.encode()).hexdigest()
        now = self.clock()
        cached = self._bearers.get(key)
        if cached is not None and cached[0] > now:
            return cached[1]
        token = await verify_access_token(self.client, access_token)
        found = (
            person_claims(
                token.claims,
                user_claim=self.settings.user_claim,
                name_claim=self.settings.name_claim,
                groups_claim=self.settings.groups_claim,
            )
            if token is not None
            else None
        )
        person = None
        until = now + BEARER_CACHE_SECONDS
        if found is not None and token is not None:
            person_id, name, email, groups = found
            role = role_for(person_id, email, groups, self.settings.admins, self.settings.admin_groups)
            person = Person(id=person_id, name=name, email=email, role=role, groups=groups)
            if token.expires_at is not None:
                until = min(until, token.expires_at)
        if len(self._bearers) >= MAX_CACHED_BEARERS:
            self._bearers.clear()
        self._bearers[key] = (until, person)
        return person

    def _session_id(self, cookie: str) -> str | None:
        try:
            value = self._sessions.loads(cookie, max_age=self.session_seconds)
        except SignatureExpired:
            return None
        except BadSignature:
            raise Tampered from None
        return value if isinstance(value, str) else None

    def _cookie(self, name: str, value: str, *, max_age: int, same_site: str, path: str = "/") -> str:
        secure = "; Secure" if self.secure else ""
        return f"{name}={value}; Path={path}; Max-Age={max_age}; HttpOnly; SameSite={same_site}{secure}"

    def clear_session_cookie(self) -> str:
        return self._cookie(SESSION_COOKIE, "", max_age=0, same_site="Strict")

    # -- the flow ----------------------------------------------------------------------------------

    async def begin(self, origin: str, next_path: str) -> Response:
        """Redirect to the provider (303), with the sign-in's state in a Lax cookie."""
        redirect_uri = origin + CALLBACK_PATH
        try:
            request = await self.client.authorization_request(redirect_uri)
        except OidcError as exc:
            return problem_page(exc.status, exc.title, exc.message)
        await self.storage.start_sign_in(
            request.state,
            SignIn(
                nonce=request.nonce,
                code_verifier=request.code_verifier,
                redirect_uri=redirect_uri,
                next_path=next_path,
                created_at=self.clock(),
            ),
        )
        response = RedirectResponse(request.url, status_code=303, headers=NO_STORE)
        response.headers.append(
            "set-cookie",
            self._cookie(
                STATE_COOKIE,
                self._states.dumps(request.state),
                max_age=SIGN_IN_SECONDS,
                same_site="Lax",
                path=CALLBACK_PATH,
            ),
        )
        return response

    async def finish(self, query: dict[str, str], state_cookie: str | None) -> Response:
        """The provider's redirect back: check the state, trade the code, verify, open a session."""
        try:
            person, tokens, next_path = await self._finish(query, state_cookie)
        except OidcError as exc:
            response: Response = problem_page(exc.status, exc.title, exc.message)
        else:
            session_id = secrets.token_urlsafe(32)
            now = self.clock()
            sealed = self._id_tokens.seal(session_id, person.id, tokens.id_token)
            refresh = (
                self._refresh_tokens.seal(session_id, person.id, tokens.refresh_token)
                if self._refresh_tokens is not None and tokens.refresh_token
                else None
            )
            await self.storage.create_session(
                session_id,
                person,
                now=now,
                expires_at=now + self.session_seconds,
                sealed_id_token=sealed,
                sealed_refresh_token=refresh,
            )
            response = HTMLResponse(
                page_html(200, "Signed in", f"Signed in as {person.name}.", next_url=next_path), headers=NO_STORE
            )
            response.headers.append(
                "set-cookie",
                self._cookie(
                    SESSION_COOKIE, self._sessions.dumps(session_id), max_age=self.session_seconds, same_site="Strict"
                ),
            )
        response.headers.append(
            "set-cookie", self._cookie(STATE_COOKIE, "", max_age=0, same_site="Lax", path=CALLBACK_PATH)
        )
        return response

    async def _finish(self, query: dict[str, str], state_cookie: str | None) -> tuple[Person, Tokens, str]:
        if "error" in query:
            error = query["error"]
            description = query.get("error_description", "")
            detail = f"{error}: {description}" if description else error
            if error in ("access_denied", "consent_required", "login_required", "interaction_required"):
                raise OidcError(
                    403,
                    "Sign-in cancelled",
                    f"The identity provider did not sign you in ({detail}). You can try again.",
                )
            raise OidcError(
                502,
                "The identity provider refused the sign-in",
                f"The identity provider answered with an error ({detail}).",
            )
        state, code = query.get("state"), query.get("code")
        if not state or not code:
            raise OidcError(
                400,
                "Not a sign-in",
                'This address is where the identity provider returns after a sign-in; it needs "code" and "state".',
            )
        sign_in = await self.storage.take_sign_in(state, self.clock())
        if sign_in == "unknown":
            raise OidcError(
                403,
                "Unknown sign-in",
                "This sign-in was not started by webhost (unknown state): a forged or outdated link.",
            )
        if sign_in == "reused":
            raise OidcError(
                403,
                "Sign-in already used",
                "This sign-in has already been completed (the state was used before): a replayed callback is refused.",
            )
        assert isinstance(sign_in, SignIn)
        if self._state_of(state_cookie) != state:
            raise OidcError(
                403,
                "Sign-in from another browser",
                "This sign-in was not started in this browser (the state does not match its sign-in cookie).",
            )
        if self.clock() - sign_in.created_at > SIGN_IN_SECONDS:
            raise OidcError(403, "Sign-in took too long", "This sign-in was started more than 10 minutes ago.")
        await self.client.check_response_issuer(query.get("iss"))
        tokens = await self.client.exchange(
            code, redirect_uri=sign_in.redirect_uri, code_verifier=sign_in.code_verifier, nonce=sign_in.nonce
        )
        found = person_claims(
            tokens.claims,
            user_claim=self.settings.user_claim,
            name_claim=self.settings.name_claim,
            groups_claim=self.settings.groups_claim,
        )
        if found is None:
            raise OidcError(
                403,
                "The sign-in was refused",
                f'The provider\'s ID token has no "{self.settings.user_claim}" claim to identify you by (userClaim).',
            )
        person_id, name, email, groups = found
        role = role_for(person_id, email, groups, self.settings.admins, self.settings.admin_groups)
        return (
            Person(id=person_id, name=name, email=email, role=role, groups=groups),
            tokens,
            sign_in.next_path,
        )

    def _state_of(self, cookie: str | None) -> str | None:
        if not cookie:
            return None
        try:
            value = self._states.loads(cookie, max_age=SIGN_IN_SECONDS)
        except BadSignature:
            return None
        return value if isinstance(value, str) else None

    async def sign_out(self, origin: str, cookie: str | None) -> Response:
        """Revoke the session, clear the cookie, and end the provider's session when it offers that."""
        id_token = None
        session_id = None
        if cookie:
            try:
                session_id = self._session_id(cookie)
            except Tampered:
                session_id = None
        if session_id is not None:
            session = await self.storage.session(session_id, self.clock())
            id_token = self._id_tokens.open(session_id, session.person.id, session.sealed_id_token) if session else None
            await self.storage.revoke_session(session_id, self.clock())
        endpoint = await self.client.end_session_endpoint()
        response: Response
        if endpoint:
            params = {"client_id": self.client.client_id, "post_logout_redirect_uri": origin + SIGNED_OUT_PATH}
            if id_token:
                params["id_token_hint"] = id_token
            location = endpoint + ("&" if "?" in endpoint else "?") + urlencode(params)
            # A page that navigates on, not a redirect: the page CSP's form-action 'self' also covers
            # where a form's response redirects, and the provider is another origin.
            response = HTMLResponse(
                page_html(
                    200,
                    "Signed out",
                    "Signed out of webhost; now ending your session with the identity provider.",
                    next_url=location,
                ),
                headers=NO_STORE,
            )
        else:
            response = RedirectResponse(SIGNED_OUT_PATH, status_code=303, headers=NO_STORE)
        response.headers.append("set-cookie", self.clear_session_cookie())
        return response


def signed_out_page() -> Response:
    return HTMLResponse(page_html(200, "Signed out", "You are signed out of webhost.", sign_in=True), headers=NO_STORE)
