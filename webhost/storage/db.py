"""The database: people, web sessions, pending sign-ins and each person's input values, behind a small async API.

SQLAlchemy 2 Core on an async engine: SQLite (aiosqlite, WAL) or PostgreSQL (asyncpg), with the same
portable queries (an upsert is `portable.upsert`). The schema belongs to the Alembic migrations in
`migrations/`, applied by `Storage.start` under a lock, so that of several replicas starting at once
the first migrates and the others wait; `metadata` below mirrors it for the queries. Secrets never
rest here in the clear: a session and a sign-in state are stored as the SHA-256 of the random value the browser holds.
"""

from __future__ import annotations

import contextlib
import fcntl
import hashlib
import os
from collections.abc import AsyncIterator, Awaitable, Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypeVar

import anyio
import sqlalchemy as sa
from alembic import command
from alembic.config import Config as AlembicConfig
from alembic.runtime.migration import MigrationContext
from alembic.script import ScriptDirectory
from sqlalchemy import event
from sqlalchemy.ext.asyncio import AsyncConnection, AsyncEngine, create_async_engine

from webhost.people import Person
from webhost.redact import Redactor
from webhost.storage.files import owner_only
from webhost.storage.portable import upsert
from webhost.storage.transactions import Transactions
from webhost.storage.urls import async_url, display_url, url_password

T = TypeVar("T")
MIGRATIONS = Path(__file__).parent / "migrations"
# pg_advisory_xact_lock key held while migrating: any fixed 64-bit number, the same in every replica.
MIGRATION_LOCK = 0x7765_6268_6F73_7401  # "webhost" + 1

metadata = sa.MetaData()
people = sa.Table(
    "people",
    metadata,
    sa.Column("id", sa.String(255), primary_key=True),
    sa.Column("name", sa.String(255), nullable=False),
    sa.Column("email", sa.String(320)),
    sa.Column("role", sa.String(16), nullable=False),
    sa.Column("groups", sa.JSON, nullable=False),
    sa.Column("first_seen", sa.Float, nullable=False),
    sa.Column("last_seen", sa.Float, nullable=False),
)
web_sessions = sa.Table(
    "web_sessions",
    metadata,
    sa.Column("id_hash", sa.String(64), primary_key=True),
    sa.Column("person_id", sa.String(255), sa.ForeignKey("people.id", ondelete="CASCADE"), nullable=False),
    sa.Column("created_at", sa.Float, nullable=False),
    sa.Column("expires_at", sa.Float, nullable=False),
    sa.Column("revoked_at", sa.Float),
    # The clear ID token of webhost before 0008, emptied by it and never written since (a replica of the previous
    # version may still write it during a rolling upgrade); a later release drops it.
    sa.Column("id_token", sa.Text),
    sa.Column("sealed_id_token", sa.LargeBinary),  # for sign-out's id_token_hint, sealed (auth/signin.py)
    # The provider's refresh token, sealed, and when it last re-read the person's groups (auth/refresh.py, 0013).
    sa.Column("sealed_refresh_token", sa.LargeBinary),
    sa.Column("refreshed_at", sa.Float),
    sa.Index("web_sessions_person", "person_id"),
)
sign_ins = sa.Table(
    "sign_ins",
    metadata,
    sa.Column("state_hash", sa.String(64), primary_key=True),
    sa.Column("nonce", sa.String(128), nullable=False),
    sa.Column("code_verifier", sa.String(128), nullable=False),
    sa.Column("redirect_uri", sa.Text, nullable=False),
    sa.Column("next_path", sa.Text, nullable=False),
    sa.Column("created_at", sa.Float, nullable=False),
    sa.Column("used_at", sa.Float),
)

# A person's `${input:ID}` values, each sealed with AES-GCM (webhost/storage/inputs.py); no foreign key to
# `people`, which token and proxy mode do not fill.
person_inputs = sa.Table(
    "person_inputs",
    metadata,
    sa.Column("person_id", sa.String(255), primary_key=True),
    sa.Column("input_id", sa.String(64), primary_key=True),
    sa.Column("sealed", sa.LargeBinary, nullable=False),
    sa.Column("updated_at", sa.Float, nullable=False),
)


def digest(value: str) -> str:
    return hashlib.sha256(value.encode()).hexdigest()


@dataclass(frozen=True)
class SignIn:
    """A sign-in the browser started: what the callback needs to finish it."""

    nonce: str
    code_verifier: str
    redirect_uri: str
    next_path: str
    created_at: float


@dataclass(frozen=True)
class WebSession:
    person: Person
    expires_at: float
    sealed_id_token: bytes | None
    refreshed_at: float | None = None  # when its groups were last read (None: it keeps no refresh token)


class StorageUnavailable(Exception):
    """The database cannot be opened or migrated; the message is one line, with the password masked."""


class NewerDatabase(StorageUnavailable):
    """The database was migrated by a newer webhost, to a revision this one has no migration for."""


