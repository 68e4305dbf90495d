"""An MCP server protected by the SDK's server-side auth (RFC 9728 metadata, bearer tokens, 401 challenges).

    python tests/servers/protected.py --http PORT --issuer http://localhost:AS_PORT

Streamable HTTP on http://127.0.0.1:PORT/mcp. The SDK's `RequireAuthMiddleware` answers 401 with
`WWW-Authenticate: Bearer ... resource_metadata=...` and serves the protected resource metadata (naming
`--issuer` as its authorization server). Tokens are the authorization server's JWT access tokens
(tests/peers/oauth-as.mjs), checked here against its JWKS: signature, issuer, expiry and audience
(the resource, RFC 8707), and they need scope `mcp:tools`.

Tools: `whoami` (the token's subject and scopes), `echo(text)`, `slow(seconds=0.5)`, and `admin_action`,
which needs scope `mcp:admin` too: without it the HTTP layer answers 403 `insufficient_scope` (step-up).
"""

from __future__ import annotations

import argparse
import json
import time
from typing import Any

import anyio
import httpx
import uvicorn
from authlib.jose import JsonWebKey, JsonWebToken
from authlib.jose.errors import JoseError
from mcp.server import MCPServer
from mcp.server.auth.middleware.auth_context import get_access_token
from mcp.server.auth.provider import AccessToken
from mcp.server.auth.settings import AuthSettings
from starlette.types import ASGIApp, Receive, Scope, Send

JWT = JsonWebToken(["RS256"])


class JwksVerifier:
    """The SDK's `TokenVerifier`: a JWT from the authorization server, for this resource, not expired."""

    def __init__(self, issuer: str, resource: str) -> None:
        self.issuer, self.resource = issuer, resource
        self._keys: Any = None

    def _jwks(self) -> Any:
        if self._keys is None:
            metadata = httpx.get(f"{self.issuer}/.well-known/openid-configuration", timeout=10).json()
            self._keys = JsonWebKey.import_key_set(httpx.get(metadata["jwks_uri"], timeout=10).json())
        return self._keys

    def claims(self, token: str) -> dict[str, Any] | None:
        try:
            claims = JWT.decode(token, self._jwks())
            claims.validate(now=int(time.time()))
        except (JoseError, ValueError):
            return None
        audience = claims.get("aud")
        audiences = audience if isinstance(audience, list) else [audience]
        if claims.get("iss") != self.issuer or self.resource not in audiences:
            return None
        return dict(claims)

    async def verify_token(self, token: str) -> AccessToken | None:
        claims = await anyio.to_thread.run_sync(self.claims, token)
        if claims is None:
            return None
        return AccessToken(
            token=token,
            client_id=str(claims.get("client_id", "")),
            scopes=str(claims.get("scope", "")).split(),
            expires_at=int(claims["exp"]),
            resource=self.resource,
            subject=str(claims.get("sub")),
        )


def build(issuer: str, port: int) -> tuple[MCPServer, JwksVerifier]:
    resource = f"http://127.0.0.1:{port}/mcp"
    verifier = JwksVerifier(issuer, resource)
    mcp = MCPServer(
        "protected",
        title="webhost protected test server",
        version="1.0.0",
        token_verifier=verifier,
        auth=AuthSettings(
            issuer_url=issuer,  # type: ignore[arg-type]
            resource_server_url=resource,  # type: ignore[arg-type]
            required_scopes=["mcp:tools"],
            validate_token_resource=True,
        ),
    )

    @mcp.tool(description="Who the token says you are, and its scopes.")
    def whoami() -> str:
        token = get_access_token()
        return json.dumps({"subject": token.subject if token else None, "scopes": token.scopes if token else []})

    @mcp.tool(description="Return the text unchanged.")
    def echo(text: str) -> str:
        return text

    @mcp.tool(description="Answer after a while.")
    async def slow(seconds: float = 0.5) -> str:
        await anyio.sleep(seconds)
        return f"slept {seconds:g} s"

    @mcp.tool(description="Needs scope mcp:admin (the server asks for it: step-up).")
    def admin_action() -> str:
        token = get_access_token()
        return "admin done with " + " ".join(token.scopes if token else [])

    return mcp, verifier


class StepUp:
    """A tools/call of `admin_action` with a token lacking `mcp:admin` is refused 403 insufficient_scope."""

    def __init__(self, app: ASGIApp, verifier: JwksVerifier, metadata_url: str) -> None:
        self.app, self.verifier, self.metadata_url = app, verifier, metadata_url

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or scope.get("method") != "POST":
            await self.app(scope, receive, send)
            return
        chunks: list[bytes] = []
        more = True
        while more:
            message = await receive()
            chunks.append(message.get("body", b""))
            more = message.get("more_body", False)
        body = b"".join(chunks)
        if b'"admin_action"' in body and self._lacks_admin(scope):
            challenge = (
                f'Bearer error="insufficient_scope", scope="mcp:tools mcp:admin", '
                f'resource_metadata="{self.metadata_url}", error_description="admin_action needs mcp:admin"'
            )
            await send(
                {
                    "type": "http.response.start",
                    "status": 403,
                    "headers": [(b"www-authenticate", challenge.encode()), (b"content-type", b"application/json")],
                }
            )
            await send({"type": "http.response.body", "body": b'{"error": "insufficient_scope"}'})
            return
        replayed = False

        async def replay() -> Any:
            nonlocal replayed
            if not replayed:
                replayed = True
                return {"type": "http.request", "body": body, "more_body": False}
            return await receive()

        await self.app(scope, replay, send)

    def _lacks_admin(self, scope: Scope) -> bool:
        headers = dict(scope.get("headers") or [])
        authorization = headers.get(b"authorization", b"").decode()
        if not authorization.lower().startswith("bearer "):
            return False  # the SDK's middleware answers 401
        claims = self.verifier.claims(authorization[7:].strip())
        return claims is not None and "mcp:admin" not in str(claims.get("scope", "")).split()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--http", type=int, required=True, metavar="PORT")
    parser.add_argument("--issuer", required=True)
    args = parser.parse_args()
    mcp, verifier = build(args.issuer, args.http)
    app = mcp.streamable_http_app(streamable_http_path="/mcp")
    metadata_url = f"http://127.0.0.1:{args.http}/.well-known/oauth-protected-resource/mcp"
    uvicorn.run(StepUp(app, verifier, metadata_url), host="127.0.0.1", port=args.http, log_level="warning")


if __name__ == "__main__":
    main()
