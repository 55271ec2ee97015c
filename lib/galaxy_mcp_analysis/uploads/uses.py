"""Which upload URLs were used: one small table of the patch set's own in Galaxy's database (SQLAlchemy Core).

The token itself is signed (core.upload_urls), so checking it needs no shared state; only "was this one used
already" must be the same answer on every gunicorn worker (and every host of a multi-host Galaxy), at once.
Galaxy's database is the one store all of them share with transactions: a use is an INSERT of the token's
nonce, and the primary key makes the second INSERT fail on any worker, atomically. (The policy's counts
live in files under data_dir, which one host's workers share but a second web host may not.) A row is
needed only while its URL could still be presented: rows past their expiry are deleted at the next use.
"""

import time

from sqlalchemy import (
    Column,
    delete,
    exc,
    Float,
    MetaData,
    String,
    Table,
)

from galaxy_mcp_analysis.mcp.own_tables import create_missing_tables

METADATA = MetaData()

USES = Table(
    "mcp_upload_use", METADATA,
    Column("nonce", String(64), primary_key=True),
    Column("used_at", Float, nullable=False),
    Column("expires_at", Float, nullable=False, index=True),
)


class UploadUses:
    def __init__(self, engine):
        self.engine = engine

    def create_table(self) -> None:
        create_missing_tables(METADATA, self.engine)

    def use(self, nonce: str, expires_at: float) -> bool:
        """Record the URL's one use; False when it was used already (here or on another worker)."""
        now = time.time()
        try:
            with self.engine.begin() as connection:
                connection.execute(USES.insert().values(nonce=nonce, used_at=now, expires_at=expires_at))
        except exc.IntegrityError:
            return False
        with self.engine.begin() as connection:
            # An expired URL is refused by its signature's expiry before this table is asked: its row can go.
            connection.execute(delete(USES).where(USES.c.expires_at < now - 60))
        return True
