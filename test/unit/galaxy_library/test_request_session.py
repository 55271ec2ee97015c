"""mcp.session.RequestScopedSession against Galaxy's own session scoping (galaxy.model.base.ModelMapping).

The second half of the mcp-request-session claim: a tool call that fails after changing an
object, without committing, must not leave that change in a session a later call commits.
Galaxy scopes sessions by REQUEST_ID and falls back to the thread; both calls below run on one
thread, as two MCP calls served by the same worker thread do.
"""

import asyncio
import types

import pytest
from sqlalchemy import (
    create_engine,
    select,
    String,
)
from sqlalchemy.orm import (
    DeclarativeBase,
    Mapped,
    mapped_column,
)
from sqlalchemy.pool import StaticPool

from galaxy.model.base import ModelMapping
from galaxy_mcp_analysis.mcp.session import RequestScopedSession


class Base(DeclarativeBase):
    pass


class Note(Base):
    __tablename__ = "note"
    id: Mapped[int] = mapped_column(primary_key=True)
    text: Mapped[str] = mapped_column(String(40))


@pytest.fixture
def model():
    engine = create_engine("sqlite://", poolclass=StaticPool, connect_args={"check_same_thread": False})
    Base.metadata.create_all(engine)
    mapping = ModelMapping([types.ModuleType("no_model_classes")], engine)
    yield mapping
    mapping.session.remove()
    engine.dispose()


def failing_call(model):
    """A tool that adds a row and then fails before committing."""
    model.session.add(Note(text="from the failed call"))
    raise ValueError("the tool failed")


def committing_call(model):
    """A later tool that writes and commits its own row."""
    model.session.add(Note(text="from the later call"))
    model.session.commit()


def call(middleware, tool, model):
    """One MCP tool call: through the middleware (as the patch set serves it) or without it."""

    async def call_next(context):
        return tool(model)

    async def run():
        if middleware is None:
            return await call_next(None)
        return await middleware.on_call_tool(None, call_next)

    try:
        asyncio.run(run())
    except ValueError:
        pass


def stored(model) -> list[str]:
    with model.new_session() as session:
        return sorted(session.scalars(select(Note.text)))


def test_a_failed_calls_uncommitted_change_is_not_flushed_by_a_later_commit(model):
    middleware = RequestScopedSession(types.SimpleNamespace(model=model))
    call(middleware, failing_call, model)
    call(middleware, committing_call, model)
    assert stored(model) == ["from the later call"]


def test_without_the_middleware_the_failed_change_is_flushed(model):
    """The control: what Galaxy's thread-scoped fallback does to the same two calls."""
    call(None, failing_call, model)
    call(None, committing_call, model)
    assert stored(model) == ["from the failed call", "from the later call"]
