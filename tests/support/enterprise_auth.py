"""Enterprise-managed authorization (SEP-990) for the tests: an identity provider that exchanges an ID token for an
ID-JAG (RFC 8693), an MCP authorization server that takes the ID-JAG (RFC 7523 jwt-bearer) from a confidential
client, and an MCP server (the SDK's, with its server-side auth) accepting that server's tokens. Real HTTP on
loopback, in the test's event loop (tests/support/asgi_server.py). The grants are opaque strings, not JWTs: the
protocol's steps and parameters are what is under test, and each side checks every parameter it is sent."""

from __future__ import annotations

import base64
import secrets
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from typing import Any

from mcp.server import MCPServer
from mcp.server.auth.provider import AccessToken
from mcp.server.auth.settings import AuthSettings
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse
from starlette.routing import Route

from tests.support.asgi_server import serving
from tests.support.process import free_port

TOKEN_EXCHANGE = "urn:ietf:params:oauth:grant-type:token-exchange"
JWT_BEARER = "urn:ietf:params:oauth:grant-type:jwt-bearer"
ID_TOKEN_TYPE = "urn:ietf:params:oauth:token-type:id_token"
ID_JAG_TYPE = "urn:ietf:params:oauth:token-type:id-jag"
CLIENT_ID, CLIENT_SECRET = "webhost-enterprise", "s3cret-enterprise"
IDP_CLIENT_ID = "webhost-at-the-idp"
ID_TOKEN = "id-token-of-ada"


@dataclass
class Enterprise:
    """The three parties and what each was asked (`exchanges`, `grants`: the form bodies, as received)."""

    idp_token_endpoint: str = ""
    issuer: str = ""
    mcp_url: str = ""
    exchanges: list[dict[str, str]] = field(default_factory=list)
    grants: list[dict[str, str]] = field(default_factory=list)
    refused: list[str] = field(default_factory=list)
    jags: dict[str, str] = field(default_factory=dict)  # ID-JAG → the subject it was issued for
    tokens: dict[str, str] = field(default_factory=dict)  # access token → subject


def _basic(request: Request) -> tuple[str, str] | None:
    header = request.headers.get("authorization", "")
    if not header.startswith("Basic "):
        return None
    user, _, password = base64.b64decode(header[6:]).decode().partition(":")
    return user, password


def _idp_and_as(state: Enterprise) -> Starlette:
    async def idp_token(request: Request) -> JSONResponse:
        form = {k: str(v) for k, v in (await request.form()).items()}
        state.exchanges.append(form)
        wanted = {
            "grant_type": TOKEN_EXCHANGE,
            "subject_token": ID_TOKEN,
            "subject_token_type": ID_TOKEN_TYPE,
            "requested_token_type": ID_JAG_TYPE,
            "audience": state.issuer,
            "resource": state.mcp_url,
        }
        wrong = [key for key, value in wanted.items() if form.get(key) != value]
        if form.get("client_id") != IDP_CLIENT_ID:
            wrong.append("client_id")
        if wrong:
            state.refused.append("exchange: " + ", ".join(wrong))
            return JSONResponse({"error": "invalid_request", "error_description": f"bad {wrong}"}, status_code=400)
        jag = "jag-" + secrets.token_urlsafe(8)
        state.jags[jag] = "ada"
        return JSONResponse({"access_token": jag, "issued_token_type": ID_JAG_TYPE, "token_type": "N_A"})

    async def metadata(request: Request) -> JSONResponse:
        return JSONResponse(
            {
                "issuer": state.issuer,
                "authorization_endpoint": f"{state.issuer}/authorize",
                "token_endpoint": f"{state.issuer}/token",
                "response_types_supported": ["code"],
                "grant_types_supported": [JWT_BEARER],
                "token_endpoint_auth_methods_supported": ["client_secret_basic"],
            }
        )

    async def as_token(request: Request) -> JSONResponse:
        form = {k: str(v) for k, v in (await request.form()).items()}
        state.grants.append(form)
        jag = form.get("assertion", "")
        if (
            _basic(request) != (CLIENT_ID, CLIENT_SECRET)
            or form.get("grant_type") != JWT_BEARER
            or jag not in state.jags
            or form.get("resource") != state.mcp_url
        ):
            state.refused.append("jwt-bearer")
            return JSONResponse({"error": "invalid_grant"}, status_code=400)
        token = "at-" + secrets.token_urlsafe(8)
        state.tokens[token] = state.jags.pop(jag)  # an ID-JAG is spent once
        return JSONResponse({"access_token": token, "token_type": "Bearer", "expires_in": 3600})

    return Starlette(
        routes=[
            Route("/idp/token", idp_token, methods=["POST"]),
            Route("/.well-known/oauth-authorization-server", metadata),
            Route("/token", as_token, methods=["POST"]),
        ]
    )


def _mcp_server(state: Enterprise) -> MCPServer:
    class Verifier:
        async def verify_token(self, token: str) -> AccessToken | None:
            subject = state.tokens.get(token)
            if subject is None:
                return None
            return AccessToken(token=token, client_id=CLIENT_ID, scopes=[], subject=subject, resource=state.mcp_url)

    mcp = MCPServer(
        "enterprise",
        token_verifier=Verifier(),
        auth=AuthSettings(issuer_url=state.issuer, resource_server_url=state.mcp_url),  # type: ignore[arg-type]
    )

    @mcp.tool(description="Who the token says you are.")
    def whoami() -> str:
        from mcp.server.auth.middleware.auth_context import get_access_token

        token = get_access_token()
        return token.subject or "" if token else "nobody"

    return mcp


@asynccontextmanager
async def enterprise() -> AsyncIterator[Enterprise]:
    """The identity provider and authorization server on one port, the MCP server on another."""
    as_port, mcp_port = free_port(), free_port()
    state = Enterprise(
        idp_token_endpoint=f"http://127.0.0.1:{as_port}/idp/token",
        issuer=f"http://127.0.0.1:{as_port}",
        mcp_url=f"http://127.0.0.1:{mcp_port}/mcp",
    )
    app: Any = _mcp_server(state).streamable_http_app()
    async with serving(_idp_and_as(state), as_port), serving(app, mcp_port):
        yield state


def entry(state: Enterprise, *, subject_token: str | None = ID_TOKEN) -> dict[str, Any]:
    """The config entry of the MCP server, with enterprise-managed authorization."""
    idp: dict[str, Any] = {"tokenEndpoint": state.idp_token_endpoint, "clientId": IDP_CLIENT_ID}
    if subject_token is not None:
        idp["subjectToken"] = subject_token
    return {
        "type": "http",
        "url": state.mcp_url,
        "oauth": {
            "grantType": "identity_assertion",
            "clientId": CLIENT_ID,
            "clientSecret": CLIENT_SECRET,
            "issuer": state.issuer,
            "identityProvider": idp,
        },
    }
