"""The patch set's own small tables in Galaxy's database (SQLAlchemy Core): created at start-up when missing.

Used by the upload URLs' one-use table (``uploads.uses``) and the tasks' table (``tasks.store``).
"""

from sqlalchemy import (
    exc,
    inspect,
    MetaData,
)


def create_missing_tables(metadata: MetaData, engine) -> None:
    """Create ``metadata``'s tables that are missing; two workers starting at once may race: the loser finds them made."""
    try:
        metadata.create_all(engine, checkfirst=True)
    except exc.DatabaseError:
        if not all(inspect(engine).has_table(table.name) for table in metadata.sorted_tables):
            raise
