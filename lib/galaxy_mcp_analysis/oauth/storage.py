"""Where sign-in state lives: four tables of the patch set's own in Galaxy's database (SQLAlchemy Core).

Shared by every gunicorn worker and kept across restarts because they are in Galaxy's database;
created at start-up when sign-in is switched on (``create_all``, only the missing ones), dropped
by ``galaxy-mcp-analysis oauth drop-tables``. Codes and tokens are stored as their SHA-256 only
(core.oauth.token_hash): a database dump grants nothing. A grant is one Allow of one user for one
client; revoking it revokes every token issued under it. ``purge_expired`` removes what can never be
used again (expired codes and tokens, a revoked grant's codes and tokens, a grant whose every code and
token expired) and keeps the revoked grants' own rows, which ``oauth list --all`` shows.
"""

import json
import os
import secrets
import time
import weakref
from dataclasses import dataclass

from galaxy_mcp_analysis.core import oauth as rules
from galaxy_mcp_analysis.core.client_documents import (
    STORED_KEY_PREFIX,
    stored_client_id,
)

from sqlalchemy import (
    Boolean,
    Column,
    create_engine,
    delete,
    Float,
    ForeignKey,
    Integer,
    func,
    MetaData,
    or_,
    select,
    String,
    Table,
    Text,
    update,
)
from sqlalchemy.pool import SingletonThreadPool

METADATA = MetaData()

CLIENTS = Table(
    "mcp_oauth_client", METADATA,
    Column("client_id", String(64), primary_key=True),  # a document's client: core.client_documents.stored_client_id
    Column("client_name", String(200)),
    Column("info", Text, nullable=False),  # the registered metadata (RFC 7591 response) or the document, JSON; no secret
    Column("created_at", Float, nullable=False),
)
GRANTS = Table(
    "mcp_oauth_grant", METADATA,
    Column("grant_id", String(64), primary_key=True),
    Column("client_id", String(64), ForeignKey("mcp_oauth_client.client_id"), nullable=False, index=True),
    Column("user_id", Integer, nullable=False, index=True),  # galaxy_user.id (no foreign key: Galaxy's table)
    Column("scopes", String(200), nullable=False),
    Column("resource", Text, nullable=False),
    Column("created_at", Float, nullable=False),
    Column("revoked_at", Float),
)


def _issued(*columns: Column) -> list[Column]:
    """A code's or token's columns, then what both have: the grant it was issued under, expiry, single use."""
    return [
        *columns,
        Column("grant_id", String(64), ForeignKey("mcp_oauth_grant.grant_id"), nullable=False, index=True),
        Column("expires_at", Float, nullable=False),
        Column("used_at", Float),  # a code exchanged, a refresh token rotated away
    ]


CODES = Table("mcp_oauth_code", METADATA, *_issued(
    Column("code_hash", String(64), primary_key=True),
    Column("code_challenge", String(64), nullable=False),
    Column("redirect_uri", Text, nullable=False),
    Column("redirect_explicit", Boolean, nullable=False),
))
TOKENS = Table("mcp_oauth_token", METADATA, *_issued(
    Column("token_hash", String(64), primary_key=True),
    Column("kind", String(8), nullable=False),  # access | refresh
    Column("scopes", String(200), nullable=False),
))


@dataclass(frozen=True)
class GrantedToken:
    """A code or token row with its grant: who, which client, what for."""

    grant_id: str
    client_id: str
    client_name: str | None
    user_id: int
    scopes: list[str]
    resource: str
    expires_at: float
    used: bool
    grant_revoked: bool
    code_challenge: str = ""
    redirect_uri: str = ""
    redirect_explicit: bool = True


