"""Per-server sandbox origins: unpredictable DNS labels derived from a deployment secret."""

from __future__ import annotations

import base64
import hashlib
import hmac
import re

# A label is 20 characters: a fixed leading letter (DNS labels read best starting with one, and some
# resolvers dislike a leading digit) plus 19 base32 characters = 95 bits of HMAC output.
LABEL_LENGTH = 20
MIN_SECRET_BYTES = 16

_LABEL_RE = re.compile(r"^[a-z](?:[a-z0-9-]{0,61}[a-z0-9])?$")
_DOMAIN_LABEL_RE = re.compile(r"^[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?$")
_DEFAULT_PORTS = {"http": 80, "https": 443}


def derive_key(secret: bytes, purpose: str) -> bytes:
    """A sub-key per purpose, so a label can never double as a token signature (or vice versa)."""
    if len(secret) < MIN_SECRET_BYTES:
        raise ValueError(f"the deployment secret must be at least {MIN_SECRET_BYTES} bytes")
    return hmac.new(secret, b"webhost/" + purpose.encode("ascii"), hashlib.sha256).digest()


def secret_from_text(text: str) -> bytes:
    """The deployment secret as both processes read it (env var or file): stripped text, UTF-8 bytes."""
    secret = text.strip().encode("utf-8")
    if len(secret) < MIN_SECRET_BYTES:
        raise ValueError(f"the deployment secret must be at least {MIN_SECRET_BYTES} bytes")
    return secret


def sandbox_label(secret: bytes, server_name: str) -> str:
    """The DNS label of one server's sandbox origin: HMAC-SHA256(secret, server identity), base32.

    The server identity is the configured server name; the label is stable for as long as the
    secret is (so the app's storage survives restarts only if the secret is persisted).
    """
    if not server_name:
        raise ValueError("server name must not be empty")
    key = derive_key(secret, "sandbox-label/v1")
    digest = hmac.new(key, server_name.encode("utf-8"), hashlib.sha256).digest()
    body = base64.b32encode(digest).decode("ascii").lower().rstrip("=")
    return "s" + body[: LABEL_LENGTH - 1]


def is_valid_label(label: str) -> bool:
    """A single lowercase DNS label starting with a letter (what `sandbox_label` produces)."""
    return bool(_LABEL_RE.match(label))


def is_valid_domain(domain: str) -> bool:
    """A lowercase DNS name such as `localhost` or `apps.example.com` (no port, no trailing dot)."""
    if not domain or len(domain) > 253:
        return False
    return all(_DOMAIN_LABEL_RE.match(part) for part in domain.split("."))


def sandbox_origin(label: str, domain: str, port: int, scheme: str = "http") -> str:
    """`scheme://<label>.<domain>[:port]`, leaving out the scheme's default port."""
    domain = domain.lower().rstrip(".")
    if not is_valid_label(label):
        raise ValueError(f"invalid sandbox label {label!r}")
    if not is_valid_domain(domain):
        raise ValueError(f"invalid sandbox domain {domain!r}")
    if scheme not in _DEFAULT_PORTS:
        raise ValueError(f"sandbox scheme must be http or https, not {scheme!r}")
    if not 0 < port < 65536:
        raise ValueError(f"invalid sandbox port {port}")
    suffix = "" if _DEFAULT_PORTS[scheme] == port else f":{port}"
    return f"{scheme}://{label}.{domain}{suffix}"


def label_from_host(host_header: str | None, domain: str) -> str | None:
    """The label of a sandbox request's `Host:` (`<label>.<domain>[:port]`), or None if it is not one.

    The port is not checked: behind a reverse proxy the public port differs from the listener's.
    """
    if not host_header:
        return None
    host = host_header.strip().lower()
    if host.startswith("["):  # an IPv6 literal is never a sandbox origin
        return None
    name, _, port = host.partition(":")
    if port and not port.isdigit():
        return None
    name = name.rstrip(".")
    suffix = "." + domain.lower().rstrip(".")
    if not name.endswith(suffix):
        return None
    label = name[: -len(suffix)]
    return label if is_valid_label(label) else None
