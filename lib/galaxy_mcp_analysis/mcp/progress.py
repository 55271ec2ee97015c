"""MCP progress notifications: the per-request choice of JSON or SSE, and the tools' reporter.

Galaxy's ``/api/mcp`` answers with plain JSON bodies (patch ``mcp-json-responses``): the
official client refuses SSE events over 1 MiB, and a JSON body has no such limit. A JSON body
carries the response only, so a ``notifications/progress`` sent during the call is dropped.
The choice is therefore made per request: a POST whose JSON-RPC request carries
``params._meta.progressToken`` (and whose client accepts ``text/event-stream``) is answered
with the SDK's SSE stream (its notifications, then the result); every other request keeps
the JSON body.

The SDK's ``StreamableHTTPSessionManager`` reads its ``json_response`` once per request,
in the task handling that request (a stateless transport is built from it, or it is passed
to the handler of the per-request protocol), so a context variable set around that task
decides for that request alone.
"""

import contextvars
import json
from collections.abc import Callable
from typing import Any

#: None: the manager's own setting; False: SSE for this request (it carries a progress token).
_json_response_here: contextvars.ContextVar[bool | None] = contextvars.ContextVar(
    "galaxy_mcp_analysis_json_response", default=None
)

#: A callable the operations call with (progress, total, message) while they wait.
ProgressReporter = Callable[[float, float | None, str | None], None]


def carries_progress_token(body: bytes) -> bool:
    """Whether a POST body is one JSON-RPC request with ``params._meta.progressToken``."""
    if b"progressToken" not in body:  # most requests: a scan, not a second parse of the body
        return False
    try:
        message = json.loads(body)
    except (ValueError, RecursionError):
        return False
    if not isinstance(message, dict) or "method" not in message or "id" not in message:
        return False
    params = message.get("params")
    meta = params.get("_meta") if isinstance(params, dict) else None
    return isinstance(meta, dict) and isinstance(meta.get("progressToken"), str | int)


def accepts_event_stream(headers: list[tuple[bytes, bytes]]) -> bool:
    """Whether the request's Accept header admits ``text/event-stream`` (the SDK's own reading)."""
    from mcp.server.streamable_http import check_accept_headers
    from starlette.requests import Request

    return check_accept_headers(Request({"type": "http", "headers": headers}))[1]


async def _read_body(receive) -> tuple[bytes, Any]:
    """The whole request body, and a ``receive`` that hands it on once, then the original's messages."""
    chunks = []
    while True:
        message = await receive()
        if message["type"] != "http.request":  # a disconnect: pass it on as the first message
            pending = [message]
            break
        chunks.append(message.get("body", b""))
        if not message.get("more_body", False):
            pending = [{"type": "http.request", "body": b"".join(chunks), "more_body": False}]
            break

    async def replay():
        return pending.pop(0) if pending else await receive()

    return b"".join(chunks), replay


def per_request_session_manager(base: type) -> type:
    """``base`` (FastMCP's session manager class) choosing JSON or SSE per request."""

    class PerRequestResponseSessionManager(base):
        @property
        def json_response(self) -> bool:
            here = _json_response_here.get()
            return self._json_response_default if here is None else here

        @json_response.setter
        def json_response(self, value: bool) -> None:
            self._json_response_default = value

        async def _handle_request(self, scope, receive, send) -> None:
            if scope.get("method") != "POST" or not self._json_response_default:
                await super()._handle_request(scope, receive, send)
                return
            body, receive = await _read_body(receive)
            sse = carries_progress_token(body) and accepts_event_stream(scope.get("headers", []))
            reset = _json_response_here.set(False if sse else None)
            try:
                await super()._handle_request(scope, receive, send)
            finally:
                _json_response_here.reset(reset)

    PerRequestResponseSessionManager.__qualname__ = f"PerRequestResponse{base.__name__}"
    return PerRequestResponseSessionManager


def progress_reporter() -> ProgressReporter | None:
    """For a tool running in FastMCP's worker thread: a reporter when the request has a progress token.

    None when it has none (or outside a tool call), so a wait without one costs nothing. Each
    report is sent from the event loop and waits until it is written to the request's stream.
    """
    import anyio.from_thread
    from fastmcp.server.dependencies import get_context

    try:
        context = get_context()
        request = context.request_context
    except (RuntimeError, LookupError):
        return None
    meta = request.meta if request is not None else None  # the request's raw _meta block
    if not meta or meta.get("progressToken") is None:
        return None

    def report(progress: float, total: float | None, message: str | None) -> None:
        anyio.from_thread.run(context.report_progress, progress, total, message)

    return report