class Storage:
    """One database for the deployment's people and sessions; `start` applies the migrations."""

    def __init__(self, url: str) -> None:
        url = async_url(url)  # postgres:// and postgresql:// as people write them
        self.url = url
        self.shown_url = display_url(url)
        self.password = url_password(url)
        self._redactor = Redactor([self.password] if self.password else [])
        options: dict[str, Any] = {"pool_pre_ping": True} if url.startswith("postgresql") else {}
        self.engine: AsyncEngine = create_async_engine(url, **options)
        if self.engine.dialect.name == "sqlite":
            event.listen(self.engine.sync_engine, "connect", _sqlite_pragmas)
        self.transactions = Transactions(self.engine, self._redactor)

    def read(self) -> contextlib.AbstractAsyncContextManager[AsyncConnection]:
        """A connection to read on (`DatabaseUnavailable` when the database is down)."""
        return self.transactions.read()

    async def write(self, work: Callable[[AsyncConnection], Awaitable[T]]) -> T:
        """`work` in one committed transaction, after this process's earlier writes on SQLite (transactions.py)."""
        return await self.transactions.write(work)

    @property
    def dialect(self) -> str:
        return self.engine.dialect.name

    async def start(self, *, to: str = "head") -> None:
        """Apply the migrations (up to revision `to`: a restore's); raises StorageUnavailable (one line, no
        password) if that fails."""
        try:
            async with self._migration_lock(), self.engine.begin() as connection:
                if self.dialect == "postgresql":  # held to the end of this transaction: others wait here
                    await connection.execute(sa.text("SELECT pg_advisory_xact_lock(:key)"), {"key": MIGRATION_LOCK})
                unknown = await connection.run_sync(_unknown_revisions)
                if unknown:  # before anything is written: the transaction ends without a change
                    raise NewerDatabase(
                        f"database {self.shown_url}: it is at revision {', '.join(unknown)}, which this webhost does "
                        "not know: a newer release wrote it. Run that release (webhost never downgrades a "
                        "database), or restore a backup made before the upgrade"
                    )
                await connection.run_sync(_upgrade, to)
        except (OSError, sa.exc.SQLAlchemyError) as exc:
            await self.engine.dispose()
            raise StorageUnavailable(f"database {self.shown_url}: {self.reason(exc)}") from None

    def reason(self, exc: BaseException) -> str:
        """What went wrong, in one line and with the database password masked."""
        return self.transactions.reason(exc)

    @contextlib.asynccontextmanager
    async def _migration_lock(self) -> AsyncIterator[None]:
        """SQLite: an exclusive lock on a file beside the database (PostgreSQL locks in the transaction)."""
        database = self.engine.url.database if self.dialect == "sqlite" else None
        if not database or database == ":memory:":
            yield
            return
        Path(database).parent.mkdir(parents=True, exist_ok=True, mode=0o700)
        owner_only(Path(database))
        path = Path(f"{database}.migrating")
        while True:
            fd = os.open(path, os.O_CREAT | os.O_RDWR, 0o600)
            try:
                await anyio.to_thread.run_sync(fcntl.flock, fd, fcntl.LOCK_EX)
                # The holder before us deletes the file as it lets go: a lock on a file no longer at that path
                # keeps nobody out, so take the one that is there now.
                held, there = os.fstat(fd), os.stat(path)
            except FileNotFoundError:
                os.close(fd)
                continue
            except BaseException:
                os.close(fd)
                raise
            if (held.st_dev, held.st_ino) == (there.st_dev, there.st_ino):
                break
            os.close(fd)
        try:
            yield
        finally:
            path.unlink(missing_ok=True)  # while still holding the lock: nothing is left after a start
            os.close(fd)  # releases the lock

    async def close(self) -> None:
        await self.engine.dispose()

    async def save_person(self, person: Person, now: float) -> None:
        await self.write(lambda db: save_person(db, person, now))

    async def create_session(
        self,
        session_id: str,
        person: Person,
        *,
        now: float,
        expires_at: float,
        sealed_id_token: bytes | None,
        sealed_refresh_token: bytes | None = None,
    ) -> None:
        async def work(db: AsyncConnection) -> None:
            await save_person(db, person, now)
            await db.execute(
                web_sessions.insert().values(
                    id_hash=digest(session_id),
                    person_id=person.id,
                    created_at=now,
                    expires_at=expires_at,
                    sealed_id_token=sealed_id_token,
                    sealed_refresh_token=sealed_refresh_token,
                    refreshed_at=now if sealed_refresh_token is not None else None,
                )
            )

        await self.write(work)

    async def session(self, session_id: str, now: float) -> WebSession | None:
        """The live session with this id (not expired, not revoked), with its person."""
        query = (
            sa.select(web_sessions.c.expires_at, web_sessions.c.sealed_id_token, web_sessions.c.refreshed_at, people)
            .join(people, people.c.id == web_sessions.c.person_id)
            .where(
                web_sessions.c.id_hash == digest(session_id),
                web_sessions.c.revoked_at.is_(None),
                web_sessions.c.expires_at > now,
            )
        )
        async with self.read() as db:
            row = (await db.execute(query)).mappings().first()
        if row is None:
            return None
        person = Person(
            id=row["id"],
            name=row["name"],
            email=row["email"],
            role="admin" if row["role"] == "admin" else "member",
            groups=tuple(row["groups"] or ()),
        )
        return WebSession(
            person=person,
            expires_at=row["expires_at"],
            sealed_id_token=row["sealed_id_token"],
            refreshed_at=row["refreshed_at"],
        )

    async def sealed_id_token_of(self, person_id: str, now: float) -> tuple[str, bytes] | None:
        """The sealed ID token of the person's newest live web session (oidc mode), with that session's id hash
        (what the seal is bound to: auth/signin.py `IdTokenSeal.open_hashed`), for enterprise-managed
        authorization (SEP-990: exchanged at the identity provider for an ID-JAG); None without one."""
        query = (
            sa.select(web_sessions.c.id_hash, web_sessions.c.sealed_id_token)
            .where(
                web_sessions.c.person_id == person_id,
                web_sessions.c.revoked_at.is_(None),
                web_sessions.c.expires_at > now,
                web_sessions.c.sealed_id_token.is_not(None),
            )
            .order_by(web_sessions.c.created_at.desc())
            .limit(1)
        )
        async with self.engine.connect() as db:
            row = (await db.execute(query)).first()
        return None if row is None else (str(row.id_hash), bytes(row.sealed_id_token))

    async def revoke_session(self, session_id: str, now: float) -> None:
        async def work(db: AsyncConnection) -> None:
            await db.execute(
                web_sessions.update()
                .where(web_sessions.c.id_hash == digest(session_id), web_sessions.c.revoked_at.is_(None))
                .values(revoked_at=now)
            )
            await db.execute(web_sessions.delete().where(web_sessions.c.expires_at < now - 86400))

        await self.write(work)

    async def start_sign_in(self, state: str, sign_in: SignIn) -> None:
        async def work(db: AsyncConnection) -> None:
            await db.execute(sign_ins.delete().where(sign_ins.c.created_at < sign_in.created_at - 86400))
            await db.execute(
                sign_ins.insert().values(
                    state_hash=digest(state),
                    nonce=sign_in.nonce,
                    code_verifier=sign_in.code_verifier,
                    redirect_uri=sign_in.redirect_uri,
                    next_path=sign_in.next_path,
                    created_at=sign_in.created_at,
                )
            )

        await self.write(work)

    async def take_sign_in(self, state: str, now: float) -> SignIn | str:
        """Use up a sign-in (once: a second callback with the same state gets "reused"); "unknown" if
        there was never one."""
        key = digest(state)

        async def work(db: AsyncConnection) -> SignIn | str:
            row = (await db.execute(sa.select(sign_ins).where(sign_ins.c.state_hash == key))).mappings().first()
            if row is None:
                return "unknown"
            used = await db.execute(
                sign_ins.update().where(sign_ins.c.state_hash == key, sign_ins.c.used_at.is_(None)).values(used_at=now)
            )
            if used.rowcount != 1:
                return "reused"
            return SignIn(
                nonce=row["nonce"],
                code_verifier=row["code_verifier"],
                redirect_uri=row["redirect_uri"],
                next_path=row["next_path"],
                created_at=row["created_at"],
            )

        return await self.write(work)


