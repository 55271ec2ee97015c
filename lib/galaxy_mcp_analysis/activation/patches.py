"""Every runtime patch of the patch set, in the table activation applies (``PATCHES``).

Each check inspects the Galaxy object a patch relies on, without changing it, and
names what moved if the shape is not the one verified on Galaxy 26.1.2. The generic
checking and applying is ``activation.registry``. Here: the table, and the patches of the
operations manager, the tools and the page validator; the others live by subject:
``built_server`` (the shared hook, the request session), ``transport`` (JSON bodies, routes),
``error_reporting`` (coded errors, logging), ``access`` (header keys, policy, audit),
``request_models`` (the preflight's request model, built once per tool), ``tasks`` (MCP tasks) and
``tool_search_index`` (Galaxy's tool search index, built once the process is elected config watcher).
"""

import functools
import inspect

from galaxy_mcp_analysis.activation.access import (
    apply_audit_trail,
    apply_header_auth,
    apply_policy,
    check_audit_trail,
    check_header_auth,
    check_policy,
)
from galaxy_mcp_analysis.activation.built_server import (
    add_server_customizer,
    apply_request_session,
    check_mcp_tools,
    check_request_session,
    nested_code_names,
    WRAPPED_MARK,
)
from galaxy_mcp_analysis.activation.error_reporting import (
    apply_coded_errors,
    apply_plain_logging,
    check_coded_errors,
    check_plain_logging,
)
from galaxy_mcp_analysis.activation.local_uploads import (
    apply_upload_route,
    check_upload_route,
)
from galaxy_mcp_analysis.activation.oauth_signin import (
    apply_oauth,
    check_oauth,
)
from galaxy_mcp_analysis.activation.registry import Patch
from galaxy_mcp_analysis.activation.request_models import (
    apply_request_model,
    check_request_model,
)
from galaxy_mcp_analysis.activation.tasks import (
    apply_tasks,
    check_tasks,
)
from galaxy_mcp_analysis.activation.tool_search_index import (
    apply_search_index,
    check_search_index,
)
from galaxy_mcp_analysis.activation.transport import (
    apply_json_responses,
    apply_mcp_routes_first,
    apply_request_state_key,
    check_json_responses,
    check_mcp_routes_first,
    check_request_state_key,
)
from galaxy_mcp_analysis.core.settings import Settings


def check_operations_manager() -> str | None:
    from galaxy.agents.operations import AgentOperationsManager
    from galaxy.webapps.galaxy.api import mcp as galaxy_mcp

    from galaxy_mcp_analysis.operations import AnalysisOperationsManager

    current = getattr(galaxy_mcp, "AgentOperationsManager", None)
    if current not in (AgentOperationsManager, AnalysisOperationsManager):
        return "the MCP module no longer binds AgentOperationsManager from galaxy.agents.operations"
    if "AgentOperationsManager" not in nested_code_names(inspect.unwrap(galaxy_mcp.get_mcp_app).__code__):
        return "get_mcp_app no longer builds its operations manager through the module-level name"
    return None


def apply_operations_manager(settings: Settings) -> None:
    from galaxy.webapps.galaxy.api import mcp as galaxy_mcp

    from galaxy_mcp_analysis.operations import AnalysisOperationsManager

    AnalysisOperationsManager.settings = settings
    galaxy_mcp.AgentOperationsManager = AnalysisOperationsManager


