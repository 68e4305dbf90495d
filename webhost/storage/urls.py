"""Which database URLs webhost can use, the async driver each maps to, and how a URL may be shown.

Import-light (the configuration and the settings check a `webhost.database` URL with it): no
SQLAlchemy here. Two engines: SQLite (`sqlite+aiosqlite:///PATH`, the default in the data folder)
and PostgreSQL (`postgresql://` or `postgres://`, as every tool writes them, opened with asyncpg).
A URL is only ever shown with its password masked (`display_url`).
"""

from __future__ import annotations

from pathlib import Path
from urllib.parse import parse_qsl, urlencode, urlsplit, urlunsplit

SQLITE_PREFIX = "sqlite+aiosqlite://"
DEFAULT_FILE = "webhost.sqlite3"
POSTGRES_SCHEMES = ("postgresql", "postgres", "postgresql+asyncpg")
MASK = "***"
USABLE = "a postgresql://USER:PASSWORD@HOST/DATABASE URL or a sqlite+aiosqlite:///PATH URL"


def _scheme(url: str) -> str:
    return url.split("://", 1)[0].lower() if "://" in url else ""


def database_url_problem(url: str) -> str | None:
    """Why `url` cannot be used (one line, never the password), or None when it can."""
    scheme = _scheme(url)
    if scheme == "sqlite+aiosqlite":
        return None
    if scheme in POSTGRES_SCHEMES:
        try:
            parts = urlsplit(url)
            parts.port  # noqa: B018 (raises on a port that is not a number)
        except ValueError:
            return f"must be {USABLE} (the port is not a number)"
        if not parts.hostname and "host=" not in parts.query:
            return f"must be {USABLE} (no host)"
        if not parts.path.strip("/"):
            return f"must be {USABLE} (no database name after the host)"
        return None
    if scheme.startswith("postgres"):
        driver = scheme.partition("+")[2]
        return f"must be {USABLE}: webhost opens PostgreSQL with asyncpg, so leave out the driver (+{driver})"
    return f"must be {USABLE}"


def is_postgres(url: str) -> bool:
    return _scheme(url) in POSTGRES_SCHEMES


def async_url(url: str) -> str:
    """The URL SQLAlchemy opens: `postgres://` and `postgresql://` on the asyncpg driver, with libpq's
    `sslmode=` spelled as asyncpg's `ssl=`; SQLite as it is."""
    if not is_postgres(url):
        return url
    parts = urlsplit(url)
    pairs = parse_qsl(parts.query, keep_blank_values=True)
    query = [("ssl" if key == "sslmode" else key, value) for key, value in pairs]
    return urlunsplit(("postgresql+asyncpg", parts.netloc, parts.path, urlencode(query), parts.fragment))


def display_url(url: str) -> str:
    """The URL with its password (and any `password=` query value) masked, for logs and messages."""
    try:
        parts = urlsplit(url)
    except ValueError:
        return MASK
    netloc = parts.netloc
    if "@" in netloc:
        userinfo, _, hostport = netloc.rpartition("@")
        user, colon, _password = userinfo.partition(":")
        netloc = f"{user}:{MASK}@{hostport}" if colon else f"{user}@{hostport}"
    query = "&".join(
        f"{key}={MASK}" if key.lower() == "password" else f"{key}={value}"
        for key, value in parse_qsl(parts.query, keep_blank_values=True)
    )
    return urlunsplit((parts.scheme, netloc, parts.path, query, parts.fragment))


def url_password(url: str) -> str | None:
    """The password a URL carries (userinfo or `password=`), to mask it wherever it might show."""
    try:
        parts = urlsplit(url)
        query = dict(parse_qsl(parts.query))
    except ValueError:
        return None
    return parts.password or query.get("password") or None


def database_url(configured: str | None, data_dir: Path) -> str:
    """The URL to open (async driver): the configured one, else SQLite in the data folder."""
    if configured:
        problem = database_url_problem(configured)
        if problem:
            raise ValueError(problem)
        return async_url(configured)
    return f"{SQLITE_PREFIX}/{(data_dir / DEFAULT_FILE).resolve()}"
