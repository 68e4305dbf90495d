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
from collections.abc import Callable, Iterable
from typing import Any
from urllib.parse import quote, urlencode, urlsplit

from starlette.requests import HTTPConnection
from starlette.responses import HTMLResponse, JSONResponse, Response
from starlette.types import ASGIApp, Receive, Scope, Send
from starlette.websockets import WebSocketClose

from webhost.auth.oidc import OidcError
from webhost.auth.pages import page_html
from webhost.auth.proxy import TrustedProxies
from webhost.auth.signin import CALLBACK_PATH, SIGNED_OUT_PATH, OidcSignIn, Tampered
from webhost.people import TOKEN_PERSON, Person, attach, sign_in_key

COOKIE_NAME = "webhost_session"
# Where remote servers' authorization servers send the person back (contract §6; upstream/sign_ins.py).
SERVER_CALLBACK_PATH = "/oauth/callback"
# webhost's own Client ID Metadata Document (SEP-991): authorization servers fetch it, with no session.
CLIENT_METADATA_PATH = "/oauth/client-metadata.json"
PUBLIC_PATHS = frozenset({"/healthz", CLIENT_METADATA_PATH})
SIGN_IN_PATH = "/auth/sign-in"
SIGN_OUT_PATH = "/auth/sign-out"
HOP = "webhost_hop"
# oidc mode: the pages of signing in and out answer without a session (they are how one starts or ends).
OIDC_PATHS = frozenset({SIGN_IN_PATH, CALLBACK_PATH, SIGN_OUT_PATH, SIGNED_OUT_PATH})
# The gate's own pages and redirects are never cached, and never leak the address (it may hold the token).
PRIVATE = {"cache-control": "no-store", "referrer-policy": "no-referrer"}


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


