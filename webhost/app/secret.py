"""The deployment secret: given as `WEBHOST_SECRET`, or kept in the data folder, created once."""

from __future__ import annotations

import os
import secrets
from pathlib import Path

from webhost.apps.origins import secret_from_text
from webhost.settings import Settings

MIN_LENGTH = 32


class SecretProblem(Exception):
    """The data folder's secret file cannot be used as it is; the message is one line saying what to do."""


def deployment_secret(settings: Settings) -> bytes:
    """`WEBHOST_SECRET` when given (how replicas with data folders of their own share one), else the
    data folder's `secret` file. The file holds text, so `WEBHOST_SECRET=$(cat DATA/secret)` keeps a
    deployment's cookies, sandbox origins and stored input values as they were."""
    if settings.secret:
        return secret_from_text(settings.secret)
    return load_secret(settings.data_dir, rotate=settings.rotate_secret)


def load_secret(data_dir: Path, *, rotate: bool = False) -> bytes:
    """The per-deployment secret (sandbox labels, session cookies), created once in the data folder.

    A new secret is written to a temporary file created mode 0600 (never readable by others, even
    for a moment), synced, and then linked into place, so a reader sees the whole secret or none;
    when two processes start at once, the first one's secret wins and both use it. A file that is
    there but too short to be a secret (webhost never leaves one: someone cut it) is refused with
    `SecretProblem`, not replaced, unless `rotate` says to: replacing it makes everything sealed or
    signed with it unreadable.
    """
    data_dir.mkdir(parents=True, exist_ok=True, mode=0o700)
    path = data_dir / "secret"
    existing = _read_secret(path, rotate)
    if existing is not None:
        return existing
    value = secrets.token_hex(32).encode()
    temporary = data_dir / f".secret-{secrets.token_hex(8)}"
    fd = os.open(temporary, os.O_CREAT | os.O_EXCL | os.O_WRONLY | getattr(os, "O_NOFOLLOW", 0), 0o600)
    try:
        with os.fdopen(fd, "wb") as file:
            file.write(value)
            file.flush()
            os.fsync(file.fileno())
        try:
            os.link(temporary, path)  # only if there is none: a concurrent start keeps its secret
        except FileExistsError:
            existing = _read_secret(path, rotate)
            if existing is not None:
                return existing
            os.replace(temporary, path)  # told to rotate a short one: replaced whole
        except OSError:  # a file system without hard links
            os.replace(temporary, path)
    finally:
        temporary.unlink(missing_ok=True)
    return value


def _read_secret(path: Path, rotate: bool) -> bytes | None:
    """The file's secret; None when there is none (or it is short and `rotate` says to replace it)."""
    try:
        value = path.read_bytes().strip()
    except FileNotFoundError:
        return None
    if len(value) >= MIN_LENGTH:
        return value
    if rotate:
        return None
    raise SecretProblem(
        f"{path} holds {len(value)} characters, fewer than the {MIN_LENGTH} of a secret; webhost will not replace "
        "it by itself (every session cookie, stored input value, OAuth token and app origin made with it would be "
        "lost): restore it from a backup, or start once with --rotate-secret to make a new one"
    )
