"""One database session per MCP tool call, as Galaxy gives one to each HTTP request.

Galaxy scopes its SQLAlchemy session by a request id (``galaxy.model.base.REQUEST_ID``)
and falls back to the thread id. FastMCP runs tool calls in tasks spawned by its session
manager, which carry no request id, so every call a worker thread serves shares one
session that is never closed: later calls read stale objects (a page published since
still looks private) and an uncommitted change left by a failed call can be flushed by
the next call's commit. This middleware sets a fresh request id around each call (the
tool's worker thread inherits it) and closes that call's session afterwards.
"""

import uuid

from fastmcp.server.middleware import Middleware


class RequestScopedSession(Middleware):
    def __init__(self, gx_app):
        self.model = gx_app.model

    async def on_call_tool(self, context, call_next):
        request_id = f"mcp-{uuid.uuid4().hex}"
        token = self.model.set_request_id(request_id)
        try:
            return await call_next(context)
        finally:
            self.model.unset_request_id(request_id)  # closes (and so rolls back) what the call left open
            token.var.reset(token)


async def in_own_session(gx_app, function, *args):
    """``function(*args)`` in a worker thread with a database session of its own, closed afterwards (for
    work outside a tool call's session: tools/list, an audit line written after the call's session closed)."""
    import anyio

    model = gx_app.model
    request_id = f"mcp-own-{uuid.uuid4().hex}"
    token = model.set_request_id(request_id)
    try:
        return await anyio.to_thread.run_sync(function, *args)
    finally:
        model.unset_request_id(request_id)
        token.var.reset(token)