class SignInStore:
    """The tables' reads and writes; each method is one transaction on ``engine``."""

    def __init__(self, engine):
        self.engine = engine
        #: The bearer gate's engine for its one read without a thread (``quick_reads``); None: read in a thread.
        self.quick_engine = quick_reads(engine)

    def create_tables(self) -> None:
        METADATA.create_all(self.engine, checkfirst=True)

    def drop_tables(self) -> None:
        METADATA.drop_all(self.engine, checkfirst=True)

    def add_client(self, client_id: str, client_name: str | None, info: str) -> None:
        with self.engine.begin() as connection:
            connection.execute(CLIENTS.insert().values(
                client_id=client_id, client_name=client_name, info=info, created_at=time.time()))

    def put_client(self, client_id: str, client_name: str | None, info: str) -> None:
        """Add or refresh the row of a client known by its metadata document (``client_id``: its URL)."""
        key = stored_client_id(client_id)
        with self.engine.begin() as connection:
            changed = connection.execute(update(CLIENTS).where(CLIENTS.c.client_id == key).values(
                client_name=client_name, info=info)).rowcount
            if not changed:
                connection.execute(CLIENTS.insert().values(
                    client_id=key, client_name=client_name, info=info, created_at=time.time()))

    def client_info(self, client_id: str) -> str | None:
        with self.engine.connect() as connection:
            return connection.execute(select(CLIENTS.c.info).where(CLIENTS.c.client_id == client_id)).scalar()

    def add_grant_with_code(self, *, client_id, user_id, scopes, resource, code_hash, code_challenge,
                            redirect_uri, redirect_explicit, expires_at) -> str:
        grant_id = secrets.token_hex(16)
        with self.engine.begin() as connection:
            connection.execute(GRANTS.insert().values(
                grant_id=grant_id, client_id=stored_client_id(client_id), user_id=user_id, scopes=" ".join(scopes),
                resource=resource, created_at=time.time()))
            connection.execute(CODES.insert().values(
                code_hash=code_hash, grant_id=grant_id, code_challenge=code_challenge, redirect_uri=redirect_uri,
                redirect_explicit=redirect_explicit, expires_at=expires_at))
        return grant_id

    def code(self, code_hash: str) -> GrantedToken | None:
        query = (select(CODES, GRANTS.c.client_id, GRANTS.c.user_id, GRANTS.c.scopes, GRANTS.c.resource,
                        GRANTS.c.revoked_at, CLIENTS.c.client_name, CLIENTS.c.info)
                 .join(GRANTS, GRANTS.c.grant_id == CODES.c.grant_id)
                 .join(CLIENTS, CLIENTS.c.client_id == GRANTS.c.client_id)
                 .where(CODES.c.code_hash == code_hash))
        with self.engine.connect() as connection:
            row = connection.execute(query).mappings().first()
        if row is None:
            return None
        return _granted(row, scopes=row["scopes"], code_challenge=row["code_challenge"],
                        redirect_uri=row["redirect_uri"], redirect_explicit=row["redirect_explicit"])

    def token(self, token_hash: str, kind: str, engine=None) -> GrantedToken | None:
        """The code-less row of a token with its grant; ``engine``: another engine on the same database
        (``quick_reads``'s), else the store's."""
        query = (select(TOKENS, GRANTS.c.client_id, GRANTS.c.user_id, GRANTS.c.resource, GRANTS.c.revoked_at,
                        CLIENTS.c.client_name, CLIENTS.c.info)
                 .join(GRANTS, GRANTS.c.grant_id == TOKENS.c.grant_id)
                 .join(CLIENTS, CLIENTS.c.client_id == GRANTS.c.client_id)
                 .where(TOKENS.c.token_hash == token_hash, TOKENS.c.kind == kind))
        # One SELECT needs no transaction: autocommit spares the BEGIN and ROLLBACK of every request's check
        # (on sqlite with isolation_level=IMMEDIATE, as make serve's Galaxy runs, BEGIN takes the write lock).
        with (engine or self.engine).connect().execution_options(isolation_level="AUTOCOMMIT") as connection:
            row = connection.execute(query).mappings().first()
        return None if row is None else _granted(row, scopes=row["scopes"])

    def use_once(self, table: Table, key_hash: str) -> bool:
        """Mark a code or refresh token used; False when it already was (a second use, or a race lost)."""
        key = table.c.code_hash if table is CODES else table.c.token_hash
        with self.engine.begin() as connection:
            result = connection.execute(
                update(table).where(key == key_hash, table.c.used_at.is_(None)).values(used_at=time.time()))
            return result.rowcount == 1

    def add_tokens(self, grant_id: str, scopes: list[str], tokens: list[tuple[str, str, float]]) -> None:
        """``tokens``: (hash, kind, expires_at) each."""
        with self.engine.begin() as connection:
            for token_hash_, kind, expires_at in tokens:
                connection.execute(TOKENS.insert().values(
                    token_hash=token_hash_, kind=kind, grant_id=grant_id, scopes=" ".join(scopes),
                    expires_at=expires_at))

    def revoke(self, *, grant_id: str | None = None, user_id: int | None = None,
               client_id: str | None = None) -> int:
        """Revoke the live grants matching every given filter (at least one); returns how many."""
        conditions = [GRANTS.c.revoked_at.is_(None)]
        for column, value in ((GRANTS.c.grant_id, grant_id), (GRANTS.c.user_id, user_id),
                              (GRANTS.c.client_id, None if client_id is None else stored_client_id(client_id))):
            if value is not None:
                conditions.append(column == value)
        if len(conditions) == 1:
            raise ValueError("revoke needs a grant, a user or a client")
        with self.engine.begin() as connection:
            return connection.execute(update(GRANTS).where(*conditions).values(revoked_at=time.time())).rowcount

    def purge_expired(self, now: float | None = None) -> dict[str, int]:
        """Delete the rows no request can use any more, in one transaction; how many of each kind, and how
        many revoked grants are kept. Rows expired less than PURGE_GRACE_SECONDS ago stay: a request that
        checked one just before its expiry may still be marking it used or issuing under its grant."""
        before = (time.time() if now is None else now) - rules.PURGE_GRACE_SECONDS
        revoked = select(GRANTS.c.grant_id).where(GRANTS.c.revoked_at.is_not(None))
        counts = {}
        with self.engine.begin() as connection:
            counts["codes"] = connection.execute(delete(CODES).where(
                or_(CODES.c.expires_at < before, CODES.c.grant_id.in_(revoked)))).rowcount
            for kind in ("access", "refresh"):
                counts[f"{kind} tokens"] = connection.execute(delete(TOKENS).where(
                    TOKENS.c.kind == kind, or_(TOKENS.c.expires_at < before, TOKENS.c.grant_id.in_(revoked)))).rowcount
            counts["expired grants"] = connection.execute(delete(GRANTS).where(
                GRANTS.c.revoked_at.is_(None), GRANTS.c.created_at < before,
                GRANTS.c.grant_id.not_in(select(TOKENS.c.grant_id)),
                GRANTS.c.grant_id.not_in(select(CODES.c.grant_id)))).rowcount
            counts["revoked grants kept"] = connection.execute(
                select(func.count()).select_from(GRANTS).where(GRANTS.c.revoked_at.is_not(None))).scalar()
        return counts

    def grants(self, user_id: int | None = None, include_revoked: bool = False) -> list[dict]:
        query = (select(GRANTS, CLIENTS.c.client_name, CLIENTS.c.info)
                 .join(CLIENTS, CLIENTS.c.client_id == GRANTS.c.client_id)
                 .order_by(GRANTS.c.created_at))
        if user_id is not None:
            query = query.where(GRANTS.c.user_id == user_id)
        if not include_revoked:
            query = query.where(GRANTS.c.revoked_at.is_(None))
        with self.engine.connect() as connection:
            rows = [dict(row) for row in connection.execute(query).mappings()]
        for row in rows:
            row["client_id"] = public_client_id(row)
            del row["info"]
        return rows


