"""Every runtime patch of the patch set: its self-check, how it applies, and the table (``PATCHES``).

Each check inspects the Galaxy object a patch relies on, without changing it, and
names what moved if the shape is not the one verified on Galaxy 26.1.2. The generic
checking and applying is ``activation.registry``; this module is the one place that
knows what is patched, so it imports the layers below (MCP surface, operations).
"""

import contextvars
import functools
import inspect
import logging
import types

from galaxy_mcp_analysis.activation.registry import (
    Patch,
    PatchSetRefused,
)
from galaxy_mcp_analysis.core.settings import Settings

_WRAPPED_MARK = "__galaxy_mcp_analysis_wrapped__"


def _nested_code_names(code: types.CodeType) -> set[str]:
    """Global names used by a function and every function nested inside it."""
    names = set(code.co_names)
    for const in code.co_consts:
        if isinstance(const, types.CodeType):
            names |= _nested_code_names(const)
    return names


def check_operations_manager() -> str | None:
    from galaxy.agents.operations import AgentOperationsManager
    from galaxy.webapps.galaxy.api import mcp as galaxy_mcp

    from galaxy_mcp_analysis.operations import AnalysisOperationsManager

    current = getattr(galaxy_mcp, "AgentOperationsManager", None)
    if current not in (AgentOperationsManager, AnalysisOperationsManager):
        return "the MCP module no longer binds AgentOperationsManager from galaxy.agents.operations"
    if "AgentOperationsManager" not in _nested_code_names(inspect.unwrap(galaxy_mcp.get_mcp_app).__code__):
        return "get_mcp_app no longer builds its operations manager through the module-level name"
    return None


def apply_operations_manager(settings: Settings) -> None:
    from galaxy.webapps.galaxy.api import mcp as galaxy_mcp

    from galaxy_mcp_analysis.operations import AnalysisOperationsManager

    AnalysisOperationsManager.settings = settings
    galaxy_mcp.AgentOperationsManager = AnalysisOperationsManager


def check_mcp_tools() -> str | None:
    from fastmcp import FastMCP
    from galaxy.webapps.galaxy import fast_app
    from galaxy.webapps.galaxy.api import mcp as galaxy_mcp

    called = getattr(fast_app, "get_mcp_app", None)
    if called is None or not (called is galaxy_mcp.get_mcp_app or getattr(called, _WRAPPED_MARK, False)):
        return "fast_app no longer builds the MCP app with galaxy.webapps.galaxy.api.mcp.get_mcp_app"
    if "get_mcp_app" not in fast_app.get_mcp_lifespan.__code__.co_names:
        return "get_mcp_lifespan no longer calls get_mcp_app"
    # The request context our tools build reuses these helpers of Galaxy's MCP module.
    for name in ("_StaticRequest", "_StaticResponse", "get_mcp_url_builder"):
        if not hasattr(galaxy_mcp, name):
            return f"galaxy.webapps.galaxy.api.mcp.{name} is gone"
    if not callable(getattr(FastMCP, "add_tool", None)):
        return "FastMCP.add_tool is gone"
    from fastmcp.tools.base import ToolResult

    # mcp.result_text builds results and reshapes stock ones' text blocks.
    if not {"content", "structured_content"} <= set(ToolResult.model_fields):
        return "fastmcp ToolResult no longer has content and structured_content"
    return None


#: Run on Galaxy's FastMCP server right after get_mcp_app builds it, in patch order.
_SERVER_CUSTOMIZERS: list = []


def _customize_built_mcp_app() -> None:
    """Wrap get_mcp_app once so every patch that customizes the built server can hook in."""
    from galaxy.webapps.galaxy import fast_app
    from galaxy.webapps.galaxy.api import mcp as galaxy_mcp

    if getattr(fast_app.get_mcp_app, _WRAPPED_MARK, False):
        return
    original = galaxy_mcp.get_mcp_app

    @functools.wraps(original)
    def get_mcp_app(gx_app):
        mcp_app = original(gx_app)
        for customize in _SERVER_CUSTOMIZERS:
            customize(mcp_app.state.mcp_server, gx_app)
        return mcp_app

    setattr(get_mcp_app, _WRAPPED_MARK, True)
    # fast_app imported the function by name, so its reference is the one Galaxy calls.
    fast_app.get_mcp_app = get_mcp_app
    galaxy_mcp.get_mcp_app = get_mcp_app


