"""Getting in: Host and Origin checks, then who is asking; one ASGI gate for HTTP and WebSocket.

Order matters: the Host/Origin check runs first (DNS rebinding and cross-site WebSocket hijacking
are refused before any credential is looked at), then authentication, in the configured mode
(contract §5): `token` (the token → a session cookie, or a Bearer header), `oidc` (a web session
from signing in with the identity provider, `webhost.auth.signin`) or `proxy` (a header from a
trusted reverse proxy, `webhost.auth.proxy`). Only `GET /healthz` (and, in oidc mode, the sign-in
pages themselves) answer without credentials.
"""

from __future__ import annotations

import hashlib
import hmac
import json
from collections.abc import Awaitable, Callable, Iterable
from http.cookies import SimpleCookie
from typing import Any
from urllib.parse import parse_qsl, quote, urlencode, urlsplit

from starlette.types import ASGIApp, Receive, Scope, Send

from webhost.auth.oidc import OidcError
from webhost.auth.pages import page_html
from webhost.auth.proxy import TrustedProxies
from webhost.auth.signin import CALLBACK_PATH, SIGNED_OUT_PATH, OidcSignIn, Tampered
from webhost.people import TOKEN_PERSON, Person, attach, sign_in_key

COOKIE_NAME = "webhost_session"
PUBLIC_PATHS = frozenset({"/healthz"})
SIGN_IN_PATH = "/auth/sign-in"
SIGN_OUT_PATH = "/auth/sign-out"
# Where remote servers' authorization servers send the person back (contract §6; upstream/sign_ins.py).
SERVER_CALLBACK_PATH = "/oauth/callback"
HOP = "webhost_hop"
# oidc mode: the pages of signing in and out answer without a session (they are how one starts or ends).
OIDC_PATHS = frozenset({SIGN_IN_PATH, CALLBACK_PATH, SIGN_OUT_PATH, SIGNED_OUT_PATH})


class AccessPolicy:
    """Who may come in: the token, the derived cookie value, and the allowed origins and hosts."""

    def __init__(self, token: str, secret: bytes, origins: Iterable[str], *, secure_cookies: bool = False) -> None:
        self._token = token.encode()
        self.cookie_value = hmac.new(secret, b"session:" + self._token, hashlib.sha256).hexdigest()
        self.origins = frozenset(o.rstrip("/").lower() for o in origins)
        self.hosts = frozenset(urlsplit(o).netloc for o in self.origins)
        self.secure_cookies = secure_cookies

    def token_ok(self, candidate: str) -> bool:
        return hmac.compare_digest(candidate.encode(), self._token)

    def cookie_ok(self, candidate: str) -> bool:
        return hmac.compare_digest(candidate.encode(), self.cookie_value.encode())

    def host_ok(self, host: str | None) -> bool:
        return host is not None and host.lower() in self.hosts

    def origin_ok(self, origin: str | None) -> bool:
        # Browsers omit Origin on same-origin GET navigations; when present it must be ours.
        return origin is None or origin.rstrip("/").lower() in self.origins

    def origin_for(self, host: str | None) -> str:
        """The public origin a request came in on (its Host is one of ours, the gate checked)."""
        https = [o for o in self.origins if o.startswith("https://") and urlsplit(o).netloc == host]
        return (https or [o for o in self.origins if urlsplit(o).netloc == host] or sorted(self.origins))[0]

    def session_cookie(self) -> str:
        secure = "; Secure" if self.secure_cookies else ""
        return f"{COOKIE_NAME}={self.cookie_value}; Path=/; HttpOnly; SameSite=Strict{secure}"


def same_origin_path(path: str) -> str:
    """A redirect target on our own origin: `//evil.example/` (or `/\\evil.example/`, which browsers read
    the same way) would be another site, so leading slashes and backslashes collapse to one `/`."""
    return "/" + quote(path.lstrip("/\\"), safe="/!$&'()*+,;=:@-._~%")


def _headers(scope: Scope) -> dict[str, str]:
    return {k.decode("latin-1").lower(): v.decode("latin-1") for k, v in scope.get("headers", [])}


def _cookie(headers: dict[str, str], name: str = COOKIE_NAME) -> str | None:
    raw = headers.get("cookie")
    if not raw:
        return None
    jar: SimpleCookie = SimpleCookie()
    try:
        jar.load(raw)
    except Exception:  # a malformed Cookie header is simply no credential
        return None
    morsel = jar.get(name)
    return morsel.value if morsel else None


