"""The official SDKs' exceptions (and httpx2's, which the anthropic stream lets through) as `ProviderError`s.

One mapping for both wires: `openai` and `anthropic` raise parallel exception classes with the same
shape (`status_code`, `response`, `body`). Where the failure happened matters: a refused or timed-out
request is "unreachable", the same transport error after the answer began is "interrupted".
"""

from __future__ import annotations

import errno
import json
import re
import socket
import ssl
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import httpx2

from webhost.chat.providers.endpoint import Where
from webhost.chat.providers.errors import ErrorKind, ProviderError, retry_after_of, wait_phrase

if TYPE_CHECKING:  # each SDK is imported by its own wire's module, when a model of that wire is first used
    import anthropic
    import openai


@dataclass(frozen=True)
class SdkErrors:
    """One wire's SDK exception classes (`openai` and `anthropic` have parallel ones), handed in by that wire's
    module so that this one imports neither SDK (about 2.7 s of CPU at start-up, with no model configured)."""

    status: type[openai.APIStatusError] | type[anthropic.APIStatusError]
    timeout: type[openai.APITimeoutError] | type[anthropic.APITimeoutError]
    connection: type[openai.APIConnectionError] | type[anthropic.APIConnectionError]
    api: type[openai.APIError] | type[anthropic.APIError]
    base: type[openai.OpenAIError] | type[anthropic.AnthropicError]

    @property
    def handled(self) -> tuple[type[Exception], ...]:
        """Everything `provider_error` turns into a line; anything else is a bug and keeps its traceback.
        (A `data:` line that is not JSON fails in the SDKs' stream decoding as a JSONDecodeError.)"""
        return (self.base, httpx2.HTTPError, json.JSONDecodeError)


# The `error.type` an Anthropic stream's `event: error` carries, for a failure after the answer began.
STREAM_ERROR_KINDS: dict[str, ErrorKind] = {
    "overloaded_error": "server",
    "api_error": "server",
    "rate_limit_error": "rate-limited",
    "authentication_error": "auth",
    "permission_error": "forbidden",
    "not_found_error": "not-found",
    "invalid_request_error": "bad-request",
}
MAX_DETAIL = 240
CONNECT_TIMEOUT = 15.0


def provider_error(
    exc: Exception, where: Where, *, streaming: bool, timeout: float, errors: SdkErrors
) -> ProviderError:
    """`exc` as one line; `streaming`: the answer had begun (the response's headers had arrived); `errors`: the
    wire's SDK classes."""
    url = where.url
    if isinstance(exc, errors.status):
        return _status_error(exc.status_code, dict(exc.response.headers), exc.body, exc.message, where)
    if isinstance(exc, (errors.timeout, httpx2.TimeoutException)):
        if _caused_by(exc, httpx2.ConnectTimeout):
            return ProviderError(
                f"Cannot reach the model endpoint at {url}: no connection within {connect_timeout(timeout):g} s.",
                "unreachable",
            )
        if streaming:
            return ProviderError(f"The model's answer from {url} stopped: no data for {timeout:g} s.", "interrupted")
        return ProviderError(f"The model endpoint at {url} did not answer within {timeout:g} s.", "unreachable")
    if isinstance(exc, (errors.connection, httpx2.TransportError)):
        if streaming:
            return ProviderError(f"The model's answer from {url} was cut off mid-stream ({_cut(exc)}).", "interrupted")
        cause = where.redact(_cause(exc, errors))
        return ProviderError(f"Cannot reach the model endpoint at {url}: {cause}.", "unreachable")
    if isinstance(exc, json.JSONDecodeError):
        return ProviderError(
            f"The model endpoint at {url} sent a stream webhost cannot read (a data line that is not JSON): "
            f"check the baseUrl of model {where.endpoint.id!r}.",
            "other",
        )
    if isinstance(exc, errors.api):  # an error object inside an OpenAI-style stream, or an unreadable answer
        detail = _detail(getattr(exc, "body", None), exc.message, where)
        what = "reported an error mid-answer" if streaming else "gave an answer webhost cannot read"
        return ProviderError(f"The model endpoint at {url} {what}: {detail}", "server" if streaming else "other")
    return ProviderError(f"The model endpoint at {url} failed: {where.redact(_one_line(str(exc)))}", "other")