def apply_mcp_tools(settings: Settings) -> None:
    from galaxy_mcp_analysis import tools
    from galaxy_mcp_analysis.mcp.declaration import (
        register_analysis_tools,
        TOOL_SPECS,
    )

    def register(mcp, gx_app):
        register_analysis_tools(
            mcp, gx_app, TOOL_SPECS, tools.STOCK_ANNOTATIONS, tools.STOCK_DESCRIPTIONS, tools.STOCK_TEXT
        )

    _customize_built_mcp_app()
    _SERVER_CUSTOMIZERS.append(register)


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

    _customize_built_mcp_app()
    _SERVER_CUSTOMIZERS.append(lambda mcp, gx_app: mcp.add_middleware(RequestScopedSession(gx_app)))


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
    if "FastMCPStreamableHTTPSessionManager" not in _nested_code_names(fastmcp_http.create_streamable_http_app.__code__):
        return "create_streamable_http_app no longer builds its session manager through the module-level name"
    for name in ("__init__", "_handle_request", "_handle_stateless_request"):
        if "json_response" not in _nested_code_names(getattr(StreamableHTTPSessionManager, name).__code__):
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

    if not getattr(fastmcp_http.FastMCPStreamableHTTPSessionManager, _WRAPPED_MARK, False):
        manager = per_request_session_manager(fastmcp_http.FastMCPStreamableHTTPSessionManager)
        setattr(manager, _WRAPPED_MARK, True)
        fastmcp_http.FastMCPStreamableHTTPSessionManager = manager


def check_page_validator() -> str | None:
    from galaxy.managers import (
        markdown_parse,
        markdown_util,
    )

    current = getattr(markdown_util, "validate_galaxy_markdown", None)
    if current is None or inspect.unwrap(current) is not inspect.unwrap(markdown_parse.validate_galaxy_markdown):
        return "markdown_util no longer validates pages with markdown_parse.validate_galaxy_markdown"
    if "validate_galaxy_markdown" not in markdown_util._validate.__code__.co_names:
        return "markdown_util._validate no longer calls validate_galaxy_markdown"
    try:
        inspect.unwrap(current)("```galaxy\nno_such_directive()\n```\n")
    except ValueError:
        return None
    return "validate_galaxy_markdown no longer rejects an unknown directive with ValueError"


def apply_page_validator(settings: Settings) -> None:
    from galaxy.managers import (
        markdown_parse,
        markdown_util,
    )

    from galaxy_mcp_analysis.core.page_directives import validate

    original = markdown_parse.validate_galaxy_markdown
    if getattr(markdown_util.validate_galaxy_markdown, _WRAPPED_MARK, False):
        return

    @functools.wraps(original)
    def validate_galaxy_markdown(galaxy_markdown, internal=True):
        # Same verdict as Galaxy's (diagnose asks the original); a rejection now explains
        # itself. PageContentError is a ValueError, which markdown_util turns into the
        # MalformedContents the page API and UI already report.
        validate(galaxy_markdown, internal=internal)

    setattr(validate_galaxy_markdown, _WRAPPED_MARK, True)
    # Page writes reach the validator through markdown_util's imported name.
    markdown_util.validate_galaxy_markdown = validate_galaxy_markdown
    markdown_parse.validate_galaxy_markdown = validate_galaxy_markdown


