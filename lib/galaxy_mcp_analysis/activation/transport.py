"""Patches of how MCP requests travel: JSON bodies (SSE only for progress) and the MCP routes first.
"""

import functools
import inspect

from galaxy_mcp_analysis.activation.built_server import (
    nested_code_names,
    WRAPPED_MARK,
)
from galaxy_mcp_analysis.core.settings import Settings


def check_json_responses() -> str | None:
    import fastmcp
    from fastmcp import FastMCP

    if not hasattr(fastmcp.settings, "json_response"):
        return "fastmcp.settings.json_response is gone"
    parameter = inspect.signature(FastMCP.http_app).parameters.get("json_response")
    if parameter is None or parameter.default is not None:
        return "FastMCP.http_app no longer falls back to fastmcp.settings.json_response"
    # The per-request choice (mcp.progress): FastMCP builds its session manager by this module-level
    # name; the SDK's manager routes every request through self._handle_request, reads
    # self.json_response there, and its transports read the Accept header the same way.
    from fastmcp.server import http as fastmcp_http
    from mcp.server import streamable_http
    from mcp.server.streamable_http_manager import StreamableHTTPSessionManager

    manager = getattr(fastmcp_http, "FastMCPStreamableHTTPSessionManager", None)
    if not (isinstance(manager, type) and issubclass(manager, StreamableHTTPSessionManager)):
        return "fastmcp.server.http.FastMCPStreamableHTTPSessionManager is gone"
    if "FastMCPStreamableHTTPSessionManager" not in nested_code_names(fastmcp_http.create_streamable_http_app.__code__):
        return "create_streamable_http_app no longer builds its session manager through the module-level name"
    for name in ("__init__", "_handle_request", "_handle_stateless_request"):
        if "json_response" not in nested_code_names(getattr(StreamableHTTPSessionManager, name).__code__):
            return f"StreamableHTTPSessionManager.{name} no longer reads json_response"
    if not callable(getattr(streamable_http, "check_accept_headers", None)):
        return "mcp.server.streamable_http.check_accept_headers is gone"
    return None


def apply_json_responses(settings: Settings) -> None:
    import fastmcp

    # Galaxy calls mcp.http_app() without json_response, so the setting decides. Plain
    # JSON bodies have no per-event size limit (the mcp client refuses SSE events over
    # 1 MiB, and a 1 MiB read is larger than that once serialized); Galaxy's MCP server
    # is stateless and sends notifications only when asked for progress (below).
    fastmcp.settings.json_response = True
    # Except where the client asked for progress: a request carrying a progressToken gets the
    # SDK's SSE stream (notifications, then the result); every other request stays JSON.
    from fastmcp.server import http as fastmcp_http

    from galaxy_mcp_analysis.mcp.progress import per_request_session_manager

    if not getattr(fastmcp_http.FastMCPStreamableHTTPSessionManager, WRAPPED_MARK, False):
        manager = per_request_session_manager(fastmcp_http.FastMCPStreamableHTTPSessionManager)
        setattr(manager, WRAPPED_MARK, True)
        fastmcp_http.FastMCPStreamableHTTPSessionManager = manager


def check_mcp_routes_first() -> str | None:
    from galaxy.webapps.galaxy import fast_app
    from starlette.routing import Route

    include = getattr(fast_app, "include_mcp", None)
    if not callable(include):
        return "galaxy.webapps.galaxy.fast_app.include_mcp is gone"
    if "include_mcp" not in fast_app.initialize_fast_app.__code__.co_names:
        return "initialize_fast_app no longer exposes the MCP app through include_mcp"
    names = set(inspect.unwrap(include).__code__.co_names)
    # 26.1.2 appends exact-path routes to the MCP app; 26.1.0 and 26.1.1 mount it (app.mount).
    if not ({"routes", "append"} <= names or "mount" in names):
        return "include_mcp no longer adds the MCP app to the app's route list (appended routes or a mount)"
    if "endpoint" not in inspect.signature(Route).parameters:
        return "starlette Route no longer takes an endpoint"
    return None


def after_include_mcp(step, mark: str = WRAPPED_MARK) -> None:
    """Wrap Galaxy's ``include_mcp`` once per ``mark``: ``step(app, gx_app, mcp_app)`` runs after it."""
    from galaxy.webapps.galaxy import fast_app

    original = fast_app.include_mcp
    if getattr(original, mark, False):
        return

    @functools.wraps(original)
    def include_mcp(app, gx_app, mcp_app):
        original(app, gx_app, mcp_app)
        step(app, gx_app, mcp_app)

    setattr(include_mcp, mark, True)
    fast_app.include_mcp = include_mcp


def apply_mcp_routes_first(settings: Settings) -> None:
    def routes_first(app, gx_app, mcp_app):
        # Galaxy appends the MCP routes after its few hundred API routes, so every MCP request was
        # matched against all of them first; exact-path routes to the MCP app (26.1.2), or its
        # mount at /api/mcp/ (26.1.0, 26.1.1), moved to the front, still only match /api/mcp
        # (and /api/mcp/...), which no other route serves.
        routes = app.router.routes
        mcp_routes = [route for route in routes if mcp_app is not None
                      and mcp_app in (getattr(route, "endpoint", None), getattr(route, "app", None))]
        if mcp_app is not None and mcp_routes:
            routes[:] = mcp_routes + [route for route in routes if route not in mcp_routes]

    after_include_mcp(routes_first)


def request_state_key(id_secret: str) -> bytes:
    """The key sealing ``requestState`` (MCP 2026-07-28), from Galaxy's id_secret: one in every worker."""
    import hashlib

    return hashlib.sha256(f"galaxy-mcp-analysis request state|{id_secret}".encode()).digest()


def check_request_state_key() -> str | None:
    from fastmcp import FastMCP
    from mcp.server.request_state import (
        RequestStateBoundary,
        RequestStateSecurity,
    )

    if "keys" not in inspect.signature(RequestStateSecurity).parameters:
        return "mcp.server.request_state.RequestStateSecurity no longer takes keys="
    middleware = getattr(getattr(FastMCP("check"), "_mcp_server", None), "middleware", None)
    if not isinstance(middleware, list) or not any(isinstance(m, RequestStateBoundary) for m in middleware):
        return "FastMCP's low-level server no longer installs the SDK's RequestStateBoundary in its middleware list"
    return None


def apply_request_state_key(settings: Settings) -> None:
    from galaxy_mcp_analysis.activation.built_server import add_server_customizer

    def shared_key(mcp, gx_app):
        # FastMCP seals requestState under a key of this process alone: a client's answer to an
        # input_required result (mcp.consent) reaching another gunicorn worker would be refused.
        from mcp.server.request_state import (
            RequestStateBoundary,
            RequestStateSecurity,
        )

        security = RequestStateSecurity(keys=[request_state_key(gx_app.config.id_secret)], audience=mcp.name)
        middleware = mcp._mcp_server.middleware
        for index, present in enumerate(middleware):
            if isinstance(present, RequestStateBoundary):
                middleware[index] = RequestStateBoundary(security, default_audience=mcp.name)

    add_server_customizer(shared_key)