class AuthGate:
    """ASGI middleware enforcing AccessPolicy on every HTTP request and WebSocket handshake, and
    attaching the person of each admitted request (`webhost.people.attach`).

    A pure ASGI middleware (not starlette's BaseHTTPMiddleware), so the WebSocket handshake passes
    through it too; starlette's `HTTPConnection` reads the headers, cookies and query of either, and
    its response classes write the refusals.

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
        seen: Callable[[Person], None] | None = None,
    ) -> None:
        self.app = app
        self.policy = policy
        self.oidc = oidc
        self.proxy = proxy
        self.admin_token = admin_token
        # Told about the person of every admitted request (the `people` table). It only notes them: nobody's
        # request, and no WebSocket handshake, waits on that best-effort write.
        self.seen = seen

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] not in ("http", "websocket"):
            await self.app(scope, receive, send)
            return
        conn = HTTPConnection(scope)
        if len(conn.headers.getlist("host")) > 1:
            # Servers and proxies disagree on which of two Hosts counts (the first, the last, or a refusal):
            # checking one while another part of the chain uses the other would defeat the Host check.
            await self._refuse(conn, receive, send, 400, "The request names more than one Host.")
            return
        if not self.policy.host_ok(conn.headers.get("host")):
            await self._refuse(conn, receive, send, 421, "This host name is not served here (Host check).")
            return
        if not self.policy.origin_ok(conn.headers.get("origin")) and not self._sign_out_from_our_page(conn):
            await self._refuse(conn, receive, send, 403, "Cross-origin request refused (Origin check).")
            return
        path = scope.get("path", "")
        http = scope["type"] == "http"
        if http and path == SERVER_CALLBACK_PATH and self._needs_hop(conn):
            await self._hop(conn, receive, send)
            return
        if http and (path in PUBLIC_PATHS or (self.oidc is not None and path in OIDC_PATHS)):
            await self.app(scope, receive, send)
            return
        if self.proxy is not None:
            await self._proxy(self.proxy, conn, receive, send)
            return
        if self.admin_token and self._bearer_ok(conn):
            await self._admit(TOKEN_PERSON, conn, receive, send)  # the token is the deployment's admin credential
            return
        if self.oidc is not None:
            await self._oidc(self.oidc, conn, receive, send)
            return
        if http and "token" in conn.query_params:
            await self._login(conn, receive, send)
            return
        if self._authenticated(conn):
            # token mode: whoever holds the token is the deployment's one person
            await self._admit(TOKEN_PERSON, conn, receive, send)
            return
        await self._refuse(conn, receive, send, 401, "Authentication required: open the login URL webhost printed.")

    def _needs_hop(self, conn: HTTPConnection) -> bool:
        """The authorization server's redirect back is a cross-site navigation, which carries no
        SameSite=Strict session cookie: without credentials, the callback first re-opens itself."""
        if self.proxy is not None or "authorization" in conn.headers or COOKIE_NAME in conn.cookies:
            return False
        return HOP not in conn.query_params

    async def _hop(self, conn: HTTPConnection, receive: Receive, send: Send) -> None:
        query = conn.url.query
        target = f"{SERVER_CALLBACK_PATH}?{query}&{HOP}=1" if query else f"{SERVER_CALLBACK_PATH}?{HOP}=1"
        body = page_html(200, "Finishing sign-in", "Finishing the sign-in to the server…", next_url=target)
        await HTMLResponse(body, headers=PRIVATE)(conn.scope, receive, send)

    def _sign_out_from_our_page(self, conn: HTTPConnection) -> bool:
        """The page's sign-out form: the page's `no-referrer` policy makes the browser send `Origin: null`
        with it, so the browser's own Sec-Fetch-Site says where it came from instead."""
        return (
            self.oidc is not None
            and conn.scope.get("path") == SIGN_OUT_PATH
            and conn.headers.get("origin") == "null"
            and conn.headers.get("sec-fetch-site") == "same-origin"
        )

    async def _admit(
        self, person: Person, conn: HTTPConnection, receive: Receive, send: Send, *, sign_in: str | None = None
    ) -> None:
        attach(conn.scope, person, sign_in=sign_in)
        if self.seen is not None:
            self.seen(person)
        await self.app(conn.scope, receive, send)

    async def _proxy(self, proxy: TrustedProxies, conn: HTTPConnection, receive: Receive, send: Send) -> None:
        repeated = proxy.repeated_header(conn.headers)
        if repeated is not None:
            await self._refuse(
                conn,
                receive,
                send,
                400,
                f"The request carries the {repeated} header more than once; the sign-in proxy must set it exactly "
                "once, replacing any copy the client sent.",
            )
            return
        if proxy.carries_person(conn.headers):
            if not proxy.trusted(conn.scope.get("client")):
                await self._refuse(
                    conn,
                    receive,
                    send,
                    403,
                    "The sign-in header is only accepted from the trusted "
                    "reverse proxy (trustedProxies); this request did not come through it.",
                )
                return
            person = proxy.person(conn.headers)
            if person is not None:
                await self._admit(person, conn, receive, send)
                return
        if self.admin_token and self._bearer_ok(conn):
            await self._admit(TOKEN_PERSON, conn, receive, send)
            return
        await self._refuse(
            conn,
            receive,
            send,
            401,
            "Not signed in: webhost is reached through its sign-in proxy, which names the person in a header.",
        )

    async def _oidc(self, oidc: OidcSignIn, conn: HTTPConnection, receive: Receive, send: Send) -> None:
        authorization = conn.headers.get("authorization", "")
        if authorization[:7].lower() == "bearer ":  # a script with an access token from the provider
            try:
                person = await oidc.person_for_access_token(authorization[7:].strip())
            except OidcError as exc:
                await self._refuse(conn, receive, send, exc.status, exc.message)
                return
            if person is None:
                await self._refuse(
                    conn,
                    receive,
                    send,
                    401,
                    "This access token is not accepted: expired, revoked, not issued by the identity provider, "
                    "or issued to another client than webhost's (its audience is not webhost's clientId).",
                )
                return
            await self._admit(person, conn, receive, send)
            return
        cookie = conn.cookies.get(COOKIE_NAME)
        if cookie is not None:
            try:
                person = await oidc.person(cookie)
            except Tampered:
                await self._refuse(
                    conn,
                    receive,
                    send,
                    401,
                    "Your session cookie is not one this webhost signed (it was "
                    "changed or comes from another deployment). Sign in again.",
                    clear=oidc.clear_session_cookie(),
                )
                return
            if person is not None:
                await self._admit(person, conn, receive, send, sign_in=sign_in_key(cookie))
                return
        navigation = (
            conn.scope["type"] == "http"
            and conn.scope.get("method") == "GET"
            and "text/html" in conn.headers.get("accept", "")
        )
        if navigation:
            query = conn.url.query
            next_path = same_origin_path(conn.scope.get("path", "/")) + (f"?{query}" if query else "")
            response = await oidc.begin(self.policy.origin_for(conn.headers.get("host")), next_path)
            if cookie is not None:
                response.headers.append("set-cookie", oidc.clear_session_cookie())
            await response(conn.scope, receive, send)
            return
        message = (
            "Your session has ended (signed out or expired). Sign in again."
            if cookie is not None
            else "Not signed in: open webhost in a browser to sign in."
        )
        await self._refuse(conn, receive, send, 401, message)

    def _bearer_ok(self, conn: HTTPConnection) -> bool:
        authorization = conn.headers.get("authorization", "")
        return authorization[:7].lower() == "bearer " and self.policy.token_ok(authorization[7:].strip())

    def _authenticated(self, conn: HTTPConnection) -> bool:
        if self._bearer_ok(conn):
            return True
        cookie = conn.cookies.get(COOKIE_NAME)
        return cookie is not None and self.policy.cookie_ok(cookie)

    async def _login(self, conn: HTTPConnection, receive: Receive, send: Send) -> None:
        if not self.policy.token_ok(conn.query_params["token"]):
            await self._refuse(conn, receive, send, 401, "Invalid token.")
            return
        rest = [(k, v) for k, v in conn.query_params.multi_items() if k != "token"]
        location = same_origin_path(conn.scope.get("path", "/")) + (f"?{urlencode(rest)}" if rest else "")
        headers = {**PRIVATE, "location": location, "set-cookie": self.policy.session_cookie()}
        await Response(status_code=303, headers=headers)(conn.scope, receive, send)

    async def _refuse(
        self, conn: HTTPConnection, receive: Receive, send: Send, status: int, message: str, *, clear: str | None = None
    ) -> None:
        if conn.scope["type"] == "websocket":
            # Closing before accept makes the server answer the handshake with 403.
            await WebSocketClose(1008, message[:120])(conn.scope, receive, send)
            return
        headers = {"cache-control": "no-store"}
        if status == 401:
            headers["www-authenticate"] = 'Bearer realm="webhost"'
        if clear is not None:
            headers["set-cookie"] = clear
        response: Response
        if "text/html" in conn.headers.get("accept", ""):
            token_mode = self.oidc is None and self.proxy is None
            body = page_html(
                status,
                _TITLES.get(status, "webhost"),
                message,
                sign_in=self.oidc is not None and status == 401,
                token_form=token_mode and status == 401,
            )
            response = HTMLResponse(body, status_code=status, headers=headers)
        else:
            response = JSONResponse({"error": message, "status": status}, status_code=status, headers=headers)
        await response(conn.scope, receive, send)


_TITLES = {400: "Bad request", 401: "Not signed in", 403: "Refused", 421: "Wrong address"}


def describe(policy: AccessPolicy) -> dict[str, Any]:
    """What the settings page may show about access (never the token)."""
    return {"origins": sorted(policy.origins)}