def apply_mcp_tools(settings: Settings) -> None:
    from galaxy_mcp_analysis import tools
    from galaxy_mcp_analysis.mcp.declaration import (
        register_analysis_tools,
        TOOL_SPECS,
    )

    from galaxy_mcp_analysis.mcp.result_text import ShapedText
    from galaxy_mcp_analysis.mcp.stack import place
    from galaxy_mcp_analysis.tools.orientation import hint_tools_list_caching, SERVER_INSTRUCTIONS

    def register(mcp, gx_app):
        register_analysis_tools(mcp, gx_app, TOOL_SPECS, tools.STOCK_ANNOTATIONS, tools.STOCK_DESCRIPTIONS)
        # The stock tools of STOCK_TEXT get their result's text block reshaped (ours are shaped where declared).
        if tools.STOCK_TEXT:
            place(mcp, ShapedText(tools.STOCK_TEXT))
        if not mcp.instructions:  # Galaxy 26.1 sets none; one it sets some day is kept
            mcp.instructions = SERVER_INSTRUCTIONS
        hint_tools_list_caching(mcp)

    add_server_customizer(register)


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

    from galaxy_mcp_analysis.operations.page_directives import validate

    original = markdown_parse.validate_galaxy_markdown
    if getattr(markdown_util.validate_galaxy_markdown, WRAPPED_MARK, False):
        return

    @functools.wraps(original)
    def validate_galaxy_markdown(galaxy_markdown, internal=True):
        # Same verdict as Galaxy's (diagnose asks the original); a rejection now explains
        # itself. PageContentError is a ValueError, which markdown_util turns into the
        # MalformedContents the page API and UI already report.
        validate(galaxy_markdown, internal=internal)

    setattr(validate_galaxy_markdown, WRAPPED_MARK, True)
    # Page writes reach the validator through markdown_util's imported name.
    markdown_util.validate_galaxy_markdown = validate_galaxy_markdown
    markdown_parse.validate_galaxy_markdown = validate_galaxy_markdown


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
        id="tool-request-model",
        target="galaxy.tool_util.parameters.state.RequestToolState._parameter_model_for",
        summary="The preflight's strictify reuses the tool's request model, built once, instead of one per call.",
        check=check_request_model,
        apply=apply_request_model,
    ),
    Patch(
        id="mcp-policy",
        target="fastmcp.server.middleware.Middleware.on_call_tool",
        summary="The admin's policy file (rules, limits, masks, tool sets) applies to every MCP call and tools/list.",
        check=check_policy,
        apply=apply_policy,
    ),
    Patch(
        id="mcp-request-state-key",
        target="mcp.server.request_state.RequestStateBoundary",
        summary="requestState (MCP 2026-07-28 input_required) sealed under a key every worker shares.",
        check=check_request_state_key,
        apply=apply_request_state_key,
    ),
    Patch(
        id="mcp-audit",
        target="fastmcp.FastMCP.middleware",
        summary=("With GALAXY_MCP_ANALYSIS_AUDIT_LOG (or galaxy.yml mcp_analysis_audit_log) set, "
                 "one JSON line per MCP tool call (who, what, outcome, ids)."),
        check=check_audit_trail,
        apply=apply_audit_trail,
    ),
    Patch(
        id="mcp-oauth",
        target="galaxy.managers.users.UserManager.by_api_key",
        summary=("Only with GALAXY_MCP_ANALYSIS_OAUTH=true (or galaxy.yml mcp_analysis_oauth): OAuth 2.1 sign-in "
                 "for /api/mcp on Galaxy's login; a verified access token stands for its user in that request."),
        check=check_oauth,
        apply=apply_oauth,
    ),
    Patch(
        id="mcp-upload-route",
        target="galaxy.webapps.galaxy.fast_app.include_mcp",
        summary=("PUT/POST /api/mcp-upload/{token}: the one-time URLs of create_upload_url stream a file to Galaxy's "
                 "upload store and hand it to Galaxy's fetch as the token's user."),
        check=check_upload_route,
        apply=apply_upload_route,
    ),
    Patch(
        id="mcp-tasks",
        target="fastmcp.FastMCP.add_extension",
        summary=("MCP tasks (io.modelcontextprotocol/tasks) for clients that declare them: a long run_tool, rerun_job, "
                 "pasted create_collection or invoke_workflow answers with a durable handle; tasks/get, /update, /cancel."),
        check=check_tasks,
        apply=apply_tasks,
    ),
    Patch(
        id="tool-search-index",
        target="galaxy.model.database_heartbeat.DatabaseHeartbeat.add_change_callback",
        summary=("Galaxy's tool search index is built when the web process is elected config watcher after "
                 "Galaxy's one start-up build was skipped (search_tools found no tool for the process's life)."),
        check=check_search_index,
        apply=apply_search_index,
    ),
)
