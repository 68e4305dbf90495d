"""The deployment secret: given as `WEBHOST_SECRET`, or kept in the data folder, created once."""

from __future__ import annotations

import os
import secrets
from pathlib import Path

from webhost.apps.origins import secret_from_text
from webhost.settings import Settings


def deployment_secret(settings: Settings) -> bytes:
    """`WEBHOST_SECRET` when given (how replicas with data folders of their own share one), else the
    data folder's `secret` file. The file holds text, so `WEBHOST_SECRET=$(cat DATA/secret)` keeps a
    deployment's cookies, sandbox origins and stored input values as they were."""
    return secret_from_text(settings.secret) if settings.secret else load_secret(settings.data_dir)


def load_secret(data_dir: Path) -> bytes:
    """The per-deployment secret (sandbox labels, session cookies), created once in the data folder.

    A new secret is written to a temporary file created mode 0600 (never readable by others, even
    for a moment), synced, and then linked into place, so a reader sees the whole secret or none;
    when two processes start at once, the first one's secret wins and both use it.
    """
    data_dir.mkdir(parents=True, exist_ok=True, mode=0o700)
    path = data_dir / "secret"
    existing = _read_secret(path)
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
            existing = _read_secret(path)
            if existing is not None:
                return existing
            os.replace(temporary, path)  # a short or empty secret left by a crash is replaced whole
        except OSError:  # a file system without hard links
            os.replace(temporary, path)
    finally:
        temporary.unlink(missing_ok=True)
    return value


def _read_secret(path: Path) -> bytes | None:
    try:
        value = path.read_bytes().strip()
    except FileNotFoundError:
        return None
    return value if len(value) >= 32 else None