def _status_error(status: int, headers: dict[str, str], body: object, fallback: str, where: Where) -> ProviderError:
    endpoint = where.endpoint
    at = f"The model endpoint at {where.url}"
    detail = _detail(body, fallback, where)
    content_type = {k.lower(): v for k, v in headers.items()}.get("content-type", "")
    if status < 400:  # an error event inside a 200 stream (Anthropic's `event: error`)
        inner = body.get("error", body) if isinstance(body, dict) else None  # the SDKs differ in what they keep
        error_type = inner.get("type") if isinstance(inner, dict) else None
        in_stream = STREAM_ERROR_KINDS.get(error_type if isinstance(error_type, str) else "", "other")
        return ProviderError(f"{at} reported an error mid-answer: {detail}", in_stream)
    if status == 401:
        fix = f"check the apiKey of model {endpoint.id!r}" if endpoint.api_key else f"set apiKey for {endpoint.id!r}"
        return ProviderError(f"{at} refused the API key (401): {fix}.", "auth", status=status)
    if status == 403:
        return ProviderError(
            f"{at} denied access (403) to model {endpoint.model!r}: {detail}", "forbidden", status=status
        )
    if status == 429:
        wait = retry_after_of(headers)
        when = wait_phrase(wait) if wait is not None else "try again later"
        line = f"{at} is rate-limiting requests (429); {when}."
        return ProviderError(line, "rate-limited", status=status, retry_after=wait)
    if "html" in content_type and status < 500:
        return ProviderError(_web_page(where, status), "bad-url", status=status)
    if status == 404:
        return ProviderError(
            f"{at} answered 404 for model {endpoint.model!r}: the model name or the baseUrl path may be wrong "
            f"({detail.rstrip('.')}).",
            "not-found",
            status=status,
        )
    if status >= 500:
        wait = retry_after_of(headers)
        when = wait_phrase(wait) if wait is not None else "try again"
        what = "is overloaded" if status == 529 else f"failed ({status})"
        return ProviderError(f"{at} {what}: {detail.rstrip('.')}; {when}.", "server", status=status, retry_after=wait)
    kind: ErrorKind = "bad-request" if status in (400, 413, 422) else "other"
    return ProviderError(f"{at} rejected the request ({status}): {detail}", kind, status=status)


def _web_page(where: Where, status: int | None = None) -> str:
    hint = " (for api openai it usually ends in /v1)" if where.endpoint.api == "openai" else ""
    code = f" ({status})" if status else ""
    return (
        f"The model endpoint at {where.url} answered with a web page{code}, not the {where.endpoint.api} API: "
        f"check the baseUrl of model {where.endpoint.id!r}{hint}."
    )


def not_a_stream(where: Where, content_type: str) -> ProviderError:
    """A 200 answer that is not an event stream: a web page or some other service at baseUrl."""
    if "html" in content_type:
        return ProviderError(_web_page(where), "bad-url")
    shown = content_type.split(";")[0].strip() or "no content type"
    return ProviderError(
        f"The model endpoint at {where.url} answered {shown}, not an event stream: "
        f"check the baseUrl of model {where.endpoint.id!r}.",
        "bad-url",
    )


def _detail(body: object, fallback: str, where: Where) -> str:
    """The server's own message (OpenAI's and Anthropic's `error.message`, or a short text body), one line."""
    message: Any = None
    if isinstance(body, dict):
        inner = body.get("error", body)
        message = inner.get("message") if isinstance(inner, dict) else inner
    elif isinstance(body, str) and body.strip() and not body.lstrip().startswith("<"):
        message = body
    text = message if isinstance(message, str) and message.strip() else fallback
    text = _one_line(where.redact(text))
    if len(text) > MAX_DETAIL:
        text = text[: MAX_DETAIL - 1] + "…"
    return text if text.endswith((".", "!", "?", "…")) else text + "."


def _cause(exc: BaseException, errors: SdkErrors) -> str:
    """What went wrong under an SDK's "Connection error.": refused, unknown host, TLS, or the transport's words."""
    seen: BaseException | None = exc
    words = ""
    while seen is not None:
        if isinstance(seen, ConnectionRefusedError) or getattr(seen, "errno", None) == errno.ECONNREFUSED:
            return "connection refused"
        if isinstance(seen, socket.gaierror):
            return "unknown host"
        if isinstance(seen, ssl.SSLCertVerificationError):
            return f"its TLS certificate is not trusted ({seen.verify_message})"
        if isinstance(seen, ssl.SSLError):
            return "TLS failed"
        text = str(seen)
        if "Connection refused" in text:
            return "connection refused"
        if re.search(r"Name or service not known|nodename nor servname|Temporary failure in name resolution", text):
            return "unknown host"
        if text and not words and not isinstance(seen, errors.api):
            words = text
        seen = seen.__cause__ or seen.__context__
    return _one_line(words) or "the connection failed"


def connect_timeout(timeout: float) -> float:
    """How long to wait for a connection: a wrong address should not hang a turn for the whole `timeout`."""
    return min(timeout, CONNECT_TIMEOUT)


def _caused_by(exc: BaseException, kind: type[BaseException] | tuple[type[BaseException], ...]) -> bool:
    seen: BaseException | None = exc
    while seen is not None:
        if isinstance(seen, kind):
            return True
        seen = seen.__cause__ or seen.__context__
    return False


def _cut(exc: BaseException) -> str:
    closed = (httpx2.RemoteProtocolError, httpx2.ReadError, ConnectionError)
    return "the connection closed" if _caused_by(exc, closed) else "the connection failed"


def _one_line(text: str) -> str:
    return " ".join(text.split())


__all__ = ["CONNECT_TIMEOUT", "SdkErrors", "connect_timeout", "not_a_stream", "provider_error"]
