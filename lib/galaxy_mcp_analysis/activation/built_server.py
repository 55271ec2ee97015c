"""The hook every server-side patch shares: Galaxy's built FastMCP server, customized in patch order.

``add_server_customizer`` wraps Galaxy's ``get_mcp_app`` once; each customizer then runs on the
server it returns. Also here: the check that the hook still fits, and the request-scoped
database session every tool call of the built server runs in.
"""

import contextvars
import functools
import types

from galaxy_mcp_analysis.core.settings import Settings


#: Set on what a patch wrapped, so applying twice (a second activation) wraps once.
WRAPPED_MARK = "__galaxy_mcp_analysis_wrapped__"


def nested_code_names(code: types.CodeType) -> set[str]:
    """Global names used by a function and every function nested inside it."""
    names = set(code.co_names)
    for const in code.co_consts:
        if isinstance(const, types.CodeType):
            names |= nested_code_names(const)
    return names


def check_mcp_tools() -> str | None:
    from fastmcp import FastMCP
    from galaxy.webapps.galaxy import fast_app
    from galaxy.webapps.galaxy.api import mcp as galaxy_mcp

    called = getattr(fast_app, "get_mcp_app", None)
    if called is None or not (called is galaxy_mcp.get_mcp_app or getattr(called, WRAPPED_MARK, False)):
        return "fast_app no longer builds the MCP app with galaxy.webapps.galaxy.api.mcp.get_mcp_app"
    if "get_mcp_app" not in fast_app.get_mcp_lifespan.__code__.co_names:
        return "get_mcp_lifespan no longer calls get_mcp_app"
    # The request context our tools build reuses these helpers of Galaxy's MCP module.
    for name in ("_StaticRequest", "_StaticResponse", "get_mcp_url_builder"):
        if not hasattr(galaxy_mcp, name):
            return f"galaxy.webapps.galaxy.api.mcp.{name} is gone"
    if not callable(getattr(FastMCP, "add_tool", None)):
        return "FastMCP.add_tool is gone"
    from fastmcp.server.providers.local_provider import LocalProvider

    # run_tool and get_tool_details are declared again (tools/making_inputs.py): the stock ones are removed first.
    if not callable(getattr(LocalProvider, "remove_tool", None)) or not hasattr(FastMCP, "local_provider"):
        return "FastMCP.local_provider.remove_tool is gone"
    from fastmcp.tools.base import ToolResult

    # mcp.result_text builds results and reshapes stock ones' text blocks.
    if not {"content", "structured_content"} <= set(ToolResult.model_fields):
        return "fastmcp ToolResult no longer has content and structured_content"
    # tools/list's caching hint (tools/orientation.py) goes in the SDK server's per-method map, which its runner reads.
    if not isinstance(getattr(getattr(FastMCP("cache-hint-self-check"), "_mcp_server", None), "cache_hints", None), dict):
        return "FastMCP's SDK server no longer keeps cache_hints"
    return None


#: Run on Galaxy's FastMCP server right after get_mcp_app builds it, in patch order.
_SERVER_CUSTOMIZERS: list = []


def _customize_built_mcp_app() -> None:
    """Wrap get_mcp_app once so every patch that customizes the built server can hook in."""
    from galaxy.webapps.galaxy import fast_app
    from galaxy.webapps.galaxy.api import mcp as galaxy_mcp

    if getattr(fast_app.get_mcp_app, WRAPPED_MARK, False):
        return
    original = galaxy_mcp.get_mcp_app

    @functools.wraps(original)
    def get_mcp_app(gx_app):
        mcp_app = original(gx_app)
        for customize in _SERVER_CUSTOMIZERS:
            customize(mcp_app.state.mcp_server, gx_app)
        return mcp_app

    setattr(get_mcp_app, WRAPPED_MARK, True)
    # fast_app imported the function by name, so its reference is the one Galaxy calls.
    fast_app.get_mcp_app = get_mcp_app
    galaxy_mcp.get_mcp_app = get_mcp_app


def add_server_customizer(customize) -> None:
    """Run ``customize(mcp_server, gx_app)`` on Galaxy's FastMCP server each time get_mcp_app builds it."""
    _customize_built_mcp_app()
    _SERVER_CUSTOMIZERS.append(customize)


def check_request_session() -> str | None:
    from fastmcp.server.middleware import Middleware
    from galaxy.model import base as model_base

    if not isinstance(getattr(model_base, "REQUEST_ID", None), contextvars.ContextVar):
        return "galaxy.model.base.REQUEST_ID is no longer the context variable that scopes sessions"
    for name in ("set_request_id", "unset_request_id", "request_scopefunc"):
        if not hasattr(model_base.SharedModelMapping, name):
            return f"galaxy.model.base.SharedModelMapping.{name} is gone"
    if not hasattr(Middleware, "on_call_tool"):
        return "fastmcp Middleware.on_call_tool is gone"
    return check_mcp_tools()  # it hooks into the same built server


def apply_request_session(settings: Settings) -> None:
    from galaxy_mcp_analysis.mcp.session import RequestScopedSession
    from galaxy_mcp_analysis.mcp.stack import place

    add_server_customizer(lambda mcp, gx_app: place(mcp, RequestScopedSession(gx_app)))