class AuthGate:
    """ASGI middleware enforcing AccessPolicy on every HTTP request and WebSocket handshake, and
    attaching the person of each admitted request (`webhost.people.attach`).

    `oidc` / `proxy` choose those modes (else token mode); `admin_token` lets a Bearer with the
    token in too (in oidc and proxy mode only when WEBHOST_TOKEN was set: an admin credential).
    """

    def __init__(
        self,
        app: ASGIApp,
        policy: AccessPolicy,
        *,
        oidc: OidcSignIn | None = None,
        proxy: TrustedProxies | None = None,
        admin_token: bool = True,
        seen: Callable[[Person], Awaitable[None]] | None = None,
    ) -> None:
        self.app = app
        self.policy = policy
        self.oidc = oidc
        self.proxy = proxy
        self.admin_token = admin_token
        self.seen = seen  # told about the person of every admitted request (the `people` table)

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] not in ("http", "websocket"):
            await self.app(scope, receive, send)
            return
        headers = _headers(scope)
        if not self.policy.host_ok(headers.get("host")):
            await self._refuse(scope, send, 421, "This host name is not served here (Host check).")
            return
        if not self.policy.origin_ok(headers.get("origin")) and not self._sign_out_from_our_page(scope, headers):
            await self._refuse(scope, send, 403, "Cross-origin request refused (Origin check).")
            return
        path = scope.get("path", "")
        if scope["type"] == "http" and path == SERVER_CALLBACK_PATH and self._needs_hop(scope, headers):
            await self._hop(scope, send)
            return
        if scope["type"] == "http" and (path in PUBLIC_PATHS or (self.oidc is not None and path in OIDC_PATHS)):
            await self.app(scope, receive, send)
            return
        if self.proxy is not None:
            await self._proxy(scope, receive, send, headers)
            return
        if self.admin_token and self._bearer_ok(headers):
            await self._admit(TOKEN_PERSON, scope, receive, send)  # the token is the deployment's admin credential
            return
        if self.oidc is not None:
            await self._oidc(self.oidc, scope, receive, send, headers)
            return
        query = dict(parse_qsl(scope.get("query_string", b"").decode("latin-1")))
        if scope["type"] == "http" and "token" in query:
            await self._login(scope, send, query)
            return
        if self._authenticated(headers):
            # token mode: whoever holds the token is the deployment's one person
            await self._admit(TOKEN_PERSON, scope, receive, send)
            return
        await self._refuse(scope, send, 401, "Authentication required: open the login URL webhost printed.")

    def _needs_hop(self, scope: Scope, headers: dict[str, str]) -> bool:
        """The authorization server's redirect back is a cross-site navigation, which carries no
        SameSite=Strict session cookie: without credentials, the callback first re-opens itself."""
        if self.proxy is not None or "authorization" in headers:
            return False
        if _cookie(headers) is not None:
            return False
        query = dict(parse_qsl(scope.get("query_string", b"").decode("latin-1")))
        return HOP not in query

    async def _hop(self, scope: Scope, send: Send) -> None:
        query = scope.get("query_string", b"").decode("latin-1")
        target = f"{SERVER_CALLBACK_PATH}?{query}&{HOP}=1" if query else f"{SERVER_CALLBACK_PATH}?{HOP}=1"
        body = page_html(200, "Finishing sign-in", "Finishing the sign-in to the server…", next_url=target)
        await _send_html(send, 200, body)

    def _sign_out_from_our_page(self, scope: Scope, headers: dict[str, str]) -> bool:
        """The page's sign-out form: the page's `no-referrer` policy makes the browser send `Origin: null`
        with it, so the browser's own Sec-Fetch-Site says where it came from instead."""
        return (
            self.oidc is not None
            and scope.get("path") == SIGN_OUT_PATH
            and headers.get("origin") == "null"
            and headers.get("sec-fetch-site") == "same-origin"
        )

    async def _admit(
        self, person: Person, scope: Scope, receive: Receive, send: Send, *, sign_in: str | None = None
    ) -> None:
        attach(scope, person, sign_in=sign_in)
        if self.seen is not None:
            await self.seen(person)
        await self.app(scope, receive, send)

    async def _proxy(self, scope: Scope, receive: Receive, send: Send, headers: dict[str, str]) -> None:
        proxy = self.proxy
        assert proxy is not None
        if proxy.carries_person(headers):
            if not proxy.trusted(scope.get("client")):
                await self._refuse(
                    scope,
                    send,
                    403,
                    "The sign-in header is only accepted from the trusted "
                    "reverse proxy (trustedProxies); this request did not come through it.",
                )
                return
            person = proxy.person(headers)
            if person is not None:
                await self._admit(person, scope, receive, send)
                return
        if self.admin_token and self._bearer_ok(headers):
            await self._admit(TOKEN_PERSON, scope, receive, send)
            return
        await self._refuse(
            scope,
            send,
            401,
            "Not signed in: webhost is reached through its sign-in proxy, which names the person in a header.",
        )

    async def _oidc(
        self, oidc: OidcSignIn, scope: Scope, receive: Receive, send: Send, headers: dict[str, str]
    ) -> None:
        authorization = headers.get("authorization", "")
        if authorization[:7].lower() == "bearer ":  # a script with an access token from the provider
            try:
                person = await oidc.person_for_access_token(authorization[7:].strip())
            except OidcError as exc:
                await self._refuse(scope, send, exc.status, exc.message)
                return
            if person is None:
                await self._refuse(
                    scope,
                    send,
                    401,
                    "The identity provider did not accept this access token "
                    "(expired, revoked or issued by another provider).",
                )
                return
            await self._admit(person, scope, receive, send)
            return
        cookie = _cookie(headers)
        if cookie is not None:
            try:
                person = await oidc.person(cookie)
            except Tampered:
                await self._refuse(
                    scope,
                    send,
                    401,
                    "Your session cookie is not one this webhost signed (it was "
                    "changed or comes from another deployment). Sign in again.",
                    clear=oidc.clear_session_cookie(),
                )
                return
            if person is not None:
                await self._admit(person, scope, receive, send, sign_in=sign_in_key(cookie))
                return
        navigation = (
            scope["type"] == "http" and scope.get("method") == "GET" and "text/html" in headers.get("accept", "")
        )
        if navigation:
            query = scope.get("query_string", b"").decode("latin-1")
            next_path = same_origin_path(scope.get("path", "/")) + (f"?{query}" if query else "")
            response = await oidc.begin(self.policy.origin_for(headers.get("host")), next_path)
            if cookie is not None:
                response.headers.append("set-cookie", oidc.clear_session_cookie())
            await response(scope, receive, send)
            return
        message = (
            "Your session has ended (signed out or expired). Sign in again."
            if cookie is not None
            else "Not signed in: open webhost in a browser to sign in."
        )
        await self._refuse(scope, send, 401, message)

    def _bearer_ok(self, headers: dict[str, str]) -> bool:
        authorization = headers.get("authorization", "")
        return authorization[:7].lower() == "bearer " and self.policy.token_ok(authorization[7:].strip())

    def _authenticated(self, headers: dict[str, str]) -> bool:
        if self._bearer_ok(headers):
            return True
        cookie = _cookie(headers)
        return cookie is not None and self.policy.cookie_ok(cookie)

    async def _login(self, scope: Scope, send: Send, query: dict[str, str]) -> None:
        if not self.policy.token_ok(query["token"]):
            await self._refuse(scope, send, 401, "Invalid token.")
            return
        rest = {k: v for k, v in query.items() if k != "token"}
        location = same_origin_path(scope.get("path", "/")) + (f"?{urlencode(rest)}" if rest else "")
        await send(
            {
                "type": "http.response.start",
                "status": 303,
                "headers": [
                    (b"location", location.encode("latin-1")),
                    (b"set-cookie", self.policy.session_cookie().encode("latin-1")),
                    (b"cache-control", b"no-store"),
                    (b"referrer-policy", b"no-referrer"),
                ],
            }
        )
        await send({"type": "http.response.body", "body": b""})

    async def _refuse(self, scope: Scope, send: Send, status: int, message: str, *, clear: str | None = None) -> None:
        if scope["type"] == "websocket":
            # Closing before accept makes the server answer the handshake with 403.
            await send({"type": "websocket.close", "code": 1008, "reason": message[:120]})
            return
        wants_html = "text/html" in _headers(scope).get("accept", "")
        if wants_html:
            token_mode = self.oidc is None and self.proxy is None
            body = page_html(
                status,
                _TITLES.get(status, "webhost"),
                message,
                sign_in=self.oidc is not None and status == 401,
                token_form=token_mode and status == 401,
            ).encode()
            content_type = b"text/html; charset=utf-8"
        else:
            body = json.dumps({"error": message, "status": status}).encode()
            content_type = b"application/json"
        response_headers: list[tuple[bytes, bytes]] = [
            (b"content-type", content_type),
            (b"content-length", str(len(body)).encode()),
            (b"cache-control", b"no-store"),
        ]
        if status == 401:
            response_headers.append((b"www-authenticate", b'Bearer realm="webhost"'))
        if clear is not None:
            response_headers.append((b"set-cookie", clear.encode("latin-1")))
        await send({"type": "http.response.start", "status": status, "headers": response_headers})
        await send({"type": "http.response.body", "body": body})


_TITLES = {401: "Not signed in", 403: "Refused", 421: "Wrong address"}


async def _send_html(send: Send, status: int, html: str) -> None:
    body = html.encode()
    headers = [
        (b"content-type", b"text/html; charset=utf-8"),
        (b"content-length", str(len(body)).encode()),
        (b"cache-control", b"no-store"),
        (b"referrer-policy", b"no-referrer"),
    ]
    await send({"type": "http.response.start", "status": status, "headers": headers})
    await send({"type": "http.response.body", "body": body})


def describe(policy: AccessPolicy) -> dict[str, Any]:
    """What the settings page may show about access (never the token)."""
    return {"origins": sorted(policy.origins)}
