"""The layer around the host app: the page's security headers."""

from __future__ import annotations

from starlette.types import ASGIApp, Message, Receive, Scope, Send

from webhost.settings import Settings


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
