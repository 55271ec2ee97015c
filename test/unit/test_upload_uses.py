"""The upload URLs' one-use record (uploads.uses) on a real sqlite file: one use per nonce, across connections."""

import time

from sqlalchemy import (
    create_engine,
    func,
    select,
)

from galaxy_mcp_analysis.uploads.uses import (
    UploadUses,
    USES,
)


def test_a_nonce_is_used_once_even_through_another_engine(tmp_path):
    url = f"sqlite:///{tmp_path / 'galaxy.sqlite'}"
    first, second = UploadUses(create_engine(url)), UploadUses(create_engine(url))  # two workers
    first.create_table()
    second.create_table()  # already there: no error
    later = time.time() + 600
    assert first.use("a" * 32, later) is True
    assert second.use("a" * 32, later) is False
    assert first.use("a" * 32, later) is False
    assert second.use("b" * 32, later) is True


def test_rows_of_expired_urls_are_deleted_at_the_next_use(tmp_path):
    uses = UploadUses(create_engine(f"sqlite:///{tmp_path / 'galaxy.sqlite'}"))
    uses.create_table()
    assert uses.use("old", time.time() - 3600)
    assert uses.use("new", time.time() + 600)
    with uses.engine.connect() as connection:
        assert connection.execute(select(USES.c.nonce)).scalars().all() == ["new"]
        assert connection.execute(select(func.count()).select_from(USES)).scalar() == 1