def check_coded_errors() -> str | None:
    from fastmcp.server.middleware import Middleware
    from galaxy import exceptions
    from galaxy.webapps.galaxy.api import mcp as galaxy_mcp

    handler = getattr(galaxy_mcp, "_mcp_error_handler", None)
    if handler is None:
        return "galaxy.webapps.galaxy.api.mcp._mcp_error_handler is gone"
    # Stock tools must keep the original Galaxy exception reachable (raise ... from e),
    # since its class decides the code.
    from galaxy_mcp_analysis.mcp.errors import exception_chain

    original = exceptions.ObjectNotFound("self-check")
    galaxy_log = logging.getLogger(galaxy_mcp.__name__)
    disabled, galaxy_log.disabled = galaxy_log.disabled, True  # the handler logs what it catches
    try:
        with handler("self-check"):
            raise original
    except Exception as raised:
        if original not in exception_chain(raised):
            return "_mcp_error_handler no longer keeps the original exception as the cause"
    else:
        return "_mcp_error_handler no longer re-raises"
    finally:
        galaxy_log.disabled = disabled
    if not hasattr(Middleware, "on_call_tool"):
        return "fastmcp Middleware.on_call_tool is gone"
    import fastmcp.server.server as fastmcp_server

    for module, name in zip((fastmcp_server, galaxy_mcp), TOOL_FAILURE_LOGGERS):
        if getattr(getattr(module, "logger", None), "name", None) != name:
            return f"{module.__name__} no longer reports failed tool calls on the logger {name!r}"
    return check_mcp_tools()


#: The loggers that report a failed tools/call: FastMCP's server, and Galaxy's stock tools' handler.
TOOL_FAILURE_LOGGERS = ("fastmcp.server.server", "galaxy.webapps.galaxy.api.mcp")


def apply_coded_errors(settings: Settings) -> None:
    from galaxy_mcp_analysis.mcp.errors import (
        CallersMistakesAsWarnings,
        CodedToolErrors,
    )

    for name in TOOL_FAILURE_LOGGERS:  # an agent's mistake is not the admin's error: one warning line, no traceback
        logger = logging.getLogger(name)
        if not any(isinstance(existing, CallersMistakesAsWarnings) for existing in logger.filters):
            logger.addFilter(CallersMistakesAsWarnings())
    _customize_built_mcp_app()
    _SERVER_CUSTOMIZERS.append(lambda mcp, gx_app: mcp.add_middleware(CodedToolErrors()))


def check_header_auth() -> str | None:
    from fastmcp.server import dependencies
    from fastmcp.server.middleware import MiddlewareContext
    from fastmcp.server.transforms import Transform
    from fastmcp.tools.base import Tool
    from galaxy.webapps.galaxy.api import mcp as galaxy_mcp

    if not callable(getattr(dependencies, "get_http_request", None)):
        return "fastmcp.server.dependencies.get_http_request is gone"
    if not callable(getattr(MiddlewareContext, "copy", None)):
        return "fastmcp MiddlewareContext.copy is gone (the middleware passes a call on with the key filled in)"
    if not all(callable(getattr(Transform, name, None)) for name in ("list_tools", "get_tool")):
        return "fastmcp Transform.list_tools/get_tool are gone"
    if "parameters" not in Tool.model_fields:
        return "fastmcp Tool.parameters is gone"
    tool_code = [
        const
        for const in inspect.unwrap(galaxy_mcp.get_mcp_app).__code__.co_consts
        if isinstance(const, types.CodeType) and const.co_name.isidentifier() and "ctx" in const.co_varnames
    ]
    if len(tool_code) < 37 or any("api_key" not in code.co_varnames[: code.co_argcount] for code in tool_code):
        return "a stock MCP tool no longer takes its key as the api_key argument"
    return check_mcp_tools()


def apply_header_auth(settings: Settings) -> None:
    from galaxy_mcp_analysis.mcp.api_key import (
        HeaderApiKey,
        OptionalApiKey,
    )

    def accept_header_keys(mcp, gx_app):
        mcp.add_middleware(HeaderApiKey())
        mcp.add_transform(OptionalApiKey())

    _customize_built_mcp_app()
    _SERVER_CUSTOMIZERS.append(accept_header_keys)


def check_plain_logging() -> str | None:
    import fastmcp

    if not hasattr(fastmcp.settings, "enable_rich_logging"):
        return "fastmcp.settings.enable_rich_logging is gone"
    if not logging.getLogger("fastmcp").handlers and not logging.getLogger("fastmcp").propagate:
        return "fastmcp's logger has neither handlers nor propagation; its records would be lost"
    return None


