"""The MCP authorization flow for one person and one remote server, on the SDK's `OAuthClientProvider`.

The SDK's provider is an `httpx2.Auth`: it runs inside the HTTP request that got the 401 (discovery of
RFC 9728 protected resource metadata with its well-known fallbacks, RFC 8414 / OpenID metadata, client
identity in the spec's order: pre-registered, Client ID Metadata Document, dynamic registration; PKCE
S256; `resource`; scopes from the challenge or the metadata; step-up on `insufficient_scope`; refresh).
webhost keeps that flow whole and supplies what a server-side host must:

- `redirect_handler` never opens a browser here: it publishes the authorization URL to the person's tabs
  (the connection shows `auth-required`), and `callback_handler` waits for `/oauth/callback` to deliver
  the code for that one-time state (`sign_ins.py`). The request that is waiting is off the clock.
- A fast path: a request with a valid token is sent without the SDK's lock (the SDK holds its lock for
  the whole request, which would serialise every call). Only the slow path (no token, an expiring one,
  a 401 or an `insufficient_scope`) takes the lock, which is one per (person, server) for the host, so
  concurrent calls and tabs refresh a rotating refresh token once.
- Tokens, their expiry, the discovered metadata and the client registration persist in the person's
  sealed rows (`storage/oauth_tokens.py`), so a restart refreshes instead of asking again. The SDK
  stores a refreshed token before the request that needed it is sent.
- Several replicas on one database each hold the person's tokens in memory, and a rotating refresh
  token can be spent once: before refreshing (or asking the person) the slow path reads the stored row,
  and tokens another replica stored since are taken instead of spending a refresh token that is already
  used (which an authorization server may answer by revoking the whole grant). A refresh refused
  because another replica rotated the token in the meantime takes the stored one too, rather than
  forgetting it. Two replicas refreshing in the same instant can still both try; one then asks again.

The rows, locks and expiry are `oauth_store.py`'s, webhost's own client-credentials providers
`oauth_machine.py`'s, the reasons in words `oauth_failures.py`'s. The SDK provider's private steps are
reached only through the seam (`sdk/oauth.py: ProviderHooks`; sdk_workarounds.py, items 8 to 11).
"""

from __future__ import annotations

import logging
from collections.abc import AsyncGenerator, Callable
from dataclasses import dataclass
from typing import Protocol
from urllib.parse import parse_qs, urlsplit

import httpx2
from mcp.client.auth import OAuthClientProvider, OAuthFlowError
from mcp.client.auth.utils import extract_field_from_www_auth, extract_scope_from_www_auth
from mcp.shared.auth import (
    AuthorizationCodeResult,
    OAuthClientInformationFull,
    OAuthClientMetadata,
    OAuthMetadata,
    OAuthToken,
    ProtectedResourceMetadata,
)
from pydantic import ValidationError

from webhost.auth.gate import CLIENT_METADATA_PATH, SERVER_CALLBACK_PATH
from webhost.config import ServerConfig

from .oauth_assertion import IdentityAssertionOAuth
from .oauth_failures import NOT_OAUTH, describe_oauth_failure
from .oauth_machine import ClientCredentialsOAuth, PrivateKeyJWTOAuth, machine_oauth
from .oauth_store import EXPIRY_MARGIN_S, GrantStore, MemoryGrants, OAuthDeps, RefreshLocks, TokenRows, expiry_after
from .sdk import ProviderHooks, keep_time, share_lock
from .sign_ins import PendingSignIn

__all__ = [
    "CALLBACK_PATH",
    "CLIENT_METADATA_PATH",
    "EXPIRY_MARGIN_S",
    "NOT_OAUTH",
    "ClientCredentialsOAuth",
    "GrantStore",
    "IdentityAssertionOAuth",
    "MemoryGrants",
    "OAuthBinding",
    "OAuthDeps",
    "PersonOAuth",
    "PrivateKeyJWTOAuth",
    "RefreshLocks",
    "ServerOAuth",
    "SignInView",
    "client_metadata_document",
    "default_client_metadata_url",
    "describe_oauth_failure",
    "expiry_after",
    "machine_oauth",
]

logger = logging.getLogger(__name__)

CALLBACK_PATH = SERVER_CALLBACK_PATH


