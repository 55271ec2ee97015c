"""The tasks' own table in Galaxy's database (SQLAlchemy Core), as ``uploads.uses`` keeps the upload URLs' uses.

A task's status is read off its jobs (Galaxy's tables); this table keeps the rest: whose task it is,
which jobs and workflow invocations, what the call answered (the task's result), when it expires and whether ``tasks/cancel``
was sent. Every gunicorn worker and every restart sees the same rows. The handle is not stored, only
its SHA-256 (``core.tasks.storage_key``). Rows past their expiry are deleted when a task is made.
"""

import json
import time
from dataclasses import dataclass

from sqlalchemy import (
    Column,
    delete,
    Float,
    Integer,
    MetaData,
    select,
    String,
    Table,
    Text,
    update,
)

from galaxy_mcp_analysis.mcp.own_tables import create_missing_tables

METADATA = MetaData()

TASKS = Table(
    "mcp_task", METADATA,
    Column("key", String(64), primary_key=True),
    Column("user_id", Integer, nullable=False),
    Column("tool", String(255), nullable=False),
    Column("job_ids", Text, nullable=False),  # JSON list of encoded ids, as the call's result named them
    Column("invocation_ids", Text, nullable=False),  # JSON list: the invocations whose jobs are the task's too
    Column("result", Text, nullable=False),  # JSON of the CallToolResult the call answered
    Column("created_at", Float, nullable=False),
    Column("expires_at", Float, nullable=False, index=True),
    Column("cancelled_at", Float, nullable=True),
)


@dataclass(frozen=True)
class StoredTask:
    tool: str
    job_ids: list[str]
    invocation_ids: list[str]
    result: dict
    created_at: float
    expires_at: float
    cancelled_at: float | None


class TaskStore:
    def __init__(self, engine):
        self.engine = engine

    def create_table(self) -> None:
        create_missing_tables(METADATA, self.engine)

    def add(self, key: str, user_id: int, tool: str, job_ids: list[str], invocation_ids: list[str], result: dict,
            lifetime: int) -> StoredTask:
        now = time.time()
        row = {"key": key, "user_id": user_id, "tool": tool, "job_ids": json.dumps(job_ids),
               "invocation_ids": json.dumps(invocation_ids),
               "result": json.dumps(result, separators=(",", ":")), "created_at": now, "expires_at": now + lifetime}
        with self.engine.begin() as connection:
            connection.execute(delete(TASKS).where(TASKS.c.expires_at < now))
            connection.execute(TASKS.insert().values(**row))
        return StoredTask(tool, job_ids, invocation_ids, result, now, now + lifetime, None)

    def find(self, key: str, user_id: int) -> StoredTask | None:
        """The user's task with this key; None for an unknown key or another user's task alike."""
        with self.engine.connect() as connection:
            row = connection.execute(
                select(TASKS).where(TASKS.c.key == key, TASKS.c.user_id == user_id)
            ).mappings().first()
        if row is None:
            return None
        return StoredTask(row["tool"], json.loads(row["job_ids"]), json.loads(row["invocation_ids"]),
                          json.loads(row["result"]), row["created_at"], row["expires_at"], row["cancelled_at"])

    def mark_cancelled(self, key: str, user_id: int) -> None:
        with self.engine.begin() as connection:
            connection.execute(update(TASKS).where(TASKS.c.key == key, TASKS.c.user_id == user_id,
                                                   TASKS.c.cancelled_at.is_(None)).values(cancelled_at=time.time()))
