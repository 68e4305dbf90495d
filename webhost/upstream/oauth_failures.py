"""Why a sign-in to a remote server failed, in words for the page (or None: it was not an OAuth failure)."""

from __future__ import annotations

from collections.abc import AsyncGenerator, Callable

import httpx2
from mcp.client.auth import OAuthClientProvider, OAuthFlowError, OAuthRegistrationError, OAuthTokenError

from .sign_ins import SignInFailed


def describe_oauth_failure(exc: BaseException, provider: OAuthClientProvider | None) -> str | None:
    """The reason in words when a connection failed in its sign-in, else None (not an OAuth failure)."""
    leaf = exc
    while isinstance(leaf, BaseExceptionGroup) and len(leaf.exceptions) == 1:
        leaf = leaf.exceptions[0]
    seen: set[int] = set()
    cause: BaseException | None = leaf
    while cause is not None and id(cause) not in seen:
        seen.add(id(cause))
        found = _reason_of(cause, provider)
        if found is not None:
            return found
        cause = cause.__cause__ or cause.__context__
    return None


async def keeping_failure(
    flow: AsyncGenerator[httpx2.Request, httpx2.Response], keep: Callable[[BaseException], None]
) -> AsyncGenerator[httpx2.Request, httpx2.Response]:
    """An httpx auth flow relayed as it is, with the exception that ends it kept (`keep`) before it is raised: the
    transport only ends on it, and the connection reads why from what was kept."""
    try:
        outgoing = await flow.__anext__()
        while True:
            response = yield outgoing
            outgoing = await flow.asend(response)
    except StopAsyncIteration:
        return
    except Exception as exc:
        keep(exc)
        raise
    finally:
        await flow.aclose()


NOT_OAUTH = "answered HTTP 401 and offers no sign-in (no OAuth metadata): check the entry's headers"


def _reason_of(exc: BaseException, provider: OAuthClientProvider | None) -> str | None:
    no_metadata = provider is not None and provider.context.oauth_metadata is None
    if isinstance(exc, SignInFailed):
        return exc.message
    if isinstance(exc, OAuthRegistrationError):
        if no_metadata and provider is not None and provider.context.protected_resource_metadata is None:
            return NOT_OAUTH  # neither resource nor authorization metadata: not an OAuth server, a wrong key
        if no_metadata:
            return (
                "the server's authorization server publishes no metadata (RFC 8414 or OpenID discovery) "
                f"and refused registration at the fallback endpoint: {_short(str(exc))}"
            )
        return f"the authorization server refused to register webhost as a client: {_short(str(exc))}"
    if isinstance(exc, OAuthTokenError):
        return f"the authorization server's token endpoint refused: {_short(str(exc))}"
    if isinstance(exc, OAuthFlowError):
        text = str(exc)
        if text.startswith("could not reach"):
            return f"the sign-in failed: webhost {text} (the authorization server)"
        if "metadata" in text.lower():
            return f"no usable authorization metadata: {_short(text)}"
        return f"the sign-in failed: {_short(text)}"
    return None


def _short(text: str, limit: int = 300) -> str:
    text = " ".join(text.split())
    return text if len(text) <= limit else text[:limit] + "…"