def apply_plain_logging(settings: Settings) -> None:
    import fastmcp

    # FastMCP logs a failing tool's exception through rich's handler on the event loop, and
    # rich highlights the message in time quadratic in its length: one error echoing a 2 MiB
    # argument stopped the whole server (not even /api/version answered) for over ten minutes.
    # Its records go to Galaxy's own log handlers instead, like every other library's.
    fastmcp.settings.enable_rich_logging = False
    fastmcp_log = logging.getLogger("fastmcp")
    for handler in list(fastmcp_log.handlers):
        fastmcp_log.removeHandler(handler)
    fastmcp_log.propagate = True


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


def apply_mcp_routes_first(settings: Settings) -> None:
    from galaxy.webapps.galaxy import fast_app

    original = fast_app.include_mcp
    if getattr(original, _WRAPPED_MARK, False):
        return

    @functools.wraps(original)
    def include_mcp(app, gx_app, mcp_app):
        original(app, gx_app, mcp_app)
        # Galaxy appends the MCP routes after its few hundred API routes, so every MCP request was
        # matched against all of them first; exact-path routes to the MCP app (26.1.2), or its
        # mount at /api/mcp/ (26.1.0, 26.1.1), moved to the front, still only match /api/mcp
        # (and /api/mcp/...), which no other route serves.
        routes = app.router.routes
        mcp_routes = [route for route in routes if mcp_app is not None
                      and mcp_app in (getattr(route, "endpoint", None), getattr(route, "app", None))]
        if mcp_app is not None and mcp_routes:
            routes[:] = mcp_routes + [route for route in routes if route not in mcp_routes]

    setattr(include_mcp, _WRAPPED_MARK, True)
    fast_app.include_mcp = include_mcp


def check_policy() -> str | None:
    from fastmcp.server.middleware import Middleware
    from galaxy.config import GalaxyAppConfiguration
    from galaxy.managers.users import UserManager
    from galaxy.model import User
    from galaxy.tools import Tool

    if not hasattr(Middleware, "on_list_tools"):
        return "fastmcp Middleware.on_list_tools is gone"
    if not callable(getattr(UserManager, "by_api_key", None)):
        return "galaxy.managers.users.UserManager.by_api_key is gone (the policy identifies callers by key)"
    for owner, name in ((User, "all_roles"), (Tool, "get_panel_section"), (GalaxyAppConfiguration, "is_admin_user")):
        if not callable(getattr(owner, name, None)):
            return f"{owner.__module__}.{owner.__name__}.{name} is gone"
    return check_header_auth()  # the caller's key comes the same way


def apply_policy(settings: Settings) -> None:
    from galaxy_mcp_analysis.activation.registry import (
        announce,
        PatchSetRefused,
    )
    from galaxy_mcp_analysis.core.policy import PolicyError
    from galaxy_mcp_analysis.mcp.audit import audit_target
    from galaxy_mcp_analysis.mcp.policy import (
        admin_rules_line,
        check_policy_file,
        policy_path,
        PolicyRules,
        PolicySource,
    )

    def validated(path):
        try:
            check_policy_file(path)
        except PolicyError as error:
            raise PatchSetRefused(f"galaxy-mcp-analysis refuses to start Galaxy: {error}") from None
        return path

    validated(policy_path())  # the variable's file, before Galaxy builds anything

    def enforce_policy(mcp, gx_app):
        # Appended after every other patch's middleware: inside CodedToolErrors (refusals are coded)
        # and HeaderApiKey (the key is filled in); a middleware inserted before it wraps it.
        path = validated(policy_path(gx_app))
        mcp.add_middleware(PolicyRules(gx_app, PolicySource(path)))
        announce(admin_rules_line(path, audit_target(settings, gx_app)))

    _customize_built_mcp_app()
    _SERVER_CUSTOMIZERS.append(enforce_policy)


def check_audit_trail() -> str | None:
    from fastmcp import FastMCP

    if not isinstance(getattr(FastMCP("audit-self-check"), "middleware", None), list):
        return "FastMCP.middleware is no longer the list of middleware, outermost first"
    return check_request_session()  # the same hooks: on_call_tool, a request id for its own user lookup