def person_values(person: Person, now: float) -> dict[str, Any]:
    """A person's row as it is written now (`first_seen` is kept when they are already there)."""
    return {
        "id": person.id,
        "name": person.name,
        "email": person.email,
        "role": person.role,
        "groups": list(person.groups),
        "first_seen": now,
        "last_seen": now,
    }


async def save_person(db: AsyncConnection, person: Person, now: float) -> None:
    await upsert(db, people, person_values(person, now), key=["id"], keep=["first_seen"])


def _upgrade(connection: sa.Connection, to: str) -> None:
    command.upgrade(alembic_config(connection), to)


def known_revisions() -> set[str]:
    """The revisions this code has a migration for."""
    config = AlembicConfig()
    config.set_main_option("script_location", str(MIGRATIONS))
    return {script.revision for script in ScriptDirectory.from_config(config).walk_revisions()}


def _unknown_revisions(connection: sa.Connection) -> list[str]:
    """The revisions the database is stamped with that none of this code's migrations is (a newer release's)."""
    current = MigrationContext.configure(connection).get_current_heads()
    known = known_revisions()  # compared exactly, never by alembic's prefix match
    return [revision for revision in current if revision not in known]


def alembic_config(connection: sa.Connection) -> AlembicConfig:
    """Alembic on this connection (env.py never opens one of its own)."""
    config = AlembicConfig()
    config.set_main_option("script_location", str(MIGRATIONS))
    config.attributes["connection"] = connection
    return config


def _sqlite_pragmas(dbapi_connection: Any, _record: Any) -> None:
    cursor = dbapi_connection.cursor()
    cursor.execute("PRAGMA journal_mode=WAL")
    cursor.execute("PRAGMA foreign_keys=ON")
    cursor.execute("PRAGMA busy_timeout=5000")
    cursor.close()