class SignInView(Protocol):
    """The connection's side: show that the person must sign in (with the URL), and that they did."""

    def needs_sign_in(self, url: str, reason: str) -> None: ...
    def sign_in_noticed(self, reason: str) -> None: ...
    def sign_in_over(self) -> None: ...


@dataclass(frozen=True)
class OAuthBinding:
    """One person's side of the flow: whose tokens, and the callback URL on the page's public origin."""

    deps: OAuthDeps
    person_id: str
    redirect_uri: Callable[[], str]


def default_client_metadata_url(redirect_uri: str) -> str | None:
    """webhost's own Client ID Metadata Document beside its callback, on an https public origin (an authorization
    server must be able to fetch it, and the SDK takes only https URLs); None on http (loopback, development)."""
    parts = urlsplit(redirect_uri)
    if parts.scheme != "https" or not parts.netloc:
        return None
    return f"https://{parts.netloc}{CLIENT_METADATA_PATH}"


def client_metadata_document(origin: str) -> dict[str, object]:
    """The Client ID Metadata Document served at `origin` + CLIENT_METADATA_PATH (SEP-991): its `client_id` is
    its own URL, and it names the callback on the same origin. A public client (PKCE, no secret)."""
    origin = origin.rstrip("/")
    https = origin.startswith("https://")
    return {
        "client_id": origin + CLIENT_METADATA_PATH,
        "client_name": "webhost",
        "client_uri": origin + "/",
        "redirect_uris": [origin + CALLBACK_PATH],
        "grant_types": ["authorization_code", "refresh_token"],
        "response_types": ["code"],
        "token_endpoint_auth_method": "none",
        "application_type": "web" if https else "native",
    }


