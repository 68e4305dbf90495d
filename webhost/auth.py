"""Getting in: Host and Origin checks, token → session cookie, Bearer header; one ASGI gate for HTTP and WebSocket.

Order matters: the Host/Origin check runs first (DNS rebinding and cross-site WebSocket hijacking
are refused before any credential is looked at), then authentication. Only `GET /healthz`
answers without credentials.
"""

from __future__ import annotations

import hashlib
import hmac
import json
from collections.abc import Iterable
from html import escape
from http.cookies import SimpleCookie
from typing import Any
from urllib.parse import parse_qsl, quote, urlencode, urlsplit

from starlette.types import ASGIApp, Receive, Scope, Send

from webhost.people import TOKEN_PERSON, attach

COOKIE_NAME = "webhost_session"
PUBLIC_PATHS = frozenset({"/healthz"})


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

    def session_cookie(self) -> str:
        secure = "; Secure" if self.secure_cookies else ""
        return f"{COOKIE_NAME}={self.cookie_value}; Path=/; HttpOnly; SameSite=Strict{secure}"


def same_origin_path(path: str) -> str:
    """A redirect target on our own origin: `//evil.example/` (or `/\\evil.example/`, which browsers read
    the same way) would be another site, so leading slashes and backslashes collapse to one `/`."""
    return "/" + quote(path.lstrip("/\\"), safe="/!$&'()*+,;=:@-._~%")


def _headers(scope: Scope) -> dict[str, str]:
    return {k.decode("latin-1").lower(): v.decode("latin-1") for k, v in scope.get("headers", [])}


def _cookie(headers: dict[str, str]) -> str | None:
    raw = headers.get("cookie")
    if not raw:
        return None
    jar: SimpleCookie = SimpleCookie()
    try:
        jar.load(raw)
    except Exception:  # a malformed Cookie header is simply no credential
        return None
    morsel = jar.get(COOKIE_NAME)
    return morsel.value if morsel else None


class AuthGate:
    """ASGI middleware enforcing AccessPolicy on every HTTP request and WebSocket handshake."""

    def __init__(self, app: ASGIApp, policy: AccessPolicy) -> None:
        self.app = app
        self.policy = policy

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] not in ("http", "websocket"):
            await self.app(scope, receive, send)
            return
        headers = _headers(scope)
        if not self.policy.host_ok(headers.get("host")):
            await self._refuse(scope, send, 421, "This host name is not served here (Host check).")
            return
        if not self.policy.origin_ok(headers.get("origin")):
            await self._refuse(scope, send, 403, "Cross-origin request refused (Origin check).")
            return
        path = scope.get("path", "")
        if scope["type"] == "http" and path in PUBLIC_PATHS:
            await self.app(scope, receive, send)
            return
        query = dict(parse_qsl(scope.get("query_string", b"").decode("latin-1")))
        if scope["type"] == "http" and "token" in query:
            await self._login(scope, send, query)
            return
        if self._authenticated(headers):
            attach(scope, TOKEN_PERSON)  # token mode: whoever holds the token is the deployment's one person
            await self.app(scope, receive, send)
            return
        await self._refuse(scope, send, 401, "Authentication required: open the login URL webhost printed.")

    def _authenticated(self, headers: dict[str, str]) -> bool:
        authorization = headers.get("authorization", "")
        if authorization[:7].lower() == "bearer " and self.policy.token_ok(authorization[7:].strip()):
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

    async def _refuse(self, scope: Scope, send: Send, status: int, message: str) -> None:
        if scope["type"] == "websocket":
            # Closing before accept makes the server answer the handshake with 403.
            await send({"type": "websocket.close", "code": 1008, "reason": message[:120]})
            return
        wants_html = "text/html" in _headers(scope).get("accept", "")
        if wants_html:
            body = _refusal_page(status, message).encode()
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
        await send({"type": "http.response.start", "status": status, "headers": response_headers})
        await send({"type": "http.response.body", "body": body})


def _refusal_page(status: int, message: str) -> str:

    return (
        "<!doctype html><html lang=en><meta charset=utf-8><title>webhost</title>"
        f"<body><h1>{status}</h1><p>{escape(message)}</p></body></html>"
    )


def describe(policy: AccessPolicy) -> dict[str, Any]:
    """What the settings page may show about access (never the token)."""
    return {"origins": sorted(policy.origins)}
