"""The layers around the host app: the page's security headers, and secrets masked in every WebSocket frame."""

from __future__ import annotations

from collections.abc import Callable

from starlette.types import ASGIApp, Message, Receive, Scope, Send

from webhost.redact import Redactor
from webhost.settings import Settings
from webhost.ws import REDACT_SCOPE_KEY


def page_csp(settings: Settings) -> str:
    """The host page's own policy: no inline script, frames only from the sandbox origins."""
    port = settings.sandbox_port_for_browsers()
    default_port = {"http": 80, "https": 443}.get(settings.sandbox_scheme)
    suffix = "" if port == default_port else f":{port}"
    sandbox = f"{settings.sandbox_scheme}://*.{settings.sandbox_domain}{suffix}"
    return "; ".join(
        [
            "default-src 'self'",
            "script-src 'self'",
            "style-src 'self'",
            "img-src 'self' data: blob:",
            "media-src 'self' data: blob:",
            "connect-src 'self'",
            f"frame-src {sandbox}",
            "object-src 'none'",
            "base-uri 'none'",
            "form-action 'self'",
            "frame-ancestors 'none'",
        ]
    )


class RedactWebSocket:
    """The last step before the browser: every WebSocket frame webhost sends has the configuration's
    secret values masked (`webhost.redact`), whichever part of webhost built it (server state, errors,
    activity entries, logs, results)."""

    def __init__(
        self, app: ASGIApp, redactor: Redactor, person_redactor: Callable[[Scope], Redactor] = lambda scope: Redactor()
    ) -> None:
        self.app = app
        self.redactor = redactor
        self.person_redactor = person_redactor  # the input values of the socket's person, as they are now

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "websocket":
            await self.app(scope, receive, send)
            return

        def redact_value(value: object) -> object:
            masked = self.redactor.value(value) if self.redactor else value
            person = self.person_redactor(scope)
            return person.value(masked) if person else masked

        scope = {**scope, REDACT_SCOPE_KEY: redact_value}  # for a response in parts (webhost/ws.py)

        async def send_redacted(message: Message) -> None:
            if message["type"] == "websocket.send" and isinstance(message.get("text"), str):
                text = self.redactor.json_text(message["text"]) if self.redactor else message["text"]
                person = self.person_redactor(scope)
                message = {**message, "text": person.json_text(text) if person else text}
            await send(message)

        await self.app(scope, receive, send_redacted)


class SecurityHeaders:
    """Adds the page policy and anti-framing headers to every HTTP response of the host app (the
    gate's refusals and sign-in pages too)."""

    def __init__(self, app: ASGIApp, csp: str) -> None:
        self.app = app
        self.headers = [
            (b"content-security-policy", csp.encode()),
            (b"x-frame-options", b"DENY"),
            (b"x-content-type-options", b"nosniff"),
            (b"referrer-policy", b"strict-origin"),
            (b"cross-origin-opener-policy", b"same-origin"),
        ]

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return

        async def send_with_headers(message: Message) -> None:
            if message["type"] == "http.response.start":  # a header the response set itself wins
                present = {name.lower() for name, _ in message.get("headers", [])}
                extra = [(name, value) for name, value in self.headers if name not in present]
                message = {**message, "headers": [*message.get("headers", []), *extra]}
            await send(message)

        await self.app(scope, receive, send_with_headers)