def apply_audit_trail(settings: Settings) -> None:
    from galaxy_mcp_analysis.mcp.audit import (
        AUDIT_LOG_OPTION,
        audit_target,
        outermost_audit_trail,
    )

    def unwritable(e: OSError, where: str) -> PatchSetRefused:  # an unwritable path stops start-up, naming it
        return PatchSetRefused(f"galaxy-mcp-analysis refuses to start Galaxy: the audit trail cannot be written "
                               f"({where}): {e.strerror}")

    try:
        customize = outermost_audit_trail(settings)
    except OSError as e:
        raise unwritable(e, f"GALAXY_MCP_ANALYSIS_AUDIT_LOG={settings.audit_log}") from None

    def add_audit_trail(mcp, gx_app):
        try:
            customize(mcp, gx_app)
        except OSError as e:
            raise unwritable(e, f"galaxy.yml {AUDIT_LOG_OPTION}: {audit_target(settings, gx_app)}") from None

    _customize_built_mcp_app()
    _SERVER_CUSTOMIZERS.append(add_audit_trail)


#: Every runtime patch, in the order activation checks and applies them (one row each in PATCHES.md).
PATCHES: tuple[Patch, ...] = (
    Patch(
        id="operations-manager",
        target="galaxy.webapps.galaxy.api.mcp.AgentOperationsManager",
        summary="Every Galaxy MCP tool builds AnalysisOperationsManager, the subclass with the new operations.",
        check=check_operations_manager,
        apply=apply_operations_manager,
    ),
    Patch(
        id="mcp-tools",
        target="galaxy.webapps.galaxy.fast_app.get_mcp_app",
        summary="After Galaxy builds its FastMCP server, register the patch set's tools on it.",
        check=check_mcp_tools,
        apply=apply_mcp_tools,
    ),
    Patch(
        id="mcp-request-session",
        target="galaxy.model.base.REQUEST_ID",
        summary="Each MCP tool call (Galaxy's and ours) gets its own database session, closed after the call.",
        check=check_request_session,
        apply=apply_request_session,
    ),
    Patch(
        id="mcp-json-responses",
        target="fastmcp.settings.json_response",
        summary="/api/mcp answers with plain JSON bodies instead of SSE, except requests carrying a progressToken.",
        check=check_json_responses,
        apply=apply_json_responses,
    ),
    Patch(
        id="page-validator",
        target="galaxy.managers.markdown_util.validate_galaxy_markdown",
        summary="Page markdown Galaxy rejects is explained (line, directive, argument, rule, corrected line).",
        check=check_page_validator,
        apply=apply_page_validator,
    ),
    Patch(
        id="mcp-coded-errors",
        target="galaxy.webapps.galaxy.api.mcp._mcp_error_handler",
        summary="Every tool error (Galaxy's 37 tools and ours) starts with a stable [CODE] and ends with a Suggestion.",
        check=check_coded_errors,
        apply=apply_coded_errors,
    ),
    Patch(
        id="mcp-header-auth",
        target="fastmcp.server.dependencies.get_http_request",
        summary="The API key may come from the x-api-key or Authorization: Bearer header instead of the api_key argument.",
        check=check_header_auth,
        apply=apply_header_auth,
    ),
    Patch(
        id="mcp-plain-logging",
        target="fastmcp.settings.enable_rich_logging",
        summary="FastMCP's log records go to Galaxy's log handlers, not rich's (quadratic in a message's length).",
        check=check_plain_logging,
        apply=apply_plain_logging,
    ),
    Patch(
        id="mcp-routes-first",
        target="galaxy.webapps.galaxy.fast_app.include_mcp",
        summary="/api/mcp is matched first instead of after every Galaxy API route (profiled: 5-20% of a small call).",
        check=check_mcp_routes_first,
        apply=apply_mcp_routes_first,
    ),
    Patch(
        id="mcp-policy",
        target="fastmcp.server.middleware.Middleware.on_call_tool",
        summary="The admin's policy file (rules, limits, masks, tool sets) applies to every MCP call and tools/list.",
        check=check_policy,
        apply=apply_policy,
    ),
    Patch(
        id="mcp-audit",
        target="fastmcp.FastMCP.middleware",
        summary=("With GALAXY_MCP_ANALYSIS_AUDIT_LOG (or galaxy.yml mcp_analysis_audit_log) set, "
                 "one JSON line per MCP tool call (who, what, outcome, ids)."),
        check=check_audit_trail,
        apply=apply_audit_trail,
    ),
)
