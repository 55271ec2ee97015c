"""tasks.store: the tasks' table (SQLAlchemy Core) on a sqlite file, as Galaxy's database keeps it."""

import time

from sqlalchemy import create_engine

from galaxy_mcp_analysis.tasks.store import (
    TASKS,
    TaskStore,
)


def test_a_task_is_found_only_by_its_user_and_kept_until_it_expires(tmp_path):
    store = TaskStore(create_engine(f"sqlite:///{tmp_path / 'galaxy.sqlite'}"))
    store.create_table()
    store.create_table()  # a second worker starting finds it made
    result = {"content": [], "structuredContent": {"jobs": [{"id": "a"}]}}
    added = store.add("k1", 7, "run_tool", ["a", "b"], [], result, lifetime=3600)
    found = store.find("k1", 7)
    assert found == added and found.result == result and found.job_ids == ["a", "b"] and found.cancelled_at is None
    assert store.find("k1", 8) is None and store.find("k2", 7) is None  # another user's handle: not found
    store.mark_cancelled("k1", 8)  # another user cannot mark it
    assert store.find("k1", 7).cancelled_at is None
    store.mark_cancelled("k1", 7)
    first = store.find("k1", 7).cancelled_at
    store.mark_cancelled("k1", 7)  # the first cancel's time stays
    assert first is not None and store.find("k1", 7).cancelled_at == first
    with store.engine.begin() as connection:  # k1 expired a minute ago
        connection.execute(TASKS.update().values(expires_at=time.time() - 60))
    store.add("k2", 7, "invoke_workflow", [], ["i"], result, lifetime=3600)  # a new task clears expired rows
    assert store.find("k1", 7) is None and store.find("k2", 7).invocation_ids == ["i"]