#: How long a quick read waits for a sqlite file another connection is writing (its commit's lock), seconds;
#: longer, and the caller reads through the store's engine in a worker thread instead.
QUICK_READ_WAIT_SECONDS = 0.02


def quick_reads(engine):
    """An engine for one small read on the thread that asks (the bearer gate's, on the event loop): a sqlite
    file's connection kept open per thread and process (Galaxy's own engine opens the file again for every
    connection, ``NullPool``), waiting at most QUICK_READ_WAIT_SECONDS for a writer's lock. None for any other
    database (PostgreSQL: a pooled connection, read in a worker thread, as a network round trip must be).
    Every read is its own autocommit statement, so it sees every commit before it: a revocation at once."""
    url = engine.url
    if url.get_backend_name() != "sqlite" or url.database in (None, "", ":memory:"):
        return None
    quick = create_engine(url, poolclass=SingletonThreadPool, pool_size=2,
                          connect_args={"check_same_thread": False, "timeout": QUICK_READ_WAIT_SECONDS})
    # A forked worker (gunicorn) opens its own: never the parent's file handle. (Galaxy's register_after_fork
    # runs only in multiprocessing's children.)
    forked = weakref.ref(quick)
    os.register_at_fork(after_in_child=lambda: forked() is not None and forked().dispose(close=False))
    return quick


def public_client_id(row) -> str:
    """The client id a client is known by: a document's URL (kept in its stored information), else the row's."""
    if row["client_id"].startswith(STORED_KEY_PREFIX):
        return json.loads(row["info"])["client_id"]
    return row["client_id"]


def _granted(row, *, scopes: str, **extra) -> GrantedToken:
    return GrantedToken(
        grant_id=row["grant_id"], client_id=public_client_id(row), client_name=row["client_name"],
        user_id=row["user_id"], scopes=scopes.split(), resource=row["resource"], expires_at=row["expires_at"],
        used=row["used_at"] is not None, grant_revoked=row["revoked_at"] is not None, **extra)