class PersonOAuth(ProviderHooks, OAuthClientProvider):
    """The SDK's provider for one (person, server), with webhost's fast path, persistence and reasons."""

    def __init__(
        self,
        config: ServerConfig,
        person_id: str,
        redirect_uri: str,
        deps: OAuthDeps,
        view: SignInView,
    ) -> None:
        assert config.url is not None
        settings = config.oauth
        https = redirect_uri.startswith("https://")
        metadata = OAuthClientMetadata(
            client_name=settings.client_name if settings else "webhost",
            redirect_uris=[redirect_uri],  # type: ignore[list-item]
            grant_types=["authorization_code", "refresh_token"],
            response_types=["code"],
            scope=" ".join(settings.scopes) if settings and settings.scopes else None,
            token_endpoint_auth_method="client_secret_basic"
            if settings and settings.client_id and settings.client_secret
            else "none",
            application_type="web" if https else "native",
        )
        self._store = TokenRows(deps.grants, person_id, config.name)
        # A Client ID Metadata Document where the authorization server supports them (the SDK asks its
        # metadata), else dynamic registration: the entry's own, else webhost's (on an https public origin).
        cimd = (settings.client_metadata_url if settings else None) or default_client_metadata_url(redirect_uri)
        super().__init__(
            config.url,
            metadata,
            self._store,
            redirect_handler=self._publish,
            callback_handler=self._await_code,
            client_metadata_url=cimd,
        )
        self._store.provider = self
        keep_time(self, deps.clock, lambda expires_in: expiry_after(expires_in, deps.clock))
        share_lock(self, deps.locks.get(person_id, config.name))
        self.person_id = person_id
        self.server = config.name
        self.redirect_uri = redirect_uri
        self.preregistered = (
            OAuthClientInformationFull(
                client_id=settings.client_id,
                client_secret=settings.client_secret,
                redirect_uris=[redirect_uri],  # type: ignore[list-item]
                token_endpoint_auth_method="client_secret_basic" if settings.client_secret else "none",
                grant_types=["authorization_code", "refresh_token"],
            )
            if settings and settings.client_id
            else None
        )
        self._sign_ins = deps.sign_ins
        self._view = view
        self.reason = f"{config.name} asks you to sign in"
        self.failure: BaseException | None = None  # why the last flow failed (read by the connection)
        self._pending: PendingSignIn | None = None
        self._answered: PendingSignIn | None = None  # its code was handed over: the callback page waits on the trade
        self.refreshes = 0  # refresh requests sent (the tests count them at the authorization server too)
        self._spent: str | None = None  # the refresh token the last refresh request carried
        # Until the server first answers 401 (or 403 for scope), a person without tokens sends requests
        # as they are: most servers behind an http entry never ask for a sign-in, and the slow path reads
        # the database under a lock. A 401 then takes the slow path, which also finds tokens another
        # replica stored. An entry with an `oauth` section asks from the start.
        self._asked = settings is not None

    # -- the SDK's two hooks -------------------------------------------------------------------

    async def _publish(self, url: str) -> None:
        state = (parse_qs(urlsplit(url).query).get("state") or [""])[0]
        self._pending = self._sign_ins.open(self.person_id, self.server, url, state, self._view.sign_in_noticed)
        self._view.needs_sign_in(url, self.reason)

    async def _await_code(self) -> AuthorizationCodeResult:
        assert self._pending is not None
        pending = self._pending
        try:
            answer = await self._sign_ins.wait(pending)
        finally:
            self._pending = None
            self._view.sign_in_over()
        self._answered = pending
        return AuthorizationCodeResult(code=answer.code, state=answer.state, iss=answer.iss)

    def _exchange_over(self, failure: BaseException | None) -> None:
        """Tell the callback page how the code it handed over was traded (the SDK checks `iss`, then trades)."""
        answered, self._answered = self._answered, None
        if answered is not None:
            reason = None if failure is None else describe_oauth_failure(failure, self) or "the sign-in failed"
            answered.exchanged(reason)

    # -- persistence the SDK leaves out ---------------------------------------------------------

    async def load_stored(self) -> None:
        await super().load_stored()
        if self.preregistered is not None:
            self.context.client_info = self.preregistered
        elif self.context.client_info is not None and [
            str(u) for u in self.context.client_info.redirect_uris or []
        ] != [self.redirect_uri]:
            self.context.client_info = None  # registered for another callback URL: register again
        extras = await self._store.extras()
        if self.context.current_tokens is not None:
            expires = extras.get("expiresAt")
            self.context.token_expiry_time = float(expires) if isinstance(expires, int | float) else None
        try:
            if extras.get("oauthMetadata"):
                self.context.oauth_metadata = OAuthMetadata.model_validate(extras["oauthMetadata"])
            if extras.get("resourceMetadata"):
                self.context.protected_resource_metadata = ProtectedResourceMetadata.model_validate(
                    extras["resourceMetadata"]
                )
            if isinstance(extras.get("authServer"), str):
                self.context.auth_server_url = extras["authServer"]
        except ValidationError:
            self.context.oauth_metadata = None

    async def refresh_request(self) -> httpx2.Request:
        self.refreshes += 1
        tokens = self.context.current_tokens
        self._spent = tokens.refresh_token if tokens else None
        return await super().refresh_request()

    async def refresh_answered(self, response: httpx2.Response) -> bool:
        spent = self._spent
        ok = await super().refresh_answered(response)
        if not ok:
            stored, expires = await self._store.stored()
            if stored is not None and stored.refresh_token and stored.refresh_token != spent:
                # Refused because another replica rotated it meanwhile: its tokens are ours too.
                self._take(stored, expires)
                return True
            self.reason = "the sign-in to this server ended (the refresh token was refused); sign in again"
            await self._store.grants.forget(self.person_id, self.server)
        return ok

    async def _take_stored(self) -> None:
        """Take the stored tokens when another replica stored other ones than this one holds (it refreshed,
        signed in or signed out): see the module's note on replicas."""
        stored, expires = await self._store.stored()
        current = self.context.current_tokens
        if stored is None and current is None:
            return
        if stored is not None and current is not None and stored.model_dump() == current.model_dump():
            return
        self._take(stored, expires)

    def _take(self, tokens: OAuthToken | None, expires: float | None) -> None:
        self.context.current_tokens = tokens
        self.context.token_expiry_time = expires if tokens is not None else None

    # -- the flow ---------------------------------------------------------------------------------

    async def run_flow(self, request: httpx2.Request) -> AsyncGenerator[httpx2.Request, httpx2.Response]:
        if not self.loaded:
            async with self.context.lock:
                if not self.loaded:
                    await self.load_stored()
        refused: httpx2.Response | None = None  # the answer to `request` as sent without a token
        if self.context.current_tokens is None and not self._asked:
            refused = yield request
            if refused.status_code != 401 and not _insufficient_scope(refused):
                return
            self._asked = True
        if self.context.is_token_valid():
            tokens = self.context.current_tokens
            assert tokens is not None
            self.add_bearer(request)
            response = yield request
            insufficient = _insufficient_scope(response)
            if response.status_code != 401 and not insufficient:
                return
            if insufficient:
                wanted = extract_scope_from_www_auth(response)
                self.reason = "this server needs more permissions" + (f" (scope {wanted})" if wanted else "")
            elif self.context.current_tokens is tokens:
                self.reason = "the server no longer accepts your sign-in; sign in again"
                if self.context.can_refresh_token():
                    self.context.token_expiry_time = 0.0  # refused before its time: refresh before asking the person
        elif self.context.current_tokens is None:
            self.reason = f"{self.server} asks you to sign in"
        async with self.context.lock:  # the slow path: first what other replicas stored (the SDK re-checks)
            await self._take_stored()
            if self.context.current_tokens is None:
                self.reason = f"{self.server} asks you to sign in"
        flow = super().run_flow(request)
        try:
            outgoing = await flow.__anext__()
            if refused is not None and outgoing is request and self.context.current_tokens is None:
                # The SDK sends the request as it was first: its answer is the one just had.
                outgoing = await flow.asend(refused)
            while True:
                try:
                    response = yield outgoing
                except GeneratorExit:
                    if outgoing is not request:  # httpx could not send one of the flow's own requests
                        self.failure = OAuthFlowError(
                            f"could not reach {outgoing.url.scheme}://{outgoing.url.netloc.decode()}"
                        )
                    raise
                outgoing = await flow.asend(response)
                if outgoing is request and self._answered is not None:  # tokens stored: the request goes again
                    self._exchange_over(None)
        except StopAsyncIteration:
            return
        except Exception as exc:
            # The transport swallows what its POST raised (it only ends); the connection reads it here.
            self.failure = exc
            raise
        finally:
            self._exchange_over(self.failure or OAuthFlowError("the sign-in did not complete"))
            await flow.aclose()

    # -- signing out ------------------------------------------------------------------------------

    async def sign_out(self) -> str | None:
        """Forget this person's tokens for the server and revoke them where the server supports it
        (RFC 7009). Returns a note for the page when revocation did not happen."""
        async with self.context.lock:
            if not self.loaded:
                await self.load_stored()
            tokens = self.context.current_tokens
            metadata = self.context.oauth_metadata
            self.context.clear_tokens()
            await self._store.grants.forget(self.person_id, self.server)
            self._sign_ins.cancel(self.person_id, self.server, "you signed out of this server")
            self.reason = f"signed out of {self.server}"
            if tokens is None:
                return None
            if metadata is None or metadata.revocation_endpoint is None:
                return "the authorization server does not support revocation: the tokens were forgotten here only"
            endpoint = str(metadata.revocation_endpoint)
            failures = 0
            async with httpx2.AsyncClient(timeout=10) as http:
                for token, hint in ((tokens.refresh_token, "refresh_token"), (tokens.access_token, "access_token")):
                    if not token:
                        continue
                    data, headers = self.context.prepare_token_auth(
                        {"token": token, "token_type_hint": hint, "client_id": self._client_id()},
                        {"Content-Type": "application/x-www-form-urlencoded"},
                    )
                    try:
                        answer = await http.post(endpoint, data=data, headers=headers)
                        # RFC 7009 §2.2.1: a type it cannot revoke (a self-contained JWT) is not a failure.
                        failures += answer.status_code != 200 and not _unsupported_type(answer)
                    except httpx2.HTTPError:
                        failures += 1
            return "the authorization server did not confirm the revocation" if failures else None

    def _client_id(self) -> str:
        info = self.context.client_info
        return info.client_id if info is not None else ""


ServerOAuth = PersonOAuth | ClientCredentialsOAuth | PrivateKeyJWTOAuth | IdentityAssertionOAuth


def _unsupported_type(response: httpx2.Response) -> bool:
    try:
        return response.status_code == 400 and response.json().get("error") == "unsupported_token_type"
    except ValueError:
        return False


def _insufficient_scope(response: httpx2.Response) -> bool:
    return response.status_code == 403 and extract_field_from_www_auth(response, "error") == "insufficient_scope"
