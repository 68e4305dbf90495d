"""Signed sandbox-proxy tokens: the backend's validated App policy, carried to the sandbox listener.

A token is itsdangerous's URL-safe serialization (compact JSON, zlib-compressed when that is shorter,
base64url, then "." and an HMAC-SHA256), keyed by a sub-key of the deployment secret, as the session
cookies are (`webhost.auth.signin`). The browser only carries it (`/proxy?p=<token>`), so it cannot
choose the policy; the token names the sandbox label it is for, so a token for server A is useless on
server B's origin; and it expires, so a leaked URL is short-lived. The sandbox can run as its own
process given the secret.
"""

from __future__ import annotations

import hashlib
import re
import time
from dataclasses import dataclass

from itsdangerous import BadData, BadSignature, URLSafeSerializer

from webhost.apps.origins import derive_key, is_valid_label

TOKEN_VERSION = 1
DEFAULT_TTL_SECONDS = 300
MAX_TOKEN_CHARS = 64 * 1024
INNER_SANDBOX_TOKENS: frozenset[str] = frozenset({"allow-scripts", "allow-same-origin", "allow-forms"})
DEFAULT_INNER_SANDBOX = "allow-scripts allow-same-origin allow-forms"

_HEADER_SAFE_RE = re.compile(r"^[\x20-\x7e]*$")  # printable ASCII: nothing can split a header
_ALLOW_RE = re.compile(r"^[a-z-]+(?:; [a-z-]+)*$|^$")
_ORIGIN_RE = re.compile(r"^https?://[a-z0-9.-]+(?::\d{1,5})?$")


class ProxyTokenError(ValueError):
    """A token that is malformed, forged, expired or carries an unacceptable value."""


@dataclass(frozen=True)
class ProxyConfig:
    """What the sandbox needs to serve one App's proxy page."""

    label: str  # the sandbox origin's DNS label the token is valid on
    csp: str  # the App's Content-Security-Policy header value
    allow: str  # the iframe `allow` attribute (granted permissions)
    sandbox: str  # the inner iframe's `sandbox` attribute (a subset of INNER_SANDBOX_TOKENS)
    host_origins: tuple[str, ...]  # host page origins that may frame the proxy and talk to it
    exp: int  # expiry, Unix seconds

    def check(self) -> None:
        """Raise `ProxyTokenError` unless every field is safe to put into a header or the page."""
        if not is_valid_label(self.label):
            raise ProxyTokenError("invalid label")
        if not self.csp or not _HEADER_SAFE_RE.match(self.csp):
            raise ProxyTokenError("invalid csp")
        if not _ALLOW_RE.match(self.allow):
            raise ProxyTokenError("invalid allow attribute")
        tokens = self.sandbox.split()
        if not tokens or not set(tokens) <= INNER_SANDBOX_TOKENS:
            raise ProxyTokenError("invalid inner sandbox attribute")
        if not self.host_origins or not all(_ORIGIN_RE.match(o) for o in self.host_origins):
            raise ProxyTokenError("invalid host origins")


def _serializer(secret: bytes) -> URLSafeSerializer:
    """Signs and verifies tokens under the deployment secret's proxy-token sub-key."""
    return URLSafeSerializer(
        derive_key(secret, "proxy-token/v1"),
        salt="webhost/proxy-token",
        signer_kwargs={"digest_method": hashlib.sha256},
    )


def sign_proxy_config(secret: bytes, config: ProxyConfig) -> str:
    """The token for `config` (checked first, so a bad value fails here, not in the browser)."""
    config.check()
    body = {
        "v": TOKEN_VERSION,
        "label": config.label,
        "csp": config.csp,
        "allow": config.allow,
        "sandbox": config.sandbox,
        "hosts": list(config.host_origins),
        "exp": config.exp,
    }
    return _serializer(secret).dumps(body)


def verify_proxy_config(secret: bytes, token: str, *, now: float) -> ProxyConfig:
    """The config inside a token, or `ProxyTokenError` (bad signature, expired, malformed)."""
    if not token or len(token) > MAX_TOKEN_CHARS:
        raise ProxyTokenError("malformed token")
    try:
        body = _serializer(secret).loads(token)
    except BadSignature:
        raise ProxyTokenError("bad signature") from None
    except BadData:  # signed with our key, yet not a payload we write
        raise ProxyTokenError("malformed token") from None
    if not isinstance(body, dict) or body.get("v") != TOKEN_VERSION:
        raise ProxyTokenError("unsupported token version")
    label, csp, allow, sandbox = (body.get(k) for k in ("label", "csp", "allow", "sandbox"))
    hosts, exp = body.get("hosts"), body.get("exp")
    if not all(isinstance(v, str) for v in (label, csp, allow, sandbox)):
        raise ProxyTokenError("malformed token")
    if not isinstance(hosts, list) or not all(isinstance(h, str) for h in hosts):
        raise ProxyTokenError("malformed token")
    if not isinstance(exp, int) or isinstance(exp, bool):
        raise ProxyTokenError("malformed token")
    if exp <= now:
        raise ProxyTokenError("token expired")
    config = ProxyConfig(str(label), str(csp), str(allow), str(sandbox), tuple(hosts), exp)
    config.check()
    return config


def issue_proxy_token(
    secret: bytes,
    *,
    label: str,
    csp: str,
    allow: str = "",
    sandbox: str = DEFAULT_INNER_SANDBOX,
    host_origins: list[str] | tuple[str, ...],
    ttl: int = DEFAULT_TTL_SECONDS,
    now: float | None = None,
) -> str:
    """Convenience: build a `ProxyConfig` expiring `ttl` seconds from `now` and sign it."""
    issued = time.time() if now is None else now
    config = ProxyConfig(label, csp, allow, sandbox, tuple(host_origins), int(issued) + ttl)
    return sign_proxy_config(secret, config)


def proxy_url(origin: str, token: str) -> str:
    """The outer iframe's `src`: the proxy page on the server's sandbox origin."""
    return f"{origin}/proxy?p={token}"


def warm_url(origin: str, token: str) -> str:
    """A warm proxy frame's `src`: the proxy under the sandbox's fixed bootstrap policy (no App yet)."""
    return f"{origin}/warm?p={token}"


def app_document_url(origin: str, token: str) -> str:
    """The App's own document for a warm proxy frame: empty, under the policy `token` carries."""
    return f"{origin}/app?p={token}"
